/* core/dashboard's time formatting: differences of datetimes, durations, and the ages the
 * detail pane shows next to each time. */
#include <config.h>

#include "core/dashboard.h"

#include <check.h>
#include <limits.h>
#include <stdlib.h>

START_TEST(datetime_diff)
{
	ck_assert_int_eq(ev_datetime_diff("2026-06-01 11:59:00", "2026-06-01 12:00:00"), 60);
	ck_assert_int_eq(ev_datetime_diff("2026-06-01 12:00:01", "2026-06-01 12:00:00"), -1);
	/* Across a month and a year; fractions of a second are not counted. */
	ck_assert_int_eq(ev_datetime_diff("2025-12-31 23:59:59", "2026-01-01 00:00:00"), 1);
	ck_assert_int_eq(ev_datetime_diff("2026-06-01 12:00:00.999999", "2026-06-01 12:00:01"), 1);
	ck_assert_int_eq(ev_datetime_diff("not a time", "2026-06-01 12:00:00"), LLONG_MIN);
	ck_assert_int_eq(ev_datetime_diff("2026-06-01 12:00:00", NULL), LLONG_MIN);
}
END_TEST

START_TEST(durations)
{
	char b[32];
	ck_assert_str_eq(ev_format_duration(0, b, sizeof(b)), "0s");
	ck_assert_str_eq(ev_format_duration(59, b, sizeof(b)), "59s");
	ck_assert_str_eq(ev_format_duration(192, b, sizeof(b)), "3m12s");
	ck_assert_str_eq(ev_format_duration(7500, b, sizeof(b)), "2h05m");
	ck_assert_str_eq(ev_format_duration(86400 * 4 + 3 * 3600, b, sizeof(b)), "4d03h");
	ck_assert_str_eq(ev_format_duration(-1, b, sizeof(b)), "-");
}
END_TEST

/* A past time reads "ago" (the same second too), never "in"; only a time still ahead of the
 * server's clock reads "in". */
START_TEST(ages)
{
	char b[48];
	const char *now = "2026-06-01 12:00:00";
	ck_assert_str_eq(ev_format_age("2026-06-01 11:59:59", now, b, sizeof(b)), "1s ago");
	ck_assert_str_eq(ev_format_age("2026-06-01 12:00:00", now, b, sizeof(b)), "0s ago");
	ck_assert_str_eq(ev_format_age("2026-05-31 10:00:00", now, b, sizeof(b)), "1d02h ago");
	ck_assert_str_eq(ev_format_age("2026-06-01 12:05:00", now, b, sizeof(b)), "in 5m00s");
	ck_assert_str_eq(ev_format_age("2026-06-01 12:00:01", now, b, sizeof(b)), "in 1s");
	ck_assert_str_eq(ev_format_age("garbage", now, b, sizeof(b)), "");
	ck_assert_str_eq(ev_format_age(now, "", b, sizeof(b)), "");
}
END_TEST

int main(void)
{
	Suite *s = suite_create("timefmt");
	TCase *tc = tcase_create("timefmt");
	tcase_add_test(tc, datetime_diff);
	tcase_add_test(tc, durations);
	tcase_add_test(tc, ages);
	suite_add_tcase(s, tc);
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? 0 : 1;
}
