/* db/conn and db/worker when the server misbehaves, below the console: stopped (SIGSTOP) longer
 * than the read timeout, killed and restarted on the same data, a table dropped, privileges
 * revoked, a lock held past the statement time limit. Each says what happened in err, and the
 * same connection or worker recovers once the server does, with its session set up again.
 * Needs the harness's own server (it stops and restarts it): skipped with EVTOP_TEST_SOCKET
 * pointing at a shared one. Each test leaves the server running. */
#include <config.h>

#include "core/config.h"
#include "core/query.h"
#include "db/conn.h"
#include "db/worker.h"
#include "testdb.h"

#include <check.h>
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

static struct ev_config cfg;

static void setup(void)
{
	ev_db_init();
	ev_config_init(&cfg);
	free(cfg.sources[0].defaults_file);
	cfg.sources[0].defaults_file = tdb_pinned_defaults("2026-06-01 12:00:00");
	cfg.read_timeout_s = 1;
	cfg.connect_timeout_s = 1;
}

static void teardown(void)
{
	ev_config_free(&cfg);
}

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000.0 + ts.tv_nsec / 1e6;
}

/* SIGSTOP takes effect asynchronously: a server thread already running could still answer
 * one more packet. Wait until every thread of the process is stopped ('T' in /proc). */
static void wait_stopped(pid_t pid)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%ld/task", (long)pid);
	for (int i = 0; i < 100; i++) {
		char cmd[256];
		snprintf(cmd, sizeof(cmd),
		         "for s in %s/*/stat; do cut -d')' -f2 \"$s\" | cut -c2; done | grep -qv T",
		         path);
		if (system(cmd) != 0)
			return;
		usleep(20 * 1000);
	}
	ck_abort_msg("the server did not stop");
}

static struct ev_query *raw_query(const char *sql)
{
	struct ev_query *q = calloc(1, sizeof(*q));
	q->name = "test";
	q->sql = strdup(sql);
	q->limit = 100;
	return q;
}

/* Run sql on c: 0 and the first cell in *v (malloc'd), or -1 with err. */
static int run(struct ev_conn *c, const char *sql, char **v, struct ev_error *err)
{
	struct ev_rowset *rs = NULL;
	struct ev_query *q = raw_query(sql);
	int rc = ev_conn_run(c, q, &rs, err);
	if (rc == 0 && v != NULL) {
		const struct ev_cell *cell = ev_rowset_cell(rs, 0, 0);
		*v = strdup(cell->s ? cell->s : "NULL");
	}
	ev_rowset_free(&rs);
	ev_query_free(&q);
	return rc;
}

static struct ev_conn *connect_ok(void)
{
	struct ev_error err = {0};
	struct ev_conn *c = ev_conn_new(&cfg.sources[0], &cfg);
	ck_assert_msg(ev_conn_connect(c, &err) == 0, "connect: %s", err.msg);
	return c;
}

START_TEST(a_stalled_server_times_out_and_the_connection_recovers)
{
	struct ev_conn *c = connect_ok();
	struct ev_error err = {0};
	pid_t pid = tdb_server_pid();
	ck_assert_int_eq(kill(pid, SIGSTOP), 0);
	wait_stopped(pid);
	double t0 = now_ms();
	int rc = run(c, "SELECT 1", NULL, &err);
	double took = now_ms() - t0;
	ck_assert_int_eq(kill(pid, SIGCONT), 0);
	ck_assert_msg(rc == -1, "rc %d after %.0f ms: %s", rc, took, err.msg);
	ck_assert_msg(err.msg[0] != '\0', "no message");
	/* The read timeout (1 s; the library tries a read up to three times) and one reconnect
	 * (connect timeout 1 s): seconds, not the minutes of the defaults. */
	ck_assert_msg(took < 10000, "took %.0f ms", took);
	char *v = NULL;
	ck_assert_msg(run(c, "SELECT 42", &v, &err) == 0, "after SIGCONT: %s", err.msg);
	ck_assert_str_eq(v, "42");
	free(v);
	/* The session is set up again: the pinned clock and the time limit. */
	ck_assert_msg(run(c, "SELECT NOW()", &v, &err) == 0, "%s", err.msg);
	ck_assert_str_eq(v, "2026-06-01 12:00:00");
	free(v);
	ev_conn_free(&c);
}
END_TEST

START_TEST(a_restarted_server_is_reconnected_with_the_session)
{
	struct ev_conn *c = connect_ok();
	struct ev_error err = {0};
	unsigned long before = ev_conn_thread_id(c);
	tdb_server_kill();
	ck_assert_int_eq(run(c, "SELECT 1", NULL, &err), -1);
	ck_assert_int_eq(err.code, EV_ERR_CONNECT);
	ck_assert_msg(strstr(err.msg, "connect") != NULL, "%s", err.msg);
	tdb_server_start();
	char *v = NULL;
	ck_assert_msg(run(c, "SELECT NOW()", &v, &err) == 0, "after the restart: %s", err.msg);
	ck_assert_str_eq(v, "2026-06-01 12:00:00");
	free(v);
	ck_assert_msg(run(c, "SELECT @@max_statement_time", &v, &err) == 0, "%s", err.msg);
	ck_assert_double_gt(atof(v), 0);
	free(v);
	ck_assert_uint_ne(ev_conn_thread_id(c), 0);
	(void)before;
	ev_conn_free(&c);
}
END_TEST

