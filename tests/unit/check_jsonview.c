/* core/jsonview: the payload pretty-printer — golden lines, spans, folding, search, raw view. */
#include <config.h>

#include "core/jsonview.h"
#include "core/text.h"
#include "core/util.h"

#include <check.h>
#include <locale.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define FFFD     "\xEF\xBF\xBD" /* U+FFFD */
#define PIC_NUL  "\xE2\x90\x80" /* U+2400 */
#define PIC_CR   "\xE2\x90\x8D"
#define PIC_ESC  "\xE2\x90\x9B"
#define CONT     "\xE2\x86\xAA" /* "↪" */
#define NOT_JSON "⚠ not valid JSON — shown as stored"

#define K EV_STYLE_JSON_KEY
#define S EV_STYLE_JSON_STRING
#define N EV_STYLE_JSON_NUMBER
#define L EV_STYLE_JSON_LITERAL
#define P EV_STYLE_JSON_PUNCT
#define F EV_STYLE_JSON_FOLD

/* The order payload most tests fold and search. */
static const char ORDER[] = "{\"id\":17,\"order\":{\"items\":[{\"sku\":\"A1\",\"qty\":2},"
                            "{\"sku\":\"B2\",\"qty\":1}],\"total\":199.00},"
                            "\"tags\":[\"x\",\"y\"],\"ok\":true,\"none\":null}";

static const char ORDER_LINES[] = "{\n"
                                  "  \"id\": 17,\n"
                                  "  \"order\": {\n"
                                  "    \"items\": [\n"
                                  "      {\n"
                                  "        \"sku\": \"A1\",\n"
                                  "        \"qty\": 2\n"
                                  "      },\n"
                                  "      {\n"
                                  "        \"sku\": \"B2\",\n"
                                  "        \"qty\": 1\n"
                                  "      }\n"
                                  "    ],\n"
                                  "    \"total\": 199.00\n"
                                  "  },\n"
                                  "  \"tags\": [\n"
                                  "    \"x\",\n"
                                  "    \"y\"\n"
                                  "  ],\n"
                                  "  \"ok\": true,\n"
                                  "  \"none\": null\n"
                                  "}\n";

/* Every line is sanitised text with sane spans: the invariants any view must keep. */
static void check_line(const struct ev_jline *l)
{
	size_t at = 0;

	ck_assert_ptr_nonnull(l->text);
	ck_assert_uint_eq(strlen(l->text), l->len);
	for (size_t i = 0; i < l->len; i++)
		ck_assert_msg((unsigned char)l->text[i] >= 0x20 && l->text[i] != 0x7F,
		              "control byte 0x%02x at %zu in \"%s\"", (unsigned char)l->text[i], i,
		              l->text);
	for (size_t i = 0; i < l->nspans; i++) {
		ck_assert_uint_ge(l->spans[i].off, at);
		ck_assert_uint_gt(l->spans[i].len, 0);
		at = l->spans[i].off + l->spans[i].len;
		ck_assert_uint_le(at, l->len);
	}
	ck_assert_int_ge(l->depth, 0);
}

/* All lines of v, each followed by '\n' (caller frees). */
static char *dump(struct ev_jsonview *v)
{
	struct ev_buf b;

	ev_buf_init(&b);
	for (size_t i = 0; i < ev_jsonview_line_count(v); i++) {
		const struct ev_jline *l = ev_jsonview_line(v, i);

		check_line(l);
		ev_buf_add(&b, l->text, l->len);
		ev_buf_addc(&b, '\n');
	}
	return ev_buf_steal(&b);
}

#define ck_dump(v, want)                                                                           \
	do {                                                                                       \
		char *got_ = dump(v);                                                              \
		ck_assert_str_eq(got_, (want));                                                    \
		free(got_);                                                                        \
	} while (0)

/* Build a view of a C string and compare all its lines. */
#define ck_view(text, want)                                                                        \
	do {                                                                                       \
		struct ev_jsonview *v_ = ev_jsonview_new((text), strlen(text), 0);                 \
		ck_assert_msg(ev_jsonview_valid(v_), "not valid: %s", ev_jsonview_error(v_));      \
		ck_assert_ptr_null(ev_jsonview_error(v_));                                         \
		ck_dump(v_, (want));                                                               \
		ev_jsonview_free(&v_);                                                             \
	} while (0)

struct span {
	size_t off, len;
	enum ev_style style;
};

static void ck_spans(const struct ev_jline *l, const struct span *want, size_t n)
{
	ck_assert_uint_eq(l->nspans, n);
	for (size_t i = 0; i < n; i++) {
		ck_assert_uint_eq(l->spans[i].off, want[i].off);
		ck_assert_uint_eq(l->spans[i].len, want[i].len);
		ck_assert_int_eq(l->spans[i].style, want[i].style);
	}
}

#define CK_SPANS(l, ...)                                                                           \
	do {                                                                                       \
		const struct span w_[] = {__VA_ARGS__};                                            \
		ck_spans((l), w_, sizeof(w_) / sizeof(w_[0]));                                     \
	} while (0)

