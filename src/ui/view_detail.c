/* evtop — the detail pane: every column of one event (NULL shown as such, the status with
 * its meaning), then event_payload and event_headers pretty-printed from the stored text by
 * core/jsonview, with folding, scrolling and search. */
#include <config.h>

#include "core/i18n.h"
#include "core/jsonview.h"
#include "core/text.h"
#include "ui/app.h"
#include "ui/term.h"

#include "core/dashboard.h"
#include "core/format.h"
#include "db/audit.h"

#include <curses.h>
#include <fcntl.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct detail_view {
	struct view base;
	enum ev_table_kind table;
	char event_no[260]; /* at most 64 characters (the column's), up to 4 bytes each */
	unsigned long long id;
	bool by_no; /* looked up by event_no in both tables */
	struct ev_rowset *row;
	char **head; /* "column  value" lines */
	int *head_style;
	int nhead;
	struct ev_jsonview *payload, *headers;
	int cursor; /* a line of the whole pane */
	int scroll;
	char search[128];
	char error[1024];
	/* Re-read at every refresh: the server's NOW() read with the row on screen (its ages are
	 * against it), and what changed at the last read that changed something (its columns
	 * marked, and a line saying since when). */
	char read_at[32];
	bool *changed; /* per column of row */
	bool payload_changed, headers_changed;
	char changes[2400]; /* 560 columns of what changed: up to 4 bytes each */
	/* Looked up on every source at once (site SITE_ALL until found): each source's answer. */
	int nsrc, awaiting;
	struct detail_result **found; /* per source: its answer, or NULL (none, or no answer) */
	char (*why)[640];             /* per source: why it did not answer (150 columns) */
	bool unmasked;                /* U: read again in the clear (audited) */
	bool mask_flipped;            /* the next read is the first in the clear: no "changed" */
	/* Who touched this event: its newest evtop_audit rows (none where the table is not),
	 * the table's indexes learnt at the first read. */
	struct ev_rowset *audit;
	char audit_err[800];
	struct ev_table_info audit_info;
	bool audit_known;
};

static int payload_start(const struct detail_view *d)
{
	return d->nhead + 1;
}

static int headers_start(const struct detail_view *d)
{
	return payload_start(d) + (d->payload ? (int)ev_jsonview_line_count(d->payload) : 0) + 1;
}

static int total_lines(const struct detail_view *d)
{
	return headers_start(d) + (d->headers ? (int)ev_jsonview_line_count(d->headers) : 0);
}

struct detail_result {
	struct ev_rowset *rows;
	enum ev_table_kind table;
	bool in_both;            /* an event_no is unique per table only */
	char now[32];            /* the server's NOW() just after the row was read */
	struct ev_rowset *audit; /* the event's audit history, or NULL */
	char audit_err[800];     /* 190 columns of a message: up to 4 bytes each */
	struct ev_table_info audit_info;
	bool audit_known;
};

struct detail_arg {
	struct ev_query *q[EV_TABLE_COUNT]; /* by id: one; by event_no: both tables */
	int src;                            /* the source asked */
	const struct ev_mask *mask;         /* what the row gets masked by (NULL: none) */
	char *table_name[EV_TABLE_COUNT];   /* the source's names of the tables */
	struct ev_table_info audit_info;    /* evtop_audit's indexes, when known */
	bool audit_known;
};

static void free_result(void *p)
{
	struct detail_result *r = p;
	ev_rowset_free(&r->rows);
	ev_rowset_free(&r->audit);
	ev_table_info_clear(&r->audit_info);
	free(r);
}

static void free_arg(void *p)
{
	struct detail_arg *g = p;
	for (int t = 0; t < EV_TABLE_COUNT; t++) {
		ev_query_free(&g->q[t]);
		free(g->table_name[t]);
	}
	ev_table_info_clear(&g->audit_info);
	free(g);
}

/* The event's own audit history (its newest evtop_audit rows, through idx_table_event):
 * nothing where the table is not; a failure said on its line, the event shown still. */
static void read_history(struct ev_conn *c, const struct detail_arg *g, struct detail_result *r)
{
	struct ev_error err = {0};
	const char *id = ev_rowset_get(r->rows, 0, "id");
	if (g->audit_known)
		ev_table_info_copy(&r->audit_info, &g->audit_info);
	else if (ev_audit_table_info(c, &r->audit_info, &err) < 0)
		return;
	r->audit_known = true;
	if (!r->audit_info.exists || id == NULL)
		return;
	struct ev_query *q =
	        ev_query_audit_event(&r->audit_info, g->table_name[r->table],
	                             strtoull(id, NULL, 10), EV_AUDIT_EVENT_ROWS, &err);
	if (q == NULL || ev_audit_run(c, q, &r->audit, &err) < 0) {
		char *cut = ev_text_fit(err.msg, 190, false, false);
		snprintf(r->audit_err, sizeof(r->audit_err), "%s", cut);
		free(cut);
	}
	ev_query_free(&q);
}

