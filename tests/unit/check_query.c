/* core/query: the exact SQL and parameters of the list and detail queries, keyset seeks,
 * filters, cursors, index hints, session setup, version parsing, the query table. */
#include <config.h>

#include "core/query.h"

#include <check.h>
#include <stdlib.h>
#include <string.h>

#define MSG_COLS                                                                                   \
	"id, event_no, event_type, biz_type, biz_id, event_source, event_status, retry_count, "    \
	"max_retry_count, next_retry_time, last_handle_time, success_time, fail_reason, "          \
	"trace_id, remark, version, deleted, create_time, update_time"
#define OB_COLS                                                                                    \
	"id, event_no, aggregate_type, aggregate_id, event_type, event_version, event_source, "    \
	"publish_channel, topic, routing_key, publish_status, retry_count, max_retry_count, "      \
	"next_retry_time, locked_by, lock_until, last_publish_time, published_time, fail_reason, " \
	"trace_id, remark, version, deleted, create_time, update_time"

static struct ev_list_req req(enum ev_table_kind t, enum ev_list_kind k)
{
	struct ev_list_req r = {
	        .table = t,
	        .kind = k,
	        .limit = 100,
	        .stuck_threshold_s = 600,
	        .high_retry_min = 3,
	};
	return r;
}

static struct ev_query *build(const struct ev_list_req *r)
{
	struct ev_error err = {0};
	struct ev_query *q = ev_query_list(r, &err);
	ck_assert_msg(q != NULL, "build failed: %s", err.msg);
	return q;
}

START_TEST(failed_due_exact_sql)
{
	struct ev_list_req r = req(EV_TABLE_MESSAGE, EV_LIST_FAILED_DUE);
	struct ev_query *q = build(&r);
	ck_assert_str_eq(q->sql, "/* evtop:list.failed_due */ SELECT " MSG_COLS
	                         " FROM `biz_message_event` WHERE deleted = 0 AND event_status = 3 "
	                         "AND retry_count < max_retry_count AND next_retry_time <= NOW() "
	                         "ORDER BY next_retry_time, retry_count, id LIMIT ?");
	ck_assert_uint_eq(q->nparams, 1);
	ck_assert_int_eq(q->params[0].type, EV_P_INT);
	ck_assert_int_eq(q->params[0].i, 101);
	ck_assert_str_eq(q->sort_col, "next_retry_time");
	ck_assert_str_eq(q->sort_mid, "retry_count");
	ck_assert(q->sort_nullable);
	ck_assert(!q->sort_desc);
	ck_assert_uint_eq(q->ncols, 19);
	ev_query_free(&q);
	ck_assert_ptr_null(q);
}
END_TEST

START_TEST(stuck_per_table)
{
	struct ev_list_req r = req(EV_TABLE_OUTBOX, EV_LIST_STUCK);
	struct ev_query *q = build(&r);
	ck_assert_str_eq(q->sql,
	                 "/* evtop:list.stuck */ SELECT " OB_COLS
	                 " FROM `biz_outbox_event` WHERE deleted = 0 AND publish_status = 1 "
	                 "AND lock_until <= NOW() ORDER BY lock_until, id LIMIT ?");
	ev_query_free(&q);

	r = req(EV_TABLE_MESSAGE, EV_LIST_STUCK);
	r.stuck_threshold_s = 900;
	q = build(&r);
	ck_assert_ptr_nonnull(strstr(q->sql,
	                             "AND event_status = 1 AND last_handle_time <= NOW() - "
	                             "INTERVAL ? SECOND ORDER BY last_handle_time, id LIMIT ?"));
	ck_assert_uint_eq(q->nparams, 2);
	ck_assert_int_eq(q->params[0].i, 900);
	ck_assert_int_eq(q->params[1].i, 101);
	ev_query_free(&q);
}
END_TEST

