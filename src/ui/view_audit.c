/* evtop — `:audit`: who did what, from the watched source's evtop_audit table (core/audit.h):
 * every operator's writes, newest first, a page at a time (PgDn, PgUp), filtered with `/`
 * (operator, action, event_no, table, result, since, until; the unindexed ones read inside a
 * capped number of rows, and the view says how many it examined). The row under the cursor
 * is shown whole at the bottom; Enter opens its event. */
#include <config.h>

#include "core/audit.h"
#include "core/i18n.h"
#include "core/text.h"
#include "db/audit.h"
#include "ui/app.h"
#include "ui/term.h"

#include <curses.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct audit_view {
	struct view base;
	struct ev_audit_filter filter;
	char filter_text[512];
	struct ev_rowset *rows; /* the page on screen */
	bool more;
	struct ev_cursor start, next; /* where the page starts (unset: the newest), the next's */
	struct ev_cursor *back;       /* the starts of the pages before */
	int nback;
	int sel, scroll;
	bool want_last; /* a page back: the cursor on its last row once read */
	char error[512];
	char note[400]; /* a capped read: what it examined */
	bool stopped;
};

struct audit_arg {
	struct ev_audit_filter filter;
	struct ev_cursor after;
	int limit;
	long long cap;
};

struct audit_result {
	struct ev_rowset *rows;
	struct ev_list_page pg;
};

static void filter_copy(struct ev_audit_filter *dst, const struct ev_audit_filter *src)
{
	char *const *s[] = {&src->operator_id, &src->action, &src->event_no, &src->table_name,
	                    &src->result,      &src->since,  &src->until};
	char **d[] = {&dst->operator_id, &dst->action, &dst->event_no, &dst->table_name,
	              &dst->result,      &dst->since,  &dst->until};
	for (size_t i = 0; i < sizeof(s) / sizeof(s[0]); i++)
		*d[i] = *s[i] ? ev_xstrdup(*s[i]) : NULL;
}

static void free_arg(void *p)
{
	struct audit_arg *g = p;
	ev_audit_filter_free(&g->filter);
	free(g);
}

static void free_result(void *p)
{
	struct audit_result *r = p;
	ev_rowset_free(&r->rows);
	free(r);
}

static int audit_job(struct ev_conn *c, struct ev_job *job, struct ev_error *err)
{
	struct audit_arg *g = job->arg;
	struct audit_result *r = ev_xcalloc(1, sizeof(*r));
	struct ev_table_info ti = {0};
	struct ev_query *q = NULL;
	job->result = r;
	job->free_result = free_result;
	if (ev_audit_table_info(c, &ti, err) < 0)
		return -1;
	struct ev_audit_req req = {.info = &ti,
	                           .filter = &g->filter,
	                           .after = g->after,
	                           .limit = g->limit,
	                           .cap = g->cap};
	int rc = ev_audit_read_page(c, &req, &q, &r->rows, err);
	if (rc == 0)
		ev_list_take_page(q, &r->rows, &r->pg);
	ev_query_free(&q);
	ev_table_info_clear(&ti);
	return rc;
}

static void audit_load(struct app *a, struct view *v)
{
	struct audit_view *av = (struct audit_view *)v;
	struct audit_arg *g = ev_xcalloc(1, sizeof(*g));
	filter_copy(&g->filter, &av->filter);
	g->after = av->start;
	g->limit =
	        a->cfg->page_size > 0 && a->cfg->page_size <= EV_PAGE_MAX ? a->cfg->page_size : 100;
	g->cap = a->cfg->search_cap;
	v->gen++;
	app_submit(a, app_site(a, v)->wlist, v, ev_job_new(0, 0, audit_job, g, free_arg));
}

static void audit_result(struct app *a, struct view *v, struct ev_job *job)
{
	struct audit_view *av = (struct audit_view *)v;
	struct audit_result *r = job->result;
	(void)a;
	if (job->rc < 0 || r == NULL || r->rows == NULL) {
		snprintf(av->error, sizeof(av->error), "%s",
		         job->err.msg[0] ? job->err.msg : _("no answer from the server"));
		return;
	}
	av->error[0] = '\0';
	ev_rowset_free(&av->rows);
	av->rows = r->rows;
	r->rows = NULL;
	av->more = r->pg.more;
	av->next = r->pg.next;
	av->stopped = r->pg.stopped;
	char *note = ev_list_search_note(&r->pg, av->rows->nrows);
	/* TRANSLATORS: before what a capped search examined. */
	snprintf(av->note, sizeof(av->note), "%s%s", note ? _("search: ") : "", note ? note : "");
	free(note);
	if (av->want_last || av->sel >= (int)av->rows->nrows) {
		av->sel = av->rows->nrows ? (int)av->rows->nrows - 1 : 0;
		av->scroll = 0;
	}
	av->want_last = false;
}

