/* evtop — honest rates (see flow.h): a ring of the last EV_FLOW_SAMPLES refreshes' counts. */
#include <config.h>

#include "core/flow.h"

#include "core/util.h"

#include <stdlib.h>
#include <string.h>

struct sample {
	int64_t t;
	bool created_known;
	struct ev_flow_in total;
	struct ev_flow_in *groups[EV_FLOW_DIMS];
	size_t ngroups[EV_FLOW_DIMS];
};

/* Sums since the flows (re)started: created, and finished by the interval's formula. */
struct sums {
	long long created, finished;
};

struct ev_flow {
	struct sample s[EV_FLOW_SAMPLES];
	size_t n;    /* samples held */
	size_t next; /* where the next one goes */
	unsigned epoch;
	struct sums total_sums;
	struct sums *sums[EV_FLOW_DIMS];
	size_t nsums[EV_FLOW_DIMS];
};

struct ev_flow *ev_flow_new(void)
{
	return ev_xcalloc(1, sizeof(struct ev_flow));
}

static void sample_clear(struct sample *s)
{
	for (int k = 0; k < EV_FLOW_DIMS; k++)
		free(s->groups[k]);
	memset(s, 0, sizeof(*s));
}

void ev_flow_reset(struct ev_flow *f)
{
	for (size_t i = 0; i < EV_FLOW_SAMPLES; i++)
		sample_clear(&f->s[i]);
	f->n = f->next = 0;
	f->epoch++;
	memset(&f->total_sums, 0, sizeof(f->total_sums));
	for (int k = 0; k < EV_FLOW_DIMS; k++) {
		free(f->sums[k]);
		f->sums[k] = NULL;
		f->nsums[k] = 0;
	}
}

void ev_flow_free(struct ev_flow **fp)
{
	if (*fp == NULL)
		return;
	ev_flow_reset(*fp);
	free(*fp);
	*fp = NULL;
}

size_t ev_flow_samples(const struct ev_flow *f)
{
	return f->n;
}

/* The i-th newest sample (0 = the newest). */
static struct sample *newest(const struct ev_flow *f, size_t i)
{
	return (struct sample *)&f->s[(f->next + EV_FLOW_SAMPLES - 1 - i) % EV_FLOW_SAMPLES];
}

/* x's interval followed by y's, as one: the counts of both, the backlog at its end. */
static struct ev_flow_in joined(struct ev_flow_in x, const struct ev_flow_in *y)
{
	x.backlog = y->backlog;
	x.deleted_left += y->deleted_left;
	x.failed_in += y->failed_in;
	x.created += y->created;
	return x;
}

static struct ev_flow_in counts(const struct sample *s, int k, size_t g);

/* One interval's finished count: created, less the backlog's change, less the rows that left
 * deleted. */
static long long done_in(const struct ev_flow_in *x, long long backlog_before)
{
	return x->created - (x->backlog - backlog_before) - x->deleted_left;
}

/* The sums over the interval from the newest sample to this push (before it is stored). */
static void add_sums(struct ev_flow *f, const struct ev_flow_in *total,
                     const struct ev_flow_in *const groups[EV_FLOW_DIMS],
                     const size_t ngroups[EV_FLOW_DIMS])
{
	const struct sample *prev = newest(f, 0);
	f->total_sums.created += total->created;
	f->total_sums.finished += done_in(total, prev->total.backlog);
	for (int k = 0; k < EV_FLOW_DIMS; k++) {
		size_t n = groups == NULL || groups[k] == NULL ? 0 : ngroups[k];
		size_t want = n > prev->ngroups[k] ? n : prev->ngroups[k];
		if (want > f->nsums[k]) {
			f->sums[k] = ev_xrealloc(f->sums[k], want * sizeof(*f->sums[k]));
			memset(f->sums[k] + f->nsums[k], 0,
			       (want - f->nsums[k]) * sizeof(*f->sums[k]));
			f->nsums[k] = want;
		}
		for (size_t g = 0; g < want; g++) {
			static const struct ev_flow_in none;
			const struct ev_flow_in *x = g < n ? &groups[k][g] : &none;
			f->sums[k][g].created += x->created;
			f->sums[k][g].finished += done_in(x, counts(prev, k, g).backlog);
		}
	}
}

