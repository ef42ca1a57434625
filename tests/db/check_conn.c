/* db/conn and db/worker against the real test server: connecting and its errors, the session
 * evtop sets up, prepared statements, time limits, KILL QUERY, reconnect, the worker. */
#include <config.h>

#include "core/config.h"
#include "db/conn.h"
#include "db/worker.h"
#include "testdb.h"

#include <check.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static struct ev_config cfg;

/* A statement that runs for minutes (the Sequence engine counts without reading, so make it
 * compute), to be stopped by the time limit or KILL QUERY. */
/* A statement that waits as long as another session holds the table locked (hold_lock): slow
 * by a held lock, never by work, so it costs the server nothing and ends when told to. */
#define SLOW_SQL "SELECT COUNT(*) FROM evtop_conn_lock"

/* A session of its own holding evtop_conn_lock with LOCK TABLES ... WRITE: SLOW_SQL waits on
 * it until the statement is killed, times out or the holder lets go (mysql_close). */
static MYSQL *hold_lock(void)
{
	MYSQL *db = tdb_connect();
	tdb_exec(db, "CREATE TABLE IF NOT EXISTS evtop_conn_lock (id INT PRIMARY KEY)");
	tdb_exec(db, "LOCK TABLES evtop_conn_lock WRITE");
	return db;
}

/* Wait (at most 20 s) until a session's statement waits on the held lock. */
static void wait_until_blocked(MYSQL *db)
{
	for (int i = 0; i < 2000; i++) {
		if (tdb_int(db,
		            "SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE INFO = '%s' "
		            "AND STATE LIKE 'Waiting for table%%'",
		            SLOW_SQL) > 0)
			return;
		poll(NULL, 0, 10);
	}
	ck_abort_msg("no statement came to wait on the lock within 20 s");
}

/* How many copies of SLOW_SQL the server still lists, read until none is left or 10 s
 * have passed. */
static int statements_left(MYSQL *db)
{
	int n = 0;
	for (int i = 0; i < 1000; i++) {
		n = tdb_int(db,
		            "SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE INFO = '%s'",
		            SLOW_SQL);
		if (n == 0)
			break;
		poll(NULL, 0, 10);
	}
	return n;
}

static void setup(void)
{
	ev_db_init();
	ev_config_init(&cfg);
	free(cfg.sources[0].defaults_file);
	cfg.sources[0].defaults_file = strdup(getenv("EVTOP_TEST_DEFAULTS_FILE"));
}

static void teardown(void)
{
	ev_config_free(&cfg);
}

/* An option file like the harness's, with extra lines in its [evtop] group. */
static char *option_file(const char *name, const char *extra)
{
	const char *dir = getenv("EVTOP_TEST_DIR");
	char *path = malloc(strlen(dir) + strlen(name) + 2);
	sprintf(path, "%s/%s", dir, name);
	FILE *f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fprintf(f, "[evtop]\nsocket=%s\nuser=%s\npassword=%s\ndatabase=%s\n%s\n",
	        getenv("EVTOP_TEST_SOCKET"), getenv("EVTOP_TEST_USER"),
	        getenv("EVTOP_TEST_PASSWORD") ? getenv("EVTOP_TEST_PASSWORD") : "",
	        getenv("EVTOP_TEST_DB"), extra);
	fclose(f);
	return path;
}

static struct ev_query *raw_query(const char *sql)
{
	struct ev_query *q = calloc(1, sizeof(*q));
	q->name = "test";
	q->sql = strdup(sql);
	q->limit = 100;
	return q;
}

static struct ev_conn *connect_ok(void)
{
	struct ev_error err = {0};
	struct ev_conn *c = ev_conn_new(&cfg.sources[0], &cfg);
	ck_assert_msg(ev_conn_connect(c, &err) == 0, "connect: %s", err.msg);
	return c;
}

