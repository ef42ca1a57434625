/* The backlog mirror (core/mirror.h, db/mirror.h) against the real server: on the seed with
 * the clock pinned, every backlog figure of every group of every dimension equals the model
 * document's counting SQL and the window figures equal ev_dash_fetch's; under evtop-sim's
 * changes (and an operator's, and rows moved away and back between two refreshes) every
 * refresh is exact and no full check finds drift; what no index carries (a soft delete,
 * max_retry_count alone) is exact again after the rolling re-verification or a full check;
 * in a running world the full checks find nothing; every read of a refresh is index-only,
 * never a scan; the cap falls back to the capped counts; hostile values are counted right.
 * The rates by completion time (DONE/m) equal what the rows' own times say over their span,
 * before, in and after an outage (where the old window rate does not fall), the groups' add
 * up to the totals', rows deleted outright finish nothing, two refreshes in one second keep
 * the span; the failed range, read every fifth refresh once large, is exact on the others
 * from the key reads, and what leaves it directly shows at its next read.
 *
 * The cases share one database (each loads what it needs first). */
#include <config.h>

#include "core/config.h"
#include "core/dashboard.h"
#include "core/mirror.h"
#include "db/conn.h"
#include "db/fetch.h"
#include "db/mirror.h"
#include "testdb.h"

#include <check.h>
#include <jansson.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

#define NOW     "2026-06-01 12:00:00"
#define WINDOW  (30 * 86400)
#define STUCK_S 600
/* The simulated world: a short stuck threshold so that the message table's crashed rows turn
 * stuck while the test runs; a short window keeps the window counts cheap. */
#define LIVE_STUCK_S 3
#define LIVE_WINDOW  600
/* Refreshes of the exactness-under-change run. */
#define LIVE_REFRESHES 200

static const enum ev_dash_figure backlog_figs[] = {
        EV_DASH_PENDING,
        EV_DASH_PROCESSING,
        EV_DASH_STUCK,
        EV_DASH_FAILED,
        EV_DASH_FAILED_DUE,
        EV_DASH_FAILED_WAITING,
        EV_DASH_FAILED_NORETRY,
        EV_DASH_EXHAUSTED,
        EV_DASH_OLDEST_PENDING_AGE,
        EV_DASH_LONGEST_RETRY_WAIT,
};
#define NBF ((int)(sizeof(backlog_figs) / sizeof(backlog_figs[0])))
static const enum ev_dash_figure window_figs[] = {EV_DASH_CREATED, EV_DASH_SUCCESS,
                                                  EV_DASH_CANCELLED};
#define NWF ((int)(sizeof(window_figs) / sizeof(window_figs[0])))

static const char *const all_dims[] = {NULL,       "event_type", "source",
                                       "biz_type", "topic",      "channel"};
#define NDIMS ((int)(sizeof(all_dims) / sizeof(all_dims[0])))

static MYSQL *db;
static struct ev_config cfg;
static struct ev_conn *conn;
static struct ev_table_info info[EV_TABLE_COUNT];

static void setup(void)
{
	ev_db_init();
	db = tdb_connect();
	ev_config_init(&cfg);
	conn = NULL;
	ev_mirror_set_digest_min(0);
}

static void teardown(void)
{
	for (int t = 0; t < EV_TABLE_COUNT; t++)
		ev_table_info_clear(&info[t]);
	ev_conn_free(&conn);
	ev_config_free(&cfg);
	mysql_close(db);
	ev_mirror_set_cap(0);
}

static void read_info(void)
{
	struct ev_error err = {0};
	for (int t = 0; t < EV_TABLE_COUNT; t++) {
		ev_table_info_clear(&info[t]);
		ck_assert_msg(ev_conn_table_info(conn, ev_model_table(t)->default_name, &info[t],
		                                 &err) == 0,
		              "%s", err.msg);
	}
}

/* evtop's connection: its clock pinned to NOW (and this test's own session's too), or the
 * real clock (the harness's option file as it is). */
static void open_evtop(bool pinned)
{
	struct ev_error err = {0};
	free(cfg.sources[0].defaults_file);
	if (pinned) {
		cfg.sources[0].defaults_file = tdb_pinned_defaults(NOW);
		tdb_exec(db, "SET timestamp = UNIX_TIMESTAMP('" NOW "')");
	} else {
		const char *f = getenv("EVTOP_TEST_DEFAULTS_FILE");
		ck_assert_ptr_nonnull(f);
		cfg.sources[0].defaults_file = strdup(f);
		tdb_exec(db, "SET timestamp = DEFAULT");
	}
	conn = ev_conn_new(&cfg.sources[0], &cfg);
	ck_assert_msg(ev_conn_connect(conn, &err) == 0, "%s", err.msg);
	read_info();
}

static void truncate_tables(void)
{
	tdb_exec(db, "TRUNCATE biz_outbox_event");
	tdb_exec(db, "TRUNCATE biz_message_event");
}

static void load_seed(void)
{
	truncate_tables();
	char *seed = tdb_srcpath("tests/data/seed.sql");
	tdb_source(db, seed);
	free(seed);
}

static struct ev_dash_req mkreq(enum ev_table_kind t, const char *dim, int window_s, int stuck_s)
{
	struct ev_dash_req req = {
	        .info = &info[t],
	        .table = t,
	        .table_name = NULL,
	        .dimension = dim,
	        .window_s = window_s,
	        .stuck_threshold_s = stuck_s,
	};
	return req;
}

static struct ev_dash *mfetch(struct ev_mirror *m, const struct ev_dash_req *req,
                              const struct ev_mirror_opts *o)
{
	struct ev_dash *d = NULL;
	struct ev_error err = {0};
	ck_assert_msg(ev_mirror_fetch(conn, m, req, o, &d, &err) == 0, "%s by %s: mirror fetch: %s",
	              ev_model_table(req->table)->key, req->dimension ? req->dimension : "-",
	              err.msg);
	ck_assert_ptr_nonnull(d);
	ck_assert_uint_eq(d->skipped, 0);
	return d;
}

static struct ev_dash *pfetch(const struct ev_dash_req *req)
{
	struct ev_dash *d = NULL;
	struct ev_error err = {0};
	ck_assert_msg(ev_dash_fetch(conn, req, &d, &err) == 0, "%s", err.msg);
	return d;
}

static const char *gname(const char *g)
{
	return g ? g : "NULL";
}

/* The row of group (NULL: the SQL NULL group, not the totals as ev_dash_find has it). */
static const struct ev_dash_row *find_row(const struct ev_dash *d, const char *group)
{
	if (group != NULL)
		return ev_dash_find(d, group);
	for (size_t r = 0; r < d->nrows; r++)
		if (d->rows[r].group == NULL)
			return &d->rows[r];
	return NULL;
}

/* Mismatches found, and the first few described. */
struct mm {
	int n;
	char first[4096];
};

static void note(struct mm *mm, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void note(struct mm *mm, const char *fmt, ...)
{
	size_t used = strlen(mm->first);
	if (mm->n++ < 8 && used + 8 < sizeof(mm->first)) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(mm->first + used, sizeof(mm->first) - used, fmt, ap);
		va_end(ap);
		used = strlen(mm->first);
		if (used + 2 < sizeof(mm->first))
			strcat(mm->first, "\n");
	}
}

/* --- the model document's counting SQL, one figure of one group (the seed's cases) --------- */

static void reference_sql(enum ev_dash_figure f, const struct ev_table_def *t, int stuck_s,
                          char *buf, size_t size)
{
	const char *st = t->status_col, *tn = t->default_name;
	char stuck[128];
	if (t->has_lock)
		snprintf(stuck, sizeof(stuck), "lock_until <= NOW()");
	else
		snprintf(stuck, sizeof(stuck), "last_handle_time <= NOW() - INTERVAL %d SECOND",
		         stuck_s);
	switch (f) {
	case EV_DASH_PENDING:
		snprintf(buf, size, "COUNT(*) FROM %s WHERE deleted = 0 AND %s = 0", tn, st);
		break;
	case EV_DASH_PROCESSING:
		snprintf(buf, size, "COUNT(*) FROM %s WHERE deleted = 0 AND %s = 1", tn, st);
		break;
	case EV_DASH_STUCK:
		snprintf(buf, size, "COUNT(*) FROM %s WHERE deleted = 0 AND %s = 1 AND %s", tn, st,
		         stuck);
		break;
	case EV_DASH_FAILED:
		snprintf(buf, size, "COUNT(*) FROM %s WHERE deleted = 0 AND %s = 3", tn, st);
		break;
	case EV_DASH_FAILED_DUE:
		snprintf(buf, size,
		         "COUNT(*) FROM %s WHERE deleted = 0 AND %s = 3 AND retry_count < "
		         "max_retry_count AND next_retry_time <= NOW()",
		         tn, st);
		break;
	case EV_DASH_FAILED_WAITING:
		snprintf(buf, size,
		         "COUNT(*) FROM %s WHERE deleted = 0 AND %s = 3 AND retry_count < "
		         "max_retry_count AND next_retry_time > NOW()",
		         tn, st);
		break;
	case EV_DASH_FAILED_NORETRY:
		snprintf(buf, size,
		         "COUNT(*) FROM %s WHERE deleted = 0 AND %s = 3 AND retry_count < "
		         "max_retry_count AND next_retry_time IS NULL",
		         tn, st);
		break;
	case EV_DASH_EXHAUSTED:
		snprintf(buf, size,
		         "COUNT(*) FROM %s WHERE deleted = 0 AND %s = 3 AND retry_count >= "
		         "max_retry_count",
		         tn, st);
		break;
	case EV_DASH_OLDEST_PENDING_AGE:
		snprintf(buf, size,
		         "IFNULL(TIMESTAMPDIFF(SECOND, MIN(create_time), NOW()), -1) FROM %s WHERE "
		         "deleted = 0 AND %s = 0",
		         tn, st);
		break;
	case EV_DASH_LONGEST_RETRY_WAIT:
		snprintf(buf, size,
		         "IFNULL(TIMESTAMPDIFF(SECOND, MIN(update_time), NOW()), -1) FROM %s WHERE "
		         "deleted = 0 AND %s = 0 AND version > 0",
		         tn, st);
		break;
	default:
		ck_abort_msg("not a backlog figure: %d", (int)f);
	}
}

static long long reference(enum ev_dash_figure f, const struct ev_table_def *t, int stuck_s,
                           const char *col, const char *group)
{
	char what[512];
	reference_sql(f, t, stuck_s, what, sizeof(what));
	if (col == NULL)
		return tdb_int(db, "SELECT %s", what);
	if (group == NULL)
		return tdb_int(db, "SELECT %s AND %s IS NULL", what, col);
	char *esc = malloc(strlen(group) * 2 + 1);
	mysql_real_escape_string(db, esc, group, strlen(group));
	long long v = tdb_int(db, "SELECT %s AND %s = '%s'", what, col, esc);
	free(esc);
	return v;
}

/* d (the mirror's) against the reference SQL for the backlog figures and against plain
 * (ev_dash_fetch's) for the window figures: the totals, every group, and the set of groups. */
static void seed_compare(enum ev_table_kind t, const char *dim, const struct ev_dash *d,
                         const struct ev_dash *plain, struct mm *mm)
{
	const struct ev_table_def *def = ev_model_table(t);
	const char *col = dim ? ev_model_dimension(def, dim)->column : NULL;
	const char *dn = dim ? dim : "-";

	for (int i = 0; i < NBF; i++) {
		enum ev_dash_figure f = backlog_figs[i];
		long long want = reference(f, def, STUCK_S, NULL, NULL);
		const struct ev_figure *x = &d->total.f[f];
		if (x->value != want || x->capped || x->unknown)
			note(mm, "%s by %s, totals: %s = %lld%s%s, want %lld (reference SQL)",
			     def->key, dn, ev_dash_figure_name(f), x->value,
			     x->capped ? " (capped)" : "", x->unknown ? " (unknown)" : "", want);
	}
	for (int i = 0; i < NWF; i++) {
		enum ev_dash_figure f = window_figs[i];
		if (d->total.f[f].value != plain->total.f[f].value)
			note(mm, "%s by %s, totals: %s = %lld, want %lld (ev_dash_fetch)", def->key,
			     dn, ev_dash_figure_name(f), d->total.f[f].value,
			     plain->total.f[f].value);
	}
	for (size_t r = 0; r < d->nrows; r++) {
		const struct ev_dash_row *row = &d->rows[r];
		for (int i = 0; i < NBF; i++) {
			enum ev_dash_figure f = backlog_figs[i];
			long long want = reference(f, def, STUCK_S, col, row->group);
			if (row->f[f].value != want)
				note(mm, "%s by %s, group %s: %s = %lld, want %lld (reference SQL)",
				     def->key, dn, gname(row->group), ev_dash_figure_name(f),
				     row->f[f].value, want);
		}
		const struct ev_dash_row *p = find_row(plain, row->group);
		for (int i = 0; i < NWF; i++) {
			enum ev_dash_figure f = window_figs[i];
			long long want = p ? p->f[f].value : 0;
			if (row->f[f].value != want)
				note(mm, "%s by %s, group %s: %s = %lld, want %lld (ev_dash_fetch)",
				     def->key, dn, gname(row->group), ev_dash_figure_name(f),
				     row->f[f].value, want);
		}
	}
	if (col != NULL) {
		/* Every group of ev_dash_fetch's window counts is there (its backlog queries may
		 * spell a group otherwise), and no group twice (GROUP BY's collation: the groups
		 * it merges are one row). */
		for (size_t r = 0; r < plain->nrows; r++)
			if (plain->rows[r].f[EV_DASH_CREATED].value > 0 &&
			    find_row(d, plain->rows[r].group) == NULL)
				note(mm, "%s by %s: group %s of ev_dash_fetch is missing", def->key,
				     dn, gname(plain->rows[r].group));
		long long want = tdb_int(
		        db,
		        "SELECT COUNT(DISTINCT IFNULL(%s, '\\0NULL')) FROM %s WHERE deleted = 0 "
		        "AND (%s IN (0, 1, 3) OR create_time >= NOW() - INTERVAL %d SECOND)",
		        col, def->default_name, def->status_col, WINDOW);
		if ((long long)d->nrows != want) {
			char list[512] = "";
			for (size_t r = 0; r < d->nrows && strlen(list) + 70 < sizeof(list); r++)
				snprintf(list + strlen(list), sizeof(list) - strlen(list),
				         "%s'%.60s'", r ? ", " : "", gname(d->rows[r].group));
			note(mm, "%s by %s: %zu groups (%s), reference %lld", def->key, dn,
			     d->nrows, list, want);
		}
	}
	const struct ev_figure *x = d->total.f;
	if (x[EV_DASH_FAILED_DUE].value + x[EV_DASH_FAILED_WAITING].value +
	            x[EV_DASH_FAILED_NORETRY].value + x[EV_DASH_EXHAUSTED].value !=
	    x[EV_DASH_FAILED].value)
		note(mm, "%s by %s: the failed buckets do not add up to failed", def->key, dn);
}

