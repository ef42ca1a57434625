/* db/archive against the harness's own server: a run moves exactly the finished rows older
 * than the cutoff (every row afterwards in exactly one of online / archive, with the same
 * content: ids and a checksum of every column compared); the server killed (SIGKILL, then
 * restarted on the same data) just before a batch's COMMIT leaves that batch not committed and
 * said so, just after it leaves it committed and said so, and a rerun from the saved cursor
 * finishes; a row set back to failed between the candidates' read and its lock is never moved.
 * Needs the harness's own server (it kills and restarts it). */
#include <config.h>

#include "core/archive.h"
#include "core/auditlog.h"
#include "core/config.h"
#include "db/archive.h"
#include "db/conn.h"
#include "testdb.h"

#include <check.h>
#include <errno.h>
#include <jansson.h>
#include <sys/wait.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

static struct ev_config cfg;
static MYSQL *db;
static char audit_path[512];
static long long content_before;

#define ROWS     1000
#define FINISHED 200 /* id % 5 == 2: success */

static void server_restart(void)
{
	tdb_server_kill();
	tdb_server_start();
}

/* A checksum of every row's every column, over the online table and the archive together. */
static long long content(MYSQL *m)
{
	return tdb_int(
	        m, "SELECT IFNULL(SUM(CRC32(CONCAT_WS('|', id, event_no, aggregate_id, "
	           "event_payload, publish_status, retry_count, IFNULL(next_retry_time, '-'), "
	           "IFNULL(fail_reason, '-'), version, deleted, create_time, update_time))), 0) "
	           "FROM (SELECT * FROM biz_outbox_event UNION ALL SELECT * FROM "
	           "biz_outbox_event_archive) u");
}

static void setup(void)
{
	static int serial;
	ev_db_init();
	ev_config_init(&cfg);
	cfg.statement_timeout_ms = 20000;
	free(cfg.sources[0].defaults_file);
	cfg.sources[0].defaults_file = strdup(getenv("EVTOP_TEST_DEFAULTS_FILE"));
	db = tdb_connect();
	tdb_exec(db, "TRUNCATE biz_outbox_event");
	tdb_exec(db, "TRUNCATE evtop_archive_log");
	tdb_exec(db, "DROP TABLE IF EXISTS biz_outbox_event_archive");
	tdb_exec(db, "CREATE TABLE biz_outbox_event_archive LIKE biz_outbox_event");
	tdb_exec(db, "ALTER TABLE biz_outbox_event_archive DROP INDEX uk_event_no, ADD KEY "
	             "idx_event_no (event_no)");
	/* Statuses by id % 5; create_time one minute apart, in id order but for every 7th row. */
	tdb_exec(
	        db,
	        "INSERT INTO biz_outbox_event (id, event_no, aggregate_type, aggregate_id, "
	        "event_type, event_source, publish_channel, event_payload, publish_status, "
	        "retry_count, next_retry_time, fail_reason, version, create_time, update_time) "
	        "SELECT seq, CONCAT('OB-A-', seq), 'ORDER', seq, 'ORDER_CREATED', 'svc', 'MQ', "
	        "JSON_OBJECT('n', seq, 'text', REPEAT('x', seq %% 50)), seq %% 5, seq %% 3, IF(seq "
	        "%% 5 = 3, '2026-02-01 00:00:00', NULL), IF(seq %% 5 = 3, 'HTTP 503', NULL), 1, "
	        "'2026-01-01 00:00:00' + INTERVAL IF(seq %% 7 = 0, 2000 - seq, seq) MINUTE, "
	        "'2026-01-02 00:00:00' FROM seq_1_to_%d",
	        ROWS);
	content_before = content(db);
	snprintf(audit_path, sizeof(audit_path), "%s/archive-%ld-%d.jsonl",
	         getenv("EVTOP_TEST_DIR"), (long)getpid(), ++serial);
}

static void teardown(void)
{
	ev_archive_set_fault(NULL, NULL);
	mysql_close(db);
	ev_config_free(&cfg);
}

struct run {
	struct ev_conn *conn;
	struct ev_table_info info;
	struct ev_archive_spec sp;
	struct ev_audit_log log;
	struct ev_archive_cursor cursor;
	struct ev_archive_result res;
};

