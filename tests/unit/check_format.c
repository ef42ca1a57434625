/* core/rowset and core/format: result sets and their table, json and csv output. */
#include <config.h>

#include "core/format.h"
#include "core/rowset.h"

#include <check.h>
#include <jansson.h>
#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A rowset of nrows x ncols from vals (row-major; NULL is SQL NULL). */
static struct ev_rowset *make(size_t ncols, const char *const *names, const enum ev_ctype *types,
                              size_t nrows, const char *const *vals)
{
	struct ev_rowset *rs = ev_rowset_new(ncols, names, types);

	for (size_t r = 0; r < nrows; r++) {
		struct ev_cell *row = ev_rowset_add_row(rs);

		for (size_t c = 0; c < ncols; c++) {
			const char *v = vals[r * ncols + c];

			ev_cell_set(&row[c], v, v ? strlen(v) : 0);
		}
	}
	return rs;
}

static char *render(const struct ev_rowset *rs, enum ev_format fmt, int max_width)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(ev_format_write(f, rs, fmt, max_width), 0);
	ck_assert_int_eq(fclose(f), 0);
	ck_assert_uint_eq(strlen(text), len);
	return text;
}

/* Parse the whole output as JSON: whatever the cells hold, the output must stay JSON. */
static json_t *parse(const char *text)
{
	json_error_t error;
	json_t *j = json_loads(text, JSON_DECODE_ANY | JSON_DECODE_INT_AS_REAL | JSON_ALLOW_NUL,
	                       &error);

	ck_assert_msg(j != NULL, "output is not JSON: %s (line %d): %s", error.text, error.line,
	              text);
	return j;
}

START_TEST(rowset_cells_and_lookup)
{
	static const char *const names[] = {"id", "name"};
	static const enum ev_ctype types[] = {EV_CT_ID, EV_CT_TEXT};
	char name[] = "first";
	struct ev_rowset *rs = ev_rowset_new(2, names, types);

	ck_assert_uint_eq(rs->ncols, 2);
	ck_assert_uint_eq(rs->nrows, 0);
	ck_assert_str_eq(rs->cols[1].name, "name");
	ck_assert_int_eq(rs->cols[0].type, EV_CT_ID);

	struct ev_cell *row = ev_rowset_add_row(rs);
	ck_assert_ptr_null(row[0].s);
	ck_assert_ptr_null(row[1].s);
	ev_cell_set(&row[0], "17", 2);
	ev_cell_set(&row[1], name, strlen(name));
	/* The cell holds a copy. */
	name[0] = 'F';
	ck_assert_str_eq(ev_rowset_get(rs, 0, "name"), "first");
	/* Setting again replaces (and frees) the old value; NULL stores SQL NULL. */
	ev_cell_set(&row[1], "second", 3);
	ck_assert_str_eq(ev_rowset_get(rs, 0, "name"), "sec");
	ck_assert_uint_eq(ev_rowset_cell(rs, 0, 1)->len, 3);
	ev_cell_set(&row[1], NULL, 0);
	ck_assert_ptr_null(ev_rowset_get(rs, 0, "name"));
	ck_assert_uint_eq(ev_rowset_cell(rs, 0, 1)->len, 0);

	ck_assert_int_eq(ev_rowset_col(rs, "id"), 0);
	ck_assert_int_eq(ev_rowset_col(rs, "name"), 1);
	ck_assert_int_eq(ev_rowset_col(rs, "nope"), -1);
	ck_assert_int_eq(ev_rowset_col(rs, "ID"), -1);
	/* An unknown column reads as "", not as NULL. */
	ck_assert_str_eq(ev_rowset_get(rs, 0, "nope"), "");
	ck_assert_str_eq(ev_rowset_get(rs, 0, "id"), "17");
	ck_assert_ptr_null(ev_rowset_cell(rs, 1, 0));
	ck_assert_ptr_null(ev_rowset_cell(rs, 0, 2));

	ev_rowset_free(&rs);
	ck_assert_ptr_null(rs);
	ev_rowset_free(&rs);
}
END_TEST

