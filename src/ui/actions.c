/* evtop — the guarded actions from the keyboard: retry, schedule, cancel, recover on the row
 * under the cursor. Every write goes: the guard built by core (or refused with the reason) →
 * a reason when the action writes one → the event_no typed for a protected type → a
 * confirmation showing what will change and the exact statement, default No → applied on the
 * write connection by db/action (transaction, audit row, audit file) → the result as the
 * database says it, the list refreshed and the row highlighted. */
#include <config.h>

#include "core/auditlog.h"
#include "core/guard.h"
#include "core/text.h"
#include "db/action.h"
#include "ui/app.h"
#include "ui/term.h"
#include "ui/textview.h"

#include <curses.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The action being prepared: one at a time, owned by the UI thread. */
struct pending {
	bool active;
	enum ev_action action;
	enum ev_table_kind table;
	struct ev_guard_row seen;
	char reason[1024];
	bool confirmed_protected;
	struct ev_guard g;
	int origin_tag; /* the view to refresh afterwards */
	int site;       /* the row's source: the write goes to its primary */
};

static struct pending P;

static int target_status(enum ev_action a, int from)
{
	switch (a) {
	case EV_ACTION_RETRY_NOW:
		return EV_ST_PENDING;
	case EV_ACTION_RETRY_SCHEDULE:
		return EV_ST_FAILED;
	case EV_ACTION_CANCEL:
		return EV_ST_CANCELLED;
	case EV_ACTION_RECOVER:
		return EV_ST_FAILED;
	default:
		return from;
	}
}

bool ui_action_allowed(enum ev_ui_action act, enum ev_table_kind t, int status)
{
	int core = ev_ui_action_core(act);
	if (core < 0)
		return false;
	enum ev_action a = (enum ev_action)core;
	return ev_action_allows(a, t, status, target_status(a, status));
}

static void pending_clear(void)
{
	ev_guard_clear(&P.g);
	ev_guard_row_clear(&P.seen);
	memset(&P, 0, sizeof(P));
}

static void build_and_confirm(struct app *a);

static void reason_done(struct app *a, const char *text)
{
	if (!P.active)
		return;
	snprintf(P.reason, sizeof(P.reason), "%s", text);
	if (P.action == EV_ACTION_CANCEL && P.reason[0] == '\0') {
		app_message(a, EV_STYLE_WARNING, "cancel needs a reason: nothing done");
		pending_clear();
		return;
	}
	struct ev_error err = {0};
	if (ev_guard_reason_check(P.reason, &err) < 0) {
		app_message(a, EV_STYLE_ERROR, "nothing done: %s", err.msg);
		pending_clear();
		return;
	}
	build_and_confirm(a);
}

static void protected_done(struct app *a, const char *text)
{
	if (!P.active)
		return;
	if (strcmp(text, P.seen.event_no ? P.seen.event_no : "") != 0) {
		app_message(a, EV_STYLE_WARNING, "the event_no typed does not match: nothing done");
		pending_clear();
		return;
	}
	P.confirmed_protected = true;
	build_and_confirm(a);
}

static void operator_done(struct app *a, const char *text)
{
	struct ev_error err = {0};
	if (ev_guard_reason_check(text, &err) < 0) {
		/* Into the audit as typed: no control character (C1 included). */
		app_message(a, EV_STYLE_ERROR, "operator id refused, nothing done: %.200s",
		            err.msg);
		pending_clear();
		return;
	}
	free(a->cfg->operator_id);
	a->cfg->operator_id = ev_xstrdup(text[0] ? text : "-");
	a->operator_asked = true;
	if (P.active)
		build_and_confirm(a);
}

