/* evtop — the backlog mirror: per table and source, the rows of the backlog (statuses 0, 1
 * and 3) kept in memory, so that a refresh reads what the status indexes carry (index-only)
 * and by primary key only the rows that entered or changed, and every dashboard figure of
 * the backlog is computed here, for any dimension, without a query.
 *
 * A refresh (db/mirror.c runs it inside one consistent snapshot):
 *   ev_mirror_clock       the snapshot's NOW()
 *   ev_mirror_begin
 *   ev_mirror_range_row   for every row of each status range (id, next_retry_time,
 *                         retry_count: the status index's columns); a range not read this
 *                         time (the failed one, every 5th refresh only) ev_mirror_carry_range
 *   ev_mirror_lock_row    outbox: for every processing row (id, lock_until), read through
 *                         its lock index instead of its status range
 *   ev_mirror_ranges_done the rows not seen left the backlog; which rows to read by key
 *   ev_mirror_pk_row      for each row read by primary key (ev_mirror_query_pk)
 *   ev_mirror_verify_row  for each row of the rolling share (ev_mirror_share_ids), read by
 *                         primary key without its group columns (ev_mirror_query_verify);
 *                         then ev_mirror_verify_done names the rows found changed, read
 *                         whole (ev_mirror_pk_row)
 *   ev_mirror_created_row for each row of ev_mirror_query_created (the flows), then
 *                         ev_mirror_created_done
 *   ev_mirror_end
 * then ev_mirror_fill puts the figures of one dimension into a dashboard.
 *
 * Pure: no I/O. Times are the server's DATETIME text in the session's zone, compared as
 * the server compares them with NOW() (a fraction of a second counts as the next second). */
#ifndef EV_CORE_MIRROR_H
#define EV_CORE_MIRROR_H

#include "core/dashboard.h"
#include "core/model.h"
#include "core/query.h"
#include "core/rowset.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Rows mirrored over every table and source together, unless set (ev_mirror_set_cap). */
#define EV_MIRROR_CAP_DEFAULT 1000000
/* Every mirrored row is read again by primary key within this many seconds (what no index
 * carries: a soft delete, max_retry_count changed alone, update_time). */
#define EV_MIRROR_REVERIFY_S 300
/* The full counts are compared with the mirror this often (seconds), and at the start. */
#define EV_MIRROR_CHECK_S 600
/* The failed range (the largest, and the slowest to change) is read every this many refreshes
 * once it holds EV_MIRROR_FAILED_SMALL rows or more; in between it is carried, its arrivals
 * known from the rows that left the other ranges (read by key), a row leaving it directly
 * (cancelled, deleted) seen at its next read. */
#define EV_MIRROR_FAILED_EVERY 5
#define EV_MIRROR_FAILED_SMALL 5000
/* A status range of this many rows or more (pending every refresh, failed when it is read) is
 * verified by a digest the server computes over its index entries (ev_mirror_digest_due),
 * and read whole only when the digests differ. */
#define EV_MIRROR_DIGEST_MIN 2000
/* Rows created within this many seconds are not counted yet (rows are inserted inside
 * business transactions and commit late). */
#define EV_MIRROR_SETTLE_S 30
/* The rates are over the refreshes of the last minute. */
#define EV_MIRROR_RATE_S 60
/* Ids per primary-key read. */
#define EV_MIRROR_PK_BATCH 500

struct ev_mirror;

/* What one refresh changed, and the mirror's health. */
struct ev_mirror_stats {
	size_t rows;       /* rows mirrored after the refresh */
	size_t entered;    /* rows new to the backlog */
	size_t changed;    /* rows whose indexed columns changed */
	size_t left;       /* rows that left the backlog */
	size_t pk_reads;   /* rows read whole by primary key (entered, changed, left) */
	size_t reverified; /* rows of the rolling share, compared by primary key without their
	                      group columns (those found changed are read whole too) */
	size_t range_rows; /* rows the index-only range reads returned */
	size_t digests;    /* ranges verified by their digest alone */
	size_t rereads;    /* ranges read whole because their digest differed */
	bool over_cap;     /* the backlog does not fit: the mirror is empty, figures come from
	                      the capped counts */
};

/* The cap on rows mirrored by every mirror of the process together (0: the default). */
void ev_mirror_set_cap(size_t rows);
size_t ev_mirror_cap(void);
/* The rows this mirror may hold: the cap less what the process's other mirrors hold. */
size_t ev_mirror_room(const struct ev_mirror *m);

