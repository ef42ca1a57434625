/* Regressions of the hardening work (issue 13), one test per bug found in src/core:
 *   - a dashboard group first seen after a query failed showed 0 for that query's figures
 *     (the statement time limit hit: "0 pending" instead of "?");
 *   - the dashboard found its groups by a linear search and grew its rows one at a time:
 *     quadratic in the groups, about 1 GB allocated for 3000 event types;
 *   - JSON output passed bidi overrides (U+202E) raw to the terminal;
 *   - a config error quoted the file's tab, C1 or bidi characters raw. */
#include <config.h>

#include "core/config.h"
#include "core/dashboard.h"
#include "core/format.h"
#include "core/rowset.h"

#include <check.h>
#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RLO "\xE2\x80\xAE" /* U+202E RIGHT-TO-LEFT OVERRIDE */
#define CSI "\xC2\x9B"     /* U+009B, the 8-bit CSI */

START_TEST(dashboard_group_after_a_failed_query_is_unknown)
{
	struct ev_dash_req req = {.table = EV_TABLE_OUTBOX, .dimension = "event_type"};
	struct ev_dash *d = ev_dash_new(&req);
	/* The pending query hits the time limit before any group is known... */
	ev_dash_unknown(d, EV_DQ_PENDING, "timeout");
	/* ... then the failed query brings group A. */
	const char *names[] = {"g", "failed", "due", "waiting", "noretry", "exhausted"};
	enum ev_ctype types[] = {EV_CT_TEXT, EV_CT_INT, EV_CT_INT, EV_CT_INT, EV_CT_INT, EV_CT_INT};
	struct ev_rowset *rs = ev_rowset_new(6, names, types);
	struct ev_cell *row = ev_rowset_add_row(rs);
	const char *vals[] = {"A", "3", "1", "1", "1", "0"};
	for (int i = 0; i < 6; i++)
		ev_cell_set(&row[i], vals[i], strlen(vals[i]));
	ev_dash_add(d, EV_DQ_FAILED, rs);
	ev_dash_finish(d);
	const struct ev_dash_row *a = ev_dash_find(d, "A");
	ck_assert_ptr_nonnull(a);
	ck_assert(a->f[EV_DASH_PENDING].unknown);
	ck_assert(a->f[EV_DASH_OLDEST_PENDING_AGE].unknown);
	ck_assert(!a->f[EV_DASH_FAILED].unknown);
	ck_assert_int_eq(a->f[EV_DASH_FAILED].value, 3);
	ck_assert(d->total.f[EV_DASH_PENDING].unknown);
	ck_assert_ptr_nonnull(strstr(d->notes, "timeout"));
	ev_rowset_free(&rs);
	ev_dash_free(&d);
}
END_TEST

START_TEST(dashboard_carried_group_is_unknown_for_a_failed_query)
{
	struct ev_dash_req req = {.table = EV_TABLE_OUTBOX, .dimension = "event_type"};
	/* An earlier dashboard knew group B through the window query. */
	struct ev_dash *earlier = ev_dash_new(&req);
	const char *names[] = {"g", "created", "success", "cancelled"};
	enum ev_ctype types[] = {EV_CT_TEXT, EV_CT_INT, EV_CT_INT, EV_CT_INT};
	struct ev_rowset *rs = ev_rowset_new(4, names, types);
	struct ev_cell *row = ev_rowset_add_row(rs);
	const char *vals[] = {"B", "5", "4", "1"};
	for (int i = 0; i < 4; i++)
		ev_cell_set(&row[i], vals[i], strlen(vals[i]));
	ev_dash_add(earlier, EV_DQ_WINDOW, rs);
	ev_dash_finish(earlier);
	/* This refresh skips the window query and every other one fails. */
	req.skip = 1u << EV_DQ_WINDOW;
	struct ev_dash *d = ev_dash_new(&req);
	d->skipped = req.skip;
	ev_dash_unknown(d, EV_DQ_PENDING, "timeout");
	ev_dash_unknown(d, EV_DQ_PROCESSING, "timeout");
	ev_dash_unknown(d, EV_DQ_FAILED, "timeout");
	ev_dash_carry(d, earlier);
	ev_dash_finish(d);
	const struct ev_dash_row *b = ev_dash_find(d, "B");
	ck_assert_ptr_nonnull(b);
	ck_assert_int_eq(b->f[EV_DASH_CREATED].value, 5);
	ck_assert(!b->f[EV_DASH_CREATED].unknown);
	ck_assert(b->f[EV_DASH_PENDING].unknown);
	ck_assert(b->f[EV_DASH_FAILED].unknown);
	ck_assert(b->f[EV_DASH_STUCK].unknown);
	ev_rowset_free(&rs);
	ev_dash_free(&d);
	ev_dash_free(&earlier);
}
END_TEST

