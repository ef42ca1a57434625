/* evtop — the instances view (Sidekiq's Busy page): the outbox's publisher instances as its
 * processing rows show them, one per locked_by — the locks it holds, of them expired, the
 * oldest lock, its newest claim seen and a verdict, alive or dead (core/instances.h). Enter
 * opens its locks, R recovers its stuck ones through the bulk path. On the message table,
 * which has no lock owner, the processing rows by event_source and last_handle_time's age.
 * Refreshed on the console's timer while open. */
#include <config.h>

#include "core/dashboard.h"
#include "core/i18n.h"
#include "core/instances.h"
#include "ui/app.h"
#include "ui/term.h"

#include <curses.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct inst_view {
	struct view base;
	enum ev_table_kind table;
	struct ev_instances *in;
	int sel, scroll;
	char error[512];
};

struct inst_arg {
	struct ev_table_info info;
	char *table_name;
	struct ev_query *query;
};

static void free_arg(void *p)
{
	struct inst_arg *g = p;
	ev_table_info_clear(&g->info);
	free(g->table_name);
	ev_query_free(&g->query);
	free(g);
}

static int inst_job(struct ev_conn *c, struct ev_job *job, struct ev_error *err)
{
	struct inst_arg *g = job->arg;
	struct ev_rowset *rs = NULL;
	job->free_result = app_free_rowset;
	if (ev_conn_run(c, g->query, &rs, err) < 0)
		return -1;
	job->result = rs;
	return 0;
}

static void inst_load(struct app *a, struct view *v)
{
	struct inst_view *g = (struct inst_view *)v;
	struct ev_error err = {0};
	int site = app_site_index(a, v);
	const struct site *st = app_site(a, v);
	if (!st->have_info)
		return;
	if (!st->info[g->table].exists) {
		snprintf(g->error, sizeof(g->error), "%s", _("no such table"));
		return;
	}
	struct inst_arg *arg = ev_xcalloc(1, sizeof(*arg));
	arg->table_name = ev_xstrdup(app_table_name(a, site, g->table));
	ev_table_info_copy(&arg->info, &st->info[g->table]);
	struct ev_list_req req = {
	        .info = &arg->info,
	        .table = g->table,
	        .table_name = arg->table_name,
	        .kind = EV_LIST_PROCESSING,
	        .limit = 1,
	        .stuck_threshold_s = a->cfg->stuck_threshold_s,
	};
	arg->query = ev_query_instances(&req, &err);
	if (arg->query == NULL) {
		snprintf(g->error, sizeof(g->error), "%s", err.msg);
		free_arg(arg);
		return;
	}
	app_submit(a, app_site(a, v)->wlist, v, ev_job_new(0, 0, inst_job, arg, free_arg));
}

static void inst_result(struct app *a, struct view *v, struct ev_job *job)
{
	struct inst_view *g = (struct inst_view *)v;
	if (job->rc < 0 || job->result == NULL) {
		/* The last good figures stay, under the error. */
		snprintf(g->error, sizeof(g->error), "%s", job->err.msg);
		return;
	}
	g->error[0] = '\0';
	ev_instances_free(&g->in);
	g->in = ev_instances_from_rows(job->result, g->table, a->cfg->lease_s);
	if (g->sel >= (int)g->in->n)
		g->sel = g->in->n ? (int)g->in->n - 1 : 0;
}

/* "8m00s" for a span of seconds (never negative). */
static const char *span(long long s, char *buf, size_t size)
{
	return ev_format_duration(s < 0 ? 0 : s, buf, size);
}

