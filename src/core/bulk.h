/* evtop — bulk actions (PRODUCT.md section 2, Bulk), the pure part: the snapshot of the rows
 * counted (each with the version every UPDATE binds), the plan (which rows to act on, which
 * are protected or refused, the retry schedule spread at a rate, the batch size and the pace),
 * the tally, and the local audit file's lines (an intent line per batch, a result line per
 * row). Each row's write is exactly core/guard's single-row guarded UPDATE; src/db/bulk runs
 * them in batches. Nothing here talks to a server or a file. */
#ifndef EV_CORE_BULK_H
#define EV_CORE_BULK_H

#include "core/guard.h"
#include "core/model.h"
#include "core/query.h"
#include "core/util.h"

#include <stdbool.h>
#include <stddef.h>

#define EV_BULK_BATCH_DEFAULT    100    /* rows per transaction */
#define EV_BULK_BATCH_MAX        1000   /* and at most */
#define EV_BULK_BATCH_MS_DEFAULT 100    /* stop adding rows to a batch after this long */
#define EV_BULK_PAUSE_MS_DEFAULT 100    /* between two batches */
#define EV_BULK_RATE_DEFAULT     10.0   /* retry: events per second made due */
#define EV_BULK_RATE_MAX         100000 /* events per second */
#define EV_BULK_MAX_ROWS_DEFAULT 100000 /* rows one count reads at most */
#define EV_BULK_MAX_ROWS_MAX     1000000

/* How a run writes. */
struct ev_bulk_settings {
	int batch_size; /* rows per transaction, 1 .. EV_BULK_BATCH_MAX */
	int batch_ms;   /* a batch takes no more rows once it has run this long, 1 .. 60000 */
	int pause_ms;   /* pause between two batches, 0 .. 600000 */
	/* RETRY_SCHEDULE: next_retry_time = NOW() + delay_s + floor(i / rate) for the i-th row
	 * acted on (0-based), so the applications' scanner finds at most `rate` of them due per
	 * second. 0 = every row at delay_s. */
	double rate;
	/* At most this many rows written per second (0 = no limit besides batch_size and
	 * pause_ms). Retry now and recover make events due the moment they are written: pacing
	 * the writes is what spreads them. A paced run takes smaller batches (ev_bulk_batch_rows).
	 */
	double pace;
	int delay_s; /* RETRY_SCHEDULE: the first row's delay, 0 .. 30 days */
};

/* batch_size 100, batch_ms 100, pause_ms 100, rate 10, pace 0, delay_s 0. */
void ev_bulk_settings_default(struct ev_bulk_settings *s);
/* Check the ranges; -1 with err (EV_ERR_USAGE) saying which. */
int ev_bulk_settings_check(const struct ev_bulk_settings *s, struct ev_error *err);
/* The schedule offset (seconds from the UPDATE's NOW()) of the i-th row acted on. */
long long ev_bulk_spread_offset(const struct ev_bulk_settings *s, size_t i);
/* Rows per batch: batch_size, and with a pace at most a tenth of a second's worth (>= 1), so a
 * paced run writes small batches often rather than a burst and a long wait. */
int ev_bulk_batch_rows(const struct ev_bulk_settings *s);
/* How long to wait before the next batch when `written` rows have been written in
 * `elapsed_ms` since the run started: pause_ms, or longer to keep to the pace. */
long long ev_bulk_wait_ms(const struct ev_bulk_settings *s, size_t written, long long elapsed_ms);
/* Seconds left at the rate so far; -1 when it cannot be told yet. */
double ev_bulk_eta_s(size_t done, size_t total, double elapsed_s);
/* Is list kind k one whose rows action a starts from (retry: the failed lists and high-retry;
 * cancel: pending, the failed lists and high-retry; recover: stuck)? */
bool ev_bulk_list_fits(enum ev_action a, enum ev_list_kind k);

/* --- the snapshot and the plan --------------------------------------------------------------- */

/* What a run does, besides its rows. Strings are copied into the snapshot. */
struct ev_bulk_spec {
	enum ev_table_kind table;
	const char *table_name;       /* the real name (a valid identifier); NULL = the model's */
	enum ev_action action;        /* RETRY_SCHEDULE, RETRY_NOW, CANCEL or RECOVER */
	const char *reason;           /* the operator's reason (cancel needs one) */
	int stuck_threshold_s;        /* RECOVER on the message table */
	bool recover_message;         /* RECOVER on the message table is enabled */
	char *const *protected_types; /* NULL-terminated tokens; may be NULL */
	struct ev_bulk_settings set;
	const char *target; /* what was counted, for people: "list failed-due, event_type=X" */
};

enum ev_bulk_state {
	EV_BULK_PENDING,   /* to act on; after a run: not attempted (it stopped first) */
	EV_BULK_PROTECTED, /* a protected type the operator did not include: not touched */
	EV_BULK_REFUSED,   /* the guard refuses it (status, deleted): not touched */
	EV_BULK_APPLIED,   /* the database changed it (and its audit row is there) */
	EV_BULK_SKIPPED,   /* the guard matched no row: it changed since it was counted */
	EV_BULK_FAILED,    /* an error; the database did not change it */
};

const char *ev_bulk_state_name(enum ev_bulk_state s);

struct ev_bulk_item {
	struct ev_guard_row row; /* as counted: its version is the one the UPDATE binds */
	enum ev_bulk_state state;
	long long delay_s;   /* RETRY_SCHEDULE: its offset in the spread */
	unsigned batch;      /* the batch (1-based) that decided it; 0 = none */
	char *msg;           /* refused, skipped, failed: why; applied: a note, or NULL */
	char *now;           /* skipped, failed: the row as re-read (described), or NULL */
	bool protected_type; /* it is of a protected type (acted on only when included) */
};

