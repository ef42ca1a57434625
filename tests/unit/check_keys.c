/* ui/keys: the action list and the bindings table, from which the dispatcher, the help
 * screen and the hint bar are all generated. */
#include <config.h>

#include "ui/app.h"
#include "ui/console.h"
#include "ui/keys.h"

#include <check.h>
#include <curses.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

START_TEST(every_action_has_a_name_help_and_a_key)
{
	for (int a = 0; a < EV_UA_COUNT; a++) {
		const char *name = ev_ui_action_name((enum ev_ui_action)a);
		ck_assert_msg(name != NULL && name[0] != '\0', "action %d has no name", a);
		ck_assert_msg(ev_ui_action_help((enum ev_ui_action)a)[0] != '\0', "%s has no help",
		              name);
		ck_assert_int_eq(ev_ui_action_parse(name), a);
		bool bound = false;
		for (const struct ev_binding *b = ev_bindings; b->key != NULL; b++)
			bound |= b->action == (enum ev_ui_action)a;
		ck_assert_msg(bound, "%s has no key (the help screen would not show it)", name);
		for (int b = a + 1; b < EV_UA_COUNT; b++)
			ck_assert_str_ne(name, ev_ui_action_name((enum ev_ui_action)b));
	}
	ck_assert_int_eq(ev_ui_action_parse("no-such-action"), EV_UA_NONE);
}
END_TEST

START_TEST(no_two_bindings_collide)
{
	for (const struct ev_binding *a = ev_bindings; a->key != NULL; a++) {
		ck_assert_msg(ev_key_parse(a->key) >= 0, "unknown key name '%s'", a->key);
		for (const struct ev_binding *b = a + 1; b->key != NULL; b++)
			ck_assert_msg(
			        !(a->ctx == b->ctx && ev_key_parse(a->key) == ev_key_parse(b->key)),
			        "%s is bound twice in the %s context", a->key,
			        ev_ui_context_name(a->ctx));
	}
}
END_TEST

/* The write pipeline (ui/write.c) is entered by an action's database action: an action that
 * writes names one, one that names one writes and needs a row, and each database action an
 * operator makes has exactly one console action. */
START_TEST(writing_actions_map_to_the_model)
{
	int seen[EV_ACTION_COUNT] = {0};
	for (int a = 0; a < EV_UA_COUNT; a++) {
		unsigned f = ev_ui_action_flags((enum ev_ui_action)a);
		int core = ev_ui_action_core((enum ev_ui_action)a);
		const char *name = ev_ui_action_name((enum ev_ui_action)a);
		ck_assert_msg(((f & EV_AF_WRITES) != 0) == (core >= 0),
		              "%s: writes (%u) but database action %d", name, f & EV_AF_WRITES,
		              core);
		if (core < 0)
			continue;
		ck_assert_msg(core < EV_ACTION_COUNT, "%s: database action %d", name, core);
		ck_assert_msg(f & EV_AF_NEEDS_ROW, "%s writes without a row", name);
		ck_assert_int_eq(ev_action_actor((enum ev_action)core), EV_ACTOR_OPERATOR);
		seen[core]++;
	}
	for (int c = 0; c < EV_ACTION_COUNT; c++)
		if (ev_action_actor((enum ev_action)c) == EV_ACTOR_OPERATOR)
			ck_assert_msg(seen[c] == 1, "%s: %d console actions",
			              ev_action_name((enum ev_action)c), seen[c]);
	ck_assert_int_eq(ev_ui_action_core(EV_UA_NONE), -1);
	ck_assert_int_eq(ev_ui_action_core(EV_UA_COUNT), -1);
}
END_TEST

