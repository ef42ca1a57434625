/* evtop — a list view: one kind of list on one table, read a page at a time by keyset (the
 * console holds one page, whatever the depth), filtered with '/', refreshed in place. A list
 * of every source at once asks each source for its page in parallel (each on its own list
 * connection) and merges them in the list's order, with a cursor per source; a source that
 * does not answer is named and the others still show. */
#include <config.h>

#include "core/format.h"
#include "core/i18n.h"
#include "core/text.h"
#include "ui/app.h"
#include "ui/term.h"

#include <curses.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A marked row: its source, its id, and its event_no for an export. */
struct mark {
	int site;
	unsigned long long id;
	char event_no[260]; /* the column's 64 characters, up to 4 bytes each */
};

/* How many rows match the list (its kind and filter), as its title says: read with a page
 * when due (count_due), capped at EV_LIST_COUNT_CAP. */
struct count {
	bool known;  /* n is the count */
	bool capped; /* a lower bound: the cap was reached (in a source, for a merged list) */
	bool failed; /* the last count failed (a time limit, say): shown as "?" */
	long long n;
	double ms; /* what reading it took */
};

/* One source's part of a merged page while it is being read. */
struct part {
	struct ev_rowset *rows;
	struct ev_query *query;
	bool asked;
	bool missing;       /* the source has no such table: nothing to read there */
	char error[800];    /* 190 columns of a message: up to 4 bytes each */
	struct count count; /* the source's count, when this load counted */
};

struct list_view {
	struct view base;
	enum ev_table_kind table;
	enum ev_list_kind kind;
	struct ev_filter filter;
	char filter_text[512];
	/* The page on screen, the cursor it started after, and those of the pages before. */
	struct ev_rowset *rows;
	struct ev_query *query; /* the page's query (its sort column, for cursors) */
	struct ev_cursor start;
	struct ev_cursor *back;
	size_t nback;
	bool more;
	struct ev_cursor next;  /* where the next page starts (one source) */
	char search_note[1024]; /* a payload search: what it found and examined */
	bool search_stopped;
	bool reverse;
	char obj_type[80], obj_id[80]; /* a trail */
	int fresh;                     /* rows new on this page since the last refresh */
	int page;
	int sel;
	int scroll;
	int body; /* rows the screen showed at the last draw (0: not drawn yet) */
	int hscroll;
	/* Wide (Ctrl-W): every column the list reads, each as wide as its values on the page
	 * (Left and Right scroll through them). */
	bool wide;
	/* What to do when the page arrives: select its first or last row. */
	int want;
	/* The page on screen before a page turn, put back if the turn fails: the rows stay that
	 * page's, so its number, start and back stack must too. */
	struct {
		bool set;
		int page;
		struct ev_cursor start;
		size_t nback;
		struct ev_cursor popped; /* what a page back took off the stack */
	} undo;
	char error[2048];
	/* Marked ids. */
	struct mark *marks;
	size_t nmarks;
	/* Every source at once (nsrc > 0): where the page on screen starts in each source, where
	 * the next starts, the starts of the pages before (nback × nsrc), the parts coming. */
	int nsrc;
	struct ev_mcursor *mstart, *mnext, *mback, *mundo;
	struct part *parts;
	int awaiting;
	char src_note[1600]; /* the sources that did not answer: 399 columns at most */
	struct count count;
	long long count_next_at; /* app_now() from which a load counts again */
};

enum { WANT_KEEP, WANT_FIRST, WANT_LAST };

struct list_arg {
	struct ev_list_req req;
	struct ev_table_info info;
	char *table_name;
	struct ev_filter filter;
	struct ev_query *query;     /* built on the UI thread; the job runs it */
	bool want_count;            /* count the list's rows too (after the page) */
	const struct ev_mask *mask; /* what the rows read get masked by (NULL: none) */
	/* A part of a merged page: its source, and whether the job reads what the source has
	 * first (both tables, named in names) and builds the query from it. */
	int src;
	bool need_info;
	char *names[EV_TABLE_COUNT];
};

struct list_result {
	struct ev_rowset *rows;
	struct ev_query *query;
	bool got_info; /* info: what the source has, read by the job */
	struct ev_table_info info[EV_TABLE_COUNT];
	bool counted; /* want_count: count holds what it found */
	struct count count;
};

static void free_arg(void *p)
{
	struct list_arg *a = p;
	ev_table_info_clear(&a->info);
	ev_filter_free(&a->filter);
	free(a->table_name);
	ev_query_free(&a->query);
	for (int t = 0; t < EV_TABLE_COUNT; t++)
		free(a->names[t]);
	free(a);
}

static void free_result(void *p)
{
	struct list_result *r = p;
	ev_rowset_free(&r->rows);
	ev_query_free(&r->query);
	for (int t = 0; t < EV_TABLE_COUNT; t++)
		ev_table_info_clear(&r->info[t]);
	free(r);
}

/* The list's count, after its page: a count that fails leaves the page as read. */
static void count_rows(struct ev_conn *c, const struct ev_list_req *req, struct list_result *r)
{
	struct ev_error err = {0};
	struct ev_rowset *rs = NULL;
	long long t0 = ev_mono_ms();
	struct ev_query *q = ev_query_count(req, EV_LIST_COUNT_CAP, &err);
	r->counted = true;
	r->count.failed = true;
	if (q != NULL && ev_conn_run(c, q, &rs, &err) == 0 && rs->nrows == 1) {
		const char *v = ev_rowset_get(rs, 0, "count");
		r->count.n = v != NULL ? atoll(v) : 0;
		r->count.known = true;
		r->count.capped = r->count.n >= EV_LIST_COUNT_CAP;
		r->count.failed = false;
	}
	r->count.ms = (double)(ev_mono_ms() - t0);
	ev_rowset_free(&rs);
	ev_query_free(&q);
}

static int list_job(struct ev_conn *c, struct ev_job *job, struct ev_error *err)
{
	struct list_arg *arg = job->arg;
	struct list_result *r = ev_xcalloc(1, sizeof(*r));
	job->result = r;
	job->free_result = free_result;
	if (arg->need_info) {
		for (int t = 0; t < EV_TABLE_COUNT; t++)
			if (ev_conn_table_info(c, arg->names[t], &r->info[t], err) < 0)
				return -1;
		r->got_info = true;
		ev_table_info_copy(&arg->info, &r->info[arg->req.table]);
		if (!arg->info.exists) {
			ev_error_set(err, EV_ERR_SCHEMA, _("%s: no such table"), arg->table_name);
			return -1;
		}
		arg->query = ev_query_list(&arg->req, err);
		if (arg->query == NULL)
			return -1;
	}
	if (ev_conn_run(c, arg->query, &r->rows, err) < 0)
		return -1;
	ev_mask_rowset(arg->mask, r->rows);
	r->query = arg->query;
	arg->query = NULL;
	if (arg->want_count)
		count_rows(c, &arg->req, r);
	return 0;
}

/* A request for source site's page of the list, starting after `after` (NULL: at its start). */
static struct list_arg *new_arg(struct app *a, const struct list_view *l, int site,
                                const struct ev_cursor *after)
{
	struct list_arg *arg = ev_xcalloc(1, sizeof(*arg));
	const struct site *st = &a->sites[site];
	arg->src = site;
	arg->mask = ui_mask_for(a, site);
	arg->table_name = ev_xstrdup(app_table_name(a, site, l->table));
	if (st->have_info)
		ev_table_info_copy(&arg->info, &st->info[l->table]);
	ev_filter_copy(&arg->filter, &l->filter);
	arg->req = (struct ev_list_req){
	        .info = &arg->info,
	        .table = l->table,
	        .table_name = arg->table_name,
	        .kind = l->kind,
	        .filter = &arg->filter,
	        .limit = a->cfg->page_size,
	        .stuck_threshold_s = a->cfg->stuck_threshold_s,
	        .high_retry_min = a->cfg->high_retry_min,
	        .window_s = a->cfg->window_s,
	        .search_cap = a->cfg->search_cap,
	        .reverse = l->reverse,
	        .object_type = l->obj_type,
	        .object_id = l->obj_id,
	};
	if (after != NULL)
		arg->req.after = *after;
	return arg;
}

/* Whether the next load counts the list's rows too: when its count is not known, else once
 * its last count's cost fits the refresh budget again (a 30 ms count under a 1% budget: every
 * 3 s at most), and never with payload terms (their search says what it examined). */
static bool count_due(const struct app *a, const struct list_view *l)
{
	if (l->filter.njson > 0)
		return false;
	if (!l->count.known && !l->count.failed)
		return true;
	return a->scripted || app_now(a) >= l->count_next_at;
}

/* A count came back: shown, and the next one scheduled by its cost. */
static void count_take(struct app *a, struct list_view *l, const struct count *c)
{
	l->count = *c;
	long long wait = a->refresh_ms;
	if (a->cfg->budget_permille > 0) {
		long long need = (long long)(c->ms * 1000.0 / a->cfg->budget_permille);
		if (need > wait)
			wait = need;
	}
	l->count_next_at = app_now(a) + wait;
}