START_TEST(high_retry_and_cancelled_sort_descending)
{
	struct ev_list_req r = req(EV_TABLE_OUTBOX, EV_LIST_HIGH_RETRY);
	r.high_retry_min = 5;
	struct ev_query *q = build(&r);
	ck_assert_ptr_nonnull(strstr(q->sql, "AND publish_status = 3 AND retry_count >= ? ORDER BY "
	                                     "update_time DESC, id DESC LIMIT ?"));
	ck_assert_int_eq(q->params[0].i, 5);
	ck_assert(q->sort_desc);
	ck_assert(!q->sort_nullable);
	ev_query_free(&q);
	r = req(EV_TABLE_MESSAGE, EV_LIST_CANCELLED);
	r.window_s = 7200;
	q = build(&r);
	ck_assert_ptr_nonnull(strstr(q->sql,
	                             "AND event_status = 4 AND create_time >= NOW() - INTERVAL ? "
	                             "SECOND ORDER BY create_time DESC, id DESC LIMIT ?"));
	ck_assert_int_eq(q->params[0].i, 7200);
	ev_query_free(&q);
}
END_TEST

START_TEST(every_kind_builds_bounded)
{
	for (int t = 0; t < EV_TABLE_COUNT; t++)
		for (int k = 0; k < EV_LIST_COUNT; k++) {
			struct ev_list_req r = req((enum ev_table_kind)t, (enum ev_list_kind)k);
			r.object_type = "ORDER";
			r.object_id = "O1";
			r.trace_id = "t1";
			struct ev_query *q = build(&r);
			ck_assert_ptr_nonnull(strstr(q->sql, "deleted = 0"));
			ck_assert_ptr_nonnull(strstr(q->sql, " LIMIT ?"));
			ck_assert_msg(strncmp(q->sql, "/* evtop:list.", 14) == 0, "%s", q->sql);
			ck_assert_ptr_nonnull(ev_query_def_find(q->name, (enum ev_table_kind)t));
			/* Every list ends its ORDER BY with id. */
			ck_assert_msg(strstr(q->sql, ", id LIMIT") ||
			                      strstr(q->sql, ", id DESC LIMIT"),
			              "%s", q->sql);
			ev_query_free(&q);
		}
}
END_TEST

START_TEST(seek_ascending_nullable)
{
	/* The failed lists: (next_retry_time, retry_count, id), the status index's order. */
	struct ev_list_req r = req(EV_TABLE_OUTBOX, EV_LIST_FAILED);
	r.after.set = true;
	r.after.id = 42;
	r.after.has_mid = true;
	r.after.mid = 3;
	strcpy(r.after.value, "2026-05-13 10:00:00");
	struct ev_query *q = build(&r);
	ck_assert_ptr_nonnull(strstr(q->sql, "publish_status = 3 AND (next_retry_time > ? OR "
	                                     "(next_retry_time = ? AND (retry_count > ? OR "
	                                     "(retry_count = ? AND id > ?)))) ORDER BY "
	                                     "next_retry_time, retry_count, id LIMIT ?"));
	ck_assert_uint_eq(q->nparams, 6);
	ck_assert_str_eq(q->params[0].s, "2026-05-13 10:00:00");
	ck_assert_str_eq(q->params[1].s, "2026-05-13 10:00:00");
	ck_assert_int_eq(q->params[2].i, 3);
	ck_assert_int_eq(q->params[3].i, 3);
	ck_assert_int_eq(q->params[4].type, EV_P_UINT);
	ck_assert_uint_eq(q->params[4].u, 42);
	ev_query_free(&q);

	/* A NULL sort key: the rest of the NULLs by (retry_count, id), then every non-NULL. */
	r.after.value_null = true;
	r.after.value[0] = '\0';
	r.after.id = 18446744073709551615ULL;
	q = build(&r);
	ck_assert_ptr_nonnull(strstr(q->sql, "AND ((next_retry_time IS NULL AND (retry_count > ? "
	                                     "OR (retry_count = ? AND id > ?))) OR "
	                                     "next_retry_time IS NOT NULL) ORDER BY"));
	ck_assert_uint_eq(q->params[2].u, 18446744073709551615ULL);
	ev_query_free(&q);

	/* A list sorted by one key before id: its NULL seek by id alone. */
	r = req(EV_TABLE_OUTBOX, EV_LIST_PROCESSING);
	r.after.set = true;
	r.after.value_null = true;
	r.after.id = 5;
	q = build(&r);
	ck_assert_ptr_nonnull(strstr(q->sql, "AND ((lock_until IS NULL AND id > ?) OR "
	                                     "lock_until IS NOT NULL) ORDER BY lock_until, id"));
	ck_assert_ptr_null(q->sort_mid);
	ev_query_free(&q);

	/* A cursor of the other shape is refused, not misread. */
	struct ev_error err = {0};
	r.after.has_mid = true;
	ck_assert_ptr_null(ev_query_list(&r, &err));
	ck_assert_ptr_nonnull(strstr(err.msg, "not one of this list's"));
	r = req(EV_TABLE_OUTBOX, EV_LIST_FAILED);
	r.after.set = true;
	r.after.id = 5;
	ck_assert_ptr_null(ev_query_list(&r, &err));
}
END_TEST

