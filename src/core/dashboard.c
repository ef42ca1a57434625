/* evtop — the dashboard's queries and their folding (see dashboard.h). Each query reads one
 * status range (or the creation-time window) through an index, capped by a LIMIT inside a
 * derived table, and groups what it read: never a table scan, never an unbounded count. */
#include <config.h>

#include "core/dashboard.h"

#include "core/i18n.h"

#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>
#include <stdlib.h>
#include <string.h>

static const char *const figure_names[EV_DASH_NFIGURES] = {
#define X(id, name, unit, help) [EV_DASH_##id] = name,
        EV_DASH_FIGURE_LIST(X)
#undef X
};

const char *ev_dash_figure_name(enum ev_dash_figure f)
{
	return (unsigned)f < EV_DASH_NFIGURES ? figure_names[f] : "unknown";
}

int ev_dash_figure_parse(const char *name)
{
	for (int i = 0; i < EV_DASH_NFIGURES; i++)
		if (strcmp(figure_names[i], name) == 0)
			return i;
	return -1;
}

static const char *const query_names[EV_DQ_COUNT] = {
        [EV_DQ_PENDING] = "dash.pending",
        [EV_DQ_PROCESSING] = "dash.processing",
        [EV_DQ_FAILED] = "dash.failed",
        [EV_DQ_WINDOW] = "dash.window",
};

/* The figures each query yields, in its select order after the group. */
static const enum ev_dash_figure query_figures[EV_DQ_COUNT][5] = {
        [EV_DQ_PENDING] = {EV_DASH_PENDING, EV_DASH_OLDEST_PENDING_AGE, EV_DASH_LONGEST_RETRY_WAIT,
                           EV_DASH_NFIGURES},
        [EV_DQ_PROCESSING] = {EV_DASH_PROCESSING, EV_DASH_STUCK, EV_DASH_NFIGURES},
        [EV_DQ_FAILED] = {EV_DASH_FAILED, EV_DASH_FAILED_DUE, EV_DASH_FAILED_WAITING,
                          EV_DASH_FAILED_NORETRY, EV_DASH_EXHAUSTED},
        [EV_DQ_WINDOW] = {EV_DASH_CREATED, EV_DASH_SUCCESS, EV_DASH_CANCELLED, EV_DASH_NFIGURES},
};

static size_t nfigures(enum ev_dash_query q)
{
	size_t n = 0;
	while (n < 5 && query_figures[q][n] != EV_DASH_NFIGURES)
		n++;
	return n;
}

static bool is_age(enum ev_dash_figure f)
{
	return f == EV_DASH_OLDEST_PENDING_AGE || f == EV_DASH_LONGEST_RETRY_WAIT;
}

/* The index to force: the recommended (status, dimension) one when the server has it (the
 * count is then index-only), else the model's status index. */
static const char *pick_index(const struct ev_dash_req *req, const char *group_col,
                              enum ev_dash_query which, struct ev_error *err)
{
	const struct ev_table_def *t = ev_model_table(req->table);
	const char *model =
	        t->has_lock ? "publish_status,next_retry_time" : "event_status,next_retry_time";
	const char *cands[3] = {NULL, NULL, NULL};
	char dim[160];

	if (which == EV_DQ_WINDOW) {
		cands[0] = "create_time";
	} else {
		snprintf(dim, sizeof(dim), "%s,%s", t->status_col, group_col ? group_col : "");
		cands[0] = group_col ? dim : model;
		cands[1] = model;
		if (t->has_lock && which == EV_DQ_PROCESSING)
			cands[2] = "publish_status,lock_until";
	}
	if (req->info == NULL)
		return "";
	for (int i = 0; i < 3 && cands[i] != NULL; i++) {
		const char *name = ev_index_find(req->info, cands[i]);
		if (name != NULL)
			return name;
	}
	ev_error_set(err, EV_ERR_SCHEMA, _("n/a — needs an index on (%s)"),
	             which == EV_DQ_WINDOW ? "create_time" : model);
	return NULL;
}

struct ev_query *ev_dash_query(const struct ev_dash_req *req, enum ev_dash_query which,
                               struct ev_error *err)
{
	const struct ev_table_def *t = ev_model_table(req->table);
	const char *group_col = NULL;
	const char *st;
	struct ev_buf b;

