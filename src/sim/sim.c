/* evtop-sim — a simulator of the applications that own the two event tables: producers insert
 * events, publishers (outbox) and consumers (message table) run the model document's protocol
 * (select candidates, claim with the guarded UPDATE and check the affected rows, mark success
 * or failure with back-off), some "crash" holding their lock, the outbox's lock-timeout job
 * recovers them, and a downstream outage now and then makes everything fail for a while.
 * The demo's world and the tests' load. The SQL comes from core/simsql, run through db/conn. */
#include <config.h>

#include "core/config.h"
#include "core/model.h"
#include "core/query.h"
#include "core/simsql.h"
#include "core/util.h"
#include "db/conn.h"
#include "sim/options.h"
#include "sim/world.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define HISTORY_BATCH  500
#define JOB_BATCH      100
#define RESTART_MS     500
#define ERROR_PAUSE_MS 1000

/* What the simulator did, per table. */
#define COUNTER_LIST(X)                                                                            \
	X(seeded, "history rows inserted (--history)")                                             \
	X(inserted, "events inserted by the producer")                                             \
	X(claimed, "claims that took the row (affected rows = 1)")                                 \
	X(lost, "claims another instance won (affected rows = 0)")                                 \
	X(succeeded, "marked success")                                                             \
	X(failed, "marked failure (retry_count + 1, next_retry_time)")                             \
	X(crashed, "claimed, then abandoned holding the lock")                                     \
	X(recovered, "lock-timeout job: expired lock -> failed")                                   \
	X(cancelled, "cancelled by the application")                                               \
	X(refused, "a success, failure, recovery or cancel its guard refused")                     \
	X(errors, "database errors")

struct counts {
#define X(name, help) unsigned long long name;
	COUNTER_LIST(X)
#undef X
};

struct world_state {
	const struct sim_opts *o;
	atomic_bool stop;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	long long start_ms; /* monotonic */
};

enum role {
	ROLE_PRODUCER,
	ROLE_PUBLISHER,
	ROLE_CONSUMER,
	ROLE_JOBS,
};

struct actor {
	pthread_t thread;
	bool running;
	struct world_state *ws;
	enum role role;
	enum ev_table_kind table; /* the publisher's or consumer's table */
	char name[32];
	struct sim_rng rng;
	struct ev_conn *conn;
	struct counts c[EV_TABLE_COUNT];
	long long last_report_ms;
	bool doomed; /* --kill names it: it dies at its first claim after --kill-after */
};

/* --- time ----------------------------------------------------------------------------------- */

static long long mono_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static long long wall_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void pause_ms(long long ms)
{
	struct timespec ts = {(time_t)(ms / 1000), (long)(ms % 1000) * 1000000L};
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

static bool stopping(struct world_state *ws)
{
	return atomic_load(&ws->stop);
}

/* Wait up to ms, or until the simulator stops; returns true when it stops. */
static bool wait_or_stop(struct world_state *ws, long long ms)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	ts.tv_sec += (time_t)(ms / 1000);
	ts.tv_nsec += (long)(ms % 1000) * 1000000L;
	if (ts.tv_nsec >= 1000000000L) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000L;
	}
	pthread_mutex_lock(&ws->mu);
	while (!atomic_load(&ws->stop))
		if (pthread_cond_timedwait(&ws->cv, &ws->mu, &ts) == ETIMEDOUT)
			break;
	pthread_mutex_unlock(&ws->mu);
	return stopping(ws);
}

/* The downstream outage: from --outage-every on, for --outage-for in every period. */
static bool outage_at(const struct sim_opts *o, long long elapsed_ms)
{
	if (o->outage_every_ms <= 0 || o->outage_for_ms <= 0)
		return false;
	long long k = elapsed_ms / o->outage_every_ms;
	return k >= 1 && elapsed_ms - k * o->outage_every_ms < o->outage_for_ms;
}

static bool outage_now(struct world_state *ws)
{
	return outage_at(ws->o, mono_ms() - ws->start_ms);
}

/* --- the database --------------------------------------------------------------------------- */

static void report(struct actor *a, const struct ev_error *err)
{
	long long now = mono_ms();
	if (now - a->last_report_ms < 1000)
		return;
	a->last_report_ms = now;
	fprintf(stderr, "evtop-sim: %s: %s\n", a->name, err->msg);
}