static void title_line(struct app *a, struct inst_view *g, int top, int cols)
{
	char title[1024], lease[32], counts[320] = "";
	const struct ev_instances *in = g->in;
	const char *ge = in != NULL && in->capped ? "≥" : "";
	if (in != NULL && g->table == EV_TABLE_OUTBOX)
		/* TRANSLATORS: the instances' title: alive, dead, then "≥" or nothing and the
		 * locks. */
		snprintf(counts, sizeof(counts), _(" · %zu alive, %zu dead · %s%lld locks"),
		         in->alive, in->dead, ge, in->rows);
	else if (in != NULL)
		/* TRANSLATORS: the message table's title: event sources, then "≥" or nothing
		 * and the processing rows. */
		snprintf(counts, sizeof(counts), _(" · %zu sources · %s%lld processing"), in->n, ge,
		         in->rows);
	/* TRANSLATORS: the instances' title: the table, its name in the database, the column
	 * (locked_by, event_source), the counts, the lease. */
	snprintf(title, sizeof(title), _("%s (%s) · instances by %s%s · lease %s"),
	         ev_model_table_label(ev_model_table(g->table)),
	         app_table_name(a, app_site_index(a, &g->base), g->table),
	         g->table == EV_TABLE_OUTBOX ? "locked_by" : "event_source", counts,
	         ev_format_duration(a->cfg->lease_s, lease, sizeof(lease)));
	draw_text_pad(top, 0, cols, EV_STYLE_TITLE, title);
}

static void note_line(struct app *a, struct inst_view *g, int y, int cols)
{
	char note[768], window[32];
	if (g->table == EV_TABLE_OUTBOX)
		snprintf(note, sizeof(note),
		         _("instances that hold no lock are not seen here · alive: a claim within "
		           "%s "
		           "(2 leases) · dead: only expired locks"),
		         ev_format_duration((long long)EV_INST_ALIVE_LEASES * a->cfg->lease_s,
		                            window, sizeof(window)));
	else
		snprintf(note, sizeof(note),
		         _("the message table has no lock owner: its processing rows by "
		           "event_source "
		           "and last_handle_time's age, no verdict (stuck after %s)"),
		         ev_format_duration(a->cfg->stuck_threshold_s, window, sizeof(window)));
	draw_text_pad(y, 0, cols, EV_STYLE_HINT, note);
}

/* The fixed columns right of the name: LOCKS, STUCK, OLDEST, LAST, VERDICT. */
#define COL_NUM  7
#define COL_AGE  15
#define COL_VERD 6
#define FIXED_W  (2 * (COL_NUM + 1) + 2 * (COL_AGE + 1) + COL_VERD + 1)

/* The name column: what the screen leaves, 12 to 48 (locked_by holds up to 128). */
static int name_width(int cols)
{
	int w = cols - FIXED_W;
	return w < 12 ? 12 : w > 48 ? 48 : w;
}

static void header_line(struct inst_view *g, int y, int cols)
{
	bool ob = g->table == EV_TABLE_OUTBOX;
	int name_w = name_width(cols), x = name_w + 1;
	draw_fill(y, 0, cols, EV_STYLE_HEADER);
	/* TRANSLATORS: the instances' column headers: the name (12 cells at least), LOCKS,
	 * PROC and STUCK (7 cells), the ages (15 cells), STATE (6 cells). */
	draw_text_pad(y, 0, name_w, EV_STYLE_HEADER, ob ? _("INSTANCE") : _("EVENT_SOURCE"));
	draw_text_right(y, x, COL_NUM, EV_STYLE_HEADER, ob ? _("LOCKS") : _("PROC"));
	draw_text_right(y, x + COL_NUM + 1, COL_NUM, EV_STYLE_HEADER, _("STUCK"));
	x += 2 * (COL_NUM + 1);
	draw_text_pad(y, x, COL_AGE, EV_STYLE_HEADER, ob ? _("OLDEST LOCK") : _("OLDEST HANDLE"));
	draw_text_pad(y, x + COL_AGE + 1, COL_AGE, EV_STYLE_HEADER,
	              ob ? _("LAST CLAIM") : _("NEWEST HANDLE"));
	if (ob)
		/* TRANSLATORS: the verdict's column header: 6 cells at most. */
		draw_text_pad(y, x + 2 * (COL_AGE + 1), COL_VERD, EV_STYLE_HEADER, _("STATE"));
}