/* The tally of a run (or, before one, of the plan). Every row counted is in exactly one of
 * protected, refused, applied, skipped, failed, not_attempted. */
struct ev_bulk_tally {
	size_t counted;       /* rows in the snapshot */
	size_t protected_n;   /* protected types left untouched */
	size_t refused;       /* refused by the guard before any SQL */
	size_t applied;       /* changed by the database */
	size_t skipped;       /* changed meanwhile: the guard matched no row */
	size_t failed;        /* errors: not changed (or in doubt; see in_doubt) */
	size_t not_attempted; /* left when the run stopped */
	unsigned batches;     /* transactions run */
	unsigned in_doubt;    /* batches whose COMMIT's answer was lost (resolved by re-reading) */
	bool stopped;         /* it stopped before the end (the stop flag, or an error) */
	bool unresolved;      /* a batch stayed in doubt: the server could not be re-read */
	double seconds;       /* the run's wall time */
};

struct ev_bulk_snapshot {
	enum ev_table_kind table;
	char *table_name;
	enum ev_action action;
	char *reason;
	int stuck_threshold_s;
	bool recover_message;
	char **protected_types;
	struct ev_bulk_settings set;
	char *target;
	/* The rows, in the order they are acted on (the list's order, or the ids'). */
	size_t n, cap;
	struct ev_bulk_item *items;
	bool truncated;     /* more rows matched than the count read (max_rows) */
	size_t ids_missing; /* ids asked for and not found */
	/* The plan (ev_bulk_plan). */
	bool include_protected;
	size_t n_pending, n_protected, n_refused;
	char *protected_summary; /* "PAY 12, REFUND 3", or NULL */
	char *statement;    /* the first row's UPDATE with its '?' (each row's differs only in the
	                       parameters), or NULL when nothing is to be done */
	char *example;      /* that UPDATE with its parameters filled in */
	char *change;       /* what it changes in that row */
	char *notice;       /* a note (one more attempt for exhausted rows; the message table's
	                       recover risk), or NULL */
	size_t n_exhausted; /* rows to retry that get exactly one more attempt */
	long long spread_last_s; /* RETRY_SCHEDULE: the last row's offset */
	unsigned batches_planned;
	/* After a run (src/db/bulk). */
	struct ev_bulk_tally tally;
	char run_id[48];
	char error[512]; /* why the run stopped on its own, or "" */
	/* Private: the ids already in items, for ev_bulk_snapshot_add (open addressing). */
	size_t *slots;
	size_t nslots;
};

/* An empty snapshot for spec (copied). */
struct ev_bulk_snapshot *ev_bulk_snapshot_new(const struct ev_bulk_spec *spec);
/* Append a row as read (copied). A row already in the snapshot (a keyset page that saw it
 * twice while it moved) is kept once, at its first place, with the higher version. */
void ev_bulk_snapshot_add(struct ev_bulk_snapshot *s, const struct ev_guard_row *row);
/* Free and NULL. */
void ev_bulk_snapshot_free(struct ev_bulk_snapshot **s);

/* Decide each row: pending (to act on), protected (a protected type, unless
 * include_protected — the operator typed their count, or --include-protected) or refused (the
 * guard refuses it: not a status the action starts from, deleted); assign the schedule
 * offsets; fill the counts, the statement and the change of the first row. May be called
 * again with the other choice. Returns -1 with err when the whole run is refused (cancel
 * without a reason, recover on the message table not enabled, a spread past 30 days). */
int ev_bulk_plan(struct ev_bulk_snapshot *s, bool include_protected, struct ev_error *err);
/* The plan's protected rows, for people, so that a count is never read as its opposite:
 * "0"; "4 (PAY 4), left alone"; "25 (PAY 13, STOCK 12), all included". malloc'd. */
char *ev_bulk_protected_text(const struct ev_bulk_snapshot *s);
/* The guarded UPDATE for one row of a planned snapshot (its version, its offset). */
int ev_bulk_item_guard(const struct ev_bulk_snapshot *s, const struct ev_bulk_item *it,
                       struct ev_guard *g, struct ev_error *err);
/* Count the rows' states into t (the run's counters — batches, in_doubt, stopped, seconds —
 * are kept). */
void ev_bulk_tally_count(const struct ev_bulk_snapshot *s, struct ev_bulk_tally *t);
/* "applied 4900, skipped 90 (changed meanwhile), failed 10; 12 protected and 0 refused not
 * touched; 0 not attempted". malloc'd. */
char *ev_bulk_tally_describe(const struct ev_bulk_tally *t);

/* The rows with these ids, every column the actions read plus NOW() (deleted rows included,
 * so the guard refuses them by name), ORDER BY id, n <= EV_PAGE_MAX. */
struct ev_query *ev_bulk_query_rows(enum ev_table_kind t, const char *table_name,
                                    const unsigned long long *ids, size_t n);

/* --- the audit file's lines -------------------------------------------------------------- */

/* A run's id for its audit lines: the local time, the pid and a counter. */
void ev_bulk_run_id(char *buf, size_t size);

/* The intent line of one batch, written and flushed before its transaction: time, who,
 * table, action, reason, "result":"intent", "bulk" (the run id), "batch" (1-based), and
 * "rows": [{"id","event_no","status","version", and for a scheduled retry "delay_s"}]. */
char *ev_bulk_intent_line(const char *time, const struct ev_audit_who *who,
                          const struct ev_bulk_snapshot *s, unsigned batch,
                          const struct ev_bulk_item *const *items, size_t n);
/* One row's result line: the single action's record (ev_audit_json_line) with "bulk" and
 * "batch" added. */
char *ev_bulk_result_line(const struct ev_audit_rec *r, const char *run_id, unsigned batch);

#endif