static const char *line_text(struct ev_jsonview *v, long i)
{
	ck_assert_int_ge(i, 0);
	ck_assert_uint_lt((size_t)i, ev_jsonview_line_count(v));
	return ev_jsonview_line(v, (size_t)i)->text;
}

START_TEST(nested_objects_and_arrays)
{
	struct ev_jsonview *v = ev_jsonview_new(ORDER, strlen(ORDER), 0);
	const struct ev_jline *l;

	ck_assert(ev_jsonview_valid(v));
	ck_assert_uint_eq(ev_jsonview_line_count(v), 22);
	ck_dump(v, ORDER_LINES);
	/* Depth and fold marks: "order" opens a foldable object, its close line does not. */
	l = ev_jsonview_line(v, 2);
	ck_assert_int_eq(l->depth, 1);
	ck_assert(l->foldable);
	ck_assert(!l->folded);
	ck_assert(!l->cont);
	l = ev_jsonview_line(v, 9);
	ck_assert_int_eq(l->depth, 4);
	ck_assert(!l->foldable);
	l = ev_jsonview_line(v, 14);
	ck_assert_str_eq(l->text, "  },");
	ck_assert_int_eq(l->depth, 1);
	ck_assert(!l->foldable);
	ck_assert(ev_jsonview_line(v, 0)->foldable);
	ev_jsonview_free(&v);
	ck_assert_ptr_null(v);
	ev_jsonview_free(&v);
	ev_jsonview_free(NULL);

	/* Whitespace of the stored text is not kept; the layout is canonical. */
	ck_view(" \r\n\t{ \"a\" :\n[ 1 ,2 ] }\n ", "{\n  \"a\": [\n    1,\n    2\n  ]\n}\n");
}
END_TEST

START_TEST(spans_of_a_small_case)
{
	static const char text[] = "{\"a\": [1, \"s\", true], \"b\": {}}";
	struct ev_jsonview *v = ev_jsonview_new(text, strlen(text), 0);
	long at;

	ck_dump(v, "{\n"
	           "  \"a\": [\n"
	           "    1,\n"
	           "    \"s\",\n"
	           "    true\n"
	           "  ],\n"
	           "  \"b\": {}\n"
	           "}\n");
	CK_SPANS(ev_jsonview_line(v, 0), {0, 1, P});
	CK_SPANS(ev_jsonview_line(v, 1), {2, 3, K}, {5, 1, P}, {7, 1, P});
	CK_SPANS(ev_jsonview_line(v, 2), {4, 1, N}, {5, 1, P});
	CK_SPANS(ev_jsonview_line(v, 3), {4, 3, S}, {7, 1, P});
	CK_SPANS(ev_jsonview_line(v, 4), {4, 4, L});
	CK_SPANS(ev_jsonview_line(v, 5), {2, 1, P}, {3, 1, P});
	CK_SPANS(ev_jsonview_line(v, 6), {2, 3, K}, {5, 1, P}, {7, 2, P});
	CK_SPANS(ev_jsonview_line(v, 7), {0, 1, P});

	/* Folded: "[…]" (5 bytes) and the count are JSON_FOLD, the comma stays punctuation. */
	at = ev_jsonview_toggle(v, 3);
	ck_assert_int_eq(at, 1);
	ck_assert_str_eq(line_text(v, 1), "  \"a\": […] 3 items,");
	CK_SPANS(ev_jsonview_line(v, 1), {2, 3, K}, {5, 1, P}, {7, 5, F}, {13, 7, F}, {20, 1, P});
	ck_assert(ev_jsonview_line(v, 1)->folded);
	ck_assert_uint_eq(ev_jsonview_line_count(v), 4);
	ev_jsonview_free(&v);
}
END_TEST

START_TEST(numbers_kept_verbatim)
{
	ck_view("[199.00, 1e-7, -0, 18446744073709551616, -9223372036854775809, 1E+300, 0.1000,"
	        " -0.0e-0]",
	        "[\n"
	        "  199.00,\n"
	        "  1e-7,\n"
	        "  -0,\n"
	        "  18446744073709551616,\n"
	        "  -9223372036854775809,\n"
	        "  1E+300,\n"
	        "  0.1000,\n"
	        "  -0.0e-0\n"
	        "]\n");
	ck_view("{\"amount\":199.00,\"big\":123456789012345678901234567890}",
	        "{\n"
	        "  \"amount\": 199.00,\n"
	        "  \"big\": 123456789012345678901234567890\n"
	        "}\n");
}
END_TEST

START_TEST(duplicate_keys_kept_in_order)
{
	ck_view("{\"b\":1,\"a\":2,\"b\":3,\"a\":{\"z\":0,\"z\":\"again\"}}",
	        "{\n"
	        "  \"b\": 1,\n"
	        "  \"a\": 2,\n"
	        "  \"b\": 3,\n"
	        "  \"a\": {\n"
	        "    \"z\": 0,\n"
	        "    \"z\": \"again\"\n"
	        "  }\n"
	        "}\n");
}
END_TEST

