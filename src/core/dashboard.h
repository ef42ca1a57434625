/* evtop — the dashboard: per group of one dimension (event_type, topic, source, biz_type,
 * channel), the backlog by status, stuck, the failed buckets, the oldest pending event, and
 * what was created / succeeded / was cancelled in a time window; and totals. The queries are
 * built here; src/db runs them (ev_dash_fetch) and they come back as rowsets this module
 * folds into a struct ev_dash. */
#ifndef EV_CORE_DASHBOARD_H
#define EV_CORE_DASHBOARD_H

#include "core/flow.h"
#include "core/model.h"
#include "core/query.h"
#include "core/rowset.h"

#include <stdbool.h>

/* Counts are capped: a count that reached its cap is a lower bound ("≥100000"). */
#define EV_DASH_CAP 100000

/* The dashboard's figures: X(id, name, unit, help). `unit` is what `evtop check` knows the
 * figure as (EVENTS, SECONDS: the EV_FIG_ units of core/checkexpr.h; NONE: not a figure of
 * its own there); `help` is the figure's line in doc/check.md's table of figures, which
 * tests/unit/check_checkexpr compares with it. */
/* clang-format off */
#define EV_DASH_FIGURE_LIST(X)                                                                     \
	X(PENDING, "pending", EVENTS,                                                              \
	  "pending events (status 0)")                                                             \
	X(PROCESSING, "processing", EVENTS,                                                        \
	  "processing events (status 1), the stuck ones included")                                 \
	X(STUCK, "stuck", EVENTS,                                                                  \
	  "processing past its lock (outbox: `lock_until <= NOW()`) or past the stuck "            \
	  "threshold (message table: `last_handle_time`, default 10 min)")                         \
	X(FAILED, "failed", EVENTS,                                                                \
	  "failed events (status 3): the four buckets below added up")                             \
	X(FAILED_DUE, "failed_due", EVENTS,                                                        \
	  "failed, retries left, `next_retry_time <= NOW()` (the applications pick them up)")      \
	X(FAILED_WAITING, "failed_waiting", EVENTS,                                                \
	  "failed, retries left, `next_retry_time > NOW()`")                                       \
	X(FAILED_NORETRY, "failed_noretry", EVENTS,                                                \
	  "failed, retries left, no `next_retry_time`")                                            \
	X(EXHAUSTED, "exhausted", EVENTS,                                                          \
	  "failed, `retry_count >= max_retry_count`: no application will retry them")              \
	X(CANCELLED, "cancelled", EVENTS,                                                          \
	  "cancelled (status 4) in the dashboard's time window (1 h unless changed)")              \
	X(SUCCESS, "success", EVENTS,                                                              \
	  "succeeded (status 2) in the dashboard's time window")                                   \
	X(CREATED, "created", NONE,                                                                \
	  "created in the time window; in expressions as created_per_min")                         \
	X(OLDEST_PENDING_AGE, "oldest_pending_age", SECONDS,                                       \
	  "age of the oldest pending event, by `create_time`; 0 when nothing is pending")          \
	X(LONGEST_RETRY_WAIT, "longest_retry_wait", SECONDS,                                       \
	  "the longest a pending event has waited since a retry made it pending; 0 when none")
/* clang-format on */

enum ev_dash_figure {
#define X(id, name, unit, help) EV_DASH_##id,
	EV_DASH_FIGURE_LIST(X)
#undef X
	        EV_DASH_NFIGURES,
};

/* One figure: its value, and whether it is a lower bound (capped) or unknown (its query
 * failed, timed out, or needs an index the server lacks). Ages are seconds; -1 = none. */
struct ev_figure {
	long long value;
	bool capped;
	bool unknown;
};

struct ev_dash_row {
	char *group; /* the group's value (sanitise before display); NULL for SQL NULL */
	struct ev_figure f[EV_DASH_NFIGURES];
	/* The honest rates (core/flow.h) over the last minute, when the dashboard has them
	 * (flow_on); unknown for a group of a dimension no create_time index serves. */
	struct ev_flow_rates flow;
};

struct ev_dash {
	enum ev_table_kind table;
	const char *dimension; /* the dimension key */
	int window_s;
	size_t nrows;
	struct ev_dash_row *rows; /* sorted: most backlog first, then group */
	struct ev_dash_row total;
	/* Why figures are unknown, e.g. "success: n/a — needs an index on (create_time)". */
	char *notes;
	/* Why the clock-dependent figures (stuck, failed due / waiting, the ages, the drain) are
	 * suspect: a time zone mismatch suspected on the table (core/zone.h), or NULL. */
	char *clock_suspect;
	char *clock_summary; /* the same, short (ev_zone_summary), for a screen line */
	double server_ms;    /* wall time of the queries that built it */
	/* The backlog figures came from the mirror (core/mirror.h): its rows, what the refresh
	 * read, the rows every full check found off, the age of the last check (-1: none). */
	/* The rates come from the mirror's flows (row->flow), not from the window counts. */
	bool flow_on;
	struct {
		bool on;
		long long rows, entered, changed, left, pk_reads, range_rows, drift;
		/* Ranges verified by their digest, and of them read whole (the digest differed). */
		long long digests, rereads;
		long long drift_total;   /* found by every check of this mirror together */
		double check_age_s;      /* since the last check was due (monotonic) */
		long long checked_ago_s; /* since the last check that ran to its end (server
		                            time), -1: none */
		/* Seconds since the failed range was read (it is read every fifth refresh once
		 * large; its figures are as of then, with the arrivals since): 0 when read now. */
		long long failed_age_s;
	} mirror;
	unsigned skipped; /* bit (1 << ev_dash_query) per query not run this time */
	/* Private to core/dashboard.c: the room in rows, and an open-addressing hash of the
	 * groups (slot = row index + 1, 0 = empty) so that adding and finding a group takes
	 * constant time with thousands of groups. */
	size_t rows_cap;
	size_t *slots;
	size_t nslots; /* a power of two, at least twice nrows; 0 before the first group */
};