static void merge(struct app *a, struct list_view *l);

/* Why a source's part failed: msg cut at 190 columns, never inside a character. */
static void part_error(struct part *p, const char *msg)
{
	char *cut = ev_text_fit(msg, 190, false, false);
	snprintf(p->error, sizeof(p->error), "%s", cut);
	free(cut);
}

/* Every source's page from the starts in l->mstart, each on its source's list connection. */
static void mload(struct app *a, struct list_view *l, int want)
{
	app_cancel(a, &l->base);
	l->want = want;
	l->awaiting = 0;
	bool count = count_due(a, l);
	for (int i = 0; i < l->nsrc; i++) {
		struct part *p = &l->parts[i];
		ev_rowset_free(&p->rows);
		ev_query_free(&p->query);
		p->asked = p->missing = false;
		p->count = (struct count){0};
		p->error[0] = '\0';
		if (!(a->sources[i]->tables & (1u << l->table)))
			l->mstart[i].state = EV_MC_DONE; /* not one of its tables (the config's) */
		if (l->mstart[i].state == EV_MC_DONE)
			continue;
		struct site *st = app_site_at(a, i);
		struct list_arg *arg =
		        new_arg(a, l, i, l->mstart[i].state == EV_MC_AT ? &l->mstart[i].c : NULL);
		struct ev_error err = {0};
		if (!st->have_info) {
			/* Not known yet (the dashboard has not heard from it): the job reads it. */
			arg->need_info = true;
			for (int t = 0; t < EV_TABLE_COUNT; t++)
				arg->names[t] =
				        ev_xstrdup(app_table_name(a, i, (enum ev_table_kind)t));
		} else if (!arg->info.exists) {
			p->missing = true;
			snprintf(p->error, sizeof(p->error), "%s", _("no such table"));
		} else if ((arg->query = ev_query_list(&arg->req, &err)) == NULL) {
			part_error(p, err.msg);
		}
		if (p->error[0]) {
			free_arg(arg);
			continue;
		}
		p->asked = true;
		arg->want_count = count;
		l->awaiting++;
		app_submit(a, st->wlist, &l->base, ev_job_new(0, 0, list_job, arg, free_arg));
	}
	if (l->awaiting == 0)
		merge(a, l);
}

/* Ask for a page; false when no query was sent (not ready, or the request is refused). */
static bool load(struct app *a, struct list_view *l, const struct ev_cursor *after, int want)
{
	struct ev_error err = {0};
	int site = app_site_index(a, &l->base);

	if (!app_site(a, &l->base)->have_info) {
		app_message(a, EV_STYLE_WARNING, "%s", _("waiting for the first refresh…"));
		return false;
	}
	struct list_arg *arg = new_arg(a, l, site, after);
	if (!arg->info.exists) {
		snprintf(l->error, sizeof(l->error), _("%s: no such table in this database"),
		         arg->table_name);
		free_arg(arg);
		return false;
	}
	arg->query = ev_query_list(&arg->req, &err);
	if (arg->query == NULL) {
		snprintf(l->error, sizeof(l->error), "%s", err.msg);
		free_arg(arg);
		a->dirty = true;
		return false;
	}
	l->want = want;
	arg->want_count = count_due(a, l);
	/* A newer request supersedes any page still coming. */
	app_cancel(a, &l->base);
	app_submit(a, app_site(a, &l->base)->wlist, &l->base,
	           ev_job_new(0, 0, list_job, arg, free_arg));
	if (after != NULL)
		l->start = *after;
	else
		memset(&l->start, 0, sizeof(l->start));
	return true;
}

static void list_refresh(struct app *a, struct view *v)
{
	struct list_view *l = (struct list_view *)v;
	if (l->nsrc > 0)
		mload(a, l, WANT_KEEP);
	else
		load(a, l, l->start.set ? &l->start : NULL, WANT_KEEP);
}

/* Put back the page a failed (or never sent) page turn left. */
static void undo_turn(struct list_view *l)
{
	if (!l->undo.set)
		return;
	l->undo.set = false;
	l->page = l->undo.page;
	l->start = l->undo.start;
	if (l->nsrc > 0) {
		/* The stack's entries stay in place: only its depth moves back. */
		memcpy(l->mstart, l->mundo, (size_t)l->nsrc * sizeof(*l->mstart));
		l->nback = l->undo.nback;
		return;
	}
	if (l->nback > l->undo.nback)
		l->nback = l->undo.nback;
	else if (l->nback < l->undo.nback)
		l->back[l->nback++] = l->undo.popped;
}

/* Whether row i of a and row k of b are the same event: the same id from the same source. */
static bool same_event(const struct ev_rowset *a, size_t i, const struct ev_rowset *b, size_t k)
{
	const char *x = ev_rowset_get(a, i, "id"), *y = ev_rowset_get(b, k, "id");
	if (x == NULL || y == NULL || strcmp(x, y) != 0)
		return false;
	x = ev_rowset_get(a, i, EV_SOURCE_COL);
	y = ev_rowset_get(b, k, EV_SOURCE_COL);
	return x == y || (x != NULL && y != NULL && strcmp(x, y) == 0);
}

/* Put a page on screen (rows: the page, no more): a refresh keeps the cursor on the same event
 * and counts the rows new on this page (the badge); a page turn starts at its first or last
 * row. */
static void install(struct list_view *l, struct ev_rowset *rows)
{
	struct ev_rowset *old = l->rows;
	int keep = -1;
	l->fresh = 0;
	if (l->want == WANT_KEEP && old != NULL) {
		for (size_t i = 0; i < rows->nrows; i++) {
			bool seen = false;
			for (size_t k = 0; k < old->nrows && !seen; k++)
				seen = same_event(rows, i, old, k);
			if (!seen)
				l->fresh++;
			if (keep < 0 && l->sel < (int)old->nrows &&
			    same_event(rows, i, old, (size_t)l->sel))
				keep = (int)i;
		}
	}
	ev_rowset_free(&l->rows);
	l->rows = rows;
	int n = (int)rows->nrows;
	if (keep >= 0)
		l->sel = keep;
	if (l->want == WANT_FIRST)
		l->sel = 0;
	else if (l->want == WANT_LAST)
		l->sel = n - 1;
	if (l->sel >= n)
		l->sel = n - 1;
	if (l->sel < 0)
		l->sel = 0;
	l->want = WANT_KEEP;
}

/* What a payload search says of the page on screen (nothing for a list without one). */
static void set_search_note(struct list_view *l, const struct ev_list_page *pg, size_t matches)
{
	char *said = ev_list_search_note(pg, matches);
	l->search_note[0] = '\0';
	l->search_stopped = pg->stopped;
	if (said == NULL)
		return;
	/* The terms are in the title, with the other filters. */
	snprintf(l->search_note, sizeof(l->search_note), _("search: %s"), said);
	free(said);
}

/* A merged list's count: the sum of every source's, when each source was read and counted
 * (a page after the first reads only the sources with rows left: the count stays); a source
 * without the table adds nothing, one whose count failed makes it unknown. */
static void merge_count(struct app *a, struct list_view *l)
{
	struct count sum = {.known = true};
	for (int i = 0; i < l->nsrc; i++) {
		const struct part *p = &l->parts[i];
		if (p->missing || !(a->sources[i]->tables & (1u << l->table)))
			continue;
		if (!p->asked || (!p->count.known && !p->count.failed))
			return;
		sum.failed |= p->count.failed;
		sum.capped |= p->count.capped;
		sum.n += p->count.n;
		sum.ms += p->count.ms;
	}
	if (sum.failed)
		sum.known = false;
	count_take(a, l, &sum);
}

