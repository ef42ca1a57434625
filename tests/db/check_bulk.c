/* db/bulk against the real test server.
 *
 * Racing: evtop-sim's producers, publishers, consumers and jobs (seeded, with failures,
 * crashes and an outage) run on thousands of events while five bulk runs — retry (scheduled)
 * and cancel on the same failed outbox rows, recover of the stuck outbox rows, retry of the
 * failed message rows, recover of the stuck message rows — each on its own thread and
 * connection, act on the same rows. Afterwards no event is lost, every status change the
 * transitions trigger recorded is one of the model's (the applications' or the operator's
 * action it is tagged with), and for each run the tally = the audit file = the evtop_audit
 * rows = the rows the database changed, id for id.
 *
 * Faults at a known batch: the connection killed before batch k's COMMIT (the batch is
 * re-read: not committed), the COMMIT's answer lost after it (re-read: committed), the
 * connection killed between batches (the next batch reconnects). The tally and the audit say
 * exactly which rows changed, and running the same bulk action again changes only the rest.
 * Also: marked rows by id (missing, refused, changed behind evtop's back), a lock wait inside a
 * batch, the stop flag between batches, and the hold flag (a pause between batches, resumed,
 * or stopped while paused). */
#include <config.h>

#include "core/auditlog.h"
#include "core/bulk.h"
#include "core/config.h"
#include "core/model.h"
#include "db/action.h"
#include "db/bulk.h"
#include "db/conn.h"
#include "testdb.h"

#include <check.h>
#include <jansson.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static struct ev_config cfg;
static MYSQL *db; /* the test's own root connection */
static char audit_path[512];

static const struct ev_audit_who who = {
        .source = "default",
        .os_user = "tester",
        .operator_id = "INC-9",
};

static void setup(void)
{
	static int serial;

	ev_db_init();
	ev_config_init(&cfg);
	/* The lock wait timeout (5 s, set by the session) must come before the time limit. */
	cfg.statement_timeout_ms = 20000;
	free(cfg.sources[0].defaults_file);
	cfg.sources[0].defaults_file = strdup(getenv("EVTOP_TEST_DEFAULTS_FILE"));
	db = tdb_connect();
	tdb_exec(db, "DROP TRIGGER IF EXISTS evtop_test_outbox_transition");
	tdb_exec(db, "DROP TRIGGER IF EXISTS evtop_test_message_transition");
	tdb_exec(db, "DROP TABLE IF EXISTS evtop_test_transitions");
	tdb_exec(db, "TRUNCATE biz_outbox_event");
	tdb_exec(db, "TRUNCATE biz_message_event");
	tdb_exec(db, "TRUNCATE evtop_audit");
	char *path = tdb_srcpath("tests/data/transitions.sql");
	tdb_source(db, path);
	free(path);
	snprintf(audit_path, sizeof(audit_path), "%s/audit-%ld-%d.jsonl", getenv("EVTOP_TEST_DIR"),
	         (long)getpid(), ++serial);
}

static void teardown(void)
{
	ev_bulk_set_fault(NULL, NULL);
	mysql_close(db);
	ev_config_free(&cfg);
}

/* --- evtop's side ---------------------------------------------------------------------------- */

static struct ev_conn *evconn(void)
{
	struct ev_error err = {0};
	struct ev_conn *c = ev_conn_new(&cfg.sources[0], &cfg);
	ck_assert_msg(ev_conn_connect(c, &err) == 0, "connect: %s", err.msg);
	return c;
}

static struct ev_bulk_spec spec(enum ev_table_kind t, enum ev_action a, const char *reason)
{
	struct ev_bulk_spec sp = {
	        .table = t,
	        .action = a,
	        .reason = reason,
	        .stuck_threshold_s = 600,
	        .recover_message = true,
	        .protected_types = cfg.protected_types,
	        .target = "test",
	};
	ev_bulk_settings_default(&sp.set);
	sp.set.pause_ms = 0;
	/* Batches cut by size only, so the tests can name batch k (the race keeps the bound). */
	sp.set.batch_ms = 60000;
	return sp;
}

struct bulk_run {
	struct ev_bulk_spec sp;
	struct ev_bulk_target tg;
	bool include_protected;
	atomic_bool stop;
	struct ev_bulk_snapshot *s;
	struct ev_table_info info;
	unsigned progress_calls;
	size_t last_done;
	bool monotonic;
};

static void on_progress(const struct ev_bulk_progress *p, void *arg)
{
	struct bulk_run *r = arg;
	if (p->done < r->last_done || p->done > p->total)
		r->monotonic = false;
	r->last_done = p->done;
	r->progress_calls++;
}

/* Count and apply on connection c (the calling thread's). */
static void bulk_on(struct ev_conn *c, struct bulk_run *r)
{
	struct ev_error err = {0};
	struct ev_access acc;
	struct ev_audit_log log;

	r->monotonic = true;
	ck_assert_msg(ev_conn_table_info(c, ev_model_table(r->sp.table)->default_name, &r->info,
	                                 &err) == 0,
	              "%s", err.msg);
	r->tg.info = &r->info;
	ck_assert_msg(ev_bulk_count(c, &r->sp, &r->tg, r->include_protected, &r->s, &err) == 0,
	              "count: %s", err.msg);
	ck_assert_msg(ev_action_check_access(c, r->sp.table, NULL, &acc, &err) == 0, "%s", err.msg);
	ck_assert_msg(acc.writable && acc.audit_table, "%s", acc.why);
	ck_assert_int_eq(ev_audit_log_open(&log, audit_path, &err), 0);
	struct ev_bulk_ctx ctx = {.conn = c,
	                          .access = &acc,
	                          .log = &log,
	                          .who = &who,
	                          .progress = on_progress,
	                          .progress_arg = r,
	                          .stop = &r->stop};
	ck_assert_msg(ev_bulk_apply(&ctx, r->s, &err) == 0, "apply: %s", err.msg);
	ev_audit_log_close(&log);
	ev_table_info_clear(&r->info);
	ck_assert(r->monotonic);
	ck_assert_uint_ge(r->progress_calls, 2);
}

static void bulk(struct bulk_run *r)
{
	struct ev_conn *c = evconn();
	bulk_on(c, r);
	ev_conn_free(&c);
}

static void bulk_free(struct bulk_run *r)
{
	ev_bulk_snapshot_free(&r->s);
}

/* The tally adds up, and matches the rows' states. */
static void assert_tally(const struct ev_bulk_snapshot *s)
{
	const struct ev_bulk_tally *t = &s->tally;
	ck_assert_uint_eq(t->applied + t->skipped + t->failed + t->not_attempted + t->protected_n +
	                          t->refused,
	                  t->counted);
	ck_assert_uint_eq(t->counted, s->n);
	ck_assert_uint_eq(t->protected_n + t->refused, s->n_protected + s->n_refused);
}

/* --- sets of ids ----------------------------------------------------------------------------- */

struct ids {
	size_t n;
	unsigned long long *v;
};

static int cmp_ull(const void *a, const void *b)
{
	unsigned long long x = *(const unsigned long long *)a, y = *(const unsigned long long *)b;
	return x < y ? -1 : x > y;
}

static void ids_add(struct ids *s, unsigned long long id)
{
	s->v = realloc(s->v, (s->n + 1) * sizeof(*s->v));
	ck_assert_ptr_nonnull(s->v);
	s->v[s->n++] = id;
}

static void ids_sort(struct ids *s)
{
	if (s->n > 0)
		qsort(s->v, s->n, sizeof(*s->v), cmp_ull);
}