START_TEST(escapes_stay_as_stored)
{
	/* Escapes are shown as stored, "\u001b" included (visible text, not an ESC); raw CJK
	 * and emoji stay themselves. */
	ck_view("{\"q\":\"a\\\"b\",\"u\":\"\\u4e2d\\n\",\"raw\":\"订单中文\",\"esc\":\"\\u001b["
	        "31m\","
	        "\"订单\":\"\xF0\x9F\x98\x80\",\"sl\":\"\\\\\\/\"}",
	        "{\n"
	        "  \"q\": \"a\\\"b\",\n"
	        "  \"u\": \"\\u4e2d\\n\",\n"
	        "  \"raw\": \"订单中文\",\n"
	        "  \"esc\": \"\\u001b[31m\",\n"
	        "  \"订单\": \"\xF0\x9F\x98\x80\",\n"
	        "  \"sl\": \"\\\\\\/\"\n"
	        "}\n");
}
END_TEST

START_TEST(controls_never_reach_a_line)
{
	/* A raw ESC inside a JSON string is not JSON: the raw view, with ESC made visible. */
	static const char esc[] = "{\"a\":\"x\x1b[31my\x1b]0;pwned\x07\"}";
	struct ev_jsonview *v = ev_jsonview_new(esc, strlen(esc), 0);

	ck_assert(!ev_jsonview_valid(v));
	ck_dump(v, NOT_JSON "\n"
	                    "{\"a\":\"x" PIC_ESC "[31my" PIC_ESC "]0;pwned\xE2\x90\x87\"}\n");
	ev_jsonview_free(&v);

	/* C1 controls (the 8-bit CSI U+009B) and bidi overrides are valid JSON, but never reach
	 * the screen as themselves. */
	ck_view("[\"\xC2\x9B"
	        "31m\",\"\xE2\x80\xAE"
	        "abc\",\"\x7F\"]",
	        "[\n  \"" FFFD "31m\",\n  \"" FFFD "abc\",\n  \"\xE2\x90\xA1\"\n]\n");
}
END_TEST

START_TEST(invalid_json_is_raw_with_a_marker)
{
	struct ev_jsonview *v = ev_jsonview_new("{oops", 5, 0);
	const struct ev_jline *l;

	ck_assert(!ev_jsonview_valid(v));
	ck_assert_ptr_nonnull(ev_jsonview_error(v));
	ck_assert_msg(strstr(ev_jsonview_error(v), "line 1") != NULL, "%s", ev_jsonview_error(v));
	ck_dump(v, NOT_JSON "\n{oops\n");
	l = ev_jsonview_line(v, 0);
	CK_SPANS(l, {0, strlen(NOT_JSON), EV_STYLE_MARKER});
	ck_assert(!l->foldable);
	l = ev_jsonview_line(v, 1);
	ck_assert_uint_eq(l->nspans, 0); /* NORMAL */
	ck_assert(!l->foldable);
	/* Nothing to fold in the raw view. */
	ck_assert_int_eq(ev_jsonview_toggle(v, 1), -1);
	ck_assert_int_eq(ev_jsonview_set_folded(v, 0, true), -1);
	ev_jsonview_fold_all(v, true);
	ev_jsonview_fold_depth(v, 1);
	ck_assert_uint_eq(ev_jsonview_line_count(v), 2);
	ev_jsonview_free(&v);

	/* Split at '\n'; CR stays visible; a final '\n' does not add an empty line. */
	v = ev_jsonview_new("a\nb\r\n\nc {\n", 10, 0);
	ck_dump(v, NOT_JSON "\na\nb" PIC_CR "\n\nc {\n");
	ev_jsonview_free(&v);

	/* Empty text is not JSON either; trailing commas and single quotes neither. */
	v = ev_jsonview_new(NULL, 0, 0);
	ck_assert(!ev_jsonview_valid(v));
	ck_dump(v, NOT_JSON "\n");
	ev_jsonview_free(&v);
	v = ev_jsonview_new("[1,]", 4, 0);
	ck_assert(!ev_jsonview_valid(v));
	ev_jsonview_free(&v);
	v = ev_jsonview_new("{'a':1}", 7, 0);
	ck_assert(!ev_jsonview_valid(v));
	ev_jsonview_free(&v);
	v = ev_jsonview_new("{} {}", 5, 0);
	ck_assert(!ev_jsonview_valid(v));
	ev_jsonview_free(&v);
}
END_TEST

START_TEST(not_utf8_is_raw_and_the_error_is_clean)
{
	static const char bad[] = "[\"\xFF\x1b[2J\"]";
	struct ev_jsonview *v = ev_jsonview_new(bad, strlen(bad), 0);
	const char *err;

	ck_assert(!ev_jsonview_valid(v));
	ck_dump(v, NOT_JSON "\n[\"" FFFD PIC_ESC "[2J\"]\n");
	err = ev_jsonview_error(v);
	ck_assert_ptr_nonnull(err);
	for (const char *p = err; *p; p++)
		ck_assert_msg((unsigned char)*p >= 0x20 && *p != 0x7F, "control in error: %s", err);
	ev_jsonview_free(&v);

	/* A lone surrogate escape is refused by jansson: raw. */
	v = ev_jsonview_new("\"\\ud800\"", 8, 0);
	ck_assert(!ev_jsonview_valid(v));
	ev_jsonview_free(&v);
}
END_TEST