/* Which statuses each query covers. */
enum ev_dash_query {
	EV_DQ_PENDING,    /* status 0: count, oldest create_time, longest retry wait */
	EV_DQ_PROCESSING, /* status 1: count and stuck */
	EV_DQ_FAILED,     /* status 3: count and the four buckets */
	EV_DQ_WINDOW,     /* created in the window: count, and success / cancelled among them */
	EV_DQ_COUNT,
};

struct ev_dash_req {
	const struct ev_table_info *info; /* the server's indexes (NULL: no hint) */
	enum ev_table_kind table;
	const char *table_name;
	const char *dimension; /* a dimension key of the table, or NULL for totals only */
	int window_s;
	int stuck_threshold_s;
	/* Queries not to run this time (bit 1 << ev_dash_query): the console re-reads the window
	 * counts, which scan the most rows and change the least, only every few refreshes, and
	 * carries the last figures over (ev_dash_carry). */
	unsigned skip;
};

/* Build one of the dashboard's queries. Returns NULL with err (EV_ERR_SCHEMA "n/a — needs
 * an index on (...)") when the server lacks every index it may use, or EV_ERR_USAGE for a
 * dimension the table does not have. */
struct ev_query *ev_dash_query(const struct ev_dash_req *req, enum ev_dash_query which,
                               struct ev_error *err);

/* A new, empty dashboard for req. */
struct ev_dash *ev_dash_new(const struct ev_dash_req *req);
/* Fold the result of query `which` into d. */
void ev_dash_add(struct ev_dash *d, enum ev_dash_query which, const struct ev_rowset *rs);
/* The row of group (NULL: SQL NULL; the only row of a dashboard without a dimension), added
 * when absent: for figures computed elsewhere (core/mirror.c). d must be unfinished. */
struct ev_dash_row *ev_dash_row(struct ev_dash *d, const char *group);
/* Mark the figures of query `which` unknown, with why. */
void ev_dash_unknown(struct ev_dash *d, enum ev_dash_query which, const char *why);
/* Copy into d the figures of the queries d skipped, from an earlier dashboard of the same
 * table, dimension and window (groups matched by value; groups only the earlier one has are
 * added). */
void ev_dash_carry(struct ev_dash *d, const struct ev_dash *earlier);

/* The dashboards of several sources (parts[i] of source names[i], NULL where a source did not
 * answer; names NULL: notes not prefixed) of one table, dimension and window, merged: groups
 * matched by value, counts summed, ages the largest, lower bounds and unknowns carried; the totals
 * are the sources' totals summed. With a source missing, every figure is a lower bound. Finished.
 */
struct ev_dash *ev_dash_merged(struct ev_dash *const *parts, const char *const *names, int n,
                               const struct ev_dash_req *req);

/* The same sources side by side: one row per source (its name the group; every figure unknown
 * where parts[i] is NULL), the totals those of ev_dash_merged. Finished. */
struct ev_dash *ev_dash_by_source(struct ev_dash *const *parts, const char *const *names, int n,
                                  const struct ev_dash_req *req);

/* Sort the rows and compute the totals; call once after the adds. */
void ev_dash_finish(struct ev_dash *d);
void ev_dash_free(struct ev_dash **d);

const char *ev_dash_figure_name(enum ev_dash_figure f);
/* Figure by name, or -1. */
int ev_dash_figure_parse(const char *name);
/* The group row by value (NULL = the totals), or NULL if absent. */
const struct ev_dash_row *ev_dash_find(const struct ev_dash *d, const char *group);

/* Rates over the window, by creation time: events created per minute, and finished
 * (succeeded or cancelled) per minute among those; the time to drain the backlog (pending +
 * processing + failed) at that finishing rate, INFINITY when nothing finishes, 0 when there
 * is no backlog. known is false when a figure they need is unknown. */
struct ev_dash_rates {
	bool known;
	bool lower_bound; /* a count they use reached its cap */
	double created_per_min;
	double finished_per_min;
	double drain_s;
};
void ev_dash_rates(const struct ev_dash_row *row, int window_s, struct ev_dash_rates *r);

/* Format a count for display: "12", "≥100000" when capped, "?" when unknown. Writes into
 * buf (at least 24 bytes) and returns it. */
const char *ev_figure_format(const struct ev_figure *f, char *buf, size_t size);

/* Seconds from datetime a to datetime b ('YYYY-MM-DD hh:mm:ss', both in the session's zone),
 * or LLONG_MIN if either does not parse. */
long long ev_datetime_diff(const char *a, const char *b);

/* A duration in seconds, short: "45s", "3m12s", "2h05m", "4d03h"; "-" for a negative value. */
const char *ev_format_duration(long long seconds, char *buf, size_t size);

/* How long ago datetime `when` was at the server time `now` (both 'YYYY-MM-DD hh:mm:ss' in
 * the session's zone; `now` read with `when`, never an older reading, or a write made since
 * would look ahead of it): "45s ago", "0s ago" for the same second, "in 3m12s" for a time
 * still ahead. "" when either does not parse. Writes into buf and returns it. */
const char *ev_format_age(const char *when, const char *now, char *buf, size_t size);

#endif
