/* The shared audit read against the real evtop_audit (sql/mariadb/audit.sql): 3,000 rows with
 * many audit_time ties (at the millisecond), ids past 2^63, NULL operators; paged with evtop's
 * own cursors (as text, the milliseconds kept) each row comes back exactly once, newest first,
 * as the reference query orders them; the indexed filters (event_no, since/until) and the
 * capped ones (operator, action, table, result) give the reference's rows, the capped ones
 * examining at most the cap a page and saying so; every statement's EXPLAIN uses the index it
 * names; one event's history; a missing table said as such. */
#include <config.h>

#include "testdb.h"

#include "core/audit.h"
#include "core/config.h"
#include "core/query.h"
#include "core/rowset.h"
#include "db/audit.h"
#include "db/conn.h"

#include <check.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NROWS 3000

static MYSQL *g_db;
static struct ev_config g_cfg;
static struct ev_conn *g_conn;
static struct ev_table_info g_info;

/* Times: 400 of them 250 ms apart (about 7 rows a tie). Ids: 3 * seq, and 2^64 - 1 - seq for
 * every 1000th. operator NULL every 5th, else A or B; four actions; two tables; 500 events. */
static void seed(void)
{
	tdb_exec(g_db,
	         "INSERT INTO evtop_audit (id, audit_time, source, os_user, sudo_user, operator, "
	         "db_user, table_name, event_id, event_no, action, before_status, "
	         "before_retry_count, before_max_retry_count, before_next_retry_time, "
	         "before_version, after_status, reason, result) "
	         "SELECT IF(seq %% 1000 = 0, 18446744073709551615 - seq, seq * 3), "
	         "TIMESTAMP'2026-06-01 10:00:00' + INTERVAL ((seq * 7) %% 400) * 250000 "
	         "MICROSECOND, 'default', 'ops', IF(seq %% 11 = 0, 'root', NULL), "
	         "IF(seq %% 5 = 0, NULL, IF(seq %% 2 = 0, 'A', 'B')), 'evtop@localhost', "
	         "IF(seq %% 3 = 0, 'biz_message_event', 'biz_outbox_event'), seq %% 500 + 1, "
	         "CONCAT('AU-', seq %% 500), ELT(1 + seq %% 4, 'retry_now', 'retry_schedule', "
	         "'cancel', 'recover'), 3, seq %% 4, 5, NULL, seq %% 9, "
	         "IF(seq %% 7 = 0, NULL, 0), IF(seq %% 13 = 0, NULL, 'because'), "
	         "IF(seq %% 7 = 0, 'skipped', 'applied') FROM seq_1_to_%d",
	         NROWS);
}

static void setup(void)
{
	struct ev_error err = {0};

	g_db = tdb_connect();
	tdb_exec(g_db, "SET timestamp = UNIX_TIMESTAMP('2026-06-01 12:00:00')");
	if (tdb_int(g_db, "SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = "
	                  "DATABASE() AND TABLE_NAME = 'evtop_audit_gone'") > 0)
		tdb_exec(g_db, "RENAME TABLE evtop_audit_gone TO evtop_audit");
	if (tdb_int(g_db, "SELECT COUNT(*) FROM evtop_audit") == 0) {
		seed();
		tdb_exec(g_db, "ANALYZE TABLE evtop_audit");
	}
	ck_assert_int_eq(tdb_int(g_db, "SELECT COUNT(*) FROM evtop_audit"), NROWS);
	ev_config_init(&g_cfg);
	struct ev_source *src = &g_cfg.sources[0];
	free(src->defaults_file);
	src->defaults_file = tdb_pinned_defaults("2026-06-01 12:00:00");
	g_conn = ev_conn_new(src, &g_cfg);
	if (ev_conn_connect(g_conn, &err) != 0)
		ck_abort_msg("evtop cannot connect: %s", err.msg);
	memset(&g_info, 0, sizeof(g_info));
	if (ev_audit_table_info(g_conn, &g_info, &err) != 0)
		ck_abort_msg("table info: %s", err.msg);
	ck_assert(g_info.exists);
}

static void teardown(void)
{
	ev_table_info_clear(&g_info);
	ev_conn_free(&g_conn);
	ev_config_free(&g_cfg);
	mysql_close(g_db);
	g_db = NULL;
}

