/* evtop — throughput over time: the dashboard's figures sampled at every refresh (created,
 * finished and failed per minute, the backlog), kept per table and per group for the session,
 * and drawn as charts of braille dots (two by four a cell) or, without UTF-8, of ASCII. Pure:
 * the console's chart view draws the lines this builds. */
#ifndef EV_CORE_CHART_H
#define EV_CORE_CHART_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum ev_chart_figure { EV_CF_CREATED, EV_CF_FINISHED, EV_CF_FAILED, EV_CF_BACKLOG, EV_CF_COUNT };

/* One refresh's figures at the server's time t (Unix seconds of its clock as the session
 * reads it); a figure not known then is NAN. */
struct ev_chart_sample {
	int64_t t;
	double v[EV_CF_COUNT];
};

/* The samples of one table or group, oldest first, at most cap (the oldest go first). */
struct ev_chart_series {
	struct ev_chart_sample *s;
	size_t n, cap, head;
};

/* Every group's series and the table's, for one table. Groups past max_groups are not kept
 * (the table's totals always are). */
struct ev_chart_set {
	struct ev_chart_series total;
	char **groups; /* NULL: the group of SQL NULL */
	struct ev_chart_series *series;
	size_t n, cap;
};

#define EV_CHART_SAMPLES     2048 /* a table's samples: over an hour at 2 s */
#define EV_CHART_GRP_SAMPLES 512
#define EV_CHART_GROUPS      500

void ev_chart_series_push(struct ev_chart_series *s, const struct ev_chart_sample *x, size_t cap);
/* Sample i, oldest first (i < s->n). */
const struct ev_chart_sample *ev_chart_series_at(const struct ev_chart_series *s, size_t i);
void ev_chart_series_clear(struct ev_chart_series *s);
/* The table's series (total), or a group's (group NULL: the group of SQL NULL); NULL when it
 * was never sampled. */
const struct ev_chart_series *ev_chart_set_find(const struct ev_chart_set *cs, bool total,
                                                const char *group);
/* Add a sample of the table (total) or of a group. */
void ev_chart_set_push(struct ev_chart_set *cs, bool total, const char *group,
                       const struct ev_chart_sample *x);
void ev_chart_set_clear(struct ev_chart_set *cs);
/* Forget the groups (a new dimension), keeping the table's series. */
void ev_chart_set_clear_groups(struct ev_chart_set *cs);

/* Draw figure f of the series into h lines of w cells (lines[0] the top; each malloc'd,
 * UTF-8 braille when utf8, else ASCII '#' and ':'), the newest sample at the right, one
 * sample a dot column (two a cell in braille, one in ASCII); a filled area from 0 to the
 * value, scaled to ymax (the largest value shown when ymax <= 0; the scale used is returned).
 * An unknown value is a gap. */
double ev_chart_render(const struct ev_chart_series *s, enum ev_chart_figure f, int w, int h,
                       double ymax, bool utf8, char **lines);

#endif