static void build_and_confirm(struct app *a)
{
	struct ev_error err = {0};
	if (!a->operator_asked && a->cfg->operator_id == NULL) {
		app_prompt(a, "operator or ticket id for the audit (Enter: none): ", "",
		           operator_done);
		return;
	}
	struct ev_guard_req req = {
	        .table = P.table,
	        .table_name = app_table_name(a, P.site, P.table),
	        .action = P.action,
	        .row = &P.seen,
	        .reason = P.reason,
	        .schedule_delay_s = 0,
	        .stuck_threshold_s = a->cfg->stuck_threshold_s,
	        .recover_message = a->cfg->recover_message,
	        .protected_types = a->cfg->protected_types,
	        .confirmed_protected = P.confirmed_protected,
	};
	ev_guard_clear(&P.g);
	if (ev_guard_build(&req, &P.g, &err) < 0) {
		if (err.code == EV_GUARD_REFUSED_PROTECTED && !P.confirmed_protected) {
			/* The event_no whole, last before the typing: a narrow screen shows the
			 * end of the prompt (the line is sanitised when drawn). */
			const char *token = ev_guard_protected_token(
			        P.seen.event_type, P.seen.biz_type, a->cfg->protected_types);
			char label[256];
			snprintf(label, sizeof(label),
			         "a protected type (%.40s): to go on, type its event_no, %.64s: ",
			         token ? token : "?", P.seen.event_no ? P.seen.event_no : "?");
			app_prompt(a, label, "", protected_done);
			return;
		}
		app_message(a, EV_STYLE_ERROR, "refused: %s", err.msg);
		pending_clear();
		return;
	}
	app_push(a, view_confirm_new(a));
}

void ui_action_start(struct app *a, struct view *origin, int site, enum ev_ui_action act,
                     enum ev_table_kind t, const struct ev_rowset *rs, size_t row)
{
	const char *not_writable = app_site_at(a, site)->not_writable[t];
	struct ev_error err = {0};
	if (a->cfg->read_only) {
		app_message(a, EV_STYLE_WARNING,
		            "read-only (--read-only or the config): %s does nothing",
		            ev_ui_action_name(act));
		return;
	}
	if (not_writable[0]) {
		app_message(a, EV_STYLE_WARNING, "read-only: %s", not_writable);
		return;
	}
	if (app_clock_refuses(a, site, t))
		return;
	pending_clear();
	if (ev_guard_row_from_rowset(rs, row, t, &P.seen, &err) < 0) {
		app_message(a, EV_STYLE_ERROR, "%s", err.msg);
		ev_guard_row_clear(&P.seen);
		return;
	}
	P.active = true;
	P.action = (enum ev_action)ev_ui_action_core(act);
	P.table = t;
	P.origin_tag = origin->tag;
	P.site = site;
	if (P.action == EV_ACTION_CANCEL || P.action == EV_ACTION_RECOVER) {
		app_prompt(a,
		           P.action == EV_ACTION_CANCEL ? "reason for the cancel: "
		                                        : "reason for the recover (optional): ",
		           "", reason_done);
		return;
	}
	build_and_confirm(a);
}

/* --- applying, on the list worker (the write endpoint) ---------------------------------- */

struct apply_arg {
	struct ev_guard g;
	struct ev_guard_row seen;
	char *source, *os_user, *sudo_user, *ssh, *operator_id, *log_path;
	bool clock_ok; /* the operator said the zone is right (--clock-ok, :clock-ok) */
};

struct apply_result {
	struct ev_action_outcome out;
	enum ev_action_result result;
	bool not_writable;
	bool clock; /* refused for a suspected time zone mismatch (not cached: :clock-ok lifts it)
	             */
	char why[512];
	unsigned long long id;
};

static void free_apply_arg(void *p)
{
	struct apply_arg *x = p;
	ev_guard_clear(&x->g);
	ev_guard_row_clear(&x->seen);
	free(x->source);
	free(x->os_user);
	free(x->sudo_user);
	free(x->ssh);
	free(x->operator_id);
	free(x->log_path);
	free(x);
}

static void free_apply_result(void *p)
{
	struct apply_result *r = p;
	ev_action_outcome_clear(&r->out);
	free(r);
}

static int apply_job(struct ev_conn *c, struct ev_job *job, struct ev_error *err)
{
	struct apply_arg *x = job->arg;
	struct apply_result *r = ev_xcalloc(1, sizeof(*r));
	struct ev_access access;
	struct ev_audit_log log = {.fd = -1};
	job->result = r;
	job->free_result = free_apply_result;
	r->id = x->seen.id;
	if (ev_action_check_access_clock(c, x->g.table, x->g.table_name, x->clock_ok, &access,
	                                 err) < 0)
		return -1;
	if (!access.writable) {
		r->not_writable = true;
		r->clock = access.clock_suspect;
		snprintf(r->why, sizeof(r->why), "%s", access.why);
		r->result = EV_RESULT_REFUSED;
		return 0;
	}
	if (ev_audit_log_open(&log, x->log_path, err) < 0) {
		r->result = EV_RESULT_REFUSED;
		snprintf(r->why, sizeof(r->why), "the audit file cannot be written: %.400s",
		         err->msg);
		return 0;
	}
	struct ev_audit_who who = {
	        .source = x->source,
	        .os_user = x->os_user,
	        .sudo_user = x->sudo_user,
	        .ssh_connection = x->ssh,
	        .operator_id = x->operator_id,
	        .db_user = NULL,
	};
	struct ev_action_ctx ctx = {.conn = c, .access = &access, .log = &log, .who = &who};
	r->result = ev_action_apply(&ctx, &x->g, &x->seen, &r->out);
	ev_audit_log_close(&log);
	return 0;
}