static void run_open(struct run *r)
{
	struct ev_error err = {0};
	memset(r, 0, sizeof(*r));
	r->conn = ev_conn_new(&cfg.sources[0], &cfg);
	ck_assert_msg(ev_conn_connect(r->conn, &err) == 0, "%s", err.msg);
	ck_assert_int_eq(ev_conn_table_info(r->conn, "biz_outbox_event", &r->info, &err), 0);
	r->sp = (struct ev_archive_spec){
	        .table = EV_TABLE_OUTBOX,
	        .table_name = "biz_outbox_event",
	        .archive_name = "biz_outbox_event_archive",
	        .target = EV_ARCHIVE_TO_TABLE,
	        .statuses = 1u << EV_ST_SUCCESS,
	        .cutoff = "2026-06-01 00:00:00",
	        .columns = (const char *const *)r->info.columns,
	        .ncolumns = r->info.ncolumns,
	        .create_index = ev_index_find(&r->info, "create_time"),
	};
	ck_assert_ptr_nonnull(r->sp.create_index);
	r->log.fd = -1;
	ck_assert_int_eq(ev_audit_log_open(&r->log, audit_path, &err), 0);
}

static int run_go(struct run *r, size_t batch)
{
	struct ev_error err = {0};
	struct ev_archive_ctx x = {
	        .conn = r->conn,
	        .spec = &r->sp,
	        .batch = batch,
	        .log = &r->log,
	        .who = {.source = "default", .os_user = "tester"},
	        .run_id = "test-run",
	        .log_table = true,
	        .lock_aim_ms = 60000, /* the batch sizes the tests count, whatever the load */
	};
	int rc = ev_archive_run(&x, &r->cursor, &r->res, &err);
	ck_assert_msg(rc == 0, "%s", err.msg);
	return rc;
}

static void run_close(struct run *r)
{
	ev_audit_log_close(&r->log);
	ev_table_info_clear(&r->info);
	ev_conn_free(&r->conn);
}

/* Every row in exactly one table, the content unchanged, only finished rows in the archive. */
static void assert_whole(MYSQL *m, long long archived)
{
	ck_assert_int_eq(tdb_int(m, "SELECT COUNT(*) FROM (SELECT id FROM biz_outbox_event UNION "
	                            "ALL SELECT id FROM biz_outbox_event_archive) u"),
	                 ROWS);
	ck_assert_int_eq(tdb_int(m, "SELECT COUNT(DISTINCT id) FROM (SELECT id FROM "
	                            "biz_outbox_event UNION ALL SELECT id FROM "
	                            "biz_outbox_event_archive) u"),
	                 ROWS);
	ck_assert_int_eq(content(m), content_before);
	ck_assert_int_eq(tdb_int(m, "SELECT COUNT(*) FROM biz_outbox_event_archive WHERE "
	                            "publish_status <> 2 OR deleted <> 0"),
	                 0);
	ck_assert_int_eq(tdb_int(m, "SELECT COUNT(*) FROM biz_outbox_event_archive"), archived);
	ck_assert_int_eq(tdb_int(m, "SELECT IFNULL(SUM(row_count), 0) FROM evtop_archive_log"),
	                 archived);
}

static long audit_lines(const char *result)
{
	char cmd[1024];
	snprintf(cmd, sizeof(cmd), "grep -c '\"result\":\"%s\"' '%s'", result, audit_path);
	FILE *p = popen(cmd, "r");
	long n = -1;
	ck_assert_int_eq(fscanf(p, "%ld", &n), 1);
	pclose(p);
	return n;
}

