/* evtop — bulk actions on the write endpoint (PRODUCT.md section 2, Bulk): count the targets
 * (a list of ids — the marked rows — or a list kind with a filter, read in bounded keyset
 * pages) into a snapshot of (id, version) and the columns the guard needs; then apply it in
 * batches: one transaction per batch, of at most batch_size rows and of bounded time, holding
 * each row's single-row guarded UPDATE (core/guard's statement, with the version counted) and
 * its evtop_audit row, a pause between batches, progress through a callback, a stop flag
 * and a hold flag (pause until it is cleared) read between batches, and a batch whose
 * COMMIT's answer was lost re-read and reported as it really ended. The local audit file gets
 * an intent line before each batch and a result line per row after it, flushed to disk per
 * batch.
 *
 * Both calls block: run them on a thread that owns the connection (a worker; ev_db_thread_init
 * first), never on the UI thread. Count on the write endpoint, as apply writes there: a
 * replica's versions lag, and every row counted there could be skipped. */
#ifndef EV_DB_BULK_H
#define EV_DB_BULK_H

#include "core/auditlog.h"
#include "core/bulk.h"
#include "core/query.h"
#include "db/action.h"
#include "db/conn.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

/* What to count: ids (n_ids > 0: these rows, in this order), or every row of a list. */
struct ev_bulk_target {
	const unsigned long long *ids;
	size_t n_ids;
	enum ev_list_kind list;           /* ev_bulk_list_fits(action, list) */
	const struct ev_filter *filter;   /* the list's filter (as `evtop list`); may be NULL */
	const struct ev_table_info *info; /* the server's indexes for the list query (FORCE
	                                     INDEX, as the lists); NULL = no hint */
	int high_retry_min;               /* the high-retry list's N */
	int window_s;                     /* the cancelled and recent lists' window (0: 1 h) */
	long long search_cap;             /* payload terms: candidates a page (0: default) */
	size_t max_rows;                  /* read at most this many rows (0 = the default,
	                                     EV_BULK_MAX_ROWS_DEFAULT); more: s->truncated */
	atomic_bool *stop; /* set to stop between pages (-1, "stopped"); may be NULL */
};

/* Count: read the targets page by page (at most EV_PAGE_MAX rows a page, keyset-paginated
 * through ev_query_list, or by id through ev_bulk_query_rows), then plan them
 * (ev_bulk_plan with include_protected). On success *out is the snapshot (free it with
 * ev_bulk_snapshot_free); the operator is shown its counts, its statement and its change,
 * and may re-plan it with ev_bulk_plan (after typing the protected rows' count) before
 * ev_bulk_apply. Reads only. Returns -1 with err set (a database error, a refused run). */
int ev_bulk_count(struct ev_conn *c, const struct ev_bulk_spec *spec,
                  const struct ev_bulk_target *tg, bool include_protected,
                  struct ev_bulk_snapshot **out, struct ev_error *err);

/* Progress, reported after each batch (and once before the first, once at the end, and while
 * the run is held). */
struct ev_bulk_progress {
	size_t total;   /* rows to act on (the plan's pending rows) */
	size_t done;    /* decided so far: applied + skipped + failed */
	size_t applied; /* changed by the database */
	size_t skipped; /* changed meanwhile */
	size_t failed;
	unsigned batches; /* transactions run */
	double elapsed_s; /* the run's time, the time paused left out */
	double rate;      /* rows decided per second so far (of elapsed_s) */
	double eta_s;     /* seconds left at that rate; -1 not known yet */
	bool in_doubt;    /* the last batch's COMMIT had lost its answer (it was re-read) */
	/* That batch cannot be re-read yet (the server is unreachable, perhaps restarting): the
	 * run keeps trying for up to EV_BULK_DOUBT_WAIT_MS, or until the stop flag is set. */
	bool rereading;
	/* The run is paused between batches (ctx->hold): the report sent when it pauses, and
	 * again about once a second while it stays paused, so a UI can show for how long. */
	bool paused;
	double paused_s; /* seconds spent paused so far (the whole run's in the last report) */
	bool finished;   /* the last report: the run is over */
};

/* How long a batch whose COMMIT lost its answer is re-read before it is left in doubt: long
 * enough for a crashed server to restart or a failover to finish. */
#define EV_BULK_DOUBT_WAIT_MS 60000

/* Called on the thread running ev_bulk_apply; it may set ctx->stop or ctx->hold. It must not
 * block long: the batch's transaction is already committed when it runs, but the next waits
 * for it. */
typedef void (*ev_bulk_progress_fn)(const struct ev_bulk_progress *p, void *arg);

struct ev_bulk_ctx {
	struct ev_conn *conn;           /* the write endpoint; owned by the calling thread */
	const struct ev_access *access; /* ev_action_check_access for the snapshot's table */
	struct ev_audit_log *log;       /* the local audit file, open */
	const struct ev_audit_who *who; /* db_user NULL = the connection's CURRENT_USER() */
	ev_bulk_progress_fn progress;   /* may be NULL */
	void *progress_arg;
	atomic_bool *stop; /* set by the callback or another thread: stop after the current
	                      batch (its rows are decided; the rest stay not attempted), or stop
	                      waiting to re-read a batch in doubt; may be NULL */
	atomic_bool *hold; /* set by the callback or another thread: pause after the current
	                      batch (no transaction is open while paused) until it is cleared;
	                      the stop flag still stops a paused run; may be NULL */
	/* How long to keep trying to re-read a batch in doubt; 0 = EV_BULK_DOUBT_WAIT_MS. */
	int doubt_wait_ms;
};

/* Apply a planned snapshot (its pending rows, in order). Returns -1 with err and nothing
 * written when it cannot start (read-only, the access not checked or not writable, the audit
 * file not open, no run id possible). Otherwise 0: each row's state, message and (skipped,
 * failed) row as now are in s->items, the tally in s->tally, and when the run stopped on its
 * own (the connection could not be re-established, the server refuses writes, the audit file
 * or the audit table could not be written, a batch stayed in doubt) s->error says why; the
 * rows it did not reach stay pending (not attempted). A batch in doubt is re-read until the
 * server answers (a restarted server too), for up to ctx->doubt_wait_ms or until the stop flag
 * is set, reporting progress with `rereading` set meanwhile. While ctx->hold is set the run
 * waits between batches, sending nothing to the server, and reports with `paused` set; the
 * time paused counts neither for the pace nor for elapsed_s, rate and eta_s (s->tally.seconds
 * is the wall time). A snapshot is applied once. */
int ev_bulk_apply(const struct ev_bulk_ctx *ctx, struct ev_bulk_snapshot *s, struct ev_error *err);

/* Fault injection for the tests, at a known point of a batch (1-based): just before its
 * COMMIT (the hook may kill the connection from another session) and just after it (a
 * non-zero return makes the run act as if the COMMIT's answer had been lost). Set before any
 * thread starts; NULL removes it. */
typedef int (*ev_bulk_fault_fn)(enum ev_action_point point, unsigned batch, struct ev_conn *c,
                                void *arg);
void ev_bulk_set_fault(ev_bulk_fault_fn fn, void *arg);

#endif
