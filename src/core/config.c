/* evtop — its own config file: an INI-style text parsed line by line against one table of
 * settings, so every key has one parser, one range and one message. doc/config.md
 * describes the format for people. */

/* Angle brackets on purpose: a quoted "config.h" would find this directory's config.h (the
 * header below) before the build directory's autoconf header. */
#include <config.h>

#include "core/config.h"

#include "core/files.h"
#include "core/i18n.h"
#include "core/model.h"
#include "core/query.h"
#include "core/text.h"

#include <assert.h>
#include <errno.h>
#include <limits.h>
#include <pwd.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_FILE_BYTES (1024 * 1024)
#define MAX_LINE_BYTES 4096
#define MAX_NAME_LEN   64

/* How a setting's value is parsed and stored. */
enum kind {
	K_MS,      /* duration, stored as int milliseconds */
	K_SEC,     /* duration, stored as int seconds (must be whole seconds) */
	K_PERCENT, /* percentage of one core, stored as int permille */
	K_INT,     /* int */
	K_PORT,    /* unsigned */
	K_BOOL,    /* bool */
	K_STRING,  /* char *, any non-empty text */
	K_IDENT,   /* char *, a table name (ev_ident_valid) */
	K_TZ,      /* char *, a time zone (ev_time_zone_valid) */
	K_GROUP,   /* char *, an option-file group name */
	K_THEME,   /* char *, one of the themes */
	K_DIR,     /* char *, an absolute directory path */
	K_TOKENS,  /* char **, protected-type tokens */
	K_TABLES,  /* unsigned, a set of tables: "outbox", "message", "outbox, message" */
};

enum scope { S_GLOBAL, S_SOURCE };

struct setting {
	const char *key;
	enum scope scope;
	enum kind kind;
	size_t offset; /* into struct ev_config or struct ev_source */
	long long min, max;
};

/* clang-format off */
#define G(key, kind, field, min, max) \
	{key, S_GLOBAL, kind, offsetof(struct ev_config, field), min, max}
#define S(key, kind, field, min, max) \
	{key, S_SOURCE, kind, offsetof(struct ev_source, field), min, max}
/* clang-format on */
#define MS_SEC  1000LL
#define MS_MIN  (60 * MS_SEC)
#define MS_HOUR (60 * MS_MIN)
#define MS_DAY  (24 * MS_HOUR)

/* Duration limits are in milliseconds for both K_MS and K_SEC. */
static const struct setting settings[] = {
        G("refresh", K_MS, refresh_ms, 100, MS_HOUR),
        G("budget", K_PERCENT, budget_permille, 1, 1000),
        G("stuck_threshold", K_SEC, stuck_threshold_s, MS_SEC, 7 * MS_DAY),
        G("lease", K_SEC, lease_s, MS_SEC, MS_DAY),
        G("window", K_SEC, window_s, MS_MIN, 30 * MS_DAY),
        G("statement_timeout", K_MS, statement_timeout_ms, 100, 10 * MS_MIN),
        G("connect_timeout", K_SEC, connect_timeout_s, MS_SEC, 60 * MS_SEC),
        G("read_timeout", K_SEC, read_timeout_s, MS_SEC, 10 * MS_MIN),
        G("write_timeout", K_SEC, write_timeout_s, MS_SEC, 10 * MS_MIN),
        G("high_retry", K_INT, high_retry_min, 1, 1000000),
        G("page_size", K_INT, page_size, 1, 1000),
        G("search_cap", K_INT, search_cap, EV_SEARCH_CAP_MIN, EV_SEARCH_CAP_MAX),
        G("lag_warning", K_SEC, lag_warning_s, MS_SEC, MS_DAY),
        G("mirror", K_BOOL, mirror, 0, 0),
        G("mirror_rows", K_INT, mirror_rows, 1000, 100000000),
        G("mirror_reverify", K_SEC, mirror_reverify_s, 10 * MS_SEC, MS_DAY),
        G("mirror_check", K_SEC, mirror_check_s, 10 * MS_SEC, MS_DAY),
        G("mirror_settle", K_SEC, mirror_settle_s, MS_SEC, 10 * MS_MIN),
        G("metrics_interval", K_SEC, metrics_interval_s, MS_SEC, MS_HOUR),
        G("metrics_label_cap", K_INT, metrics_label_cap, 1, 100000),
        G("metrics_topic", K_BOOL, metrics_topic, 0, 0),
        G("clipboard", K_BOOL, clipboard, 0, 0),
        G("clipboard_max", K_INT, clipboard_max, 16, 1048576),
        G("ambiguous_width", K_INT, ambiguous_width, 1, 2),
        G("retention_message", K_SEC, retention_s[0], MS_DAY, 3650 * MS_DAY),
        G("retention_outbox", K_SEC, retention_s[1], MS_DAY, 3650 * MS_DAY),
        G("read_only", K_BOOL, read_only, 0, 0),
        G("recover_message", K_BOOL, recover_message, 0, 0),
        G("operator", K_STRING, operator_id, 0, 0),
        G("theme", K_THEME, theme, 0, 0),
        G("export_dir", K_DIR, export_dir, 0, 0),
        G("protected_types", K_TOKENS, protected_types, 0, 0),
        S("defaults_file", K_STRING, defaults_file, 0, 0),
        S("defaults_group", K_GROUP, defaults_group, 0, 0),
        S("host", K_STRING, host, 0, 0),
        S("port", K_PORT, port, 1, 65535),
        S("socket", K_STRING, socket, 0, 0),
        S("user", K_STRING, user, 0, 0),
        S("database", K_STRING, database, 0, 0),
        S("outbox_table", K_IDENT, outbox_table, 0, 0),
        S("message_table", K_IDENT, message_table, 0, 0),
        S("time_zone", K_TZ, time_zone, 0, 0),
        S("ssl", K_BOOL, ssl, 0, 0),
        S("mask", K_BOOL, mask, 0, 0),
        S("ssl_verify", K_BOOL, ssl_verify, 0, 0),
        S("ssl_ca", K_STRING, ssl_ca, 0, 0),
        S("ssl_capath", K_STRING, ssl_capath, 0, 0),
        S("ssl_cert", K_STRING, ssl_cert, 0, 0),
        S("ssl_key", K_STRING, ssl_key, 0, 0),
        S("ssl_cipher", K_STRING, ssl_cipher, 0, 0),
        S("read_host", K_STRING, read_host, 0, 0),
        S("read_port", K_PORT, read_port, 1, 65535),
        S("read_socket", K_STRING, read_socket, 0, 0),
        S("read_defaults_group", K_GROUP, read_defaults_group, 0, 0),
        S("tables", K_TABLES, tables, 0, 0),
};