/* Every part of a merged page is in: merge them, name the sources that did not answer. */
static void merge(struct app *a, struct list_view *l)
{
	int n = l->nsrc;
	struct ev_query **q = ev_xcalloc((size_t)n, sizeof(*q));
	struct ev_rowset **rs = ev_xcalloc((size_t)n, sizeof(*rs));
	const char **names = ev_xcalloc((size_t)n, sizeof(*names));
	struct ev_cursor *stop = ev_xcalloc((size_t)n, sizeof(*stop));
	struct ev_list_page pg = {0};
	struct ev_buf note;
	ev_buf_init(&note);
	int answered = 0, asked = 0;
	memcpy(l->mnext, l->mstart, (size_t)n * sizeof(*l->mnext));
	for (int i = 0; i < n; i++) {
		struct part *p = &l->parts[i];
		names[i] = app_source_name(a, i);
		if (p->rows != NULL && p->query != NULL) {
			unsigned long long examined = 0;
			pg.search |= p->query->search;
			ev_list_search_fold(p->query, &p->rows, &examined, &stop[i]);
			pg.examined += examined;
			pg.stopped |= stop[i].set;
		}
		q[i] = p->query;
		rs[i] = p->rows;
		asked += p->asked;
		answered += p->rows != NULL;
		if (p->missing)
			l->mnext[i].state = EV_MC_DONE;
		if (p->error[0])
			ev_buf_printf(&note, "%s%s: %s", note.len ? "; " : "", names[i], p->error);
	}
	bool more = false;
	struct ev_rowset *m =
	        ev_list_merge(q, rs, names, n, a->cfg->page_size, stop, l->mnext, &more);
	char *cut = ev_text_fit(note.len ? note.data : "", 399, false, false);
	snprintf(l->src_note, sizeof(l->src_note), "%s", cut);
	free(cut);
	ev_buf_free(&note);
	free(stop);
	free(q);
	free(rs);
	free(names);
	if (m == NULL && answered == 0 && asked > 0) {
		/* No source answered: the page on screen stays, marked. */
		snprintf(l->error, sizeof(l->error), _("no source answers (%s)"), l->src_note);
		app_message(a, EV_STYLE_ERROR, "%s", l->error);
		undo_turn(l);
		return;
	}
	if (m == NULL) {
		static const char *const cols[] = {EV_SOURCE_COL};
		static const enum ev_ctype types[] = {EV_CT_TEXT};
		m = ev_rowset_new(1, cols, types);
	}
	/* A next page when a source that answered has more: one that did not is read again
	 * from where this page starts, by the next refresh. */
	more = false;
	for (int i = 0; i < n; i++)
		more |= l->parts[i].rows != NULL && l->mnext[i].state != EV_MC_DONE;
	l->undo.set = false;
	l->error[0] = '\0';
	l->more = more;
	pg.more = more;
	set_search_note(l, &pg, m->nrows);
	install(l, m);
	merge_count(a, l);
}

static void list_result(struct app *a, struct view *v, struct ev_job *job)
{
	struct list_view *l = (struct list_view *)v;
	struct list_result *r = job->result;
	if (l->nsrc > 0) {
		/* A part of a merged page (none came back when the source could not be reached):
		 * what its source has, learnt on the way, is kept. */
		int src = ((const struct list_arg *)job->arg)->src;
		if (src < 0 || src >= l->nsrc || !l->parts[src].asked)
			return;
		struct part *p = &l->parts[src];
		if (job->rc < 0 || r == NULL || r->rows == NULL) {
			p->missing = r != NULL && r->got_info && !r->info[l->table].exists;
			if (p->missing) {
				snprintf(p->error, sizeof(p->error), "%s", _("no such table"));
			} else if (job->err.code == EV_ERR_CONNECT) {
				char *cut = ev_text_fit(job->err.msg, 150, false, false);
				snprintf(p->error, sizeof(p->error), _("no answer (%s)"), cut);
				free(cut);
			} else {
				part_error(p, job->err.msg);
			}
		} else {
			p->rows = r->rows;
			p->query = r->query;
			r->rows = NULL;
			r->query = NULL;
			p->count = r->counted ? r->count : (struct count){0};
		}
		if (r != NULL && r->got_info) {
			struct site *st = &a->sites[src];
			for (int t = 0; t < EV_TABLE_COUNT; t++) {
				ev_table_info_clear(&st->info[t]);
				st->info[t] = r->info[t];
				memset(&r->info[t], 0, sizeof(r->info[t]));
			}
			st->have_info = true;
		}
		if (--l->awaiting == 0)
			merge(a, l);
		return;
	}
	if (job->rc < 0 || r == NULL || r->rows == NULL) {
		snprintf(l->error, sizeof(l->error), "%s", job->err.msg);
		app_message(a, EV_STYLE_ERROR, "%s", job->err.msg);
		undo_turn(l);
		return;
	}
	l->undo.set = false;
	l->error[0] = '\0';
	ev_query_free(&l->query);
	l->query = r->query;
	r->query = NULL;
	struct ev_list_page pg;
	ev_list_take_page(l->query, &r->rows, &pg);
	l->more = pg.more;
	l->next = pg.next;
	set_search_note(l, &pg, r->rows->nrows);
	install(l, r->rows);
	r->rows = NULL;
	if (r->counted)
		count_take(a, l, &r->count);
}

/* --- drawing ------------------------------------------------------------------------------------
 */

struct col {
	const char *name;
	const char *head; /* marked in the tables below, translated by list_columns */
	int width;        /* 0: the rest */
};

/* The columns of a list: what the operator decides on for that kind, the reason last. */
static const struct col failed_outbox[] = {
        /* TRANSLATORS: the lists' column headers take at most their column's width
         * (a Chinese character takes 2 columns): here 24, event_no. */
        {"event_no", N_("EVENT_NO"), 24},
        /* TRANSLATORS: list column header, at most 16 columns: event_type. */
        {"event_type", N_("TYPE"), 16},
        /* TRANSLATORS: list column header, at most 5 columns: retry_count/max_retry_count. */
        {"retry_count", N_("TRY"), 5},
        /* TRANSLATORS: list column header, at most 19 columns: next_retry_time. */
        {"next_retry_time", N_("NEXT_RETRY"), 19},
        /* TRANSLATORS: list column header, at most 14 columns: aggregate_id. */
        {"aggregate_id", N_("AGGREGATE"), 14},
        /* TRANSLATORS: list column header, the rest of the line: fail_reason. */
        {"fail_reason", N_("FAIL_REASON"), 0},
        /* TRANSLATORS: list column header, at most 16 columns: topic. */
        {"topic", N_("TOPIC"), 16},
        /* TRANSLATORS: list column header, at most 19 columns: create_time. */
        {"create_time", N_("CREATED"), 19},
        {NULL, NULL, 0},
};
static const struct col failed_message[] = {
        {"event_no", N_("EVENT_NO"), 24},
        {"event_type", N_("TYPE"), 16},
        {"retry_count", N_("TRY"), 5},
        {"next_retry_time", N_("NEXT_RETRY"), 19},
        /* TRANSLATORS: list column header, at most 14 columns: biz_id. */
        {"biz_id", N_("BIZ_ID"), 14},
        {"fail_reason", N_("FAIL_REASON"), 0},
        /* TRANSLATORS: list column header, at most 16 columns: event_source (where the
         * event comes from). */
        {"event_source", N_("SOURCE"), 16},
        {"create_time", N_("CREATED"), 19},
        {NULL, NULL, 0},
};
static const struct col busy_outbox[] = {
        {"event_no", N_("EVENT_NO"), 24},
        {"event_type", N_("TYPE"), 16},
        /* TRANSLATORS: list column header, at most 14 columns: locked_by. */
        {"locked_by", N_("LOCKED_BY"), 14},
        /* TRANSLATORS: list column header, at most 19 columns: lock_until. */
        {"lock_until", N_("LOCK_UNTIL"), 19},
        {"retry_count", N_("TRY"), 5},
        {"aggregate_id", N_("AGGREGATE"), 14},
        /* TRANSLATORS: list column header, at most 19 columns: last_publish_time. */
        {"last_publish_time", N_("LAST_PUBLISH"), 19},
        {"create_time", N_("CREATED"), 19},
        {NULL, NULL, 0},
};
static const struct col busy_message[] = {
        {"event_no", N_("EVENT_NO"), 24},
        {"event_type", N_("TYPE"), 16},
        /* TRANSLATORS: list column header, at most 19 columns: last_handle_time. */
        {"last_handle_time", N_("LAST_HANDLE"), 19},
        {"retry_count", N_("TRY"), 5},
        {"biz_id", N_("BIZ_ID"), 14},
        {"event_source", N_("SOURCE"), 16},
        {"create_time", N_("CREATED"), 19},
        {NULL, NULL, 0},
};
static const struct col waiting_outbox[] = {
        {"event_no", N_("EVENT_NO"), 24},
        {"event_type", N_("TYPE"), 16},
        {"create_time", N_("CREATED"), 19},
        {"retry_count", N_("TRY"), 5},
        {"aggregate_id", N_("AGGREGATE"), 14},
        {"topic", N_("TOPIC"), 16},
        /* TRANSLATORS: list column header, the rest of the line: a pending event's
         * fail_reason, the reason of its last failure. */
        {"fail_reason", N_("LAST_FAILURE"), 0},
        {NULL, NULL, 0},
};
static const struct col waiting_message[] = {
        {"event_no", N_("EVENT_NO"), 24},       {"event_type", N_("TYPE"), 16},
        {"create_time", N_("CREATED"), 19},     {"retry_count", N_("TRY"), 5},
        {"biz_id", N_("BIZ_ID"), 14},           {"event_source", N_("SOURCE"), 16},
        {"fail_reason", N_("LAST_FAILURE"), 0}, {NULL, NULL, 0},
};
static const struct col all_outbox[] = {
        {"event_no", N_("EVENT_NO"), 24},
        {"event_type", N_("TYPE"), 16},
        /* TRANSLATORS: list column header, at most 13 columns: the status. */
        {"publish_status", N_("STATUS"), 13},
        {"retry_count", N_("TRY"), 5},
        {"create_time", N_("CREATED"), 19},
        /* TRANSLATORS: list column header, at most 19 columns: update_time. */
        {"update_time", N_("UPDATED"), 19},
        {"fail_reason", N_("FAIL_REASON"), 0},
        {NULL, NULL, 0},
};
static const struct col all_message[] = {
        {"event_no", N_("EVENT_NO"), 24},      {"event_type", N_("TYPE"), 16},
        {"event_status", N_("STATUS"), 13},    {"retry_count", N_("TRY"), 5},
        {"create_time", N_("CREATED"), 19},    {"update_time", N_("UPDATED"), 19},
        {"fail_reason", N_("FAIL_REASON"), 0}, {NULL, NULL, 0},
};