static int detail_job(struct ev_conn *c, struct ev_job *job, struct ev_error *err)
{
	struct detail_arg *g = job->arg;
	struct detail_result *r = ev_xcalloc(1, sizeof(*r));
	job->result = r;
	job->free_result = free_result;
	for (int t = EV_TABLE_COUNT - 1; t >= 0; t--) { /* the outbox first */
		struct ev_rowset *rs = NULL;
		if (g->q[t] == NULL)
			continue;
		if (ev_conn_run(c, g->q[t], &rs, err) < 0)
			return -1;
		if (rs->nrows > 0 && r->rows == NULL) {
			ev_mask_rowset(g->mask, rs);
			r->rows = rs;
			r->table = (enum ev_table_kind)t;
		} else {
			if (rs->nrows > 0)
				r->in_both = true;
			ev_rowset_free(&rs);
		}
	}
	if (r->rows != NULL) {
		/* The clock after the row: any write the row shows is at or before it, so a past
		 * time never reads as ahead (the dashboard's last reading may be older than the
		 * write). */
		struct ev_query *q = ev_query_server_clock();
		struct ev_rowset *rs = NULL;
		if (ev_conn_run(c, q, &rs, err) == 0 && rs->nrows > 0 &&
		    ev_rowset_cell(rs, 0, 0)->s != NULL)
			snprintf(r->now, sizeof(r->now), "%s", ev_rowset_cell(rs, 0, 0)->s);
		ev_rowset_free(&rs);
		ev_query_free(&q);
		read_history(c, g, r);
	}
	return 0;
}

/* The lookup of the event on source site (by id, or by event_no in both tables). */
static struct detail_arg *new_arg(struct app *a, const struct detail_view *d, int site)
{
	struct detail_arg *g = ev_xcalloc(1, sizeof(*g));
	const struct site *st = &a->sites[site];
	g->src = site;
	g->mask = d->unmasked ? NULL : ui_mask_for(a, site);
	for (int t = 0; t < EV_TABLE_COUNT; t++)
		g->table_name[t] = ev_xstrdup(app_table_name(a, site, (enum ev_table_kind)t));
	g->audit_known = d->audit_known && d->base.site != SITE_ALL;
	if (g->audit_known)
		ev_table_info_copy(&g->audit_info, &d->audit_info);
	if (d->id != 0 || !d->by_no) {
		g->q[d->table] =
		        ev_query_show_by_id(d->table, app_table_name(a, site, d->table), d->id);
		return g;
	}
	for (int t = 0; t < EV_TABLE_COUNT; t++)
		if (!st->have_info || st->info[t].exists)
			g->q[t] = ev_query_show_by_no(
			        (enum ev_table_kind)t,
			        app_table_name(a, site, (enum ev_table_kind)t), d->event_no);
	return g;
}

static void found_clear(struct detail_view *d)
{
	for (int i = 0; i < d->nsrc; i++)
		if (d->found[i] != NULL) {
			free_result(d->found[i]);
			d->found[i] = NULL;
		}
}

static void detail_refresh(struct app *a, struct view *v)
{
	struct detail_view *d = (struct detail_view *)v;
	if (v->site == SITE_ALL) {
		/* Every source asked at once, each on its own connection. */
		found_clear(d);
		d->awaiting = d->nsrc;
		for (int i = 0; i < d->nsrc; i++) {
			d->why[i][0] = '\0';
			app_submit(a, app_site_at(a, i)->wlist, v,
			           ev_job_new(0, 0, detail_job, new_arg(a, d, i), free_arg));
		}
		return;
	}
	app_submit(a, app_site(a, v)->wlist, v,
	           ev_job_new(0, 0, detail_job, new_arg(a, d, app_site_index(a, v)), free_arg));
}

static void add_head(struct detail_view *d, int style, const char *text)
{
	d->head = ev_xrealloc(d->head, (size_t)(d->nhead + 1) * sizeof(*d->head));
	d->head_style = ev_xrealloc(d->head_style, (size_t)(d->nhead + 1) * sizeof(*d->head_style));
	d->head[d->nhead] = ev_xstrdup(text);
	d->head_style[d->nhead] = style;
	d->nhead++;
}

static void head_clear(struct detail_view *d)
{
	for (int i = 0; i < d->nhead; i++)
		free(d->head[i]);
	free(d->head);
	free(d->head_style);
	d->head = NULL;
	d->head_style = NULL;
	d->nhead = 0;
}

static void detail_clear(struct detail_view *d)
{
	head_clear(d);
	ev_jsonview_free(&d->payload);
	ev_jsonview_free(&d->headers);
	ev_rowset_free(&d->row);
}

/* One source's answer to a lookup on every source; when all are in, the event is the first
 * source's that has it (the others that have it named), and the view becomes that source's. */