START_TEST(a_run_moves_exactly_the_finished_rows)
{
	struct run r;
	run_open(&r);
	run_go(&r, 64);
	ck_assert_msg(r.res.complete, "not complete: %s", r.res.error);
	ck_assert_str_eq(r.res.error, "");
	ck_assert_uint_eq(r.res.p.moved, FINISHED);
	ck_assert_uint_eq(r.res.p.kept_backlog, 600);
	ck_assert_uint_eq(r.res.p.kept_status, 200); /* cancelled, not asked for */
	ck_assert_uint_eq(r.res.p.batches, 4);       /* 50 + 64 + 64 + 22 (or 4 x 50) */
	assert_whole(db, FINISHED);
	ck_assert_int_eq(tdb_int(db, "SELECT COUNT(*) FROM biz_outbox_event WHERE publish_status "
	                             "= 2"),
	                 0);
	ck_assert_int_eq(audit_lines("intent") - audit_lines("retried"), 4);
	ck_assert_int_eq(audit_lines("archived"), 4);
	/* The cursor: the newest row gone past; a second run finds nothing. */
	ck_assert(r.cursor.set);
	run_go(&r, 64);
	ck_assert(r.res.complete);
	ck_assert_uint_eq(r.res.p.moved, 0);
	run_close(&r);
}
END_TEST

struct fault {
	enum ev_archive_point point;
	unsigned batch;
	bool restart;    /* kill the server and start it again */
	bool lose;       /* act as if COMMIT's answer was lost */
	bool set_failed; /* set the first chosen row back to failed */
	int fired;
};

static int hook(enum ev_archive_point point, unsigned batch, struct ev_conn *c, void *arg)
{
	struct fault *f = arg;
	(void)c;
	if (point != f->point || batch != f->batch)
		return 0;
	f->fired++;
	if (f->set_failed) {
		MYSQL *m = tdb_connect();
		tdb_exec(m, "UPDATE biz_outbox_event SET publish_status = 3, version = version + 1 "
		            "WHERE publish_status = 2 ORDER BY create_time, id LIMIT 1");
		mysql_close(m);
	}
	if (f->restart)
		server_restart();
	return f->lose;
}

START_TEST(the_server_killed_before_commit)
{
	struct run r;
	struct fault f = {.point = EV_ARCHIVE_BEFORE_COMMIT, .batch = 2, .restart = true};
	run_open(&r);
	ev_archive_set_fault(hook, &f);
	run_go(&r, 50);
	ev_archive_set_fault(NULL, NULL);
	ck_assert_int_eq(f.fired, 1);
	ck_assert(!r.res.complete);
	ck_assert_msg(strstr(r.res.error, "batch 2") != NULL &&
	                      strstr(r.res.error, "not committed, nothing deleted") != NULL,
	              "%s", r.res.error);
	ck_assert_uint_eq(r.res.p.moved, 50);
	mysql_close(db);
	db = tdb_connect();
	assert_whole(db, 50);
	ck_assert_int_eq(audit_lines("failed"), 1);
	/* The rerun from the cursor finishes. */
	run_go(&r, 50);
	ck_assert_msg(r.res.complete, "%s", r.res.error);
	ck_assert_uint_eq(r.res.p.moved, FINISHED - 50);
	assert_whole(db, FINISHED);
	run_close(&r);
}
END_TEST

START_TEST(the_server_killed_after_commit)
{
	struct run r;
	struct fault f = {
	        .point = EV_ARCHIVE_AFTER_COMMIT, .batch = 2, .restart = true, .lose = true};
	run_open(&r);
	ev_archive_set_fault(hook, &f);
	run_go(&r, 50);
	ev_archive_set_fault(NULL, NULL);
	ck_assert_int_eq(f.fired, 1);
	ck_assert_msg(strstr(r.res.error, "re-read: it committed") != NULL, "%s", r.res.error);
	ck_assert_uint_eq(r.res.p.moved, 100);
	mysql_close(db);
	db = tdb_connect();
	assert_whole(db, 100);
	ck_assert_int_eq(audit_lines("archived"), 2);
	run_go(&r, 50);
	ck_assert_msg(r.res.complete, "%s", r.res.error);
	ck_assert_uint_eq(r.res.p.moved, FINISHED - 100);
	assert_whole(db, FINISHED);
	run_close(&r);
}
END_TEST