static const struct col *kind_columns(const struct list_view *l)
{
	bool ob = l->table == EV_TABLE_OUTBOX;
	switch (l->kind) {
	case EV_LIST_FAILED:
	case EV_LIST_FAILED_DUE:
	case EV_LIST_FAILED_WAITING:
	case EV_LIST_FAILED_NORETRY:
	case EV_LIST_FAILED_EXHAUSTED:
	case EV_LIST_HIGH_RETRY:
		return ob ? failed_outbox : failed_message;
	case EV_LIST_STUCK:
	case EV_LIST_PROCESSING:
		return ob ? busy_outbox : busy_message;
	case EV_LIST_PENDING:
		return ob ? waiting_outbox : waiting_message;
	default:
		return ob ? all_outbox : all_message;
	}
}

/* The columns of the list, their headers translated: a merged list's start with the source;
 * wide, every column the page holds under its own name (width -1: as wide as its values). */
#define MAX_COLS 48
static const struct col *list_columns(const struct list_view *l, struct col buf[MAX_COLS])
{
	if (l->wide && l->rows != NULL) {
		int n = 0;
		for (size_t k = 0; k < l->rows->ncols && n < MAX_COLS - 1; k++) {
			const char *name = l->rows->cols[k].name;
			buf[n++] = (struct col){
			        name, strcmp(name, EV_SOURCE_COL) == 0 ? "source" : name, -1};
		}
		buf[n] = (struct col){NULL, NULL, 0};
		return buf;
	}
	const struct col *cs = kind_columns(l);
	int n = 0;
	if (l->nsrc > 0)
		/* TRANSLATORS: a merged list's header over the configured source a row comes
		 * from, at most 10 columns. */
		buf[n++] = (struct col){EV_SOURCE_COL, P_("source", "SOURCE"), 10};
	for (int k = 0; cs[k].name != NULL && n < MAX_COLS - 1; k++)
		buf[n++] = (struct col){cs[k].name, _(cs[k].head), cs[k].width};
	buf[n] = (struct col){NULL, NULL, 0};
	return buf;
}

/* The text row i shows in column c: the status with its name, the tries as n/max, else the
 * value (NULL for SQL NULL); buf holds what is built. */
static const char *shown_value(const struct list_view *l, size_t i, const char *name, char *buf,
                               size_t size)
{
	const struct ev_table_def *def = ev_model_table(l->table);
	const char *val = ev_rowset_get(l->rows, i, name);
	if (val == NULL)
		return NULL;
	if (strcmp(name, def->status_col) == 0) {
		int st = atoi(val);
		snprintf(buf, size, "%d %s", st, ev_model_status_label(def, st));
		return buf;
	}
	if (strcmp(name, "retry_count") == 0) {
		snprintf(buf, size, "%s/%s", val, ev_rowset_get(l->rows, i, "max_retry_count"));
		return buf;
	}
	return val;
}

/* The display width the page's values of a column need (its header's at least), at most
 * max. */
static int needed_width(const struct list_view *l, const struct col *c, int max)
{
	int need = ev_text_width(c->head);
	int ci = ev_rowset_col(l->rows, c->name);
	for (size_t i = 0; l->rows != NULL && i < l->rows->nrows && need < max; i++) {
		char buf[64];
		const char *val = shown_value(l, i, c->name, buf, sizeof(buf));
		if (val == NULL) {
			need = need > 1 ? need : 1;
			continue;
		}
		/* Measured as drawn: sanitised (and whole, NUL bytes and all). */
		const struct ev_cell *cell =
		        ci >= 0 ? ev_rowset_cell(l->rows, i, (size_t)ci) : NULL;
		char *safe = cell != NULL && val == cell->s ? ev_text_sanitize(cell->s, cell->len)
		                                            : ev_text_sanitize(val, strlen(val));
		int w = ev_text_width(safe);
		free(safe);
		need = w > need ? w : need;
	}
	return need < max ? need : max;
}

#define WIDE_MAX  64   /* the widest a fixed column grows: an event_no is at most 64 */
#define WIDE_FULL 4096 /* the widest a column of the wide mode is */

/* The widths of the columns from `first` on `avail` screen columns. A fixed column has its
 * width from the table, and when the screen has room the width its header and the page's
 * values need (up to WIDE_MAX): the event_no first, whole whenever it fits on the screen
 * (the columns after it move right, out of view if need be: Right scrolls to them), then
 * the others left to right, as long as the flexible column (the reason) keeps 24. The
 * flexible column takes what is left after the fixed columns that follow it, at least 24. */
static void col_widths(const struct list_view *l, const struct col *cs, int first, int avail,
                       int w[MAX_COLS])
{
	int n = 0, flex = -1, used = 0;
	int need[MAX_COLS];
	if (l->wide) {
		for (int c = first; cs[c].name != NULL && c < MAX_COLS; c++)
			w[c] = needed_width(l, &cs[c], WIDE_FULL);
		return;
	}
	for (int c = first; cs[c].name != NULL && c < MAX_COLS; c++, n++) {
		w[c] = cs[c].width;
		need[c] = cs[c].width ? needed_width(l, &cs[c], WIDE_MAX) : 0;
		if (cs[c].width == 0)
			flex = c;
		else
			used += w[c] + 1;
	}
	for (int c = first; c < first + n; c++) {
		if (cs[c].width == 0 || strcmp(cs[c].name, "event_no") != 0 || need[c] <= w[c])
			continue;
		int x = 0; /* where it starts */
		for (int k = first; k < c; k++)
			x += (cs[k].width ? w[k] : 24) + 1;
		int fits = avail - x;
		int grow = (need[c] < fits ? need[c] : fits) - w[c];
		if (grow > 0) {
			w[c] += grow;
			used += grow;
		}
	}
	int room = avail - used - (flex >= 0 ? 24 : 0);
	for (int c = first; c < first + n && room > 0; c++) {
		if (cs[c].width == 0 || need[c] <= w[c])
			continue;
		int grow = need[c] - w[c] < room ? need[c] - w[c] : room;
		w[c] += grow;
		room -= grow;
	}
	if (flex >= 0) {
		int left = avail, after = 0;
		for (int k = first; k < flex; k++)
			left -= w[k] + 1;
		for (int k = flex + 1; k < first + n; k++)
			after += w[k] + 1;
		int fw = left - after;
		w[flex] = fw < 24 ? (left < 24 ? (left > 0 ? left : 0) : 24) : fw;
	}
}

static int cs_count(const struct col *cs)
{
	int n = 0;
	while (cs[n].name != NULL)
		n++;
	return n;
}

/* An ordering hazard in a trail: this event is still pending, processing or failed while a
 * later event of the same business object already succeeded. */
static bool hazard(const struct list_view *l, int i)
{
	const char *st = ev_model_table(l->table)->status_col;
	const char *mine = ev_rowset_get(l->rows, (size_t)i, st);
	if (mine == NULL ||
	    (strcmp(mine, "0") != 0 && strcmp(mine, "1") != 0 && strcmp(mine, "3") != 0))
		return false;
	for (size_t k = (size_t)i + 1; k < l->rows->nrows; k++) {
		const char *later = ev_rowset_get(l->rows, k, st);
		if (later != NULL && strcmp(later, "2") == 0)
			return true;
	}
	return false;
}

/* The source of row r: the one it came from in a merged list, else the list's. */
static int row_site(struct app *a, const struct list_view *l, size_t r)
{
	if (l->nsrc == 0)
		return app_site_index(a, &l->base);
	int i = app_source_by_name(a, ev_rowset_get(l->rows, r, EV_SOURCE_COL));
	return i >= 0 ? i : app_site_index(a, &l->base);
}

static bool is_marked(const struct list_view *l, int site, unsigned long long id)
{
	for (size_t i = 0; i < l->nmarks; i++)
		if (l->marks[i].id == id && l->marks[i].site == site)
			return true;
	return false;
}