START_TEST(context_falls_back_to_global)
{
	ck_assert_int_eq(ev_keymap_lookup(EV_CTX_LIST, '/'), EV_UA_FILTER);
	ck_assert_int_eq(ev_keymap_lookup(EV_CTX_DETAIL, '/'), EV_UA_SEARCH);
	ck_assert_int_eq(ev_keymap_lookup(EV_CTX_DASHBOARD, '/'), EV_UA_NONE);
	ck_assert_int_eq(ev_keymap_lookup(EV_CTX_LIST, 'q'), EV_UA_QUIT);
	ck_assert_int_eq(ev_keymap_lookup(EV_CTX_HELP, 'q'), EV_UA_BACK);
	ck_assert_int_eq(ev_keymap_lookup(EV_CTX_DASHBOARD, KEY_DOWN), EV_UA_DOWN);
	ck_assert_int_eq(ev_keymap_lookup(EV_CTX_DASHBOARD, 'j'), EV_UA_DOWN);
	ck_assert_int_eq(ev_keymap_lookup(EV_CTX_DASHBOARD, '\t'), EV_UA_NEXT_TABLE);
	ck_assert_str_eq(ev_keymap_key_for(EV_CTX_LIST, EV_UA_FILTER), "/");
	ck_assert_str_eq(ev_keymap_key_for(EV_CTX_DASHBOARD, EV_UA_QUIT), "q");
}
END_TEST

START_TEST(key_names_round_trip)
{
	static const char *const names[] = {"q",     "?",    "/",    "Enter",    "Esc",   "Tab",
	                                    "Space", "Up",   "Down", "Left",     "Right", "PgUp",
	                                    "PgDn",  "Home", "End",  "F1",       "F5",    "F12",
	                                    "C-a",   "C-l",  "C-r",  "Backspace"};
	char buf[32];
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		int k = ev_key_parse(names[i]);
		ck_assert_msg(k >= 0, "%s", names[i]);
		ck_assert_str_eq(ev_key_name(k, buf, sizeof(buf)), names[i]);
	}
	ck_assert_int_eq(ev_key_parse("F13"), -1);
	ck_assert_int_eq(ev_key_parse("Hyper"), -1);
	ck_assert_int_eq(ev_key_parse("C-1"), -1);
	ck_assert_str_eq(ev_key_name(KEY_ENTER, buf, sizeof(buf)), "Enter");
	ck_assert_str_eq(ev_key_name('\n', buf, sizeof(buf)), "Enter");
}
END_TEST

static struct ev_keybind kbind(const char *view, const char *key, const char *action,
                               const char *where)
{
	return (struct ev_keybind){view ? strdup(view) : NULL, strdup(key), strdup(action),
	                           strdup(where)};
}

static void kfree(struct ev_keybind *kb, int n)
{
	for (int i = 0; i < n; i++) {
		free(kb[i].view);
		free(kb[i].key);
		free(kb[i].action);
		free(kb[i].where);
	}
}

/* The config's [keys]: a binding replaces the view's built-in one of that key and is what the
 * help and the hint bar show; "none" takes one away; a later one wins; a wrong view, key or
 * action is refused with its file and line, and nothing changes. */
