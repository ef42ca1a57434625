/* evtop — fuzz target for evtop's own config file parser (core/config). Invariants:
 *   - a parse either succeeds or fails with EV_ERR_CONFIG and "FILE:LINE: ..." where LINE is
 *     a line of the text, in a message safe for a terminal;
 *   - on success every setting is within its documented range, every table name a valid
 *     identifier, every time zone valid, every source named;
 *   - a parsed configuration round-trips: written back as a config file (every value, strings
 *     quoted with \" and \\ escaped) and parsed into a fresh configuration, it is the same;
 *   - parsing is deterministic (a second parse of the same text gives the same result). */
#include <config.h>

#include "core/config.h"
#include "core/util.h"
#include "fuzz.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	return 0;
}

enum kind { MS, SEC, PERMILLE, INT, PORT, BOOL, STR };

#define G(key, kind, field)                                                                        \
	{                                                                                          \
		key, 0, kind, offsetof(struct ev_config, field)                                    \
	}
#define S(key, kind, field)                                                                        \
	{                                                                                          \
		key, 1, kind, offsetof(struct ev_source, field)                                    \
	}
static const struct {
	const char *key;
	int source;
	enum kind kind;
	size_t offset;
} keys[] = {
        G("refresh", MS, refresh_ms),
        G("budget", PERMILLE, budget_permille),
        G("stuck_threshold", SEC, stuck_threshold_s),
        G("window", SEC, window_s),
        G("statement_timeout", MS, statement_timeout_ms),
        G("connect_timeout", SEC, connect_timeout_s),
        G("read_timeout", SEC, read_timeout_s),
        G("write_timeout", SEC, write_timeout_s),
        G("high_retry", INT, high_retry_min),
        G("page_size", INT, page_size),
        G("read_only", BOOL, read_only),
        G("recover_message", BOOL, recover_message),
        G("operator", STR, operator_id),
        G("theme", STR, theme),
        S("defaults_file", STR, defaults_file),
        S("defaults_group", STR, defaults_group),
        S("host", STR, host),
        S("port", PORT, port),
        S("socket", STR, socket),
        S("user", STR, user),
        S("database", STR, database),
        S("outbox_table", STR, outbox_table),
        S("message_table", STR, message_table),
        S("time_zone", STR, time_zone),
        S("ssl", BOOL, ssl),
        S("ssl_verify", BOOL, ssl_verify),
        S("ssl_ca", STR, ssl_ca),
        S("ssl_capath", STR, ssl_capath),
        S("ssl_cert", STR, ssl_cert),
        S("ssl_key", STR, ssl_key),
        S("ssl_cipher", STR, ssl_cipher),
};
#define NKEYS (sizeof(keys) / sizeof(keys[0]))

static void *field(struct ev_config *cfg, int src, size_t i)
{
	char *base = keys[i].source ? (char *)&cfg->sources[src] : (char *)cfg;
	return base + keys[i].offset;
}

static void add_quoted(struct ev_buf *b, const char *s)
{
	ev_buf_addc(b, '"');
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			ev_buf_addc(b, '\\');
		ev_buf_addc(b, *s);
	}
	ev_buf_addc(b, '"');
}

static void write_keys(struct ev_buf *b, struct ev_config *cfg, int src)
{
	for (size_t i = 0; i < NKEYS; i++) {
		if (keys[i].source != (src >= 0))
			continue;
		void *f = field(cfg, src, i);
		switch (keys[i].kind) {
		case MS:
			ev_buf_printf(b, "%s = %dms\n", keys[i].key, *(int *)f);
			break;
		case SEC:
			ev_buf_printf(b, "%s = %ds\n", keys[i].key, *(int *)f);
			break;
		case PERMILLE:
			ev_buf_printf(b, "%s = %d.%d%%\n", keys[i].key, *(int *)f / 10,
			              *(int *)f % 10);
			break;
		case INT:
			ev_buf_printf(b, "%s = %d\n", keys[i].key, *(int *)f);
			break;
		case PORT:
			if (*(unsigned *)f != 0)
				ev_buf_printf(b, "%s = %u\n", keys[i].key, *(unsigned *)f);
			break;
		case BOOL:
			ev_buf_printf(b, "%s = %s\n", keys[i].key, *(bool *)f ? "true" : "false");
			break;
		case STR:
			if (*(char **)f != NULL) {
				ev_buf_printf(b, "%s = ", keys[i].key);
				add_quoted(b, *(char **)f);
				ev_buf_addc(b, '\n');
			}
			break;
		}
	}
}

static char *write_config(struct ev_config *cfg)
{
	struct ev_buf b;
	ev_buf_init(&b);
	ev_buf_adds(&b, "# written back by fuzz_config\n[evtop]\n");
	write_keys(&b, cfg, -1);
	if (cfg->protected_types != NULL && cfg->protected_types[0] != NULL) {
		ev_buf_adds(&b, "protected_types = ");
		for (char **t = cfg->protected_types; *t; t++)
			ev_buf_printf(&b, "%s%s", t == cfg->protected_types ? "" : ", ", *t);
		ev_buf_addc(&b, '\n');
	}
	for (int s = 0; s < cfg->nsources; s++) {
		ev_buf_printf(&b, "\n[source %s]\n", cfg->sources[s].name);
		write_keys(&b, cfg, s);
	}
	return ev_buf_steal(&b);
}

static bool str_eq(const char *a, const char *b)
{
	return (a == NULL) == (b == NULL) && (a == NULL || strcmp(a, b) == 0);
}