static struct detail_result *found_on(struct app *a, struct detail_view *d, struct ev_job *job)
{
	int src = ((const struct detail_arg *)job->arg)->src;
	if (src < 0 || src >= d->nsrc)
		return NULL;
	if (job->rc < 0 || job->result == NULL) {
		char *cut =
		        ev_text_fit(job->rc < 0 ? job->err.msg : _("no answer"), 150, false, false);
		snprintf(d->why[src], sizeof(d->why[src]), "%s", cut);
		free(cut);
	} else if (((struct detail_result *)job->result)->rows != NULL &&
	           ((struct detail_result *)job->result)->rows->nrows > 0) {
		d->found[src] = job->result;
		job->result = NULL;
	}
	if (--d->awaiting > 0)
		return NULL;
	int first = -1;
	struct ev_buf also, down;
	ev_buf_init(&also);
	ev_buf_init(&down);
	for (int i = 0; i < d->nsrc; i++) {
		if (d->found[i] != NULL && first < 0)
			first = i;
		else if (d->found[i] != NULL)
			ev_buf_printf(&also, "%s%s", also.len ? ", " : "", app_source_name(a, i));
		if (d->why[i][0])
			ev_buf_printf(&down, "%s%s: %s", down.len ? "; " : "",
			              app_source_name(a, i), d->why[i]);
	}
	struct detail_result *r = NULL;
	if (first < 0) {
		char *cut = ev_text_fit(down.len ? down.data : "", 300, false, false);
		if (down.len)
			snprintf(d->error, sizeof(d->error),
			         _("no event %s in either table of any source that answered — %s"),
			         d->event_no, cut);
		else
			snprintf(d->error, sizeof(d->error),
			         _("no event %s in either table of any source"), d->event_no);
		free(cut);
	} else {
		r = d->found[first];
		d->found[first] = NULL;
		d->base.site = first + 1;
		char *cut = ev_text_fit(also.len   ? also.data
		                        : down.len ? down.data
		                                   : "",
		                        150, false, false);
		if (also.len)
			app_message(a, EV_STYLE_WARNING, _("%s is on source %s and also on %s"),
			            d->event_no, app_source_name(a, first), cut);
		else if (down.len)
			app_message(a, EV_STYLE_WARNING, _("%s found on %s; no answer from %s"),
			            d->event_no, app_source_name(a, first), cut);
		free(cut);
	}
	found_clear(d);
	ev_buf_free(&also);
	ev_buf_free(&down);
	return r;
}

static bool cell_same(const struct ev_cell *x, const struct ev_cell *y)
{
	if (x->s == NULL || y->s == NULL)
		return x->s == y->s;
	return x->len == y->len && memcmp(x->s, y->s, x->len) == 0;
}

/* What changed between the row read before (old) and the one read now: its columns marked
 * and a line that says so; a read that changed nothing leaves the last change's marks. */
static void note_changes(struct detail_view *d, const struct ev_rowset *old)
{
	if (old == NULL || old->nrows == 0 || old->ncols != d->row->ncols)
		return;
	const struct ev_table_def *def = ev_model_table(d->table);
	bool *changed = ev_xcalloc(d->row->ncols, sizeof(*changed));
	/* The version and the status first: they say what happened; then the other columns. */
	struct ev_buf what, rest;
	ev_buf_init(&what);
	ev_buf_init(&rest);
	for (size_t c = 0; c < d->row->ncols; c++) {
		const struct ev_cell *was = ev_rowset_cell(old, 0, c),
		                     *is = ev_rowset_cell(d->row, 0, c);
		if (cell_same(was, is))
			continue;
		const char *name = d->row->cols[c].name;
		changed[c] = true;
		if (strcmp(name, def->status_col) == 0 && was->s && is->s)
			ev_buf_printf(&what, "%s%s %.8s → %.8s %s", what.len ? ", " : "", name,
			              was->s, is->s, ev_model_status_label(def, atoi(is->s)));
		else if (strcmp(name, "version") == 0 && was->s && is->s)
			ev_buf_printf(&what, "%s%s %.20s → %.20s", what.len ? ", " : "", name,
			              was->s, is->s);
		else
			ev_buf_printf(&rest, "%s%s", rest.len ? ", " : "", name);
	}
	if (rest.len > 0)
		ev_buf_printf(&what, "%s%s", what.len ? ", " : "", rest.data);
	ev_buf_free(&rest);
	if (what.len == 0) {
		free(changed);
		ev_buf_free(&what);
		return;
	}
	free(d->changed);
	d->changed = changed;
	int pc = ev_rowset_col(d->row, "event_payload"),
	    hc = ev_rowset_col(d->row, "event_headers");
	d->payload_changed = pc >= 0 && changed[pc];
	d->headers_changed = hc >= 0 && changed[hc];
	char *cut = ev_text_fit(what.data, 560, false, false);
	snprintf(d->changes, sizeof(d->changes), _("changed since the read at %s: %s"),
	         d->read_at[0] ? d->read_at : "?", cut);
	free(cut);
	ev_buf_free(&what);
}

/* The lines above the payload: the title, what changed, every column (NULL shown as such,
 * the status with its meaning, a time with its age against the server's clock of the read). */