START_TEST(rowset_grows)
{
	static const char *const names[] = {"n", "sq"};
	static const enum ev_ctype types[] = {EV_CT_INT, EV_CT_INT};
	struct ev_rowset *rs = ev_rowset_new(2, names, types);
	char buf[32];

	for (int i = 0; i < 1000; i++) {
		struct ev_cell *row = ev_rowset_add_row(rs);
		int n = snprintf(buf, sizeof(buf), "%d", i);

		ev_cell_set(&row[0], buf, (size_t)n);
		n = snprintf(buf, sizeof(buf), "%d", i * i);
		ev_cell_set(&row[1], buf, (size_t)n);
	}
	ck_assert_uint_eq(rs->nrows, 1000);
	ck_assert_uint_ge(rs->cap, 1000);
	/* Geometric growth: far fewer than one allocation per row, so cap is not nrows + k. */
	ck_assert_uint_lt(rs->cap, 4000);
	for (size_t r = 0; r < 1000; r += 111) {
		snprintf(buf, sizeof(buf), "%zu", r * r);
		ck_assert_str_eq(ev_rowset_get(rs, r, "sq"), buf);
	}
	ck_assert_str_eq(ev_rowset_get(rs, 999, "n"), "999");
	ev_rowset_free(&rs);
}
END_TEST

START_TEST(rowset_keeps_nul_bytes)
{
	static const char *const names[] = {"v"};
	struct ev_rowset *rs = ev_rowset_new(1, names, NULL);
	struct ev_cell *row = ev_rowset_add_row(rs);

	ev_cell_set(&row[0], "a\0b", 3);
	ck_assert_int_eq(rs->cols[0].type, EV_CT_TEXT);
	ck_assert_uint_eq(ev_rowset_cell(rs, 0, 0)->len, 3);
	ck_assert_int_eq(memcmp(ev_rowset_cell(rs, 0, 0)->s, "a\0b", 4), 0);
	ev_rowset_free(&rs);
}
END_TEST

START_TEST(format_parse_names)
{
	enum ev_format f = EV_FMT_CSV;

	ck_assert_int_eq(ev_format_parse("table", &f), 0);
	ck_assert_int_eq(f, EV_FMT_TABLE);
	ck_assert_int_eq(ev_format_parse("json", &f), 0);
	ck_assert_int_eq(f, EV_FMT_JSON);
	ck_assert_int_eq(ev_format_parse("csv", &f), 0);
	ck_assert_int_eq(f, EV_FMT_CSV);
	f = EV_FMT_TABLE;
	ck_assert_int_eq(ev_format_parse("JSON", &f), -1);
	ck_assert_int_eq(ev_format_parse("jso", &f), -1);
	ck_assert_int_eq(ev_format_parse("csv ", &f), -1);
	ck_assert_int_eq(ev_format_parse("", &f), -1);
	ck_assert_int_eq(ev_format_parse(NULL, &f), -1);
	ck_assert_int_eq(f, EV_FMT_TABLE);
	/* The names shell completion offers are exactly those the parser takes. */
	size_t n = 0;
	for (const char *name; (name = ev_format_name(n)) != NULL; n++)
		ck_assert_int_eq(ev_format_parse(name, &f), 0);
	ck_assert_uint_eq(n, 3);
	ck_assert_str_eq(ev_format_name(0), "table");
	ck_assert_str_eq(ev_format_name(2), "csv");
}
END_TEST

START_TEST(table_aligns_cjk_and_numbers)
{
	static const char *const names[] = {"id", "name", "qty", "note"};
	static const enum ev_ctype types[] = {EV_CT_ID, EV_CT_TEXT, EV_CT_INT, EV_CT_TEXT};
	static const char *const vals[] = {
	        "7",     "订单", "3",  "x",         /* */
	        "12345", "ab",   NULL, "",          /* */
	        "42",    NULL,   "-1", "long note", /* */
	};
	struct ev_rowset *rs = make(4, names, types, 3, vals);
	char *out = render(rs, EV_FMT_TABLE, 0);

	/* "订单" is 4 columns wide (6 bytes); the empty last value leaves no trailing spaces. */
	ck_assert_str_eq(out, "   id  name   qty  note\n"
	                      "    7  订单     3  x\n"
	                      "12345  ab    NULL\n"
	                      "   42  NULL    -1  long note\n");
	free(out);
	ev_rowset_free(&rs);
}
END_TEST

