/* core/metrics: the Prometheus exposition of the dashboards — states that partition the
 * backlog, escaping, the cardinality cap (first come, first named; the rest folded), counters
 * that never go down across a mirror read anew, the clock-suspect and unknown rules, a source
 * that is down. */
#include <config.h>

#include "core/metrics.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static struct ev_dash *dash(enum ev_table_kind t, const char *dim)
{
	struct ev_dash_req req = {.table = t, .dimension = dim, .window_s = 3600};
	return ev_dash_new(&req);
}

static struct ev_dash_row *row(struct ev_dash *d, const char *g, long long pend, long long proc,
                               long long stuck, long long due, long long wait, long long noretry,
                               long long exh, long long age)
{
	struct ev_dash_row *r = ev_dash_row(d, g);
	r->f[EV_DASH_PENDING].value = pend;
	r->f[EV_DASH_PROCESSING].value = proc;
	r->f[EV_DASH_STUCK].value = stuck;
	r->f[EV_DASH_FAILED_DUE].value = due;
	r->f[EV_DASH_FAILED_WAITING].value = wait;
	r->f[EV_DASH_FAILED_NORETRY].value = noretry;
	r->f[EV_DASH_EXHAUSTED].value = exh;
	r->f[EV_DASH_FAILED].value = due + wait + noretry + exh;
	r->f[EV_DASH_OLDEST_PENDING_AGE].value = age;
	return r;
}

static char *render(struct ev_metrics *m, struct ev_metrics_source *s, int n)
{
	struct ev_buf b;
	for (int i = 0; i < n; i++)
		ev_metrics_update(m, i, &s[i]);
	ev_buf_init(&b);
	ev_metrics_render(m, s, n, 0.25, "1.2.3", &b);
	return ev_buf_steal(&b);
}

/* The value of the sample whose name and labels are exactly `series`; -1 when absent. */
static double value(const char *text, const char *series)
{
	size_t n = strlen(series);
	for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
		if (strncmp(p, series, n) == 0 && p[n] == ' ')
			return strtod(p + n + 1, NULL);
	return -1;
}

static struct ev_metrics_source one(const char *name, struct ev_dash *ob, struct ev_dash *msg)
{
	struct ev_metrics_source s;
	memset(&s, 0, sizeof(s));
	s.name = name;
	s.up = true;
	s.refreshed_at = 1700000000.5;
	s.query_s = 0.125;
	s.t[EV_TABLE_OUTBOX].watched = true;
	s.t[EV_TABLE_OUTBOX].by_type = ob;
	s.t[EV_TABLE_MESSAGE].watched = true;
	s.t[EV_TABLE_MESSAGE].by_type = msg;
	return s;
}

START_TEST(the_states_partition_the_backlog)
{
	struct ev_dash *ob = dash(EV_TABLE_OUTBOX, "event_type");
	row(ob, "ORDER_PAID", 3, 2, 1, 1, 2, 3, 4, 90);
	row(ob, "ORDER_SHIPPED", 0, 0, 0, 0, 0, 0, 1, -1);
	ev_dash_finish(ob);
	struct ev_dash *msg = dash(EV_TABLE_MESSAGE, "event_type");
	ev_dash_finish(msg);
	struct ev_metrics *m = ev_metrics_new(1, 0);
	struct ev_metrics_source s = one("shard1", ob, msg);
	char *t = render(m, &s, 1);
	const char *p = "evtop_events{source=\"shard1\",table=\"outbox\",event_type=\"ORDER_PAID\"";
	char k[256];
	static const char *const st[] = {"pending",    "processing",     "stuck",
	                                 "failed_due", "failed_waiting", "failed_no_retry_time",
	                                 "exhausted"};
	static const double want[] = {3, 1, 1, 1, 2, 3, 4};
	double sum = 0;
	for (int i = 0; i < 7; i++) {
		snprintf(k, sizeof(k), "%s,state=\"%s\"}", p, st[i]);
		ck_assert_msg(value(t, k) == want[i], "%s: %g in\n%s", k, value(t, k), t);
		sum += value(t, k);
	}
	ck_assert(sum == 3 + 2 + 10); /* pending + processing + failed */
	ck_assert(value(t, "evtop_oldest_pending_age_seconds{source=\"shard1\",table=\"outbox\","
	                   "event_type=\"ORDER_PAID\"}") == 90);
	/* No pending event: no age. */
	ck_assert(value(t, "evtop_oldest_pending_age_seconds{source=\"shard1\",table=\"outbox\","
	                   "event_type=\"ORDER_SHIPPED\"}") < 0);
	ck_assert(value(t, "evtop_up{source=\"shard1\"}") == 1);
	ck_assert(value(t, "evtop_build_info{version=\"1.2.3\"}") == 1);
	ck_assert(value(t, "evtop_clock_suspect{source=\"shard1\",table=\"outbox\"}") == 0);
	ck_assert(strstr(t, "# TYPE evtop_events gauge\n") != NULL);
	ck_assert(strstr(t, "# TYPE evtop_events_created_total counter\n") != NULL);
	free(t);
	/* A group that leaves the backlog is still exported, as 0. */
	ev_dash_free(&ob);
	ob = dash(EV_TABLE_OUTBOX, "event_type");
	ev_dash_finish(ob);
	s.t[EV_TABLE_OUTBOX].by_type = ob;
	t = render(m, &s, 1);
	snprintf(k, sizeof(k), "%s,state=\"exhausted\"}", p);
	ck_assert(value(t, k) == 0);
	free(t);
	ev_dash_free(&ob);
	ev_dash_free(&msg);
	ev_metrics_free(&m);
	ck_assert_ptr_null(m);
}
END_TEST