static char *one(struct ev_conn *c, const char *sql)
{
	struct ev_error err = {0};
	struct ev_rowset *rs = NULL;
	struct ev_query *q = raw_query(sql);
	ck_assert_msg(ev_conn_run(c, q, &rs, &err) == 0, "%s: %s", sql, err.msg);
	ck_assert_uint_ge(rs->nrows, 1);
	const struct ev_cell *cell = ev_rowset_cell(rs, 0, 0);
	char *v = strdup(cell->s ? cell->s : "NULL");
	ev_rowset_free(&rs);
	ev_query_free(&q);
	return v;
}

START_TEST(connects_and_sets_up_the_session)
{
	free(cfg.sources[0].time_zone);
	cfg.sources[0].time_zone = strdup("+08:00");
	cfg.statement_timeout_ms = 2500;
	struct ev_conn *c = connect_ok();
	ck_assert_int_eq(ev_conn_server(c)->flavour, EV_FLAVOUR_MARIADB);
	ck_assert_int_ge(ev_conn_server(c)->major, 10);
	ck_assert_ptr_nonnull(strstr(ev_conn_server_info(c), "MariaDB"));
	ck_assert_uint_gt(ev_conn_thread_id(c), 0);
	ck_assert_str_eq(ev_conn_user(c), "root@localhost");
	char *v = one(c, "SELECT @@session.time_zone");
	ck_assert_str_eq(v, "+08:00");
	free(v);
	v = one(c, "SELECT @@session.max_statement_time");
	ck_assert_str_eq(v, "2.500000");
	free(v);
	v = one(c, "SELECT @@session.innodb_lock_wait_timeout");
	ck_assert_str_eq(v, "5");
	free(v);
	v = one(c, "SELECT @@character_set_client");
	ck_assert_str_eq(v, "utf8mb4");
	free(v);
	ev_conn_free(&c);
	ck_assert_ptr_null(c);
}
END_TEST

START_TEST(utf8mb4_whatever_the_option_file_says)
{
	char *path = option_file("latin1.cnf", "default-character-set=latin1");
	free(cfg.sources[0].defaults_file);
	cfg.sources[0].defaults_file = path;
	struct ev_conn *c = connect_ok();
	char *v = one(c, "SELECT @@character_set_results");
	ck_assert_str_eq(v, "utf8mb4");
	free(v);
	v = one(c, "SELECT HEX('😀')");
	ck_assert_str_eq(v, "F09F9880");
	free(v);
	ev_conn_free(&c);
}
END_TEST

START_TEST(init_command_pins_the_clock)
{
	char *path = option_file(
	        "pinned.cnf", "init-command=SET timestamp=UNIX_TIMESTAMP('2026-06-01 12:00:00')");
	free(cfg.sources[0].defaults_file);
	cfg.sources[0].defaults_file = path;
	struct ev_conn *c = connect_ok();
	char *v = one(c, "SELECT NOW()");
	ck_assert_str_eq(v, "2026-06-01 12:00:00");
	free(v);
	ev_conn_free(&c);
}
END_TEST

START_TEST(wrong_password_is_said)
{
	MYSQL *db = tdb_connect();
	tdb_exec(db, "CREATE USER IF NOT EXISTS 'evtop_pw'@'localhost' IDENTIFIED BY 'right'");
	tdb_exec(db, "GRANT SELECT ON `%s`.* TO 'evtop_pw'@'localhost'", getenv("EVTOP_TEST_DB"));
	mysql_close(db);
	char *path = option_file("pw.cnf", "");
	free(cfg.sources[0].defaults_file);
	cfg.sources[0].defaults_file = path;
	free(cfg.sources[0].user);
	cfg.sources[0].user = strdup("evtop_pw");
	struct ev_conn *c = ev_conn_new(&cfg.sources[0], &cfg);
	ev_conn_set_password(c, "wrong");
	struct ev_error err = {0};
	ck_assert_int_eq(ev_conn_connect(c, &err), -1);
	ck_assert_int_eq(err.code, 1045);
	ck_assert_ptr_nonnull(strstr(err.msg, "access denied"));
	ck_assert(!ev_conn_is_connected(c));
	ev_conn_set_password(c, "right");
	ck_assert_int_eq(ev_conn_connect(c, &err), 0);
	ev_conn_free(&c);
}
END_TEST

