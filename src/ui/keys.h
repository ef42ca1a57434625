/* evtop — the console's actions and key bindings, as data. One X-macro list of actions
 * generates the enum, the names used by the config file and test scripts, the help screen and
 * the hint bar; the bindings table maps (context, key) to an action, the screen's context
 * first, then the global one. */
#ifndef EV_UI_KEYS_H
#define EV_UI_KEYS_H

#include "core/config.h"
#include "core/i18n.h"
#include "core/model.h"

#include <stdbool.h>

enum {
	EV_AF_NEEDS_ROW = 1, /* acts on the row under the cursor: refused where no view has one */
	EV_AF_WRITES = 2,    /* changes the database: refused read-only or while one applies;
	                      * always confirmed (actions.c, bulk.c) */
	EV_AF_HINT = 8,      /* shown in the hint bar */
	EV_AF_SETTING = 16,  /* changes a setting of the confirmation shown, which stays open */
};

/* X(ID, name, help, flags, core): core is the database action a writing action makes
 * (core/model.h), EV_UA_NO_CORE for the others. The help is marked N_() and translated by
 * ev_ui_action_help; the name is never translated (config files and scripts use it). */
#define EV_UA_NO_CORE (-1)
#define EV_UI_ACTION_LIST(X)                                                                       \
	X(QUIT, "quit", N_("quit (from a list or pane: go back)"), EV_AF_HINT, EV_UA_NO_CORE)      \
	X(BACK, "back", N_("go back; cancel a running query"), 0, EV_UA_NO_CORE)                   \
	X(HELP, "help", N_("show the keys"), EV_AF_HINT, EV_UA_NO_CORE)                            \
	X(UP, "up", N_("move up"), 0, EV_UA_NO_CORE)                                               \
	X(DOWN, "down", N_("move down"), 0, EV_UA_NO_CORE)                                         \
	X(LEFT, "left", N_("previous column"), 0, EV_UA_NO_CORE)                                   \
	X(RIGHT, "right", N_("next column"), 0, EV_UA_NO_CORE)                                     \
	X(PAGE_UP, "page-up", N_("previous page"), 0, EV_UA_NO_CORE)                               \
	X(PAGE_DOWN, "page-down", N_("next page"), 0, EV_UA_NO_CORE)                               \
	X(TOP, "top", N_("first row"), 0, EV_UA_NO_CORE)                                           \
	X(BOTTOM, "bottom", N_("last row"), 0, EV_UA_NO_CORE)                                      \
	X(OPEN, "open", N_("open the list behind a cell / the event"),                             \
	  EV_AF_NEEDS_ROW | EV_AF_HINT, EV_UA_NO_CORE)                                             \
	X(NEXT_TABLE, "next-table", N_("switch between the outbox and the message table"),         \
	  EV_AF_HINT, EV_UA_NO_CORE)                                                               \
	X(NEXT_SOURCE, "next-source", N_("watch the next source of the config"), 0, EV_UA_NO_CORE) \
	X(PRIMARY, "primary", N_("read the primary, or the replica again"), 0, EV_UA_NO_CORE)      \
	X(DIMENSION, "dimension", N_("next dimension; on a source's row, its dashboard"),          \
	  EV_AF_HINT, EV_UA_NO_CORE)                                                               \
	X(WINDOW_LONGER, "window-longer", N_("longer time window"), 0, EV_UA_NO_CORE)              \
	X(WINDOW_SHORTER, "window-shorter", N_("shorter time window"), 0, EV_UA_NO_CORE)           \
	X(FILTER, "filter", N_("filter the list (key=value ...)"), EV_AF_HINT, EV_UA_NO_CORE)      \
	X(COMMAND, "command", N_("command line (:help lists the commands)"), 0, EV_UA_NO_CORE)     \
	X(PAUSE, "pause", N_("pause or resume the refresh"), EV_AF_HINT, EV_UA_NO_CORE)            \
	X(FASTER, "faster", N_("refresh more often"), 0, EV_UA_NO_CORE)                            \
	X(SLOWER, "slower", N_("refresh less often"), 0, EV_UA_NO_CORE)                            \
	X(REFRESH, "refresh", N_("refresh now"), 0, EV_UA_NO_CORE)                                 \
	X(RETRY_NOW, "retry", N_("retry now: failed → pending (one more attempt if exhausted)"),   \
	  EV_AF_NEEDS_ROW | EV_AF_WRITES | EV_AF_HINT, EV_ACTION_RETRY_NOW)                        \
	X(RETRY_SCHEDULE, "schedule", N_("schedule a retry through next_retry_time"),              \
	  EV_AF_NEEDS_ROW | EV_AF_WRITES | EV_AF_HINT, EV_ACTION_RETRY_SCHEDULE)                   \
	X(CANCEL, "cancel", N_("cancel: pending or failed → cancelled (asks a reason)"),           \
	  EV_AF_NEEDS_ROW | EV_AF_WRITES | EV_AF_HINT, EV_ACTION_CANCEL)                           \
	X(RECOVER, "recover", N_("recover a stuck event: processing → failed, retried in 1 min"),  \
	  EV_AF_NEEDS_ROW | EV_AF_WRITES | EV_AF_HINT, EV_ACTION_RECOVER)                          \
	X(YES, "yes", N_("apply the change shown"), 0, EV_UA_NO_CORE)                              \
	X(BULK_STOP, "stop", N_("stop a bulk action after its current batch"), 0, EV_UA_NO_CORE)   \
	X(BULK_HOLD, "hold", N_("pause a bulk action after its current batch, or resume it"), 0,   \
	  EV_UA_NO_CORE)                                                                           \
	X(BULK_SCOPE, "bulk-scope",                                                                \
	  N_("a bulk action on marked rows: all the rows that match the list instead, or back"),   \
	  EV_AF_SETTING, EV_UA_NO_CORE)                                                            \
	X(BULK_MODE, "bulk-mode",                                                                  \
	  N_("a bulk retry: scheduled, spread (the default) or now, paced"), EV_AF_SETTING,        \
	  EV_UA_NO_CORE)                                                                           \
	X(BULK_RATE, "bulk-rate", N_("a bulk run's rate: events per second"), EV_AF_SETTING,       \
	  EV_UA_NO_CORE)                                                                           \
	X(BULK_DELAY, "bulk-delay", N_("a scheduled bulk retry's delay before the first event"),   \
	  EV_AF_SETTING, EV_UA_NO_CORE)                                                            \
	X(BULK_BATCH, "bulk-batch", N_("a bulk run's batch size: rows per transaction"),           \
	  EV_AF_SETTING, EV_UA_NO_CORE)                                                            \
	X(BULK_PAUSE, "bulk-pause", N_("a bulk run's pause between two batches"), EV_AF_SETTING,   \
	  EV_UA_NO_CORE)                                                                           \
	X(REVERSE, "reverse", N_("reverse the list's order"), 0, EV_UA_NO_CORE)                    \
	X(GROUP, "group", N_("group failures by fail_reason, locks by locked_by"), EV_AF_HINT,     \
	  EV_UA_NO_CORE)                                                                           \
	X(INSTANCES, "instances",                                                                  \
	  N_("publisher instances by locked_by: their locks, alive or dead"), 0, EV_UA_NO_CORE)    \
	X(MARK, "mark", N_("mark or unmark the row"), EV_AF_NEEDS_ROW, EV_UA_NO_CORE)              \
	X(MARK_PAGE, "mark-page", N_("mark every row on the screen"), 0, EV_UA_NO_CORE)            \
	X(UNMARK_ALL, "unmark-all", N_("clear the marks"), 0, EV_UA_NO_CORE)                       \
	X(ACTIONS_LOG, "actions", N_("this session's actions, from the audit file"), 0,            \
	  EV_UA_NO_CORE)                                                                           \
	X(TRAIL, "trail", N_("every event of this business object, in order"), EV_AF_HINT,         \
	  EV_UA_NO_CORE)                                                                           \
	X(TRACE, "trace", N_("every event of this trace_id, in both tables"), EV_AF_HINT,          \
	  EV_UA_NO_CORE)                                                                           \
	X(EXPORT, "export", N_("to a file: event_nos, the row, payload or statement"), 0,          \
	  EV_UA_NO_CORE)                                                                           \
	X(FOLD, "fold", N_("fold or unfold the object or array under the cursor"), EV_AF_HINT,     \
	  EV_UA_NO_CORE)                                                                           \
	X(FOLD_ALL, "fold-all", N_("fold every object and array"), 0, EV_UA_NO_CORE)               \
	X(UNFOLD_ALL, "unfold-all", N_("unfold every object and array"), 0, EV_UA_NO_CORE)         \
	X(SEARCH, "search", N_("search the event's text"), EV_AF_HINT, EV_UA_NO_CORE)              \
	X(UNMASK, "unmask",                                                                        \
	  N_("this event's personal data in the clear (asks a reason; audited)"), 0,               \
	  EV_UA_NO_CORE)                                                                           \
	X(SEARCH_NEXT, "search-next", N_("next match"), 0, EV_UA_NO_CORE)                          \
	X(REDRAW, "redraw", N_("redraw the screen"), 0, EV_UA_NO_CORE)                             \
	X(CLOCK_OK, "clock-ok", N_("allow writes under a suspected zone mismatch (audited)"), 0,   \
	  EV_UA_NO_CORE)                                                                           \
	X(SORT_NEXT, "sort-next", N_("sort the rows by the next column (a list: its order)"), 0,   \
	  EV_UA_NO_CORE)                                                                           \
	X(SORT_PREV, "sort-prev", N_("sort the rows by the column before"), 0, EV_UA_NO_CORE)      \
	X(SORT_INVERT, "sort-invert", N_("invert the rows' order"), 0, EV_UA_NO_CORE)              \
	X(FOLLOW, "follow", N_("the cursor follows its group, or keeps its line"), 0,              \
	  EV_UA_NO_CORE)                                                                           \
	X(WIDE, "wide", N_("every column at full width (Left, Right scroll)"), 0, EV_UA_NO_CORE)   \
	X(COPY, "copy", N_("copy the event_no (a confirmation: its statement) to the clipboard"),  \
	  0, EV_UA_NO_CORE)                                                                        \
	X(COPY_JSON, "copy-json", N_("copy the row as JSON to the clipboard"), 0, EV_UA_NO_CORE)   \
	X(CHART, "chart",                                                                          \
	  N_("throughput over time: created, finished, failed per minute, backlog"), 0,            \
	  EV_UA_NO_CORE)