	if (t == NULL || (unsigned)which >= EV_DQ_COUNT) {
		ev_error_set(err, EV_ERR_USAGE, _("unknown table or dashboard query"));
		return NULL;
	}
	st = t->status_col;
	if (req->dimension != NULL) {
		const struct ev_dimension *d = ev_model_dimension(t, req->dimension);
		if (d == NULL) {
			ev_error_set(err, EV_ERR_USAGE, _("the %s table has no dimension '%s'"),
			             t->key, req->dimension);
			return NULL;
		}
		group_col = d->column;
	}
	const char *index = pick_index(req, group_col, which, err);
	if (index == NULL)
		return NULL;

	struct ev_query *q = ev_xcalloc(1, sizeof(*q));
	q->name = query_names[which];
	q->keep = true; /* the same text every refresh */
	ev_buf_init(&b);
	ev_buf_printf(&b, "/* evtop:%s */ SELECT grp, COUNT(*)", q->name);
	switch (which) {
	case EV_DQ_PENDING:
		ev_buf_adds(
		        &b,
		        ", TIMESTAMPDIFF(SECOND, MIN(create_time), NOW()), "
		        "TIMESTAMPDIFF(SECOND, MIN(CASE WHEN version > 0 THEN update_time END), "
		        "NOW())");
		break;
	case EV_DQ_PROCESSING:
		ev_buf_adds(&b, t->has_lock
		                        ? ", SUM(lock_until <= NOW())"
		                        : ", SUM(last_handle_time <= NOW() - INTERVAL ? SECOND)");
		if (!t->has_lock)
			ev_query_add_int(q, req->stuck_threshold_s);
		break;
	case EV_DQ_FAILED:
		ev_buf_adds(&b,
		            ", SUM(retry_count < max_retry_count AND next_retry_time <= NOW()), "
		            "SUM(retry_count < max_retry_count AND next_retry_time > NOW()), "
		            "SUM(retry_count < max_retry_count AND next_retry_time IS NULL), "
		            "SUM(retry_count >= max_retry_count)");
		break;
	case EV_DQ_WINDOW:
		ev_buf_printf(&b, ", SUM(%s = 2), SUM(%s = 4)", st, st);
		break;
	case EV_DQ_COUNT:
		break;
	}
	ev_buf_printf(&b, " FROM (SELECT %s AS grp", group_col ? group_col : "NULL");
	switch (which) {
	case EV_DQ_PENDING:
		ev_buf_adds(&b, ", create_time, update_time, version");
		break;
	case EV_DQ_PROCESSING:
		ev_buf_adds(&b, t->has_lock ? ", lock_until" : ", last_handle_time");
		break;
	case EV_DQ_FAILED:
		ev_buf_adds(&b, ", retry_count, max_retry_count, next_retry_time");
		break;
	case EV_DQ_WINDOW:
		ev_buf_printf(&b, ", %s", st);
		break;
	case EV_DQ_COUNT:
		break;
	}
	ev_buf_printf(&b, " FROM `%s`", req->table_name ? req->table_name : t->default_name);
	if (index[0] != '\0')
		ev_buf_printf(&b, " FORCE INDEX (`%s`)", index);
	switch (which) {
	case EV_DQ_PENDING:
		ev_buf_printf(&b, " WHERE %s = 0 AND deleted = 0", st);
		break;
	case EV_DQ_PROCESSING:
		ev_buf_printf(&b, " WHERE %s = 1 AND deleted = 0", st);
		break;
	case EV_DQ_FAILED:
		ev_buf_printf(&b, " WHERE %s = 3 AND deleted = 0", st);
		break;
	case EV_DQ_WINDOW:
		ev_buf_adds(&b, " WHERE create_time >= NOW() - INTERVAL ? SECOND AND deleted = 0");
		ev_query_add_int(q, req->window_s);
		break;
	case EV_DQ_COUNT:
		break;
	}
	ev_buf_adds(&b, " LIMIT ?) AS capped GROUP BY grp LIMIT 10000");
	ev_query_add_int(q, EV_DASH_CAP + 1);
	q->sql = ev_buf_steal(&b);
	q->limit = 10000;
	return q;
}