static void ids_free(struct ids *s)
{
	free(s->v);
	memset(s, 0, sizeof(*s));
}

static void ids_eq(const struct ids *a, const struct ids *b, const char *what)
{
	ck_assert_msg(a->n == b->n, "%s: %zu ids vs %zu", what, a->n, b->n);
	for (size_t i = 0; i < a->n; i++)
		ck_assert_msg(a->v[i] == b->v[i], "%s: id %llu vs %llu at %zu", what, a->v[i],
		              b->v[i], i);
}

/* The ids a query returns (first column), sorted. */
static struct ids ids_sql(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static struct ids ids_sql(const char *fmt, ...)
{
	char sql[4096];
	va_list ap;
	struct ids s = {0};

	va_start(ap, fmt);
	vsnprintf(sql, sizeof(sql), fmt, ap);
	va_end(ap);
	if (mysql_query(db, sql) != 0)
		ck_abort_msg("%s: %s", sql, mysql_error(db));
	MYSQL_RES *res = mysql_store_result(db);
	MYSQL_ROW row;
	while ((row = mysql_fetch_row(res)) != NULL)
		ids_add(&s, strtoull(row[0], NULL, 10));
	mysql_free_result(res);
	ids_sort(&s);
	return s;
}

/* The snapshot's rows in a state, sorted. */
static struct ids ids_state(const struct ev_bulk_snapshot *s, enum ev_bulk_state st)
{
	struct ids out = {0};
	for (size_t i = 0; i < s->n; i++)
		if (s->items[i].state == st)
			ids_add(&out, s->items[i].row.id);
	ids_sort(&out);
	return out;
}

/* What the audit file says about one run: its intent lines, and the ids of its result lines
 * with this result (sorted). */
struct audit_view {
	unsigned intents;
	size_t intent_rows;
	struct ids applied, skipped, failed;
	struct ids delayed;       /* scheduled retries: the rows listed, once each */
	long long max_per_second; /* scheduled retries: most rows with one delay_s */
	bool delays_ordered;
};

static void audit_read(const char *run_id, struct audit_view *v)
{
	FILE *f = fopen(audit_path, "r");
	char *line = NULL;
	size_t cap = 0;
	long long last_delay = -1, same = 0;

	memset(v, 0, sizeof(*v));
	v->delays_ordered = true;
	ck_assert_ptr_nonnull(f);
	while (getline(&line, &cap, f) > 0) {
		json_error_t e;
		json_t *j = json_loads(line, 0, &e);
		ck_assert_msg(j != NULL, "audit line is not JSON (%s): %s", e.text, line);
		const char *bulk = json_string_value(json_object_get(j, "bulk"));
		if (bulk == NULL || strcmp(bulk, run_id) != 0) {
			json_decref(j);
			continue;
		}
		const char *result = json_string_value(json_object_get(j, "result"));
		ck_assert_ptr_nonnull(result);
		if (strcmp(result, "intent") == 0) {
			json_t *rows = json_object_get(j, "rows");
			v->intents++;
			v->intent_rows += json_array_size(rows);
			ck_assert_int_eq(json_integer_value(json_object_get(j, "batch")),
			                 v->intents);
			for (size_t i = 0; i < json_array_size(rows); i++) {
				json_t *row = json_array_get(rows, i);
				json_t *d = json_object_get(row, "delay_s");
				if (d == NULL)
					continue;
				/* A row requeued after a rolled-back or cut batch is listed again,
				 * with the same delay: count it once. */
				unsigned long long id = strtoull(
				        json_string_value(json_object_get(row, "id")), NULL, 10);
				bool seen = false;
				for (size_t k = 0; k < v->delayed.n && !seen; k++)
					seen = v->delayed.v[k] == id;
				if (seen)
					continue;
				ids_add(&v->delayed, id);
				long long delay = json_integer_value(d);
				if (delay < last_delay)
					v->delays_ordered = false;
				same = delay == last_delay ? same + 1 : 1;
				last_delay = delay;
				if (same > v->max_per_second)
					v->max_per_second = same;
			}
		} else {
			unsigned long long id =
			        strtoull(json_string_value(json_object_get(j, "id")), NULL, 10);
			ck_assert_int_ge(json_integer_value(json_object_get(j, "batch")), 1);
			if (strcmp(result, "applied") == 0)
				ids_add(&v->applied, id);
			else if (strcmp(result, "skipped") == 0)
				ids_add(&v->skipped, id);
			else if (strcmp(result, "failed") == 0)
				ids_add(&v->failed, id);
			else
				ck_abort_msg("result %s", result);
		}
		json_decref(j);
	}
	free(line);
	fclose(f);
	ids_sort(&v->applied);
	ids_sort(&v->skipped);
	ids_sort(&v->failed);
}

static void audit_free(struct audit_view *v)
{
	ids_free(&v->applied);
	ids_free(&v->skipped);
	ids_free(&v->failed);
	ids_free(&v->delayed);
}

/* Where the audit table and the transitions were before a run (0, 0 = from the start). */
struct marks {
	long long audit_id, seq;
};

static struct marks marks_now(void)
{
	struct marks m = {
	        tdb_int(db, "SELECT COALESCE(MAX(id), 0) FROM evtop_audit"),
	        tdb_int(db, "SELECT COALESCE(MAX(seq), 0) FROM evtop_test_transitions"),
	};
	return m;
}

/* tally = the rows' states = the audit file = the evtop_audit rows = the database's changes
 * (the transitions matching `changed`, a condition on evtop_test_transitions), all after m. */
static void assert_tally_is_audit_is_db(const struct ev_bulk_snapshot *s, const char *changed,
                                        struct marks m)
{
	struct audit_view v;
	const char *table = s->table_name;

	assert_tally(s);
	audit_read(s->run_id, &v);
	struct ids applied = ids_state(s, EV_BULK_APPLIED);
	struct ids skipped = ids_state(s, EV_BULK_SKIPPED);
	struct ids failed = ids_state(s, EV_BULK_FAILED);
	ck_assert_uint_eq(applied.n, s->tally.applied);
	ck_assert_uint_eq(skipped.n, s->tally.skipped);
	ck_assert_uint_eq(failed.n, s->tally.failed);
	ck_assert_uint_eq(v.intents, s->tally.batches);
	ids_eq(&v.applied, &applied, "audit file applied");
	ids_eq(&v.skipped, &skipped, "audit file skipped");
	ids_eq(&v.failed, &failed, "audit file failed");
	/* The evtop_audit rows of this run: its action on its table with its reason. */
	struct ids table_rows = ids_sql(
	        "SELECT event_id FROM evtop_audit WHERE id > %lld AND table_name = '%s' AND action "
	        "= '%s' AND result = 'applied' AND after_status IS NOT NULL AND operator = 'INC-9' "
	        "AND reason LIKE '%%%s'",
	        m.audit_id, table, ev_action_name(s->action), s->reason);
	ids_eq(&table_rows, &applied, "evtop_audit rows");
	struct ids changes = ids_sql("SELECT event_id FROM evtop_test_transitions WHERE seq > %lld "
	                             "AND table_name = '%s' AND %s",
	                             m.seq, table, changed);
	ids_eq(&changes, &applied, "the database's changed rows");
	ids_free(&table_rows);
	ids_free(&changes);
	ids_free(&applied);
	ids_free(&skipped);
	ids_free(&failed);
	audit_free(&v);
}

/* --- rows ------------------------------------------------------------------------------------ */

/* n failed outbox rows, ids first .. first + n - 1, next_retry_time in id order (in the past),
 * every `pay_every`-th a protected PAY_SUCCESS. */
static void add_failed_outbox(unsigned long long first, unsigned n, unsigned pay_every)
{
	size_t cap = (size_t)n * 400 + 1024;
	char *sql = malloc(cap);
	size_t len = 0;
	ck_assert_ptr_nonnull(sql);
	len += (size_t)snprintf(sql + len, cap - len,
	                        "INSERT INTO biz_outbox_event (id, event_no, aggregate_type, "
	                        "aggregate_id, event_type, event_source, publish_channel, "
	                        "event_payload, publish_status, retry_count, max_retry_count, "
	                        "next_retry_time, fail_reason, version, create_time, update_time) "
	                        "VALUES ");
	for (unsigned i = 0; i < n; i++) {
		unsigned long long id = first + i;
		bool pay = pay_every > 0 && (i + 1) % pay_every == 0;
		len += (size_t)snprintf(
		        sql + len, cap - len,
		        "%s(%llu, 'OB-%llu', '%s', 'A-%llu', '%s', 'svc', 'MQ', '{}', 3, 1, 5, "
		        "NOW() - INTERVAL 1 DAY + INTERVAL %llu SECOND, 'mq timeout', 1, "
		        "NOW() - INTERVAL 2 DAY, NOW() - INTERVAL 2 DAY)",
		        i ? ", " : "", id, id, pay ? "PAYMENT" : "ORDER", id,
		        pay ? "PAY_SUCCESS" : "ORDER_CREATED", id);
	}
	tdb_exec(db, "%s", sql);
	free(sql);
}

/* --- racing ---------------------------------------------------------------------------------- */

static json_t *wait_sim(pid_t pid, const char *out)
{
	int st;
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "evtop-sim failed (status %d)", st);
	json_error_t e;
	json_t *j = json_load_file(out, 0, &e);
	ck_assert_msg(j != NULL, "evtop-sim's summary: %s", e.text);
	return j;
}

