/* Keyset paging at scale: 12,000 failed outbox rows (many next_retry_time ties, ~10% NULL,
 * ids scattered and some past 2^63), paged with evtop's own cursors at 500 and 1000 rows a
 * page, come back each exactly once, in (next_retry_time, id) order with the NULL bucket
 * first, the same as the reference query. High-retry, ordered by update_time DESC, id DESC,
 * pages the same way in the other direction. */
#include <config.h>

#include "testdb.h"

#include "core/config.h"
#include "core/model.h"
#include "core/query.h"
#include "core/rowset.h"
#include "db/conn.h"

#include <check.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define NOW_TEXT  "2026-06-01 12:00:00"
#define PIN_CLOCK "SET timestamp = UNIX_TIMESTAMP('" NOW_TEXT "')"
#define TABLE     "biz_outbox_event"
#define NROWS     12000

static MYSQL *g_db;
static struct ev_config g_cfg;
static struct ev_conn *g_conn;
static struct ev_table_info g_info;

/* 12,000 rows from MariaDB's Sequence engine. Ids: a permutation of 1000000 + 0..12006
 * (7919 is invertible modulo the prime 12007), and 18446744073709551615 - seq for 96 of them.
 * Statuses: failed, but pending every 13th; every 97th deleted. next_retry_time: NULL every
 * 10th, else one of 37 minutes (~290 rows a tie). update_time: one of 11 minutes. */
static void seed(void)
{
	tdb_exec(
	        g_db,
	        "INSERT INTO " TABLE " (id, event_no, aggregate_type, aggregate_id, event_type, "
	        "event_source, publish_channel, topic, event_payload, publish_status, retry_count, "
	        "max_retry_count, next_retry_time, fail_reason, deleted, create_time, update_time) "
	        "SELECT IF(seq %% 250 IN (0, 7), 18446744073709551615 - seq, "
	        "1000000 + (seq * 7919) %% 12007), CONCAT('PG-', seq), 'ORDER', "
	        "CONCAT('A', seq %% 100), 'ORDER_CREATED', 'order-service', 'MQ', 'order.event', "
	        "'{}', IF(seq %% 13 = 0, 0, 3), seq %% 7, 5, "
	        "IF(seq %% 10 = 0, NULL, TIMESTAMP'2026-06-01 11:00:00' + INTERVAL (seq %% 37) "
	        "MINUTE), 'timeout', IF(seq %% 97 = 0, 1, 0), "
	        "TIMESTAMP'2026-05-31 00:00:00' + INTERVAL (seq %% 50) MINUTE, "
	        "TIMESTAMP'2026-06-01 10:00:00' + INTERVAL (seq %% 11) MINUTE "
	        "FROM seq_1_to_%d",
	        NROWS);
}

