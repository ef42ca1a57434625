/* evtop — fuzz target for the list filter (ev_filter_parse, what the console's '/' prompt and
 * `evtop list --filter` take). Invariants:
 *   - the parse either succeeds or fails with EV_ERR_USAGE and a message, and a failure
 *     leaves nothing half-set that the caller must not free;
 *   - a parsed filter round-trips: written back as key="value" terms (quotes and
 *     backslashes escaped) and parsed again, it is the same filter;
 *   - every value set is non-empty and within its column's length; since/until are
 *     normalised to 'YYYY-MM-DD hh:mm:ss';
 *   - a value never reaches the SQL text: the list query built with the filter is the same
 *     text as with every value replaced by "x", and its parameters carry the values;
 *   - payload terms round-trip through ev_filter_json_text, their paths and values are
 *     parameters, never text, and a payload search is built with its cap and extra columns. */
#include <config.h>

#include "core/query.h"
#include "core/util.h"
#include "fuzz.h"

#include <ctype.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	return 0;
}

static const struct {
	const char *key;
	size_t offset;
	size_t maxlen;
} fields[] = {
        {"event_type", offsetof(struct ev_filter, event_type), 64},
        {"topic", offsetof(struct ev_filter, topic), 128},
        {"biz_type", offsetof(struct ev_filter, biz_type), 64},
        {"biz_id", offsetof(struct ev_filter, biz_id), 64},
        {"event_no", offsetof(struct ev_filter, event_no), 64},
        {"trace_id", offsetof(struct ev_filter, trace_id), 128},
        {"source", offsetof(struct ev_filter, source), 64},
        {"locked_by", offsetof(struct ev_filter, locked_by), 128},
        {"channel", offsetof(struct ev_filter, channel), 32},
        {"fail_reason", offsetof(struct ev_filter, fail_reason), 1000},
        {"since", offsetof(struct ev_filter, since), 19},
        {"until", offsetof(struct ev_filter, until), 19},
};
#define NFIELDS (sizeof(fields) / sizeof(fields[0]))

static char **slot(struct ev_filter *f, size_t i)
{
	return (char **)(void *)((char *)f + fields[i].offset);
}

static char *write_back(struct ev_filter *f)
{
	struct ev_buf b;
	ev_buf_init(&b);
	ev_buf_add(&b, "", 0);
	for (size_t i = 0; i < NFIELDS; i++) {
		const char *v = *slot(f, i);
		if (v == NULL)
			continue;
		ev_buf_printf(&b, "%s%s%c\"", b.len ? " " : "", fields[i].key,
		              strcmp(fields[i].key, "fail_reason") == 0 ? '~' : '=');
		for (; *v; v++) {
			if (*v == '"' || *v == '\\')
				ev_buf_addc(&b, '\\');
			ev_buf_addc(&b, *v);
		}
		ev_buf_addc(&b, '"');
	}
	char *terms = ev_filter_json_text(f);
	if (terms != NULL)
		ev_buf_printf(&b, "%s%s", b.len ? " " : "", terms);
	free(terms);
	return ev_buf_steal(&b);
}

static bool is_datetime(const char *s)
{
	static const char form[] = "dddd-dd-dd dd:dd:dd";
	if (strlen(s) != sizeof(form) - 1)
		return false;
	for (size_t i = 0; form[i]; i++)
		if (form[i] == 'd' ? !isdigit((unsigned char)s[i]) : s[i] != form[i])
			return false;
	return true;
}

