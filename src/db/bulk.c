/* evtop — bulk actions on the write endpoint (see bulk.h). */
#include <config.h>

#include "db/bulk.h"

#include "core/i18n.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static ev_bulk_fault_fn fault_fn;
static void *fault_arg;

void ev_bulk_set_fault(ev_bulk_fault_fn fn, void *arg)
{
	fault_fn = fn;
	fault_arg = arg;
}

static int fault(enum ev_action_point point, unsigned batch, struct ev_conn *c)
{
	return fault_fn != NULL ? fault_fn(point, batch, c, fault_arg) : 0;
}

static long long mono_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static bool flag_set(atomic_bool *flag)
{
	return flag != NULL && atomic_load(flag);
}

/* Sleep ms, waking every 50 ms to look at the stop flag, and at the hold flag (may be NULL):
 * its being set ends the sleep early. Returns true when the stop flag is set. */
static bool sleep_unless_stopped(long long ms, atomic_bool *stop, atomic_bool *hold)
{
	long long end = mono_ms() + ms;
	for (;;) {
		if (flag_set(stop))
			return true;
		long long left = end - mono_ms();
		if (left <= 0 || flag_set(hold))
			return false;
		if (left > 50)
			left = 50;
		struct timespec ts = {0, (long)left * 1000000L};
		while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
			;
	}
}

/* --- counting -------------------------------------------------------------------------------- */

static int add_row(struct ev_bulk_snapshot *s, const struct ev_rowset *rs, size_t r,
                   struct ev_error *err)
{
	struct ev_guard_row row;
	int rc = ev_guard_row_from_rowset(rs, r, s->table, &row, err);
	if (rc == 0)
		ev_bulk_snapshot_add(s, &row);
	ev_guard_row_clear(&row);
	return rc;
}

static int count_list(struct ev_conn *c, struct ev_bulk_snapshot *s,
                      const struct ev_bulk_target *tg, size_t max_rows, struct ev_error *err)
{
	struct ev_cursor after = {0};
	size_t read = 0;

	for (;;) {
		if (flag_set(tg->stop))
			return ev_error_set(err, EV_ERR_GENERIC, _("stopped while counting"));
		size_t want = max_rows - read;
		struct ev_list_req req = {
		        .info = tg->info,
		        .table = s->table,
		        .table_name = s->table_name,
		        .kind = tg->list,
		        .filter = tg->filter,
		        .after = after,
		        .limit = want < EV_PAGE_MAX ? (int)want : EV_PAGE_MAX,
		        .stuck_threshold_s = s->stuck_threshold_s,
		        .high_retry_min = tg->high_retry_min,
		        .window_s = tg->window_s,
		        .search_cap = tg->search_cap,
		};
		struct ev_query *q = ev_query_list(&req, err);
		if (q == NULL)
			return -1;
		struct ev_rowset *rs = NULL;
		if (ev_conn_run(c, q, &rs, err) < 0) {
			ev_query_free(&q);
			return -1;
		}
		struct ev_list_page pg;
		ev_list_take_page(q, &rs, &pg);
		size_t n = rs->nrows;
		bool more = pg.more;
		int rc = 0;
		for (size_t r = 0; r < n && rc == 0; r++)
			rc = add_row(s, rs, r, err);
		if (rc == 0 && more)
			after = pg.next;
		ev_rowset_free(&rs);
		ev_query_free(&q);
		if (rc < 0)
			return -1;
		read += n;
		if (!more)
			return 0;
		if (read >= max_rows) {
			s->truncated = true;
			return 0;
		}
	}
}

static int cmp_ull(const void *a, const void *b)
{
	unsigned long long x = *(const unsigned long long *)a, y = *(const unsigned long long *)b;
	return x < y ? -1 : x > y;
}

