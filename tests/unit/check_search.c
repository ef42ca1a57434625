/* core/query: payload terms — the filter grammar and the server paths it builds, the search
 * statement's shape and parameters, the folding of a search page (matches, the last
 * candidate, the stop at the cap) and a merge that never passes a source's stop. */
#include <config.h>

#include "core/query.h"

#include <check.h>
#include <stdlib.h>
#include <string.h>

/* The server path of the only payload term of expr (which must parse). */
static char *path_of(const char *expr)
{
	struct ev_filter f = {0};
	struct ev_error err = {0};
	ck_assert_msg(ev_filter_parse(&f, expr, &err) == 0, "%s: %s", expr, err.msg);
	ck_assert_int_eq(f.njson, 1);
	char *p = f.json[0].path ? strdup(f.json[0].path) : NULL;
	ev_filter_free(&f);
	return p;
}

START_TEST(paths_quote_every_key)
{
	static const struct {
		const char *expr, *path;
	} cases[] = {
	        {"payload.orderId=O1", "$.\"orderId\""},
	        {"payload.items[0].skuId=SKU9", "$.\"items\"[0].\"skuId\""},
	        {"payload[2]=x", "$[2]"},
	        {"payload.a[1][12].b=x", "$.\"a\"[1][12].\"b\""},
	        {"headers.\"x-tenant\"=T1", "$.\"x-tenant\""},
	        {"payload.\"a.b\"=1", "$.\"a.b\""},
	        {"payload.\"a b=c~d\"=1", "$.\"a b=c~d\""},
	        {"payload.\"用户\".名字=张三", "$.\"用户\".\"名字\""},
	        {"payload.\"q\\\"uote\"=1", "$.\"q\\\"uote\""},
	        {"payload.\"back\\\\slash\"=1", "$.\"back\\\\slash\""},
	        {"payload.back\\slash=1", "$.\"back\\\\slash\""},
	        {"event_payload.x=1", "$.\"x\""},
	        {"event_headers.x=1", "$.\"x\""},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *p = path_of(cases[i].expr);
		ck_assert_msg(p != NULL && strcmp(p, cases[i].path) == 0, "%s: path %s, want %s",
		              cases[i].expr, p ? p : "(null)", cases[i].path);
		free(p);
	}
}
END_TEST

START_TEST(terms_as_written)
{
	struct ev_filter f = {0}, g;
	struct ev_error err = {0};
	ck_assert_int_eq(ev_filter_parse(&f,
	                                 "event_type=PAY payload.orderId=O1 payload~\"two words\" "
	                                 "headers.\"x-t\"=T1 headers~\"a\\\"b\"",
	                                 &err),
	                 0);
	ck_assert_int_eq(f.njson, 4);
	ck_assert_str_eq(f.event_type, "PAY");
	ck_assert(!f.json[0].headers && !f.json[0].substring);
	ck_assert_str_eq(f.json[0].value, "O1");
	ck_assert(!f.json[1].headers && f.json[1].substring && f.json[1].path == NULL);
	ck_assert_str_eq(f.json[1].value, "two words");
	ck_assert(f.json[2].headers && !f.json[2].substring);
	ck_assert(f.json[3].headers && f.json[3].substring);
	ck_assert_str_eq(f.json[3].value, "a\"b");
	ck_assert(!ev_filter_empty(&f));
	char *text = ev_filter_json_text(&f);
	ck_assert_str_eq(text, "payload.orderId=O1 payload~\"two words\" headers.\"x-t\"=T1 "
	                       "headers~\"a\\\"b\"");
	/* What it prints parses back to the same terms. */
	struct ev_filter h = {0};
	ck_assert_int_eq(ev_filter_parse(&h, text, &err), 0);
	ck_assert_int_eq(h.njson, 4);
	for (int i = 0; i < 4; i++) {
		ck_assert_str_eq(h.json[i].value, f.json[i].value);
		ck_assert_str_eq(h.json[i].key, f.json[i].key);
	}
	ev_filter_free(&h);
	free(text);
	ev_filter_copy(&g, &f);
	ev_filter_free(&f);
	ck_assert_int_eq(g.njson, 4);
	ck_assert_str_eq(g.json[0].path, "$.\"orderId\"");
	ck_assert_str_eq(g.event_type, "PAY");
	ck_assert_str_eq(ev_filter_unsupported(&g, EV_TABLE_MESSAGE), "event_headers");
	ck_assert_ptr_null(ev_filter_unsupported(&g, EV_TABLE_OUTBOX));
	ev_filter_free(&g);
	ck_assert(ev_filter_empty(&g));
	ck_assert_ptr_null(ev_filter_json_text(&g));
}
END_TEST