static int status_style(int st)
{
	switch (st) {
	case 0:
		return EV_STYLE_STATUS_PENDING;
	case 1:
		return EV_STYLE_STATUS_PROCESSING;
	case 2:
		return EV_STYLE_STATUS_SUCCESS;
	case 3:
		return EV_STYLE_STATUS_FAILED;
	default:
		return EV_STYLE_STATUS_CANCELLED;
	}
}

/* The list's title: the table, the list, the sources, the filter, the order its index serves,
 * the page, what is new or hazardous (malloc'd). */
static char *list_title(struct app *a, const struct list_view *l)
{
	const struct ev_table_def *def = ev_model_table(l->table);
	struct ev_buf t;
	ev_buf_init(&t);
	ev_buf_printf(&t, "%s (%s) · %s", ev_model_table_label(def),
	              app_table_name(a, app_site_index(a, &l->base), l->table),
	              ev_list_name(l->kind));
	if (l->reverse)
		ev_buf_printf(&t, " %s", _("(reversed)"));
	/* With several sources, whose rows these are. */
	if (l->nsrc > 0) {
		ev_buf_adds(&t, " · ");
		ev_buf_printf(&t, _("every source (%d)"), l->nsrc);
	} else if (a->nsources > 1) {
		char *name = ev_text_fit(app_source_name(a, app_site_index(a, &l->base)), 64, false,
		                         false);
		ev_buf_adds(&t, " · ");
		ev_buf_printf(&t, _("source %s"), name);
		free(name);
	}
	if (l->filter_text[0])
		ev_buf_printf(&t, " · %s", l->filter_text);
	/* How many rows match: a lower bound at the cap, "?" when the count failed. */
	if (l->count.known || l->count.failed)
		ev_buf_adds(&t, " · ");
	if (l->count.known && l->count.capped)
		ev_buf_printf(&t, _("≥%lld rows"), l->count.n);
	else if (l->count.known)
		ev_buf_printf(&t, l->count.n == 1 ? _("%lld row") : _("%lld rows"), l->count.n);
	else if (l->count.failed)
		/* TRANSLATORS: the list's count failed (a time limit, say). */
		ev_buf_adds(&t, _("? rows"));
	/* The order the index serves: its first key and the direction (after the filter: a
	 * narrow screen cuts it first). */
	if (l->query != NULL && l->query->sort_col != NULL) {
		ev_buf_adds(&t, " · ");
		/* TRANSLATORS: the list's order: a column's name and an arrow, "by
		 * next_retry_time ↑". */
		ev_buf_printf(&t, _("by %s %s"), l->query->sort_col,
		              l->query->sort_desc ? "↓" : "↑");
	}
	if (l->wide)
		/* TRANSLATORS: the list shows every column at full width (C-w). */
		ev_buf_printf(&t, " · %s", _("wide"));
	ev_buf_adds(&t, " · ");
	ev_buf_printf(&t, _("page %d"), l->page + 1);
	if (l->more)
		ev_buf_printf(&t, " %s", _("(more: PgDn)"));
	bool any_hazard = false;
	for (int i = 0;
	     l->kind == EV_LIST_TRAIL && l->rows && i < (int)l->rows->nrows && !any_hazard; i++)
		any_hazard = hazard(l, i);
	if (any_hazard)
		ev_buf_printf(&t, " · %s",
		              _("! ordering hazard: an earlier event is not done, a later one is"));
	else if (l->fresh > 0) {
		ev_buf_adds(&t, " · ");
		/* TRANSLATORS: rows new on this page since the last refresh. */
		ev_buf_printf(&t, _("%d new"), l->fresh);
	}
	return ev_buf_steal(&t);
}

static void list_draw(struct app *a, struct view *v, int top, int height, int cols)
{
	cols--; /* the last column stays empty: a cut cell there reads badly in some terminals */
	struct list_view *l = (struct list_view *)v;
	const struct ev_table_def *def = ev_model_table(l->table);
	struct col cbuf[MAX_COLS];
	const struct col *cs = list_columns(l, cbuf);

	char *title = list_title(a, l);
	draw_text_pad(top, 0, cols, EV_STYLE_TITLE, title);
	free(title);
	if (l->error[0]) {
		draw_text(top + 1, 0, cols, EV_STYLE_ERROR, l->error);
		top++;
		height--;
	} else if (l->src_note[0]) {
		/* Sources that did not answer: the rows shown are the others'. */
		char note[2048];
		snprintf(note, sizeof(note), _("⚠ %s — their rows are not on this page"),
		         l->src_note);
		draw_text(top + 1, 0, cols, EV_STYLE_WARNING, note);
		top++;
		height--;
	}
	if (l->search_note[0] && height > 3) {
		draw_text(top + 1, 0, cols, l->search_stopped ? EV_STYLE_WARNING : EV_STYLE_NORMAL,
		          l->search_note);
		top++;
		height--;
	}
	if (l->rows == NULL) {
		if (!l->error[0])
			draw_text(top + 1, 2, cols - 2, EV_STYLE_NORMAL, _("loading…"));
		return;
	}
	/* The header. */
	draw_fill(top + 1, 0, cols, EV_STYLE_HEADER);
	int widths[MAX_COLS];
	col_widths(l, cs, l->hscroll, cols - 2, widths);
	int x = 2;
	for (int c = l->hscroll; cs[c].name != NULL && x < cols; c++) {
		int w = widths[c];
		draw_text_pad(top + 1, x, w < cols - x ? w : cols - x, EV_STYLE_HEADER, cs[c].head);
		x += w + 1;
	}
	int body = height - 2;
	int n = (int)l->rows->nrows;
	l->body = body;
	if (n == 0) {
		draw_text(top + 2, 2, cols - 2, EV_STYLE_NORMAL,
		          l->page > 0 ? _("no more rows (PgUp goes back)") : _("no rows"));
		return;
	}
	if (l->sel < l->scroll)
		l->scroll = l->sel;
	if (l->sel >= l->scroll + body)
		l->scroll = l->sel - body + 1;
	for (int i = l->scroll, y = top + 2; i < n && y < top + 2 + body; i++, y++) {
		bool sel = i == l->sel;
		const char *id = ev_rowset_get(l->rows, (size_t)i, "id");
		bool marked = id != NULL &&
		              is_marked(l, row_site(a, l, (size_t)i), strtoull(id, NULL, 10));
		if (sel)
			draw_fill(y, 0, cols, EV_STYLE_SELECTED);
		bool hz = l->kind == EV_LIST_TRAIL && hazard(l, i);
		int mstyle = marked ? EV_STYLE_MARKED
		             : hz   ? EV_STYLE_WARNING
		             : sel  ? EV_STYLE_SELECTED
		                    : EV_STYLE_NORMAL;
		draw_text(y, 0, 2, mstyle, marked ? "*" : hz ? "!" : " ");
		x = 2;
		for (int c = l->hscroll; cs[c].name != NULL && x < cols; c++) {
			int w = widths[c];
			if (w > cols - x)
				w = cols - x;
			char buf[64];
			const char *val = shown_value(l, (size_t)i, cs[c].name, buf, sizeof(buf));
			int style = sel ? EV_STYLE_SELECTED : EV_STYLE_NORMAL;
			if (c == l->hscroll && !sel && id != NULL && a->highlight_id != 0 &&
			    strtoull(id, NULL, 10) == a->highlight_id)
				style = EV_STYLE_CHANGED;
			if (val == NULL) {
				val = "-";
				if (!sel)
					style = EV_STYLE_NULL_VALUE;
			} else if (strcmp(cs[c].name, def->status_col) == 0 && !sel) {
				style = status_style(atoi(val));
			}
			/* A NUL inside a value would end it early: what follows it is shown too. */
			char *whole = NULL;
			int ci = ev_rowset_col(l->rows, cs[c].name);
			const struct ev_cell *cell =
			        ci >= 0 ? ev_rowset_cell(l->rows, (size_t)i, (size_t)ci) : NULL;
			if (cell != NULL && val == cell->s && strlen(cell->s) != cell->len)
				val = whole = ev_text_sanitize(cell->s, cell->len);
			draw_text_pad(y, x, w, style, val);
			free(whole);
			x += w + 1;
		}
	}
}

/* --- actions -------------------------------------------------------------------------------------
 */

static void remember_undo(struct list_view *l)
{
	l->undo.set = true;
	l->undo.page = l->page;
	l->undo.start = l->start;
	l->undo.nback = l->nback;
	if (l->nsrc > 0)
		memcpy(l->mundo, l->mstart, (size_t)l->nsrc * sizeof(*l->mstart));
}