START_TEST(table_cuts_at_max_width)
{
	static const char *const names[] = {"name", "id"};
	static const enum ev_ctype types[] = {EV_CT_TEXT, EV_CT_ID};
	static const char *const vals[] = {
	        "abcdefgh",      "1234567", /* */
	        "订单订单",      "12",      /* */
	        "ab\x1b[31mred", NULL,      /* */
	        "abcde",         "1",       /* */
	};
	struct ev_rowset *rs = make(2, names, types, 4, vals);
	char *out = render(rs, EV_FMT_TABLE, 5);

	/* ESC shows as U+241B; a value that fits exactly is not cut. */
	ck_assert_str_eq(out, "name      id\n"
	                      "abcd…  1234…\n"
	                      "订单…     12\n"
	                      "ab␛[…   NULL\n"
	                      "abcde      1\n");
	free(out);
	ev_rowset_free(&rs);
}
END_TEST

START_TEST(table_never_splits_wide_chars)
{
	static const char *const names[] = {"k", "v"};
	static const enum ev_ctype types[] = {EV_CT_TEXT, EV_CT_TEXT};
	static const char *const vals[] = {"订单订单", "z"};
	struct ev_rowset *rs = make(2, names, types, 1, vals);
	char *out = render(rs, EV_FMT_TABLE, 4);

	/* 3 columns left before "…" hold one CJK character; a space pads to 4. */
	ck_assert_str_eq(out, "k     v\n"
	                      "订…   z\n");
	free(out);
	ev_rowset_free(&rs);
}
END_TEST

START_TEST(table_no_rows_is_header_only)
{
	static const char *const names[] = {"id", "name"};
	static const enum ev_ctype types[] = {EV_CT_ID, EV_CT_TEXT};
	struct ev_rowset *rs = make(2, names, types, 0, NULL);
	char *out = render(rs, EV_FMT_TABLE, 0);

	ck_assert_str_eq(out, "id  name\n");
	free(out);
	ev_rowset_free(&rs);
}
END_TEST

START_TEST(json_types_and_payloads)
{
	static const char *const names[] = {"id", "amount", "payload", "note"};
	static const enum ev_ctype types[] = {EV_CT_ID, EV_CT_INT, EV_CT_JSON, EV_CT_TEXT};
	static const char *const vals[] = {
	        "18446744073709551615",
	        "42",
	        "{\"amount\": 199.00, \"a\":1, \"a\":2}",
	        "esc\x1b[31m \"q\" \\ \n\t\r\b\f\x01\x7f 订单",
	        /* */
	        "1",
	        NULL,
	        "{oops",
	        NULL,
	        /* */
	        "2",
	        "+5",
	        "1e-7",
	        "2024-01-02 03:04:05",
	        /* */
	        "3",
	        "-0",
	        "[18446744073709551615, -1e-7, \"x\"]",
	        "",
	};
	struct ev_rowset *rs = make(4, names, types, 4, vals);
	char *out = render(rs, EV_FMT_JSON, 0);

	ck_assert_str_eq(
	        out,
	        "[\n"
	        "{\"id\":\"18446744073709551615\",\"amount\":42,"
	        "\"payload\":{\"amount\": 199.00, \"a\":1, \"a\":2},"
	        "\"note\":\"esc\\u001b[31m \\\"q\\\" \\\\ \\n\\t\\r\\b\\f\\u0001\\u007f 订单\"},\n"
	        "{\"id\":\"1\",\"amount\":null,\"payload\":\"{oops\",\"note\":null},\n"
	        "{\"id\":\"2\",\"amount\":\"+5\",\"payload\":1e-7,"
	        "\"note\":\"2024-01-02 03:04:05\"},\n"
	        "{\"id\":\"3\",\"amount\":-0,"
	        "\"payload\":[18446744073709551615, -1e-7, \"x\"],\"note\":\"\"}\n"
	        "]\n");

	json_t *j = parse(out);
	ck_assert(json_is_array(j));
	ck_assert_uint_eq(json_array_size(j), 4);
	json_t *o = json_array_get(j, 0);
	ck_assert_str_eq(json_string_value(json_object_get(o, "id")), "18446744073709551615");
	ck_assert_str_eq(json_string_value(json_object_get(o, "note")), vals[3]);
	ck_assert(json_is_object(json_object_get(o, "payload")));
	o = json_array_get(j, 1);
	ck_assert_str_eq(json_string_value(json_object_get(o, "payload")), "{oops");
	ck_assert(json_is_null(json_object_get(o, "note")));
	ck_assert(json_is_null(json_object_get(o, "amount")));
	json_decref(j);
	free(out);
	ev_rowset_free(&rs);
}
END_TEST

