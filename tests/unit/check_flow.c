/* core/flow: honest rates from what the backlog mirror saw between refreshes — finished =
 * created - delta backlog - deleted, clamped at 0 and counted; per group; over the last
 * minute; an interval without its created counts ends the span; the ring of samples. */
#include <config.h>

#include "core/flow.h"

#include <check.h>
#include <math.h>
#include <stdlib.h>

static void push(struct ev_flow *f, int64_t t, long long backlog, long long created,
                 long long deleted, long long failed_in)
{
	struct ev_flow_in in = {backlog, deleted, failed_in, created};
	ev_flow_push(f, t, &in, NULL, NULL, true);
}

#define NEAR(a, b) (fabs((a) - (b)) < 1e-9)

START_TEST(steady_state_finishes_what_is_created)
{
	struct ev_flow *f = ev_flow_new();
	struct ev_flow_rates r;
	push(f, 1000, 100, 0, 0, 0);
	ev_flow_rates(f, -1, 0, 60, &r);
	ck_assert(!r.known); /* one refresh: no interval yet */
	for (int i = 1; i <= 10; i++)
		push(f, 1000 + 2 * i, 100, 10, 0, 1);
	ev_flow_rates(f, -1, 0, 60, &r);
	ck_assert(r.known);
	ck_assert(NEAR(r.span_s, 20));
	ck_assert(NEAR(r.created_per_min, 300));
	ck_assert(NEAR(r.finished_per_min, 300));
	ck_assert(NEAR(r.failed_per_min, 30));
	ck_assert_int_eq(r.clamped, 0);
	ev_flow_free(&f);
	ck_assert_ptr_null(f);
}
END_TEST

START_TEST(an_outage_finishes_nothing)
{
	/* Created at 5/s, nothing finishes: the backlog grows by what is created. A rate by
	 * creation time would still read 300/min from the events created before the outage. */
	struct ev_flow *f = ev_flow_new();
	push(f, 0, 1000, 0, 0, 0);
	for (int i = 1; i <= 30; i++)
		push(f, 2 * i, 1000 + 10 * i, 10, 0, 10);
	struct ev_flow_rates r;
	ev_flow_rates(f, -1, 0, 60, &r);
	ck_assert(r.known);
	ck_assert(NEAR(r.finished_per_min, 0));
	ck_assert(NEAR(r.created_per_min, 300));
	/* Recovery: created 10, the backlog shrinks by 40 an interval: 50 finished each. */
	for (int i = 31; i <= 60; i++)
		push(f, 2 * i, 1300 - 40 * (i - 30), 10, 0, 0);
	ev_flow_rates(f, -1, 0, 60, &r);
	ck_assert(NEAR(r.finished_per_min, 50 * 30.0));
	ev_flow_free(&f);
}
END_TEST

START_TEST(deleted_rows_finished_nothing)
{
	/* The backlog shrinks by 5 rows deleted outright (archived): 0 finished, not 5. */
	struct ev_flow *f = ev_flow_new();
	push(f, 0, 100, 0, 0, 0);
	push(f, 2, 95, 0, 5, 0);
	struct ev_flow_rates r;
	ev_flow_rates(f, -1, 0, 60, &r);
	ck_assert(r.known);
	ck_assert(NEAR(r.finished_per_min, 0));
	ck_assert_int_eq(r.clamped, 0);
	/* Counted late (the backlog grew by rows not yet in created): clamped, and said so. */
	push(f, 4, 100, 0, 0, 0);
	ev_flow_rates(f, -1, 0, 60, &r);
	ck_assert(NEAR(r.finished_per_min, 0));
	ck_assert_int_eq(r.clamped, 1);
	ev_flow_free(&f);
}
END_TEST

START_TEST(groups_have_rates_of_their_own)
{
	struct ev_flow *f = ev_flow_new();
	struct ev_flow_in g0[3] = {{10, 0, 0, 0}, {20, 0, 0, 0}, {0, 0, 0, 0}};
	struct ev_flow_in g1[3] = {{10, 0, 0, 4}, {25, 0, 2, 5}, {0, 0, 0, 3}};
	struct ev_flow_in t0 = {30, 0, 0, 0}, t1 = {35, 0, 2, 12};
	const struct ev_flow_in *a[EV_FLOW_DIMS] = {g0, NULL}, *b[EV_FLOW_DIMS] = {g1, NULL};
	size_t n[EV_FLOW_DIMS] = {3, 0}, n1[EV_FLOW_DIMS] = {3, 0};
	ev_flow_push(f, 0, &t0, a, n, true);
	ev_flow_push(f, 6, &t1, b, n1, true);
	struct ev_flow_rates r;
	ev_flow_rates(f, 0, 0, 60, &r); /* 4 created, backlog same: 4 finished in 6 s */
	ck_assert(NEAR(r.finished_per_min, 40));
	ev_flow_rates(f, 0, 1, 60, &r); /* 5 created, backlog +5: none */
	ck_assert(NEAR(r.finished_per_min, 0));
	ck_assert(NEAR(r.failed_per_min, 20));
	ev_flow_rates(f, 0, 2, 60, &r); /* 3 created and finished between the refreshes */
	ck_assert(NEAR(r.finished_per_min, 30));
	ev_flow_rates(f, 0, 7, 60, &r); /* a group no sample has: zeros, known */
	ck_assert(r.known && NEAR(r.finished_per_min, 0));
	ev_flow_rates(f, -1, 0, 60, &r); /* totals: 12 - 5 = 7 */
	ck_assert(NEAR(r.finished_per_min, 70));
	ev_flow_free(&f);
}
END_TEST

