/* evtop — honest rates: what the backlog mirror (core/mirror.h) saw flow in and out of the
 * backlog between refreshes, kept for the last few dozen refreshes, and the rates over the
 * last minute by completion time:
 *
 *   finished = created - (backlog now - backlog before) - rows that left by being deleted
 *
 * per interval between two refreshes, where created counts every row created in the interval
 * (settled: shifted back by a settle time, for rows committed late), the backlog is every row
 * of statuses 0, 1 and 3 (soft-deleted ones too, as created counts them), and a row that left
 * the backlog deleted (outright or soft) finished nothing. An interval's negative result
 * (created counted late, a row inserted with an old create_time) is counted and summed as it
 * is (the next intervals undo an interval's error; clamping each would add them up): the
 * span's sum is clamped to 0. Rows created and finished between two refreshes count too: they
 * are in created and never in the backlog.
 *
 * The rates are kept for the totals and per group of up to two dimensions (the ones an index
 * on create_time serves: event_type, and topic on the outbox), groups by the index the mirror
 * gives them. Pure. */
#ifndef EV_CORE_FLOW_H
#define EV_CORE_FLOW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define EV_FLOW_SAMPLES 32
/* Samples are EV_FLOW_STEP_S seconds apart at least: a refresh sooner after the one before
 * extends the newest interval instead of starting one, so the ring spans 62 s or more at any
 * refresh rate (a minute's rates at 0.5 s as at 2 s). */
#define EV_FLOW_STEP_S 2
#define EV_FLOW_DIMS   2

/* One refresh's counts, for the totals or a group. */
struct ev_flow_in {
	long long backlog;      /* rows of statuses 0, 1, 3 now (soft-deleted ones too) */
	long long deleted_left; /* rows that left the backlog deleted (outright or soft) */
	long long failed_in;    /* rows that entered status 3 */
	long long created;      /* rows created in the interval (settled) */
};

/* Rates over a span of refreshes. */
struct ev_flow_rates {
	bool known; /* two refreshes at least, and the created counts read */
	double created_per_min, finished_per_min, failed_per_min;
	long long clamped; /* intervals whose finished count came out negative */
	double span_s;     /* what they are measured over */
	/* Since the flows (re)started (epoch: ev_flow_reset's count): rows created, and rows
	 * finished by the formula above, over every interval with its created counts; the
	 * finished sum is not clamped (an interval's error is undone by later ones). For
	 * counters (evtop metrics), known or not. */
	long long created_sum, finished_sum;
	unsigned epoch;
};

struct ev_flow;

struct ev_flow *ev_flow_new(void);
void ev_flow_free(struct ev_flow **f);
/* Forget every sample (the mirror was read anew: its backlog is not comparable). */
void ev_flow_reset(struct ev_flow *f);

/* A refresh at server time t (seconds, any epoch): the totals, and per dimension k (0, 1) the
 * groups' counts groups[k][0..ngroups[k]) by group index (NULL/0: not kept). created_known
 * false: the created counts could not be read (or this is the first refresh), and the interval
 * up to this sample yields no rates. */
void ev_flow_push(struct ev_flow *f, int64_t t, const struct ev_flow_in *total,
                  const struct ev_flow_in *const groups[EV_FLOW_DIMS],
                  const size_t ngroups[EV_FLOW_DIMS], bool created_known);

/* The rates over the samples of the last horizon_s seconds before the newest (the intervals
 * that end within it), for the totals (k < 0) or group g of dimension k. */
void ev_flow_rates(const struct ev_flow *f, int k, size_t g, int horizon_s,
                   struct ev_flow_rates *out);

/* Samples held (for the tests). */
size_t ev_flow_samples(const struct ev_flow *f);

#endif