START_TEST(label_values_are_escaped)
{
	struct ev_buf b;
	ev_buf_init(&b);
	ev_metrics_label_value(&b, "a\"b\\c\nd\xff"
	                           "e");
	ck_assert_str_eq(b.data, "a\\\"b\\\\c\\nd\xef\xbf\xbd"
	                         "e");
	ev_buf_free(&b);
	struct ev_dash *ob = dash(EV_TABLE_OUTBOX, "event_type");
	row(ob, "x\"}\n# HELP evil", 1, 0, 0, 0, 0, 0, 0, 5);
	row(ob, NULL, 2, 0, 0, 0, 0, 0, 0, 5);
	ev_dash_finish(ob);
	struct ev_metrics *m = ev_metrics_new(1, 0);
	struct ev_metrics_source s = one("s\"1", ob, NULL);
	char *t = render(m, &s, 1);
	ck_assert(value(t, "evtop_events{source=\"s\\\"1\",table=\"outbox\",event_type=\"x\\\"}\\n#"
	                   " HELP evil\",state=\"pending\"}") == 1);
	ck_assert(value(t, "evtop_events{source=\"s\\\"1\",table=\"outbox\",event_type="
	                   "\"" EV_METRICS_NULL "\",state=\"pending\"}") == 2);
	/* Every line is a comment or a sample: nothing a value broke. */
	for (char *p = t; *p; p = strchr(p, '\n') + 1)
		ck_assert(strncmp(p, "# HELP ", 7) == 0 || strncmp(p, "# TYPE ", 7) == 0 ||
		          strncmp(p, "evtop_", 6) == 0);
	/* The message table is watched but was not read: all its figures unknown. */
	ck_assert(value(t, "evtop_figure_unknown{source=\"s\\\"1\",table=\"message\",figure="
	                   "\"pending\"}") == 1);
	free(t);
	ev_dash_free(&ob);
	ev_metrics_free(&m);
}
END_TEST

START_TEST(past_the_cap_values_fold_into_other)
{
	struct ev_dash *ob = dash(EV_TABLE_OUTBOX, "event_type");
	row(ob, "A", 5, 0, 0, 0, 0, 0, 0, 10);
	row(ob, "B", 4, 0, 0, 0, 0, 0, 0, 20);
	ev_dash_finish(ob);
	struct ev_metrics *m = ev_metrics_new(1, 2);
	struct ev_metrics_source s = one("s", ob, NULL);
	char *t = render(m, &s, 1);
	ck_assert(strstr(t, EV_METRICS_OTHER) == NULL ||
	          value(t, "evtop_label_values_folded{source=\"s\",table=\"outbox\",label=\"event_"
	                   "type\"}") == 0);
	free(t);
	ev_dash_free(&ob);
	/* Three more: C, D, E fold; A and B keep their labels though C has more now. */
	ob = dash(EV_TABLE_OUTBOX, "event_type");
	row(ob, "C", 9, 0, 0, 0, 0, 0, 0, 30);
	row(ob, "D", 1, 0, 0, 0, 0, 0, 0, 40);
	row(ob, "E", 1, 0, 0, 0, 0, 0, 0, 50);
	row(ob, "A", 1, 0, 0, 0, 0, 0, 0, 10);
	ev_dash_finish(ob);
	s.t[EV_TABLE_OUTBOX].by_type = ob;
	t = render(m, &s, 1);
	const char *p = "evtop_events{source=\"s\",table=\"outbox\",event_type=";
	char k[256];
	snprintf(k, sizeof(k), "%s\"A\",state=\"pending\"}", p);
	ck_assert(value(t, k) == 1);
	snprintf(k, sizeof(k), "%s\"B\",state=\"pending\"}", p);
	ck_assert(value(t, k) == 0);
	snprintf(k, sizeof(k), "%s\"C\",state=\"pending\"}", p);
	ck_assert(value(t, k) < 0);
	snprintf(k, sizeof(k), "%s\"" EV_METRICS_OTHER "\",state=\"pending\"}", p);
	ck_assert_msg(value(t, k) == 11, "%s", t);
	ck_assert(value(t, "evtop_oldest_pending_age_seconds{source=\"s\",table=\"outbox\","
	                   "event_type=\"" EV_METRICS_OTHER "\"}") == 50);
	ck_assert(value(t, "evtop_label_values_folded{source=\"s\",table=\"outbox\","
	                   "label=\"event_type\"}") == 3);
	free(t);
	ev_dash_free(&ob);
	ev_metrics_free(&m);
}
END_TEST