/* A column at x, width w, cut at the screen's right edge (curses would wrap the rest). */
static void cell(int y, int x, int w, int cols, int style, const char *s)
{
	if (x < cols && w > 0)
		draw_text_pad(y, x, x + w > cols ? cols - x : w, style, s);
}

/* The event table's short name on this source ("outbox", "message"), or its name. */
/* Which table of the view's source a row's table_name is: an ev_table_kind, or -1. */
static int row_table(struct app *a, struct view *v, const struct ev_rowset *rs, size_t r)
{
	return ev_source_table_kind(a->sources[app_site_index(a, v)],
	                            ev_rowset_get(rs, r, "table_name"));
}

static const char *table_key(struct app *a, struct view *v, const struct ev_rowset *rs, size_t r)
{
	int t = row_table(a, v, rs, r);
	return t >= 0 ? ev_model_table((enum ev_table_kind)t)->key
	              : ev_rowset_get(rs, r, "table_name");
}

enum col_id {
	C_TIME,
	C_OPERATOR,
	C_OS_USER,
	C_DB_USER,
	C_ACTION,
	C_TABLE,
	C_EVENT_NO,
	C_CHANGE,
	C_RESULT,
	C_REASON
};

struct col {
	enum col_id id;
	const char *head; /* N_(): translated where it is drawn */
	int width;        /* 0: the rest of the line */
};

/* The columns at this width: every one from 120 columns, else the ones an incident needs
 * first (the row under the cursor is shown whole below the list). A translated head must fit
 * the narrowest width its column has (TABLE: 7 cells, RESULT: 7). */
/* TRANSLATORS: the audit view's column headers, at most as wide as the English ones
 * (TABLE and RESULT: 7 cells at most). */
#define H_TIME     N_("TIME")
#define H_OPERATOR N_("OPERATOR")
#define H_OS_USER  N_("OS USER")
#define H_DB_USER  N_("DB USER")
#define H_ACTION   N_("ACTION")
#define H_TABLE    N_("TABLE")
#define H_EVENT_NO N_("EVENT_NO")
#define H_CHANGE   N_("BEFORE → AFTER")
#define H_RESULT   N_("RESULT")
#define H_REASON   N_("REASON")
static const struct col wide_cols[] = {
        {C_TIME, H_TIME, 23},         {C_OPERATOR, H_OPERATOR, 12}, {C_OS_USER, H_OS_USER, 10},
        {C_DB_USER, H_DB_USER, 16},   {C_ACTION, H_ACTION, 14},     {C_TABLE, H_TABLE, 7},
        {C_EVENT_NO, H_EVENT_NO, 20}, {C_CHANGE, H_CHANGE, 26},     {C_RESULT, H_RESULT, 7},
        {C_REASON, H_REASON, 0},
};
static const struct col narrow_cols[] = {
        {C_TIME, H_TIME, 14},         {C_OPERATOR, H_OPERATOR, 10}, {C_ACTION, H_ACTION, 14},
        {C_EVENT_NO, H_EVENT_NO, 14}, {C_RESULT, H_RESULT, 7},      {C_CHANGE, H_CHANGE, 0},
};

/* The change in the status names alone, "failed→pending", for a narrow screen (the row
 * under the cursor says it whole below). */
static char *short_change(int table, const char *before, const char *after)
{
	const char *names[2] = {"?", _("not applied")};
	const char *st[2] = {before, after};
	for (int i = 0; i < 2; i++) {
		int v = ev_audit_status(st[i]);
		if (v >= 0 && table >= 0)
			names[i] =
			        ev_model_status_label(ev_model_table((enum ev_table_kind)table), v);
		else if (st[i] != NULL)
			names[i] = st[i];
	}
	return ev_xasprintf("%.*s→%.*s", app_cut(names[0], 16), names[0], app_cut(names[1], 16),
	                    names[1]);
}

