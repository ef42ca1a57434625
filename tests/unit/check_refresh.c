/* core/refresh: what a statement is charged, the stretch and its cap, freshness, the
 * reconnect pace, the server clock between refreshes. */
#include <config.h>

#include "core/refresh.h"

#include <check.h>
#include <stdlib.h>

START_TEST(waits_are_charged_nothing)
{
	/* Lock waits, time limits, kills and a connection lost under the statement: 0. */
	static const int waited[] = {1205, 1969, 3024, 1317, 1927, 3169, 1053, 2006, 2013};
	for (size_t i = 0; i < sizeof(waited) / sizeof(waited[0]); i++) {
		ck_assert_msg(ev_refresh_waited(waited[i], "HY000"), "errno %d", waited[i]);
		ck_assert(ev_refresh_charge_ms(waited[i], "HY000", 12000.0) == 0.0);
	}
	/* Any errno with SQLSTATE 70100 (query interrupted). */
	ck_assert(ev_refresh_waited(1105, "70100"));
	ck_assert(ev_refresh_charge_ms(1105, "70100", 800.0) == 0.0);
}
END_TEST

START_TEST(work_is_charged_its_wall_time)
{
	/* A statement that ran, or failed for another reason, is charged what it took. */
	ck_assert(ev_refresh_charge_ms(0, NULL, 12.5) == 12.5);
	ck_assert(ev_refresh_charge_ms(0, "00000", 3.0) == 3.0);
	ck_assert(!ev_refresh_waited(0, "70100")); /* no error, whatever the state says */
	ck_assert(ev_refresh_charge_ms(1146, "42S02", 4.0) == 4.0); /* no such table */
	ck_assert(ev_refresh_charge_ms(1213, "40001", 9.0) == 9.0); /* deadlock */
	ck_assert(ev_refresh_charge_ms(1064, "42000", 1.0) == 1.0);
	ck_assert(ev_refresh_charge_ms(0, NULL, -1.0) == 0.0);
}
END_TEST

START_TEST(stretch_keeps_to_the_budget)
{
	/* 1% of a core: a refresh costing 5 ms needs 500 ms, under the 2 s set. */
	ck_assert_int_eq(ev_refresh_interval_ms(2000, 5.0, 10), 2000);
	ck_assert_int_eq(ev_refresh_interval_ms(2000, 0.0, 10), 2000);
	/* 40 ms at 1%: 4 s. */
	ck_assert_int_eq(ev_refresh_interval_ms(2000, 40.0, 10), 4000);
	/* 100%: the cost itself. */
	ck_assert_int_eq(ev_refresh_interval_ms(500, 900.0, 1000), 900);
}
END_TEST

START_TEST(stretch_is_capped)
{
	/* The 447 s of a refresh charged 4.47 s at 1%: 10 times the 2 s set, 20 s. */
	ck_assert_int_eq(ev_refresh_interval_ms(2000, 4472.0, 10), 20000);
	ck_assert_int_eq(ev_refresh_cap_ms(2000), 20000);
	/* 10 times 10 s would be 100 s: 60 s at most. */
	ck_assert_int_eq(ev_refresh_interval_ms(10000, 1e6, 10), 60000);
	ck_assert_int_eq(ev_refresh_cap_ms(500), 5000);
	/* An interval set above 60 s is never shortened by the cap. */
	ck_assert_int_eq(ev_refresh_cap_ms(120000), 120000);
	ck_assert_int_eq(ev_refresh_interval_ms(120000, 1e9, 10), 120000);
}
END_TEST

START_TEST(stretch_follows_the_last_refresh_alone)
{
	/* No memory: a cheap refresh after a costly one gives the set interval back. */
	int after_costly = ev_refresh_interval_ms(2000, 4000.0, 10);
	ck_assert_int_eq(after_costly, 20000);
	ck_assert_int_eq(ev_refresh_interval_ms(2000, 3.0, 10), 2000);
}
END_TEST

START_TEST(stale_after_two_intervals_at_most_a_minute)
{
	ck_assert_int_eq(ev_refresh_stale_after_ms(2000), 4000);
	ck_assert_int_eq(ev_refresh_stale_after_ms(20000), 40000);
	ck_assert_int_eq(ev_refresh_stale_after_ms(30000), 60000);
	ck_assert_int_eq(ev_refresh_stale_after_ms(45000), 60000);
	/* The stretch's cap, 60 s: one interval and 5 s, not stale before its refresh. */
	ck_assert_int_eq(ev_refresh_stale_after_ms(60000), 65000);
	ck_assert_int_eq(ev_refresh_stale_after_ms(3600000), 3605000);
}
END_TEST

START_TEST(reconnects_stay_frequent)
{
	ck_assert_int_eq(ev_refresh_retry_ms(2000), 2000);
	ck_assert_int_eq(ev_refresh_retry_ms(60000), 5000);
	ck_assert_int_eq(ev_refresh_backoff_ms(1), 500);
	ck_assert_int_eq(ev_refresh_backoff_ms(2), 1000);
	ck_assert_int_eq(ev_refresh_backoff_ms(3), 2000);
	ck_assert_int_eq(ev_refresh_backoff_ms(4), 4000);
	ck_assert_int_eq(ev_refresh_backoff_ms(50), 4000);
	for (int n = 1; n < 100; n++)
		ck_assert_int_lt(ev_refresh_backoff_ms(n), 5000);
}
END_TEST

START_TEST(clock_moves_between_refreshes)
{
	char buf[32];
	ck_assert(ev_refresh_clock("2026-06-01 12:00:00", 0, buf, sizeof(buf)));
	ck_assert_str_eq(buf, "2026-06-01 12:00:00");
	ck_assert(ev_refresh_clock("2026-06-01 12:00:00", 12999, buf, sizeof(buf)));
	ck_assert_str_eq(buf, "2026-06-01 12:00:12");
	ck_assert(ev_refresh_clock("2026-12-31 23:59:58", 2000, buf, sizeof(buf)));
	ck_assert_str_eq(buf, "2027-01-01 00:00:00");
	ck_assert(ev_refresh_clock("2028-02-28 23:00:00", 3600 * 1000, buf, sizeof(buf)));
	ck_assert_str_eq(buf, "2028-02-29 00:00:00");
	ck_assert(!ev_refresh_clock("-", 5000, buf, sizeof(buf)));
	ck_assert_str_eq(buf, "-");
}
END_TEST

int main(void)
{
	Suite *s = suite_create("refresh");
	TCase *tc = tcase_create("refresh");
	tcase_add_test(tc, waits_are_charged_nothing);
	tcase_add_test(tc, work_is_charged_its_wall_time);
	tcase_add_test(tc, stretch_keeps_to_the_budget);
	tcase_add_test(tc, stretch_is_capped);
	tcase_add_test(tc, stretch_follows_the_last_refresh_alone);
	tcase_add_test(tc, stale_after_two_intervals_at_most_a_minute);
	tcase_add_test(tc, reconnects_stay_frequent);
	tcase_add_test(tc, clock_moves_between_refreshes);
	suite_add_tcase(s, tc);
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? 0 : 1;
}