START_TEST(bad_terms_refused)
{
	static const char *const bad[] = {
	        "payload=x",        /* no path */
	        "payload.a~x",      /* '~' takes the whole text */
	        "payload.=x",       /* empty key */
	        "payload..a=x",     /* empty key */
	        "payload.\"\"=x",   /* empty quoted key */
	        "payload.a[x]=1",   /* not a position */
	        "payload.a[]=1",    /* not a position */
	        "payload.a[1=1",    /* unterminated position */
	        "payload.a]=1",     /* a stray bracket */
	        "payload.\"open=1", /* unterminated quote */
	        "payload.a=",       /* empty value */
	        "payloadx.a=1",     /* not a payload key: unknown filter */
	        "payload.a=1 payload.b=2 payload.c=3 payload.d=4 payload.e=5", /* five terms */
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct ev_filter f = {0};
		struct ev_error err = {0};
		ck_assert_msg(ev_filter_parse(&f, bad[i], &err) < 0, "%s: accepted", bad[i]);
		ck_assert_int_eq(err.code, EV_ERR_USAGE);
		ck_assert_msg(err.msg[0] != '\0', "%s: no message", bad[i]);
		ev_filter_free(&f);
	}
	/* A value of 1000 characters is taken, 1001 refused. */
	char expr[1100] = "payload.k=";
	memset(expr + strlen(expr), 'v', 1000);
	struct ev_filter f = {0};
	struct ev_error err = {0};
	ck_assert_int_eq(ev_filter_parse(&f, expr, &err), 0);
	ev_filter_free(&f);
	strcat(expr, "v");
	ck_assert_int_lt(ev_filter_parse(&f, expr, &err), 0);
	ev_filter_free(&f);
}
END_TEST

static struct ev_query *search_query(enum ev_list_kind k, const char *expr, long long cap,
                                     int limit, struct ev_filter *f)
{
	struct ev_error err = {0};
	memset(f, 0, sizeof(*f));
	ck_assert_int_eq(ev_filter_parse(f, expr, &err), 0);
	struct ev_list_req r = {
	        .table = EV_TABLE_OUTBOX,
	        .kind = k,
	        .filter = f,
	        .limit = limit,
	        .search_cap = cap,
	        .window_s = 3600,
	};
	struct ev_query *q = ev_query_list(&r, &err);
	ck_assert_msg(q != NULL, "%s", err.msg);
	return q;
}