static void build_head(struct app *a, struct detail_view *d)
{
	head_clear(d);
	const struct ev_table_def *def = ev_model_table(d->table);
	const char *deleted = ev_rowset_get(d->row, 0, "deleted");
	char line[1200];
	char where[320] = "";
	if (a->nsources > 1) {
		char *name = ev_text_fit(app_source_name(a, app_site_index(a, &d->base)), 64, false,
		                         false);
		where[0] = ' ';
		snprintf(where + 1, sizeof(where) - 1, _("on source %s"), name);
		free(name);
	}
	char marks[160] = "";
	if (deleted && strcmp(deleted, "0") != 0)
		/* TRANSLATORS: the event is soft-deleted (deleted = 1). */
		snprintf(marks, sizeof(marks), "  [%s]", _("DELETED"));
	if (d->unmasked) {
		size_t n = strlen(marks);
		/* TRANSLATORS: the pane shows the event's personal data unmasked (U). */
		snprintf(marks + n, sizeof(marks) - n, "  [%s]", _("IN THE CLEAR, audited"));
	}
	/* TRANSLATORS: the table ("outbox"), the event_no, " on source X", the marks. */
	snprintf(line, sizeof(line), _("%s event %s%s%s"), ev_model_table_label(def), d->event_no,
	         where, marks);
	add_head(d, deleted && strcmp(deleted, "0") != 0 ? EV_STYLE_DELETED : EV_STYLE_TITLE, line);
	if (d->changes[0])
		add_head(d, EV_STYLE_CHANGED, d->changes);
	for (size_t c = 0; c < d->row->ncols; c++) {
		const char *name = d->row->cols[c].name;
		const struct ev_cell *cell = ev_rowset_cell(d->row, 0, c);
		int style =
		        d->changed != NULL && d->changed[c] ? EV_STYLE_CHANGED : EV_STYLE_NORMAL;
		if (d->row->cols[c].type == EV_CT_JSON)
			continue;
		if (cell->s == NULL) {
			snprintf(line, sizeof(line), "%-18s NULL", name);
			add_head(d, style == EV_STYLE_NORMAL ? EV_STYLE_NULL_VALUE : style, line);
		} else if (strcmp(name, def->status_col) == 0) {
			/* The state's name, and the model document's Chinese one when the
			 * interface's language is another (said once in Chinese). */
			int st = atoi(cell->s);
			const char *label = ev_model_status_label(def, st);
			const char *zh = ev_model_status_name(def, st, true);
			if (strcmp(label, zh) == 0)
				snprintf(line, sizeof(line), "%-18s %s  %s", name, cell->s, label);
			else
				snprintf(line, sizeof(line), "%-18s %s  %s / %s", name, cell->s,
				         label, zh);
			add_head(d, style, line);
		} else if (d->row->cols[c].type == EV_CT_DATETIME) {
			/* Ages against the server's clock read with the row, never the bastion's.
			 */
			char age[48] = "";
			if (d->read_at[0])
				ev_format_age(cell->s, d->read_at, age, sizeof(age));
			if (age[0])
				snprintf(line, sizeof(line), "%-18s %.40s  (%s)", name, cell->s,
				         age);
			else
				snprintf(line, sizeof(line), "%-18s %.40s", name, cell->s);
			add_head(d, style, line);
		} else {
			/* Whole: a 1000-character fail_reason is up to 4000 bytes, and a cut in
			 * bytes would split a character and hide its end from the search. */
			char *safe = ev_text_sanitize(cell->s, cell->len);
			char *text = ev_xasprintf("%-18s %s", name, safe);
			add_head(d, style, text);
			free(text);
			free(safe);
		}
	}
}

/* The event's audit history under a heading of its own: when, who, what, the result, why. */
static void history_lines(struct detail_view *d)
{
	const struct ev_rowset *h = d->audit;
	if (d->audit_err[0]) {
		char *line = ev_xasprintf(_("who touched this event: %s"), d->audit_err);
		add_head(d, EV_STYLE_WARNING, line);
		free(line);
	}
	if (h == NULL || h->nrows == 0)
		return;
	char *head = h->nrows >= EV_AUDIT_EVENT_ROWS
	                     /* TRANSLATORS: the audit table's name; its newest 20 rows. */
	                     ? ev_xasprintf(_("who touched this event — %s, newest first (the "
	                                      "newest %d)"),
	                                    EV_AUDIT_TABLE, EV_AUDIT_EVENT_ROWS)
	                     : ev_xasprintf(_("who touched this event — %s, newest first"),
	                                    EV_AUDIT_TABLE);
	add_head(d, EV_STYLE_HEADER, head);
	free(head);
	for (size_t r = 0; r < h->nrows; r++) {
		char *who = ev_audit_who_text(ev_rowset_get(h, r, "operator"),
		                              ev_rowset_get(h, r, "os_user"),
		                              ev_rowset_get(h, r, "sudo_user"));
		char *change =
		        ev_audit_change_text((int)d->table, ev_rowset_get(h, r, "before_status"),
		                             ev_rowset_get(h, r, "after_status"));
		const char *t = ev_rowset_get(h, r, "audit_time"),
		           *act = ev_rowset_get(h, r, "action"),
		           *res = ev_rowset_get(h, r, "result"),
		           *why = ev_rowset_get(h, r, "reason");
		char *raw = ev_xasprintf("%s  %s  %s  %s  %s  %s", t ? t : "-", act ? act : "-",
		                         change, res ? res : "-", who, why ? why : "-");
		char *safe = ev_text_sanitize(raw, strlen(raw));
		add_head(d, EV_STYLE_NORMAL, safe);
		free(safe);
		free(raw);
		free(who);
		free(change);
	}
}