/* The mirror's dashboard of t by dim equals the references. */
static void assert_seed_exact(struct ev_mirror *m, enum ev_table_kind t, const char *dim,
                              const struct ev_mirror_opts *o, const char *when)
{
	struct ev_dash_req req = mkreq(t, dim, WINDOW, STUCK_S);
	struct ev_dash *d = mfetch(m, &req, o);
	struct ev_dash *plain = pfetch(&req);
	struct mm mm = {0};
	ck_assert_msg(d->mirror.on, "%s: %s by %s: the mirror is off (%s)", when,
	              ev_model_table(t)->key, dim ? dim : "-", d->notes ? d->notes : "no note");
	seed_compare(t, dim, d, plain, &mm);
	ck_assert_msg(mm.n == 0, "%s: %d mismatches:\n%s", when, mm.n, mm.first);
	ev_dash_free(&plain);
	ev_dash_free(&d);
}

/* --- case 1: the seed ----------------------------------------------------------------------- */

START_TEST(seed_every_figure_equals_the_reference)
{
	open_evtop(true);
	load_seed();
	const struct ev_mirror_opts o = {.interval_s = 1, .reverify_s = 0, .check_s = 0};
	for (int t = 0; t < EV_TABLE_COUNT; t++) {
		const struct ev_table_def *def = ev_model_table(t);
		struct ev_mirror *m = ev_mirror_new((enum ev_table_kind)t);
		long long indexed = tdb_int(db, "SELECT COUNT(*) FROM %s WHERE %s IN (0, 1, 3)",
		                            def->default_name, def->status_col);
		bool first = true;
		for (int k = 0; k < NDIMS; k++) {
			const char *dim = all_dims[k];
			if (dim != NULL && ev_model_dimension(def, dim) == NULL)
				continue;
			/* The rolling share this refresh will read (the rows are what the last one
			 * left). */
			size_t share = ev_mirror_share(m, o.interval_s, EV_MIRROR_REVERIFY_S);
			struct ev_dash_req req = mkreq((enum ev_table_kind)t, dim, WINDOW, STUCK_S);
			struct ev_dash *d = mfetch(m, &req, &o);
			struct ev_dash *plain = pfetch(&req);
			ck_assert_msg(d->mirror.on, "%s by %s: the mirror is off: %s", def->key,
			              dim ? dim : "-", d->notes ? d->notes : "no note");
			ck_assert_msg(d->notes == NULL, "%s by %s: unexpected notes: %s", def->key,
			              dim ? dim : "-", d->notes);
			ck_assert_msg(d->mirror.drift == 0, "%s: drift %lld on the seed", def->key,
			              d->mirror.drift);
			ck_assert_int_eq(d->mirror.range_rows, indexed);
			ck_assert_int_eq(d->mirror.rows, indexed);
			struct mm mm = {0};
			seed_compare((enum ev_table_kind)t, dim, d, plain, &mm);
			ck_assert_msg(mm.n == 0, "%d mismatches:\n%s", mm.n, mm.first);
			if (first) {
				ck_assert_int_eq(d->mirror.entered, indexed);
				ck_assert_int_eq(d->mirror.pk_reads, indexed);
				/* The comparison proves nothing on empty figures. */
				for (int i = 0; i < NBF; i++)
					ck_assert_msg(d->total.f[backlog_figs[i]].value > 0,
					              "%s: %s is %lld in the seed", def->key,
					              ev_dash_figure_name(backlog_figs[i]),
					              d->total.f[backlog_figs[i]].value);
			} else {
				/* Nothing changed: nothing read by key beyond the rolling share. */
				ck_assert_msg(
				        d->mirror.entered == 0 && d->mirror.changed == 0 &&
				                d->mirror.left == 0,
				        "%s by %s, nothing changed: entered %lld, changed %lld, "
				        "left %lld",
				        def->key, dim ? dim : "-", d->mirror.entered,
				        d->mirror.changed, d->mirror.left);
				ck_assert_msg(
				        d->mirror.pk_reads == (long long)share,
				        "%s by %s, nothing changed: %lld rows read by key, the "
				        "rolling share is %zu",
				        def->key, dim ? dim : "-", d->mirror.pk_reads, share);
			}
			first = false;
			ev_dash_free(&plain);
			ev_dash_free(&d);
		}
		ev_mirror_free(&m);
	}
}
END_TEST

/* --- the simulator -------------------------------------------------------------------------- */

/* Run evtop-sim with args (split on spaces) and the harness's option file; in the background
 * (returns its pid) or to the end (returns 0 after checking it exited 0). */
static pid_t sim_run(const char *args, bool background, const char *out)
{
	char *sim = tdb_sim_path();
	char defaults[1024];
	snprintf(defaults, sizeof(defaults), "--defaults-file=%s",
	         getenv("EVTOP_TEST_DEFAULTS_FILE"));
	char *copy = strdup(args);
	char fmt_opt[] = "--format", fmt_json[] = "json";
	char *argv[64];
	int argc = 0;
	argv[argc++] = sim;
	argv[argc++] = defaults;
	argv[argc++] = fmt_opt;
	argv[argc++] = fmt_json;
	for (char *tok = strtok(copy, " "); tok != NULL && argc < 62; tok = strtok(NULL, " "))
		argv[argc++] = tok;
	argv[argc] = NULL;
	fflush(NULL);
	pid_t pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
#ifdef __linux__
		/* A failed assertion ends this test's process: the simulator goes with it. */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
#endif
		char err[1100];
		snprintf(err, sizeof(err), "%s.err", out);
		if (freopen(out, "w", stdout) == NULL || freopen(err, "w", stderr) == NULL)
			_exit(99);
		execv(sim, argv);
		_exit(98);
	}
	free(copy);
	free(sim);
	if (background)
		return pid;
	int st;
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0,
	              "evtop-sim %s: exit status %d (see %s)", args, st, out);
	return 0;
}

static char *scratch(const char *name)
{
	const char *dir = getenv("EVTOP_TEST_DIR");
	ck_assert_ptr_nonnull(dir);
	char *p = malloc(strlen(dir) + strlen(name) + 2);
	sprintf(p, "%s/%s", dir, name);
	return p;
}

/* Stop the simulator; its summary (JSON). */
static json_t *sim_stop(pid_t pid)
{
	kill(pid, SIGCONT);
	kill(pid, SIGTERM);
	int st;
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "evtop-sim ended with status %d", st);
	char *out = scratch("sim-live.json");
	json_error_t jerr;
	json_t *j = json_load_file(out, 0, &jerr);
	ck_assert_msg(j != NULL, "%s: not JSON: %s", out, jerr.text);
	free(out);
	return j;
}

static long long sim_count(json_t *summary, const char *table, const char *key)
{
	json_t *v =
	        json_object_get(json_object_get(json_object_get(summary, "tables"), table), key);
	ck_assert_msg(json_is_integer(v), "no %s.%s in the simulator's summary", table, key);
	return (long long)json_integer_value(v);
}

/* The simulator stopped, and none of its statements still running on the server (one sent
 * just before the stop would otherwise land between the refresh and the reference). */
static void sim_pause(pid_t pid)
{
	ck_assert_int_eq(kill(pid, SIGSTOP), 0);
	/* A statement written just before the stop: let the server read it first. */
	usleep(3000);
	for (int i = 0; i < 2000; i++) {
		if (tdb_int(db, "SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE ID <> "
		                "CONNECTION_ID() AND DB = DATABASE() AND COMMAND IN ('Query', "
		                "'Execute')") == 0)
			return;
		usleep(1000);
	}
	ck_abort_msg("the simulator's statements still run 2 s after it was stopped");
}

static void sim_resume(pid_t pid)
{
	ck_assert_int_eq(kill(pid, SIGCONT), 0);
}

/* A fresh world: the history of a few thousand events per table in every state, then (in the
 * background) the applications at a high rate with crashes, failures, outages, recoveries
 * and cancels. */
static pid_t sim_world(const char *seed)
{
	truncate_tables();
	char args[512];
	snprintf(args, sizeof(args),
	         "--seed %s --history 20m --history-events 3000 --history-only --time-scale 60",
	         seed);
	char *out = scratch("sim-history.json");
	sim_run(args, false, out);
	free(out);
	snprintf(args, sizeof(args),
	         "--seed %s --rate 120 --instances 3 --fail-rate 0.25 --crash-rate 0.05 "
	         "--outage-every 7s --outage-for 1s --time-scale 60 --lock-time 2s "
	         "--recover-every 1s --poll 50ms --duration 240s",
	         seed);
	out = scratch("sim-live.json");
	pid_t pid = sim_run(args, true, out);
	free(out);
	return pid;
}

/* --- the grouped reference (one query per table: every figure of every event_type, and the
 * totals as the ROLLUP row; event_type is NOT NULL, so its NULL is the rollup's) ----------- */

struct gref {
	char *group; /* NULL: the totals */
	long long f[NBF];
};

struct gset {
	size_t n;
	struct gref *v;
	struct gref total;
	long long unix_now;
};

static void gset_free(struct gset *g)
{
	for (size_t i = 0; i < g->n; i++)
		free(g->v[i].group);
	free(g->v);
	memset(g, 0, sizeof(*g));
}

static void gset_load(enum ev_table_kind t, int stuck_s, struct gset *g)
{
	const struct ev_table_def *def = ev_model_table(t);
	const char *st = def->status_col;
	char stuck[128], sql[4096];
	if (def->has_lock)
		snprintf(stuck, sizeof(stuck), "lock_until <= NOW()");
	else
		snprintf(stuck, sizeof(stuck), "last_handle_time <= NOW() - INTERVAL %d SECOND",
		         stuck_s);
	/* In backlog_figs' order. */
	snprintf(sql, sizeof(sql),
	         "SELECT event_type, COUNT(CASE WHEN %s = 0 THEN 1 END), "
	         "COUNT(CASE WHEN %s = 1 THEN 1 END), COUNT(CASE WHEN %s = 1 AND %s THEN 1 END), "
	         "COUNT(CASE WHEN %s = 3 THEN 1 END), "
	         "COUNT(CASE WHEN %s = 3 AND retry_count < max_retry_count AND next_retry_time "
	         "<= NOW() THEN 1 END), "
	         "COUNT(CASE WHEN %s = 3 AND retry_count < max_retry_count AND next_retry_time "
	         "> NOW() THEN 1 END), "
	         "COUNT(CASE WHEN %s = 3 AND retry_count < max_retry_count AND next_retry_time "
	         "IS NULL THEN 1 END), "
	         "COUNT(CASE WHEN %s = 3 AND retry_count >= max_retry_count THEN 1 END), "
	         "IFNULL(TIMESTAMPDIFF(SECOND, MIN(CASE WHEN %s = 0 THEN create_time END), "
	         "NOW()), -1), "
	         "IFNULL(TIMESTAMPDIFF(SECOND, MIN(CASE WHEN %s = 0 AND version > 0 THEN "
	         "update_time END), NOW()), -1), UNIX_TIMESTAMP() "
	         "FROM %s WHERE deleted = 0 AND %s IN (0, 1, 3) GROUP BY event_type WITH ROLLUP",
	         st, st, st, stuck, st, st, st, st, st, st, st, def->default_name, st);
	memset(g, 0, sizeof(*g));
	g->total.f[NBF - 2] = g->total.f[NBF - 1] = -1;
	g->unix_now = -1;
	if (mysql_query(db, sql) != 0)
		ck_abort_msg("%s\n  %s", mysql_error(db), sql);
	MYSQL_RES *r = mysql_store_result(db);
	ck_assert_ptr_nonnull(r);
	g->v = calloc(mysql_num_rows(r) + 1, sizeof(*g->v));
	MYSQL_ROW row;
	while ((row = mysql_fetch_row(r)) != NULL) {
		struct gref *x = row[0] ? &g->v[g->n++] : &g->total;
		x->group = row[0] ? strdup(row[0]) : NULL;
		for (int i = 0; i < NBF; i++)
			x->f[i] = strtoll(row[1 + i], NULL, 10);
		g->unix_now = strtoll(row[1 + NBF], NULL, 10);
	}
	mysql_free_result(r);
	if (g->unix_now < 0)
		g->unix_now = tdb_int(db, "SELECT UNIX_TIMESTAMP()");
}

static void live_compare(enum ev_table_kind t, const struct ev_dash *d, const struct gset *g,
                         int refresh, struct mm *mm)
{
	const char *tk = ev_model_table(t)->key;
	for (int i = 0; i < NBF; i++)
		if (d->total.f[backlog_figs[i]].value != g->total.f[i])
			note(mm, "refresh %d: %s by event_type, totals: %s = %lld, want %lld",
			     refresh, tk, ev_dash_figure_name(backlog_figs[i]),
			     d->total.f[backlog_figs[i]].value, g->total.f[i]);
	for (size_t k = 0; k < g->n; k++) {
		const struct ev_dash_row *row = ev_dash_find(d, g->v[k].group);
		if (row == NULL) {
			note(mm, "refresh %d: %s by event_type: group %s missing", refresh, tk,
			     g->v[k].group);
			continue;
		}
		for (int i = 0; i < NBF; i++)
			if (row->f[backlog_figs[i]].value != g->v[k].f[i])
				note(mm,
				     "refresh %d: %s by event_type, group %s: %s = %lld, want %lld",
				     refresh, tk, g->v[k].group,
				     ev_dash_figure_name(backlog_figs[i]),
				     row->f[backlog_figs[i]].value, g->v[k].f[i]);
	}
	/* No backlog in a group the reference does not have. */
	for (size_t r = 0; r < d->nrows; r++) {
		const struct ev_dash_row *row = &d->rows[r];
		if (row->f[EV_DASH_PENDING].value + row->f[EV_DASH_PROCESSING].value +
		            row->f[EV_DASH_FAILED].value ==
		    0)
			continue;
		bool found = false;
		for (size_t k = 0; k < g->n && !found; k++)
			found = row->group && strcmp(row->group, g->v[k].group) == 0;
		if (!found)
			note(mm,
			     "refresh %d: %s by event_type: group %s has a backlog, the "
			     "reference none",
			     refresh, tk, gname(row->group));
	}
}

struct live_stats {
	long long refreshes, entered, changed, left, pk_reads, retries;
	long long digests, rereads; /* ranges verified by digest; of them read again whole */
};

/* Two readings of the references are the same: the world stood still between them. */
static bool gset_same(const struct gset *a, const struct gset *b)
{
	if (a->unix_now != b->unix_now || a->n != b->n ||
	    memcmp(a->total.f, b->total.f, sizeof(a->total.f)) != 0)
		return false;
	for (size_t k = 0; k < a->n; k++)
		if (strcmp(a->v[k].group, b->v[k].group) != 0 ||
		    memcmp(a->v[k].f, b->v[k].f, sizeof(a->v[k].f)) != 0)
			return false;
	return true;
}

/* One refresh of both mirrors compared with the grouped references, read before and after
 * the refreshes: when both readings are of one server second (so the refreshes' NOW() is that
 * second too) and equal (nothing the simulator had sent was still landing), the refreshes
 * must equal them; otherwise the whole comparison runs again (never accepting a difference).
 * Every refresh: drift 0. */
