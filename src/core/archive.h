/* evtop — retention (`evtop archive`, doc/archive.md): which finished rows a run moves out of
 * an online table, and the statements of one batch. Pure: no I/O.
 *
 * A batch (db/archive.c runs it, one transaction under READ COMMITTED):
 *   ev_archive_query_candidates  a non-locking read of idx_create_time after the cursor,
 *                                at most EV_ARCHIVE_EXAMINE_FACTOR x the batch rows;
 *                                ev_archive_pick chooses the finished ones and the next cursor
 *   ev_archive_query_lock        those rows by primary key, FOR UPDATE, with the guard again
 *                                (a row changed since the read is not locked, and stays)
 *   ev_archive_query_copy        INSERT INTO the archive SELECT the locked rows (target table)
 *   ev_archive_query_delete      DELETE the locked rows, with the same guard
 *   ev_archive_query_log         evtop_archive_log's row for the batch (when it exists)
 * Backlog statuses (0, 1, 3) are never moved, whatever is asked. */
#ifndef EV_CORE_ARCHIVE_H
#define EV_CORE_ARCHIVE_H

#include "core/guard.h"
#include "core/model.h"
#include "core/query.h"
#include "core/rowset.h"
#include "core/util.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define EV_ARCHIVE_BATCH_DEFAULT   500
#define EV_ARCHIVE_BATCH_START     50 /* the first batch at most; doubled while quick */
#define EV_ARCHIVE_BATCH_MIN       10 /* never rolled back for its lock holding */
#define EV_ARCHIVE_BATCH_MAX       5000
#define EV_ARCHIVE_EXAMINE_FACTOR  10
#define EV_ARCHIVE_LOCK_MS         100           /* a batch's lock holding aimed at */
#define EV_ARCHIVE_MIN_RETENTION_S (7LL * 86400) /* below it: --force (the replay window) */
#define EV_ARCHIVE_COUNT_CAP       1000000       /* the dry run counts up to this */

enum ev_archive_target {
	EV_ARCHIVE_TO_TABLE, /* INSERT INTO the archive table, then DELETE */
	EV_ARCHIVE_TO_FILE,  /* JSON lines written and fsync'ed, then DELETE */
	EV_ARCHIVE_PURGE,    /* DELETE only (--purge) */
};

const char *ev_archive_target_name(enum ev_archive_target t);

struct ev_archive_spec {
	enum ev_table_kind table;
	const char *table_name;   /* the online table */
	const char *archive_name; /* EV_ARCHIVE_TO_TABLE: the archive table */
	const char *file_path;    /* EV_ARCHIVE_TO_FILE: the JSON-lines file */
	enum ev_archive_target target;
	unsigned statuses;    /* finished statuses moved: bits (1u << EV_ST_SUCCESS | CANCELLED) */
	bool include_deleted; /* soft-deleted rows (deleted = 1) of either finished status too */
	const char *cutoff;   /* rows created before this server time move ('YYYY-MM-DD ...') */
	const char *const *columns; /* the online table's columns, in the server's order */
	size_t ncolumns;
	const char *create_index; /* the server's name of the index on (create_time) */
};

/* Where a run stands: the last row it went past in (create_time, id) order. */
struct ev_archive_cursor {
	bool set;
	char create_time[32];
	uint64_t id;
};

/* "success", "cancelled", or both comma-separated, into status bits; backlog statuses are
 * refused with a message that says they never move. */
int ev_archive_parse_statuses(const char *text, unsigned *out, struct ev_error *err);
/* Whether a row of this status and deleted flag is moved by s. */
bool ev_archive_row_eligible(const struct ev_archive_spec *s, int status, int deleted);

/* One row: NOW() and NOW() - INTERVAL older_than_s SECOND, the run's cutoff. */
struct ev_query *ev_archive_query_clock(long long older_than_s);
/* id, create_time, status, deleted of at most `limit` rows created before the cutoff, after
 * the cursor (when set), in (create_time, id) order through the create_time index. */
struct ev_query *ev_archive_query_candidates(const struct ev_archive_spec *s,
                                             const struct ev_archive_cursor *after, size_t limit);

/* What ev_archive_pick chose from a candidates read. */
struct ev_archive_pick {
	uint64_t *ids; /* the rows to lock (malloc'd) */
	size_t n;
	size_t examined;     /* candidates gone past (chosen or kept) */
	size_t kept_backlog; /* still in the backlog (0, 1, 3), or an unknown status: stay online */
	size_t kept_status;  /* finished, but not of a status asked for (cancelled without it) */
	size_t kept_deleted; /* soft-deleted, without --include-deleted */
	struct ev_archive_cursor next; /* the cursor after this batch */
	bool end;                      /* the read came back short: nothing older is left */
};
/* Walk a candidates read (its rows in order) choosing at most `batch` rows; the cursor moves
 * past every row chosen or kept, up to the batch-th chosen one. */
void ev_archive_pick(const struct ev_archive_spec *s, const struct ev_rowset *rs, size_t batch,
                     size_t limit, struct ev_archive_pick *out);
void ev_archive_pick_clear(struct ev_archive_pick *p);

/* The rows of ids locked FOR UPDATE under the guard (their status finished and deleted as
 * chosen): id, a CRC32 of every column (`crc`), create_time, and (whole) every column after
 * them, in (create_time, id) order. */