static char *dup0(const char *s)
{
	return s ? ev_xstrdup(s) : NULL;
}

static void apply_done(void *ctx, struct ev_job *job);

static void confirm_yes(struct app *a, struct view *v)
{
	struct apply_arg *x = ev_xcalloc(1, sizeof(*x));
	x->g = P.g; /* the guard moves to the job */
	memset(&P.g, 0, sizeof(P.g));
	ev_guard_row_copy(&x->seen, &P.seen);
	x->source = dup0(a->sources[P.site]->name);
	x->os_user = dup0(a->ident.os_user);
	x->sudo_user = dup0(a->ident.sudo_user);
	x->ssh = dup0(a->ident.ssh_connection);
	x->operator_id = a->cfg->operator_id && strcmp(a->cfg->operator_id, "-") != 0
	                         ? ev_xstrdup(a->cfg->operator_id)
	                         : NULL;
	x->log_path = dup0(a->audit_path);
	x->clock_ok = a->clock_ok;
	app_pop(a); /* the confirmation */
	(void)v;
	app_message(a, EV_STYLE_WARNING, "applying…");
	/* A tag of no view: no refresh or Esc of a view may supersede (KILL) a write. */
	ev_worker_submit(app_site_at(a, P.site)->wwrite,
	                 app_job(-1, apply_job, x, free_apply_arg, apply_done));
	a->applying = true;
}

/* apply_job finished: say what the database did. */
static void apply_done(void *ctx, struct ev_job *job)
{
	struct app *a = ctx;
	struct apply_result *r = job->result;
	a->applying = false;
	enum ev_table_kind t = P.table;
	if (job->rc < 0 || r == NULL) {
		app_message(a, EV_STYLE_ERROR, "failed: %s (the row was not changed)",
		            job->err.msg);
	} else if (r->not_writable && r->clock) {
		app_message(a, EV_STYLE_WARNING, "refused: %s", r->why);
	} else if (r->not_writable) {
		struct site *st = app_site_at(a, P.site);
		snprintf(st->not_writable[t], sizeof(st->not_writable[t]), "%s", r->why);
		app_message(a, EV_STYLE_WARNING, "read-only: %s", r->why);
	} else if (r->result == EV_RESULT_APPLIED) {
		app_message(a, EV_STYLE_CHANGED, "applied: %s %s (version %lld → %lld)",
		            ev_action_name(P.action), P.seen.event_no, P.seen.version,
		            r->out.have_now ? r->out.now.version : P.seen.version + 1);
		a->highlight_id = r->id;
	} else if (r->result == EV_RESULT_SKIPPED) {
		char *now = r->out.have_now ? ev_guard_row_describe(t, &r->out.now) : NULL;
		app_message(a, EV_STYLE_WARNING,
		            "skipped: the row changed since it was read — now %s",
		            now ? now : "gone");
		free(now);
		a->highlight_id = r->id;
	} else {
		app_message(a, EV_STYLE_ERROR, "%s: %s", ev_action_result_name(r->result),
		            r->out.msg[0] ? r->out.msg : r->why);
	}
	if (job->rc == 0 && r != NULL &&
	    (r->result == EV_RESULT_APPLIED || r->result == EV_RESULT_SKIPPED))
		app_wrote(a, P.site, t, &r->id, 1);
	/* The row as it is now, in the view that showed it (if it is still open). */
	struct view *origin = NULL;
	for (int i = 0; i < a->nviews; i++)
		if (a->views[i]->tag == P.origin_tag)
			origin = a->views[i];
	pending_clear();
	if (origin != NULL && origin->ops->load)
		origin->ops->load(a, origin);
}

/* --- the confirmation ------------------------------------------------------------------------ */

