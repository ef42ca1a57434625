/* The instances view's read (ev_query_instances) and verdicts (core/instances) against the
 * real test server: EXPLAIN shows idx_status_lock_until on the outbox (the processing list's
 * index on the message table), never a scan; the figures equal a reference GROUP BY on crafted
 * rows at a pinned clock; and with evtop-sim running three publishers, one of them stopped for
 * good by --kill, the killed one is "dead" and the others "alive". */
#include <config.h>

#include "core/config.h"
#include "core/instances.h"
#include "core/query.h"
#include "core/util.h"
#include "db/conn.h"
#include "testdb.h"

#include <check.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define NOW_TEXT "2026-06-01 12:00:00"

static MYSQL *g_db;
static struct ev_config g_cfg;
static struct ev_conn *g_conn;
static struct ev_table_info g_info[EV_TABLE_COUNT];

static const char *const table_names[EV_TABLE_COUNT] = {
        [EV_TABLE_MESSAGE] = "biz_message_event",
        [EV_TABLE_OUTBOX] = "biz_outbox_event",
};

/* evtop's session, its clock pinned to NOW_TEXT or the server's own (now NULL). */
static void open_evtop(const char *now)
{
	struct ev_error err = {0};
	ev_config_init(&g_cfg);
	g_cfg.lease_s = 120;
	struct ev_source *src = &g_cfg.sources[0];
	free(src->defaults_file);
	src->defaults_file = now != NULL ? tdb_pinned_defaults(now)
	                                 : ev_xstrdup(getenv("EVTOP_TEST_DEFAULTS_FILE"));
	g_conn = ev_conn_new(&g_cfg.sources[0], &g_cfg);
	if (ev_conn_connect(g_conn, &err) != 0)
		ck_abort_msg("evtop cannot connect: %s", err.msg);
	for (int t = 0; t < EV_TABLE_COUNT; t++) {
		if (ev_conn_table_info(g_conn, table_names[t], &g_info[t], &err) != 0)
			ck_abort_msg("table info for %s: %s", table_names[t], err.msg);
		ck_assert(g_info[t].exists);
	}
}

static void close_evtop(void)
{
	for (int t = 0; t < EV_TABLE_COUNT; t++)
		ev_table_info_clear(&g_info[t]);
	ev_conn_free(&g_conn);
	ev_config_free(&g_cfg);
}

static struct ev_query *instances_query(enum ev_table_kind t)
{
	struct ev_error err = {0};
	struct ev_list_req r = {
	        .info = &g_info[t],
	        .table = t,
	        .table_name = table_names[t],
	        .limit = 1,
	        .stuck_threshold_s = 600,
	};
	struct ev_query *q = ev_query_instances(&r, &err);
	ck_assert_msg(q != NULL, "%s", err.msg);
	return q;
}

static struct ev_instances *read_instances(enum ev_table_kind t)
{
	struct ev_error err = {0};
	struct ev_query *q = instances_query(t);
	struct ev_rowset *rs = NULL;
	if (ev_conn_run(g_conn, q, &rs, &err) != 0)
		ck_abort_msg("instances: %s", err.msg);
	struct ev_instances *in = ev_instances_from_rows(rs, t, g_cfg.lease_s);
	ev_rowset_free(&rs);
	ev_query_free(&q);
	return in;
}

/* Outbox rows in status 1 of one owner: n locks claimed `ago` seconds before NOW_TEXT with a
 * lock of `lock` seconds. */
static void insert_locks(const char *owner, int n, int first, int ago, int lock)
{
	for (int i = 0; i < n; i++)
		tdb_exec(
		        g_db,
		        "INSERT INTO biz_outbox_event (id, event_no, aggregate_type, aggregate_id, "
		        "event_type, event_source, publish_channel, event_payload, publish_status, "
		        "locked_by, lock_until, last_publish_time, create_time, update_time) "
		        "VALUES "
		        "(%d, 'INST-%d', 'ORDER', 'O%d', 'ORDER_CREATED', 'order-service', 'MQ', "
		        "'{}', 1, '%s', '" NOW_TEXT "' - INTERVAL %d SECOND + INTERVAL %d SECOND, "
		        "'" NOW_TEXT "' - INTERVAL %d SECOND, '" NOW_TEXT "' - INTERVAL 1 HOUR, "
		        "'" NOW_TEXT "')",
		        first + i, first + i, first + i, owner, ago, lock, ago);
}

