/* core/audit: the audit read's filter, its exact SQL and parameters (by time, by event_no,
 * capped, one event's history), its cursors with milliseconds, and its words. */
#include <config.h>

#include "core/audit.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define COLS                                                                                       \
	"id, audit_time, source, os_user, sudo_user, ssh_connection, operator, db_user, "          \
	"table_name, event_id, event_no, action, before_status, before_retry_count, "              \
	"before_max_retry_count, before_next_retry_time, before_version, after_status, reason, "   \
	"result"

static struct ev_table_info info_with(const char *const *names, const char *const *cols, int n)
{
	struct ev_table_info ti = {.exists = true};
	ti.nindexes = (size_t)n;
	ti.indexes = calloc((size_t)n, sizeof(*ti.indexes));
	for (int i = 0; i < n; i++) {
		ti.indexes[i].name = strdup(names[i]);
		ti.indexes[i].columns = strdup(cols[i]);
	}
	return ti;
}

static struct ev_table_info audit_info(void)
{
	static const char *const names[] = {"PRIMARY", "idx_audit_time", "idx_table_event",
	                                    "idx_event_no"};
	static const char *const cols[] = {"id", "audit_time", "table_name,event_id", "event_no"};
	return info_with(names, cols, 4);
}

START_TEST(by_time_sql)
{
	struct ev_table_info ti = audit_info();
	struct ev_error err = {0};
	struct ev_audit_req req = {.info = &ti, .limit = 50};
	struct ev_query *q = ev_query_audit(&req, &err);
	ck_assert_ptr_nonnull(q);
	ck_assert_str_eq(q->name, "audit.by_time");
	ck_assert_str_eq(q->sql, "/* evtop:audit.by_time */ SELECT " COLS " FROM `evtop_audit` "
	                         "FORCE INDEX (`idx_audit_time`) ORDER BY audit_time DESC, id "
	                         "DESC LIMIT ?");
	ck_assert_uint_eq(q->nparams, 1);
	ck_assert_int_eq(q->params[0].i, 51);
	ck_assert_uint_eq(q->ncols, 20);
	ck_assert(!q->search);
	ck_assert_str_eq(q->sort_col, "audit_time");
	ck_assert(q->sort_desc);
	ck_assert_ptr_null(q->sort_mid);
	ev_query_free(&q);

	/* The next page: the seek expanded, the milliseconds kept. */
	ck_assert_int_eq(ev_cursor_decode("v1:18446744073709551615:2026-06-01T10:00:00.250",
	                                  &req.after, &err),
	                 0);
	struct ev_audit_filter f = {0};
	ck_assert_int_eq(
	        ev_audit_filter_parse(&f, "since=2026-06-01 until=\"2026-06-02 10:00\"", &err), 0);
	req.filter = &f;
	q = ev_query_audit(&req, &err);
	ck_assert_str_eq(q->sql, "/* evtop:audit.by_time */ SELECT " COLS " FROM `evtop_audit` "
	                         "FORCE INDEX (`idx_audit_time`) WHERE audit_time >= ? AND "
	                         "audit_time < ? AND (audit_time < ? OR (audit_time = ? AND id < "
	                         "?)) ORDER BY audit_time DESC, id DESC LIMIT ?");
	ck_assert_uint_eq(q->nparams, 6);
	ck_assert_str_eq(q->params[0].s, "2026-06-01 00:00:00");
	ck_assert_str_eq(q->params[1].s, "2026-06-02 10:00:00");
	ck_assert_str_eq(q->params[2].s, "2026-06-01 10:00:00.250");
	ck_assert_str_eq(q->params[3].s, "2026-06-01 10:00:00.250");
	ck_assert_int_eq(q->params[4].type, EV_P_UINT);
	ck_assert_uint_eq(q->params[4].u, 18446744073709551615ULL);
	ev_query_free(&q);
	ev_audit_filter_free(&f);
	ev_table_info_clear(&ti);
}
END_TEST

START_TEST(by_event_no_sql)
{
	struct ev_table_info ti = audit_info();
	struct ev_error err = {0};
	struct ev_audit_filter f = {0};
	ck_assert_int_eq(ev_audit_filter_parse(&f, "event_no=E-1", &err), 0);
	struct ev_audit_req req = {.info = &ti, .filter = &f, .limit = 10};
	struct ev_query *q = ev_query_audit(&req, &err);
	ck_assert_str_eq(q->name, "audit.by_event_no");
	ck_assert_str_eq(q->sql, "/* evtop:audit.by_event_no */ SELECT " COLS " FROM `evtop_audit` "
	                         "FORCE INDEX (`idx_event_no`) WHERE event_no = ? ORDER BY "
	                         "audit_time DESC, id DESC LIMIT ?");
	ck_assert_str_eq(q->params[0].s, "E-1");
	ev_query_free(&q);
	/* Without the index: not run, said. */
	static const char *const names[] = {"PRIMARY"};
	static const char *const cols[] = {"id"};
	struct ev_table_info bare = info_with(names, cols, 1);
	req.info = &bare;
	ck_assert_ptr_null(ev_query_audit(&req, &err));
	ck_assert_int_eq(err.code, EV_ERR_SCHEMA);
	ck_assert_str_eq(err.msg, "n/a — evtop_audit needs an index on (event_no)");
	/* Without info (a table the account cannot see): no hint. */
	req.info = NULL;
	q = ev_query_audit(&req, &err);
	ck_assert_ptr_null(strstr(q->sql, "FORCE"));
	ev_query_free(&q);
	ev_table_info_clear(&bare);
	ev_audit_filter_free(&f);
	ev_table_info_clear(&ti);
}
END_TEST