/* One dashboard query's result: n rows of (group, figures...), the group NULL where
 * groups[i] is NULL. */
static struct ev_rowset *dash_rows(size_t ncols, size_t n, char **groups, long long **vals)
{
	const char *names[] = {"g", "a", "b", "c", "d", "e"};
	enum ev_ctype types[] = {EV_CT_TEXT, EV_CT_INT, EV_CT_INT, EV_CT_INT, EV_CT_INT, EV_CT_INT};
	struct ev_rowset *rs = ev_rowset_new(ncols, names, types);
	for (size_t r = 0; r < n; r++) {
		struct ev_cell *row = ev_rowset_add_row(rs);
		if (groups[r] != NULL)
			ev_cell_set(&row[0], groups[r], strlen(groups[r]));
		for (size_t c = 1; c < ncols; c++) {
			char num[32];
			snprintf(num, sizeof(num), "%lld", vals[r][c - 1]);
			ev_cell_set(&row[c], num, strlen(num));
		}
	}
	return rs;
}

#define MANY          20000
#define NEW_IN_FAILED 5000
#define ONLY_EARLIER  1000

START_TEST(dashboard_with_many_groups)
{
	struct ev_dash_req req = {.table = EV_TABLE_OUTBOX, .dimension = "event_type"};
	size_t cap = MANY + NEW_IN_FAILED + ONLY_EARLIER + 1;
	char **g = ev_xcalloc(cap, sizeof(*g));
	long long **v = ev_xcalloc(cap, sizeof(*v));
	for (size_t i = 0; i < cap; i++)
		v[i] = ev_xcalloc(5, sizeof(**v));

	/* An earlier dashboard whose window query saw the MANY groups and ONLY_EARLIER more
	 * (t00000..): this refresh skips that query and carries its figures over. */
	struct ev_dash *earlier = ev_dash_new(&req);
	size_t n = 0;
	for (size_t i = 0; i < MANY + ONLY_EARLIER; i++, n++) {
		g[n] = i < MANY ? ev_xasprintf("g%05zu", i) : ev_xasprintf("t%05zu", i - MANY);
		v[n][0] = (long long)i % 3 + 1; /* created */
		v[n][1] = 1;                    /* success */
		v[n][2] = 2;                    /* cancelled */
	}
	struct ev_rowset *rs = dash_rows(4, n, g, v);
	ev_dash_add(earlier, EV_DQ_WINDOW, rs);
	ev_rowset_free(&rs);
	ev_dash_finish(earlier);
	ck_assert_uint_eq(earlier->nrows, MANY + ONLY_EARLIER);
	for (size_t i = 0; i < n; i++)
		free(g[i]);

	req.skip = 1u << EV_DQ_WINDOW;
	struct ev_dash *d = ev_dash_new(&req);
	d->skipped = req.skip;
	/* Pending: every group g..., and the NULL group. */
	n = 0;
	for (size_t i = 0; i < MANY; i++, n++) {
		g[n] = ev_xasprintf("g%05zu", i);
		v[n][0] = (long long)i % 7 + 1; /* pending */
		v[n][1] = (long long)i;         /* oldest pending age */
		v[n][2] = -1;
	}
	g[n] = NULL;
	v[n][0] = 4;
	v[n][1] = 50;
	v[n][2] = 0;
	n++;
	rs = dash_rows(4, n, g, v);
	ev_dash_add(d, EV_DQ_PENDING, rs);
	ev_rowset_free(&rs);
	for (size_t i = 0; i < n; i++)
		free(g[i]);
	/* Failed: the even groups in reverse order, the NULL group again, and NEW_IN_FAILED
	 * groups no other query has (h0000..). */
	n = 0;
	for (size_t k = MANY; k-- > 0;) {
		if (k % 2 != 0)
			continue;
		g[n] = ev_xasprintf("g%05zu", k);
		v[n][0] = 2; /* failed */
		v[n][1] = 1;
		v[n][2] = 0;
		v[n][3] = 0;
		v[n][4] = 1;
		n++;
	}
	g[n] = NULL;
	v[n][0] = 6;
	v[n][1] = v[n][2] = v[n][3] = 0;
	v[n][4] = 6;
	n++;
	for (size_t k = 0; k < NEW_IN_FAILED; k++, n++) {
		g[n] = ev_xasprintf("h%04zu", k);
		v[n][0] = 1;
		v[n][1] = v[n][2] = v[n][3] = 0;
		v[n][4] = 1;
	}
	rs = dash_rows(6, n, g, v);
	ev_dash_add(d, EV_DQ_FAILED, rs);
	ev_rowset_free(&rs);
	for (size_t i = 0; i < n; i++)
		free(g[i]);
	ev_dash_carry(d, earlier);
	ev_dash_finish(d);

	/* One row per distinct group (NULL included), however often a query named it. */
	ck_assert_uint_eq(d->nrows, MANY + 1 + NEW_IN_FAILED + ONLY_EARLIER);
	size_t nulls = 0;
	for (size_t i = 0; i < d->nrows; i++)
		nulls += d->rows[i].group == NULL;
	ck_assert_uint_eq(nulls, 1);
	/* Every group found, with its own figures. */
	long long pending = 4, failed = 6, created = 0;
	for (size_t i = 0; i < MANY; i++) {
		char name[16];
		snprintf(name, sizeof(name), "g%05zu", i);
		const struct ev_dash_row *r = ev_dash_find(d, name);
		ck_assert_msg(r != NULL, "%s not found", name);
		ck_assert_str_eq(r->group, name);
		ck_assert_int_eq(r->f[EV_DASH_PENDING].value, (long long)i % 7 + 1);
		ck_assert_int_eq(r->f[EV_DASH_OLDEST_PENDING_AGE].value, (long long)i);
		ck_assert_int_eq(r->f[EV_DASH_FAILED].value, i % 2 == 0 ? 2 : 0);
		ck_assert_int_eq(r->f[EV_DASH_EXHAUSTED].value, i % 2 == 0 ? 1 : 0);
		ck_assert_int_eq(r->f[EV_DASH_CREATED].value, (long long)i % 3 + 1);
		ck_assert_int_eq(r->f[EV_DASH_CANCELLED].value, 2);
		pending += (long long)i % 7 + 1;
		failed += i % 2 == 0 ? 2 : 0;
		created += (long long)i % 3 + 1;
	}
	for (size_t k = 0; k < NEW_IN_FAILED; k++) {
		char name[16];
		snprintf(name, sizeof(name), "h%04zu", k);
		const struct ev_dash_row *r = ev_dash_find(d, name);
		ck_assert_msg(r != NULL, "%s not found", name);
		ck_assert_int_eq(r->f[EV_DASH_FAILED].value, 1);
		ck_assert_int_eq(r->f[EV_DASH_PENDING].value, 0);
		ck_assert_int_eq(r->f[EV_DASH_OLDEST_PENDING_AGE].value, -1);
		ck_assert_int_eq(r->f[EV_DASH_CREATED].value, 0);
		failed += 1;
	}
	for (size_t k = 0; k < ONLY_EARLIER; k++) {
		char name[16];
		snprintf(name, sizeof(name), "t%05zu", k);
		const struct ev_dash_row *r = ev_dash_find(d, name);
		ck_assert_msg(r != NULL, "%s not found", name);
		ck_assert_int_eq(r->f[EV_DASH_CREATED].value, (long long)(MANY + k) % 3 + 1);
		ck_assert_int_eq(r->f[EV_DASH_PENDING].value, 0);
		created += (long long)(MANY + k) % 3 + 1;
	}
	ck_assert_ptr_null(ev_dash_find(d, "g20000"));
	ck_assert_ptr_null(ev_dash_find(d, "g0000"));
	ck_assert_ptr_null(ev_dash_find(d, ""));
	ck_assert_ptr_eq(ev_dash_find(d, NULL), &d->total);
	/* The totals add up every row, the NULL group's too. */
	ck_assert_int_eq(d->total.f[EV_DASH_PENDING].value, pending);
	ck_assert_int_eq(d->total.f[EV_DASH_FAILED].value, failed);
	ck_assert_int_eq(d->total.f[EV_DASH_CREATED].value, created);
	ck_assert_int_eq(d->total.f[EV_DASH_OLDEST_PENDING_AGE].value, MANY - 1);
	/* Sorted by backlog, then group: and still found after the sort. */
	for (size_t i = 1; i < d->nrows; i++) {
		const struct ev_dash_row *a = &d->rows[i - 1], *b = &d->rows[i];
		long long ba = a->f[EV_DASH_PENDING].value + a->f[EV_DASH_PROCESSING].value +
		               a->f[EV_DASH_FAILED].value;
		long long bb = b->f[EV_DASH_PENDING].value + b->f[EV_DASH_PROCESSING].value +
		               b->f[EV_DASH_FAILED].value;
		ck_assert(ba >= bb);
		if (ba == bb && a->group != NULL && b->group != NULL)
			ck_assert(strcmp(a->group, b->group) < 0);
		if (b->group != NULL)
			ck_assert_ptr_eq(ev_dash_find(d, b->group), b);
	}
	/* Memory in proportion to the groups: rows and hash slots a small multiple of them. */
	ck_assert_uint_le(d->rows_cap, 2 * d->nrows);
	ck_assert_uint_le(d->nslots, 4 * d->nrows);
	ck_assert_uint_ge(d->nslots, 2 * d->nrows);

	for (size_t i = 0; i < cap; i++)
		free(v[i]);
	free(v);
	free(g);
	ev_dash_free(&d);
	ev_dash_free(&earlier);
}
END_TEST