static void setup(void)
{
	struct ev_error err = {0};

	g_db = tdb_connect();
	tdb_exec(g_db, PIN_CLOCK);
	if (tdb_int(g_db, "SELECT COUNT(*) FROM " TABLE) == 0) {
		seed();
		tdb_exec(g_db, "ANALYZE TABLE " TABLE);
	}
	ck_assert_int_eq(tdb_int(g_db, "SELECT COUNT(*) FROM " TABLE), NROWS);

	ev_config_init(&g_cfg);
	struct ev_source *src = &g_cfg.sources[0];
	free(src->defaults_file);
	src->defaults_file = tdb_pinned_defaults(NOW_TEXT);
	g_conn = ev_conn_new(src, &g_cfg);
	if (ev_conn_connect(g_conn, &err) != 0)
		ck_abort_msg("evtop cannot connect: %s", err.msg);
	memset(&g_info, 0, sizeof(g_info));
	if (ev_conn_table_info(g_conn, TABLE, &g_info, &err) != 0)
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

/* One listed row: its id and sort key. */
struct item {
	char *id;
	char *key;     /* NULL for SQL NULL */
	long long mid; /* the second key (the failed lists' retry_count), else 0 */
};

struct items {
	struct item *v;
	size_t n, cap;
};

static void items_push(struct items *a, const char *id, const char *key, const char *mid)
{
	if (a->n == a->cap) {
		a->cap = a->cap ? a->cap * 2 : 1024;
		a->v = ev_xrealloc(a->v, a->cap * sizeof(*a->v));
	}
	a->v[a->n].id = ev_xstrdup(id);
	a->v[a->n].key = key ? ev_xstrdup(key) : NULL;
	a->v[a->n].mid = mid ? strtoll(mid, NULL, 10) : 0;
	a->n++;
}

static void items_free(struct items *a)
{
	for (size_t i = 0; i < a->n; i++) {
		free(a->v[i].id);
		free(a->v[i].key);
	}
	free(a->v);
	memset(a, 0, sizeof(*a));
}

/* Page through a list from the start; every page at most size + 1 rows, the extra row the
 * next page's first. */
static void page_all(enum ev_list_kind kind, int size, bool text_cursor, struct items *out)
{
	struct ev_list_req req = {0};
	char *extra = NULL;
	size_t limit = (size_t)size;
	int pages = 0;

	req.info = &g_info;
	req.table = EV_TABLE_OUTBOX;
	req.table_name = TABLE;
	req.kind = kind;
	req.limit = size;
	req.stuck_threshold_s = 600;
	req.high_retry_min = 3;
	for (;;) {
		struct ev_error err = {0};
		struct ev_rowset *rs = NULL;

		ck_assert_int_lt(pages++, NROWS);
		struct ev_query *q = ev_query_list(&req, &err);
		ck_assert_msg(q != NULL, "%s", err.msg);
		if (ev_conn_run(g_conn, q, &rs, &err) != 0)
			ck_abort_msg("page %d: %s\n  %s", pages, err.msg, q->sql);
		ck_assert_uint_le(rs->nrows, limit + 1);
		if (extra != NULL) {
			ck_assert_msg(rs->nrows > 0 &&
			                      strcmp(ev_rowset_get(rs, 0, "id"), extra) == 0,
			              "page %d: the extra row %s of the page before is not first",
			              pages, extra);
			free(extra);
			extra = NULL;
		}
		size_t n = rs->nrows < limit ? rs->nrows : limit;
		for (size_t r = 0; r < n; r++) {
			ck_assert_str_eq(ev_rowset_get(rs, r, "deleted"), "0");
			items_push(out, ev_rowset_get(rs, r, "id"),
			           ev_rowset_get(rs, r, q->sort_col),
			           q->sort_mid ? ev_rowset_get(rs, r, q->sort_mid) : NULL);
		}
		bool more = rs->nrows > limit;
		if (more) {
			struct ev_cursor c;
			extra = ev_xstrdup(ev_rowset_get(rs, limit, "id"));
			ev_cursor_from_row(q, rs, limit - 1, &c);
			if (text_cursor) {
				char *s = ev_cursor_encode(&c);
				ck_assert_int_eq(ev_cursor_decode(s, &req.after, &err), 0);
				free(s);
			} else {
				req.after = c;
			}
		}
		ev_rowset_free(&rs);
		ev_query_free(&q);
		if (!more)
			break;
	}
	/* Every page but the last was full. */
	ck_assert_uint_eq((size_t)pages, out->n ? (out->n + limit - 1) / limit : 1);
}

static int cmp_id(const void *a, const void *b)
{
	unsigned long long x = strtoull(*(char *const *)a, NULL, 10);
	unsigned long long y = strtoull(*(char *const *)b, NULL, 10);
	return x < y ? -1 : x > y;
}

static void assert_each_once(const struct items *got)
{
	char **ids = ev_xcalloc(got->n ? got->n : 1, sizeof(*ids));

	for (size_t i = 0; i < got->n; i++)
		ids[i] = got->v[i].id;
	qsort(ids, got->n, sizeof(*ids), cmp_id);
	for (size_t i = 1; i < got->n; i++)
		ck_assert_msg(strcmp(ids[i - 1], ids[i]) != 0, "id %s listed twice", ids[i]);
	free(ids);
}

/* Compare (key, id) of two rows: NULL keys first; ids as unsigned 64-bit numbers. */
static int cmp_item(const struct item *a, const struct item *b)
{
	if ((a->key == NULL) != (b->key == NULL))
		return a->key == NULL ? -1 : 1;
	if (a->key != NULL) {
		int c = strcmp(a->key, b->key);
		if (c != 0)
			return c;
	}
	if (a->mid != b->mid)
		return a->mid < b->mid ? -1 : 1;
	return cmp_id(&a->id, &b->id);
}

static void assert_reference(const struct items *got, const char *sql)
{
	ck_assert_int_eq(mysql_query(g_db, sql), 0);
	MYSQL_RES *r = mysql_store_result(g_db);
	ck_assert_ptr_nonnull(r);
	ck_assert_uint_eq(mysql_num_rows(r), got->n);
	MYSQL_ROW row;
	for (size_t i = 0; (row = mysql_fetch_row(r)) != NULL; i++)
		ck_assert_msg(strcmp(row[0], got->v[i].id) == 0,
		              "row %zu: evtop has id %s, the reference %s", i, got->v[i].id,
		              row[0]);
	mysql_free_result(r);
}

START_TEST(failed_pages)
{
	static const int sizes[] = {500, 1000};
	long long want = tdb_int(g_db, "SELECT COUNT(*) FROM " TABLE
	                               " WHERE deleted = 0 AND publish_status = 3");
	long long nulls = tdb_int(g_db, "SELECT COUNT(*) FROM " TABLE " WHERE deleted = 0 AND "
	                                "publish_status = 3 AND next_retry_time IS NULL");

	ck_assert_int_gt(want, 10000);
	ck_assert_int_gt(nulls, 1000);
	for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
		for (int text = 0; text < 2; text++) {
			struct items got = {0};
			size_t got_nulls = 0;

			page_all(EV_LIST_FAILED, sizes[s], text, &got);
			ck_assert_uint_eq(got.n, (size_t)want);
			assert_each_once(&got);
			for (size_t i = 0; i < got.n; i++) {
				got_nulls += got.v[i].key == NULL;
				if (i > 0)
					ck_assert_msg(
					        cmp_item(&got.v[i - 1], &got.v[i]) < 0,
					        "page size %d: row %zu (%s, %s) after (%s, %s)",
					        sizes[s], i, got.v[i].key ? got.v[i].key : "NULL",
					        got.v[i].id,
					        got.v[i - 1].key ? got.v[i - 1].key : "NULL",
					        got.v[i - 1].id);
			}
			ck_assert_uint_eq(got_nulls, (size_t)nulls);
			assert_reference(
			        &got,
			        "SELECT id FROM " TABLE " WHERE deleted = 0 AND "
			        "publish_status = 3 ORDER BY next_retry_time ASC, retry_count, id");
			items_free(&got);
		}
	}
}
END_TEST

