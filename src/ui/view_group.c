/* evtop — a list broken down by one column: failures by fail_reason, processing and stuck
 * events by locked_by (which publisher died holding what). Enter opens the list of a group. */
#include <config.h>

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
	char error[512];
};

struct group_arg {
	struct ev_table_info info;
	struct ev_filter filter;
	char *table_name;
	struct ev_query *query;
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

static void free_rows(void *p)
{
	struct ev_rowset *r = p;
	ev_rowset_free(&r);
}

static int group_job(struct ev_conn *c, struct ev_job *job, struct ev_error *err)
{
	struct group_arg *g = job->arg;
	struct ev_rowset *rs = NULL;
	job->free_result = free_rows;
	if (ev_conn_run(c, g->query, &rs, err) < 0)
		return -1;
	job->result = rs;
	return 0;
}

static void group_load(struct app *a, struct view *v)
{
	struct group_view *g = (struct group_view *)v;
	struct ev_error err = {0};
	if (!app_site(a, v)->have_info)
		return;
	struct group_arg *arg = ev_xcalloc(1, sizeof(*arg));
	arg->table_name = ev_xstrdup(app_table_name(a, app_site_index(a, v), g->table));
	ev_table_info_copy(&arg->info, &app_site(a, v)->info[g->table]);
	ui_filter_copy(&arg->filter, &g->filter);
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
	arg->query = ev_query_group(&req, g->column, &err);
	if (arg->query == NULL) {
		snprintf(g->error, sizeof(g->error), "%s", err.msg);
		free_arg(arg);
		return;
	}
	app_submit(a, app_site(a, v)->wlist, v, ev_job_new(0, 0, group_job, arg, free_arg));
}

static void group_result(struct app *a, struct view *v, struct ev_job *job)
{
	struct group_view *g = (struct group_view *)v;
	(void)a;
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
	char title[768];
	snprintf(title, sizeof(title), "%s (%s) · %s by %s%s%s", ev_model_table(g->table)->key,
	         app_table_name(a, app_site_index(a, v), g->table), ev_list_name(g->kind),
	         g->column, g->filter_text[0] ? " · " : "", g->filter_text);
	draw_text_pad(top, 0, cols, EV_STYLE_TITLE, title);
	if (g->error[0]) {
		draw_text(top + 1, 0, cols, EV_STYLE_ERROR, g->error);
		return;
	}
	if (g->rows == NULL) {
		draw_text(top + 1, 2, cols - 2, EV_STYLE_NORMAL, "loading…");
		return;
	}
	draw_fill(top + 1, 0, cols, EV_STYLE_HEADER);
	draw_text_right(top + 1, 0, 8, EV_STYLE_HEADER, "EVENTS");
	draw_text_pad(top + 1, 9, 19, EV_STYLE_HEADER, "OLDEST");
	draw_text_pad(top + 1, 29, cols - 29, EV_STYLE_HEADER, g->column);
	int n = (int)g->rows->nrows, body = height - 2;
	if (n == 0)
		draw_text(top + 2, 2, cols - 2, EV_STYLE_NORMAL, "no rows");
	if (g->sel < g->scroll)
		g->scroll = g->sel;
	if (g->sel >= g->scroll + body)
		g->scroll = g->sel - body + 1;
	for (int i = g->scroll, y = top + 2; i < n && y < top + 2 + body; i++, y++) {
		bool sel = i == g->sel;
		int style = sel ? EV_STYLE_SELECTED : EV_STYLE_NORMAL;
		if (sel)
			draw_fill(y, 0, cols, EV_STYLE_SELECTED);
		const char *val = ev_rowset_cell(g->rows, (size_t)i, 0)->s;
		draw_text_right(y, 0, 8, style, ev_rowset_cell(g->rows, (size_t)i, 1)->s);
		draw_text_pad(y, 9, 19, style, ev_rowset_cell(g->rows, (size_t)i, 2)->s);
		draw_text_pad(y, 29, cols - 29, val ? style : EV_STYLE_NULL_VALUE,
		              val ? val : "(none)");
	}
}

static bool group_action(struct app *a, struct view *v, enum ev_ui_action act)
{
	struct group_view *g = (struct group_view *)v;
	int n = g->rows ? (int)g->rows->nrows : 0;
	switch (act) {
	case EV_UA_UP:
		if (g->sel > 0)
			g->sel--;
		break;
	case EV_UA_DOWN:
		if (g->sel < n - 1)
			g->sel++;
		break;
	case EV_UA_TOP:
		g->sel = 0;
		break;
	case EV_UA_BOTTOM:
		g->sel = n > 0 ? n - 1 : 0;
		break;
	case EV_UA_OPEN: {
		if (n == 0)
			break;
		const char *val = ev_rowset_cell(g->rows, (size_t)g->sel, 0)->s;
		if (val == NULL) {
			app_message(a, EV_STYLE_NORMAL, "rows without a %s cannot be filtered on",
			            g->column);
			break;
		}
		struct ev_filter f;
		struct ev_error err = {0};
		ui_filter_copy(&f, &g->filter);
		/* A reason is matched as a substring: an exact one is its own substring. */
		const char *key = strcmp(g->column, "locked_by") == 0 ? "locked_by" : "fail_reason";
		if (ev_filter_set(&f, key, val, &err) < 0) {
			app_message(a, EV_STYLE_ERROR, "%s", err.msg);
			ev_filter_free(&f);
			break;
		}
		char text[768];
		snprintf(text, sizeof(text), "%s%s%s%s\"%.200s\"", g->filter_text,
		         g->filter_text[0] ? " " : "", key,
		         strcmp(key, "locked_by") == 0 ? "=" : "~", val);
		app_push(a, view_list_new_filtered(a, g->table, g->kind, &f, text));
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
	(void)a;
	g->base.ops = &group_ops;
	g->table = t;
	g->kind = kind;
	g->column = column;
	ui_filter_copy(&g->filter, filter);
	snprintf(g->filter_text, sizeof(g->filter_text), "%s", filter_text);
	return &g->base;
}
