/* Several sources: the config's read endpoints and tables, the merge of dashboards, the order
 * of rows merged from several sources and the cursor that pages through them. */
#include <config.h>

#include "core/config.h"
#include "core/dashboard.h"
#include "core/query.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void parse_ok(struct ev_config *cfg, const char *text)
{
	struct ev_error err = {0};
	ck_assert_msg(ev_config_parse(cfg, text, "t.conf", &err) == 0, "rejected: %s", err.msg);
}

static void parse_fails(const char *text, const char *want)
{
	struct ev_config cfg;
	struct ev_error err = {0};
	ev_config_init(&cfg);
	int rc = ev_config_parse(&cfg, text, "t.conf", &err);
	ev_config_free(&cfg);
	ck_assert_int_eq(rc, -1);
	ck_assert_str_eq(err.msg, want);
}

START_TEST(read_endpoint_settings)
{
	struct ev_config cfg;
	ev_config_init(&cfg);
	parse_ok(&cfg, "[evtop]\nlag_warning = 30s\n"
	               "[source a]\nhost = db-a\nport = 3307\nuser = ev\ndatabase = orders\n"
	               "time_zone = +08:00\nread_host = db-a-replica\nread_port = 3308\n"
	               "read_defaults_group = evtop_replica\ntables = outbox\n"
	               "[source b]\nsocket = /run/b.sock\nread_socket = /run/b-ro.sock\n"
	               "[source c]\nhost = db-c\nread_port = 3310\n"
	               "[source d]\nhost = db-d\ntables = message, outbox\n");
	ck_assert_int_eq(cfg.nsources, 4);
	ck_assert_int_eq(cfg.lag_warning_s, 30);
	const struct ev_source *a = &cfg.sources[0];
	ck_assert(ev_source_has_replica(a));
	ck_assert_uint_eq(a->tables, 1u << EV_TABLE_OUTBOX);
	struct ev_source *ra = ev_source_read_endpoint(a);
	ck_assert_str_eq(ra->host, "db-a-replica");
	ck_assert_uint_eq(ra->port, 3308);
	ck_assert_str_eq(ra->defaults_group, "evtop_replica");
	/* What the replica shares with the primary. */
	ck_assert_str_eq(ra->user, "ev");
	ck_assert_str_eq(ra->database, "orders");
	ck_assert_str_eq(ra->time_zone, "+08:00");
	ck_assert_str_eq(ra->name, "a");
	ev_source_free(&ra);
	ck_assert_ptr_null(ra);
	/* Another server by socket: the primary's socket does not carry over. */
	struct ev_source *rb = ev_source_read_endpoint(&cfg.sources[1]);
	ck_assert_str_eq(rb->socket, "/run/b-ro.sock");
	ck_assert_ptr_null(rb->host);
	ev_source_free(&rb);
	/* Only a port: the same host, another port. */
	struct ev_source *rc = ev_source_read_endpoint(&cfg.sources[2]);
	ck_assert_str_eq(rc->host, "db-c");
	ck_assert_uint_eq(rc->port, 3310);
	ev_source_free(&rc);
	ck_assert(!ev_source_has_replica(&cfg.sources[3]));
	ck_assert_uint_eq(cfg.sources[3].tables,
	                  (1u << EV_TABLE_OUTBOX) | (1u << EV_TABLE_MESSAGE));
	ev_config_free(&cfg);
}
END_TEST

START_TEST(bad_source_settings)
{
	parse_fails("[source a]\ntables = outbox, orders\n",
	            "t.conf:2: tables: expected outbox, message, or both (comma-separated), got "
	            "'outbox, orders'");
	parse_fails("[source a]\ntables = ,\n",
	            "t.conf:2: tables: expected outbox, message, or both (comma-separated), got "
	            "','");
	parse_fails("[source a]\nread_port = 70000\n",
	            "t.conf:2: read_port: 70000 is out of range (1 .. 65535)");
	parse_fails("[evtop]\nread_host = x\n",
	            "t.conf:2: unknown key 'read_host' in [evtop]; it belongs in a [source NAME] "
	            "section");
	parse_fails("[source a]\nlag_warning = 5s\n",
	            "t.conf:2: unknown key 'lag_warning' in [source a]; it belongs in [evtop]");
}
END_TEST

