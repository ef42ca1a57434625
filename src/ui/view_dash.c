/* evtop — the dashboard view: both tables at once (split; Tab moves the focus), one row per
 * group of the current dimension, totals, changed numbers highlighted, a sparkline of each
 * group's backlog over the session. Enter on a cell opens the list behind it. */
#include <config.h>

#include "core/chart.h"
#include "core/doctor.h"
#include "core/i18n.h"
#include "core/mirror.h"
#include "core/text.h"
#include "db/dashjob.h"
#include "ui/app.h"
#include "ui/term.h"

#include <curses.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define SPARK_LEN 10 /* samples kept and shown */

struct spark {
	char *group;
	long long v[SPARK_LEN];
	int n;
};

struct table_state {
	struct ev_dash *cur, *prev;
	char note[200]; /* missing table, failed query */
	char as_of[32]; /* the server's time when cur was read */
	/* A refresh of this table failed while the connection stayed up (privileges revoked):
	 * cur is kept, marked stale since as_of. */
	char stale_since[32];
	/* The table vanished (dropped, renamed, changed shape): its figures of this time were
	 * taken off the screen rather than left there as if current. */
	char gone_since[32];
	struct spark *sparks;
	size_t nsparks;
	struct ev_table_facts facts; /* size and history, read every FACTS_EVERY refreshes */
	int sel_row;                 /* 0..nrows (nrows = the totals), a position in order */
	int scroll;
	/* The rows in the order shown: order[i] is the index in cur->rows of the row at
	 * position i (cur->rows is the backlog order core gives). */
	int *order;
};

struct dash_view {
	struct view base;
	struct table_state t[EV_TABLE_COUNT];
	enum ev_table_kind focus;
	int sel_col;
	/* The rows' order (< and > choose, I inverts): SORT_BACKLOG (core's, most backlog
	 * first), SORT_GROUP, or a column's index; sort_asc the other way round. The cursor
	 * follows its group through a refresh and a new order, or with nofollow (F) keeps its
	 * line. */
	int sort;
	bool sort_asc;
	bool nofollow;
	int dim; /* index into the outbox's dimensions */
	unsigned refreshes;
	int window_s;
	bool all; /* every source at once: a row per source */
	/* The backlog mirror of each table of the source watched (core/mirror.h), lent to each
	 * refresh's job and given back with its result; NULL while a job has it (a refresh
	 * started then reads the backlog anew). mirror_source: whose rows they are. */
	struct ev_mirror *mirror[EV_TABLE_COUNT];
	int mirror_source;
	/* Throughput over the session (core/chart.h), per table and group of chart_dim[t]. */
	struct ev_chart_set charts[EV_TABLE_COUNT];
	const char *chart_dim[EV_TABLE_COUNT];
};

/* Columns derived from the figures: the rates over the window and the time to drain. */
enum { RATE_CREATED = EV_DASH_NFIGURES, RATE_FINISHED, RATE_DRAIN, RATE_FAILED, RATE_OPER };

/* The columns, left to right: their headers, and what they count for the help screen's legend
 * (one table for both; marked here, translated where drawn). The group column stays; the
 * figures scroll left and right under the cursor when they do not all fit. A header takes
 * width - 1 columns (one separates it from the one before, and holds the order's arrow):
 * col_width() widens a column whose translated header needs more. */
static const struct {
	int fig; /* an ev_dash_figure, or a RATE_* */
	const char *head;
	int width;
	int list; /* the list Enter opens, or -1 */
	const char *help;
} columns[] = {
        /* TRANSLATORS: the dashboard's column headers: at most 5 columns (a Chinese
         * character takes 2) where width 6, 6 where width 7; the glossary's short forms. */
        {EV_DASH_PENDING, N_("PEND"), 6, EV_LIST_PENDING, N_("pending (status 0)")},
        {EV_DASH_PROCESSING, N_("PROC"), 6, EV_LIST_PROCESSING,
         N_("processing (status 1), the stuck ones included")},
        /* TRANSLATORS: dashboard column header, at most 5 columns: stuck (expired lock). */
        {EV_DASH_STUCK, N_("STUCK"), 6, EV_LIST_STUCK,
         N_("processing past lock_until (outbox) / the stuck threshold (message)")},
        /* TRANSLATORS: dashboard column header, at most 5 columns: failed. */
        {EV_DASH_FAILED, N_("FAIL"), 6, EV_LIST_FAILED,
         N_("failed (status 3), every bucket below")},
        /* TRANSLATORS: dashboard column header, at most 5 columns: failed and due. */
        {EV_DASH_FAILED_DUE, N_("DUE"), 6, EV_LIST_FAILED_DUE,
         N_("failed, retries left, next_retry_time reached")},
        /* TRANSLATORS: dashboard column header, at most 5 columns: failed, not yet due. */
        {EV_DASH_FAILED_WAITING, N_("WAIT"), 6, EV_LIST_FAILED_WAITING,
         N_("failed, retries left, next_retry_time still ahead")},
        /* TRANSLATORS: dashboard column header, at most 5 columns (6 widens the column):
         * failed without a next_retry_time. */
        {EV_DASH_FAILED_NORETRY, N_("NORTY"), 6, EV_LIST_FAILED_NORETRY,
         N_("failed, retries left, no next_retry_time: nothing retries it")},
        /* TRANSLATORS: dashboard column header, at most 5 columns: retries exhausted. */
        {EV_DASH_EXHAUSTED, N_("EXHST"), 6, EV_LIST_FAILED_EXHAUSTED,
         N_("failed, retry_count >= max_retry_count: exhausted")},
        /* TRANSLATORS: dashboard column header, at most 6 columns: the oldest pending
         * event's age. */
        {EV_DASH_OLDEST_PENDING_AGE, N_("OLDEST"), 7, EV_LIST_PENDING,
         N_("age of the oldest pending event (create_time)")},
        /* TRANSLATORS: dashboard column header, at most 6 columns: time to drain. */
        {RATE_DRAIN, N_("DRAIN"), 7, -1,
         N_("time to clear what drains by itself (PEND, PROC not stuck, FAIL with retries "
            "left) at DONE/m (∞: never); OPER is the rest")},
        /* TRANSLATORS: dashboard column header, at most 5 columns: needs an operator. */
        {RATE_OPER, N_("OPER"), 6, -1,
         N_("needs an operator: STUCK + EXHST (never drains by itself)")},
        /* TRANSLATORS: dashboard column header, at most 6 columns: created per minute. */
        {RATE_CREATED, N_("NEW/m"), 7, -1,
         N_("events created per minute, the last minute (without the mirror: over the "
            "window)")},
        /* TRANSLATORS: dashboard column header, at most 6 columns: finished per minute. */
        {RATE_FINISHED, N_("DONE/m"), 7, -1,
         N_("events finished per minute, the last minute: created - backlog growth - "
            "deleted (without the mirror: created in the window and finished)")},
        /* TRANSLATORS: dashboard column header, at most 6 columns: failed per minute. */
        {RATE_FAILED, N_("FAIL/m"), 7, -1,
         N_("events that failed per minute, the last minute (with the mirror only)")},
        /* TRANSLATORS: dashboard column header, at most 6 columns: the longest wait of an
         * event a retry made pending. */
        {EV_DASH_LONGEST_RETRY_WAIT, N_("RWAIT"), 7, EV_LIST_PENDING,
         N_("longest wait of a pending event since a retry made it pending")},
        /* TRANSLATORS: dashboard column header, at most 5 columns: cancelled. */
        {EV_DASH_CANCELLED, N_("CANC"), 6, EV_LIST_CANCELLED,
         N_("created in the window and cancelled (status 4)")},
        /* TRANSLATORS: dashboard column header, at most 6 columns: created. */
        {EV_DASH_CREATED, N_("NEW"), 7, -1, N_("created in the window (create_time)")},
        /* TRANSLATORS: dashboard column header, at most 6 columns: succeeded. */
        {EV_DASH_SUCCESS, N_("OK"), 7, -1, N_("created in the window and succeeded (status 2)")},
};
#define NCOLS ((int)(sizeof(columns) / sizeof(columns[0])))