static const char *const themes[] = {"default", "mono"};
static const char *const default_protected[] = {"PAY", "REFUND", "STOCK", "INVENTORY"};

/* ---- small helpers ------------------------------------------------------------------- */

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static bool is_alnum(char c)
{
	return is_digit(c) || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z');
}

static bool is_space(char c)
{
	return c == ' ' || c == '\t';
}

static char to_lower(char c)
{
	return c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c;
}

static char to_upper(char c)
{
	return c >= 'a' && c <= 'z' ? (char)(c - 'a' + 'A') : c;
}

/* ASCII-only, so the result does not depend on the locale. */
static bool ascii_caseeq(const char *a, const char *b)
{
	while (*a != '\0' && to_lower(*a) == to_lower(*b)) {
		a++;
		b++;
	}
	return to_lower(*a) == to_lower(*b);
}

/* Whether s starts with `prefix`, ignoring ASCII case. */
static bool ascii_prefix_caseeq(const char *s, const char *prefix)
{
	for (; *prefix != '\0'; s++, prefix++)
		if (to_lower(*s) != to_lower(*prefix))
			return false;
	return true;
}

/* Trim spaces and tabs on both sides, in place. */
static char *trim(char *s)
{
	size_t n;

	while (is_space(*s))
		s++;
	n = strlen(s);
	while (n > 0 && is_space(s[n - 1]))
		s[--n] = '\0';
	return s;
}

static void set_str(char **field, const char *value)
{
	free(*field);
	*field = value != NULL ? ev_xstrdup(value) : NULL;
}

/* A name made of [A-Za-z0-9_.-], 1..64 characters: source names and option-file groups. */
static bool name_valid(const char *s)
{
	size_t n = 0;

	for (; s[n] != '\0'; n++)
		if (!is_alnum(s[n]) && s[n] != '_' && s[n] != '.' && s[n] != '-')
			return false;
	return n >= 1 && n <= MAX_NAME_LEN;
}

/* Length of the valid UTF-8 sequence at s[0..len), or 0 if it is not one (overlong forms,
 * surrogates and code points above U+10FFFF are invalid). */
static size_t utf8_seq_len(const unsigned char *s, size_t len)
{
	unsigned char c = s[0];
	size_t n;
	unsigned char lo = 0x80, hi = 0xBF;

	if (c < 0x80)
		return 1;
	if (c >= 0xC2 && c <= 0xDF)
		n = 2;
	else if (c >= 0xE0 && c <= 0xEF)
		n = 3;
	else if (c >= 0xF0 && c <= 0xF4)
		n = 4;
	else
		return 0;
	if (c == 0xE0)
		lo = 0xA0;
	else if (c == 0xED)
		hi = 0x9F;
	else if (c == 0xF0)
		lo = 0x90;
	else if (c == 0xF4)
		hi = 0x8F;
	if (len < n || s[1] < lo || s[1] > hi)
		return 0;
	for (size_t i = 2; i < n; i++)
		if (s[i] < 0x80 || s[i] > 0xBF)
			return 0;
	return n;
}

/* "2s" rather than "2000ms": the largest unit that divides ms evenly. */
static void format_duration(long long ms, char *out, size_t size)
{
	ev_format_duration_ms(ms, out, size);
}

int ev_config_duration_range(const char *key, long long *min_ms, long long *max_ms)
{
	for (size_t i = 0; i < sizeof(settings) / sizeof(settings[0]); i++) {
		if (strcmp(settings[i].key, key) != 0 ||
		    (settings[i].kind != K_MS && settings[i].kind != K_SEC))
			continue;
		*min_ms = settings[i].min;
		*max_ms = settings[i].max;
		return 0;
	}
	return -1;
}

void ev_format_duration_ms(long long ms, char *out, size_t size)
{
	if (ms == 0) {
		snprintf(out, size, "0");
		return;
	}
	static const struct {
		long long ms;
		const char *unit;
	} units[] = {{MS_DAY, "d"}, {MS_HOUR, "h"}, {MS_MIN, "m"}, {MS_SEC, "s"}};

	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (ms != 0 && ms % units[i].ms == 0) {
			snprintf(out, size, "%lld%s", ms / units[i].ms, units[i].unit);
			return;
		}
	}
	snprintf(out, size, "%lldms", ms);
}

/* A value as shown in a message: sanitised (a tab, a C1 control or a bidi override from the
 * file must not reach the terminal raw), and long ones are cut (on a character boundary) so
 * that the message keeps its line number and its point. */
static void show_value(const char *v, char *out, size_t size)
{
	const size_t keep = 60;
	char *safe = ev_text_sanitize(v, strlen(v));
	size_t n = strlen(safe);

	assert(size > keep + 4);
	if (n <= keep) {
		snprintf(out, size, "%s", safe);
		free(safe);
		return;
	}
	n = keep;
	while (n > 0 && ((unsigned char)safe[n] & 0xC0) == 0x80)
		n--;
	snprintf(out, size, "%.*s...", (int)n, safe);
	free(safe);
}

/* ---- value parsers ---------------------------------------------------------------------- */

