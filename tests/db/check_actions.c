/* db/action against the real test server: every operator action on each table leaves exactly
 * the columns of PRODUCT.md section 2's SET (with NOW() pinned in evtop's session), its
 * evtop_audit row and its audit line; every refusal changes nothing and says why; guards
 * that no longer match are skipped with the row as it is now; lock waits and time limits fail
 * without a retry; a lost COMMIT is resolved by re-reading; an exhausted event retried gets
 * exactly one more attempt of the model document's failure UPDATE. */
#include <config.h>

#include "core/auditlog.h"
#include "core/config.h"
#include "core/guard.h"
#include "core/zone.h"
#include "db/action.h"
#include "db/conn.h"
#include "testdb.h"

#include <check.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NOW_PINNED "2026-06-01 12:00:00"

static struct ev_config cfg;
static MYSQL *db; /* the test's own root connection, its clock pinned too */
static char *pinned;

static const struct ev_audit_who who = {
        .source = "default",
        .os_user = "tester",
        .sudo_user = NULL,
        .ssh_connection = "10.1.1.1 50000 10.1.1.2 22",
        .operator_id = "INC-7",
        .db_user = NULL, /* the connection's CURRENT_USER() */
};

static void setup(void)
{
	char dir[512];

	ev_db_init();
	ev_config_init(&cfg);
	/* The lock wait timeout (5 s, set by the session) must come before the time limit. */
	cfg.statement_timeout_ms = 20000;
	pinned = tdb_pinned_defaults(NOW_PINNED);
	free(cfg.sources[0].defaults_file);
	cfg.sources[0].defaults_file = strdup(pinned);
	db = tdb_connect();
	tdb_exec(db, "SET GLOBAL read_only = 0");
	tdb_exec(db, "DELETE FROM biz_outbox_event");
	tdb_exec(db, "DELETE FROM biz_message_event");
	tdb_exec(db, "DELETE FROM evtop_audit");
	tdb_exec(db, "SET timestamp = UNIX_TIMESTAMP('" NOW_PINNED "')");
	/* Each test gets its own audit file (also with CK_FORK=no, under valgrind). */
	static int serial;
	snprintf(dir, sizeof(dir), "%s/state-%ld-%d", getenv("EVTOP_TEST_DIR"), (long)getpid(),
	         ++serial);
	setenv("XDG_STATE_HOME", dir, 1);
}

static void teardown(void)
{
	MYSQL *root = tdb_connect();
	tdb_exec(root, "SET GLOBAL read_only = 0");
	mysql_close(root);
	mysql_close(db);
	ev_config_free(&cfg);
	free(pinned);
}

/* --- rows ---------------------------------------------------------------------------------- */

/* Literal SQL fragments: "NULL" or "'2026-06-01 11:00:00'". Created 30 min before the pinned
 * NOW(): an hour or more would be a suspected time zone mismatch (core/zone.h). */
static void add_outbox(unsigned long long id, const char *no, int status, int retry, int max,
                       const char *next, const char *locked_by, const char *lock_until,
                       const char *type, const char *agg, int version, int deleted)
{
	tdb_exec(
	        db,
	        "INSERT INTO biz_outbox_event (id, event_no, aggregate_type, aggregate_id, "
	        "event_type, event_source, publish_channel, topic, routing_key, event_payload, "
	        "publish_status, retry_count, max_retry_count, next_retry_time, locked_by, "
	        "lock_until, last_publish_time, fail_reason, trace_id, version, deleted, "
	        "create_time, update_time) VALUES (%llu, '%s', '%s', 'A-%llu', '%s', "
	        "'order-service', 'MQ', 'order.event', 'order.created', '{\"n\": 199.00}', %d, %d, "
	        "%d, %s, %s, %s, '2026-06-01 11:30:00', 'earlier failure', 'trace-1', %d, %d, "
	        "'2026-06-01 11:30:00', '2026-06-01 11:30:00')",
	        id, no, agg, id, type, status, retry, max, next, locked_by, lock_until, version,
	        deleted);
}

static void add_message(unsigned long long id, const char *no, int status, int retry, int max,
                        const char *next, const char *last_handle, const char *type,
                        const char *biz, int version, int deleted)
{
	tdb_exec(db,
	         "INSERT INTO biz_message_event (id, event_no, event_type, biz_type, biz_id, "
	         "event_source, event_payload, event_status, retry_count, max_retry_count, "
	         "next_retry_time, last_handle_time, fail_reason, trace_id, version, deleted, "
	         "create_time, update_time) VALUES (%llu, '%s', '%s', '%s', 'B-%llu', "
	         "'order-service', '{\"a\": 1}', %d, %d, %d, %s, %s, 'earlier failure', 'trace-1', "
	         "%d, %d, '2026-06-01 11:30:00', '2026-06-01 11:30:00')",
	         id, no, type, biz, id, status, retry, max, next, last_handle, version, deleted);
}

static const char *tname(enum ev_table_kind t)
{
	return ev_model_table(t)->default_name;
}

/* The first row of a query, every column as text ("NULL" for SQL NULL); n = 0: no row. */
struct snap {
	unsigned n;
	char *name[40];
	char *val[40];
};