/* Column c's header over table t, translated: the pending and processing columns name the
 * table's own state (the outbox's publishes); EV_TABLE_COUNT: the legend's, for both. */
static const char *col_head(int c, int t)
{
	int fig = columns[c].fig;
	if (t == EV_TABLE_OUTBOX && fig == EV_DASH_PENDING)
		/* TRANSLATORS: the outbox's pending column header, at most 6 columns. */
		return P_("outbox", "PEND");
	if (t == EV_TABLE_OUTBOX && fig == EV_DASH_PROCESSING)
		/* TRANSLATORS: the outbox's publishing column header, at most 6 columns. */
		return P_("outbox", "PROC");
	if (t == EV_TABLE_MESSAGE && fig == EV_DASH_PENDING)
		/* TRANSLATORS: the message table's pending column header, at most 6 columns. */
		return P_("message", "PEND");
	if (t == EV_TABLE_MESSAGE && fig == EV_DASH_PROCESSING)
		/* TRANSLATORS: the message table's processing column header, at most 6
		 * columns. */
		return P_("message", "PROC");
	return _(columns[c].head);
}

/* Column c's width in display columns: the table's, or its widest header's and a separating
 * column when a translation needs more (the same in both tables: their blocks line up). */
static int col_width(int c)
{
	static int width[NCOLS];
	if (width[c] == 0) {
		int w = columns[c].width;
		for (int t = 0; t < EV_TABLE_COUNT; t++) {
			int need = ev_text_width(col_head(c, t)) + 1;
			w = need > w ? need : w;
		}
		width[c] = w;
	}
	return width[c];
}

static const int windows[] = {300, 900, 3600, 6 * 3600, 86400, 7 * 86400};
/* The tables' size, oldest row and rows past the retention: at the first refresh, then every
 * this many (5 minutes at 2 s). */
#define FACTS_EVERY 150
#define NWINDOWS    ((int)(sizeof(windows) / sizeof(windows[0])))

static const char *dim_key(const struct dash_view *d, enum ev_table_kind t)
{
	if (d->all)
		return ev_dashjob_all_dim;
	const struct ev_table_def *ob = ev_model_table(EV_TABLE_OUTBOX);
	const char *key = ob->dimensions[d->dim].key;
	/* topic and channel are the outbox's only: the message table stays by event_type. */
	return ev_model_dimension(ev_model_table(t), key) ? key : "event_type";
}

static void dash_refresh(struct app *a, struct view *v)
{
	struct dash_view *d = (struct dash_view *)v;
	struct ev_dashjob_arg *arg = ev_xcalloc(1, sizeof(*arg));
	const struct site *here = &a->sites[a->cur_source];
	for (int t = 0; t < EV_TABLE_COUNT; t++) {
		if (a->src->tables & (1u << t))
			arg->table_name[t] =
			        ev_xstrdup(app_table_name(a, a->cur_source, (enum ev_table_kind)t));
		arg->dimension[t] = dim_key(d, (enum ev_table_kind)t);
		if (here->have_info)
			ev_table_info_copy(&arg->info[t], &here->info[t]);
	}
	arg->window_s = d->window_s;
	arg->stuck_s = a->cfg->stuck_threshold_s;
	/* The mirrors are lent to the job (a new one for a table whose mirror is out with an
	 * earlier job, or of another source). */
	if (d->mirror_source != a->cur_source)
		for (int t = 0; t < EV_TABLE_COUNT; t++)
			ev_mirror_free(&d->mirror[t]);
	d->mirror_source = a->cur_source;
	for (int t = 0; t < EV_TABLE_COUNT && !d->all && a->cfg->mirror; t++) {
		if (arg->table_name[t] == NULL)
			continue;
		arg->mirror[t] = d->mirror[t] ? d->mirror[t] : ev_mirror_new((enum ev_table_kind)t);
		d->mirror[t] = NULL;
		for (size_t i = 0; i < a->nwrote[t]; i++)
			ev_mirror_touch(arg->mirror[t], a->wrote[t][i]);
	}
	for (int t = 0; t < EV_TABLE_COUNT; t++)
		a->nwrote[t] = 0;
	arg->mirror_opts.interval_s = a->refresh_ms / 1000.0;
	arg->mirror_opts.reverify_s = a->cfg->mirror_reverify_s;
	arg->mirror_opts.check_s = a->cfg->mirror_check_s;
	arg->mirror_opts.settle_s = a->cfg->mirror_settle_s;
	/* The window counts read every event created in the window: the costliest query by far
	 * on a busy table, and the slowest to change. Re-read them every fifth refresh (and for
	 * a table with nothing to carry over: a table that came back reads them at once); the
	 * backlog is read every time. */
	for (int t = 0; t < EV_TABLE_COUNT; t++) {
		const struct ev_dash *cur = d->t[t].cur;
		if (cur != NULL && cur->dimension == dim_key(d, (enum ev_table_kind)t) &&
		    cur->window_s == d->window_s && d->refreshes % 5 != 0)
			arg->skip[t] = 1u << EV_DQ_WINDOW;
	}
	for (int t = 0; t < EV_TABLE_COUNT; t++) {
		arg->facts[t] = !d->all && d->refreshes % FACTS_EVERY == 0;
		arg->retention_s[t] = a->cfg->retention_s[t];
	}
	d->refreshes++;
	arg->need_info = !here->have_info;
	snprintf(arg->where, sizeof(arg->where), "%s%s%s",
	         a->src->host ? a->src->host : "localhost", a->src->database ? "/" : "",
	         a->src->database ? a->src->database : "");
	if (d->all) {
		int n = a->nsources;
		arg->all.n = n;
		arg->all.conns = ev_xcalloc((size_t)n, sizeof(*arg->all.conns));
		arg->all.src = ev_xcalloc((size_t)n, sizeof(*arg->all.src));
		for (int i = 0; i < n; i++) {
			struct ev_dashjob_src *s = &arg->all.src[i];
			arg->all.conns[i] = a->all_conns[i];
			s->name = ev_xstrdup(a->sources[i]->name ? a->sources[i]->name : "default");
			for (int t = 0; t < EV_TABLE_COUNT; t++)
				if (a->sources[i]->tables & (1u << t))
					s->table_name[t] = ev_xstrdup(
					        app_table_name(a, i, (enum ev_table_kind)t));
			s->need_info = !a->sites[i].have_info;
			s->replica = a->all_endpoints[i] != NULL;
			for (int t = 0; t < EV_TABLE_COUNT && !s->need_info; t++)
				ev_table_info_copy(&s->info[t], &a->sites[i].info[t]);
		}
		for (int t = 0; t < EV_TABLE_COUNT; t++)
			arg->skip[t] = 0;
	}
	struct ev_job *job = ev_job_new(0, 0, ev_dashjob_run, arg, ev_dashjob_arg_free);
	/* Every source's connection: Esc cancels their statements too. */
	job->conns = arg->all.conns;
	job->nconns = (size_t)arg->all.n;
	app_submit(a, a->wdash, v, job);
}

/* A group's backlog for its trend: pending + processing + failed, or -1 when one of them is
 * unknown (a source that did not answer, a time limit): a gap, never a drop to nothing. */
static long long backlog(const struct ev_dash_row *row)
{
	static const enum ev_dash_figure figs[] = {EV_DASH_PENDING, EV_DASH_PROCESSING,
	                                           EV_DASH_FAILED};
	long long sum = 0;
	for (size_t k = 0; k < sizeof(figs) / sizeof(figs[0]); k++) {
		if (row->f[figs[k]].unknown)
			return -1;
		sum += row->f[figs[k]].value;
	}
	return sum;
}