START_TEST(capped_sql)
{
	struct ev_table_info ti = audit_info();
	struct ev_error err = {0};
	struct ev_audit_filter f = {0};
	ck_assert_int_eq(ev_audit_filter_parse(&f, "operator=INC-7 result=applied", &err), 0);
	ck_assert(ev_audit_filter_capped(&f));
	struct ev_audit_req req = {.info = &ti, .filter = &f, .limit = 10, .cap = 500};
	struct ev_query *q = ev_query_audit(&req, &err);
	ck_assert(q->search);
	ck_assert_int_eq(q->search_cap, 500);
	ck_assert_uint_eq(q->ncols, 23);
	ck_assert_str_eq(q->col_names[22], "_hit");
	ck_assert_ptr_nonnull(strstr(q->sql, "IFNULL(a.operator = ? AND a.result = ?, 0) AS _hit"));
	ck_assert_ptr_nonnull(strstr(q->sql,
	                             "FROM (SELECT id AS _sid, audit_time AS _k1 FROM "
	                             "`evtop_audit` FORCE INDEX (`idx_audit_time`) ORDER BY "
	                             "audit_time DESC, id DESC LIMIT ?) _c"));
	ck_assert_ptr_nonnull(strstr(q->sql, "WHERE _hit = 1 OR _rn = _n ORDER BY _rn LIMIT ?"));
	ck_assert_uint_eq(q->nparams, 4);
	ck_assert_str_eq(q->params[0].s, "INC-7");
	ck_assert_str_eq(q->params[1].s, "applied");
	ck_assert_int_eq(q->params[2].i, 500);
	ck_assert_int_eq(q->params[3].i, 11);
	ev_query_free(&q);
	/* The default cap: the lists' search cap. */
	req.cap = 0;
	q = ev_query_audit(&req, &err);
	ck_assert_int_eq(q->search_cap, EV_SEARCH_CAP_DEFAULT);
	ev_query_free(&q);
	ev_audit_filter_free(&f);
	ev_table_info_clear(&ti);
}
END_TEST

START_TEST(event_sql)
{
	struct ev_table_info ti = audit_info();
	struct ev_error err = {0};
	struct ev_query *q = ev_query_audit_event(&ti, "biz_outbox_event", 18446744073709551615ULL,
	                                          EV_AUDIT_EVENT_ROWS, &err);
	ck_assert_str_eq(q->sql, "/* evtop:audit.event */ SELECT " COLS " FROM `evtop_audit` "
	                         "FORCE INDEX (`idx_table_event`) WHERE table_name = ? AND "
	                         "event_id = ? ORDER BY audit_time DESC, id DESC LIMIT ?");
	ck_assert_str_eq(q->params[0].s, "biz_outbox_event");
	ck_assert_uint_eq(q->params[1].u, 18446744073709551615ULL);
	ck_assert_int_eq(q->params[2].i, 20);
	ev_query_free(&q);
	ev_table_info_clear(&ti);
}
END_TEST

START_TEST(filter_parse)
{
	struct ev_audit_filter f = {0};
	struct ev_error err = {0};
	ck_assert_int_eq(ev_audit_filter_parse(&f,
	                                       "  operator=\"INC 7\" action=cancel "
	                                       "event-no=E-1 table=biz_outbox_event",
	                                       &err),
	                 0);
	ck_assert_str_eq(f.operator_id, "INC 7");
	ck_assert_str_eq(f.action, "cancel");
	ck_assert_str_eq(f.event_no, "E-1");
	ck_assert_str_eq(f.table_name, "biz_outbox_event");
	/* A bad term leaves the filter as it was. */
	ck_assert_int_eq(ev_audit_filter_parse(&f, "operator=B colour=red", &err), -1);
	ck_assert_str_eq(err.msg, "audit filter: unknown key 'colour' (operator, action, event_no, "
	                          "table, result, since, until)");
	ck_assert_str_eq(f.operator_id, "INC 7");
	ck_assert_int_eq(ev_audit_filter_parse(&f, "since=yesterday", &err), -1);
	ck_assert_int_eq(ev_audit_filter_parse(&f, "operator", &err), -1);
	ck_assert_int_eq(ev_audit_filter_parse(&f, "operator=\"open", &err), -1);
	ck_assert_int_eq(ev_audit_filter_parse(&f, "operator=", &err), -1);
	char longer[200];
	memset(longer, 'x', sizeof(longer) - 1);
	longer[sizeof(longer) - 1] = '\0';
	ck_assert_int_eq(ev_audit_filter_set(&f, "operator", longer, &err), -1);
	/* 128 CJK characters fit the VARCHAR(128). */
	char cjk[128 * 3 + 1] = "";
	for (int i = 0; i < 128; i++)
		strcat(cjk, "值");
	ck_assert_int_eq(ev_audit_filter_set(&f, "operator", cjk, &err), 0);
	ck_assert_int_eq(ev_audit_filter_parse(&f, "", &err), 0);
	ck_assert_ptr_null(f.operator_id);
	ck_assert(!ev_audit_filter_capped(&f));
	ev_audit_filter_free(&f);
}
END_TEST