START_TEST(config_bindings)
{
	struct ev_keybind kb[] = {
	        kbind("list", "x", "cancel", "cfg:3"),    kbind(NULL, "F9", "retry", "cfg:4"),
	        kbind("dashboard", "d", "none", "cfg:5"), kbind("detail", "t", "trace", "cfg:6"),
	        kbind("detail", "t", "trail", "cfg:7"),
	};
	char err[512] = "";
	ck_assert_int_eq(ev_keymap_configure(kb, 5, err, sizeof(err)), 0);
	kfree(kb, 5); /* the bindings in force hold copies */
	ck_assert_int_eq(ev_keymap_lookup(EV_CTX_LIST, 'x'), EV_UA_CANCEL);
	ck_assert_int_eq(ev_keymap_lookup(EV_CTX_LIST, 'c'), EV_UA_CANCEL); /* still bound */
	ck_assert_int_eq(ev_keymap_lookup(EV_CTX_DASHBOARD, 'x'), EV_UA_BULK_STOP);
	ck_assert_int_eq(ev_keymap_lookup(EV_CTX_DETAIL, KEY_F(9)), EV_UA_RETRY_NOW);
	ck_assert_int_eq(ev_keymap_lookup(EV_CTX_DASHBOARD, 'd'), EV_UA_NONE);
	ck_assert_int_eq(ev_keymap_lookup(EV_CTX_DETAIL, 't'), EV_UA_TRAIL);
	ck_assert_str_eq(ev_keymap_key_for(EV_CTX_LIST, EV_UA_CANCEL), "x");
	ck_assert_ptr_null(ev_keymap_key_for(EV_CTX_DASHBOARD, EV_UA_DIMENSION));
	/* No key bound twice in a view in force. */
	for (const struct ev_binding *a = ev_keymap_bindings(); a->key != NULL; a++)
		for (const struct ev_binding *b = a + 1; b->key != NULL; b++)
			ck_assert_msg(
			        !(a->ctx == b->ctx && ev_key_parse(a->key) == ev_key_parse(b->key)),
			        "%s twice in %s", a->key, ev_ui_context_name(a->ctx));

	struct ev_keybind bad[] = {
	        kbind("lists", "x", "cancel", "cfg:9"),
	        kbind("list", "Hyper", "cancel", "cfg:10"),
	        kbind("list", "x", "explode", "cfg:11"),
	};
	static const char *const want[] = {"cfg:9: bind: unknown view 'lists'",
	                                   "cfg:10: bind: unknown key 'Hyper'",
	                                   "cfg:11: bind: unknown action 'explode'"};
	for (int i = 0; i < 3; i++) {
		ck_assert_int_eq(ev_keymap_configure(&bad[i], 1, err, sizeof(err)), -1);
		ck_assert_msg(strncmp(err, want[i], strlen(want[i])) == 0, "%s", err);
		/* The bindings in force are the earlier ones still. */
		ck_assert_int_eq(ev_keymap_lookup(EV_CTX_LIST, 'x'), EV_UA_CANCEL);
	}
	kfree(bad, 3);
	ev_keymap_reset();
	ck_assert_int_eq(ev_keymap_lookup(EV_CTX_LIST, 'x'), EV_UA_BULK_STOP);
	ck_assert_int_eq(ev_keymap_lookup(EV_CTX_DASHBOARD, 'd'), EV_UA_DIMENSION);
	ck_assert_ptr_eq(ev_keymap_bindings(), ev_bindings);
}
END_TEST

/* The ':' commands: each named and explained, found by its first word only. */
START_TEST(commands_parse)
{
	const char *rest = NULL;
	for (int c = 0; c < EV_UC_COUNT; c++) {
		ck_assert_str_ne(ev_ui_command_help((enum ev_ui_command)c), "");
		ck_assert_int_eq(
		        ev_ui_command_parse(ev_ui_command_name((enum ev_ui_command)c), &rest), c);
		ck_assert_str_eq(rest, "");
	}
	ck_assert_int_eq(ev_ui_command_parse("  show   OB-1 x", &rest), EV_UC_SHOW);
	ck_assert_str_eq(rest, "OB-1 x");
	ck_assert_int_eq(ev_ui_command_parse("all", &rest), EV_UC_ALL);
	ck_assert_int_eq(ev_ui_command_parse("all retry", &rest), EV_UC_ALL);
	ck_assert_str_eq(rest, "retry");
	ck_assert_int_eq(ev_ui_command_parse("q", &rest), EV_UC_QUIT);
	ck_assert_int_eq(ev_ui_command_parse("allx", &rest), EV_UC_NONE);
	ck_assert_int_eq(ev_ui_command_parse("sho OB-1", &rest), EV_UC_NONE);
	ck_assert_int_eq(ev_ui_command_parse("next-table", &rest), EV_UC_NONE);
}
END_TEST

/* --- the dispatcher ----------------------------------------------------------------------------
 * A view that records what reaches it, on a console state built by hand: no terminal and no
 * server, as the dispatcher needs neither to decide. */
static enum ev_ui_action reached[8];
static int nreached;
static bool view_has_row = true;

static bool probe_action(struct app *a, struct view *v, enum ev_ui_action act)
{
	(void)a;
	(void)v;
	if (nreached < 8)
		reached[nreached++] = act;
	return true;
}

static bool probe_allows(struct app *a, struct view *v, enum ev_ui_action act)
{
	(void)a;
	(void)v;
	(void)act;
	return view_has_row;
}