START_TEST(the_span_is_the_last_minute)
{
	struct ev_flow *f = ev_flow_new();
	push(f, 0, 0, 0, 0, 0);
	/* 20 intervals of 2 s finishing 100 each, then 20 finishing none (created 0). */
	for (int i = 1; i <= 20; i++)
		push(f, 2 * i, 0, 100, 0, 0);
	for (int i = 21; i <= 50; i++)
		push(f, 2 * i, 0, 0, 0, 0);
	struct ev_flow_rates r;
	ev_flow_rates(f, -1, 0, 60, &r);
	ck_assert(r.known);
	ck_assert(NEAR(r.finished_per_min, 0));
	ck_assert_double_le(r.span_s, 62);
	ck_assert_double_ge(r.span_s, 60);
	ck_assert_uint_eq(ev_flow_samples(f), EV_FLOW_SAMPLES); /* the ring holds 32 */
	/* An interval whose created counts failed ends the span there. */
	struct ev_flow_in in = {0, 0, 0, 0};
	ev_flow_push(f, 102, &in, NULL, NULL, false);
	ev_flow_rates(f, -1, 0, 60, &r);
	ck_assert(!r.known);
	push(f, 104, 0, 8, 0, 0);
	ev_flow_rates(f, -1, 0, 60, &r);
	ck_assert(r.known);
	ck_assert(NEAR(r.span_s, 2));
	ck_assert(NEAR(r.finished_per_min, 240));
	ev_flow_reset(f);
	ck_assert_uint_eq(ev_flow_samples(f), 0);
	ev_flow_rates(f, -1, 0, 60, &r);
	ck_assert(!r.known);
	ev_flow_free(&f);
}
END_TEST

START_TEST(the_sums_count_every_interval_since_the_start)
{
	/* 40 refreshes (a ring of 32 samples): the sums cover all 39 intervals, a fast refresh
	 * and an interval without its created counts included, and groups keep theirs. */
	struct ev_flow *f = ev_flow_new();
	struct ev_flow_in g0[2] = {{10, 0, 0, 0}, {5, 0, 0, 0}};
	const struct ev_flow_in *gv[EV_FLOW_DIMS] = {g0, NULL};
	size_t ng[EV_FLOW_DIMS] = {2, 0};
	struct ev_flow_in tot = {15, 0, 0, 0};
	ev_flow_push(f, 0, &tot, gv, ng, false);
	for (int i = 1; i <= 40; i++) {
		/* Group 0: 3 created, backlog +1 (2 finished); group 1: 1 created, 1 deleted. */
		g0[0] = (struct ev_flow_in){10 + i, 0, 0, 3};
		g0[1] = (struct ev_flow_in){5, 1, 0, 1};
		tot = (struct ev_flow_in){15 + i, 1, 0, 4};
		ev_flow_push(f, 2 * i + (i == 20 ? -1 : 0), &tot, gv, ng, i != 30);
	}
	struct ev_flow_rates r, r0, r1;
	ev_flow_rates(f, -1, 0, 60, &r);
	ev_flow_rates(f, 0, 0, 60, &r0);
	ev_flow_rates(f, 0, 1, 60, &r1);
	/* Interval 30 had no created counts: 39 intervals summed. */
	ck_assert_int_eq(r.created_sum, 39 * 4);
	ck_assert_int_eq(r.finished_sum, 39 * 2);
	ck_assert_int_eq(r0.created_sum, 39 * 3);
	ck_assert_int_eq(r0.finished_sum, 39 * 2);
	ck_assert_int_eq(r1.created_sum, 39);
	ck_assert_int_eq(r1.finished_sum, 0);
	ck_assert_uint_eq(r.epoch, 0);
	/* A group that goes away: its backlog left, finished (nothing created, nothing
	 * deleted). */
	ng[0] = 1;
	tot = (struct ev_flow_in){51, 0, 0, 0};
	ev_flow_push(f, 100, &tot, gv, ng, true);
	ev_flow_rates(f, 0, 1, 60, &r1);
	ck_assert_int_eq(r1.finished_sum, 5);
	/* A reset starts the sums anew, in a new epoch. */
	ev_flow_reset(f);
	ev_flow_rates(f, -1, 0, 60, &r);
	ck_assert_int_eq(r.created_sum, 0);
	ck_assert_uint_eq(r.epoch, 1);
	ev_flow_free(&f);
}
END_TEST

