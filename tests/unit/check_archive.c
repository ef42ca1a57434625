/* core/archive: which rows a run moves (the backlog never), the walk over a candidates read and
 * its cursor, the statements' guards, the archive table's DDL, the columns compared, the
 * audit and file lines, the cursor file. */
#include <config.h>

#include "core/archive.h"

#include <check.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

static const char *const cols[] = {"id",           "event_no", "biz_type",   "biz_id",
                                   "event_status", "deleted",  "create_time"};

static struct ev_archive_spec spec(unsigned statuses, bool deleted)
{
	struct ev_archive_spec s = {
	        .table = EV_TABLE_MESSAGE,
	        .table_name = "biz_message_event",
	        .archive_name = "biz_message_event_archive",
	        .target = EV_ARCHIVE_TO_TABLE,
	        .statuses = statuses,
	        .include_deleted = deleted,
	        .cutoff = "2026-05-01 00:00:00",
	        .columns = cols,
	        .ncolumns = sizeof(cols) / sizeof(cols[0]),
	        .create_index = "idx_create_time",
	};
	return s;
}

#define OK  (1u << EV_ST_SUCCESS)
#define CAN (1u << EV_ST_CANCELLED)

START_TEST(statuses_parse_and_the_backlog_never_moves)
{
	unsigned b = 0;
	struct ev_error err = {0};
	ck_assert_int_eq(ev_archive_parse_statuses("success", &b, &err), 0);
	ck_assert_uint_eq(b, OK);
	ck_assert_int_eq(ev_archive_parse_statuses("success, cancelled", &b, &err), 0);
	ck_assert_uint_eq(b, OK | CAN);
	ck_assert_int_eq(ev_archive_parse_statuses("cancelled", &b, &err), 0);
	ck_assert_uint_eq(b, CAN);
	const char *bad[] = {"failed", "success,pending", "1", "", "done"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		b = 77;
		ck_assert_int_eq(ev_archive_parse_statuses(bad[i], &b, &err), -1);
		ck_assert_int_eq(err.code, EV_ERR_USAGE);
		ck_assert_uint_eq(b, 77);
	}
	ck_assert_int_eq(ev_archive_parse_statuses("failed", &b, &err), -1);
	ck_assert_ptr_nonnull(strstr(err.msg, "never archived"));

	/* Whatever is asked: 0, 1, 3 never; deleted rows only with include_deleted. */
	struct ev_archive_spec all = spec(OK | CAN, true);
	for (int st = 0; st <= 4; st++)
		for (int del = 0; del <= 1; del++)
			ck_assert_int_eq(ev_archive_row_eligible(&all, st, del),
			                 st == 2 || st == 4);
	struct ev_archive_spec ok = spec(OK, false);
	ck_assert(ev_archive_row_eligible(&ok, 2, 0));
	ck_assert(!ev_archive_row_eligible(&ok, 4, 0));
	ck_assert(!ev_archive_row_eligible(&ok, 2, 1));
	ck_assert(!ev_archive_row_eligible(&ok, 3, 0));
	ck_assert(!ev_archive_row_eligible(&ok, 7, 0));
	struct ev_archive_spec okdel = spec(OK, true);
	ck_assert(ev_archive_row_eligible(&okdel, 4, 1)); /* deleted: either finished status */
	ck_assert(!ev_archive_row_eligible(&okdel, 4, 0));
	ck_assert(!ev_archive_row_eligible(&okdel, 1, 1));
}
END_TEST

static struct ev_rowset *candidates(const char *const rows[][4], size_t n)
{
	static const char *const names[] = {"id", "create_time", "status", "deleted"};
	enum ev_ctype types[4] = {EV_CT_ID, EV_CT_DATETIME, EV_CT_INT, EV_CT_INT};
	struct ev_rowset *rs = ev_rowset_new(4, names, types);
	for (size_t r = 0; r < n; r++) {
		struct ev_cell *c = ev_rowset_add_row(rs);
		for (int k = 0; k < 4; k++)
			ev_cell_set(&c[k], rows[r][k], strlen(rows[r][k]));
	}
	return rs;
}