static long long sim_count(json_t *s, const char *table, const char *key)
{
	json_t *v = json_object_get(json_object_get(json_object_get(s, "tables"), table), key);
	ck_assert_msg(json_is_integer(v), "no %s.%s in the summary", table, key);
	return (long long)json_integer_value(v);
}

static void *bulk_thread(void *arg)
{
	ev_db_thread_init();
	bulk(arg);
	ev_db_thread_end();
	return NULL;
}

/* Every recorded change is a transition of the model; those that wrote a run's reason are
 * that run's action (the applications' later changes of the row keep the reason it holds),
 * and a failed row rescheduled (3 -> 3) is only ever the operator's. */
static void assert_transitions_allowed(void)
{
	if (mysql_query(db, "SELECT table_name, old_status, new_status, COUNT(*), "
	                    "SUM(new_fail_reason LIKE '%bulk-race-%') FROM "
	                    "evtop_test_transitions GROUP BY 1, 2, 3") != 0)
		ck_abort_msg("%s", mysql_error(db));
	MYSQL_RES *res = mysql_store_result(db);
	MYSQL_ROW row;
	int groups = 0;
	while ((row = mysql_fetch_row(res)) != NULL) {
		enum ev_table_kind t = strcmp(row[0], "biz_outbox_event") == 0 ? EV_TABLE_OUTBOX
		                                                               : EV_TABLE_MESSAGE;
		int from = atoi(row[1]), to = atoi(row[2]);
		ck_assert_msg(ev_transition_allowed(t, from, to),
		              "%s: %s rows went %d -> %d, not a transition of the model", row[0],
		              row[3], from, to);
		if (from == to)
			ck_assert(ev_action_allows(EV_ACTION_RETRY_SCHEDULE, t, from, to));
		groups++;
	}
	mysql_free_result(res);
	ck_assert_int_gt(groups, 3);
	/* The operator's tagged changes are their action's. */
	ck_assert_int_eq(
	        tdb_int(db, "SELECT COUNT(*) FROM evtop_test_transitions WHERE "
	                    "new_fail_reason LIKE '%%：bulk-race-B' AND NOT (old_fail_reason <=> "
	                    "new_fail_reason) AND NOT (old_status IN "
	                    "(0, 3) AND new_status = 4)"),
	        0);
	ck_assert_int_eq(
	        tdb_int(db, "SELECT COUNT(*) FROM evtop_test_transitions WHERE "
	                    "new_fail_reason LIKE '%%：bulk-race-C' AND NOT (old_fail_reason <=> "
	                    "new_fail_reason) AND NOT (old_status = 1 "
	                    "AND new_status = 3)"),
	        0);
	ck_assert_int_eq(
	        tdb_int(db, "SELECT COUNT(*) FROM evtop_test_transitions WHERE "
	                    "new_fail_reason LIKE '%%：bulk-race-E' AND NOT (old_fail_reason <=> "
	                    "new_fail_reason) AND NOT (old_status = 1 "
	                    "AND new_status = 3)"),
	        0);
	ck_assert(ev_action_allows(EV_ACTION_CANCEL, EV_TABLE_OUTBOX, 3, 4));
	ck_assert(ev_action_allows(EV_ACTION_RECOVER, EV_TABLE_MESSAGE, 1, 3));
}

