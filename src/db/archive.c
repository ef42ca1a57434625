/* evtop — an archive run (see archive.h). */
#include <config.h>

#include "db/archive.h"
#include "core/doctor.h"
#include "core/i18n.h"
#include "core/text.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static ev_archive_fault_fn fault_fn;
static void *fault_arg;

void ev_archive_set_fault(ev_archive_fault_fn fn, void *arg)
{
	fault_fn = fn;
	fault_arg = arg;
}

static int fault(enum ev_archive_point point, unsigned batch, struct ev_conn *c)
{
	return fault_fn != NULL ? fault_fn(point, batch, c, fault_arg) : 0;
}

static double mono_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int lock_aim(const struct ev_archive_ctx *x)
{
	return x->lock_aim_ms > 0 ? x->lock_aim_ms : EV_ARCHIVE_LOCK_MS;
}

static bool stopped(const struct ev_archive_ctx *x)
{
	return x->stop != NULL && atomic_load(x->stop);
}

/* Sleep up to ms, in short steps so that the stop flag ends it. */
static void nap(const struct ev_archive_ctx *x, double ms)
{
	while (ms > 0 && !stopped(x)) {
		double step = ms < 50 ? ms : 50;
		struct timespec ts = {0, (long)(step * 1e6)};
		nanosleep(&ts, NULL);
		ms -= step;
	}
}

static void report(const struct ev_archive_ctx *x, struct ev_archive_progress *p, double t0)
{
	p->elapsed_s = mono_s() - t0;
	p->rate = p->elapsed_s > 0 ? (double)p->moved / p->elapsed_s : 0;
	if (x->progress != NULL)
		x->progress(p, x->progress_arg);
}

/* Write the whole line, or fail with err. */
static int write_all(int fd, const char *s, struct ev_error *err)
{
	size_t len = strlen(s);
	while (len > 0) {
		ssize_t w = write(fd, s, len);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return ev_error_set(err, EV_ERR_GENERIC,
			                    _("cannot write the archive file: %s"),
			                    strerror(w < 0 ? errno : EIO));
		s += w;
		len -= (size_t)w;
	}
	return 0;
}

static int sync_file(int fd, struct ev_error *err)
{
	/* A pipe or a terminal cannot be synced: its reader has the lines already. */
	if (fsync(fd) < 0 && errno != EINVAL && errno != EROFS)
		return ev_error_set(err, EV_ERR_GENERIC, _("cannot sync the archive file: %s"),
		                    strerror(errno));
	return 0;
}

/* Wait while the replica lags more than allowed (or its lag cannot be read); false when the
 * stop flag or --until ended the wait. */
static bool wait_lag(const struct ev_archive_ctx *x, struct ev_archive_progress *p, double t0)
{
	char why[256], note[400];
	if (x->lag == NULL)
		return true;
	for (;;) {
		long long lag = 0;
		why[0] = '\0';
		int rc = x->lag(x->lag_arg, &lag, why, sizeof(why));
		if (rc == 0 && lag >= 0 && lag <= x->max_lag_s) {
			if (p->waiting != NULL) {
				p->waiting = NULL;
				report(x, p, t0);
			}
			return true;
		}
		if (rc < 0)
			snprintf(note, sizeof(note),
			         _("paused: the replica's lag cannot be read (%s)"), why);
		else if (lag < 0)
			snprintf(note, sizeof(note),
			         _("paused: the replica's lag reads NULL (its replication is "
			           "stopped)"));
		else
			snprintf(note, sizeof(note),
			         _("paused: the replica is %llds behind (--max-lag %llds)"), lag,
			         x->max_lag_s);
		ev_utf8_fix_tail(note); /* why may be long: cut on a whole character */
		p->waiting = note;
		report(x, p, t0);
		p->waiting = NULL;
		nap(x, 1000);
		if (stopped(x) || (x->until != 0 && time(NULL) >= x->until))
			return false;
		/* TRANSLATORS: the archive run waits for the replica (after its progress line). */
		p->waiting = _("paused");
	}
}

