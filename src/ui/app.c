/* evtop — the floor every view stands on: the console's state, the view stack, the message
 * line, prompts, jobs and their sources' workers, the drawing helpers and the audit records
 * the console itself writes. It calls into no view (console.c, above it, does). */
#include <config.h>

#include "ui/app.h"
#include "core/i18n.h"
#include "core/text.h"
#include "db/action.h"
#include "ui/term.h"

#include <curses.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

long long app_now(const struct app *a)
{
	return a->scripted ? a->vclock : ev_mono_ms();
}

int app_cut(const char *s, int max)
{
	return (int)ev_utf8_prefix(s, max > 0 ? (size_t)max : 0);
}

void app_buf_pad(struct ev_buf *b, const char *s, int cols, int max_bytes)
{
	char *safe = ev_text_sanitize(s, (size_t)app_cut(s, max_bytes));
	int w = ev_text_width(safe);
	ev_buf_adds(b, safe);
	for (; w < cols; w++)
		ev_buf_addc(b, ' ');
	free(safe);
}

void app_message(struct app *a, int style, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(a->msg, sizeof(a->msg), fmt, ap);
	va_end(ap);
	if (n >= (int)sizeof(a->msg))
		ev_utf8_fix_tail(a->msg);
	a->msg_style = style;
	a->dirty = true;
}

void app_copy(struct app *a, const char *what, const char *text, size_t n)
{
	if (!a->cfg->clipboard) {
		app_message(a, EV_STYLE_WARNING,
		            _("copy: the clipboard is off (clipboard = off): "
		              "nothing copied"));
		return;
	}
	if (n > (size_t)a->cfg->clipboard_max) {
		app_message(a, EV_STYLE_WARNING,
		            /* TRANSLATORS: %s is what is copied ("the event_no", "the
		             * statement"). */
		            _("copy: %s is %zu bytes, more than clipboard_max (%d): nothing copied "
		              "(E writes it to a file)"),
		            what, n, a->cfg->clipboard_max);
		return;
	}
	char *seq = ev_osc52(text, n);
	int rc = ev_term_send(seq, strlen(seq));
	free(seq);
	if (rc < 0)
		app_message(a, EV_STYLE_ERROR, _("copy: the terminal could not be written"));
	else
		app_message(a, EV_STYLE_NORMAL,
		            /* TRANSLATORS: %s is what was copied ("the event_no", "the
		             * statement"). */
		            _("copied %s (%zu bytes) to the clipboard (OSC 52; tmux: set -g "
		              "set-clipboard on)"),
		            what, n);
}

void app_push(struct app *a, struct view *v)
{
	if (a->nviews == MAX_VIEWS) {
		/* Deep enough: replace the top rather than grow without end. */
		app_pop(a);
	}
	if (v->site == SITE_INHERIT) {
		struct view *under = app_top(a);
		v->site = under != NULL ? under->site : a->cur_source + 1;
	}
	v->tag = ++a->next_tag;
	a->views[a->nviews++] = v;
	a->dirty = true;
	if (v->ops->load)
		v->ops->load(a, v);
}

void app_pop(struct app *a)
{
	if (a->nviews <= 1)
		return;
	struct view *v = a->views[--a->nviews];
	app_cancel(a, v);
	if (v->ops->nmarked)
		a->marked -= v->ops->nmarked(v);
	v->ops->free(v);
	a->dirty = true;
}

struct view *app_top(struct app *a)
{
	return a->nviews ? a->views[a->nviews - 1] : NULL;
}

void app_submit(struct app *a, struct ev_worker *w, struct view *v, struct ev_job *job)
{
	job->tag = v->tag;
	job->gen = v->gen;
	if (v->loading == 0)
		v->load_started = app_now(a);
	v->loading++;
	ev_worker_submit(w, job);
	a->dirty = true;
}

struct ev_job *app_job(int tag, ev_job_fn fn, void *arg, void (*free_arg)(void *),
                       void (*done)(void *app, struct ev_job *job))
{
	struct ev_job *j = ev_job_new(tag, 0, fn, arg, free_arg);
	j->done = done;
	return j;
}

void app_free_rowset(void *rowset)
{
	struct ev_rowset *r = rowset;
	ev_rowset_free(&r);
}