/* The rows of ids[0..n) (n <= EV_PAGE_MAX), added in the ids' order. */
static int count_ids_page(struct ev_conn *c, struct ev_bulk_snapshot *s,
                          const unsigned long long *ids, size_t n, struct ev_error *err)
{
	struct ev_query *q = ev_bulk_query_rows(s->table, s->table_name, ids, n);
	struct ev_rowset *rs = NULL;
	int rc = ev_conn_run(c, q, &rs, err);

	ev_query_free(&q);
	if (rc < 0)
		return -1;
	/* The answer is in id order: find each id by bisection. */
	unsigned long long *found = ev_xcalloc(rs->nrows ? rs->nrows : 1, sizeof(*found));
	for (size_t r = 0; r < rs->nrows; r++) {
		const char *id = ev_rowset_get(rs, r, "id");
		found[r] = id ? strtoull(id, NULL, 10) : 0;
	}
	for (size_t i = 0; i < n && rc == 0; i++) {
		unsigned long long *hit =
		        bsearch(&ids[i], found, rs->nrows, sizeof(*found), cmp_ull);
		if (hit == NULL) {
			s->ids_missing++;
			continue;
		}
		rc = add_row(s, rs, (size_t)(hit - found), err);
	}
	free(found);
	ev_rowset_free(&rs);
	return rc;
}

int ev_bulk_count(struct ev_conn *c, const struct ev_bulk_spec *spec,
                  const struct ev_bulk_target *tg, bool include_protected,
                  struct ev_bulk_snapshot **out, struct ev_error *err)
{
	size_t max_rows = tg->max_rows ? tg->max_rows : EV_BULK_MAX_ROWS_DEFAULT;
	int rc = 0;

	*out = NULL;
	if (max_rows > EV_BULK_MAX_ROWS_MAX)
		return ev_error_set(err, EV_ERR_USAGE, _("at most %d rows in one bulk action"),
		                    EV_BULK_MAX_ROWS_MAX);
	if (tg->n_ids == 0 && !ev_bulk_list_fits(spec->action, tg->list))
		return ev_error_set(err, EV_ERR_USAGE,
		                    _("%s does not act on the rows of the %s list"),
		                    ev_action_name(spec->action), ev_list_name(tg->list));
	struct ev_bulk_snapshot *s = ev_bulk_snapshot_new(spec);
	if (tg->n_ids > 0) {
		size_t n = tg->n_ids < max_rows ? tg->n_ids : max_rows;
		s->truncated = tg->n_ids > n;
		for (size_t off = 0; off < n && rc == 0; off += EV_PAGE_MAX) {
			if (flag_set(tg->stop)) {
				rc = ev_error_set(err, EV_ERR_GENERIC, _("stopped while counting"));
				break;
			}
			size_t k = n - off < EV_PAGE_MAX ? n - off : EV_PAGE_MAX;
			rc = count_ids_page(c, s, tg->ids + off, k, err);
		}
	} else {
		rc = count_list(c, s, tg, max_rows, err);
	}
	if (rc == 0)
		rc = ev_bulk_plan(s, include_protected, err);
	if (rc < 0) {
		ev_bulk_snapshot_free(&s);
		return -1;
	}
	*out = s;
	return 0;
}

/* --- applying -------------------------------------------------------------------------------- */

/* Say why the run stopped, cut at a UTF-8 boundary when it does not fit. */
static void set_error(struct ev_bulk_snapshot *s, const char *fmt, ...)
        __attribute__((format(printf, 2, 3)));
static void set_error(struct ev_bulk_snapshot *s, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *text = ev_xvasprintf(fmt, ap);
	va_end(ap);
	size_t len = strlen(text);
	if (len >= sizeof(s->error)) {
		len = sizeof(s->error) - 1;
		while (len > 0 && ((unsigned char)text[len] & 0xC0) == 0x80)
			len--;
	}
	memcpy(s->error, text, len);
	s->error[len] = '\0';
	free(text);
}

static void item_set(struct ev_bulk_item *it, enum ev_bulk_state st, unsigned batch, char *msg)
{
	it->state = st;
	it->batch = batch;
	free(it->msg);
	it->msg = msg;
}

/* One row of the batch being run. */
struct brow {
	struct ev_bulk_item *it;
	struct ev_guard g;
	bool built;
	int written; /* -1 not attempted, 0 the guard matched no row, 1 the row changed */
};

struct run {
	const struct ev_bulk_ctx *ctx;
	struct ev_bulk_snapshot *s;
	struct ev_audit_who who;
	size_t total, applied, skipped, failed;
	long long t0;
	long long paused_ms; /* the time paused, the current pause not yet in */
	long long pause_t0;  /* when the current pause began */
	bool paused;         /* held between batches (ctx->hold) */
	bool in_doubt;       /* the last batch */
	bool rereading;      /* it cannot be re-read yet */
};

static void report(struct run *r, bool finished);

static bool lost(const struct ev_error *e)
{
	return e->code == EV_ERR_CONNECT;
}