/* Are the rows of ids still online? The count of those still there (-1: unknown). */
static long long still_online(struct ev_conn *c, const struct ev_archive_spec *s,
                              const uint64_t *ids, size_t n)
{
	struct ev_error err = {0};
	struct ev_query *q = ev_archive_query_reread(s, ids, n);
	struct ev_rowset *rs = NULL;
	long long v = -1;
	/* A restarting server: a few tries. */
	for (int i = 0; i < 20 && v < 0; i++) {
		if (ev_conn_run(c, q, &rs, &err) == 0 && rs->nrows == 1 &&
		    ev_rowset_cell(rs, 0, 0)->s != NULL)
			v = atoll(ev_rowset_cell(rs, 0, 0)->s);
		ev_rowset_free(&rs);
		if (v < 0)
			sleep(1);
	}
	ev_query_free(&q);
	return v;
}

static int run_write(struct ev_conn *c, struct ev_query *q, size_t want, const char *what,
                     struct ev_error *err)
{
	unsigned long long affected = 0;
	int rc = ev_conn_write(c, q, &affected, err);
	ev_query_free(&q);
	if (rc < 0)
		return -1;
	if (affected != want)
		return ev_error_set(err, EV_ERR_GENERIC,
		                    _("%s changed %llu rows, not the %zu locked: rolled back"),
		                    what, affected, want);
	return 0;
}

static void audit(const struct ev_archive_ctx *x, const struct ev_archive_batch *b,
                  const char *result, const char *error, struct ev_error *err, int *rc)
{
	char now[32];
	ev_audit_time_now(now);
	char *line = ev_archive_audit_line(now, &x->who, x->spec, b, result, error);
	if (ev_audit_log_append(x->log, line, err) < 0)
		*rc = -1;
	free(line);
}

/* One batch from its choosing to its COMMIT: the rows chosen, those still there when locked
 * (ids, n of them) and the record of them (b). */
struct batch_state {
	const struct ev_archive_ctx *x;
	struct ev_archive_progress *p;
	struct ev_archive_result *out;
	unsigned number;
	struct ev_archive_pick pick;
	uint64_t *ids;
	size_t n;
	struct ev_archive_batch b;
	char first_ct[32], last_ct[32];
	double t_lock;
	struct ev_error err;
};

/* Read the candidates after the cursor and choose the batch's rows from them. */
static int choose(struct batch_state *st, size_t size, const struct ev_archive_cursor *cursor)
{
	const struct ev_archive_ctx *x = st->x;
	struct ev_archive_progress *p = st->p;
	struct ev_rowset *rs = NULL;
	size_t limit = size * EV_ARCHIVE_EXAMINE_FACTOR;

	struct ev_query *q = ev_archive_query_candidates(x->spec, cursor, limit);
	int r = ev_conn_run(x->conn, q, &rs, &st->err);
	ev_query_free(&q);
	if (r < 0) {
		ev_rowset_free(&rs);
		return -1;
	}
	ev_archive_pick(x->spec, rs, size, limit, &st->pick);
	ev_rowset_free(&rs);
	fault(EV_ARCHIVE_AFTER_READ, st->number, x->conn);
	p->examined += st->pick.examined;
	p->kept_backlog += st->pick.kept_backlog;
	p->kept_status += st->pick.kept_status;
	p->kept_deleted += st->pick.kept_deleted;
	return 0;
}

/* The intent: the rows chosen, written before their locks are taken (its fsync is not part of
 * the lock holding); the result line says what the batch moved. */
static int write_intent(struct batch_state *st)
{
	struct ev_archive_batch intent = {.run_id = st->x->run_id,
	                                  .number = st->number,
	                                  .first_id = st->pick.ids[0],
	                                  .last_id = st->pick.ids[st->pick.n - 1],
	                                  .rows = st->pick.n};
	int irc = 0;
	audit(st->x, &intent, "intent", NULL, &st->err, &irc);
	return irc;
}