START_TEST(empty_containers)
{
	ck_view("{}", "{}\n");
	ck_view(" [ ] ", "[]\n");
	ck_view("{\"a\":{},\"b\":[ ],\"c\":[{}]}", "{\n"
	                                           "  \"a\": {},\n"
	                                           "  \"b\": [],\n"
	                                           "  \"c\": [\n"
	                                           "    {}\n"
	                                           "  ]\n"
	                                           "}\n");

	/* An empty object is not foldable. */
	struct ev_jsonview *v = ev_jsonview_new("{}", 2, 0);
	ck_assert(!ev_jsonview_line(v, 0)->foldable);
	CK_SPANS(ev_jsonview_line(v, 0), {0, 2, P});
	ck_assert_int_eq(ev_jsonview_toggle(v, 0), -1);
	ck_assert_int_eq(ev_jsonview_set_folded(v, 0, true), -1);
	ev_jsonview_fold_all(v, true);
	ck_dump(v, "{}\n");
	ev_jsonview_free(&v);
}
END_TEST

START_TEST(top_level_scalars)
{
	struct ev_jsonview *v;

	ck_view("\"hello\"", "\"hello\"\n");
	ck_view("  42  ", "42\n");
	ck_view("true", "true\n");
	ck_view("null", "null\n");
	ck_view("-1.50e+3", "-1.50e+3\n");

	v = ev_jsonview_new("199.00", 6, 3);
	CK_SPANS(ev_jsonview_line(v, 0), {0, 6, N});
	ck_assert(!ev_jsonview_line(v, 0)->foldable);
	ck_assert_int_eq(ev_jsonview_toggle(v, 0), -1);
	ck_assert_int_eq(ev_jsonview_find(v, "99", 0), 0);
	ck_assert_int_eq(ev_jsonview_find(v, "x", 0), -1);
	ev_jsonview_free(&v);

	v = ev_jsonview_new("nul", 3, 0);
	ck_assert(!ev_jsonview_valid(v));
	ev_jsonview_free(&v);
}
END_TEST

START_TEST(fold_one_node)
{
	struct ev_jsonview *v = ev_jsonview_new(ORDER, strlen(ORDER), 0);
	const struct ev_jline *l;
	size_t items_id;
	long at;

	/* Toggle the line that opens "order". */
	at = ev_jsonview_toggle(v, 2);
	ck_assert_int_eq(at, 2);
	ck_dump(v, "{\n"
	           "  \"id\": 17,\n"
	           "  \"order\": {…} 2 keys,\n"
	           "  \"tags\": [\n"
	           "    \"x\",\n"
	           "    \"y\"\n"
	           "  ],\n"
	           "  \"ok\": true,\n"
	           "  \"none\": null\n"
	           "}\n");
	l = ev_jsonview_line(v, 2);
	ck_assert(l->foldable);
	ck_assert(l->folded);
	/* Again: unfolded, exactly as before. */
	ck_assert_int_eq(ev_jsonview_toggle(v, 2), 2);
	ck_dump(v, ORDER_LINES);

	/* From a scalar inside, the innermost enclosing node folds: "qty": 1 is in the second
	 * item, which starts on line 8. */
	ck_assert_str_eq(line_text(v, 10), "        \"qty\": 1");
	at = ev_jsonview_toggle(v, 10);
	ck_assert_int_eq(at, 8);
	ck_assert_str_eq(line_text(v, 8), "      {…} 2 keys");
	ck_assert_str_eq(line_text(v, 9), "    ],");
	ck_assert_uint_eq(ev_jsonview_line_count(v), 19);
	/* A closing bracket belongs to the node it closes: "]," folds "items". */
	at = ev_jsonview_toggle(v, 9);
	ck_assert_int_eq(at, 3);
	ck_assert_str_eq(line_text(v, 3), "    \"items\": […] 2 items,");
	items_id = ev_jsonview_line(v, 3)->fold_id;
	ck_assert_str_eq(line_text(v, 4), "    \"total\": 199.00");

	/* By fold id: unfold "items"; the second item is still folded inside it. */
	at = ev_jsonview_set_folded(v, items_id, false);
	ck_assert_int_eq(at, 3);
	ck_assert_str_eq(line_text(v, 8), "      {…} 2 keys");
	at = ev_jsonview_set_folded(v, ev_jsonview_line(v, 8)->fold_id, false);
	ck_assert_int_eq(at, 8);
	ck_dump(v, ORDER_LINES);
	/* Folding a node hidden in a folded ancestor works, but it has no line. */
	ck_assert_int_eq(ev_jsonview_toggle(v, 2), 2);
	ck_assert_int_eq(ev_jsonview_set_folded(v, items_id, true), -1);
	ck_assert_int_eq(ev_jsonview_toggle(v, 2), 2);
	ck_assert_str_eq(line_text(v, 3), "    \"items\": […] 2 items,");
	/* Not a node id: nothing happens. */
	ck_assert_int_eq(ev_jsonview_set_folded(v, 1, true), -1);
	ck_assert_int_eq(ev_jsonview_set_folded(v, 100000, true), -1);
	ev_jsonview_free(&v);
}
END_TEST