static void probe_bulk_all(struct app *a, struct view *v, enum ev_ui_action act)
{
	probe_action(a, v, act);
}

static void probe_free(struct view *v)
{
	(void)v;
}

static const struct view_ops probe_list_ops = {
        .name = "probe-list",
        .ctx = EV_CTX_LIST,
        .action = probe_action,
        .bulk_all = probe_bulk_all,
        .allows = probe_allows,
        .free = probe_free,
};

/* A view without rows to act on (the help, the dashboard): no allows. */
static const struct view_ops probe_text_ops = {
        .name = "probe-text",
        .ctx = EV_CTX_HELP,
        .action = probe_action,
        .free = probe_free,
};

static struct ev_config probe_cfg;
static struct app probe_app;
static struct view probe_view;

static struct app *console_with(const struct view_ops *ops, bool read_only, bool applying)
{
	memset(&probe_app, 0, sizeof(probe_app));
	memset(&probe_cfg, 0, sizeof(probe_cfg));
	memset(&probe_view, 0, sizeof(probe_view));
	probe_cfg.read_only = read_only;
	probe_app.cfg = &probe_cfg;
	probe_app.applying = applying;
	probe_app.refresh_ms = 2000;
	probe_app.scripted = true;
	probe_view.ops = ops;
	probe_view.site = 1;
	probe_app.views[0] = &probe_view;
	probe_app.nviews = 1;
	nreached = 0;
	view_has_row = true;
	return &probe_app;
}

/* Every writing action, by key or by ':' name, is refused read-only before the view sees it;
 * every other action still reaches the view. */
START_TEST(dispatcher_refuses_writes_read_only)
{
	for (int act = 0; act < EV_UA_COUNT; act++) {
		unsigned f = ev_ui_action_flags((enum ev_ui_action)act);
		/* Not these: the prompt opens a terminal line; a refresh resets the sources'
		 * workers, which this console has none of. */
		if (act == EV_UA_NONE || act == EV_UA_COMMAND || act == EV_UA_REFRESH)
			continue;
		struct app *a = console_with(&probe_list_ops, true, false);
		ev_console_dispatch(a, (enum ev_ui_action)act);
		const char *name = ev_ui_action_name((enum ev_ui_action)act);
		if (f & EV_AF_WRITES) {
			ck_assert_msg(nreached == 0, "%s reached the view read-only", name);
			ck_assert_msg(strstr(a->msg, "read-only") != NULL, "%s: said '%s'", name,
			              a->msg);
			/* The same through a ':' command: the path that once skipped the check. */
			a = console_with(&probe_list_ops, true, false);
			ev_console_command(a, name);
			ck_assert_msg(nreached == 0, ":%s reached the view read-only", name);
			ck_assert_msg(strstr(a->msg, "read-only") != NULL, ":%s: said '%s'", name,
			              a->msg);
			char all[64];
			snprintf(all, sizeof(all), "all %s", name);
			a = console_with(&probe_list_ops, true, false);
			ev_console_command(a, all);
			ck_assert_msg(nreached == 0, ":%s reached the view read-only", all);
		} else {
			ck_assert_msg(nreached == 1 && reached[0] == act,
			              "%s did not reach the view", name);
		}
	}
}
END_TEST

/* While a write applies, no other write starts, from a key or a ':' command. */
START_TEST(dispatcher_refuses_a_second_write)
{
	struct app *a = console_with(&probe_list_ops, false, true);
	ev_console_dispatch(a, EV_UA_CANCEL);
	ck_assert_int_eq(nreached, 0);
	ck_assert_ptr_nonnull(strstr(a->msg, "being applied"));
	a = console_with(&probe_list_ops, false, true);
	ev_console_command(a, "retry");
	ck_assert_int_eq(nreached, 0);
	ck_assert_ptr_nonnull(strstr(a->msg, "being applied"));
	a = console_with(&probe_list_ops, false, true);
	ev_console_command(a, "all recover");
	ck_assert_int_eq(nreached, 0);
	/* Not a write: goes on while one applies. */
	a = console_with(&probe_list_ops, false, true);
	ev_console_dispatch(a, EV_UA_DOWN);
	ck_assert_int_eq(nreached, 1);
	ck_assert_int_eq(reached[0], EV_UA_DOWN);
}
END_TEST