/* A dashboard of one source with the given groups and counts (pending, failed). */
static struct ev_dash *dash_of(const struct ev_dash_req *req, int n, const char *const *groups,
                               const long long *pending, const long long *failed, long long age)
{
	struct ev_dash *d = ev_dash_new(req);
	static const char *pnames[] = {"g", "n", "oldest", "retry_wait"};
	static const enum ev_ctype ptypes[] = {EV_CT_TEXT, EV_CT_INT, EV_CT_INT, EV_CT_INT};
	static const char *fnames[] = {"g", "n", "due", "waiting", "noretry", "exhausted"};
	static const enum ev_ctype ftypes[] = {EV_CT_TEXT, EV_CT_INT, EV_CT_INT,
	                                       EV_CT_INT,  EV_CT_INT, EV_CT_INT};
	struct ev_rowset *p = ev_rowset_new(4, pnames, ptypes);
	struct ev_rowset *f = ev_rowset_new(6, fnames, ftypes);
	char buf[32];
	for (int i = 0; i < n; i++) {
		struct ev_cell *c = ev_rowset_add_row(p);
		ev_cell_set(&c[0], groups[i], strlen(groups[i]));
		snprintf(buf, sizeof(buf), "%lld", pending[i]);
		ev_cell_set(&c[1], buf, strlen(buf));
		snprintf(buf, sizeof(buf), "%lld", age + i);
		ev_cell_set(&c[2], buf, strlen(buf));
		c = ev_rowset_add_row(f);
		ev_cell_set(&c[0], groups[i], strlen(groups[i]));
		snprintf(buf, sizeof(buf), "%lld", failed[i]);
		ev_cell_set(&c[1], buf, strlen(buf));
		ev_cell_set(&c[2], buf, strlen(buf));
		for (int k = 3; k < 6; k++)
			ev_cell_set(&c[k], "0", 1);
	}
	ev_dash_add(d, EV_DQ_PENDING, p);
	ev_dash_add(d, EV_DQ_FAILED, f);
	ev_rowset_free(&p);
	ev_rowset_free(&f);
	ev_dash_finish(d);
	return d;
}

START_TEST(dashboards_merge)
{
	struct ev_dash_req req = {
	        .table = EV_TABLE_OUTBOX, .dimension = "event_type", .window_s = 3600};
	const char *g1[] = {"PAY", "ORDER"};
	const long long p1[] = {5, 1}, f1[] = {2, 7};
	const char *g2[] = {"ORDER", "STOCK"};
	const long long p2[] = {4, 3}, f2[] = {1, 0};
	struct ev_dash *parts[3];
	parts[0] = dash_of(&req, 2, g1, p1, f1, 100);
	parts[1] = dash_of(&req, 2, g2, p2, f2, 500);
	parts[2] = NULL;
	const char *names[] = {"s1", "s2", "s3"};

	struct ev_dash *m = ev_dash_merged(parts, names, 2, &req);
	ck_assert_uint_eq(m->nrows, 3);
	const struct ev_dash_row *order = ev_dash_find(m, "ORDER");
	ck_assert_ptr_nonnull(order);
	ck_assert_int_eq(order->f[EV_DASH_PENDING].value, 5);
	ck_assert_int_eq(order->f[EV_DASH_FAILED].value, 8);
	ck_assert_int_eq(order->f[EV_DASH_FAILED_DUE].value, 8);
	/* The oldest is the larger age of the two sources. */
	ck_assert_int_eq(order->f[EV_DASH_OLDEST_PENDING_AGE].value, 500);
	ck_assert_int_eq(ev_dash_find(m, "STOCK")->f[EV_DASH_PENDING].value, 3);
	ck_assert_int_eq(m->total.f[EV_DASH_PENDING].value, 13);
	ck_assert_int_eq(m->total.f[EV_DASH_FAILED].value, 10);
	ck_assert_int_eq(m->total.f[EV_DASH_OLDEST_PENDING_AGE].value, 501);
	ck_assert(!m->total.f[EV_DASH_PENDING].capped);
	/* Most backlog first: ORDER (13), then PAY (7), then STOCK (3). */
	ck_assert_str_eq(m->rows[0].group, "ORDER");
	ck_assert_str_eq(m->rows[1].group, "PAY");
	ev_dash_free(&m);

	/* A source that did not answer: every figure is a lower bound. */
	m = ev_dash_merged(parts, names, 3, &req);
	ck_assert_int_eq(m->total.f[EV_DASH_PENDING].value, 13);
	ck_assert(m->total.f[EV_DASH_PENDING].capped);
	ck_assert(ev_dash_find(m, "PAY")->f[EV_DASH_FAILED].capped);
	char buf[32];
	ck_assert_str_eq(ev_figure_format(&m->total.f[EV_DASH_PENDING], buf, sizeof(buf)), "≥13");
	ev_dash_free(&m);

	/* Unknown figures and notes carry over, named by their source. */
	ev_dash_unknown(parts[1], EV_DQ_FAILED, "timed out");
	m = ev_dash_merged(parts, names, 2, &req);
	ck_assert(m->total.f[EV_DASH_FAILED].unknown);
	ck_assert(!m->total.f[EV_DASH_PENDING].unknown);
	ck_assert_ptr_nonnull(m->notes);
	ck_assert_msg(strstr(m->notes, "s2: ") != NULL, "notes: %s", m->notes);
	ev_dash_free(&m);
	ev_dash_free(&parts[0]);
	ev_dash_free(&parts[1]);
}
END_TEST