static bool ensure_conn(struct actor *a)
{
	struct ev_error err = {0};

	if (ev_conn_is_connected(a->conn))
		return true;
	if (ev_conn_connect(a->conn, &err) == 0)
		return true;
	report(a, &err);
	a->c[a->table].errors++;
	wait_or_stop(a->ws, ERROR_PAUSE_MS);
	return false;
}

/* Run a candidate SELECT (q is freed). NULL after an error, reported and paused for. */
static struct ev_rowset *read_rows(struct actor *a, enum ev_table_kind t, struct ev_query *q)
{
	struct ev_error err = {0};
	struct ev_rowset *rs = NULL;

	if (ev_conn_run(a->conn, q, &rs, &err) < 0) {
		report(a, &err);
		a->c[t].errors++;
		ev_query_free(&q);
		wait_or_stop(a->ws, ERROR_PAUSE_MS);
		return NULL;
	}
	ev_query_free(&q);
	return rs;
}

/* Run an INSERT or a guarded UPDATE (q is freed): its affected rows, or -1 after an error. */
static long long write_row(struct actor *a, enum ev_table_kind t, struct ev_query *q)
{
	struct ev_error err = {0};
	unsigned long long affected = 0;

	if (ev_conn_write(a->conn, q, &affected, &err) < 0) {
		report(a, &err);
		a->c[t].errors++;
		ev_query_free(&q);
		return -1;
	}
	ev_query_free(&q);
	return (long long)affected;
}

static unsigned long long cell_u64(const struct ev_rowset *rs, size_t row, const char *col)
{
	const char *s = ev_rowset_get(rs, row, col);
	return s ? strtoull(s, NULL, 10) : 0;
}

/* --- the applications ----------------------------------------------------------------------- */

static void *producer_main(void *arg)
{
	struct actor *a = arg;
	struct world_state *ws = a->ws;
	const struct sim_opts *o = ws->o;
	struct sim_world w;
	double next = (double)mono_ms();
	double interval = 1000.0 / o->rate;

	ev_db_thread_init();
	/* A worker id per process, so two simulators never make the same id. */
	sim_world_init(&w, o->seed ^ 0x70726f6475636572ULL, (unsigned)getpid() % 1000);
	while (!stopping(ws)) {
		long long now = mono_ms();
		if (next > (double)now) {
			wait_or_stop(ws, (long long)next - now + 1);
			continue;
		}
		if ((double)now - next > 1000)
			next = (double)now; /* fell behind (a slow server): no burst afterwards */
		next += interval * (0.5 + sim_rng_unit(&w.rng));
		if (!ensure_conn(a))
			continue;

		struct sim_step step;
		struct ev_sim_row ob, msg;
		sim_world_next(&w, wall_ms(), &step);
		sim_step_rows(&step, &ob, &msg);
		if (write_row(a, EV_TABLE_OUTBOX,
		              ev_simsql_insert(EV_TABLE_OUTBOX, o->table[EV_TABLE_OUTBOX], &ob)) ==
		    1)
			a->c[EV_TABLE_OUTBOX].inserted++;
		if (write_row(a, EV_TABLE_MESSAGE,
		              ev_simsql_insert(EV_TABLE_MESSAGE, o->table[EV_TABLE_MESSAGE],
		                               &msg)) == 1)
			a->c[EV_TABLE_MESSAGE].inserted++;
		if (step.cancel_outbox_id != 0) {
			/* The order was cancelled: its ORDER_CREATED event is void unless already
			 * published (the guard keeps a published or publishing one). */
			long long n = write_row(
			        a, EV_TABLE_OUTBOX,
			        ev_simsql_cancel(EV_TABLE_OUTBOX, o->table[EV_TABLE_OUTBOX],
			                         step.cancel_outbox_id, SIM_REASON_CLOSED));
			if (n == 1)
				a->c[EV_TABLE_OUTBOX].cancelled++;
		}
	}
	ev_conn_close(a->conn);
	ev_db_thread_end();
	return NULL;
}