START_TEST(json_empty_set)
{
	static const char *const names[] = {"id"};
	static const enum ev_ctype types[] = {EV_CT_ID};
	struct ev_rowset *rs = make(1, names, types, 0, NULL);
	char *out = render(rs, EV_FMT_JSON, 0);

	ck_assert_str_eq(out, "[]\n");
	json_t *j = parse(out);
	ck_assert_uint_eq(json_array_size(j), 0);
	json_decref(j);
	free(out);
	ev_rowset_free(&rs);
}
END_TEST

START_TEST(json_bad_bytes_stay_json)
{
	static const char *const names[] = {"t\"x", "p"};
	static const enum ev_ctype types[] = {EV_CT_TEXT, EV_CT_JSON};
	static const char *const vals[] = {
	        "a\xff b \xc2\x9b c\xe8\xae",
	        "{\"a\":\"\xff\"}", /* invalid UTF-8 */
	        "ok",
	        "\n{\n  \"a\": [1,\n 2],\t\"s\": \"x \\\" y\xc2\x9b\x7f\"\n}\n",
	        "",
	        "\"nul \\u0000 escaped\"", /* */
	        "",
	        "", /* */
	};
	struct ev_rowset *rs = make(2, names, types, 4, vals);
	char *out = render(rs, EV_FMT_JSON, 0);

	/* Invalid bytes become \ufffd; a pretty payload joins one line with its whitespace
	 * folded, C1 and DEL inside its strings escaped; an empty payload is not JSON. */
	ck_assert_str_eq(
	        out,
	        "[\n"
	        "{\"t\\\"x\":\"a\\ufffd b \\u009b "
	        "c\\ufffd\\ufffd\",\"p\":\"{\\\"a\\\":\\\"\\ufffd\\\"}\"},\n"
	        "{\"t\\\"x\":\"ok\",\"p\":{ \"a\": [1, 2], \"s\": \"x \\\" y\\u009b\\u007f\" }},\n"
	        "{\"t\\\"x\":\"\",\"p\":\"nul \\u0000 escaped\"},\n"
	        "{\"t\\\"x\":\"\",\"p\":\"\"}\n"
	        "]\n");
	json_decref(parse(out));
	free(out);
	ev_rowset_free(&rs);
}
END_TEST

START_TEST(csv_quotes_and_sanitises)
{
	static const char *const names[] = {"id", "name", "note"};
	static const enum ev_ctype types[] = {EV_CT_ID, EV_CT_TEXT, EV_CT_JSON};
	static const char *const vals[] = {
	        "1", "a,b",          "say \"hi\"",         /* */
	        "2", "line1\nline2", NULL,                 /* */
	        "3", " pad",         "",                   /* */
	        "4", "esc\x1b[0m",   "{\"k\": [1,\r\n2]}", /* */
	        "5", "订单",         "tail ",              /* */
	};
	struct ev_rowset *rs = make(3, names, types, 5, vals);
	char *out = render(rs, EV_FMT_CSV, 0);

	/* NULL is an empty field; an empty string is "" so the two read back apart. */
	ck_assert_str_eq(out, "id,name,note\n"
	                      "1,\"a,b\",\"say \"\"hi\"\"\"\n"
	                      "2,line1␊line2,\n"
	                      "3,\" pad\",\"\"\n"
	                      "4,esc␛[0m,\"{\"\"k\"\": [1,␍␊2]}\"\n"
	                      "5,订单,\"tail \"\n");
	for (const char *p = out; *p; p++)
		ck_assert_msg((unsigned char)*p >= 0x20 || *p == '\n', "control byte in CSV");
	free(out);
	ev_rowset_free(&rs);
}
END_TEST

