/* doc/evtop.1's KEYS section against the console's own tables (src/ui/keys.c): every binding
 * is listed under its view with its action's name and help, every action name appears, the
 * page lists no key the console does not bind, and every ':' command has its entry. */
#include <config.h>

#include "ui/keys.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct entry {
	char ctx[32];    /* the subsection's context name, "" when it names none */
	char keys[1024]; /* the tag, unescaped: "Up, k" */
	char body[1024]; /* unescaped: "up — move up" */
};

static struct entry *entries;
static size_t nentries;
static char contexts[16][32];
static size_t ncontexts;

/* roff to text: \- - ; \(em — ; \(-> → ; \e \ ; \fX dropped; quotes around a tag dropped. */
static void unescape(const char *s, char *out, size_t size)
{
	size_t n = 0;
	while (*s && n + 4 < size) {
		if (s[0] == '\\' && s[1] == '-') {
			out[n++] = '-';
			s += 2;
		} else if (strncmp(s, "\\(em", 4) == 0) {
			memcpy(out + n, "\xe2\x80\x94", 3);
			n += 3;
			s += 4;
		} else if (strncmp(s, "\\(->", 4) == 0) {
			memcpy(out + n, "\xe2\x86\x92", 3);
			n += 3;
			s += 4;
		} else if (s[0] == '\\' && s[1] == 'e') {
			out[n++] = '\\';
			s += 2;
		} else if (s[0] == '\\' && s[1] == 'f' && s[2] != '\0') {
			s += 3;
		} else {
			out[n++] = *s++;
		}
	}
	out[n] = '\0';
}

static void load(void)
{
	const char *src = getenv("EVTOP_SRCDIR");
	char path[4096], line[1024];
	snprintf(path, sizeof(path), "%s/doc/evtop.1", src ? src : ".");
	FILE *f = fopen(path, "r");
	ck_assert_msg(f != NULL, "cannot open %s", path);
	bool in_keys = false;
	char ctx[32] = "";
	int state = 0; /* 1: after .TP, the tag is next; 2: the body is next */

	entries = calloc(512, sizeof(*entries));
	nentries = 0;
	ncontexts = 0;
	while (fgets(line, sizeof(line), f) != NULL) {
		line[strcspn(line, "\n")] = '\0';
		if (strncmp(line, ".SH", 3) == 0) {
			in_keys = strcmp(line, ".SH KEYS") == 0;
			continue;
		}
		if (!in_keys)
			continue;
		if (strncmp(line, ".SS", 3) == 0) {
			/* .SS "Title (context)" */
			const char *open = strrchr(line, '(');
			const char *close = strrchr(line, ')');
			ctx[0] = '\0';
			if (open != NULL && close != NULL && close > open) {
				snprintf(ctx, sizeof(ctx), "%.*s", (int)(close - open - 1),
				         open + 1);
				snprintf(contexts[ncontexts++], sizeof(contexts[0]), "%s", ctx);
			}
			state = 0;
			continue;
		}
		if (strcmp(line, ".TP") == 0) {
			state = 1;
			continue;
		}
		if (state == 1 && strncmp(line, ".B ", 3) == 0) {
			struct entry *e = &entries[nentries++];
			char tag[1024];
			snprintf(e->ctx, sizeof(e->ctx), "%s", ctx);
			const char *t = line + 3;
			size_t len = strlen(t);
			if (len >= 2 && t[0] == '"' && t[len - 1] == '"')
				snprintf(tag, sizeof(tag), "%.*s", (int)(len - 2), t + 1);
			else
				snprintf(tag, sizeof(tag), "%s", t);
			unescape(tag, e->keys, sizeof(e->keys));
			state = 2;
			continue;
		}
		if (state == 2) {
			unescape(line, entries[nentries - 1].body, sizeof(entries[0].body));
			state = 0;
		}
	}
	fclose(f);
	ck_assert_uint_gt(nentries, 20);
}

static bool tag_has(const char *keys, const char *key)
{
	char copy[1024];
	char *save = NULL;
	snprintf(copy, sizeof(copy), "%s", keys);
	for (char *k = strtok_r(copy, ",", &save); k != NULL; k = strtok_r(NULL, ",", &save)) {
		while (*k == ' ')
			k++;
		if (strcmp(k, key) == 0)
			return true;
	}
	return false;
}

/* The body an action's entry must have: "name — help". */
static void expected_body(enum ev_ui_action a, char *out, size_t size)
{
	snprintf(out, size, "%s \xe2\x80\x94 %s", ev_ui_action_name(a), ev_ui_action_help(a));
}

START_TEST(every_binding_in_the_page)
{
	load();
	for (const struct ev_binding *b = ev_bindings; b->key != NULL; b++) {
		const char *ctx = ev_ui_context_name(b->ctx);
		char want[512];
		expected_body(b->action, want, sizeof(want));
		bool found = false;
		for (size_t i = 0; i < nentries && !found; i++)
			found = strcmp(entries[i].ctx, ctx) == 0 &&
			        tag_has(entries[i].keys, b->key) &&
			        strcmp(entries[i].body, want) == 0;
		ck_assert_msg(found,
		              "doc/evtop.1 KEYS: no entry for key %s (%s) in the %s view: "
		              "want \"%s\"",
		              b->key, ev_ui_action_name(b->action), ctx, want);
	}
	free(entries);
}
END_TEST