START_TEST(pick_walks_and_moves_the_cursor)
{
	static const char *const rows[][4] = {
	        {"10", "2026-01-01 00:00:00", "2", "0"},
	        {"11", "2026-01-01 00:00:00", "3", "0"},
	        {"12", "2026-01-01 00:00:01", "2", "1"},
	        {"18446744073709551615", "2026-01-02 00:00:00", "2", "0"},
	        {"13", "2026-01-03 00:00:00", "4", "0"},
	        {"14", "2026-01-04 00:00:00", "2", "0"},
	};
	struct ev_rowset *rs = candidates(rows, 6);
	struct ev_archive_spec s = spec(OK, false);
	struct ev_archive_pick p;

	/* Two chosen: the walk stops at the second, the cursor on it. */
	ev_archive_pick(&s, rs, 2, 60, &p);
	ck_assert_uint_eq(p.n, 2);
	ck_assert_uint_eq(p.ids[0], 10);
	ck_assert_uint_eq(p.ids[1], 18446744073709551615ULL);
	ck_assert_uint_eq(p.examined, 4);
	ck_assert_uint_eq(p.kept_backlog, 1);
	ck_assert_uint_eq(p.kept_deleted, 1);
	ck_assert_str_eq(p.next.create_time, "2026-01-02 00:00:00");
	ck_assert_uint_eq(p.next.id, 18446744073709551615ULL);
	ck_assert(!p.end);
	ev_archive_pick_clear(&p);

	/* Room for all: every row gone past; a short read is the end. */
	ev_archive_pick(&s, rs, 100, 60, &p);
	ck_assert_uint_eq(p.n, 3);
	ck_assert_uint_eq(p.kept_status, 1); /* cancelled, not asked for */
	ck_assert_uint_eq(p.next.id, 14);
	ck_assert(p.end);
	ev_archive_pick_clear(&p);

	/* A full read (as many rows as asked) is not the end, even with none chosen. */
	ev_archive_pick(&s, rs, 100, 6, &p);
	ck_assert(!p.end);
	ev_archive_pick_clear(&p);
	ev_rowset_free(&rs);
}
END_TEST

START_TEST(statements_carry_the_guard)
{
	struct ev_archive_spec s = spec(OK | CAN, true);
	uint64_t ids[] = {5, 18446744073709551615ULL};
	struct ev_archive_cursor c = {.set = true, .create_time = "2026-01-01 00:00:00", .id = 9};

	struct ev_query *q = ev_archive_query_candidates(&s, &c, 5000);
	ck_assert_str_eq(q->sql, "/* evtop:archive.candidates */ SELECT id, create_time, "
	                         "`event_status` AS status, deleted FROM `biz_message_event` FORCE "
	                         "INDEX (`idx_create_time`) WHERE create_time < ? AND (create_time "
	                         "> ? OR (create_time = ? AND id > ?)) ORDER BY create_time, id "
	                         "LIMIT 5000");
	ck_assert_uint_eq(q->nparams, 4);
	ck_assert_str_eq(q->params[0].s, "2026-05-01 00:00:00");
	ck_assert_uint_eq(q->params[3].u, 9);
	ev_query_free(&q);

	const char *guard = "((`event_status` IN (2, 4) AND deleted = 0) OR (`event_status` IN (2, "
	                    "4) AND deleted = 1))";
	q = ev_archive_query_lock(&s, ids, 2, false);
	ck_assert_ptr_nonnull(strstr(q->sql, guard));
	ck_assert_ptr_nonnull(strstr(q->sql, "WHERE id IN (?, ?) AND "));
	ck_assert_ptr_nonnull(strstr(q->sql, " FOR UPDATE"));
	ck_assert_ptr_nonnull(strstr(q->sql, "IFNULL(`biz_id`, '\\\\N')"));
	ck_assert_uint_eq(q->params[1].u, 18446744073709551615ULL);
	ev_query_free(&q);
	q = ev_archive_query_delete(&s, ids, 2);
	ck_assert_ptr_nonnull(
	        strstr(q->sql, "DELETE FROM `biz_message_event` WHERE id IN (?, ?) AND "));
	ck_assert_ptr_nonnull(strstr(q->sql, guard));
	ev_query_free(&q);
	q = ev_archive_query_copy(&s, ids, 2);
	ck_assert_ptr_nonnull(strstr(q->sql, "INSERT INTO `biz_message_event_archive` (`id`, "
	                                     "`event_no`, `biz_type`"));
	ck_assert_ptr_nonnull(strstr(q->sql, guard));
	ev_query_free(&q);

	/* Success alone: the cancelled status in no statement. */
	struct ev_archive_spec ok = spec(OK, false);
	q = ev_archive_query_delete(&ok, ids, 1);
	ck_assert_ptr_nonnull(strstr(q->sql, "((`event_status` IN (2) AND deleted = 0))"));
	ck_assert_ptr_null(strstr(q->sql, "deleted = 1"));
	ev_query_free(&q);
	q = ev_archive_query_count(&ok, NULL);
	ck_assert_ptr_nonnull(strstr(q->sql, "LIMIT 1000001) AS c"));
	ev_query_free(&q);

	/* A name with a backtick stays one identifier. */
	struct ev_archive_spec odd = spec(OK, false);
	odd.table_name = "ev`x";
	q = ev_archive_query_delete(&odd, ids, 1);
	ck_assert_ptr_nonnull(strstr(q->sql, "DELETE FROM `ev``x` WHERE"));
	ev_query_free(&q);
}
END_TEST