START_TEST(a_fast_refresh_still_spans_a_minute)
{
	/* A refresh a second (and twice in one server second) for two minutes: a sample
	 * every 2 s, the newest interval extended in between, so 32 samples span a minute
	 * and the rates are those of every refresh's counts. */
	struct ev_flow *f = ev_flow_new();
	struct ev_flow_rates r;
	long long backlog = 1000;
	push(f, 0, backlog, 0, 0, 0);
	for (int i = 1; i <= 120; i++) {
		/* Created 60 a second, finished 50 (the backlog grows by 10), 1 failing. */
		backlog += 10;
		push(f, i, backlog, 60, 0, 1);
		if (i % 7 == 0)
			push(f, i, backlog, 0, 0, 0); /* the same second again */
	}
	ck_assert_uint_eq(ev_flow_samples(f), EV_FLOW_SAMPLES);
	ev_flow_rates(f, -1, 0, 60, &r);
	ck_assert(r.known);
	ck_assert_double_ge(r.span_s, 60);
	ck_assert_double_le(r.span_s, 62);
	ck_assert(NEAR(r.created_per_min, 3600));
	ck_assert(NEAR(r.finished_per_min, 3000));
	ck_assert(NEAR(r.failed_per_min, 60));
	/* A refresh whose created counts failed makes the interval it joins unknown. */
	backlog += 10;
	push(f, 121, backlog, 60, 0, 0);
	struct ev_flow_in in = {backlog, 0, 0, 0};
	ev_flow_push(f, 122, &in, NULL, NULL, false);
	ev_flow_rates(f, -1, 0, 60, &r);
	ck_assert(!r.known);
	/* Per group: a group the extending refresh does not name has no backlog left. */
	struct ev_flow *g = ev_flow_new();
	struct ev_flow_in a[2] = {{5, 0, 0, 0}, {7, 0, 0, 0}}, b[2] = {{5, 0, 0, 3}, {7, 0, 0, 0}},
	                  c[1] = {{5, 0, 0, 2}};
	const struct ev_flow_in *ga[EV_FLOW_DIMS] = {a, NULL}, *gb[EV_FLOW_DIMS] = {b, NULL},
	                        *gc[EV_FLOW_DIMS] = {c, NULL};
	size_t na[EV_FLOW_DIMS] = {2, 0}, nc[EV_FLOW_DIMS] = {1, 0};
	struct ev_flow_in t0 = {12, 0, 0, 0}, t1 = {12, 0, 0, 3}, t2 = {5, 0, 0, 2};
	ev_flow_push(g, 100, &t0, ga, na, true);
	ev_flow_push(g, 101, &t1, gb, na, true);
	ev_flow_push(g, 101, &t2, gc, nc, true); /* joins the interval 100 -> 101 */
	ck_assert_uint_eq(ev_flow_samples(g), 2);
	ev_flow_rates(g, 0, 0, 60, &r);
	ck_assert(r.known);
	ck_assert(NEAR(r.span_s, 1));
	ck_assert(NEAR(r.finished_per_min, 5 * 60)); /* created 3 + 2, backlog unchanged */
	ev_flow_rates(g, 0, 1, 60, &r);
	ck_assert(NEAR(r.finished_per_min, 7 * 60)); /* its 7 rows left, none created */
	ev_flow_free(&g);
	ev_flow_free(&f);
}
END_TEST

int main(void)
{

	Suite *s = suite_create("flow");
	TCase *tc = tcase_create("flow");
	tcase_add_test(tc, steady_state_finishes_what_is_created);
	tcase_add_test(tc, an_outage_finishes_nothing);
	tcase_add_test(tc, deleted_rows_finished_nothing);
	tcase_add_test(tc, groups_have_rates_of_their_own);
	tcase_add_test(tc, the_span_is_the_last_minute);
	tcase_add_test(tc, a_fast_refresh_still_spans_a_minute);
	tcase_add_test(tc, the_sums_count_every_interval_since_the_start);
	suite_add_tcase(s, tc);
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? 0 : 1;
}
