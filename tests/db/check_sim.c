/* evtop-sim against the real test server: every status change it makes (recorded by the
 * triggers of tests/data/transitions.sql) is one of the applications' transitions of
 * src/core/model.c; the counts it reports equal the database; --history seeds every state,
 * reproducibly for a seed; SIGTERM stops it between steps; bad options are refused. */
#include <config.h>

#include "core/model.h"
#include "testdb.h"

#include <check.h>
#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* A fresh pair of tables and the transition log. */
static MYSQL *fresh_db(void)
{
	MYSQL *db = tdb_connect();
	tdb_exec(db, "DROP TRIGGER IF EXISTS evtop_test_outbox_transition");
	tdb_exec(db, "DROP TRIGGER IF EXISTS evtop_test_message_transition");
	tdb_exec(db, "DROP TABLE IF EXISTS evtop_test_transitions");
	tdb_exec(db, "TRUNCATE biz_outbox_event");
	tdb_exec(db, "TRUNCATE biz_message_event");
	char *path = tdb_srcpath("tests/data/transitions.sql");
	tdb_source(db, path);
	free(path);
	return db;
}

/* Run the simulator with these options (and the harness's option file, --format json);
 * returns its summary, and its exit status in *status. */
static json_t *run_sim(const char *args, int *status)
{
	char *sim = tdb_sim_path();
	char cmd[2048];
	snprintf(cmd, sizeof(cmd), "%s --defaults-file=%s --format json %s", sim,
	         getenv("EVTOP_TEST_DEFAULTS_FILE"), args);
	free(sim);
	FILE *p = popen(cmd, "r");
	ck_assert_ptr_nonnull(p);
	char out[8192];
	size_t n = fread(out, 1, sizeof(out) - 1, p);
	out[n] = '\0';
	int st = pclose(p);
	*status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
	if (*status != 0)
		return NULL;
	json_error_t jerr;
	json_t *j = json_loads(out, 0, &jerr);
	ck_assert_msg(j != NULL, "not JSON (%s): %s", jerr.text, out);
	return j;
}

static long long count(json_t *summary, const char *table, const char *key)
{
	json_t *v =
	        json_object_get(json_object_get(json_object_get(summary, "tables"), table), key);
	ck_assert_msg(json_is_integer(v), "no %s.%s in the summary", table, key);
	return (long long)json_integer_value(v);
}

static bool app_transition(enum ev_table_kind t, int from, int to)
{
	for (int a = 0; a < EV_ACTION_COUNT; a++)
		if (ev_action_actor((enum ev_action)a) == EV_ACTOR_APP &&
		    ev_action_allows((enum ev_action)a, t, from, to))
			return true;
	return false;
}

/* Every recorded transition is the applications'. */
static void check_transitions(MYSQL *db)
{
	if (mysql_query(db, "SELECT table_name, old_status, new_status, COUNT(*) FROM "
	                    "evtop_test_transitions GROUP BY 1, 2, 3") != 0)
		ck_abort_msg("%s", mysql_error(db));
	MYSQL_RES *r = mysql_store_result(db);
	MYSQL_ROW row;
	int groups = 0;
	while ((row = mysql_fetch_row(r)) != NULL) {
		enum ev_table_kind t = strcmp(row[0], "biz_outbox_event") == 0 ? EV_TABLE_OUTBOX
		                                                               : EV_TABLE_MESSAGE;
		int from = atoi(row[1]), to = atoi(row[2]);
		ck_assert_msg(app_transition(t, from, to),
		              "%s: %s rows went %d -> %d, not a transition of the applications",
		              row[0], row[3], from, to);
		groups++;
	}
	mysql_free_result(r);
	ck_assert_int_gt(groups, 0);
}

