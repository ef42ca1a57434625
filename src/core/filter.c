/* evtop — list filters: `key=value` terms, JSON paths into payloads and headers, and what
 * a table cannot filter on (core/query.h). */
#include <config.h>

#include "core/filter.h"
#include "core/i18n.h"
#include "core/query.h"

#include <ctype.h>
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* --- filters ------------------------------------------------------------------------------ */

static const struct {
	const char *key;
	const char *alias;
	size_t offset;
	size_t maxlen;
} filter_keys[] = {
        {"event_type", NULL, offsetof(struct ev_filter, event_type), 64},
        {"topic", NULL, offsetof(struct ev_filter, topic), 128},
        {"biz_type", "aggregate_type", offsetof(struct ev_filter, biz_type), 64},
        {"biz_id", "aggregate_id", offsetof(struct ev_filter, biz_id), 64},
        {"event_no", NULL, offsetof(struct ev_filter, event_no), 64},
        {"trace_id", NULL, offsetof(struct ev_filter, trace_id), 128},
        {"source", "event_source", offsetof(struct ev_filter, source), 64},
        {"locked_by", NULL, offsetof(struct ev_filter, locked_by), 128},
        {"channel", "publish_channel", offsetof(struct ev_filter, channel), 32},
        {"fail_reason", "reason", offsetof(struct ev_filter, fail_reason), 1000},
        {"since", NULL, offsetof(struct ev_filter, since), 19},
        {"until", NULL, offsetof(struct ev_filter, until), 19},
};

#define NKEYS (sizeof(filter_keys) / sizeof(filter_keys[0]))

static char **filter_slot(struct ev_filter *f, size_t i)
{
	return (char **)((char *)f + filter_keys[i].offset);
}

/* Accept 'YYYY-MM-DD', 'YYYY-MM-DD hh:mm', 'YYYY-MM-DD hh:mm:ss' (also with 'T'); normalise to
 * 'YYYY-MM-DD hh:mm:ss' in out[21]. */
bool ev_datetime_normalize(const char *s, char out[21])
{
	int y, mo, d, h = 0, mi = 0, sec = 0, n = 0;
	size_t len = strlen(s);

	if (len == 10) {
		if (sscanf(s, "%4d-%2d-%2d%n", &y, &mo, &d, &n) != 3 || n != 10)
			return false;
	} else if (len == 16 || len == 19) {
		char sep;
		int want = len == 16 ? 6 : 7;
		int got = len == 16 ? sscanf(s, "%4d-%2d-%2d%c%2d:%2d%n", &y, &mo, &d, &sep, &h,
		                             &mi, &n)
		                    : sscanf(s, "%4d-%2d-%2d%c%2d:%2d:%2d%n", &y, &mo, &d, &sep, &h,
		                             &mi, &sec, &n);
		if (got != want || (size_t)n != len || (sep != ' ' && sep != 'T'))
			return false;
	} else {
		return false;
	}
	for (size_t i = 0; i < len; i++)
		if (!isdigit((unsigned char)s[i]) && s[i] != '-' && s[i] != ':' && s[i] != ' ' &&
		    s[i] != 'T')
			return false;
	if (y < 1000 || y > 9999 || mo < 1 || mo > 12 || d < 1 || d > 31 || h < 0 || h > 23 ||
	    mi < 0 || mi > 59 || sec < 0 || sec > 59)
		return false;
	snprintf(out, 21, "%04d-%02d-%02d %02d:%02d:%02d", y, mo, d, h, mi, sec);
	return true;
}