static void check_query(struct ev_filter *f, enum ev_table_kind t)
{
	struct ev_error err = {0};
	struct ev_list_req req = {
	        .table = t, .kind = EV_LIST_FAILED, .filter = f, .limit = 10, .window_s = 3600};
	struct ev_query *q = ev_query_list(&req, &err);
	if (ev_filter_unsupported(f, t) != NULL) {
		FUZZ_CHECK(q == NULL && err.msg[0] != '\0', "an unsupported filter was built");
		return;
	}
	FUZZ_CHECK(q != NULL, "no query: %s", err.msg);

	/* The same filter with every value "x" (a valid date for since/until). */
	struct ev_filter x = {0};
	for (size_t i = 0; i < NFIELDS; i++)
		if (*slot(f, i) != NULL)
			*slot(&x, i) = ev_xstrdup(i >= NFIELDS - 2 ? "2000-01-01 00:00:00" : "x");
	for (int i = 0; i < f->njson; i++)
		FUZZ_CHECK(ev_filter_add_json(&x, f->json[i].key, f->json[i].substring ? '~' : '=',
		                              "x", &err) == 0,
		           "the term %s with the value x: %s", f->json[i].key, err.msg);
	struct ev_query *qx = ev_query_list(&(struct ev_list_req){.table = t,
	                                                          .kind = EV_LIST_FAILED,
	                                                          .filter = &x,
	                                                          .limit = 10,
	                                                          .window_s = 3600},
	                                    &err);
	FUZZ_CHECK(qx != NULL, "no query for the x filter: %s", err.msg);
	FUZZ_CHECK(strcmp(q->sql, qx->sql) == 0, "a filter value changed the SQL text:\n%s",
	           q->sql);
	size_t marks = 0;
	for (const char *s = q->sql; *s; s++)
		marks += *s == '?';
	FUZZ_CHECK(marks == q->nparams, "%zu placeholders, %zu parameters", marks, q->nparams);
	/* Every exact-match value is a parameter as given. */
	for (size_t i = 0; i < NFIELDS; i++) {
		const char *v = *slot(f, i);
		if (v == NULL || strcmp(fields[i].key, "fail_reason") == 0)
			continue;
		bool found = false;
		for (size_t k = 0; k < q->nparams && !found; k++)
			found = q->params[k].type == EV_P_TEXT && strcmp(q->params[k].s, v) == 0;
		FUZZ_CHECK(found, "the %s value is not a parameter", fields[i].key);
	}
	FUZZ_CHECK(q->search == (f->njson > 0), "a search without terms, or terms without one");
	for (int i = 0; i < f->njson; i++) {
		const struct ev_jterm *j = &f->json[i];
		bool path = j->substring, value = j->substring;
		for (size_t k = 0; k < q->nparams; k++) {
			if (q->params[k].type != EV_P_TEXT)
				continue;
			path |= j->path != NULL && strcmp(q->params[k].s, j->path) == 0;
			value |= strcmp(q->params[k].s, j->value) == 0;
		}
		FUZZ_CHECK(path && value, "the term %s: its path or value is not a parameter",
		           j->key);
		FUZZ_CHECK(j->path == NULL || strncmp(j->path, "$", 1) == 0, "a path '%s'",
		           j->path);
	}
	ev_query_free(&q);
	ev_query_free(&qx);
	ev_filter_free(&x);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* The prompt holds a C string: the text up to the first NUL. */
	char *text = ev_xstrndup((const char *)data, size);
	struct ev_filter f = {0};
	struct ev_error err = {0};

	if (ev_filter_parse(&f, text, &err) < 0) {
		FUZZ_CHECK(err.code == EV_ERR_USAGE && err.msg[0] != '\0',
		           "a failure without a message");
		ev_filter_free(&f);
		free(text);
		return 0;
	}
	for (size_t i = 0; i < NFIELDS; i++) {
		const char *v = *slot(&f, i);
		if (v == NULL)
			continue;
		FUZZ_CHECK(v[0] != '\0' && strlen(v) <= fields[i].maxlen, "%s: '%s'", fields[i].key,
		           v);
		if (i >= NFIELDS - 2)
			FUZZ_CHECK(is_datetime(v), "%s not normalised: '%s'", fields[i].key, v);
	}

	char *again = write_back(&f);
	struct ev_filter g = {0};
	FUZZ_CHECK(ev_filter_parse(&g, again, &err) == 0, "'%s' written back as '%s' fails: %s",
	           text, again, err.msg);
	for (size_t i = 0; i < NFIELDS; i++) {
		const char *a = *slot(&f, i), *b = *slot(&g, i);
		FUZZ_CHECK((a == NULL) == (b == NULL) && (a == NULL || strcmp(a, b) == 0),
		           "%s: '%s' came back as '%s' (from '%s')", fields[i].key,
		           a ? a : "(unset)", b ? b : "(unset)", again);
	}
	FUZZ_CHECK(f.njson == g.njson, "%d terms came back as %d (from '%s')", f.njson, g.njson,
	           again);
	for (int i = 0; i < f.njson; i++) {
		const struct ev_jterm *a = &f.json[i], *b = &g.json[i];
		FUZZ_CHECK(a->headers == b->headers && a->substring == b->substring &&
		                   strcmp(a->key, b->key) == 0 && strcmp(a->value, b->value) == 0 &&
		                   (a->path == NULL) == (b->path == NULL) &&
		                   (a->path == NULL || strcmp(a->path, b->path) == 0),
		           "the term %s=%s came back as %s=%s (from '%s')", a->key, a->value,
		           b->key, b->value, again);
		FUZZ_CHECK(a->value[0] != '\0' && strlen(a->value) <= 1000, "a term's value '%s'",
		           a->value);
	}
	check_query(&f, EV_TABLE_OUTBOX);
	check_query(&f, EV_TABLE_MESSAGE);

	free(again);
	ev_filter_free(&g);
	ev_filter_free(&f);
	free(text);
	return 0;
}