START_TEST(nul_byte_in_every_format)
{
	static const char *const names[] = {"v", "n"};
	static const enum ev_ctype types[] = {EV_CT_TEXT, EV_CT_JSON};
	struct ev_rowset *rs = ev_rowset_new(2, names, types);
	struct ev_cell *row = ev_rowset_add_row(rs);
	char *out;

	ev_cell_set(&row[0], "a\0b", 3);
	/* Valid JSON followed by a NUL byte is not JSON. */
	ev_cell_set(&row[1], "{}\0", 3);

	out = render(rs, EV_FMT_TABLE, 0);
	ck_assert_str_eq(out, "v    n\n"
	                      "a␀b  {}␀\n");
	free(out);
	out = render(rs, EV_FMT_JSON, 0);
	ck_assert_str_eq(out, "[\n{\"v\":\"a\\u0000b\",\"n\":\"{}\\u0000\"}\n]\n");
	free(out);
	out = render(rs, EV_FMT_CSV, 0);
	ck_assert_str_eq(out, "v,n\na␀b,{}␀\n");
	free(out);
	ev_rowset_free(&rs);
}
END_TEST

START_TEST(write_error_is_reported)
{
	static const char *const names[] = {"v"};
	static const char *const vals[] = {"x"};
	struct ev_rowset *rs = make(1, names, NULL, 1, vals);
	FILE *f = fopen("/dev/full", "w");

	if (f == NULL) {
		ev_rowset_free(&rs);
		return;
	}
	ck_assert_int_eq(ev_format_write(f, rs, EV_FMT_CSV, 0), -1);
	fclose(f);
	ck_assert_int_eq(ev_format_write(stdout, rs, (enum ev_format)99, 0), -1);
	ev_rowset_free(&rs);
}
END_TEST

/* One row as its own JSON object, the same text the json format gives that row. */
START_TEST(one_row_as_json)
{
	const char *names[] = {"id", "event_no", "event_payload", "remark"};
	enum ev_ctype types[] = {EV_CT_ID, EV_CT_TEXT, EV_CT_JSON, EV_CT_TEXT};
	const char *vals[] = {"18446744073709551615",
	                      "OB-\x1b[2J",
	                      "{\"amount\": 199.00}",
	                      NULL,
	                      "2",
	                      "OB-2",
	                      "not json",
	                      "x"};
	struct ev_rowset *rs = make(4, names, types, 2, vals);
	char *one = ev_format_row_json(rs, 0);
	ck_assert_str_eq(one, "{\"id\":\"18446744073709551615\",\"event_no\":\"OB-\\u001b[2J\","
	                      "\"event_payload\":{\"amount\": 199.00},\"remark\":null}");
	char *all = render(rs, EV_FMT_JSON, 0);
	ck_assert_ptr_nonnull(strstr(all, one));
	free(one);
	one = ev_format_row_json(rs, 1);
	ck_assert_ptr_nonnull(strstr(all, one));
	ck_assert_ptr_null(ev_format_row_json(rs, 2));
	free(one);
	free(all);
	ev_rowset_free(&rs);
}
END_TEST

int main(void)
{
	setlocale(LC_CTYPE, "C.UTF-8");
	Suite *s = suite_create("format");
	TCase *tc = tcase_create("format");
	tcase_add_test(tc, rowset_cells_and_lookup);
	tcase_add_test(tc, rowset_grows);
	tcase_add_test(tc, rowset_keeps_nul_bytes);
	tcase_add_test(tc, format_parse_names);
	tcase_add_test(tc, table_aligns_cjk_and_numbers);
	tcase_add_test(tc, table_cuts_at_max_width);
	tcase_add_test(tc, table_never_splits_wide_chars);
	tcase_add_test(tc, table_no_rows_is_header_only);
	tcase_add_test(tc, json_types_and_payloads);
	tcase_add_test(tc, json_empty_set);
	tcase_add_test(tc, json_bad_bytes_stay_json);
	tcase_add_test(tc, csv_quotes_and_sanitises);
	tcase_add_test(tc, nul_byte_in_every_format);
	tcase_add_test(tc, write_error_is_reported);
	tcase_add_test(tc, one_row_as_json);
	suite_add_tcase(s, tc);
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? 0 : 1;
}