static void setup(void)
{
	g_db = tdb_connect();
	tdb_exec(g_db, "TRUNCATE biz_outbox_event");
	tdb_exec(g_db, "TRUNCATE biz_message_event");
}

static void teardown(void)
{
	mysql_close(g_db);
	g_db = NULL;
}

/* The plan of the rendered statement: the event table is read through the index the
 * processing list names, by range, never scanned. */
static void explain(enum ev_table_kind t, const char *want_index)
{
	struct ev_query *q = instances_query(t);
	char *sql = ev_query_render(q);
	char *ex = ev_xasprintf("EXPLAIN %s", sql);
	if (mysql_query(g_db, ex) != 0)
		ck_abort_msg("%s\n  %s", mysql_error(g_db), ex);
	MYSQL_RES *r = mysql_store_result(g_db);
	MYSQL_FIELD *f = mysql_fetch_fields(r);
	int ci_table = -1, ci_type = -1, ci_key = -1;
	for (unsigned i = 0; i < mysql_num_fields(r); i++) {
		if (strcmp(f[i].name, "table") == 0)
			ci_table = (int)i;
		else if (strcmp(f[i].name, "type") == 0)
			ci_type = (int)i;
		else if (strcmp(f[i].name, "key") == 0)
			ci_key = (int)i;
	}
	bool seen = false;
	MYSQL_ROW row;
	while ((row = mysql_fetch_row(r)) != NULL) {
		if (getenv("CHECK_INSTANCES_SHOW_PLANS") != NULL)
			for (unsigned i = 0; i < mysql_num_fields(r); i++)
				printf("%s%s=%s", i ? " " : "plan: ", f[i].name,
				       row[i] ? row[i] : "NULL");
		if (getenv("CHECK_INSTANCES_SHOW_PLANS") != NULL)
			printf("\n");
		if (row[ci_table] == NULL || strcmp(row[ci_table], table_names[t]) != 0)
			continue; /* the derived table's own grouping */
		seen = true;
		ck_assert_msg(row[ci_key] != NULL && strcmp(row[ci_key], want_index) == 0,
		              "%s read through %s, not %s\n  %s", table_names[t],
		              row[ci_key] ? row[ci_key] : "no index", want_index, sql);
		ck_assert_msg(strcmp(row[ci_type], "ALL") != 0 &&
		                      strcmp(row[ci_type], "index") != 0,
		              "%s scanned (type %s)\n  %s", table_names[t], row[ci_type], sql);
	}
	ck_assert_msg(seen, "no plan row for %s", table_names[t]);
	mysql_free_result(r);
	free(ex);
	free(sql);
	ev_query_free(&q);
}

START_TEST(explain_uses_the_index)
{
	/* Enough rows in every status for the optimizer's choice to mean something. */
	char *seed = tdb_srcpath("tests/data/seed.sql");
	tdb_source(g_db, seed);
	free(seed);
	tdb_exec(g_db, "ANALYZE TABLE biz_outbox_event, biz_message_event");
	open_evtop(NOW_TEXT);
	explain(EV_TABLE_OUTBOX, "idx_status_lock_until");
	explain(EV_TABLE_MESSAGE, "idx_status_retry_time");
	close_evtop();
}
END_TEST