START_TEST(fold_all_and_unfold_all)
{
	struct ev_jsonview *v = ev_jsonview_new(ORDER, strlen(ORDER), 0);

	ev_jsonview_fold_all(v, true);
	ck_dump(v, "{…} 5 keys\n");
	ck_assert(ev_jsonview_line(v, 0)->folded);
	CK_SPANS(ev_jsonview_line(v, 0), {0, 5, F}, {6, 6, F});
	ev_jsonview_fold_all(v, false);
	ck_dump(v, ORDER_LINES);

	ev_jsonview_fold_depth(v, 1);
	ck_dump(v, "{\n"
	           "  \"id\": 17,\n"
	           "  \"order\": {…} 2 keys,\n"
	           "  \"tags\": […] 2 items,\n"
	           "  \"ok\": true,\n"
	           "  \"none\": null\n"
	           "}\n");
	ev_jsonview_fold_depth(v, 0);
	ck_dump(v, ORDER_LINES);
	ev_jsonview_free(&v);

	/* One member, one element: singular. */
	v = ev_jsonview_new("[{\"a\":[0]}]", 11, 2);
	ck_dump(v, "[\n  {\n    \"a\": […] 1 item\n  }\n]\n");
	ev_jsonview_fold_depth(v, 1);
	ck_dump(v, "[\n  {…} 1 key\n]\n");
	ev_jsonview_free(&v);
}
END_TEST

START_TEST(initial_fold_depth)
{
	struct ev_jsonview *v = ev_jsonview_new(ORDER, strlen(ORDER), 2);

	ck_dump(v, "{\n"
	           "  \"id\": 17,\n"
	           "  \"order\": {\n"
	           "    \"items\": […] 2 items,\n"
	           "    \"total\": 199.00\n"
	           "  },\n"
	           "  \"tags\": [\n"
	           "    \"x\",\n"
	           "    \"y\"\n"
	           "  ],\n"
	           "  \"ok\": true,\n"
	           "  \"none\": null\n"
	           "}\n");
	ev_jsonview_free(&v);

	v = ev_jsonview_new(ORDER, strlen(ORDER), 0);
	ck_dump(v, ORDER_LINES);
	ev_jsonview_free(&v);

	v = ev_jsonview_new(ORDER, strlen(ORDER), 99);
	ck_dump(v, ORDER_LINES);
	ev_jsonview_free(&v);
}
END_TEST

START_TEST(search_unfolds_the_match)
{
	struct ev_jsonview *v = ev_jsonview_new(ORDER, strlen(ORDER), 1);
	long at;

	ck_assert_uint_eq(ev_jsonview_line_count(v), 7);
	/* "b2" is three folds deep: those open, its sibling item stays folded. */
	at = ev_jsonview_find(v, "b2", 0);
	ck_assert_str_eq(line_text(v, at), "        \"sku\": \"B2\",");
	ck_assert_int_eq(at, 6);
	ck_assert_str_eq(line_text(v, 4), "      {…} 2 keys,");
	ck_assert_uint_eq(ev_jsonview_line_count(v), 16);

	/* Case-insensitive for ASCII; the next match after a line, wrapping round. */
	ev_jsonview_fold_depth(v, 1);
	ck_assert_int_eq(ev_jsonview_find(v, "SKU", 0), 5);
	ck_assert_int_eq(ev_jsonview_find(v, "SKU", 5), 9);
	ck_assert_int_eq(ev_jsonview_find(v, "SKU", 9), 5);
	ck_assert_int_eq(ev_jsonview_find(v, "\"id\"", 9), 1);
	/* The line itself comes last; from beyond the end starts at line 0. */
	ck_assert_int_eq(ev_jsonview_find(v, "17", 1), 1);
	ck_assert_int_eq(ev_jsonview_find(v, "{", SIZE_MAX), 0);
	ck_assert_int_eq(ev_jsonview_find(v, "nope", 3), -1);
	ck_assert_int_eq(ev_jsonview_find(v, "", 3), -1);

	/* From a folded line, the search goes on inside it first. */
	ev_jsonview_fold_depth(v, 1);
	at = ev_jsonview_find(v, "1", 2);
	ck_assert_str_eq(line_text(v, at), "        \"sku\": \"A1\",");
	ck_assert_int_eq(at, 5);
	ev_jsonview_free(&v);

	/* Only a closing bracket matches: its node is unfolded too. */
	v = ev_jsonview_new("{\"a\":[1]}", 9, 1);
	ck_dump(v, "{\n  \"a\": […] 1 item\n}\n");
	at = ev_jsonview_find(v, "]", 0);
	ck_assert_int_eq(at, 3);
	ck_assert_str_eq(line_text(v, at), "  ]");
	ev_jsonview_free(&v);

	/* The raw view: plain lines, the marker included. */
	v = ev_jsonview_new("one\nTwo\nthree two", 17, 0);
	ck_assert_int_eq(ev_jsonview_find(v, "two", 0), 2);
	ck_assert_int_eq(ev_jsonview_find(v, "two", 2), 3);
	ck_assert_int_eq(ev_jsonview_find(v, "two", 3), 2);
	ck_assert_int_eq(ev_jsonview_find(v, "valid json", 1), 0);
	ck_assert_int_eq(ev_jsonview_find(v, "one", SIZE_MAX), 1);
	ck_assert_int_eq(ev_jsonview_find(v, "four", 0), -1);
	ev_jsonview_free(&v);
}
END_TEST