static void row_line(struct inst_view *g, const struct ev_instance *x, bool sel, int y, int cols)
{
	const long long now = g->in->now;
	int style = sel ? EV_STYLE_SELECTED : EV_STYLE_NORMAL;
	int name_w = name_width(cols), cx = name_w + 1;
	char n1[32], n2[32], d[32], oldest[96], last[96];
	if (sel)
		draw_fill(y, 0, cols, EV_STYLE_SELECTED);
	draw_text_pad(y, 0, name_w, x->name ? style : EV_STYLE_NULL_VALUE,
	              x->name ? x->name : _("(none)"));
	snprintf(n1, sizeof(n1), "%lld", x->locks);
	snprintf(n2, sizeof(n2), "%lld", x->expired);
	draw_text_right(y, cx, COL_NUM, style, n1);
	draw_text_right(y, cx + COL_NUM + 1, COL_NUM,
	                x->expired > 0 && !sel ? EV_STYLE_STUCK : style, n2);
	cx += 2 * (COL_NUM + 1);
	if (x->oldest <= 0)
		snprintf(oldest, sizeof(oldest), "-");
	else if (g->table == EV_TABLE_OUTBOX && x->oldest <= now)
		/* TRANSLATORS: a lock's age past its end, "expired 8m00s" (15 cells). */
		snprintf(oldest, sizeof(oldest), _("expired %s"),
		         span(now - x->oldest, d, sizeof(d)));
	else if (g->table == EV_TABLE_OUTBOX)
		/* TRANSLATORS: a lock's time to its end, "8m00s left" (15 cells). */
		snprintf(oldest, sizeof(oldest), _("%s left"), span(x->oldest - now, d, sizeof(d)));
	else
		/* TRANSLATORS: an age, "8m00s ago" (15 cells). */
		snprintf(oldest, sizeof(oldest), _("%s ago"), span(now - x->oldest, d, sizeof(d)));
	if (x->newest_claim <= 0)
		snprintf(last, sizeof(last), "-");
	else
		snprintf(last, sizeof(last), _("%s ago"),
		         span(now - x->newest_claim, d, sizeof(d)));
	draw_text_pad(y, cx, COL_AGE, style, oldest);
	draw_text_pad(y, cx + COL_AGE + 1, COL_AGE, style, last);
	if (g->table == EV_TABLE_OUTBOX) {
		int vs = sel                           ? style
		         : x->verdict == EV_INST_DEAD  ? EV_STYLE_STATUS_FAILED
		         : x->verdict == EV_INST_ALIVE ? EV_STYLE_STATUS_SUCCESS
		                                       : EV_STYLE_WARNING;
		draw_text_pad(y, cx + 2 * (COL_AGE + 1), COL_VERD, vs,
		              ev_inst_verdict_name(x->verdict));
	}
}

static void inst_draw(struct app *a, struct view *v, int top, int height, int cols)
{
	struct inst_view *g = (struct inst_view *)v;
	title_line(a, g, top, cols);
	note_line(a, g, top + 1, cols);
	top += 2;
	height -= 2;
	if (g->error[0]) {
		draw_text(top, 0, cols, EV_STYLE_ERROR, g->error);
		top++;
		height--;
	}
	if (g->in == NULL) {
		if (!g->error[0])
			draw_text(top, 2, cols - 2, EV_STYLE_NORMAL, _("loading…"));
		return;
	}
	header_line(g, top, cols);
	int n = (int)g->in->n, body = height - 1;
	if (n == 0)
		draw_text(top + 1, 2, cols - 2, EV_STYLE_NORMAL,
		          g->table == EV_TABLE_OUTBOX
		                  ? _("no processing rows: no instance holds a lock")
		                  : _("no processing rows"));
	if (g->sel < g->scroll)
		g->scroll = g->sel;
	if (g->sel >= g->scroll + body)
		g->scroll = g->sel - body + 1;
	for (int i = g->scroll, y = top + 1; i < n && y < top + 1 + body; i++, y++)
		row_line(g, &g->in->v[i], i == g->sel, y, cols);
}

static const struct ev_instance *selected(const struct inst_view *g)
{
	if (g->in == NULL || g->sel < 0 || (size_t)g->sel >= g->in->n)
		return NULL;
	return &g->in->v[g->sel];
}