/* Rows of a list result: (sort value or NULL, id). */
static struct ev_rowset *rows(int n, const char *const *values, const unsigned *ids)
{
	static const char *names[] = {"id", "next_retry_time"};
	static const enum ev_ctype types[] = {EV_CT_ID, EV_CT_DATETIME};
	struct ev_rowset *rs = ev_rowset_new(2, names, types);
	char buf[24];
	for (int i = 0; i < n; i++) {
		struct ev_cell *c = ev_rowset_add_row(rs);
		snprintf(buf, sizeof(buf), "%u", ids[i]);
		ev_cell_set(&c[0], buf, strlen(buf));
		ev_cell_set(&c[1], values[i], values[i] ? strlen(values[i]) : 0);
	}
	return rs;
}

START_TEST(rows_order_across_sources)
{
	struct ev_query q = {.sort_col = "next_retry_time", .sort_nullable = true};
	const char *va[] = {NULL, "2026-06-01 10:00:00", "2026-06-01 10:00:00"};
	const unsigned ia[] = {9, 3, 10};
	const char *vb[] = {"2026-06-01 09:59:59", "2026-06-01 10:00:00"};
	const unsigned ib[] = {50, 4};
	struct ev_rowset *a = rows(3, va, ia), *b = rows(2, vb, ib);

	/* NULL first ascending; then by value; then by id (numerically: 9 < 10). */
	ck_assert_int_lt(ev_list_row_cmp(&q, a, 0, b, 0), 0);
	ck_assert_int_gt(ev_list_row_cmp(&q, a, 1, b, 0), 0);
	ck_assert_int_lt(ev_list_row_cmp(&q, a, 1, b, 1), 0); /* id 3 < 4 */
	ck_assert_int_gt(ev_list_row_cmp(&q, a, 2, b, 1), 0); /* id 10 > 4 */
	ck_assert_int_eq(ev_list_row_cmp(&q, a, 1, a, 1), 0);
	/* Descending reverses all of it: NULL last. */
	q.sort_desc = true;
	ck_assert_int_gt(ev_list_row_cmp(&q, a, 0, b, 0), 0);
	ck_assert_int_gt(ev_list_row_cmp(&q, a, 1, b, 1), 0);
	/* No sort column: by id alone. */
	q.sort_col = NULL;
	q.sort_desc = false;
	ck_assert_int_gt(ev_list_row_cmp(&q, a, 2, a, 0), 0);
	ev_rowset_free(&a);
	ev_rowset_free(&b);
}
END_TEST