static void spark_push(struct table_state *ts, const char *group, long long value)
{
	const char *g = group ? group : "";
	struct spark *s = NULL;
	for (size_t i = 0; i < ts->nsparks; i++)
		if (strcmp(ts->sparks[i].group, g) == 0)
			s = &ts->sparks[i];
	if (s == NULL) {
		if (ts->nsparks >= 1000)
			return; /* bounded: thousands of groups need no trend each */
		ts->sparks = ev_xrealloc(ts->sparks, (ts->nsparks + 1) * sizeof(*ts->sparks));
		s = &ts->sparks[ts->nsparks++];
		memset(s, 0, sizeof(*s));
		s->group = ev_xstrdup(g);
	}
	if (s->n == SPARK_LEN) {
		memmove(s->v, s->v + 1, (SPARK_LEN - 1) * sizeof(s->v[0]));
		s->n--;
	}
	s->v[s->n++] = value;
}

static const struct ev_dash_row *row_at(const struct table_state *ts, int i)
{
	return &ts->cur->rows[ts->order ? ts->order[i] : i];
}

/* What the cursor is on, to find again after a refresh or a new order: a group (by its
 * value, as a list keeps its row by id; NULL for SQL NULL), the totals, or nothing. */
struct selection {
	enum { SEL_NONE, SEL_GROUP, SEL_TOTAL } what;
	char *group;
	int line;
};

static void selection_take(const struct table_state *ts, struct selection *sel)
{
	*sel = (struct selection){.what = SEL_NONE, .line = ts->sel_row};
	if (ts->cur == NULL || ts->sel_row < 0)
		return;
	if (ts->sel_row >= (int)ts->cur->nrows) {
		sel->what = SEL_TOTAL;
		return;
	}
	const char *g = row_at(ts, ts->sel_row)->group;
	sel->what = SEL_GROUP;
	sel->group = g ? ev_xstrdup(g) : NULL;
}

/* The cursor on the row it was on; a group that is gone, or no follow, leaves it on the same
 * line. */
static void selection_restore(const struct dash_view *d, struct table_state *ts,
                              struct selection *sel)
{
	int n = ts->cur ? (int)ts->cur->nrows : 0;
	ts->sel_row = sel->line;
	if (!d->nofollow && sel->what == SEL_TOTAL)
		ts->sel_row = n;
	for (int i = 0; !d->nofollow && sel->what == SEL_GROUP && i < n; i++) {
		const char *g = row_at(ts, i)->group;
		if (g == sel->group ||
		    (g != NULL && sel->group != NULL && strcmp(g, sel->group) == 0)) {
			ts->sel_row = i;
			break;
		}
	}
	if (ts->sel_row > n)
		ts->sel_row = n;
	free(sel->group);
	sel->group = NULL;
}

/* --- the rows' order ------------------------------------------------------------------------ */

enum { SORT_BACKLOG = -2, SORT_GROUP = -1 };

static int rate_value(const struct ev_dash *d, const struct ev_dash_row *row, int which, double *v,
                      bool *lower);

/* A row's value in column c, for sorting: false when it is not known. */
static bool sort_value(const struct ev_dash *dash, const struct ev_dash_row *row, int c, double *v)
{
	int fig = columns[c].fig;
	if (fig < EV_DASH_NFIGURES) {
		*v = (double)row->f[fig].value;
		return !row->f[fig].unknown && row->f[fig].value >= 0;
	}
	bool lower = false;
	return rate_value(dash, row, fig, v, &lower) > 0;
}

static int cmp_group(const char *x, const char *y)
{
	if (x == NULL || y == NULL)
		return (x != NULL) - (y != NULL); /* NULL first */
	return strcmp(x, y);
}

/* qsort has no context: the sort being made (one at a time, on the UI thread). */
static struct {
	const struct dash_view *d;
	const struct ev_dash *dash;
} sorting;

/* Unknown values last whichever the direction; ties in core's order. */
static int order_cmp(const void *pa, const void *pb)
{
	int ia = *(const int *)pa, ib = *(const int *)pb;
	const struct ev_dash_row *a = &sorting.dash->rows[ia], *b = &sorting.dash->rows[ib];
	int r = 0;
	if (sorting.d->sort == SORT_GROUP) {
		r = cmp_group(a->group, b->group);
	} else {
		double va = 0, vb = 0;
		bool ka = sort_value(sorting.dash, a, sorting.d->sort, &va);
		bool kb = sort_value(sorting.dash, b, sorting.d->sort, &vb);
		if (ka != kb)
			return ka ? -1 : 1;
		r = !ka ? 0 : va < vb ? 1 : va > vb ? -1 : 0; /* most first */
	}
	if (sorting.d->sort_asc)
		r = -r;
	return r != 0 ? r : (ia > ib) - (ia < ib);
}

static void sort_rows(const struct dash_view *d, struct table_state *ts)
{
	free(ts->order);
	ts->order = NULL;
	if (ts->cur == NULL || ts->cur->nrows == 0)
		return;
	size_t n = ts->cur->nrows;
	ts->order = ev_xcalloc(n, sizeof(*ts->order));
	for (size_t i = 0; i < n; i++)
		ts->order[i] = (int)(d->sort == SORT_BACKLOG && d->sort_asc ? n - 1 - i : i);
	if (d->sort == SORT_BACKLOG)
		return;
	sorting.d = d;
	sorting.dash = ts->cur;
	qsort(ts->order, n, sizeof(*ts->order), order_cmp);
}

/* The order's name over table t, for the title and the message line: "FAIL ↓". */
static void sort_name(const struct dash_view *d, int t, char *buf, size_t size)
{
	/* TRANSLATORS: the dashboard's orders, "sorted backlog ↓": by the backlog, by the
	 * group's name (or a column header). */
	const char *what = d->sort == SORT_BACKLOG ? _("backlog")
	                   : d->sort == SORT_GROUP ? _("group")
	                                           : col_head(d->sort, t);
	bool up = d->sort == SORT_GROUP ? !d->sort_asc : d->sort_asc;
	snprintf(buf, size, "%s %s", what, up ? "↑" : "↓");
}

/* < and > choose the order (backlog, the group, each column in turn), I inverts it, F turns
 * following the cursor's group on and off. */
static void sort_key(struct app *a, struct dash_view *d, enum ev_ui_action act)
{
	struct selection sel[EV_TABLE_COUNT];
	for (int t = 0; t < EV_TABLE_COUNT; t++)
		selection_take(&d->t[t], &sel[t]);
	if (act == EV_UA_SORT_NEXT)
		d->sort = d->sort + 1 >= NCOLS ? SORT_BACKLOG : d->sort + 1;
	else if (act == EV_UA_SORT_PREV)
		d->sort = d->sort - 1 < SORT_BACKLOG ? NCOLS - 1 : d->sort - 1;
	else if (act == EV_UA_SORT_INVERT)
		d->sort_asc = !d->sort_asc;
	else
		d->nofollow = !d->nofollow;
	if (act == EV_UA_SORT_NEXT || act == EV_UA_SORT_PREV)
		d->sort_asc = false;
	for (int t = 0; t < EV_TABLE_COUNT; t++) {
		sort_rows(d, &d->t[t]);
		selection_restore(d, &d->t[t], &sel[t]);
	}
	char name[64];
	sort_name(d, d->focus, name, sizeof(name));
	if (act == EV_UA_FOLLOW)
		app_message(
		        a, EV_STYLE_NORMAL, "%s",
		        d->nofollow
		                ? _("follow off: the cursor keeps its line (F: follow its group)")
		                : _("follow: the cursor stays on its group (F: keep the line)"));
	else
		app_message(a, EV_STYLE_NORMAL, _("sorted by %s (< > choose, I inverts)"), name);
}

/* The sources' indexes and columns, read again with the refresh (each source's where every
 * source is shown). */
static void take_infos(struct app *a, struct ev_dashjob_result *r)
{
	for (int i = 0; i < r->nall && i < a->nsources; i++) {
		struct ev_dashjob_src_result *got = &r->all[i];
		a->sites[i].lag_s = got->lag;
		if (!got->got_info)
			continue;
		struct site *st = &a->sites[i];
		for (int t = 0; t < EV_TABLE_COUNT; t++) {
			ev_table_info_clear(&st->info[t]);
			st->info[t] = got->info[t];
			memset(&got->info[t], 0, sizeof(got->info[t]));
		}
		st->have_info = true;
	}
	if (r->have_info) {
		struct site *st = &a->sites[a->cur_source];
		for (int t = 0; t < EV_TABLE_COUNT; t++) {
			ev_table_info_clear(&st->info[t]);
			st->info[t] = r->info[t];
			memset(&r->info[t], 0, sizeof(r->info[t]));
		}
		st->have_info = true;
	}
}