/* A write needs a view with rows: refused on a view that has none, given to one that has. */
START_TEST(dispatcher_needs_a_row)
{
	struct app *a = console_with(&probe_text_ops, false, false);
	ev_console_dispatch(a, EV_UA_RETRY_NOW);
	ck_assert_int_eq(nreached, 0);
	ck_assert_ptr_nonnull(strstr(a->msg, "acts on an event"));
	a = console_with(&probe_text_ops, false, false);
	ev_console_command(a, "schedule");
	ck_assert_int_eq(nreached, 0);
	ck_assert_ptr_nonnull(strstr(a->msg, "acts on an event"));
	for (int act = 0; act < EV_UA_COUNT; act++) {
		if (!(ev_ui_action_flags((enum ev_ui_action)act) & EV_AF_WRITES))
			continue;
		a = console_with(&probe_list_ops, false, false);
		ev_console_dispatch(a, (enum ev_ui_action)act);
		ck_assert_int_eq(nreached, 1);
		ck_assert_int_eq(reached[0], act);
		a = console_with(&probe_list_ops, false, false);
		ev_console_command(a, ev_ui_action_name((enum ev_ui_action)act));
		ck_assert_int_eq(nreached, 1);
		ck_assert_int_eq(reached[0], act);
	}
	/* :all ACTION goes to the list's bulk_all; on a view without a list it says so. */
	a = console_with(&probe_list_ops, false, false);
	ev_console_command(a, "all cancel");
	ck_assert_int_eq(nreached, 1);
	ck_assert_int_eq(reached[0], EV_UA_CANCEL);
	a = console_with(&probe_text_ops, false, false);
	ev_console_command(a, "all cancel");
	ck_assert_int_eq(nreached, 0);
	ck_assert_ptr_nonnull(strstr(a->msg, "open a list"));
}
END_TEST

/* An action the view does not take falls to the console's own: the refresh interval. */
static bool probe_decline(struct app *a, struct view *v, enum ev_ui_action act)
{
	probe_action(a, v, act);
	return false;
}

START_TEST(dispatcher_falls_back_to_the_console)
{
	static const struct view_ops decline_ops = {
	        .name = "probe-decline",
	        .ctx = EV_CTX_LIST,
	        .action = probe_decline,
	        .free = probe_free,
	};
	struct app *a = console_with(&decline_ops, false, false);
	ev_console_dispatch(a, EV_UA_FASTER);
	ck_assert_int_eq(nreached, 1);
	ck_assert_int_eq(a->refresh_ms, 1000);
	ev_console_command(a, "slower");
	ck_assert_int_eq(a->refresh_ms, 2000);
	ev_console_command(a, "refresh 500ms");
	ck_assert_int_eq(a->refresh_ms, 500);
	ev_console_command(a, "no-such-command");
	ck_assert_ptr_nonnull(strstr(a->msg, "unknown command"));
	ev_console_command(a, "quit");
	ck_assert(a->quit);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("keys");
	TCase *tc = tcase_create("keys");
	tcase_add_test(tc, every_action_has_a_name_help_and_a_key);
	tcase_add_test(tc, no_two_bindings_collide);
	tcase_add_test(tc, writing_actions_map_to_the_model);
	tcase_add_test(tc, context_falls_back_to_global);
	tcase_add_test(tc, key_names_round_trip);
	tcase_add_test(tc, config_bindings);
	tcase_add_test(tc, commands_parse);
	tcase_add_test(tc, dispatcher_refuses_writes_read_only);
	tcase_add_test(tc, dispatcher_refuses_a_second_write);
	tcase_add_test(tc, dispatcher_needs_a_row);
	tcase_add_test(tc, dispatcher_falls_back_to_the_console);
	suite_add_tcase(s, tc);
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? 0 : 1;
}