static void refresh_and_compare(struct ev_mirror **m, const struct ev_mirror_opts *o, int refresh,
                                struct live_stats *ls)
{
	for (int attempt = 0; attempt < 8; attempt++) {
		struct ev_dash *d[EV_TABLE_COUNT];
		struct gset before[EV_TABLE_COUNT], after[EV_TABLE_COUNT];
		for (int t = 0; t < EV_TABLE_COUNT; t++)
			gset_load((enum ev_table_kind)t, LIVE_STUCK_S, &before[t]);
		for (int t = 0; t < EV_TABLE_COUNT; t++) {
			struct ev_dash_req req = mkreq((enum ev_table_kind)t, "event_type",
			                               LIVE_WINDOW, LIVE_STUCK_S);
			d[t] = mfetch(m[t], &req, o);
			ck_assert_msg(d[t]->mirror.on, "refresh %d: %s: the mirror is off: %s",
			              refresh, ev_model_table(t)->key,
			              d[t]->notes ? d[t]->notes : "no note");
			ck_assert_msg(d[t]->mirror.drift == 0,
			              "refresh %d: %s: the full check found the mirror off by %lld "
			              "rows",
			              refresh, ev_model_table(t)->key, d[t]->mirror.drift);
			ls->refreshes++;
			ls->entered += d[t]->mirror.entered;
			ls->changed += d[t]->mirror.changed;
			ls->left += d[t]->mirror.left;
			ls->pk_reads += d[t]->mirror.pk_reads;
			ls->digests += d[t]->mirror.digests;
			ls->rereads += d[t]->mirror.rereads;
		}
		bool still = true;
		for (int t = 0; t < EV_TABLE_COUNT; t++) {
			gset_load((enum ev_table_kind)t, LIVE_STUCK_S, &after[t]);
			still = still && gset_same(&before[t], &after[t]) &&
			        after[t].unix_now == after[0].unix_now;
		}
		if (still) {
			struct mm mm = {0};
			for (int t = 0; t < EV_TABLE_COUNT; t++)
				live_compare((enum ev_table_kind)t, d[t], &after[t], refresh, &mm);
			ck_assert_msg(mm.n == 0, "%d mismatches:\n%s", mm.n, mm.first);
		}
		for (int t = 0; t < EV_TABLE_COUNT; t++) {
			gset_free(&before[t]);
			gset_free(&after[t]);
			ev_dash_free(&d[t]);
		}
		if (still)
			return;
		ls->retries++;
	}
	ck_abort_msg("refresh %d: the server's second ticked (or the world moved) during each of 8 "
	             "comparisons",
	             refresh);
}

/* --- an operator's writes, from another connection, between two refreshes ------------------- */

enum op {
	OP_RETRY_NOW,
	OP_CANCEL,
	OP_DELETE,
	OP_FAILED_AWAY_SAME,    /* 3 -> 1 -> 3, the index entry back as it was */
	OP_FAILED_AWAY_CHANGED, /* 3 -> 1 -> 3, next_retry_time or retry_count changed */
	OP_PROC_AWAY_SAME,      /* 1 -> 3 -> 1, as it was */
	OP_PROC_AWAY_CHANGED,   /* 1 -> 3 -> 1, retry_count and lock / handle time changed */
	OP_RETRY_SCHEDULE,
	OP_COUNT,
};

static const char *const op_names[OP_COUNT] = {
        "retry now",       "cancel",       "delete",          "3->1->3 same",
        "3->1->3 changed", "1->3->1 same", "1->3->1 changed", "schedule a retry",
};

/* The id (text: ids reach 2^64 - 1) of the n-th row of status st, or NULL. */
static char *pick(const struct ev_table_def *def, int st, int n, const char *extra)
{
	char sql[512];
	snprintf(
	        sql, sizeof(sql),
	        "SELECT id FROM %s WHERE %s = %d AND deleted = 0%s%s ORDER BY id LIMIT 1 OFFSET %d",
	        def->default_name, def->status_col, st, extra ? " AND " : "", extra ? extra : "",
	        n);
	if (mysql_query(db, sql) != 0)
		ck_abort_msg("%s\n  %s", mysql_error(db), sql);
	MYSQL_RES *r = mysql_store_result(db);
	MYSQL_ROW row = mysql_fetch_row(r);
	char *id = row && row[0] ? strdup(row[0]) : NULL;
	mysql_free_result(r);
	return id;
}