/* An error after which the next rows would fail the same way: the run stops. */
static bool stops_run(const struct ev_error *e)
{
	return e->code == 1290 /* the server refuses writes */ || e->code == 1142 ||
	       e->code == 1143 /* access denied */ || e->code == 1146 /* no such table */ ||
	       e->code == EV_ERR_SCHEMA;
}

/* The rows of the batch in `want` as they are now, into now[] (have[] says which were found).
 * Returns -1 with err when the server cannot be read. */
static int reread(struct run *r, struct brow *rows, size_t n, const bool *want,
                  struct ev_guard_row *now, bool *have, struct ev_error *err)
{
	unsigned long long *ids = ev_xcalloc(n ? n : 1, sizeof(*ids));
	size_t k = 0;

	for (size_t i = 0; i < n; i++) {
		have[i] = false;
		if (want[i])
			ids[k++] = rows[i].it->row.id;
	}
	if (k == 0) {
		free(ids);
		return 0;
	}
	struct ev_query *q = ev_bulk_query_rows(r->s->table, r->s->table_name, ids, k);
	struct ev_rowset *rs = NULL;
	int rc = ev_conn_run(r->ctx->conn, q, &rs, err);
	ev_query_free(&q);
	free(ids);
	if (rc < 0)
		return -1;
	for (size_t j = 0; j < rs->nrows; j++) {
		struct ev_guard_row row;
		struct ev_error e = {0};
		if (ev_guard_row_from_rowset(rs, j, r->s->table, &row, &e) < 0) {
			ev_guard_row_clear(&row);
			continue;
		}
		for (size_t i = 0; i < n; i++)
			if (want[i] && !have[i] && rows[i].it->row.id == row.id) {
				ev_guard_row_copy(&now[i], &row);
				have[i] = true;
			}
		ev_guard_row_clear(&row);
	}
	ev_rowset_free(&rs);
	return 0;
}

/* Was row i's audit row committed with its UPDATE? 1 yes, 0 no, -1 cannot tell. */
static int audit_row_found(struct run *r, const struct brow *b)
{
	struct ev_error err = {0};
	struct ev_rowset *rs = NULL;
	struct ev_query *q = ev_guard_query_audit_find(&b->g, &b->it->row, &r->who);
	int rc = ev_conn_run(r->ctx->conn, q, &rs, &err);
	ev_query_free(&q);
	if (rc < 0)
		return -1;
	const char *v = rs->nrows > 0 ? ev_rowset_cell(rs, 0, 0)->s : NULL;
	int found = v != NULL && strtoll(v, NULL, 10) > 0;
	ev_rowset_free(&rs);
	return found;
}

/* A COMMIT whose answer was lost (or that failed): reconnect, re-read the rows the batch
 * changed, and let the database say which changes are in. Returns -1 when it cannot be
 * re-read (the rows stay in doubt, reported as failed, and the run stops). */