START_TEST(words)
{
	char *s = ev_audit_change_text(EV_TABLE_MESSAGE, "3", "0");
	ck_assert_str_eq(s, "3 failed → 0 pending");
	free(s);
	s = ev_audit_change_text(EV_TABLE_MESSAGE, "1", NULL);
	ck_assert_str_eq(s, "1 processing → not applied");
	free(s);
	/* Each table names its states: the outbox publishes. */
	s = ev_audit_change_text(EV_TABLE_OUTBOX, "1", "2");
	ck_assert_str_eq(s, "1 publishing → 2 published");
	free(s);
	s = ev_audit_change_text(-1, "1", "2");
	ck_assert_str_eq(s, "1 → 2");
	free(s);
	s = ev_audit_change_text(EV_TABLE_OUTBOX, "9", "x");
	ck_assert_str_eq(s, "9 → x");
	free(s);
	ck_assert_int_eq(ev_audit_status("4"), 4);
	ck_assert_int_eq(ev_audit_status("5"), -1);
	ck_assert_int_eq(ev_audit_status("1x"), -1);
	ck_assert_int_eq(ev_audit_status(NULL), -1);
	s = ev_audit_who_text("INC-7", "alice", "bob");
	ck_assert_str_eq(s, "INC-7 (alice via sudo bob)");
	free(s);
	s = ev_audit_who_text(NULL, "alice", NULL);
	ck_assert_str_eq(s, "- (alice)");
	free(s);

	char out[512];
	struct ev_error e = {.code = 1142};
	ev_audit_error_text(&e, "mariadb", "'watch'@'%'", out, sizeof(out));
	ck_assert_str_eq(out, "no SELECT on evtop_audit for 'watch'@'%': GRANT SELECT ON "
	                      "evtop_audit (optional for watching, sql/grants.sql; "
	                      "doc/privileges.md); nothing changed");
	e.code = EV_ERR_SCHEMA;
	snprintf(e.msg, sizeof(e.msg), "missing table: Table 'x.evtop_audit' doesn't exist");
	ev_audit_error_text(&e, "mysql8", NULL, out, sizeof(out));
	ck_assert_str_eq(out, "no evtop_audit table in this database: sql/mysql8/audit.sql creates "
	                      "it");
	e.code = EV_ERR_CONNECT;
	snprintf(e.msg, sizeof(e.msg), "connection lost: gone");
	ev_audit_error_text(&e, "mariadb", NULL, out, sizeof(out));
	ck_assert_str_eq(out, "connection lost: gone");
}
END_TEST

START_TEST(cursor_milliseconds)
{
	struct ev_cursor c;
	struct ev_error err = {0};
	ck_assert_int_eq(ev_cursor_decode("v1:7:2026-06-01T10:00:00.125", &c, &err), 0);
	ck_assert_str_eq(c.value, "2026-06-01 10:00:00.125");
	char *s = ev_cursor_encode(&c);
	ck_assert_str_eq(s, "v1:7:2026-06-01T10:00:00.125");
	free(s);
	ck_assert_int_eq(ev_cursor_decode("v1:7:2026-06-01T10:00:00.", &c, &err), -1);
	ck_assert_int_eq(ev_cursor_decode("v1:7:2026-06-01T10:00:00.1234567", &c, &err), -1);
	ck_assert_int_eq(ev_cursor_decode("v1:7:2026-06-01T10:00:00.12a", &c, &err), -1);
	/* The lists' cursors as before. */
	ck_assert_int_eq(ev_cursor_decode("v1:7:2026-06-01T10:00:00", &c, &err), 0);
	ck_assert_str_eq(c.value, "2026-06-01 10:00:00");
	/* A list's cursor (a second key) is not the audit's. */
	struct ev_audit_req req = {.limit = 5};
	ck_assert_int_eq(ev_cursor_decode("v2:7:3:2026-06-01T10:00:00", &req.after, &err), 0);
	ck_assert_ptr_null(ev_query_audit(&req, &err));
	req.after = (struct ev_cursor){0};
	req.limit = 0;
	ck_assert_ptr_null(ev_query_audit(&req, &err));
}
END_TEST

int main(void)
{
	Suite *s = suite_create("audit");
	TCase *tc = tcase_create("audit");
	tcase_add_test(tc, by_time_sql);
	tcase_add_test(tc, by_event_no_sql);
	tcase_add_test(tc, capped_sql);
	tcase_add_test(tc, event_sql);
	tcase_add_test(tc, filter_parse);
	tcase_add_test(tc, words);
	tcase_add_test(tc, cursor_milliseconds);
	suite_add_tcase(s, tc);
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? 0 : 1;
}
