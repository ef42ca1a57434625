/* evtop — throughput over time: created, finished and failed per minute and the backlog of a
 * table (or one group of the dashboard's dimension) over the session, one chart each, stacked,
 * from the samples the dashboard keeps at every refresh (core/chart.h). Braille dots where the
 * terminal speaks UTF-8, ASCII elsewhere; monochrome like every view; the time axis in the
 * server's clock. It reads nothing itself: the dashboard's refresh redraws it. */
#include <config.h>

#include "core/chart.h"
#include "core/i18n.h"
#include "core/style.h"
#include "core/text.h"
#include "ui/app.h"

#include <langinfo.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct chart_view {
	struct view base;
	enum ev_table_kind table;
	bool total;
	char *group;
};

/* The panels' names (translated where drawn). */
static const struct {
	enum ev_chart_figure f;
	const char *name;
} panels[] = {
        /* TRANSLATORS: a chart's name: events created per minute. */
        {EV_CF_CREATED, N_("created /min")},
        /* TRANSLATORS: a chart's name: events finished per minute. */
        {EV_CF_FINISHED, N_("finished /min")},
        /* TRANSLATORS: a chart's name: events that failed per minute. */
        {EV_CF_FAILED, N_("failed /min")},
        /* TRANSLATORS: a chart's name: the backlog, PEND PROC FAIL being the dashboard's
         * column headers. */
        {EV_CF_BACKLOG, N_("backlog (PEND + PROC + FAIL)")},
};
#define NPANELS 4

static bool utf8_term(void)
{
	const char *cs = nl_langinfo(CODESET);
	return cs != NULL && strcmp(cs, "UTF-8") == 0;
}

/* A server time as hh:mm:ss (the samples' clock is the server's, read as UTC numbers). */
static void clock_text(int64_t t, char *buf, size_t size)
{
	time_t tt = (time_t)t;
	struct tm tm;
	gmtime_r(&tt, &tm);
	strftime(buf, size, "%H:%M:%S", &tm);
}

static void value_text(enum ev_chart_figure f, double v, char *buf, size_t size)
{
	if (isnan(v))
		snprintf(buf, size, "?");
	else if (f == EV_CF_BACKLOG)
		snprintf(buf, size, "%.0f", v);
	else
		snprintf(buf, size, "%.*f", v < 10 ? 1 : 0, v);
}

/* One panel: its name, the value now and the scale's top, then h lines of the chart. */
static void draw_panel(const struct ev_chart_series *s, enum ev_chart_figure f, const char *name,
                       int y, int h, int cols, bool utf8)
{
	char now[32], top[32], head[320];
	double last = s->n > 0 ? ev_chart_series_at(s, s->n - 1)->v[f] : NAN;
	char **lines = ev_xcalloc((size_t)h, sizeof(*lines));
	int w = cols - 2 > 1 ? cols - 2 : 1;
	double ymax = ev_chart_render(s, f, w, h, 0, utf8, lines);
	value_text(f, last, now, sizeof(now));
	value_text(f, ymax, top, sizeof(top));
	/* TRANSLATORS: the chart's name, its value now and the value at the top of its scale. */
	snprintf(head, sizeof(head), _("%s · now %s · top of the scale %s"), _(name), now, top);
	draw_text_pad(y, 0, cols, EV_STYLE_HEADER, head);
	for (int i = 0; i < h; i++) {
		draw_text(y + 1 + i, 1, w, EV_STYLE_NORMAL, lines[i]);
		free(lines[i]);
	}
	free(lines);
}