/* The filter of one instance's rows: locked_by (outbox) or source (message). */
static bool instance_filter(struct app *a, const struct inst_view *g, const struct ev_instance *x,
                            struct ev_filter *f, char *text, size_t size)
{
	struct ev_error err = {0};
	const char *key = g->table == EV_TABLE_OUTBOX ? "locked_by" : "source";
	memset(f, 0, sizeof(*f));
	if (x->name == NULL) {
		/* TRANSLATORS: %s is a column (locked_by, event_source). */
		app_message(a, EV_STYLE_NORMAL, _("rows without a %s cannot be filtered on"),
		            g->table == EV_TABLE_OUTBOX ? "locked_by" : "event_source");
		return false;
	}
	if (ev_filter_set(f, key, x->name, &err) < 0) {
		app_message(a, EV_STYLE_ERROR, "%s", err.msg);
		ev_filter_free(f);
		return false;
	}
	snprintf(text, size, "%s=\"%.*s\"", key, app_cut(x->name, 200), x->name);
	return true;
}

/* R: the instance's stuck locks recovered through the bulk path (its count, guards and
 * confirmation), on the stuck list filtered by locked_by. */
static void recover_instance(struct app *a, struct inst_view *g)
{
	const struct ev_instance *x = selected(g);
	struct ev_filter f;
	char text[256], what[512];
	if (x == NULL)
		return;
	if (g->table != EV_TABLE_OUTBOX) {
		app_message(a, EV_STYLE_NORMAL, "%s",
		            _("the message table has no lock owner: recover from its stuck list"));
		return;
	}
	if (x->expired == 0) {
		app_message(a, EV_STYLE_NORMAL, _("%s holds no expired lock: nothing to recover"),
		            x->name ? x->name : _("(none)"));
		return;
	}
	if (!instance_filter(a, g, x, &f, text, sizeof(text)))
		return;
	/* TRANSLATORS: what a bulk recover runs on: the stuck list and its filter
	 * (locked_by="…"). */
	snprintf(what, sizeof(what), _("list stuck, %s"), text);
	struct ui_bulk_rows rows = {.kind = EV_LIST_STUCK, .filter = &f, .what = what};
	ui_bulk_start(a, &g->base, app_site_index(a, &g->base), EV_UA_RECOVER, g->table, &rows);
	ev_filter_free(&f);
}

static bool inst_action(struct app *a, struct view *v, enum ev_ui_action act)
{
	struct inst_view *g = (struct inst_view *)v;
	int n = g->in ? (int)g->in->n : 0;
	switch (act) {
	case EV_UA_UP:
	case EV_UA_DOWN:
	case EV_UA_TOP:
	case EV_UA_BOTTOM:
		app_move_sel(act, &g->sel, n);
		break;
	case EV_UA_INSTANCES:
		break; /* open already */
	case EV_UA_OPEN: {
		const struct ev_instance *x = selected(g);
		struct ev_filter f;
		char text[256];
		if (x == NULL || !instance_filter(a, g, x, &f, text, sizeof(text)))
			break;
		app_push(a, view_list_new_filtered(a, g->table, EV_LIST_PROCESSING, &f, text));
		ev_filter_free(&f);
		break;
	}
	case EV_UA_RECOVER:
		recover_instance(a, g);
		break;
	default:
		return false;
	}
	a->dirty = true;
	return true;
}

static bool inst_allows(struct app *a, struct view *v, enum ev_ui_action act)
{
	const struct inst_view *g = (const struct inst_view *)v;
	const struct ev_instance *x = selected(g);
	(void)a;
	return act == EV_UA_RECOVER && g->table == EV_TABLE_OUTBOX && x != NULL && x->expired > 0;
}

static void inst_free(struct view *v)
{
	struct inst_view *g = (struct inst_view *)v;
	ev_instances_free(&g->in);
	free(g);
}

static const struct view_ops inst_ops = {
        .name = "instances",
        .ctx = EV_CTX_LIST,
        .draw = inst_draw,
        .action = inst_action,
        .result = inst_result,
        .allows = inst_allows,
        .load = inst_load,
        .free = inst_free,
        .on_timer = true,
};

struct view *view_instances_new(struct app *a, enum ev_table_kind t)
{
	struct inst_view *g = ev_xcalloc(1, sizeof(*g));
	(void)a;
	g->base.ops = &inst_ops;
	g->table = t;
	return &g->base;
}
