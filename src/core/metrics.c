/* evtop — the dashboard's figures for Prometheus (see metrics.h). */
#include <config.h>

#include "core/metrics.h"

#include "core/text.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* The states of evtop_events: they partition the backlog. */
enum state {
	ST_PENDING,
	ST_PROCESSING, /* not stuck */
	ST_STUCK,
	ST_FAILED_DUE,
	ST_FAILED_WAITING,
	ST_FAILED_NORETRY,
	ST_EXHAUSTED,
	NSTATES,
};
static const char *const state_names[NSTATES] = {
        "pending",        "processing",           "stuck",     "failed_due",
        "failed_waiting", "failed_no_retry_time", "exhausted",
};

/* The dimensions kept: event_type (both tables), topic (the outbox). */
enum { DIM_TYPE, DIM_TOPIC, NDIMS };
static const char *const dim_keys[NDIMS] = {"event_type", "topic"};

/* A group met in a dashboard: its label, and its counters. */
struct group {
	char *name; /* NULL: SQL NULL */
	int label;  /* index into labels, or -1: folded into EV_METRICS_OTHER */
	/* The flows' sums of the current epoch, what earlier epochs left (base), and the finished
	 * counter, never going down. */
	unsigned epoch;
	bool have_sums;
	long long created, finished, base_created, base_finished, finished_ctr;
};

/* The groups of one dimension of one table of one source. */
struct reg {
	struct group *g;
	size_t n, cap;
	size_t *slots; /* open addressing: group index + 1, 0 empty */
	size_t nslots;
	char **labels; /* the named label values, in order of arrival */
	int nlabels;
	long long folded; /* groups folded into EV_METRICS_OTHER */
};

struct ev_metrics {
	int nsources, cap;
	struct reg (*reg)[EV_TABLE_COUNT][NDIMS];
};

struct ev_metrics *ev_metrics_new(int nsources, int label_cap)
{
	struct ev_metrics *m = ev_xcalloc(1, sizeof(*m));
	m->nsources = nsources;
	m->cap = label_cap > 0 ? label_cap : EV_METRICS_LABEL_CAP;
	m->reg = ev_xcalloc((size_t)(nsources > 0 ? nsources : 1), sizeof(*m->reg));
	return m;
}

static void reg_free(struct reg *r)
{
	for (size_t i = 0; i < r->n; i++)
		free(r->g[i].name);
	free(r->g);
	free(r->slots);
	for (int i = 0; i < r->nlabels; i++)
		free(r->labels[i]);
	free(r->labels);
}

void ev_metrics_free(struct ev_metrics **mp)
{
	struct ev_metrics *m = *mp;
	if (m == NULL)
		return;
	for (int i = 0; i < m->nsources; i++)
		for (int t = 0; t < EV_TABLE_COUNT; t++)
			for (int k = 0; k < NDIMS; k++)
				reg_free(&m->reg[i][t][k]);
	free(m->reg);
	free(m);
	*mp = NULL;
}

/* FNV-1a of a group's name; SQL NULL hashes apart from every text. */
static size_t hash(const char *s)
{
	uint64_t h = 1469598103934665603ULL;
	if (s == NULL)
		return 7;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ULL;
	return (size_t)h;
}

static bool same(const char *a, const char *b)
{
	return a == NULL || b == NULL ? a == b : strcmp(a, b) == 0;
}

static struct group *find(const struct reg *r, const char *name)
{
	if (r->nslots == 0)
		return NULL;
	for (size_t s = hash(name) & (r->nslots - 1);; s = (s + 1) & (r->nslots - 1)) {
		if (r->slots[s] == 0)
			return NULL;
		struct group *g = &r->g[r->slots[s] - 1];
		if (same(g->name, name))
			return g;
	}
}

static void rehash(struct reg *r)
{
	size_t ns = r->nslots ? r->nslots * 2 : 64;
	free(r->slots);
	r->slots = ev_xcalloc(ns, sizeof(*r->slots));
	r->nslots = ns;
	for (size_t i = 0; i < r->n; i++) {
		size_t s = hash(r->g[i].name) & (ns - 1);
		while (r->slots[s] != 0)
			s = (s + 1) & (ns - 1);
		r->slots[s] = i + 1;
	}
}