static void chart_draw(struct app *a, struct view *v, int top, int height, int cols)
{
	struct chart_view *c = (struct chart_view *)v;
	const char *dim = NULL;
	const struct ev_chart_series *s =
	        ui_dash_chart(a->views[0], c->table, c->total, c->group, &dim);
	const struct ev_table_def *def = ev_model_table(c->table);
	char title[1024], what[640];
	if (c->total) {
		snprintf(what, sizeof(what), "%s", _("every group"));
	} else {
		char *group = ev_text_fit(c->group ? c->group : "NULL", 120, false, false);
		/* TRANSLATORS: "group" stands for the dimension's name when it is not known:
		 * "group=ORDER_CREATED". */
		snprintf(what, sizeof(what), "%s=%s", dim ? dim : _("group"), group);
		free(group);
	}
	bool utf8 = utf8_term();
	/* TRANSLATORS: the table, its name in the database, the group (or "every group"), how
	 * many refreshes the charts hold, and " · ASCII" when the terminal draws no braille. */
	snprintf(title, sizeof(title), _("throughput · %s (%s) · %s · %zu refreshes%s"),
	         ev_model_table_label(def), app_table_name(a, app_site_index(a, v), c->table), what,
	         s ? s->n : 0, utf8 ? "" : " · ASCII");
	draw_text_pad(top, 0, cols, EV_STYLE_TITLE, title);
	if (s == NULL || s->n == 0) {
		draw_text(top + 2, 2, cols - 2, EV_STYLE_NORMAL,
		          _("nothing sampled yet: the dashboard adds a point at every refresh"));
		return;
	}
	/* The panels share what is left above the time axis, a name line each. */
	int room = height - 2;
	int h = room / NPANELS - 1;
	int npanels = NPANELS;
	if (h < 1) {
		npanels = room / 2 > 0 ? room / 2 : 1;
		h = 1;
	}
	int y = top + 1;
	for (int i = 0; i < npanels && i < NPANELS; i++) {
		draw_panel(s, panels[i].f, panels[i].name, y, h, cols, utf8);
		y += h + 1;
	}
	/* The time axis: the first sample shown at the left, the last at the right. */
	int w = cols - 2 > 1 ? cols - 2 : 1;
	size_t shown = (size_t)w * (utf8 ? 2 : 1);
	size_t first = s->n > shown ? s->n - shown : 0;
	char t0[16], t1[16], axis[160];
	clock_text(ev_chart_series_at(s, first)->t, t0, sizeof(t0));
	clock_text(ev_chart_series_at(s, s->n - 1)->t, t1, sizeof(t1));
	/* TRANSLATORS: the time axis's first time, in the server's clock. */
	snprintf(axis, sizeof(axis), _("%s (server time)"), t0);
	if (y < top + height) {
		draw_text(y, 1, cols - 1, EV_STYLE_NORMAL, axis);
		int tw = ev_text_width(t1);
		if (cols - 1 - tw > ev_text_width(axis) + 2)
			draw_text(y, cols - 1 - tw, tw, EV_STYLE_NORMAL, t1);
	}
}

static bool chart_action(struct app *a, struct view *v, enum ev_ui_action act)
{
	struct chart_view *c = (struct chart_view *)v;
	if (act == EV_UA_NEXT_TABLE) {
		c->table = c->table == EV_TABLE_OUTBOX ? EV_TABLE_MESSAGE : EV_TABLE_OUTBOX;
		c->total = true;
		a->dirty = true;
		return true;
	}
	return false;
}

static void chart_result(struct app *a, struct view *v, struct ev_job *job)
{
	(void)a;
	(void)v;
	(void)job;
}

static void chart_free(struct view *v)
{
	struct chart_view *c = (struct chart_view *)v;
	free(c->group);
	free(c);
}

static const struct view_ops chart_ops = {
        .name = "chart",
        .ctx = EV_CTX_HELP,
        .draw = chart_draw,
        .action = chart_action,
        .result = chart_result,
        .free = chart_free,
};

struct view *view_chart_new(struct app *a, enum ev_table_kind t, bool total, const char *group)
{
	struct chart_view *c = ev_xcalloc(1, sizeof(*c));
	(void)a;
	c->base.ops = &chart_ops;
	c->table = t;
	c->total = total;
	c->group = group ? ev_xstrdup(group) : NULL;
	return &c->base;
}