START_TEST(racing_the_simulator)
{
	char out[512];
	snprintf(out, sizeof(out), "%s/sim-history.json", getenv("EVTOP_TEST_DIR"));

	/* Thousands of events in every state, from a seed. */
	char *history[] = {
	        (char *)"--seed",           (char *)"21",   (char *)"--history",      (char *)"3h",
	        (char *)"--history-events", (char *)"4000", (char *)"--fail-rate",    (char *)"0.5",
	        (char *)"--crash-rate",     (char *)"0.05", (char *)"--history-only", NULL};
	json_t *h = wait_sim(tdb_sim_start(history, out), out);
	long long seeded_ob = sim_count(h, "outbox", "seeded");
	long long seeded_msg = sim_count(h, "message", "seeded");
	json_decref(h);
	ck_assert_int_gt(seeded_ob, 2500);
	ck_assert_int_eq(tdb_int(db, "SELECT COUNT(*) FROM evtop_test_transitions"), 0);
	long long failed_ob =
	        tdb_int(db, "SELECT COUNT(*) FROM biz_outbox_event WHERE publish_status = 3");
	long long stuck_ob = tdb_int(db, "SELECT COUNT(*) FROM biz_outbox_event WHERE "
	                                 "publish_status = 1 AND lock_until <= NOW()");
	long long failed_msg =
	        tdb_int(db, "SELECT COUNT(*) FROM biz_message_event WHERE event_status = 3");
	ck_assert_int_gt(failed_ob, 300);
	ck_assert_int_gt(stuck_ob, 5);
	ck_assert_int_gt(failed_msg, 300);

	/* The applications at work: publishers and consumers claiming, failing, crashing. */
	snprintf(out, sizeof(out), "%s/sim-live.json", getenv("EVTOP_TEST_DIR"));
	char *live[] = {(char *)"--seed",
	                (char *)"22",
	                (char *)"--rate",
	                (char *)"150",
	                (char *)"--instances",
	                (char *)"3",
	                (char *)"--fail-rate",
	                (char *)"0.2",
	                (char *)"--crash-rate",
	                (char *)"0.05",
	                (char *)"--outage-every",
	                (char *)"3s",
	                (char *)"--outage-for",
	                (char *)"1s",
	                (char *)"--time-scale",
	                (char *)"600",
	                (char *)"--lock-time",
	                (char *)"1s",
	                (char *)"--recover-every",
	                (char *)"2s",
	                (char *)"--batch",
	                (char *)"50",
	                (char *)"--duration",
	                (char *)"8s",
	                NULL};
	pid_t sim = tdb_sim_start(live, out);
	/* Wait until they are at it (a condition, not a time). */
	for (int i = 0; i < 600 && tdb_int(db, "SELECT COUNT(*) FROM evtop_test_transitions WHERE "
	                                       "new_status = 1") < 50;
	     i++)
		usleep(20 * 1000);

	/* Five bulk runs at once, each on its own thread and connection. */
	static struct bulk_run runs[5];
	memset(runs, 0, sizeof(runs));
	runs[0].sp = spec(EV_TABLE_OUTBOX, EV_ACTION_RETRY_SCHEDULE, "bulk-race-A");
	runs[0].tg.list = EV_LIST_FAILED;
	runs[0].include_protected = true;
	runs[1].sp = spec(EV_TABLE_OUTBOX, EV_ACTION_CANCEL, "bulk-race-B");
	runs[1].tg.list = EV_LIST_FAILED;
	runs[2].sp = spec(EV_TABLE_OUTBOX, EV_ACTION_RECOVER, "bulk-race-C");
	runs[2].tg.list = EV_LIST_STUCK;
	runs[3].sp = spec(EV_TABLE_MESSAGE, EV_ACTION_RETRY_SCHEDULE, "bulk-race-D");
	runs[3].tg.list = EV_LIST_FAILED;
	runs[4].sp = spec(EV_TABLE_MESSAGE, EV_ACTION_RECOVER, "bulk-race-E");
	runs[4].tg.list = EV_LIST_STUCK;
	runs[4].include_protected = true;
	for (int i = 0; i < 5; i++) {
		/* Small batches and pauses: the runs last about as long as the simulator. */
		runs[i].sp.set.batch_size = 10;
		runs[i].sp.set.batch_ms = EV_BULK_BATCH_MS_DEFAULT;
		runs[i].sp.set.pause_ms = 80;
		runs[i].sp.set.rate = 50;
	}
	/* Recover slowly, one row at a time, into the simulator's own lock-timeout job. */
	runs[2].sp.set.batch_size = 1;
	runs[2].sp.set.pause_ms = 300;
	pthread_t th[5];
	for (int i = 0; i < 5; i++)
		ck_assert_int_eq(pthread_create(&th[i], NULL, bulk_thread, &runs[i]), 0);
	for (int i = 0; i < 5; i++)
		pthread_join(th[i], NULL);
	json_t *s = wait_sim(sim, out);

	/* No event lost: every row the producers and the history wrote is there. */
	ck_assert_int_eq(sim_count(s, "outbox", "errors"), 0);
	ck_assert_int_eq(tdb_int(db, "SELECT COUNT(*) FROM biz_outbox_event"),
	                 seeded_ob + sim_count(s, "outbox", "inserted"));
	ck_assert_int_eq(tdb_int(db, "SELECT COUNT(*) FROM biz_message_event"),
	                 seeded_msg + sim_count(s, "message", "inserted"));
	fprintf(stderr,
	        "# race: history %lld + %lld events, the simulator inserted %lld + %lld, claimed "
	        "%lld + %lld, failed %lld + %lld, crashed %lld + %lld, recovered %lld\n",
	        seeded_ob, seeded_msg, sim_count(s, "outbox", "inserted"),
	        sim_count(s, "message", "inserted"), sim_count(s, "outbox", "claimed"),
	        sim_count(s, "message", "claimed"), sim_count(s, "outbox", "failed"),
	        sim_count(s, "message", "failed"), sim_count(s, "outbox", "crashed"),
	        sim_count(s, "message", "crashed"), sim_count(s, "outbox", "recovered"));
	ck_assert_int_gt(sim_count(s, "outbox", "claimed"), 100);
	ck_assert_int_gt(sim_count(s, "outbox", "failed"), 0);
	ck_assert_int_gt(sim_count(s, "outbox", "crashed"), 0);
	json_decref(s);

	assert_transitions_allowed();
	static const char *const changed[] = {
	        "old_status = 3 AND new_status = 3",
	        "new_status = 4 AND new_fail_reason = '业务已关闭，取消事件发布：bulk-race-B'",
	        "old_status = 1 AND new_status = 3 AND new_fail_reason = "
	        "'发布器锁定超时，等待重新发布：bulk-race-C'",
	        "old_status = 3 AND new_status = 3",
	        "old_status = 1 AND new_status = 3 AND new_fail_reason = "
	        "'消费者处理超时，等待重新处理：bulk-race-E'",
	};
	size_t applied = 0, skipped = 0;
	for (int i = 0; i < 5; i++) {
		struct ev_bulk_snapshot *b = runs[i].s;
		ck_assert_msg(!b->tally.stopped, "run %d stopped: %s", i, b->error);
		ck_assert_uint_eq(b->tally.not_attempted, 0);
		ck_assert_uint_eq(b->tally.failed, 0);
		/* The simulator's lock-timeout job may recover the stuck outbox rows first. */
		if (i != 2)
			ck_assert_uint_gt(b->n_pending, 0);
		assert_tally_is_audit_is_db(b, changed[i], (struct marks){0, 0});
		applied += b->tally.applied;
		skipped += b->tally.skipped;
		fprintf(stderr,
		        "# race %s %s: counted %zu, protected %zu, applied %zu, skipped %zu, "
		        "failed %zu, %u batches, %.2f s\n",
		        ev_action_name(b->action), b->table_name, b->n, b->n_protected,
		        b->tally.applied, b->tally.skipped, b->tally.failed, b->tally.batches,
		        b->tally.seconds);
	}
	/* Retry and cancel raced for the same outbox rows: never both on one version. */
	ck_assert_int_eq(tdb_int(db, "SELECT COUNT(*) FROM (SELECT event_id, before_version FROM "
	                             "evtop_audit WHERE table_name = 'biz_outbox_event' GROUP BY "
	                             "1, 2 HAVING COUNT(*) > 1) d"),
	                 0);
	/* The schedule: at most --rate rows due per second of offset. */
	struct audit_view v;
	audit_read(runs[0].s->run_id, &v);
	ck_assert_int_le(v.max_per_second, 50);
	ck_assert(v.delays_ordered);
	ck_assert_uint_eq(v.delayed.n, runs[0].s->n_pending);
	audit_free(&v);
	ck_assert_uint_gt(applied, 100);
	fprintf(stderr, "# race: %zu applied and %zu skipped (changed meanwhile) in all\n", applied,
	        skipped);
	for (int i = 0; i < 5; i++)
		bulk_free(&runs[i]);
}
END_TEST

/* --- faults ---------------------------------------------------------------------------------- */

struct fault_plan {
	enum ev_action_point point;
	unsigned batch;
	bool kill;            /* KILL CONNECTION from another session */
	bool lose_answer;     /* return non-zero (after COMMIT) */
	atomic_bool *stop;    /* set it */
	unsigned long killed; /* the thread id killed */
	int fired;
};

/* Until the server has ended the connection (a condition, not a sleep). */
static void wait_gone(MYSQL *root, unsigned long id)
{
	for (int i = 0; i < 500; i++) {
		if (tdb_int(root,
		            "SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE ID = %lu",
		            id) == 0)
			return;
		usleep(10 * 1000);
	}
	ck_abort_msg("connection %lu was not ended", id);
}

