/* evtop — this session's actions (the a key): the local audit file's records since the
 * console started, newest last, with their results. */
#include <config.h>

#include "core/auditlog.h"
#include "core/i18n.h"
#include "core/style.h"
#include "core/text.h"
#include "ui/app.h"
#include "ui/textview.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct actions_view {
	struct view base;
	struct ev_audit_entry *e;
	long n;
	int sel, scroll;
	char error[512];
};

static void actions_load(struct app *a, struct view *v)
{
	struct actions_view *av = (struct actions_view *)v;
	struct ev_error err = {0};
	ev_audit_entries_free(&av->e, av->n);
	av->n = a->audit_path ? ev_audit_log_read(a->audit_path, a->session_start, &av->e, &err)
	                      : 0;
	if (av->n < 0) {
		snprintf(av->error, sizeof(av->error), "%s", err.msg);
		av->n = 0;
	}
}

static void actions_draw(struct app *a, struct view *v, int top, int height, int cols)
{
	struct actions_view *av = (struct actions_view *)v;
	char title[1024];
	/* TRANSLATORS: the session's actions' title: how many, the audit file (or "no audit
	 * file"). */
	snprintf(title, sizeof(title), _("this session's actions (%ld) · from %s"), av->n,
	         a->audit_path ? a->audit_path : _("no audit file"));
	draw_text_pad(top, 0, cols, EV_STYLE_TITLE, title);
	if (av->error[0])
		draw_text(top + 1, 0, cols, EV_STYLE_ERROR, av->error);
	/* The event_no as wide as the widest (at least 24), whole when it fits on the screen:
	 * the columns after it move right. */
	int ew = 24;
	for (long i = 0; i < av->n; i++) {
		const char *no = av->e[i].event_no ? av->e[i].event_no : "";
		char *safe = ev_text_sanitize(no, strlen(no));
		int w = ev_text_width(safe);
		free(safe);
		ew = w > ew ? w : ew;
	}
	if (ew > cols - 42)
		ew = cols - 42 > 24 ? cols - 42 : 24;
	int sh = ew - 24; /* how far the columns after it move */
	draw_fill(top + 1, 0, cols, EV_STYLE_HEADER);
	/* TRANSLATORS: the session's actions' column headers: TIME (UTC) 24 cells, ACTION 15,
	 * EVENT_NO 24, RESULT 8, then the rest. */
	draw_text_pad(top + 1, 0, 24, EV_STYLE_HEADER, _("TIME (UTC)"));
	draw_text_pad(top + 1, 25, 15, EV_STYLE_HEADER, _("ACTION"));
	draw_text_pad(top + 1, 41, ew, EV_STYLE_HEADER, _("EVENT_NO"));
	draw_text_pad(top + 1, 66 + sh, 8, EV_STYLE_HEADER, _("RESULT"));
	draw_text_pad(top + 1, 75 + sh, cols - 75 - sh, EV_STYLE_HEADER, _("REASON / ERROR"));
	if (av->n == 0)
		draw_text(top + 2, 2, cols - 2, EV_STYLE_NORMAL,
		          _("no action yet in this session"));
	int body = height - 2;
	if (av->sel < av->scroll)
		av->scroll = av->sel;
	if (av->sel >= av->scroll + body)
		av->scroll = av->sel - body + 1;
	for (long i = av->scroll, y = top + 2; i < av->n && y < top + 2 + body; i++, y++) {
		const struct ev_audit_entry *e = &av->e[i];
		int style = i == av->sel ? EV_STYLE_SELECTED : EV_STYLE_NORMAL;
		int rstyle = style;
		if (i != av->sel && e->result && strcmp(e->result, "applied") != 0)
			rstyle = EV_STYLE_WARNING;
		if (i == av->sel)
			draw_fill((int)y, 0, cols, style);
		draw_text_pad((int)y, 0, 24, style, e->time);
		draw_text_pad((int)y, 25, 15, style, e->action);
		draw_text_pad((int)y, 41, ew, style, e->event_no);
		draw_text_pad((int)y, 66 + sh, 8, rstyle, e->result);
		draw_text_pad((int)y, 75 + sh, cols - 75 - sh, style,
		              e->error    ? e->error
		              : e->reason ? e->reason
		                          : "");
	}
}

static bool actions_action(struct app *a, struct view *v, enum ev_ui_action act)
{
	struct actions_view *av = (struct actions_view *)v;
	switch (act) {
	case EV_UA_UP:
	case EV_UA_DOWN:
	case EV_UA_TOP:
	case EV_UA_BOTTOM:
		app_move_sel(act, &av->sel, (int)av->n);
		break;
	case EV_UA_REFRESH:
		actions_load(a, v);
		break;
	default:
		return false;
	}
	a->dirty = true;
	return true;
}

static void actions_free(struct view *v)
{
	struct actions_view *av = (struct actions_view *)v;
	ev_audit_entries_free(&av->e, av->n);
	free(av);
}

static const struct view_ops actions_ops = {
        .name = "actions",
        .ctx = EV_CTX_HELP,
        .draw = actions_draw,
        .action = actions_action,
        .result = text_view_no_result,
        .load = actions_load,
        .free = actions_free,
        .on_timer = false,
};

struct view *view_actions_new(struct app *a)
{
	struct actions_view *av = ev_xcalloc(1, sizeof(*av));
	(void)a;
	av->base.ops = &actions_ops;
	return &av->base;
}