static int resolve_in_doubt(struct run *r, struct brow *rows, size_t n, unsigned batch,
                            const char *why)
{
	bool *want = ev_xcalloc(n, sizeof(*want));
	bool *have = ev_xcalloc(n, sizeof(*have));
	struct ev_guard_row *now = ev_xcalloc(n, sizeof(*now));
	struct ev_error err = {0};
	int rc = 0;

	r->s->tally.in_doubt++;
	r->in_doubt = true;
	for (size_t i = 0; i < n; i++)
		want[i] = rows[i].written == 1;
	/* The server may be restarting (it crashed during the COMMIT) or failing over: keep
	 * trying to re-read, with back-off, before leaving the batch in doubt. */
	long long wait_ms =
	        r->ctx->doubt_wait_ms > 0 ? r->ctx->doubt_wait_ms : EV_BULK_DOUBT_WAIT_MS;
	long long give_up = mono_ms() + wait_ms, pause = 100;
	int tries = 1;
	bool read_back;
	while (!(read_back = reread(r, rows, n, want, now, have, &err) == 0)) {
		/* Only an unreachable server is worth waiting for. */
		if (!lost(&err) || mono_ms() >= give_up || flag_set(r->ctx->stop))
			break;
		if (!r->rereading) {
			r->rereading = true;
			report(r, false);
		}
		if (sleep_unless_stopped(pause, r->ctx->stop, NULL))
			break;
		pause = pause * 2 > 2000 ? 2000 : pause * 2;
		tries++;
	}
	if (r->rereading) {
		r->rereading = false;
		report(r, false);
	}
	if (!read_back) {
		const char *given_up =
		        flag_set(r->ctx->stop) ? _("; waiting for it was stopped") : "";
		for (size_t i = 0; i < n; i++)
			if (want[i])
				item_set(rows[i].it, EV_BULK_FAILED, batch,
				         ev_xasprintf(_("IN DOUBT: %s, and the server could not be "
				                        "reached to re-read the row (%d tries over "
				                        "%lld s%s: %s): whether the change was "
				                        "committed is unknown; check it with evtop "
				                        "show before acting again"),
				                      why, tries, wait_ms / 1000, given_up,
				                      err.msg));
		r->s->tally.unresolved = true;
		set_error(r->s,
		          _("batch %u is in doubt: %s, and the server could not be reached to "
		            "re-read its rows (%d tries%s: %s)"),
		          batch, why, tries, given_up, err.msg);
		rc = -1;
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		if (!want[i])
			continue;
		struct brow *b = &rows[i];
		bool applied =
		        ev_guard_row_shows_applied(&b->g, &b->it->row, have[i] ? &now[i] : NULL);
		/* With an audit table the proof is exact: its row was in the same transaction. */
		if (applied && r->ctx->access->audit_table && audit_row_found(r, b) == 0)
			applied = false;
		if (applied)
			item_set(b->it, EV_BULK_APPLIED, batch,
			         ev_xasprintf(
			                 _("%s; re-read from the server: the change was committed "
			                   "(version %lld)"),
			                 why, now[i].version));
		else
			item_set(b->it, EV_BULK_FAILED, batch,
			         ev_xasprintf(
			                 _("%s; re-read from the server: the change was NOT "
			                   "committed "
			                   "(the row is at version %lld%s); nothing was retried"),
			                 why, have[i] ? now[i].version : b->it->row.version,
			                 have[i] ? "" : _(", or gone")));
	}
out:
	for (size_t i = 0; i < n; i++)
		ev_guard_row_clear(&now[i]);
	free(now);
	free(want);
	free(have);
	return rc;
}

/* After the batch: re-read its skipped and failed rows to say why and show them as now. */
static void explain(struct run *r, struct brow *rows, size_t n, unsigned batch)
{
	bool *want = ev_xcalloc(n, sizeof(*want));
	bool *have = ev_xcalloc(n, sizeof(*have));
	struct ev_guard_row *now = ev_xcalloc(n, sizeof(*now));
	struct ev_error err = {0};
	size_t k = 0;

	for (size_t i = 0; i < n; i++) {
		struct ev_bulk_item *it = rows[i].it;
		want[i] = it->batch == batch &&
		          (it->state == EV_BULK_SKIPPED || it->state == EV_BULK_FAILED) &&
		          rows[i].built;
		k += want[i];
	}
	if (k > 0 && reread(r, rows, n, want, now, have, &err) < 0) {
		for (size_t i = 0; i < n; i++)
			if (want[i] && rows[i].it->state == EV_BULK_SKIPPED)
				item_set(rows[i].it, EV_BULK_SKIPPED, batch,
				         ev_xasprintf(_("the guard matched no row (the row changed "
				                        "since it "
				                        "was "
				                        "counted); it could not be re-read: %s"),
				                      err.msg));
		k = 0;
	}
	for (size_t i = 0; i < n && k > 0; i++) {
		struct ev_bulk_item *it = rows[i].it;
		if (!want[i])
			continue;
		free(it->now);
		it->now = have[i] ? ev_guard_row_describe(r->s->table, &now[i]) : NULL;
		if (it->state == EV_BULK_SKIPPED)
			item_set(it, EV_BULK_SKIPPED, batch,
			         ev_guard_explain_skip(&rows[i].g, &it->row,
			                               have[i] ? &now[i] : NULL));
	}
	for (size_t i = 0; i < n; i++)
		ev_guard_row_clear(&now[i]);
	free(now);
	free(want);
	free(have);
}