static long long upd(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static long long upd(const char *fmt, ...)
{
	char sql[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(sql, sizeof(sql), fmt, ap);
	va_end(ap);
	if (mysql_query(db, sql) != 0)
		ck_abort_msg("%s\n  %s", mysql_error(db), sql);
	return (long long)mysql_affected_rows(db);
}

static long long operate(enum ev_table_kind t, enum op op, int i)
{
	const struct ev_table_def *def = ev_model_table(t);
	const char *tn = def->default_name, *st = def->status_col;
	const char *unlock = def->has_lock ? ", locked_by = NULL, lock_until = NULL" : "";
	long long n = 0;
	char *id = NULL;
	switch (op) {
	case OP_RETRY_NOW:
		if ((id = pick(def, 3, i % 7, NULL)) != NULL)
			n = upd("UPDATE %s SET %s = 0, next_retry_time = NULL, max_retry_count = "
			        "GREATEST(max_retry_count, retry_count + 1), version = version + "
			        "1, "
			        "update_time = NOW() WHERE id = %s AND deleted = 0 AND %s = 3",
			        tn, st, id, st);
		break;
	case OP_CANCEL:
		if ((id = pick(def, i % 2 ? 3 : 0, i % 5, NULL)) != NULL)
			n = upd("UPDATE %s SET %s = 4, fail_reason = '业务已关闭'%s, version = "
			        "version + "
			        "1, update_time = NOW() WHERE id = %s AND deleted = 0 AND %s IN "
			        "(0, 3)",
			        tn, st, unlock, id, st);
		break;
	case OP_DELETE:
		if ((id = pick(def, (int[]){0, 1, 3}[i % 3], i % 4, NULL)) != NULL)
			n = upd("DELETE FROM %s WHERE id = %s", tn, id);
		break;
	case OP_FAILED_AWAY_SAME:
		if ((id = pick(def, 3, i % 6, NULL)) != NULL) {
			n = upd("UPDATE %s SET %s = 1 WHERE id = %s AND %s = 3", tn, st, id, st);
			if (n > 0)
				upd("UPDATE %s SET %s = 3 WHERE id = %s", tn, st, id);
		}
		break;
	case OP_FAILED_AWAY_CHANGED:
		if ((id = pick(def, 3, i % 6, NULL)) != NULL) {
			n = upd("UPDATE %s SET %s = 1 WHERE id = %s AND %s = 3", tn, st, id, st);
			if (n > 0)
				upd("UPDATE %s SET %s = 3, %s WHERE id = %s", tn, st,
				    i % 2 ? "next_retry_time = next_retry_time + INTERVAL 1 SECOND"
				          : "retry_count = retry_count + 1",
				    id);
		}
		break;
	case OP_PROC_AWAY_SAME:
		if ((id = pick(def, 1, i % 3, NULL)) != NULL) {
			n = upd("UPDATE %s SET %s = 3 WHERE id = %s AND %s = 1", tn, st, id, st);
			if (n > 0)
				upd("UPDATE %s SET %s = 1 WHERE id = %s", tn, st, id);
		}
		break;
	case OP_PROC_AWAY_CHANGED:
		if ((id = pick(def, 1, i % 3, NULL)) != NULL) {
			n = upd("UPDATE %s SET %s = 3, retry_count = retry_count + 1 WHERE id = %s "
			        "AND "
			        "%s = 1",
			        tn, st, id, st);
			if (n > 0)
				upd("UPDATE %s SET %s = 1, %s WHERE id = %s", tn, st,
				    def->has_lock ? "lock_until = NOW() + INTERVAL 2 SECOND"
				                  : "last_handle_time = NOW()",
				    id);
		}
		break;
	case OP_RETRY_SCHEDULE:
		if ((id = pick(def, 3, i % 3, "retry_count >= max_retry_count")) != NULL ||
		    (id = pick(def, 3, i % 3, NULL)) != NULL) {
			/* next_retry_time changes for sure: were it to come out as it was, the
			 * index entry would not change and max_retry_count would change alone (what
			 * the next case is about), which this case must not do. */
			n = upd("UPDATE %s SET next_retry_time = IF(next_retry_time <=> NOW() + "
			        "INTERVAL 2 SECOND, NOW() + INTERVAL 3 SECOND, NOW() + INTERVAL 2 "
			        "SECOND), max_retry_count = GREATEST(max_retry_count, retry_count "
			        "+ 1), "
			        "version = version + 1, update_time = NOW() WHERE id = %s AND "
			        "deleted = "
			        "0 AND %s = 3",
			        tn, id, st);
		}
		break;
	case OP_COUNT:
		break;
	}
	free(id);
	return n;
}

/* --- case 2: exact under change --------------------------------------------------------------- */

/* Twice: every range read whole at every refresh (_i 0), and every range verified by its
 * digest once read (_i 1: the pending range's arrivals read, the others known from the key
 * reads; a digest that differs reads the range again). */
START_TEST(exact_under_change)
{
	ev_mirror_set_digest_min(_i ? 1 : SIZE_MAX);
	open_evtop(false);
	pid_t sim = sim_world("42");
	struct ev_mirror *m[EV_TABLE_COUNT];
	for (int t = 0; t < EV_TABLE_COUNT; t++)
		m[t] = ev_mirror_new((enum ev_table_kind)t);
	/* A full check every second: the drift of many refreshes is looked at. */
	const struct ev_mirror_opts o = {.interval_s = 0.2, .reverify_s = 0, .check_s = 1};
	struct live_stats ls = {0};
	long long ops[OP_COUNT] = {0};
	for (int i = 0; i < LIVE_REFRESHES; i++) {
		sim_pause(sim);
		refresh_and_compare(m, &o, i, &ls);
		/* The operator, while the applications are still: both writes of a move land
		 * between this refresh and the next. */
		ops[i % OP_COUNT] += operate(EV_TABLE_OUTBOX, (enum op)(i % OP_COUNT), i);
		ops[(i + 4) % OP_COUNT] +=
		        operate(EV_TABLE_MESSAGE, (enum op)((i + 4) % OP_COUNT), i);
		sim_resume(sim);
		usleep(60 * 1000);
	}
	json_t *sum = sim_stop(sim);
	/* The world did move (the applications' every kind of change), and so did the
	 * operator. */
	for (int t = 0; t < EV_TABLE_COUNT; t++) {
		static const char *const kinds[] = {"inserted", "claimed",   "succeeded",
		                                    "failed",   "cancelled", "crashed"};
		const char *tk = ev_model_table(t)->key;
		for (size_t k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++)
			ck_assert_msg(sim_count(sum, tk, kinds[k]) > 0, "%s: nothing %s", tk,
			              kinds[k]);
	}
	ck_assert_int_gt(sim_count(sum, "outbox", "recovered"), 0);
	json_decref(sum);
	ck_assert_int_gt(ls.entered, 1000);
	ck_assert_int_gt(ls.changed, 100);
	ck_assert_int_gt(ls.left, 100);
	for (int k = 0; k < OP_COUNT; k++)
		ck_assert_msg(ops[k] > 0, "the operator's \"%s\" never found a row", op_names[k]);
	fprintf(stderr,
	        "exact_under_change (%s): %lld refreshes (%lld comparisons re-run), entered "
	        "%lld, changed %lld, left %lld, read by key %lld, ranges verified by digest "
	        "%lld (read again whole %lld)\n",
	        _i ? "digests" : "whole reads", ls.refreshes, ls.retries, ls.entered, ls.changed,
	        ls.left, ls.pk_reads, ls.digests, ls.rereads);
	if (_i) {
		/* Both ways: digests that agreed, and digests that differed (rows claimed and done
		 * between two refreshes, an operator's cancel of a failed row, a row deleted
		 * outright: only the range read again finds them; this world changes fast, so a
		 * range that differed is read whole a while). */
		ck_assert_int_ge(ls.digests - ls.rereads, 10);
		ck_assert_int_ge(ls.rereads, 10);
	} else {
		ck_assert_int_eq(ls.digests, 0);
	}
	for (int t = 0; t < EV_TABLE_COUNT; t++) {
		ck_assert_int_eq(ev_mirror_drift_total(m[t]), 0);
		ev_mirror_free(&m[t]);
	}
}
END_TEST

/* --- case 3: what no index carries ------------------------------------------------------------ */

/* Behind the mirror's back, changes no index it reads carries: soft deletes of a pending, a
 * processing and a failed row; max_retry_count alone on a due or waiting row (now exhausted)
 * and on an exhausted one (retries left again). `nth` picks other rows on another call. */
static void hide_changes(enum ev_table_kind t, int nth)
{
	const struct ev_table_def *def = ev_model_table(t);
	const char *tn = def->default_name;
	long long n = 0;
	char *id;
	for (int st = 0; st <= 3; st++) {
		if (st == 2)
			continue;
		id = pick(def, st, nth, NULL);
		ck_assert_msg(id != NULL, "%s: no row of status %d to soft-delete", def->key, st);
		n += upd("UPDATE %s SET deleted = 1 WHERE id = %s", tn, id);
		free(id);
	}
	id = pick(def, 3, nth, "retry_count < max_retry_count AND next_retry_time IS NOT NULL");
	ck_assert_msg(id != NULL, "%s: no failed row with retries left", def->key);
	n += upd("UPDATE %s SET max_retry_count = retry_count WHERE id = %s", tn, id);
	free(id);
	id = pick(def, 3, nth, "retry_count >= max_retry_count");
	ck_assert_msg(id != NULL, "%s: no exhausted row", def->key);
	n += upd("UPDATE %s SET max_retry_count = retry_count + 3 WHERE id = %s", tn, id);
	free(id);
	ck_assert_int_eq(n, 5);
}

static int seed_mismatches(struct ev_mirror *m, enum ev_table_kind t,
                           const struct ev_mirror_opts *o, struct ev_dash **out)
{
	struct ev_dash_req req = mkreq(t, "event_type", WINDOW, STUCK_S);
	struct ev_dash *d = mfetch(m, &req, o);
	struct ev_dash *plain = pfetch(&req);
	struct mm mm = {0};
	seed_compare(t, "event_type", d, plain, &mm);
	ev_dash_free(&plain);
	if (out != NULL)
		*out = d;
	else
		ev_dash_free(&d);
	return mm.n;
}

START_TEST(what_no_index_carries)
{
	open_evtop(true);
	load_seed();
	const struct ev_mirror_opts lazy = {
	        .interval_s = 1, .reverify_s = 1000000, .check_s = 1000000};
	const struct ev_mirror_opts reverify = {
	        .interval_s = 1, .reverify_s = 2, .check_s = 1000000};
	const struct ev_mirror_opts check = {.interval_s = 1, .reverify_s = 1000000, .check_s = 1};
	struct ev_mirror *m[EV_TABLE_COUNT];

	/* The rolling re-verification. */
	for (int t = 0; t < EV_TABLE_COUNT; t++) {
		m[t] = ev_mirror_new((enum ev_table_kind)t);
		assert_seed_exact(m[t], (enum ev_table_kind)t, "event_type", &lazy,
		                  "first refresh");
		hide_changes((enum ev_table_kind)t, 1);
		/* Unseen by a refresh whose rolling share (one row) misses them: the comparison
		 * below can fail. */
		ck_assert_msg(seed_mismatches(m[t], (enum ev_table_kind)t, &lazy, NULL) > 0,
		              "%s: changes no index carries were seen without re-verification",
		              ev_model_table(t)->key);
		/* share = rows * 1 s / 2 s: every row read again within two refreshes. */
		struct ev_dash *d = NULL;
		seed_mismatches(m[t], (enum ev_table_kind)t, &reverify, &d);
		ck_assert_int_ge(d->mirror.pk_reads, d->mirror.rows / 2);
		ev_dash_free(&d);
		assert_seed_exact(m[t], (enum ev_table_kind)t, "event_type", &reverify,
		                  "second refresh with reverify_s = 2");
		ck_assert_int_eq(ev_mirror_drift_total(m[t]), 0);
		ev_mirror_free(&m[t]);
	}

	/* The full check: found, and corrected at once. */
	for (int t = 0; t < EV_TABLE_COUNT; t++) {
		m[t] = ev_mirror_new((enum ev_table_kind)t);
		struct ev_dash *d = NULL;
		ck_assert_int_eq(seed_mismatches(m[t], (enum ev_table_kind)t, &check, &d), 0);
		ck_assert_msg(d->mirror.check_age_s >= 0, "the first refresh made no full check");
		ck_assert_int_eq(d->mirror.drift, 0);
		ev_dash_free(&d);
		hide_changes((enum ev_table_kind)t, 2);
	}
	usleep(1200 * 1000); /* check_s = 1: the next refresh checks */
	for (int t = 0; t < EV_TABLE_COUNT; t++) {
		struct ev_dash *d = NULL;
		int n = seed_mismatches(m[t], (enum ev_table_kind)t, &check, &d);
		ck_assert_msg(d->mirror.drift > 0, "%s: the full check found no drift",
		              ev_model_table(t)->key);
		ck_assert_int_eq(ev_mirror_drift_total(m[t]), d->mirror.drift);
		ck_assert_msg(n == 0, "%s: %d mismatches right after the full check's correction",
		              ev_model_table(t)->key, n);
		ev_dash_free(&d);
		/* And the next refresh (no check due) stays exact. */
		assert_seed_exact(m[t], (enum ev_table_kind)t, "event_type", &lazy,
		                  "after the correction");
		ev_mirror_free(&m[t]);
	}
}
END_TEST

/* --- case 4: a running world ------------------------------------------------------------------ */

static double mono_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

START_TEST(a_running_world_shows_no_drift)
{
	/* The ranges verified by their digests: the full checks find no drift either. */
	ev_mirror_set_digest_min(1);
	open_evtop(false);
	pid_t sim = sim_world("43");
	struct ev_mirror *m[EV_TABLE_COUNT];
	double last_end[EV_TABLE_COUNT];
	for (int t = 0; t < EV_TABLE_COUNT; t++) {
		m[t] = ev_mirror_new((enum ev_table_kind)t);
		last_end[t] = mono_s();
	}
	const struct ev_mirror_opts o = {.interval_s = 0.5, .reverify_s = 0, .check_s = 1};
	long long checks[EV_TABLE_COUNT] = {0}, changed = 0;
	/* 40 refreshes; EVTOP_TEST_RUNNING_S=600 runs as many as fit in 10 minutes. */
	const char *run_s = getenv("EVTOP_TEST_RUNNING_S");
	double until = run_s ? mono_s() + atof(run_s) : 0;
	int i;
	for (i = 0; run_s ? mono_s() < until : i < 40; i++) {
		usleep(500 * 1000);
		for (int t = 0; t < EV_TABLE_COUNT; t++) {
			struct ev_dash_req req = mkreq((enum ev_table_kind)t, "event_type",
			                               LIVE_WINDOW, LIVE_STUCK_S);
			struct ev_dash *d = mfetch(m[t], &req, &o);
			double now = mono_s();
			ck_assert(d->mirror.on);
			ck_assert_msg(d->mirror.drift == 0,
			              "refresh %d: %s: the full check found the mirror off by %lld "
			              "rows in a running world",
			              i, ev_model_table(t)->key, d->mirror.drift);
			/* This refresh made the check when the last one is younger than the time
			 * since the previous refresh ended. */
			if (d->mirror.check_age_s >= 0 && d->mirror.check_age_s < now - last_end[t])
				checks[t]++;
			changed += d->mirror.entered + d->mirror.changed + d->mirror.left;
			last_end[t] = now;
			ev_dash_free(&d);
		}
	}
	for (int t = 0; t < EV_TABLE_COUNT; t++)
		ck_assert_msg(checks[t] >= 10, "%s: only %lld full checks in %d refreshes",
		              ev_model_table(t)->key, checks[t], i);
	fprintf(stderr, "a_running_world_shows_no_drift: %d refreshes, %lld and %lld full checks\n",
	        i, checks[0], checks[1]);
	ck_assert_int_gt(changed, 1000);
	/* Stilled, the same mirrors are exact. */
	sim_pause(sim);
	struct live_stats ls = {0};
	refresh_and_compare(m, &o, i, &ls);
	json_decref(sim_stop(sim));
	for (int t = 0; t < EV_TABLE_COUNT; t++) {
		ck_assert_int_eq(ev_mirror_drift_total(m[t]), 0);
		ev_mirror_free(&m[t]);
	}
}
END_TEST

/* --- case 5: the plans ------------------------------------------------------------------------ */

static void explain_one(const struct ev_query *q, const char *table, const char *want_key,
                        bool index_only, int want_base, const char *label)
{
	char *sql = ev_query_render(q);
	char *explain = malloc(strlen(sql) + 16);
	sprintf(explain, "EXPLAIN %s", sql);
	if (mysql_query(db, explain) != 0)
		ck_abort_msg("%s\n  %s", mysql_error(db), explain);
	MYSQL_RES *r = mysql_store_result(db);
	unsigned nf = mysql_num_fields(r);
	MYSQL_FIELD *fields = mysql_fetch_fields(r);
	int ci_table = -1, ci_type = -1, ci_key = -1, ci_extra = -1;
	for (unsigned i = 0; i < nf; i++) {
		if (strcmp(fields[i].name, "table") == 0)
			ci_table = (int)i;
		if (strcmp(fields[i].name, "type") == 0)
			ci_type = (int)i;
		if (strcmp(fields[i].name, "key") == 0)
			ci_key = (int)i;
		if (strcmp(fields[i].name, "Extra") == 0)
			ci_extra = (int)i;
	}
	ck_assert(ci_table >= 0 && ci_type >= 0 && ci_key >= 0 && ci_extra >= 0);
	MYSQL_ROW row;
	int base = 0;
	while ((row = mysql_fetch_row(r)) != NULL) {
		if (want_base > 1 && row[ci_table] != NULL && row[ci_table][0] == '<')
			continue; /* the derived table's or the union's own row */
		ck_assert_msg(row[ci_table] != NULL && strcmp(row[ci_table], table) == 0,
		              "%s %s: a plan row for %s:\n%s", label, q->name,
		              row[ci_table] ? row[ci_table] : "NULL", sql);
		base++;
		ck_assert_msg(row[ci_type] != NULL && strcmp(row[ci_type], "ALL") != 0,
		              "%s %s: a table scan:\n%s", label, q->name, sql);
		ck_assert_msg(row[ci_key] != NULL, "%s %s: no index used:\n%s", label, q->name,
		              sql);
		ck_assert_msg(strcmp(row[ci_key], want_key) == 0, "%s %s: uses %s, not %s:\n%s",
		              label, q->name, row[ci_key], want_key, sql);
		if (index_only)
			ck_assert_msg(row[ci_extra] != NULL && strstr(row[ci_extra], "Using index"),
			              "%s %s: not index-only (Extra: %s):\n%s", label, q->name,
			              row[ci_extra] ? row[ci_extra] : "NULL", sql);
	}
	ck_assert_int_eq(base, want_base);
	mysql_free_result(r);
	free(explain);
	free(sql);
}

static void explain_mirror(const char *label)
{
	for (int t = 0; t < EV_TABLE_COUNT; t++) {
		const struct ev_table_def *def = ev_model_table(t);
		tdb_exec(db, "ANALYZE TABLE %s", def->default_name);
		struct ev_dash_req req =
		        mkreq((enum ev_table_kind)t, "event_type", WINDOW, STUCK_S);
		struct ev_error err = {0};
		static const int statuses[] = {0, 1, 3};
		for (int i = 0; i < 3; i++) {
			struct ev_query *q =
			        ev_mirror_query_range(&req, statuses[i], ev_mirror_cap() + 1, &err);
			ck_assert_msg(q != NULL, "%s", err.msg);
			explain_one(q, def->default_name, "idx_status_retry_time", true, 1, label);
			ev_query_free(&q);
			/* The range's digest: the same index entries, nothing else. */
			q = ev_mirror_query_digest(&req, statuses[i], &err);
			ck_assert_msg(q != NULL, "%s", err.msg);
			explain_one(q, def->default_name, "idx_status_retry_time", true, 1, label);
			ev_query_free(&q);
		}
		/* The pending arrivals: a stretch of the same index. */
		struct ev_mirror *am = ev_mirror_new((enum ev_table_kind)t);
		struct ev_query *q = ev_mirror_query_arrivals(am, &req, ev_mirror_cap() + 1, &err);
		ck_assert_msg(q != NULL, "%s", err.msg);
		explain_one(q, def->default_name, "idx_status_retry_time", true, 1, label);
		ev_query_free(&q);
		ev_mirror_free(&am);
		q = ev_mirror_query_lock(&req, ev_mirror_cap() + 1);
		if (def->has_lock) {
			ck_assert_msg(q != NULL, "no lock read on the outbox");
			explain_one(q, def->default_name, "idx_status_lock_until", true, 1, label);
			ev_query_free(&q);
			q = ev_mirror_query_lock_digest(&req);
			ck_assert_msg(q != NULL, "no lock digest on the outbox");
			explain_one(q, def->default_name, "idx_status_lock_until", true, 1, label);
			ev_query_free(&q);
		} else {
			ck_assert_ptr_null(q);
			ck_assert_ptr_null(ev_mirror_query_lock_digest(&req));
		}
		/* A few ids, and a full batch. */
		uint64_t ids[EV_MIRROR_PK_BATCH];
		ids[0] = 1;
		ids[1] = 100000000000000002ull;
		ids[2] = 18446744073709551615ull;
		/* (Ids on both sides of 2^63 in one batch: one IN list of them is a scan.) */
		q = ev_mirror_query_pk(&req, ids, 3);
		explain_one(q, def->default_name, "PRIMARY", false, 1, label);
		ev_query_free(&q);
		for (size_t i = 0; i < EV_MIRROR_PK_BATCH; i++)
			ids[i] = 1000000 + 37 * i;
		ids[EV_MIRROR_PK_BATCH - 1] = 18446744073709551615ull;
		q = ev_mirror_query_pk(&req, ids, EV_MIRROR_PK_BATCH);
		explain_one(q, def->default_name, "PRIMARY", false, 1, label);
		ev_query_free(&q);
		/* The rolling share's compare reads the same way, as checksums or as values. */
		struct ev_mirror *vm = ev_mirror_new((enum ev_table_kind)t);
		q = ev_mirror_query_verify(vm, &req, ids, EV_MIRROR_PK_BATCH);
		ck_assert_ptr_nonnull(strstr(q->sql, "CRC32("));
		explain_one(q, def->default_name, "PRIMARY", false, 1, label);
		ev_query_free(&q);
		ev_mirror_free(&vm);
		/* The collation keys of spellings the window counts use: one row by key each. */
		struct ev_mirror *m = ev_mirror_new((enum ev_table_kind)t);
		const struct ev_mirror_opts o = {.interval_s = 1};
		struct ev_dash *d = mfetch(m, &req, &o);
		ev_dash_free(&d);
		const char *const spellings[] = {"order_paid", "Order_Created ", "订单"};
		q = ev_mirror_query_keys(m, &req, spellings, 3);
		ck_assert_ptr_nonnull(q);
		explain_one(q, def->default_name, "PRIMARY", false, 3, label);
		ev_query_free(&q);
		ev_mirror_free(&m);
	}
}

static void drop_recommended(void)
{
	for (int t = 0; t < EV_TABLE_COUNT; t++) {
		const char *tn = ev_model_table(t)->default_name;
		for (;;) {
			char *name =
			        tdb_scalar(db,
			                   "SELECT IFNULL(MIN(INDEX_NAME), '') FROM "
			                   "information_schema.STATISTICS WHERE TABLE_SCHEMA = "
			                   "DATABASE() AND TABLE_NAME = '%s' AND INDEX_NAME LIKE "
			                   "'idx\\_evtop\\_%%'",
			                   tn);
			bool none = name[0] == '\0';
			if (!none)
				tdb_exec(db, "ALTER TABLE %s DROP INDEX `%s`", tn, name);
			free(name);
			if (none)
				break;
		}
	}
}

START_TEST(every_read_is_index_only)
{
	open_evtop(true);
	load_seed();
	drop_recommended();
	/* Enough rows in every status that a plan means something. */
	tdb_exec(db,
	         "INSERT INTO biz_outbox_event (id, event_no, aggregate_type, aggregate_id, "
	         "event_type, event_source, publish_channel, event_payload, publish_status, "
	         "retry_count, next_retry_time, lock_until, create_time, update_time) SELECT "
	         "1000000 + n, CONCAT('PLAN-', n), 'ORDER', n, 'PLAN_TYPE', 'bulk', 'MQ', '{}', "
	         "n %% 5, n %% 4, IF(n %% 5 = 3, NOW() + INTERVAL (n %% 100 - 50) MINUTE, NULL), "
	         "IF(n %% 5 = 1, NOW() + INTERVAL (n %% 10 - 5) MINUTE, NULL), NOW() - INTERVAL "
	         "n MINUTE, NOW() FROM (SELECT CAST(seq AS SIGNED) AS n FROM seq_1_to_20000) s");
	tdb_exec(db,
	         "INSERT INTO biz_message_event (id, event_no, event_type, biz_type, biz_id, "
	         "event_source, event_payload, event_status, retry_count, next_retry_time, "
	         "last_handle_time, create_time, update_time) SELECT 1000000 + n, "
	         "CONCAT('PLAN-', n), 'PLAN_TYPE', 'ORDER', n, 'bulk', '{}', n %% 5, n %% 4, "
	         "IF(n %% 5 = 3, NOW() + INTERVAL (n %% 100 - 50) MINUTE, NULL), IF(n %% 5 = 1, "
	         "NOW() - INTERVAL (n %% 20) MINUTE, NULL), NOW() - INTERVAL n MINUTE, NOW() "
	         "FROM (SELECT CAST(seq AS SIGNED) AS n FROM seq_1_to_20000) s");
	read_info();
	explain_mirror("model indexes:");

	char *rec = tdb_srcpath("sql/recommended-indexes.sql");
	tdb_source(db, rec);
	free(rec);
	ck_assert_int_eq(tdb_int(db,
	                         "SELECT COUNT(DISTINCT TABLE_NAME, INDEX_NAME) FROM "
	                         "information_schema.STATISTICS WHERE TABLE_SCHEMA = DATABASE() "
	                         "AND INDEX_NAME LIKE 'idx\\_evtop\\_%%'"),
	                 6);
	read_info();
	explain_mirror("recommended indexes:");
	/* And a refresh on them is exact. */
	for (int t = 0; t < EV_TABLE_COUNT; t++) {
		struct ev_mirror *m = ev_mirror_new((enum ev_table_kind)t);
		const struct ev_mirror_opts o = {.interval_s = 1};
		assert_seed_exact(m, (enum ev_table_kind)t, "event_type", &o,
		                  "recommended indexes");
		ev_mirror_free(&m);
	}

	drop_recommended();
	ck_assert_int_eq(tdb_int(db, "SELECT COUNT(*) FROM information_schema.STATISTICS WHERE "
	                             "TABLE_SCHEMA = DATABASE() AND INDEX_NAME LIKE "
	                             "'idx\\_evtop\\_%%'"),
	                 0);
	read_info();
	tdb_exec(db, "DELETE FROM biz_outbox_event WHERE id BETWEEN 1000001 AND 1020000");
	tdb_exec(db, "DELETE FROM biz_message_event WHERE id BETWEEN 1000001 AND 1020000");
}
END_TEST

/* --- case 6: the cap -------------------------------------------------------------------------- */

static void assert_capped_fallback(struct ev_mirror *m, enum ev_table_kind t, const char *when)
{
	const struct ev_mirror_opts o = {.interval_s = 1};
	struct ev_dash_req req = mkreq(t, "event_type", WINDOW, STUCK_S);
	struct ev_dash *d = mfetch(m, &req, &o);
	struct ev_dash *plain = pfetch(&req);
	ck_assert_msg(!d->mirror.on, "%s: %s: the mirror is on past its cap", when,
	              ev_model_table(t)->key);
	ck_assert_msg(d->notes != NULL && strstr(d->notes, "cap") != NULL,
	              "%s: %s: no note of the cap (notes: %s)", when, ev_model_table(t)->key,
	              d->notes ? d->notes : "NULL");
	ck_assert(ev_mirror_is_over_cap(m));
	ck_assert_uint_eq(ev_mirror_rows(m), 0);
	/* The capped counts: ev_dash_fetch's, which equal the reference on the seed. */
	struct mm mm = {0};
	seed_compare(t, "event_type", d, plain, &mm);
	ck_assert_msg(mm.n == 0, "%s: %d mismatches:\n%s", when, mm.n, mm.first);
	ev_dash_free(&plain);
	ev_dash_free(&d);
}

START_TEST(the_cap_falls_back_to_the_capped_counts)
{
	open_evtop(true);
	load_seed();
	const struct ev_mirror_opts o = {.interval_s = 1};
	long long rows[EV_TABLE_COUNT];
	for (int t = 0; t < EV_TABLE_COUNT; t++) {
		const struct ev_table_def *def = ev_model_table(t);
		rows[t] = tdb_int(db, "SELECT COUNT(*) FROM %s WHERE %s IN (0, 1, 3)",
		                  def->default_name, def->status_col);
		ck_assert_int_gt(rows[t], 10);
	}
	struct ev_mirror *m[EV_TABLE_COUNT];
	for (int t = 0; t < EV_TABLE_COUNT; t++)
		m[t] = ev_mirror_new((enum ev_table_kind)t);

	/* One mirror past a small cap. */
	ev_mirror_set_cap(10);
	ck_assert_uint_eq(ev_mirror_cap(), 10);
	assert_capped_fallback(m[EV_TABLE_OUTBOX], EV_TABLE_OUTBOX, "cap 10");
	ev_mirror_set_cap(0);
	ck_assert_uint_eq(ev_mirror_cap(), EV_MIRROR_CAP_DEFAULT);
	assert_seed_exact(m[EV_TABLE_OUTBOX], EV_TABLE_OUTBOX, "event_type", &o,
	                  "the cap restored");
	ck_assert(!ev_mirror_is_over_cap(m[EV_TABLE_OUTBOX]));

	/* The cap is over every mirror together: the outbox fills it exactly, the message
	 * table's mirror has no room left. */
	ev_mirror_set_cap((size_t)rows[EV_TABLE_OUTBOX]);
	assert_seed_exact(m[EV_TABLE_OUTBOX], EV_TABLE_OUTBOX, "event_type", &o,
	                  "cap = the outbox's rows");
	ck_assert_uint_eq(ev_mirror_room(m[EV_TABLE_MESSAGE]), 0);
	assert_capped_fallback(m[EV_TABLE_MESSAGE], EV_TABLE_MESSAGE, "no room left");
	/* Its room back when the other mirror goes. */
	ev_mirror_free(&m[EV_TABLE_OUTBOX]);
	ck_assert_uint_eq(ev_mirror_room(m[EV_TABLE_MESSAGE]), (size_t)rows[EV_TABLE_OUTBOX]);
	ev_mirror_set_cap(0);
	assert_seed_exact(m[EV_TABLE_MESSAGE], EV_TABLE_MESSAGE, "event_type", &o,
	                  "the cap restored");
	ev_mirror_free(&m[EV_TABLE_MESSAGE]);
}
END_TEST

/* --- case 7: hostile values ------------------------------------------------------------------- */

START_TEST(hostile_values_are_counted_right)
{
	/* With the digests: a time this mirror keeps clamped (9999-12-31) makes the failed range's
	 * digest one the mirror cannot reproduce; that range is read whole, and exact. */
	ev_mirror_set_digest_min(1);
	open_evtop(true);
	load_seed();
	/* The id 2^64 - 1 (the seed's pending row) becomes a failed row waiting until the end of
	 * time, of a CJK event_type; a pending row created at the start of DATETIME (and retried
	 * then) drives both ages; 'order_paid' and 'Order_Paid' against the seed's 'ORDER_PAID',
	 * one with a lower id than any of theirs, so that its spelling is the one a refresh meets
	 * first (the window counts spell the group otherwise); 'ORDER_PAID  ', 'ORDER ', 'MQ '
	 * (a PAD SPACE collation: trailing spaces do not part groups). */
	for (int t = 0; t < EV_TABLE_COUNT; t++) {
		const struct ev_table_def *def = ev_model_table(t);
		tdb_exec(db, "DELETE FROM %s WHERE id = 18446744073709551615", def->default_name);
	}
	tdb_exec(db,
	         "INSERT INTO biz_message_event (id, event_no, event_type, biz_type, biz_id, "
	         "event_source, event_payload, event_status, retry_count, max_retry_count, "
	         "next_retry_time, last_handle_time, version, create_time, update_time) VALUES "
	         "(18446744073709551615, 'H-MAX', '订单已支付', 'ORDER', 'h1', 'order-service', "
	         "'{}', 3, 1, 5, '9999-12-31 23:59:59', NULL, 1, NOW() - INTERVAL 1 HOUR, NOW()), "
	         "(0, 'H-0', 'order_paid', 'ORDER', 'h2', 'order-service', '{}', 3, 0, 3, "
	         "'1000-01-01 00:00:00', NULL, 1, NOW() - INTERVAL 1 DAY, NOW()), "
	         "(900001, 'H-1', 'order_paid', 'ORDER', 'h3', 'order-service', '{}', 0, 0, 3, "
	         "NULL, NULL, 1, '1000-01-01 00:00:00', '1000-01-01 00:00:00'), "
	         "(900002, 'H-2', 'Order_Paid', 'ORDER', 'h4', 'order-service', '{}', 1, 0, 3, "
	         "NULL, '1000-01-01 00:00:00', 1, NOW() - INTERVAL 1 DAY, NOW()), "
	         "(900003, 'H-3', '订单已支付', 'ORDER', 'h5', 'order-service', '{}', 0, 0, 3, "
	         "NULL, NULL, 0, '9999-12-31 23:59:59', NOW()), "
	         "(900005, 'H-5', 'ORDER_PAID  ', 'ORDER ', 'h6', 'order-service', '{}', 3, 3, 3, "
	         "NULL, NULL, 1, NOW() - INTERVAL 2 DAY, NOW())");
	tdb_exec(db,
	         "INSERT INTO biz_outbox_event (id, event_no, aggregate_type, aggregate_id, "
	         "event_type, event_source, publish_channel, topic, event_payload, publish_status, "
	         "retry_count, max_retry_count, next_retry_time, lock_until, version, create_time, "
	         "update_time) VALUES "
	         "(18446744073709551615, 'H-MAX', 'ORDER', 'h1', '订单已支付', 'order-service', "
	         "'MQ', '订单.事件', '{}', 3, 1, 5, '9999-12-31 23:59:59', NULL, 1, NOW() - "
	         "INTERVAL 1 HOUR, NOW()), "
	         "(0, 'H-0', 'ORDER', 'h2', 'order_paid', 'order-service', 'MQ', 'order.event', "
	         "'{}', 3, 0, 3, '1000-01-01 00:00:00', NULL, 1, NOW() - INTERVAL 1 DAY, NOW()), "
	         "(900001, 'H-1', 'ORDER', 'h3', 'order_paid', 'order-service', 'mq', NULL, '{}', "
	         "0, 0, 3, NULL, NULL, 1, '1000-01-01 00:00:00', '1000-01-01 00:00:00'), "
	         "(900002, 'H-2', 'ORDER', 'h4', 'Order_Paid', 'order-service', 'MQ', "
	         "'ORDER.EVENT', '{}', 1, 0, 3, NULL, '1000-01-01 00:00:00', 1, NOW() - INTERVAL "
	         "1 DAY, NOW()), "
	         "(900004, 'H-4', 'ORDER', 'h6', 'order_paid', 'order-service', 'MQ', NULL, '{}', "
	         "1, 0, 3, NULL, '9999-12-31 23:59:59', 1, NOW() - INTERVAL 1 DAY, NOW()), "
	         "(900003, 'H-3', 'ORDER', 'h5', '订单已支付', 'order-service', 'MQ', NULL, '{}', "
	         "0, "
	         "0, 3, NULL, NULL, 0, '9999-12-31 23:59:59', NOW()), "
	         "(900005, 'H-5', 'ORDER ', 'h7', 'ORDER_PAID  ', 'order-service', 'MQ ', "
	         "'order.event ', '{}', 3, 3, 3, NULL, NULL, 1, NOW() - INTERVAL 2 DAY, NOW())");
	const struct ev_mirror_opts o = {.interval_s = 1};
	for (int t = 0; t < EV_TABLE_COUNT; t++) {
		const struct ev_table_def *def = ev_model_table(t);
		struct ev_mirror *m = ev_mirror_new((enum ev_table_kind)t);
		for (int k = 0; k < NDIMS; k++) {
			const char *dim = all_dims[k];
			if (dim != NULL && ev_model_dimension(def, dim) == NULL)
				continue;
			/* A fresh mirror (everything read by key at once), and the kept one. */
			struct ev_mirror *fresh = ev_mirror_new((enum ev_table_kind)t);
			assert_seed_exact(fresh, (enum ev_table_kind)t, dim, &o,
			                  "hostile, fresh mirror");
			ev_mirror_free(&fresh);
			assert_seed_exact(m, (enum ev_table_kind)t, dim, &o,
			                  "hostile, kept mirror");
		}
		/* The values did reach the figures. */
		struct ev_dash_req req =
		        mkreq((enum ev_table_kind)t, "event_type", WINDOW, STUCK_S);
		struct ev_dash *d = mfetch(m, &req, &o);
		ck_assert_int_gt(d->total.f[EV_DASH_OLDEST_PENDING_AGE].value, 30000000000LL);
		ck_assert_int_gt(d->total.f[EV_DASH_LONGEST_RETRY_WAIT].value, 30000000000LL);
		const struct ev_dash_row *cjk = ev_dash_find(d, "订单已支付");
		ck_assert_msg(cjk != NULL, "%s: no group 订单已支付", def->key);
		ck_assert_int_eq(cjk->f[EV_DASH_FAILED_WAITING].value, 1);
		ev_dash_free(&d);
		ev_mirror_free(&m);
	}
	/* Gone again; the seed as it was. */
	for (int t = 0; t < EV_TABLE_COUNT; t++)
		tdb_exec(db, "DELETE FROM %s WHERE event_no LIKE 'H-%%'",
		         ev_model_table(t)->default_name);
	load_seed();
}
END_TEST

/* --- case 8: the rates by completion time, in an outage; the groups' rates ------------------- */

/* The flows' settle (rows created this recently are counted at a later refresh) and the window
 * of the window counts the old rate comes from. */
#define FLOW_SETTLE_S 2
#define FLOW_WINDOW_S 60
/* The rates' span here (the console's is a minute): short enough that a span fits inside the
 * outage with room to spare however slowly the refreshes come (under sanitizers). */
#define FLOW_RATE_S     15
#define FLOW_MAX_GROUPS 64
#define FLOW_MAX_POINTS 160
/* The world: normal until OUTAGE_AT s, then one outage (a 10 ms break every 15 s) until that
 * simulator is stopped at OUTAGE_END s; then a simulator without outage for AFTER_S s. (A
 * simulator's outages start at --outage-every and recur every --outage-every, each shorter:
 * one outage longer than the rates' span, then a recovery, takes two simulators.) No job runs
 * (--recover-every 10m): the message table's exhausted rows stay failed, not cancelled. */
#define FLOW_OUTAGE_AT  15
#define FLOW_OUTAGE_END 45
#define FLOW_AFTER_S    20

static const char *const flow_world =
        "--seed 44 --rate 40 --instances 3 --fail-rate 0.02 --crash-rate 0 --time-scale 60 "
        "--recover-every 10m --lock-time 30s --poll 50ms --batch 50 --duration 300s";

struct flow_group {
	char *name;
	struct ev_flow_rates fr;
};

/* One refresh of one table: its NOW(), its rates (totals, groups), the old window rate. */
struct flow_point {
	int refresh;
	long long now; /* the refresh's NOW() as UNIX seconds, -1: unknown (the second ticked) */
	struct ev_flow_rates total;
	bool window_known;
	double window_done; /* ev_dash_rates on the totals: succeeded + cancelled per minute among
	                       the rows created in the window */
	size_t ngroups;
	struct flow_group g[FLOW_MAX_GROUPS];
};

static long long server_unix(void)
{
	return tdb_int(db, "SELECT UNIX_TIMESTAMP()");
}

/* Sleep until `frac` of the wall clock's second (the server's clock is this machine's). */
static void sleep_until_frac(double frac)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	double f = (double)ts.tv_nsec / 1e9;
	double wait = f < frac - 0.02 ? frac - f : 1 - f + frac;
	usleep((useconds_t)(wait * 1e6));
}

/* The simulator stopped (SIGTERM); its summary (JSON) read from `out`. */
static json_t *sim_stop_file(pid_t pid, const char *out)
{
	kill(pid, SIGCONT);
	kill(pid, SIGTERM);
	int st;
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "evtop-sim ended with status %d", st);
	json_error_t jerr;
	json_t *j = json_load_file(out, 0, &jerr);
	ck_assert_msg(j != NULL, "%s: not JSON: %s", out, jerr.text);
	return j;
}