START_TEST(unreachable_server_is_said_quickly)
{
	free(cfg.sources[0].defaults_file);
	cfg.sources[0].defaults_file = NULL;
	free(cfg.sources[0].defaults_group);
	cfg.sources[0].defaults_group = strdup("evtop_none");
	cfg.sources[0].socket = strdup("/nonexistent/evtop.sock");
	struct ev_conn *c = ev_conn_new(&cfg.sources[0], &cfg);
	struct ev_error err = {0};
	ck_assert_int_eq(ev_conn_connect(c, &err), -1);
	ck_assert_int_eq(err.code, EV_ERR_CONNECT);
	ck_assert_ptr_nonnull(strstr(err.msg, "cannot connect to /nonexistent/evtop.sock"));
	ev_conn_free(&c);
}
END_TEST

START_TEST(unknown_database_is_said)
{
	cfg.sources[0].database = strdup("evtop_no_such_db");
	struct ev_conn *c = ev_conn_new(&cfg.sources[0], &cfg);
	struct ev_error err = {0};
	ck_assert_int_eq(ev_conn_connect(c, &err), -1);
	ck_assert_ptr_nonnull(strstr(err.msg, "no such database"));
	ev_conn_free(&c);
}
END_TEST

START_TEST(bad_time_zone_is_said)
{
	cfg.sources[0].time_zone = strdup("Mars/Olympus");
	struct ev_conn *c = ev_conn_new(&cfg.sources[0], &cfg);
	struct ev_error err = {0};
	ck_assert_int_eq(ev_conn_connect(c, &err), -1);
	ck_assert_int_eq(err.code, EV_ERR_CONFIG);
	ck_assert_ptr_nonnull(strstr(err.msg, "Mars/Olympus"));
	ev_conn_free(&c);
}
END_TEST

START_TEST(statement_time_limit_reported_as_timeout)
{
	cfg.statement_timeout_ms = 300;
	struct ev_conn *c = connect_ok();
	struct ev_query *q = raw_query("SELECT SLEEP(5)");
	struct ev_rowset *rs = NULL;
	struct ev_error err = {0};
	/* SLEEP returns 1 when interrupted on MariaDB rather than failing; a lock wait does
	 * fail. */
	ev_query_free(&q);
	MYSQL *holder = hold_lock();
	q = raw_query(SLOW_SQL);
	ck_assert_int_eq(ev_conn_run(c, q, &rs, &err), -1);
	mysql_close(holder);
	ck_assert_msg(err.code == EV_ERR_TIMEOUT, "%d %s", err.code, err.msg);
	ck_assert_ptr_nonnull(strstr(err.msg, "timeout"));
	ck_assert_ptr_null(rs);
	/* The connection is still usable. */
	char *v = one(c, "SELECT 1");
	ck_assert_str_eq(v, "1");
	free(v);
	ev_query_free(&q);
	ev_conn_free(&c);
}
END_TEST