struct ev_dash *ev_dash_new(const struct ev_dash_req *req)
{
	struct ev_dash *d = ev_xcalloc(1, sizeof(*d));
	d->table = req->table;
	d->dimension = req->dimension;
	d->window_s = req->window_s;
	for (int f = 0; f < EV_DASH_NFIGURES; f++)
		d->total.f[f].value = is_age((enum ev_dash_figure)f) ? -1 : 0;
	return d;
}

static bool same_group(const char *a, const char *b)
{
	if (a == NULL || b == NULL)
		return a == b;
	return strcmp(a, b) == 0;
}

/* FNV-1a; SQL NULL, a group of its own, hashes apart from every string. */
static size_t group_hash(const char *g)
{
	if (g == NULL)
		return 0x9e3779b9u;
	uint64_t h = 14695981039346656037ull;
	for (const unsigned char *p = (const unsigned char *)g; *p; p++) {
		h ^= *p;
		h *= 1099511628211ull;
	}
	return (size_t)(h ^ (h >> 32));
}

/* The slot of group: the one holding it, or the empty one where it would go. Needs
 * nslots > 0. */
static size_t *slot_of(const struct ev_dash *d, const char *group)
{
	size_t mask = d->nslots - 1;
	for (size_t i = group_hash(group) & mask;; i = (i + 1) & mask) {
		size_t *s = &d->slots[i];
		if (*s == 0 || same_group(d->rows[*s - 1].group, group))
			return s;
	}
}

/* (Re)build the hash for the rows as they are now: after growing, and after sorting. */
static void reindex(struct ev_dash *d, size_t nslots)
{
	free(d->slots);
	d->nslots = nslots;
	d->slots = ev_xcalloc(nslots, sizeof(*d->slots));
	for (size_t i = 0; i < d->nrows; i++)
		*slot_of(d, d->rows[i].group) = i + 1;
}

static struct ev_dash_row *row_for(struct ev_dash *d, const char *group)
{
	if (d->nslots > 0) {
		size_t *s = slot_of(d, group);
		if (*s != 0)
			return &d->rows[*s - 1];
	}
	/* Grow by doubling, so that n groups cost O(n) copying and at most twice their room. */
	if (d->nrows == d->rows_cap) {
		d->rows_cap = d->rows_cap ? d->rows_cap * 2 : 16;
		d->rows = ev_xrealloc(d->rows, d->rows_cap * sizeof(*d->rows));
	}
	struct ev_dash_row *r = &d->rows[d->nrows++];
	memset(r, 0, sizeof(*r));
	r->group = group ? ev_xstrdup(group) : NULL;
	/* A group first seen after a query failed (in a later query's result, or carried over)
	 * is as unknown for that query's figures as the groups marked then: not 0. */
	for (int f = 0; f < EV_DASH_NFIGURES; f++) {
		r->f[f].value = is_age((enum ev_dash_figure)f) ? -1 : 0;
		r->f[f].unknown = d->total.f[f].unknown;
	}
	/* At most half full keeps the probes short. */
	if (d->nrows * 2 > d->nslots)
		reindex(d, d->nslots ? d->nslots * 2 : 32);
	else
		*slot_of(d, group) = d->nrows;
	return r;
}

struct ev_dash_row *ev_dash_row(struct ev_dash *d, const char *group)
{
	return row_for(d, group);
}

void ev_dash_add(struct ev_dash *d, enum ev_dash_query which, const struct ev_rowset *rs)
{
	size_t nf = nfigures(which);
	long long read = 0;

	for (size_t r = 0; r < rs->nrows; r++) {
		const struct ev_cell *g = ev_rowset_cell(rs, r, 0);
		struct ev_dash_row *row = row_for(d, d->dimension ? g->s : NULL);
		for (size_t i = 0; i < nf && i + 1 < rs->ncols; i++) {
			const struct ev_cell *c = ev_rowset_cell(rs, r, i + 1);
			enum ev_dash_figure f = query_figures[which][i];
			long long v = c->s ? strtoll(c->s, NULL, 10) : (is_age(f) ? -1 : 0);
			row->f[f].value = v;
			if (i == 0)
				read += v;
		}
	}
	/* The derived table read EV_DASH_CAP + 1 rows: every figure of this query is a lower
	 * bound (ages too: the oldest may lie beyond the cap). */
	if (read > EV_DASH_CAP) {
		for (size_t i = 0; i < d->nrows; i++)
			for (size_t k = 0; k < nf; k++)
				d->rows[i].f[query_figures[which][k]].capped = true;
		for (size_t k = 0; k < nf; k++)
			d->total.f[query_figures[which][k]].capped = true;
	}
}