/* The ids a reference query returns, in its order, joined by ','. */
static char *reference(const char *where)
{
	tdb_exec(g_db, "SET SESSION group_concat_max_len = 1000000");
	return tdb_scalar(g_db,
	                  "SELECT IFNULL(GROUP_CONCAT(id ORDER BY audit_time DESC, id DESC), '') "
	                  "FROM evtop_audit%s%s",
	                  where[0] ? " WHERE " : "", where);
}

struct paged {
	struct ev_buf ids;
	size_t rows;
	int pages, stopped;
	unsigned long long max_examined;
	char last_note[300];
};

/* Page through the audit with filter f, size rows a page, the cursor passed as text. */
static void page_all(const struct ev_audit_filter *f, int size, long long cap, struct paged *out)
{
	struct ev_audit_req req = {.info = &g_info, .filter = f, .limit = size, .cap = cap};
	memset(out, 0, sizeof(*out));
	ev_buf_init(&out->ids);
	ev_buf_add(&out->ids, "", 0);
	for (;;) {
		struct ev_error err = {0};
		struct ev_rowset *rs = NULL;
		struct ev_query *q = NULL;
		struct ev_list_page pg;

		ck_assert_int_lt(out->pages++, NROWS + 2);
		if (ev_audit_read_page(g_conn, &req, &q, &rs, &err) != 0)
			ck_abort_msg("page %d: %s\n  %s", out->pages, err.msg, q ? q->sql : "");
		ev_list_take_page(q, &rs, &pg);
		ck_assert_uint_le(rs->nrows, (size_t)size);
		for (size_t r = 0; r < rs->nrows; r++)
			ev_buf_printf(&out->ids, "%s%s", out->ids.len ? "," : "",
			              ev_rowset_get(rs, r, "id"));
		out->rows += rs->nrows;
		if (pg.search) {
			ck_assert_uint_le(pg.examined, (unsigned long long)cap);
			if (pg.examined > out->max_examined)
				out->max_examined = pg.examined;
			out->stopped += pg.stopped;
			char *note = ev_list_search_note(&pg, rs->nrows);
			snprintf(out->last_note, sizeof(out->last_note), "%s", note);
			free(note);
		}
		ev_rowset_free(&rs);
		ev_query_free(&q);
		if (!pg.more)
			break;
		char *s = ev_cursor_encode(&pg.next);
		ck_assert_int_eq(ev_cursor_decode(s, &req.after, &err), 0);
		free(s);
	}
}

START_TEST(every_row_once)
{
	struct paged p;
	page_all(NULL, 100, 0, &p);
	char *want = reference("");
	ck_assert_uint_eq(p.rows, NROWS);
	ck_assert_int_eq(p.pages, NROWS / 100);
	ck_assert_str_eq(p.ids.data, want);
	free(want);
	ev_buf_free(&p.ids);
	/* Another page size: the cut falls inside the ties elsewhere. */
	page_all(NULL, 7, 0, &p);
	want = reference("");
	ck_assert_str_eq(p.ids.data, want);
	free(want);
	ev_buf_free(&p.ids);
}
END_TEST

START_TEST(indexed_filters)
{
	struct ev_audit_filter f = {0};
	struct ev_error err = {0};
	struct paged p;

	ck_assert_int_eq(ev_audit_filter_parse(&f, "event_no=AU-7", &err), 0);
	page_all(&f, 2, 0, &p);
	char *want = reference("event_no = 'AU-7'");
	ck_assert_uint_eq(p.rows, 6);
	ck_assert_str_eq(p.ids.data, want);
	free(want);
	ev_buf_free(&p.ids);

	ck_assert_int_eq(ev_audit_filter_parse(&f,
	                                       "since=\"2026-06-01 10:00:30\" until=\"2026-06-01 "
	                                       "10:00:40\"",
	                                       &err),
	                 0);
	page_all(&f, 50, 0, &p);
	want = reference("audit_time >= '2026-06-01 10:00:30' AND audit_time < '2026-06-01 "
	                 "10:00:40'");
	ck_assert_uint_eq(p.rows, (size_t)tdb_int(g_db, "SELECT COUNT(*) FROM evtop_audit WHERE "
	                                                "audit_time >= '2026-06-01 10:00:30' AND "
	                                                "audit_time < '2026-06-01 10:00:40'"));
	ck_assert_uint_gt(p.rows, 250);
	ck_assert_str_eq(p.ids.data, want);
	free(want);
	ev_buf_free(&p.ids);
	ev_audit_filter_free(&f);
}
END_TEST