START_TEST(a_row_set_back_to_failed_is_never_moved)
{
	struct run r;
	struct fault f = {.point = EV_ARCHIVE_AFTER_READ, .batch = 1, .set_failed = true};
	run_open(&r);
	long long first = tdb_int(db, "SELECT id FROM biz_outbox_event WHERE publish_status = 2 "
	                              "ORDER BY create_time, id LIMIT 1");
	ev_archive_set_fault(hook, &f);
	run_go(&r, 500);
	ev_archive_set_fault(NULL, NULL);
	ck_assert(r.res.complete);
	ck_assert_uint_eq(r.res.p.changed, 1);
	ck_assert_uint_eq(r.res.p.moved, FINISHED - 1);
	ck_assert_int_eq(
	        tdb_int(db, "SELECT publish_status FROM biz_outbox_event WHERE id = %lld", first),
	        3);
	ck_assert_int_eq(tdb_int(db,
	                         "SELECT COUNT(*) FROM biz_outbox_event_archive WHERE id = "
	                         "%lld",
	                         first),
	                 0);
	ck_assert_int_eq(tdb_int(db, "SELECT COUNT(*) FROM (SELECT id FROM biz_outbox_event UNION "
	                             "ALL SELECT id FROM biz_outbox_event_archive) u"),
	                 ROWS);
	run_close(&r);
}
END_TEST

/* The header's facts: the oldest row's age and the rows before a retention, exactly as SQL. */
START_TEST(facts_of_a_table)
{
	struct ev_error err = {0};
	struct ev_conn *c = ev_conn_new(&cfg.sources[0], &cfg);
	ck_assert_msg(ev_conn_connect(c, &err) == 0, "%s", err.msg);
	struct ev_table_facts f;
	int ret = 300 * 86400;
	/* The clock moves on between the two sessions' reads (a second under valgrind): the
	 * age is checked between the reference read just before and the one just after. */
	static const char age_sql[] =
	        "SELECT TIMESTAMPDIFF(SECOND, MIN(create_time), NOW()) FROM biz_outbox_event";
	long long age_before = tdb_int(db, "%s", age_sql);
	ck_assert_msg(
	        ev_archive_read_facts(c, "biz_outbox_event", "idx_create_time", ret, &f, &err) == 0,
	        "%s", err.msg);
	long long age_after = tdb_int(db, "%s", age_sql);
	ck_assert(f.read);
	ck_assert(f.rows >= 0 && f.bytes > 0);
	ck_assert(f.have_oldest);
	ck_assert_msg(f.oldest_age_s >= age_before && f.oldest_age_s <= age_after,
	              "oldest age %lld s, the reference %lld .. %lld s", (long long)f.oldest_age_s,
	              age_before, age_after);
	ck_assert_int_eq(f.past, tdb_int(db,
	                                 "SELECT COUNT(*) FROM biz_outbox_event WHERE "
	                                 "create_time < NOW() - INTERVAL %d SECOND",
	                                 ret));
	ck_assert(!f.past_capped);
	tdb_exec(db, "TRUNCATE biz_outbox_event");
	ck_assert_int_eq(
	        ev_archive_read_facts(c, "biz_outbox_event", "idx_create_time", ret, &f, &err), 0);
	ck_assert(!f.have_oldest);
	ck_assert_int_eq(f.past, -1);
	ev_conn_free(&c);
}
END_TEST

/* --- racing the simulator ----------------------------------------------------------------- */

static long long sim_wait_count(pid_t pid, const char *out, const char *key)
{
	int st;
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "evtop-sim failed (status %d)", st);
	json_error_t e;
	json_t *j = json_load_file(out, 0, &e);
	ck_assert_msg(j != NULL, "evtop-sim's summary: %s", e.text);
	json_t *v = json_object_get(json_object_get(json_object_get(j, "tables"), "outbox"), key);
	ck_assert_msg(json_is_integer(v), "no outbox.%s in the summary", key);
	long long n = (long long)json_integer_value(v);
	json_decref(j);
	return n;
}

/* While the applications claim, fail, crash and finish events, archive passes run again and
 * again over every finished row (a cutoff in the future): no row is lost or in both tables,
 * only success rows reach the archive, none of the backlog. */