START_TEST(seek_descending)
{
	struct ev_list_req r = req(EV_TABLE_MESSAGE, EV_LIST_HIGH_RETRY);
	r.after.set = true;
	r.after.id = 7;
	strcpy(r.after.value, "2026-05-13 10:00:00");
	struct ev_query *q = build(&r);
	ck_assert_ptr_nonnull(strstr(q->sql,
	                             "AND (update_time < ? OR (update_time = ? AND id < ?)) "
	                             "ORDER BY update_time DESC, id DESC"));
	ev_query_free(&q);
}
END_TEST

START_TEST(filters_become_bound_conditions)
{
	struct ev_filter f = {0};
	struct ev_error err = {0};
	ck_assert_int_eq(
	        ev_filter_parse(&f,
	                        "event_type=PAY_SUCCESS aggregate_id=O1 reason~\"50%_off\" "
	                        "locked_by=pub-1 since=2026-05-01 until='x'",
	                        &err),
	        -1);
	ck_assert_ptr_nonnull(strstr(err.msg, "until"));
	ev_filter_free(&f);
	ck_assert_int_eq(
	        ev_filter_parse(&f,
	                        "event_type=PAY_SUCCESS aggregate_id=O1 reason~\"50%_off\" "
	                        "locked_by=pub-1 since=2026-05-01 until=2026-05-02T10:30",
	                        &err),
	        0);
	struct ev_list_req r = req(EV_TABLE_OUTBOX, EV_LIST_FAILED);
	r.filter = &f;
	struct ev_query *q = build(&r);
	ck_assert_ptr_nonnull(strstr(q->sql,
	                             "publish_status = 3 AND event_type = ? AND aggregate_id = "
	                             "? AND locked_by = ? AND fail_reason LIKE ? AND "
	                             "create_time >= ? AND create_time < ? ORDER BY"));
	ck_assert_str_eq(q->params[0].s, "PAY_SUCCESS");
	ck_assert_str_eq(q->params[1].s, "O1");
	ck_assert_str_eq(q->params[2].s, "pub-1");
	ck_assert_str_eq(q->params[3].s, "%50\\%\\_off%");
	ck_assert_str_eq(q->params[4].s, "2026-05-01 00:00:00");
	ck_assert_str_eq(q->params[5].s, "2026-05-02 10:30:00");
	ev_query_free(&q);

	/* Outbox-only columns on the message table are refused, with the column named. */
	r.table = EV_TABLE_MESSAGE;
	ck_assert_ptr_null(ev_query_list(&r, &err));
	ck_assert_ptr_nonnull(strstr(err.msg, "locked_by"));
	ev_filter_free(&f);
	ck_assert_ptr_null(f.event_type);
}
END_TEST

START_TEST(filter_errors)
{
	struct ev_filter f = {0};
	struct ev_error err = {0};
	ck_assert_int_eq(ev_filter_parse(&f, "colour=red", &err), -1);
	ck_assert_ptr_nonnull(strstr(err.msg, "unknown filter"));
	ck_assert_int_eq(ev_filter_parse(&f, "event_type~PAY", &err), -1);
	ck_assert_int_eq(ev_filter_parse(&f, "event_type", &err), -1);
	ck_assert_int_eq(ev_filter_parse(&f, "reason~\"open", &err), -1);
	ck_assert_int_eq(ev_filter_set(&f, "since", "2026-13-01", &err), -1);
	ck_assert_int_eq(ev_filter_set(&f, "since", "yesterday", &err), -1);
	ck_assert_int_eq(ev_filter_set(&f, "event_type", "", &err), -1);
	char big[80];
	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	ck_assert_int_eq(ev_filter_set(&f, "event_no", big, &err), -1);
	ck_assert_int_eq(ev_filter_set(&f, "event_no", "EVT1", &err), 0);
	ck_assert_str_eq(f.event_no, "EVT1");
	ev_filter_free(&f);
}
END_TEST

