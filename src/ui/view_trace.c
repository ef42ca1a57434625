/* evtop — every event of one trace_id, in both tables, merged in creation order. Enter opens
 * an event's detail. */
#include <config.h>

#include "core/i18n.h"
#include "core/text.h"
#include "ui/app.h"
#include "ui/term.h"

#include <curses.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct trace_row {
	enum ev_table_kind table;
	char *id, *event_no, *event_type, *status, *create_time, *fail_reason;
};

struct trace_view {
	struct view base;
	char trace_id[160];
	struct trace_row *rows;
	size_t nrows;
	bool more; /* a table had more than a page */
	int sel, scroll;
	char error[512];
};

struct trace_arg {
	char *trace_id;
	char *table_name[EV_TABLE_COUNT];
	struct ev_table_info info[EV_TABLE_COUNT];
	struct ev_query *query[EV_TABLE_COUNT];
	const struct ev_mask *mask; /* what the rows get masked by (NULL: none) */
};

struct trace_result {
	struct ev_rowset *rows[EV_TABLE_COUNT];
	char note[EV_TABLE_COUNT][200];
};

static void free_arg(void *p)
{
	struct trace_arg *t = p;
	free(t->trace_id);
	for (int k = 0; k < EV_TABLE_COUNT; k++) {
		free(t->table_name[k]);
		ev_table_info_clear(&t->info[k]);
		ev_query_free(&t->query[k]);
	}
	free(t);
}

static void free_result(void *p)
{
	struct trace_result *r = p;
	for (int k = 0; k < EV_TABLE_COUNT; k++)
		ev_rowset_free(&r->rows[k]);
	free(r);
}

static int trace_job(struct ev_conn *c, struct ev_job *job, struct ev_error *err)
{
	struct trace_arg *t = job->arg;
	struct trace_result *r = ev_xcalloc(1, sizeof(*r));
	job->result = r;
	job->free_result = free_result;
	for (int k = 0; k < EV_TABLE_COUNT; k++) {
		if (t->query[k] == NULL)
			continue;
		struct ev_error qerr = {0};
		if (ev_conn_run(c, t->query[k], &r->rows[k], &qerr) < 0) {
			if (qerr.code == EV_ERR_CONNECT) {
				*err = qerr;
				return -1;
			}
			snprintf(r->note[k], sizeof(r->note[k]), "%.*s", app_cut(qerr.msg, 190),
			         qerr.msg);
		}
		ev_mask_rowset(t->mask, r->rows[k]);
	}
	return 0;
}

static void trace_load(struct app *a, struct view *v)
{
	struct trace_view *tv = (struct trace_view *)v;
	if (!app_site(a, v)->have_info)
		return;
	struct trace_arg *arg = ev_xcalloc(1, sizeof(*arg));
	arg->trace_id = ev_xstrdup(tv->trace_id);
	arg->mask = ui_mask_for(a, app_site_index(a, v));
	for (int k = 0; k < EV_TABLE_COUNT; k++) {
		arg->table_name[k] =
		        ev_xstrdup(app_table_name(a, app_site_index(a, v), (enum ev_table_kind)k));
		ev_table_info_copy(&arg->info[k], &app_site(a, v)->info[k]);
		if (!arg->info[k].exists)
			continue;
		struct ev_list_req req = {
		        .info = &arg->info[k],
		        .table = (enum ev_table_kind)k,
		        .table_name = arg->table_name[k],
		        .kind = EV_LIST_TRACE,
		        .limit = EV_PAGE_MAX,
		        .trace_id = arg->trace_id,
		};
		struct ev_error err = {0};
		arg->query[k] = ev_query_list(&req, &err);
		if (arg->query[k] == NULL)
			snprintf(tv->error, sizeof(tv->error), "%s", err.msg);
	}
	app_submit(a, app_site(a, v)->wlist, v, ev_job_new(0, 0, trace_job, arg, free_arg));
}

static void rows_clear(struct trace_view *tv)
{
	for (size_t i = 0; i < tv->nrows; i++) {
		struct trace_row *r = &tv->rows[i];
		free(r->id);
		free(r->event_no);
		free(r->event_type);
		free(r->status);
		free(r->create_time);
		free(r->fail_reason);
	}
	free(tv->rows);
	tv->rows = NULL;
	tv->nrows = 0;
}

static char *dup_or_null(const char *s)
{
	return s ? ev_xstrdup(s) : NULL;
}