/* Lock the chosen rows (a row changed since its reading is not locked) and describe those
 * locked in ids, n and b. */
static int lock_rows(struct batch_state *st, struct ev_rowset **locked)
{
	const struct ev_archive_spec *s = st->x->spec;
	struct ev_archive_batch *b = &st->b;

	st->t_lock = mono_s();
	struct ev_query *q =
	        ev_archive_query_lock(s, st->pick.ids, st->pick.n, s->target == EV_ARCHIVE_TO_FILE);
	int r = ev_conn_run(st->x->conn, q, locked, &st->err);
	ev_query_free(&q);
	if (r < 0)
		return -1;
	st->p->changed += st->pick.n - (*locked)->nrows;
	size_t n = st->n = (*locked)->nrows;
	st->ids = ev_xcalloc(n ? n : 1, sizeof(*st->ids));
	*b = (struct ev_archive_batch){.run_id = st->x->run_id, .number = st->number};
	const int ct_col = 2;
	for (size_t i = 0; i < n; i++) {
		const char *crc = ev_rowset_cell(*locked, i, 1)->s;
		ev_parse_u64(ev_rowset_cell(*locked, i, 0)->s, &st->ids[i]);
		b->checksum ^= (uint32_t)strtoul(crc ? crc : "0", NULL, 10);
	}
	if (n > 0) {
		b->first_id = st->ids[0];
		b->last_id = st->ids[n - 1];
		snprintf(st->first_ct, sizeof(st->first_ct), "%s",
		         ev_rowset_cell(*locked, 0, ct_col)->s);
		snprintf(st->last_ct, sizeof(st->last_ct), "%s",
		         ev_rowset_cell(*locked, n - 1, ct_col)->s);
		b->first_create_time = st->first_ct;
		b->last_create_time = st->last_ct;
	}
	b->rows = n;
	return 0;
}

/* Move the locked rows: their lines into the file, or their copy into the archive table, then
 * their delete. Frees locked. */
static int move_rows(struct batch_state *st, struct ev_rowset **locked)
{
	const struct ev_archive_ctx *x = st->x;
	const struct ev_archive_spec *s = x->spec;
	size_t n = st->n;
	int arc = 0;

	if (s->target == EV_ARCHIVE_TO_FILE) {
		for (size_t i = 0; i < n && arc == 0; i++) {
			char *line = ev_archive_file_row(s, &st->b, *locked, i);
			arc = write_all(x->file_fd, line, &st->err);
			free(line);
		}
		if (arc == 0)
			arc = sync_file(x->file_fd, &st->err);
	}
	ev_rowset_free(locked);
	if (arc == 0 && s->target == EV_ARCHIVE_TO_TABLE)
		arc = run_write(x->conn, ev_archive_query_copy(s, st->ids, n), n,
		                _("the copy into the archive"), &st->err);
	if (arc == 0)
		arc = run_write(x->conn, ev_archive_query_delete(s, st->ids, n), n, _("the delete"),
		                &st->err);
	return arc;
}

/* Over the lock budget already (cold index pages, a busy server): rolled back before the
 * COMMIT, to be done again smaller; the smallest batch goes through whatever it takes. True
 * when it was rolled back. */
static bool roll_back_over_budget(struct batch_state *st)
{
	const struct ev_archive_ctx *x = st->x;
	struct ev_archive_progress *p = st->p;

	if (!((mono_s() - st->t_lock) * 1e3 > lock_aim(x) && st->n > EV_ARCHIVE_BATCH_MIN))
		return false;
	double held = (mono_s() - st->t_lock) * 1e3;
	ev_conn_rollback(x->conn);
	char why[128];
	snprintf(why, sizeof(why),
	         "held its locks %.0f ms, over %d ms: rolled back, done again smaller", held,
	         lock_aim(x));
	struct ev_error aerr = {0};
	int ignore = 0;
	audit(x, &st->b, "retried", why, &aerr, &ignore);
	if (held > p->max_rolled_back_ms)
		p->max_rolled_back_ms = held;
	p->rolled_back++;
	return true;
}