/* Digits into a non-negative long long; returns the end, or NULL on no digits or overflow. */
static const char *parse_digits(const char *s, long long *out)
{
	long long n = 0;

	if (!is_digit(*s))
		return NULL;
	for (; is_digit(*s); s++) {
		int d = *s - '0';

		if (n > (LLONG_MAX - d) / 10)
			return NULL;
		n = n * 10 + d;
	}
	*out = n;
	return s;
}

int ev_parse_duration_ms(const char *s, long long *ms)
{
	static const struct {
		const char *unit;
		long long ms;
	} units[] = {{"", MS_SEC},  {"ms", 1},      {"s", MS_SEC},
	             {"m", MS_MIN}, {"h", MS_HOUR}, {"d", MS_DAY}};
	long long n;
	const char *end;

	if (s == NULL || (end = parse_digits(s, &n)) == NULL)
		return -1;
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (strcmp(end, units[i].unit) == 0) {
			if (n > LLONG_MAX / units[i].ms)
				return -1;
			*ms = n * units[i].ms;
			return 0;
		}
	}
	return -1;
}

int ev_parse_percent_permille(const char *s, int *permille)
{
	long long whole, tenths = 0;
	const char *p;

	/* Refusing whole > 100 early keeps whole * 10 from overflowing. */
	if (s == NULL || (p = parse_digits(s, &whole)) == NULL || whole > 100)
		return -1;
	if (*p == '.') {
		if (!is_digit(p[1]))
			return -1;
		tenths = p[1] - '0';
		p += 2;
	}
	if (strcmp(p, "%") != 0)
		return -1;
	whole = whole * 10 + tenths;
	if (whole < 1 || whole > 1000)
		return -1;
	*permille = (int)whole;
	return 0;
}

int ev_parse_bool(const char *s, bool *out)
{
	static const char *const yes[] = {"true", "yes", "on", "1"};
	static const char *const no[] = {"false", "no", "off", "0"};

	if (s == NULL)
		return -1;
	for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++) {
		if (ascii_caseeq(s, yes[i])) {
			*out = true;
			return 0;
		}
		if (ascii_caseeq(s, no[i])) {
			*out = false;
			return 0;
		}
	}
	return -1;
}

int ev_parse_int(const char *s, long long min, long long max, long long *out)
{
	long long n;
	const char *end;

	assert(min <= max);
	if (s == NULL || (end = parse_digits(s, &n)) == NULL || *end != '\0')
		return -1;
	if (n < min || n > max)
		return -1;
	*out = n;
	return 0;
}

bool ev_ident_valid(const char *s)
{
	size_t n;
	bool all_digits = true;

	if (s == NULL)
		return false;
	for (n = 0; s[n] != '\0'; n++) {
		if (!is_alnum(s[n]) && s[n] != '_' && s[n] != '$')
			return false;
		if (!is_digit(s[n]))
			all_digits = false;
	}
	return n >= 1 && n <= MAX_NAME_LEN && !all_digits;
}

bool ev_time_zone_valid(const char *s)
{
	size_t n;

	if (s == NULL)
		return false;
	if (s[0] == '+' || s[0] == '-') {
		int hh, mm;

		if (strlen(s) != 6 || !is_digit(s[1]) || !is_digit(s[2]) || s[3] != ':' ||
		    !is_digit(s[4]) || !is_digit(s[5]))
			return false;
		hh = (s[1] - '0') * 10 + (s[2] - '0');
		mm = (s[4] - '0') * 10 + (s[5] - '0');
		return mm < 60 && hh * 60 + mm <= 14 * 60;
	}
	/* A named zone starts with a letter ("SYSTEM", "Asia/Shanghai", "Etc/GMT+8", "UTC"). */
	if (!is_alnum(s[0]) || is_digit(s[0]))
		return false;
	for (n = 0; s[n] != '\0'; n++)
		if (!is_alnum(s[n]) && s[n] != '_' && s[n] != '+' && s[n] != '/' && s[n] != '-')
			return false;
	return n <= MAX_NAME_LEN;
}

int ev_parse_token_list(const char *s, char ***out)
{
	char **v;
	size_t n = 0;
	const char *p = s;

	if (s == NULL)
		return -1;
	v = ev_xcalloc(strlen(s) / 2 + 2, sizeof(*v)); /* at most one token per two bytes */
	for (;;) {
		const char *start, *end;

		while (is_space(*p))
			p++;
		start = p;
		while (is_alnum(*p))
			p++;
		end = p;
		while (is_space(*p))
			p++;
		if (end == start || (*p != ',' && *p != '\0')) {
			ev_strv_free(&v);
			return -1;
		}
		char *tok = ev_xstrndup(start, (size_t)(end - start));
		for (char *c = tok; *c != '\0'; c++)
			*c = to_upper(*c);
		bool dup = false;
		for (size_t i = 0; i < n && !dup; i++)
			dup = strcmp(v[i], tok) == 0;
		if (dup)
			free(tok);
		else
			v[n++] = tok;
		if (*p == '\0')
			break;
		p++; /* the comma */
	}
	*out = v;
	return 0;
}

void ev_strv_free(char ***v)
{
	if (v == NULL || *v == NULL)
		return;
	for (char **p = *v; *p != NULL; p++)
		free(*p);
	free(*v);
	*v = NULL;
}

/* ---- the configuration ------------------------------------------------------------------- */

static void source_init(struct ev_source *src, const char *name)
{
	memset(src, 0, sizeof(*src));
	src->name = ev_xstrdup(name);
	src->defaults_group = ev_xstrdup("evtop");
	src->outbox_table = ev_xstrdup("biz_outbox_event");
	src->message_table = ev_xstrdup("biz_message_event");
	src->tables = (1u << EV_TABLE_OUTBOX) | (1u << EV_TABLE_MESSAGE);
	src->mask = true;
}

static void source_free(struct ev_source *src)
{
	char **strings[] = {&src->name,      &src->defaults_file, &src->defaults_group,
	                    &src->host,      &src->socket,        &src->user,
	                    &src->database,  &src->outbox_table,  &src->message_table,
	                    &src->time_zone, &src->ssl_ca,        &src->ssl_capath,
	                    &src->ssl_cert,  &src->ssl_key,       &src->ssl_cipher,
	                    &src->read_host, &src->read_socket,   &src->read_defaults_group};

	for (size_t i = 0; i < sizeof(strings) / sizeof(strings[0]); i++) {
		free(*strings[i]);
		*strings[i] = NULL;
	}
}

