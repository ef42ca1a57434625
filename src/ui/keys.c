/* evtop — actions, bindings and key names (see keys.h). */
#include <config.h>

#include "ui/keys.h"
#include "core/i18n.h"
#include "core/text.h"
#include "core/util.h"

#include <curses.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct {
	const char *name;
	const char *help;
	unsigned flags;
	int core;
} actions[EV_UA_COUNT] = {
#define X(id, name, help, flags, core) [EV_UA_##id] = {name, help, flags, core},
        EV_UI_ACTION_LIST(X)
#undef X
};

static const struct {
	const char *name, *arg, *help;
} commands[EV_UC_COUNT] = {
#define X(id, name, arg, help) [EV_UC_##id] = {name, arg, help},
        EV_UI_COMMAND_LIST(X)
#undef X
};

const char *ev_ui_command_name(enum ev_ui_command c)
{
	return (unsigned)c < EV_UC_COUNT ? commands[c].name : "none";
}

const char *ev_ui_command_arg(enum ev_ui_command c)
{
	return (unsigned)c < EV_UC_COUNT ? commands[c].arg : "";
}

const char *ev_ui_command_help(enum ev_ui_command c)
{
	return (unsigned)c < EV_UC_COUNT ? _(commands[c].help) : "";
}

enum ev_ui_command ev_ui_command_parse(const char *line, const char **rest)
{
	while (*line == ' ')
		line++;
	size_t n = strcspn(line, " ");
	const char *after = line + n;
	while (*after == ' ')
		after++;
	*rest = after;
	if (n == 1 && line[0] == 'q')
		return EV_UC_QUIT;
	for (int c = 0; c < EV_UC_COUNT; c++)
		if (strlen(commands[c].name) == n && strncmp(commands[c].name, line, n) == 0)
			return (enum ev_ui_command)c;
	return EV_UC_NONE;
}