/* The text of column `id` of row r (malloc'd). */
static char *col_text(struct app *a, struct view *v, const struct ev_rowset *rs, size_t r,
                      enum col_id id, bool narrow)
{
	const char *t = ev_rowset_get(rs, r, "audit_time");
	if (id == C_TIME) /* narrow: "06-01 11:58:00" */
		return t == NULL                   ? ev_xstrdup("")
		       : narrow && strlen(t) >= 19 ? ev_xstrndup(t + 5, 14)
		                                   : ev_xstrdup(t);
	if (id == C_CHANGE && narrow)
		return short_change(row_table(a, v, rs, r), ev_rowset_get(rs, r, "before_status"),
		                    ev_rowset_get(rs, r, "after_status"));
	if (id == C_CHANGE)
		return ev_audit_change_text(row_table(a, v, rs, r),
		                            ev_rowset_get(rs, r, "before_status"),
		                            ev_rowset_get(rs, r, "after_status"));
	if (id == C_TABLE) {
		const char *key = table_key(a, v, rs, r);
		return ev_xstrdup(key ? key : "-");
	}
	static const struct {
		enum col_id id;
		const char *column;
	} map[] = {{C_OPERATOR, "operator"}, {C_OS_USER, "os_user"},   {C_DB_USER, "db_user"},
	           {C_ACTION, "action"},     {C_EVENT_NO, "event_no"}, {C_RESULT, "result"},
	           {C_REASON, "reason"}};
	for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++)
		if (id == map[i].id) {
			const char *s = ev_rowset_get(rs, r, map[i].column);
			return ev_xstrdup(s ? s : "-");
		}
	return ev_xstrdup("");
}

static void draw_row(struct app *a, struct view *v, size_t r, int y, int cols, int style)
{
	struct audit_view *av = (struct audit_view *)v;
	bool narrow = cols < 120;
	const struct col *c = narrow ? narrow_cols : wide_cols;
	size_t n = narrow ? sizeof(narrow_cols) / sizeof(*c) : sizeof(wide_cols) / sizeof(*c);
	int x = 0;
	for (size_t i = 0; i < n && x < cols; i++) {
		int w = c[i].width ? c[i].width : cols - x;
		if (av->rows == NULL) {
			cell(y, x, w, cols, style, _(c[i].head));
		} else {
			char *text = col_text(a, v, av->rows, r, c[i].id, narrow);
			cell(y, x, w, cols, style, text);
			free(text);
		}
		x += w + 1;
	}
}

/* The row under the cursor, whole: who, where, what and why, on two lines. */
static void draw_footer(struct app *a, struct view *v, int y, int cols)
{
	struct audit_view *av = (struct audit_view *)v;
	const struct ev_rowset *rs = av->rows;
	size_t r = (size_t)av->sel;
	if (rs == NULL || r >= rs->nrows)
		return;
	char *who =
	        ev_audit_who_text(ev_rowset_get(rs, r, "operator"), ev_rowset_get(rs, r, "os_user"),
	                          ev_rowset_get(rs, r, "sudo_user"));
	char *change =
	        ev_audit_change_text(row_table(a, v, rs, r), ev_rowset_get(rs, r, "before_status"),
	                             ev_rowset_get(rs, r, "after_status"));
	const char *no = ev_rowset_get(rs, r, "event_no"), *tn = ev_rowset_get(rs, r, "table_name"),
	           *eid = ev_rowset_get(rs, r, "event_id"), *db = ev_rowset_get(rs, r, "db_user"),
	           *ssh = ev_rowset_get(rs, r, "ssh_connection"),
	           *reason = ev_rowset_get(rs, r, "reason");
	/* TRANSLATORS: the audit row under the cursor: event_no · table id N · action change,
	 * result · by WHO as DB_USER, then " from " and the SSH connection, or nothing. */
	char *line = ev_xasprintf(_("%s · %s id %s · %s %s, %s · by %s as %s%s%s"), no ? no : "-",
	                          tn ? tn : "-", eid ? eid : "-", ev_rowset_get(rs, r, "action"),
	                          change, ev_rowset_get(rs, r, "result"), who, db ? db : "-",
	                          ssh ? _(" from ") : "", ssh ? ssh : "");
	draw_text(y, 0, cols, EV_STYLE_NORMAL, line);
	free(line);
	line = ev_xasprintf(_("reason: %s"), reason ? reason : "NULL");
	draw_text(y + 1, 0, cols, reason ? EV_STYLE_NORMAL : EV_STYLE_NULL_VALUE, line);
	free(line);
	free(who);
	free(change);
	(void)a;
}