/* Creation order across the tables; ties by table, then id (the lists' own tie-break). */
static int row_cmp(const void *x, const void *y)
{
	const struct trace_row *a = x, *b = y;
	int c = strcmp(a->create_time ? a->create_time : "", b->create_time ? b->create_time : "");
	if (c != 0)
		return c;
	if (a->table != b->table)
		return a->table == EV_TABLE_OUTBOX ? -1 : 1;
	size_t la = strlen(a->id), lb = strlen(b->id);
	return la != lb ? (la < lb ? -1 : 1) : strcmp(a->id, b->id);
}

static void trace_result(struct app *a, struct view *v, struct ev_job *job)
{
	struct trace_view *tv = (struct trace_view *)v;
	struct trace_result *r = job->result;
	(void)a;
	if (job->rc < 0 || r == NULL) {
		snprintf(tv->error, sizeof(tv->error), "%s", job->err.msg);
		return;
	}
	rows_clear(tv);
	tv->more = false;
	tv->error[0] = '\0';
	for (int k = 0; k < EV_TABLE_COUNT; k++) {
		if (r->note[k][0])
			snprintf(tv->error, sizeof(tv->error), "%s", r->note[k]);
		const struct ev_rowset *rs = r->rows[k];
		if (rs == NULL)
			continue;
		size_t n = rs->nrows > EV_PAGE_MAX ? EV_PAGE_MAX : rs->nrows;
		tv->more |= rs->nrows > EV_PAGE_MAX;
		const char *st = ev_model_table((enum ev_table_kind)k)->status_col;
		tv->rows = ev_xrealloc(tv->rows, (tv->nrows + n) * sizeof(*tv->rows));
		for (size_t i = 0; i < n; i++) {
			struct trace_row *t = &tv->rows[tv->nrows++];
			t->table = (enum ev_table_kind)k;
			t->id = dup_or_null(ev_rowset_get(rs, i, "id"));
			t->event_no = dup_or_null(ev_rowset_get(rs, i, "event_no"));
			t->event_type = dup_or_null(ev_rowset_get(rs, i, "event_type"));
			t->status = dup_or_null(ev_rowset_get(rs, i, st));
			t->create_time = dup_or_null(ev_rowset_get(rs, i, "create_time"));
			t->fail_reason = dup_or_null(ev_rowset_get(rs, i, "fail_reason"));
		}
	}
	qsort(tv->rows, tv->nrows, sizeof(*tv->rows), row_cmp);
	if (tv->sel >= (int)tv->nrows)
		tv->sel = tv->nrows ? (int)tv->nrows - 1 : 0;
}

/* A column at x, width w, cut at the screen's right edge (never drawn past it: curses would
 * wrap the rest onto the next line). */
static void cell(int y, int x, int w, int cols, int style, const char *s)
{
	if (x < cols)
		draw_text_pad(y, x, x + w > cols ? cols - x : w, style, s);
}

/* The table in the TABLE column (8 cells): its key, or the glossary's short word for it. */
static const char *table_short(enum ev_table_kind t)
{
	if (t == EV_TABLE_OUTBOX)
		/* TRANSLATORS: the outbox table in a column of 8 cells (its short name). */
		return P_("table short", "outbox");
	/* TRANSLATORS: the message table in a column of 8 cells (its short name). */
	return P_("table short", "message");
}