static double ms_since(const struct timespec *t0)
{
	struct timespec t1;

	clock_gettime(CLOCK_MONOTONIC, &t1);
	return (double)(t1.tv_sec - t0->tv_sec) * 1e3 + (double)(t1.tv_nsec - t0->tv_nsec) / 1e6;
}

START_TEST(one_megabyte_payload)
{
	struct ev_buf b;
	struct ev_jsonview *v;
	struct timespec t0;
	size_t items = 0, n;
	double ms;
	char *last;
	long at;

	ev_buf_init(&b);
	ev_buf_adds(&b, "{\"orderNo\":\"SO-1\",\"items\":[");
	while (b.len < 1024 * 1024) {
		ev_buf_printf(&b, "%s{\"n\":%zu,\"sku\":\"SKU-%06zu\",\"price\":%zu.00}",
		              items ? "," : "", items, items, items % 1000);
		items++;
	}
	ev_buf_adds(&b, "],\"tail\":\"end\"}");

	clock_gettime(CLOCK_MONOTONIC, &t0);
	v = ev_jsonview_new(b.data, b.len, 0);
	ms = ms_since(&t0);
	printf("check_jsonview: view of a %zu-byte payload (%zu lines) built in %.1f ms\n", b.len,
	       ev_jsonview_line_count(v), ms);
	ck_assert(ev_jsonview_valid(v));
	/* {, "orderNo", "items": [, 5 lines an item, ], "tail", } */
	n = ev_jsonview_line_count(v);
	ck_assert_uint_eq(n, 5 * items + 6);
	ck_assert_str_eq(line_text(v, (long)n - 1), "}");
	ck_assert_str_eq(line_text(v, (long)n - 2), "  \"tail\": \"end\"");
	ck_assert_str_eq(line_text(v, (long)n - 4), "    }");
	last = ev_xasprintf("      \"sku\": \"SKU-%06zu\",", items - 1);
	ck_assert_str_eq(line_text(v, (long)n - 6), last);
	/* Search reaches the last item and unfolds it. */
	ev_jsonview_fold_depth(v, 1);
	ck_assert_uint_eq(ev_jsonview_line_count(v), 5);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	at = ev_jsonview_find(v, last + 6, 0);
	printf("check_jsonview: search to the last item and unfold it took %.1f ms\n",
	       ms_since(&t0));
	ck_assert_str_eq(line_text(v, at), last);
	ck_assert_uint_eq(ev_jsonview_line_count(v), items + 10);
	free(last);
	/* Folding it all is one line. */
	ev_jsonview_fold_all(v, true);
	ck_assert_uint_eq(ev_jsonview_line_count(v), 1);
	ck_assert_str_eq(line_text(v, 0), "{…} 3 keys");
	ev_jsonview_free(&v);
	ev_buf_free(&b);
}
END_TEST

/* Concatenate lines [first, end) dropping indentation and "↪": the stored text back. */
static char *rejoin(struct ev_jsonview *v, size_t first, size_t end, size_t indent)
{
	struct ev_buf b;

	ev_buf_init(&b);
	ck_assert_uint_le(end, ev_jsonview_line_count(v));
	for (size_t i = first; i < end; i++) {
		const struct ev_jline *l = ev_jsonview_line(v, i);
		size_t skip = indent;

		check_line(l);
		ck_assert_uint_ge(l->len, skip);
		if (i > first) {
			ck_assert(l->cont);
			ck_assert_int_eq(strncmp(l->text + skip, CONT, strlen(CONT)), 0);
			ck_assert_uint_ge(l->nspans, 1);
			ck_assert_uint_eq(l->spans[0].off, skip);
			ck_assert_uint_eq(l->spans[0].len, strlen(CONT));
			ck_assert_int_eq(l->spans[0].style, EV_STYLE_MARKER);
			skip += strlen(CONT);
		} else {
			ck_assert(!l->cont);
		}
		ck_assert_uint_le(l->len - skip, EV_JSONVIEW_LINE_MAX);
		ev_buf_add(&b, l->text + skip, l->len - skip);
	}
	return ev_buf_steal(&b);
}