/* "no event X in biz_outbox_event or biz_message_event": the tables looked in, by name. */
static void not_found(struct app *a, struct detail_view *d, int site)
{
	const struct site *st = &a->sites[site];
	char tables[300] = "";
	size_t n = 0;
	for (int t = EV_TABLE_COUNT - 1; t >= 0; t--) { /* the outbox first, as looked up */
		if (st->have_info && !st->info[t].exists)
			continue;
		/* TRANSLATORS: between two tables' names: "no event X in A or B". */
		n += (size_t)snprintf(tables + n, sizeof(tables) - n, "%s%.128s",
		                      n ? _(" or ") : "",
		                      app_table_name(a, site, (enum ev_table_kind)t));
		if (n >= sizeof(tables))
			break;
	}
	if (tables[0])
		snprintf(d->error, sizeof(d->error), _("no event %s in %s"), d->event_no, tables);
	else
		snprintf(d->error, sizeof(d->error), _("no event %s in either table"), d->event_no);
}

static void detail_result(struct app *a, struct view *v, struct ev_job *job)
{
	struct detail_view *d = (struct detail_view *)v;
	struct detail_result *r = job->result;
	if (v->site == SITE_ALL) {
		r = found_on(a, d, job);
		if (r == NULL)
			return;
		/* The job keeps what it owns; r is ours now. */
		struct ev_job mine = *job;
		mine.result = r;
		mine.rc = 0;
		detail_result(a, v, &mine);
		free_result(r);
		return;
	}
	if (job->rc < 0 || r == NULL) {
		snprintf(d->error, sizeof(d->error), "%s",
		         job->err.msg[0] ? job->err.msg : _("no answer from the server"));
		return;
	}
	if (r->rows == NULL || r->rows->nrows == 0) {
		/* Found in neither table: said, never left on "loading…" (the text is the
		 * operator's, drawn sanitised). */
		if (d->by_no && d->row == NULL)
			not_found(a, d, app_site_index(a, v));
		else
			snprintf(d->error, sizeof(d->error), _("event %s is gone from %s"),
			         d->event_no, app_table_name(a, app_site_index(a, v), d->table));
		return;
	}
	bool first = d->row == NULL;
	d->table = r->table;
	if (r->in_both && first)
		app_message(a, EV_STYLE_WARNING,
		            _("%s is also in the message table (event_no is unique per table "
		              "only)"),
		            d->event_no);
	d->error[0] = '\0';
	struct ev_rowset *old = d->row;
	d->row = r->rows;
	r->rows = NULL;
	if (d->id == 0) {
		/* Found by event_no: re-read by id from now on, in its table. */
		const char *id = ev_rowset_get(d->row, 0, "id");
		d->id = id ? strtoull(id, NULL, 10) : 0;
	}
	/* Masked before, in the clear now: the values differ by the masking, not by a change. */
	if (!d->mask_flipped)
		note_changes(d, old);
	d->mask_flipped = false;
	snprintf(d->read_at, sizeof(d->read_at), "%s", r->now);
	ev_rowset_free(&d->audit);
	d->audit = r->audit;
	r->audit = NULL;
	snprintf(d->audit_err, sizeof(d->audit_err), "%s", r->audit_err);
	if (r->audit_known && !d->audit_known) {
		ev_table_info_copy(&d->audit_info, &r->audit_info);
		d->audit_known = true;
	}
	int old_nhead = d->nhead;
	build_head(a, d);
	history_lines(d);
	/* A payload that did not change keeps its folding; one that did is shown anew. */
	const char *json[] = {"event_payload", "event_headers"};
	struct ev_jsonview **jv[] = {&d->payload, &d->headers};
	for (int k = 0; k < 2; k++) {
		int jc = ev_rowset_col(d->row, json[k]);
		int oc = old != NULL ? ev_rowset_col(old, json[k]) : -1;
		const struct ev_cell *cell = jc >= 0 ? ev_rowset_cell(d->row, 0, (size_t)jc) : NULL;
		if (*jv[k] != NULL && cell != NULL && oc >= 0 &&
		    cell_same(cell, ev_rowset_cell(old, 0, (size_t)oc)))
			continue;
		ev_jsonview_free(jv[k]);
		if (cell != NULL)
			*jv[k] = ev_jsonview_new(cell->s ? cell->s : "null",
			                         cell->s ? cell->len : 4, 3);
	}
	ev_rowset_free(&old);
	/* The lines under the title move with a line added or gone above them: the cursor and
	 * the scroll stay on what they showed. */
	int delta = d->nhead - old_nhead;
	if (!first && delta != 0) {
		if (d->cursor >= 1)
			d->cursor = d->cursor + delta > 1 ? d->cursor + delta : 1;
		if (d->scroll >= 1)
			d->scroll = d->scroll + delta > 1 ? d->scroll + delta : 1;
	}
}

static void draw_jline(struct ev_jsonview *jv, size_t i, int y, int cols, bool sel)
{
	const struct ev_jline *l = ev_jsonview_line(jv, i);
	int x = 2;
	if (sel)
		draw_fill(y, 0, cols, EV_STYLE_SELECTED);
	move(y, x);
	/* Draw the spans in order; bytes between spans are NORMAL. */
	size_t pos = 0, s = 0;
	while (pos < l->len && x < cols) {
		size_t end = l->len;
		int style = EV_STYLE_NORMAL;
		if (s < l->nspans && l->spans[s].off == pos) {
			end = pos + l->spans[s].len;
			style = (int)l->spans[s].style;
			s++;
		} else if (s < l->nspans) {
			end = l->spans[s].off;
		}
		char *part = ev_xstrndup(l->text + pos, end - pos);
		char *fit = ev_text_fit(part, cols - x, true, false);
		attrset(ev_term_attr((enum ev_style)(sel ? EV_STYLE_SELECTED : style)));
		mvaddstr(y, x, fit);
		x = getcurx(stdscr); /* where curses put the cursor */
		attrset(A_NORMAL);
		free(fit);
		free(part);
		pos = end;
	}
}