static int fault_hook(enum ev_action_point point, unsigned batch, struct ev_conn *c, void *arg)
{
	struct fault_plan *f = arg;
	if (point != f->point || batch != f->batch)
		return 0;
	f->fired++;
	if (f->stop != NULL)
		atomic_store(f->stop, true);
	if (f->kill) {
		MYSQL *root = tdb_connect();
		f->killed = ev_conn_thread_id(c);
		tdb_exec(root, "KILL CONNECTION %lu", f->killed);
		wait_gone(root, f->killed);
		mysql_close(root);
	}
	return f->lose_answer;
}

/* The ids of the snapshot's pending rows [from, to) in plan order, sorted. */
static struct ids plan_slice(const struct ev_bulk_snapshot *s, const struct ids *order, size_t from,
                             size_t to)
{
	struct ids out = {0};
	(void)s;
	for (size_t i = from; i < to && i < order->n; i++)
		ids_add(&out, order->v[i]);
	ids_sort(&out);
	return out;
}

/* The rows the plan acts on, in its order (not sorted). */
static struct ids plan_order(const struct ev_bulk_snapshot *s)
{
	struct ids out = {0};
	for (size_t i = 0; i < s->n; i++)
		if (s->items[i].state != EV_BULK_PROTECTED && s->items[i].state != EV_BULK_REFUSED)
			ids_add(&out, s->items[i].row.id);
	return out;
}

START_TEST(killed_before_commit_then_run_again)
{
	/* 1000 failed rows, every 50th protected: 980 to cancel in batches of 100. */
	add_failed_outbox(1, 1000, 50);
	struct bulk_run r = {0};
	r.sp = spec(EV_TABLE_OUTBOX, EV_ACTION_CANCEL, "fault-K");
	r.tg.list = EV_LIST_FAILED;
	struct fault_plan f = {
	        .point = EV_POINT_BEFORE_COMMIT, .batch = 4, .kill = true, .stop = &r.stop};
	ev_bulk_set_fault(fault_hook, &f);
	bulk(&r);
	ev_bulk_set_fault(NULL, NULL);

	struct ev_bulk_snapshot *s = r.s;
	ck_assert_int_eq(f.fired, 1);
	ck_assert_uint_eq(s->n, 1000);
	ck_assert_uint_eq(s->n_protected, 20);
	ck_assert_uint_eq(s->tally.batches, 4);
	ck_assert_uint_eq(s->tally.applied, 300);
	ck_assert_uint_eq(s->tally.failed, 100);
	ck_assert_uint_eq(s->tally.not_attempted, 580);
	ck_assert_uint_eq(s->tally.in_doubt, 1);
	ck_assert(s->tally.stopped);
	ck_assert(!s->tally.unresolved);
	/* Exactly batches 1-3 changed; batch 4 was re-read and found not committed. */
	struct ids order = plan_order(s);
	struct ids first3 = plan_slice(s, &order, 0, 300), fourth = plan_slice(s, &order, 300, 400);
	struct ids applied = ids_state(s, EV_BULK_APPLIED), failed = ids_state(s, EV_BULK_FAILED);
	ids_eq(&applied, &first3, "applied = batches 1-3");
	ids_eq(&failed, &fourth, "failed = batch 4");
	for (size_t i = 0; i < s->n; i++)
		if (s->items[i].state == EV_BULK_FAILED) {
			ck_assert_uint_eq(s->items[i].batch, 4);
			ck_assert_msg(strstr(s->items[i].msg, "the change was NOT committed") !=
			                      NULL,
			              "%s", s->items[i].msg);
		}
	struct ids cancelled = ids_sql("SELECT id FROM biz_outbox_event WHERE publish_status = 4");
	ids_eq(&cancelled, &first3, "the database's cancelled rows");
	assert_tally_is_audit_is_db(s, "new_status = 4 AND new_fail_reason LIKE '%：fault-K'",
	                            (struct marks){0, 0});
	ids_free(&cancelled);
	ids_free(&applied);
	ids_free(&failed);

	/* The same bulk action again: a new snapshot, and only the rest changes. */
	struct marks m = marks_now();
	struct bulk_run again = {0};
	again.sp = r.sp;
	again.tg.list = EV_LIST_FAILED;
	bulk(&again);
	struct ev_bulk_snapshot *s2 = again.s;
	ck_assert_uint_eq(s2->n, 700);
	ck_assert_uint_eq(s2->n_protected, 20);
	ck_assert_uint_eq(s2->tally.applied, 680);
	ck_assert_uint_eq(s2->tally.skipped + s2->tally.failed + s2->tally.not_attempted, 0);
	ck_assert(!s2->tally.stopped);
	ck_assert_uint_eq(s2->tally.batches, 7);
	struct ids rest = plan_slice(s2, &order, 300, order.n);
	applied = ids_state(s2, EV_BULK_APPLIED);
	ids_eq(&applied, &rest, "the second run changed exactly the rest");
	ck_assert_int_eq(tdb_int(db, "SELECT COUNT(*) FROM biz_outbox_event WHERE publish_status "
	                             "= 4"),
	                 980);
	/* No row changed twice; the protected ones not at all. */
	ck_assert_int_eq(tdb_int(db,
	                         "SELECT COUNT(*) FROM (SELECT event_id FROM "
	                         "evtop_test_transitions GROUP BY event_id HAVING COUNT(*) > 1) "
	                         "d"),
	                 0);
	ck_assert_int_eq(tdb_int(db, "SELECT COUNT(*) FROM biz_outbox_event WHERE event_type = "
	                             "'PAY_SUCCESS' AND publish_status <> 3"),
	                 0);
	ck_assert_int_eq(tdb_int(db, "SELECT COUNT(*) FROM evtop_audit"), 980);
	assert_tally_is_audit_is_db(s2, "new_status = 4", m);
	ids_free(&rest);
	ids_free(&applied);
	ids_free(&first3);
	ids_free(&fourth);
	ids_free(&order);
	bulk_free(&r);
	bulk_free(&again);
}
END_TEST

START_TEST(commit_answer_lost_is_reread_and_the_run_goes_on)
{
	/* 500 failed rows due for a retry: scheduled a minute ahead, 1000 a second, in batches
	 * of 100. */
	add_failed_outbox(1, 500, 0);
	struct bulk_run r = {0};
	r.sp = spec(EV_TABLE_OUTBOX, EV_ACTION_RETRY_SCHEDULE, "fault-L");
	r.sp.set.rate = 1000;
	r.sp.set.delay_s = 60;
	r.tg.list = EV_LIST_FAILED_DUE;
	struct fault_plan f = {.point = EV_POINT_AFTER_COMMIT, .batch = 2, .lose_answer = true};
	ev_bulk_set_fault(fault_hook, &f);
	bulk(&r);
	ev_bulk_set_fault(NULL, NULL);

	struct ev_bulk_snapshot *s = r.s;
	ck_assert_int_eq(f.fired, 1);
	ck_assert_uint_eq(s->tally.batches, 5);
	ck_assert_uint_eq(s->tally.applied, 500);
	ck_assert_uint_eq(s->tally.in_doubt, 1);
	ck_assert(!s->tally.stopped);
	size_t reread = 0;
	for (size_t i = 0; i < s->n; i++) {
		ck_assert_int_eq(s->items[i].delay_s, 60 + (long long)(i / 1000));
		if (s->items[i].batch != 2)
			continue;
		ck_assert_msg(s->items[i].msg != NULL &&
		                      strstr(s->items[i].msg,
		                             "the answer to COMMIT was lost; re-read "
		                             "from the server: the change was "
		                             "committed") != NULL,
		              "%s", s->items[i].msg ? s->items[i].msg : "(none)");
		reread++;
	}
	ck_assert_uint_eq(reread, 100);
	ck_assert_int_eq(
	        tdb_int(db,
	                "SELECT COUNT(*) FROM biz_outbox_event WHERE version = 2 AND "
	                "publish_status = 3 AND next_retry_time = update_time + INTERVAL 1 MINUTE"),
	        500);
	assert_tally_is_audit_is_db(s, "old_status = 3 AND new_status = 3", (struct marks){0, 0});

	/* Again: every row is scheduled ahead now, so the failed-due list is empty. */
	struct bulk_run again = {0};
	again.sp = r.sp;
	again.tg.list = EV_LIST_FAILED_DUE;
	bulk(&again);
	ck_assert_uint_eq(again.s->n, 0);
	ck_assert_uint_eq(again.s->tally.batches, 0);
	bulk_free(&again);
	bulk_free(&r);
}
END_TEST