static struct ev_source *add_source(struct ev_config *cfg, const char *name)
{
	cfg->sources =
	        ev_xrealloc(cfg->sources, (size_t)(cfg->nsources + 1) * sizeof(*cfg->sources));
	source_init(&cfg->sources[cfg->nsources], name);
	return &cfg->sources[cfg->nsources++];
}

static void free_sources(struct ev_config *cfg)
{
	for (int i = 0; i < cfg->nsources; i++)
		source_free(&cfg->sources[i]);
	free(cfg->sources);
	cfg->sources = NULL;
	cfg->nsources = 0;
}

void ev_config_init(struct ev_config *cfg)
{
	size_t n = sizeof(default_protected) / sizeof(default_protected[0]);

	assert(cfg != NULL);
	memset(cfg, 0, sizeof(*cfg));
	cfg->refresh_ms = 2000;
	cfg->budget_permille = 10;
	cfg->stuck_threshold_s = 600;
	cfg->lease_s = 120;
	cfg->window_s = 3600;
	cfg->statement_timeout_ms = 5000;
	cfg->connect_timeout_s = 3;
	cfg->read_timeout_s = 15;
	cfg->write_timeout_s = 5;
	cfg->high_retry_min = 3;
	cfg->search_cap = (int)EV_SEARCH_CAP_DEFAULT;
	cfg->page_size = 100;
	cfg->lag_warning_s = 10;
	cfg->mirror = true;
	cfg->mirror_rows = 1000000;
	cfg->mirror_reverify_s = 300;
	cfg->mirror_check_s = 600;
	cfg->mirror_settle_s = 30;
	cfg->metrics_interval_s = 15;
	cfg->metrics_label_cap = 200;
	cfg->metrics_topic = true;
	cfg->clipboard = true;
	cfg->clipboard_max = 65536;
	cfg->ambiguous_width = 1;
	cfg->protected_types = ev_xcalloc(n + 1, sizeof(char *));
	for (size_t i = 0; i < n; i++)
		cfg->protected_types[i] = ev_xstrdup(default_protected[i]);
	ev_mask_defaults(&cfg->mask);
	add_source(cfg, "default");
}

void ev_config_free(struct ev_config *cfg)
{
	if (cfg == NULL)
		return;
	free(cfg->operator_id);
	cfg->operator_id = NULL;
	free(cfg->theme);
	cfg->theme = NULL;
	free(cfg->export_dir);
	cfg->export_dir = NULL;
	ev_strv_free(&cfg->protected_types);
	ev_mask_free(&cfg->mask);
	for (int i = 0; i < cfg->nkeys; i++) {
		free(cfg->keys[i].view);
		free(cfg->keys[i].key);
		free(cfg->keys[i].action);
		free(cfg->keys[i].where);
	}
	free(cfg->keys);
	cfg->keys = NULL;
	cfg->nkeys = 0;
	free_sources(cfg);
}

bool ev_source_has_replica(const struct ev_source *src)
{
	return src->read_host != NULL || src->read_port != 0 || src->read_socket != NULL ||
	       src->read_defaults_group != NULL;
}

static char *dup_or_null(const char *s)
{
	return s != NULL ? ev_xstrdup(s) : NULL;
}

struct ev_source *ev_source_dup(const struct ev_source *src)
{
	struct ev_source *d = ev_xcalloc(1, sizeof(*d));
	*d = *src;
	char **strings[] = {&d->name,      &d->defaults_file, &d->defaults_group,
	                    &d->host,      &d->socket,        &d->user,
	                    &d->database,  &d->outbox_table,  &d->message_table,
	                    &d->time_zone, &d->ssl_ca,        &d->ssl_capath,
	                    &d->ssl_cert,  &d->ssl_key,       &d->ssl_cipher,
	                    &d->read_host, &d->read_socket,   &d->read_defaults_group};
	for (size_t i = 0; i < sizeof(strings) / sizeof(strings[0]); i++)
		*strings[i] = dup_or_null(*strings[i]);
	return d;
}

struct ev_source *ev_source_read_endpoint(const struct ev_source *src)
{
	struct ev_source *d = ev_source_dup(src);
	if (src->read_host != NULL || src->read_socket != NULL) {
		/* Another server: the primary's address does not carry over. */
		set_str(&d->host, src->read_host);
		set_str(&d->socket, src->read_socket);
		d->port = src->read_port;
	} else if (src->read_port != 0) {
		d->port = src->read_port;
	}
	if (src->read_defaults_group != NULL)
		set_str(&d->defaults_group, src->read_defaults_group);
	return d;
}

void ev_source_free(struct ev_source **src)
{
	if (*src == NULL)
		return;
	source_free(*src);
	free(*src);
	*src = NULL;
}

struct ev_source *ev_config_source(struct ev_config *cfg, const char *name)
{
	for (int i = 0; i < cfg->nsources; i++)
		if (strcmp(cfg->sources[i].name, name) == 0)
			return &cfg->sources[i];
	return NULL;
}

int ev_source_table_kind(const struct ev_source *s, const char *name)
{
	const char *names[EV_TABLE_COUNT] = {NULL};
	names[EV_TABLE_OUTBOX] = s->outbox_table;
	names[EV_TABLE_MESSAGE] = s->message_table;
	for (int t = 0; name != NULL && t < EV_TABLE_COUNT; t++) {
		const char *n =
		        names[t] ? names[t] : ev_model_table((enum ev_table_kind)t)->default_name;
		if (strcmp(n, name) == 0)
			return t;
	}
	return -1;
}

/* ---- the parser ---------------------------------------------------------------------------- */

#define SECTION_KEYS (-2)
#define SECTION_MASK (-3)