static void next_page(struct app *a, struct list_view *l)
{
	/* A page turn still coming: the next one starts where that page ends, not yet known. A
	 * payload search that stopped at its cap may have a next page after an empty one. */
	if (l->undo.set || !l->more || l->rows == NULL ||
	    (l->rows->nrows == 0 && l->nsrc == 0 && !l->next.set))
		return;
	remember_undo(l);
	l->page++;
	if (l->nsrc > 0) {
		/* Each source's start of the next page: just after the rows it gave to this one. */
		size_t n = (size_t)l->nsrc;
		l->mback = ev_xrealloc(l->mback, (l->nback + 1) * n * sizeof(*l->mback));
		memcpy(l->mback + l->nback * n, l->mstart, n * sizeof(*l->mstart));
		l->nback++;
		memcpy(l->mstart, l->mnext, n * sizeof(*l->mstart));
		mload(a, l, WANT_FIRST);
		return;
	}
	struct ev_cursor c = l->next;
	l->back = ev_xrealloc(l->back, (l->nback + 1) * sizeof(*l->back));
	l->back[l->nback++] = l->start;
	if (!load(a, l, &c, WANT_FIRST))
		undo_turn(l);
}

static void prev_page(struct app *a, struct list_view *l, int want)
{
	if (l->undo.set || l->nback == 0)
		return;
	remember_undo(l);
	l->page--;
	if (l->nsrc > 0) {
		size_t n = (size_t)l->nsrc;
		l->nback--;
		memcpy(l->mstart, l->mback + l->nback * n, n * sizeof(*l->mstart));
		mload(a, l, want);
		return;
	}
	l->undo.popped = l->back[l->nback - 1];
	struct ev_cursor c = l->back[--l->nback];
	if (!load(a, l, c.set ? &c : NULL, want))
		undo_turn(l);
}

/* Read the list again from its first page. */
static void restart(struct app *a, struct list_view *l)
{
	l->count = (struct count){0}; /* a new filter: counted with its first page */
	free(l->back);
	l->back = NULL;
	l->nback = 0;
	l->page = 0;
	if (l->nsrc > 0) {
		for (int i = 0; i < l->nsrc; i++)
			l->mstart[i].state = EV_MC_START;
		mload(a, l, WANT_FIRST);
		return;
	}
	load(a, l, NULL, WANT_FIRST);
}

static void filter_done(struct app *a, const char *text)
{
	struct list_view *l = (struct list_view *)app_top(a);
	struct ev_filter f = {0};
	struct ev_error err = {0};
	if (ev_filter_parse(&f, text, &err) < 0) {
		app_message(a, EV_STYLE_ERROR, "%s", err.msg);
		ev_filter_free(&f);
		return;
	}
	const char *bad = ev_filter_unsupported(&f, l->table);
	if (bad != NULL) {
		/* TRANSLATORS: the table ("outbox", "message") and a column's name. */
		app_message(a, EV_STYLE_ERROR, _("the %s table has no %s column"),
		            ev_model_table_label(ev_model_table(l->table)), bad);
		ev_filter_free(&f);
		return;
	}
	ev_filter_free(&l->filter);
	l->filter = f;
	snprintf(l->filter_text, sizeof(l->filter_text), "%s", text);
	l->sel = 0;
	restart(a, l);
}

/* Mark (on = 1), unmark (0) or toggle (-1) row r. */
static void toggle_mark(struct app *a, struct list_view *l, size_t r, int on)
{
	const char *id = ev_rowset_get(l->rows, r, "id");
	const char *no = ev_rowset_get(l->rows, r, "event_no");
	if (id == NULL)
		return;
	unsigned long long v64 = strtoull(id, NULL, 10);
	int site = row_site(a, l, r);
	size_t i;
	for (i = 0; i < l->nmarks && (l->marks[i].id != v64 || l->marks[i].site != site); i++)
		;
	bool marked = i < l->nmarks;
	if (marked && on != 1) {
		l->marks[i] = l->marks[--l->nmarks];
		a->marked--;
	} else if (!marked && on != 0) {
		l->marks = ev_xrealloc(l->marks, (l->nmarks + 1) * sizeof(*l->marks));
		l->marks[l->nmarks].id = v64;
		l->marks[l->nmarks].site = site;
		snprintf(l->marks[l->nmarks].event_no, sizeof(l->marks[l->nmarks].event_no), "%s",
		         no ? no : "");
		l->nmarks++;
		a->marked++;
	}
}

static void write_marks(struct app *a, FILE *f, const char *path, void *ctx)
{
	struct list_view *l = (struct list_view *)app_top(a);
	(void)ctx;
	for (size_t i = 0; i < l->nmarks; i++)
		fprintf(f, "%s\n", l->marks[i].event_no);
	if (fclose(f) != 0) {
		app_message(a, EV_STYLE_ERROR, _("cannot write %s"), path);
		return;
	}
	app_message(a, EV_STYLE_NORMAL, _("wrote %zu event_nos to %s"), l->nmarks, path);
}

static void export_marks_done(struct app *a, const char *name)
{
	ui_export(a, name, write_marks, NULL, NULL);
}

/* --- the export of a whole list ------------------------------------------------------------ */

#define EXPORT_MAX 100000 /* rows: past it the file says so, and the message too */
#define EXPORT_TAG (-4)   /* a job of no view: a refresh of the list never cancels it */

struct export_arg {
	struct list_arg *list;
	char *path; /* in full */
	FILE *f;    /* opened by the UI thread (ui_export); the job writes and closes it */
};

struct export_result {
	size_t n;
	bool capped;
};

static void free_export_arg(void *p)
{
	struct export_arg *x = p;
	free_arg(x->list);
	free(x->path);
	if (x->f != NULL)
		fclose(x->f);
	free(x);
}

/* Every event_no of the list, page by page through its keyset query, a line each. */
static int export_job(struct ev_conn *c, struct ev_job *job, struct ev_error *err)
{
	struct export_arg *x = job->arg;
	struct export_result *r = ev_xcalloc(1, sizeof(*r));
	job->result = r;
	job->free_result = free;
	FILE *f = x->f;
	x->f = NULL;
	struct ev_list_req *req = &x->list->req;
	req->limit = EV_PAGE_MAX;
	int rc = 0;
	for (bool more = true; more && rc == 0;) {
		struct ev_rowset *rs = NULL;
		struct ev_query *q = ev_query_list(req, err);
		if (q == NULL || ev_conn_run(c, q, &rs, err) < 0) {
			ev_query_free(&q);
			rc = -1;
			break;
		}
		struct ev_list_page pg;
		ev_list_take_page(q, &rs, &pg);
		size_t take = rs->nrows;
		for (size_t i = 0; i < take; i++) {
			const char *no = ev_rowset_get(rs, i, "event_no");
			fprintf(f, "%s\n", no ? no : "");
		}
		r->n += take;
		more = pg.more;
		if (more)
			req->after = pg.next;
		if (more && r->n >= EXPORT_MAX) {
			r->capped = true;
			more = false;
		}
		ev_rowset_free(&rs);
		ev_query_free(&q);
	}
	if (fclose(f) != 0 && rc == 0)
		rc = ev_error_set(err, EV_ERR_GENERIC, _("cannot write %s: %s"), x->path,
		                  strerror(errno));
	return rc;
}

/* export_job finished: the message line says what was written. */
static void export_done(void *ctx, struct ev_job *job)
{
	struct app *a = ctx;
	const struct export_arg *x = job->arg;
	const struct export_result *r = job->result;
	if (job->rc < 0 || r == NULL)
		app_message(a, EV_STYLE_ERROR, _("export failed: %s"), job->err.msg);
	else if (r->capped)
		app_message(a, EV_STYLE_WARNING,
		            _("wrote %zu event_nos of the list to %s (the first ones: evtop list "
		              "--after pages on)"),
		            r->n, x->path);
	else
		app_message(a, EV_STYLE_NORMAL, _("wrote %zu event_nos of the list to %s"), r->n,
		            x->path);
}

/* The file is open (ui_export): the list's pages are read and written by its worker. */
static void write_list(struct app *a, FILE *f, const char *path, void *ctx)
{
	struct list_view *l = (struct list_view *)app_top(a);
	struct export_arg *x = ctx;
	x->f = f;
	x->path = ev_xstrdup(path);
	app_message(a, EV_STYLE_NORMAL, _("writing the list's event_nos to %s…"), path);
	ev_worker_submit(app_site(a, &l->base)->wlist,
	                 app_job(EXPORT_TAG, export_job, x, free_export_arg, export_done));
}

static void export_list_done(struct app *a, const char *name)
{
	struct list_view *l = (struct list_view *)app_top(a);
	int site = app_site_index(a, &l->base);
	if (!app_site(a, &l->base)->have_info) {
		app_message(a, EV_STYLE_WARNING, "%s", _("waiting for the first refresh…"));
		return;
	}
	struct export_arg *x = ev_xcalloc(1, sizeof(*x));
	x->list = new_arg(a, l, site, NULL);
	if (!x->list->info.exists) {
		app_message(a, EV_STYLE_ERROR, _("%s: no such table in this database"),
		            x->list->table_name);
		free_export_arg(x);
		return;
	}
	ui_export(a, name, write_list, x, free_export_arg);
}