START_TEST(missing_table_and_column_are_said)
{
	struct ev_conn *c = connect_ok();
	struct ev_query *q = raw_query("SELECT x FROM evtop_no_such_table");
	struct ev_rowset *rs = NULL;
	struct ev_error err = {0};
	ck_assert_int_eq(ev_conn_run(c, q, &rs, &err), -1);
	ck_assert_int_eq(err.code, EV_ERR_SCHEMA);
	ck_assert_ptr_nonnull(strstr(err.msg, "missing table"));
	ev_query_free(&q);
	q = raw_query("SELECT no_such_column FROM biz_outbox_event");
	ck_assert_int_eq(ev_conn_run(c, q, &rs, &err), -1);
	ck_assert_int_eq(err.code, EV_ERR_SCHEMA);
	ck_assert_ptr_nonnull(strstr(err.msg, "missing column"));
	ev_query_free(&q);
	struct ev_table_info ti;
	ck_assert_int_eq(ev_conn_table_info(c, "evtop_no_such_table", &ti, &err), 0);
	ck_assert(!ti.exists);
	ev_table_info_clear(&ti);
	ck_assert_int_eq(ev_conn_table_info(c, "biz_outbox_event", &ti, &err), 0);
	ck_assert(ti.exists);
	ck_assert_uint_eq(ti.ncolumns, 27);
	ck_assert_str_eq(ti.indexes[0].name, "PRIMARY");
	ck_assert_ptr_nonnull(ev_index_find(&ti, "publish_status,lock_until"));
	ck_assert_ptr_nonnull(ev_index_find(&ti, "publish_status"));
	ck_assert_ptr_null(ev_index_find(&ti, "lock_until"));
	ev_table_info_clear(&ti);
	ev_conn_free(&c);
}
END_TEST

START_TEST(parameters_and_big_values_round_trip)
{
	MYSQL *db = tdb_connect();
	tdb_exec(db, "INSERT INTO biz_outbox_event (id, event_no, aggregate_type, aggregate_id, "
	             "event_type, event_source, publish_channel, event_payload) VALUES "
	             "(18446744073709551615, 'E\\'1', 'ORDER', '订单1', 'T', 's', 'MQ', "
	             "JSON_OBJECT('big', REPEAT('x', 300000), 'n', 199.00))");
	mysql_close(db);
	struct ev_conn *c = connect_ok();
	struct ev_query *q = ev_query_show_by_no(EV_TABLE_OUTBOX, NULL, "E'1");
	struct ev_rowset *rs = NULL;
	struct ev_error err = {0};
	ck_assert_msg(ev_conn_run(c, q, &rs, &err) == 0, "%s", err.msg);
	ck_assert_uint_eq(rs->nrows, 1);
	ck_assert_str_eq(ev_rowset_get(rs, 0, "id"), "18446744073709551615");
	ck_assert_str_eq(ev_rowset_get(rs, 0, "aggregate_id"), "订单1");
	ck_assert_ptr_null(ev_rowset_get(rs, 0, "topic"));
	const struct ev_cell *p = ev_rowset_cell(rs, 0, (size_t)ev_rowset_col(rs, "event_payload"));
	ck_assert_uint_gt(p->len, 300000);
	ck_assert_uint_eq(strlen(p->s), p->len);
	ck_assert_ptr_nonnull(strstr(p->s, "199.00"));
	ev_rowset_free(&rs);
	ev_query_free(&q);
	q = ev_query_show_by_id(EV_TABLE_OUTBOX, NULL, 18446744073709551615ULL);
	ck_assert_int_eq(ev_conn_run(c, q, &rs, &err), 0);
	ck_assert_uint_eq(rs->nrows, 1);
	ev_rowset_free(&rs);
	ev_query_free(&q);
	ev_conn_free(&c);
}
END_TEST

START_TEST(reconnects_after_a_lost_connection)
{
	struct ev_conn *c = connect_ok();
	unsigned long id = ev_conn_thread_id(c);
	MYSQL *db = tdb_connect();
	tdb_exec(db, "KILL CONNECTION %lu", id);
	mysql_close(db);
	/* The read is retried once on a new connection. */
	char *v = one(c, "SELECT 42");
	ck_assert_str_eq(v, "42");
	free(v);
	ck_assert_uint_ne(ev_conn_thread_id(c), id);
	ev_conn_free(&c);
}
END_TEST

/* The statements a connection has prepared so far (the server's count). */
static long long prepares(MYSQL *db)
{
	return tdb_int(db, "SELECT VARIABLE_VALUE FROM information_schema.GLOBAL_STATUS WHERE "
	                   "VARIABLE_NAME = 'COM_STMT_PREPARE'");
}