struct view *app_open(struct app *a, const struct view_request *r)
{
	return a->open != NULL ? a->open(a, r) : NULL;
}

void app_cancel(struct app *a, struct view *v)
{
	v->gen++;
	ev_worker_supersede(a->wdash, v->tag, v->gen);
	for (int i = 0; i < a->nsources; i++)
		if (a->sites[i].wlist != NULL)
			ev_worker_supersede(a->sites[i].wlist, v->tag, v->gen);
	v->loading = 0;
	a->dirty = true;
}

int app_site_index(const struct app *a, const struct view *v)
{
	return v != NULL && v->site > 0 && v->site <= a->nsources ? v->site - 1 : a->cur_source;
}

struct site *app_site(struct app *a, const struct view *v)
{
	return app_site_at(a, app_site_index(a, v));
}

const char *app_source_name(const struct app *a, int index)
{
	const struct ev_source *s = a->sources[index];
	return s->name ? s->name : "default";
}

int app_source_by_name(const struct app *a, const char *name)
{
	for (int i = 0; name != NULL && i < a->nsources; i++)
		if (strcmp(app_source_name(a, i), name) == 0)
			return i;
	return -1;
}

void app_prompt(struct app *a, const char *label, const char *initial,
                void (*done)(struct app *a, const char *text))
{
	a->prompting = true;
	if (snprintf(a->prompt_label, sizeof(a->prompt_label), "%s", label) >=
	    (int)sizeof(a->prompt_label))
		ev_utf8_fix_tail(a->prompt_label);
	/* An earlier filter is offered for editing, with a space to add a term. */
	snprintf(a->prompt_text, sizeof(a->prompt_text), "%s%s", initial ? initial : "",
	         initial && initial[0] ? " " : "");
	a->prompt_len = strlen(a->prompt_text);
	a->on_prompt = done;
	a->dirty = true;
}

const struct ev_mask *ui_mask_for(const struct app *a, int site)
{
	if (site >= 0 && site < a->nsources)
		return a->sources[site]->mask ? &a->cfg->mask : NULL;
	/* Every source at once: masked unless every source says mask = off. */
	for (int i = 0; i < a->nsources; i++)
		if (a->sources[i]->mask)
			return &a->cfg->mask;
	return NULL;
}

const char *app_table_name(const struct app *a, int site, enum ev_table_kind t)
{
	const struct ev_source *s = a->sources[site];
	const char *n = t == EV_TABLE_OUTBOX ? s->outbox_table : s->message_table;
	return n ? n : ev_model_table(t)->default_name;
}

/* --- drawing helpers ---------------------------------------------------------------------- */

void draw_text(int y, int x, int maxw, int style, const char *s)
{
	if (maxw <= 0 || s == NULL)
		return;
	char *safe = ev_text_sanitize(s, strlen(s));
	char *fit = ev_text_fit(safe, maxw, true, false);
	attrset(ev_term_attr((enum ev_style)style));
	mvaddstr(y, x, fit);
	attrset(A_NORMAL);
	free(fit);
	free(safe);
}

void draw_text_pad(int y, int x, int width, int style, const char *s)
{
	if (width <= 0)
		return;
	char *safe = ev_text_sanitize(s ? s : "", s ? strlen(s) : 0);
	char *fit = ev_text_fit(safe, width, true, true);
	attrset(ev_term_attr((enum ev_style)style));
	mvaddstr(y, x, fit);
	attrset(A_NORMAL);
	free(fit);
	free(safe);
}

void draw_text_right(int y, int x, int width, int style, const char *s)
{
	if (width <= 0)
		return;
	char *safe = ev_text_sanitize(s ? s : "", s ? strlen(s) : 0);
	int w = ev_text_width(safe);
	if (w > width) {
		char *fit = ev_text_fit(safe, width, true, false);
		free(safe);
		safe = fit;
		w = ev_text_width(safe);
	}
	attrset(ev_term_attr((enum ev_style)style));
	mvhline(y, x, ' ', width - w);
	mvaddstr(y, x + width - w, safe);
	attrset(A_NORMAL);
	free(safe);
}