static void detail_draw(struct app *a, struct view *v, int top, int height, int cols)
{
	struct detail_view *d = (struct detail_view *)v;
	(void)a;
	if (d->error[0]) {
		draw_text(top, 0, cols, EV_STYLE_ERROR, d->error);
		top++;
		height--;
	}
	if (d->row == NULL) {
		if (!d->error[0])
			draw_text(top, 2, cols - 2, EV_STYLE_NORMAL, _("loading…"));
		return;
	}
	int total = total_lines(d);
	if (d->cursor >= total)
		d->cursor = total - 1;
	if (d->cursor < d->scroll)
		d->scroll = d->cursor;
	if (d->cursor >= d->scroll + height)
		d->scroll = d->cursor - height + 1;
	for (int i = 0; i < height && d->scroll + i < total; i++) {
		int line = d->scroll + i, y = top + i;
		bool sel = line == d->cursor;
		if (line < d->nhead) {
			if (sel)
				draw_fill(y, 0, cols, EV_STYLE_SELECTED);
			draw_text(y, 0, cols, sel ? EV_STYLE_SELECTED : d->head_style[line],
			          d->head[line]);
		} else if (line == d->nhead) {
			draw_text_pad(y, 0, cols,
			              sel                  ? EV_STYLE_SELECTED
			              : d->payload_changed ? EV_STYLE_CHANGED
			                                   : EV_STYLE_HEADER,
			              "event_payload");
		} else if (line < headers_start(d) - 1) {
			draw_jline(d->payload, (size_t)(line - payload_start(d)), y, cols, sel);
		} else if (line == headers_start(d) - 1) {
			draw_text_pad(y, 0, cols,
			              sel                  ? EV_STYLE_SELECTED
			              : d->headers_changed ? EV_STYLE_CHANGED
			                                   : EV_STYLE_HEADER,
			              d->headers ? "event_headers" : "");
		} else if (d->headers) {
			draw_jline(d->headers, (size_t)(line - headers_start(d)), y, cols, sel);
		}
	}
}

/* The view and line a pane line falls in, for folding. */
static struct ev_jsonview *json_at(struct detail_view *d, int line, size_t *jl, int *base)
{
	if (d->payload && line >= payload_start(d) && line < headers_start(d) - 1) {
		*jl = (size_t)(line - payload_start(d));
		*base = payload_start(d);
		return d->payload;
	}
	if (d->headers && line >= headers_start(d)) {
		*jl = (size_t)(line - headers_start(d));
		*base = headers_start(d);
		return d->headers;
	}
	return NULL;
}

static void search_from(struct app *a, struct detail_view *d, int from)
{
	if (d->search[0] == '\0')
		return;
	size_t jl;
	int base;
	for (int pass = 0; pass < 2; pass++) {
		struct ev_jsonview *jv = pass == 0 ? d->payload : d->headers;
		if (jv == NULL)
			continue;
		int b = pass == 0 ? payload_start(d) : headers_start(d);
		size_t start = from >= b && json_at(d, from, &jl, &base) == jv ? jl : 0;
		long hit = ev_jsonview_find(jv, d->search, start);
		if (hit >= 0) {
			d->cursor = (pass == 0 ? payload_start(d) : headers_start(d)) + (int)hit;
			return;
		}
	}
	for (int i = 0; i < d->nhead; i++)
		if (strstr(d->head[i], d->search) != NULL) {
			d->cursor = i;
			return;
		}
	app_message(a, EV_STYLE_WARNING, _("not found: %s"), d->search);
}

static void search_done(struct app *a, const char *text)
{
	struct detail_view *d = (struct detail_view *)app_top(a);
	snprintf(d->search, sizeof(d->search), "%s", text);
	search_from(a, d, d->cursor);
}

/* Write the row (JSON, ids as strings, the payload as stored), the payload as stored, or the
 * event_no to a file the operator names (for a change ticket). */
static void write_export(struct app *a, FILE *f, const char *path, void *ctx)
{
	struct detail_view *d = (struct detail_view *)app_top(a);
	const char *what = ctx;
	int rc = 0;
	if (strcmp(what, "row") == 0) {
		rc = ev_format_write(f, d->row, EV_FMT_JSON, 0);
	} else if (strcmp(what, "payload") == 0) {
		int pc = ev_rowset_col(d->row, "event_payload");
		const struct ev_cell *cell = pc >= 0 ? ev_rowset_cell(d->row, 0, (size_t)pc) : NULL;
		if (cell != NULL && cell->s != NULL)
			fwrite(cell->s, 1, cell->len, f);
		fputc('\n', f);
	} else {
		fprintf(f, "%s\n", d->event_no);
	}
	if (fclose(f) != 0 || rc < 0)
		/* TRANSLATORS: the word the operator typed (row, payload or event_no), a path. */
		app_message(a, EV_STYLE_ERROR, _("export: %s to %s failed"), what, path);
	else
		/* TRANSLATORS: the word the operator typed (row, payload or event_no), a path. */
		app_message(a, EV_STYLE_NORMAL, _("wrote the %s to %s"), what, path);
	free(ctx);
}