/* A read marked keep is prepared once on a connection and run again with new parameters; a
 * failed one is prepared anew, and so is every one on a new connection. Reads not marked are
 * prepared every time. */
START_TEST(kept_reads_are_prepared_once)
{
	struct ev_conn *c = connect_ok();
	MYSQL *db = tdb_connect();
	struct ev_query *q = raw_query("SELECT ? + 1");
	q->keep = true;
	struct ev_error err = {0};
	long long p0 = prepares(db);
	for (int i = 0; i < 5; i++) {
		q->nparams = 0;
		ev_query_add_int(q, i * 10);
		struct ev_rowset *rs = NULL;
		ck_assert_msg(ev_conn_run(c, q, &rs, &err) == 0, "run %d: %s", i, err.msg);
		ck_assert_uint_eq(rs->nrows, 1);
		char want[16];
		snprintf(want, sizeof(want), "%d", i * 10 + 1);
		ck_assert_str_eq(ev_rowset_cell(rs, 0, 0)->s, want);
		ev_rowset_free(&rs);
	}
	ck_assert_int_eq(prepares(db) - p0, 1);

	/* Not marked: prepared at each run. */
	struct ev_query *once = raw_query("SELECT 7");
	p0 = prepares(db);
	for (int i = 0; i < 3; i++) {
		struct ev_rowset *rs = NULL;
		ck_assert_msg(ev_conn_run(c, once, &rs, &err) == 0, "%s", err.msg);
		ev_rowset_free(&rs);
	}
	ck_assert_int_eq(prepares(db) - p0, 3);
	ev_query_free(&once);

	/* A kept read that fails (a value out of range) is given up: the next run prepares it
	 * again, and works. */
	struct ev_query *bad = raw_query("SELECT CAST(? AS UNSIGNED) + 18446744073709551615");
	bad->keep = true;
	ev_query_add_int(bad, 1);
	struct ev_rowset *rs = NULL;
	ck_assert_int_eq(ev_conn_run(c, bad, &rs, &err), -1);
	bad->nparams = 0;
	ev_query_add_int(bad, 0);
	p0 = prepares(db);
	ck_assert_msg(ev_conn_run(c, bad, &rs, &err) == 0, "%s", err.msg);
	ck_assert_str_eq(ev_rowset_cell(rs, 0, 0)->s, "18446744073709551615");
	ev_rowset_free(&rs);
	ck_assert_int_eq(prepares(db) - p0, 1);
	ev_query_free(&bad);

	/* The connection lost: the read runs on the new one, prepared there. */
	tdb_exec(db, "KILL CONNECTION %lu", ev_conn_thread_id(c));
	p0 = prepares(db);
	q->nparams = 0;
	ev_query_add_int(q, 41);
	ck_assert_msg(ev_conn_run(c, q, &rs, &err) == 0, "after the reconnect: %s", err.msg);
	ck_assert_str_eq(ev_rowset_cell(rs, 0, 0)->s, "42");
	ev_rowset_free(&rs);
	ck_assert_int_ge(prepares(db) - p0, 1);
	ev_query_free(&q);
	mysql_close(db);
	ev_conn_free(&c);
}
END_TEST

struct killer {
	struct ev_conn *c;
	MYSQL *watch;
	int rc;
};

/* Kill c's statement once it waits on the held lock. */
static void *kill_when_blocked(void *p)
{
	struct killer *k = p;
	struct ev_error err = {0};
	wait_until_blocked(k->watch);
	k->rc = ev_conn_kill_query(k->c, &err);
	return NULL;
}