void ev_dash_unknown(struct ev_dash *d, enum ev_dash_query which, const char *why)
{
	size_t nf = nfigures(which);
	for (size_t k = 0; k < nf; k++) {
		d->total.f[query_figures[which][k]].unknown = true;
		for (size_t i = 0; i < d->nrows; i++)
			d->rows[i].f[query_figures[which][k]].unknown = true;
	}
	char *n = ev_xasprintf("%s%s%s: %s", d->notes ? d->notes : "", d->notes ? "; " : "",
	                       query_names[which] + 5, why);
	free(d->notes);
	d->notes = n;
}

void ev_dash_carry(struct ev_dash *d, const struct ev_dash *earlier)
{
	if (earlier == NULL || d->skipped == 0)
		return;
	for (int w = 0; w < EV_DQ_COUNT; w++) {
		if (!(d->skipped & (1u << w)))
			continue;
		size_t nf = nfigures((enum ev_dash_query)w);
		for (size_t i = 0; i < earlier->nrows; i++) {
			const struct ev_dash_row *from = &earlier->rows[i];
			struct ev_dash_row *to = row_for(d, from->group);
			for (size_t k = 0; k < nf; k++) {
				enum ev_dash_figure f = query_figures[w][k];
				to->f[f] = from->f[f];
			}
		}
		for (size_t k = 0; k < nf; k++) {
			enum ev_dash_figure f = query_figures[w][k];
			d->total.f[f].capped = earlier->total.f[f].capped;
			d->total.f[f].unknown = earlier->total.f[f].unknown;
		}
	}
}

static long long backlog(const struct ev_dash_row *r)
{
	return r->f[EV_DASH_PENDING].value + r->f[EV_DASH_PROCESSING].value +
	       r->f[EV_DASH_FAILED].value;
}

static int row_cmp(const void *a, const void *b)
{
	const struct ev_dash_row *x = a, *y = b;
	long long bx = backlog(x), by = backlog(y);
	if (bx != by)
		return bx > by ? -1 : 1;
	if (x->group == NULL || y->group == NULL)
		return x->group == NULL ? (y->group == NULL ? 0 : 1) : -1;
	return strcmp(x->group, y->group);
}

void ev_dash_finish(struct ev_dash *d)
{
	if (d->nrows > 0)
		qsort(d->rows, d->nrows, sizeof(*d->rows), row_cmp);
	if (d->nslots > 0)
		reindex(d, d->nslots);
	for (int f = 0; f < EV_DASH_NFIGURES; f++) {
		struct ev_figure *t = &d->total.f[f];
		bool unknown = t->unknown, capped = t->capped;
		t->value = is_age((enum ev_dash_figure)f) ? -1 : 0;
		for (size_t i = 0; i < d->nrows; i++) {
			const struct ev_figure *x = &d->rows[i].f[f];
			if (is_age((enum ev_dash_figure)f)) {
				if (x->value > t->value)
					t->value = x->value;
			} else {
				t->value += x->value;
			}
		}
		t->unknown = unknown;
		t->capped = capped;
		/* What was read is at least the cap; say "at least the cap". */
		if (capped && !is_age((enum ev_dash_figure)f) && t->value > EV_DASH_CAP)
			t->value = EV_DASH_CAP;
	}
}

void ev_dash_free(struct ev_dash **dp)
{
	struct ev_dash *d = *dp;
	if (d == NULL)
		return;
	for (size_t i = 0; i < d->nrows; i++)
		free(d->rows[i].group);
	free(d->rows);
	free(d->slots);
	free(d->notes);
	free(d->clock_suspect);
	free(d->clock_summary);
	free(d);
	*dp = NULL;
}

const struct ev_dash_row *ev_dash_find(const struct ev_dash *d, const char *group)
{
	if (group == NULL)
		return &d->total;
	if (d->nslots == 0)
		return NULL;
	size_t s = *slot_of(d, group);
	return s == 0 ? NULL : &d->rows[s - 1];
}