/* One refresh's figures of a row for the charts: the rates per minute and the backlog. */
static void chart_sample(const struct ev_dash *dash, const struct ev_dash_row *row, int64_t t,
                         struct ev_chart_sample *x)
{
	static const int rates[] = {RATE_CREATED, RATE_FINISHED, RATE_FAILED};
	x->t = t;
	for (int k = 0; k < 3; k++) {
		double v = 0;
		bool lower = false;
		x->v[k] = rate_value(dash, row, rates[k], &v, &lower) > 0 ? v : NAN;
	}
	long long b = backlog(row);
	x->v[EV_CF_BACKLOG] = b >= 0 ? (double)b : NAN;
}

/* The charts grow by this refresh (at the server's time now): the table and every group. */
static void chart_push(struct dash_view *d, enum ev_table_kind t, const char *now)
{
	const struct ev_dash *dash = d->t[t].cur;
	int64_t at;
	if (dash == NULL || !ev_mirror_parse_time(now, &at))
		return;
	if (d->chart_dim[t] != dash->dimension) {
		ev_chart_set_clear_groups(&d->charts[t]);
		d->chart_dim[t] = dash->dimension;
	}
	struct ev_chart_sample x;
	chart_sample(dash, &dash->total, at, &x);
	ev_chart_set_push(&d->charts[t], true, NULL, &x);
	for (size_t i = 0; i < dash->nrows; i++) {
		chart_sample(dash, &dash->rows[i], at, &x);
		ev_chart_set_push(&d->charts[t], false, dash->rows[i].group, &x);
	}
}

const struct ev_chart_series *ui_dash_chart(const struct view *v, enum ev_table_kind t, bool total,
                                            const char *group, const char **dim)
{
	if (v == NULL || v->ops->ctx != EV_CTX_DASHBOARD)
		return NULL;
	const struct dash_view *d = (const struct dash_view *)v;
	if (dim != NULL)
		*dim = d->chart_dim[t];
	return ev_chart_set_find(&d->charts[t], total, group);
}

/* One table's figures come back: the current ones become the previous, a part not read this
 * time carried from them (or unknown), the selection follows its group, the trends grow; a
 * table that is gone shows its note instead of old figures. */
static void take_table(struct app *a, struct dash_view *d, enum ev_table_kind t,
                       struct ev_dashjob_result *r)
{
	struct table_state *ts = &d->t[t];
	snprintf(ts->note, sizeof(ts->note), "%s", r->note[t]);
	if (r->dash[t] == NULL) {
		if (r->gone[t]) {
			/* Figures of a table that is not there any more are not shown as
			 * if current: the note takes their place. */
			if (ts->cur != NULL)
				snprintf(ts->gone_since, sizeof(ts->gone_since), "%s", ts->as_of);
			ev_dash_free(&ts->cur);
			ev_dash_free(&ts->prev);
			free(ts->order);
			ts->order = NULL;
			ts->stale_since[0] = '\0';
			ts->sel_row = ts->scroll = 0;
		} else if (ts->cur != NULL && r->note[t][0] != '\0' && ts->stale_since[0] == '\0') {
			snprintf(ts->stale_since, sizeof(ts->stale_since), "%s", ts->as_of);
		}
		return;
	}
	ts->stale_since[0] = ts->gone_since[0] = '\0';
	if (r->facts[t].read)
		ts->facts = r->facts[t];
	snprintf(ts->as_of, sizeof(ts->as_of), "%s", r->now);
	a->clock_suspect[t] = r->dash[t]->clock_suspect != NULL;
	snprintf(a->clock_summary[t], sizeof(a->clock_summary[t]), "%s",
	         r->dash[t]->clock_summary ? r->dash[t]->clock_summary : "");
	struct selection sel;
	selection_take(ts, &sel);
	ev_dash_free(&ts->prev);
	ts->prev = ts->cur;
	ts->cur = r->dash[t];
	r->dash[t] = NULL;
	if (ts->cur->skipped) {
		const struct ev_dash *earlier = ts->prev;
		if (earlier && (earlier->dimension != ts->cur->dimension ||
		                earlier->window_s != ts->cur->window_s))
			earlier = NULL;
		/* Nothing to carry from: what was skipped is unknown, never 0. */
		for (int w = 0; earlier == NULL && w < EV_DQ_COUNT; w++)
			if (ts->cur->skipped & (1u << w))
				ev_dash_unknown(ts->cur, (enum ev_dash_query)w,
				                _("not read this time"));
		ev_dash_carry(ts->cur, earlier);
		ev_dash_finish(ts->cur);
	}
	/* A new dimension or window: nothing to compare with. */
	if (ts->prev &&
	    (ts->prev->dimension != ts->cur->dimension || ts->prev->window_s != ts->cur->window_s))
		ev_dash_free(&ts->prev);
	sort_rows(d, ts);
	selection_restore(d, ts, &sel);
	for (size_t i = 0; i < ts->cur->nrows; i++) {
		const struct ev_dash_row *row = &ts->cur->rows[i];
		spark_push(ts, row->group, backlog(row));
	}
	spark_push(ts, "\001TOTAL", backlog(&ts->cur->total));
	chart_push(d, t, r->now);
	if (ts->sel_row > (int)ts->cur->nrows)
		ts->sel_row = (int)ts->cur->nrows;
}

/* --clock-ok on the command line: audited when a mismatch is first suspected. */
static void clock_ok_at_start(struct app *a, struct view *v)
{
	bool suspect = false;
	for (int t = 0; t < EV_TABLE_COUNT; t++)
		suspect = suspect || a->clock_suspect[t];
	if (suspect && a->args->clock_ok && !a->clock_ok_audited && !a->cfg->read_only) {
		struct ev_error err = {0};
		a->clock_ok_audited = true;
		struct ev_buf why;
		ev_buf_init(&why);
		ui_dash_clock_why(v, &why);
		if (app_clock_ok_audit(a, "--clock-ok", why.data, &err) < 0) {
			char *msg = ev_text_fit(err.msg, 200, false, false);
			app_message(a, EV_STYLE_ERROR, _("the audit file cannot be written (%s)"),
			            msg);
			free(msg);
		}
		ev_buf_free(&why);
	}
}

static void dash_result(struct app *a, struct view *v, struct ev_job *job)
{
	struct dash_view *d = (struct dash_view *)v;
	struct ev_dashjob_result *r = job->result;

	/* The mirrors come back (unless the source changed meanwhile, or a newer one is here). */
	for (int t = 0; r != NULL && t < EV_TABLE_COUNT; t++)
		if (r->mirror[t] != NULL && d->mirror[t] == NULL &&
		    d->mirror_source == a->cur_source) {
			d->mirror[t] = r->mirror[t];
			r->mirror[t] = NULL;
		}

	/* The budget counts what the refresh cost the server, failed or not (a lock wait, a
	 * time limit, a kill cost nothing); the status line shows how long it took. */
	a->last_cost_ms = job->charged_ms;
	a->last_refresh_ms = job->elapsed_ms;
	if (r == NULL || r->failed) {
		/* Keep the last data on screen, marked stale. */
		if (a->state == CONN_OK && a->stale_since[0] == '\0')
			snprintf(a->stale_since, sizeof(a->stale_since), "%s",
			         /* TRANSLATORS: "STALE since start": no refresh succeeded yet. */
			         a->server_now[0] ? a->server_now : _("start"));
		a->state = CONN_LOST;
		/* 250 columns at most, and what the buffer holds: cut between characters. */
		char *cut = ev_text_fit(job->err.msg, 250, false, false);
		size_t n = strlen(cut);
		if (n >= sizeof(a->last_error)) {
			n = sizeof(a->last_error) - 1;
			while (n > 0 && ((unsigned char)cut[n] & 0xC0) == 0x80)
				n--;
		}
		snprintf(a->last_error, sizeof(a->last_error), "%.*s", (int)n, cut);
		free(cut);
		app_message(a, EV_STYLE_ERROR, "%s", job->err.msg);
		return;
	}
	if (a->state == CONN_LOST)
		app_message(a, EV_STYLE_NORMAL, "%s", _("reconnected"));
	a->state = CONN_OK;
	a->stale_since[0] = '\0';
	snprintf(a->server_now, sizeof(a->server_now), "%s", r->now);
	snprintf(a->server, sizeof(a->server), "%s", r->server);
	a->server_offset_s = r->unix_time - (long long)time(NULL);
	a->have_offset = true;
	a->have_ok = true;
	a->last_ok_at = app_now(a);
	/* Its NOW() is of its start: the clock moves on from there. */
	a->server_now_at = (long long)job->at_ms;
	take_infos(a, r);
	for (int t = 0; t < EV_TABLE_COUNT; t++)
		take_table(a, d, (enum ev_table_kind)t, r);
	clock_ok_at_start(a, v);
}