START_TEST(kill_query_cancels_on_the_server)
{
	cfg.statement_timeout_ms = 60000;
	struct ev_conn *c = connect_ok();
	MYSQL *holder = hold_lock();
	struct killer k = {c, tdb_connect(), -2};
	pthread_t t;
	pthread_create(&t, NULL, kill_when_blocked, &k);
	struct ev_query *q = raw_query(SLOW_SQL);
	struct ev_rowset *rs = NULL;
	struct ev_error err = {0};
	ck_assert_int_eq(ev_conn_run(c, q, &rs, &err), -1);
	ck_assert_ptr_nonnull(strstr(err.msg, "cancelled"));
	pthread_join(t, NULL);
	ck_assert_int_eq(k.rc, 0);
	/* Killed on the server: nothing waits on the lock any more. The server answers the
	 * client before its thread clears the statement from the process list, so the list is
	 * read until it empties (the lock is still held: a statement not killed stays there). */
	ck_assert_int_eq(statements_left(k.watch), 0);
	mysql_close(k.watch);
	mysql_close(holder);
	ev_query_free(&q);
	ev_conn_free(&c);
}
END_TEST

START_TEST(sql_log_records_statements)
{
	char path[512];
	snprintf(path, sizeof(path), "%s/sql.log", getenv("EVTOP_TEST_DIR"));
	FILE *f = fopen(path, "w");
	ev_db_set_sql_log(f);
	struct ev_conn *c = connect_ok();
	struct ev_query *q = ev_query_show_by_no(EV_TABLE_MESSAGE, NULL, "EVT-LOG-1");
	struct ev_rowset *rs = NULL;
	struct ev_error err = {0};
	ck_assert_int_eq(ev_conn_run(c, q, &rs, &err), 0);
	ev_rowset_free(&rs);
	ev_query_free(&q);
	ev_conn_free(&c);
	ev_db_set_sql_log(NULL);
	fclose(f);
	f = fopen(path, "r");
	char buf[65536];
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	fclose(f);
	ck_assert_ptr_nonnull(strstr(buf, "SET SESSION max_statement_time"));
	ck_assert_ptr_nonnull(strstr(buf, "WHERE event_no = 'EVT-LOG-1' LIMIT 2;"));
	ck_assert_ptr_nonnull(strstr(buf, " ms 0 rows"));
}
END_TEST

static struct ev_job *wait_job(struct ev_worker *w)
{
	for (int i = 0; i < 200; i++) {
		struct pollfd p = {ev_worker_fd(w), POLLIN, 0};
		poll(&p, 1, 100);
		ev_worker_drain_fd(w);
		struct ev_job *j = ev_worker_take(w);
		if (j != NULL)
			return j;
	}
	ck_abort_msg("no job came back within 20 s");
	return NULL;
}

START_TEST(worker_runs_and_supersedes)
{
	cfg.statement_timeout_ms = 60000;
	struct ev_error err = {0};
	struct ev_conn *c = ev_conn_new(&cfg.sources[0], &cfg);
	struct ev_worker *w = ev_worker_start(c, &err);
	ck_assert_ptr_nonnull(w);
	/* A plain job connects first, then runs. */
	ev_worker_submit(w, ev_job_query(1, 1, raw_query("SELECT 7")));
	struct ev_job *j = wait_job(w);
	ck_assert_int_eq(j->rc, 0);
	ck_assert_str_eq(ev_rowset_cell(j->result, 0, 0)->s, "7");
	ck_assert_int_eq(ev_worker_state(w, NULL), EV_WORKER_CONNECTED);
	ev_job_free(&j);

	/* A slow job superseded by a newer generation is killed on the server and comes back
	 * cancelled; the newer one runs. */
	MYSQL *holder = hold_lock();
	ev_worker_submit(w, ev_job_query(2, 1, raw_query(SLOW_SQL)));
	wait_until_blocked(holder);
	ck_assert_double_gt(ev_worker_running_ms(w), 0);
	ev_worker_submit(w, ev_job_query(2, 2, raw_query("SELECT 'new'")));
	ev_worker_supersede(w, 2, 2);
	j = wait_job(w);
	ck_assert(j->cancelled);
	ck_assert_int_eq(j->rc, -1);
	ck_assert_uint_eq(j->gen, 1);
	ev_job_free(&j);
	j = wait_job(w);
	ck_assert_int_eq(j->rc, 0);
	ck_assert_str_eq(ev_rowset_cell(j->result, 0, 0)->s, "new");
	ev_job_free(&j);
	ck_assert_int_eq(ev_worker_pending(w), 0);
	mysql_close(holder);

	/* Queued jobs of an old generation never run. */
	ev_worker_submit(w, ev_job_query(3, 1, raw_query("SELECT SLEEP(1)")));
	ev_worker_submit(w, ev_job_query(4, 1, raw_query("SELECT 'queued'")));
	ev_worker_supersede(w, 4, 2);
	int cancelled = 0, ran = 0;
	for (int i = 0; i < 2; i++) {
		j = wait_job(w);
		if (j->tag == 4) {
			ck_assert(j->cancelled);
			ck_assert_ptr_null(j->result);
			cancelled++;
		} else {
			ran++;
		}
		ev_job_free(&j);
	}
	ck_assert_int_eq(cancelled, 1);
	ck_assert_int_eq(ran, 1);
	ev_worker_stop(&w);
	ck_assert_ptr_null(w);
}
END_TEST