START_TEST(trail_and_trace)
{
	struct ev_list_req r = req(EV_TABLE_MESSAGE, EV_LIST_TRAIL);
	struct ev_error err = {0};
	ck_assert_ptr_null(ev_query_list(&r, &err));
	r.object_type = "ORDER";
	r.object_id = "ORDER202605130001";
	struct ev_query *q = build(&r);
	ck_assert_ptr_nonnull(strstr(q->sql,
	                             "WHERE deleted = 0 AND biz_type = ? AND biz_id = ? ORDER "
	                             "BY create_time, id LIMIT ?"));
	ck_assert_str_eq(q->params[0].s, "ORDER");
	ck_assert_str_eq(q->params[1].s, "ORDER202605130001");
	ev_query_free(&q);
	r = req(EV_TABLE_OUTBOX, EV_LIST_TRACE);
	r.trace_id = "trace-1";
	q = build(&r);
	ck_assert_ptr_nonnull(strstr(q->sql, "AND trace_id = ? ORDER BY create_time, id LIMIT ?"));
	ev_query_free(&q);
}
END_TEST

START_TEST(limits_refused)
{
	struct ev_list_req r = req(EV_TABLE_MESSAGE, EV_LIST_PENDING);
	struct ev_error err = {0};
	r.limit = 0;
	ck_assert_ptr_null(ev_query_list(&r, &err));
	r.limit = EV_PAGE_MAX + 1;
	ck_assert_ptr_null(ev_query_list(&r, &err));
	r.limit = EV_PAGE_MAX;
	struct ev_query *q = build(&r);
	ck_assert_int_eq(q->params[q->nparams - 1].i, EV_PAGE_MAX + 1);
	ev_query_free(&q);
}
END_TEST

START_TEST(index_hint_by_columns)
{
	char n1[] = "PRIMARY", c1[] = "id", n2[] = "my_status_idx",
	     c2[] = "publish_status,next_retry_time,retry_count", n3[] = "lock_idx",
	     c3[] = "publish_status,lock_until";
	struct ev_index_info idx[] = {{n1, c1, true}, {n2, c2, false}, {n3, c3, false}};
	struct ev_table_info ti = {.exists = true, .nindexes = 3, .indexes = idx};
	struct ev_list_req r = req(EV_TABLE_OUTBOX, EV_LIST_STUCK);
	r.info = &ti;
	struct ev_query *q = build(&r);
	ck_assert_ptr_nonnull(
	        strstr(q->sql, " FROM `biz_outbox_event` FORCE INDEX (`lock_idx`) WHERE"));
	ev_query_free(&q);
	r.kind = EV_LIST_FAILED;
	q = build(&r);
	ck_assert_ptr_nonnull(strstr(q->sql, "FORCE INDEX (`my_status_idx`)"));
	ev_query_free(&q);
	/* No index the query may use: not run, "n/a — needs an index". */
	ti.nindexes = 2;
	struct ev_error err = {0};
	r.kind = EV_LIST_STUCK;
	ck_assert_ptr_null(ev_query_list(&r, &err));
	ck_assert_int_eq(err.code, EV_ERR_SCHEMA);
	ck_assert_str_eq(err.msg, "n/a — needs an index on (publish_status,lock_until)");
	/* A prefix must end at a column boundary. */
	char n4[] = "x", c4[] = "publish_status_x,lock_until";
	struct ev_index_info odd[] = {{n4, c4, false}};
	struct ev_table_info ti2 = {.exists = true, .nindexes = 1, .indexes = odd};
	ck_assert_ptr_null(ev_index_find(&ti2, "publish_status"));
	/* The recommended index is preferred when present. */
	char n5[] = "model", c5[] = "event_status,next_retry_time,retry_count", n6[] = "rec",
	     c6[] = "event_status,update_time";
	struct ev_index_info rec[] = {{n5, c5, false}, {n6, c6, false}};
	struct ev_table_info ti3 = {.exists = true, .nindexes = 2, .indexes = rec};
	r = req(EV_TABLE_MESSAGE, EV_LIST_HIGH_RETRY);
	r.info = &ti3;
	q = build(&r);
	ck_assert_ptr_nonnull(strstr(q->sql, "FORCE INDEX (`rec`)"));
	ev_query_free(&q);
}
END_TEST