/* What a bulk action on the whole list acts on, for people: "list failed, event_type=X". */
static void list_all_what(const struct list_view *l, char *what, size_t size)
{
	/* TRANSLATORS: what a bulk action acts on: the list's kind (failed, stuck...), then
	 * ", " and its filter when it has one. */
	snprintf(what, size, _("list %s%s%s"), ev_list_name(l->kind), l->filter_text[0] ? ", " : "",
	         l->filter_text);
}

static bool list_allows(struct app *a, struct view *v, enum ev_ui_action act)
{
	struct list_view *l = (struct list_view *)v;
	(void)a;
	if (l->rows == NULL || l->sel >= (int)l->rows->nrows)
		return false;
	const char *st =
	        ev_rowset_get(l->rows, (size_t)l->sel, ev_model_table(l->table)->status_col);
	return st != NULL && ui_action_allowed(act, l->table, atoi(st));
}

/* A writing action (ui/write.c opens it): on the marked rows, or on the row under the cursor. */
static void list_write(struct app *a, struct view *v, enum ev_ui_action act)
{
	struct list_view *l = (struct list_view *)v;
	int n = l->rows ? (int)l->rows->nrows : 0;

	if (n == 0) {
		app_message(a, EV_STYLE_WARNING, _("%s: %s; nothing changed"),
		            ev_ui_action_name(act),
		            l->rows ? _("the list is empty") : _("the list has not been read yet"));
		return;
	}
	if (!list_allows(a, v, act)) {
		const char *st = ev_rowset_get(l->rows, (size_t)l->sel,
		                               ev_model_table(l->table)->status_col);
		/* TRANSLATORS: an action's name, and a state ("retry does not apply to a
		 * pending event"). */
		app_message(a, EV_STYLE_WARNING, _("%s does not apply to a %s event"),
		            ev_ui_action_name(act),
		            ev_model_status_label(ev_model_table(l->table), st ? atoi(st) : -1));
		return;
	}
	if (l->nmarks > 0) {
		/* An action on marked rows acts on them: a bulk action runs on one source.
		 */
		int site = l->marks[0].site;
		for (size_t i = 1; i < l->nmarks; i++)
			if (l->marks[i].site != site) {
				site = -1;
				break;
			}
		if (site < 0) {
			app_message(a, EV_STYLE_WARNING, "%s",
			            _("the marked rows are on several sources: a bulk action runs "
			              "on one (U unmarks; mark one source's rows)"));
			return;
		}
		unsigned long long *ids = ev_xcalloc(l->nmarks, sizeof(*ids));
		for (size_t i = 0; i < l->nmarks; i++)
			ids[i] = l->marks[i].id;
		char what[400];
		if (l->nsrc > 0) {
			char *name = ev_text_fit(app_source_name(a, site), 64, false, false);
			snprintf(what, sizeof(what), _("%zu marked rows of source %s"), l->nmarks,
			         name);
			free(name);
		} else {
			snprintf(what, sizeof(what), _("%zu marked rows"), l->nmarks);
		}
		/* The list's rows as a whole offered instead (a in the confirmation), where one
		 * run can take them: a list of one source. */
		char all_what[800], match[32] = "";
		list_all_what(l, all_what, sizeof(all_what));
		if (l->count.known)
			snprintf(match, sizeof(match), "%s%lld", l->count.capped ? "≥" : "",
			         l->count.n);
		struct ui_bulk_rows rows = {
		        .ids = ids,
		        .n_ids = l->nmarks,
		        .kind = l->kind,
		        .filter = &l->filter,
		        .what = what,
		        .all_what = l->nsrc == 0 ? all_what : NULL,
		        .match = match[0] ? match : NULL,
		};
		ui_bulk_start(a, v, site, act, l->table, &rows);
		free(ids);
		return;
	}
	ui_action_start(a, v, row_site(a, l, (size_t)l->sel), act, l->table, l->rows,
	                (size_t)l->sel);
}

/* b: the breakdown of the list by fail_reason, or by lock owner for processing rows. */
static void open_group(struct app *a, struct list_view *l)
{
	const char *col = NULL;
	if (l->kind == EV_LIST_STUCK || l->kind == EV_LIST_PROCESSING)
		col = l->table == EV_TABLE_OUTBOX ? "locked_by" : NULL;
	else if (l->kind != EV_LIST_TRAIL && l->kind != EV_LIST_TRACE)
		col = "fail_reason";
	if (col == NULL) {
		app_message(a, EV_STYLE_NORMAL, "%s",
		            _("the message table has no lock owner to group by"));
		return;
	}
	struct view *gv = app_open(a, &(struct view_request){
	                                      .what = OPEN_GROUP,
	                                      .table = l->table,
	                                      .kind = l->kind,
	                                      .filter = &l->filter,
	                                      .filter_text = l->filter_text,
	                                      .column = col,
	                              });
	if (gv == NULL)
		return;
	if (l->nsrc > 0)
		gv->site = SITE_ALL; /* every source's breakdown, summed */
	app_push(a, gv);
}

/* The cursor's keys: a row, a page, the ends, the columns; past a page's edge the next or
 * the previous page is read. */
static bool list_move(struct app *a, struct list_view *l, enum ev_ui_action act)
{
	int n = l->rows ? (int)l->rows->nrows : 0;
	int page = LINES - 6 > 1 ? LINES - 6 : 1;
	struct col cbuf[MAX_COLS];

	switch (act) {
	case EV_UA_UP:
		if (l->sel > 0)
			l->sel--;
		else
			prev_page(a, l, WANT_LAST);
		break;
	case EV_UA_DOWN:
		if (l->sel < n - 1)
			l->sel++;
		else
			next_page(a, l);
		break;
	case EV_UA_PAGE_UP:
		if (l->sel > 0)
			l->sel = l->sel > page ? l->sel - page : 0;
		else
			prev_page(a, l, WANT_LAST);
		break;
	case EV_UA_PAGE_DOWN:
		if (l->sel < n - 1)
			l->sel = l->sel + page < n ? l->sel + page : n - 1;
		else
			next_page(a, l);
		break;
	case EV_UA_TOP:
		if (l->page > 0)
			restart(a, l);
		l->sel = 0;
		break;
	case EV_UA_BOTTOM:
		l->sel = n > 0 ? n - 1 : 0;
		if (l->more)
			app_message(a, EV_STYLE_NORMAL, "%s",
			            _("last row of this page; PgDn reads the next"));
		break;
	case EV_UA_LEFT:
		if (l->hscroll > 0)
			l->hscroll--;
		break;
	case EV_UA_RIGHT:
		if (cs_count(list_columns(l, cbuf)) > l->hscroll + 2)
			l->hscroll++;
		break;
	default:
		return false;
	}
	return true;
}

/* The marks: a row (Space), the rows on screen (*), none (U). */
static bool list_mark(struct app *a, struct list_view *l, enum ev_ui_action act)
{
	int n = l->rows ? (int)l->rows->nrows : 0;

	switch (act) {
	case EV_UA_MARK: {
		const char *id = n ? ev_rowset_get(l->rows, (size_t)l->sel, "id") : NULL;
		if (id == NULL)
			break;
		toggle_mark(a, l, (size_t)l->sel, -1);
		if (l->sel < n - 1)
			l->sel++;
		break;
	}
	case EV_UA_MARK_PAGE: {
		/* The rows on the screen, not the page read (it may hold more than fit). */
		int from = l->body > 0 ? l->scroll : 0;
		int to = l->body > 0 && from + l->body < n ? from + l->body : n;
		for (int i = from; i < to; i++)
			toggle_mark(a, l, (size_t)i, 1);
		if (to > from)
			app_message(a, EV_STYLE_NORMAL,
			            _("marked the %d rows on screen (%d .. %d of the %d read); %zu "
			              "marked in this list"),
			            to - from, from + 1, to, n, l->nmarks);
		break;
	}
	case EV_UA_UNMARK_ALL:
		a->marked -= (int)l->nmarks;
		l->nmarks = 0;
		app_message(a, EV_STYLE_NORMAL, "%s", _("no row marked"));
		break;
	default:
		return false;
	}
	return true;
}

/* C: the event_no under the cursor, as stored; J: its row as JSON, as the list shows it
 * (masked where the list masks). */
static void copy_row(struct app *a, const struct list_view *l, enum ev_ui_action act)
{
	if (l->rows == NULL || l->sel >= (int)l->rows->nrows) {
		app_message(a, EV_STYLE_NORMAL, "%s", _("copy: no row under the cursor"));
		return;
	}
	if (act == EV_UA_COPY) {
		int ci = ev_rowset_col(l->rows, "event_no");
		const struct ev_cell *cell =
		        ci >= 0 ? ev_rowset_cell(l->rows, (size_t)l->sel, (size_t)ci) : NULL;
		if (cell == NULL || cell->s == NULL)
			app_message(a, EV_STYLE_NORMAL, "%s", _("copy: this row has no event_no"));
		else
			/* TRANSLATORS: what is copied ("copied the event_no to the clipboard"). */
			app_copy(a, _("the event_no"), cell->s, cell->len);
		return;
	}
	char *json = ev_format_row_json(l->rows, (size_t)l->sel);
	/* TRANSLATORS: what is copied ("copied the row as JSON to the clipboard"). */
	app_copy(a, _("the row as JSON"), json, strlen(json));
	free(json);
}