/* Conventions of top, htop, tig and k9s. */
const struct ev_binding ev_bindings[] = {
        {EV_CTX_GLOBAL, "q", EV_UA_QUIT},
        {EV_CTX_GLOBAL, "Esc", EV_UA_BACK},
        {EV_CTX_GLOBAL, "?", EV_UA_HELP},
        {EV_CTX_GLOBAL, "F1", EV_UA_HELP},
        {EV_CTX_GLOBAL, "Up", EV_UA_UP},
        {EV_CTX_GLOBAL, "k", EV_UA_UP},
        {EV_CTX_GLOBAL, "Down", EV_UA_DOWN},
        {EV_CTX_GLOBAL, "j", EV_UA_DOWN},
        {EV_CTX_GLOBAL, "PgUp", EV_UA_PAGE_UP},
        {EV_CTX_GLOBAL, "C-b", EV_UA_PAGE_UP},
        {EV_CTX_GLOBAL, "PgDn", EV_UA_PAGE_DOWN},
        {EV_CTX_GLOBAL, "C-f", EV_UA_PAGE_DOWN},
        {EV_CTX_GLOBAL, "g", EV_UA_TOP},
        {EV_CTX_GLOBAL, "Home", EV_UA_TOP},
        {EV_CTX_GLOBAL, "G", EV_UA_BOTTOM},
        {EV_CTX_GLOBAL, "End", EV_UA_BOTTOM},
        {EV_CTX_GLOBAL, "Enter", EV_UA_OPEN},
        {EV_CTX_GLOBAL, ":", EV_UA_COMMAND},
        {EV_CTX_GLOBAL, "p", EV_UA_PAUSE},
        {EV_CTX_GLOBAL, "+", EV_UA_FASTER},
        {EV_CTX_GLOBAL, "-", EV_UA_SLOWER},
        {EV_CTX_GLOBAL, "C-r", EV_UA_REFRESH},
        {EV_CTX_GLOBAL, "F5", EV_UA_REFRESH},
        {EV_CTX_GLOBAL, "C-l", EV_UA_REDRAW},
        {EV_CTX_GLOBAL, "Tab", EV_UA_NEXT_TABLE},
        {EV_CTX_DASHBOARD, "Left", EV_UA_LEFT},
        {EV_CTX_DASHBOARD, "h", EV_UA_LEFT},
        {EV_CTX_DASHBOARD, "Right", EV_UA_RIGHT},
        {EV_CTX_DASHBOARD, "l", EV_UA_RIGHT},
        {EV_CTX_DASHBOARD, "d", EV_UA_DIMENSION},
        {EV_CTX_DASHBOARD, "S", EV_UA_NEXT_SOURCE},
        {EV_CTX_DASHBOARD, "P", EV_UA_PRIMARY},
        {EV_CTX_DASHBOARD, "w", EV_UA_WINDOW_LONGER},
        {EV_CTX_DASHBOARD, "W", EV_UA_WINDOW_SHORTER},
        {EV_CTX_DASHBOARD, "C", EV_UA_CLOCK_OK},
        {EV_CTX_DASHBOARD, ">", EV_UA_SORT_NEXT},
        {EV_CTX_DASHBOARD, "<", EV_UA_SORT_PREV},
        {EV_CTX_DASHBOARD, "I", EV_UA_SORT_INVERT},
        {EV_CTX_DASHBOARD, "F", EV_UA_FOLLOW},
        {EV_CTX_LIST, ">", EV_UA_SORT_NEXT},
        {EV_CTX_LIST, "<", EV_UA_SORT_PREV},
        {EV_CTX_LIST, "I", EV_UA_SORT_INVERT},
        {EV_CTX_LIST, "C-w", EV_UA_WIDE},
        {EV_CTX_LIST, "C", EV_UA_COPY},
        {EV_CTX_LIST, "J", EV_UA_COPY_JSON},
        {EV_CTX_DETAIL, "C", EV_UA_COPY},
        {EV_CTX_DETAIL, "J", EV_UA_COPY_JSON},
        {EV_CTX_CONFIRM, "C", EV_UA_COPY},
        {EV_CTX_DASHBOARD, "v", EV_UA_CHART},
        {EV_CTX_LIST, "v", EV_UA_CHART},
        {EV_CTX_LIST, "/", EV_UA_FILTER},
        {EV_CTX_LIST, "Space", EV_UA_MARK},
        {EV_CTX_LIST, "o", EV_UA_REVERSE},
        {EV_CTX_LIST, "*", EV_UA_MARK_PAGE},
        {EV_CTX_LIST, "u", EV_UA_UNMARK_ALL},
        {EV_CTX_LIST, "E", EV_UA_EXPORT},
        {EV_CTX_GLOBAL, "a", EV_UA_ACTIONS_LOG},
        {EV_CTX_GLOBAL, "x", EV_UA_BULK_STOP},
        {EV_CTX_GLOBAL, "X", EV_UA_BULK_HOLD},
        {EV_CTX_CONFIRM, "a", EV_UA_BULK_SCOPE},
        {EV_CTX_CONFIRM, "e", EV_UA_EXPORT},
        {EV_CTX_LIST, "r", EV_UA_RETRY_NOW},
        {EV_CTX_LIST, "s", EV_UA_RETRY_SCHEDULE},
        {EV_CTX_LIST, "c", EV_UA_CANCEL},
        {EV_CTX_LIST, "R", EV_UA_RECOVER},
        {EV_CTX_DETAIL, "r", EV_UA_RETRY_NOW},
        {EV_CTX_DETAIL, "s", EV_UA_RETRY_SCHEDULE},
        {EV_CTX_DETAIL, "c", EV_UA_CANCEL},
        {EV_CTX_DETAIL, "R", EV_UA_RECOVER},
        {EV_CTX_CONFIRM, "y", EV_UA_YES},
        {EV_CTX_CONFIRM, "Y", EV_UA_YES},
        {EV_CTX_CONFIRM, "m", EV_UA_BULK_MODE},
        {EV_CTX_CONFIRM, "r", EV_UA_BULK_RATE},
        {EV_CTX_CONFIRM, "d", EV_UA_BULK_DELAY},
        {EV_CTX_CONFIRM, "b", EV_UA_BULK_BATCH},
        {EV_CTX_CONFIRM, "w", EV_UA_BULK_PAUSE},
        {EV_CTX_LIST, "b", EV_UA_GROUP},
        {EV_CTX_DASHBOARD, "i", EV_UA_INSTANCES},
        {EV_CTX_LIST, "i", EV_UA_INSTANCES},
        {EV_CTX_LIST, "Left", EV_UA_LEFT},
        {EV_CTX_LIST, "Right", EV_UA_RIGHT},
        {EV_CTX_DETAIL, "t", EV_UA_TRAIL},
        {EV_CTX_DETAIL, "T", EV_UA_TRACE},
        {EV_CTX_DETAIL, "E", EV_UA_EXPORT},
        {EV_CTX_DETAIL, "Space", EV_UA_FOLD},
        {EV_CTX_DETAIL, "z", EV_UA_FOLD},
        {EV_CTX_DETAIL, "Z", EV_UA_FOLD_ALL},
        {EV_CTX_DETAIL, "O", EV_UA_UNFOLD_ALL},
        {EV_CTX_DETAIL, "/", EV_UA_SEARCH},
        {EV_CTX_DETAIL, "U", EV_UA_UNMASK},
        {EV_CTX_DETAIL, "n", EV_UA_SEARCH_NEXT},
        {EV_CTX_HELP, "q", EV_UA_BACK},
        {0, NULL, EV_UA_NONE},
};