/* The result lines of the rows this batch decided, in one write, flushed. */
static int write_results(struct run *r, struct brow *rows, size_t n, unsigned batch)
{
	struct ev_buf b;
	struct ev_error err = {0};
	char now[32];

	ev_audit_time_now(now);
	ev_buf_init(&b);
	for (size_t i = 0; i < n; i++) {
		struct ev_bulk_item *it = rows[i].it;
		if (it->batch != batch || it->state == EV_BULK_PENDING)
			continue;
		/* A row whose guard could not be built still gets its line. */
		struct ev_guard stub = {.table = r->s->table,
		                        .action = r->s->action,
		                        .table_name = r->s->table_name};
		struct ev_audit_rec rec = {
		        .time = now,
		        .who = &r->who,
		        .g = rows[i].built ? &rows[i].g : &stub,
		        .before = &it->row,
		        .result = it->state == EV_BULK_APPLIED   ? EV_AUDIT_APPLIED
		                  : it->state == EV_BULK_SKIPPED ? EV_AUDIT_SKIPPED
		                                                 : EV_AUDIT_FAILED,
		        .error = it->state == EV_BULK_APPLIED ? NULL : it->msg,
		};
		char *line = ev_bulk_result_line(&rec, r->s->run_id, batch);
		ev_buf_adds(&b, line);
		free(line);
	}
	int rc = b.len > 0 ? ev_audit_log_append(r->ctx->log, b.data, &err) : 0;
	ev_buf_free(&b);
	if (rc < 0)
		set_error(r->s, _("the audit file's result lines of batch %u were not written: %s"),
		          batch, err.msg);
	return rc;
}

/* A row's write failed inside the batch: roll back; the rows it had changed go back to the
 * queue (nothing of theirs was committed; their guards bind the same version next time), the
 * rows whose guard had matched nothing stay skipped. */
static void abandon(struct run *r, struct brow *rows, size_t k, unsigned batch)
{
	ev_conn_rollback(r->ctx->conn);
	for (size_t i = 0; i < k; i++) {
		if (rows[i].written == 1) {
			rows[i].it->state = EV_BULK_PENDING;
			rows[i].it->batch = 0;
		} else if (rows[i].written == 0) {
			item_set(rows[i].it, EV_BULK_SKIPPED, batch, NULL);
		}
	}
}

/* The audit file's intent line of the batch, written before any of its rows is. */
static int write_intent(struct run *r, const struct brow *rows, size_t n, unsigned batch,
                        struct ev_error *err)
{
	const struct ev_bulk_item **items = ev_xcalloc(n, sizeof(*items));
	char now[32];

	for (size_t i = 0; i < n; i++)
		items[i] = rows[i].it;
	ev_audit_time_now(now);
	char *line = ev_bulk_intent_line(now, &r->who, r->s, batch, items, n);
	free(items);
	int rc = ev_audit_log_append(r->ctx->log, line, err);
	free(line);
	if (rc < 0) {
		set_error(r->s,
		          _("the audit file's intent line of batch %u could not be written, so "
		            "nothing "
		            "more was done: %s"),
		          batch, err->msg);
		return -1;
	}
	return 0;
}

/* Row k's audit row, in the batch's transaction; when it cannot be written the batch is
 * rolled back (-1). */
static int write_audit_row(struct run *r, struct brow *rows, size_t k, unsigned batch,
                           struct ev_error *err, bool *stop_after)
{
	struct brow *b = &rows[k];
	unsigned long long affected = 0;
	struct ev_audit_rec rec = {
	        .who = &r->who, .g = &b->g, .before = &b->it->row, .result = EV_AUDIT_APPLIED};
	struct ev_query *q = ev_guard_query_audit_insert(&rec);
	int irc = ev_conn_write(r->ctx->conn, q, &affected, err);
	ev_query_free(&q);
	if (irc == 0)
		return 0;
	b->written = -1;
	abandon(r, rows, k, batch);
	item_set(b->it, EV_BULK_FAILED, batch,
	         ev_xasprintf(_("the audit row could not be written, so the change was "
	                        "rolled back with the batch: %s"),
	                      err->msg));
	/* Without its audit row no change is made: stop unless it was only this row's bad luck
	 * (a lock wait, a lost connection). */
	*stop_after =
	        !lost(err) && err->code != 1205 && err->code != 1213 && err->code != EV_ERR_TIMEOUT;
	if (*stop_after)
		set_error(r->s, _("batch %u: the audit row could not be written: %s"), batch,
		          err->msg);
	return -1;
}

enum row_outcome { ROW_CHANGED, ROW_UNCHANGED, ROW_ABORTED };

/* Row k's guarded UPDATE (and audit row) in the batch's transaction: changed, unchanged
 * (refused, or its guard matched nothing), or aborted (the batch was rolled back; *stop_after
 * when the run cannot go on). */