START_TEST(high_retry_pages)
{
	struct items got = {0};
	long long want = tdb_int(g_db, "SELECT COUNT(*) FROM " TABLE " WHERE deleted = 0 AND "
	                               "publish_status = 3 AND retry_count >= 3");

	ck_assert_int_gt(want, 5000);
	page_all(EV_LIST_HIGH_RETRY, 500, false, &got);
	ck_assert_uint_eq(got.n, (size_t)want);
	assert_each_once(&got);
	for (size_t i = 1; i < got.n; i++)
		ck_assert_msg(cmp_item(&got.v[i - 1], &got.v[i]) > 0,
		              "row %zu (%s, %s) out of order", i, got.v[i].key, got.v[i].id);
	assert_reference(&got, "SELECT id FROM " TABLE " WHERE deleted = 0 AND publish_status = 3 "
	                       "AND retry_count >= 3 ORDER BY update_time DESC, id DESC");
	items_free(&got);
}
END_TEST

int main(void)
{
	if (ev_db_init() != 0) {
		fprintf(stderr, "check_paging: cannot initialise the client library\n");
		return 1;
	}
	Suite *s = suite_create("paging");
	TCase *tc = tcase_create("paging");
	tcase_set_timeout(tc, 120);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, failed_pages);
	tcase_add_test(tc, high_retry_pages);
	suite_add_tcase(s, tc);
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	ev_db_end();
	return failed == 0 ? 0 : 1;
}