static void flows(struct ev_dash_row *r, unsigned epoch, long long created, long long finished)
{
	r->flow.known = true;
	r->flow.epoch = epoch;
	r->flow.created_sum = created;
	r->flow.finished_sum = finished;
}

START_TEST(counters_never_go_down)
{
	struct ev_metrics *m = ev_metrics_new(1, 0);
	const char *c =
	        "evtop_events_created_total{source=\"s\",table=\"outbox\",event_type=\"A\"}";
	const char *f =
	        "evtop_events_finished_total{source=\"s\",table=\"outbox\",event_type=\"A\"}";
	/* epoch 0: 10 created, 8 finished; then a negative interval (finished 6), then 9. */
	long long fin[] = {8, 6, 9};
	double want_f[] = {8, 8, 9};
	for (int i = 0; i < 3; i++) {
		struct ev_dash *ob = dash(EV_TABLE_OUTBOX, "event_type");
		flows(row(ob, "A", 1, 0, 0, 0, 0, 0, 0, 1), 0, 10 + i, fin[i]);
		ob->flow_on = true;
		ev_dash_finish(ob);
		struct ev_metrics_source s = one("s", ob, NULL);
		char *t = render(m, &s, 1);
		ck_assert(value(t, c) == 10 + i);
		ck_assert_msg(value(t, f) == want_f[i], "%d: %g", i, value(t, f));
		free(t);
		ev_dash_free(&ob);
	}
	/* The mirror read anew (epoch 1): its sums start at 0; the counters go on. */
	struct ev_dash *ob = dash(EV_TABLE_OUTBOX, "event_type");
	flows(row(ob, "A", 1, 0, 0, 0, 0, 0, 0, 1), 1, 3, 2);
	ob->flow_on = true;
	ev_dash_finish(ob);
	struct ev_metrics_source s = one("s", ob, NULL);
	char *t = render(m, &s, 1);
	ck_assert(value(t, c) == 15);
	ck_assert(value(t, f) == 11);
	free(t);
	ev_dash_free(&ob);
	/* Without flows (over the mirror's cap): no counters, said unknown. */
	ob = dash(EV_TABLE_OUTBOX, "event_type");
	row(ob, "A", 1, 0, 0, 0, 0, 0, 0, 1);
	ev_dash_finish(ob);
	s = one("s", ob, NULL);
	t = render(m, &s, 1);
	ck_assert(value(t, c) < 0);
	ck_assert(value(t,
	                "evtop_figure_unknown{source=\"s\",table=\"outbox\",figure=\"created\"}") ==
	          1);
	free(t);
	ev_dash_free(&ob);
	ev_metrics_free(&m);
}
END_TEST

START_TEST(a_suspect_clock_leaves_its_series_out)
{
	struct ev_dash *ob = dash(EV_TABLE_OUTBOX, "event_type");
	row(ob, "A", 3, 2, 1, 1, 2, 3, 4, 90);
	ob->clock_suspect = strdup("the newest rows are dated 8h ahead of NOW()");
	ob->flow_on = true;
	ob->total.flow.known = true;
	ob->total.flow.finished_per_min = 60;
	ev_dash_finish(ob);
	struct ev_metrics *m = ev_metrics_new(1, 0);
	struct ev_metrics_source s = one("s", ob, NULL);
	char *t = render(m, &s, 1);
	const char *p = "evtop_events{source=\"s\",table=\"outbox\",event_type=\"A\"";
	char k[256];
	snprintf(k, sizeof(k), "%s,state=\"processing\"}", p);
	ck_assert(value(t, k) == 2); /* every processing row, stuck or not */
	snprintf(k, sizeof(k), "%s,state=\"stuck\"}", p);
	ck_assert(value(t, k) < 0);
	snprintf(k, sizeof(k), "%s,state=\"failed_due\"}", p);
	ck_assert(value(t, k) < 0);
	snprintf(k, sizeof(k), "%s,state=\"exhausted\"}", p);
	ck_assert(value(t, k) == 4);
	ck_assert(strstr(t, "evtop_oldest_pending_age_seconds{") == NULL);
	ck_assert(strstr(t, "evtop_drain_seconds{") == NULL);
	ck_assert(value(t, "evtop_clock_suspect{source=\"s\",table=\"outbox\"}") == 1);
	free(t);
	ev_dash_free(&ob);
	ev_metrics_free(&m);
}
END_TEST