static void flow_record(struct flow_point *p, const struct ev_dash *d, int refresh, long long now)
{
	memset(p, 0, sizeof(*p));
	p->refresh = refresh;
	p->now = now;
	p->total = d->total.flow;
	struct ev_dash_rates wr;
	ev_dash_rates(&d->total, FLOW_WINDOW_S, &wr);
	p->window_known = wr.known;
	p->window_done = wr.finished_per_min;
	for (size_t r = 0; r < d->nrows && p->ngroups < FLOW_MAX_GROUPS; r++) {
		p->g[p->ngroups].name = strdup(gname(d->rows[r].group));
		p->g[p->ngroups].fr = d->rows[r].flow;
		p->ngroups++;
	}
	ck_assert_msg(p->ngroups < FLOW_MAX_GROUPS, "more than %d event types", FLOW_MAX_GROUPS);
}

static void flow_point_free(struct flow_point *p)
{
	for (size_t k = 0; k < p->ngroups; k++)
		free(p->g[k].name);
	p->ngroups = 0;
}

/* The truth of one span (t0, tn] of server seconds, per event_type of table t, from the rows
 * themselves: done = the rows that reached status 2 (by success_time / published_time) or
 * status 4 (by update_time, which a cancel sets and nothing changes after) in the span; and
 * the settle term = the rows created in (t0 - s, t0] less those created in (tn - s, tn]. The
 * mirror's flows count the rows created in (t0 - s, tn - s] where the backlog changed by the
 * rows created in (t0, tn]: over any span, what it measures is done + the settle term
 * exactly (as long as no row is committed late: the simulator stands still across every
 * refresh and until the server's second has moved on, and it commits each statement alone). */