/* The batch's rows are gone from the online table: counted, and the cursor past them. */
static void count_moved(struct batch_state *st, struct ev_archive_cursor *cursor)
{
	st->p->moved += st->n;
	st->p->batches++;
	*cursor = st->pick.next;
	st->p->cursor = *cursor;
}

/* The COMMIT failed or lost its answer: did it commit? The rows tell, gone means committed.
 * Ends the run either way (-1). */
static int commit_failed(struct batch_state *st, struct ev_archive_cursor *cursor)
{
	const struct ev_archive_ctx *x = st->x;
	const struct ev_archive_spec *s = x->spec;
	struct ev_archive_result *out = st->out;
	size_t n = st->n;
	long long left = st->err.code == EV_ERR_CONNECT ? still_online(x->conn, s, st->ids, n)
	                                                : (long long)n;
	struct ev_error aerr = {0};
	int ignore = 0;

	if (left == 0) {
		count_moved(st, cursor);
		if (s->target == EV_ARCHIVE_TO_FILE) {
			char *line = ev_archive_file_commit(s, &st->b);
			if (write_all(x->file_fd, line, &aerr) == 0)
				sync_file(x->file_fd, &aerr);
			free(line);
		}
		audit(x, &st->b, "archived", NULL, &aerr, &ignore);
		if (x->save_cursor != NULL)
			x->save_cursor(cursor, x->save_arg);
		snprintf(out->error, sizeof(out->error),
		         _("batch %u: the COMMIT lost its answer (%s); re-read: it committed "
		           "(its %zu rows are gone from the online table)"),
		         st->number, st->err.msg, n);
	} else {
		audit(x, &st->b, "failed", st->err.msg, &aerr, &ignore);
		snprintf(out->error, sizeof(out->error),
		         left == (long long)n
		                 ? _("batch %u: COMMIT failed (%s); re-read: not committed, "
		                     "nothing deleted")
		                 : _("batch %u: COMMIT failed (%s); re-read: its rows could "
		                     "not "
		                     "be counted; run again to finish"),
		         st->number, st->err.msg);
	}
	return -1;
}

/* Commit the moved rows and record them: the file's commit line, the audit log, the saved
 * cursor. */
static int commit_batch(struct batch_state *st, struct ev_archive_cursor *cursor)
{
	const struct ev_archive_ctx *x = st->x;
	const struct ev_archive_spec *s = x->spec;
	struct ev_archive_progress *p = st->p;
	struct ev_conn *c = x->conn;

	fault(EV_ARCHIVE_BEFORE_COMMIT, st->number, c);
	int crc = ev_conn_commit(c, &st->err);
	if (crc == 0 && fault(EV_ARCHIVE_AFTER_COMMIT, st->number, c) != 0) {
		crc = -1;
		ev_error_set(&st->err, EV_ERR_CONNECT, "lost the COMMIT's answer (a test)");
	}
	if (crc < 0)
		return commit_failed(st, cursor);
	p->last_lock_ms = (mono_s() - st->t_lock) * 1e3;
	if (p->last_lock_ms > p->max_lock_ms)
		p->max_lock_ms = p->last_lock_ms;
	count_moved(st, cursor);
	int rc = 0;
	if (s->target == EV_ARCHIVE_TO_FILE) {
		char *line = ev_archive_file_commit(s, &st->b);
		rc = write_all(x->file_fd, line, &st->err);
		if (rc == 0)
			rc = sync_file(x->file_fd, &st->err);
		free(line);
	}
	if (rc == 0)
		audit(x, &st->b, "archived", NULL, &st->err, &rc);
	if (x->save_cursor != NULL)
		x->save_cursor(cursor, x->save_arg);
	if (rc < 0) {
		snprintf(st->out->error, sizeof(st->out->error),
		         _("batch %u committed, but its record could not be written: %s"),
		         st->number, st->err.msg);
		return -1;
	}
	return 1;
}