START_TEST(archive_table_ddl_and_columns)
{
	struct ev_archive_spec s = spec(OK, false);
	char n0[] = "PRIMARY", c0[] = "id", n1[] = "uk_event_no", c1[] = "event_no",
	     n2[] = "idx_status_retry_time", c2[] = "event_status,next_retry_time";
	struct ev_index_info idx[] = {{n0, c0, true}, {n1, c1, true}, {n2, c2, false}};
	struct ev_table_info ti = {.exists = true, .nindexes = 3, .indexes = idx};
	char *sql[4];
	size_t n = ev_archive_create_sql(&s, &ti, sql, 4);
	ck_assert_uint_eq(n, 2);
	ck_assert_str_eq(sql[0], "/* evtop:archive.create */ CREATE TABLE "
	                         "`biz_message_event_archive` LIKE `biz_message_event`");
	ck_assert_ptr_nonnull(strstr(sql[1], "DROP INDEX `uk_event_no`, DROP INDEX "
	                                     "`idx_status_retry_time`, ADD KEY `idx_event_no` "
	                                     "(event_no), ADD KEY `idx_biz_type_biz_id` "
	                                     "(`biz_type`, `biz_id`)"));
	ck_assert_ptr_null(strstr(sql[1], "PRIMARY"));
	ck_assert_ptr_null(strstr(sql[1], "UNIQUE"));
	free(sql[0]);
	free(sql[1]);

	static const char *const names[] = {"COLUMN_NAME", "COLUMN_TYPE", "IS_NULLABLE"};
	enum ev_ctype t[3] = {EV_CT_TEXT, EV_CT_TEXT, EV_CT_TEXT};
	struct ev_rowset *a = ev_rowset_new(3, names, t), *b = ev_rowset_new(3, names, t);
	const char *rows[][3] = {{"id", "bigint(20) unsigned", "NO"},
	                         {"remark", "varchar(500)", "YES"}};
	for (int r = 0; r < 2; r++) {
		struct ev_cell *ca = ev_rowset_add_row(a), *cb = ev_rowset_add_row(b);
		for (int k = 0; k < 3; k++) {
			ev_cell_set(&ca[k], rows[r][k], strlen(rows[r][k]));
			ev_cell_set(&cb[k], rows[r][k], strlen(rows[r][k]));
		}
	}
	struct ev_error err = {0};
	ck_assert_int_eq(ev_archive_columns_match(a, b, "arch", &err), 0);
	struct ev_cell *c = (struct ev_cell *)ev_rowset_cell(b, 1, 1);
	ev_cell_set(c, "varchar(200)", 12);
	ck_assert_int_eq(ev_archive_columns_match(a, b, "arch", &err), -1);
	ck_assert_ptr_nonnull(strstr(err.msg, "column 2: remark varchar(200) NULL there, remark "
	                                      "varchar(500) NULL online"));
	ev_rowset_truncate(b, 1);
	ck_assert_int_eq(ev_archive_columns_match(a, b, "arch", &err), -1);
	ck_assert_ptr_nonnull(strstr(err.msg, "lacks the column remark"));
	ev_rowset_free(&a);
	ev_rowset_free(&b);
}
END_TEST