/* The group of name, added (with its label: the next named one while the cap allows, else
 * folded) when new. */
static struct group *intern(struct reg *r, int cap, const char *name)
{
	struct group *g = find(r, name);
	if (g != NULL)
		return g;
	if (r->n == r->cap) {
		r->cap = r->cap ? r->cap * 2 : 16;
		r->g = ev_xrealloc(r->g, r->cap * sizeof(*r->g));
	}
	g = &r->g[r->n++];
	memset(g, 0, sizeof(*g));
	g->name = name ? ev_xstrdup(name) : NULL;
	if (r->nlabels < cap) {
		r->labels = ev_xrealloc(r->labels, (size_t)(r->nlabels + 1) * sizeof(*r->labels));
		r->labels[r->nlabels] = ev_xstrdup(name ? name : EV_METRICS_NULL);
		g->label = r->nlabels++;
	} else {
		g->label = -1;
		r->folded++;
	}
	if (2 * r->n > r->nslots)
		rehash(r);
	else {
		size_t s = hash(name) & (r->nslots - 1);
		while (r->slots[s] != 0)
			s = (s + 1) & (r->nslots - 1);
		r->slots[s] = r->n;
	}
	return g;
}

/* The flows' sums of a row: a new epoch (the mirror read anew) keeps what the counters had
 * reached as their base. */
static void take_sums(struct group *g, const struct ev_flow_rates *fr)
{
	if (g->have_sums && fr->epoch != g->epoch) {
		g->base_created += g->created;
		g->base_finished = g->finished_ctr;
		g->created = g->finished = 0;
	}
	g->have_sums = true;
	g->epoch = fr->epoch;
	if (fr->created_sum > g->created)
		g->created = fr->created_sum;
	g->finished = fr->finished_sum;
	if (g->base_finished + g->finished > g->finished_ctr)
		g->finished_ctr = g->base_finished + g->finished;
}

void ev_metrics_update(struct ev_metrics *m, int i, const struct ev_metrics_source *s)
{
	if (i < 0 || i >= m->nsources || !s->up)
		return;
	for (int t = 0; t < EV_TABLE_COUNT; t++) {
		const struct ev_dash *dd[NDIMS] = {s->t[t].by_type, s->t[t].by_topic};
		for (int k = 0; k < NDIMS; k++) {
			const struct ev_dash *d = dd[k];
			if (d == NULL)
				continue;
			for (size_t r = 0; r < d->nrows; r++) {
				struct group *g =
				        intern(&m->reg[i][t][k], m->cap, d->rows[r].group);
				if (k == DIM_TYPE && d->flow_on)
					take_sums(g, &d->rows[r].flow);
			}
		}
	}
}

/* --- the text format -------------------------------------------------------------------- */

void ev_metrics_label_value(struct ev_buf *out, const char *s)
{
	size_t len = strlen(s);
	for (size_t i = 0; i < len;) {
		uint32_t cp;
		size_t k = ev_utf8_decode(s + i, len - i, &cp);
		if (cp == '\\')
			ev_buf_adds(out, "\\\\");
		else if (cp == '"')
			ev_buf_adds(out, "\\\"");
		else if (cp == '\n')
			ev_buf_adds(out, "\\n");
		else if (cp == EV_TEXT_REPLACEMENT || cp == 0) {
			char u[4];
			ev_buf_add(out, u, ev_utf8_encode(EV_TEXT_REPLACEMENT, u));
		} else
			ev_buf_add(out, s + i, k);
		i += k;
	}
}