static void audit_draw(struct app *a, struct view *v, int top, int height, int cols)
{
	struct audit_view *av = (struct audit_view *)v;
	char title[800];
	/* TRANSLATORS: the audit view's title: the audit table, the source, the page, then
	 * " · filter: " and the filter, or nothing. */
	snprintf(title, sizeof(title), _("audit · %s of source %s · newest first · page %d%s%s"),
	         EV_AUDIT_TABLE, app_source_name(a, app_site_index(a, v)), av->nback + 1,
	         av->filter_text[0] ? _(" · filter: ") : "", av->filter_text);
	draw_text_pad(top, 0, cols, EV_STYLE_TITLE, title);
	top++;
	height--;
	if (av->error[0] && height > 0) {
		draw_text(top++, 0, cols, EV_STYLE_ERROR, av->error);
		height--;
	}
	if (av->note[0] && height > 0) {
		draw_text(top++, 0, cols, av->stopped ? EV_STYLE_WARNING : EV_STYLE_NORMAL,
		          av->note);
		height--;
	}
	if (height < 2)
		return;
	draw_fill(top, 0, cols, EV_STYLE_HEADER);
	struct ev_rowset *rows = av->rows;
	av->rows = NULL; /* the header: the columns' heads */
	draw_row(a, v, 0, top, cols, EV_STYLE_HEADER);
	av->rows = rows;
	int body = height - 1 - (height > 6 ? 3 : 0), n = rows ? (int)rows->nrows : 0;
	if (n == 0) {
		const char *what = av->base.loading || (rows == NULL && !av->error[0])
		                           ? _("loading…")
		                           : (rows ? _("no audit rows") : "");
		draw_text(top + 1, 2, cols - 2, EV_STYLE_NORMAL, what);
		return;
	}
	if (av->sel < av->scroll)
		av->scroll = av->sel;
	if (av->sel >= av->scroll + body)
		av->scroll = av->sel - body + 1;
	for (int i = av->scroll, y = top + 1; i < n && y < top + 1 + body; i++, y++) {
		int style = i == av->sel ? EV_STYLE_SELECTED : EV_STYLE_NORMAL;
		if (i == av->sel)
			draw_fill(y, 0, cols, style);
		draw_row(a, v, (size_t)i, y, cols, style);
	}
	if (height > 6)
		draw_footer(a, v, top + 2 + body, cols);
}

static void turn_page(struct app *a, struct audit_view *av, bool forward)
{
	if (forward) {
		if (!av->more)
			return;
		av->back = ev_xrealloc(av->back, (size_t)(av->nback + 1) * sizeof(*av->back));
		av->back[av->nback++] = av->start;
		av->start = av->next;
		av->sel = 0;
	} else {
		if (av->nback == 0)
			return;
		av->start = av->back[--av->nback];
		av->want_last = true;
	}
	av->scroll = 0;
	audit_load(a, &av->base);
}

static void filter_done(struct app *a, const char *text)
{
	struct view *v = app_top(a);
	struct ev_audit_filter f = {0};
	struct ev_error err = {0};
	if (v == NULL || strcmp(v->ops->name, "audit") != 0)
		return;
	struct audit_view *av = (struct audit_view *)v;
	if (ev_audit_filter_parse(&f, text, &err) < 0) {
		app_message(a, EV_STYLE_ERROR, "%s", err.msg);
		return;
	}
	/* table=outbox / table=message: this source's name for it. */
	int t = f.table_name ? ev_model_table_parse(f.table_name) : -1;
	if (t >= 0) {
		free(f.table_name);
		f.table_name =
		        ev_xstrdup(app_table_name(a, app_site_index(a, v), (enum ev_table_kind)t));
	}
	ev_audit_filter_free(&av->filter);
	av->filter = f;
	snprintf(av->filter_text, sizeof(av->filter_text), "%s", text);
	free(av->back);
	av->back = NULL;
	av->nback = 0;
	av->start = (struct ev_cursor){0};
	av->sel = av->scroll = 0;
	audit_load(a, v);
}