static struct ev_job *wait_job(struct ev_worker *w)
{
	for (int i = 0; i < 400; i++) {
		struct pollfd p = {ev_worker_fd(w), POLLIN, 0};
		poll(&p, 1, 100);
		ev_worker_drain_fd(w);
		struct ev_job *j = ev_worker_take(w);
		if (j != NULL)
			return j;
	}
	ck_abort_msg("no job came back in 40 s");
	return NULL;
}

START_TEST(the_worker_says_the_server_is_gone_and_comes_back)
{
	struct ev_error err = {0};
	struct ev_worker *w = ev_worker_start(ev_conn_new(&cfg.sources[0], &cfg), &err);
	ck_assert_ptr_nonnull(w);
	ev_worker_submit(w, ev_job_query(1, 1, raw_query("SELECT 1")));
	struct ev_job *j = wait_job(w);
	ck_assert_int_eq(j->rc, 0);
	ev_job_free(&j);

	tdb_server_kill();
	ev_worker_submit(w, ev_job_query(1, 2, raw_query("SELECT 1")));
	j = wait_job(w);
	ck_assert_int_eq(j->rc, -1);
	ck_assert_msg(j->err.msg[0] != '\0', "no message");
	ev_job_free(&j);
	ck_assert_int_eq(ev_worker_state(w, &err), EV_WORKER_RECONNECTING);

	tdb_server_start();
	/* Past the back-off (it starts at 0.5 s), the next job reconnects. */
	int ok = 0;
	for (int i = 0; i < 40 && !ok; i++) {
		usleep(500 * 1000);
		ev_worker_submit(w, ev_job_query(1, 3 + i, raw_query("SELECT 7")));
		j = wait_job(w);
		ok = j->rc == 0;
		ev_job_free(&j);
	}
	ck_assert_msg(ok, "the worker did not reconnect");
	ck_assert_int_eq(ev_worker_state(w, &err), EV_WORKER_CONNECTED);
	ev_worker_stop(&w);
}
END_TEST

START_TEST(a_dropped_table_is_said_and_so_is_its_return)
{
	MYSQL *db = tdb_connect();
	tdb_exec(db, "CREATE TABLE gone_outbox LIKE biz_outbox_event");
	struct ev_conn *c = connect_ok();
	struct ev_error err = {0};
	struct ev_table_info ti = {0};
	ck_assert_int_eq(ev_conn_table_info(c, "gone_outbox", &ti, &err), 0);
	ck_assert(ti.exists);
	struct ev_list_req req = {.info = &ti,
	                          .table = EV_TABLE_OUTBOX,
	                          .table_name = "gone_outbox",
	                          .kind = EV_LIST_FAILED,
	                          .limit = 10};
	struct ev_query *q = ev_query_list(&req, &err);
	ck_assert_ptr_nonnull(q);
	struct ev_rowset *rs = NULL;
	ck_assert_int_eq(ev_conn_run(c, q, &rs, &err), 0);
	ev_rowset_free(&rs);

	tdb_exec(db, "DROP TABLE gone_outbox");
	ck_assert_int_eq(ev_conn_run(c, q, &rs, &err), -1);
	ck_assert_int_eq(err.code, EV_ERR_SCHEMA);
	ck_assert_msg(strstr(err.msg, "gone_outbox") != NULL, "%s", err.msg);
	ev_table_info_clear(&ti);
	ck_assert_int_eq(ev_conn_table_info(c, "gone_outbox", &ti, &err), 0);
	ck_assert(!ti.exists);
	/* The connection itself is fine: other tables still answer. */
	char *v = NULL;
	ck_assert_int_eq(run(c, "SELECT COUNT(*) FROM biz_outbox_event", &v, &err), 0);
	free(v);

	tdb_exec(db, "CREATE TABLE gone_outbox LIKE biz_outbox_event");
	ck_assert_msg(ev_conn_run(c, q, &rs, &err) == 0, "back: %s", err.msg);
	ev_rowset_free(&rs);
	ev_query_free(&q);
	ev_table_info_clear(&ti);
	tdb_exec(db, "DROP TABLE gone_outbox");
	mysql_close(db);
	ev_conn_free(&c);
}
END_TEST