const char *ev_ui_action_name(enum ev_ui_action a)
{
	return (unsigned)a < EV_UA_COUNT ? actions[a].name : "none";
}

const char *ev_ui_action_help(enum ev_ui_action a)
{
	return (unsigned)a < EV_UA_COUNT ? _(actions[a].help) : "";
}

unsigned ev_ui_action_flags(enum ev_ui_action a)
{
	return (unsigned)a < EV_UA_COUNT ? actions[a].flags : 0;
}

int ev_ui_action_core(enum ev_ui_action a)
{
	return (unsigned)a < EV_UA_COUNT ? actions[a].core : -1;
}

enum ev_ui_action ev_ui_action_parse(const char *name)
{
	for (int i = 0; i < EV_UA_COUNT; i++)
		if (strcmp(actions[i].name, name) == 0)
			return (enum ev_ui_action)i;
	return EV_UA_NONE;
}

const char *ev_ui_context_name(enum ev_ui_context c)
{
	static const char *const names[EV_CTX_COUNT] = {"global", "dashboard", "list",
	                                                "detail", "help",      "confirmation"};
	return (unsigned)c < EV_CTX_COUNT ? names[c] : "?";
}

/* The bindings in force: the config's [keys] first, then the built-in ones they leave. */
static struct ev_binding *active;
static char **active_names; /* the config's key names, owned */
static int nactive_names;

const struct ev_binding *ev_keymap_bindings(void)
{
	return active != NULL ? active : ev_bindings;
}

void ev_keymap_reset(void)
{
	for (int i = 0; i < nactive_names; i++)
		free(active_names[i]);
	free(active_names);
	free(active);
	active = NULL;
	active_names = NULL;
	nactive_names = 0;
}

static int parse_view(const char *name)
{
	if (name == NULL)
		return EV_CTX_GLOBAL;
	for (int c = 0; c < EV_CTX_COUNT; c++)
		if (strcmp(ev_ui_context_name((enum ev_ui_context)c), name) == 0)
			return c;
	return -1;
}

int ev_keymap_configure(const struct ev_keybind *kb, int n, char *err, size_t size)
{
	struct ev_binding *user = calloc((size_t)n + 1, sizeof(*user));
	int *codes = calloc((size_t)n + 1, sizeof(*codes));
	int bad = 0;
	for (int i = 0; i < n && !bad; i++) {
		int ctx = parse_view(kb[i].view);
		codes[i] = ev_key_parse(kb[i].key);
		enum ev_ui_action act = strcmp(kb[i].action, "none") == 0
		                                ? EV_UA_NONE
		                                : ev_ui_action_parse(kb[i].action);
		/* What the config says, cut at 40 columns, never inside a character. */
		const char *said = ctx < 0 ? kb[i].view : codes[i] < 0 ? kb[i].key : kb[i].action;
		char *shown = ev_text_fit(said, 40, false, false);
		if (ctx < 0)
			bad = snprintf(err, size,
			               _("%s: bind: unknown view '%s'; expected global, dashboard, "
			                 "list, detail, help or confirmation"),
			               kb[i].where, shown);
		else if (codes[i] < 0)
			bad = snprintf(
			        err, size,
			        _("%s: bind: unknown key '%s'; expected a character, Enter, Esc, "
			          "Tab, Space, Up, Down, Left, Right, PgUp, PgDn, Home, End, "
			          "Backspace, Delete, F1..F12 or C-a..C-z"),
			        kb[i].where, shown);
		else if (act == EV_UA_NONE && strcmp(kb[i].action, "none") != 0)
			bad = snprintf(err, size,
			               _("%s: bind: unknown action '%s' (the help screen and "
			                 "evtop(1) name them; none unbinds)"),
			               kb[i].where, shown);
		free(shown);
		user[i] = (struct ev_binding){(enum ev_ui_context)ctx, kb[i].key, act};
	}
	if (bad) {
		free(user);
		free(codes);
		return -1;
	}
	ev_keymap_reset();
	size_t nb = 0;
	while (ev_bindings[nb].key != NULL)
		nb++;
	active = ev_xcalloc((size_t)n + nb + 1, sizeof(*active));
	active_names = ev_xcalloc((size_t)n + 1, sizeof(*active_names));
	size_t k = 0;
	/* A later binding of the same key in the same view wins; "none" only takes one away. */
	for (int i = 0; i < n; i++) {
		bool later = false;
		for (int j = i + 1; j < n && !later; j++)
			later = user[j].ctx == user[i].ctx && codes[j] == codes[i];
		if (later || user[i].action == EV_UA_NONE)
			continue;
		active_names[nactive_names] = ev_xstrdup(user[i].key);
		active[k] = user[i];
		active[k++].key = active_names[nactive_names++];
	}
	for (size_t b = 0; b < nb; b++) {
		bool replaced = false;
		for (int i = 0; i < n && !replaced; i++)
			replaced = user[i].ctx == ev_bindings[b].ctx &&
			           codes[i] == ev_key_parse(ev_bindings[b].key);
		if (!replaced)
			active[k++] = ev_bindings[b];
	}
	active[k] = (struct ev_binding){0, NULL, EV_UA_NONE};
	free(user);
	free(codes);
	return 0;
}