/* --- drawing ---------------------------------------------------------------------------------- */

static void cell_text(const struct ev_figure *f, enum ev_dash_figure fig, char *buf, size_t size)
{
	if ((fig == EV_DASH_OLDEST_PENDING_AGE || fig == EV_DASH_LONGEST_RETRY_WAIT) &&
	    !f->unknown) {
		char dur[32];
		ev_format_duration(f->value, dur, sizeof(dur));
		snprintf(buf, size, "%s%s", f->capped && f->value >= 0 ? "≥" : "", dur);
		return;
	}
	ev_figure_format(f, buf, size);
}

/* The rates of a row: events per minute (≥ when a count is capped), and the drain time. */
/* The derived columns. With the mirror's flows (d->flow_on) the rates are by completion time
 * over the last minute, "—" where the group's dimension has none; without, over the window
 * by creation time. */
/* A derived column's value: 1 known (*v; *lower when it is a lower bound; DRAIN in seconds,
 * INFINITY for never), 0 unknown ("?"), -1 none for this group ("—"). */
static int rate_value(const struct ev_dash *d, const struct ev_dash_row *row, int which, double *v,
                      bool *lower)
{
	const struct ev_figure *f = row->f;
	*lower = false;
	if (which == RATE_OPER) {
		if (f[EV_DASH_STUCK].unknown || f[EV_DASH_EXHAUSTED].unknown)
			return 0;
		*lower = f[EV_DASH_STUCK].capped || f[EV_DASH_EXHAUSTED].capped;
		*v = (double)(f[EV_DASH_STUCK].value + f[EV_DASH_EXHAUSTED].value);
		return 1;
	}
	double created, finished, failed = -1;
	double drainable = (double)(f[EV_DASH_PENDING].value + f[EV_DASH_PROCESSING].value +
	                            f[EV_DASH_FAILED].value);
	if (d != NULL && d->flow_on) {
		if (!row->flow.known)
			return -1;
		created = row->flow.created_per_min;
		finished = row->flow.finished_per_min;
		failed = row->flow.failed_per_min;
		drainable = (double)(f[EV_DASH_PENDING].value + f[EV_DASH_PROCESSING].value -
		                     f[EV_DASH_STUCK].value + f[EV_DASH_FAILED].value -
		                     f[EV_DASH_EXHAUSTED].value);
	} else {
		struct ev_dash_rates r;
		ev_dash_rates(row, d ? d->window_s : 3600, &r);
		if (!r.known)
			return 0;
		created = r.created_per_min;
		finished = r.finished_per_min;
		*lower = r.lower_bound;
	}
	if (which == RATE_DRAIN) {
		*lower = false;
		*v = drainable <= 0 ? 0 : finished > 0 ? drainable / finished * 60.0 : INFINITY;
		return 1;
	}
	if (which == RATE_FAILED && failed < 0)
		return -1;
	*v = which == RATE_CREATED ? created : which == RATE_FINISHED ? finished : failed;
	return 1;
}

static void rate_text(const struct ev_dash *d, const struct ev_dash_row *row, int which, char *buf,
                      size_t size)
{
	double v = 0;
	bool lower = false;
	int known = rate_value(d, row, which, &v, &lower);
	if (known <= 0)
		snprintf(buf, size, "%s", known < 0 ? "—" : "?");
	else if (which == RATE_OPER)
		snprintf(buf, size, "%s%lld", lower ? "≥" : "", (long long)v);
	else if (which == RATE_DRAIN && isinf(v))
		snprintf(buf, size, "∞");
	else if (which == RATE_DRAIN)
		ev_format_duration((long long)v, buf, size);
	else
		snprintf(buf, size, "%s%.*f", lower ? "≥" : "", v < 10 ? 1 : 0, v);
}

static const struct ev_dash_row *prev_row(const struct table_state *ts, const char *group)
{
	if (ts->prev == NULL)
		return NULL;
	if (group == NULL)
		return &ts->prev->total;
	return ev_dash_find(ts->prev, group);
}

static void draw_spark(int y, int x, int width, const struct table_state *ts, const char *group)
{
	static const char *const bars[] = {"▁", "▂", "▃", "▄", "▅", "▆", "▇", "█"};
	const struct spark *s = NULL;
	for (size_t i = 0; i < ts->nsparks; i++)
		if (strcmp(ts->sparks[i].group, group ? group : "") == 0)
			s = &ts->sparks[i];
	if (s == NULL || width <= 0)
		return;
	int start = s->n > width ? s->n - width : 0;
	long long max = -1, min = -1;
	for (int i = start; i < s->n; i++) {
		if (s->v[i] < 0)
			continue;
		if (max < 0 || s->v[i] > max)
			max = s->v[i];
		if (min < 0 || s->v[i] < min)
			min = s->v[i];
	}
	/* Scaled between the smallest and largest value shown: a flat backlog is a flat line,
	 * at the bottom when empty; an unknown figure is a gap. Drawn as text: under
	 * ambiguous_width = 2 the bars (East Asian Ambiguous) become their one-cell stand-ins. */
	struct ev_buf b;
	ev_buf_init(&b);
	for (int i = start; i < s->n; i++) {
		if (s->v[i] < 0) {
			ev_buf_adds(&b, " ");
			continue;
		}
		int level =
		        max == min ? (max > 0 ? 3 : 0) : (int)((s->v[i] - min) * 7 / (max - min));
		ev_buf_adds(&b, bars[level]);
	}
	char *line = ev_buf_steal(&b);
	draw_text(y, x, width, EV_STYLE_NORMAL, line);
	free(line);
}

#define GROUP_MIN 16
/* TRANSLATORS: the header of the dashboard's trend (a sparkline), at most 5 columns. */
#define TREND_HEAD N_("TREND")
#define TREND_HELP N_("the backlog (PEND + PROC + FAIL) over the last refreshes")

/* How many figure columns from column `first` fit beside a group column of at least GROUP_MIN
 * (or the widest group, if narrower); the trend outranks the last figures. */
static int fit_columns(int cols, int first)
{
	int n = NCOLS - first;
	for (;;) {
		/* " »" after the last one shown when more follow: in the trend's room when there
		 * is one (the trend is two shorter then), else beside the figures. */
		int used = GROUP_MIN + 1 + (cols >= 60 ? SPARK_LEN + 1 : 0) +
		           (cols < 60 && first + n < NCOLS ? 2 : 0);
		for (int c = first; c < first + n; c++)
			used += col_width(c);
		if (used <= cols || n <= 1)
			return n;
		n--;
	}
}

/* The first figure column shown: the leftmost from which the cursor's column still fits. */
static int first_column(int cols, int sel_col)
{
	int first = 0;
	while (first < sel_col && sel_col >= first + fit_columns(cols, first))
		first++;
	return first;
}

/* The group column takes what the figures leave, up to 40, after room for the trend. */
static int group_width(int cols, int first, int ncols_shown)
{
	int used = cols < 60 && first + ncols_shown < NCOLS ? 2 : 0;
	for (int c = first; c < first + ncols_shown; c++)
		used += col_width(c);
	int w = cols - used - 1;
	if (w - (SPARK_LEN + 1) >= GROUP_MIN)
		w -= SPARK_LEN + 1;
	return w < 6 ? 6 : w > 40 ? 40 : w;
}