static void export_done(struct app *a, const char *text)
{
	char what[16], path[400];
	if (sscanf(text, "%15s %399[^\n]", what, path) != 2 ||
	    (strcmp(what, "row") != 0 && strcmp(what, "payload") != 0 &&
	     strcmp(what, "event_no") != 0)) {
		/* TRANSLATORS: row, payload and event_no are the words to type. */
		app_message(a, EV_STYLE_ERROR, "%s",
		            _("export: say what (row, payload or event_no) and where, e.g. row "
		              "evtop.json"));
		return;
	}
	while (strlen(path) > 0 && path[strlen(path) - 1] == ' ')
		path[strlen(path) - 1] = '\0';
	ui_export(a, path, write_export, ev_xstrdup(what), free);
}

static bool detail_allows(struct app *a, struct view *v, enum ev_ui_action act)
{
	struct detail_view *d = (struct detail_view *)v;
	(void)a;
	const char *st =
	        d->row ? ev_rowset_get(d->row, 0, ev_model_table(d->table)->status_col) : NULL;
	return st != NULL && ui_action_allowed(act, d->table, atoi(st));
}

static const struct view_ops detail_ops;

/* The reason typed after U: audited, then the event is read again in the clear. */
static void unmask_done(struct app *a, const char *text)
{
	struct view *v = app_top(a);
	struct ev_error err = {0};
	if (v == NULL || v->ops != &detail_ops)
		return;
	struct detail_view *d = (struct detail_view *)v;
	const char *no = d->row ? ev_rowset_get(d->row, 0, "event_no") : NULL;
	int site = app_site_index(a, v);
	if (text[0] == '\0') {
		app_message(a, EV_STYLE_NORMAL, "%s", _("unmask: no reason given; nothing shown"));
		return;
	}
	if (ev_guard_reason_check(text, &err) < 0) {
		app_message(a, EV_STYLE_ERROR, _("unmask: %s; nothing shown"), err.msg);
		return;
	}
	if (app_unmask_audit(a, site, app_table_name(a, site, d->table), no ? no : d->event_no,
	                     text, &err) < 0) {
		app_message(a, EV_STYLE_ERROR, _("unmask refused: %s (it is audited there first)"),
		            err.msg);
		return;
	}
	d->unmasked = true;
	d->mask_flipped = true;
	app_message(a, EV_STYLE_WARNING, "%s",
	            _("shown in the clear (audited); leaving the pane masks it"));
	detail_refresh(a, v);
}

/* A writing action on the event shown (ui/write.c opens it). */
static void detail_write(struct app *a, struct view *v, enum ev_ui_action act)
{
	struct detail_view *d = (struct detail_view *)v;

	if (d->row == NULL)
		return;
	if (!detail_allows(a, v, act)) {
		app_message(a, EV_STYLE_WARNING, _("%s does not apply to this event's status"),
		            ev_ui_action_name(act));
		return;
	}
	ui_action_start(a, v, app_site_index(a, v), act, d->table, d->row, 0);
}

/* C: the event_no as stored; J: the whole row as JSON, as the pane shows it (masked unless
 * unmasked, which is audited). */
static void copy_event(struct app *a, const struct detail_view *d, enum ev_ui_action act)
{
	if (d->row == NULL || d->row->nrows == 0) {
		app_message(a, EV_STYLE_NORMAL, "%s", _("copy: the event has not been read"));
		return;
	}
	if (act == EV_UA_COPY) {
		int ci = ev_rowset_col(d->row, "event_no");
		const struct ev_cell *cell = ci >= 0 ? ev_rowset_cell(d->row, 0, (size_t)ci) : NULL;
		if (cell == NULL || cell->s == NULL)
			app_message(a, EV_STYLE_NORMAL, "%s",
			            _("copy: this event has no event_no"));
		else
			app_copy(a, _("the event_no"), cell->s, cell->len);
		return;
	}
	char *json = ev_format_row_json(d->row, 0);
	app_copy(a, _("the row as JSON"), json, strlen(json));
	free(json);
}