static char *json_of(const char *text, const char *payload)
{
	const char *names[] = {"fail_reason", "event_payload"};
	enum ev_ctype types[] = {EV_CT_TEXT, EV_CT_JSON};
	struct ev_rowset *rs = ev_rowset_new(2, names, types);
	struct ev_cell *row = ev_rowset_add_row(rs);
	ev_cell_set(&row[0], text, strlen(text));
	ev_cell_set(&row[1], payload, strlen(payload));
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	ck_assert_int_eq(ev_format_write(f, rs, EV_FMT_JSON, 0), 0);
	fclose(f);
	ev_rowset_free(&rs);
	return buf;
}

START_TEST(json_output_escapes_bidi_controls)
{
	char *out = json_of("user" RLO "gpj.exe " CSI "6n",
	                    "{\"name\": \"" RLO "txt.exe\", \"m\": \"\xE2\x80\x8F\xE2\x81\xA6\"}");
	ck_assert_ptr_null(strstr(out, RLO));
	ck_assert_ptr_null(strstr(out, CSI));
	ck_assert_ptr_null(strstr(out, "\xE2\x80\x8F")); /* U+200F */
	ck_assert_ptr_null(strstr(out, "\xE2\x81\xA6")); /* U+2066 */
	ck_assert_ptr_nonnull(strstr(out, "\"fail_reason\":\"user\\u202egpj.exe \\u009b6n\""));
	ck_assert_ptr_nonnull(strstr(out, "\"name\": \"\\u202etxt.exe\""));
	ck_assert_ptr_nonnull(strstr(out, "\\u200f\\u2066"));
	free(out);
	/* Other non-ASCII text stays as it is. */
	out = json_of("调用超时 🚀 é", "{\"k\": \"中文\"}");
	ck_assert_ptr_nonnull(strstr(out, "调用超时 🚀 é"));
	ck_assert_ptr_nonnull(strstr(out, "\"k\": \"中文\""));
	free(out);
}
END_TEST