struct parser {
	struct ev_config *cfg;
	const char *file;
	int line;
	struct ev_error *err;
	int source;        /* index of the current [source] in cfg->sources; -1 in [evtop],
	                    * SECTION_KEYS in [keys] */
	bool own_sources;  /* this text has replaced the sources it started with */
	int *source_lines; /* the header line of each source, for "first defined on" */
};

static int fail(struct parser *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int fail(struct parser *p, const char *fmt, ...)
{
	va_list ap;
	char *msg;

	va_start(ap, fmt);
	msg = ev_xvasprintf(fmt, ap);
	va_end(ap);
	ev_error_set(p->err, EV_ERR_CONFIG, "%s:%d: %s", p->file, p->line, msg);
	free(msg);
	return -1;
}

static const char *section_name(struct parser *p, char *buf, size_t size)
{
	if (p->source == SECTION_KEYS)
		return "[keys]";
	if (p->source == SECTION_MASK)
		return "[mask]";
	if (p->source < 0)
		return "[evtop]";
	snprintf(buf, size, "[source %s]", p->cfg->sources[p->source].name);
	return buf;
}

static const struct setting *find_setting(const char *key, int scope)
{
	for (size_t i = 0; i < sizeof(settings) / sizeof(settings[0]); i++)
		if (strcmp(settings[i].key, key) == 0 &&
		    (scope < 0 || (int)settings[i].scope == scope))
			return &settings[i];
	return NULL;
}

static int parse_section(struct parser *p, char *s)
{
	char *close = strchr(s, ']');
	char *name, *rest;

	if (close == NULL)
		return fail(p, _("a section header needs a closing ']'"));
	rest = close + 1;
	while (is_space(*rest))
		rest++;
	if (*rest != '\0' && *rest != '#' && *rest != ';')
		return fail(p, _("unexpected text after ']'"));
	*close = '\0';
	name = trim(s + 1);
	if (strcmp(name, "evtop") == 0) {
		p->source = -1;
		return 0;
	}
	if (strcmp(name, "keys") == 0) {
		p->source = SECTION_KEYS;
		return 0;
	}
	if (strcmp(name, "mask") == 0) {
		p->source = SECTION_MASK;
		return 0;
	}
	if (strncmp(name, "source", 6) != 0 || (name[6] != '\0' && !is_space(name[6]))) {
		char shown[80];

		show_value(name, shown, sizeof(shown));
		return fail(p,
		            _("unknown section [%s]; expected [evtop], [keys], [mask] or [source "
		              "NAME]"),
		            shown);
	}
	name = trim(name + 6);
	if (*name == '\0')
		return fail(p, _("a source section needs a name: [source NAME]"));
	if (!name_valid(name)) {
		char shown[80];

		show_value(name, shown, sizeof(shown));
		return fail(
		        p, _("source name '%s': expected 1 to 64 letters, digits, '_', '.' or '-'"),
		        shown);
	}
	if (!p->own_sources) {
		/* The first [source] of a text replaces the sources cfg held: after
		 * ev_config_init, the implicit "default" one. */
		free_sources(p->cfg);
		p->own_sources = true;
	}
	for (int i = 0; i < p->cfg->nsources; i++)
		if (strcmp(p->cfg->sources[i].name, name) == 0)
			return fail(p, _("duplicate [source %s] (first defined on line %d)"), name,
			            p->source_lines[i]);
	add_source(p->cfg, name);
	p->source = p->cfg->nsources - 1;
	p->source_lines = ev_xrealloc(p->source_lines, (size_t)p->cfg->nsources * sizeof(int));
	p->source_lines[p->source] = p->line;
	return 0;
}

/* The value after '=': a double-quoted string (\" and \\ escaped, '#' and ';' literal) or
 * bare text up to a '#' or ';' that starts it or follows a space, trimmed. In place; NULL
 * after an error. */
static char *parse_value(struct parser *p, const char *key, char *s)
{
	while (is_space(*s))
		s++;
	if (*s == '"') {
		char *r = s + 1, *w = s;

		while (*r != '"') {
			if (*r == '\0') {
				fail(p, _("%s: the quoted value has no closing '\"'"), key);
				return NULL;
			}
			if (*r == '\\' && (r[1] == '"' || r[1] == '\\'))
				r++;
			*w++ = *r++;
		}
		*w = '\0';
		r++;
		while (is_space(*r))
			r++;
		if (*r != '\0' && *r != '#' && *r != ';') {
			fail(p, _("%s: unexpected text after the closing '\"'"), key);
			return NULL;
		}
		return s;
	}
	for (char *c = s; *c != '\0'; c++) {
		if ((*c == '#' || *c == ';') && (c == s || is_space(c[-1]))) {
			*c = '\0';
			break;
		}
	}
	return trim(s);
}

static const char *expected(const struct setting *set)
{
	switch (set->kind) {
	case K_MS:
	case K_SEC:
		return _("a duration like 2s or 500ms");
	case K_PERCENT:
		/* xgettext:no-c-format */
		return _("a percentage like 1% or 0.5%");
	case K_INT:
	case K_PORT:
		return _("a whole number");
	case K_BOOL:
		return _("true or false");
	case K_STRING:
		return _("a value");
	case K_IDENT:
		return _("a table name of up to 64 letters, digits, '_' or '$'");
	case K_TZ:
		return _("a time zone like +08:00, SYSTEM or Asia/Shanghai");
	case K_GROUP:
		return _("an option-file group name of letters, digits, '_', '.' or '-'");
	case K_THEME:
		return _("default or mono");
	case K_DIR:
		return _("an absolute directory path (starting with /)");
	case K_TOKENS:
		return _("a comma-separated list of words of letters and digits, like PAY, REFUND");
	case K_TABLES:
		return _("outbox, message, or both (comma-separated)");
	}
	return _("a value");
}

/* A duration in range into field: milliseconds (K_MS) or whole seconds (K_SEC). */
static int set_duration(struct parser *p, const struct setting *set, void *field, long long n,
                        const char *shown)
{
	char lo[32], hi[32];

	if (n < set->min || n > set->max) {
		format_duration(set->min, lo, sizeof(lo));
		format_duration(set->max, hi, sizeof(hi));
		return fail(p, _("%s: %s is out of range (%s .. %s)"), set->key, shown, lo, hi);
	}
	if (set->kind == K_SEC && n % MS_SEC != 0)
		return fail(p, _("%s: expected whole seconds, got '%s'"), set->key, shown);
	*(int *)field = (int)(set->kind == K_SEC ? n / MS_SEC : n);
	return 0;
}

/* An integer in range into field: an int, or an unsigned port (K_PORT). */
static int set_int(struct parser *p, const struct setting *set, void *field, long long n,
                   const char *shown)
{
	if (n < set->min || n > set->max)
		return fail(p, _("%s: %s is out of range (%lld .. %lld)"), set->key, shown,
		            set->min, set->max);
	if (set->kind == K_PORT)
		*(unsigned *)field = (unsigned)n;
	else
		*(int *)field = (int)n;
	return 0;
}

/* "outbox", "message" or both, comma-separated, any case: their bits (1 << ev_table_kind) in
 * *out. False for anything else or none. */
static bool parse_tables(const char *value, unsigned *out)
{
	unsigned set_ = 0;
	char buf[128];
	snprintf(buf, sizeof(buf), "%s", value);
	bool bad = strlen(value) >= sizeof(buf);
	for (char *save = NULL, *t = strtok_r(buf, ",", &save); t != NULL && !bad;
	     t = strtok_r(NULL, ",", &save)) {
		t = trim(t);
		if (ascii_caseeq(t, "outbox"))
			set_ |= 1u << EV_TABLE_OUTBOX;
		else if (ascii_caseeq(t, "message"))
			set_ |= 1u << EV_TABLE_MESSAGE;
		else
			bad = true;
	}
	if (bad || set_ == 0)
		return false;
	*out = set_;
	return true;
}

/* Set one setting from its text, or fail saying what it expects. */
static int apply(struct parser *p, const struct setting *set, const char *value)
{
	void *base = set->scope == S_GLOBAL ? (void *)p->cfg : (void *)&p->cfg->sources[p->source];
	void *field = (char *)base + set->offset;
	char shown[80];
	long long n;

	show_value(value, shown, sizeof(shown));
	if (*value == '\0')
		return fail(p, _("%s: no value given; expected %s"), set->key, expected(set));
	switch (set->kind) {
	case K_MS:
	case K_SEC:
		if (ev_parse_duration_ms(value, &n) < 0)
			break;
		return set_duration(p, set, field, n, shown);
	case K_PERCENT: {
		int permille;

		if (ev_parse_percent_permille(value, &permille) < 0)
			return fail(p,
			            _("%s: expected a percentage of one core from 0.1%% to 100%% "
			              "(at most one decimal), got '%s'"),
			            set->key, shown);
		*(int *)field = permille;
		return 0;
	}
	case K_INT:
	case K_PORT:
		if (ev_parse_int(value, 0, LLONG_MAX, &n) < 0)
			break;
		return set_int(p, set, field, n, shown);
	case K_BOOL:
		if (ev_parse_bool(value, field) < 0)
			return fail(
			        p,
			        _("%s: expected true or false (or yes/no, on/off, 1/0), got '%s'"),
			        set->key, shown);
		return 0;
	case K_STRING:
		set_str(field, value);
		return 0;
	case K_DIR:
		if (value[0] != '/')
			break;
		set_str(field, value);
		return 0;
	case K_IDENT:
		if (!ev_ident_valid(value))
			break;
		set_str(field, value);
		return 0;
	case K_TZ:
		if (!ev_time_zone_valid(value))
			break;
		set_str(field, value);
		return 0;
	case K_GROUP:
		if (!name_valid(value))
			break;
		set_str(field, value);
		return 0;
	case K_THEME:
		for (size_t i = 0; i < sizeof(themes) / sizeof(themes[0]); i++) {
			if (strcmp(value, themes[i]) == 0) {
				set_str(field, value);
				return 0;
			}
		}
		break;
	case K_TOKENS: {
		char **v;

		if (ev_parse_token_list(value, &v) < 0)
			break;
		ev_strv_free(field);
		*(char ***)field = v;
		return 0;
	}
	case K_TABLES:
		if (!parse_tables(value, field))
			break;
		return 0;
	}
	return fail(p, _("%s: expected %s, got '%s'"), set->key, expected(set), shown);
}

/* Say where the key belongs when it is valid in the other kind of section. */
static int unknown_key(struct parser *p, const char *key)
{
	const struct setting *other = find_setting(key, -1);
	char shown[80], buf[96];
	const char *where = section_name(p, buf, sizeof(buf));

	show_value(key, shown, sizeof(shown));
	if (strcmp(key, "bind") == 0)
		return fail(p, _("unknown key 'bind' in %s; key bindings belong in [keys]"), where);
	if (other != NULL && other->scope == S_SOURCE)
		return fail(p, _("unknown key '%s' in %s; it belongs in a [source NAME] section"),
		            shown, where);
	if (other != NULL)
		return fail(p, _("unknown key '%s' in %s; it belongs in [evtop]"), shown, where);
	return fail(p, _("unknown key '%s' in %s"), shown, where);
}

/* A line of [mask] (doc/privacy.md): "keys = GLOB[:STYLE] ..." (the key rules, replacing the
 * defaults), "key = GLOB [STYLE]" (one more), "identifiers = GLOB ..." (keys never masked by
 * value), "patterns = mobile idcard bankcard email | none", "style = keep|all" (a pattern's). */
static int parse_mask(struct parser *p, const char *key, char *value)
{
	struct ev_mask *m = &p->cfg->mask;
	struct ev_error err = {0};
	char *save = NULL;
	bool keys = strcmp(key, "keys") == 0, one = strcmp(key, "key") == 0;

	if (keys || one) {
		if (keys)
			ev_mask_clear_keys(m);
		int n = 0;
		char *words[3];
		for (char *t = strtok_r(value, " \t", &save); t != NULL;
		     t = strtok_r(NULL, " \t", &save)) {
			if (one) {
				if (n == 2)
					return fail(p, _("key: expected 'GLOB [keep|all]'"));
				words[n++] = t;
				continue;
			}
			enum ev_mask_style st = EV_MASK_KEEP;
			char *colon = strrchr(t, ':');
			if (colon != NULL) {
				*colon = '\0';
				if (ev_mask_style_parse(colon + 1, &st) < 0)
					return fail(p, _("keys: '%.40s': a style is keep or all"),
					            colon + 1);
			}
			if (ev_mask_add_key(m, t, st, &err) < 0)
				return fail(p, "keys: %s", err.msg);
		}
		if (one) {
			enum ev_mask_style st = EV_MASK_KEEP;
			if (n == 0)
				return fail(p, _("key: expected 'GLOB [keep|all]'"));
			if (n == 2 && ev_mask_style_parse(words[1], &st) < 0)
				return fail(p, _("key: '%.40s': a style is keep or all"), words[1]);
			if (ev_mask_add_key(m, words[0], st, &err) < 0)
				return fail(p, "key: %s", err.msg);
		}
		return 0;
	}
	if (strcmp(key, "identifiers") == 0) {
		ev_mask_clear_ident(m);
		for (char *t = strtok_r(value, " \t", &save); t != NULL;
		     t = strtok_r(NULL, " \t", &save))
			if (ev_mask_add_ident(m, t, &err) < 0)
				return fail(p, "identifiers: %s", err.msg);
		return 0;
	}
	if (strcmp(key, "patterns") == 0) {
		static const struct {
			const char *name;
			unsigned bit;
		} pats[] = {{"mobile", EV_MASK_P_MOBILE},
		            {"idcard", EV_MASK_P_IDCARD},
		            {"bankcard", EV_MASK_P_BANKCARD},
		            {"email", EV_MASK_P_EMAIL}};
		unsigned bits = 0;
		for (char *t = strtok_r(value, " \t,", &save); t != NULL;
		     t = strtok_r(NULL, " \t,", &save)) {
			if (strcmp(t, "none") == 0)
				continue;
			size_t i = 0;
			while (i < sizeof(pats) / sizeof(pats[0]) && strcmp(pats[i].name, t) != 0)
				i++;
			if (i == sizeof(pats) / sizeof(pats[0])) {
				char shown[80];
				show_value(t, shown, sizeof(shown));
				return fail(p,
				            _("patterns: unknown pattern '%s' (mobile, idcard, "
				              "bankcard, "
				              "email or none)"),
				            shown);
			}
			bits |= pats[i].bit;
		}
		m->patterns = bits;
		return 0;
	}
	if (strcmp(key, "style") == 0) {
		if (ev_mask_style_parse(trim(value), &m->pattern_style) < 0)
			return fail(p, _("style: keep or all"));
		return 0;
	}
	char shown[80];
	show_value(key, shown, sizeof(shown));
	return fail(
	        p,
	        _("unknown key '%s' in [mask]; expected keys, key, identifiers, patterns or style"),
	        shown);
}

/* A line of [keys]: "bind = [VIEW] KEY ACTION". */
static int parse_bind(struct parser *p, const char *key, char *value)
{
	char *w[4];
	int n = 0;
	if (strcmp(key, "bind") != 0) {
		char shown[80];
		show_value(key, shown, sizeof(shown));
		return fail(p, _("unknown key '%s' in [keys]; expected 'bind = [VIEW] KEY ACTION'"),
		            shown);
	}
	for (char *save = NULL, *t = strtok_r(value, " \t", &save); t != NULL && n < 4;
	     t = strtok_r(NULL, " \t", &save))
		w[n++] = t;
	if (n < 2 || n > 3)
		return fail(p,
		            n == 1 ? _("bind: expected '[VIEW] KEY ACTION' (e.g. 'bind = list x "
		                       "cancel'), got %d word")
		                   : _("bind: expected '[VIEW] KEY ACTION' (e.g. 'bind = list x "
		                       "cancel'), got %d words"),
		            n);
	struct ev_config *cfg = p->cfg;
	cfg->keys = ev_xrealloc(cfg->keys, (size_t)(cfg->nkeys + 1) * sizeof(*cfg->keys));
	struct ev_keybind *b = &cfg->keys[cfg->nkeys++];
	b->view = n == 3 ? ev_xstrdup(w[0]) : NULL;
	b->key = ev_xstrdup(w[n - 2]);
	b->action = ev_xstrdup(w[n - 1]);
	b->where = ev_xasprintf("%s:%d", p->file, p->line);
	return 0;
}

static int parse_line(struct parser *p, char *s)
{
	const struct setting *set;
	char *eq, *key, *value;
	size_t wordlen = 0;

	s = trim(s);
	if (*s == '\0' || *s == '#' || *s == ';')
		return 0;
	if (*s == '[')
		return parse_section(p, s);
	/* Refuse a password before anything else, even on a line that is malformed otherwise. */
	while (is_alnum(s[wordlen]) || s[wordlen] == '_' || s[wordlen] == '-')
		wordlen++;
	if (wordlen == 8 && ascii_prefix_caseeq(s, "password"))
		return fail(p, _("password: passwords belong in an option file (defaults_file) or "
		                 "at the prompt (-p), never in evtop's config"));
	eq = strchr(s, '=');
	if (eq == NULL)
		return fail(p, _("missing '=': expected 'key = value' or a [section]"));
	*eq = '\0';
	key = trim(s);
	if (*key == '\0')
		return fail(p, _("missing the key before '='"));
	if (p->source == SECTION_KEYS) {
		if ((value = parse_value(p, key, eq + 1)) == NULL)
			return -1;
		return parse_bind(p, key, value);
	}
	if (p->source == SECTION_MASK) {
		if ((value = parse_value(p, key, eq + 1)) == NULL)
			return -1;
		return parse_mask(p, key, value);
	}
	set = find_setting(key, p->source < 0 ? S_GLOBAL : S_SOURCE);
	if (set == NULL)
		return unknown_key(p, key);
	if ((value = parse_value(p, set->key, eq + 1)) == NULL)
		return -1;
	return apply(p, set, value);
}

/* Every byte of a line: no NUL or other control character but a tab, valid UTF-8. */
static int check_bytes(struct parser *p, const char *s, size_t n)
{
	for (size_t i = 0; i < n;) {
		unsigned char c = (unsigned char)s[i];
		size_t len;

		if (c == '\0')
			return fail(p, _("NUL byte in the file (is it a text file?)"));
		if ((c < 0x20 && c != '\t') || c == 0x7F)
			return fail(p, _("control character (byte 0x%02X) in the file"), c);
		if (c == 0xC2 && i + 1 < n && (unsigned char)s[i + 1] >= 0x80 &&
		    (unsigned char)s[i + 1] <= 0x9F)
			return fail(p, _("control character (U+%04X) in the file"),
			            (unsigned char)s[i + 1]);
		len = utf8_seq_len((const unsigned char *)s + i, n - i);
		if (len == 0)
			return fail(p, _("invalid UTF-8 (byte 0x%02X); the file must be UTF-8"), c);
		i += len;
	}
	return 0;
}

/* SSL options imply TLS, as --ssl-ca does for the mysql client: a CA file that silently went
 * unused would look like a verified connection and not be one. */
static void imply_ssl(struct ev_config *cfg)
{
	for (int i = 0; i < cfg->nsources; i++) {
		struct ev_source *s = &cfg->sources[i];

		if (s->ssl_verify || s->ssl_ca || s->ssl_capath || s->ssl_cert || s->ssl_key ||
		    s->ssl_cipher)
			s->ssl = true;
	}
}

static int parse_text(struct ev_config *cfg, const char *text, size_t len, const char *filename,
                      struct ev_error *err)
{
	struct parser p = {.cfg = cfg, .file = filename, .err = err, .source = -1};
	char line[MAX_LINE_BYTES + 1];
	size_t pos = 0;
	int rc = 0;

	if (len >= 3 && memcmp(text, "\xEF\xBB\xBF", 3) == 0)
		pos = 3; /* a byte-order mark some editors write */
	while (pos < len && rc == 0) {
		const char *start = text + pos;
		const char *nl = memchr(start, '\n', len - pos);
		size_t n = nl != NULL ? (size_t)(nl - start) : len - pos;

		pos += n + (nl != NULL);
		p.line++;
		if (n > 0 && start[n - 1] == '\r')
			n--;
		if (n > MAX_LINE_BYTES) {
			rc = fail(&p, _("line too long (more than %d bytes)"), MAX_LINE_BYTES);
			break;
		}
		if ((rc = check_bytes(&p, start, n)) < 0)
			break;
		memcpy(line, start, n);
		line[n] = '\0';
		rc = parse_line(&p, line);
	}
	free(p.source_lines);
	imply_ssl(cfg);
	return rc;
}

int ev_config_parse(struct ev_config *cfg, const char *text, const char *filename,
                    struct ev_error *err)
{
	assert(cfg != NULL && text != NULL && filename != NULL);
	return parse_text(cfg, text, strlen(text), filename, err);
}

int ev_config_load(struct ev_config *cfg, const char *path, bool must_exist, struct ev_error *err)
{
	struct ev_buf buf;
	char chunk[8192];
	size_t n;
	FILE *f;
	int rc;

	assert(cfg != NULL && (path != NULL || !must_exist));
	if (path == NULL)
		return 0;
	/* A regular file of the user's or root's that no one else may write; a FIFO is refused
	 * without hanging on it. */
	int fd = ev_file_open_safe(_("the config file"), path, EV_FILE_CONFIG, EV_FILE_READ, err);
	if (fd < 0) {
		if (errno == ENOENT && !must_exist) {
			ev_error_clear(err);
			return 0;
		}
		if (errno == ENOENT || errno == EACCES)
			return ev_error_set(err, EV_ERR_CONFIG, _("cannot read %s: %s"), path,
			                    strerror(errno));
		return -1;
	}
	f = fdopen(fd, "r");
	if (f == NULL) {
		close(fd);
		return ev_error_set(err, EV_ERR_CONFIG, _("cannot read %s: %s"), path,
		                    strerror(errno));
	}
	ev_buf_init(&buf);
	/* Read in chunks rather than trusting st_size: the file may grow while it is read. */
	while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0 && buf.len <= MAX_FILE_BYTES)
		ev_buf_add(&buf, chunk, n);
	if (ferror(f)) {
		rc = ev_error_set(err, EV_ERR_CONFIG, _("cannot read %s: %s"), path,
		                  strerror(errno));
	} else if (buf.len > MAX_FILE_BYTES) {
		rc = ev_error_set(
		        err, EV_ERR_CONFIG,
		        _("cannot read %s: larger than 1 MB, which is too big for a config "
		          "file (is it the right file?)"),
		        path);
	} else {
		rc = parse_text(cfg, buf.data != NULL ? buf.data : "", buf.len, path, err);
	}
	fclose(f);
	ev_buf_free(&buf);
	return rc;
}

char *ev_config_default_path(void)
{
	const char *dir = getenv("XDG_CONFIG_HOME");
	struct passwd *pw;

	/* The XDG spec says to ignore a relative XDG_CONFIG_HOME. */
	if (dir != NULL && dir[0] == '/')
		return ev_xasprintf("%s/evtop/config", dir);
	dir = getenv("HOME");
	if (dir == NULL || dir[0] == '\0') {
		pw = getpwuid(getuid());
		dir = pw != NULL ? pw->pw_dir : NULL;
	}
	if (dir == NULL || dir[0] == '\0')
		return NULL;
	return ev_xasprintf("%s/.config/evtop/config", dir);
}