void draw_fill(int y, int x, int width, int style)
{
	if (width <= 0)
		return;
	attrset(ev_term_attr((enum ev_style)style));
	mvhline(y, x, ' ', width);
	attrset(A_NORMAL);
}

/* :clock-ok REASON: the operator says the session's time zone is right although the newest
 * rows suggest a mismatch. Audited (action "clock-ok", the reason, what was suspected) before
 * writes are let through; the figures stay marked suspect. */
int app_clock_ok_audit(struct app *a, const char *reason, const char *why, struct ev_error *err)
{
	struct ev_buf tables;
	ev_buf_init(&tables);
	for (int t = 0; t < EV_TABLE_COUNT; t++) {
		if (!a->clock_suspect[t])
			continue;
		ev_buf_printf(&tables, "%s%s", tables.len ? "," : "",
		              app_table_name(a, a->cur_source, (enum ev_table_kind)t));
	}
	struct ev_audit_log log = {.fd = -1};
	struct ev_audit_who who = {
	        .source = app_source_name(a, a->cur_source),
	        .os_user = a->ident.os_user,
	        .sudo_user = a->ident.sudo_user,
	        .ssh_connection = a->ident.ssh_connection,
	        .operator_id = a->cfg->operator_id && strcmp(a->cfg->operator_id, "-") != 0
	                               ? a->cfg->operator_id
	                               : NULL,
	};
	char now[32];
	ev_audit_time_now(now);
	char *line = ev_audit_clock_ok_line(now, &who, tables.len ? tables.data : NULL, reason,
	                                    why != NULL && why[0] ? why : NULL);
	int rc = a->audit_path == NULL
	                 ? ev_error_set(err, EV_ERR_GENERIC, "%s", _("no home directory"))
	         : ev_audit_log_open(&log, a->audit_path, err) < 0
	                 ? -1
	                 : ev_audit_log_append(&log, line, err);
	ev_audit_log_close(&log);
	free(line);
	ev_buf_free(&tables);
	return rc;
}

/* The console's record in evtop_access_log of an event shown in the clear (U), on the
 * source's primary: its own copies of what it writes. */
struct access_arg {
	char *source, *os_user, *sudo_user, *ssh, *operator_id, *table_name, *event_no, *reason;
};

static char *dup_or_null(const char *s)
{
	return s ? ev_xstrdup(s) : NULL;
}

static void free_access_arg(void *p)
{
	struct access_arg *x = p;
	free(x->source);
	free(x->os_user);
	free(x->sudo_user);
	free(x->ssh);
	free(x->operator_id);
	free(x->table_name);
	free(x->event_no);
	free(x->reason);
	free(x);
}

static int access_log_job(struct ev_conn *c, struct ev_job *job, struct ev_error *err)
{
	const struct access_arg *x = job->arg;
	struct ev_audit_who who = {
	        .source = x->source,
	        .os_user = x->os_user,
	        .sudo_user = x->sudo_user,
	        .ssh_connection = x->ssh,
	        .operator_id = x->operator_id,
	};
	const char *nos[] = {x->event_no};
	return ev_access_log_write(c, &who, x->table_name, x->reason, nos, 1, err) < 0 ? -1 : 0;
}

/* The outcome of access_log_job: said only when the record is in the local file alone for a
 * reason the operator should hear (the table missing is the setup's choice, said in
 * doc/privacy.md). */
static void access_log_done(void *ctx, struct ev_job *j)
{
	struct app *a = ctx;
	if (j->rc < 0)
		app_message(a, EV_STYLE_WARNING,
		            _("shown in the clear, recorded in the local audit file only: %s"),
		            j->err.msg);
}