int ev_filter_set(struct ev_filter *f, const char *key, const char *value, struct ev_error *err)
{
	for (size_t i = 0; i < NKEYS; i++) {
		if (strcmp(key, filter_keys[i].key) != 0 &&
		    (filter_keys[i].alias == NULL || strcmp(key, filter_keys[i].alias) != 0))
			continue;
		char **slot = filter_slot(f, i);
		if (value[0] == '\0')
			return ev_error_set(err, EV_ERR_USAGE, _("filter %s: empty value"), key);
		if (i >= NKEYS - 2) {
			char norm[21];
			if (!ev_datetime_normalize(value, norm))
				return ev_error_set(
				        err, EV_ERR_USAGE,
				        _("filter %s: expected a time like 2026-05-01 or "
				          "'2026-05-01 10:00:00', got '%.40s'"),
				        key, value);
			free(*slot);
			*slot = ev_xstrdup(norm);
			return 0;
		}
		if (strlen(value) > filter_keys[i].maxlen)
			return ev_error_set(err, EV_ERR_USAGE,
			                    _("filter %s: longer than the column (%zu characters)"),
			                    key, filter_keys[i].maxlen);
		free(*slot);
		*slot = ev_xstrdup(value);
		return 0;
	}
	return ev_error_set(
	        err, EV_ERR_USAGE,
	        _("unknown filter '%.40s' (known: event_type, topic, biz_type, biz_id, "
	          "event_no, trace_id, source, locked_by, channel, fail_reason, since, until, "
	          "payload.PATH, headers.PATH, payload~, headers~)"),
	        key);
}

/* A payload key: "payload", "headers" (or event_payload, event_headers), alone or followed by
 * a path ('.' or '['). Returns what follows the column's name and sets *headers; NULL when
 * the key is not one. */
static const char *json_key(const char *key, bool *headers)
{
	static const struct {
		const char *name;
		bool headers;
	} cols[] = {{"event_payload", false},
	            {"payload", false},
	            {"event_headers", true},
	            {"headers", true}};
	for (size_t i = 0; i < sizeof(cols) / sizeof(cols[0]); i++) {
		size_t n = strlen(cols[i].name);
		if (strncmp(key, cols[i].name, n) != 0 ||
		    (key[n] != '\0' && key[n] != '.' && key[n] != '['))
			continue;
		if (headers != NULL)
			*headers = cols[i].headers;
		return key + n;
	}
	return NULL;
}

/* The server's JSON path for a path as written after the column ("" none, ".a.b[0]",
 * '."x-y"', "[2].c"): every key quoted, so any character is a key's own. */
static int json_path(const char *s, struct ev_buf *out, struct ev_error *err)
{
	ev_buf_adds(out, "$");
	if (*s == '\0')
		return ev_error_set(
		        err, EV_ERR_USAGE,
		        _("filter: a path is needed: payload.KEY=VALUE (payload~TEXT for "
		          "a substring of the whole text)"));
	while (*s) {
		if (*s == '.') {
			s++;
			ev_buf_adds(out, ".\"");
			if (*s == '"') {
				size_t at = out->len;
				s++;
				while (*s && *s != '"') {
					if (*s == '\\' && (s[1] == '"' || s[1] == '\\'))
						s++;
					if (*s == '"' || *s == '\\')
						ev_buf_addc(out, '\\');
					ev_buf_addc(out, *s++);
				}
				if (*s != '"')
					return ev_error_set(
					        err, EV_ERR_USAGE,
					        _("filter: unterminated quote in a path"));
				if (out->len == at)
					return ev_error_set(err, EV_ERR_USAGE,
					                    _("filter: an empty key in a path"));
				s++;
			} else {
				size_t n = 0;
				while (s[n] && s[n] != '.' && s[n] != '[' && s[n] != '"' &&
				       s[n] != ']')
					n++;
				if (n == 0)
					return ev_error_set(
					        err, EV_ERR_USAGE,
					        _("filter: an empty key in a path (quote a key "
					          "with '.': payload.\"a.b\")"));
				for (size_t i = 0; i < n; i++) {
					if (s[i] == '\\')
						ev_buf_addc(out, '\\');
					ev_buf_addc(out, s[i]);
				}
				s += n;
			}
			ev_buf_addc(out, '"');
		} else if (*s == '[') {
			s++;
			size_t n = 0;
			while (isdigit((unsigned char)s[n]))
				n++;
			if (n == 0 || n > 9 || s[n] != ']')
				return ev_error_set(
				        err, EV_ERR_USAGE,
				        _("filter: an array position is [N], N a number"));
			ev_buf_addc(out, '[');
			ev_buf_add(out, s, n);
			ev_buf_addc(out, ']');
			s += n + 1;
		} else {
			return ev_error_set(
			        err, EV_ERR_USAGE,
			        _("filter: a path is keys after '.' and positions in [N], "
			          "not '%.20s' (quote a key with other characters: "
			          "payload.\"x-y\")"),
			        s);
		}
	}
	return 0;
}