START_TEST(figures_match_the_rows)
{
	open_evtop(NOW_TEXT);
	/* alive: claimed 5 s ago (3 locks running) and holding one stuck lock of an hour ago. */
	insert_locks("pub-alive", 3, 1, 5, 120);
	insert_locks("pub-alive", 1, 10, 3600, 120);
	/* dead: 4 locks taken 10 minutes ago, expired for 8. */
	insert_locks("pub-dead", 4, 20, 600, 120);
	/* quiet: claimed an hour ago, its lock_until lost (NULL): held, never expiring. */
	insert_locks("pub-quiet", 1, 30, 3600, 120);
	tdb_exec(g_db, "UPDATE biz_outbox_event SET lock_until = NULL WHERE id = 30");
	/* Finished rows keep no owner; a soft-deleted lock is not counted. */
	tdb_exec(g_db, "UPDATE biz_outbox_event SET deleted = 1 WHERE id = 23");
	struct ev_instances *in = read_instances(EV_TABLE_OUTBOX);
	ck_assert_uint_eq(in->n, 3);
	ck_assert_int_eq(in->now, tdb_int(g_db, "SELECT UNIX_TIMESTAMP('" NOW_TEXT "')"));
	const struct ev_instance *a = ev_instances_find(in, "pub-alive");
	const struct ev_instance *d = ev_instances_find(in, "pub-dead");
	const struct ev_instance *q = ev_instances_find(in, "pub-quiet");
	ck_assert(a != NULL && d != NULL && q != NULL);
	ck_assert_int_eq(a->locks, 4);
	ck_assert_int_eq(a->expired, 1);
	ck_assert_int_eq(a->newest_claim, in->now - 5);
	ck_assert_int_eq(a->oldest, in->now - 3600 + 120);
	ck_assert_int_eq(a->verdict, EV_INST_ALIVE);
	ck_assert_int_eq(d->locks, 3);
	ck_assert_int_eq(d->expired, 3);
	ck_assert_int_eq(d->newest_claim, in->now - 600);
	ck_assert_int_eq(d->verdict, EV_INST_DEAD);
	ck_assert_int_eq(q->expired, 0);
	ck_assert_int_eq(q->verdict, EV_INST_QUIET);
	/* The same figures as the model document's own lock-timeout query counts. */
	ck_assert_int_eq(a->expired + d->expired + q->expired,
	                 tdb_int(g_db, "SELECT COUNT(*) FROM biz_outbox_event WHERE deleted = 0 "
	                               "AND publish_status = 1 AND lock_until <= '" NOW_TEXT "'"));
	ev_instances_free(&in);

	/* The message table: by event_source, stuck past the threshold. */
	tdb_exec(g_db,
	         "INSERT INTO biz_message_event (id, event_no, event_type, biz_type, biz_id, "
	         "event_source, event_payload, event_status, last_handle_time, create_time, "
	         "update_time) VALUES (1, 'M1', 'ORDER_CREATED', 'ORDER', 'O1', 'order-service', "
	         "'{}', 1, '" NOW_TEXT "' - INTERVAL 20 MINUTE, '" NOW_TEXT "', '" NOW_TEXT "'), "
	         "(2, 'M2', 'ORDER_CREATED', 'ORDER', 'O2', 'order-service', '{}', 1, "
	         "'" NOW_TEXT "' - INTERVAL 1 MINUTE, '" NOW_TEXT "', '" NOW_TEXT "'), "
	         "(3, 'M3', 'PAY_SUCCESS', 'PAY', 'P1', 'pay-service', '{}', 2, NULL, "
	         "'" NOW_TEXT "', '" NOW_TEXT "')");
	in = read_instances(EV_TABLE_MESSAGE);
	ck_assert_uint_eq(in->n, 1);
	ck_assert_str_eq(in->v[0].name, "order-service");
	ck_assert_int_eq(in->v[0].locks, 2);
	ck_assert_int_eq(in->v[0].expired, 1);
	ck_assert_int_eq(in->v[0].oldest, in->now - 1200);
	ck_assert_int_eq(in->v[0].newest_claim, in->now - 60);
	ck_assert_int_eq(in->v[0].verdict, EV_INST_NONE);
	ev_instances_free(&in);
	close_evtop();
}
END_TEST

#define LEASE_S 2

/* Whether the killed instance's locks have been expired for longer than a lease (so its last
 * claim is more than two leases old), and the others hold a lock each. */
static bool killed_has_expired(void)
{
	long long held = tdb_int(g_db, "SELECT COUNT(*) FROM biz_outbox_event WHERE publish_status "
	                               "= 1 AND locked_by = 'publisher-02'");
	long long running =
	        tdb_int(g_db,
	                "SELECT COUNT(*) FROM biz_outbox_event WHERE publish_status = 1 "
	                "AND locked_by = 'publisher-02' AND lock_until > NOW() - "
	                "INTERVAL %d SECOND",
	                LEASE_S + 1);
	long long others = tdb_int(g_db, "SELECT COUNT(DISTINCT locked_by) FROM biz_outbox_event "
	                                 "WHERE publish_status = 1 AND locked_by IN "
	                                 "('publisher-01', 'publisher-03')");
	return held > 0 && running == 0 && others == 2;
}