static enum row_outcome write_row(struct run *r, struct brow *rows, size_t k, unsigned batch,
                                  struct ev_error *err, bool *stop_after)
{
	struct brow *b = &rows[k];
	unsigned long long affected = 0;

	if (ev_bulk_item_guard(r->s, b->it, &b->g, err) < 0) {
		item_set(b->it, EV_BULK_FAILED, batch, ev_xasprintf(_("refused: %s"), err->msg));
		return ROW_UNCHANGED;
	}
	b->built = true;
	if (ev_conn_write(r->ctx->conn, b->g.update, &affected, err) < 0) {
		bool gone = lost(err);
		abandon(r, rows, k, batch);
		item_set(
		        b->it, EV_BULK_FAILED, batch,
		        ev_xasprintf(_("%s; the batch's transaction was rolled back, so nothing of "
		                       "it was changed%s"),
		                     err->msg, gone ? _(" (the connection was lost)") : ""));
		*stop_after = stops_run(err);
		if (*stop_after)
			set_error(r->s, _("batch %u: %s"), batch, err->msg);
		return ROW_ABORTED;
	}
	if (affected == 0) {
		b->written = 0;
		return ROW_UNCHANGED;
	}
	if (affected != 1) {
		abandon(r, rows, k, batch);
		item_set(b->it, EV_BULK_FAILED, batch,
		         ev_xasprintf(_("the UPDATE by primary key changed %llu rows; the batch "
		                        "was rolled back"),
		                      affected));
		return ROW_ABORTED;
	}
	b->written = 1;
	if (r->ctx->access->audit_table && write_audit_row(r, rows, k, batch, err, stop_after) < 0)
		return ROW_ABORTED;
	return ROW_CHANGED;
}

/* Write the rows in the batch's transaction for as long as its time bound allows; the rows
 * it left out (from *tried on) go to the next batch. True when a row's failure rolled the
 * batch back. */
static bool write_rows(struct run *r, struct brow *rows, size_t n, unsigned batch, size_t *tried,
                       size_t *changed, struct ev_error *err, bool *stop_after)
{
	long long t_begin = mono_ms();
	size_t k = 0;
	bool aborted = false;

	for (; k < n; k++) {
		/* Bounded time: a batch holds its row locks until COMMIT. */
		if (k > 0 && mono_ms() - t_begin >= r->s->set.batch_ms)
			break;
		enum row_outcome o = write_row(r, rows, k, batch, err, stop_after);
		if (o == ROW_ABORTED) {
			aborted = true;
			k++;
			break;
		}
		if (o == ROW_CHANGED)
			(*changed)++;
	}
	for (size_t i = k; i < n; i++)
		rows[i].written = -1;
	*tried = k;
	return aborted;
}

/* The rows whose guard matched nothing are skipped. */
static void skip_unmatched(struct brow *rows, size_t k, unsigned batch)
{
	for (size_t i = 0; i < k; i++)
		if (rows[i].written == 0)
			item_set(rows[i].it, EV_BULK_SKIPPED, batch, NULL);
}

/* COMMIT the batch and set its changed rows' states from the answer: applied, rolled back
 * by the server, or in doubt (re-read to resolve). */
static void commit_rows(struct run *r, struct brow *rows, size_t k, unsigned batch,
                        struct ev_error *err, bool *stop_after)
{
	struct ev_conn *c = r->ctx->conn;

	fault(EV_POINT_BEFORE_COMMIT, batch, c);
	int crc = ev_conn_commit(c, err);
	bool answer_lost = false;
	if (crc == 0 && fault(EV_POINT_AFTER_COMMIT, batch, c) != 0) {
		ev_conn_close(c);
		answer_lost = true;
	}
	skip_unmatched(rows, k, batch);
	if (crc == 0 && !answer_lost) {
		for (size_t i = 0; i < k; i++)
			if (rows[i].written == 1)
				item_set(rows[i].it, EV_BULK_APPLIED, batch,
				         rows[i].g.grants_attempt
				                 ? ev_xasprintf(_("exhausted: granted "
				                                  "exactly one more attempt"))
				                 : NULL);
	} else if (!answer_lost && !lost(err)) {
		/* The server answered COMMIT with an error (a conflict with another node, a
		 * deadlock): the batch was rolled back, nothing of it is in. Not in doubt; the
		 * next batches go on. */
		for (size_t i = 0; i < k; i++)
			if (rows[i].written == 1)
				item_set(rows[i].it, EV_BULK_FAILED, batch,
				         ev_xasprintf(_("the batch was rolled back at COMMIT: %s"),
				                      err->msg));
	} else {
		char *why = answer_lost ? ev_xstrdup(_("the answer to COMMIT was lost"))
		            : lost(err) ? ev_xstrdup(_("the connection was lost during COMMIT"))
		                        : ev_xstrdup(err->msg);
		if (resolve_in_doubt(r, rows, k, batch, why) < 0)
			*stop_after = true;
		free(why);
	}
}