static bool detail_action(struct app *a, struct view *v, enum ev_ui_action act)
{
	struct detail_view *d = (struct detail_view *)v;
	int total = d->row ? total_lines(d) : 0;
	int page = LINES - 5 > 1 ? LINES - 5 : 1;
	size_t jl;
	int base;
	struct ev_jsonview *jv;

	if (ev_ui_action_core(act) >= 0) {
		detail_write(a, v, act);
		return true;
	}
	switch (act) {
	case EV_UA_UP:
		if (d->cursor > 0)
			d->cursor--;
		break;
	case EV_UA_DOWN:
		if (d->cursor < total - 1)
			d->cursor++;
		break;
	case EV_UA_PAGE_UP:
		d->cursor = d->cursor > page ? d->cursor - page : 0;
		break;
	case EV_UA_PAGE_DOWN:
		d->cursor = d->cursor + page < total ? d->cursor + page : total - 1;
		break;
	case EV_UA_TOP:
		d->cursor = 0;
		break;
	case EV_UA_BOTTOM:
		d->cursor = total - 1;
		break;
	case EV_UA_OPEN:
	case EV_UA_FOLD:
		jv = json_at(d, d->cursor, &jl, &base);
		if (jv != NULL) {
			long at = ev_jsonview_toggle(jv, jl);
			if (at >= 0)
				d->cursor = base + (int)at;
		}
		break;
	case EV_UA_FOLD_ALL:
	case EV_UA_UNFOLD_ALL:
		if (d->payload)
			ev_jsonview_fold_all(d->payload, act == EV_UA_FOLD_ALL);
		if (d->headers)
			ev_jsonview_fold_all(d->headers, act == EV_UA_FOLD_ALL);
		if (d->cursor >= total_lines(d))
			d->cursor = total_lines(d) - 1;
		break;
	case EV_UA_UNMASK:
		if (d->row == NULL)
			break;
		if (d->unmasked || ui_mask_for(a, app_site_index(a, v)) == NULL) {
			app_message(a, EV_STYLE_NORMAL, "%s",
			            _("unmask: this event is shown in the clear already"));
			break;
		}
		app_prompt(a, _("why is it needed in the clear (audited): "), "", unmask_done);
		break;
	case EV_UA_SEARCH:
		/* TRANSLATORS: the detail pane's search prompt. */
		app_prompt(a, _("search: "), "", search_done);
		break;
	case EV_UA_SEARCH_NEXT:
		search_from(a, d, d->cursor);
		break;
	case EV_UA_REFRESH:
		detail_refresh(a, v);
		break;

	case EV_UA_TRAIL: {
		if (d->row == NULL)
			break;
		const struct ev_table_def *def = ev_model_table(d->table);
		const char *type = ev_rowset_get(d->row, 0, def->type_col);
		const char *id = ev_rowset_get(d->row, 0, def->object_col);
		struct view *trail = type && id ? app_open(a,
		                                           &(struct view_request){
		                                                   .what = OPEN_TRAIL,
		                                                   .table = d->table,
		                                                   .type = type,
		                                                   .id = id,
		                                           })
		                                : NULL;
		if (trail != NULL)
			app_push(a, trail);
		break;
	}
	case EV_UA_TRACE: {
		const char *trace = d->row ? ev_rowset_get(d->row, 0, "trace_id") : NULL;
		if (trace == NULL) {
			app_message(a, EV_STYLE_NORMAL, "%s", _("this event has no trace_id"));
			break;
		}
		app_push(a, view_trace_new(a, trace));
		break;
	}
	case EV_UA_COPY:
	case EV_UA_COPY_JSON:
		copy_event(a, d, act);
		break;
	case EV_UA_EXPORT: {
		if (d->row == NULL)
			break;
		char def[300];
		snprintf(def, sizeof(def), "row evtop-%s.json", d->event_no);
		/* TRANSLATORS: a prompt: row, payload and event_no are the words to type. */
		app_prompt(a, _("export row|payload|event_no to FILE: "), def, export_done);
		break;
	}
	default:
		return false;
	}
	a->dirty = true;
	return true;
}

static void detail_free(struct view *v)
{
	struct detail_view *d = (struct detail_view *)v;
	detail_clear(d);
	found_clear(d);
	ev_rowset_free(&d->audit);
	ev_table_info_clear(&d->audit_info);
	free(d->changed);
	free(d->found);
	free(d->why);
	free(d);
}

static const struct view_ops detail_ops = {
        .name = "detail",
        .ctx = EV_CTX_DETAIL,
        .draw = detail_draw,
        .action = detail_action,
        .result = detail_result,
        .load = detail_refresh,
        .free = detail_free,
        .on_timer = true,
        .allows = detail_allows,
};

struct view *view_detail_new(struct app *a, enum ev_table_kind t, const char *event_no,
                             unsigned long long id)
{
	struct detail_view *d = ev_xcalloc(1, sizeof(*d));
	d->base.ops = &detail_ops;
	d->table = t;
	d->id = id;
	/* An event_no has at most 64 characters: cut there, never inside one. */
	const char *no = event_no ? event_no : "?";
	size_t len = 0, n = strlen(no);
	uint32_t cp;
	for (int chars = 0; chars < 64 && len < n; chars++)
		len += ev_utf8_decode(no + len, n - len, &cp);
	snprintf(d->event_no, sizeof(d->event_no), "%.*s", (int)len, no);
	/* Re-read with the refresh (keeping the cursor, the scroll and the folding), what
	 * changed marked: a pane left open must not show a state the row has left. */
	(void)a;
	return &d->base;
}

struct view *view_detail_new_by_no(struct app *a, const char *event_no)
{
	struct detail_view *d =
	        (struct detail_view *)view_detail_new(a, EV_TABLE_OUTBOX, event_no, 0);
	d->by_no = true;
	if (a->all_mode) {
		/* Every source at once: asked on each. */
		d->base.site = SITE_ALL;
		d->nsrc = a->nsources;
		d->found = ev_xcalloc((size_t)d->nsrc, sizeof(*d->found));
		d->why = ev_xcalloc((size_t)d->nsrc, sizeof(*d->why));
	}
	return &d->base;
}
