/* evtop — the help screen, generated from the bindings table that dispatches the keys, so
 * it cannot drift from them. */
#include <config.h>

#include "core/i18n.h"
#include "core/text.h"
#include "ui/app.h"
#include "ui/term.h"

#include <curses.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct help_view {
	struct view base;
	char **lines;
	int *styles;
	int n;
	int scroll;
};

static void add(struct help_view *h, int style, const char *text)
{
	h->lines = ev_xrealloc(h->lines, (size_t)(h->n + 1) * sizeof(*h->lines));
	h->styles = ev_xrealloc(h->styles, (size_t)(h->n + 1) * sizeof(*h->styles));
	h->lines[h->n] = ev_xstrdup(text);
	h->styles[h->n] = style;
	h->n++;
}

/* "%-*s" by display columns: s padded with spaces to `cols` (never cut), into a new string. */
static char *pad(const char *s, int cols)
{
	return ev_text_width(s) < cols ? ev_text_fit(s, cols, false, true) : ev_xstrdup(s);
}

/* A view's heading (the English one says the view's name in [keys] bindings). */
static const char *context_title(enum ev_ui_context ctx)
{
	switch (ctx) {
	case EV_CTX_DASHBOARD:
		return _("In the dashboard");
	case EV_CTX_LIST:
		return _("In the list");
	case EV_CTX_DETAIL:
		return _("In the detail");
	case EV_CTX_CONFIRM:
		return _("In the confirmation");
	default:
		return ev_ui_context_name(ctx);
	}
}

static void build(struct help_view *h)
{
	add(h, EV_STYLE_TITLE, _("evtop keys (q or Esc closes this screen)"));
	for (int ctx = EV_CTX_DASHBOARD; ctx < EV_CTX_COUNT; ctx++) {
		if (ctx == EV_CTX_HELP)
			continue;
		bool any = false;
		for (const struct ev_binding *b = ev_keymap_bindings(); b->key != NULL; b++) {
			if (b->ctx != (enum ev_ui_context)ctx)
				continue;
			if (!any) {
				add(h, EV_STYLE_NORMAL, "");
				add(h, EV_STYLE_HEADER, context_title((enum ev_ui_context)ctx));
				any = true;
			}
			/* The key and the action's name are ASCII: padded by bytes alike. */
			char line[640];
			snprintf(line, sizeof(line), "  %-8s %-16s %s", b->key,
			         ev_ui_action_name(b->action), ev_ui_action_help(b->action));
			add(h, EV_STYLE_NORMAL, line);
		}
	}
	add(h, EV_STYLE_NORMAL, "");
	add(h, EV_STYLE_HEADER, _("Everywhere"));
	for (int act = 0; act < EV_UA_COUNT; act++) {
		char keys[64] = "";
		size_t n = 0;
		for (const struct ev_binding *b = ev_keymap_bindings(); b->key != NULL; b++)
			if (b->ctx == EV_CTX_GLOBAL && b->action == (enum ev_ui_action)act)
				n += (size_t)snprintf(keys + n, sizeof(keys) - n, "%s%s",
				                      n ? " " : "", b->key);
		if (n == 0)
			continue;
		char line[640];
		snprintf(line, sizeof(line), "  %-12s %-16s %s", keys,
		         ev_ui_action_name((enum ev_ui_action)act),
		         ev_ui_action_help((enum ev_ui_action)act));
		add(h, EV_STYLE_NORMAL, line);
	}
	add(h, EV_STYLE_NORMAL, "");
	add(h, EV_STYLE_HEADER, _("Commands (: then Enter)"));
	for (int c = 0; c < EV_UC_COUNT; c++) {
		char cmd[64], line[640];
		snprintf(cmd, sizeof(cmd), ":%s%s%s", ev_ui_command_name((enum ev_ui_command)c),
		         ev_ui_command_arg((enum ev_ui_command)c)[0] ? " " : "",
		         ev_ui_command_arg((enum ev_ui_command)c));
		snprintf(line, sizeof(line), "  %-18s %s", cmd,
		         ev_ui_command_help((enum ev_ui_command)c));
		add(h, EV_STYLE_NORMAL, line);
	}
	char line[640];
	snprintf(line, sizeof(line), "  %-18s %s", ":ACTION",
	         _("any action above by its name, e.g. :next-table"));
	add(h, EV_STYLE_NORMAL, line);
	/* The dashboard's columns, from the table its headers come from; a header translated
	 * is padded by display columns. */
	add(h, EV_STYLE_NORMAL, "");
	add(h, EV_STYLE_HEADER, _("The dashboard's columns (per group; l and h scroll them)"));
	const char *head, *what;
	for (int i = 0; ui_dash_legend(i, &head, &what) == 0; i++) {
		char *padded = pad(head, 8);
		char *text = ev_xasprintf("  %s %s", padded, what);
		add(h, EV_STYLE_NORMAL, text);
		free(text);
		free(padded);
	}
}

static void help_draw(struct app *a, struct view *v, int top, int height, int cols)
{
	struct help_view *h = (struct help_view *)v;
	(void)a;
	if (h->scroll > h->n - height)
		h->scroll = h->n - height > 0 ? h->n - height : 0;
	for (int i = 0; i < height && h->scroll + i < h->n; i++)
		draw_text_pad(top + i, 0, cols, h->styles[h->scroll + i], h->lines[h->scroll + i]);
}

static bool help_action(struct app *a, struct view *v, enum ev_ui_action act)
{
	struct help_view *h = (struct help_view *)v;
	switch (act) {
	case EV_UA_UP:
		if (h->scroll > 0)
			h->scroll--;
		break;
	case EV_UA_DOWN:
		h->scroll++;
		break;
	case EV_UA_PAGE_UP:
		h->scroll = h->scroll > 10 ? h->scroll - 10 : 0;
		break;
	case EV_UA_PAGE_DOWN:
		h->scroll += 10;
		break;
	case EV_UA_TOP:
		h->scroll = 0;
		break;
	case EV_UA_BOTTOM:
		h->scroll = h->n;
		break;
	case EV_UA_HELP:
	case EV_UA_BACK:
		app_pop(a);
		break;
	default:
		return false;
	}
	a->dirty = true;
	return true;
}

static void help_result(struct app *a, struct view *v, struct ev_job *job)
{
	(void)a;
	(void)v;
	(void)job;
}

static void help_free(struct view *v)
{
	struct help_view *h = (struct help_view *)v;
	for (int i = 0; i < h->n; i++)
		free(h->lines[i]);
	free(h->lines);
	free(h->styles);
	free(h);
}

static const struct view_ops help_ops = {
        .name = "help",
        .ctx = EV_CTX_HELP,
        .draw = help_draw,
        .action = help_action,
        .result = help_result,
        .load = NULL,
        .free = help_free,
};

struct view *view_help_new(struct app *a)
{
	struct help_view *h = ev_xcalloc(1, sizeof(*h));
	h->base.ops = &help_ops;
	(void)a;
	build(h);
	return &h->base;
}