const char *ev_figure_format(const struct ev_figure *f, char *buf, size_t size)
{
	if (f->unknown)
		snprintf(buf, size, "?");
	else if (f->capped)
		snprintf(buf, size, "≥%lld", f->value);
	else
		snprintf(buf, size, "%lld", f->value);
	return buf;
}

const char *ev_format_duration(long long s, char *buf, size_t size)
{
	if (s < 0)
		snprintf(buf, size, "-");
	else if (s < 60)
		snprintf(buf, size, "%llds", s);
	else if (s < 3600)
		snprintf(buf, size, "%lldm%02llds", s / 60, s % 60);
	else if (s < 86400)
		snprintf(buf, size, "%lldh%02lldm", s / 3600, s % 3600 / 60);
	else
		snprintf(buf, size, "%lldd%02lldh", s / 86400, s % 86400 / 3600);
	return buf;
}

const char *ev_format_age(const char *when, const char *now, char *buf, size_t size)
{
	char dur[32];
	long long age = ev_datetime_diff(when, now);
	if (age == LLONG_MIN)
		snprintf(buf, size, "%s", "");
	else if (age >= 0)
		/* TRANSLATORS: an age, "3m12s ago" (the units s, m, h, d stay); a detail cell. */
		snprintf(buf, size, _("%s ago"), ev_format_duration(age, dur, sizeof(dur)));
	else
		/* TRANSLATORS: a time still ahead, "in 3m12s" (the units stay). */
		snprintf(buf, size, _("in %s"), ev_format_duration(-age, dur, sizeof(dur)));
	return buf;
}

static bool parse_dt(const char *s, long long *out)
{
	struct tm tm;
	int n = 0;
	memset(&tm, 0, sizeof(tm));
	if (s == NULL || sscanf(s, "%4d-%2d-%2d %2d:%2d:%2d%n", &tm.tm_year, &tm.tm_mon,
	                        &tm.tm_mday, &tm.tm_hour, &tm.tm_min, &tm.tm_sec, &n) != 6)
		return false;
	tm.tm_year -= 1900;
	tm.tm_mon -= 1;
	/* Both values share the session's zone: read them as UTC, the difference is exact. */
	*out = (long long)timegm(&tm);
	return true;
}

long long ev_datetime_diff(const char *a, const char *b)
{
	long long x, y;
	if (!parse_dt(a, &x) || !parse_dt(b, &y))
		return LLONG_MIN;
	return y - x;
}

void ev_dash_rates(const struct ev_dash_row *row, int window_s, struct ev_dash_rates *r)
{
	const struct ev_figure *f = row->f;
	const struct ev_figure *cr = &f[EV_DASH_CREATED], *ok = &f[EV_DASH_SUCCESS],
	                       *cn = &f[EV_DASH_CANCELLED], *p = &f[EV_DASH_PENDING],
	                       *pr = &f[EV_DASH_PROCESSING], *fa = &f[EV_DASH_FAILED];
	double minutes = window_s > 0 ? window_s / 60.0 : 1;

	memset(r, 0, sizeof(*r));
	if (cr->unknown || ok->unknown || cn->unknown || p->unknown || pr->unknown || fa->unknown)
		return;
	r->known = true;
	r->lower_bound = cr->capped || ok->capped || cn->capped;
	r->created_per_min = (double)cr->value / minutes;
	r->finished_per_min = (double)(ok->value + cn->value) / minutes;
	/* At the rate events are being finished: a net rate (finished - created) is all noise
	 * in a steady system, where it hovers around zero. */
	double backlog = (double)(p->value + pr->value + fa->value);
	double done = r->finished_per_min;
	r->drain_s = backlog == 0 ? 0 : done > 0 ? backlog / done * 60.0 : INFINITY;
}

/* --- several sources ------------------------------------------------------------------------ */

static void fold_figure(struct ev_figure *to, const struct ev_figure *from, enum ev_dash_figure f)
{
	if (is_age(f)) {
		if (from->value > to->value)
			to->value = from->value;
	} else {
		to->value += from->value;
	}
	to->capped = to->capped || from->capped;
	to->unknown = to->unknown || from->unknown;
}