struct ev_mirror *ev_mirror_new(enum ev_table_kind table);
void ev_mirror_free(struct ev_mirror **m);
enum ev_table_kind ev_mirror_table(const struct ev_mirror *m);
/* Forget every row (the next refresh reads the backlog anew). */
void ev_mirror_reset(struct ev_mirror *m);
/* The span of the rates from now on (seconds; 0: EV_MIRROR_RATE_S). */
void ev_mirror_set_rate_span(struct ev_mirror *m, int seconds);

/* The refresh's reads, built for req's table (its name and indexes; the group columns of
 * every dimension of the table). NULL with err EV_ERR_SCHEMA when the table lacks the
 * status index (status, next_retry_time ...) the range reads need. The range read asks for
 * at most `limit` rows (the cap left, plus one). */
struct ev_query *ev_mirror_query_range(const struct ev_dash_req *req, int status, size_t limit,
                                       struct ev_error *err);
/* Outbox: id and lock_until of every processing row, through (publish_status, lock_until),
 * read in place of its status range; NULL (no error) when the table has no such index: the
 * range is read, and lock_until by key. */
struct ev_query *ev_mirror_query_lock(const struct ev_dash_req *req, size_t limit);
/* The rows of ids[0..n) by primary key, in the column order ev_mirror_pk_row reads. */
struct ev_query *ev_mirror_query_pk(const struct ev_dash_req *req, const uint64_t *ids, size_t n);
/* The rolling share's read of ids[0..n) by primary key, for ev_mirror_verify_row: a checksum a
 * row (CRC32 of what the share compares: status, deleted, version > 0, the retry columns, the
 * times and the group values), or, once the mirror found it cannot reproduce the server's
 * checksums (ev_mirror_share_settle), the values themselves. */
struct ev_query *ev_mirror_query_verify(const struct ev_mirror *m, const struct ev_dash_req *req,
                                        const uint64_t *ids, size_t n);
/* A new refresh. */
void ev_mirror_begin(struct ev_mirror *m);
/* A row of status range `status` (0, 1 or 3) as the index-only read gives it: id,
 * next_retry_time, retry_count. A change of either reads the row by key: besides the failed
 * figures, they tell that a row went round (0→1→3→0, 1→3→1) between two reads, which
 * changes what no index carries (update_time, last_handle_time). Returns -1 when id does
 * not parse (the row is ignored). */
int ev_mirror_range_row(struct ev_mirror *m, int status, const char *id, const char *next_retry,
                        const char *retry_count);
/* A row of the lock read (outbox, status 1): a processing row and its lock_until (a change
 * of lock_until, a lock taken again, reads the row by key). Processing figures need no retry
 * column: a processing row's retry_count or next_retry_time is read by key when it enters
 * and when it leaves. Returns -1 when id does not parse. */
int ev_mirror_lock_row(struct ev_mirror *m, const char *id, const char *lock_until);
/* The ranges are read: rows not seen left their range, and are read by key for where they
 * went. `share` more rows (the rolling re-verification; ev_mirror_share) are read by key with
 * them and the rows that entered or changed.
 * Returns the ids to read by primary key (owned by m, valid until the next begin) in *ids. */
size_t ev_mirror_ranges_done(struct ev_mirror *m, size_t share, const uint64_t **ids);
/* evtop wrote row id (an action applied, or skipped because the row had changed): the next
 * refresh reads it by key, so that the figures show where it went at once, even from a range
 * that refresh does not read (the failed one, carried). */
void ev_mirror_touch(struct ev_mirror *m, uint64_t id);
/* Read every row by key this refresh (after a drift). Returns the ids as ranges_done. */
size_t ev_mirror_want_all(struct ev_mirror *m, const uint64_t **ids);
/* A row of a primary-key read (rs made by ev_mirror_query_pk's statement). */
void ev_mirror_pk_row(struct ev_mirror *m, const struct ev_rowset *rs, size_t row);
/* The rolling share ev_mirror_ranges_done chose (owned by m, valid until the next begin):
 * to read with ev_mirror_query_verify. */
size_t ev_mirror_share_ids(const struct ev_mirror *m, const uint64_t **ids);
/* A row of the share's read: what no index carries (deleted, max_retry_count, update_time,
 * version > 0, create_time, the group columns: a value is compared by the collation key of
 * its spelling, an unknown spelling is a difference) compared with the mirror, and the
 * indexed columns with it; a difference reads the row whole. */
void ev_mirror_verify_row(struct ev_mirror *m, const struct ev_rowset *rs, size_t row);
/* The share's rows found changed, to read whole now (ev_mirror_query_pk; owned by m). */
size_t ev_mirror_verify_done(struct ev_mirror *m, const uint64_t **ids);
/* Those rows read whole: true (once) when one of them still has another checksum than the
 * server's, and the share compares values from then on. */