static void write_statement(struct app *a, FILE *f, const char *path, void *ctx)
{
	char *sql = P.g.update ? ev_query_render(P.g.update) : NULL;
	(void)ctx;
	if (sql == NULL) {
		fclose(f);
		app_message(a, EV_STYLE_ERROR, "cannot write %s", path);
		return;
	}
	fprintf(f, "-- evtop: %s %s on %s (not applied by this file)\n%s;\n",
	        ev_action_name(P.action), P.seen.event_no ? P.seen.event_no : "",
	        app_table_name(a, P.site, P.table), sql);
	free(sql);
	if (fclose(f) != 0)
		app_message(a, EV_STYLE_ERROR, "cannot write %s", path);
	else
		app_message(a, EV_STYLE_NORMAL,
		            "wrote the statement to %s (y applies, any key: No)", path);
}

static void export_statement_done(struct app *a, const char *name)
{
	ui_export(a, name, write_statement, NULL, NULL);
}

static bool confirm_action(struct app *a, struct view *v, enum ev_ui_action act)
{
	if (act == EV_UA_EXPORT) {
		app_prompt(a, "write the statement to FILE: ", "evtop-statement.sql",
		           export_statement_done);
		return true;
	}
	if (act == EV_UA_YES) {
		confirm_yes(a, v);
		return true;
	}
	if (act == EV_UA_HELP)
		return false;
	/* Anything else is No. */
	app_pop(a);
	app_message(a, EV_STYLE_NORMAL, "not applied");
	pending_clear();
	return true;
}

static const struct view_ops confirm_ops = {
        .name = "confirm",
        .ctx = EV_CTX_CONFIRM,
        .draw = text_view_draw,
        .action = confirm_action,
        .result = text_view_no_result,
        .load = NULL,
        .free = text_view_free,
        .on_timer = false,
};

struct view *view_confirm_new(struct app *a)
{
	struct text_view *c = text_view_new(&confirm_ops);
	const struct ev_table_def *def = ev_model_table(P.table);
	char line[2048];
	char where[96] = "";
	if (a->nsources > 1)
		snprintf(where, sizeof(where), " of source %.64s", app_source_name(a, P.site));
	snprintf(line, sizeof(line), "%s %s on %s (%s)%s?", ev_action_name(P.action),
	         P.seen.event_no ? P.seen.event_no : "?", def->key,
	         app_table_name(a, P.site, P.table), where);
	text_view_add(c, EV_STYLE_TITLE, line);
	text_view_add(c, EV_STYLE_NORMAL, "");
	snprintf(line, sizeof(line), "status: %d %s → %d %s", P.g.from_status,
	         ev_model_status_name(def, P.g.from_status, false), P.g.to_status,
	         ev_model_status_name(def, P.g.to_status, false));
	text_view_add(c, EV_STYLE_NORMAL, line);
	char *now = ev_guard_row_describe(P.table, &P.seen);
	snprintf(line, sizeof(line), "as read: %s", now);
	free(now);
	text_view_add(c, EV_STYLE_NORMAL, line);
	snprintf(line, sizeof(line), "change: %s", P.g.change ? P.g.change : "");
	text_view_add(c, EV_STYLE_NORMAL, line);
	if (P.g.notice) {
		snprintf(line, sizeof(line), "note: %s", P.g.notice);
		text_view_add(c, EV_STYLE_WARNING, line);
	}
	if (P.g.protected_token) {
		snprintf(line, sizeof(line), "protected type (%s): confirmed by its event_no",
		         P.g.protected_token);
		text_view_add(c, EV_STYLE_WARNING, line);
	}
	text_view_add(c, EV_STYLE_NORMAL, "");
	text_view_add(c, EV_STYLE_HEADER,
	              "the statement, one row by primary key, guarded by the row as read:");
	char *sql = ev_query_render(P.g.update);
	text_view_add(c, EV_STYLE_NORMAL, sql);
	free(sql);
	text_view_add(c, EV_STYLE_NORMAL, "");
	text_view_add(c, EV_STYLE_TITLE,
	              "Apply? y applies; e writes the statement to a file; any other key: No");
	return &c->base;
}

void ui_actions_end(void)
{
	pending_clear();
}

/* --- this session's actions ------------------------------------------------------------------ */

struct actions_view {
	struct view base;
	struct ev_audit_entry *e;
	long n;
	int sel, scroll;
	char error[512];
};

static void actions_load(struct app *a, struct view *v)
{
	struct actions_view *av = (struct actions_view *)v;
	struct ev_error err = {0};
	ev_audit_entries_free(&av->e, av->n);
	av->n = a->audit_path ? ev_audit_log_read(a->audit_path, a->session_start, &av->e, &err)
	                      : 0;
	if (av->n < 0) {
		snprintf(av->error, sizeof(av->error), "%s", err.msg);
		av->n = 0;
	}
}