enum ev_table_kind ui_dash_focus(const struct view *v)
{
	return ((const struct dash_view *)v)->focus;
}

int ui_dash_legend(int i, const char **head, const char **help)
{
	if (i < 0 || i > NCOLS)
		return -1;
	*head = i < NCOLS ? col_head(i, EV_TABLE_COUNT) : _(TREND_HEAD);
	*help = _(i < NCOLS ? columns[i].help : TREND_HELP);
	return 0;
}

/* The columns that compare with NOW(): off by the zones' difference when the session's zone
 * is not the applications'. */
static bool clock_column(int fig)
{
	return fig == EV_DASH_STUCK || fig == EV_DASH_FAILED_DUE || fig == EV_DASH_FAILED_WAITING ||
	       fig == EV_DASH_OLDEST_PENDING_AGE || fig == EV_DASH_LONGEST_RETRY_WAIT ||
	       fig == RATE_DRAIN || fig == RATE_OPER;
}

static void draw_row(int y, int cols, const struct table_state *ts, const struct ev_dash_row *row,
                     const char *label, bool warn, bool selected, int sel_col, int first, int ncols,
                     bool total)
{
	bool stale = ts->stale_since[0] != '\0';
	bool suspect = ts->cur != NULL && ts->cur->clock_suspect != NULL;
	int gw = group_width(cols, first, ncols);
	int x = 0;
	draw_text_pad(y, x, gw,
	              selected ? EV_STYLE_SELECTED
	              : total  ? EV_STYLE_TITLE
	              : warn   ? EV_STYLE_WARNING
	                       : EV_STYLE_NORMAL,
	              label);
	x += gw + 1;
	const struct ev_dash_row *old = prev_row(ts, total ? NULL : row->group);
	for (int c = first; c < first + ncols; c++) {
		char buf[48];
		if (columns[c].fig >= EV_DASH_NFIGURES) {
			rate_text(ts->cur, row, columns[c].fig, buf, sizeof(buf));
			draw_text_right(y, x + 1, col_width(c) - 1,
			                selected && c == sel_col ? EV_STYLE_SELECTED
			                : stale                  ? EV_STYLE_STALE
			                : suspect && clock_column(columns[c].fig) ? EV_STYLE_WARNING
			                                                          : EV_STYLE_NORMAL,
			                buf);
			x += col_width(c);
			continue;
		}
		const struct ev_figure *f = &row->f[columns[c].fig];
		cell_text(f, (enum ev_dash_figure)columns[c].fig, buf, sizeof(buf));
		int style = EV_STYLE_NORMAL;
		if (f->unknown)
			style = EV_STYLE_WARNING;
		else if (columns[c].fig == EV_DASH_STUCK && f->value > 0)
			style = EV_STYLE_STUCK;
		else if ((columns[c].fig == EV_DASH_FAILED ||
		          columns[c].fig == EV_DASH_EXHAUSTED) &&
		         f->value > 0)
			style = EV_STYLE_STATUS_FAILED;
		if (old != NULL && !f->unknown && old->f[columns[c].fig].value != f->value &&
		    columns[c].fig != EV_DASH_OLDEST_PENDING_AGE &&
		    columns[c].fig != EV_DASH_LONGEST_RETRY_WAIT)
			style = EV_STYLE_CHANGED;
		if (suspect && clock_column(columns[c].fig))
			style = EV_STYLE_WARNING;
		if (stale)
			style = EV_STYLE_STALE;
		if (selected && c == sel_col)
			style = EV_STYLE_SELECTED;
		draw_text_right(y, x + 1, col_width(c) - 1, style, buf);
		x += col_width(c);
	}
	if (first + ncols < NCOLS)
		x += 2; /* under the header's " »" */
	if (x + 1 + 4 <= cols)
		draw_spark(y, x + 1, cols - x - 1 < SPARK_LEN ? cols - x - 1 : SPARK_LEN, ts,
		           total ? "\001TOTAL" : row->group);
}

/* Append sep and a translated part to buf. */
static void add_part(char *buf, size_t size, const char *sep, const char *fmt, ...)
        __attribute__((format(printf, 4, 5)));
static void add_part(char *buf, size_t size, const char *sep, const char *fmt, ...)
{
	size_t n = strlen(buf);
	if (n + 1 >= size)
		return;
	int k = snprintf(buf + n, size - n, "%s", sep);
	if (k < 0 || (size_t)k >= size - n)
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf + n + (size_t)k, size - n - (size_t)k, fmt, ap);
	va_end(ap);
}

/* The block's title: the table, the stale and clock marks first (a narrow terminal cuts it
 * from the right), the dimension and the rates' window, the mirror's ages, its facts last. */
static void draw_title(struct app *a, struct dash_view *d, enum ev_table_kind t, int top, int cols,
                       bool focused)
{
	struct table_state *ts = &d->t[t];
	const struct ev_table_def *def = ev_model_table(t);
	char title[1024], win[32];
	ev_format_duration(d->window_s, win, sizeof(win));
	char stale[128] = "";
	if (ts->stale_since[0] != '\0')
		add_part(stale, sizeof(stale), " · ", _("STALE since %s"), ts->stale_since);
	bool suspect = ts->cur != NULL && ts->cur->clock_suspect != NULL;
	char clock[64] = "";
	if (suspect)
		add_part(clock, sizeof(clock), " · ", "%s", _("CLOCK SUSPECT"));
	/* The stale and clock marks go first: a narrow terminal cuts the title from the right.
	 * With the mirror the rates are by completion over the last minute, and the failed
	 * figures are as of the failed range's last read (every fifth refresh once large). */
	char failed_age[128] = "";
	if (ts->cur != NULL && ts->cur->mirror.on && ts->cur->mirror.failed_age_s > 0) {
		char dur[32];
		ev_format_duration(ts->cur->mirror.failed_age_s, dur, sizeof(dur));
		/* TRANSLATORS: the failed figures are as old as the failed range's last read. */
		add_part(failed_age, sizeof(failed_age), " · ", _("FAIL as of %s ago"), dur);
	}
	/* The last full check's age (what no index carries is exact as of then), and the rows
	 * the checks found the mirror off by, corrected. */
	char checked[160] = "";
	if (ts->cur != NULL && ts->cur->mirror.on && ts->cur->mirror.checked_ago_s >= 0) {
		char dur[32];
		ev_format_duration(ts->cur->mirror.checked_ago_s, dur, sizeof(dur));
		add_part(checked, sizeof(checked), " · ", _("checked %s ago"), dur);
		if (ts->cur->mirror.drift_total > 0)
			/* TRANSLATORS: the rows the mirror's checks found it off by (after "checked
			 * 5s ago"). */
			add_part(checked, sizeof(checked), "", _(", drift %lld"),
			         ts->cur->mirror.drift_total);
	}
	/* An order other than the backlog's, and a cursor that keeps its line. */
	char order[160] = "", name[64];
	sort_name(d, t, name, sizeof(name));
	if (d->sort != SORT_BACKLOG || d->sort_asc)
		/* TRANSLATORS: after "by event_type": the order, a column header (or "backlog",
		 * "group") and its arrow, "FAIL ↓". */
		add_part(order, sizeof(order), "", _(", sorted %s"), name);
	if (d->nofollow)
		/* TRANSLATORS: after "by event_type": the cursor keeps its line rather than
		 * following its group. */
		add_part(order, sizeof(order), "", "%s", _(", no follow"));
	/* The table's size and history, last: the least urgent, the first a narrow screen cuts. */
	char facts[128] = "";
	if (ts->facts.read) {
		char text[112];
		ev_archive_facts_text(&ts->facts, text, sizeof(text));
		snprintf(facts, sizeof(facts), " · %s", text);
	}
	if (ts->cur != NULL && ts->cur->flow_on)
		snprintf(title, sizeof(title),
		         /* TRANSLATORS: the arrow of the focus, the table, its name in the
		          * database, the stale and clock marks, the dimension, the order, the
		          * window of the CANC NEW OK columns (headers), the failed figures' age,
		          * the mirror's check, the table's facts. */
		         _("%s %s (%s)%s%s · by %s%s · rates over 1m · CANC NEW OK in %s%s%s%s"),
		         focused ? "▶" : " ", ev_model_table_label(def),
		         app_table_name(a, a->cur_source, t), stale, clock, dim_key(d, t), order,
		         win, failed_age, checked, facts);
	else
		snprintf(title, sizeof(title),
		         /* TRANSLATORS: the arrow of the focus, the table, its name in the
		          * database, the stale and clock marks, the dimension, the order, the
		          * window of the rates and of the CANC column (header), the table's
		          * facts. */
		         _("%s %s (%s)%s%s · by %s%s · rates and CANC over the last %s "
		           "(create_time)%s"),
		         focused ? "▶" : " ", ev_model_table_label(def),
		         app_table_name(a, a->cur_source, t), stale, clock, dim_key(d, t), order,
		         win, facts);
	draw_text_pad(top, 0, cols,
	              stale[0]  ? EV_STYLE_STALE
	              : suspect ? EV_STYLE_WARNING
	              : focused ? EV_STYLE_TITLE
	                        : EV_STYLE_NORMAL,
	              title);
}