static void snap_sql(struct snap *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void snap_sql(struct snap *s, const char *fmt, ...)
{
	char sql[2048];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(sql, sizeof(sql), fmt, ap);
	va_end(ap);
	memset(s, 0, sizeof(*s));
	if (mysql_query(db, sql) != 0)
		ck_abort_msg("%s: %s", sql, mysql_error(db));
	MYSQL_RES *r = mysql_store_result(db);
	ck_assert_ptr_nonnull(r);
	MYSQL_ROW row = mysql_fetch_row(r);
	if (row != NULL) {
		MYSQL_FIELD *f = mysql_fetch_fields(r);
		s->n = mysql_num_fields(r);
		ck_assert_uint_le(s->n, 40);
		for (unsigned i = 0; i < s->n; i++) {
			s->name[i] = strdup(f[i].name);
			s->val[i] = strdup(row[i] ? row[i] : "NULL");
		}
	}
	mysql_free_result(r);
}

static void snap_row(struct snap *s, enum ev_table_kind t, unsigned long long id)
{
	snap_sql(s, "SELECT * FROM %s WHERE id = %llu", tname(t), id);
	ck_assert_uint_gt(s->n, 0);
}

static const char *snap_get(const struct snap *s, const char *col)
{
	for (unsigned i = 0; i < s->n; i++)
		if (strcmp(s->name[i], col) == 0)
			return s->val[i];
	ck_abort_msg("no column %s", col);
	return NULL;
}

static void snap_free(struct snap *s)
{
	for (unsigned i = 0; i < s->n; i++) {
		free(s->name[i]);
		free(s->val[i]);
	}
	memset(s, 0, sizeof(*s));
}

/* Every column of after equals before, except the (column, value) pairs of changes. */
static void assert_changes(const struct snap *before, const struct snap *after,
                           const char *const *changes)
{
	ck_assert_uint_eq(before->n, after->n);
	for (unsigned i = 0; i < after->n; i++) {
		const char *want = before->val[i];
		for (const char *const *c = changes; c && *c; c += 2)
			if (strcmp(c[0], after->name[i]) == 0)
				want = c[1];
		ck_assert_msg(strcmp(after->val[i], want) == 0, "column %s: '%s', expected '%s'",
		              after->name[i], after->val[i], want);
	}
}

static long long audit_rows(void)
{
	return tdb_int(db, "SELECT COUNT(*) FROM evtop_audit");
}

/* --- evtop's side ------------------------------------------------------------------------ */

static struct ev_conn *evconn(void)
{
	struct ev_error err = {0};
	struct ev_conn *c = ev_conn_new(&cfg.sources[0], &cfg);
	ck_assert_msg(ev_conn_connect(c, &err) == 0, "connect: %s", err.msg);
	return c;
}

struct run {
	enum ev_table_kind t;
	enum ev_action a;
	const char *no;
	const char *reason;
	int delay;
	bool recover_message;
	bool confirm;
	struct ev_guard_row seen;
	struct ev_guard g;
	struct ev_error err;
	struct ev_access acc;
	struct ev_action_outcome out;
};

static void run_init(struct run *r, enum ev_table_kind t, enum ev_action a, const char *no)
{
	memset(r, 0, sizeof(*r));
	r->t = t;
	r->a = a;
	r->no = no;
	r->recover_message = true;
}

/* Read the row as the operator sees it and build the action; 0 or -1 (refused, r->err). */
static int run_build(struct ev_conn *c, struct run *r)
{
	struct ev_error err = {0};
	struct ev_rowset *rs = NULL;
	struct ev_query *q = ev_guard_query_row_by_no(r->t, NULL, r->no);
	ck_assert_msg(ev_conn_run(c, q, &rs, &err) == 0, "%s", err.msg);
	ev_query_free(&q);
	ck_assert_uint_eq(rs->nrows, 1);
	ck_assert_int_eq(ev_guard_row_from_rowset(rs, 0, r->t, &r->seen, &err), 0);
	ev_rowset_free(&rs);
	struct ev_guard_req req = {
	        .table = r->t,
	        .action = r->a,
	        .row = &r->seen,
	        .reason = r->reason,
	        .schedule_delay_s = r->delay,
	        .stuck_threshold_s = 600,
	        .recover_message = r->recover_message,
	        .protected_types = cfg.protected_types,
	        .confirmed_protected = r->confirm,
	};
	return ev_guard_build(&req, &r->g, &r->err);
}

static enum ev_action_result run_apply(struct ev_conn *c, struct run *r)
{
	struct ev_error err = {0};
	struct ev_audit_log log;
	if (!r->acc.writable && r->acc.why[0] == '\0')
		ck_assert_msg(ev_action_check_access(c, r->t, NULL, &r->acc, &err) == 0, "%s",
		              err.msg);
	char *path = ev_audit_log_default_path();
	ck_assert_int_eq(ev_audit_log_open(&log, path, &err), 0);
	free(path);
	struct ev_action_ctx ctx = {.conn = c, .access = &r->acc, .log = &log, .who = &who};
	enum ev_action_result res = ev_action_apply(&ctx, &r->g, &r->seen, &r->out);
	ev_audit_log_close(&log);
	ck_assert_int_eq(res, r->out.result);
	return res;
}

static void run_free(struct run *r)
{
	ev_guard_clear(&r->g);
	ev_guard_row_clear(&r->seen);
	ev_action_outcome_clear(&r->out);
}

/* The audit file's lines (NULL-terminated, malloc'd), or NULL if there is no file. */
static json_t *audit_line(int from_end)
{
	char *path = ev_audit_log_default_path();
	FILE *f = fopen(path, "r");
	free(path);
	if (f == NULL)
		return NULL;
	char *lines[64];
	int n = 0;
	char *line = NULL;
	size_t cap = 0;
	while (getline(&line, &cap, f) > 0 && n < 64) {
		lines[n++] = line;
		line = NULL;
	}
	free(line);
	fclose(f);
	json_t *j = NULL;
	if (n - 1 - from_end >= 0) {
		json_error_t e;
		j = json_loads(lines[n - 1 - from_end], 0, &e);
		ck_assert_msg(j != NULL, "audit line is not JSON: %s", e.text);
	}
	for (int i = 0; i < n; i++)
		free(lines[i]);
	return j;
}

static const char *jget(json_t *j, const char *key)
{
	return json_string_value(json_object_get(j, key));
}

/* The intent line and the result line of r, and the evtop_audit row when applied. */
static void assert_audited(const struct run *r, const char *result)
{
	char id[32];
	snprintf(id, sizeof(id), "%llu", r->seen.id);
	for (int k = 0; k < 2; k++) {
		json_t *j = audit_line(k);
		ck_assert_ptr_nonnull(j);
		ck_assert_str_eq(jget(j, "result"), k == 0 ? result : "intent");
		ck_assert_str_eq(jget(j, "source"), "default");
		ck_assert_str_eq(jget(j, "os_user"), "tester");
		ck_assert(json_is_null(json_object_get(j, "sudo_user")));
		ck_assert_str_eq(jget(j, "ssh_connection"), "10.1.1.1 50000 10.1.1.2 22");
		ck_assert_str_eq(jget(j, "operator"), "INC-7");
		ck_assert_str_eq(jget(j, "db_user"), "root@localhost");
		ck_assert_str_eq(jget(j, "table"), tname(r->t));
		ck_assert_str_eq(jget(j, "id"), id);
		ck_assert_str_eq(jget(j, "event_no"), r->no);
		ck_assert_str_eq(jget(j, "action"), ev_action_name(r->a));
		json_t *b = json_object_get(j, "before");
		ck_assert_int_eq(json_integer_value(json_object_get(b, "status")), r->seen.status);
		ck_assert_int_eq(json_integer_value(json_object_get(b, "retry_count")),
		                 r->seen.retry_count);
		ck_assert_int_eq(json_integer_value(json_object_get(b, "max_retry_count")),
		                 r->seen.max_retry_count);
		ck_assert_int_eq(json_integer_value(json_object_get(b, "version")),
		                 r->seen.version);
		if (r->seen.next_retry_time)
			ck_assert_str_eq(json_string_value(json_object_get(b, "next_retry_time")),
			                 r->seen.next_retry_time);
		else
			ck_assert(json_is_null(json_object_get(b, "next_retry_time")));
		if (k == 0 && strcmp(result, "applied") == 0) {
			ck_assert_int_eq(json_integer_value(json_object_get(j, "after_status")),
			                 r->g.to_status);
			ck_assert(json_is_null(json_object_get(j, "error")));
		} else {
			ck_assert(json_is_null(json_object_get(j, "after_status")));
		}
		if (k == 0 && strcmp(result, "applied") != 0)
			ck_assert_str_eq(jget(j, "error"), r->out.msg);
		if (r->g.audit_reason)
			ck_assert_str_eq(jget(j, "reason"), r->g.audit_reason);
		else
			ck_assert(json_is_null(json_object_get(j, "reason")));
		json_decref(j);
	}

	struct snap a;
	snap_sql(&a, "SELECT * FROM evtop_audit WHERE event_id = %llu ORDER BY id DESC LIMIT 1",
	         r->seen.id);
	if (strcmp(result, "applied") != 0) {
		ck_assert_uint_eq(a.n, 0);
		return;
	}
	ck_assert_uint_gt(a.n, 0);
	char st[8], rc[24], mx[24], ver[24], to[8];
	snprintf(st, sizeof(st), "%d", r->seen.status);
	snprintf(rc, sizeof(rc), "%lld", r->seen.retry_count);
	snprintf(mx, sizeof(mx), "%lld", r->seen.max_retry_count);
	snprintf(ver, sizeof(ver), "%lld", r->seen.version);
	snprintf(to, sizeof(to), "%d", r->g.to_status);
	ck_assert_str_eq(snap_get(&a, "audit_time"), NOW_PINNED ".000");
	ck_assert_str_eq(snap_get(&a, "source"), "default");
	ck_assert_str_eq(snap_get(&a, "os_user"), "tester");
	ck_assert_str_eq(snap_get(&a, "sudo_user"), "NULL");
	ck_assert_str_eq(snap_get(&a, "ssh_connection"), "10.1.1.1 50000 10.1.1.2 22");
	ck_assert_str_eq(snap_get(&a, "operator"), "INC-7");
	ck_assert_str_eq(snap_get(&a, "db_user"), "root@localhost");
	ck_assert_str_eq(snap_get(&a, "table_name"), tname(r->t));
	ck_assert_str_eq(snap_get(&a, "event_id"), id);
	ck_assert_str_eq(snap_get(&a, "event_no"), r->no);
	ck_assert_str_eq(snap_get(&a, "action"), ev_action_name(r->a));
	ck_assert_str_eq(snap_get(&a, "before_status"), st);
	ck_assert_str_eq(snap_get(&a, "before_retry_count"), rc);
	ck_assert_str_eq(snap_get(&a, "before_max_retry_count"), mx);
	ck_assert_str_eq(snap_get(&a, "before_next_retry_time"),
	                 r->seen.next_retry_time ? r->seen.next_retry_time : "NULL");
	ck_assert_str_eq(snap_get(&a, "before_version"), ver);
	ck_assert_str_eq(snap_get(&a, "after_status"), to);
	ck_assert_str_eq(snap_get(&a, "reason"), r->g.audit_reason ? r->g.audit_reason : "NULL");
	ck_assert_str_eq(snap_get(&a, "result"), "applied");
	snap_free(&a);
}

/* Apply one action on a fresh connection and check every column of the row after it. */
static void apply_and_check(struct run *r, const char *const *changes)
{
	struct ev_conn *c = evconn();
	struct snap before, after;
	ck_assert_msg(run_build(c, r) == 0, "refused: %s", r->err.msg);
	snap_row(&before, r->t, r->seen.id);
	long long n = audit_rows();
	ck_assert_msg(run_apply(c, r) == EV_RESULT_APPLIED, "%s: %s",
	              ev_action_result_name(r->out.result), r->out.msg);
	snap_row(&after, r->t, r->seen.id);
	assert_changes(&before, &after, changes);
	ck_assert_int_eq(audit_rows(), n + 1);
	assert_audited(r, "applied");
	/* The outcome carries the row as it is now. */
	ck_assert(r->out.have_now);
	ck_assert_int_eq(r->out.now.version, r->seen.version + 1);
	ck_assert_int_eq(r->out.now.status, r->g.to_status);
	snap_free(&before);
	snap_free(&after);
	ev_conn_free(&c);
}

/* --- each action on each table ----------------------------------------------------------- */

START_TEST(retry_now_each_table)
{
	struct run r;
	/* Exhausted: one more attempt (max_retry_count = retry_count + 1). */
	add_outbox(1, "OB-1", 3, 5, 5, "'2026-06-01 11:50:00'", "NULL", "NULL", "ORDER_CREATED",
	           "ORDER", 4, 0);
	run_init(&r, EV_TABLE_OUTBOX, EV_ACTION_RETRY_NOW, "OB-1");
	r.reason = "downstream is back";
	const char *ob[] = {"publish_status",
	                    "0",
	                    "next_retry_time",
	                    "NULL",
	                    "max_retry_count",
	                    "6",
	                    "version",
	                    "5",
	                    "update_time",
	                    NOW_PINNED,
	                    NULL};
	apply_and_check(&r, ob);
	ck_assert(r.g.grants_attempt);
	ck_assert_ptr_nonnull(strstr(r.out.msg, "one more attempt"));
	run_free(&r);

	add_message(2, "MS-2", 3, 1, 3, "'2026-06-01 13:00:00'", "'2026-06-01 11:29:00'",
	            "ORDER_CREATED", "ORDER", 0, 0);
	run_init(&r, EV_TABLE_MESSAGE, EV_ACTION_RETRY_NOW, "MS-2");
	const char *ms[] = {"event_status", "0",        "next_retry_time",
	                    "NULL",         "version",  "1",
	                    "update_time",  NOW_PINNED, NULL};
	apply_and_check(&r, ms); /* max_retry_count stays 3: retries were left */
	ck_assert(!r.g.grants_attempt);
	run_free(&r);
}
END_TEST

START_TEST(retry_schedule_each_table)
{
	struct run r;
	add_outbox(1, "OB-1", 3, 2, 5, "NULL", "NULL", "NULL", "ORDER_CREATED", "ORDER", 9, 0);
	run_init(&r, EV_TABLE_OUTBOX, EV_ACTION_RETRY_SCHEDULE, "OB-1");
	r.delay = 90;
	const char *ob[] = {"next_retry_time",
	                    "2026-06-01 12:01:30",
	                    "version",
	                    "10",
	                    "update_time",
	                    NOW_PINNED,
	                    NULL};
	apply_and_check(&r, ob);
	run_free(&r);

	add_message(2, "MS-2", 3, 3, 3, "NULL", "NULL", "ORDER_CREATED", "ORDER", 2, 0);
	run_init(&r, EV_TABLE_MESSAGE, EV_ACTION_RETRY_SCHEDULE, "MS-2");
	const char *ms[] = {"next_retry_time",
	                    NOW_PINNED,
	                    "max_retry_count",
	                    "4",
	                    "version",
	                    "3",
	                    "update_time",
	                    NOW_PINNED,
	                    NULL};
	apply_and_check(&r, ms);
	ck_assert(r.g.grants_attempt);
	run_free(&r);
}
END_TEST

START_TEST(cancel_each_table)
{
	struct run r;
	/* A pending outbox row with a stale lock: cancel clears it. */
	add_outbox(1, "OB-1", 0, 0, 5, "NULL", "'publisher-09'", "'2026-06-01 11:00:00'",
	           "ORDER_CREATED", "ORDER", 1, 0);
	run_init(&r, EV_TABLE_OUTBOX, EV_ACTION_CANCEL, "OB-1");
	r.reason = "订单已关闭 (INC-7)";
	const char *ob[] = {"publish_status",
	                    "4",
	                    "fail_reason",
	                    "业务已关闭，取消事件发布：订单已关闭 (INC-7)",
	                    "locked_by",
	                    "NULL",
	                    "lock_until",
	                    "NULL",
	                    "version",
	                    "2",
	                    "update_time",
	                    NOW_PINNED,
	                    NULL};
	apply_and_check(&r, ob);
	run_free(&r);

	add_message(2, "MS-2", 3, 3, 3, "NULL", "NULL", "ORDER_CREATED", "ORDER", 0, 0);
	run_init(&r, EV_TABLE_MESSAGE, EV_ACTION_CANCEL, "MS-2");
	r.reason = "dead letter";
	const char *ms[] = {"event_status",
	                    "4",
	                    "fail_reason",
	                    "业务已关闭，取消事件处理：dead letter",
	                    "version",
	                    "1",
	                    "update_time",
	                    NOW_PINNED,
	                    NULL};
	apply_and_check(&r, ms);
	run_free(&r);
}
END_TEST

START_TEST(recover_each_table)
{
	struct run r;
	add_outbox(1, "OB-1", 1, 2, 5, "NULL", "'publisher-01'", "'2026-06-01 11:58:00'",
	           "ORDER_CREATED", "ORDER", 3, 0);
	run_init(&r, EV_TABLE_OUTBOX, EV_ACTION_RECOVER, "OB-1");
	const char *ob[] = {"publish_status",
	                    "3",
	                    "retry_count",
	                    "3",
	                    "next_retry_time",
	                    "2026-06-01 12:01:00",
	                    "fail_reason",
	                    "发布器锁定超时，等待重新发布",
	                    "locked_by",
	                    "NULL",
	                    "lock_until",
	                    "NULL",
	                    "version",
	                    "4",
	                    "update_time",
	                    NOW_PINNED,
	                    NULL};
	apply_and_check(&r, ob);
	run_free(&r);

	/* Stuck: last handled 20 minutes ago, the threshold is 10. */
	add_message(2, "MS-2", 1, 0, 3, "NULL", "'2026-06-01 11:40:00'", "ORDER_CREATED", "ORDER",
	            1, 0);
	run_init(&r, EV_TABLE_MESSAGE, EV_ACTION_RECOVER, "MS-2");
	r.reason = "consumer pod OOM-killed";
	const char *ms[] = {"event_status",
	                    "3",
	                    "retry_count",
	                    "1",
	                    "next_retry_time",
	                    "2026-06-01 12:01:00",
	                    "fail_reason",
	                    "消费者处理超时，等待重新处理：consumer pod OOM-killed",
	                    "version",
	                    "2",
	                    "update_time",
	                    NOW_PINNED,
	                    NULL};
	apply_and_check(&r, ms);
	ck_assert_ptr_nonnull(strstr(r.g.notice, "handled twice"));
	run_free(&r);
}
END_TEST

/* --- refusals ------------------------------------------------------------------------------- */

static void assert_refused(enum ev_table_kind t, enum ev_action a, const char *no,
                           const char *reason, bool recover_message, int code, const char *says)
{
	struct ev_conn *c = evconn();
	struct run r;
	struct snap before, after;
	run_init(&r, t, a, no);
	r.reason = reason;
	r.recover_message = recover_message;
	ck_assert_int_eq(run_build(c, &r), -1);
	ck_assert_int_eq(r.err.code, code);
	ck_assert_msg(strstr(r.err.msg, says) != NULL, "'%s' does not say '%s'", r.err.msg, says);
	snap_row(&before, t, r.seen.id);
	/* Nothing was run: the row, the audit table and the audit file are as they were. */
	snap_row(&after, t, r.seen.id);
	assert_changes(&before, &after, NULL);
	ck_assert_int_eq(audit_rows(), 0);
	ck_assert_ptr_null(audit_line(0));
	snap_free(&before);
	snap_free(&after);
	run_free(&r);
	ev_conn_free(&c);
}

START_TEST(refusals_change_nothing_and_say_why)
{
	add_outbox(1, "OB-PEND", 0, 0, 5, "NULL", "NULL", "NULL", "ORDER_CREATED", "ORDER", 0, 0);
	add_outbox(2, "OB-DEL", 3, 1, 5, "NULL", "NULL", "NULL", "ORDER_CREATED", "ORDER", 0, 1);
	add_outbox(3, "OB-CANC", 4, 1, 5, "NULL", "NULL", "NULL", "ORDER_CREATED", "ORDER", 0, 0);
	add_outbox(4, "OB-PAY", 3, 1, 5, "NULL", "NULL", "NULL", "PAY_SUCCESS", "PAYMENT", 0, 0);
	add_outbox(5, "OB-PAYM", 3, 1, 5, "NULL", "NULL", "NULL", "ORDER_CREATED", "PAYMENT", 0, 0);
	add_message(6, "MS-STUCK", 1, 0, 3, "NULL", "'2026-06-01 11:00:00'", "ORDER_CREATED",
	            "ORDER", 0, 0);
	add_message(7, "MS-REF", 3, 0, 3, "NULL", "NULL", "REFUND_FINISHED", "ORDER", 0, 0);

	assert_refused(EV_TABLE_OUTBOX, EV_ACTION_RETRY_NOW, "OB-PEND", NULL, true,
	               EV_GUARD_REFUSED_STATUS,
	               "it is pending (0, 待发布); retry_now needs failed");
	assert_refused(EV_TABLE_OUTBOX, EV_ACTION_RECOVER, "OB-PEND", NULL, true,
	               EV_GUARD_REFUSED_STATUS, "recover needs publishing (1)");
	assert_refused(EV_TABLE_OUTBOX, EV_ACTION_RETRY_NOW, "OB-DEL", NULL, true,
	               EV_GUARD_REFUSED_DELETED, "deleted");
	assert_refused(EV_TABLE_OUTBOX, EV_ACTION_CANCEL, "OB-CANC", "again", true,
	               EV_GUARD_REFUSED_FINAL, "cancelled is final");
	assert_refused(EV_TABLE_OUTBOX, EV_ACTION_RETRY_NOW, "OB-PAY", NULL, true,
	               EV_GUARD_REFUSED_PROTECTED, "protected type");
	assert_refused(EV_TABLE_MESSAGE, EV_ACTION_CANCEL, "MS-REF", "x", true,
	               EV_GUARD_REFUSED_PROTECTED, "token REFUND");
	assert_refused(EV_TABLE_MESSAGE, EV_ACTION_RECOVER, "MS-STUCK", NULL, false,
	               EV_GUARD_REFUSED_RECOVER_OFF, "not enabled");
	assert_refused(EV_TABLE_OUTBOX, EV_ACTION_CANCEL, "OB-PEND", NULL, true,
	               EV_GUARD_REFUSED_REASON, "without a reason");

	/* PAYMENT is not PAY: no confirmation needed. */
	struct run r;
	run_init(&r, EV_TABLE_OUTBOX, EV_ACTION_RETRY_NOW, "OB-PAYM");
	apply_and_check(&r, (const char *const[]){"publish_status", "0", "next_retry_time", "NULL",
	                                          "version", "1", "update_time", NOW_PINNED, NULL});
	run_free(&r);
	/* A confirmed protected event is acted on. */
	run_init(&r, EV_TABLE_OUTBOX, EV_ACTION_RETRY_NOW, "OB-PAY");
	r.confirm = true;
	apply_and_check(&r, (const char *const[]){"publish_status", "0", "next_retry_time", "NULL",
	                                          "version", "1", "update_time", NOW_PINNED, NULL});
	ck_assert_str_eq(r.g.protected_token, "PAY");
	run_free(&r);
}
END_TEST

/* Build on the row as seen, let `meanwhile` run, apply: skipped, nothing changed. */
static void assert_skipped(struct run *r, const char *meanwhile, const char *says)
{
	struct ev_conn *c = evconn();
	struct snap before, after;
	ck_assert_msg(run_build(c, r) == 0, "%s", r->err.msg);
	if (meanwhile)
		tdb_exec(db, "%s", meanwhile);
	snap_row(&before, r->t, r->seen.id);
	ck_assert_int_eq(run_apply(c, r), EV_RESULT_SKIPPED);
	ck_assert_msg(strstr(r->out.msg, says) != NULL, "'%s' does not say '%s'", r->out.msg, says);
	snap_row(&after, r->t, r->seen.id);
	assert_changes(&before, &after, NULL);
	ck_assert_int_eq(audit_rows(), 0);
	assert_audited(r, "skipped");
	/* The row as it is now comes back. */
	ck_assert(r->out.have_now);
	ck_assert_int_eq(r->out.now.version, atoll(snap_get(&after, "version")));
	ck_assert_int_eq(r->out.now.status,
	                 atoi(snap_get(&after, ev_model_table(r->t)->status_col)));
	ck_assert_int_eq(r->out.now.retry_count, atoll(snap_get(&after, "retry_count")));
	snap_free(&before);
	snap_free(&after);
	ev_conn_free(&c);
}

START_TEST(version_changed_behind_evtops_back_is_skipped)
{
	struct run r;
	add_outbox(1, "OB-1", 3, 1, 5, "NULL", "NULL", "NULL", "ORDER_CREATED", "ORDER", 2, 0);
	run_init(&r, EV_TABLE_OUTBOX, EV_ACTION_RETRY_NOW, "OB-1");
	/* A publisher claims it between evtop's read and its write (the model's claim). */
	assert_skipped(
	        &r,
	        "UPDATE biz_outbox_event SET publish_status = 1, locked_by = 'publisher-02', "
	        "lock_until = DATE_ADD(NOW(), INTERVAL 2 MINUTE), last_publish_time = NOW(), "
	        "version = version + 1, update_time = NOW() WHERE id = 1 AND deleted = 0 AND "
	        "publish_status IN (0, 3) AND (next_retry_time IS NULL OR next_retry_time <= "
	        "NOW())",
	        "the row changed since it was read (version 2 -> 3, publish_status 3 "
	        "(failed) -> 1 (publishing))");
	ck_assert_int_eq(r.out.now.status, 1);
	run_free(&r);

	add_message(2, "MS-2", 0, 0, 3, "NULL", "NULL", "ORDER_CREATED", "ORDER", 0, 0);
	run_init(&r, EV_TABLE_MESSAGE, EV_ACTION_CANCEL, "MS-2");
	r.reason = "x";
	assert_skipped(
	        &r, "UPDATE biz_message_event SET deleted = 1, version = version + 1 WHERE id = 2",
	        "deleted");
	run_free(&r);
}
END_TEST

START_TEST(lock_not_yet_expired_is_skipped)
{
	struct run r;
	/* The publisher's lock holds until 12:05; the server's clock says 12:00. */
	add_outbox(1, "OB-1", 1, 0, 5, "NULL", "'publisher-01'", "'2026-06-01 12:05:00'",
	           "ORDER_CREATED", "ORDER", 1, 0);
	run_init(&r, EV_TABLE_OUTBOX, EV_ACTION_RECOVER, "OB-1");
	assert_skipped(&r, NULL,
	               "its lock has not expired: lock_until 2026-06-01 12:05:00 is not yet past "
	               "(server time 2026-06-01 12:00:00)");
	run_free(&r);

	/* The message table: handled 5 minutes ago, the threshold is 10. */
	add_message(2, "MS-2", 1, 0, 3, "NULL", "'2026-06-01 11:55:00'", "ORDER_CREATED", "ORDER",
	            0, 0);
	run_init(&r, EV_TABLE_MESSAGE, EV_ACTION_RECOVER, "MS-2");
	assert_skipped(&r, NULL, "it is not stuck: last_handle_time 2026-06-01 11:55:00 is 300 s");
	run_free(&r);
}
END_TEST

/* --- read-only ------------------------------------------------------------------------------- */

/* Apply with whatever access the connection has; must be refused and change nothing. */
static void assert_write_refused(struct ev_conn *c, const char *no, const char *says)
{
	struct run r;
	struct snap before, after;
	run_init(&r, EV_TABLE_OUTBOX, EV_ACTION_RETRY_NOW, no);
	ck_assert_int_eq(run_build(c, &r), 0);
	snap_row(&before, r.t, r.seen.id);
	ck_assert_int_eq(run_apply(c, &r), EV_RESULT_REFUSED);
	ck_assert_msg(strstr(r.out.msg, says) != NULL, "'%s' does not say '%s'", r.out.msg, says);
	snap_row(&after, r.t, r.seen.id);
	assert_changes(&before, &after, NULL);
	ck_assert_int_eq(audit_rows(), 0);
	ck_assert_ptr_null(audit_line(0)); /* refused before the intent line */
	snap_free(&before);
	snap_free(&after);
	run_free(&r);
}

START_TEST(read_only_flag_refuses)
{
	add_outbox(1, "OB-1", 3, 1, 5, "NULL", "NULL", "NULL", "ORDER_CREATED", "ORDER", 0, 0);
	struct ev_conn *c = evconn();
	ev_conn_set_read_only(c, "--read-only");
	assert_write_refused(c, "OB-1", "read-only: --read-only");
	/* Even a statement sent directly is refused without a round trip. */
	struct ev_query *q = ev_guard_query_audit_exists();
	unsigned long long n;
	struct ev_error err = {0};
	ck_assert_int_eq(ev_conn_write(c, q, &n, &err), -1);
	ck_assert_ptr_nonnull(strstr(err.msg, "read-only"));
	ev_query_free(&q);
	ev_conn_free(&c);
}
END_TEST

/* Connect evtop as another account (password "pw"). */
static struct ev_conn *evconn_as(const char *user)
{
	struct ev_error err = {0};
	free(cfg.sources[0].user);
	cfg.sources[0].user = strdup(user);
	struct ev_conn *c = ev_conn_new(&cfg.sources[0], &cfg);
	ev_conn_set_password(c, "pw");
	ck_assert_msg(ev_conn_connect(c, &err) == 0, "connect as %s: %s", user, err.msg);
	return c;
}

/* A user with SELECT on the test database and the GRANTs of `grants` (';'-separated, each
 * with "DB" for the database and "USER" for the user). */
static void make_user(const char *user, const char *grants)
{
	const char *dbn = getenv("EVTOP_TEST_DB");
	tdb_exec(db, "DROP USER IF EXISTS '%s'@'localhost'", user);
	tdb_exec(db, "CREATE USER '%s'@'localhost' IDENTIFIED BY 'pw'", user);
	tdb_exec(db, "GRANT SELECT ON `%s`.* TO '%s'@'localhost'", dbn, user);
	char *g = strdup(grants);
	for (char *s = strtok(g, ";"); s != NULL; s = strtok(NULL, ";")) {
		char sql[1024] = "";
		for (const char *p = s; *p;) {
			if (strncmp(p, "DB", 2) == 0) {
				strcat(sql, dbn);
				p += 2;
			} else if (strncmp(p, "USER", 4) == 0) {
				strcat(sql, user);
				p += 4;
			} else {
				strncat(sql, p++, 1);
			}
		}
		tdb_exec(db, "%s", sql);
	}
	free(g);
}

START_TEST(accounts_without_the_privileges_are_read_only)
{
	struct ev_error err = {0};
	struct ev_access a;
	add_outbox(1, "OB-1", 3, 1, 5, "NULL", "NULL", "NULL", "ORDER_CREATED", "ORDER", 0, 0);

	/* SELECT only. */
	make_user("evtop_ro", "");
	struct ev_conn *c = evconn_as("evtop_ro");
	ck_assert_int_eq(ev_action_check_access(c, EV_TABLE_OUTBOX, NULL, &a, &err), 0);
	ck_assert(!a.writable);
	ck_assert_ptr_nonnull(strstr(a.why, "evtop_ro@localhost may not write biz_outbox_event"));
	ck_assert_ptr_nonnull(strstr(a.why, "UPDATE command denied"));
	assert_write_refused(c, "OB-1", "may not write");
	ev_conn_free(&c);

	/* UPDATE on some of the columns only. */
	make_user("evtop_cols", "GRANT UPDATE (publish_status, version, update_time) ON "
	                        "`DB`.biz_outbox_event TO 'USER'@'localhost'");
	c = evconn_as("evtop_cols");
	ck_assert_int_eq(ev_action_check_access(c, EV_TABLE_OUTBOX, NULL, &a, &err), 0);
	ck_assert(!a.writable);
	ck_assert_ptr_nonnull(strstr(a.why, "for column"));
	ev_conn_free(&c);

	/* The compensating account of sql/grants.sql, without INSERT on the audit table. */
	make_user("evtop_noaudit",
	          "GRANT UPDATE (publish_status, retry_count, max_retry_count, next_retry_time, "
	          "fail_reason, locked_by, lock_until, version, update_time) ON "
	          "`DB`.biz_outbox_event TO 'USER'@'localhost'");
	c = evconn_as("evtop_noaudit");
	ck_assert_int_eq(ev_action_check_access(c, EV_TABLE_OUTBOX, NULL, &a, &err), 0);
	ck_assert(!a.writable);
	ck_assert(a.audit_table);
	ck_assert_ptr_nonnull(strstr(a.why, "may not INSERT into evtop_audit"));
	ev_conn_free(&c);

	/* ... and with it, through a role: the server's own check sees role grants. */
	tdb_exec(db, "DROP ROLE IF EXISTS evtop_ops_role");
	tdb_exec(db, "CREATE ROLE evtop_ops_role");
	tdb_exec(db, "GRANT INSERT ON `%s`.evtop_audit TO evtop_ops_role", getenv("EVTOP_TEST_DB"));
	tdb_exec(db, "GRANT evtop_ops_role TO 'evtop_noaudit'@'localhost'");
	tdb_exec(db, "SET DEFAULT ROLE evtop_ops_role FOR 'evtop_noaudit'@'localhost'");
	c = evconn_as("evtop_noaudit");
	ck_assert_int_eq(ev_action_check_access(c, EV_TABLE_OUTBOX, NULL, &a, &err), 0);
	ck_assert_msg(a.writable, "%s", a.why);
	/* The message table is still read-only for it. */
	ck_assert_int_eq(ev_action_check_access(c, EV_TABLE_MESSAGE, NULL, &a, &err), 0);
	ck_assert(!a.writable);
	ev_conn_free(&c);
}
END_TEST

/* #25 item 1: a time zone mismatch in either direction refuses every write until the operator
 * says the zone is right; the newest row is read through the create_time index, never a scan. */
START_TEST(zone_mismatch_refuses_writes_both_ways)
{
	struct ev_error err = {0};
	struct ev_access a;
	add_outbox(1, "OB-1", 3, 1, 5, "NULL", "NULL", "NULL", "ORDER_CREATED", "ORDER", 0, 0);
	struct ev_conn *c = evconn();
	ck_assert_int_eq(ev_action_check_access(c, EV_TABLE_OUTBOX, NULL, &a, &err), 0);
	ck_assert_msg(a.writable && !a.clock_suspect, "%s", a.why);

	/* Behind: the newest row 8h07m before NOW(). */
	tdb_exec(db, "UPDATE biz_outbox_event SET create_time = '2026-06-01 03:53:00'");
	ck_assert_int_eq(ev_action_check_access(c, EV_TABLE_OUTBOX, NULL, &a, &err), 0);
	ck_assert(!a.writable);
	ck_assert(a.clock_suspect);
	ck_assert_msg(strstr(a.why, "its newest row (event_no OB-1, id 1, create_time 2026-06-01 "
	                            "03:53:00) is 8h07m behind NOW()") != NULL,
	              "%s", a.why);
	ck_assert_msg(strstr(a.why, "--time-zone=-08:00") != NULL, "%s", a.why);
	assert_write_refused(c, "OB-1", "time zone mismatch suspected");
	/* The operator's word lifts the block; the suspicion stays said. */
	ck_assert_int_eq(ev_action_check_access_clock(c, EV_TABLE_OUTBOX, NULL, true, &a, &err), 0);
	ck_assert_msg(a.writable, "%s", a.why);
	ck_assert(a.clock_suspect && a.clock_ok);
	ck_assert_ptr_nonnull(strstr(a.clock_why, "8h07m behind"));

	/* 20 minutes past a whole hour: a mismatch whose newest row is 20 min old, or a quiet
	 * table; they cannot be told apart, and the alarm wins. */
	tdb_exec(db, "UPDATE biz_outbox_event SET create_time = '2026-06-01 03:40:00'");
	ck_assert_int_eq(ev_action_check_access(c, EV_TABLE_OUTBOX, NULL, &a, &err), 0);
	ck_assert_msg(!a.writable && a.clock_suspect, "%s", a.why);
	ck_assert_msg(strstr(a.why, "8h20m behind") != NULL, "%s", a.why);
	/* Under an hour behind: the applications' own pace. */
	tdb_exec(db, "UPDATE biz_outbox_event SET create_time = '2026-06-01 11:20:00'");
	ck_assert_int_eq(ev_action_check_access(c, EV_TABLE_OUTBOX, NULL, &a, &err), 0);
	ck_assert_msg(a.writable && !a.clock_suspect, "%s", a.why);

	/* Ahead. */
	tdb_exec(db, "UPDATE biz_outbox_event SET create_time = '2026-06-01 12:30:00'");
	ck_assert_int_eq(ev_action_check_access(c, EV_TABLE_OUTBOX, NULL, &a, &err), 0);
	ck_assert(!a.writable && a.clock_suspect);
	ck_assert_msg(strstr(a.why, "create_time 2026-06-01 12:30:00) is 30m00s ahead of NOW()") !=
	                      NULL,
	              "%s", a.why);

	/* The query reads one entry of idx_create_time: EXPLAIN names the index, no scan. */
	struct ev_table_info ti = {0};
	ck_assert_int_eq(ev_conn_table_info(c, "biz_outbox_event", &ti, &err), 0);
	const char *index = ev_index_find(&ti, "create_time");
	ck_assert_ptr_nonnull(index);
	ck_assert_str_eq(index, "idx_create_time");
	struct ev_query *q = ev_zone_query_newest("biz_outbox_event", index);
	const char *sel = strstr(q->sql, "SELECT");
	ck_assert_ptr_nonnull(sel);
	MYSQL_RES *res = NULL;
	char explain[2048];
	snprintf(explain, sizeof(explain), "EXPLAIN %s", sel);
	ck_assert_msg(mysql_query(db, explain) == 0, "%s: %s", explain, mysql_error(db));
	res = mysql_store_result(db);
	ck_assert_ptr_nonnull(res);
	ck_assert_int_eq(mysql_num_rows(res), 1);
	MYSQL_ROW row = mysql_fetch_row(res);
	unsigned nf = mysql_num_fields(res);
	MYSQL_FIELD *f = mysql_fetch_fields(res);
	const char *type = NULL, *key = NULL;
	for (unsigned i = 0; i < nf; i++) {
		if (strcmp(f[i].name, "type") == 0)
			type = row[i];
		if (strcmp(f[i].name, "key") == 0)
			key = row[i];
	}
	ck_assert_ptr_nonnull(key);
	ck_assert_str_eq(key, "idx_create_time");
	ck_assert_ptr_nonnull(type);
	ck_assert_str_ne(type, "ALL"); /* not a table scan */
	mysql_free_result(res);
	ev_query_free(&q);
	ev_table_info_clear(&ti);
	ev_conn_free(&c);
}
END_TEST

START_TEST(server_read_only_is_detected)
{
	struct ev_error err = {0};
	struct ev_access a;
	add_outbox(1, "OB-1", 3, 1, 5, "NULL", "NULL", "NULL", "ORDER_CREATED", "ORDER", 0, 0);
	make_user("evtop_rw", "GRANT UPDATE ON `DB`.* TO 'USER'@'localhost';GRANT INSERT ON "
	                      "`DB`.evtop_audit TO 'USER'@'localhost'");
	struct ev_conn *c = evconn_as("evtop_rw");
	ck_assert_int_eq(ev_action_check_access(c, EV_TABLE_OUTBOX, NULL, &a, &err), 0);
	ck_assert_msg(a.writable, "%s", a.why);

	tdb_exec(db, "SET GLOBAL read_only = 1");
	ck_assert_int_eq(ev_action_check_access(c, EV_TABLE_OUTBOX, NULL, &a, &err), 0);
	ck_assert(!a.writable);
	ck_assert_ptr_nonnull(strstr(a.why, "the server is read-only (@@read_only = 1)"));
	ck_assert_ptr_nonnull(ev_conn_read_only(c));
	assert_write_refused(c, "OB-1", "read-only");

	/* Had evtop not looked, the server itself would have refused, and it is reported. */
	ev_conn_set_read_only(c, NULL);
	struct run r;
	run_init(&r, EV_TABLE_OUTBOX, EV_ACTION_RETRY_NOW, "OB-1");
	ck_assert_int_eq(run_build(c, &r), 0);
	r.acc.writable = true;
	ck_assert_int_eq(run_apply(c, &r), EV_RESULT_FAILED);
	ck_assert_ptr_nonnull(strstr(r.out.msg, "the server refuses writes"));
	ck_assert_int_eq(tdb_int(db, "SELECT version FROM biz_outbox_event WHERE id = 1"), 0);
	run_free(&r);
	tdb_exec(db, "SET GLOBAL read_only = 0");
	ev_conn_free(&c);
}
END_TEST

/* --- errors: nothing retried ---------------------------------------------------------------- */

static void assert_fails_while_locked(const char *says)
{
	add_outbox(1, "OB-1", 3, 1, 5, "NULL", "NULL", "NULL", "ORDER_CREATED", "ORDER", 0, 0);
	struct ev_conn *c = evconn();
	struct run r;
	struct snap before, after;
	run_init(&r, EV_TABLE_OUTBOX, EV_ACTION_RETRY_NOW, "OB-1");
	ck_assert_int_eq(run_build(c, &r), 0);
	snap_row(&before, r.t, 1);
	/* Another session holds the row in an open transaction. */
	MYSQL *holder = tdb_connect();
	tdb_exec(holder, "BEGIN");
	tdb_exec(holder, "SELECT * FROM biz_outbox_event WHERE id = 1 FOR UPDATE");
	ck_assert_int_eq(run_apply(c, &r), EV_RESULT_FAILED);
	ck_assert_msg(strstr(r.out.msg, says) != NULL, "'%s' does not say '%s'", r.out.msg, says);
	tdb_exec(holder, "ROLLBACK");
	mysql_close(holder);
	snap_row(&after, r.t, 1);
	assert_changes(&before, &after, NULL);
	ck_assert_int_eq(audit_rows(), 0);
	assert_audited(&r, "failed");
	/* The connection is still good for the next action, and nothing was retried. */
	run_free(&r);
	run_init(&r, EV_TABLE_OUTBOX, EV_ACTION_RETRY_NOW, "OB-1");
	ck_assert_int_eq(run_build(c, &r), 0);
	ck_assert_int_eq(run_apply(c, &r), EV_RESULT_APPLIED);
	run_free(&r);
	snap_free(&before);
	snap_free(&after);
	ev_conn_free(&c);
}

START_TEST(lock_wait_timeout_fails_and_changes_nothing)
{
	assert_fails_while_locked("lock wait timeout: another session holds the row");
}
END_TEST

START_TEST(statement_time_limit_fails_and_changes_nothing)
{
	cfg.statement_timeout_ms = 1000;
	assert_fails_while_locked("stopped by the server's statement time limit (1000 ms)");
}
END_TEST

static int kill_before_commit(enum ev_action_point p, struct ev_conn *c, void *arg)
{
	if (p == EV_POINT_BEFORE_COMMIT) {
		MYSQL *root = tdb_connect();
		tdb_exec(root, "KILL CONNECTION %lu", ev_conn_thread_id(c));
		mysql_close(root);
		usleep(100 * 1000);
	}
	return 0;
}

static int lose_commit_answer(enum ev_action_point p, struct ev_conn *c, void *arg)
{
	return p == EV_POINT_AFTER_COMMIT;
}

START_TEST(lost_commit_is_resolved_by_rereading)
{
	add_outbox(1, "OB-1", 3, 1, 5, "NULL", "NULL", "NULL", "ORDER_CREATED", "ORDER", 0, 0);
	struct ev_conn *c = evconn();
	struct run r;
	struct snap before, after;

	/* The connection dies before COMMIT: the server rolled back; the re-read says so. */
	run_init(&r, EV_TABLE_OUTBOX, EV_ACTION_RETRY_NOW, "OB-1");
	ck_assert_int_eq(run_build(c, &r), 0);
	snap_row(&before, r.t, 1);
	unsigned long first = ev_conn_thread_id(c);
	ev_action_set_fault(kill_before_commit, NULL);
	ck_assert_int_eq(run_apply(c, &r), EV_RESULT_FAILED);
	ev_action_set_fault(NULL, NULL);
	ck_assert_msg(strstr(r.out.msg, "the change was NOT committed") != NULL, "%s", r.out.msg);
	ck_assert_uint_ne(ev_conn_thread_id(c), first); /* reconnected to re-read */
	ck_assert(r.out.have_now);
	ck_assert_int_eq(r.out.now.version, 0);
	snap_row(&after, r.t, 1);
	assert_changes(&before, &after, NULL);
	ck_assert_int_eq(audit_rows(), 0);
	assert_audited(&r, "failed");
	snap_free(&after);
	run_free(&r);

	/* The COMMIT went through but its answer was lost: the re-read finds the change. */
	run_init(&r, EV_TABLE_OUTBOX, EV_ACTION_RETRY_NOW, "OB-1");
	ck_assert_int_eq(run_build(c, &r), 0);
	ev_action_set_fault(lose_commit_answer, NULL);
	ck_assert_int_eq(run_apply(c, &r), EV_RESULT_APPLIED);
	ev_action_set_fault(NULL, NULL);
	ck_assert_msg(strstr(r.out.msg, "the change was committed") != NULL, "%s", r.out.msg);
	snap_row(&after, r.t, 1);
	assert_changes(&before, &after,
	               (const char *const[]){"publish_status", "0", "version", "1", "update_time",
	                                     NOW_PINNED, NULL});
	assert_audited(&r, "applied");
	snap_free(&before);
	snap_free(&after);
	run_free(&r);
	ev_conn_free(&c);
}
END_TEST

START_TEST(found_rows_cannot_confuse_it)
{
	/* return-found-rows in the option file turns CLIENT_FOUND_ROWS on: affected rows then
	 * count matched rows. evtop's UPDATE always changes version, so 1 = applied, 0 = the
	 * guard refused, either way. */
	char *path = NULL;
	ck_assert_int_ne(asprintf(&path, "%s/found.cnf", getenv("EVTOP_TEST_DIR")), -1);
	FILE *in = fopen(pinned, "r"), *out = fopen(path, "w");
	char line[1024];
	while (fgets(line, sizeof(line), in) != NULL) {
		fputs(line, out);
		if (strncmp(line, "[evtop]", 7) == 0)
			fputs("return-found-rows\n", out);
	}
	fclose(in);
	fclose(out);
	free(cfg.sources[0].defaults_file);
	cfg.sources[0].defaults_file = path;

	add_outbox(1, "OB-1", 3, 1, 5, "NULL", "NULL", "NULL", "ORDER_CREATED", "ORDER", 0, 0);
	struct run r;
	run_init(&r, EV_TABLE_OUTBOX, EV_ACTION_RETRY_NOW, "OB-1");
	assert_skipped(&r, "UPDATE biz_outbox_event SET version = version + 1 WHERE id = 1",
	               "the row changed");
	run_free(&r);
	run_init(&r, EV_TABLE_OUTBOX, EV_ACTION_RETRY_SCHEDULE, "OB-1");
	apply_and_check(&r, (const char *const[]){"next_retry_time", NOW_PINNED, "version", "2",
	                                          "update_time", NOW_PINNED, NULL});
	run_free(&r);
}
END_TEST

/* --- one more attempt ---------------------------------------------------------------------- */

static unsigned long long affected(const char *sql)
{
	tdb_exec(db, "%s", sql);
	return (unsigned long long)mysql_affected_rows(db);
}

/* The model document's claim and failure UPDATEs, per table. */
#define MSG_CLAIM                                                                                  \
	"UPDATE biz_message_event SET event_status = 1, last_handle_time = NOW(), version = "      \
	"version + 1, update_time = NOW() WHERE id = 2 AND event_status IN (0, 3) AND deleted = 0"
#define MSG_FAIL                                                                                       \
	"UPDATE biz_message_event SET event_status = 3, retry_count = retry_count + 1, "               \
	"next_retry_time = DATE_ADD(NOW(), INTERVAL 5 MINUTE), fail_reason = "                         \
	"'调用下游库存服务超时', update_time = NOW() WHERE id = 2 AND event_status = 1 AND " \
	"retry_count < max_retry_count AND deleted = 0"
#define OB_CLAIM                                                                                   \
	"UPDATE biz_outbox_event SET publish_status = 1, locked_by = 'publisher-01', lock_until "  \
	"= "                                                                                       \
	"DATE_ADD(NOW(), INTERVAL 2 MINUTE), last_publish_time = NOW(), version = version + 1, "   \
	"update_time = NOW() WHERE id = 1 AND deleted = 0 AND publish_status IN (0, 3) AND "       \
	"(next_retry_time IS NULL OR next_retry_time <= NOW())"
#define OB_FAIL                                                                                        \
	"UPDATE biz_outbox_event SET publish_status = 3, retry_count = retry_count + 1, "              \
	"next_retry_time = DATE_ADD(NOW(), INTERVAL 5 MINUTE), fail_reason = '发送MQ消息超时', " \
	"locked_by = NULL, lock_until = NULL, update_time = NOW() WHERE id = 1 AND deleted = 0 "       \
	"AND publish_status = 1 AND locked_by = 'publisher-01' AND retry_count < max_retry_count"

START_TEST(exhausted_event_gets_exactly_one_more_attempt)
{
	add_outbox(1, "OB-1", 3, 5, 5, "'2026-06-01 11:00:00'", "NULL", "NULL", "ORDER_CREATED",
	           "ORDER", 7, 0);
	add_message(2, "MS-2", 3, 3, 3, "'2026-06-01 11:00:00'", "'2026-06-01 10:59:00'",
	            "ORDER_CREATED", "ORDER", 7, 0);

	/* Without evtop's retry, the failure UPDATE could never record the next failure. */
	struct ev_conn *c = evconn();
	struct run r;
	run_init(&r, EV_TABLE_OUTBOX, EV_ACTION_RETRY_NOW, "OB-1");
	ck_assert_int_eq(run_build(c, &r), 0);
	ck_assert(r.g.grants_attempt);
	ck_assert_int_eq(run_apply(c, &r), EV_RESULT_APPLIED);
	run_free(&r);
	run_init(&r, EV_TABLE_MESSAGE, EV_ACTION_RETRY_NOW, "MS-2");
	ck_assert_int_eq(run_build(c, &r), 0);
	ck_assert_int_eq(run_apply(c, &r), EV_RESULT_APPLIED);
	run_free(&r);
	ev_conn_free(&c);

	/* One attempt: claimed, failed once (recorded), and no more. */
	ck_assert_uint_eq(affected(OB_CLAIM), 1);
	ck_assert_uint_eq(affected(OB_FAIL), 1);
	ck_assert_int_eq(tdb_int(db, "SELECT retry_count FROM biz_outbox_event WHERE id = 1"), 6);
	tdb_exec(db, "SET timestamp = UNIX_TIMESTAMP('2026-06-01 12:10:00')");
	ck_assert_uint_eq(affected(OB_CLAIM), 1);
	ck_assert_uint_eq(affected(OB_FAIL), 0);
	ck_assert_int_eq(tdb_int(db, "SELECT retry_count FROM biz_outbox_event WHERE id = 1"), 6);
	/* The retry scan no longer sees it: exhausted again. */
	ck_assert_int_eq(tdb_int(db, "SELECT COUNT(*) FROM biz_outbox_event WHERE deleted = 0 AND "
	                             "publish_status = 3 AND retry_count < max_retry_count"),
	                 0);

	ck_assert_uint_eq(affected(MSG_CLAIM), 1);
	ck_assert_uint_eq(affected(MSG_FAIL), 1);
	ck_assert_uint_eq(affected(MSG_CLAIM), 1);
	ck_assert_uint_eq(affected(MSG_FAIL), 0);
	ck_assert_int_eq(tdb_int(db, "SELECT retry_count FROM biz_message_event WHERE id = 2"), 4);
	ck_assert_int_eq(tdb_int(db, "SELECT max_retry_count FROM biz_message_event WHERE id = 2"),
	                 4);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("actions");
	TCase *tc = tcase_create("actions");
	tcase_set_timeout(tc, 60);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, retry_now_each_table);
	tcase_add_test(tc, retry_schedule_each_table);
	tcase_add_test(tc, cancel_each_table);
	tcase_add_test(tc, recover_each_table);
	tcase_add_test(tc, refusals_change_nothing_and_say_why);
	tcase_add_test(tc, version_changed_behind_evtops_back_is_skipped);
	tcase_add_test(tc, lock_not_yet_expired_is_skipped);
	tcase_add_test(tc, read_only_flag_refuses);
	tcase_add_test(tc, accounts_without_the_privileges_are_read_only);
	tcase_add_test(tc, server_read_only_is_detected);
	tcase_add_test(tc, lock_wait_timeout_fails_and_changes_nothing);
	tcase_add_test(tc, statement_time_limit_fails_and_changes_nothing);
	tcase_add_test(tc, lost_commit_is_resolved_by_rereading);
	tcase_add_test(tc, found_rows_cannot_confuse_it);
	tcase_add_test(tc, exhausted_event_gets_exactly_one_more_attempt);
	tcase_add_test(tc, zone_mismatch_refuses_writes_both_ways);
	suite_add_tcase(s, tc);
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? 0 : 1;
}