int ev_filter_add_json(struct ev_filter *f, const char *key, char op, const char *value,
                       struct ev_error *err)
{
	bool headers = false;
	const char *rest = json_key(key, &headers);
	if (rest == NULL)
		return ev_error_set(err, EV_ERR_USAGE, _("filter: '%.40s' is not a payload key"),
		                    key);
	if (f->njson >= EV_FILTER_JSON_MAX)
		return ev_error_set(err, EV_ERR_USAGE, _("filter: at most %d payload terms"),
		                    EV_FILTER_JSON_MAX);
	if (value[0] == '\0')
		return ev_error_set(err, EV_ERR_USAGE, _("filter %.40s: empty value"), key);
	if (strlen(value) > 1000)
		return ev_error_set(err, EV_ERR_USAGE,
		                    _("filter %.40s: a value of at most 1000 characters"), key);
	if (strlen(key) > 256)
		return ev_error_set(err, EV_ERR_USAGE,
		                    _("filter: a path of at most 256 characters"));
	struct ev_jterm *j = &f->json[f->njson];
	memset(j, 0, sizeof(*j));
	if (op == '~') {
		if (*rest != '\0')
			return ev_error_set(
			        err, EV_ERR_USAGE,
			        _("filter: '~' searches the whole stored text: payload~TEXT, "
			          "not %.40s~TEXT (a path takes '=': %.40s=VALUE)"),
			        key, key);
		j->substring = true;
	} else {
		struct ev_buf path;
		ev_buf_init(&path);
		if (json_path(rest, &path, err) < 0) {
			ev_buf_free(&path);
			return -1;
		}
		j->path = ev_buf_steal(&path);
	}
	j->headers = headers;
	j->key = ev_xstrdup(key);
	j->value = ev_xstrdup(value);
	f->njson++;
	return 0;
}

int ev_filter_parse(struct ev_filter *f, const char *expr, struct ev_error *err)
{
	const char *p = expr;
	struct ev_buf key, val;

	ev_buf_init(&key);
	ev_buf_init(&val);
	for (;;) {
		while (*p == ' ' || *p == '\t')
			p++;
		if (*p == '\0')
			break;
		key.len = 0;
		val.len = 0;
		ev_buf_add(&key, "", 0);
		ev_buf_add(&val, "", 0);
		while (*p && *p != '=' && *p != '~' && *p != ' ') {
			if (*p != '"') {
				ev_buf_addc(&key, *p++);
				continue;
			}
			/* A quoted key inside a payload path, kept with its quotes. */
			ev_buf_addc(&key, *p++);
			while (*p && *p != '"') {
				if (*p == '\\' && (p[1] == '"' || p[1] == '\\'))
					ev_buf_addc(&key, *p++);
				ev_buf_addc(&key, *p++);
			}
			if (*p != '"') {
				ev_error_set(err, EV_ERR_USAGE,
				             _("filter: unterminated quote in '%.40s'"), key.data);
				goto fail;
			}
			ev_buf_addc(&key, *p++);
		}
		if (*p != '=' && *p != '~') {
			ev_error_set(err, EV_ERR_USAGE,
			             _("filter: expected key=value at '%.40s' (e.g. "
			               "event_type=PAY_SUCCESS "
			               "reason~timeout)"),
			             key.data);
			goto fail;
		}
		char op = *p++;
		if (*p == '"') {
			p++;
			while (*p && *p != '"') {
				if (*p == '\\' && (p[1] == '"' || p[1] == '\\'))
					p++;
				ev_buf_addc(&val, *p++);
			}
			if (*p != '"') {
				ev_error_set(err, EV_ERR_USAGE,
				             _("filter: unterminated quote after %s"), key.data);
				goto fail;
			}
			p++;
		} else {
			while (*p && *p != ' ' && *p != '\t')
				ev_buf_addc(&val, *p++);
		}
		if (json_key(key.data, NULL) != NULL) {
			if (ev_filter_add_json(f, key.data, op, val.data, err) < 0)
				goto fail;
			continue;
		}
		bool is_reason =
		        strcmp(key.data, "fail_reason") == 0 || strcmp(key.data, "reason") == 0;
		if (op == '~' && !is_reason) {
			ev_error_set(err, EV_ERR_USAGE,
			             _("filter: '~' (substring) works on fail_reason, payload and "
			               "headers; use %s=value"),
			             key.data);
			goto fail;
		}
		if (ev_filter_set(f, key.data, val.data, err) < 0)
			goto fail;
	}
	ev_buf_free(&key);
	ev_buf_free(&val);
	return 0;
fail:
	ev_buf_free(&key);
	ev_buf_free(&val);
	return -1;
}