START_TEST(multi_cursor_round_trip)
{
	struct ev_mcursor v[3];
	memset(v, 0, sizeof(v));
	snprintf(v[0].name, sizeof(v[0].name), "shard-1");
	v[0].state = EV_MC_AT;
	v[0].c.set = true;
	v[0].c.id = 18446744073709551615ULL;
	snprintf(v[0].c.value, sizeof(v[0].c.value), "2026-06-01 10:00:00");
	snprintf(v[1].name, sizeof(v[1].name), "shard.2");
	v[1].state = EV_MC_START;
	snprintf(v[2].name, sizeof(v[2].name), "s_3");
	v[2].state = EV_MC_AT;
	v[2].c.set = true;
	v[2].c.value_null = true;
	v[2].c.id = 7;
	char *s = ev_mcursor_encode(v, 3);
	ck_assert_str_eq(s, "m1,shard-1=v1:18446744073709551615:2026-06-01T10:00:00,shard.2=-,"
	                    "s_3=v1:7:~");
	ck_assert_ptr_null(strchr(s, ' '));
	struct ev_mcursor *back = NULL;
	int n = 0;
	struct ev_error err = {0};
	ck_assert_int_eq(ev_mcursor_decode(s, &back, &n, &err), 0);
	ck_assert_int_eq(n, 3);
	ck_assert_str_eq(back[0].name, "shard-1");
	ck_assert_int_eq(back[0].state, EV_MC_AT);
	ck_assert(back[0].c.id == 18446744073709551615ULL);
	ck_assert_str_eq(back[0].c.value, "2026-06-01 10:00:00");
	ck_assert_int_eq(back[1].state, EV_MC_START);
	ck_assert(back[2].c.value_null);
	ck_assert(back[2].c.id == 7);
	free(back);
	free(s);

	v[1].state = EV_MC_DONE;
	s = ev_mcursor_encode(v, 2);
	ck_assert_ptr_nonnull(strstr(s, "shard.2=."));
	ck_assert_int_eq(ev_mcursor_decode(s, &back, &n, &err), 0);
	ck_assert_int_eq(back[1].state, EV_MC_DONE);
	free(back);
	free(s);

	static const char *const bad[] = {"v1:3:~",           "m1,",        "m1,=v1:3:~",
	                                  "m1,a=v1:x:~",      "m1,a",       "m1,a=v1:3:bogus",
	                                  "m1,a=v1:3:~,b=?+", "m2,a=v1:3:~"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		back = NULL;
		ck_assert_msg(ev_mcursor_decode(bad[i], &back, &n, &err) < 0, "accepted %s",
		              bad[i]);
		ck_assert_ptr_null(back);
		ck_assert_int_eq(err.code, EV_ERR_USAGE);
	}
}
END_TEST

/* Three sources' pages merged into pages of 3: the order across sources, each row named by its
 * source, each source's cursor after the rows it gave, a source that did not answer kept at
 * its start, one that ran out done. */
START_TEST(pages_merge_across_sources)
{
	struct ev_query q = {.sort_col = "next_retry_time", .sort_nullable = true};
	const char *va[] = {NULL, "2026-06-01 10:00:00", "2026-06-01 11:00:00",
	                    "2026-06-01 12:00:00"};
	const unsigned ia[] = {9, 3, 1, 2};
	const char *vb[] = {"2026-06-01 09:00:00"};
	const unsigned ib[] = {50};
	struct ev_rowset *rs[3] = {rows(4, va, ia), rows(1, vb, ib), NULL};
	struct ev_query *qs[3] = {&q, &q, NULL};
	const char *names[3] = {"sa", "sb", "sc"};
	struct ev_mcursor mc[3];
	memset(mc, 0, sizeof(mc));
	bool more = false;

	struct ev_rowset *m = ev_list_merge(qs, rs, names, 3, 3, NULL, mc, &more);
	ck_assert_ptr_nonnull(m);
	ck_assert_int_eq((int)m->nrows, 3);
	ck_assert_str_eq(m->cols[0].name, EV_SOURCE_COL);
	static const char *const want[][2] = {{"sa", "9"}, {"sb", "50"}, {"sa", "3"}};
	for (size_t r = 0; r < 3; r++) {
		ck_assert_str_eq(ev_rowset_get(m, r, EV_SOURCE_COL), want[r][0]);
		ck_assert_str_eq(ev_rowset_get(m, r, "id"), want[r][1]);
	}
	/* sa gave two rows (its page had more), sb its only one, sc did not answer. */
	ck_assert_int_eq(mc[0].state, EV_MC_AT);
	ck_assert(mc[0].c.id == 3);
	ck_assert_str_eq(mc[0].c.value, "2026-06-01 10:00:00");
	ck_assert_int_eq(mc[1].state, EV_MC_DONE);
	ck_assert_int_eq(mc[2].state, EV_MC_START);
	ck_assert(more);
	ev_rowset_free(&m);

	/* Nothing read: no page. */
	struct ev_rowset *none[3] = {NULL, NULL, NULL};
	ck_assert_ptr_null(ev_list_merge(qs, none, names, 3, 3, NULL, mc, &more));
	for (int i = 0; i < 2; i++)
		ev_rowset_free(&rs[i]);
}
END_TEST