bool ev_mirror_share_settle(struct ev_mirror *m);
/* Whether the share compares values (ev_mirror_query_verify's second form). */
bool ev_mirror_share_plain(const struct ev_mirror *m);
/* The refresh is done: stats of what it changed. */
void ev_mirror_end(struct ev_mirror *m, struct ev_mirror_stats *st);
/* The backlog did not fit under the cap: the mirror drops its rows and says so. */
void ev_mirror_overflow(struct ev_mirror *m);
bool ev_mirror_is_over_cap(const struct ev_mirror *m);

/* The snapshot's clock: SELECT NOW(), the refresh's first read inside it. */
struct ev_query *ev_mirror_query_clock(void);
/* The snapshot's NOW() (before ev_mirror_begin): the flows' clock. */
void ev_mirror_clock(struct ev_mirror *m, const char *now);
/* The last refresh's NOW() as given to ev_mirror_clock ("" before the first): for a second
 * ev_mirror_fill of the same refresh (another dimension). */
const char *ev_mirror_now(const struct ev_mirror *m);
/* Whether this refresh reads the failed range (else ev_mirror_carry_range(m, 3)). */
bool ev_mirror_read_failed(const struct ev_mirror *m);
/* The rows of `status` stay as they are this refresh (their range is not read). */
void ev_mirror_carry_range(struct ev_mirror *m, int status);

/* The range digests. A range of EV_MIRROR_DIGEST_MIN rows or more, once read whole, is not
 * read again while the server's digest of its index entries (a count and a 64-bit XOR over
 * id, next_retry_time and retry_count; the outbox's processing rows: id and lock_until) is the
 * mirror's: the pending range with its arrivals read (ev_mirror_query_arrivals), the
 * processing one (its arrivals are the claims, known from the pending and failed ranges'
 * reads), the failed one when it is due.
 *   ev_mirror_digest_due      whether range `status` may be verified so this refresh
 *   ev_mirror_carry_to_verify instead of reading it: carried, to verify after the key reads
 *   ev_mirror_query_digest    then (the key reads done, its arrivals and leavers read)
 *   ev_mirror_digest_check    true: the range stands; false: read it again in the snapshot:
 *   ev_mirror_reread_begin, ev_mirror_range_row for each row, ev_mirror_reread_done (the
 *                             rows to read by key: new, changed, or gone from it).
 * A range whose digest differed is read whole the next 2, 4, ... 32 times it is due (a range
 * that changes as fast as it is read: a digest would be a read more), until one agrees. A
 * server whose digest of the rows it sends is not the mirror's digest of them (times with a
 * fraction of a second, values outside the mirror's range) has its ranges read whole. */
void ev_mirror_set_digest_min(size_t rows); /* 0: the default */
bool ev_mirror_digest_due(struct ev_mirror *m, int status);
/* locks: the outbox's processing range, read through its lock index (its digest is then of
 * lock_until: ev_mirror_query_lock_digest). */
void ev_mirror_carry_to_verify(struct ev_mirror *m, int status, bool locks);
/* Whether range `status` was carried this refresh to be verified, and is not yet. */
bool ev_mirror_verify_pending(const struct ev_mirror *m, int status);
/* COUNT(*) and the XOR of the rows' digests of range `status` (one row), through the status
 * index (NULL with err as ev_mirror_query_range). */
struct ev_query *ev_mirror_query_digest(const struct ev_dash_req *req, int status,
                                        struct ev_error *err);
/* The same of the outbox's processing range through its lock index, over id and lock_until
 * (NULL without the index). */
struct ev_query *ev_mirror_query_lock_digest(const struct ev_dash_req *req);
/* The pending rows the model inserts (next_retry_time NULL, retry_count 0) with an id above
 * the highest pending one of the refresh before the last, as ev_mirror_query_range's rows. */
struct ev_query *ev_mirror_query_arrivals(const struct ev_mirror *m, const struct ev_dash_req *req,
                                          size_t limit, struct ev_error *err);
/* The id the arrivals are read above. */
uint64_t ev_mirror_arrivals_above(const struct ev_mirror *m);
bool ev_mirror_digest_check(struct ev_mirror *m, int status, const char *count, const char *x);
/* The digest could not be read (an error of the server's): the range is read whole now and
 * from now on. */