/* One batch: 1 done (rows moved or none chosen), 2 rolled back over the lock budget (to be
 * done again smaller), 0 nothing left, -1 ended the run (why). */
static int batch(const struct ev_archive_ctx *x, size_t size, struct ev_archive_cursor *cursor,
                 struct ev_archive_progress *p, struct ev_archive_result *out)
{
	struct batch_state st = {.x = x, .p = p, .out = out, .number = p->batches + 1};
	struct ev_conn *c = x->conn;
	struct ev_rowset *locked = NULL;
	int rc = -1;

	if (ev_conn_begin(c, &st.err) < 0 || choose(&st, size, cursor) < 0)
		goto fail;
	if (st.pick.n == 0) {
		if (ev_conn_commit(c, &st.err) < 0)
			goto fail;
		if (st.pick.next.set)
			*cursor = st.pick.next;
		rc = st.pick.end ? 0 : 1;
		goto done;
	}
	if (write_intent(&st) < 0 || lock_rows(&st, &locked) < 0)
		goto fail;
	if (st.n == 0) {
		ev_rowset_free(&locked);
		if (ev_conn_commit(c, &st.err) < 0)
			goto fail;
		*cursor = st.pick.next;
		rc = 1;
		goto done;
	}
	int arc = move_rows(&st, &locked);
	if (arc == 0 && roll_back_over_budget(&st)) {
		rc = 2;
		goto done;
	}
	if (arc == 0 && x->log_table)
		arc = run_write(c, ev_archive_query_log(x->spec, &x->who, &st.b), 1,
		                _("the evtop_archive_log row"), &st.err);
	if (arc < 0) {
		ev_conn_rollback(c);
		struct ev_error aerr = {0};
		int ignore = 0;
		audit(x, &st.b, "failed", st.err.msg, &aerr, &ignore);
		snprintf(out->error, sizeof(out->error), _("batch %u: %s; nothing deleted"),
		         st.number, st.err.msg);
		goto done;
	}
	rc = commit_batch(&st, cursor);
done:
	free(st.ids);
	ev_archive_pick_clear(&st.pick);
	return rc;
fail:
	free(st.ids);
	ev_archive_pick_clear(&st.pick);
	if (ev_conn_is_connected(c))
		ev_conn_rollback(c);
	snprintf(out->error, sizeof(out->error), _("batch %u: %s; nothing deleted"), st.number,
	         st.err.msg);
	return -1;
}

int ev_archive_run(const struct ev_archive_ctx *x, struct ev_archive_cursor *cursor,
                   struct ev_archive_result *out, struct ev_error *err)
{
	struct ev_archive_progress *p = &out->p;
	size_t size = x->batch ? x->batch : EV_ARCHIVE_BATCH_DEFAULT;
	double t0 = mono_s();