struct flow_truth {
	size_t n;
	struct {
		char *name;
		long long done, settle, succeeded, cancelled;
	} g[FLOW_MAX_GROUPS];
	long long done, settle, succeeded, cancelled;
};

static void flow_truth_load(enum ev_table_kind t, long long t0, long long tn, struct flow_truth *tr)
{
	const struct ev_table_def *def = ev_model_table(t);
	const char *st = def->status_col, *ok = def->has_lock ? "published_time" : "success_time";
	char sql[2048];
	snprintf(
	        sql, sizeof(sql),
	        "SELECT event_type, "
	        "COUNT(CASE WHEN %s = 2 AND %s > FROM_UNIXTIME(%lld) AND %s <= FROM_UNIXTIME(%lld) "
	        "THEN 1 END), "
	        "COUNT(CASE WHEN %s = 4 AND update_time > FROM_UNIXTIME(%lld) AND update_time <= "
	        "FROM_UNIXTIME(%lld) THEN 1 END), "
	        "COUNT(CASE WHEN create_time > FROM_UNIXTIME(%lld) AND create_time <= "
	        "FROM_UNIXTIME(%lld) THEN 1 END) - COUNT(CASE WHEN create_time > "
	        "FROM_UNIXTIME(%lld) AND create_time <= FROM_UNIXTIME(%lld) THEN 1 END) "
	        "FROM %s GROUP BY event_type",
	        st, ok, t0, ok, tn, st, t0, tn, t0 - FLOW_SETTLE_S, t0, tn - FLOW_SETTLE_S, tn,
	        def->default_name);
	memset(tr, 0, sizeof(*tr));
	if (mysql_query(db, sql) != 0)
		ck_abort_msg("%s\n  %s", mysql_error(db), sql);
	MYSQL_RES *r = mysql_store_result(db);
	ck_assert_ptr_nonnull(r);
	MYSQL_ROW row;
	while ((row = mysql_fetch_row(r)) != NULL) {
		ck_assert_uint_lt(tr->n, FLOW_MAX_GROUPS);
		long long s = strtoll(row[1], NULL, 10), c = strtoll(row[2], NULL, 10),
		          x = strtoll(row[3], NULL, 10);
		tr->g[tr->n].name = strdup(row[0]);
		tr->g[tr->n].succeeded = s;
		tr->g[tr->n].cancelled = c;
		tr->g[tr->n].done = s + c;
		tr->g[tr->n].settle = x;
		tr->n++;
		tr->succeeded += s;
		tr->cancelled += c;
		tr->done += s + c;
		tr->settle += x;
	}
	mysql_free_result(r);
}

static void flow_truth_free(struct flow_truth *tr)
{
	for (size_t k = 0; k < tr->n; k++)
		free(tr->g[k].name);
	tr->n = 0;
}

/* |got - want| within 2 % of want + 5 a minute. */
static bool flow_near(double got, double want)
{
	double d = got - want;
	return (d < 0 ? -d : d) <= 0.02 * (want < 0 ? -want : want) + 5;
}

/* One point against the truth of its span: the totals and every group (a group the mirror
 * has no row for finished nothing by the mirror). Returns the truth's DONE/m of the totals
 * (clamped at 0 as the mirror clamps). */
static double flow_check_point(enum ev_table_kind t, const struct flow_point *p, const char *label,
                               struct mm *mm, double *raw_out)
{
	const char *tk = ev_model_table(t)->key;
	ck_assert_msg(p->total.known, "%s: %s, totals: DONE/m unknown at refresh %d", label, tk,
	              p->refresh);
	long long span = (long long)(p->total.span_s + 0.5);
	struct flow_truth tr;
	flow_truth_load(t, p->now - span, p->now, &tr);
	double per = 60.0 / (double)span;
	double want = (double)(tr.done + tr.settle) * per;
	if (want < 0)
		want = 0;
	if (!flow_near(p->total.finished_per_min, want))
		note(mm,
		     "%s: %s, totals: DONE/m = %.2f, want %.2f (done %lld + settle %lld in the "
		     "%lld "
		     "s to %lld; %lld intervals clamped)",
		     label, tk, p->total.finished_per_min, want, tr.done, tr.settle, span, p->now,
		     p->total.clamped);
	for (size_t k = 0; k < tr.n; k++) {
		double gw = (double)(tr.g[k].done + tr.g[k].settle) * per;
		if (gw < 0)
			gw = 0;
		const struct flow_group *g = NULL;
		for (size_t j = 0; j < p->ngroups && g == NULL; j++)
			if (strcmp(p->g[j].name, tr.g[k].name) == 0)
				g = &p->g[j];
		double got = g && g->fr.known ? g->fr.finished_per_min : 0;
		if (g != NULL && g->fr.known && (long long)(g->fr.span_s + 0.5) != span)
			note(mm, "%s: %s, group %s: span %.0f s, the totals' %lld s", label, tk,
			     tr.g[k].name, g->fr.span_s, span);
		if (!flow_near(got, gw))
			note(mm,
			     "%s: %s, group %s: DONE/m = %.2f, want %.2f (done %lld + settle %lld; "
			     "%lld intervals clamped)",
			     label, tk, tr.g[k].name, got, gw, tr.g[k].done, tr.g[k].settle,
			     g ? g->fr.clamped : -1);
	}
	if (raw_out != NULL)
		*raw_out = (double)tr.done * per;
	flow_truth_free(&tr);
	return want;
}

/* The groups' rates against the totals' (one dashboard, the same samples): created and failed
 * add up exactly; finished adds up exactly when no group's came out 0 (a group's span can sum
 * to less than nothing, from its settle term, and shows 0: the groups then add up to more). */
static void flow_check_groups(enum ev_table_kind t, const struct flow_point *p, const char *label,
                              struct mm *mm)
{
	const char *tk = ev_model_table(t)->key;
	double fin = 0, cr = 0, fa = 0;
	bool all_positive = true;
	for (size_t k = 0; k < p->ngroups; k++) {
		const struct ev_flow_rates *g = &p->g[k].fr;
		if (!g->known) {
			/* (A group the mirror never met: window counts only.) */
			all_positive = false;
			continue;
		}
		fin += g->finished_per_min;
		cr += g->created_per_min;
		fa += g->failed_per_min;
		all_positive = all_positive && g->finished_per_min > 0;
	}
	const struct ev_flow_rates *x = &p->total;
	double eps = 1e-6 * (1 + x->created_per_min + x->finished_per_min + x->failed_per_min);
	if (cr - x->created_per_min > eps || x->created_per_min - cr > eps)
		note(mm, "%s: %s by event_type: the groups' created/m add up to %.4f, totals %.4f",
		     label, tk, cr, x->created_per_min);
	if (fa - x->failed_per_min > eps || x->failed_per_min - fa > eps)
		note(mm, "%s: %s by event_type: the groups' FAIL/m add up to %.4f, totals %.4f",
		     label, tk, fa, x->failed_per_min);
	if (all_positive ? fin - x->finished_per_min > eps || x->finished_per_min - fin > eps
	                 : fin < x->finished_per_min - eps)
		note(mm, "%s: %s by event_type: the groups' DONE/m add up to %.4f, totals %.4f%s",
		     label, tk, fin, x->finished_per_min,
		     all_positive ? "" : " (some group at 0: at least the totals' wanted)");
}

/* DONE/m (the rates by completion time) against the rows' own times at every refresh, and
 * before, in and after an outage beside the old window rate; the groups' rates against the
 * totals' on the same refreshes; the dimensions without flows. */
START_TEST(done_per_min_in_an_outage)
{
	open_evtop(false);
	truncate_tables();
	struct ev_mirror *m[EV_TABLE_COUNT];
	for (int t = 0; t < EV_TABLE_COUNT; t++) {
		m[t] = ev_mirror_new((enum ev_table_kind)t);
		ev_mirror_set_rate_span(m[t], FLOW_RATE_S);
	}
	const struct ev_mirror_opts o = {
	        .interval_s = 1, .reverify_s = 0, .check_s = 10, .settle_s = FLOW_SETTLE_S};
	struct flow_point *pts[EV_TABLE_COUNT];
	for (int t = 0; t < EV_TABLE_COUNT; t++)
		pts[t] = calloc(FLOW_MAX_POINTS, sizeof(struct flow_point));
	int npts = 0;

	char args[512];
	snprintf(args, sizeof(args), "%s --outage-every %ds --outage-for %dms", flow_world,
	         FLOW_OUTAGE_AT, FLOW_OUTAGE_AT * 1000 - 10);
	char *out_outage = scratch("sim-flow-outage.json"),
	     *out_after = scratch("sim-flow-after.json");
	long long u_start = server_unix();
	double m_start = mono_s(), m_after = 0;
	pid_t sim = sim_run(args, true, out_outage);
	int phase = 0; /* 0: the outage world, 1: the world after */
	long long u_after = -1;
	double took = 0.05; /* the last refresh of both tables, seconds */
	for (int i = 0; npts < FLOW_MAX_POINTS; i++) {
		/* Every refresh with the simulator still, from before its snapshot until the
		 * server's second has moved on: no row is half-way, and no row changed after the
		 * snapshot carries the snapshot's second. The refreshes start late in a second (the
		 * simulator runs most of the time), early enough that both end within it (the
		 * refresh's NOW() is then known: the second before and after it). */
		double at = 0.95 - 1.5 * took;
		sleep_until_frac(at < 0.02 ? 0.02 : at > 0.85 ? 0.85 : at);
		sim_pause(sim);
		long long u[EV_TABLE_COUNT + 1];
		struct ev_dash *d[EV_TABLE_COUNT];
		double r0 = mono_s();
		u[0] = server_unix();
		for (int t = 0; t < EV_TABLE_COUNT; t++) {
			struct ev_dash_req req = mkreq((enum ev_table_kind)t, "event_type",
			                               FLOW_WINDOW_S, LIVE_STUCK_S);
			d[t] = mfetch(m[t], &req, &o);
			u[t + 1] = server_unix();
		}
		took = mono_s() - r0;
		while (server_unix() <= u[EV_TABLE_COUNT])
			usleep(5000);
		sim_resume(sim);
		for (int t = 0; t < EV_TABLE_COUNT; t++) {
			ck_assert_msg(d[t]->mirror.on && d[t]->flow_on,
			              "refresh %d: %s: the mirror or its flows are off", i,
			              ev_model_table(t)->key);
			ck_assert_msg(d[t]->mirror.drift == 0,
			              "refresh %d: %s: the full check found the mirror off by %lld",
			              i, ev_model_table(t)->key, d[t]->mirror.drift);
			flow_record(&pts[t][npts], d[t], i, u[t] == u[t + 1] ? u[t] : -1);
			ev_dash_free(&d[t]);
		}
		npts++;
		if (phase == 0 && mono_s() - m_start >= FLOW_OUTAGE_END) {
			json_t *j = sim_stop_file(sim, out_outage);
			ck_assert_int_ge(json_integer_value(json_object_get(j, "outages")), 1);
			ck_assert_int_gt(sim_count(j, "outbox", "failed"), 100);
			ck_assert_int_gt(sim_count(j, "message", "failed"), 100);
			json_decref(j);
			u_after = server_unix();
			m_after = mono_s();
			sim = sim_run(flow_world, true, out_after);
			phase = 1;
		} else if (phase == 1 && mono_s() - m_after >= FLOW_AFTER_S) {
			break;
		}
	}
	json_t *j = sim_stop_file(sim, out_after);
	ck_assert_int_gt(sim_count(j, "outbox", "succeeded"), 100);
	json_decref(j);
	free(out_outage);
	free(out_after);

	/* Every point with its NOW() known and a span of 10 s or more against its truth; the
	 * groups against the totals at every point. */
	struct mm mm = {0};
	int checked[EV_TABLE_COUNT] = {0};
	for (int k = 0; k < npts; k++)
		for (int t = 0; t < EV_TABLE_COUNT; t++) {
			const struct flow_point *p = &pts[t][k];
			char label[64];
			snprintf(label, sizeof(label), "refresh %d", p->refresh);
			if (p->total.known)
				flow_check_groups((enum ev_table_kind)t, p, label, &mm);
			if (p->now < 0 || !p->total.known || p->total.span_s < 10)
				continue;
			flow_check_point((enum ev_table_kind)t, p, label, &mm, NULL);
			checked[t]++;
		}
	ck_assert_msg(mm.n == 0, "%d mismatches:\n%s", mm.n, mm.first);

	/* The three moments: before the outage (the span ends before it), in it (the span and
	 * its settle inside it), after it (20 s into the world without outage). */
	for (int t = 0; t < EV_TABLE_COUNT; t++) {
		const char *tk = ev_model_table(t)->key;
		ck_assert_msg(checked[t] >= 20, "%s: only %d refreshes compared", tk, checked[t]);
		const struct flow_point *pre = NULL, *in = NULL, *after = NULL;
		for (int k = 0; k < npts; k++) {
			const struct flow_point *p = &pts[t][k];
			if (p->now < 0 || !p->total.known || p->total.span_s < 10)
				continue;
			long long from = p->now - (long long)(p->total.span_s + 0.5);
			if (p->now <= u_start + FLOW_OUTAGE_AT - 1)
				pre = p;
			if (p->now < u_after &&
			    from - FLOW_SETTLE_S >= u_start + FLOW_OUTAGE_AT + 2)
				in = p;
			if (p->now >= u_after + FLOW_AFTER_S - 5)
				after = p;
		}
		ck_assert_msg(pre && in && after,
		              "%s: a moment without a refresh (before %d, in %d, "
		              "after %d)",
		              tk, pre != NULL, in != NULL, after != NULL);
		const struct flow_point *mo[3] = {pre, in, after};
		static const char *const mname[3] = {"before the outage", "in the outage",
		                                     "after the outage"};
		double want[3], raw[3];
		for (int i = 0; i < 3; i++) {
			want[i] = flow_check_point((enum ev_table_kind)t, mo[i], mname[i], &mm,
			                           &raw[i]);
			fprintf(stderr,
			        "done_per_min_in_an_outage: %s %s (refresh %d, %.0f s): DONE/m "
			        "%.1f, "
			        "truth %.1f (completions alone %.1f), FAIL/m %.1f, created/m %.1f, "
			        "window rate %.1f\n",
			        tk, mname[i], mo[i]->refresh, mo[i]->total.span_s,
			        mo[i]->total.finished_per_min, want[i], raw[i],
			        mo[i]->total.failed_per_min, mo[i]->total.created_per_min,
			        mo[i]->window_done);
		}
		ck_assert_msg(mm.n == 0, "%d mismatches:\n%s", mm.n, mm.first);
		ck_assert_msg(pre->total.finished_per_min >= 1200,
		              "%s, totals, before the outage: DONE/m = %.1f, want >= 1200 (40 "
		              "events/s)",
		              tk, pre->total.finished_per_min);
		/* In the outage DONE/m falls (to the cancels: the outbox's producer cancels the
		 * failed events of cancelled orders), the old rate does not: it counts the rows
		 * created in the window that finished, most of them before the outage. */
		ck_assert_msg(in->total.finished_per_min <= 0.1 * pre->total.finished_per_min,
		              "%s, totals, in the outage: DONE/m = %.1f, want <= %.1f (a tenth of "
		              "before the outage)",
		              tk, in->total.finished_per_min, 0.1 * pre->total.finished_per_min);
		ck_assert_msg(in->window_known && in->window_done >= 0.8 * pre->window_done,
		              "%s, totals, in the outage: the window rate = %.1f, want >= %.1f (it "
		              "does not see the outage)",
		              tk, in->window_done, 0.8 * pre->window_done);
		ck_assert_msg(
		        in->window_done > 3 * in->total.finished_per_min,
		        "%s, totals, in the outage: the window rate = %.1f, want > 3 x DONE/m "
		        "%.1f",
		        tk, in->window_done, in->total.finished_per_min);
		ck_assert_msg(in->total.failed_per_min > 0,
		              "%s, totals, in the outage: FAIL/m = %.1f, want > 0", tk,
		              in->total.failed_per_min);
		ck_assert_msg(after->total.finished_per_min >= 0.5 * pre->total.finished_per_min,
		              "%s, totals, after the outage: DONE/m = %.1f, want >= %.1f", tk,
		              after->total.finished_per_min, 0.5 * pre->total.finished_per_min);
	}

	/* The dimensions without flows: their groups have none, the totals do; topic (the
	 * outbox) has them. */
	static const char *const dims[] = {"source", "biz_type", "channel", "topic"};
	for (int t = 0; t < EV_TABLE_COUNT; t++) {
		const struct ev_table_def *def = ev_model_table(t);
		for (size_t k = 0; k < sizeof(dims) / sizeof(dims[0]); k++) {
			if (ev_model_dimension(def, dims[k]) == NULL)
				continue;
			bool flows = strcmp(dims[k], "topic") == 0;
			struct ev_dash_req req =
			        mkreq((enum ev_table_kind)t, dims[k], FLOW_WINDOW_S, LIVE_STUCK_S);
			struct ev_dash *d = mfetch(m[t], &req, &o);
			ck_assert_msg(d->total.flow.known, "%s by %s, totals: flow.known = false",
			              def->key, dims[k]);
			ck_assert_msg(d->nrows > 0, "%s by %s: no groups", def->key, dims[k]);
			for (size_t r = 0; r < d->nrows; r++)
				ck_assert_msg(d->rows[r].flow.known == flows,
				              "%s by %s, group %s: flow.known = %d, want %d",
				              def->key, dims[k], gname(d->rows[r].group),
				              d->rows[r].flow.known, flows);
			if (flows) {
				struct flow_point *p = calloc(1, sizeof(*p));
				flow_record(p, d, -1, -1);
				flow_check_groups((enum ev_table_kind)t, p, "by topic", &mm);
				flow_point_free(p);
				free(p);
				ck_assert_msg(mm.n == 0, "%d mismatches:\n%s", mm.n, mm.first);
			}
			ev_dash_free(&d);
		}
	}
	for (int t = 0; t < EV_TABLE_COUNT; t++) {
		for (int k = 0; k < npts; k++)
			flow_point_free(&pts[t][k]);
		free(pts[t]);
		ck_assert_int_eq(ev_mirror_drift_total(m[t]), 0);
		ev_mirror_free(&m[t]);
	}
}
END_TEST