int app_unmask_audit(struct app *a, int site, const char *table_name, const char *event_no,
                     const char *reason, struct ev_error *err)
{
	struct ev_audit_log log = {.fd = -1};
	int index = site >= 0 ? site : a->cur_source;
	struct ev_audit_who who = {
	        .source = app_source_name(a, index),
	        .os_user = a->ident.os_user,
	        .sudo_user = a->ident.sudo_user,
	        .ssh_connection = a->ident.ssh_connection,
	        .operator_id = a->cfg->operator_id && strcmp(a->cfg->operator_id, "-") != 0
	                               ? a->cfg->operator_id
	                               : NULL,
	};
	char now[32];
	ev_audit_time_now(now);
	const char *nos[] = {event_no};
	char *line = ev_audit_unmask_line(now, &who, table_name, reason, nos, 1);
	int rc = a->audit_path == NULL
	                 ? ev_error_set(err, EV_ERR_GENERIC, "%s", _("no home directory"))
	         : ev_audit_log_open(&log, a->audit_path, err) < 0
	                 ? -1
	                 : ev_audit_log_append(&log, line, err);
	ev_audit_log_close(&log);
	free(line);
	if (rc < 0 || a->cfg->read_only)
		return rc; /* read-only: no writes at all, the local file is the record */
	struct access_arg *x = ev_xcalloc(1, sizeof(*x));
	x->source = dup_or_null(who.source);
	x->os_user = dup_or_null(who.os_user);
	x->sudo_user = dup_or_null(who.sudo_user);
	x->ssh = dup_or_null(who.ssh_connection);
	x->operator_id = dup_or_null(who.operator_id);
	x->table_name = dup_or_null(table_name);
	x->event_no = dup_or_null(event_no);
	x->reason = dup_or_null(reason);
	/* A tag of no view: leaving the pane never cancels the record. */
	ev_worker_submit(app_site_at(a, index)->wwrite,
	                 app_job(-1, access_log_job, x, free_access_arg, access_log_done));
	return 0;
}

/* --- views by tag, the workers of every source ----------------------------------------- */

struct view *app_view_by_tag(struct app *a, int tag)
{
	for (int i = 0; i < a->nviews; i++)
		if (a->views[i]->tag == tag)
			return a->views[i];
	return NULL;
}

/* Cancel the jobs of every worker, the writes' too when asked. */
void app_cancel_all(struct app *a, bool writes)
{
	ev_worker_cancel_all(a->wdash);
	for (int i = 0; i < a->nsources; i++) {
		if (a->sites[i].wlist != NULL)
			ev_worker_cancel_all(a->sites[i].wlist);
		if (writes && a->sites[i].wwrite != NULL)
			ev_worker_cancel_all(a->sites[i].wwrite);
	}
}

static struct ev_conn *new_conn(const struct app *a, const struct ev_source *endpoint)
{
	struct ev_conn *c = ev_conn_new(endpoint, a->cfg);
	if (a->args->password)
		ev_conn_set_password(c, a->args->password);
	return c;
}

/* The connections of the every-source dashboard (several sources only). */
static void open_all(struct app *a)
{
	if (a->nsources < 2)
		return;
	a->all_conns = ev_xcalloc((size_t)a->nsources, sizeof(*a->all_conns));
	a->all_endpoints = ev_xcalloc((size_t)a->nsources, sizeof(*a->all_endpoints));
	for (int i = 0; i < a->nsources; i++) {
		const struct ev_source *s = a->sources[i];
		if (ev_source_has_replica(s) && !a->read_primary)
			s = a->all_endpoints[i] = ev_source_read_endpoint(s);
		a->all_conns[i] = new_conn(a, s);
	}
}

static void close_all(struct app *a)
{
	for (int i = 0; a->all_conns != NULL && i < a->nsources; i++) {
		ev_conn_free(&a->all_conns[i]);
		ev_source_free(&a->all_endpoints[i]);
	}
	free(a->all_conns);
	free(a->all_endpoints);
	a->all_conns = NULL;
	a->all_endpoints = NULL;
}

/* A scripted run's workers back off on its virtual clock, as its refreshes fire. */
static void use_clock(struct app *a, struct ev_worker *w)
{
	if (a->scripted)
		ev_worker_set_clock(w, &a->vclock);
}

/* Source i's two connections: lists and details on its read endpoint, guarded updates on its
 * primary. */
static int start_site(struct app *a, int i, struct ev_error *err)
{
	struct site *st = &a->sites[i];
	const struct ev_source *reads = a->sources[i];
	if (a->all_mode && a->all_endpoints != NULL && a->all_endpoints[i] != NULL)
		reads = a->all_endpoints[i];
	else if (!a->all_mode && a->read_src != NULL)
		reads = a->read_src;
	st->wlist = ev_worker_start(new_conn(a, reads), err);
	st->wwrite = st->wlist ? ev_worker_start(new_conn(a, a->sources[i]), err) : NULL;
	if (st->wwrite == NULL) {
		ev_worker_stop(&st->wlist);
		return -1;
	}
	use_clock(a, st->wlist);
	use_clock(a, st->wwrite);
	return 0;
}