START_TEST(capped_filters)
{
	struct ev_audit_filter f = {0};
	struct ev_error err = {0};
	struct paged p;

	/* A third of the rows match: 50 matches fill a page before 500 rows are looked at. */
	ck_assert_int_eq(ev_audit_filter_parse(&f, "operator=A action=cancel", &err), 0);
	page_all(&f, 50, 500, &p);
	char *want = reference("operator = 'A' AND action = 'cancel'");
	ck_assert_str_eq(p.ids.data, want);
	ck_assert_uint_gt(p.rows, 100);
	free(want);
	ev_buf_free(&p.ids);

	/* Rare matches: pages stop at the cap, say so, and the next goes on from there. */
	ck_assert_int_eq(ev_audit_filter_parse(&f,
	                                       "operator=A action=cancel table=biz_message_event "
	                                       "result=skipped",
	                                       &err),
	                 0);
	page_all(&f, 50, 500, &p);
	want = reference("operator = 'A' AND action = 'cancel' AND table_name = "
	                 "'biz_message_event' AND result = 'skipped'");
	ck_assert_str_eq(p.ids.data, want);
	ck_assert_int_ge(p.stopped, 5);
	ck_assert_uint_eq(p.max_examined, 500);
	free(want);
	ev_buf_free(&p.ids);

	/* With an event_no, the capped terms search its rows (idx_event_no). */
	ck_assert_int_eq(ev_audit_filter_parse(&f, "event_no=AU-8 operator=A", &err), 0);
	page_all(&f, 1, 500, &p);
	want = reference("event_no = 'AU-8' AND operator = 'A'");
	ck_assert_str_eq(p.ids.data, want);
	ck_assert_int_eq(p.stopped, 0);
	free(want);
	ev_buf_free(&p.ids);
	ev_audit_filter_free(&f);
}
END_TEST

/* EXPLAIN q as rendered: every row on the audit table itself (not a derived table) has a
 * key and is no full scan; one of them uses index `want`. */
static void explain(const struct ev_query *q, const char *want)
{
	char *sql = ev_query_render(q);
	char *ex = ev_xasprintf("EXPLAIN %s", sql);
	if (mysql_query(g_db, ex) != 0)
		ck_abort_msg("%s: %s\n  %s", q->name, mysql_error(g_db), ex);
	MYSQL_RES *r = mysql_store_result(g_db);
	ck_assert_ptr_nonnull(r);
	unsigned nf = mysql_num_fields(r);
	MYSQL_FIELD *fl = mysql_fetch_fields(r);
	int ct = -1, ck = -1, cty = -1;
	for (unsigned i = 0; i < nf; i++) {
		if (strcmp(fl[i].name, "table") == 0)
			ct = (int)i;
		else if (strcmp(fl[i].name, "key") == 0)
			ck = (int)i;
		else if (strcmp(fl[i].name, "type") == 0)
			cty = (int)i;
	}
	bool used = false;
	MYSQL_ROW row;
	while ((row = mysql_fetch_row(r)) != NULL) {
		const char *table = row[ct] ? row[ct] : "";
		if (getenv("CHECK_AUDIT_SHOW_PLANS") != NULL)
			fprintf(stderr, "%s: table %s type %s key %s\n", q->name, table,
			        row[cty] ? row[cty] : "NULL", row[ck] ? row[ck] : "NULL");
		if (table[0] == '<')
			continue; /* a derived table: bounded by the LIMIT inside it */
		ck_assert_msg(row[ck] != NULL, "%s: no key on %s\n  %s", q->name, table, sql);
		ck_assert_msg(row[cty] == NULL || strcmp(row[cty], "ALL") != 0, "%s: a scan of %s",
		              q->name, table);
		used |= strcmp(row[ck], want) == 0;
	}
	ck_assert_msg(used, "%s: does not use %s\n  %s", q->name, want, sql);
	mysql_free_result(r);
	free(ex);
	free(sql);
}

