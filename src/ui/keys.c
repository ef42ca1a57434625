/* evtop — actions, bindings and key names (see keys.h). */
#include <config.h>

#include "ui/keys.h"

#include <curses.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct {
	const char *name;
	const char *help;
	unsigned flags;
} actions[EV_UA_COUNT] = {
#define X(id, name, help, flags) [EV_UA_##id] = {name, help, flags},
        EV_UI_ACTION_LIST(X)
#undef X
};

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
        {EV_CTX_LIST, "/", EV_UA_FILTER},
        {EV_CTX_LIST, "Space", EV_UA_MARK},
        {EV_CTX_LIST, "o", EV_UA_REVERSE},
        {EV_CTX_LIST, "*", EV_UA_MARK_PAGE},
        {EV_CTX_LIST, "u", EV_UA_UNMARK_ALL},
        {EV_CTX_LIST, "E", EV_UA_EXPORT},
        {EV_CTX_GLOBAL, "a", EV_UA_ACTIONS_LOG},
        {EV_CTX_GLOBAL, "x", EV_UA_BULK_STOP},
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
        {EV_CTX_LIST, "b", EV_UA_GROUP},
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
	return (unsigned)a < EV_UA_COUNT ? actions[a].help : "";
}

unsigned ev_ui_action_flags(enum ev_ui_action a)
{
	return (unsigned)a < EV_UA_COUNT ? actions[a].flags : 0;
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

static enum ev_ui_action lookup_in(enum ev_ui_context ctx, int key)
{
	for (const struct ev_binding *b = ev_bindings; b->key != NULL; b++)
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
		for (const struct ev_binding *b = ev_bindings; b->key != NULL; b++)
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