/* Publish or consume one claimed event. Returns false when the instance "crashed". */
static bool process(struct actor *a, unsigned long long id, int retry_count)
{
	struct world_state *ws = a->ws;
	const struct sim_opts *o = ws->o;
	enum ev_table_kind t = a->table;
	struct counts *c = &a->c[t];
	double x;
	long long n;

	pause_ms(2 + sim_rng_below(&a->rng, 12)); /* sending to MQ, calling downstream */
	x = sim_rng_unit(&a->rng);
	if (x < o->crash_rate) {
		/* Killed while holding the event: no success, no failure; the lock expires. */
		c->crashed++;
		return false;
	}
	bool outage = outage_now(ws);
	if (outage || x < o->crash_rate + o->fail_rate) {
		n = write_row(a, t,
		              ev_simsql_fail(t, o->table[t], id, a->name,
		                             ev_simsql_backoff_s(retry_count, o->time_scale),
		                             sim_fail_reason(&a->rng, t, outage)));
		if (n == 1)
			c->failed++;
		else if (n == 0)
			c->refused++;
	} else {
		n = write_row(a, t, ev_simsql_succeed(t, o->table[t], id, a->name));
		if (n == 1)
			c->succeeded++;
		else if (n == 0)
			c->refused++;
	}
	return true;
}

#define KILLED (-2)

/* The instance --kill stops for good: it claims every candidate of this scan, processes none,
 * and is gone (its locks stay held until they expire). Returns KILLED once it claimed one. */
static int die_holding(struct actor *a, const struct ev_rowset *rs)
{
	const struct sim_opts *o = a->ws->o;
	enum ev_table_kind t = a->table;
	int held = 0;

	for (size_t i = 0; i < rs->nrows && !stopping(a->ws); i++) {
		long long n = write_row(a, t,
		                        ev_simsql_claim(t, o->table[t], cell_u64(rs, i, "id"),
		                                        a->name, (int)(o->lock_ms / 1000)));
		if (n < 0)
			break;
		if (n == 0) {
			a->c[t].lost++;
			continue;
		}
		a->c[t].claimed++;
		a->c[t].crashed++;
		held++;
	}
	if (held == 0)
		return 0;
	fprintf(stderr, "evtop-sim: %s: killed (--kill) holding %d lock%s\n", a->name, held,
	        held == 1 ? "" : "s");
	return KILLED;
}

/* Claim and process the candidates of one SELECT, starting at a random row so instances
 * reading the same candidates collide less. Returns how many it claimed; -1 after a crash,
 * KILLED when --kill stopped it. */
static int handle_candidates(struct actor *a, const struct ev_rowset *rs)
{
	const struct sim_opts *o = a->ws->o;
	enum ev_table_kind t = a->table;
	int claimed = 0;

	if (rs->nrows == 0)
		return 0;
	if (a->doomed && mono_ms() - a->ws->start_ms >= o->kill_after_ms)
		return die_holding(a, rs);
	size_t start = (size_t)sim_rng_below(&a->rng, (int)rs->nrows);
	for (size_t k = 0; k < rs->nrows && !stopping(a->ws); k++) {
		size_t i = (start + k) % rs->nrows;
		unsigned long long id = cell_u64(rs, i, "id");
		int retry = (int)cell_u64(rs, i, "retry_count");
		long long n = write_row(
		        a, t,
		        ev_simsql_claim(t, o->table[t], id, a->name, (int)(o->lock_ms / 1000)));
		if (n < 0)
			return claimed;
		if (n == 0) {
			a->c[t].lost++;
			continue;
		}
		a->c[t].claimed++;
		claimed++;
		if (!process(a, id, retry)) {
			wait_or_stop(a->ws, RESTART_MS); /* the instance restarts */
			return -1;
		}
	}
	return claimed;
}