START_TEST(plans)
{
	struct ev_audit_filter f = {0};
	struct ev_error err = {0};
	struct ev_audit_req req = {.info = &g_info, .filter = &f, .limit = 50};
	struct ev_query *q;

	const char *cases[][2] = {
	        {"", "idx_audit_time"},
	        {"since=2026-06-01 until=2026-06-02", "idx_audit_time"},
	        {"event_no=AU-9", "idx_event_no"},
	        {"operator=A", "idx_audit_time"},
	        {"action=cancel table=biz_outbox_event result=applied since=2026-06-01",
	         "idx_audit_time"},
	        {"event_no=AU-9 operator=B", "idx_event_no"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		ck_assert_int_eq(ev_audit_filter_parse(&f, cases[i][0], &err), 0);
		req.after = (struct ev_cursor){0};
		q = ev_query_audit(&req, &err);
		ck_assert_ptr_nonnull(q);
		explain(q, cases[i][1]);
		/* A later page: with the seek. */
		req.after = (struct ev_cursor){
		        .set = true, .id = 1500, .value = "2026-06-01 10:00:50.250"};
		ev_query_free(&q);
		q = ev_query_audit(&req, &err);
		explain(q, cases[i][1]);
		ev_query_free(&q);
	}
	q = ev_query_audit_event(&g_info, "biz_outbox_event", 8, EV_AUDIT_EVENT_ROWS, &err);
	ck_assert_ptr_nonnull(q);
	explain(q, "idx_table_event");
	ev_query_free(&q);
	ev_audit_filter_free(&f);
}
END_TEST

START_TEST(event_history)
{
	struct ev_error err = {0};
	struct ev_rowset *rs = NULL;
	struct ev_query *q = ev_query_audit_event(&g_info, "biz_outbox_event", 8, 4, &err);
	ck_assert_int_eq(ev_audit_run(g_conn, q, &rs, &err), 0);
	ck_assert_uint_eq(rs->nrows, 4);
	struct ev_buf got;
	ev_buf_init(&got);
	for (size_t r = 0; r < rs->nrows; r++)
		ev_buf_printf(&got, "%s%s", r ? "," : "", ev_rowset_get(rs, r, "id"));
	tdb_exec(g_db, "SET SESSION group_concat_max_len = 1000000");
	char *want = tdb_scalar(g_db, "SELECT GROUP_CONCAT(id ORDER BY audit_time DESC, id DESC) "
	                              "FROM (SELECT id, audit_time FROM evtop_audit WHERE "
	                              "table_name = 'biz_outbox_event' AND event_id = 8 ORDER BY "
	                              "audit_time DESC, id DESC LIMIT 4) t");
	ck_assert_str_eq(got.data, want);
	/* The milliseconds and the ids past 2^63 come back as stored. */
	ck_assert_uint_eq(strlen(ev_rowset_get(rs, 0, "audit_time")), 23);
	free(want);
	ev_buf_free(&got);
	ev_rowset_free(&rs);
	ev_query_free(&q);
	char *big = tdb_scalar(g_db, "SELECT MAX(id) FROM evtop_audit");
	ck_assert_str_eq(big, "18446744073709550615");
	free(big);
}
END_TEST

START_TEST(missing_table)
{
	struct ev_error err = {0};
	struct ev_rowset *rs = NULL;
	struct ev_query *q = NULL;
	struct ev_table_info ti = {0};

	tdb_exec(g_db, "RENAME TABLE evtop_audit TO evtop_audit_gone");
	ck_assert_int_eq(ev_audit_table_info(g_conn, &ti, &err), 0);
	ck_assert(!ti.exists);
	struct ev_audit_req req = {.info = &ti, .limit = 10};
	ck_assert_int_eq(ev_audit_read_page(g_conn, &req, &q, &rs, &err), -1);
	ck_assert_str_eq(err.msg, "no evtop_audit table in this database: sql/mariadb/audit.sql "
	                          "creates it");
	ck_assert_ptr_null(rs);
	ev_query_free(&q);
	ev_table_info_clear(&ti);
	tdb_exec(g_db, "RENAME TABLE evtop_audit_gone TO evtop_audit");
}
END_TEST

int main(void)
{
	if (ev_db_init() != 0) {
		fprintf(stderr, "check_audit: cannot initialise the client library\n");
		return 1;
	}
	Suite *s = suite_create("audit");
	TCase *tc = tcase_create("audit");
	tcase_set_timeout(tc, 120);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, every_row_once);
	tcase_add_test(tc, indexed_filters);
	tcase_add_test(tc, capped_filters);
	tcase_add_test(tc, plans);
	tcase_add_test(tc, event_history);
	tcase_add_test(tc, missing_table);
	suite_add_tcase(s, tc);
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	ev_db_end();
	return failed == 0 ? 0 : 1;
}