/* --- case 9: rows deleted outright finished nothing ------------------------------------------- */

/* n rows of status st per table, created an hour ago (the flows count none of them as created),
 * ids base + 1 .. base + n, event types cycling over three. */
static void flow_bulk(long long base, int n, int st)
{
	tdb_exec(
	        db,
	        "INSERT INTO biz_outbox_event (id, event_no, aggregate_type, aggregate_id, "
	        "event_type, event_source, publish_channel, event_payload, publish_status, "
	        "retry_count, max_retry_count, next_retry_time, lock_until, locked_by, "
	        "create_time, update_time) SELECT %lld + n, CONCAT('FL-', %lld + n), 'ORDER', n, "
	        "ELT(1 + n %% 3, 'ORDER_PAID', 'ORDER_SHIPPED', 'STOCK_DEDUCTED'), 'bulk', 'MQ', "
	        "'{}', %d, IF(%d = 3, n %% 6, 0), 5, IF(%d = 3 AND n %% 7 <> 0, NOW() + INTERVAL "
	        "((n %% 100 - 50) * 10 + 5) MINUTE, NULL), IF(%d = 1, NOW() + INTERVAL IF(n %% 2, "
	        "1, -1) HOUR, NULL), IF(%d = 1, 'publisher-t', NULL), NOW() - INTERVAL 1 HOUR, "
	        "NOW() - INTERVAL 1 HOUR FROM (SELECT CAST(seq AS SIGNED) AS n FROM seq_1_to_%d) s",
	        base, base, st, st, st, st, st, n);
	tdb_exec(db,
	         "INSERT INTO biz_message_event (id, event_no, event_type, biz_type, biz_id, "
	         "event_source, event_payload, event_status, retry_count, max_retry_count, "
	         "next_retry_time, last_handle_time, create_time, update_time) SELECT %lld + n, "
	         "CONCAT('FL-', %lld + n), ELT(1 + n %% 3, 'ORDER_PAID', 'ORDER_SHIPPED', "
	         "'STOCK_DEDUCTED'), 'ORDER', n, 'bulk', '{}', %d, IF(%d = 3, n %% 6, 0), 5, "
	         "IF(%d = 3 AND n %% 7 <> 0, NOW() + INTERVAL ((n %% 100 - 50) * 10 + 5) MINUTE, "
	         "NULL), IF(%d = 1, NOW() - INTERVAL IF(n %% 2, 0, 2) HOUR, NULL), NOW() - "
	         "INTERVAL 1 HOUR, NOW() - INTERVAL 1 HOUR FROM (SELECT CAST(seq AS SIGNED) AS n "
	         "FROM seq_1_to_%d) s",
	         base, base, st, st, st, st, n);
}

/* The rows the rates say finished over their span. */
static double flow_rows(const struct ev_flow_rates *r)
{
	return r->finished_per_min * r->span_s / 60.0;
}

/* A refresh of both tables' mirrors in a server second after `*last` (the last refresh's);
 * the dashboards into d; whether each made a full check (NULL: not wanted). */
static void flow_refresh_both(struct ev_mirror **m, const struct ev_mirror_opts *o, long long *last,
                              struct ev_dash **d, bool *checked)
{
	while (server_unix() <= *last)
		usleep(5000);
	for (int t = 0; t < EV_TABLE_COUNT; t++) {
		struct ev_dash_req req =
		        mkreq((enum ev_table_kind)t, "event_type", WINDOW, STUCK_S);
		double m0 = mono_s();
		d[t] = mfetch(m[t], &req, o);
		double m1 = mono_s();
		ck_assert(d[t]->mirror.on && d[t]->flow_on);
		/* A check made by this refresh is younger than the refresh; the last one made
		 * before it is older. */
		if (checked != NULL)
			checked[t] = d[t]->mirror.check_age_s >= 0 &&
			             d[t]->mirror.check_age_s <= m1 - m0;
	}
	*last = server_unix();
}

static void flow_free_both(struct ev_dash **d)
{
	for (int t = 0; t < EV_TABLE_COUNT; t++)
		ev_dash_free(&d[t]);
}

/* finished over the span == want rows, for the totals. */
static void assert_flow_rows(const struct ev_dash *d, enum ev_table_kind t, double want,
                             const char *when)
{
	const struct ev_flow_rates *r = &d->total.flow;
	ck_assert_msg(r->known, "%s: %s, totals: flow.known = false", when, ev_model_table(t)->key);
	double got = flow_rows(r);
	ck_assert_msg(got > want - 1e-6 && got < want + 1e-6,
	              "%s: %s, totals: finished rows over the span = %.4f (DONE/m %.4f over %.0f "
	              "s), want %.0f",
	              when, ev_model_table(t)->key, got, r->finished_per_min, r->span_s, want);
}

START_TEST(rows_deleted_outright_finished_nothing)
{
	open_evtop(false);
	truncate_tables();
	flow_bulk(1000000, 2000, 0);
	struct ev_mirror *m[EV_TABLE_COUNT];
	for (int t = 0; t < EV_TABLE_COUNT; t++)
		m[t] = ev_mirror_new((enum ev_table_kind)t);
	const struct ev_mirror_opts o = {
	        .interval_s = 1, .reverify_s = 0, .check_s = 1000000, .settle_s = FLOW_SETTLE_S};
	struct ev_dash *d[EV_TABLE_COUNT];
	long long last = 0;
	flow_refresh_both(m, &o, &last, d, NULL);
	flow_free_both(d);
	/* A pair with nothing done: nothing finished. */
	flow_refresh_both(m, &o, &last, d, NULL);
	for (int t = 0; t < EV_TABLE_COUNT; t++)
		assert_flow_rows(d[t], (enum ev_table_kind)t, 0, "nothing done");
	flow_free_both(d);
	/* A pair with 500 rows succeeded: 500 finished. */
	for (int t = 0; t < EV_TABLE_COUNT; t++) {
		const struct ev_table_def *def = ev_model_table(t);
		ck_assert_int_eq(
		        upd("UPDATE %s SET %s = 2, %s = NOW(), update_time = NOW() WHERE id "
		            "BETWEEN 1000001 AND 1000500",
		            def->default_name, def->status_col,
		            def->has_lock ? "published_time" : "success_time"),
		        500);
	}
	flow_refresh_both(m, &o, &last, d, NULL);
	for (int t = 0; t < EV_TABLE_COUNT; t++)
		assert_flow_rows(d[t], (enum ev_table_kind)t, 500, "500 succeeded");
	flow_free_both(d);
	/* A pair without a change: still the 500 (the span holds them). */
	flow_refresh_both(m, &o, &last, d, NULL);
	for (int t = 0; t < EV_TABLE_COUNT; t++)
		assert_flow_rows(d[t], (enum ev_table_kind)t, 500, "a pair without a change");
	flow_free_both(d);
	/* A pair with 500 backlog rows deleted in one statement: they left, and finished
	 * nothing. */
	for (int t = 0; t < EV_TABLE_COUNT; t++)
		ck_assert_int_eq(upd("DELETE FROM %s WHERE id BETWEEN 1000501 AND 1001000",
		                     ev_model_table(t)->default_name),
		                 500);
	flow_refresh_both(m, &o, &last, d, NULL);
	for (int t = 0; t < EV_TABLE_COUNT; t++) {
		ck_assert_msg(d[t]->mirror.left == 500, "%s: %lld rows left, want 500",
		              ev_model_table(t)->key, d[t]->mirror.left);
		ck_assert_int_eq(d[t]->total.f[EV_DASH_PENDING].value, 1000);
		assert_flow_rows(d[t], (enum ev_table_kind)t, 500, "500 deleted outright");
		ck_assert_msg(d[t]->total.flow.created_per_min == 0,
		              "%s, totals: created/m = %f, want 0", ev_model_table(t)->key,
		              d[t]->total.flow.created_per_min);
	}
	flow_free_both(d);
	/* Two refreshes within one server second (a refresh every 0.5 s, a key pressed): the
	 * second's interval is 0 s long and keeps the span. */
	bool same = false;
	for (int attempt = 0; attempt < 5 && !same; attempt++) {
		flow_refresh_both(m, &o, &last, d, NULL);
		double span[EV_TABLE_COUNT];
		for (int t = 0; t < EV_TABLE_COUNT; t++)
			span[t] = d[t]->total.flow.span_s;
		flow_free_both(d);
		long long before = last;
		for (int t = 0; t < EV_TABLE_COUNT; t++) {
			struct ev_dash_req req =
			        mkreq((enum ev_table_kind)t, "event_type", WINDOW, STUCK_S);
			d[t] = mfetch(m[t], &req, &o);
		}
		last = server_unix();
		same = last == before;
		if (same)
			for (int t = 0; t < EV_TABLE_COUNT; t++) {
				assert_flow_rows(d[t], (enum ev_table_kind)t, 500,
				                 "a second refresh in the same second");
				ck_assert_msg(d[t]->total.flow.span_s == span[t],
				              "%s: span %.0f s after a refresh in the same second, "
				              "%.0f s before",
				              ev_model_table(t)->key, d[t]->total.flow.span_s,
				              span[t]);
			}
		flow_free_both(d);
	}
	ck_assert_msg(same, "no two refreshes within one server second in 5 attempts");
	for (int t = 0; t < EV_TABLE_COUNT; t++)
		ev_mirror_free(&m[t]);
}
END_TEST

/* --- case 10: the failed range carried -------------------------------------------------------- */

/* The mirror's dashboard of each table against the reference figures ref[t] (by event_type and
 * the totals), and what the refresh says of the failed range and the full check. */
static void carried_compare(struct ev_dash **d, struct gset *ref, int refresh, struct mm *mm)
{
	for (int t = 0; t < EV_TABLE_COUNT; t++)
		live_compare((enum ev_table_kind)t, d[t], &ref[t], refresh, mm);
}

