/* evtop — a list broken down by one column: failures by fail_reason, processing and stuck
 * events by locked_by (which publisher died holding what). Enter opens the list of a group.
 * The breakdown of a list of every source sums each source's, read in parallel. */
#include <config.h>

#include "core/i18n.h"
#include "core/text.h"
#include "ui/app.h"
#include "ui/term.h"

#include <curses.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct group_view {
	struct view base;
	enum ev_table_kind table;
	enum ev_list_kind kind;
	struct ev_filter filter;
	char filter_text[512];
	const char *column;
	struct ev_rowset *rows;
	int sel, scroll;
	char error[2048];
	/* Every source at once (site SITE_ALL): each source's breakdown while they are read. */
	int nsrc, awaiting;
	struct ev_rowset **parts;
	char src_note[1600]; /* 399 columns at most */
};

struct group_arg {
	struct ev_table_info info;
	struct ev_filter filter;
	char *table_name;
	struct ev_query *query;
	int src;
};

static void free_arg(void *p)
{
	struct group_arg *g = p;
	ev_table_info_clear(&g->info);
	ev_filter_free(&g->filter);
	free(g->table_name);
	ev_query_free(&g->query);
	free(g);
}

static int group_job(struct ev_conn *c, struct ev_job *job, struct ev_error *err)
{
	struct group_arg *g = job->arg;
	struct ev_rowset *rs = NULL;
	job->free_result = app_free_rowset;
	if (ev_conn_run(c, g->query, &rs, err) < 0)
		return -1;
	job->result = rs;
	return 0;
}

/* The breakdown's query on source site; NULL with why in err. */
static struct group_arg *new_arg(struct app *a, const struct group_view *g, int site,
                                 struct ev_error *err)
{
	const struct site *st = &a->sites[site];
	if (!st->have_info) {
		ev_error_set(err, EV_ERR_GENERIC, "%s", _("no answer yet"));
		return NULL;
	}
	struct group_arg *arg = ev_xcalloc(1, sizeof(*arg));
	arg->src = site;
	arg->table_name = ev_xstrdup(app_table_name(a, site, g->table));
	ev_table_info_copy(&arg->info, &st->info[g->table]);
	ev_filter_copy(&arg->filter, &g->filter);
	struct ev_list_req req = {
	        .info = &arg->info,
	        .table = g->table,
	        .table_name = arg->table_name,
	        .kind = g->kind,
	        .filter = &arg->filter,
	        .limit = 1,
	        .stuck_threshold_s = a->cfg->stuck_threshold_s,
	        .high_retry_min = a->cfg->high_retry_min,
	        .window_s = a->cfg->window_s,
	};
	if (!arg->info.exists)
		ev_error_set(err, EV_ERR_SCHEMA, "%s", _("no such table"));
	else
		arg->query = ev_query_group(&req, g->column, err);
	if (arg->query == NULL) {
		free_arg(arg);
		return NULL;
	}
	return arg;
}

static void parts_clear(struct group_view *g)
{
	for (int i = 0; i < g->nsrc; i++)
		ev_rowset_free(&g->parts[i]);
}

static void merge(struct app *a, struct group_view *g)
{
	ev_rowset_free(&g->rows);
	g->rows = ev_group_merge(g->parts, g->nsrc);
	parts_clear(g);
	if (g->rows == NULL)
		snprintf(g->error, sizeof(g->error), _("no source answers (%s)"), g->src_note);
	else
		g->error[0] = '\0';
	if (g->rows != NULL && g->sel >= (int)g->rows->nrows)
		g->sel = g->rows->nrows ? (int)g->rows->nrows - 1 : 0;
	a->dirty = true;
}

/* Add source i and why to the sources that did not answer; the note stays within 399 columns,
 * never cut inside a character. */
static void note_source(struct group_view *g, struct app *a, int i, const char *why)
{
	char *note = ev_xasprintf("%s%s%s: %s", g->src_note, g->src_note[0] ? "; " : "",
	                          app_source_name(a, i), why);
	char *fit = ev_text_fit(note, 399, false, false);
	snprintf(g->src_note, sizeof(g->src_note), "%s", fit);
	free(fit);
	free(note);
}