/* Count the batch's decided rows into the run's totals and free their guards. */
static void tally_batch(struct run *r, struct brow *rows, size_t n, unsigned batch)
{
	for (size_t i = 0; i < n; i++) {
		struct ev_bulk_item *it = rows[i].it;
		if (it->batch == batch && it->state == EV_BULK_APPLIED)
			r->applied++;
		else if (it->batch == batch && it->state == EV_BULK_SKIPPED)
			r->skipped++;
		else if (it->batch == batch && it->state == EV_BULK_FAILED)
			r->failed++;
		if (rows[i].built)
			ev_guard_clear(&rows[i].g);
		rows[i].built = false;
	}
}

/* Run one batch of n rows. Returns 0, or -1 to stop the run (r->s->error says why). */
static int run_batch(struct run *r, struct brow *rows, size_t n)
{
	struct ev_bulk_snapshot *s = r->s;
	struct ev_conn *c = r->ctx->conn;
	struct ev_error err = {0};
	unsigned batch = s->tally.batches + 1;
	size_t k = 0, changed = 0;
	bool stop_after = false;

	r->in_doubt = false;
	if (write_intent(r, rows, n, batch, &err) < 0)
		return -1;
	if (ev_conn_begin(c, &err) < 0) {
		set_error(s, _("batch %u could not start: %s; nothing more was done"), batch,
		          err.msg);
		return -1;
	}
	s->tally.batches = batch;

	bool aborted = write_rows(r, rows, n, batch, &k, &changed, &err, &stop_after);
	if (!aborted && changed == 0) {
		ev_conn_rollback(c); /* nothing to commit */
		skip_unmatched(rows, k, batch);
	} else if (!aborted) {
		commit_rows(r, rows, k, batch, &err, &stop_after);
	}
	if (!r->s->tally.unresolved)
		explain(r, rows, k, batch);
	if (write_results(r, rows, k, batch) < 0)
		stop_after = true;
	tally_batch(r, rows, n, batch);
	return stop_after ? -1 : 0;
}

/* The time paused so far, the current pause's too. */
static long long paused_ms(const struct run *r, long long now)
{
	return r->paused_ms + (r->paused ? now - r->pause_t0 : 0);
}

/* The run's time: since it started, the time paused left out (for the pace and the figures,
 * so a run resumed does not rush to catch up). */
static long long run_ms(const struct run *r)
{
	long long now = mono_ms();
	return now - r->t0 - paused_ms(r, now);
}

static void report(struct run *r, bool finished)
{
	const struct ev_bulk_ctx *ctx = r->ctx;
	if (ctx->progress == NULL)
		return;
	long long now = mono_ms();
	struct ev_bulk_progress p = {
	        .total = r->total,
	        .done = r->applied + r->skipped + r->failed,
	        .applied = r->applied,
	        .skipped = r->skipped,
	        .failed = r->failed,
	        .batches = r->s->tally.batches,
	        .elapsed_s = (double)(now - r->t0 - paused_ms(r, now)) / 1000.0,
	        .in_doubt = r->in_doubt,
	        .rereading = r->rereading,
	        .paused = r->paused,
	        .paused_s = (double)paused_ms(r, now) / 1000.0,
	        .finished = finished,
	};
	p.rate = p.elapsed_s > 0 ? (double)p.done / p.elapsed_s : 0;
	p.eta_s = ev_bulk_eta_s(p.done, p.total, p.elapsed_s);
	ctx->progress(&p, ctx->progress_arg);
}

/* Between batches, while ctx->hold is set: pause, reporting `paused` when it begins and about
 * once a second after, until hold is cleared or stop is set. No transaction is open and
 * nothing is sent to the server meanwhile. A long pause may outlast the server's wait_timeout,
 * which drops the connection: the next batch's ev_conn_begin finds it lost (a closed
 * connection, or SET autocommit failing as lost) and reconnects, nothing written yet. Returns
 * true when the stop flag is set. */
