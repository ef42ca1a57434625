/* evtop — the expressions of `evtop check --warning EXPR --critical EXPR`: parsed once into a
 * tree, then evaluated against the dashboard's figures through a caller-supplied lookup, in
 * three-valued logic so that a figure nobody could read makes the check UNKNOWN instead of
 * OK. doc/check.md is the grammar for people; keep the two in step. Pure C, no I/O. */
#ifndef EV_CORE_CHECKEXPR_H
#define EV_CORE_CHECKEXPR_H

#include "core/util.h"

#include <stddef.h>

/* Longest expression accepted, in bytes. */
#define EV_CHECKEXPR_MAX_LEN 4096
/* Deepest nesting of parentheses and not/! together. */
#define EV_CHECKEXPR_MAX_DEPTH 64
/* Longest group value, in bytes. */
#define EV_CHECKEXPR_MAX_GROUP 256

/* The unit of a figure; it also decides how the two tables combine when an expression names
 * no table. */
enum ev_figure_unit {
	EV_FIG_EVENTS,  /* a count of events; both tables = the sum */
	EV_FIG_SECONDS, /* an age or a duration in seconds; both tables = the larger */
	EV_FIG_PER_MIN, /* events per minute; both tables = the sum */
};

/* The figures `evtop check` derives from the dashboard's: X(name, unit, help), `help` as in
 * doc/check.md's table of figures. */
/* clang-format off */
#define EV_CHECK_RATE_LIST(X)                                                                      \
	X("created_per_min", PER_MIN,                                                              \
	  "events created per minute, over the time window")                                       \
	X("finished_per_min", PER_MIN,                                                             \
	  "events finished per minute, over the time window")                                      \
	X("drain_time", SECONDS,                                                                   \
	  "the backlog (pending + processing + failed) divided by `finished_per_min`: the "        \
	  "time to work it off at the rate events are finishing; infinite when none finish,"       \
	  " so `drain_time > 1h` is then true")
/* clang-format on */

struct ev_figure_def {
	const char *name; /* lower case, as passed to ev_figure_fn */
	enum ev_figure_unit unit;
	const char *help; /* its line in doc/check.md's table of figures */
};

/* Every figure an expression may name, in the order of the dashboard's columns. */
const struct ev_figure_def *ev_checkexpr_figure_list(size_t *n);
/* A figure by name (ASCII case-insensitive), or NULL. */
const struct ev_figure_def *ev_checkexpr_figure_find(const char *name);

/* The lookup an expression is evaluated through. `table` is "outbox", "message" or NULL for
 * both tables combined (counts and rates summed, seconds the larger: see ev_figure_unit);
 * `name` is an ev_figure_def name (always the lower-case spelling); `group` is a group value
 * of the check's grouping dimension, or NULL for the total. Store the value and return
 *   0  when it is exact;
 *   1  when it is a lower bound: a count that reached its cap (the dashboard's "≥100000"),
 *      so "pending > 50000" is true but "pending > 200000" is unknown, never false;
 *  -1  when it cannot be known: a table that is missing, a query that failed or timed out.
 * A group the table has no events of is not unknown: its counts are 0. An age with nothing
 * to measure (no pending event) is 0. A NaN counts as unknown; +INFINITY is a value (a
 * drain_time that never ends). */
typedef int (*ev_figure_fn)(void *ctx, const char *table, const char *name, const char *group,
                            double *value);

enum ev_tristate {
	EV_FALSE,
	EV_TRUE,
	EV_UNKNOWN,
};

struct ev_checkexpr;

/* Parse `text` (at most EV_CHECKEXPR_MAX_LEN bytes). Returns the expression (free with
 * ev_checkexpr_free), or NULL with err->code EV_ERR_USAGE and err->msg reading
 * "column N: expected ..., got '...'" (N counts characters from 1; the end of the text is
 * "got end of expression"). Unknown tables and figure names are such errors, listing the
 * known names. Any thread. */
struct ev_checkexpr *ev_checkexpr_parse(const char *text, struct ev_error *err);

/* Evaluate e: fn is called once per distinct figure (see ev_checkexpr_figures), then the
 * tree is evaluated in Kleene's three-valued logic. A comparison or sum with an unknown figure
 * is unknown, and so is a comparison that a lower bound cannot decide; "a and b" is false if
 * either is false, else unknown if either is unknown; "a or b" is true if either is true,
 * else unknown if either is unknown; "not unknown" is unknown. A bare number is true when it
 * is not 0. Every comparison allows a relative tolerance of 1e-12 (at least 1e-12 absolute):
 * 0.1 + 0.2 == 0.3, whole numbers below 10^12 still compare exactly, and exactly one of <,
 * ==, > holds. When `why` is not NULL, a summary of every figure e uses is appended to it in
 * order of first use, e.g. "outbox.stuck=3 exhausted=12 oldest_pending_age=754s", with "≥"
 * before a lower bound and "unknown" for a figure fn could not give. Thread-safe for a
 * shared e: evaluation does not modify it. */
enum ev_tristate ev_checkexpr_eval(const struct ev_checkexpr *e, ev_figure_fn fn, void *ctx,
                                   struct ev_buf *why);

/* Call `each` (may be NULL) once for every distinct figure e uses, in order of first use,
 * with the same table/name/group strings ev_figure_fn will receive (valid while e lives), so
 * the caller queries only those. Returns their number. */
size_t ev_checkexpr_figures(const struct ev_checkexpr *e,
                            void (*each)(void *ctx, const char *table, const char *name,
                                         const char *group),
                            void *ctx);

/* Free e and NULL the pointer; NULL is fine. */
void ev_checkexpr_free(struct ev_checkexpr **e);

/* The monitoring-plugin status, equal to the exit code. */
enum ev_check_status {
	EV_CHECK_OK = 0,
	EV_CHECK_WARNING = 1,
	EV_CHECK_CRITICAL = 2,
	EV_CHECK_UNKNOWN = 3,
};

/* Combine the two results (pass EV_FALSE for an expression not given). Critical is decided
 * first and unknown is never taken for false: critical true → CRITICAL, whatever warning is;
 * critical unknown → UNKNOWN, even when warning is true (the critical condition might hold);
 * critical false → warning true → WARNING, warning unknown → UNKNOWN, else OK. */
enum ev_check_status ev_checkexpr_status(enum ev_tristate warning, enum ev_tristate critical);
/* "OK", "WARNING", "CRITICAL" or "UNKNOWN", for the plugin's output line. */
const char *ev_checkexpr_status_name(enum ev_check_status s);

#endif