START_TEST(reverse_flips_the_order_and_the_seek)
{
	struct ev_list_req r = req(EV_TABLE_OUTBOX, EV_LIST_FAILED);
	r.reverse = true;
	struct ev_query *q = build(&r);
	ck_assert_ptr_nonnull(
	        strstr(q->sql, "ORDER BY next_retry_time DESC, retry_count DESC, id DESC LIMIT ?"));
	ck_assert(q->sort_desc);
	ev_query_free(&q);
	r.after.set = true;
	r.after.id = 9;
	r.after.has_mid = true;
	r.after.mid = 0;
	strcpy(r.after.value, "2026-05-13 10:00:00");
	q = build(&r);
	/* Descending over a nullable key: the NULLs come last, after every value. */
	ck_assert_ptr_nonnull(strstr(q->sql, "AND (next_retry_time < ? OR (next_retry_time = ? AND "
	                                     "(retry_count < ? OR (retry_count = ? AND id < ?))) "
	                                     "OR next_retry_time IS NULL) ORDER BY"));
	ev_query_free(&q);
	r.after.value_null = true;
	q = build(&r);
	ck_assert_ptr_nonnull(strstr(q->sql, "AND (next_retry_time IS NULL AND (retry_count < ? OR "
	                                     "(retry_count = ? AND id < ?))) ORDER BY"));
	ev_query_free(&q);
	r = req(EV_TABLE_MESSAGE, EV_LIST_HIGH_RETRY);
	r.reverse = true;
	q = build(&r);
	ck_assert_ptr_nonnull(strstr(q->sql, "ORDER BY update_time, id LIMIT ?"));
	ev_query_free(&q);
}
END_TEST

/* A list's count: its own query's rows (index, conditions, filters), the cap as the limit,
 * whatever page or order the list is on; payload terms and a cap below one refused. */
START_TEST(count_of_a_list)
{
	struct ev_filter f = {0};
	struct ev_error err = {0};
	ck_assert_int_eq(ev_filter_set(&f, "event_type", "PAY_SUCCESS", &err), 0);
	struct ev_list_req r = req(EV_TABLE_OUTBOX, EV_LIST_FAILED_DUE);
	r.filter = &f;
	r.reverse = true;
	r.after.set = true;
	r.after.id = 7;
	struct ev_query *q = ev_query_count(&r, 100000, &err);
	ck_assert_msg(q != NULL, "%s", err.msg);
	ck_assert_str_eq(q->sql,
	                 "/* evtop:list.count */ SELECT COUNT(*) FROM (SELECT 1 AS one FROM "
	                 "`biz_outbox_event` WHERE deleted = 0 AND publish_status = 3 AND "
	                 "retry_count < max_retry_count AND next_retry_time <= NOW() AND "
	                 "event_type = ? LIMIT ?) AS capped");
	ck_assert_str_eq(q->name, "list.count");
	ck_assert_uint_eq(q->nparams, 2);
	ck_assert_str_eq(q->params[0].s, "PAY_SUCCESS");
	ck_assert_int_eq(q->params[1].i, 100000);
	ck_assert_uint_eq(q->ncols, 1);
	ck_assert_str_eq(q->col_names[0], "count");
	ev_query_free(&q);
	ck_assert_ptr_null(ev_query_count(&r, 0, &err));
	ev_filter_free(&f);
	ck_assert_int_eq(ev_filter_parse(&f, "payload.orderId=7", &err), 0);
	ck_assert_uint_gt(f.njson, 0);
	r.filter = &f;
	ck_assert_ptr_null(ev_query_count(&r, 100000, &err));
	ck_assert_ptr_nonnull(strstr(err.msg, "payload terms"));
	ev_filter_free(&f);
}
END_TEST