/* Enter: the row's event, in its table on this source. */
static void open_event(struct app *a, struct audit_view *av)
{
	const char *tn = ev_rowset_get(av->rows, (size_t)av->sel, "table_name");
	const char *no = ev_rowset_get(av->rows, (size_t)av->sel, "event_no");
	const char *id = ev_rowset_get(av->rows, (size_t)av->sel, "event_id");
	for (int t = 0; tn != NULL && t < EV_TABLE_COUNT; t++) {
		if (strcmp(tn, app_table_name(a, app_site_index(a, &av->base),
		                              (enum ev_table_kind)t)) != 0)
			continue;
		struct view *dv = app_open(a, &(struct view_request){
		                                      .what = OPEN_DETAIL,
		                                      .table = (enum ev_table_kind)t,
		                                      .event_no = no,
		                                      .row_id = id ? strtoull(id, NULL, 10) : 0,
		                              });
		if (dv != NULL)
			app_push(a, dv);
		return;
	}
	char *safe = ev_text_sanitize(tn ? tn : "", tn ? strlen(tn) : 0);
	app_message(a, EV_STYLE_WARNING, _("%.*s is not one of this source's event tables"),
	            app_cut(safe, 64), safe);
	free(safe);
}

static bool audit_action(struct app *a, struct view *v, enum ev_ui_action act)
{
	struct audit_view *av = (struct audit_view *)v;
	int n = av->rows ? (int)av->rows->nrows : 0;
	int page = LINES - 9 > 1 ? LINES - 9 : 1;
	switch (act) {
	case EV_UA_UP:
		if (av->sel > 0)
			av->sel--;
		else
			turn_page(a, av, false);
		break;
	case EV_UA_DOWN:
		if (av->sel < n - 1)
			av->sel++;
		else
			turn_page(a, av, true);
		break;
	case EV_UA_PAGE_UP:
		if (av->sel > 0)
			av->sel = av->sel > page ? av->sel - page : 0;
		else
			turn_page(a, av, false);
		break;
	case EV_UA_PAGE_DOWN:
		if (av->sel < n - 1)
			av->sel = av->sel + page < n ? av->sel + page : n - 1;
		else
			turn_page(a, av, true);
		break;
	case EV_UA_TOP:
		av->sel = 0;
		break;
	case EV_UA_BOTTOM:
		av->sel = n > 0 ? n - 1 : 0;
		break;
	case EV_UA_OPEN:
		if (n > 0)
			open_event(a, av);
		break;
	case EV_UA_FILTER:
		app_prompt(a,
		           _("audit filter (operator= action= event_no= table= result= since= "
		             "until=): "),
		           av->filter_text, filter_done);
		break;
	case EV_UA_REFRESH:
		audit_load(a, v);
		break;
	default:
		return false;
	}
	a->dirty = true;
	return true;
}

static void audit_free(struct view *v)
{
	struct audit_view *av = (struct audit_view *)v;
	ev_rowset_free(&av->rows);
	ev_audit_filter_free(&av->filter);
	free(av->back);
	free(av);
}

static const struct view_ops audit_ops = {
        .name = "audit",
        .ctx = EV_CTX_LIST,
        .draw = audit_draw,
        .action = audit_action,
        .result = audit_result,
        .load = audit_load,
        .free = audit_free,
        .on_timer = true,
};

struct view *view_audit_new(struct app *a, const struct ev_audit_filter *filter,
                            const char *filter_text)
{
	struct audit_view *av = ev_xcalloc(1, sizeof(*av));
	av->base.ops = &audit_ops;
	if (filter != NULL)
		filter_copy(&av->filter, filter);
	int t = av->filter.table_name ? ev_model_table_parse(av->filter.table_name) : -1;
	if (t >= 0) {
		free(av->filter.table_name);
		av->filter.table_name = ev_xstrdup(
		        app_table_name(a, app_site_index(a, &av->base), (enum ev_table_kind)t));
	}
	snprintf(av->filter_text, sizeof(av->filter_text), "%s", filter_text ? filter_text : "");
	return &av->base;
}