/* The summary of table `key` (outbox/message) equals what the database shows. */
static void check_counts(MYSQL *db, json_t *s, const char *key, const char *table,
                         const char *status_col)
{
	long long seeded = count(s, key, "seeded"), inserted = count(s, key, "inserted");
	long long claimed = count(s, key, "claimed"), succeeded = count(s, key, "succeeded");
	long long failed = count(s, key, "failed"), recovered = count(s, key, "recovered");
	long long cancelled = count(s, key, "cancelled"), crashed = count(s, key, "crashed");
	long long refused = count(s, key, "refused");
#define TR(cond)                                                                                   \
	tdb_int(db, "SELECT COUNT(*) FROM evtop_test_transitions WHERE table_name = '%s' AND %s",  \
	        table, cond)
#define ST(n) tdb_int(db, "SELECT COUNT(*) FROM %s WHERE %s = %d", table, status_col, n)

	ck_assert_int_eq(count(s, key, "errors"), 0);
	ck_assert_int_eq(tdb_int(db, "SELECT COUNT(*) FROM %s", table), seeded + inserted);
	ck_assert_int_eq(TR("new_status = 1 AND old_status IN (0, 3)"), claimed);
	ck_assert_int_eq(TR("old_status = 1 AND new_status = 2"), succeeded);
	ck_assert_int_eq(ST(2), succeeded);
	ck_assert_int_eq(TR("old_status = 1 AND new_status = 3"), failed + recovered);
	ck_assert_int_eq(TR("new_status = 4"), cancelled);
	ck_assert_int_eq(ST(4), cancelled);
	/* What is still processing is what was claimed and never finished. */
	ck_assert_int_eq(ST(1), claimed - succeeded - failed - recovered);
	ck_assert_int_eq(tdb_int(db, "SELECT COALESCE(SUM(retry_count), 0) FROM %s", table),
	                 failed + recovered);
	/* A failure or a recovery adds one retry; nothing else touches retry_count. */
	ck_assert_int_eq(TR("old_status = 1 AND new_status = 3 AND new_retry_count <> "
	                    "old_retry_count + 1"),
	                 0);
	ck_assert_int_eq(TR("NOT (old_status = 1 AND new_status = 3) AND new_retry_count <> "
	                    "old_retry_count"),
	                 0);
	ck_assert_int_eq(TR("old_status = 1 AND new_status = 3 AND new_fail_reason = "
	                    "'发布器锁定超时，等待重新发布'"),
	                 recovered);
	if (strcmp(key, "outbox") == 0) {
		/* Claims take the lock in the instance's name; only its holder finishes. */
		ck_assert_int_eq(TR("new_status = 1 AND new_locked_by NOT LIKE 'publisher-__'"), 0);
		ck_assert_int_eq(TR("old_status = 1 AND new_status = 2 AND old_locked_by NOT LIKE "
		                    "'publisher-__'"),
		                 0);
		ck_assert_int_eq(TR("new_status <> 1 AND new_locked_by IS NOT NULL"), 0);
		/* Left processing: crashed instances' rows the lock-timeout job has not reached. */
		ck_assert_int_le(ST(1), crashed);
	} else {
		/* Nothing recovers the message table: every crash is still processing. A failure
		 * the guard refused (retry_count reached its max meanwhile) stays there too. */
		ck_assert_int_eq(recovered, 0);
		ck_assert_int_ge(ST(1), crashed);
		ck_assert_int_le(ST(1), crashed + refused);
	}
#undef TR
#undef ST
}