static void group_load(struct app *a, struct view *v)
{
	struct group_view *g = (struct group_view *)v;
	struct ev_error err = {0};
	if (v->site == SITE_ALL) {
		/* Each source's breakdown, in parallel on its own list connection. */
		app_cancel(a, v);
		parts_clear(g);
		g->awaiting = 0;
		g->src_note[0] = '\0';
		for (int i = 0; i < g->nsrc; i++) {
			if (!(a->sources[i]->tables & (1u << g->table)))
				continue;
			struct site *st = app_site_at(a, i);
			struct group_arg *arg = new_arg(a, g, i, &err);
			if (arg == NULL) {
				char *why = ev_text_fit(err.msg, 150, false, false);
				note_source(g, a, i, why);
				free(why);
				continue;
			}
			g->awaiting++;
			app_submit(a, st->wlist, v, ev_job_new(0, 0, group_job, arg, free_arg));
		}
		if (g->awaiting == 0)
			merge(a, g);
		return;
	}
	if (!app_site(a, v)->have_info)
		return;
	struct group_arg *arg = new_arg(a, g, app_site_index(a, v), &err);
	if (arg == NULL) {
		snprintf(g->error, sizeof(g->error), "%s", err.msg);
		return;
	}
	app_submit(a, app_site(a, v)->wlist, v, ev_job_new(0, 0, group_job, arg, free_arg));
}

static void group_result(struct app *a, struct view *v, struct ev_job *job)
{
	struct group_view *g = (struct group_view *)v;
	if (v->site == SITE_ALL) {
		int src = ((const struct group_arg *)job->arg)->src;
		if (src < 0 || src >= g->nsrc)
			return;
		if (job->rc < 0 || job->result == NULL) {
			char *msg = ev_text_fit(job->err.msg, 120, false, false);
			char *why = ev_xasprintf(_("no answer (%s)"), msg);
			note_source(g, a, src, why);
			free(why);
			free(msg);
		} else {
			ev_rowset_free(&g->parts[src]);
			g->parts[src] = job->result;
			job->result = NULL;
		}
		if (--g->awaiting == 0)
			merge(a, g);
		return;
	}
	if (job->rc < 0 || job->result == NULL) {
		snprintf(g->error, sizeof(g->error), "%s", job->err.msg);
		return;
	}
	g->error[0] = '\0';
	ev_rowset_free(&g->rows);
	g->rows = job->result;
	job->result = NULL;
	if (g->sel >= (int)g->rows->nrows)
		g->sel = g->rows->nrows ? (int)g->rows->nrows - 1 : 0;
}

static void group_draw(struct app *a, struct view *v, int top, int height, int cols)
{
	struct group_view *g = (struct group_view *)v;
	struct ev_buf title;
	ev_buf_init(&title);
	/* TRANSLATORS: the table, its name in the database, the list (failed, stuck...) and
	 * the column it is broken down by: "outbox (biz_outbox_event) · failed by
	 * fail_reason". */
	ev_buf_printf(&title, _("%s (%s) · %s by %s"),
	              ev_model_table_label(ev_model_table(g->table)),
	              app_table_name(a, app_site_index(a, v), g->table), ev_list_name(g->kind),
	              g->column);
	if (v->site == SITE_ALL) {
		ev_buf_adds(&title, " · ");
		ev_buf_printf(&title, _("every source (%d)"), g->nsrc);
	} else if (a->nsources > 1) {
		char *name =
		        ev_text_fit(app_source_name(a, app_site_index(a, v)), 64, false, false);
		ev_buf_adds(&title, " · ");
		ev_buf_printf(&title, _("source %s"), name);
		free(name);
	}
	if (g->filter_text[0])
		ev_buf_printf(&title, " · %s", g->filter_text);
	draw_text_pad(top, 0, cols, EV_STYLE_TITLE, title.data);
	ev_buf_free(&title);
	if (g->error[0]) {
		draw_text(top + 1, 0, cols, EV_STYLE_ERROR, g->error);
		return;
	}
	if (g->src_note[0] && g->rows != NULL) {
		/* Sources that did not answer: the counts are the others'. */
		char note[2048];
		snprintf(note, sizeof(note), _("⚠ %s — not counted"), g->src_note);
		draw_text(top + 1, 0, cols, EV_STYLE_WARNING, note);
		top++;
		height--;
	}
	if (g->rows == NULL) {
		draw_text(top + 1, 2, cols - 2, EV_STYLE_NORMAL, _("loading…"));
		return;
	}
	draw_fill(top + 1, 0, cols, EV_STYLE_HEADER);
	/* TRANSLATORS: the breakdown's column header: the group's events, at most 8
	 * columns. */
	draw_text_right(top + 1, 0, 8, EV_STYLE_HEADER, _("EVENTS"));
	/* TRANSLATORS: the breakdown's column header over the group's oldest create_time, at
	 * most 19 columns. */
	draw_text_pad(top + 1, 9, 19, EV_STYLE_HEADER, P_("breakdown", "OLDEST"));
	draw_text_pad(top + 1, 29, cols - 29, EV_STYLE_HEADER, g->column);
	int n = (int)g->rows->nrows, body = height - 2;
	if (n == 0)
		draw_text(top + 2, 2, cols - 2, EV_STYLE_NORMAL, _("no rows"));
	if (g->sel < g->scroll)
		g->scroll = g->sel;
	if (g->sel >= g->scroll + body)
		g->scroll = g->sel - body + 1;
	for (int i = g->scroll, y = top + 2; i < n && y < top + 2 + body; i++, y++) {
		bool sel = i == g->sel;
		int style = sel ? EV_STYLE_SELECTED : EV_STYLE_NORMAL;
		if (sel)
			draw_fill(y, 0, cols, EV_STYLE_SELECTED);
		const struct ev_cell *cell = ev_rowset_cell(g->rows, (size_t)i, 0);
		draw_text_right(y, 0, 8, style, ev_rowset_cell(g->rows, (size_t)i, 1)->s);
		draw_text_pad(y, 9, 19, style, ev_rowset_cell(g->rows, (size_t)i, 2)->s);
		/* A reason is shown masked (doc/privacy.md); Enter filters by the stored text. */
		const struct ev_mask *m =
		        ui_mask_for(a, v->site == SITE_ALL ? -1 : app_site_index(a, v));
		size_t shown_len;
		char *shown =
		        cell->s && m ? ev_mask_text(m, cell->s, cell->len, &shown_len, NULL) : NULL;
		draw_text_pad(y, 29, cols - 29, cell->s ? style : EV_STYLE_NULL_VALUE,
		              shown     ? shown
		              : cell->s ? cell->s
		                        /* TRANSLATORS: the group of rows without a value. */
		                        : _("(none)"));
		free(shown);
	}
}