struct ev_dash *ev_dash_merged(struct ev_dash *const *parts, const char *const *names, int n,
                               const struct ev_dash_req *req)
{
	struct ev_dash *d = ev_dash_new(req);
	bool missing = false;

	for (int i = 0; i < n; i++) {
		const struct ev_dash *p = parts[i];
		if (p == NULL) {
			missing = true;
			continue;
		}
		for (int f = 0; f < EV_DASH_NFIGURES; f++) {
			d->total.f[f].capped = d->total.f[f].capped || p->total.f[f].capped;
			d->total.f[f].unknown = d->total.f[f].unknown || p->total.f[f].unknown;
		}
		for (size_t r = 0; r < p->nrows; r++) {
			struct ev_dash_row *to = row_for(d, p->rows[r].group);
			for (int f = 0; f < EV_DASH_NFIGURES; f++)
				fold_figure(&to->f[f], &p->rows[r].f[f], (enum ev_dash_figure)f);
		}
		if (p->notes != NULL) {
			char *notes = ev_xasprintf("%s%s%s%s%s", d->notes ? d->notes : "",
			                           d->notes ? "; " : "", names ? names[i] : "",
			                           names ? ": " : "", p->notes);
			free(d->notes);
			d->notes = notes;
		}
		if (p->clock_suspect != NULL) {
			char *why =
			        ev_xasprintf("%s%s%s%s%s", d->clock_suspect ? d->clock_suspect : "",
			                     d->clock_suspect ? "; " : "", names ? names[i] : "",
			                     names ? ": " : "", p->clock_suspect);
			free(d->clock_suspect);
			d->clock_suspect = why;
			char *sum = ev_xasprintf(
			        "%s%s%s%s%s", d->clock_summary ? d->clock_summary : "",
			        d->clock_summary ? "; " : "", names ? names[i] : "",
			        names ? ": " : "",
			        p->clock_summary ? p->clock_summary : p->clock_suspect);
			free(d->clock_summary);
			d->clock_summary = sum;
		}
		if (p->server_ms > d->server_ms)
			d->server_ms = p->server_ms; /* the sources are read in parallel */
	}
	ev_dash_finish(d);
	/* The totals are the sources' totals summed: a capped count stays the lower bound it
	 * was on its source, whatever the sum. */
	struct ev_dash_row total;
	memset(&total, 0, sizeof(total));
	for (int f = 0; f < EV_DASH_NFIGURES; f++)
		total.f[f].value = is_age((enum ev_dash_figure)f) ? -1 : 0;
	for (int i = 0; i < n; i++)
		if (parts[i] != NULL)
			for (int f = 0; f < EV_DASH_NFIGURES; f++)
				fold_figure(&total.f[f], &parts[i]->total.f[f],
				            (enum ev_dash_figure)f);
	for (int f = 0; f < EV_DASH_NFIGURES; f++)
		d->total.f[f] = total.f[f];
	if (missing) {
		/* A source did not answer: every figure is at least what the others say. */
		for (int f = 0; f < EV_DASH_NFIGURES; f++) {
			d->total.f[f].capped = true;
			for (size_t r = 0; r < d->nrows; r++)
				d->rows[r].f[f].capped = true;
		}
	}
	return d;
}

struct ev_dash *ev_dash_by_source(struct ev_dash *const *parts, const char *const *names, int n,
                                  const struct ev_dash_req *req)
{
	/* The groups are the sources: each source's totals on a row of its own. */
	struct ev_dash *d = ev_dash_new(req);
	for (int i = 0; i < n; i++) {
		struct ev_dash_row *row = row_for(d, names[i]);
		for (int f = 0; f < EV_DASH_NFIGURES; f++) {
			if (parts[i] != NULL) {
				row->f[f] = parts[i]->total.f[f];
			} else {
				row->f[f].value = is_age((enum ev_dash_figure)f) ? -1 : 0;
				row->f[f].unknown = true;
			}
		}
	}
	ev_dash_finish(d);
	struct ev_dash *m = ev_dash_merged(parts, names, n, req);
	d->total = m->total;
	d->notes = m->notes;
	m->notes = NULL;
	d->clock_suspect = m->clock_suspect;
	m->clock_suspect = NULL;
	d->clock_summary = m->clock_summary;
	m->clock_summary = NULL;
	d->server_ms = m->server_ms;
	ev_dash_free(&m);
	return d;
}