static void *worker_main(void *arg)
{
	struct actor *a = arg;
	struct world_state *ws = a->ws;
	const struct sim_opts *o = ws->o;
	enum ev_table_kind t = a->table;
	bool killed = false;

	ev_db_thread_init();
	while (!stopping(ws) && !killed) {
		int handled = 0;
		if (!ensure_conn(a))
			continue;
		/* The document's two scans: first-time events, then failures due for a retry. */
		for (int pass = 0; pass < 2 && !stopping(ws); pass++) {
			struct ev_query *q = pass == 0 ? ev_simsql_pending(t, o->table[t], o->batch)
			                               : ev_simsql_due(t, o->table[t], o->batch);
			struct ev_rowset *rs = read_rows(a, t, q);
			if (rs == NULL)
				break;
			int n = handle_candidates(a, rs);
			ev_rowset_free(&rs);
			if (n == KILLED)
				killed = true;
			if (n < 0) {
				handled = -1;
				break;
			}
			handled += n;
		}
		if (handled == 0 && !killed)
			wait_or_stop(ws, o->poll_ms);
	}
	ev_conn_close(a->conn);
	ev_db_thread_end();
	return NULL;
}

/* The scheduled jobs: the outbox's lock-timeout recovery (恢复锁定超时事件, one candidate at a
 * time) and the message table's stop after max retries (超过最大重试次数后停止重试) for events
 * that are not critical. */
static void run_jobs(struct actor *a)
{
	const struct sim_opts *o = a->ws->o;
	const char *ob = o->table[EV_TABLE_OUTBOX], *msg = o->table[EV_TABLE_MESSAGE];
	struct ev_rowset *rs;

	rs = read_rows(a, EV_TABLE_OUTBOX, ev_simsql_lock_expired(ob, JOB_BATCH));
	for (size_t i = 0; rs != NULL && i < rs->nrows && !stopping(a->ws); i++) {
		long long n = write_row(a, EV_TABLE_OUTBOX,
		                        ev_simsql_recover(ob, cell_u64(rs, i, "id"),
		                                          ev_simsql_backoff_s(0, o->time_scale),
		                                          SIM_REASON_LOCK_TIMEOUT));
		if (n == 1)
			a->c[EV_TABLE_OUTBOX].recovered++;
		else if (n == 0)
			a->c[EV_TABLE_OUTBOX].refused++;
		else
			break;
	}
	ev_rowset_free(&rs);
	if (stopping(a->ws))
		return;

	int max = ev_model_table(EV_TABLE_MESSAGE)->default_max_retry;
	rs = read_rows(a, EV_TABLE_MESSAGE, ev_simsql_high_retry(msg, max, JOB_BATCH));
	for (size_t i = 0; rs != NULL && i < rs->nrows && !stopping(a->ws); i++) {
		const char *type = ev_rowset_get(rs, i, "event_type");
		if (cell_u64(rs, i, "retry_count") < cell_u64(rs, i, "max_retry_count") ||
		    type == NULL || sim_type_critical(type))
			continue; /* payments, refunds, stock: left for a person */
		long long n =
		        write_row(a, EV_TABLE_MESSAGE,
		                  ev_simsql_cancel(EV_TABLE_MESSAGE, msg, cell_u64(rs, i, "id"),
		                                   SIM_REASON_EXHAUSTED));
		if (n == 1)
			a->c[EV_TABLE_MESSAGE].cancelled++;
		else if (n == 0)
			a->c[EV_TABLE_MESSAGE].refused++;
		else
			break;
	}
	ev_rowset_free(&rs);
}

static void *jobs_main(void *arg)
{
	struct actor *a = arg;

	ev_db_thread_init();
	while (!wait_or_stop(a->ws, a->ws->o->recover_ms))
		if (ensure_conn(a))
			run_jobs(a);
	ev_conn_close(a->conn);
	ev_db_thread_end();
	return NULL;
}

/* --- history -------------------------------------------------------------------------------- */

struct history_batch {
	struct sim_step steps[HISTORY_BATCH];
	struct ev_sim_row rows[EV_TABLE_COUNT][HISTORY_BATCH];
	char locks[HISTORY_BATCH][32];
	size_t n;
};

static int history_flush(struct ev_conn *c, const struct sim_opts *o, struct history_batch *b,
                         struct counts *cnt, struct ev_error *err)
{
	for (int t = 0; t < EV_TABLE_COUNT && b->n > 0; t++) {
		unsigned long long affected = 0;
		struct ev_query *q =
		        ev_simsql_history((enum ev_table_kind)t, o->table[t], b->rows[t], b->n);
		int rc = ev_conn_write(c, q, &affected, err);
		ev_query_free(&q);
		if (rc < 0)
			return -1;
		cnt[t].seeded += affected;
	}
	b->n = 0;
	return 0;
}