static enum ev_ui_action lookup_in(enum ev_ui_context ctx, int key)
{
	for (const struct ev_binding *b = ev_keymap_bindings(); b->key != NULL; b++)
		if (b->ctx == ctx && ev_key_parse(b->key) == key)
			return b->action;
	return EV_UA_NONE;
}

enum ev_ui_action ev_keymap_lookup(enum ev_ui_context ctx, int key)
{
	enum ev_ui_action a = lookup_in(ctx, key);
	return a != EV_UA_NONE ? a : lookup_in(EV_CTX_GLOBAL, key);
}

const char *ev_keymap_key_for(enum ev_ui_context ctx, enum ev_ui_action a)
{
	for (int pass = 0; pass < 2; pass++)
		for (const struct ev_binding *b = ev_keymap_bindings(); b->key != NULL; b++)
			if (b->action == a && b->ctx == (pass == 0 ? ctx : EV_CTX_GLOBAL))
				return b->key;
	return NULL;
}

static const struct {
	const char *name;
	int code;
} named[] = {
        {"Enter", '\r'},
        {"Esc", 27},
        {"Tab", '\t'},
        {"Space", ' '},
        {"Up", KEY_UP},
        {"Down", KEY_DOWN},
        {"Left", KEY_LEFT},
        {"Right", KEY_RIGHT},
        {"PgUp", KEY_PPAGE},
        {"PgDn", KEY_NPAGE},
        {"Home", KEY_HOME},
        {"End", KEY_END},
        {"Backspace", KEY_BACKSPACE},
        {"BTab", KEY_BTAB},
        {"Resize", KEY_RESIZE},
        {"Delete", KEY_DC},
};

int ev_key_parse(const char *name)
{
	size_t n = strlen(name);

	if (n == 1)
		return (unsigned char)name[0];
	for (size_t i = 0; i < sizeof(named) / sizeof(named[0]); i++)
		if (strcmp(named[i].name, name) == 0)
			return named[i].code;
	if (n == 3 && name[0] == 'C' && name[1] == '-' && name[2] >= 'a' && name[2] <= 'z')
		return name[2] - 'a' + 1;
	if (name[0] == 'F' && n <= 3) {
		int f = atoi(name + 1);
		if (f >= 1 && f <= 12)
			return KEY_F(f);
	}
	return -1;
}

const char *ev_key_name(int key, char *buf, unsigned size)
{
	if (key == '\n' || key == KEY_ENTER)
		key = '\r';
	for (size_t i = 0; i < sizeof(named) / sizeof(named[0]); i++)
		if (named[i].code == key) {
			snprintf(buf, size, "%s", named[i].name);
			return buf;
		}
	if (key >= 1 && key <= 26)
		snprintf(buf, size, "C-%c", 'a' + key - 1);
	else if (key >= KEY_F(1) && key <= KEY_F(12))
		snprintf(buf, size, "F%d", key - KEY_F(0));
	else if (key > 32 && key < 127)
		snprintf(buf, size, "%c", key);
	else
		snprintf(buf, size, "#%d", key);
	return buf;
}