START_TEST(every_action_named)
{
	load();
	for (int a = 0; a < EV_UA_COUNT; a++) {
		char want[512];
		expected_body((enum ev_ui_action)a, want, sizeof(want));
		bool found = false;
		for (size_t i = 0; i < nentries && !found; i++)
			found = strcmp(entries[i].body, want) == 0;
		ck_assert_msg(found, "doc/evtop.1 KEYS does not name the action %s",
		              ev_ui_action_name((enum ev_ui_action)a));
	}
	free(entries);
}
END_TEST

/* No stale keys: every key of a view's entry is bound to that action in that view. */
START_TEST(no_key_the_console_lacks)
{
	load();
	for (int c = 0; c < EV_CTX_COUNT; c++) {
		bool has_bindings = false, has_section = false;
		for (const struct ev_binding *b = ev_bindings; b->key != NULL; b++)
			has_bindings = has_bindings || (int)b->ctx == c;
		for (size_t i = 0; i < ncontexts; i++)
			has_section =
			        has_section ||
			        strcmp(contexts[i], ev_ui_context_name((enum ev_ui_context)c)) == 0;
		ck_assert_msg(!has_bindings || has_section, "doc/evtop.1 KEYS lacks the %s view",
		              ev_ui_context_name((enum ev_ui_context)c));
	}
	for (size_t i = 0; i < nentries; i++) {
		const struct entry *e = &entries[i];
		int ctx = -1;
		for (int c = 0; c < EV_CTX_COUNT; c++)
			if (strcmp(e->ctx, ev_ui_context_name((enum ev_ui_context)c)) == 0)
				ctx = c;
		if (e->ctx[0] == '\0')
			continue;
		ck_assert_msg(ctx >= 0, "doc/evtop.1 KEYS: a view the console does not have: %s",
		              e->ctx);
		char copy[1024];
		char *save = NULL;
		snprintf(copy, sizeof(copy), "%s", e->keys);
		for (char *k = strtok_r(copy, ",", &save); k != NULL;
		     k = strtok_r(NULL, ",", &save)) {
			while (*k == ' ')
				k++;
			bool bound = false;
			for (const struct ev_binding *b = ev_bindings; b->key != NULL; b++) {
				char want[512];
				expected_body(b->action, want, sizeof(want));
				bound = bound || ((int)b->ctx == ctx && strcmp(b->key, k) == 0 &&
				                  strcmp(want, e->body) == 0);
			}
			ck_assert_msg(bound,
			              "doc/evtop.1 KEYS lists %s (%s) in the %s view, which "
			              "src/ui/keys.c does not bind",
			              k, e->body, e->ctx);
		}
	}
	free(entries);
}
END_TEST

/* Every ':' command of the commands' table has an entry (a tag line ".BI :name ..." or
 * ".BR ... :name ...") under the KEYS section's "Command line (:)". */
START_TEST(every_command_in_the_page)
{
	const char *src = getenv("EVTOP_SRCDIR");
	char path[4096], line[1024];
	snprintf(path, sizeof(path), "%s/doc/evtop.1", src ? src : ".");
	FILE *f = fopen(path, "r");
	ck_assert_msg(f != NULL, "cannot open %s", path);
	char tags[8192] = "";
	size_t n = 0;
	bool in_commands = false, after_tp = false;
	while (fgets(line, sizeof(line), f) != NULL) {
		line[strcspn(line, "\n")] = '\0';
		if (strncmp(line, ".SS", 3) == 0 || strncmp(line, ".SH", 3) == 0) {
			in_commands = strcmp(line, ".SS \"Command line (:)\"") == 0;
			continue;
		}
		/* roff writes a hyphen in a name as "\-". */
		for (char *h = strstr(line, "\\-"); h != NULL; h = strstr(h, "\\-"))
			memmove(h, h + 1, strlen(h));
		if (in_commands && after_tp && n + strlen(line) + 2 < sizeof(tags))
			n += (size_t)snprintf(tags + n, sizeof(tags) - n, "%s\n", line);
		after_tp = in_commands && strcmp(line, ".TP") == 0;
	}
	fclose(f);
	ck_assert_msg(n > 0, "doc/evtop.1 has no \"Command line (:)\" entries");
	for (int c = 0; c < EV_UC_COUNT; c++) {
		char want[64];
		snprintf(want, sizeof(want), ":%s", ev_ui_command_name((enum ev_ui_command)c));
		bool found = false;
		for (const char *p = strstr(tags, want); p != NULL && !found;
		     p = strstr(p + 1, want)) {
			char next = p[strlen(want)];
			found = next == ' ' || next == '"' || next == '\n';
		}
		ck_assert_msg(found, "doc/evtop.1 \"Command line (:)\" has no entry for %s", want);
	}
}
END_TEST

int main(void)
{
	Suite *s = suite_create("manpage");
	TCase *tc = tcase_create("keys");
	tcase_add_test(tc, every_binding_in_the_page);
	tcase_add_test(tc, every_action_named);
	tcase_add_test(tc, no_key_the_console_lacks);
	tcase_add_test(tc, every_command_in_the_page);
	suite_add_tcase(s, tc);
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? 0 : 1;
}