/* One history event: both rows played through the protocol; with crash_table >= 0, that
 * table's row was claimed right after its creation by `instance`, which then died. */
static int history_add(struct ev_conn *c, const struct sim_opts *o, struct history_batch *b,
                       struct sim_world *w, struct sim_rng *rng, const struct sim_history_cfg *hc,
                       long long now, long long create_s, int crash_table, const char *instance,
                       struct counts *cnt, struct ev_error *err)
{
	size_t k = b->n++;
	sim_world_next(w, now + create_s * 1000, &b->steps[k]);
	sim_step_rows(&b->steps[k], &b->rows[EV_TABLE_OUTBOX][k], &b->rows[EV_TABLE_MESSAGE][k]);
	for (int t = 0; t < EV_TABLE_COUNT; t++) {
		struct ev_sim_row *r = &b->rows[t][k];
		sim_history_play(rng, (enum ev_table_kind)t, hc, create_s, r, b->locks[k]);
		if (t == crash_table)
			sim_history_crashed((enum ev_table_kind)t, create_s + 1, hc->lock_s,
			                    instance, r);
	}
	return b->n == HISTORY_BATCH ? history_flush(c, o, b, cnt, err) : 0;
}

/* Seed --history: --history-events events per table over the period, each played through the
 * protocol to its state now. Past outages every 6 to 12 hours, the last one ended 20 to 35
 * minutes ago (its failures still wait for their retries); and two recent incidents: a flash
 * sale during which publisher-02 died holding its batch (stuck behind an expired lock, until
 * the lock-timeout job runs), and consumer-02 dying 15 minutes ago holding its own (stuck: the
 * message table has no lock and no recovery job). */
static int run_history(struct ev_conn *c, const struct sim_opts *o, struct counts *cnt,
                       struct ev_error *err)
{
	struct sim_world w;
	struct sim_rng rng;
	struct sim_outage outages[64];
	int noutages = 0;
	long long span = o->history_ms / 1000;
	long long now = wall_ms();
	struct history_batch *b = ev_xcalloc(1, sizeof(*b));
	int lock_s = (int)(o->lock_ms / 1000);
	long long incident[EV_TABLE_COUNT] = {
	        [EV_TABLE_OUTBOX] = -(lock_s + 240), [EV_TABLE_MESSAGE] = -900};
	bool incident_done[EV_TABLE_COUNT] = {false, false};
	const char *dead[EV_TABLE_COUNT] = {
	        [EV_TABLE_OUTBOX] = o->instances > 1 ? "publisher-02" : "publisher-01",
	        [EV_TABLE_MESSAGE] = o->instances > 1 ? "consumer-02" : "consumer-01"};
	int rc = 0;

	sim_world_init(&w, o->seed ^ 0x686973746f7279ULL, 1023);
	sim_rng_seed(&rng, o->seed ^ 0x6f7574636f6d65ULL);
	for (long long t = -span + 7200 + sim_rng_below(&rng, 6 * 3600);
	     t < -3 * 3600 && noutages < 63;) {
		long long len = 600 + sim_rng_below(&rng, 1500);
		outages[noutages].start_s = t;
		outages[noutages].end_s = t + len;
		noutages++;
		t += len + 6 * 3600 + sim_rng_below(&rng, 6 * 3600);
	}
	outages[noutages].end_s = -(1200 + sim_rng_below(&rng, 900));
	outages[noutages].start_s = outages[noutages].end_s - (900 + sim_rng_below(&rng, 900));
	noutages++;
	struct sim_history_cfg hc = {
	        .fail_rate = o->fail_rate,
	        .crash_rate = o->crash_rate,
	        .lock_s = lock_s,
	        .recover_every_s = (int)(o->recover_ms / 1000),
	        .instances = o->instances,
	        .outages = outages,
	        .noutages = noutages,
	};
	double gap = (double)span / (double)(o->history_events > 0 ? o->history_events : 1);
	double at = (double)-span;
	for (long long i = 0; i < o->history_events && rc == 0; i++) {
		at += gap * (0.5 + sim_rng_unit(&rng));
		if (at > -1)
			break;
		for (int t = 0; t < EV_TABLE_COUNT && rc == 0; t++) {
			if (incident_done[t] || at < (double)incident[t])
				continue;
			incident_done[t] = true;
			for (int j = 0; j < 8 && rc == 0; j++)
				rc = history_add(c, o, b, &w, &rng, &hc, now, incident[t] - 8 + j,
				                 t, dead[t], cnt, err);
		}
		if (rc == 0)
			rc = history_add(c, o, b, &w, &rng, &hc, now, (long long)at, -1, NULL, cnt,
			                 err);
	}
	/* Incidents after the last event (a short or sparse history) still happen. */
	for (int t = 0; t < EV_TABLE_COUNT && rc == 0; t++)
		for (int j = 0; j < 8 && rc == 0 && !incident_done[t]; j++)
			rc = history_add(c, o, b, &w, &rng, &hc, now, incident[t] - 8 + j, t,
			                 dead[t], cnt, err);
	if (rc == 0 && history_flush(c, o, b, cnt, err) < 0)
		rc = -1;
	free(b);
	return rc;
}