START_TEST(racing_the_simulator)
{
	char out[512];
	tdb_exec(db, "TRUNCATE biz_outbox_event");
	tdb_exec(db, "TRUNCATE biz_message_event");
	snprintf(out, sizeof(out), "%s/sim-history.json", getenv("EVTOP_TEST_DIR"));
	char *history[] = {(char *)"--seed",           (char *)"31",
	                   (char *)"--history",        (char *)"3h",
	                   (char *)"--history-events", (char *)"3000",
	                   (char *)"--fail-rate",      (char *)"0.3",
	                   (char *)"--history-only",   NULL};
	long long seeded = sim_wait_count(tdb_sim_start(history, out), out, "seeded");
	ck_assert_int_gt(seeded, 1000);

	snprintf(out, sizeof(out), "%s/sim-live.json", getenv("EVTOP_TEST_DIR"));
	char *live[] = {(char *)"--seed",
	                (char *)"32",
	                (char *)"--rate",
	                (char *)"150",
	                (char *)"--instances",
	                (char *)"3",
	                (char *)"--fail-rate",
	                (char *)"0.2",
	                (char *)"--crash-rate",
	                (char *)"0.05",
	                (char *)"--lock-time",
	                (char *)"1s",
	                (char *)"--recover-every",
	                (char *)"2s",
	                (char *)"--duration",
	                (char *)"6s",
	                NULL};
	pid_t sim = tdb_sim_start(live, out);
	struct run r;
	run_open(&r);
	r.sp.cutoff = "2100-01-01 00:00:00";
	size_t moved = 0, passes = 0;
	int st = 0;
	while (waitpid(sim, &st, WNOHANG) == 0 && passes < 200) {
		memset(&r.cursor, 0, sizeof(r.cursor)); /* a full pass each time */
		run_go(&r, 50);
		ck_assert_msg(r.res.error[0] == '\0', "pass %zu: %s", passes, r.res.error);
		moved += r.res.p.moved;
		passes++;
	}
	/* The simulator has ended (or is about to): its summary, then one pass more. */
	long long inserted = 0;
	if (passes >= 200 || waitpid(sim, &st, WNOHANG) == 0) {
		inserted = sim_wait_count(sim, out, "inserted");
	} else {
		ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "evtop-sim failed (%d)", st);
		json_error_t e;
		json_t *j = json_load_file(out, 0, &e);
		ck_assert_msg(j != NULL, "evtop-sim's summary: %s", e.text);
		inserted = (long long)json_integer_value(json_object_get(
		        json_object_get(json_object_get(j, "tables"), "outbox"), "inserted"));
		ck_assert_int_eq(
		        json_integer_value(json_object_get(
		                json_object_get(json_object_get(j, "tables"), "outbox"), "errors")),
		        0);
		json_decref(j);
	}
	memset(&r.cursor, 0, sizeof(r.cursor));
	run_go(&r, 50);
	moved += r.res.p.moved;
	fprintf(stderr, "# race: %lld seeded + %lld inserted, %zu archived in %zu passes\n", seeded,
	        inserted, moved, passes + 1);
	ck_assert_int_gt(passes, 1);
	ck_assert_int_gt((long long)moved, 100);
	ck_assert_int_eq(tdb_int(db, "SELECT COUNT(*) FROM (SELECT id FROM biz_outbox_event UNION "
	                             "ALL SELECT id FROM biz_outbox_event_archive) u"),
	                 seeded + inserted);
	ck_assert_int_eq(tdb_int(db, "SELECT COUNT(*) FROM biz_outbox_event o JOIN "
	                             "biz_outbox_event_archive a USING (id)"),
	                 0);
	ck_assert_int_eq(tdb_int(db, "SELECT COUNT(*) FROM biz_outbox_event_archive WHERE "
	                             "publish_status <> 2 OR deleted <> 0"),
	                 0);
	ck_assert_int_eq(tdb_int(db, "SELECT COUNT(*) FROM biz_outbox_event_archive"),
	                 (long long)moved);
	ck_assert_int_eq(tdb_int(db, "SELECT COUNT(*) FROM biz_outbox_event WHERE publish_status "
	                             "= 2 AND deleted = 0"),
	                 0);
	run_close(&r);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("archive_db");
	TCase *tc = tcase_create("archive");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, a_run_moves_exactly_the_finished_rows);
	tcase_add_test(tc, the_server_killed_before_commit);
	tcase_add_test(tc, the_server_killed_after_commit);
	tcase_add_test(tc, a_row_set_back_to_failed_is_never_moved);
	tcase_add_test(tc, racing_the_simulator);
	tcase_add_test(tc, facts_of_a_table);
	suite_add_tcase(s, tc);
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