START_TEST(group_by_reason_and_owner)
{
	struct ev_filter f = {0};
	struct ev_error err = {0};
	ck_assert_int_eq(ev_filter_set(&f, "event_type", "PAY_SUCCESS", &err), 0);
	struct ev_list_req r = req(EV_TABLE_OUTBOX, EV_LIST_FAILED_DUE);
	r.filter = &f;
	struct ev_query *q = ev_query_group(&r, "fail_reason", &err);
	ck_assert_msg(q != NULL, "%s", err.msg);
	ck_assert_str_eq(q->sql,
	                 "/* evtop:list.group */ SELECT grp, COUNT(*), MIN(create_time) FROM "
	                 "(SELECT fail_reason AS grp, create_time FROM `biz_outbox_event` "
	                 "WHERE deleted = 0 AND publish_status = 3 AND retry_count < "
	                 "max_retry_count AND next_retry_time <= NOW() AND event_type = ? "
	                 "LIMIT ?) AS capped GROUP BY grp ORDER BY COUNT(*) DESC, grp LIMIT 200");
	ck_assert_uint_eq(q->nparams, 2);
	ck_assert_str_eq(q->params[0].s, "PAY_SUCCESS");
	ck_assert_int_eq(q->params[1].i, 100001);
	ev_query_free(&q);
	r = req(EV_TABLE_OUTBOX, EV_LIST_STUCK);
	q = ev_query_group(&r, "locked_by", &err);
	ck_assert_ptr_nonnull(strstr(q->sql,
	                             "SELECT locked_by AS grp, create_time FROM `biz_outbox_event` "
	                             "WHERE deleted = 0 AND publish_status = 1 AND lock_until "
	                             "<= NOW() LIMIT ?"));
	ev_query_free(&q);
	/* The message table has no lock owner; only two columns are groupable. */
	r.table = EV_TABLE_MESSAGE;
	ck_assert_ptr_null(ev_query_group(&r, "locked_by", &err));
	ck_assert_ptr_null(ev_query_group(&r, "biz_id", &err));
	ev_filter_free(&f);
}
END_TEST

START_TEST(custom_table_name)
{
	struct ev_list_req r = req(EV_TABLE_OUTBOX, EV_LIST_PENDING);
	r.table_name = "shard_7_outbox";
	struct ev_query *q = build(&r);
	ck_assert_ptr_nonnull(strstr(q->sql, " FROM `shard_7_outbox` WHERE"));
	ev_query_free(&q);
}
END_TEST