/* --- the summary ---------------------------------------------------------------------------- */

static void print_summary(const struct sim_opts *o, const struct counts *c, double seconds,
                          long long outages)
{
	static const char *const keys[EV_TABLE_COUNT] = {
	        [EV_TABLE_MESSAGE] = "message", [EV_TABLE_OUTBOX] = "outbox"};
	static const enum ev_table_kind order[EV_TABLE_COUNT] = {EV_TABLE_OUTBOX, EV_TABLE_MESSAGE};

	if (o->json) {
		printf("{\"seconds\": %.1f, \"seed\": \"%llu\", \"instances\": %d, \"outages\": "
		       "%lld, \"tables\": {",
		       seconds, o->seed, o->instances, outages);
		for (int k = 0; k < EV_TABLE_COUNT; k++) {
			enum ev_table_kind t = order[k];
			printf("%s\"%s\": {\"table\": \"%s\"", k ? ", " : "", keys[t], o->table[t]);
#define X(name, help) printf(", \"" #name "\": %llu", c[t].name);
			COUNTER_LIST(X)
#undef X
			printf("}");
		}
		printf("}}\n");
		return;
	}
	printf("evtop-sim: %.1f s, seed %llu, %d instance%s, %lld outage%s\n", seconds, o->seed,
	       o->instances, o->instances == 1 ? "" : "s", outages, outages == 1 ? "" : "s");
	printf("%-10s", "");
#define X(name, help) printf(" %10s", #name);
	COUNTER_LIST(X)
#undef X
	printf("\n");
	for (int k = 0; k < EV_TABLE_COUNT; k++) {
		enum ev_table_kind t = order[k];
		printf("%-10s", keys[t]);
#define X(name, help) printf(" %10llu", c[t].name);
		COUNTER_LIST(X)
#undef X
		printf("\n");
	}
}

/* --- main ----------------------------------------------------------------------------------- */

static void on_signal(int sig)
{
	(void)sig;
}

/* Catch the stop signals (delivered to sigtimedwait in the main thread only: they are blocked
 * before any thread starts, so every thread inherits the mask). SIGINT stays ignored when the
 * parent ignored it (a background job of a script). */
static void block_signals(sigset_t *set)
{
	struct sigaction sa, old;

	sigemptyset(set);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, NULL, &old);
	if (old.sa_handler != SIG_IGN) {
		sigaction(SIGINT, &sa, NULL);
		sigaddset(set, SIGINT);
	}
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	sigaddset(set, SIGTERM);
	sigaddset(set, SIGHUP);
	signal(SIGPIPE, SIG_IGN);
	pthread_sigmask(SIG_BLOCK, set, NULL);
}

static int check_tables(struct ev_conn *conn, const struct sim_opts *o, struct ev_error *err)
{
	for (int t = 0; t < EV_TABLE_COUNT; t++) {
		struct ev_table_info ti;
		if (ev_conn_table_info(conn, o->table[t], &ti, err) < 0)
			return -1;
		bool exists = ti.exists;
		ev_table_info_clear(&ti);
		if (!exists)
			return ev_error_set(err, EV_ERR_SCHEMA,
			                    "no table %s in this database (load "
			                    "sql/mariadb/schema.sql or sql/mysql8/schema.sql)",
			                    o->table[t]);
	}
	return 0;
}

