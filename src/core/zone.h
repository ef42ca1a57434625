/* evtop — is this session's time zone the applications'? The model's DATETIMEs carry no zone:
 * evtop compares them with NOW() in its session's zone, and when that is not the zone the
 * applications write in, every clock-dependent figure (stuck, due, ages, drain) is off by the
 * difference and a guard such as "lock_until <= NOW()" is true for a live lock. The evidence is
 * the table's newest row, read through the index whose first column is create_time (never a
 * scan): dated ahead of NOW(), or a whole or half hour behind it. A quiet table can raise a
 * false alarm (the operator confirms with --clock-ok); a missed mismatch is double processing,
 * so the judgement errs on the side of the alarm. Pure: src/db runs the query. */
#ifndef EV_CORE_ZONE_H
#define EV_CORE_ZONE_H

#include "core/query.h"
#include "core/rowset.h"

#include <stdbool.h>

/* The newest row of a table: id, event_no, create_time, NOW(), create_time - NOW() in seconds
 * (ahead_s) and the session zone's offset from UTC in seconds (utc_offset_s). Read through
 * `index` (the index whose first column is create_time, ev_index_find(info, "create_time")),
 * ORDER BY create_time DESC LIMIT 1; index NULL: the primary key's newest id. One row, none for
 * an empty table. */
struct ev_query *ev_zone_query_newest(const char *table_name, const char *index);

enum ev_zone_dir {
	EV_ZONE_OK,     /* no sign of a mismatch */
	EV_ZONE_AHEAD,  /* the newest row is dated more than 5 min in the future */
	EV_ZONE_BEHIND, /* the newest row is an hour or more (up to 14h15m) behind */
};

/* The margins of the judgement, in seconds. */
#define EV_ZONE_AHEAD_MIN  (5 * 60)              /* ahead by more than this */
#define EV_ZONE_BEHIND_MIN 3600                  /* behind by at least this */
#define EV_ZONE_MAX        (14 * 3600 + 15 * 60) /* no zone is further apart */
#define EV_ZONE_SKEW       (2 * 60)              /* an application's clock a little ahead */

/* Judge the newest row's distance to NOW() (ahead_s = create_time - NOW(); > 0: the future).
 * Ahead: more than 5 min and at most 14h15m ahead; the offset is ahead_s rounded up to a
 * quarter hour (the row is a little older than the zone's difference). Behind: at least 1 h
 * and at most 14h15m behind — every such distance is within 15 min of a whole or half hour,
 * and a quiet table cannot be told from a mismatch, so the judgement errs on the alarm; the
 * offset is the half hour below (the rest being the row's own age), or the one just above
 * when the distance is within 2 min under it (an application's clock a little fast). Further
 * apart than 14h15m is not a zone (bad data or a clock: doctor warns). *shift_s: the offset to
 * add to the session zone's to get the applications' (negative behind); 0 when OK. */
enum ev_zone_dir ev_zone_judge(long long ahead_s, long long *shift_s);

/* The newest row as read, and the judgement. Strings are malloc'd (NULL = SQL NULL). */
struct ev_zone_newest {
	bool found; /* the table has a row */
	unsigned long long id;
	char *event_no;
	char *create_time;
	char *now;
	long long ahead_s;
	long long utc_offset_s; /* the session zone's offset from UTC */
	enum ev_zone_dir dir;
	long long shift_s;
};

/* Fill n from the result of ev_zone_query_newest and judge it. Returns -1 with err set when
 * a column is missing or not a number. */
int ev_zone_from_rowset(const struct ev_rowset *rs, struct ev_zone_newest *n, struct ev_error *err);
void ev_zone_newest_clear(struct ev_zone_newest *n);

/* "+08:00": an offset from UTC in seconds as a --time-zone value. */
void ev_zone_format_offset(long long s, char *buf, size_t size);

/* Why a mismatch is suspected on table_name, in the operator's words: the row (event_no, id,
 * create_time, sanitised), how far from NOW() in which direction, the zone the applications
 * seem to write and the --time-zone that would fix it, and --clock-ok for a quiet table. NULL
 * when n->dir is EV_ZONE_OK. malloc'd. */
char *ev_zone_reason(const char *table_name, const struct ev_zone_newest *n);

/* The same, short, for a screen line: "newest row OB-1 (2026-06-01 04:00:00) is 8h00m behind
 * NOW(); --time-zone=+00:00?". NULL when n->dir is EV_ZONE_OK. malloc'd. */
char *ev_zone_summary(const struct ev_zone_newest *n);

#endif