	memset(out, 0, sizeof(*out));
	if (ev_conn_exec(x->conn,
	                 "/* evtop:archive.isolation */ SET SESSION TRANSACTION ISOLATION LEVEL "
	                 "READ COMMITTED",
	                 err) < 0)
		return -1;
	/* A slow start: the first batches find the oldest rows' index pages cold (read from disk
	 * under the locks), so they begin small and grow while they stay quick. */
	p->batch_size = size < EV_ARCHIVE_BATCH_START ? size : EV_ARCHIVE_BATCH_START;
	p->cursor = *cursor;
	report(x, p, t0);
	for (;;) {
		if (stopped(x)) {
			out->stopped = true;
			break;
		}
		if (x->until != 0 && time(NULL) >= x->until) {
			out->until_reached = true;
			break;
		}
		if (!wait_lag(x, p, t0)) {
			out->stopped = stopped(x);
			out->until_reached = !out->stopped;
			break;
		}
		double started = mono_s();
		size_t before = p->moved;
		int rc = batch(x, p->batch_size, cursor, p, out);
		if (rc < 0) {
			ev_utf8_fix_tail(
			        out->error); /* its message may have been cut by snprintf */
			break;
		}
		if (rc == 2) { /* rolled back over the lock budget: smaller, at once */
			p->batch_size = p->batch_size / 2 > EV_ARCHIVE_BATCH_MIN
			                        ? p->batch_size / 2
			                        : EV_ARCHIVE_BATCH_MIN;
			continue;
		}
		if (rc == 0) {
			out->complete = true;
			break;
		}
		/* Lock holding over its aim: smaller batches; well under it: back towards --batch.
		 */
		if (p->last_lock_ms > lock_aim(x) / 2.0 && p->batch_size > EV_ARCHIVE_BATCH_MIN)
			p->batch_size /= 2;
		else if (p->last_lock_ms < lock_aim(x) / 4.0 && p->batch_size < size)
			p->batch_size = p->batch_size * 2 < size ? p->batch_size * 2 : size;
		p->last_lock_ms = 0;
		report(x, p, t0);
		double wait = x->pause_ms;
		if (x->rate > 0) {
			double need = (double)(p->moved - before) / x->rate * 1e3 -
			              (mono_s() - started) * 1e3;
			if (need > wait)
				wait = need;
		}
		nap(x, wait);
	}
	p->finished = true;
	report(x, p, t0);
	return 0;
}

long long ev_archive_count(struct ev_conn *c, const struct ev_archive_spec *s,
                           const struct ev_archive_cursor *cursor, struct ev_error *err)
{
	struct ev_query *q = ev_archive_query_count(s, cursor);
	struct ev_rowset *rs = NULL;
	int rc = ev_conn_run(c, q, &rs, err);
	ev_query_free(&q);
	if (rc < 0)
		return -1;
	long long n = rs->nrows == 1 && ev_rowset_cell(rs, 0, 0)->s
	                      ? atoll(ev_rowset_cell(rs, 0, 0)->s)
	                      : -1;
	ev_rowset_free(&rs);
	if (n < 0)
		ev_error_set(err, EV_ERR_GENERIC, _("the count returned no row"));
	return n;
}

static long long cell_ll(const struct ev_rowset *rs, size_t c, long long dflt)
{
	const char *v = rs->nrows > 0 && c < rs->ncols ? ev_rowset_cell(rs, 0, c)->s : NULL;
	return v ? atoll(v) : dflt;
}

int ev_archive_read_facts(struct ev_conn *c, const char *table_name, const char *index,
                          int retention_s, struct ev_table_facts *out, struct ev_error *err)
{
	struct ev_rowset *rs = NULL;
	memset(out, 0, sizeof(*out));
	out->rows = out->bytes = out->past = -1;
	out->retention_s = retention_s;
	struct ev_query *q = ev_archive_query_size(table_name);
	int rc = ev_conn_run(c, q, &rs, err);
	ev_query_free(&q);
	if (rc < 0)
		return -1;
	out->rows = cell_ll(rs, 0, -1);
	out->bytes = cell_ll(rs, 1, -1);
	ev_rowset_free(&rs);
	if (index != NULL) {
		q = ev_doctor_query_oldest(table_name, index);
		rc = ev_conn_run(c, q, &rs, err);
		ev_query_free(&q);
		if (rc < 0)
			return -1;
		out->have_oldest = rs->nrows > 0 && ev_rowset_cell(rs, 0, 0)->s != NULL;
		out->oldest_age_s = cell_ll(rs, 1, 0);
		ev_rowset_free(&rs);
		if (retention_s > 0 && out->have_oldest) {
			q = ev_archive_query_past(table_name, index, retention_s);
			rc = ev_conn_run(c, q, &rs, err);
			ev_query_free(&q);
			if (rc < 0)
				return -1;
			out->past = cell_ll(rs, 0, -1);
			out->past_capped = out->past > EV_ARCHIVE_PAST_CAP;
			if (out->past_capped)
				out->past = EV_ARCHIVE_PAST_CAP;
			ev_rowset_free(&rs);
		}
	}
	out->read = true;
	return 0;
}