/* Start an actor's thread with every signal blocked: only the main thread takes them. */
static void start_actor(struct actor *a, void *(*fn)(void *))
{
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	int rc = pthread_create(&a->thread, NULL, fn, a);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc != 0)
		ev_fatal("cannot start a thread: %s", strerror(rc));
	a->running = true;
}

/* One connection first: the tables checked, then --history seeded into them. Returns 0, or 1
 * (said); *t0 is when the seeding began. */
static int prepare(const struct sim_opts *o, const struct ev_config *cfg, const char *password,
                   struct counts *total, long long *t0)
{
	struct ev_error err = {0};
	struct ev_conn *main_conn = ev_conn_new(&cfg->sources[0], cfg);
	if (password)
		ev_conn_set_password(main_conn, password);
	if (ev_conn_connect(main_conn, &err) < 0 || check_tables(main_conn, o, &err) < 0) {
		fprintf(stderr, "evtop-sim: %s\n", err.msg);
		ev_conn_free(&main_conn);
		return 1;
	}
	*t0 = mono_ms();
	if (o->history_ms > 0) {
		if (run_history(main_conn, o, total, &err) < 0) {
			fprintf(stderr, "evtop-sim: seeding the history: %s\n", err.msg);
			ev_conn_free(&main_conn);
			return 1;
		}
		fprintf(stderr,
		        "evtop-sim: seeded %llu outbox and %llu message events of history\n",
		        total[EV_TABLE_OUTBOX].seeded, total[EV_TABLE_MESSAGE].seeded);
	}
	ev_conn_free(&main_conn);
	return 0;
}

/* The actors, each with its own connection and generator: the jobs, the producer, then a
 * publisher and a consumer per instance. */
static struct actor *actors_new(struct world_state *ws, const struct ev_config *cfg,
                                const char *password, int nactors)
{
	const struct sim_opts *o = ws->o;
	struct actor *actors = ev_xcalloc((size_t)nactors, sizeof(*actors));
	for (int i = 0; i < nactors; i++) {
		struct actor *a = &actors[i];
		a->ws = ws;
		a->conn = ev_conn_new(&cfg->sources[0], cfg);
		if (password)
			ev_conn_set_password(a->conn, password);
		if (i == 0) {
			a->role = ROLE_JOBS;
			a->table = EV_TABLE_OUTBOX;
			snprintf(a->name, sizeof(a->name), "jobs");
		} else if (i == 1) {
			a->role = ROLE_PRODUCER;
			a->table = EV_TABLE_OUTBOX;
			snprintf(a->name, sizeof(a->name), "producer");
		} else {
			int k = (i - 2) / 2 + 1;
			bool pub = (i - 2) % 2 == 0;
			a->role = pub ? ROLE_PUBLISHER : ROLE_CONSUMER;
			a->table = pub ? EV_TABLE_OUTBOX : EV_TABLE_MESSAGE;
			snprintf(a->name, sizeof(a->name), "%s-%02d",
			         pub ? "publisher" : "consumer", k);
			a->doomed = sim_opts_killed(o, a->name);
		}
		sim_rng_seed(&a->rng, o->seed * 1000003ULL + (unsigned long long)i);
	}
	return actors;
}

/* The main thread while the actors run: a stop signal or --duration ends it; it says when an
 * outage begins and ends. Returns the number of outages. */
static long long watch(struct world_state *ws, const sigset_t *stop_set)
{
	const struct sim_opts *o = ws->o;
	bool in_outage = false;
	long long outages = 0;
	for (;;) {
		struct timespec tick = {0, 100 * 1000000L};
		int sig = sigtimedwait(stop_set, NULL, &tick);
		if (sig > 0) {
			fprintf(stderr, "evtop-sim: %s: stopping\n", strsignal(sig));
			break;
		}
		long long elapsed = mono_ms() - ws->start_ms;
		if (o->duration_ms > 0 && elapsed >= o->duration_ms)
			break;
		bool now_out = outage_at(o, elapsed);
		if (now_out != in_outage) {
			in_outage = now_out;
			if (now_out) {
				outages++;
				fprintf(stderr,
				        "evtop-sim: outage: downstream unavailable for %lld s, "
				        "every "
				        "attempt fails\n",
				        o->outage_for_ms / 1000);
			} else {
				fprintf(stderr, "evtop-sim: outage over: the backlog drains\n");
			}
		}
	}
	return outages;
}