const char *ev_filter_unsupported(const struct ev_filter *f, enum ev_table_kind t)
{
	if (t != EV_TABLE_OUTBOX) {
		if (f->topic)
			return "topic";
		if (f->locked_by)
			return "locked_by";
		if (f->channel)
			return "channel";
		for (int i = 0; i < f->njson; i++)
			if (f->json[i].headers)
				return "event_headers";
	}
	return NULL;
}

bool ev_filter_empty(const struct ev_filter *f)
{
	for (size_t i = 0; i < NKEYS; i++)
		if (*filter_slot((struct ev_filter *)f, i) != NULL)
			return false;
	return f->njson == 0;
}

void ev_filter_copy(struct ev_filter *dst, const struct ev_filter *src)
{
	memset(dst, 0, sizeof(*dst));
	for (size_t i = 0; i < NKEYS; i++) {
		const char *v = *filter_slot((struct ev_filter *)src, i);
		*filter_slot(dst, i) = v ? ev_xstrdup(v) : NULL;
	}
	dst->njson = src->njson;
	for (int i = 0; i < src->njson; i++) {
		const struct ev_jterm *s = &src->json[i];
		struct ev_jterm *d = &dst->json[i];
		d->headers = s->headers;
		d->substring = s->substring;
		d->key = ev_xstrdup(s->key);
		d->path = s->path ? ev_xstrdup(s->path) : NULL;
		d->value = ev_xstrdup(s->value);
	}
}

char *ev_filter_json_text(const struct ev_filter *f)
{
	if (f == NULL || f->njson == 0)
		return NULL;
	struct ev_buf b;
	ev_buf_init(&b);
	for (int i = 0; i < f->njson; i++) {
		const struct ev_jterm *j = &f->json[i];
		bool quote = false;
		for (const char *v = j->value; *v && !quote; v++)
			quote = *v == ' ' || *v == '\t' || *v == '"';
		ev_buf_printf(&b, "%s%s%c", i ? " " : "", j->key, j->substring ? '~' : '=');
		if (!quote) {
			ev_buf_adds(&b, j->value);
			continue;
		}
		ev_buf_addc(&b, '"');
		for (const char *v = j->value; *v; v++) {
			if (*v == '"' || *v == '\\')
				ev_buf_addc(&b, '\\');
			ev_buf_addc(&b, *v);
		}
		ev_buf_addc(&b, '"');
	}
	return ev_buf_steal(&b);
}

void ev_filter_free(struct ev_filter *f)
{
	for (size_t i = 0; i < NKEYS; i++) {
		char **slot = filter_slot(f, i);
		free(*slot);
		*slot = NULL;
	}
	for (int i = 0; i < f->njson; i++) {
		free(f->json[i].key);
		free(f->json[i].path);
		free(f->json[i].value);
	}
	memset(f->json, 0, sizeof(f->json));
	f->njson = 0;
}