static void actions_draw(struct app *a, struct view *v, int top, int height, int cols)
{
	struct actions_view *av = (struct actions_view *)v;
	char title[600];
	snprintf(title, sizeof(title), "this session's actions (%ld) · from %s", av->n,
	         a->audit_path ? a->audit_path : "no audit file");
	draw_text_pad(top, 0, cols, EV_STYLE_TITLE, title);
	if (av->error[0])
		draw_text(top + 1, 0, cols, EV_STYLE_ERROR, av->error);
	/* The event_no as wide as the widest (at least 24), whole when it fits on the screen:
	 * the columns after it move right. */
	int ew = 24;
	for (long i = 0; i < av->n; i++) {
		const char *no = av->e[i].event_no ? av->e[i].event_no : "";
		char *safe = ev_text_sanitize(no, strlen(no));
		int w = ev_text_width(safe);
		free(safe);
		ew = w > ew ? w : ew;
	}
	if (ew > cols - 42)
		ew = cols - 42 > 24 ? cols - 42 : 24;
	int sh = ew - 24; /* how far the columns after it move */
	draw_fill(top + 1, 0, cols, EV_STYLE_HEADER);
	draw_text_pad(top + 1, 0, 24, EV_STYLE_HEADER, "TIME (UTC)");
	draw_text_pad(top + 1, 25, 15, EV_STYLE_HEADER, "ACTION");
	draw_text_pad(top + 1, 41, ew, EV_STYLE_HEADER, "EVENT_NO");
	draw_text_pad(top + 1, 66 + sh, 8, EV_STYLE_HEADER, "RESULT");
	draw_text_pad(top + 1, 75 + sh, cols - 75 - sh, EV_STYLE_HEADER, "REASON / ERROR");
	if (av->n == 0)
		draw_text(top + 2, 2, cols - 2, EV_STYLE_NORMAL, "no action yet in this session");
	int body = height - 2;
	if (av->sel < av->scroll)
		av->scroll = av->sel;
	if (av->sel >= av->scroll + body)
		av->scroll = av->sel - body + 1;
	for (long i = av->scroll, y = top + 2; i < av->n && y < top + 2 + body; i++, y++) {
		const struct ev_audit_entry *e = &av->e[i];
		int style = i == av->sel ? EV_STYLE_SELECTED : EV_STYLE_NORMAL;
		int rstyle = style;
		if (i != av->sel && e->result && strcmp(e->result, "applied") != 0)
			rstyle = EV_STYLE_WARNING;
		if (i == av->sel)
			draw_fill((int)y, 0, cols, style);
		draw_text_pad((int)y, 0, 24, style, e->time);
		draw_text_pad((int)y, 25, 15, style, e->action);
		draw_text_pad((int)y, 41, ew, style, e->event_no);
		draw_text_pad((int)y, 66 + sh, 8, rstyle, e->result);
		draw_text_pad((int)y, 75 + sh, cols - 75 - sh, style,
		              e->error    ? e->error
		              : e->reason ? e->reason
		                          : "");
	}
}

static bool actions_action(struct app *a, struct view *v, enum ev_ui_action act)
{
	struct actions_view *av = (struct actions_view *)v;
	switch (act) {
	case EV_UA_UP:
		if (av->sel > 0)
			av->sel--;
		break;
	case EV_UA_DOWN:
		if (av->sel < av->n - 1)
			av->sel++;
		break;
	case EV_UA_TOP:
		av->sel = 0;
		break;
	case EV_UA_BOTTOM:
		av->sel = av->n > 0 ? (int)av->n - 1 : 0;
		break;
	case EV_UA_REFRESH:
		actions_load(a, v);
		break;
	default:
		return false;
	}
	a->dirty = true;
	return true;
}

static void actions_free(struct view *v)
{
	struct actions_view *av = (struct actions_view *)v;
	ev_audit_entries_free(&av->e, av->n);
	free(av);
}

static const struct view_ops actions_ops = {
        .name = "actions",
        .ctx = EV_CTX_HELP,
        .draw = actions_draw,
        .action = actions_action,
        .result = text_view_no_result,
        .load = actions_load,
        .free = actions_free,
        .on_timer = false,
};

struct view *view_actions_new(struct app *a)
{
	struct actions_view *av = ev_xcalloc(1, sizeof(*av));
	(void)a;
	av->base.ops = &actions_ops;
	return &av->base;
}