START_TEST(search_statement)
{
	struct ev_filter f;
	struct ev_query *q = search_query(
	        EV_LIST_FAILED, "event_type=PAY payload.orderId=O1 payload~50%", 500, 10, &f);
	ck_assert(q->search);
	ck_assert_int_eq(q->search_cap, 500);
	/* The candidates: the list's own bounded read, ids and keys only, the cap as its limit;
	 * the terms on them alone, the page last. */
	ck_assert_ptr_nonnull(strstr(q->sql,
	                             "FROM (SELECT id AS _sid, next_retry_time AS _k1, "
	                             "retry_count AS _k2 FROM `biz_outbox_event` WHERE "
	                             "deleted = 0 AND publish_status = 3 AND event_type = ? "
	                             "ORDER BY next_retry_time, retry_count, id LIMIT ?) _c"));
	ck_assert_ptr_nonnull(strstr(
	        q->sql, "ROW_NUMBER() OVER (ORDER BY _k1, _k2, _sid) AS _rn, COUNT(*) OVER () "
	                "AS _n"));
	ck_assert_ptr_nonnull(strstr(q->sql, "JOIN `biz_outbox_event` ON `biz_outbox_event`.id = "
	                                     "_s._sid) _x WHERE _hit = 1 OR _rn = _n ORDER BY _rn "
	                                     "LIMIT ?"));
	ck_assert_ptr_nonnull(strstr(q->sql, "JSON_VALID(event_payload)"));
	ck_assert_ptr_nonnull(strstr(q->sql, "event_payload LIKE ?"));
	/* Parameters in the text's order: path, value, pattern; the list's; the cap; the page. */
	ck_assert_uint_eq(q->nparams, 6);
	ck_assert_str_eq(q->params[0].s, "$.\"orderId\"");
	ck_assert_str_eq(q->params[1].s, "O1");
	ck_assert_str_eq(q->params[2].s, "%50\\%%");
	ck_assert_str_eq(q->params[3].s, "PAY");
	ck_assert_int_eq(q->params[4].i, 500);
	ck_assert_int_eq(q->params[5].i, 11);
	/* The three extra columns, last. */
	ck_assert_str_eq(q->col_names[q->ncols - 3], "_rn");
	ck_assert_str_eq(q->col_names[q->ncols - 1], "_hit");
	ev_query_free(&q);
	ev_filter_free(&f);

	/* Descending lists number their candidates descending; the default cap. */
	q = search_query(EV_LIST_RECENT, "payload.a=1", 0, 10, &f);
	ck_assert_int_eq(q->search_cap, EV_SEARCH_CAP_DEFAULT);
	ck_assert_ptr_nonnull(
	        strstr(q->sql, "ROW_NUMBER() OVER (ORDER BY _k1 DESC, _sid DESC) AS _rn"));
	ck_assert_ptr_nonnull(strstr(q->sql, "create_time >= NOW() - INTERVAL ? SECOND"));
	ev_query_free(&q);
	ev_filter_free(&f);

	/* The recent list with since= reads that range instead of the window. */
	q = search_query(EV_LIST_RECENT, "since=2026-05-01 payload.a=1", 0, 10, &f);
	ck_assert_ptr_null(strstr(q->sql, "INTERVAL"));
	ck_assert_ptr_nonnull(strstr(q->sql, "create_time >= ?"));
	ev_query_free(&q);
	ev_filter_free(&f);

	/* Without payload terms the list is as it was. */
	q = search_query(EV_LIST_FAILED, "event_type=PAY", 0, 10, &f);
	ck_assert(!q->search);
	ck_assert_ptr_null(strstr(q->sql, "_rn"));
	ev_query_free(&q);
	ev_filter_free(&f);

	/* A breakdown does not take payload terms. */
	struct ev_error err = {0};
	ck_assert_int_eq(ev_filter_parse(&f, "payload.a=1", &err), 0);
	struct ev_list_req r = {.table = EV_TABLE_OUTBOX, .kind = EV_LIST_FAILED, .filter = &f};
	ck_assert_ptr_null(ev_query_group(&r, "fail_reason", &err));
	ck_assert_int_eq(err.code, EV_ERR_USAGE);
	ev_filter_free(&f);
}
END_TEST

/* A page as the server returns it for a failed-list search: rows (id, next_retry_time,
 * retry_count, _rn, _n, _hit). */
static struct ev_rowset *page(const char *const rows[][6], size_t n)
{
	static const char *const names[] = {"id",  "next_retry_time", "retry_count", "_rn", "_n",
	                                    "_hit"};
	static const enum ev_ctype types[] = {EV_CT_ID,  EV_CT_DATETIME, EV_CT_INT,
	                                      EV_CT_INT, EV_CT_INT,      EV_CT_INT};
	struct ev_rowset *rs = ev_rowset_new(6, names, types);
	for (size_t r = 0; r < n; r++) {
		struct ev_cell *c = ev_rowset_add_row(rs);
		for (int k = 0; k < 6; k++)
			ev_cell_set(&c[k], rows[r][k], rows[r][k] ? strlen(rows[r][k]) : 0);
	}
	return rs;
}