START_TEST(killed_instances_are_dead)
{
	char out[512];
	snprintf(out, sizeof(out), "%s/sim-kill.json", getenv("EVTOP_TEST_DIR"));
	/* Three publishers; publisher-02 dies at its first claim holding that scan's locks.
	 * The others crash now and then too (and restart under their names): they hold
	 * expired locks as well, and are alive. The lock-timeout job stays away. */
	char *args[] = {(char *)"--seed",      (char *)"19",           (char *)"--rate",
	                (char *)"100",         (char *)"--instances",  (char *)"3",
	                (char *)"--kill",      (char *)"publisher-02", (char *)"--crash-rate",
	                (char *)"0.3",         (char *)"--fail-rate",  (char *)"0",
	                (char *)"--lock-time", (char *)"2s",           (char *)"--recover-every",
	                (char *)"1h",          (char *)"--poll",       (char *)"50ms",
	                (char *)"--duration",  (char *)"60s",          NULL};
	pid_t sim = tdb_sim_start(args, out);
	/* A condition, polled: the bound only ends a run where it never comes. */
	bool ready = false;
	for (int i = 0; i < 300 && !(ready = killed_has_expired()); i++)
		usleep(100 * 1000);
	ck_assert_msg(ready, "publisher-02's locks never expired, or the others held none");

	open_evtop(NULL);
	g_cfg.lease_s = LEASE_S;
	struct ev_instances *in = read_instances(EV_TABLE_OUTBOX);
	kill(sim, SIGTERM);
	int st = 0;
	waitpid(sim, &st, 0);
	const struct ev_instance *p1 = ev_instances_find(in, "publisher-01");
	const struct ev_instance *p2 = ev_instances_find(in, "publisher-02");
	const struct ev_instance *p3 = ev_instances_find(in, "publisher-03");
	ck_assert(p1 != NULL && p2 != NULL && p3 != NULL);
	ck_assert_msg(p2->verdict == EV_INST_DEAD, "publisher-02 (killed) is %s",
	              ev_inst_verdict_name(p2->verdict));
	ck_assert_int_eq(p2->expired, p2->locks);
	ck_assert_msg(p1->verdict == EV_INST_ALIVE, "publisher-01 is %s",
	              ev_inst_verdict_name(p1->verdict));
	ck_assert_msg(p3->verdict == EV_INST_ALIVE, "publisher-03 is %s",
	              ev_inst_verdict_name(p3->verdict));
	ck_assert_uint_eq(in->dead, 1);
	ev_instances_free(&in);
	close_evtop();
	ck_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	/* It never claimed again: every row it holds is one of its first scan. */
	ck_assert_int_eq(tdb_int(g_db, "SELECT COUNT(DISTINCT last_publish_time) <= 2 FROM "
	                               "biz_outbox_event WHERE locked_by = 'publisher-02'"),
	                 1);
}
END_TEST

START_TEST(kill_names_an_instance)
{
	char *sim = tdb_sim_path();
	char cmd[1024];
	snprintf(cmd, sizeof(cmd), "%s --instances 2 --kill publisher-03 >/dev/null 2>&1", sim);
	ck_assert_int_eq(WEXITSTATUS(system(cmd)), 2);
	snprintf(cmd, sizeof(cmd), "%s --kill-after 5s >/dev/null 2>&1", sim);
	ck_assert_int_eq(WEXITSTATUS(system(cmd)), 2);
	snprintf(cmd, sizeof(cmd), "%s --help | grep -q -- '--kill=NAME'", sim);
	ck_assert_int_eq(WEXITSTATUS(system(cmd)), 0);
	free(sim);
}
END_TEST

int main(void)
{
	if (ev_db_init() != 0) {
		fprintf(stderr, "check_instances: cannot initialise the client library\n");
		return 1;
	}
	Suite *s = suite_create("instances");
	TCase *tc = tcase_create("instances");
	tcase_set_timeout(tc, 90);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, explain_uses_the_index);
	tcase_add_test(tc, figures_match_the_rows);
	tcase_add_test(tc, killed_instances_are_dead);
	tcase_add_test(tc, kill_names_an_instance);
	suite_add_tcase(s, tc);
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	ev_db_end();
	return failed == 0 ? 0 : 1;
}