static void trace_draw(struct app *a, struct view *v, int top, int height, int cols)
{
	struct trace_view *tv = (struct trace_view *)v;
	char title[512];
	(void)a;
	/* TRANSLATORS: the trace view's title: the trace_id, then " · the first 1000 of each
	 * table" or nothing. */
	snprintf(title, sizeof(title), _("trace %s · both tables, in creation order%s"),
	         tv->trace_id, tv->more ? _(" · the first 1000 of each table") : "");
	draw_text_pad(top, 0, cols, EV_STYLE_TITLE, title);
	if (tv->error[0]) {
		draw_text(top + 1, 0, cols, EV_STYLE_ERROR, tv->error);
		top++;
		height--;
	}
	/* The event_no as wide as the widest (at least 24), whole when it fits on the screen:
	 * the columns after it move right. */
	int ew = 24;
	for (size_t i = 0; i < tv->nrows; i++) {
		char *safe =
		        ev_text_sanitize(tv->rows[i].event_no ? tv->rows[i].event_no : "",
		                         tv->rows[i].event_no ? strlen(tv->rows[i].event_no) : 0);
		int w = ev_text_width(safe);
		free(safe);
		ew = w > ew ? w : ew;
	}
	if (ew > cols - 10)
		ew = cols - 10 > 24 ? cols - 10 : 24;
	int sh = ew - 24; /* how far the columns after it move */
	draw_fill(top + 1, 0, cols, EV_STYLE_HEADER);
	/* TRANSLATORS: the trace view's column headers: TABLE 8 cells, EVENT_NO 24, TYPE 16,
	 * STATUS 13, CREATED 19, then the rest. */
	cell(top + 1, 0, 8, cols, EV_STYLE_HEADER, _("TABLE"));
	cell(top + 1, 9, ew, cols, EV_STYLE_HEADER, _("EVENT_NO"));
	cell(top + 1, 34 + sh, 16, cols, EV_STYLE_HEADER, _("TYPE"));
	cell(top + 1, 51 + sh, 13, cols, EV_STYLE_HEADER, _("STATUS"));
	cell(top + 1, 65 + sh, 19, cols, EV_STYLE_HEADER, _("CREATED"));
	cell(top + 1, 85 + sh, cols - 85 - sh, cols, EV_STYLE_HEADER, _("FAIL_REASON"));
	int body = height - 2, n = (int)tv->nrows;
	if (n == 0)
		draw_text(top + 2, 2, cols - 2, EV_STYLE_NORMAL,
		          tv->base.loading ? _("loading…") : _("no events"));
	if (tv->sel < tv->scroll)
		tv->scroll = tv->sel;
	if (tv->sel >= tv->scroll + body)
		tv->scroll = tv->sel - body + 1;
	for (int i = tv->scroll, y = top + 2; i < n && y < top + 2 + body; i++, y++) {
		const struct trace_row *r = &tv->rows[i];
		int style = i == tv->sel ? EV_STYLE_SELECTED : EV_STYLE_NORMAL;
		char st[96];
		const struct ev_table_def *def = ev_model_table(r->table);
		snprintf(st, sizeof(st), "%s %s", r->status ? r->status : "?",
		         ev_model_status_label(def, r->status ? atoi(r->status) : -1));
		if (i == tv->sel)
			draw_fill(y, 0, cols, style);
		cell(y, 0, 8, cols, style, table_short(r->table));
		cell(y, 9, ew, cols, style, r->event_no);
		cell(y, 34 + sh, 16, cols, style, r->event_type);
		cell(y, 51 + sh, 13, cols, style, st);
		cell(y, 65 + sh, 19, cols, style, r->create_time);
		cell(y, 85 + sh, cols - 85 - sh, cols, r->fail_reason ? style : EV_STYLE_NULL_VALUE,
		     r->fail_reason ? r->fail_reason : "-");
	}
}

static bool trace_action(struct app *a, struct view *v, enum ev_ui_action act)
{
	struct trace_view *tv = (struct trace_view *)v;
	int n = (int)tv->nrows;
	switch (act) {
	case EV_UA_UP:
	case EV_UA_DOWN:
	case EV_UA_TOP:
	case EV_UA_BOTTOM:
		app_move_sel(act, &tv->sel, n);
		break;
	case EV_UA_OPEN:
		if (n > 0) {
			const struct trace_row *r = &tv->rows[tv->sel];
			struct view *dv = app_open(a, &(struct view_request){
			                                      .what = OPEN_DETAIL,
			                                      .table = r->table,
			                                      .event_no = r->event_no,
			                                      .row_id = strtoull(r->id, NULL, 10),
			                              });
			if (dv != NULL)
				app_push(a, dv);
		}
		break;
	default:
		return false;
	}
	a->dirty = true;
	return true;
}

static void trace_free(struct view *v)
{
	struct trace_view *tv = (struct trace_view *)v;
	rows_clear(tv);
	free(tv);
}

static const struct view_ops trace_ops = {
        .name = "trace",
        .ctx = EV_CTX_LIST,
        .draw = trace_draw,
        .action = trace_action,
        .result = trace_result,
        .load = trace_load,
        .free = trace_free,
        .on_timer = true,
};

struct view *view_trace_new(struct app *a, const char *trace_id)
{
	struct trace_view *tv = ev_xcalloc(1, sizeof(*tv));
	(void)a;
	tv->base.ops = &trace_ops;
	snprintf(tv->trace_id, sizeof(tv->trace_id), "%.*s", app_cut(trace_id, 128), trace_id);
	return &tv->base;
}