enum ev_ui_action {
#define X(id, name, help, flags, core) EV_UA_##id,
	EV_UI_ACTION_LIST(X)
#undef X
	        EV_UA_COUNT,
	EV_UA_NONE = -1,
};

/* The ':' commands: what has no key. X(ID, name, argument, help); ":NAME" also runs any
 * action by its name. The help screen and doc/evtop.1 list them from here. The help is marked
 * N_() and translated by ev_ui_command_help; the name and the argument are not. */
#define EV_UI_COMMAND_LIST(X)                                                                      \
	X(SHOW, "show", "EVENT_NO", N_("an event by event_no, in both tables (deleted ones too)")) \
	X(TRACE, "trace", "TRACE_ID", N_("every event of a trace_id, in both tables"))             \
	X(AUDIT, "audit", "[FILTER]",                                                              \
	  N_("who did what: every operator's writes (evtop_audit), newest first; / filters"))      \
	X(RECENT, "recent", "[FILTER]",                                                            \
	  N_("the table's events created in the window, any status (payload terms search them)"))  \
	X(ALL, "all", "ACTION", N_("retry, schedule, cancel or recover the whole list on screen")) \
	X(SOURCE, "source", "NAME", N_("watch another source; :source all, every source at once")) \
	X(REFRESH, "refresh", "DUR", N_("the refresh interval, e.g. 5s or 500ms"))                 \
	X(CLOCK_OK, "clock-ok", "REASON",                                                          \
	  N_("allow writes while a zone mismatch is suspected (audited)"))                         \
	X(INSTANCES, "instances", "",                                                              \
	  N_("publisher instances (locked_by): locks held, expired, alive or dead"))               \
	X(QUIT, "quit", "", N_("quit (also :q)"))

