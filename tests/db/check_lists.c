/* Every list evtop builds (src/core/query.c), paged through with its own keyset cursor, returns
 * exactly the rows the model document's own SQL returns on the same data (tests/data/seed.sql),
 * in the same order, each once, never a deleted row; the filters, the lookups by event_no and
 * id, and the bytes of what comes back; and every query of the query table uses an index the
 * table names, without a table scan, sorting only where the table allows it.
 *
 * The server's clock is pinned in every session: the reference session by SET timestamp, and
 * evtop's by an init-command in the [evtop] group of its option file (re-applied by the client
 * library on every connect). */
#include <config.h>

#include "testdb.h"

#include "core/config.h"
#include "core/model.h"
#include "core/query.h"
#include "core/rowset.h"
#include "db/conn.h"

#include <check.h>
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define NOW_TEXT  "2026-06-01 12:00:00"
#define PIN_CLOCK "SET timestamp = UNIX_TIMESTAMP('" NOW_TEXT "')"

static const char *const table_names[EV_TABLE_COUNT] = {
        [EV_TABLE_MESSAGE] = "biz_message_event",
        [EV_TABLE_OUTBOX] = "biz_outbox_event",
};

/* --- fixture ------------------------------------------------------------------------------ */

static MYSQL *g_db; /* the reference session (tdb) */
static struct ev_config g_cfg;
static struct ev_conn *g_conn; /* evtop's session */
static struct ev_table_info g_info[EV_TABLE_COUNT];

static void load_table_info(void)
{
	struct ev_error err = {0};

	for (int t = 0; t < EV_TABLE_COUNT; t++) {
		ev_table_info_clear(&g_info[t]);
		if (ev_conn_table_info(g_conn, table_names[t], &g_info[t], &err) != 0)
			ck_abort_msg("table info for %s: %s", table_names[t], err.msg);
		ck_assert_msg(g_info[t].exists, "%s missing", table_names[t]);
	}
}

static void setup(void)
{
	struct ev_error err = {0};

	g_db = tdb_connect();
	tdb_exec(g_db, PIN_CLOCK);
	if (tdb_int(g_db, "SELECT COUNT(*) FROM biz_message_event") == 0) {
		char *seed = tdb_srcpath("tests/data/seed.sql");
		tdb_source(g_db, seed);
		free(seed);
	}

	ev_config_init(&g_cfg);
	struct ev_source *src = &g_cfg.sources[0];
	free(src->defaults_file);
	src->defaults_file = tdb_pinned_defaults(NOW_TEXT);
	g_conn = ev_conn_new(src, &g_cfg);
	if (ev_conn_connect(g_conn, &err) != 0)
		ck_abort_msg("evtop cannot connect: %s", err.msg);
	memset(g_info, 0, sizeof(g_info));
	load_table_info();
}

static void teardown(void)
{
	for (int t = 0; t < EV_TABLE_COUNT; t++)
		ev_table_info_clear(&g_info[t]);
	ev_conn_free(&g_conn);
	ev_config_free(&g_cfg);
	mysql_close(g_db);
	g_db = NULL;
}

/* --- id lists ----------------------------------------------------------------------------- */

struct ids {
	char **v;
	size_t n, cap;
};

static void ids_push(struct ids *a, const char *s)
{
	if (a->n == a->cap) {
		a->cap = a->cap ? a->cap * 2 : 64;
		a->v = ev_xrealloc(a->v, a->cap * sizeof(*a->v));
	}
	a->v[a->n++] = ev_xstrdup(s);
}

static void ids_free(struct ids *a)
{
	for (size_t i = 0; i < a->n; i++)
		free(a->v[i]);
	free(a->v);
	memset(a, 0, sizeof(*a));
}

static bool ids_has(const struct ids *a, const char *s)
{
	for (size_t i = 0; i < a->n; i++)
		if (strcmp(a->v[i], s) == 0)
			return true;
	return false;
}

static char *ids_join(const struct ids *a)
{
	struct ev_buf b;

	ev_buf_init(&b);
	ev_buf_adds(&b, "[");
	for (size_t i = 0; i < a->n; i++)
		ev_buf_printf(&b, "%s%s", i ? " " : "", a->v[i]);
	ev_buf_adds(&b, "]");
	return ev_buf_steal(&b);
}

static bool ids_equal(const struct ids *a, const struct ids *b)
{
	if (a->n != b->n)
		return false;
	for (size_t i = 0; i < a->n; i++)
		if (strcmp(a->v[i], b->v[i]) != 0)
			return false;
	return true;
}

static void assert_same(const struct ids *got, const struct ids *want, const char *what)
{
	if (ids_equal(got, want))
		return;
	char *g = ids_join(got), *w = ids_join(want);
	ck_abort_msg("%s\n  evtop:     %s\n  reference: %s", what, g, w);
}

/* Every id once. */
static void assert_unique(const struct ids *a, const char *what)
{
	for (size_t i = 0; i < a->n; i++)
		for (size_t j = i + 1; j < a->n; j++)
			ck_assert_msg(strcmp(a->v[i], a->v[j]) != 0, "%s: id %s twice", what,
			              a->v[i]);
}

/* Ids from a space-separated literal. */
static void ids_parse(struct ids *a, const char *s)
{
	char *copy = ev_xstrdup(s), *save = NULL;

	for (char *t = strtok_r(copy, " ", &save); t != NULL; t = strtok_r(NULL, " ", &save))
		ids_push(a, t);
	free(copy);
}

/* --- the two sides ------------------------------------------------------------------------ */

/* The reference: the first column of every row of sql, run in the pinned tdb session. */
static void ref_ids(const char *sql, struct ids *out)
{
	if (mysql_query(g_db, sql) != 0)
		ck_abort_msg("reference query failed: %s\n  %s", mysql_error(g_db), sql);
	MYSQL_RES *r = mysql_store_result(g_db);
	ck_assert_msg(r != NULL, "no result: %s", sql);
	MYSQL_ROW row;
	while ((row = mysql_fetch_row(r)) != NULL)
		ids_push(out, row[0]);
	mysql_free_result(r);
}

/* evtop's side: page through the list from the start with `size` rows a page, following the
 * cursor of each page's last row (through its text form when text_cursor, as `--after` does).
 * Each run returns at most size + 1 rows; the extra one only says that a next page exists,
 * and must be the next page's first row. */
