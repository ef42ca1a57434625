/* core/chart: the samples kept per table and group (a ring: the oldest go), and the charts
 * drawn from them, braille and ASCII, the newest at the right, gaps where unknown. */
#include <config.h>

#include "core/chart.h"

#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static struct ev_chart_sample sample(int64_t t, double created, double backlog)
{
	struct ev_chart_sample x = {.t = t};
	x.v[EV_CF_CREATED] = created;
	x.v[EV_CF_FINISHED] = NAN;
	x.v[EV_CF_FAILED] = 0;
	x.v[EV_CF_BACKLOG] = backlog;
	return x;
}

START_TEST(ring_keeps_the_newest)
{
	struct ev_chart_series s = {0};
	for (int i = 0; i < 10; i++) {
		struct ev_chart_sample x = sample(i, i, 0);
		ev_chart_series_push(&s, &x, 4);
	}
	ck_assert_uint_eq(s.n, 4);
	for (size_t i = 0; i < 4; i++)
		ck_assert_int_eq(ev_chart_series_at(&s, i)->t, (int64_t)(6 + i));
	ev_chart_series_clear(&s);
}
END_TEST

START_TEST(set_per_group)
{
	struct ev_chart_set cs = {0};
	struct ev_chart_sample x = sample(1, 5, 7);
	ev_chart_set_push(&cs, true, NULL, &x);
	ev_chart_set_push(&cs, false, "PAY", &x);
	ev_chart_set_push(&cs, false, NULL, &x); /* the group of SQL NULL */
	ev_chart_set_push(&cs, false, "PAY", &x);
	ck_assert_uint_eq(ev_chart_set_find(&cs, true, NULL)->n, 1);
	ck_assert_uint_eq(ev_chart_set_find(&cs, false, "PAY")->n, 2);
	ck_assert_uint_eq(ev_chart_set_find(&cs, false, NULL)->n, 1);
	ck_assert_ptr_null(ev_chart_set_find(&cs, false, "OTHER"));
	for (int i = 0; i < EV_CHART_GROUPS + 10; i++) {
		char g[16];
		snprintf(g, sizeof(g), "G%d", i);
		ev_chart_set_push(&cs, false, g, &x);
	}
	ck_assert_uint_eq(cs.n, EV_CHART_GROUPS);
	ev_chart_set_clear(&cs);
	ck_assert_ptr_null(ev_chart_set_find(&cs, true, NULL));
}
END_TEST

/* Values 0, 1, 2, 3, 4 on an ASCII chart of 5 x 2 (two levels a line): the newest right. */
START_TEST(ascii_area)
{
	struct ev_chart_series s = {0};
	for (int i = 0; i <= 4; i++) {
		struct ev_chart_sample x = sample(i, i, 0);
		ev_chart_series_push(&s, &x, 16);
	}
	char *lines[2];
	double top = ev_chart_render(&s, EV_CF_CREATED, 5, 2, 0, false, lines);
	ck_assert(top == 4);
	ck_assert_str_eq(lines[0], "   .#");
	ck_assert_str_eq(lines[1], " .###");
	free(lines[0]);
	free(lines[1]);
	/* Unknown everywhere: nothing drawn. */
	top = ev_chart_render(&s, EV_CF_FINISHED, 5, 2, 0, false, lines);
	ck_assert_str_eq(lines[0], "     ");
	ck_assert_str_eq(lines[1], "     ");
	free(lines[0]);
	free(lines[1]);
	/* Fewer samples than columns: the left stays empty. */
	top = ev_chart_render(&s, EV_CF_CREATED, 8, 1, 4, false, lines);
	ck_assert_str_eq(lines[0], "    ..##");
	free(lines[0]);
	ev_chart_series_clear(&s);
}
END_TEST

/* Braille: two samples a cell, four dots high; 8 and 4 of 8 fill a cell's left column whole
 * and its right half way. */
START_TEST(braille_dots)
{
	struct ev_chart_series s = {0};
	struct ev_chart_sample a = sample(1, 8, 0), b = sample(2, 4, 0);
	ev_chart_series_push(&s, &a, 16);
	ev_chart_series_push(&s, &b, 16);
	char *lines[1];
	ev_chart_render(&s, EV_CF_CREATED, 1, 1, 8, true, lines);
	/* Left column all four dots (1 2 3 7), right the lower two (6 8): U+2800 + 0x47 + 0xA0. */
	ck_assert_str_eq(lines[0], "\xe2\xa3\xa7");
	free(lines[0]);
	ev_chart_series_clear(&s);
}
END_TEST

int main(void)
{
	Suite *su = suite_create("chart");
	TCase *tc = tcase_create("chart");
	tcase_add_test(tc, ring_keeps_the_newest);
	tcase_add_test(tc, set_per_group);
	tcase_add_test(tc, ascii_area);
	tcase_add_test(tc, braille_dots);
	suite_add_tcase(su, tc);
	SRunner *sr = srunner_create(su);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? 0 : 1;
}