START_TEST(worker_reports_a_lost_server_and_backs_off)
{
	struct ev_error err = {0};
	cfg.sources[0].socket = strdup("/nonexistent/evtop.sock");
	free(cfg.sources[0].defaults_file);
	cfg.sources[0].defaults_file = NULL;
	free(cfg.sources[0].defaults_group);
	cfg.sources[0].defaults_group = strdup("evtop_none");
	struct ev_worker *w = ev_worker_start(ev_conn_new(&cfg.sources[0], &cfg), &err);
	ev_worker_submit(w, ev_job_query(1, 1, raw_query("SELECT 1")));
	struct ev_job *j = wait_job(w);
	ck_assert_int_eq(j->rc, -1);
	ck_assert_int_eq(j->err.code, EV_ERR_CONNECT);
	ev_job_free(&j);
	ck_assert_int_eq(ev_worker_state(w, &err), EV_WORKER_RECONNECTING);
	ck_assert_ptr_nonnull(strstr(err.msg, "cannot connect"));
	ck_assert_int_eq(ev_worker_connect_failures(w), 1);
	/* Within the back-off, a job fails at once without a new attempt. */
	ev_worker_submit(w, ev_job_query(1, 2, raw_query("SELECT 1")));
	j = wait_job(w);
	ck_assert_ptr_nonnull(strstr(j->err.msg, "reconnecting in"));
	ck_assert_int_eq(ev_worker_connect_failures(w), 1);
	ev_job_free(&j);
	ev_worker_stop(&w);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("conn");
	TCase *tc = tcase_create("conn");
	tcase_set_timeout(tc, 60);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, connects_and_sets_up_the_session);
	tcase_add_test(tc, utf8mb4_whatever_the_option_file_says);
	tcase_add_test(tc, init_command_pins_the_clock);
	tcase_add_test(tc, wrong_password_is_said);
	tcase_add_test(tc, unreachable_server_is_said_quickly);
	tcase_add_test(tc, unknown_database_is_said);
	tcase_add_test(tc, bad_time_zone_is_said);
	tcase_add_test(tc, statement_time_limit_reported_as_timeout);
	tcase_add_test(tc, missing_table_and_column_are_said);
	tcase_add_test(tc, parameters_and_big_values_round_trip);
	tcase_add_test(tc, reconnects_after_a_lost_connection);
	tcase_add_test(tc, kill_query_cancels_on_the_server);
	tcase_add_test(tc, kept_reads_are_prepared_once);
	tcase_add_test(tc, sql_log_records_statements);
	tcase_add_test(tc, worker_runs_and_supersedes);
	tcase_add_test(tc, worker_reports_a_lost_server_and_backs_off);
	suite_add_tcase(s, tc);
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? 0 : 1;
}
