/* evtop — throughput over time: samples kept per table and group, drawn as braille or ASCII
 * area charts (core/chart.h). */
#include <config.h>

#include "core/chart.h"
#include "core/util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void ev_chart_series_push(struct ev_chart_series *s, const struct ev_chart_sample *x, size_t cap)
{
	if (s->s == NULL) {
		s->cap = cap > 0 ? cap : 1;
		s->s = ev_xcalloc(s->cap, sizeof(*s->s));
	}
	if (s->n < s->cap) {
		s->s[(s->head + s->n) % s->cap] = *x;
		s->n++;
		return;
	}
	s->s[s->head] = *x; /* the oldest goes */
	s->head = (s->head + 1) % s->cap;
}

const struct ev_chart_sample *ev_chart_series_at(const struct ev_chart_series *s, size_t i)
{
	return &s->s[(s->head + i) % s->cap];
}

void ev_chart_series_clear(struct ev_chart_series *s)
{
	free(s->s);
	memset(s, 0, sizeof(*s));
}

static long find(const struct ev_chart_set *cs, const char *group)
{
	for (size_t i = 0; i < cs->n; i++) {
		const char *g = cs->groups[i];
		if (g == group || (g != NULL && group != NULL && strcmp(g, group) == 0))
			return (long)i;
	}
	return -1;
}

const struct ev_chart_series *ev_chart_set_find(const struct ev_chart_set *cs, bool total,
                                                const char *group)
{
	if (total)
		return cs->total.n > 0 ? &cs->total : NULL;
	long i = find(cs, group);
	return i >= 0 ? &cs->series[i] : NULL;
}

void ev_chart_set_push(struct ev_chart_set *cs, bool total, const char *group,
                       const struct ev_chart_sample *x)
{
	if (total) {
		ev_chart_series_push(&cs->total, x, EV_CHART_SAMPLES);
		return;
	}
	long i = find(cs, group);
	if (i < 0) {
		if (cs->n >= EV_CHART_GROUPS)
			return;
		if (cs->n == cs->cap) {
			cs->cap = cs->cap ? cs->cap * 2 : 16;
			cs->groups = ev_xrealloc(cs->groups, cs->cap * sizeof(*cs->groups));
			cs->series = ev_xrealloc(cs->series, cs->cap * sizeof(*cs->series));
		}
		i = (long)cs->n++;
		cs->groups[i] = group ? ev_xstrdup(group) : NULL;
		memset(&cs->series[i], 0, sizeof(cs->series[i]));
	}
	ev_chart_series_push(&cs->series[i], x, EV_CHART_GRP_SAMPLES);
}

void ev_chart_set_clear_groups(struct ev_chart_set *cs)
{
	for (size_t i = 0; i < cs->n; i++) {
		free(cs->groups[i]);
		ev_chart_series_clear(&cs->series[i]);
	}
	free(cs->groups);
	free(cs->series);
	cs->groups = NULL;
	cs->series = NULL;
	cs->n = cs->cap = 0;
}

void ev_chart_set_clear(struct ev_chart_set *cs)
{
	ev_chart_set_clear_groups(cs);
	ev_chart_series_clear(&cs->total);
	memset(cs, 0, sizeof(*cs));
}

/* Braille dots of a cell, by (column 0..1, row 0..3 from the top). */
static const unsigned dot[2][4] = {{0x01, 0x02, 0x04, 0x40}, {0x08, 0x10, 0x20, 0x80}};

static void put_utf8(char *out, size_t *o, unsigned cp)
{
	out[(*o)++] = (char)(0xE0 | (cp >> 12));
	out[(*o)++] = (char)(0x80 | ((cp >> 6) & 0x3F));
	out[(*o)++] = (char)(0x80 | (cp & 0x3F));
}

double ev_chart_render(const struct ev_chart_series *s, enum ev_chart_figure f, int w, int h,
                       double ymax, bool utf8, char **lines)
{
	int per = utf8 ? 2 : 1;  /* samples a cell */
	int rows = utf8 ? 4 : 2; /* levels a cell */
	size_t want = (size_t)(w > 0 ? w : 0) * (size_t)per;
	size_t n = s ? s->n : 0, first = n > want ? n - want : 0;
	if (ymax <= 0) {
		for (size_t i = first; i < n; i++) {
			double v = ev_chart_series_at(s, i)->v[f];
			if (!isnan(v) && v > ymax)
				ymax = v;
		}
		if (ymax <= 0)
			ymax = 1;
	}
	/* The dot height of each column, right-aligned: -1 where unknown or not sampled. */
	int ncol = w * per;
	int *level = ev_xcalloc((size_t)(ncol > 0 ? ncol : 1), sizeof(*level));
	for (int c = 0; c < ncol; c++) {
		long i = (long)n - (long)(ncol - c);
		double v =
		        i >= (long)first && i >= 0 ? ev_chart_series_at(s, (size_t)i)->v[f] : NAN;
		if (isnan(v)) {
			level[c] = -1;
			continue;
		}
		double dots = v / ymax * h * rows;
		level[c] = v > 0 && dots < 1 ? 1 : (int)lround(dots > h * rows ? h * rows : dots);
	}
	for (int y = 0; y < h; y++) {
		char *out = ev_xmalloc((size_t)w * 3 + 1);
		size_t o = 0;
		int base = (h - 1 - y) * rows; /* the dots below this line */
		for (int x = 0; x < w; x++) {
			unsigned bits = 0;
			int fill = 0;
			for (int k = 0; k < per; k++) {
				int lv = level[x * per + k] - base;
				for (int r = 0; r < rows && lv > 0; r++, lv--)
					if (utf8)
						bits |= dot[k][rows - 1 - r];
				fill = level[x * per + k] - base > fill ? level[x * per + k] - base
				                                        : fill;
			}
			if (utf8 && bits != 0)
				put_utf8(out, &o, 0x2800 + bits);
			else if (utf8)
				out[o++] = ' '; /* an empty cell: a space, not U+2800 */
			else
				out[o++] = fill >= 2 ? '#' : fill == 1 ? '.' : ' ';
		}
		out[o] = '\0';
		lines[y] = out;
	}
	free(level);
	return ymax;
}