START_TEST(very_long_lines_continue)
{
	size_t big = 1024 * 1024;
	char *text = ev_xmalloc(big + 3), *back;
	struct ev_jsonview *v;
	struct timespec t0;

	/* One line of 1 MB that is not JSON: 256 lines of 4096 bytes after the marker. */
	memset(text, 'x', big);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	v = ev_jsonview_new(text, big, 0);
	printf("check_jsonview: raw view of a 1 MB line built in %.1f ms\n", ms_since(&t0));
	ck_assert(!ev_jsonview_valid(v));
	ck_assert_uint_eq(ev_jsonview_line_count(v), 1 + big / EV_JSONVIEW_LINE_MAX);
	back = rejoin(v, 1, ev_jsonview_line_count(v), 0);
	ck_assert_uint_eq(strlen(back), big);
	ck_assert_int_eq(memcmp(back, text, big), 0);
	free(back);
	ev_jsonview_free(&v);

	/* Three-byte characters: the cut never splits one (4096 is not a multiple of 3). */
	for (size_t i = 0; i + 3 <= big; i += 3)
		memcpy(text + i, "中", 3);
	v = ev_jsonview_new(text, big - big % 3, 0);
	ck_assert_uint_eq(ev_jsonview_line(v, 1)->len, 4095);
	back = rejoin(v, 1, ev_jsonview_line_count(v), 0);
	ck_assert_uint_eq(strlen(back), big - big % 3);
	ck_assert_int_eq(memcmp(back, text, big - big % 3), 0);
	free(back);
	ev_jsonview_free(&v);

	/* One JSON string of 1 MB: continued the same way, styled as a string throughout. */
	text[0] = '"';
	memset(text + 1, 'a', big);
	text[big + 1] = '"';
	text[big + 2] = '\0';
	v = ev_jsonview_new(text, big + 2, 0);
	ck_assert(ev_jsonview_valid(v));
	ck_assert_uint_eq(ev_jsonview_line_count(v), (big + 2 + 4095) / 4096);
	CK_SPANS(ev_jsonview_line(v, 0), {0, 4096, S});
	back = rejoin(v, 0, ev_jsonview_line_count(v), 0);
	ck_assert_str_eq(back, text);
	free(back);
	ck_assert_int_eq(ev_jsonview_find(v, "\"", 3), 256);
	ev_jsonview_free(&v);
	free(text);

	/* A long key: the key, the colon and the value stay in order across the cut. */
	struct ev_buf b;
	ev_buf_init(&b);
	ev_buf_adds(&b, "{\"");
	for (int i = 0; i < 5000; i++)
		ev_buf_addc(&b, (char)('a' + i % 26));
	ev_buf_adds(&b, "\":[1]}");
	v = ev_jsonview_new(b.data, b.len, 1);
	ck_assert_uint_eq(ev_jsonview_line_count(v), 4);
	ck_assert(ev_jsonview_line(v, 1)->foldable);
	ck_assert(!ev_jsonview_line(v, 2)->foldable);
	back = rejoin(v, 1, 3, 2);
	ck_assert_int_eq(strncmp(back, b.data + 1, 5002), 0);
	ck_assert_str_eq(back + 5002, ": […] 1 item");
	free(back);
	/* Toggling the continuation folds the same node. */
	ck_assert_int_eq(ev_jsonview_toggle(v, 2), 1);
	ck_assert_uint_eq(ev_jsonview_line_count(v), 6);
	back = rejoin(v, 1, 3, 2);
	ck_assert_int_eq(strncmp(back, b.data + 1, 5002), 0);
	ck_assert_str_eq(back + 5002, ": [");
	free(back);
	ck_assert_str_eq(line_text(v, 3), "    1");
	ck_assert_str_eq(line_text(v, 4), "  ]");
	ev_jsonview_free(&v);
	ev_buf_free(&b);
}
END_TEST