/* Nothing read yet, or the table is gone: why, in the block's place. */
static void draw_unread(const struct table_state *ts, int top, int height, int cols)
{
	draw_text(top + 1, 2, cols - 2, ts->note[0] ? EV_STYLE_WARNING : EV_STYLE_NORMAL,
	          ts->note[0] ? ts->note : _("loading…"));
	if (ts->gone_since[0] != '\0' && height >= 3) {
		char gone[320];
		snprintf(gone, sizeof(gone),
		         _("its figures of %s are no longer shown; read again at every refresh"),
		         ts->gone_since);
		draw_text(top + 2, 2, cols - 2, EV_STYLE_WARNING, gone);
	}
}

/* The header: « and » where columns are out of view (l and h scroll to them). */
static void draw_header(const struct dash_view *d, enum ev_table_kind t, int y, int cols, int first,
                        int ncols, int gw)
{
	/* The order's column carries its arrow just after its name. */
	const char *arrow =
	        d->sort == SORT_GROUP ? (d->sort_asc ? "↓" : "↑") : (d->sort_asc ? "↑" : "↓");
	draw_fill(y, 0, cols, EV_STYLE_HEADER);
	draw_text_pad(y, 0, gw, EV_STYLE_HEADER, dim_key(d, t));
	if (d->sort == SORT_GROUP) {
		int w = ev_text_width(dim_key(d, t));
		if (w + 2 <= gw)
			draw_text(y, w + 1, 1, EV_STYLE_HEADER, arrow);
	}
	if (first > 0)
		draw_text(y, gw, 1, EV_STYLE_HEADER, "«");
	int x = gw + 1;
	for (int c = first; c < first + ncols; c++) {
		draw_text_right(y, x + 1, col_width(c) - 1, EV_STYLE_HEADER, col_head(c, t));
		if (c == d->sort) /* in the cell after it, before the next column's name */
			draw_text(y, x + col_width(c), 1, EV_STYLE_HEADER, arrow);
		x += col_width(c);
	}
	if (first + ncols < NCOLS) {
		draw_text(y, x + 1, 1, EV_STYLE_HEADER, "»");
		x += 2;
	}
	if (x + 6 <= cols)
		draw_text(y, x + 1, cols - x - 1, EV_STYLE_HEADER, _(TREND_HEAD));
}

/* The rows from the scroll position, then the totals on the last line of the block, the clock
 * suspicion and the note under them. */
static void draw_body(struct app *a, struct dash_view *d, enum ev_table_kind t, int top, int height,
                      int cols, bool focused, int first, int ncols)
{
	struct table_state *ts = &d->t[t];
	bool suspect = ts->cur->clock_suspect != NULL;
	int body = height - 3;
	if (ts->note[0] && body > 1)
		body--;
	if (suspect && body > 1)
		body--;
	if (body < 0)
		body = 0;
	int n = (int)ts->cur->nrows;
	if (ts->sel_row < ts->scroll)
		ts->scroll = ts->sel_row;
	if (ts->sel_row < n && ts->sel_row >= ts->scroll + body)
		ts->scroll = ts->sel_row - body + 1;
	if (ts->scroll > n - body)
		ts->scroll = n - body > 0 ? n - body : 0;
	int y = top + 2;
	for (int i = ts->scroll; i < n && y < top + 2 + body; i++, y++) {
		const struct ev_dash_row *row = row_at(ts, i);
		char label[160];
		bool warn = false;
		/* TRANSLATORS: the group of the rows whose dimension is SQL NULL. */
		snprintf(label, sizeof(label), "%s", row->group ? row->group : _("(null)"));
		int si = d->all ? app_source_by_name(a, row->group) : -1;
		if (si >= 0 && a->all_endpoints != NULL && a->all_endpoints[si] != NULL) {
			/* Read on its replica: its figures are as old as its lag. */
			long long lag = a->sites[si].lag_s;
			warn = lag < 0 || lag >= a->cfg->lag_warning_s;
			char *name = ev_text_fit(row->group, 64, false, false);
			if (lag < 0)
				/* TRANSLATORS: a source's replica lag is not known. */
				snprintf(label, sizeof(label), _("%s lag ?"), name);
			else
				/* TRANSLATORS: a source's replica lag, in seconds. */
				snprintf(label, sizeof(label), _("%s lag %llds"), name, lag);
			free(name);
		}
		draw_row(y, cols, ts, row, label, warn, focused && ts->sel_row == i, d->sel_col,
		         first, ncols, false);
	}
	if (n == 0 && body > 0)
		draw_text(y++, 2, cols - 2, EV_STYLE_NORMAL,
		          _("no backlog and nothing created in the window"));
	y = top + 2 + body;
	char total[96];
	/* TRANSLATORS: the dashboard's totals row. */
	snprintf(total, sizeof(total), "%s", _("TOTAL"));
	if (n > body)
		snprintf(total, sizeof(total), _("TOTAL (%d groups)"), n);
	draw_row(y, cols, ts, &ts->cur->total, total, false, focused && ts->sel_row == n,
	         d->sel_col, first, ncols, true);
	if (suspect && y + 1 < top + height) {
		/* What is off, why, and what lifts the block on writes. */
		char *line = ev_xasprintf(
		        /* TRANSLATORS: what is suspected, whether writes are allowed, and the
		         * columns (their headers) that compare with the clock. */
		        _("clock suspect: %s · %s · STUCK DUE WAIT OLDEST RWAIT DRAIN off"),
		        ts->cur->clock_summary ? ts->cur->clock_summary : ts->cur->clock_suspect,
		        a->clock_ok ? _("writes allowed (clock-ok)")
		                    : _("writes refused (:clock-ok if the zone is right)"));
		draw_text(++y, 2, cols - 2, EV_STYLE_WARNING, line);
		free(line);
	}
	if (ts->note[0] && y + 1 < top + height)
		draw_text(y + 1, 2, cols - 2, EV_STYLE_WARNING, ts->note);
}

static void draw_table(struct app *a, struct dash_view *d, enum ev_table_kind t, int top,
                       int height, int cols, bool focused)
{
	struct table_state *ts = &d->t[t];
	draw_title(a, d, t, top, cols, focused);
	if (height < 2)
		return;
	if (ts->cur == NULL) {
		draw_unread(ts, top, height, cols);
		return;
	}
	int first = first_column(cols, d->sel_col);
	int ncols = fit_columns(cols, first);
	draw_header(d, t, top + 1, cols, first, ncols, group_width(cols, first, ncols));
	draw_body(a, d, t, top, height, cols, focused, first, ncols);
}