START_TEST(connection_killed_between_batches_reconnects)
{
	add_failed_outbox(1, 300, 0);
	struct ev_conn *c = evconn();
	struct bulk_run r = {0};
	r.sp = spec(EV_TABLE_OUTBOX, EV_ACTION_RETRY_NOW, "fault-B");
	r.tg.list = EV_LIST_FAILED;
	/* After batch 1's COMMIT went through, the connection dies before batch 2. */
	struct fault_plan f = {.point = EV_POINT_AFTER_COMMIT, .batch = 1, .kill = true};
	ev_bulk_set_fault(fault_hook, &f);
	bulk_on(c, &r);
	ev_bulk_set_fault(NULL, NULL);
	ck_assert_int_eq(f.fired, 1);
	ck_assert_uint_ne(ev_conn_thread_id(c), f.killed);
	ck_assert_uint_eq(r.s->tally.applied, 300);
	ck_assert_uint_eq(r.s->tally.batches, 3);
	ck_assert_uint_eq(r.s->tally.in_doubt, 0);
	ck_assert_int_eq(tdb_int(db, "SELECT COUNT(*) FROM biz_outbox_event WHERE publish_status = "
	                             "0 AND next_retry_time IS NULL AND version = 2"),
	                 300);
	assert_tally_is_audit_is_db(r.s, "old_status = 3 AND new_status = 0", (struct marks){0, 0});
	bulk_free(&r);
	ev_conn_free(&c);
}
END_TEST

START_TEST(marked_rows_by_id)
{
	add_failed_outbox(1, 10, 5); /* ids 5 and 10: PAY_SUCCESS */
	tdb_exec(db, "UPDATE biz_outbox_event SET publish_status = 0 WHERE id = 7");
	static const unsigned long long marked[] = {9, 3, 999, 5, 7, 3, 1};
	struct ev_conn *c = evconn();
	struct ev_error err = {0};
	struct bulk_run r = {0};
	r.sp = spec(EV_TABLE_OUTBOX, EV_ACTION_CANCEL, "marked");
	r.tg.ids = marked;
	r.tg.n_ids = sizeof(marked) / sizeof(marked[0]);
	ck_assert_int_eq(ev_bulk_count(c, &r.sp, &r.tg, false, &r.s, &err), 0);
	struct ev_bulk_snapshot *s = r.s;
	/* In the order marked, once each; the missing one counted. */
	ck_assert_uint_eq(s->n, 5);
	ck_assert_uint_eq(s->ids_missing, 1);
	static const unsigned long long order[] = {9, 3, 5, 7, 1};
	for (size_t i = 0; i < 5; i++)
		ck_assert_uint_eq(s->items[i].row.id, order[i]);
	ck_assert_uint_eq(s->n_protected, 1);
	ck_assert_uint_eq(s->n_pending, 4); /* 7 is pending (0): cancel takes it too */
	ck_assert_str_eq(s->protected_summary, "PAY 1");
	/* The operator typed the count: the protected row joins. */
	ck_assert_int_eq(ev_bulk_plan(s, true, &err), 0);
	ck_assert_uint_eq(s->n_pending, 5);
	/* Behind evtop's back, after the count: a publisher claims row 3. */
	tdb_exec(db, "UPDATE biz_outbox_event SET publish_status = 1, version = version + 1, "
	             "locked_by = 'publisher-09', lock_until = NOW() + INTERVAL 1 MINUTE WHERE "
	             "id = 3");
	struct ev_access acc;
	ck_assert_int_eq(ev_action_check_access(c, EV_TABLE_OUTBOX, NULL, &acc, &err), 0);
	struct ev_audit_log log;
	ck_assert_int_eq(ev_audit_log_open(&log, audit_path, &err), 0);
	struct ev_bulk_ctx ctx = {.conn = c, .access = &acc, .log = &log, .who = &who};
	ck_assert_int_eq(ev_bulk_apply(&ctx, s, &err), 0);
	/* A snapshot runs once. */
	ck_assert_int_eq(ev_bulk_apply(&ctx, s, &err), -1);
	ev_audit_log_close(&log);
	ck_assert_uint_eq(s->tally.applied, 4);
	ck_assert_uint_eq(s->tally.skipped, 1);
	const struct ev_bulk_item *it = &s->items[1];
	ck_assert_int_eq(it->state, EV_BULK_SKIPPED);
	ck_assert_msg(strstr(it->msg, "the row changed since it was read (version 1 -> 2, "
	                              "publish_status 3 (failed) -> 1 (publishing))") != NULL,
	              "%s", it->msg);
	ck_assert_msg(strstr(it->now, "publish_status 1 (publishing)") != NULL &&
	                      strstr(it->now, "locked_by publisher-09") != NULL,
	              "%s", it->now);
	ck_assert_int_eq(tdb_int(db, "SELECT publish_status FROM biz_outbox_event WHERE id = 3"),
	                 1);
	ck_assert_int_eq(tdb_int(db, "SELECT COUNT(*) FROM biz_outbox_event WHERE publish_status = "
	                             "4 AND fail_reason = '业务已关闭，取消事件发布：marked'"),
	                 4);
	assert_tally_is_audit_is_db(s, "new_status = 4", (struct marks){0, 0});
	/* The skip's audit line says why. */
	FILE *f = fopen(audit_path, "r");
	char buf[8192];
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	ck_assert_msg(strstr(buf, "\"id\":\"3\",\"event_no\":\"OB-3\",\"action\":\"cancel\"") !=
	                      NULL,
	              "%s", buf);
	ck_assert_msg(strstr(buf, "\"result\":\"skipped\",\"error\":\"the row changed since it was "
	                          "read") != NULL,
	              "%s", buf);

	/* An id list of another action: retry refuses the cancelled and the processing rows. */
	struct bulk_run r2 = {0};
	static const unsigned long long more[] = {7, 9, 3};
	r2.sp = spec(EV_TABLE_OUTBOX, EV_ACTION_RETRY_NOW, NULL);
	r2.tg.ids = more;
	r2.tg.n_ids = 3;
	ck_assert_int_eq(ev_bulk_count(c, &r2.sp, &r2.tg, false, &r2.s, &err), 0);
	ck_assert_uint_eq(r2.s->n_refused, 3);
	ck_assert_uint_eq(r2.s->n_pending, 0);
	ck_assert_msg(strstr(r2.s->items[0].msg, "cancelled is final") != NULL, "%s",
	              r2.s->items[0].msg);
	ck_assert_ptr_null(r2.s->statement);
	bulk_free(&r2);
	bulk_free(&r);
	ev_conn_free(&c);
}
END_TEST