static void family(struct ev_buf *b, const char *name, const char *type, const char *help)
{
	ev_buf_printf(b, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* A sample's start: name{source="..."  — the caller adds more labels and ends it. */
static void sample(struct ev_buf *b, const char *name, const char *source)
{
	ev_buf_printf(b, "%s{source=\"", name);
	ev_metrics_label_value(b, source);
	ev_buf_addc(b, '"');
}

static void label(struct ev_buf *b, const char *key, const char *value)
{
	ev_buf_printf(b, ",%s=\"", key);
	ev_metrics_label_value(b, value);
	ev_buf_addc(b, '"');
}

static void value_ll(struct ev_buf *b, long long v)
{
	ev_buf_printf(b, "} %lld\n", v);
}

static void value_d(struct ev_buf *b, double v)
{
	if (isinf(v))
		ev_buf_adds(b, v > 0 ? "} +Inf\n" : "} -Inf\n");
	else
		ev_buf_printf(b, "} %.6g\n", v);
}

/* What a table's dashboard knows, per state and figure. */
struct known {
	bool state[NSTATES];
	bool clock; /* suspect */
	bool stuck; /* stuck is exported: processing is processing less stuck */
};

static struct known known_of(const struct ev_dash *d)
{
	struct known k;
	const struct ev_figure *f = d->total.f;
	memset(&k, 0, sizeof(k));
	k.clock = d->clock_suspect != NULL;
	k.state[ST_PENDING] = !f[EV_DASH_PENDING].unknown;
	k.stuck = !f[EV_DASH_STUCK].unknown && !k.clock && !f[EV_DASH_PROCESSING].unknown;
	k.state[ST_PROCESSING] = !f[EV_DASH_PROCESSING].unknown;
	k.state[ST_STUCK] = k.stuck;
	bool failed = !f[EV_DASH_FAILED].unknown;
	k.state[ST_FAILED_DUE] = failed && !k.clock && !f[EV_DASH_FAILED_DUE].unknown;
	k.state[ST_FAILED_WAITING] = failed && !k.clock && !f[EV_DASH_FAILED_WAITING].unknown;
	k.state[ST_FAILED_NORETRY] = failed && !f[EV_DASH_FAILED_NORETRY].unknown;
	k.state[ST_EXHAUSTED] = failed && !f[EV_DASH_EXHAUSTED].unknown;
	return k;
}

/* One label value's figures: summed over its groups. */
struct acc {
	long long v[NSTATES];
	bool capped[NSTATES];
	long long oldest; /* -1: none */
	long long created, finished;
};

static void acc_row(struct acc *a, const struct ev_dash_row *row, const struct known *k)
{
	const struct ev_figure *f = row->f;
	static const enum ev_dash_figure fig[NSTATES] = {
	        EV_DASH_PENDING,    EV_DASH_PROCESSING,     EV_DASH_STUCK,
	        EV_DASH_FAILED_DUE, EV_DASH_FAILED_WAITING, EV_DASH_FAILED_NORETRY,
	        EV_DASH_EXHAUSTED,
	};
	for (int s = 0; s < NSTATES; s++) {
		long long v = f[fig[s]].value > 0 ? f[fig[s]].value : 0;
		bool capped = f[fig[s]].capped;
		if (s == ST_PROCESSING && k->stuck) {
			long long st = f[EV_DASH_STUCK].value > 0 ? f[EV_DASH_STUCK].value : 0;
			v = v > st ? v - st : 0;
			capped = capped || f[EV_DASH_STUCK].capped;
		}
		a->v[s] += v;
		a->capped[s] = a->capped[s] || capped;
	}
	long long age = f[EV_DASH_OLDEST_PENDING_AGE].value;
	if (!f[EV_DASH_OLDEST_PENDING_AGE].unknown && age >= 0 && age > a->oldest)
		a->oldest = age;
}

/* The accumulators of a dimension's labels (nlabels + 1: the last is EV_METRICS_OTHER). */
static struct acc *accumulate(const struct reg *r, const struct ev_dash *d, const struct known *k)
{
	struct acc *a = ev_xcalloc((size_t)r->nlabels + 1, sizeof(*a));
	for (int l = 0; l <= r->nlabels; l++)
		a[l].oldest = -1;
	for (size_t i = 0; i < d->nrows; i++) {
		const struct group *g = find(r, d->rows[i].group);
		if (g != NULL)
			acc_row(&a[g->label >= 0 ? g->label : r->nlabels], &d->rows[i], k);
	}
	for (size_t i = 0; i < r->n; i++) {
		const struct group *g = &r->g[i];
		struct acc *x = &a[g->label >= 0 ? g->label : r->nlabels];
		x->created += g->base_created + g->created;
		x->finished += g->finished_ctr;
	}
	return a;
}

static const char *label_of(const struct reg *r, int l)
{
	return l < r->nlabels ? r->labels[l] : EV_METRICS_OTHER;
}

/* One source's table, ready to write. */
struct part {
	const struct ev_metrics_source *s;
	enum ev_table_kind t;
	const char *table;
	const struct reg *reg[NDIMS];
	const struct ev_dash *d[NDIMS];
	struct known k[NDIMS];
	struct acc *acc[NDIMS];
};

/* The parts of every source that is up, for every table it watches and read. */
static struct part *parts_of(const struct ev_metrics *m, const struct ev_metrics_source *src, int n,
                             size_t *np)
{
	struct part *p = ev_xcalloc((size_t)(n > 0 ? n : 1) * EV_TABLE_COUNT, sizeof(*p));
	size_t k = 0;
	for (int i = 0; i < n && i < m->nsources; i++) {
		if (!src[i].up)
			continue;
		for (int t = EV_TABLE_COUNT - 1; t >= 0; t--) { /* the outbox first */
			const struct ev_metrics_table *mt = &src[i].t[t];
			if (!mt->watched || mt->by_type == NULL)
				continue;
			struct part *x = &p[k++];
			x->s = &src[i];
			x->t = (enum ev_table_kind)t;
			x->table = ev_model_table(x->t)->key;
			const struct ev_dash *dd[NDIMS] = {mt->by_type, mt->by_topic};
			for (int d = 0; d < NDIMS; d++) {
				if (dd[d] == NULL)
					continue;
				x->reg[d] = &m->reg[i][t][d];
				x->d[d] = dd[d];
				x->k[d] = known_of(dd[d]);
				x->acc[d] = accumulate(x->reg[d], dd[d], &x->k[d]);
			}
		}
	}
	*np = k;
	return p;
}

/* The states of dimension d of every part: evtop_events or evtop_outbox_topic_events. */
static void write_states(struct ev_buf *b, const struct part *p, size_t np, int d)
{
	const char *name = d == DIM_TYPE ? "evtop_events" : "evtop_outbox_topic_events";
	family(b, name, "gauge",
	       d == DIM_TYPE ? "Events of the backlog (statuses 0, 1 and 3) by state; the states "
	                       "partition the backlog."
	                     : "The outbox's backlog by topic and state.");
	for (size_t i = 0; i < np; i++) {
		const struct reg *r = p[i].reg[d];
		if (r == NULL)
			continue;
		for (int l = 0; l <= r->nlabels; l++) {
			if (l == r->nlabels && r->folded == 0)
				continue;
			const struct acc *a = &p[i].acc[d][l];
			for (int s = 0; s < NSTATES; s++) {
				if (!p[i].k[d].state[s])
					continue;
				sample(b, name, p[i].s->name);
				if (d == DIM_TYPE)
					label(b, "table", p[i].table);
				label(b, dim_keys[d], label_of(r, l));
				label(b, "state", state_names[s]);
				if (a->capped[s])
					label(b, "capped", "true");
				value_ll(b, a->v[s]);
			}
		}
	}
}

static void write_ages(struct ev_buf *b, const struct part *p, size_t np)
{
	const char *name = "evtop_oldest_pending_age_seconds";
	family(b, name, "gauge", "Age of the oldest pending event, by create_time.");
	for (size_t i = 0; i < np; i++) {
		const struct reg *r = p[i].reg[DIM_TYPE];
		const struct known *k = &p[i].k[DIM_TYPE];
		if (k->clock || !k->state[ST_PENDING])
			continue;
		for (int l = 0; l <= r->nlabels; l++) {
			const struct acc *a = &p[i].acc[DIM_TYPE][l];
			if (a->oldest < 0 || a->v[ST_PENDING] == 0)
				continue;
			sample(b, name, p[i].s->name);
			label(b, "table", p[i].table);
			label(b, "event_type", label_of(r, l));
			value_ll(b, a->oldest);
		}
	}
}

static void write_counters(struct ev_buf *b, const struct part *p, size_t np, bool finished)
{
	const char *name = finished ? "evtop_events_finished_total" : "evtop_events_created_total";
	family(b, name, "counter",
	       finished ? "Events that left the backlog finished (created less the backlog's "
	                  "change less the rows deleted), counted since evtop started."
	                : "Events created (by create_time, settled), counted since evtop started.");
	for (size_t i = 0; i < np; i++) {
		const struct reg *r = p[i].reg[DIM_TYPE];
		if (!p[i].d[DIM_TYPE]->flow_on)
			continue;
		for (int l = 0; l <= r->nlabels; l++) {
			if (l == r->nlabels && r->folded == 0)
				continue;
			const struct acc *a = &p[i].acc[DIM_TYPE][l];
			sample(b, name, p[i].s->name);
			label(b, "table", p[i].table);
			label(b, "event_type", label_of(r, l));
			value_ll(b, finished ? a->finished : a->created);
		}
	}
}

/* The drain time of a part: false when unknown or clock-dependent and suspect. */
static bool drain_of(const struct part *p, double *out)
{
	const struct ev_dash *d = p->d[DIM_TYPE];
	const struct ev_figure *f = d->total.f;
	if (f[EV_DASH_PENDING].unknown || f[EV_DASH_PROCESSING].unknown ||
	    f[EV_DASH_FAILED].unknown || !d->flow_on || !d->total.flow.known)
		return false;
	long long backlog =
	        f[EV_DASH_PENDING].value + f[EV_DASH_PROCESSING].value + f[EV_DASH_FAILED].value;
	double rate = d->total.flow.finished_per_min / 60.0;
	*out = backlog <= 0 ? 0 : rate <= 0 ? INFINITY : (double)backlog / rate;
	return true;
}

static void write_unknown(struct ev_buf *b, const struct part *p, size_t np,
                          const struct ev_metrics_source *src, int n)
{
	const char *name = "evtop_figure_unknown";
	family(b, name, "gauge",
	       "1 for each figure left out because it is unknown (its query failed, timed out, or "
	       "needs an index the server lacks).");
	for (size_t i = 0; i < np; i++) {
		const struct ev_figure *f = p[i].d[DIM_TYPE]->total.f;
		const char *figs[8];
		int nf = 0;
		if (f[EV_DASH_PENDING].unknown)
			figs[nf++] = "pending";
		if (f[EV_DASH_PROCESSING].unknown)
			figs[nf++] = "processing";
		if (f[EV_DASH_STUCK].unknown)
			figs[nf++] = "stuck";
		if (f[EV_DASH_FAILED].unknown)
			figs[nf++] = "failed";
		if (f[EV_DASH_OLDEST_PENDING_AGE].unknown)
			figs[nf++] = "oldest_pending_age";
		if (!p[i].d[DIM_TYPE]->flow_on) {
			figs[nf++] = "created";
			figs[nf++] = "finished";
		}
		double dr;
		if (!drain_of(&p[i], &dr))
			figs[nf++] = "drain";
		for (int j = 0; j < nf; j++) {
			sample(b, name, p[i].s->name);
			label(b, "table", p[i].table);
			label(b, "figure", figs[j]);
			value_ll(b, 1);
		}
	}
	/* A table watched but not read (missing, or its read failed): all of it. */
	static const char *const all[] = {
	        "pending", "processing", "stuck", "failed", "oldest_pending_age",
	        "created", "finished",   "drain"};
	for (int i = 0; i < n; i++) {
		if (!src[i].up)
			continue;
		for (int t = EV_TABLE_COUNT - 1; t >= 0; t--) {
			if (!src[i].t[t].watched || src[i].t[t].by_type != NULL)
				continue;
			for (size_t j = 0; j < sizeof(all) / sizeof(all[0]); j++) {
				sample(b, name, src[i].name);
				label(b, "table", ev_model_table((enum ev_table_kind)t)->key);
				label(b, "figure", all[j]);
				value_ll(b, 1);
			}
		}
	}
}

void ev_metrics_render(const struct ev_metrics *m, const struct ev_metrics_source *src, int n,
                       double refresh_s, const char *version, struct ev_buf *b)
{
	size_t np;
	struct part *p = parts_of(m, src, n, &np);

	family(b, "evtop_build_info", "gauge", "evtop's version.");
	ev_buf_adds(b, "evtop_build_info{version=\"");
	ev_metrics_label_value(b, version);
	ev_buf_adds(b, "\"} 1\n");
	family(b, "evtop_up", "gauge",
	       "1 when the source's last refresh succeeded; its figures are left out while 0.");
	for (int i = 0; i < n; i++) {
		sample(b, "evtop_up", src[i].name);
		value_ll(b, src[i].up ? 1 : 0);
	}
	write_states(b, p, np, DIM_TYPE);
	write_states(b, p, np, DIM_TOPIC);
	write_ages(b, p, np);
	write_counters(b, p, np, false);
	write_counters(b, p, np, true);

	family(b, "evtop_drain_seconds", "gauge",
	       "The backlog divided by the finishing rate of the last minute (+Inf: nothing "
	       "finishes).");
	for (size_t i = 0; i < np; i++) {
		double dr;
		if (p[i].k[DIM_TYPE].clock || !drain_of(&p[i], &dr))
			continue;
		sample(b, "evtop_drain_seconds", p[i].s->name);
		label(b, "table", p[i].table);
		value_d(b, dr);
	}
	family(b, "evtop_replica_lag_seconds", "gauge",
	       "Seconds the replica the source is read on is behind its primary.");
	for (int i = 0; i < n; i++) {
		if (!src[i].up || !src[i].on_replica || src[i].lag_s < 0)
			continue;
		sample(b, "evtop_replica_lag_seconds", src[i].name);
		value_ll(b, src[i].lag_s);
	}
	family(b, "evtop_query_seconds_total", "counter",
	       "Server time of evtop's own statements on the source.");
	for (int i = 0; i < n; i++) {
		sample(b, "evtop_query_seconds_total", src[i].name);
		value_d(b, src[i].query_s);
	}
	family(b, "evtop_last_refresh_timestamp_seconds", "gauge",
	       "Unix time of the source's last successful refresh.");
	for (int i = 0; i < n; i++) {
		if (src[i].refreshed_at <= 0)
			continue;
		sample(b, "evtop_last_refresh_timestamp_seconds", src[i].name);
		ev_buf_printf(b, "} %.3f\n", src[i].refreshed_at);
	}
	family(b, "evtop_mirror_drift_total", "counter",
	       "Rows the backlog mirror's full checks found off (corrected at once).");
	for (size_t i = 0; i < np; i++) {
		sample(b, "evtop_mirror_drift_total", p[i].s->name);
		label(b, "table", p[i].table);
		value_ll(b, p[i].s->t[p[i].t].drift_total);
	}
	family(b, "evtop_clock_suspect", "gauge",
	       "1 while a time zone mismatch is suspected: the clock-dependent series (stuck, "
	       "failed_due, failed_waiting, the ages, the drain) are left out.");
	for (size_t i = 0; i < np; i++) {
		sample(b, "evtop_clock_suspect", p[i].s->name);
		label(b, "table", p[i].table);
		value_ll(b, p[i].k[DIM_TYPE].clock ? 1 : 0);
	}
	write_unknown(b, p, np, src, n);
	family(b, "evtop_label_values_folded", "gauge",
	       "Values of a label past the cardinality cap, summed into \"" EV_METRICS_OTHER "\".");
	for (size_t i = 0; i < np; i++)
		for (int d = 0; d < NDIMS; d++) {
			if (p[i].reg[d] == NULL)
				continue;
			sample(b, "evtop_label_values_folded", p[i].s->name);
			label(b, "table", p[i].table);
			label(b, "label", dim_keys[d]);
			value_ll(b, p[i].reg[d]->folded);
		}
	family(b, "evtop_scrape_duration_seconds", "gauge",
	       "How long the refresh this scrape serves took, every source together.");
	ev_buf_printf(b, "evtop_scrape_duration_seconds %.6f\n", refresh_s);

	for (size_t i = 0; i < np; i++)
		for (int d = 0; d < NDIMS; d++)
			free(p[i].acc[d]);
	free(p);
}