static void check_same(struct ev_config *a, struct ev_config *b, const char *written)
{
	FUZZ_CHECK(a->nsources == b->nsources, "%d sources became %d:\n%s", a->nsources,
	           b->nsources, written);
	for (int s = -1; s < a->nsources; s++) {
		if (s >= 0)
			FUZZ_CHECK(strcmp(a->sources[s].name, b->sources[s].name) == 0, "source %d",
			           s);
		for (size_t i = 0; i < NKEYS; i++) {
			if (keys[i].source != (s >= 0))
				continue;
			void *fa = field(a, s, i), *fb = field(b, s, i);
			bool same;
			switch (keys[i].kind) {
			case BOOL:
				same = *(bool *)fa == *(bool *)fb;
				break;
			case PORT:
				same = *(unsigned *)fa == *(unsigned *)fb;
				break;
			case STR:
				same = str_eq(*(char **)fa, *(char **)fb);
				break;
			default:
				same = *(int *)fa == *(int *)fb;
				break;
			}
			FUZZ_CHECK(same, "%s differs after writing back:\n%s", keys[i].key,
			           written);
		}
	}
	char **ta = a->protected_types, **tb = b->protected_types;
	for (; ta && tb && *ta && *tb; ta++, tb++)
		FUZZ_CHECK(strcmp(*ta, *tb) == 0, "protected_types differ");
	FUZZ_CHECK((ta == NULL || *ta == NULL) && (tb == NULL || *tb == NULL),
	           "protected_types differ in length");
}

static void check_ranges(struct ev_config *c)
{
	FUZZ_CHECK(c->refresh_ms >= 100 && c->refresh_ms <= 3600000, "refresh %d", c->refresh_ms);
	FUZZ_CHECK(c->budget_permille >= 1 && c->budget_permille <= 1000, "budget");
	FUZZ_CHECK(c->stuck_threshold_s >= 1 && c->stuck_threshold_s <= 7 * 86400, "stuck");
	FUZZ_CHECK(c->window_s >= 60 && c->window_s <= 30 * 86400, "window");
	FUZZ_CHECK(c->statement_timeout_ms >= 100 && c->statement_timeout_ms <= 600000,
	           "statement_timeout");
	FUZZ_CHECK(c->connect_timeout_s >= 1 && c->connect_timeout_s <= 60, "connect_timeout");
	FUZZ_CHECK(c->read_timeout_s >= 1 && c->read_timeout_s <= 600, "read_timeout");
	FUZZ_CHECK(c->write_timeout_s >= 1 && c->write_timeout_s <= 600, "write_timeout");
	FUZZ_CHECK(c->page_size >= 1 && c->page_size <= 1000, "page_size");
	FUZZ_CHECK(c->high_retry_min >= 1, "high_retry");
	FUZZ_CHECK(c->theme == NULL || strcmp(c->theme, "default") == 0 ||
	                   strcmp(c->theme, "mono") == 0,
	           "theme");
	FUZZ_CHECK(c->nsources >= 1, "no source");
	for (int s = 0; s < c->nsources; s++) {
		struct ev_source *src = &c->sources[s];
		FUZZ_CHECK(src->name && src->name[0], "a source without a name");
		FUZZ_CHECK(ev_ident_valid(src->outbox_table) && ev_ident_valid(src->message_table),
		           "table names of source %s", src->name);
		FUZZ_CHECK(src->time_zone == NULL || ev_time_zone_valid(src->time_zone),
		           "time zone");
		FUZZ_CHECK(src->port <= 65535, "port");
		if (src->ssl_ca || src->ssl_capath || src->ssl_cert || src->ssl_key ||
		    src->ssl_cipher || src->ssl_verify)
			FUZZ_CHECK(src->ssl, "an SSL setting without ssl");
		for (int t = 0; t < s; t++)
			FUZZ_CHECK(strcmp(c->sources[t].name, src->name) != 0, "duplicate source");
	}
	for (char **t = c->protected_types; t && *t; t++)
		for (const char *p = *t; *p; p++)
			FUZZ_CHECK((*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9'),
			           "token '%s'", *t);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = ev_xstrndup((const char *)data, size);
	struct ev_config a, again;
	struct ev_error err = {0}, err2 = {0};

	ev_config_init(&a);
	ev_config_init(&again);
	int rc = ev_config_parse(&a, text, "fuzz.conf", &err);
	FUZZ_CHECK(ev_config_parse(&again, text, "fuzz.conf", &err2) == rc &&
	                   strcmp(err.msg, err2.msg) == 0,
	           "two parses differ");
	ev_config_free(&again);
	if (rc < 0) {
		int line = 0;
		size_t lines = 1;
		for (const char *s = text; *s; s++)
			lines += *s == '\n';
		FUZZ_CHECK(err.code == EV_ERR_CONFIG, "code %d", err.code);
		FUZZ_CHECK(sscanf(err.msg, "fuzz.conf:%d: ", &line) == 1, "no line: %s", err.msg);
		FUZZ_CHECK(line >= 1 && (size_t)line <= lines, "line %d of %zu", line, lines);
		FUZZ_CHECK(fuzz_unsafe_at(err.msg, strlen(err.msg), 0) == (size_t)-1,
		           "unsafe message: %s", err.msg);
		ev_config_free(&a);
		free(text);
		return 0;
	}
	check_ranges(&a);
	char *written = write_config(&a);
	struct ev_config b;
	ev_config_init(&b);
	FUZZ_CHECK(ev_config_parse(&b, written, "written.conf", &err) == 0,
	           "the written-back config fails: %s\n%s", err.msg, written);
	check_same(&a, &b, written);
	ev_config_free(&b);
	ev_config_free(&a);
	free(written);
	free(text);
	return 0;
}