START_TEST(protocol_transitions_and_counts)
{
	MYSQL *db = fresh_db();
	int status;
	json_t *s = run_sim("--seed 7 --rate 100 --instances 3 --fail-rate 0.2 --crash-rate 0.05 "
	                    "--outage-every 2s --outage-for 1s --time-scale 600 --lock-time 1s "
	                    "--recover-every 500ms --duration 5s",
	                    &status);
	ck_assert_int_eq(status, 0);
	ck_assert_int_ge(json_integer_value(json_object_get(s, "outages")), 1);
	check_transitions(db);
	check_counts(db, s, "outbox", "biz_outbox_event", "publish_status");
	check_counts(db, s, "message", "biz_message_event", "event_status");
	/* The world did what it was asked. */
	for (int k = 0; k < 2; k++) {
		const char *key = k ? "message" : "outbox";
		ck_assert_int_gt(count(s, key, "inserted"), 100);
		ck_assert_int_gt(count(s, key, "succeeded"), 0);
		ck_assert_int_gt(count(s, key, "failed"), 0);
		ck_assert_int_gt(count(s, key, "crashed"), 0);
	}
	ck_assert_int_gt(count(s, "outbox", "recovered"), 0);
	/* Three instances, each under its own name. */
	ck_assert_int_eq(tdb_int(db, "SELECT COUNT(DISTINCT new_locked_by) FROM "
	                             "evtop_test_transitions WHERE new_status = 1 AND "
	                             "table_name = 'biz_outbox_event'"),
	                 3);
	/* The outage: failures with its reason in both tables. */
	ck_assert_int_gt(tdb_int(db, "SELECT COUNT(*) FROM evtop_test_transitions WHERE "
	                             "table_name = 'biz_outbox_event' AND new_status = 3 AND "
	                             "new_fail_reason = '发送MQ消息超时：MQ集群不可用'"),
	                 0);
	ck_assert_int_gt(tdb_int(db, "SELECT COUNT(*) FROM evtop_test_transitions WHERE "
	                             "table_name = 'biz_message_event' AND new_status = 3 AND "
	                             "new_fail_reason = '调用下游服务超时：下游服务不可用'"),
	                 0);
	/* What it wrote is the model's: valid JSON payloads, event_no formats, Chinese text. */
	ck_assert_int_eq(tdb_int(db, "SELECT COUNT(*) FROM biz_outbox_event WHERE NOT "
	                             "JSON_VALID(event_payload) OR event_no NOT LIKE 'OUTBOX\\_%%' "
	                             "OR CONCAT('OUTBOX_', event_type, '_', aggregate_id) <> "
	                             "event_no"),
	                 0);
	ck_assert_int_eq(tdb_int(db, "SELECT COUNT(*) FROM biz_message_event WHERE NOT "
	                             "JSON_VALID(event_payload) OR event_no NOT LIKE 'EVT%%'"),
	                 0);
	ck_assert_int_gt(tdb_int(db, "SELECT COUNT(DISTINCT event_type) FROM biz_outbox_event"), 4);
	ck_assert_int_gt(tdb_int(db, "SELECT COUNT(DISTINCT topic) FROM biz_outbox_event"), 2);
	json_decref(s);
	mysql_close(db);
}
END_TEST

/* A fingerprint of the seeded rows that does not depend on the wall clock (ids and payload
 * times do): types, states, retries and reasons in id order. */
static char *fingerprint(MYSQL *db)
{
	tdb_exec(db, "SET SESSION group_concat_max_len = 67108864");
	return tdb_scalar(db, "SELECT MD5(CONCAT((SELECT GROUP_CONCAT(event_type, publish_status, "
	                      "retry_count, IFNULL(fail_reason, '-'), IFNULL(locked_by, '-') "
	                      "ORDER BY id) FROM biz_outbox_event), (SELECT "
	                      "GROUP_CONCAT(event_type, event_status, retry_count, "
	                      "IFNULL(fail_reason, '-') ORDER BY id) FROM biz_message_event)))");
}