/* Breakdowns of one list on three sources merged: a group's counts summed and its oldest
 * kept, by count then group (NULL first); a source not read adds nothing. */
static struct ev_rowset *groups(int n, const char *const *grp, const char *const *cnt,
                                const char *const *oldest)
{
	static const char *names[] = {"grp", "COUNT(*)", "MIN(create_time)"};
	static const enum ev_ctype types[] = {EV_CT_TEXT, EV_CT_INT, EV_CT_DATETIME};
	struct ev_rowset *rs = ev_rowset_new(3, names, types);
	for (int i = 0; i < n; i++) {
		struct ev_cell *c = ev_rowset_add_row(rs);
		ev_cell_set(&c[0], grp[i], grp[i] ? strlen(grp[i]) : 0);
		ev_cell_set(&c[1], cnt[i], strlen(cnt[i]));
		ev_cell_set(&c[2], oldest[i], oldest[i] ? strlen(oldest[i]) : 0);
	}
	return rs;
}

START_TEST(breakdowns_merge_across_sources)
{
	const char *ga[] = {"timeout", NULL, "超时"};
	const char *ca[] = {"5", "2", "1"};
	const char *oa[] = {"2026-06-01 10:00:00", "2026-05-30 00:00:00", "2026-06-01 11:00:00"};
	const char *gb[] = {"timeout", "超时"};
	const char *cb[] = {"4", "2"};
	const char *ob[] = {"2026-05-31 09:00:00", "2026-06-01 12:00:00"};
	struct ev_rowset *parts[3] = {groups(3, ga, ca, oa), NULL, groups(2, gb, cb, ob)};

	struct ev_rowset *m = ev_group_merge(parts, 3);
	ck_assert_ptr_nonnull(m);
	ck_assert_int_eq((int)m->nrows, 3);
	/* By count: timeout 9, 超时 3, then the rows without a reason, 2. */
	ck_assert_str_eq(ev_rowset_get(m, 0, "grp"), "timeout");
	ck_assert_str_eq(ev_rowset_cell(m, 0, 1)->s, "9");
	ck_assert_str_eq(ev_rowset_cell(m, 0, 2)->s, "2026-05-31 09:00:00");
	ck_assert_str_eq(ev_rowset_get(m, 1, "grp"), "超时");
	ck_assert_str_eq(ev_rowset_cell(m, 1, 1)->s, "3");
	ck_assert_str_eq(ev_rowset_cell(m, 1, 2)->s, "2026-06-01 11:00:00");
	ck_assert_ptr_null(ev_rowset_cell(m, 2, 0)->s);
	ck_assert_str_eq(ev_rowset_cell(m, 2, 1)->s, "2");
	ev_rowset_free(&m);

	/* Equal counts: by group, NULL first. */
	const char *gc[] = {"b", "a", NULL};
	const char *cc[] = {"1", "1", "1"};
	const char *oc[] = {NULL, NULL, NULL};
	struct ev_rowset *one[1] = {groups(3, gc, cc, oc)};
	m = ev_group_merge(one, 1);
	ck_assert_ptr_null(ev_rowset_cell(m, 0, 0)->s);
	ck_assert_str_eq(ev_rowset_cell(m, 1, 0)->s, "a");
	ck_assert_str_eq(ev_rowset_cell(m, 2, 0)->s, "b");
	ck_assert_ptr_null(ev_rowset_cell(m, 0, 2)->s);
	ev_rowset_free(&m);
	ev_rowset_free(&one[0]);

	struct ev_rowset *none[2] = {NULL, NULL};
	ck_assert_ptr_null(ev_group_merge(none, 2));
	ev_rowset_free(&parts[0]);
	ev_rowset_free(&parts[2]);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("sources");
	TCase *tc = tcase_create("core");
	tcase_add_test(tc, read_endpoint_settings);
	tcase_add_test(tc, bad_source_settings);
	tcase_add_test(tc, dashboards_merge);
	tcase_add_test(tc, rows_order_across_sources);
	tcase_add_test(tc, multi_cursor_round_trip);
	tcase_add_test(tc, pages_merge_across_sources);
	tcase_add_test(tc, breakdowns_merge_across_sources);
	suite_add_tcase(s, tc);
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? 0 : 1;
}