static bool group_action(struct app *a, struct view *v, enum ev_ui_action act)
{
	struct group_view *g = (struct group_view *)v;
	int n = g->rows ? (int)g->rows->nrows : 0;
	switch (act) {
	case EV_UA_UP:
	case EV_UA_DOWN:
	case EV_UA_TOP:
	case EV_UA_BOTTOM:
		app_move_sel(act, &g->sel, n);
		break;
	case EV_UA_OPEN: {
		if (n == 0)
			break;
		const char *val = ev_rowset_cell(g->rows, (size_t)g->sel, 0)->s;
		if (val == NULL) {
			app_message(a, EV_STYLE_NORMAL,
			            _("rows without a %s cannot be filtered on"), g->column);
			break;
		}
		struct ev_filter f;
		struct ev_error err = {0};
		ev_filter_copy(&f, &g->filter);
		/* A reason is matched as a substring: an exact one is its own substring. */
		const char *key = strcmp(g->column, "locked_by") == 0 ? "locked_by" : "fail_reason";
		if (ev_filter_set(&f, key, val, &err) < 0) {
			app_message(a, EV_STYLE_ERROR, "%s", err.msg);
			ev_filter_free(&f);
			break;
		}
		/* The list's title shows the value masked; its filter holds the stored text. */
		const struct ev_mask *m =
		        ui_mask_for(a, v->site == SITE_ALL ? -1 : app_site_index(a, v));
		size_t shown_len;
		char *shown = m ? ev_mask_text(m, val, strlen(val), &shown_len, NULL) : NULL;
		/* The value cut at 200 columns, never inside a character. */
		char *cut = ev_text_fit(shown ? shown : val, 200, false, false);
		char text[1024];
		snprintf(text, sizeof(text), "%s%s%s%s\"%s\"", g->filter_text,
		         g->filter_text[0] ? " " : "", key,
		         strcmp(key, "locked_by") == 0 ? "=" : "~", cut);
		free(cut);
		free(shown);
		app_push(a, v->site == SITE_ALL
		                    ? view_list_new_merged(a, g->table, g->kind, &f, text)
		                    : view_list_new_filtered(a, g->table, g->kind, &f, text));
		ev_filter_free(&f);
		break;
	}
	default:
		return false;
	}
	a->dirty = true;
	return true;
}

static void group_free(struct view *v)
{
	struct group_view *g = (struct group_view *)v;
	ev_rowset_free(&g->rows);
	ev_filter_free(&g->filter);
	parts_clear(g);
	free(g->parts);
	free(g);
}

static const struct view_ops group_ops = {
        .name = "group",
        .ctx = EV_CTX_LIST,
        .draw = group_draw,
        .action = group_action,
        .result = group_result,
        .load = group_load,
        .free = group_free,
        .on_timer = true,
};

struct view *view_group_new(struct app *a, enum ev_table_kind t, enum ev_list_kind kind,
                            const struct ev_filter *filter, const char *filter_text,
                            const char *column)
{
	struct group_view *g = ev_xcalloc(1, sizeof(*g));
	g->base.ops = &group_ops;
	g->table = t;
	g->kind = kind;
	g->column = column;
	g->nsrc = a->nsources;
	g->parts = ev_xcalloc((size_t)a->nsources, sizeof(*g->parts));
	ev_filter_copy(&g->filter, filter);
	snprintf(g->filter_text, sizeof(g->filter_text), "%s", filter_text);
	return &g->base;
}