START_TEST(unknown_and_capped_figures_say_so)
{
	struct ev_dash *ob = dash(EV_TABLE_OUTBOX, "event_type");
	struct ev_dash_row *r = row(ob, "A", 3, 2, 1, 1, 2, 3, 4, 90);
	r->f[EV_DASH_FAILED].capped = true;
	r->f[EV_DASH_EXHAUSTED].capped = true;
	ev_dash_finish(ob);
	ev_dash_unknown(ob, EV_DQ_PENDING, "timeout");
	struct ev_metrics *m = ev_metrics_new(1, 0);
	struct ev_metrics_source s = one("s", ob, NULL);
	char *t = render(m, &s, 1);
	ck_assert(strstr(t, "state=\"pending\"") == NULL);
	ck_assert(value(t,
	                "evtop_figure_unknown{source=\"s\",table=\"outbox\",figure=\"pending\"}") ==
	          1);
	ck_assert(value(t, "evtop_events{source=\"s\",table=\"outbox\",event_type=\"A\","
	                   "state=\"exhausted\",capped=\"true\"}") == 4);
	ck_assert(value(t, "evtop_events{source=\"s\",table=\"outbox\",event_type=\"A\","
	                   "state=\"failed_due\"}") == 1);
	free(t);
	ev_dash_free(&ob);
	ev_metrics_free(&m);
}
END_TEST

START_TEST(a_source_down_serves_no_figures)
{
	struct ev_dash *ob = dash(EV_TABLE_OUTBOX, "event_type");
	row(ob, "A", 3, 0, 0, 0, 0, 0, 0, 9);
	ev_dash_finish(ob);
	struct ev_metrics *m = ev_metrics_new(2, 0);
	struct ev_metrics_source s[2] = {one("a", ob, NULL), one("b", ob, NULL)};
	s[1].up = false;
	char *t = render(m, s, 2);
	ck_assert(value(t, "evtop_up{source=\"b\"}") == 0);
	ck_assert(value(t, "evtop_up{source=\"a\"}") == 1);
	ck_assert(strstr(t, "evtop_events{source=\"b\"") == NULL);
	ck_assert(strstr(t, "evtop_events{source=\"a\"") != NULL);
	ck_assert(value(t, "evtop_query_seconds_total{source=\"b\"}") == 0.125);
	ck_assert(value(t, "evtop_scrape_duration_seconds") == 0.25);
	free(t);
	ev_dash_free(&ob);
	ev_metrics_free(&m);
}
END_TEST

START_TEST(the_drain_time)
{
	struct ev_dash *ob = dash(EV_TABLE_OUTBOX, "event_type");
	row(ob, "A", 60, 0, 0, 0, 0, 0, 0, 9);
	ob->flow_on = true;
	ev_dash_finish(ob);
	ob->total.flow.known = true;
	ob->total.flow.finished_per_min = 30;
	struct ev_metrics *m = ev_metrics_new(1, 0);
	struct ev_metrics_source s = one("s", ob, NULL);
	char *t = render(m, &s, 1);
	ck_assert(value(t, "evtop_drain_seconds{source=\"s\",table=\"outbox\"}") == 120);
	free(t);
	ob->total.flow.finished_per_min = 0;
	t = render(m, &s, 1);
	ck_assert(strstr(t, "evtop_drain_seconds{source=\"s\",table=\"outbox\"} +Inf\n") != NULL);
	free(t);
	ev_dash_free(&ob);
	ev_metrics_free(&m);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("metrics");
	TCase *tc = tcase_create("core");
	tcase_add_test(tc, the_states_partition_the_backlog);
	tcase_add_test(tc, label_values_are_escaped);
	tcase_add_test(tc, past_the_cap_values_fold_into_other);
	tcase_add_test(tc, counters_never_go_down);
	tcase_add_test(tc, a_suspect_clock_leaves_its_series_out);
	tcase_add_test(tc, unknown_and_capped_figures_say_so);
	tcase_add_test(tc, a_source_down_serves_no_figures);
	tcase_add_test(tc, the_drain_time);
	suite_add_tcase(s, tc);
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