static bool list_action(struct app *a, struct view *v, enum ev_ui_action act)
{
	struct list_view *l = (struct list_view *)v;
	int n = l->rows ? (int)l->rows->nrows : 0;

	if (ev_ui_action_core(act) >= 0) {
		list_write(a, v, act);
		return true;
	}
	if (list_move(a, l, act) || list_mark(a, l, act)) {
		a->dirty = true;
		return true;
	}
	switch (act) {
	case EV_UA_FILTER:
		/* TRANSLATORS: a prompt: the keys and the ~ operator stay as they are. */
		app_prompt(a, _("filter (key=value … reason~text): "), l->filter_text, filter_done);
		break;
	case EV_UA_SORT_NEXT:
	case EV_UA_SORT_PREV: {
		/* A list is read a page at a time in the order its index serves: no other. */
		char order[320];
		ev_query_order_text(l->query, l->table,
		                    &app_site_at(a, app_site_index(a, v))->info[l->table], order,
		                    sizeof(order));
		app_message(a, EV_STYLE_NORMAL, _("%s: %s (o or I reverses it)"),
		            ev_list_name(l->kind), order);
		break;
	}
	case EV_UA_WIDE:
		l->wide = !l->wide;
		l->hscroll = 0;
		app_message(a, EV_STYLE_NORMAL, "%s",
		            l->wide ? _("wide: every column at full width (Left, Right scroll; "
		                        "C-w: back)")
		                    : _("the list's own columns"));
		break;
	case EV_UA_COPY:
	case EV_UA_COPY_JSON:
		copy_row(a, l, act);
		break;
	case EV_UA_CHART:
		app_push(a, app_open(a, &(struct view_request){.what = OPEN_CHART,
		                                               .table = l->table,
		                                               .total = true}));
		break;
	case EV_UA_SORT_INVERT:
	case EV_UA_REVERSE:
		/* The index serves both directions: start again from the other end. */
		l->reverse = !l->reverse;
		restart(a, l);
		app_message(a, EV_STYLE_NORMAL, "%s",
		            l->reverse ? _("order reversed") : _("order as the list defines it"));
		break;
	case EV_UA_GROUP:
		open_group(a, l);
		break;
	case EV_UA_EXPORT:
		if (l->nmarks > 0)
			app_prompt(a, _("write the marked event_nos to FILE: "), "evtop-marked.txt",
			           export_marks_done);
		else if (l->nsrc > 0)
			app_message(
			        a, EV_STYLE_NORMAL, "%s",
			        _("a whole list is written from one source's list (Enter on its "
			          "row); here, mark rows (Space, *)"));
		else
			app_prompt(a, _("write the event_nos of the whole list to FILE: "),
			           "evtop-list.txt", export_list_done);
		break;
	case EV_UA_OPEN: {
		if (n == 0)
			break;
		const char *no = ev_rowset_get(l->rows, (size_t)l->sel, "event_no");
		const char *id = ev_rowset_get(l->rows, (size_t)l->sel, "id");
		struct view *d = view_detail_new(a, l->table, no, id ? strtoull(id, NULL, 10) : 0);
		d->site = row_site(a, l, (size_t)l->sel) + 1; /* the row's source, its own */
		app_push(a, d);
		break;
	}
	case EV_UA_REFRESH:
		list_refresh(a, v);
		break;
	case EV_UA_NEXT_TABLE:
		app_message(a, EV_STYLE_NORMAL, "%s",
		            _("Tab switches tables on the dashboard (q goes back)"));
		break;

	default:
		return false;
	}
	a->dirty = true;
	return true;
}

static void list_bulk_all(struct app *a, struct view *v, enum ev_ui_action act)
{
	struct list_view *l = (struct list_view *)v;
	char what[800];
	if (l->nsrc > 0) {
		app_message(a, EV_STYLE_WARNING, "%s",
		            _("a bulk action on a whole list runs on one source: open its list "
		              "(Enter on its row of the every-source dashboard)"));
		return;
	}
	list_all_what(l, what, sizeof(what));
	struct ui_bulk_rows rows = {.kind = l->kind, .filter = &l->filter, .what = what};
	ui_bulk_start(a, v, app_site_index(a, v), act, l->table, &rows);
}

static void list_unmark(struct app *a, struct view *v, int site, const unsigned long long *ids,
                        size_t n)
{
	struct list_view *l = (struct list_view *)v;
	for (size_t k = 0; k < n; k++) {
		for (size_t i = 0; i < l->nmarks; i++) {
			if (l->marks[i].id != ids[k] || l->marks[i].site != site)
				continue;
			l->marks[i] = l->marks[--l->nmarks];
			a->marked--;
			break;
		}
	}
	a->dirty = true;
}

static int list_nmarked(struct view *v)
{
	return (int)((struct list_view *)v)->nmarks;
}

static void list_free(struct view *v)
{
	struct list_view *l = (struct list_view *)v;
	ev_rowset_free(&l->rows);
	ev_query_free(&l->query);
	ev_filter_free(&l->filter);
	free(l->back);
	free(l->marks);
	for (int i = 0; i < l->nsrc; i++) {
		ev_rowset_free(&l->parts[i].rows);
		ev_query_free(&l->parts[i].query);
	}
	free(l->parts);
	free(l->mstart);
	free(l->mnext);
	free(l->mback);
	free(l->mundo);
	free(l);
}

static const struct view_ops list_ops = {
        .name = "list",
        .ctx = EV_CTX_LIST,
        .draw = list_draw,
        .action = list_action,
        .result = list_result,
        .load = list_refresh,
        .free = list_free,
        .on_timer = true,
        .allows = list_allows,
        .nmarked = list_nmarked,
        .unmark = list_unmark,
        .bulk_all = list_bulk_all,
};

struct view *view_list_new(struct app *a, enum ev_table_kind t, enum ev_list_kind kind,
                           const char *filter_key, const char *filter_value)
{
	struct list_view *l = ev_xcalloc(1, sizeof(*l));
	l->base.ops = &list_ops;
	l->table = t;
	l->kind = kind;
	if (filter_key != NULL && filter_value != NULL) {
		struct ev_error err = {0};
		if (ev_filter_set(&l->filter, filter_key, filter_value, &err) == 0) {
			bool quote = strpbrk(filter_value, " \"") != NULL;
			snprintf(l->filter_text, sizeof(l->filter_text), "%s=%s%s%s", filter_key,
			         quote ? "\"" : "", filter_value, quote ? "\"" : "");
		}
	}
	(void)a;
	return &l->base;
}

struct view *view_list_new_merged(struct app *a, enum ev_table_kind t, enum ev_list_kind kind,
                                  const struct ev_filter *filter, const char *filter_text)
{
	struct list_view *l = (struct list_view *)view_list_new(a, t, kind, NULL, NULL);
	if (filter != NULL) {
		ev_filter_copy(&l->filter, filter);
		snprintf(l->filter_text, sizeof(l->filter_text), "%s", filter_text);
	}
	size_t n = (size_t)a->nsources;
	l->base.site = SITE_ALL;
	l->nsrc = a->nsources;
	l->parts = ev_xcalloc(n, sizeof(*l->parts));
	l->mstart = ev_xcalloc(n, sizeof(*l->mstart));
	l->mnext = ev_xcalloc(n, sizeof(*l->mnext));
	l->mundo = ev_xcalloc(n, sizeof(*l->mundo));
	for (size_t i = 0; i < n; i++)
		snprintf(l->mstart[i].name, sizeof(l->mstart[i].name), "%s",
		         app_source_name(a, (int)i));
	return &l->base;
}

struct view *view_list_new_filtered(struct app *a, enum ev_table_kind t, enum ev_list_kind kind,
                                    const struct ev_filter *filter, const char *filter_text)
{
	struct list_view *l = (struct list_view *)view_list_new(a, t, kind, NULL, NULL);
	ev_filter_copy(&l->filter, filter);
	snprintf(l->filter_text, sizeof(l->filter_text), "%s", filter_text);
	return &l->base;
}

struct view *view_list_new_trail(struct app *a, enum ev_table_kind t, const char *type,
                                 const char *id)
{
	struct list_view *l = (struct list_view *)view_list_new(a, t, EV_LIST_TRAIL, NULL, NULL);
	snprintf(l->obj_type, sizeof(l->obj_type), "%s", type);
	snprintf(l->obj_id, sizeof(l->obj_id), "%s", id);
	snprintf(l->filter_text, sizeof(l->filter_text), "%s=%s %s=%s", ev_model_table(t)->type_col,
	         type, ev_model_table(t)->object_col, id);
	return &l->base;
}