void ev_flow_push(struct ev_flow *f, int64_t t, const struct ev_flow_in *total,
                  const struct ev_flow_in *const groups[EV_FLOW_DIMS],
                  const size_t ngroups[EV_FLOW_DIMS], bool created_known)
{
	struct sample *s;
	/* The sums: every interval whose created counts were read. */
	if (f->n >= 1 && created_known && newest(f, 0)->t <= t)
		add_sums(f, total, groups, ngroups);
	/* The newest interval shorter than EV_FLOW_STEP_S: this refresh's extends it, in its
	 * slot, so that the ring spans EV_FLOW_SAMPLES steps at any refresh rate. */
	if (f->n >= 2 && newest(f, 0)->t - newest(f, 1)->t < EV_FLOW_STEP_S &&
	    newest(f, 0)->t <= t) {
		s = newest(f, 0);
		s->t = t;
		s->created_known = s->created_known && created_known;
		s->total = joined(s->total, total);
		for (int k = 0; k < EV_FLOW_DIMS; k++) {
			size_t n = groups == NULL || groups[k] == NULL ? 0 : ngroups[k];
			if (n > s->ngroups[k]) {
				s->groups[k] = ev_xrealloc(s->groups[k], n * sizeof(*s->groups[k]));
				memset(s->groups[k] + s->ngroups[k], 0,
				       (n - s->ngroups[k]) * sizeof(*s->groups[k]));
				s->ngroups[k] = n;
			}
			/* A group this refresh does not name has its backlog no more. */
			for (size_t g = 0; g < s->ngroups[k]; g++) {
				static const struct ev_flow_in none;
				s->groups[k][g] =
				        joined(s->groups[k][g], g < n ? &groups[k][g] : &none);
			}
		}
		return;
	}
	s = &f->s[f->next];
	sample_clear(s);
	s->t = t;
	s->created_known = created_known;
	s->total = *total;
	for (int k = 0; k < EV_FLOW_DIMS; k++) {
		if (groups == NULL || groups[k] == NULL || ngroups[k] == 0)
			continue;
		s->groups[k] = ev_xmalloc(ngroups[k] * sizeof(*s->groups[k]));
		memcpy(s->groups[k], groups[k], ngroups[k] * sizeof(*s->groups[k]));
		s->ngroups[k] = ngroups[k];
	}
	f->next = (f->next + 1) % EV_FLOW_SAMPLES;
	if (f->n < EV_FLOW_SAMPLES)
		f->n++;
}

static struct ev_flow_in counts(const struct sample *s, int k, size_t g)
{
	static const struct ev_flow_in none;
	if (k < 0)
		return s->total;
	if (k >= EV_FLOW_DIMS || g >= s->ngroups[k])
		return none;
	return s->groups[k][g];
}

void ev_flow_rates(const struct ev_flow *f, int k, size_t g, int horizon_s,
                   struct ev_flow_rates *out)
{
	memset(out, 0, sizeof(*out));
	out->epoch = f->epoch;
	const struct sums *sm = k < 0                                 ? &f->total_sums
	                        : k < EV_FLOW_DIMS && g < f->nsums[k] ? &f->sums[k][g]
	                                                              : NULL;
	if (sm != NULL) {
		out->created_sum = sm->created;
		out->finished_sum = sm->finished;
	}
	if (f->n < 2)
		return;
	const struct sample *last = newest(f, 0);
	long long created = 0, finished = 0, failed = 0;
	int64_t from = last->t;
	/* Intervals newest first: (i+1)-th newest -> i-th newest, while the interval ends within
	 * the horizon. An interval without its created counts ends the span, and so does the
	 * clock going back; two refreshes within one server second make an interval of 0 s,
	 * which counts (its backlog change is part of the span's). */
	for (size_t i = 0; i + 1 < f->n; i++) {
		const struct sample *b = newest(f, i), *a = newest(f, i + 1);
		if (last->t - b->t >= horizon_s && i > 0)
			break;
		if (!b->created_known || b->t < a->t)
			break;
		struct ev_flow_in x = counts(b, k, g), y = counts(a, k, g);
		long long done = done_in(&x, y.backlog);
		/* A negative interval is counted, and summed as it is: an interval's error (the
		 * settled created counts against the backlog of the moment) is undone by the
		 * next ones, where clamping each interval would add every interval's error up (an
		 * outage, finishing nothing, read as finishing something). The span's sum is
		 * clamped. */
		if (done < 0)
			out->clamped++;
		created += x.created;
		finished += done;
		failed += x.failed_in;
		from = a->t;
	}
	double span = (double)(last->t - from);
	if (span <= 0)
		return;
	if (finished < 0)
		finished = 0;
	out->known = true;
	out->span_s = span;
	out->created_per_min = (double)created * 60.0 / span;
	out->finished_per_min = (double)finished * 60.0 / span;
	out->failed_per_min = (double)failed * 60.0 / span;
}