/* Stop the actors, wait for them, and add up what they did into total. */
static void actors_end(struct world_state *ws, struct actor *actors, int nactors,
                       struct counts *total)
{
	pthread_mutex_lock(&ws->mu);
	atomic_store(&ws->stop, true);
	pthread_cond_broadcast(&ws->cv);
	pthread_mutex_unlock(&ws->mu);
	for (int i = 0; i < nactors; i++) {
		struct actor *a = &actors[i];
		if (a->running)
			pthread_join(a->thread, NULL);
		for (int t = 0; t < EV_TABLE_COUNT; t++) {
#define X(name, help) total[t].name += a->c[t].name;
			COUNTER_LIST(X)
#undef X
		}
		ev_conn_free(&a->conn);
	}
	free(actors);
}

/* The world: the actors started, watched until the end, stopped, and the summary printed. */
static void run_world(const struct sim_opts *o, const struct ev_config *cfg, const char *password,
                      struct counts *total)
{
	struct world_state ws;
	memset(&ws, 0, sizeof(ws));
	ws.o = o;
	atomic_init(&ws.stop, false);
	pthread_mutex_init(&ws.mu, NULL);
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&ws.cv, &ca);
	pthread_condattr_destroy(&ca);

	sigset_t stop_set;
	block_signals(&stop_set);

	int nactors = 2 + 2 * o->instances;
	struct actor *actors = actors_new(&ws, cfg, password, nactors);
	fprintf(stderr,
	        "evtop-sim: seed %llu; %d publishers, %d consumers; %.4g events/s per table; "
	        "fail %.3g, crash %.3g\n",
	        o->seed, o->instances, o->instances, o->rate, o->fail_rate, o->crash_rate);
	ws.start_ms = mono_ms();
	for (int i = 0; i < nactors; i++) {
		struct actor *a = &actors[i];
		if (a->role == ROLE_PRODUCER && o->rate <= 0)
			continue;
		start_actor(a, a->role == ROLE_JOBS       ? jobs_main
		               : a->role == ROLE_PRODUCER ? producer_main
		                                          : worker_main);
	}
	long long outages = watch(&ws, &stop_set);
	double seconds = (double)(mono_ms() - ws.start_ms) / 1000.0;
	actors_end(&ws, actors, nactors, total);
	print_summary(o, total, seconds, outages);
	pthread_cond_destroy(&ws.cv);
	pthread_mutex_destroy(&ws.mu);
}

int main(int argc, char **argv)
{
	struct sim_opts o;
	struct ev_config cfg;
	struct ev_error err = {0};
	char *password = NULL;
	struct counts total[EV_TABLE_COUNT];
	long long t0 = 0;
	int rc;

	memset(total, 0, sizeof(total));
	ev_config_init(&cfg);
	rc = sim_parse_options(argc, argv, &o, &cfg, &password, &err);
	if (rc != 0) {
		if (rc < 0)
			fprintf(stderr, "evtop-sim: %s (see evtop-sim --help)\n", err.msg);
		free(password);
		ev_config_free(&cfg);
		return rc < 0 ? 2 : 0;
	}
	if (ev_db_init() < 0) {
		fputs("evtop-sim: cannot initialise the MySQL client library\n", stderr);
		rc = 1;
	} else {
		rc = prepare(&o, &cfg, password, total, &t0);
		if (rc == 0 && o.history_only)
			print_summary(&o, total, (double)(mono_ms() - t0) / 1000.0, 0);
		else if (rc == 0)
			run_world(&o, &cfg, password, total);
		ev_db_end();
	}
	if (password) {
		memset(password, 0, strlen(password));
		free(password);
	}
	ev_config_free(&cfg);
	return rc;
}