START_TEST(cursor_round_trip)
{
	struct ev_cursor c = {.set = true, .id = 18446744073709551615ULL};
	strcpy(c.value, "2026-05-13 10:00:00");
	char *s = ev_cursor_encode(&c);
	ck_assert_str_eq(s, "v1:18446744073709551615:2026-05-13T10:00:00");
	struct ev_cursor d;
	struct ev_error err = {0};
	ck_assert_int_eq(ev_cursor_decode(s, &d, &err), 0);
	ck_assert_uint_eq(d.id, 18446744073709551615ULL);
	ck_assert_str_eq(d.value, "2026-05-13 10:00:00");
	ck_assert(d.set && !d.value_null);
	free(s);
	c.value_null = true;
	s = ev_cursor_encode(&c);
	ck_assert_str_eq(s, "v1:18446744073709551615:~");
	ck_assert_int_eq(ev_cursor_decode(s, &d, &err), 0);
	ck_assert(d.value_null);
	ck_assert(!d.has_mid);
	free(s);
	/* With the second key (the failed lists' retry_count). */
	c.has_mid = true;
	c.mid = 7;
	s = ev_cursor_encode(&c);
	ck_assert_str_eq(s, "v2:18446744073709551615:7:~");
	ck_assert_int_eq(ev_cursor_decode(s, &d, &err), 0);
	ck_assert(d.value_null && d.has_mid);
	ck_assert_int_eq(d.mid, 7);
	free(s);
	c.value_null = false;
	c.mid = -1;
	s = ev_cursor_encode(&c);
	ck_assert_str_eq(s, "v2:18446744073709551615:-1:2026-05-13T10:00:00");
	ck_assert_int_eq(ev_cursor_decode(s, &d, &err), 0);
	ck_assert_str_eq(d.value, "2026-05-13 10:00:00");
	ck_assert_int_eq(d.mid, -1);
	free(s);
	const char *bad[] = {"",
	                     "v2:1:~",
	                     "v2:1::~",
	                     "v2:1:x:~",
	                     "v2:1:99999999999999999999:~",
	                     "v2:1:2026-05-13T10:00:00",
	                     "v2:1:3:",
	                     "v3:1:1:~",
	                     "v1::~",
	                     "v1:x:~",
	                     "v1:1:",
	                     "v1:1:2026-99-01",
	                     "v1:18446744073709551616:~",
	                     "v1:1:'; DROP TABLE x"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		ck_assert_msg(ev_cursor_decode(bad[i], &d, &err) == -1, "accepted '%s'", bad[i]);
}
END_TEST

START_TEST(render_for_humans)
{
	struct ev_query *q = ev_query_show_by_no(EV_TABLE_OUTBOX, NULL, "O'Brien\\1");
	char *s = ev_query_render(q);
	ck_assert_ptr_nonnull(strstr(s, "WHERE event_no = 'O''Brien\\\\1' LIMIT 2"));
	free(s);
	ev_query_free(&q);
	q = ev_query_show_by_id(EV_TABLE_MESSAGE, "t", 18446744073709551615ULL);
	s = ev_query_render(q);
	ck_assert_ptr_nonnull(strstr(s, "FROM `t` WHERE id = 18446744073709551615 LIMIT 2"));
	ck_assert_ptr_nonnull(strstr(s, "event_payload"));
	free(s);
	ev_query_free(&q);
}
END_TEST

START_TEST(server_versions)
{
	struct ev_server_version v;
	ck_assert_int_eq(ev_server_version_parse("10.11.19-MariaDB-0+deb12u1", &v), 0);
	ck_assert_int_eq(v.flavour, EV_FLAVOUR_MARIADB);
	ck_assert_int_eq(v.major, 10);
	ck_assert_int_eq(v.minor, 11);
	ck_assert_int_eq(v.patch, 19);
	ck_assert_int_eq(ev_server_version_parse("5.5.5-10.6.4-MariaDB-log", &v), 0);
	ck_assert_int_eq(v.major, 10);
	ck_assert_int_eq(v.minor, 6);
	ck_assert_int_eq(ev_server_version_parse("8.0.36", &v), 0);
	ck_assert_int_eq(v.flavour, EV_FLAVOUR_MYSQL);
	ck_assert_int_eq(ev_server_version_parse("8.0.11-TiDB-v7.5.0", &v), 0);
	ck_assert_int_eq(v.flavour, EV_FLAVOUR_TIDB);
	ck_assert_int_eq(ev_server_version_parse("garbage", &v), -1);
}
END_TEST

/* The floors evtop doctor and --version share: MySQL 8.0+, MariaDB 10.6+, none for TiDB. */
START_TEST(server_floors)
{
	static const struct {
		const char *info;
		int supported;
	} cases[] = {
	        {"8.0.11", 1},
	        {"8.4.0", 1},
	        {"9.1.0", 1},
	        {"5.7.44-log", 0},
	        {"10.6.0-MariaDB", 1},
	        {"10.11.19-MariaDB-0+deb12u1", 1},
	        {"11.4.2-MariaDB", 1},
	        {"10.5.23-MariaDB", 0},
	        {"5.5.5-10.4.1-MariaDB", 0},
	        {"8.0.11-TiDB-v7.5.0", -1},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct ev_server_version v;
		ck_assert_int_eq(ev_server_version_parse(cases[i].info, &v), 0);
		ck_assert_msg(ev_server_supported(&v) == cases[i].supported, "%s: %d, expected %d",
		              cases[i].info, ev_server_supported(&v), cases[i].supported);
	}
}
END_TEST

START_TEST(session_setup_per_flavour)
{
	char **m = ev_query_session_setup(EV_FLAVOUR_MARIADB, 2500, "+08:00");
	ck_assert_str_eq(m[0], "/* evtop */ SET time_zone = '+08:00'");
	ck_assert_str_eq(m[1], "/* evtop */ SET SESSION max_statement_time = 2.500");
	ck_assert_str_eq(m[2], "/* evtop */ SET SESSION innodb_lock_wait_timeout = 5");
	ck_assert_str_eq(m[3], "/* evtop */ SET SESSION lock_wait_timeout = 10");
	ck_assert_ptr_null(m[4]);
	for (char **p = m; *p; p++)
		free(*p);
	free(m);
	m = ev_query_session_setup(EV_FLAVOUR_MYSQL, 5000, NULL);
	ck_assert_str_eq(m[0], "/* evtop */ SET SESSION max_execution_time = 5000");
	for (char **p = m; *p; p++)
		free(*p);
	free(m);
}
END_TEST

START_TEST(query_table_is_complete)
{
	size_t n = 0;
	for (const struct ev_query_def *d = ev_query_defs; d->name != NULL; d++, n++) {
		ck_assert_ptr_nonnull(d->index[0]);
		ck_assert_int_gt(d->cap, 0);
		/* The outbox stuck list must be index-ordered: no sort allowed. */
		if (strcmp(d->name, "list.stuck") == 0 && d->table == EV_TABLE_OUTBOX)
			ck_assert(!d->sort_allowed);
	}
	ck_assert_uint_eq(n, 30);
	for (int k = 0; k < EV_LIST_COUNT; k++)
		ck_assert_int_eq(ev_list_parse(ev_list_name((enum ev_list_kind)k)), k);
	ck_assert_int_eq(ev_list_parse("oldest-pending"), EV_LIST_PENDING);
	ck_assert_int_eq(ev_list_parse("nope"), -1);
}
END_TEST

/* A list says how it is ordered: the index's own order (and the index by name), or a bounded
 * sort among the rows it finds; reversed, the arrow turns. */
START_TEST(order_named_for_people)
{
	char n1[] = "PRIMARY", c1[] = "id", n2[] = "my_status_idx",
	     c2[] = "publish_status,next_retry_time,retry_count";
	struct ev_index_info idx[] = {{n1, c1, true}, {n2, c2, false}};
	struct ev_table_info ti = {.exists = true, .nindexes = 2, .indexes = idx};
	struct ev_list_req r = req(EV_TABLE_OUTBOX, EV_LIST_FAILED);
	r.info = &ti;
	struct ev_query *q = build(&r);
	char buf[320];
	ev_query_order_text(q, EV_TABLE_OUTBOX, &ti, buf, sizeof(buf));
	ck_assert_str_eq(buf, "next_retry_time, retry_count, id ↑, the order of my_status_idx "
	                      "itself: no other order is read without sorting");
	ev_query_free(&q);
	r.reverse = true;
	q = build(&r);
	ev_query_order_text(q, EV_TABLE_OUTBOX, NULL, buf, sizeof(buf));
	ck_assert_str_eq(buf, "next_retry_time, retry_count, id ↓, the order of its index itself: "
	                      "no other order is read without sorting");
	ev_query_free(&q);
	/* high-retry: newest update first, sorted within the failed rows the index finds. */
	r = req(EV_TABLE_OUTBOX, EV_LIST_HIGH_RETRY);
	r.info = &ti;
	q = build(&r);
	ev_query_order_text(q, EV_TABLE_OUTBOX, &ti, buf, sizeof(buf));
	ck_assert_ptr_nonnull(strstr(buf, "update_time"));
	ck_assert_ptr_nonnull(strstr(buf, "↓, sorted by the server among the rows"));
	ev_query_free(&q);
	ev_query_order_text(NULL, EV_TABLE_OUTBOX, NULL, buf, sizeof(buf));
	ck_assert_str_eq(buf, "the list's own order");
}
END_TEST

int main(void)
{
	Suite *s = suite_create("query");
	TCase *tc = tcase_create("query");
	tcase_add_test(tc, failed_due_exact_sql);
	tcase_add_test(tc, stuck_per_table);
	tcase_add_test(tc, high_retry_and_cancelled_sort_descending);
	tcase_add_test(tc, every_kind_builds_bounded);
	tcase_add_test(tc, seek_ascending_nullable);
	tcase_add_test(tc, seek_descending);
	tcase_add_test(tc, filters_become_bound_conditions);
	tcase_add_test(tc, filter_errors);
	tcase_add_test(tc, trail_and_trace);
	tcase_add_test(tc, limits_refused);
	tcase_add_test(tc, index_hint_by_columns);
	tcase_add_test(tc, custom_table_name);
	tcase_add_test(tc, reverse_flips_the_order_and_the_seek);
	tcase_add_test(tc, group_by_reason_and_owner);
	tcase_add_test(tc, count_of_a_list);
	tcase_add_test(tc, cursor_round_trip);
	tcase_add_test(tc, render_for_humans);
	tcase_add_test(tc, server_versions);
	tcase_add_test(tc, server_floors);
	tcase_add_test(tc, session_setup_per_flavour);
	tcase_add_test(tc, query_table_is_complete);
	tcase_add_test(tc, order_named_for_people);
	suite_add_tcase(s, tc);
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? 0 : 1;
}