static void ck_config_error_safe(const char *text, const char *want)
{
	struct ev_config cfg;
	struct ev_error err = {0};
	ev_config_init(&cfg);
	ck_assert_int_eq(ev_config_parse(&cfg, text, "t.conf", &err), -1);
	ck_assert_msg(strchr(err.msg, '\t') == NULL, "a raw tab in: %s", err.msg);
	ck_assert_msg(strstr(err.msg, CSI) == NULL, "a raw C1 in: %s", err.msg);
	ck_assert_msg(strstr(err.msg, RLO) == NULL, "a raw bidi override in: %s", err.msg);
	ck_assert_msg(strstr(err.msg, want) != NULL, "'%s' not in: %s", want, err.msg);
	ev_config_free(&cfg);
}

START_TEST(config_errors_quote_the_file_safely)
{
	ck_config_error_safe("[evtop]\nrefre\tsh = 2s\n", "t.conf:2: unknown key 'refre␉sh'");
	/* A C1 control is refused as the C0 ones are, named by its code point. */
	ck_config_error_safe("[evtop]\nrefresh = 2" CSI "s\n",
	                     "t.conf:2: control character (U+009B) in the file");
	ck_config_error_safe("[ev" RLO "top]\n", "t.conf:1: unknown section [ev�top]");
	ck_config_error_safe("[source a]\n[sou\trce b]\n", "t.conf:2: unknown section [sou␉rce b]");
}
END_TEST

int main(void)
{
	setlocale(LC_CTYPE, "C.UTF-8");
	Suite *s = suite_create("hardening");
	TCase *tc = tcase_create("hardening");
	tcase_add_test(tc, dashboard_group_after_a_failed_query_is_unknown);
	tcase_add_test(tc, dashboard_carried_group_is_unknown_for_a_failed_query);
	tcase_add_test(tc, dashboard_with_many_groups);
	tcase_add_test(tc, json_output_escapes_bidi_controls);
	tcase_add_test(tc, config_errors_quote_the_file_safely);
	suite_add_tcase(s, tc);
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? 0 : 1;
}