START_TEST(fold_matches_and_the_stop)
{
	struct ev_filter f;
	struct ev_query *q = search_query(EV_LIST_FAILED, "payload.a=1", 100, 2, &f);

	/* The cap reached, the page not full: the stop is the last candidate (not a match). */
	static const char *const a[][6] = {
	        {"7", NULL, "1", "3", "100", "1"},
	        {"9", "2026-06-01 10:00:00", "2", "100", "100", "0"},
	};
	struct ev_rowset *rs = page(a, 2);
	struct ev_list_page pg;
	ev_list_take_page(q, &rs, &pg);
	ck_assert_uint_eq(rs->ncols, 3);
	ck_assert_uint_eq(rs->nrows, 1);
	ck_assert_str_eq(ev_rowset_get(rs, 0, "id"), "7");
	/* Folding a folded page again changes nothing. */
	unsigned long long again = 1;
	struct ev_cursor again_stop;
	ev_list_search_fold(q, &rs, &again, &again_stop);
	ck_assert_uint_eq(rs->ncols, 3);
	ck_assert_uint_eq(rs->nrows, 1);
	ck_assert_uint_eq(again, 0);
	ck_assert(pg.search && pg.more && pg.stopped);
	ck_assert_uint_eq(pg.examined, 100);
	ck_assert(pg.next.set && pg.next.has_mid);
	ck_assert_uint_eq(pg.next.id, 9);
	ck_assert_int_eq(pg.next.mid, 2);
	char *note = ev_list_search_note(&pg, rs->nrows);
	ck_assert_str_eq(note, "1 match; stopped at 100 rows examined: narrow the window, or the "
	                       "next page goes on");
	free(note);
	ev_rowset_free(&rs);

	/* Under the cap: the rows of the set are all examined, no more. */
	static const char *const b[][6] = {
	        {"7", NULL, "1", "3", "99", "1"},
	        {"8", NULL, "1", "99", "99", "0"},
	};
	rs = page(b, 2);
	ev_list_take_page(q, &rs, &pg);
	ck_assert_uint_eq(rs->nrows, 1);
	ck_assert(!pg.more && !pg.stopped);
	ck_assert_uint_eq(pg.examined, 99);
	note = ev_list_search_note(&pg, rs->nrows);
	ck_assert_str_eq(note, "1 match in 99 rows examined");
	free(note);
	ev_rowset_free(&rs);
	struct ev_list_page big = {.search = true, .more = true, .examined = 48213};
	note = ev_list_search_note(&big, 1234);
	ck_assert_str_eq(note, "1,234 matches in 48,213 rows examined (more on the next page)");
	free(note);
	big.examined = 1000000;
	big.stopped = true;
	note = ev_list_search_note(&big, 0);
	ck_assert_str_eq(note, "0 matches; stopped at 1,000,000 rows examined: narrow the "
	                       "window, or the next page goes on");
	free(note);
	struct ev_list_page none = {0};
	ck_assert_ptr_null(ev_list_search_note(&none, 3));

	/* A full page of matches (limit + 1): more, from the page's last row, as any list. */
	static const char *const c[][6] = {
	        {"1", NULL, "0", "1", "100", "1"},
	        {"2", NULL, "0", "2", "100", "1"},
	        {"3", NULL, "0", "5", "100", "1"},
	};
	rs = page(c, 3);
	ev_list_take_page(q, &rs, &pg);
	ck_assert_uint_eq(rs->nrows, 2);
	ck_assert(pg.more && !pg.stopped);
	ck_assert_uint_eq(pg.next.id, 2);
	ev_rowset_free(&rs);

	/* The last candidate a match at the cap: kept, and the search goes on after it. */
	static const char *const d[][6] = {
	        {"4", NULL, "0", "100", "100", "1"},
	};
	rs = page(d, 1);
	ev_list_take_page(q, &rs, &pg);
	ck_assert_uint_eq(rs->nrows, 1);
	ck_assert(pg.more && pg.stopped);
	ck_assert_uint_eq(pg.next.id, 4);
	ev_rowset_free(&rs);

	/* No candidate at all. */
	rs = page(d, 0);
	ev_list_take_page(q, &rs, &pg);
	ck_assert_uint_eq(rs->nrows, 0);
	ck_assert(!pg.more);
	ck_assert_uint_eq(pg.examined, 0);
	ev_rowset_free(&rs);
	ev_query_free(&q);
	ev_filter_free(&f);

	/* A list without terms: nothing folded. */
	struct ev_query plain = {.limit = 2};
	unsigned long long examined = 7;
	struct ev_cursor stop = {.set = true};
	rs = page(a, 2);
	ev_list_search_fold(&plain, &rs, &examined, &stop);
	ck_assert_uint_eq(rs->ncols, 6);
	ck_assert_uint_eq(examined, 0);
	ck_assert(!stop.set);
	ev_rowset_free(&rs);
}
END_TEST