START_TEST(deep_nesting)
{
	struct ev_buf b;
	struct ev_jsonview *v;
	char *want;

	/* 100 levels: valid JSON, indented two spaces a level, folds at any depth. */
	ev_buf_init(&b);
	for (int i = 0; i < 100; i++)
		ev_buf_addc(&b, '[');
	ev_buf_adds(&b, "1");
	for (int i = 0; i < 100; i++)
		ev_buf_addc(&b, ']');
	v = ev_jsonview_new(b.data, b.len, 0);
	ck_assert(ev_jsonview_valid(v));
	ck_assert_uint_eq(ev_jsonview_line_count(v), 201);
	ck_assert_int_eq(ev_jsonview_line(v, 100)->depth, 100);
	want = ev_xasprintf("%*s1", 200, "");
	ck_assert_str_eq(line_text(v, 100), want);
	free(want);
	want = ev_xasprintf("%*s]", 198, "");
	ck_assert_str_eq(line_text(v, 101), want);
	free(want);
	ev_jsonview_fold_depth(v, 50);
	ck_assert_uint_eq(ev_jsonview_line_count(v), 101);
	want = ev_xasprintf("%*s[…] 1 item", 100, "");
	ck_assert_str_eq(line_text(v, 50), want);
	free(want);
	ck_assert_int_eq(ev_jsonview_find(v, "1", 0), 100);
	ck_assert_uint_eq(ev_jsonview_line_count(v), 201);
	ck_assert_int_eq(ev_jsonview_toggle(v, 100), 99);
	ck_assert_uint_eq(ev_jsonview_line_count(v), 199);
	ev_jsonview_free(&v);
	ev_buf_free(&b);

	/* 2000 levels, close to jansson's limit: still JSON. */
	ev_buf_init(&b);
	for (int i = 0; i < 2000; i++)
		ev_buf_adds(&b, "{\"k\":");
	ev_buf_adds(&b, "0");
	for (int i = 0; i < 2000; i++)
		ev_buf_addc(&b, '}');
	v = ev_jsonview_new(b.data, b.len, 0);
	ck_assert(ev_jsonview_valid(v));
	ck_assert_uint_eq(ev_jsonview_line_count(v), 4001);
	ck_assert_int_eq(ev_jsonview_find(v, "0", 0), 2000);
	ev_jsonview_fold_all(v, true);
	ck_assert_str_eq(line_text(v, 0), "{…} 1 key");
	ev_jsonview_free(&v);
	ev_buf_free(&b);

	/* 100,000 levels: jansson refuses, so the raw view; nothing recurses per level. */
	ev_buf_init(&b);
	for (int i = 0; i < 100000; i++)
		ev_buf_addc(&b, '[');
	for (int i = 0; i < 100000; i++)
		ev_buf_addc(&b, ']');
	v = ev_jsonview_new(b.data, b.len, 3);
	ck_assert(!ev_jsonview_valid(v));
	ck_assert_uint_eq(ev_jsonview_line_count(v), 1 + (200000 + 4095) / 4096);
	ck_assert_uint_eq(ev_jsonview_line(v, 1)->len, 4096);
	ck_assert_int_eq(ev_jsonview_find(v, "]", 0), 25);
	ev_jsonview_free(&v);
	/* ... and unterminated. */
	v = ev_jsonview_new(b.data, 100000, 0);
	ck_assert(!ev_jsonview_valid(v));
	ck_assert_uint_eq(ev_jsonview_line_count(v), 1 + (100000 + 4095) / 4096);
	ev_jsonview_free(&v);
	ev_buf_free(&b);
}
END_TEST

START_TEST(nul_bytes)
{
	struct ev_jsonview *v;

	/* A raw NUL after valid JSON, or inside a string, is not JSON: raw, NUL made visible. */
	v = ev_jsonview_new("{\"a\":1}\0", 8, 0);
	ck_assert(!ev_jsonview_valid(v));
	ck_dump(v, NOT_JSON "\n{\"a\":1}" PIC_NUL "\n");
	ev_jsonview_free(&v);
	v = ev_jsonview_new("[\"x\0y\"]", 7, 0);
	ck_assert(!ev_jsonview_valid(v));
	ck_dump(v, NOT_JSON "\n[\"x" PIC_NUL "y\"]\n");
	ev_jsonview_free(&v);
	v = ev_jsonview_new("\0", 1, 0);
	ck_dump(v, NOT_JSON "\n" PIC_NUL "\n");
	ev_jsonview_free(&v);

	/* An escaped NUL is JSON and stays the six characters \u0000. */
	ck_view("{\"a\":\"x\\u0000y\"}", "{\n  \"a\": \"x\\u0000y\"\n}\n");
}
END_TEST

int main(void)
{
	setlocale(LC_CTYPE, "C.UTF-8");
	Suite *s = suite_create("jsonview");
	TCase *tc = tcase_create("jsonview");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, nested_objects_and_arrays);
	tcase_add_test(tc, spans_of_a_small_case);
	tcase_add_test(tc, numbers_kept_verbatim);
	tcase_add_test(tc, duplicate_keys_kept_in_order);
	tcase_add_test(tc, escapes_stay_as_stored);
	tcase_add_test(tc, controls_never_reach_a_line);
	tcase_add_test(tc, invalid_json_is_raw_with_a_marker);
	tcase_add_test(tc, not_utf8_is_raw_and_the_error_is_clean);
	tcase_add_test(tc, empty_containers);
	tcase_add_test(tc, top_level_scalars);
	tcase_add_test(tc, fold_one_node);
	tcase_add_test(tc, fold_all_and_unfold_all);
	tcase_add_test(tc, initial_fold_depth);
	tcase_add_test(tc, search_unfolds_the_match);
	tcase_add_test(tc, one_megabyte_payload);
	tcase_add_test(tc, very_long_lines_continue);
	tcase_add_test(tc, deep_nesting);
	tcase_add_test(tc, nul_bytes);
	suite_add_tcase(s, tc);
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? 0 : 1;
}