void ev_mirror_digest_failed(struct ev_mirror *m, int status);
void ev_mirror_reread_begin(struct ev_mirror *m, int status);
/* *distrust: the server's digest was not the mirror's of the same rows (said once). */
size_t ev_mirror_reread_done(struct ev_mirror *m, int status, bool *distrust, const uint64_t **ids);
/* One row's part of a range digest, as the server computes it (for the tests). */
uint64_t ev_mirror_row_digest(uint64_t id, const char *next_retry, const char *retry_count);
/* Seconds since the failed range was last read (server time; -1 before the first). */
long long ev_mirror_failed_age(const struct ev_mirror *m);
/* The created counts of this refresh's flows: rows created between the last refresh's cut and
 * NOW() - settle_s (-1: the default), per event_type (and topic on the outbox), through the
 * create_time index (only the rows created since: what changed). NULL when there is nothing
 * to read: the first refresh (the flows start at the next), the clock not moved, no index.
 * Then each row to ev_mirror_created_row, and ev_mirror_created_done (false: the read
 * failed, the interval yields no rates). */
struct ev_query *ev_mirror_query_created(struct ev_mirror *m, const struct ev_dash_req *req,
                                         int settle_s);
void ev_mirror_created_row(struct ev_mirror *m, const struct ev_rowset *rs, size_t row);
void ev_mirror_created_done(struct ev_mirror *m, bool ok);

/* The rolling share for a refresh every interval_s seconds: every row read again within
 * reverify_s seconds. */
size_t ev_mirror_share(const struct ev_mirror *m, double interval_s, int reverify_s);

/* Put the backlog figures (pending, processing, stuck, failed and its buckets, the two
 * ages) of every group of req->dimension (NULL: totals only) into d, at the server time
 * `now` ('YYYY-MM-DD hh:mm:ss', read in the refresh's snapshot). The window figures are
 * left as they are. d must be unfinished (ev_dash_finish after). */
void ev_mirror_fill(const struct ev_mirror *m, const struct ev_dash_req *req, const char *now,
                    struct ev_dash *d);

/* The window counts' groups (d's rows, d of a dimension) spell a group as their GROUP BY
 * chose, which need not be the spelling the mirror met first ('ORDER_PAID' and 'order_paid'
 * are one group under a case-insensitive collation): before ev_mirror_fill, the mirror takes
 * d's spellings for its groups (ev_mirror_adopt_spellings), so that a group's backlog lands
 * on the row its window counts are on. A spelling the key reads never met is resolved by the
 * server once (remembered after):
 *   ev_mirror_unmet_spellings  d's groups whose collation key is unknown (d's texts, in a
 *                              malloc'd array; 0 when none, or the mirror holds no row)
 *   ev_mirror_query_keys       their keys, under the column's collation (NULL when none)
 *   ev_mirror_key_row          each row of that read */
size_t ev_mirror_unmet_spellings(const struct ev_mirror *m, const struct ev_dash *d,
                                 const char ***out);
struct ev_query *ev_mirror_query_keys(const struct ev_mirror *m, const struct ev_dash_req *req,
                                      const char *const *spellings, size_t n);
void ev_mirror_key_row(struct ev_mirror *m, const char *dimension, const struct ev_rowset *rs,
                       size_t row);
void ev_mirror_adopt_spellings(struct ev_mirror *m, const struct ev_dash *d);

/* The totals of the figures the full counts check (no clock in them): pending, processing,
 * failed, failed_noretry, exhausted. */
struct ev_mirror_totals {
	long long pending, processing, failed, noretry, exhausted;
};
void ev_mirror_totals(const struct ev_mirror *m, struct ev_mirror_totals *t);

/* Whether the full counts are due (at the first refresh, then every check_s seconds of the
 * monotonic clock now_s); records the check as made when true. */
bool ev_mirror_check_due(struct ev_mirror *m, double now_s, int check_s);
/* Seconds since the last full check at now_s (-1 before the first). */
double ev_mirror_check_age(const struct ev_mirror *m, double now_s);
/* A full check found the mirror off by `rows` (summed over the figures compared). */
void ev_mirror_drift(struct ev_mirror *m, long long rows);
long long ev_mirror_drift_total(const struct ev_mirror *m);
/* A full check ran to its end in this refresh's snapshot; the server seconds since the last
 * one that did, as of the latest refresh (-1: none yet). */
void ev_mirror_checked(struct ev_mirror *m);
long long ev_mirror_checked_ago(const struct ev_mirror *m);

size_t ev_mirror_rows(const struct ev_mirror *m);
/* Bytes the mirror holds (its rows, its lookup, its interned group names). */
size_t ev_mirror_bytes(const struct ev_mirror *m);

/* Seconds since 2000-01-01 00:00:00 of a DATETIME text, rounded up to the whole second;
 * false when it does not parse. (Exposed for the unit tests.) */
bool ev_mirror_parse_time(const char *s, int64_t *out);

#endif