START_TEST(revoked_privileges_are_said_and_granted_ones_work_again)
{
	MYSQL *db = tdb_connect();
	const char *name = getenv("EVTOP_TEST_DB");
	tdb_exec(db, "CREATE USER IF NOT EXISTS 'evtop_revoked'@'localhost' IDENTIFIED BY 'pw'");
	tdb_exec(db, "GRANT SELECT ON `%s`.biz_outbox_event TO 'evtop_revoked'@'localhost'", name);
	free(cfg.sources[0].user);
	cfg.sources[0].user = strdup("evtop_revoked");
	struct ev_conn *c = ev_conn_new(&cfg.sources[0], &cfg);
	ev_conn_set_password(c, "pw");
	struct ev_error err = {0};
	ck_assert_msg(ev_conn_connect(c, &err) == 0, "connect: %s", err.msg);
	char *v = NULL;
	ck_assert_msg(run(c, "SELECT COUNT(*) FROM biz_outbox_event", &v, &err) == 0, "%s",
	              err.msg);
	free(v);

	/* Table privileges take effect on open connections at once. */
	tdb_exec(db, "REVOKE SELECT ON `%s`.biz_outbox_event FROM 'evtop_revoked'@'localhost'",
	         name);
	ck_assert_int_eq(run(c, "SELECT COUNT(*) FROM biz_outbox_event", NULL, &err), -1);
	ck_assert_msg(strstr(err.msg, "denied") != NULL, "%s", err.msg);

	tdb_exec(db, "GRANT SELECT ON `%s`.biz_outbox_event TO 'evtop_revoked'@'localhost'", name);
	ck_assert_msg(run(c, "SELECT COUNT(*) FROM biz_outbox_event", &v, &err) == 0, "%s",
	              err.msg);
	free(v);
	tdb_exec(db, "DROP USER 'evtop_revoked'@'localhost'");
	mysql_close(db);
	ev_conn_free(&c);
}
END_TEST

START_TEST(a_lock_past_the_time_limit_is_a_timeout_and_the_connection_stays)
{
	cfg.statement_timeout_ms = 200;
	struct ev_conn *c = connect_ok();
	MYSQL *db = tdb_connect();
	tdb_exec(db, "LOCK TABLES biz_outbox_event WRITE");
	struct ev_error err = {0};
	double t0 = now_ms();
	ck_assert_int_eq(run(c, "SELECT COUNT(*) FROM biz_outbox_event", NULL, &err), -1);
	ck_assert_int_eq(err.code, EV_ERR_TIMEOUT);
	ck_assert_double_lt(now_ms() - t0, 5000);
	/* Only that statement: the connection answers the next one. */
	char *v = NULL;
	ck_assert_msg(run(c, "SELECT 5", &v, &err) == 0, "%s", err.msg);
	ck_assert_str_eq(v, "5");
	free(v);
	tdb_exec(db, "UNLOCK TABLES");
	ck_assert_msg(run(c, "SELECT COUNT(*) FROM biz_outbox_event", &v, &err) == 0, "%s",
	              err.msg);
	free(v);
	mysql_close(db);
	ev_conn_free(&c);
}
END_TEST

/* The signal mask of the worker's thread, read from inside a job. */
static int read_mask(struct ev_conn *conn, struct ev_job *job, struct ev_error *err)
{
	(void)conn;
	(void)err;
	sigset_t *m = job->arg;
	pthread_sigmask(SIG_BLOCK, NULL, m);
	return 0;
}

START_TEST(a_crash_in_a_worker_reaches_the_crash_handler)
{
	/* The console restores the terminal in its SIGSEGV handler: a worker that blocked the
	 * fault signals would be killed without it. The others stay the main thread's. */
	struct ev_error err = {0};
	struct ev_worker *w = ev_worker_start(ev_conn_new(&cfg.sources[0], &cfg), &err);
	sigset_t *m = calloc(1, sizeof(*m));
	ev_worker_submit(w, ev_job_new(1, 1, read_mask, m, NULL));
	struct ev_job *j = wait_job(w);
	ck_assert_int_eq(j->rc, 0);
	ck_assert(!sigismember(m, SIGSEGV));
	ck_assert(!sigismember(m, SIGBUS));
	ck_assert(!sigismember(m, SIGFPE));
	ck_assert(!sigismember(m, SIGILL));
	ck_assert(sigismember(m, SIGINT));
	ck_assert(sigismember(m, SIGTERM));
	ck_assert(sigismember(m, SIGHUP));
	ck_assert(sigismember(m, SIGWINCH));
	ev_job_free(&j);
	free(m);
	ev_worker_stop(&w);
}
END_TEST

int main(void)
{
	const char *t = getenv("EVTOP_TEST_DIR");
	char path[4096];
	snprintf(path, sizeof(path), "%s/../mariadbd.pid", t ? t : "/nonexistent");
	if (access(path, R_OK) != 0) {
		printf("check_faults: needs the harness's own server: skipping\n");
		return 77;
	}
	Suite *s = suite_create("faults");
	TCase *tc = tcase_create("faults");
	tcase_set_timeout(tc, 120);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, a_stalled_server_times_out_and_the_connection_recovers);
	tcase_add_test(tc, a_restarted_server_is_reconnected_with_the_session);
	tcase_add_test(tc, the_worker_says_the_server_is_gone_and_comes_back);
	tcase_add_test(tc, a_dropped_table_is_said_and_so_is_its_return);
	tcase_add_test(tc, revoked_privileges_are_said_and_granted_ones_work_again);
	tcase_add_test(tc, a_lock_past_the_time_limit_is_a_timeout_and_the_connection_stays);
	tcase_add_test(tc, a_crash_in_a_worker_reaches_the_crash_handler);
	suite_add_tcase(s, tc);
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? 0 : 1;
}