START_TEST(history_every_state_reproducible)
{
	MYSQL *db = fresh_db();
	int status;
	const char *args = "--seed 5 --history 3d --history-events 3000 --history-only "
	                   "--recover-every 5m";
	json_t *s = run_sim(args, &status);
	ck_assert_int_eq(status, 0);
	ck_assert_int_eq(tdb_int(db, "SELECT COUNT(*) FROM biz_outbox_event"),
	                 count(s, "outbox", "seeded"));
	ck_assert_int_eq(tdb_int(db, "SELECT COUNT(*) FROM biz_message_event"),
	                 count(s, "message", "seeded"));
	ck_assert_int_gt(count(s, "outbox", "seeded"), 2500);
	/* Inserted in their states: no UPDATE ran. */
	ck_assert_int_eq(tdb_int(db, "SELECT COUNT(*) FROM evtop_test_transitions"), 0);
	for (int st = 1; st <= 4; st++) {
		ck_assert_msg(tdb_int(db,
		                      "SELECT COUNT(*) FROM biz_outbox_event WHERE "
		                      "publish_status = %d",
		                      st) > 0,
		              "no outbox row in status %d", st);
		ck_assert_msg(tdb_int(db,
		                      "SELECT COUNT(*) FROM biz_message_event WHERE "
		                      "event_status = %d",
		                      st) > 0,
		              "no message row in status %d", st);
	}
	/* The states are coherent, as the protocol leaves them. */
	ck_assert_int_eq(tdb_int(db,
	                         "SELECT COUNT(*) FROM biz_outbox_event WHERE "
	                         "(publish_status = 2 AND (published_time IS NULL OR "
	                         "fail_reason IS NOT NULL)) OR (publish_status = 3 AND "
	                         "(next_retry_time IS NULL OR fail_reason IS NULL OR "
	                         "retry_count < 1)) OR (publish_status = 1 AND (locked_by NOT "
	                         "LIKE 'publisher-__' OR lock_until IS NULL)) OR "
	                         "(publish_status <> 1 AND (locked_by IS NOT NULL OR lock_until "
	                         "IS NOT NULL)) OR retry_count > max_retry_count OR "
	                         "create_time > update_time OR update_time > NOW() OR "
	                         "create_time < NOW() - INTERVAL 3 DAY - INTERVAL 1 HOUR OR NOT "
	                         "JSON_VALID(event_payload) OR NOT JSON_VALID(event_headers)"),
	                 0);
	ck_assert_int_eq(tdb_int(db, "SELECT COUNT(*) FROM biz_message_event WHERE "
	                             "(event_status = 2 AND success_time IS NULL) OR (event_status "
	                             "= 3 AND (next_retry_time IS NULL OR fail_reason IS NULL)) OR "
	                             "(event_status = 1 AND last_handle_time IS NULL) OR "
	                             "retry_count > max_retry_count OR create_time > update_time "
	                             "OR update_time > NOW() OR NOT JSON_VALID(event_payload)"),
	                 0);
	/* The recent incidents: publisher-02's batch stuck behind an expired lock, consumer-02's
	 * past the console's stuck threshold (10 min); a past outage's failures still waiting;
	 * exhausted payments left for a person, exhausted notifications cancelled. */
	ck_assert_int_ge(tdb_int(db, "SELECT COUNT(*) FROM biz_outbox_event WHERE publish_status "
	                             "= 1 AND locked_by = 'publisher-02' AND lock_until <= NOW()"),
	                 8);
	ck_assert_int_ge(tdb_int(db, "SELECT COUNT(*) FROM biz_message_event WHERE event_status = "
	                             "1 AND last_handle_time <= NOW() - INTERVAL 10 MINUTE"),
	                 8);
	ck_assert_int_gt(tdb_int(db, "SELECT COUNT(*) FROM biz_outbox_event WHERE publish_status "
	                             "= 3 AND next_retry_time > NOW()"),
	                 0);
	ck_assert_int_eq(tdb_int(db, "SELECT COUNT(*) FROM biz_message_event WHERE event_status = "
	                             "4 AND (event_type LIKE 'PAY\\_%%' OR event_type LIKE "
	                             "'REFUND\\_%%' OR event_type LIKE 'STOCK\\_%%')"),
	                 0);
	json_decref(s);

	/* The same seed makes the same history; another seed another. */
	char *first = fingerprint(db);
	tdb_exec(db, "TRUNCATE biz_outbox_event");
	tdb_exec(db, "TRUNCATE biz_message_event");
	s = run_sim(args, &status);
	ck_assert_int_eq(status, 0);
	json_decref(s);
	char *again = fingerprint(db);
	ck_assert_str_eq(first, again);
	tdb_exec(db, "TRUNCATE biz_outbox_event");
	tdb_exec(db, "TRUNCATE biz_message_event");
	s = run_sim("--seed 6 --history 3d --history-events 3000 --history-only", &status);
	ck_assert_int_eq(status, 0);
	json_decref(s);
	char *other = fingerprint(db);
	ck_assert_str_ne(first, other);
	free(first);
	free(again);
	free(other);
	mysql_close(db);
}
END_TEST

