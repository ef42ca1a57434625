/* evtop — the dashboard's figures for Prometheus (`evtop metrics`, doc/metrics.md): the text
 * exposition format 0.0.4, built from each source's dashboards (the backlog mirror's, by
 * event_type and by topic) after every refresh.
 *
 * What outlives a refresh is kept here: the label values of each source, table and dimension
 * (first come, first named, up to a cap; the rest folded into "__other__", for the life of
 * the process, so that a series never changes its label), and the counters of rows created
 * and finished, taken from the mirror's flow sums (core/flow.h) so that they never go down:
 * a mirror read anew starts its sums anew, the counters go on from where they were. A figure
 * that is unknown is left out (evtop_figure_unknown says which); a lower bound carries
 * capped="true"; while a time zone mismatch is suspected, the clock-dependent series are left
 * out (evtop_clock_suspect). Pure: no I/O. */
#ifndef EV_CORE_METRICS_H
#define EV_CORE_METRICS_H

#include "core/dashboard.h"
#include "core/model.h"
#include "core/util.h"

#include <stdbool.h>

/* Label values per label, source and table, unless set. */
#define EV_METRICS_LABEL_CAP 200
/* The label value of the groups past the cap, and of SQL NULL. */
#define EV_METRICS_OTHER "__other__"
#define EV_METRICS_NULL  "__null__"

/* One table of one source, as the last refresh left it. */
struct ev_metrics_table {
	bool watched;                   /* the source has the table (the config's tables) */
	const struct ev_dash *by_type;  /* by event_type; NULL: not read (missing, failed) */
	const struct ev_dash *by_topic; /* the outbox by topic; NULL: not kept */
	long long drift_total;          /* rows the mirror's full checks found off */
};

/* One source. */
struct ev_metrics_source {
	const char *name;
	bool up;             /* the last refresh succeeded: its figures are current */
	bool on_replica;     /* read on a replica: its lag is exported */
	long long lag_s;     /* seconds behind; < 0 unknown */
	double query_s;      /* server time of evtop's statements since the start */
	double refreshed_at; /* Unix time of the last successful refresh; 0: none yet */
	struct ev_metrics_table t[EV_TABLE_COUNT];
};

struct ev_metrics;

/* For nsources sources; label_cap values per label (0: EV_METRICS_LABEL_CAP). */
struct ev_metrics *ev_metrics_new(int nsources, int label_cap);
void ev_metrics_free(struct ev_metrics **m);

/* Source i was refreshed (s->up): its groups get their labels, its counters the flows' sums.
 * Call once per refresh, before ev_metrics_render with the same dashboards. */
void ev_metrics_update(struct ev_metrics *m, int i, const struct ev_metrics_source *s);

/* The exposition of every source (src[0..n), as last updated), the refresh having taken
 * refresh_s, into out. */
void ev_metrics_render(const struct ev_metrics *m, const struct ev_metrics_source *src, int n,
                       double refresh_s, const char *version, struct ev_buf *out);

/* A label value as the text format writes it (backslash, double quote and newline escaped,
 * invalid UTF-8 replaced by U+FFFD), appended to out. */
void ev_metrics_label_value(struct ev_buf *out, const char *s);

/* The content type of the exposition. */
#define EV_METRICS_CONTENT_TYPE "text/plain; version=0.0.4; charset=utf-8"

#endif