void ui_dash_clock_why(struct view *v, struct ev_buf *out)
{
	if (v == NULL || v->ops->ctx != EV_CTX_DASHBOARD)
		return;
	struct dash_view *d = (struct dash_view *)v;
	for (int t = 0; t < EV_TABLE_COUNT; t++)
		if (d->t[t].cur != NULL && d->t[t].cur->clock_suspect != NULL)
			ev_buf_printf(out, "%s%s", out->len ? "; " : "",
			              d->t[t].cur->clock_suspect);
}

static void dash_draw(struct app *a, struct view *v, int top, int height, int cols)
{
	struct dash_view *d = (struct dash_view *)v;
	enum ev_table_kind other = d->focus == EV_TABLE_OUTBOX ? EV_TABLE_MESSAGE : EV_TABLE_OUTBOX;
	if (height >= 14) {
		/* Split: the outbox above, the message table below. */
		int h1 = height / 2;
		draw_table(a, d, EV_TABLE_OUTBOX, top, h1, cols, d->focus == EV_TABLE_OUTBOX);
		draw_table(a, d, EV_TABLE_MESSAGE, top + h1, height - h1, cols,
		           d->focus == EV_TABLE_MESSAGE);
	} else {
		draw_table(a, d, d->focus, top, height, cols, true);
		(void)other;
	}
}

/* --- actions -----------------------------------------------------------------------------------
 */

/* Enter: the list behind the cell under the cursor, for its group (every source's merged on
 * TOTAL when every source is shown; a source's own on its row). */
static void open_list(struct app *a, struct dash_view *d)
{
	struct table_state *ts = &d->t[d->focus];
	int n = ts->cur ? (int)ts->cur->nrows : 0;
	int list = columns[d->sel_col].list;
	if (ts->cur == NULL || list < 0) {
		app_message(a, EV_STYLE_NORMAL, "%s", _("no list behind this column"));
		return;
	}
	if (d->all) {
		/* A source's row: its list; the totals: every source's, merged. */
		if (ts->sel_row >= n) {
			app_push(a, view_list_new_merged(a, d->focus, (enum ev_list_kind)list, NULL,
			                                 ""));
			return;
		}
		int i = app_source_by_name(a, row_at(ts, ts->sel_row)->group);
		if (i < 0)
			return;
		struct view *l = view_list_new(a, d->focus, (enum ev_list_kind)list, NULL, NULL);
		l->site = i + 1;
		app_push(a, l);
		return;
	}
	const char *group = ts->sel_row < n ? row_at(ts, ts->sel_row)->group : NULL;
	const char *key = dim_key(d, d->focus);
	if (ts->sel_row < n && group == NULL) {
		app_message(a, EV_STYLE_NORMAL, _("a NULL %s cannot be filtered on: all rows"),
		            key);
		key = NULL;
	}
	app_push(a, view_list_new(a, d->focus, (enum ev_list_kind)list, group ? key : NULL, group));
}

/* v: the throughput over time of the group under the cursor, or the table's on TOTAL. */
static void open_chart(struct app *a, struct dash_view *d)
{
	struct table_state *ts = &d->t[d->focus];
	bool group = ts->cur != NULL && ts->sel_row < (int)ts->cur->nrows && !d->all;
	app_push(a, app_open(a, &(struct view_request){
	                                .what = OPEN_CHART,
	                                .table = d->focus,
	                                .total = !group,
	                                .group = group ? row_at(ts, ts->sel_row)->group : NULL,
	                        }));
}

static bool dash_action(struct app *a, struct view *v, enum ev_ui_action act)
{
	struct dash_view *d = (struct dash_view *)v;
	struct table_state *ts = &d->t[d->focus];
	int n = ts->cur ? (int)ts->cur->nrows : 0;

	/* The rows' order and the cursor's following (< > I F), the chart (v). */
	if (act == EV_UA_SORT_NEXT || act == EV_UA_SORT_PREV || act == EV_UA_SORT_INVERT ||
	    act == EV_UA_FOLLOW || act == EV_UA_CHART) {
		if (act == EV_UA_CHART)
			open_chart(a, d);
		else
			sort_key(a, d, act);
		a->dirty = true;
		return true;
	}

	switch (act) {
	case EV_UA_UP:
		if (ts->sel_row > 0)
			ts->sel_row--;
		break;
	case EV_UA_DOWN:
		if (ts->sel_row < n)
			ts->sel_row++;
		break;
	case EV_UA_PAGE_UP:
		ts->sel_row = ts->sel_row > 10 ? ts->sel_row - 10 : 0;
		break;
	case EV_UA_PAGE_DOWN:
		ts->sel_row = ts->sel_row + 10 < n ? ts->sel_row + 10 : n;
		break;
	case EV_UA_TOP:
		ts->sel_row = 0;
		break;
	case EV_UA_BOTTOM:
		ts->sel_row = n;
		break;
	case EV_UA_LEFT:
		if (d->sel_col > 0)
			d->sel_col--;
		break;
	case EV_UA_RIGHT:
		if (d->sel_col < NCOLS - 1)
			d->sel_col++;
		break;
	case EV_UA_NEXT_TABLE:
		d->focus = d->focus == EV_TABLE_OUTBOX ? EV_TABLE_MESSAGE : EV_TABLE_OUTBOX;
		break;
	case EV_UA_DIMENSION: {
		if (d->all) {
			/* By source: a source's own dashboard groups it by the dimensions. */
			int i = ts->cur && ts->sel_row < n
			                ? app_source_by_name(a, row_at(ts, ts->sel_row)->group)
			                : -1;
			if (i >= 0)
				a->switch_to = i + 2;
			else
				app_message(a, EV_STYLE_NORMAL, "%s",
				            _("every source at once is by source: d on a source's "
				              "row opens its dashboard (S: the next)"));
			break;
		}
		const struct ev_table_def *ob = ev_model_table(EV_TABLE_OUTBOX);
		d->dim = (d->dim + 1) % (int)ob->ndimensions;
		/* TRANSLATORS: the dashboard's dimension now (a column's name). */
		app_message(a, EV_STYLE_NORMAL, _("by %s"), ob->dimensions[d->dim].key);
		app_cancel(a, v);
		dash_refresh(a, v);
		break;
	}
	case EV_UA_WINDOW_LONGER:
	case EV_UA_WINDOW_SHORTER: {
		int i = 0;
		while (i < NWINDOWS - 1 && windows[i] < d->window_s)
			i++;
		i += act == EV_UA_WINDOW_LONGER ? 1 : -1;
		i = i < 0 ? 0 : i >= NWINDOWS ? NWINDOWS - 1 : i;
		d->window_s = windows[i];
		app_cancel(a, v);
		dash_refresh(a, v);
		break;
	}
	case EV_UA_OPEN:
		open_list(a, d);
		break;
	case EV_UA_REFRESH:
		app_cancel(a, v);
		dash_refresh(a, v);
		return true;
	default:
		return false;
	}
	a->dirty = true;
	return true;
}

static void dash_free(struct view *v)
{
	struct dash_view *d = (struct dash_view *)v;
	for (int t = 0; t < EV_TABLE_COUNT; t++) {
		ev_mirror_free(&d->mirror[t]);
		ev_dash_free(&d->t[t].cur);
		ev_dash_free(&d->t[t].prev);
		for (size_t i = 0; i < d->t[t].nsparks; i++)
			free(d->t[t].sparks[i].group);
		free(d->t[t].sparks);
		free(d->t[t].order);
		ev_chart_set_clear(&d->charts[t]);
	}
	free(d);
}

static const struct view_ops dash_ops = {
        .name = "dashboard",
        .ctx = EV_CTX_DASHBOARD,
        .draw = dash_draw,
        .action = dash_action,
        .result = dash_result,
        .load = dash_refresh,
        .free = dash_free,
        .on_timer = true,
};

struct view *view_dash_new(struct app *a)
{
	struct dash_view *d = ev_xcalloc(1, sizeof(*d));
	d->base.ops = &dash_ops;
	d->focus = EV_TABLE_OUTBOX;
	d->sort = SORT_BACKLOG;
	d->window_s = a->cfg->window_s;
	d->all = a->all_mode;
	ev_mirror_set_cap((size_t)a->cfg->mirror_rows);
	return &d->base;
}