static double mono_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

START_TEST(sigterm_stops_between_steps)
{
	MYSQL *db = fresh_db();
	char *sim = tdb_sim_path();
	char out[512], arg[512];
	snprintf(out, sizeof(out), "%s/sim.json", getenv("EVTOP_TEST_DIR"));
	snprintf(arg, sizeof(arg), "--defaults-file=%s", getenv("EVTOP_TEST_DEFAULTS_FILE"));
	pid_t pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		FILE *f = freopen(out, "w", stdout);
		if (f == NULL)
			_exit(99);
		execl(sim, sim, arg, "--format", "json", "--seed", "11", "--rate", "80",
		      "--crash-rate", "0.1", "--fail-rate", "0.1", (char *)NULL);
		_exit(98);
	}
	usleep(1500 * 1000);
	double t0 = mono_s();
	kill(pid, SIGTERM);
	int st;
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	double took = mono_s() - t0;
	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "evtop-sim did not exit 0 on SIGTERM");
	ck_assert_msg(took < 3, "took %.1f s to stop", took);

	FILE *f = fopen(out, "r");
	ck_assert_ptr_nonnull(f);
	json_error_t jerr;
	json_t *s = json_loadf(f, 0, &jerr);
	fclose(f);
	ck_assert_msg(s != NULL, "no JSON summary after SIGTERM: %s", jerr.text);
	ck_assert_int_gt(count(s, "outbox", "claimed"), 0);
	/* Every instance finished the event it held: what is left processing is exactly what
	 * crashed (the default 2-minute lock has not expired, so nothing was recovered). */
	check_transitions(db);
	check_counts(db, s, "outbox", "biz_outbox_event", "publish_status");
	check_counts(db, s, "message", "biz_message_event", "event_status");
	ck_assert_int_eq(
	        tdb_int(db, "SELECT COUNT(*) FROM biz_outbox_event WHERE publish_status = 1"),
	        count(s, "outbox", "crashed"));
	json_decref(s);
	free(sim);
	mysql_close(db);
}
END_TEST

START_TEST(bad_options_and_missing_tables)
{
	int status;
	static const char *const usage[] = {
	        "--fail-rate 2",        "--crash-rate -0.1",
	        "--outage-every 10s",   "--outage-every 10s --outage-for 10s",
	        "--rate lots",          "--instances 0",
	        "--time-scale 0.5",     "--lock-time 10ms",
	        "--format yaml",        "--history-only",
	        "--outbox-table 'a;b'", "--fail-rate 0.6 --crash-rate 0.6",
	        "--duration forever",   "extra",
	};
	for (size_t i = 0; i < sizeof(usage) / sizeof(usage[0]); i++) {
		json_t *s = run_sim(usage[i], &status);
		ck_assert_msg(status == 2, "%s: exit %d, expected 2", usage[i], status);
		ck_assert_ptr_null(s);
	}
	MYSQL *db = tdb_connect();
	tdb_exec(db, "DROP TABLE IF EXISTS no_such_table");
	mysql_close(db);
	ck_assert_ptr_null(run_sim("--outbox-table no_such_table --duration 1s", &status));
	ck_assert_int_eq(status, 1);
	ck_assert_ptr_null(run_sim("-S /nonexistent/sock --duration 1s", &status));
	ck_assert_int_eq(status, 1);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("sim");
	TCase *tc = tcase_create("sim");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, protocol_transitions_and_counts);
	tcase_add_test(tc, history_every_state_reproducible);
	tcase_add_test(tc, sigterm_stops_between_steps);
	tcase_add_test(tc, bad_options_and_missing_tables);
	suite_add_tcase(s, tc);
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? 0 : 1;
}