enum ev_ui_command {
#define X(id, name, arg, help) EV_UC_##id,
	EV_UI_COMMAND_LIST(X)
#undef X
	        EV_UC_COUNT,
	EV_UC_NONE = -1,
};

const char *ev_ui_command_name(enum ev_ui_command c);
/* What the command takes ("EVENT_NO"), "" for nothing. */
const char *ev_ui_command_arg(enum ev_ui_command c);
/* What the command does, in the interface's language. */
const char *ev_ui_command_help(enum ev_ui_command c);
/* The command a command line starts with (its first word; "q" is quit), or EV_UC_NONE; *rest
 * is what follows the word, spaces skipped. */
enum ev_ui_command ev_ui_command_parse(const char *line, const char **rest);

enum ev_ui_context {
	EV_CTX_GLOBAL,
	EV_CTX_DASHBOARD,
	EV_CTX_LIST,
	EV_CTX_DETAIL,
	EV_CTX_HELP,
	EV_CTX_CONFIRM,
	EV_CTX_COUNT,
};

struct ev_binding {
	enum ev_ui_context ctx;
	const char *key; /* a key name, see ev_key_name */
	enum ev_ui_action action;
};

/* The built-in bindings. */
extern const struct ev_binding ev_bindings[];
/* The bindings in force (the built-in ones until ev_keymap_configure), NULL-key terminated. */
const struct ev_binding *ev_keymap_bindings(void);
/* Put the config's [keys] bindings in force before the built-in ones: a binding of a key in a
 * view replaces that view's built-in binding of the key; "none" only removes it. Returns -1
 * with "FILE:LINE: ..." in err for an unknown view, key or action (nothing changes then). */
