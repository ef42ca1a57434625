/* evtop — an archive run (core/archive.h) on a source's primary: batch after batch, each one
 * transaction under READ COMMITTED that locks only the finished rows it moves, copies them
 * (to the archive table, or to the file, written and fsync'ed before the DELETE commits),
 * deletes them with the guard again, and records the batch (evtop_archive_log in the same
 * transaction when it exists; the local audit file's intent and result lines around it);
 * paced, paused while a replica lags, stopped by a flag or a time between batches.
 * Blocks: run it on the thread that owns the connection. */
#ifndef EV_DB_ARCHIVE_H
#define EV_DB_ARCHIVE_H

#include "core/archive.h"
#include "core/auditlog.h"
#include "db/action.h"
#include "db/conn.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <time.h>

struct ev_archive_progress {
	size_t moved;        /* rows moved (committed) */
	size_t examined;     /* candidates gone past */
	size_t kept_backlog; /* still in the backlog: stay online */
	size_t kept_status;  /* finished, of a status not asked for */
	size_t kept_deleted; /* soft-deleted, without --include-deleted */
	size_t changed;      /* chosen, but changed before their lock: stay online */
	unsigned batches;    /* batches committed */
	size_t batch_size;   /* the current batch size: from EV_ARCHIVE_BATCH_START, halved after a
	                        batch held its locks past half of EV_ARCHIVE_LOCK_MS, doubled after
	                        quick ones up to --batch; a batch past EV_ARCHIVE_LOCK_MS before
	                        its COMMIT is rolled back and done again at half the size */
	double last_lock_ms, max_lock_ms; /* lock holding: the last batch's, the longest
	                                     committed */
	unsigned rolled_back; /* batches rolled back over the lock budget, done again smaller */
	double max_rolled_back_ms;       /* the longest of those before its rollback */
	double elapsed_s, rate;          /* rows moved a second so far */
	struct ev_archive_cursor cursor; /* after the last committed batch */
	const char *waiting;             /* paused, and why (a replica's lag), or NULL */
	bool finished;                   /* the last report */
};

typedef void (*ev_archive_progress_fn)(const struct ev_archive_progress *p, void *arg);
/* The replica's lag: 0 with *lag_s (seconds; -1 when it reads NULL: its SQL thread stopped),
 * or -1 with why when it could not be read (then it counts as lagging). */
typedef int (*ev_archive_lag_fn)(void *arg, long long *lag_s, char *why, size_t n);

struct ev_archive_ctx {
	struct ev_conn *conn; /* the source's primary, owned by the calling thread */
	const struct ev_archive_spec *spec;
	size_t batch;             /* rows a batch, at most */
	double rate;              /* rows a second, at most (0: no limit) */
	int pause_ms;             /* between batches */
	struct ev_audit_log *log; /* the local audit file, open */
	struct ev_audit_who who;  /* db_user NULL: the connection's CURRENT_USER() */
	const char *run_id;
	bool log_table;        /* evtop_archive_log exists: each batch adds its row there */
	int file_fd;           /* EV_ARCHIVE_TO_FILE: the file, open for appending */
	atomic_bool *stop;     /* stop after the current batch; may be NULL */
	time_t until;          /* stop before a batch at or after this (0: never) */
	ev_archive_lag_fn lag; /* NULL: no replica to wait for */
	void *lag_arg;
	long long max_lag_s;
	ev_archive_progress_fn progress; /* after each batch, while paused, and at the end */
	void *progress_arg;
	void (*save_cursor)(const struct ev_archive_cursor *c, void *arg); /* after each batch */
	void *save_arg;
	/* A batch's lock holding aimed at, in ms (0: EV_ARCHIVE_LOCK_MS): batches are halved over
	 * half of it, doubled under a quarter, rolled back past it. Tests that count batches set
	 * it high, so that the sizes do not follow the machine's load. */
	int lock_aim_ms;
};

struct ev_archive_result {
	struct ev_archive_progress p;
	bool complete;      /* nothing older than the cutoff is left after the cursor */
	bool stopped;       /* the stop flag */
	bool until_reached; /* --until */
	char error[768];    /* why the run ended early ("" when it did not) */
};

/* Run batches from *cursor (unset: the oldest row) until nothing is left before the cutoff,
 * the stop flag, `until`, or an error; *cursor follows the committed batches. Returns 0 with
 * out filled (out->error says why it ended early, if it did), or -1 with err when it could
 * not start (the session's isolation level could not be set). A batch whose affected rows
 * differ from its locked rows is rolled back and ends the run; a batch whose COMMIT lost its
 * answer is re-read (are its rows still online?) and reported as it really ended. */
int ev_archive_run(const struct ev_archive_ctx *ctx, struct ev_archive_cursor *cursor,
                   struct ev_archive_result *out, struct ev_error *err);

/* The dry run: how many rows would move after *cursor (capped at EV_ARCHIVE_COUNT_CAP; -1
 * with err). */
long long ev_archive_count(struct ev_conn *c, const struct ev_archive_spec *s,
                           const struct ev_archive_cursor *cursor, struct ev_error *err);

/* A table's facts for the console's header (core/archive.h): its size, its oldest row through
 * index (the create_time index; NULL: not read), and with retention_s > 0 the rows created
 * before it. Returns 0 (out->read), or -1 with err. */
int ev_archive_read_facts(struct ev_conn *c, const char *table_name, const char *index,
                          int retention_s, struct ev_table_facts *out, struct ev_error *err);

/* Fault injection for the tests: called at each point of a batch (1-based): after the
 * candidates' read (the hook may change a row from another session), just before COMMIT (it
 * may kill the connection), just after it (non-zero: act as if COMMIT lost its answer). */
enum ev_archive_point {
	EV_ARCHIVE_AFTER_READ,
	EV_ARCHIVE_BEFORE_COMMIT,
	EV_ARCHIVE_AFTER_COMMIT,
};
typedef int (*ev_archive_fault_fn)(enum ev_archive_point point, unsigned batch, struct ev_conn *c,
                                   void *arg);
void ev_archive_set_fault(ev_archive_fault_fn fn, void *arg);

#endif