static void evtop_ids(const struct ev_list_req *base, int size, bool text_cursor, struct ids *out,
                      const char *what)
{
	struct ev_list_req req = *base;
	char *extra = NULL;
	size_t limit = (size_t)size;

	req.limit = size;
	memset(&req.after, 0, sizeof(req.after));
	for (int page = 0;; page++) {
		struct ev_error err = {0};
		struct ev_rowset *rs = NULL;

		ck_assert_msg(page < 100000, "%s: paging does not end", what);
		struct ev_query *q = ev_query_list(&req, &err);
		ck_assert_msg(q != NULL, "%s: ev_query_list: %s", what, err.msg);
		if (ev_conn_run(g_conn, q, &rs, &err) != 0)
			ck_abort_msg("%s (page %d): %s\n  %s", what, page, err.msg, q->sql);
		ck_assert_msg(rs->nrows <= limit + 1, "%s: %zu rows for a page of %d", what,
		              rs->nrows, size);
		if (extra != NULL) {
			ck_assert_msg(rs->nrows > 0 &&
			                      strcmp(ev_rowset_get(rs, 0, "id"), extra) == 0,
			              "%s (page %d, size %d): the previous page's extra row %s is "
			              "not this page's first (%s)",
			              what, page, size, extra,
			              rs->nrows ? ev_rowset_get(rs, 0, "id") : "none");
			free(extra);
			extra = NULL;
		}
		size_t n = rs->nrows < limit ? rs->nrows : limit;
		for (size_t r = 0; r < n; r++) {
			const char *id = ev_rowset_get(rs, r, "id");
			const char *deleted = ev_rowset_get(rs, r, "deleted");
			ck_assert_msg(id != NULL && id[0] != '\0', "%s: row without an id", what);
			ck_assert_msg(deleted != NULL && strcmp(deleted, "0") == 0,
			              "%s: deleted row %s listed", what, id);
			ids_push(out, id);
		}
		bool more = rs->nrows > limit;
		if (more) {
			struct ev_cursor c;
			extra = ev_xstrdup(ev_rowset_get(rs, limit, "id"));
			ev_cursor_from_row(q, rs, limit - 1, &c);
			if (text_cursor) {
				char *s = ev_cursor_encode(&c);
				if (ev_cursor_decode(s, &req.after, &err) != 0)
					ck_abort_msg("%s: cursor %s: %s", what, s, err.msg);
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
}

/* --- the reference queries ------------------------------------------------------------------ */

/* One list and its reference. Where the model document has the query, `where` is its WHERE
 * clause as written there (the document's literals for the trail), and `order` its ORDER BY
 * with the tie broken by id in the list's direction; the document's LIMIT is left out, since
 * the whole list is compared. Where it has none, both come from PRODUCT.md section 1.2.
 * `golden` is the list on the seed worked out by hand (NULL: not spelled out), a check on
 * the reference itself. */
struct lcase {
	enum ev_table_kind table;
	enum ev_list_kind kind;
	const char *arg1;  /* trail: type; trace: trace_id */
	const char *arg2;  /* trail: id */
	int n;             /* high-retry N (0: 3); message stuck threshold in s (0: 600) */
	const char *where; /* the reference's WHERE */
	const char *order; /* the reference's ORDER BY */
	const char *golden;
};

#define MSG EV_TABLE_MESSAGE
#define OB  EV_TABLE_OUTBOX

static const struct lcase lcases[] = {
        /* --- biz_message_event --- */
        /* PRODUCT 1.2: failed, every bucket (NULL next_retry_time first). */
        {MSG, EV_LIST_FAILED, NULL, NULL, 0, "deleted = 0 AND event_status = 3",
         "next_retry_time ASC, retry_count, id", NULL},
        /* 查询到期可重试消息 */
        {MSG, EV_LIST_FAILED_DUE, NULL, NULL, 0,
         "deleted = 0 AND event_status = 3 AND retry_count < max_retry_count AND "
         "next_retry_time <= NOW()",
         "next_retry_time ASC, retry_count, id", "48 43 37 36 82 18446744073709551614 65 44 84 30"},
        /* PRODUCT 1.2: failed, waiting for its retry time. */
        {MSG, EV_LIST_FAILED_WAITING, NULL, NULL, 0,
         "deleted = 0 AND event_status = 3 AND retry_count < max_retry_count AND "
         "next_retry_time > NOW()",
         "next_retry_time ASC, retry_count, id", "31 83 60 47 39 40 45"},
        /* PRODUCT 1.2: failed rows without a next_retry_time are a bucket of their own. */
        {MSG, EV_LIST_FAILED_NORETRY, NULL, NULL, 0,
         "deleted = 0 AND event_status = 3 AND retry_count < max_retry_count AND "
         "next_retry_time IS NULL",
         "next_retry_time ASC, retry_count, id", "32 46 42 41"},
        /* PRODUCT 1.2 / the document's 超过最大重试次数 guard: retry_count >= max_retry_count. */
        {MSG, EV_LIST_FAILED_EXHAUSTED, NULL, NULL, 0,
         "deleted = 0 AND event_status = 3 AND retry_count >= max_retry_count",
         "next_retry_time ASC, retry_count, id", "35 34 33 38"},
        /* PRODUCT 1.2: message stuck = processing with last_handle_time <= NOW() - threshold. */
        {MSG, EV_LIST_STUCK, NULL, NULL, 0,
         "deleted = 0 AND event_status = 1 AND last_handle_time <= NOW() - INTERVAL 600 SECOND",
         "last_handle_time ASC, id", "15 13 14 10 87"},
        {MSG, EV_LIST_STUCK, NULL, NULL, 3600,
         "deleted = 0 AND event_status = 1 AND last_handle_time <= NOW() - INTERVAL 3600 SECOND",
         "last_handle_time ASC, id", "15 13 14"},
        /* PRODUCT 1.2: processing, stuck included. */
        {MSG, EV_LIST_PROCESSING, NULL, NULL, 0, "deleted = 0 AND event_status = 1",
         "last_handle_time ASC, id", "12 15 13 14 10 87 11 61 16"},
        /* 查询待处理消息 */
        {MSG, EV_LIST_PENDING, NULL, NULL, 0, "deleted = 0 AND event_status = 0",
         "create_time ASC, id",
         "100000000000000001 62 63 5 4 64 72 73 1 2 3 18446744073709551615 80 81"},
        /* 查询失败次数较多的消息 */
        {MSG, EV_LIST_HIGH_RETRY, NULL, NULL, 0,
         "deleted = 0 AND event_status = 3 AND retry_count >= 3", "update_time DESC, id DESC",
         "45 18446744073709551614 82 43 38 35 34 33"},
        {MSG, EV_LIST_HIGH_RETRY, NULL, NULL, 10,
         "deleted = 0 AND event_status = 3 AND retry_count >= 10", "update_time DESC, id DESC",
         "43"},
        /* PRODUCT 1.2: cancelled, latest first. */
        {MSG, EV_LIST_CANCELLED, NULL, NULL, 0,
         "deleted = 0 AND event_status = 4 AND create_time >= NOW() - INTERVAL 2592000 SECOND",
         "create_time DESC, id DESC", "85 51 50 52"},
        /* Every event created in the window, any status, newest first. */
        {MSG, EV_LIST_RECENT, NULL, NULL, 0,
         "deleted = 0 AND create_time >= NOW() - INTERVAL 2592000 SECOND",
         "create_time DESC, id DESC", NULL},
        /* 根据业务对象查询事件 */
        {MSG, EV_LIST_TRAIL, "ORDER", "ORDER202605130001", 0,
         "deleted = 0 AND biz_type = 'ORDER' AND biz_id = 'ORDER202605130001'",
         "create_time ASC, id", "61 100000000000000001 60 100000000000000002"},
        {MSG, EV_LIST_TRAIL, "ORDER", "订单-中文-001", 0,
         "deleted = 0 AND biz_type = 'ORDER' AND biz_id = '订单-中文-001'", "create_time ASC, id",
         "64"},
        {MSG, EV_LIST_TRAIL, "ORDER", "ORD\033[2J", 0,
         "deleted = 0 AND biz_type = 'ORDER' AND biz_id = CONCAT('ORD', CHAR(27), '[2J')",
         "create_time ASC, id", "65"},
        {MSG, EV_LIST_TRAIL, "ORDER", "NO-SUCH-ORDER", 0,
         "deleted = 0 AND biz_type = 'ORDER' AND biz_id = 'NO-SUCH-ORDER'", "create_time ASC, id",
         ""},
        /* PRODUCT 1.2: by trace_id. */
        {MSG, EV_LIST_TRACE, "trace-202605130001", NULL, 0,
         "deleted = 0 AND trace_id = 'trace-202605130001'", "create_time ASC, id",
         "100000000000000001 60 100000000000000002 30"},
        {MSG, EV_LIST_TRACE, "trace-shared-80", NULL, 0,
         "deleted = 0 AND trace_id = 'trace-shared-80'", "create_time ASC, id", "80"},
        {MSG, EV_LIST_TRACE, "trace-中文", NULL, 0, "deleted = 0 AND trace_id = 'trace-中文'",
         "create_time ASC, id", "64"},

        /* --- biz_outbox_event --- */
        {OB, EV_LIST_FAILED, NULL, NULL, 0, "deleted = 0 AND publish_status = 3",
         "next_retry_time ASC, retry_count, id", NULL},
        /* 查询到期可重试事件 */
        {OB, EV_LIST_FAILED_DUE, NULL, NULL, 0,
         "deleted = 0 AND publish_status = 3 AND retry_count < max_retry_count AND "
         "next_retry_time <= NOW()",
         "next_retry_time ASC, retry_count, id", "148 143 136 137 182 138 165 144 184 130"},
        {OB, EV_LIST_FAILED_WAITING, NULL, NULL, 0,
         "deleted = 0 AND publish_status = 3 AND retry_count < max_retry_count AND "
         "next_retry_time > NOW()",
         "next_retry_time ASC, retry_count, id", "131 183 160 147 139 140 145"},
        {OB, EV_LIST_FAILED_NORETRY, NULL, NULL, 0,
         "deleted = 0 AND publish_status = 3 AND retry_count < max_retry_count AND "
         "next_retry_time IS NULL",
         "next_retry_time ASC, retry_count, id", "132 146 142 141"},
        {OB, EV_LIST_FAILED_EXHAUSTED, NULL, NULL, 0,
         "deleted = 0 AND publish_status = 3 AND retry_count >= max_retry_count",
         "next_retry_time ASC, retry_count, id", "135 134 133"},
        /* 查询锁定超时事件 */
        {OB, EV_LIST_STUCK, NULL, NULL, 0,
         "deleted = 0 AND publish_status = 1 AND lock_until <= NOW()", "lock_until ASC, id",
         "117 113 114 115 18446744073709551614 110 187"},
        {OB, EV_LIST_PROCESSING, NULL, NULL, 0, "deleted = 0 AND publish_status = 1",
         "lock_until ASC, id", "112 117 113 114 115 18446744073709551614 110 187 111 161 116"},
        /* 查询待发布事件 */
        {OB, EV_LIST_PENDING, NULL, NULL, 0, "deleted = 0 AND publish_status = 0",
         "create_time ASC, id",
         "200000000000000001 162 163 104 103 164 172 173 101 102 18446744073709551615 180 181"},
        /* 查询失败次数较多的消息, on the outbox */
        {OB, EV_LIST_HIGH_RETRY, NULL, NULL, 0,
         "deleted = 0 AND publish_status = 3 AND retry_count >= 3", "update_time DESC, id DESC",
         "145 182 143 138 137 134 133 135"},
        {OB, EV_LIST_CANCELLED, NULL, NULL, 0,
         "deleted = 0 AND publish_status = 4 AND create_time >= NOW() - INTERVAL 2592000 SECOND",
         "create_time DESC, id DESC", "185 151 150 152"},
        {OB, EV_LIST_RECENT, NULL, NULL, 0,
         "deleted = 0 AND create_time >= NOW() - INTERVAL 2592000 SECOND",
         "create_time DESC, id DESC", NULL},
        /* 根据聚合对象查询事件 */
        {OB, EV_LIST_TRAIL, "ORDER", "100000000000000001", 0,
         "deleted = 0 AND aggregate_type = 'ORDER' AND aggregate_id = '100000000000000001'",
         "create_time ASC, id", "161 200000000000000001 160 200000000000000002"},
        {OB, EV_LIST_TRAIL, "ORDER", "订单-中文-001", 0,
         "deleted = 0 AND aggregate_type = 'ORDER' AND aggregate_id = '订单-中文-001'",
         "create_time ASC, id", "164"},
        {OB, EV_LIST_TRAIL, "ORDER", "ORD\033[2J", 0,
         "deleted = 0 AND aggregate_type = 'ORDER' AND aggregate_id = CONCAT('ORD', CHAR(27), "
         "'[2J')",
         "create_time ASC, id", "165"},
        {OB, EV_LIST_TRACE, "trace-202605130001", NULL, 0,
         "deleted = 0 AND trace_id = 'trace-202605130001'", "create_time ASC, id",
         "200000000000000001 160 200000000000000002 130"},
        {OB, EV_LIST_TRACE, "trace-shared-80", NULL, 0,
         "deleted = 0 AND trace_id = 'trace-shared-80'", "create_time ASC, id", "180"},
};

#define NLCASES (sizeof(lcases) / sizeof(lcases[0]))

static void req_for(const struct lcase *c, struct ev_list_req *req)
{
	memset(req, 0, sizeof(*req));
	req->info = &g_info[c->table];
	req->table = c->table;
	req->table_name = table_names[c->table];
	req->kind = c->kind;
	req->limit = 1;
	req->stuck_threshold_s = c->kind == EV_LIST_STUCK && c->n ? c->n : 600;
	req->high_retry_min = c->kind == EV_LIST_HIGH_RETRY && c->n ? c->n : 3;
	req->window_s = 30 * 86400;
	if (c->kind == EV_LIST_TRAIL) {
		req->object_type = c->arg1;
		req->object_id = c->arg2;
	}
	if (c->kind == EV_LIST_TRACE)
		req->trace_id = c->arg1;
}

static char *ref_sql(const struct lcase *c, const char *extra)
{
	return ev_xasprintf("SELECT id FROM %s WHERE %s%s%s ORDER BY %s", table_names[c->table],
	                    c->where, extra ? " AND " : "", extra ? extra : "", c->order);
}

static char *case_name(const struct lcase *c)
{
	return ev_xasprintf("%s %s%s%s%s%s", ev_model_table(c->table)->key, ev_list_name(c->kind),
	                    c->arg1 ? " " : "", c->arg1 ? c->arg1 : "", c->arg2 ? "/" : "",
	                    c->arg2 ? c->arg2 : "");
}

/* The first case of a kind on a table: the list with its default arguments. */
static const struct lcase *primary_case(enum ev_table_kind t, enum ev_list_kind k)
{
	for (size_t i = 0; i < NLCASES; i++)
		if (lcases[i].table == t && lcases[i].kind == k)
			return &lcases[i];
	return NULL;
}

static const int page_sizes[] = {1, 2, 7, 1000};

/* Every case at every page size equals its reference; the reference equals the golden list. */
static void check_all_lists(const int *sizes, size_t nsizes)
{
	struct ids deleted[EV_TABLE_COUNT] = {{0}};

	for (int t = 0; t < EV_TABLE_COUNT; t++) {
		char *sql = ev_xasprintf("SELECT id FROM %s WHERE deleted = 1", table_names[t]);
		ref_ids(sql, &deleted[t]);
		free(sql);
		ck_assert_uint_ge(deleted[t].n, 9);
	}
	for (size_t i = 0; i < NLCASES; i++) {
		const struct lcase *c = &lcases[i];
		struct ids want = {0};
		char *name = case_name(c);
		char *sql = ref_sql(c, NULL);

		ref_ids(sql, &want);
		if (c->golden != NULL) {
			struct ids golden = {0};
			ids_parse(&golden, c->golden);
			char *what = ev_xasprintf("%s: the reference differs from the seed's list "
			                          "worked out by hand",
			                          name);
			if (!ids_equal(&want, &golden)) {
				char *w = ids_join(&want), *g = ids_join(&golden);
				ck_abort_msg("%s\n  reference: %s\n  by hand:   %s\n  %s", what, w,
				             g, sql);
			}
			free(what);
			ids_free(&golden);
		}
		for (size_t s = 0; s < nsizes; s++) {
			struct ev_list_req req;
			struct ids got = {0};
			char *what = ev_xasprintf("%s, page size %d", name, sizes[s]);

			req_for(c, &req);
			evtop_ids(&req, sizes[s], sizes[s] == 7, &got, what);
			assert_unique(&got, what);
			assert_same(&got, &want, what);
			for (size_t j = 0; j < got.n; j++)
				ck_assert_msg(!ids_has(&deleted[c->table], got.v[j]),
				              "%s: deleted row %s listed", what, got.v[j]);
			ids_free(&got);
			free(what);
		}
		ids_free(&want);
		free(sql);
		free(name);
	}
	for (int t = 0; t < EV_TABLE_COUNT; t++)
		ids_free(&deleted[t]);
}

START_TEST(every_kind_has_a_case)
{
	for (int t = 0; t < EV_TABLE_COUNT; t++)
		for (int k = 0; k < EV_LIST_COUNT; k++)
			ck_assert_msg(primary_case((enum ev_table_kind)t, (enum ev_list_kind)k) !=
			                      NULL,
			              "no reference for %s %s", ev_model_table(t)->key,
			              ev_list_name((enum ev_list_kind)k));
}
END_TEST

START_TEST(lists_match_reference)
{
	check_all_lists(page_sizes, sizeof(page_sizes) / sizeof(page_sizes[0]));
}
END_TEST

/* Both sessions see the pinned clock, evtop's also after a reconnect. */
START_TEST(clock_is_pinned)
{
	static const char *const names[] = {"now"};
	static const enum ev_ctype types[] = {EV_CT_DATETIME};
	char sql[] = "SELECT NOW()";
	struct ev_query q = {.name = "test.now",
	                     .sql = sql,
	                     .ncols = 1,
	                     .col_names = (const char **)names,
	                     .col_types = (enum ev_ctype *)types,
	                     .limit = 1};
	struct ev_error err = {0};
	struct ev_rowset *rs = NULL;

	char *ref = tdb_scalar(g_db, "SELECT NOW()");
	ck_assert_str_eq(ref, NOW_TEXT);
	free(ref);
	for (int round = 0; round < 2; round++) {
		if (ev_conn_run(g_conn, &q, &rs, &err) != 0)
			ck_abort_msg("SELECT NOW(): %s", err.msg);
		ck_assert_uint_eq(rs->nrows, 1);
		ck_assert_str_eq(ev_rowset_cell(rs, 0, 0)->s, NOW_TEXT);
		ev_rowset_free(&rs);
		ev_conn_close(g_conn);
		if (ev_conn_connect(g_conn, &err) != 0)
			ck_abort_msg("reconnect: %s", err.msg);
	}
}
END_TEST

/* due + waiting + noretry + exhausted = failed: every failed row in exactly one bucket. */
START_TEST(failed_buckets_add_up)
{
	static const enum ev_list_kind buckets[] = {EV_LIST_FAILED_DUE, EV_LIST_FAILED_WAITING,
	                                            EV_LIST_FAILED_NORETRY,
	                                            EV_LIST_FAILED_EXHAUSTED};

	for (int t = 0; t < EV_TABLE_COUNT; t++) {
		struct ev_list_req req;
		struct ids failed = {0}, parts[4] = {{0}};
		size_t sum = 0;

		req_for(primary_case((enum ev_table_kind)t, EV_LIST_FAILED), &req);
		evtop_ids(&req, 1000, false, &failed, "failed");
		long long count =
		        tdb_int(g_db, "SELECT COUNT(*) FROM %s WHERE deleted = 0 AND %s = 3",
		                table_names[t], ev_model_table(t)->status_col);
		ck_assert_uint_eq(failed.n, (size_t)count);
		for (int b = 0; b < 4; b++) {
			req_for(primary_case((enum ev_table_kind)t, buckets[b]), &req);
			evtop_ids(&req, 3, false, &parts[b], ev_list_name(buckets[b]));
			ck_assert_msg(parts[b].n > 0, "%s %s: empty on the seed",
			              ev_model_table(t)->key, ev_list_name(buckets[b]));
			sum += parts[b].n;
		}
		ck_assert_msg(sum == failed.n, "%s: buckets hold %zu rows, failed %zu",
		              ev_model_table(t)->key, sum, failed.n);
		for (size_t i = 0; i < failed.n; i++) {
			int in = 0;
			for (int b = 0; b < 4; b++)
				in += ids_has(&parts[b], failed.v[i]);
			ck_assert_msg(in == 1, "%s: failed row %s is in %d buckets",
			              ev_model_table(t)->key, failed.v[i], in);
		}
		ids_free(&failed);
		for (int b = 0; b < 4; b++)
			ids_free(&parts[b]);
	}
}
END_TEST

/* --- filters ------------------------------------------------------------------------------ */

/* A filter (up to three key=value settings) and its reference condition, by hand. The
 * fail_reason substring is a literal: '%' and '_' in the needle match only themselves, so the
 * reference is INSTR, not LIKE. */
struct fcase {
	enum ev_table_kind table;
	const char *kv[3][2];
	const char *cond;
};

static const struct fcase fcases[] = {
        {MSG, {{"event_type", "PAY_SUCCESS"}}, "event_type = 'PAY_SUCCESS'"},
        {OB, {{"event_type", "PAY_SUCCESS"}}, "event_type = 'PAY_SUCCESS'"},
        {MSG, {{"biz_type", "ORDER"}}, "biz_type = 'ORDER'"},
        {OB, {{"aggregate_type", "PAYMENT"}}, "aggregate_type = 'PAYMENT'"},
        {MSG,
         {{"biz_type", "ORDER"}, {"biz_id", "ORDER202605130001"}},
         "biz_type = 'ORDER' AND biz_id = 'ORDER202605130001'"},
        {OB,
         {{"biz_type", "ORDER"}, {"biz_id", "100000000000000001"}},
         "aggregate_type = 'ORDER' AND aggregate_id = '100000000000000001'"},
        {MSG, {{"biz_id", "订单-中文-001"}}, "biz_id = '订单-中文-001'"},
        {OB, {{"aggregate_id", "ORD\033[2J"}}, "aggregate_id = CONCAT('ORD', CHAR(27), '[2J')"},
        {MSG, {{"event_no", "MSG-MAX-1"}}, "event_no = 'MSG-MAX-1'"},
        {MSG, {{"event_no", "MSG-0094"}}, "event_no = 'MSG-0094'"}, /* a deleted row: none */
        {OB, {{"event_no", "OB-MAX-1"}}, "event_no = 'OB-MAX-1'"},
        {OB, {{"event_no", "EVT-SHARED-0001"}}, "event_no = 'EVT-SHARED-0001'"},
        {MSG, {{"trace_id", "trace-202605130001"}}, "trace_id = 'trace-202605130001'"},
        {OB, {{"trace_id", "trace-202605130001"}}, "trace_id = 'trace-202605130001'"},
        {MSG, {{"source", "payment-service"}}, "event_source = 'payment-service'"},
        {OB, {{"event_source", "refund-service"}}, "event_source = 'refund-service'"},
        {OB, {{"locked_by", "publisher-02"}}, "locked_by = 'publisher-02'"},
        {OB,
         {{"locked_by", "pub-\033[31m红-发布器"}},
         "locked_by = CONCAT('pub-', CHAR(27), '[31m红-发布器')"},
        {OB, {{"topic", "pay.event"}}, "topic = 'pay.event'"},
        {OB, {{"channel", "HTTP"}}, "publish_channel = 'HTTP'"},
        {MSG, {{"fail_reason", "a%b"}}, "INSTR(fail_reason, 'a%b') > 0"},
        {OB, {{"fail_reason", "a%b"}}, "INSTR(fail_reason, 'a%b') > 0"},
        {MSG, {{"reason", "a_b"}}, "INSTR(fail_reason, 'a_b') > 0"},
        {OB, {{"reason", "a_b"}}, "INSTR(fail_reason, 'a_b') > 0"},
        {MSG, {{"fail_reason", "100%"}}, "INSTR(fail_reason, '100%') > 0"},
        {OB, {{"fail_reason", "100%"}}, "INSTR(fail_reason, '100%') > 0"},
        {MSG, {{"fail_reason", "C:\\tmp"}}, "INSTR(fail_reason, 'C:\\\\tmp') > 0"},
        {OB, {{"fail_reason", "C:\\tmp"}}, "INSTR(fail_reason, 'C:\\\\tmp') > 0"},
        {MSG, {{"fail_reason", "库存服务"}}, "INSTR(fail_reason, '库存服务') > 0"},
        {OB, {{"fail_reason", "MQ消息"}}, "INSTR(fail_reason, 'MQ消息') > 0"},
        {MSG, {{"fail_reason", "HTTP 503"}}, "INSTR(fail_reason, 'HTTP 503') > 0"},
        {OB, {{"fail_reason", "\033[2J"}}, "INSTR(fail_reason, CONCAT(CHAR(27), '[2J')) > 0"},
        {MSG, {{"since", "2026-06-01 09:00:00"}}, "create_time >= '2026-06-01 09:00:00'"},
        {OB, {{"since", "2026-06-01 09:00"}}, "create_time >= '2026-06-01 09:00:00'"},
        {MSG, {{"until", "2026-06-01 09:00:00"}}, "create_time < '2026-06-01 09:00:00'"},
        {OB, {{"until", "2026-06-01T09:00:00"}}, "create_time < '2026-06-01 09:00:00'"},
        {MSG,
         {{"since", "2026-05-31"}, {"until", "2026-06-01"}},
         "create_time >= '2026-05-31 00:00:00' AND create_time < '2026-06-01 00:00:00'"},
        {OB,
         {{"since", "2026-05-30 12:00:01"}, {"until", "2026-05-31 12:00:00"}},
         "create_time >= '2026-05-30 12:00:01' AND create_time < '2026-05-31 12:00:00'"},
        {MSG,
         {{"event_type", "ORDER_CREATED"},
          {"source", "order-service"},
          {"since", "2026-05-30 13:00"}},
         "event_type = 'ORDER_CREATED' AND event_source = 'order-service' AND "
         "create_time >= '2026-05-30 13:00:00'"},
        {OB,
         {{"topic", "pay.event"}, {"locked_by", "publisher-02"}, {"fail_reason", "a_b"}},
         "topic = 'pay.event' AND locked_by = 'publisher-02' AND INSTR(fail_reason, 'a_b') > 0"},
};

/* Each filter on every list gives exactly the reference's rows; on some list it keeps rows
 * and on some it drops rows (so no filter passes by matching everything or nothing). */
START_TEST(filters_match_reference)
{
	static const int sizes[] = {2, 1000};

	for (size_t i = 0; i < sizeof(fcases) / sizeof(fcases[0]); i++) {
		const struct fcase *f = &fcases[i];
		struct ev_filter filter = {0};
		struct ev_error err = {0};
		bool kept = false, dropped = false;

		for (int j = 0; j < 3 && f->kv[j][0] != NULL; j++)
			if (ev_filter_set(&filter, f->kv[j][0], f->kv[j][1], &err) != 0)
				ck_abort_msg("filter %s=%s: %s", f->kv[j][0], f->kv[j][1], err.msg);
		for (int k = 0; k < EV_LIST_COUNT; k++) {
			const struct lcase *c = primary_case(f->table, (enum ev_list_kind)k);
			struct ids want = {0}, all = {0};
			char *sql = ref_sql(c, f->cond), *all_sql = ref_sql(c, NULL);

			ref_ids(sql, &want);
			ref_ids(all_sql, &all);
			kept = kept || want.n > 0;
			dropped = dropped || want.n < all.n;
			for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
				struct ev_list_req req;
				struct ids got = {0};
				char *name = case_name(c);
				char *what = ev_xasprintf("%s where %s, page size %d", name,
				                          f->cond, sizes[s]);

				req_for(c, &req);
				req.filter = &filter;
				evtop_ids(&req, sizes[s], false, &got, what);
				assert_same(&got, &want, what);
				ids_free(&got);
				free(what);
				free(name);
			}
			ids_free(&want);
			ids_free(&all);
			free(sql);
			free(all_sql);
		}
		if (strstr(f->cond, "MSG-0094") == NULL)
			ck_assert_msg(kept, "filter %s keeps no row of any list on the seed",
			              f->cond);
		ck_assert_msg(dropped, "filter %s drops no row of any list on the seed", f->cond);
		ev_filter_free(&filter);
	}
}
END_TEST

/* --- counts (a list's title) ------------------------------------------------------------------ */

/* evtop's count of the list under req, with this cap. */
static long long evtop_count(const struct ev_list_req *req, long long cap, const char *what)
{
	struct ev_error err = {0};
	struct ev_rowset *rs = NULL;
	struct ev_query *q = ev_query_count(req, cap, &err);
	ck_assert_msg(q != NULL, "%s: %s", what, err.msg);
	if (ev_conn_run(g_conn, q, &rs, &err) != 0)
		ck_abort_msg("%s: %s\n  %s", what, err.msg, q->sql);
	ck_assert_uint_eq(rs->nrows, 1);
	const char *v = ev_rowset_get(rs, 0, "count");
	ck_assert_ptr_nonnull(v);
	long long n = atoll(v);
	ev_rowset_free(&rs);
	ev_query_free(&q);
	return n;
}

/* The count's plan: the table's row (under the derived table that caps it) reads one of the
 * list's indexes, never a scan. */
static void explain_count(const struct ev_list_req *req, const char *what)
{
	struct ev_error err = {0};
	struct ev_query *q = ev_query_count(req, EV_LIST_COUNT_CAP, &err);
	ck_assert_ptr_nonnull(q);
	char *sql = ev_query_render(q);
	char *ex = ev_xasprintf("EXPLAIN %s", sql);
	if (mysql_query(g_db, ex) != 0)
		ck_abort_msg("%s: %s\n  %s", what, mysql_error(g_db), ex);
	MYSQL_RES *r = mysql_store_result(g_db);
	ck_assert_ptr_nonnull(r);
	unsigned nf = mysql_num_fields(r);
	MYSQL_FIELD *f = mysql_fetch_fields(r);
	int ci_table = -1, ci_type = -1, ci_key = -1;
	for (unsigned i = 0; i < nf; i++) {
		if (strcmp(f[i].name, "table") == 0)
			ci_table = (int)i;
		else if (strcmp(f[i].name, "type") == 0)
			ci_type = (int)i;
		else if (strcmp(f[i].name, "key") == 0)
			ci_key = (int)i;
	}
	ck_assert(ci_table >= 0 && ci_type >= 0 && ci_key >= 0);
	bool seen = false;
	MYSQL_ROW row;
	while ((row = mysql_fetch_row(r)) != NULL) {
		if (row[ci_table] == NULL || strcmp(row[ci_table], table_names[req->table]) != 0)
			continue;
		seen = true;
		const char *type = row[ci_type] ? row[ci_type] : "NULL";
		ck_assert_msg(row[ci_key] != NULL && strcmp(type, "ALL") != 0 &&
		                      strcmp(type, "index") != 0,
		              "%s: the count scans (type %s, key %s)\n  %s", what, type,
		              row[ci_key] ? row[ci_key] : "NULL", sql);
		/* The index the list itself forces: the count reads the same one. */
		ck_assert_msg(strstr(sql, row[ci_key]) != NULL,
		              "%s: the count reads %s, not the list's index\n  %s", what,
		              row[ci_key], sql);
	}
	ck_assert_msg(seen, "%s: no plan row on %s", what, table_names[req->table]);
	mysql_free_result(r);
	free(ex);
	free(sql);
	ev_query_free(&q);
}

/* A list's count is the number of its rows — every list, bare and under every filter of its
 * table — capped (a cap below it gives the cap), through the list's index. */
START_TEST(counts_match_the_lists)
{
	size_t nonzero = 0;
	for (size_t i = 0; i < NLCASES; i++) {
		const struct lcase *c = &lcases[i];
		for (int fi = -1; fi < (int)(sizeof(fcases) / sizeof(fcases[0])); fi++) {
			const struct fcase *fc = fi >= 0 ? &fcases[fi] : NULL;
			if (fc != NULL && fc->table != c->table)
				continue;
			struct ev_filter filter = {0};
			struct ev_error err = {0};
			for (int j = 0; fc != NULL && j < 3 && fc->kv[j][0] != NULL; j++)
				ck_assert_int_eq(
				        ev_filter_set(&filter, fc->kv[j][0], fc->kv[j][1], &err),
				        0);
			struct ids want = {0};
			char *sql = ref_sql(c, fc ? fc->cond : NULL);
			ref_ids(sql, &want);
			char *name = case_name(c);
			char *what =
			        ev_xasprintf("count of %s where %s", name, fc ? fc->cond : "-");
			struct ev_list_req req;
			req_for(c, &req);
			req.filter = &filter;
			long long n = evtop_count(&req, EV_LIST_COUNT_CAP, what);
			ck_assert_msg(n == (long long)want.n, "%s: %lld, the list has %zu", what, n,
			              want.n);
			nonzero += n > 0;
			if (want.n > 2)
				ck_assert_int_eq(evtop_count(&req, 2, what), 2);
			if (fc == NULL)
				explain_count(&req, what);
			ev_filter_free(&filter);
			ids_free(&want);
			free(what);
			free(name);
			free(sql);
		}
	}
	ck_assert_uint_ge(nonzero, NLCASES);
}
END_TEST

/* The SQL as rendered for --log-sql, --dry-run and the confirmation dialog (parameters as
 * literals: CJK, ESC, quotes, backslashes, '%' and '_') selects what the prepared statement
 * selects. */
static void check_rendered(const struct lcase *c, const struct ev_filter *filter)
{
	struct ev_list_req req;
	struct ev_error err = {0};
	struct ev_rowset *rs = NULL;
	struct ids got = {0}, rendered = {0};

	req_for(c, &req);
	req.filter = filter;
	req.limit = 1000;
	struct ev_query *q = ev_query_list(&req, &err);
	ck_assert_msg(q != NULL, "%s", err.msg);
	if (ev_conn_run(g_conn, q, &rs, &err) != 0)
		ck_abort_msg("%s: %s", q->name, err.msg);
	for (size_t r = 0; r < rs->nrows; r++)
		ids_push(&got, ev_rowset_get(rs, r, "id"));
	char *sql = ev_query_render(q);
	ref_ids(sql, &rendered);
	char *what = ev_xasprintf("rendered %s", sql);
	assert_same(&got, &rendered, what);
	free(what);
	free(sql);
	ids_free(&got);
	ids_free(&rendered);
	ev_rowset_free(&rs);
	ev_query_free(&q);
}

START_TEST(rendered_sql_selects_the_same)
{
	for (size_t i = 0; i < NLCASES; i++)
		check_rendered(&lcases[i], NULL);
	for (size_t i = 0; i < sizeof(fcases) / sizeof(fcases[0]); i++) {
		const struct fcase *f = &fcases[i];
		struct ev_filter filter = {0};
		struct ev_error err = {0};

		for (int j = 0; j < 3 && f->kv[j][0] != NULL; j++)
			ck_assert_int_eq(ev_filter_set(&filter, f->kv[j][0], f->kv[j][1], &err), 0);
		for (int k = 0; k < EV_LIST_COUNT; k++)
			check_rendered(primary_case(f->table, (enum ev_list_kind)k), &filter);
		ev_filter_free(&filter);
	}
	/* A quote in a value. */
	struct ev_filter filter = {0};
	struct ev_error err = {0};
	ck_assert_int_eq(ev_filter_set(&filter, "fail_reason", "it's \\ 100%", &err), 0);
	check_rendered(primary_case(MSG, EV_LIST_FAILED), &filter);
	ev_filter_free(&filter);
}
END_TEST

/* A filter on a column the message table lacks is refused, not silently ignored. */
START_TEST(filter_unsupported_column)
{
	static const char *const keys[] = {"topic", "locked_by", "channel"};

	for (size_t i = 0; i < 3; i++) {
		struct ev_filter filter = {0};
		struct ev_error err = {0};
		struct ev_list_req req;

		ck_assert_int_eq(ev_filter_set(&filter, keys[i], "x", &err), 0);
		req_for(primary_case(MSG, EV_LIST_FAILED), &req);
		req.filter = &filter;
		req.limit = 10;
		struct ev_query *q = ev_query_list(&req, &err);
		ck_assert_msg(q == NULL, "filter %s on the message table was accepted", keys[i]);
		ck_assert_int_ne(err.code, 0);
		ev_filter_free(&filter);
	}
}
END_TEST

/* --- show ---------------------------------------------------------------------------------- */

static struct ev_rowset *run_show(struct ev_query *q)
{
	struct ev_error err = {0};
	struct ev_rowset *rs = NULL;

	if (ev_conn_run(g_conn, q, &rs, &err) != 0)
		ck_abort_msg("%s: %s\n  %s", q->name, err.msg, q->sql);
	ev_query_free(&q);
	return rs;
}

static struct ev_rowset *show_no(enum ev_table_kind t, const char *no)
{
	return run_show(ev_query_show_by_no(t, table_names[t], no));
}

static const struct ev_cell *cell(const struct ev_rowset *rs, size_t row, const char *col)
{
	int c = ev_rowset_col(rs, col);
	ck_assert_msg(c >= 0, "no column %s", col);
	return ev_rowset_cell(rs, row, (size_t)c);
}

static void assert_bytes(const struct ev_cell *c, const char *want, const char *what)
{
	size_t n = strlen(want);

	ck_assert_msg(c->s != NULL, "%s: NULL", what);
	ck_assert_msg(c->len == n && memcmp(c->s, want, n) == 0, "%s: %zu bytes back, %zu expected",
	              what, c->len, n);
}

START_TEST(show_by_no_finds_the_right_table)
{
	struct ev_rowset *rs;

	rs = show_no(OB, "OUTBOX_ORDER_CREATED_100000000000000001");
	ck_assert_uint_eq(rs->nrows, 1);
	ck_assert_str_eq(ev_rowset_get(rs, 0, "id"), "200000000000000001");
	ck_assert_str_eq(ev_rowset_get(rs, 0, "deleted"), "0");
	ck_assert_uint_eq(rs->ncols, ev_model_table(OB)->ncolumns);
	ev_rowset_free(&rs);
	rs = show_no(MSG, "OUTBOX_ORDER_CREATED_100000000000000001");
	ck_assert_uint_eq(rs->nrows, 0);
	ev_rowset_free(&rs);

	rs = show_no(MSG, "EVT202605130001");
	ck_assert_uint_eq(rs->nrows, 1);
	ck_assert_str_eq(ev_rowset_get(rs, 0, "id"), "100000000000000001");
	ck_assert_uint_eq(rs->ncols, ev_model_table(MSG)->ncolumns);
	ev_rowset_free(&rs);
	rs = show_no(OB, "EVT202605130001");
	ck_assert_uint_eq(rs->nrows, 0);
	ev_rowset_free(&rs);

	/* event_no is unique per table only. */
	rs = show_no(MSG, "EVT-SHARED-0001");
	ck_assert_uint_eq(rs->nrows, 1);
	ck_assert_str_eq(ev_rowset_get(rs, 0, "id"), "73");
	ck_assert_str_eq(ev_rowset_get(rs, 0, "event_payload"), "{\"table\": \"message\"}");
	ev_rowset_free(&rs);
	rs = show_no(OB, "EVT-SHARED-0001");
	ck_assert_uint_eq(rs->nrows, 1);
	ck_assert_str_eq(ev_rowset_get(rs, 0, "id"), "173");
	ck_assert_str_eq(ev_rowset_get(rs, 0, "event_payload"), "{\"table\": \"outbox\"}");
	ev_rowset_free(&rs);

	/* Deleted rows are found, with their flag, for the DELETED badge. */
	rs = show_no(MSG, "MSG-0094");
	ck_assert_uint_eq(rs->nrows, 1);
	ck_assert_str_eq(ev_rowset_get(rs, 0, "id"), "94");
	ck_assert_str_eq(ev_rowset_get(rs, 0, "deleted"), "1");
	ev_rowset_free(&rs);
	rs = show_no(OB, "OB-0191");
	ck_assert_uint_eq(rs->nrows, 1);
	ck_assert_str_eq(ev_rowset_get(rs, 0, "deleted"), "1");
	ck_assert_str_eq(ev_rowset_get(rs, 0, "locked_by"), "publisher-02");
	ev_rowset_free(&rs);

	rs = show_no(MSG, "NO-SUCH-EVENT");
	ck_assert_uint_eq(rs->nrows, 0);
	ev_rowset_free(&rs);
}
END_TEST

/* Ids past 2^63 round-trip exactly, by event_no and by id. */
START_TEST(show_big_ids)
{
	static const struct {
		enum ev_table_kind t;
		const char *no;
		unsigned long long id;
		const char *text;
	} big[] = {
	        {MSG, "MSG-MAX", 18446744073709551615ULL, "18446744073709551615"},
	        {MSG, "MSG-MAX-1", 18446744073709551614ULL, "18446744073709551614"},
	        {OB, "OB-MAX", 18446744073709551615ULL, "18446744073709551615"},
	        {OB, "OB-MAX-1", 18446744073709551614ULL, "18446744073709551614"},
	};

	ck_assert(18446744073709551615ULL == ULLONG_MAX);
	for (size_t i = 0; i < sizeof(big) / sizeof(big[0]); i++) {
		struct ev_rowset *rs = show_no(big[i].t, big[i].no);
		ck_assert_uint_eq(rs->nrows, 1);
		const char *id = ev_rowset_get(rs, 0, "id");
		ck_assert_str_eq(id, big[i].text);
		errno = 0;
		ck_assert(strtoull(id, NULL, 10) == big[i].id && errno == 0);
		ev_rowset_free(&rs);

		rs = run_show(ev_query_show_by_id(big[i].t, table_names[big[i].t], big[i].id));
		ck_assert_uint_eq(rs->nrows, 1);
		ck_assert_str_eq(ev_rowset_get(rs, 0, "id"), big[i].text);
		ck_assert_str_eq(ev_rowset_get(rs, 0, "event_no"), big[i].no);
		ev_rowset_free(&rs);
	}
}
END_TEST

/* Every column of every row, deleted ones included, comes back through evtop's prepared
 * statements with the bytes the server's text protocol shows (NULL as NULL). */
START_TEST(show_every_row_byte_exact)
{
	for (int t = 0; t < EV_TABLE_COUNT; t++) {
		const struct ev_table_def *def = ev_model_table(t);
		struct ids all = {0};
		char *sql = ev_xasprintf("SELECT id FROM %s ORDER BY id", table_names[t]);

		ref_ids(sql, &all);
		free(sql);
		ck_assert_uint_ge(all.n, 60);
		for (size_t i = 0; i < all.n; i++) {
			unsigned long long id = strtoull(all.v[i], NULL, 10);
			struct ev_rowset *rs = run_show(ev_query_show_by_id(t, table_names[t], id));
			ck_assert_uint_eq(rs->nrows, 1);

			struct ev_buf cols;
			ev_buf_init(&cols);
			for (size_t c = 0; c < def->ncolumns; c++)
				ev_buf_printf(&cols, "%s%s", c ? ", " : "", def->columns[c].name);
			char *q = ev_xasprintf("SELECT %s FROM %s WHERE id = %s", cols.data,
			                       table_names[t], all.v[i]);
			ev_buf_free(&cols);
			ck_assert_int_eq(mysql_query(g_db, q), 0);
			MYSQL_RES *r = mysql_store_result(g_db);
			MYSQL_ROW row = mysql_fetch_row(r);
			ck_assert_ptr_nonnull(row);
			unsigned long *len = mysql_fetch_lengths(r);
			for (size_t c = 0; c < def->ncolumns; c++) {
				const struct ev_cell *got = cell(rs, 0, def->columns[c].name);
				if (row[c] == NULL) {
					ck_assert_msg(got->s == NULL, "%s id %s: %s should be NULL",
					              def->key, all.v[i], def->columns[c].name);
					continue;
				}
				ck_assert_msg(got->s != NULL, "%s id %s: %s came back NULL",
				              def->key, all.v[i], def->columns[c].name);
				ck_assert_msg(got->len == len[c] &&
				                      memcmp(got->s, row[c], len[c]) == 0,
				              "%s id %s: %s differs: '%.60s' (%zu bytes), server "
				              "'%.60s' (%lu bytes)",
				              def->key, all.v[i], def->columns[c].name, got->s,
				              got->len, row[c], len[c]);
			}
			mysql_free_result(r);
			free(q);
			ev_rowset_free(&rs);
		}
		ids_free(&all);
	}
}
END_TEST

/* A ~200 KB payload and a 31-level one come back whole; numbers stay as stored. */
START_TEST(payloads_come_back_whole)
{
	static const struct {
		enum ev_table_kind t;
		const char *no;
		long long min;
	} big[] = {
	        {MSG, "MSG-0070", 200 * 1024},
	        {OB, "OB-0170", 200 * 1000},
	        {MSG, "MSG-0071", 200},
	        {OB, "OB-0171", 200},
	};

	for (size_t i = 0; i < sizeof(big) / sizeof(big[0]); i++) {
		struct ev_rowset *rs = show_no(big[i].t, big[i].no);
		ck_assert_uint_eq(rs->nrows, 1);
		const struct ev_cell *p = cell(rs, 0, "event_payload");
		long long want =
		        tdb_int(g_db, "SELECT LENGTH(event_payload) FROM %s WHERE event_no = '%s'",
		                table_names[big[i].t], big[i].no);
		ck_assert_int_ge(want, big[i].min);
		ck_assert_msg(p->s != NULL && (long long)p->len == want,
		              "%s: payload of %zu bytes, stored %lld", big[i].no, p->len, want);
		char *stored =
		        tdb_scalar(g_db, "SELECT event_payload FROM %s WHERE event_no = '%s'",
		                   table_names[big[i].t], big[i].no);
		ck_assert(memcmp(p->s, stored, p->len) == 0);
		free(stored);
		ev_rowset_free(&rs);
	}

	struct ev_rowset *rs = show_no(OB, "OB-0171");
	const struct ev_cell *h = cell(rs, 0, "event_headers");
	ck_assert_uint_eq(h->len, 31 + 3 + 31);
	ev_rowset_free(&rs);

	static const char *const numbers[] = {"MSG-0072", "OB-0172"};
	for (int t = 0; t < EV_TABLE_COUNT; t++) {
		rs = show_no((enum ev_table_kind)t, numbers[t]);
		assert_bytes(
		        cell(rs, 0, "event_payload"),
		        "{\"orderAmount\": 199.00, \"big\": 18446744073709551616, \"neg\": -0.0, "
		        "\"dup\": 1, \"dup\": 2}",
		        numbers[t]);
		ev_rowset_free(&rs);
	}
	rs = show_no(MSG, "EVT202605130001");
	ck_assert_ptr_nonnull(strstr(ev_rowset_get(rs, 0, "event_payload"), "199.00"));
	ev_rowset_free(&rs);
}
END_TEST

/* CJK and ESC bytes come back as stored, from show and from a list: sanitising is the
 * printer's job, not the query's. */
START_TEST(text_bytes_exact)
{
	struct ev_rowset *rs;

	rs = show_no(MSG, "MSG-0044");
	assert_bytes(cell(rs, 0, "fail_reason"), "bad\033[2J", "fail_reason with ESC");
	assert_bytes(cell(rs, 0, "remark"), "r\033]0;title\007", "remark with ESC and BEL");
	ev_rowset_free(&rs);
	rs = show_no(MSG, "MSG-0065");
	assert_bytes(cell(rs, 0, "biz_id"), "ORD\033[2J", "biz_id with ESC");
	assert_bytes(cell(rs, 0, "fail_reason"), "调用下游库存服务超时", "CJK fail_reason");
	ev_rowset_free(&rs);
	rs = show_no(MSG, "MSG-0064");
	assert_bytes(cell(rs, 0, "biz_id"), "订单-中文-001", "CJK biz_id");
	assert_bytes(cell(rs, 0, "remark"), "备注：中文订单", "CJK remark");
	ck_assert_ptr_null(cell(rs, 0, "fail_reason")->s);
	ev_rowset_free(&rs);
	rs = show_no(OB, "OB-0115");
	assert_bytes(cell(rs, 0, "locked_by"), "pub-\033[31m红-发布器", "locked_by with ESC, CJK");
	ev_rowset_free(&rs);
	rs = show_no(OB, "OB-0165");
	assert_bytes(cell(rs, 0, "aggregate_id"), "ORD\033[2J", "aggregate_id with ESC");
	assert_bytes(cell(rs, 0, "locked_by"), "old-\033[2J", "locked_by with ESC");
	ev_rowset_free(&rs);

	/* The same bytes through a list page. */
	struct ev_filter filter = {0};
	struct ev_error err = {0};
	struct ev_list_req req;
	ck_assert_int_eq(ev_filter_set(&filter, "event_no", "OB-0144", &err), 0);
	req_for(primary_case(OB, EV_LIST_FAILED_DUE), &req);
	req.filter = &filter;
	req.limit = 10;
	struct ev_query *q = ev_query_list(&req, &err);
	ck_assert_ptr_nonnull(q);
	ck_assert_int_eq(ev_conn_run(g_conn, q, &rs, &err), 0);
	ck_assert_uint_eq(rs->nrows, 1);
	assert_bytes(cell(rs, 0, "fail_reason"), "bad\033[2J", "listed fail_reason with ESC");
	assert_bytes(cell(rs, 0, "remark"), "r\033]0;title\007", "listed remark with ESC");
	ev_rowset_free(&rs);
	ev_query_free(&q);
	ev_filter_free(&filter);

	/* Every nullable column NULL. */
	rs = show_no(OB, "OB-0103");
	for (size_t c = 0; c < ev_model_table(OB)->ncolumns; c++) {
		const struct ev_column_def *col = &ev_model_table(OB)->columns[c];
		if (col->nullable)
			ck_assert_msg(cell(rs, 0, col->name)->s == NULL, "%s should be NULL",
			              col->name);
		else
			ck_assert_msg(cell(rs, 0, col->name)->s != NULL, "%s is NULL", col->name);
	}
	ev_rowset_free(&rs);
}
END_TEST

/* --- EXPLAIN ------------------------------------------------------------------------------- */

/* The columns of an index in order ("a,b"), from information_schema. */
static char *index_columns(enum ev_table_kind t, const char *index)
{
	return tdb_scalar(
	        g_db,
	        "SELECT IFNULL(GROUP_CONCAT(COLUMN_NAME ORDER BY SEQ_IN_INDEX SEPARATOR ','), "
	        "'') FROM information_schema.STATISTICS WHERE TABLE_SCHEMA = DATABASE() "
	        "AND TABLE_NAME = '%s' AND INDEX_NAME = '%s'",
	        table_names[t], index);
}

static bool leading(const char *cols, const char *cand)
{
	size_t n = strlen(cand);
	return strncmp(cols, cand, n) == 0 && (cols[n] == '\0' || cols[n] == ',');
}

/* EXPLAIN the query as rendered: the key is one of the definition's index candidates (by its
 * leading columns), the access is not a scan, and a filesort only where the definition
 * allows a bounded sort. */
static void explain_one(const struct ev_query_def *d, const struct ev_query *q, const char *variant)
{
	char *sql = ev_query_render(q);
	char *ex = ev_xasprintf("EXPLAIN %s", sql);

	if (mysql_query(g_db, ex) != 0)
		ck_abort_msg("%s: %s\n  %s", d->name, mysql_error(g_db), ex);
	MYSQL_RES *r = mysql_store_result(g_db);
	ck_assert_ptr_nonnull(r);
	unsigned nf = mysql_num_fields(r);
	MYSQL_FIELD *f = mysql_fetch_fields(r);
	int ci_type = -1, ci_key = -1, ci_extra = -1;
	for (unsigned i = 0; i < nf; i++) {
		if (strcmp(f[i].name, "type") == 0)
			ci_type = (int)i;
		else if (strcmp(f[i].name, "key") == 0)
			ci_key = (int)i;
		else if (strcmp(f[i].name, "Extra") == 0)
			ci_extra = (int)i;
	}
	ck_assert(ci_type >= 0 && ci_key >= 0 && ci_extra >= 0);
	ck_assert_uint_eq(mysql_num_rows(r), 1);
	MYSQL_ROW row = mysql_fetch_row(r);
	const char *type = row[ci_type] ? row[ci_type] : "NULL";
	const char *key = row[ci_key];
	const char *extra = row[ci_extra] ? row[ci_extra] : "";
	const char *tk = ev_model_table(d->table)->key;

	if (getenv("CHECK_LISTS_SHOW_PLANS") != NULL)
		printf("%s %-22s %-14s type=%-6s key=%-28s %s\n", tk, d->name, variant, type,
		       key ? key : "NULL", extra);

	ck_assert_msg(key != NULL, "%s %s (%s): no index used (type %s)\n  %s", tk, d->name,
	              variant, type, sql);
	char *cols = index_columns(d->table, key);
	bool ok = false;
	for (int i = 0; i < 3 && d->index[i] != NULL; i++)
		ok = ok || leading(cols, d->index[i]);
	ck_assert_msg(ok, "%s %s (%s): uses %s (%s), not one of the query table's indexes (%s%s%s)",
	              tk, d->name, variant, key, cols, d->index[0], d->index[1] ? " | " : "",
	              d->index[1] ? d->index[1] : "");
	ck_assert_msg(strcmp(type, "ALL") != 0 && strcmp(type, "index") != 0,
	              "%s %s (%s): a scan (type %s, key %s)\n  %s", tk, d->name, variant, type, key,
	              sql);
	if (!d->sort_allowed)
		ck_assert_msg(strstr(extra, "Using filesort") == NULL,
		              "%s %s (%s): sorts (%s) where the query table says the index serves "
		              "the order\n  %s",
		              tk, d->name, variant, extra, sql);
	free(cols);
	mysql_free_result(r);
	free(ex);
	free(sql);
}

static void explain_all(void)
{
	size_t checked = 0;

	for (int t = 0; t < EV_TABLE_COUNT; t++) {
		tdb_exec(g_db, "ALTER TABLE %s STATS_AUTO_RECALC = 0", table_names[t]);
		tdb_exec(g_db, "ANALYZE TABLE %s", table_names[t]);
	}
	for (const struct ev_query_def *d = ev_query_defs; d->name != NULL; d++) {
		struct ev_query *q = NULL;

		if (strcmp(d->name, "show.by_no") == 0) {
			q = ev_query_show_by_no(d->table, table_names[d->table],
			                        d->table == MSG ? "MSG-0030" : "OB-0130");
			explain_one(d, q, "by event_no");
			ev_query_free(&q);
			checked++;
			continue;
		}
		if (strcmp(d->name, "show.by_id") == 0) {
			q = ev_query_show_by_id(d->table, table_names[d->table],
			                        d->table == MSG ? 30 : 130);
			explain_one(d, q, "by id");
			ev_query_free(&q);
			checked++;
			continue;
		}
		bool found = false;
		for (int k = 0; k < EV_LIST_COUNT && !found; k++) {
			const struct lcase *c = primary_case(d->table, (enum ev_list_kind)k);
			struct ev_error err = {0};
			struct ev_list_req req;

			req_for(c, &req);
			req.limit = 100;
			q = ev_query_list(&req, &err);
			ck_assert_msg(q != NULL, "%s: %s", d->name, err.msg);
			if (strcmp(q->name, d->name) != 0) {
				ev_query_free(&q);
				continue;
			}
			found = true;
			bool nullable = q->sort_nullable;
			/* The failed lists' cursors carry their second key (retry_count). */
			req.after.has_mid = q->sort_mid != NULL;
			req.after.mid = 2;
			explain_one(d, q, "first page");
			ev_query_free(&q);

			/* The next pages: after a value (none in the noretry bucket, whose sort
			 * key is always NULL: the server would see an impossible WHERE), and
			 * after a NULL where the sort key has them. */
			req.after.set = true;
			req.after.id = 100;
			snprintf(req.after.value, sizeof(req.after.value), "%s",
			         "2026-06-01 11:00:00");
			if (req.kind != EV_LIST_FAILED_NORETRY) {
				q = ev_query_list(&req, &err);
				ck_assert_ptr_nonnull(q);
				explain_one(d, q, "after a value");
				ev_query_free(&q);
			}
			if (nullable) {
				req.after.value_null = true;
				req.after.value[0] = '\0';
				q = ev_query_list(&req, &err);
				ck_assert_ptr_nonnull(q);
				explain_one(d, q, "after NULL");
				ev_query_free(&q);
			}
			checked++;
		}
		ck_assert_msg(found, "%s %s: no list builds this query",
		              ev_model_table(d->table)->key, d->name);
	}
	ck_assert_uint_ge(checked, 2 * (EV_LIST_COUNT + 2));
}

START_TEST(explain_uses_the_index)
{
	explain_all();
}
END_TEST

/* With the indexes evtop doctor recommends, evtop forces those instead: the plans change, the
 * lists must not. Last: it leaves the indexes in place until it drops them at the end. */
START_TEST(with_recommended_indexes)
{
	static const int sizes[] = {1, 7, 1000};
	char *path = tdb_srcpath("sql/recommended-indexes.sql");

	tdb_source(g_db, path);
	free(path);
	load_table_info();
	ck_assert_ptr_nonnull(ev_index_find(&g_info[MSG], "event_status,update_time"));
	ck_assert_ptr_nonnull(ev_index_find(&g_info[MSG], "event_status,last_handle_time"));
	ck_assert_ptr_nonnull(ev_index_find(&g_info[OB], "publish_status,update_time"));
	explain_all();
	check_all_lists(sizes, sizeof(sizes) / sizeof(sizes[0]));
	tdb_exec(g_db, "ALTER TABLE biz_message_event DROP KEY idx_evtop_status_type, DROP KEY "
	               "idx_evtop_status_update, DROP KEY idx_evtop_status_handle");
	tdb_exec(g_db, "ALTER TABLE biz_outbox_event DROP KEY idx_evtop_status_type, DROP KEY "
	               "idx_evtop_status_update, DROP KEY idx_evtop_status_topic");
}
END_TEST

int main(void)
{
	if (ev_db_init() != 0) {
		fprintf(stderr, "check_lists: cannot initialise the client library\n");
		return 1;
	}
	Suite *s = suite_create("lists");
	TCase *tc = tcase_create("lists");
	tcase_set_timeout(tc, 120);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, every_kind_has_a_case);
	tcase_add_test(tc, clock_is_pinned);
	tcase_add_test(tc, lists_match_reference);
	tcase_add_test(tc, failed_buckets_add_up);
	tcase_add_test(tc, filters_match_reference);
	tcase_add_test(tc, counts_match_the_lists);
	tcase_add_test(tc, rendered_sql_selects_the_same);
	tcase_add_test(tc, filter_unsupported_column);
	tcase_add_test(tc, show_by_no_finds_the_right_table);
	tcase_add_test(tc, show_big_ids);
	tcase_add_test(tc, show_every_row_byte_exact);
	tcase_add_test(tc, payloads_come_back_whole);
	tcase_add_test(tc, text_bytes_exact);
	tcase_add_test(tc, explain_uses_the_index);
	suite_add_tcase(s, tc);
	TCase *rec = tcase_create("recommended");
	tcase_set_timeout(rec, 120);
	tcase_add_checked_fixture(rec, setup, teardown);
	tcase_add_test(rec, with_recommended_indexes);
	suite_add_tcase(s, rec);
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	ev_db_end();
	return failed == 0 ? 0 : 1;
}