int ev_keymap_configure(const struct ev_keybind *kb, int n, char *err, size_t size);
/* Back to the built-in bindings; frees what ev_keymap_configure held. */
void ev_keymap_reset(void);

const char *ev_ui_action_name(enum ev_ui_action a);
/* What the action does, in the interface's language (the help screen, doc/evtop.1's KEYS). */
const char *ev_ui_action_help(enum ev_ui_action a);
unsigned ev_ui_action_flags(enum ev_ui_action a);
/* The database action a writing action makes (EV_ACTION_*), or -1 for the others. */
int ev_ui_action_core(enum ev_ui_action a);
/* Action by name (config files, scripts), or EV_UA_NONE. */
enum ev_ui_action ev_ui_action_parse(const char *name);
const char *ev_ui_context_name(enum ev_ui_context c);

/* The action of a key in a context (falling back to the global bindings). */
enum ev_ui_action ev_keymap_lookup(enum ev_ui_context ctx, int key);
/* The first key bound to an action in a context (or globally), for the hint bar; NULL if
 * none. */
const char *ev_keymap_key_for(enum ev_ui_context ctx, enum ev_ui_action a);

/* Key names: "q", "?", "Enter", "Esc", "Tab", "Space", "Up", "Down", "Left", "Right",
 * "PgUp", "PgDn", "Home", "End", "Backspace", "F1".."F12", "C-a".."C-z". The key code is
 * the curses one (a character, or KEY_*). Returns -1 for an unknown name. */
int ev_key_parse(const char *name);
/* The name of a key code, into buf. */
const char *ev_key_name(int key, char *buf, unsigned size);

#endif