START_TEST(lock_wait_fails_one_row_and_the_batch_is_redone)
{
	add_failed_outbox(1, 10, 0);
	/* Another session holds row 5 in an open transaction. */
	MYSQL *holder = tdb_connect();
	tdb_exec(holder, "BEGIN");
	tdb_exec(holder, "SELECT * FROM biz_outbox_event WHERE id = 5 FOR UPDATE");
	struct bulk_run r = {0};
	r.sp = spec(EV_TABLE_OUTBOX, EV_ACTION_RETRY_SCHEDULE, "locked");
	r.tg.list = EV_LIST_FAILED;
	bulk(&r);
	tdb_exec(holder, "ROLLBACK");
	mysql_close(holder);
	struct ev_bulk_snapshot *s = r.s;
	ck_assert_uint_eq(s->tally.applied, 9);
	ck_assert_uint_eq(s->tally.failed, 1);
	/* Batch 1 was rolled back at row 5; batch 2 did the other nine. */
	ck_assert_uint_eq(s->tally.batches, 2);
	ck_assert_int_eq(s->items[4].state, EV_BULK_FAILED);
	ck_assert_msg(strstr(s->items[4].msg, "lock wait timeout") != NULL &&
	                      strstr(s->items[4].msg, "rolled back") != NULL,
	              "%s", s->items[4].msg);
	for (size_t i = 0; i < 10; i++)
		if (i != 4) {
			ck_assert_int_eq(s->items[i].state, EV_BULK_APPLIED);
			ck_assert_uint_eq(s->items[i].batch, 2);
		}
	ck_assert_int_eq(tdb_int(db, "SELECT version FROM biz_outbox_event WHERE id = 5"), 1);
	assert_tally_is_audit_is_db(s, "old_status = 3 AND new_status = 3", (struct marks){0, 0});
	/* The audit file lists rows 1-4 in both intents: requeued, each with one result. */
	struct audit_view v;
	audit_read(s->run_id, &v);
	ck_assert_uint_eq(v.intents, 2);
	ck_assert_uint_eq(v.intent_rows, 10 + 9);
	audit_free(&v);
	bulk_free(&r);
}
END_TEST

static void stop_after_two(const struct ev_bulk_progress *p, void *arg)
{
	if (p->batches == 2)
		atomic_store((atomic_bool *)arg, true);
}

START_TEST(stop_flag_stops_between_batches)
{
	add_failed_outbox(1, 100, 0);
	struct ev_conn *c = evconn();
	struct ev_error err = {0};
	struct bulk_run r = {0};
	atomic_bool stop = false;
	r.sp = spec(EV_TABLE_OUTBOX, EV_ACTION_CANCEL, "stopped");
	r.sp.set.batch_size = 10;
	r.tg.list = EV_LIST_FAILED;
	ck_assert_int_eq(ev_bulk_count(c, &r.sp, &r.tg, false, &r.s, &err), 0);
	ck_assert_uint_eq(r.s->batches_planned, 10);
	struct ev_access acc;
	ck_assert_int_eq(ev_action_check_access(c, EV_TABLE_OUTBOX, NULL, &acc, &err), 0);
	struct ev_audit_log log;
	ck_assert_int_eq(ev_audit_log_open(&log, audit_path, &err), 0);
	struct ev_bulk_ctx ctx = {.conn = c,
	                          .access = &acc,
	                          .log = &log,
	                          .who = &who,
	                          .progress = stop_after_two,
	                          .progress_arg = &stop,
	                          .stop = &stop};
	ck_assert_int_eq(ev_bulk_apply(&ctx, r.s, &err), 0);
	ev_audit_log_close(&log);
	ck_assert(r.s->tally.stopped);
	ck_assert_uint_eq(r.s->tally.batches, 2);
	ck_assert_uint_eq(r.s->tally.applied, 20);
	ck_assert_uint_eq(r.s->tally.not_attempted, 80);
	ck_assert_str_eq(r.s->error, "");
	assert_tally_is_audit_is_db(r.s, "new_status = 4", (struct marks){0, 0});

	/* Read-only: refused before anything, nothing written. */
	struct bulk_run ro = {0};
	ro.sp = r.sp;
	ro.tg.list = EV_LIST_FAILED;
	ck_assert_int_eq(ev_bulk_count(c, &ro.sp, &ro.tg, false, &ro.s, &err), 0);
	ck_assert_uint_eq(ro.s->n, 80);
	ev_conn_set_read_only(c, "--read-only");
	ck_assert_int_eq(ev_audit_log_open(&log, audit_path, &err), 0);
	ck_assert_int_eq(ev_bulk_apply(&ctx, ro.s, &err), -1);
	ck_assert_msg(strstr(err.msg, "read-only: --read-only") != NULL, "%s", err.msg);
	ev_audit_log_close(&log);
	ck_assert_int_eq(tdb_int(db, "SELECT COUNT(*) FROM evtop_audit"), 20);
	bulk_free(&ro);
	bulk_free(&r);
	ev_conn_free(&c);
}
END_TEST

/* --- hold ------------------------------------------------------------------------------------ */

/* The progress callback sets hold in the report of batch `at`, and starts a thread that, after
 * after_ms, kills evtop's connection (when `kill` is its id) and then clears hold, or sets stop
 * instead. The reports say what happened meanwhile. */
struct hold_plan {
	unsigned at;
	unsigned after_ms;
	unsigned long kill;
	bool then_stop;
	atomic_bool hold, stop;
	pthread_t thread;
	bool started;
	unsigned paused_reports;
	bool paused_elsewhere; /* a paused report with batches != at */
	bool ran_while_held;   /* a batch after `at` reported while hold was still set */
	unsigned resumed_at;   /* batches in the first report not paused after a paused one */
	double paused_s;       /* the last report's */
	bool finished;
};

static void *hold_thread(void *arg)
{
	struct hold_plan *h = arg;
	ev_db_thread_init();
	usleep(h->after_ms * 1000);
	if (h->kill != 0) {
		MYSQL *root = tdb_connect();
		tdb_exec(root, "KILL CONNECTION %lu", h->kill);
		wait_gone(root, h->kill);
		mysql_close(root);
	}
	if (h->then_stop)
		atomic_store(&h->stop, true);
	else
		atomic_store(&h->hold, false);
	ev_db_thread_end();
	return NULL;
}

static void hold_progress(const struct ev_bulk_progress *p, void *arg)
{
	struct hold_plan *h = arg;
	if (p->paused) {
		h->paused_reports++;
		if (p->batches != h->at)
			h->paused_elsewhere = true;
	} else if (h->paused_reports > 0 && h->resumed_at == 0 && !p->finished) {
		h->resumed_at = p->batches;
	}
	if (!p->paused && p->batches > h->at && atomic_load(&h->hold))
		h->ran_while_held = true;
	h->paused_s = p->paused_s;
	h->finished = p->finished;
	if (!h->started && !p->paused && p->batches == h->at) {
		atomic_store(&h->hold, true);
		ck_assert_int_eq(pthread_create(&h->thread, NULL, hold_thread, h), 0);
		h->started = true;
	}
}