START_TEST(the_failed_range_carried)
{
	open_evtop(false);
	truncate_tables();
	/* 6000 failed rows (due, waiting, no retry, exhausted), 100 processing (half of them
	 * stuck), no pending one: every figure stands still while the clock moves. */
	flow_bulk(2000000, 6000, 3);
	flow_bulk(3000000, 100, 1);
	struct ev_mirror *m[EV_TABLE_COUNT];
	for (int t = 0; t < EV_TABLE_COUNT; t++)
		m[t] = ev_mirror_new((enum ev_table_kind)t);
	/* The rolling share is one row a refresh (the lowest ids first), a full check due at
	 * every refresh. */
	const struct ev_mirror_opts o = {
	        .interval_s = 1, .reverify_s = 1000000, .check_s = 1, .settle_s = FLOW_SETTLE_S};
	struct ev_dash *d[EV_TABLE_COUNT];
	struct gset ref[EV_TABLE_COUNT];
	struct mm mm = {0};
	long long last = 0;

	/* Refresh 0 reads every range (a new mirror). */
	for (int t = 0; t < EV_TABLE_COUNT; t++)
		ck_assert(ev_mirror_read_failed(m[t]));
	flow_refresh_both(m, &o, &last, d, NULL);
	for (int t = 0; t < EV_TABLE_COUNT; t++) {
		gset_load((enum ev_table_kind)t, STUCK_S, &ref[t]);
		ck_assert_int_eq(ref[t].total.f[3], 6000); /* backlog_figs[3]: failed */
		ck_assert_int_eq(d[t]->mirror.failed_age_s, 0);
		ck_assert_int_eq(d[t]->mirror.drift, 0);
		ck_assert_msg(d[t]->mirror.check_age_s >= 0, "%s: no full check at the start",
		              ev_model_table(t)->key);
	}
	carried_compare(d, ref, 0, &mm);
	ck_assert_msg(mm.n == 0, "%d mismatches:\n%s", mm.n, mm.first);
	flow_free_both(d);
	for (int t = 0; t < EV_TABLE_COUNT; t++)
		gset_free(&ref[t]);

	/* Refresh 1 carries the failed range: a processing row failed (the model's failure
	 * UPDATE, 1 -> 3) and a failed one claimed for its retry (3 -> 1) are exact at once,
	 * from the processing range and the key read. */
	for (int t = 0; t < EV_TABLE_COUNT; t++) {
		const struct ev_table_def *def = ev_model_table(t);
		const char *tn = def->default_name, *st = def->status_col;
		char *a = pick(def, 1, 0, NULL);
		char *b = pick(def, 3, 0,
		               "retry_count < max_retry_count AND next_retry_time <= NOW()");
		ck_assert(a != NULL && b != NULL);
		ck_assert_int_eq(
		        upd("UPDATE %s SET %s = 3, retry_count = retry_count + 1, "
		            "next_retry_time = NOW() + INTERVAL 30 MINUTE, fail_reason = "
		            "'下游超时'%s, update_time = NOW() WHERE id = %s AND deleted = 0 "
		            "AND %s = 1",
		            tn, st, def->has_lock ? ", locked_by = NULL, lock_until = NULL" : "", a,
		            st),
		        1);
		ck_assert_int_eq(
		        upd("UPDATE %s SET %s = 1, %s, version = version + 1, update_time = "
		            "NOW() WHERE id = %s AND deleted = 0 AND %s = 3",
		            tn, st,
		            def->has_lock ? "locked_by = 'publisher-t', lock_until = NOW() "
		                            "+ INTERVAL 1 HOUR"
		                          : "last_handle_time = NOW()",
		            b, st),
		        1);
		free(a);
		free(b);
		ck_assert_msg(!ev_mirror_read_failed(m[t]),
		              "%s: the failed range (6000 rows) is read at refresh 1",
		              ev_model_table(t)->key);
		gset_load((enum ev_table_kind)t, STUCK_S, &ref[t]);
	}
	bool checked[EV_TABLE_COUNT];
	flow_refresh_both(m, &o, &last, d, checked);
	carried_compare(d, ref, 1, &mm);
	ck_assert_msg(mm.n == 0, "%d mismatches:\n%s", mm.n, mm.first);
	for (int t = 0; t < EV_TABLE_COUNT; t++) {
		ck_assert_msg(d[t]->mirror.failed_age_s > 0,
		              "refresh 1: %s: failed_age_s = %lld, want > 0 (carried)",
		              ev_model_table(t)->key, d[t]->mirror.failed_age_s);
		ck_assert_msg(!checked[t],
		              "refresh 1: %s: a full check on a refresh that carried the failed "
		              "range",
		              ev_model_table(t)->key);
	}
	flow_free_both(d);

	/* A failed row cancelled (3 -> 4) and one deleted outright: still counted (the figures
	 * as before, ref) until the failed range is read again, within 5 refreshes; then exact
	 * again, the figures 0 s old, and the full check finds nothing. */
	for (int t = 0; t < EV_TABLE_COUNT; t++) {
		const struct ev_table_def *def = ev_model_table(t);
		const char *tn = def->default_name, *st = def->status_col;
		/* The highest ids: the rolling share (from the lowest) does not read them. */
		long long c = tdb_int(db, "SELECT MAX(id) FROM %s WHERE %s = 3", tn, st);
		long long x =
		        tdb_int(db, "SELECT MAX(id) FROM %s WHERE %s = 3 AND id < %lld", tn, st, c);
		ck_assert_int_eq(
		        upd("UPDATE %s SET %s = 4, fail_reason = '业务已关闭', update_time = "
		            "NOW() WHERE id = %lld AND %s = 3",
		            tn, st, c, st),
		        1);
		ck_assert_int_eq(upd("DELETE FROM %s WHERE id = %lld", tn, x), 1);
	}
	struct gset now_ref[EV_TABLE_COUNT];
	for (int t = 0; t < EV_TABLE_COUNT; t++)
		gset_load((enum ev_table_kind)t, STUCK_S, &now_ref[t]);
	ck_assert_int_eq(now_ref[0].total.f[3], ref[0].total.f[3] - 2);
	bool read = false;
	int r;
	for (r = 2; r < 2 + EV_MIRROR_FAILED_EVERY && !read; r++) {
		read = ev_mirror_read_failed(m[0]);
		for (int t = 1; t < EV_TABLE_COUNT; t++)
			ck_assert(ev_mirror_read_failed(m[t]) == read);
		flow_refresh_both(m, &o, &last, d, checked);
		carried_compare(d, read ? now_ref : ref, r, &mm);
		ck_assert_msg(mm.n == 0, "refresh %d (%s): %d mismatches:\n%s", r,
		              read ? "the failed range read" : "the failed range carried", mm.n,
		              mm.first);
		for (int t = 0; t < EV_TABLE_COUNT; t++) {
			const char *tk = ev_model_table(t)->key;
			ck_assert_msg(d[t]->mirror.drift == 0, "refresh %d: %s: drift %lld", r, tk,
			              d[t]->mirror.drift);
			if (read) {
				ck_assert_msg(d[t]->mirror.failed_age_s == 0,
				              "refresh %d: %s: failed_age_s = %lld on the refresh "
				              "that read the failed range, want 0",
				              r, tk, d[t]->mirror.failed_age_s);
				ck_assert_msg(
				        checked[t],
				        "refresh %d: %s: no full check on the refresh that read "
				        "every range (last %.1f s ago)",
				        r, tk, d[t]->mirror.check_age_s);
			} else {
				ck_assert_msg(
				        d[t]->mirror.failed_age_s > 0,
				        "refresh %d: %s: failed_age_s = %lld, want > 0 (carried)",
				        r, tk, d[t]->mirror.failed_age_s);
				ck_assert_msg(
				        !checked[t],
				        "refresh %d: %s: a full check on a refresh that carried "
				        "the failed range",
				        r, tk);
			}
		}
		flow_free_both(d);
	}
	ck_assert_msg(read, "the failed range not read in %d refreshes", EV_MIRROR_FAILED_EVERY);
	for (int t = 0; t < EV_TABLE_COUNT; t++) {
		gset_free(&ref[t]);
		gset_free(&now_ref[t]);
		ck_assert_int_eq(ev_mirror_drift_total(m[t]), 0);
		ev_mirror_free(&m[t]);
	}
}
END_TEST

/* --- the range digests ------------------------------------------------------------------------ */

/* Each row's part of a range digest, as the server computes it, against the mirror's own: the
 * same for every id, time and retry count the mirror keeps as they are; a time it keeps
 * clamped (before 1932, after 2068) differs, and so makes a range read whole. */
START_TEST(range_digests_are_the_servers)
{
	open_evtop(true);
	load_seed();
	const char *tn = "biz_outbox_event";
	tdb_exec(db, "DELETE FROM %s WHERE id IN (0, 18446744073709551615)", tn);
	tdb_exec(
	        db,
	        "INSERT INTO %s (id, event_no, aggregate_type, aggregate_id, event_type, "
	        "event_source, publish_channel, topic, event_payload, publish_status, retry_count, "
	        "max_retry_count, next_retry_time, lock_until, version, create_time, update_time) "
	        "VALUES "
	        "(18446744073709551615, 'D-1', 'O', 'd1', 'e', 's', 'MQ', 't', '{}', 3, "
	        "2147483647, "
	        "5, '2068-01-19 03:14:07', NULL, 1, NOW(), NOW()), "
	        "(9223372036854775808, 'D-2', 'O', 'd2', 'e', 's', 'MQ', 't', '{}', 3, "
	        "-2147483648, "
	        "5, '1932-01-01 00:00:00', NULL, 1, NOW(), NOW()), "
	        "(9223372036854775807, 'D-3', 'O', 'd3', 'e', 's', 'MQ', 't', '{}', 0, -1, 5, "
	        "NULL, "
	        "NULL, 1, NOW(), NOW()), "
	        "(0, 'D-4', 'O', 'd4', 'e', 's', 'MQ', 't', '{}', 3, 0, 5, '2026-02-28 23:59:59', "
	        "NULL, 1, NOW(), NOW()), "
	        "(4294967291, 'D-5', 'O', 'd5', 'e', 's', 'MQ', 't', '{}', 3, 3, 5, "
	        "'2000-01-01 00:00:00', NULL, 1, NOW(), NOW()), "
	        "(4294967279, 'D-6', 'O', 'd6', 'e', 's', 'MQ', 't', '{}', 3, 1, 5, "
	        "'2024-02-29 12:00:00', NULL, 1, NOW(), NOW()), "
	        "(900001, 'D-7', 'O', 'd7', 'e', 's', 'MQ', 't', '{}', 3, 1, 5, "
	        "'9999-12-31 23:59:59', NULL, 1, NOW(), NOW()), "
	        "(900002, 'D-8', 'O', 'd8', 'e', 's', 'MQ', 't', '{}', 3, 1, 5, "
	        "'1000-01-01 00:00:00', NULL, 1, NOW(), NOW())",
	        tn);
	/* The server's part of each row: the aggregate's own expression, row by row. */
	struct ev_dash_req req = mkreq(EV_TABLE_OUTBOX, NULL, WINDOW, STUCK_S);
	struct ev_error err = {0};
	struct ev_query *q = ev_mirror_query_digest(&req, 3, &err);
	ck_assert_msg(q != NULL, "%s", err.msg);
	const char *x = strstr(q->sql, "BIT_XOR(");
	ck_assert_ptr_nonnull(x);
	const char *from = strstr(x, " FROM ");
	char *expr = strndup(x + 8, (size_t)(from - x - 8 - 1));
	char sql[1024];
	snprintf(sql, sizeof(sql),
	         "SELECT id, next_retry_time, retry_count, %s FROM %s WHERE publish_status IN (0, "
	         "1, 3) ORDER BY id",
	         expr, tn);
	free(expr);
	ck_assert_msg(mysql_query(db, sql) == 0, "%s: %s", sql, mysql_error(db));
	MYSQL_RES *res = mysql_store_result(db);
	ck_assert_ptr_nonnull(res);
	MYSQL_ROW row;
	int same = 0, differ = 0;
	while ((row = mysql_fetch_row(res)) != NULL) {
		uint64_t id = strtoull(row[0], NULL, 10), server = strtoull(row[3], NULL, 10);
		uint64_t mine = ev_mirror_row_digest(id, row[1], row[2]);
		bool clamped = row[1] != NULL &&
		               (strncmp(row[1], "9999", 4) == 0 || strncmp(row[1], "1000", 4) == 0);
		if (clamped) {
			ck_assert_msg(mine != server, "id %s (%s): a clamped time's digest matched",
			              row[0], row[1]);
			differ++;
		} else {
			ck_assert_msg(
			        mine == server,
			        "id %s, next_retry_time %s, retry_count %s: the server's digest "
			        "%s, the mirror's %llu",
			        row[0], row[1] ? row[1] : "NULL", row[2], row[3],
			        (unsigned long long)mine);
			same++;
		}
	}
	mysql_free_result(res);
	ck_assert_int_ge(same, 8);
	ck_assert_int_eq(differ, 2);

	/* The aggregate: a mirror read whole agrees with the server's digest of the pending range
	 * (no clamped time there), and a row changed behind it makes them differ. */
	ev_mirror_set_digest_min(1);
	const struct ev_mirror_opts o = {.interval_s = 1};
	struct ev_mirror *m = ev_mirror_new(EV_TABLE_OUTBOX);
	for (int r = 0; r < 3; r++) {
		struct ev_dash *d = mfetch(m, &req, &o);
		ck_assert(d->mirror.on);
		if (r > 0) {
			/* The pending range verified (arrivals none), the failed one read whole
			 * (its clamped times): digests 1 or more, the pending one never read again.
			 */
			ck_assert_int_ge(d->mirror.digests, 1);
			ck_assert_int_eq(d->mirror.rereads, r == 1 ? 1 : 0);
		}
		ev_dash_free(&d);
	}
	ev_query_free(&q);
	ev_mirror_free(&m);
	tdb_exec(db, "DELETE FROM %s WHERE event_no LIKE 'D-%%'", tn);
	load_seed();

	/* The rolling share's checksums: on the seed (CJK groups, NULL topics and times), every
	 * row's is the server's, refresh after refresh with the whole mirror in the share; a soft
	 * delete behind the mirror's back is seen by its checksum. */
	for (int t = 0; t < EV_TABLE_COUNT; t++) {
		const struct ev_table_def *def = ev_model_table(t);
		struct ev_dash_req r = mkreq((enum ev_table_kind)t, "event_type", WINDOW, STUCK_S);
		const struct ev_mirror_opts all = {.interval_s = 1, .reverify_s = 1};
		m = ev_mirror_new((enum ev_table_kind)t);
		long long pending = -1;
		for (int k = 0; k < 3; k++) {
			if (k == 2)
				ck_assert_int_eq(
				        upd("UPDATE %s SET deleted = 1 WHERE %s = 0 AND deleted = "
				            "0 ORDER BY id LIMIT 1",
				            def->default_name, def->status_col),
				        1);
			struct ev_dash *d = mfetch(m, &r, &all);
			ck_assert(d->mirror.on);
			if (k == 1)
				pending = d->total.f[EV_DASH_PENDING].value;
			if (k == 2)
				ck_assert_int_eq(d->total.f[EV_DASH_PENDING].value, pending - 1);
			ev_dash_free(&d);
			ck_assert_msg(!ev_mirror_share_plain(m),
			              "%s: refresh %d: the share could not reproduce a checksum",
			              def->key, k);
		}
		ev_mirror_free(&m);
	}
	load_seed();
}
END_TEST

int main(void)
{
	Suite *s = suite_create("mirror_db");
	TCase *tc = tcase_create("mirror_db");
	tcase_set_timeout(tc, 240);
	tcase_add_checked_fixture(tc, setup, teardown);
	/* EVTOP_TEST_ONLY=word: only the cases whose name has it. */
	const char *only = getenv("EVTOP_TEST_ONLY");
#define ADD(fn)                                                                                    \
	if (!only || strstr(#fn, only))                                                            \
	tcase_add_test(tc, fn)
	ADD(seed_every_figure_equals_the_reference);
	ADD(what_no_index_carries);
	ADD(every_read_is_index_only);
	ADD(the_cap_falls_back_to_the_capped_counts);
	ADD(hostile_values_are_counted_right);
	if (!only || strstr("exact_under_change", only))
		tcase_add_loop_test(tc, exact_under_change, 0, 2);
	ADD(range_digests_are_the_servers);
	ADD(a_running_world_shows_no_drift);
	ADD(done_per_min_in_an_outage);
	ADD(rows_deleted_outright_finished_nothing);
	ADD(the_failed_range_carried);
	suite_add_tcase(s, tc);
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? 0 : 1;
}