START_TEST(lines_and_cursor)
{
	struct ev_archive_spec s = spec(OK, false);
	struct ev_audit_who w = {.source = "shard-1", .os_user = "ops", .operator_id = "T-1"};
	struct ev_archive_batch b = {.run_id = "r1",
	                             .number = 3,
	                             .first_id = 18446744073709551615ULL,
	                             .last_id = 7,
	                             .first_create_time = "2026-01-01 00:00:00",
	                             .last_create_time = "2026-01-02 00:00:00",
	                             .rows = 2,
	                             .checksum = 4294967295U};
	char *line = ev_archive_audit_line("T", &w, &s, &b, "archived", NULL);
	json_error_t je;
	json_t *o = json_loads(line, 0, &je);
	ck_assert_ptr_nonnull(o);
	ck_assert_str_eq(json_string_value(json_object_get(o, "action")), "archive");
	ck_assert_str_eq(json_string_value(json_object_get(o, "result")), "archived");
	ck_assert_str_eq(json_string_value(json_object_get(o, "first_id")), "18446744073709551615");
	ck_assert_int_eq(json_integer_value(json_object_get(o, "checksum")), 4294967295LL);
	ck_assert_str_eq(json_string_value(json_object_get(o, "target_name")),
	                 "biz_message_event_archive");
	json_decref(o);
	free(line);

	/* A file row: every value a string as stored, NULL null, bytes that are not UTF-8 hex. */
	static const char *const names[] = {"id", "crc",    "row_create_time",
	                                    "id", "biz_id", "remark"};
	enum ev_ctype t[6] = {EV_CT_ID, EV_CT_INT,  EV_CT_DATETIME,
	                      EV_CT_ID, EV_CT_TEXT, EV_CT_TEXT};
	struct ev_rowset *rs = ev_rowset_new(6, names, t);
	struct ev_cell *c = ev_rowset_add_row(rs);
	ev_cell_set(&c[3], "7", 1);
	ev_cell_set(&c[4], "\xff\x01", 2);
	ev_cell_set(&c[5], NULL, 0);
	line = ev_archive_file_row(&s, &b, rs, 0);
	o = json_loads(line, 0, &je);
	ck_assert_ptr_nonnull(o);
	json_t *row = json_object_get(o, "row");
	ck_assert_str_eq(json_string_value(json_object_get(row, "id")), "7");
	ck_assert_str_eq(json_string_value(json_object_get(json_object_get(row, "biz_id"), "hex")),
	                 "ff01");
	ck_assert(json_is_null(json_object_get(row, "remark")));
	ck_assert_ptr_null(json_object_get(row, "crc"));
	json_decref(o);
	free(line);
	ev_rowset_free(&rs);
	line = ev_archive_file_commit(&s, &b);
	ck_assert_ptr_nonnull(strstr(line, "\"committed\":true"));
	free(line);

	struct ev_archive_cursor cur = {
	        .set = true, .create_time = "2026-01-02 03:04:05", .id = 42};
	char *text = ev_archive_cursor_text(&cur);
	struct ev_archive_cursor back;
	ck_assert(ev_archive_cursor_parse(text, &back));
	ck_assert(back.set);
	ck_assert_str_eq(back.create_time, "2026-01-02 03:04:05");
	ck_assert_uint_eq(back.id, 42);
	free(text);
	ck_assert(!ev_archive_cursor_parse("garbage", &back));
	ck_assert(!ev_archive_cursor_parse("2026-01-01'; DROP\t5\n", &back));
	ck_assert(!ev_archive_cursor_parse("2026-01-01\t-5\n", &back));
	ck_assert(!ev_archive_cursor_parse("2026-01-01\t99999999999999999999\n", &back));
	ck_assert(!back.set);
}
END_TEST

START_TEST(facts_for_the_header)
{
	char out[160];
	struct ev_table_facts f = {.read = true,
	                           .rows = 1234567,
	                           .bytes = 2469606195LL,
	                           .have_oldest = true,
	                           .oldest_age_s = 95 * 86400 + 3600,
	                           .retention_s = 30 * 86400,
	                           .past = 1000000,
	                           .past_capped = true};
	ev_archive_facts_text(&f, out, sizeof(out));
	ck_assert_str_eq(out, "~1.2M rows, 2.3 GB, oldest 95d, 1.0M+ before the 30d retention");
	f.retention_s = 0;
	ev_archive_facts_text(&f, out, sizeof(out));
	ck_assert_str_eq(out, "~1.2M rows, 2.3 GB, oldest 95d");
	f = (struct ev_table_facts){.read = true, .rows = 0, .bytes = 16384, .past = -1};
	ev_archive_facts_text(&f, out, sizeof(out));
	ck_assert_str_eq(out, "~0 rows, 16 KB, empty");
	f = (struct ev_table_facts){.read = true,
	                            .rows = -1,
	                            .bytes = -1,
	                            .have_oldest = true,
	                            .oldest_age_s = 125,
	                            .retention_s = 86400,
	                            .past = 7};
	ev_archive_facts_text(&f, out, sizeof(out));
	ck_assert_str_eq(out, "~? rows, ?, oldest 2m, 7 before the 1d retention");
	f.read = false;
	ev_archive_facts_text(&f, out, sizeof(out));
	ck_assert_str_eq(out, "");
	/* A short buffer: cut, still a string. */
	f.read = true;
	char tiny[8];
	ev_archive_facts_text(&f, tiny, sizeof(tiny));
	ck_assert_uint_lt(strlen(tiny), sizeof(tiny));
}
END_TEST

int main(void)
{
	Suite *s = suite_create("archive");
	TCase *tc = tcase_create("archive");
	tcase_add_test(tc, statuses_parse_and_the_backlog_never_moves);
	tcase_add_test(tc, pick_walks_and_moves_the_cursor);
	tcase_add_test(tc, statements_carry_the_guard);
	tcase_add_test(tc, archive_table_ddl_and_columns);
	tcase_add_test(tc, lines_and_cursor);
	tcase_add_test(tc, facts_for_the_header);
	suite_add_tcase(s, tc);
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