struct ev_query *ev_archive_query_lock(const struct ev_archive_spec *s, const uint64_t *ids,
                                       size_t n, bool whole);
/* INSERT INTO the archive (every column) SELECT them FROM the online table WHERE id IN. */
struct ev_query *ev_archive_query_copy(const struct ev_archive_spec *s, const uint64_t *ids,
                                       size_t n);
/* DELETE FROM the online table WHERE id IN (...) AND the guard. */
struct ev_query *ev_archive_query_delete(const struct ev_archive_spec *s, const uint64_t *ids,
                                         size_t n);
/* One count: how many of ids are still in the online table (a batch whose COMMIT lost its
 * answer: none means it committed). */
struct ev_query *ev_archive_query_reread(const struct ev_archive_spec *s, const uint64_t *ids,
                                         size_t n);
/* How many rows the run would move (the dry run), counted through the create_time index up
 * to EV_ARCHIVE_COUNT_CAP (+1: more), after the cursor when set. One row: n. */
struct ev_query *ev_archive_query_count(const struct ev_archive_spec *s,
                                        const struct ev_archive_cursor *after);

/* A batch as the audit records it. */
struct ev_archive_batch {
	const char *run_id;
	unsigned number; /* 1-based within the run */
	uint64_t first_id, last_id;
	const char *first_create_time, *last_create_time;
	size_t rows;
	uint32_t checksum; /* XOR of the rows' CRC32s */
};
/* evtop_archive_log's row for a batch (sql/.../audit.sql; archive_time NOW(3), db_user the
 * connection's CURRENT_USER()). */
struct ev_query *ev_archive_query_log(const struct ev_archive_spec *s, const struct ev_audit_who *w,
                                      const struct ev_archive_batch *b);
/* One count: does evtop_archive_log exist in the current database. */
struct ev_query *ev_archive_query_log_exists(void);

/* The audit file's lines for a batch: the intent before its writes, the result after
 * (result "archived", or "failed" with the error). malloc'd, ending in a newline. */
char *ev_archive_audit_line(const char *time, const struct ev_audit_who *w,
                            const struct ev_archive_spec *s, const struct ev_archive_batch *b,
                            const char *result, const char *error);

/* The statements that make the archive table for s (CREATE TABLE ... LIKE the online table,
 * then one ALTER that drops its secondary indexes (info: the online table's) and adds the
 * look-up ones: event_no not unique, biz/aggregate, trace_id, create_time). n statements in
 * out (malloc'd strings). */
size_t ev_archive_create_sql(const struct ev_archive_spec *s, const struct ev_table_info *info,
                             char **out, size_t max);
/* COLUMN_NAME, COLUMN_TYPE, IS_NULLABLE of a table in ORDINAL_POSITION order (information_
 * schema, current database). */
struct ev_query *ev_archive_query_columns(const char *table_name);
/* Whether two such reads describe the same columns: 0, or -1 with err naming the first
 * difference. */
int ev_archive_columns_match(const struct ev_rowset *online, const struct ev_rowset *archive,
                             const char *archive_name, struct ev_error *err);

/* One JSON line of the file target for a row (rs's columns after the lock read's first three, the
 * values as stored, as strings; NULL as null): {"batch": N, "run": ID, "table": T, "row": {...}}.
 */
char *ev_archive_file_row(const struct ev_archive_spec *s, const struct ev_archive_batch *b,
                          const struct ev_rowset *rs, size_t row);
/* The line after a batch's COMMIT: {"batch": N, "run": ID, "committed": true, "rows": n,
 * "first_id": ..., "last_id": ..., "checksum": ...}. */
char *ev_archive_file_commit(const struct ev_archive_spec *s, const struct ev_archive_batch *b);

/* A table's size and history against its retention, for the console's header (read every few
 * minutes: information_schema's estimates, the oldest row through the create_time index, the
 * rows created before the retention counted up to EV_ARCHIVE_PAST_CAP). */
#define EV_ARCHIVE_PAST_CAP 1000000
struct ev_table_facts {
	bool read;
	long long rows;  /* TABLE_ROWS, an estimate (-1 unknown) */
	long long bytes; /* DATA_LENGTH + INDEX_LENGTH (-1 unknown) */
	bool have_oldest;
	long long oldest_age_s;
	int retention_s;  /* the setting; 0 none */
	long long past;   /* rows created before the retention (-1 not counted) */
	bool past_capped; /* the count stopped at EV_ARCHIVE_PAST_CAP */
};
/* One row: TABLE_ROWS, DATA_LENGTH + INDEX_LENGTH of a table of the current database. */
struct ev_query *ev_archive_query_size(const char *table_name);
/* The rows created before NOW() - retention_s, up to EV_ARCHIVE_PAST_CAP + 1 (through index). */
struct ev_query *ev_archive_query_past(const char *table_name, const char *index, int retention_s);
/* "~1.2M rows, 2.3 GB, oldest 95d, 1.1M+ before the 30d retention" (the last part only with a
 * retention; "" when not read). */
void ev_archive_facts_text(const struct ev_table_facts *f, char *out, size_t size);

/* The cursor file's text ("create_time\tid\n") and back; false when it does not parse. */
char *ev_archive_cursor_text(const struct ev_archive_cursor *c);
bool ev_archive_cursor_parse(const char *text, struct ev_archive_cursor *c);

#endif