/* Count 30 failed outbox rows and cancel them in batches of 5, held as h says. */
static void hold_run(struct ev_conn *c, struct bulk_run *r, struct hold_plan *h)
{
	struct ev_error err = {0};
	add_failed_outbox(1, 30, 0);
	r->sp = spec(EV_TABLE_OUTBOX, EV_ACTION_CANCEL, "held");
	r->sp.set.batch_size = 5;
	r->tg.list = EV_LIST_FAILED;
	ck_assert_int_eq(ev_bulk_count(c, &r->sp, &r->tg, false, &r->s, &err), 0);
	ck_assert_uint_eq(r->s->batches_planned, 6);
	struct ev_access acc;
	ck_assert_int_eq(ev_action_check_access(c, EV_TABLE_OUTBOX, NULL, &acc, &err), 0);
	struct ev_audit_log log;
	ck_assert_int_eq(ev_audit_log_open(&log, audit_path, &err), 0);
	struct ev_bulk_ctx ctx = {.conn = c,
	                          .access = &acc,
	                          .log = &log,
	                          .who = &who,
	                          .progress = hold_progress,
	                          .progress_arg = h,
	                          .stop = &h->stop,
	                          .hold = &h->hold};
	ck_assert_int_eq(ev_bulk_apply(&ctx, r->s, &err), 0);
	ev_audit_log_close(&log);
	ck_assert(h->started);
	ck_assert_int_eq(pthread_join(h->thread, NULL), 0);
	ck_assert(h->finished);
}

START_TEST(hold_pauses_between_batches_and_resumes)
{
	struct ev_conn *c = evconn();
	struct bulk_run r = {0};
	/* While paused the server drops the idle connection (as its wait_timeout would): the
	 * next batch reconnects. */
	unsigned long first_id = ev_conn_thread_id(c);
	struct hold_plan h = {.at = 2, .after_ms = 400, .kill = first_id};
	hold_run(c, &r, &h);
	ck_assert_uint_ge(h.paused_reports, 1);
	ck_assert(!h.paused_elsewhere);
	ck_assert(!h.ran_while_held);
	ck_assert_uint_eq(h.resumed_at, 3);
	ck_assert_msg(h.paused_s >= 0.3, "paused %.3f s", h.paused_s);
	ck_assert_uint_ne(ev_conn_thread_id(c), first_id);
	ck_assert(!r.s->tally.stopped);
	ck_assert_str_eq(r.s->error, "");
	ck_assert_uint_eq(r.s->tally.batches, 6);
	ck_assert_uint_eq(r.s->tally.applied, 30);
	ck_assert_uint_eq(r.s->tally.not_attempted, 0);
	/* The wall time holds the pause. */
	ck_assert(r.s->tally.seconds >= h.paused_s);
	ck_assert_int_eq(tdb_int(db, "SELECT COUNT(*) FROM biz_outbox_event WHERE publish_status = "
	                             "4 AND version = 2"),
	                 30);
	assert_tally_is_audit_is_db(r.s, "new_status = 4", (struct marks){0, 0});
	bulk_free(&r);
	ev_conn_free(&c);
}
END_TEST

START_TEST(stop_while_held_stops)
{
	struct ev_conn *c = evconn();
	struct bulk_run r = {0};
	struct hold_plan h = {.at = 1, .after_ms = 200, .then_stop = true};
	hold_run(c, &r, &h);
	ck_assert_uint_ge(h.paused_reports, 1);
	ck_assert(!h.paused_elsewhere);
	ck_assert(!h.ran_while_held);
	ck_assert_uint_eq(h.resumed_at, 0);
	ck_assert(r.s->tally.stopped);
	ck_assert_str_eq(r.s->error, "");
	ck_assert_uint_eq(r.s->tally.batches, 1);
	ck_assert_uint_eq(r.s->tally.applied, 5);
	ck_assert_uint_eq(r.s->tally.not_attempted, 25);
	/* Nothing written after batch 1. */
	ck_assert_int_eq(tdb_int(db, "SELECT COUNT(*) FROM biz_outbox_event WHERE version = 2"), 5);
	ck_assert_int_eq(tdb_int(db, "SELECT COUNT(*) FROM biz_outbox_event WHERE version = 1 AND "
	                             "publish_status = 3"),
	                 25);
	assert_tally_is_audit_is_db(r.s, "new_status = 4", (struct marks){0, 0});
	bulk_free(&r);
	ev_conn_free(&c);
}
END_TEST

START_TEST(count_reads_bounded_pages)
{
	/* 2500 rows through pages of at most 1000; --max-rows cuts the snapshot and says so. */
	add_failed_outbox(1, 1250, 0);
	add_failed_outbox(5001, 1250, 0);
	struct ev_conn *c = evconn();
	struct ev_error err = {0};
	struct ev_bulk_spec sp = spec(EV_TABLE_OUTBOX, EV_ACTION_CANCEL, "pages");
	struct ev_bulk_target tg = {.list = EV_LIST_FAILED};
	struct ev_bulk_snapshot *s = NULL;
	char log_path[600];
	snprintf(log_path, sizeof(log_path), "%s/sql-%ld.log", getenv("EVTOP_TEST_DIR"),
	         (long)getpid());
	FILE *sql_log = fopen(log_path, "w");
	ev_db_set_sql_log(sql_log);
	ck_assert_int_eq(ev_bulk_count(c, &sp, &tg, false, &s, &err), 0);
	ev_db_set_sql_log(NULL);
	fclose(sql_log);
	ck_assert_uint_eq(s->n, 2500);
	ck_assert(!s->truncated);
	for (size_t i = 1; i < s->n; i++)
		ck_assert_uint_lt(s->items[i - 1].row.id, s->items[i].row.id);
	ev_bulk_snapshot_free(&s);
	/* Three pages, each a LIMIT of 1001 on the list's query. */
	char *grep = NULL;
	ck_assert_int_ne(asprintf(&grep, "grep -c 'evtop:list.failed .*LIMIT 1001' %s", log_path),
	                 -1);
	FILE *p = popen(grep, "r");
	int pages = 0;
	ck_assert_int_eq(fscanf(p, "%d", &pages), 1);
	pclose(p);
	free(grep);
	ck_assert_int_eq(pages, 3);

	tg.max_rows = 1200;
	ck_assert_int_eq(ev_bulk_count(c, &sp, &tg, false, &s, &err), 0);
	ck_assert_uint_eq(s->n, 1200);
	ck_assert(s->truncated);
	ev_bulk_snapshot_free(&s);
	/* A list the action does not start from. */
	tg.list = EV_LIST_STUCK;
	ck_assert_int_eq(ev_bulk_count(c, &sp, &tg, false, &s, &err), -1);
	ck_assert_int_eq(err.code, EV_ERR_USAGE);
	ck_assert_ptr_null(s);
	ev_conn_free(&c);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("bulk");
	TCase *tc = tcase_create("bulk");
	tcase_set_timeout(tc, 180);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, racing_the_simulator);
	tcase_add_test(tc, killed_before_commit_then_run_again);
	tcase_add_test(tc, commit_answer_lost_is_reread_and_the_run_goes_on);
	tcase_add_test(tc, connection_killed_between_batches_reconnects);
	tcase_add_test(tc, marked_rows_by_id);
	tcase_add_test(tc, lock_wait_fails_one_row_and_the_batch_is_redone);
	tcase_add_test(tc, stop_flag_stops_between_batches);
	tcase_add_test(tc, hold_pauses_between_batches_and_resumes);
	tcase_add_test(tc, stop_while_held_stops);
	tcase_add_test(tc, count_reads_bounded_pages);
	suite_add_tcase(s, tc);
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? 0 : 1;
}