struct site *app_site_at(struct app *a, int index)
{
	struct site *st = &a->sites[index];
	struct ev_error err = {0};
	if (st->wlist == NULL && start_site(a, index, &err) < 0)
		ev_fatal(_("cannot start the workers of source %s: %s"), app_source_name(a, index),
		         err.msg);
	return st;
}

/* The watched source's connections (dashboards on its read endpoint: its primary when it has
 * none, or when asked), or with every source at once, the dashboard's. */
int app_start_workers(struct app *a, struct ev_error *err)
{
	ev_source_free(&a->read_src);
	if (ev_source_has_replica(a->src) && !a->read_primary)
		a->read_src = ev_source_read_endpoint(a->src);
	const struct ev_source *reads = a->read_src ? a->read_src : a->src;
	a->lag_s = -1;
	a->lag_note[0] = '\0';
	a->wdash = ev_worker_start(new_conn(a, reads), err);
	if (a->wdash == NULL)
		return -1;
	use_clock(a, a->wdash);
	if (!a->all_mode && start_site(a, a->cur_source, err) < 0) {
		ev_worker_stop(&a->wdash);
		return -1;
	}
	open_all(a);
	return 0;
}

void app_stop_workers(struct app *a)
{
	ev_worker_stop(&a->wdash);
	for (int i = 0; i < a->nsources; i++) {
		struct site *st = &a->sites[i];
		ev_worker_stop(&st->wlist);
		ev_worker_stop(&st->wwrite);
		for (int t = 0; t < EV_TABLE_COUNT; t++) {
			ev_table_info_clear(&st->info[t]);
			st->not_writable[t][0] = '\0';
		}
		st->have_info = false;
	}
	/* Another source's clock: judged again at its first refresh. */
	memset(a->clock_suspect, 0, sizeof(a->clock_suspect));
	memset(a->clock_summary, 0, sizeof(a->clock_summary));
	/* The rows written on the source left are of no later dashboard's. */
	for (int t = 0; t < EV_TABLE_COUNT; t++) {
		free(a->wrote[t]);
		a->wrote[t] = NULL;
		a->nwrote[t] = a->wrote_cap[t] = 0;
	}
	close_all(a); /* only the dashboard's jobs used them, and its worker has ended */
}

/* --- what the writes tell the dashboard -------------------------------------------------- */

bool app_clock_refuses(struct app *a, int site, enum ev_table_kind t)
{
	if (a->clock_ok || !a->clock_suspect[t] || a->all_mode || site != a->cur_source)
		return false;
	app_message(a, EV_STYLE_WARNING,
	            _("refused: a time zone mismatch is suspected: %s (:clock-ok if the zone is "
	              "right)"),
	            a->clock_summary[t][0] ? a->clock_summary[t] : _("see the dashboard"));
	return true;
}

void app_wrote(struct app *a, int site, enum ev_table_kind t, const unsigned long long *ids,
               size_t n)
{
	if (site != a->cur_source || n == 0)
		return;
	if (a->nwrote[t] + n > a->wrote_cap[t]) {
		a->wrote_cap[t] = a->nwrote[t] + n + 16;
		a->wrote[t] = ev_xrealloc(a->wrote[t], a->wrote_cap[t] * sizeof(**a->wrote));
	}
	memcpy(a->wrote[t] + a->nwrote[t], ids, n * sizeof(*ids));
	a->nwrote[t] += n;
}

bool app_move_sel(enum ev_ui_action act, int *sel, int n)
{
	switch (act) {
	case EV_UA_UP:
		if (*sel > 0)
			(*sel)--;
		return true;
	case EV_UA_DOWN:
		if (*sel < n - 1)
			(*sel)++;
		return true;
	case EV_UA_TOP:
		*sel = 0;
		return true;
	case EV_UA_BOTTOM:
		*sel = n > 0 ? n - 1 : 0;
		return true;
	default:
		return false;
	}
}