static bool wait_while_held(struct run *r)
{
	const struct ev_bulk_ctx *ctx = r->ctx;
	if (!flag_set(ctx->hold) || flag_set(ctx->stop))
		return flag_set(ctx->stop);
	r->paused = true;
	r->pause_t0 = mono_ms();
	long long next_report = r->pause_t0;
	bool stopped = false;
	while (flag_set(ctx->hold)) {
		if (mono_ms() >= next_report) {
			report(r, false);
			next_report += 1000;
		}
		if (sleep_unless_stopped(50, ctx->stop, NULL)) {
			stopped = true;
			break;
		}
	}
	r->paused_ms += mono_ms() - r->pause_t0;
	r->paused = false;
	return stopped;
}

/* Before a batch: the wait after the previous one (pause_ms, or longer to keep to the pace;
 * none before the first), counted on the run's time, and a pause while held. A hold set
 * during the wait pauses at once; the rest of the wait follows the resume. Returns true when
 * the stop flag is set. */
static bool wait_before_batch(struct run *r)
{
	const struct ev_bulk_ctx *ctx = r->ctx;
	long long end = run_ms(r);

	if (r->s->tally.batches > 0)
		end += ev_bulk_wait_ms(&r->s->set, r->applied + r->skipped + r->failed, end);
	for (;;) {
		if (wait_while_held(r))
			return true;
		long long left = end - run_ms(r);
		if (left <= 0)
			return false;
		if (sleep_unless_stopped(left, ctx->stop, ctx->hold))
			return true;
	}
}

int ev_bulk_apply(const struct ev_bulk_ctx *ctx, struct ev_bulk_snapshot *s, struct ev_error *err)
{
	struct run r = {.ctx = ctx, .s = s};

	if (s->run_id[0] != '\0')
		return ev_error_set(err, EV_ERR_GENERIC,
		                    _("this bulk action has already been run"));
	if (ev_conn_read_only(ctx->conn) != NULL)
		return ev_error_set(err, EV_ERR_GENERIC, _("read-only: %s"),
		                    ev_conn_read_only(ctx->conn));
	if (ctx->access == NULL || !ctx->access->writable)
		return ev_error_set(err, EV_ERR_GENERIC, _("read-only: %s"),
		                    ctx->access ? ctx->access->why
		                                : _("the write access was not checked"));
	if (ctx->log == NULL || ctx->log->fd < 0)
		return ev_error_set(err, EV_ERR_GENERIC, _("refused: the audit file is not open"));

	r.who = *ctx->who;
	/* A copy: a reconnect (to resolve a lost COMMIT) replaces the connection's own. */
	char *db_user = ev_xstrdup(r.who.db_user ? r.who.db_user : ev_conn_user(ctx->conn));
	r.who.db_user = db_user;
	ev_bulk_run_id(s->run_id, sizeof(s->run_id));
	s->error[0] = '\0';
	memset(&s->tally, 0, sizeof(s->tally));
	r.t0 = mono_ms();
	for (size_t i = 0; i < s->n; i++)
		r.total += s->items[i].state == EV_BULK_PENDING;

	int per = ev_bulk_batch_rows(&s->set);
	struct brow *rows = ev_xcalloc((size_t)per, sizeof(*rows));
	size_t first = 0; /* no pending row before this index */
	report(&r, false);
	for (;;) {
		while (first < s->n && s->items[first].state != EV_BULK_PENDING)
			first++;
		size_t n = 0;
		for (size_t i = first; i < s->n && n < (size_t)per; i++)
			if (s->items[i].state == EV_BULK_PENDING) {
				memset(&rows[n], 0, sizeof(rows[n]));
				rows[n].it = &s->items[i];
				rows[n].written = -1;
				n++;
			}
		if (n == 0)
			break;
		if (flag_set(ctx->stop)) {
			s->tally.stopped = true;
			break;
		}
		if (wait_before_batch(&r)) {
			s->tally.stopped = true;
			break;
		}
		int rc = run_batch(&r, rows, n);
		report(&r, false);
		if (rc < 0) {
			s->tally.stopped = true;
			break;
		}
	}
	free(rows);
	free(db_user);
	ev_bulk_tally_count(s, &s->tally);
	s->tally.seconds = (double)(mono_ms() - r.t0) / 1000.0;
	report(&r, true);
	return 0;
}