/* Two sources merged: source 0 stopped at its cap at next_retry_time 10:00; source 1's rows
 * past that wait for the next page, and source 0 goes on from its stop. */
START_TEST(merge_waits_at_a_stop)
{
	struct ev_filter f, f1;
	struct ev_query *q0 = search_query(EV_LIST_FAILED, "payload.a=1", 100, 5, &f);
	struct ev_query *q1 = search_query(EV_LIST_FAILED, "payload.a=1", 100, 5, &f1);
	static const char *const s0[][6] = {
	        {"1", "2026-06-01 09:00:00", "0", "1", "100", "1"},
	        {"2", "2026-06-01 10:00:00", "0", "100", "100", "0"},
	};
	static const char *const s1[][6] = {
	        {"5", "2026-06-01 08:00:00", "0", "1", "9", "1"},
	        {"6", "2026-06-01 09:30:00", "0", "2", "9", "1"},
	        {"7", "2026-06-01 11:00:00", "0", "3", "9", "1"},
	        {"8", "2026-06-01 12:00:00", "0", "9", "9", "1"},
	};
	struct ev_rowset *rs[2] = {page(s0, 2), page(s1, 4)};
	struct ev_query *qs[2] = {q0, q1};
	struct ev_cursor stop[2];
	unsigned long long examined;
	ev_list_search_fold(q0, &rs[0], &examined, &stop[0]);
	ck_assert(stop[0].set);
	ev_list_search_fold(q1, &rs[1], &examined, &stop[1]);
	ck_assert(!stop[1].set);
	const char *names[] = {"a", "b"};
	struct ev_mcursor mc[2] = {{.name = "a"}, {.name = "b"}};
	bool more = false;
	struct ev_rowset *m = ev_list_merge(qs, rs, names, 2, 5, stop, mc, &more);
	ck_assert_ptr_nonnull(m);
	/* 5 (08:00), 1 (09:00), 6 (09:30); not 7 (11:00), past a's stop at 10:00. */
	ck_assert_uint_eq(m->nrows, 3);
	ck_assert_str_eq(ev_rowset_get(m, 0, "id"), "5");
	ck_assert_str_eq(ev_rowset_get(m, 1, "id"), "1");
	ck_assert_str_eq(ev_rowset_get(m, 2, "id"), "6");
	ck_assert(more);
	ck_assert_int_eq(mc[0].state, EV_MC_AT);
	ck_assert_uint_eq(mc[0].c.id, 2);
	ck_assert_int_eq(mc[1].state, EV_MC_AT);
	ck_assert_uint_eq(mc[1].c.id, 6);
	ev_rowset_free(&m);
	/* Without the stop the merge would have taken 7 and 8. */
	struct ev_mcursor mc2[2] = {{.name = "a"}, {.name = "b"}};
	m = ev_list_merge(qs, rs, names, 2, 5, NULL, mc2, &more);
	ck_assert_uint_eq(m->nrows, 5);
	ev_rowset_free(&m);
	ev_rowset_free(&rs[0]);
	ev_rowset_free(&rs[1]);
	ev_query_free(&q0);
	ev_query_free(&q1);
	ev_filter_free(&f);
	ev_filter_free(&f1);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("search");
	TCase *tc = tcase_create("search");
	tcase_add_test(tc, paths_quote_every_key);
	tcase_add_test(tc, terms_as_written);
	tcase_add_test(tc, bad_terms_refused);
	tcase_add_test(tc, search_statement);
	tcase_add_test(tc, fold_matches_and_the_stop);
	tcase_add_test(tc, merge_waits_at_a_stop);
	suite_add_tcase(s, tc);
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
