/* core/checkexpr: the grammar of `evtop check` expressions, their three-valued evaluation
 * through a lookup, the figures they use, and the plugin's exit status. */
#include <config.h>

#include "core/checkexpr.h"

#include <check.h>
#include <locale.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The fake dashboard: what the lookup answers. rc 1 = a capped count (a lower bound), -1 = a
 * figure that cannot be known. */
struct fake {
	const char *table, *name, *group;
	double value;
	int rc;
};

static const struct fake figures[] = {
        {NULL, "stuck", NULL, 3, 0},
        {"outbox", "stuck", NULL, 3, 0},
        {"message", "stuck", NULL, 0, 0},
        {NULL, "exhausted", NULL, 12, 0},
        {"outbox", "exhausted", NULL, 12, 0},
        {NULL, "failed", NULL, 20, 0},
        {"outbox", "failed", "ORDER_CREATED", 4, 0},
        {"outbox", "failed", "order created", 2, 0},
        {NULL, "failed", "a]b\"c\\", 5, 0},
        {NULL, "failed", "订单", 6, 0},
        {NULL, "pending", NULL, 110, 0},
        {"outbox", "pending", NULL, 70, 0},
        {"message", "pending", NULL, 40, 0},
        {NULL, "processing", NULL, 0, 0},
        {"message", "processing", NULL, 0, -1},
        {NULL, "oldest_pending_age", NULL, 754, 0},
        {NULL, "longest_retry_wait", NULL, 30, 0},
        {NULL, "created_per_min", NULL, 0.1 + 0.2, 0},
        {NULL, "finished_per_min", NULL, 12.5, 0},
        {NULL, "drain_time", NULL, INFINITY, 0},
        {"outbox", "success", NULL, NAN, 0},
        {NULL, "cancelled", NULL, 100000, 1},
        {"message", "failed_due", NULL, 0.004, 0},
        {"outbox", "failed_due", NULL, -2.5, 0},
};

struct lookup {
	int calls;
	char log[512]; /* "table/name/group;" per call */
};

static bool same(const char *a, const char *b)
{
	return a == NULL ? b == NULL : b != NULL && strcmp(a, b) == 0;
}

static int lookup(void *ctx, const char *table, const char *name, const char *group, double *value)
{
	struct lookup *l = ctx;
	size_t used = strlen(l->log);

	l->calls++;
	snprintf(l->log + used, sizeof(l->log) - used, "%s/%s/%s;", table ? table : "-", name,
	         group ? group : "-");
	for (size_t i = 0; i < sizeof(figures) / sizeof(figures[0]); i++) {
		if (same(figures[i].table, table) && strcmp(figures[i].name, name) == 0 &&
		    same(figures[i].group, group)) {
			*value = figures[i].value;
			return figures[i].rc;
		}
	}
	/* A group with no events is 0, not unknown. */
	ck_assert_msg(group != NULL, "the test's table lacks %s.%s", table ? table : "-", name);
	*value = 0;
	return 0;
}

static struct ev_checkexpr *parse_ok(const char *text)
{
	struct ev_error err = {0};
	struct ev_checkexpr *e = ev_checkexpr_parse(text, &err);

	ck_assert_msg(e != NULL, "rejected '%.100s': %s", text, err.msg);
	ck_assert_int_eq(err.code, 0);
	return e;
}

static enum ev_tristate eval(const char *text)
{
	struct ev_checkexpr *e = parse_ok(text);
	struct lookup l = {0};
	enum ev_tristate r = ev_checkexpr_eval(e, lookup, &l, NULL);

	ev_checkexpr_free(&e);
	return r;
}

static const char *tri_name(enum ev_tristate t)
{
	return t == EV_TRUE ? "true" : t == EV_FALSE ? "false" : "unknown";
}

#define expect(text, want)                                                                         \
	do {                                                                                       \
		enum ev_tristate got_ = eval(text);                                                \
		ck_assert_msg(got_ == (want), "'%s' is %s, expected %s", (text), tri_name(got_),   \
		              tri_name(want));                                                     \
	} while (0)

static void expect_error(const char *text, const char *want)
{
	struct ev_error err = {0};
	struct ev_checkexpr *e = ev_checkexpr_parse(text, &err);

	ck_assert_msg(e == NULL, "accepted: '%.100s'", text);
	ck_assert_int_eq(err.code, EV_ERR_USAGE);
	ck_assert_str_eq(err.msg, want);
}

/* The summary eval writes for text. malloc'd. */
static char *why(const char *text)
{
	struct ev_checkexpr *e = parse_ok(text);
	struct lookup l = {0};
	struct ev_buf b;

	ev_buf_init(&b);
	ev_checkexpr_eval(e, lookup, &l, &b);
	ev_checkexpr_free(&e);
	return ev_buf_steal(&b);
}

#define FIGURE_NAMES                                                                               \
	"pending, processing, stuck, failed, failed_due, failed_waiting, failed_noretry, "         \
	"exhausted, cancelled, success, oldest_pending_age, longest_retry_wait, "                  \
	"created_per_min, finished_per_min, drain_time"

START_TEST(comparison_operators)
{
	expect("2 > 1", EV_TRUE);
	expect("1 > 1", EV_FALSE);
	expect("1 >= 1", EV_TRUE);
	expect("0 >= 1", EV_FALSE);
	expect("1 < 2", EV_TRUE);
	expect("2 < 2", EV_FALSE);
	expect("2 <= 2", EV_TRUE);
	expect("3 <= 2", EV_FALSE);
	expect("2 == 2", EV_TRUE);
	expect("2 == 3", EV_FALSE);
	expect("2 = 2", EV_TRUE);
	expect("2 = 3", EV_FALSE);
	expect("2 != 3", EV_TRUE);
	expect("2 != 2", EV_FALSE);
	/* No spaces needed between operators and operands. */
	expect("stuck>2", EV_TRUE);
	expect("stuck>=4", EV_FALSE);
	expect("stuck!=3", EV_FALSE);
	expect("stuck==3", EV_TRUE);
}
END_TEST

START_TEST(arithmetic_and_logic_operators)
{
	expect("1 + 2 == 3", EV_TRUE);
	expect("5 - 2 == 3", EV_TRUE);
	expect("5 - 2 == 7", EV_FALSE);
	expect("outbox.pending + message.pending == pending", EV_TRUE);
	expect("failed - exhausted == 8", EV_TRUE);
	/* Left to right: (10 - 3) - 2, not 10 - (3 - 2). */
	expect("10 - 3 - 2 == 5", EV_TRUE);
	expect("1 and 1", EV_TRUE);
	expect("1 and 0", EV_FALSE);
	expect("1 && 1", EV_TRUE);
	expect("0 && 1", EV_FALSE);
	expect("0 or 1", EV_TRUE);
	expect("0 or 0", EV_FALSE);
	expect("0 || 1", EV_TRUE);
	expect("0 || 0", EV_FALSE);
	expect("not 0", EV_TRUE);
	expect("not 1", EV_FALSE);
	expect("!0", EV_TRUE);
	expect("!1", EV_FALSE);
	expect("! stuck", EV_FALSE);
	expect("not not 1", EV_TRUE);
	expect("!!!1", EV_FALSE);
	/* Keywords ignore case; "&&" and "||" need no spaces. */
	expect("1 AND 0 Or 1", EV_TRUE);
	expect("NoT 1", EV_FALSE);
	expect("stuck>0&&exhausted>0", EV_TRUE);
	expect("stuck>5||exhausted>5", EV_TRUE);
	/* A bare number or figure is true when it is not 0. */
	expect("stuck", EV_TRUE);
	expect("processing", EV_FALSE);
	expect("0.5", EV_TRUE);
	expect("0", EV_FALSE);
	expect("stuck - 3", EV_FALSE);
	/* Longer chains are one node each. */
	expect("0 or 0 or 0 or 1", EV_TRUE);
	expect("1 and 1 and 1 and 0", EV_FALSE);
	expect("1 + 1 + 1 - 1 + 1 == 3", EV_TRUE);
}
END_TEST

START_TEST(precedence)
{
	/* and binds tighter than or: 1 or (0 and 0); (1 or 0) and 0 would be false. */
	expect("1 or 0 and 0", EV_TRUE);
	expect("0 and 0 or 1", EV_TRUE);
	/* not binds tighter than and / or: (not 0) and 0; not (0 and 0) would be true. */
	expect("not 0 and 0", EV_FALSE);
	/* (not 1) or 1; not (1 or 1) would be false. */
	expect("not 1 or 1", EV_TRUE);
	/* Comparison binds tighter than not, and, or. */
	expect("not stuck > 5", EV_TRUE);
	expect("stuck > 0 and exhausted > 100 or failed > 10", EV_TRUE);
	expect("stuck > 10 or exhausted > 5 and failed > 100", EV_FALSE);
	expect("0 == 0 and 0", EV_FALSE);
	/* + binds tighter than comparison: 2 > (1 + 1). */
	expect("2 > 1 + 1", EV_FALSE);
	expect("1 + 1 > 1", EV_TRUE);
	expect("stuck + 1 == 4", EV_TRUE);
	expect("4 == stuck + 1", EV_TRUE);
}
END_TEST

START_TEST(parentheses)
{
	expect("(1 or 0) and 0", EV_FALSE);
	expect("not (1 or 1)", EV_FALSE);
	expect("not (0 and 1) and 1", EV_TRUE);
	expect("10 - (3 - 2) == 9", EV_TRUE);
	expect("((stuck)) == 3", EV_TRUE);
	expect("(outbox.pending + message.pending) > 100", EV_TRUE);
	expect("(pending) - (outbox.pending + message.pending) == 0", EV_TRUE);
	expect("( ( 1 ) )", EV_TRUE);
	/* A parenthesised number stays a number. */
	expect("(1 + 2) + (3) == 6", EV_TRUE);
}
END_TEST

START_TEST(numbers_and_durations)
{
	expect("10m == 600", EV_TRUE);
	expect("1s == 1", EV_TRUE);
	expect("500ms == 0.5", EV_TRUE);
	expect("1500ms == 1.5", EV_TRUE);
	expect("2h == 7200", EV_TRUE);
	expect("1d == 86400", EV_TRUE);
	expect("1d == 24h", EV_TRUE);
	expect("0.5 + 0.25 == 0.75", EV_TRUE);
	expect("007 == 7", EV_TRUE);
	expect("10.0 == 10", EV_TRUE);
	expect("999999999999 > 999999999998", EV_TRUE);
	expect("999999999999999 > 99999999999999", EV_TRUE);
	expect("999999999999999d > 0", EV_TRUE);
	/* Ages compare in seconds. */
	expect("oldest_pending_age > 10m", EV_TRUE);
	expect("oldest_pending_age > 13m", EV_FALSE);
	expect("oldest_pending_age == 754s", EV_TRUE);
	expect("oldest_pending_age > 754000ms - 1", EV_TRUE);
	expect("longest_retry_wait <= 30s", EV_TRUE);
	expect("longest_retry_wait + 30s == 1m", EV_TRUE);
}
END_TEST

START_TEST(equality_has_a_tolerance)
{
	/* 0.1 + 0.2 is 0.30000000000000004 in binary. */
	expect("0.1 + 0.2 == 0.3", EV_TRUE);
	expect("0.1 + 0.2 > 0.3", EV_FALSE);
	expect("0.1 + 0.2 <= 0.3", EV_TRUE);
	expect("0.3 >= 0.1 + 0.2", EV_TRUE);
	expect("created_per_min == 0.3", EV_TRUE);
	expect("created_per_min != 0.3", EV_FALSE);
	/* ...yet whole numbers stay apart. */
	expect("100000000000 == 100000000001", EV_FALSE);
	expect("100000000001 > 100000000000", EV_TRUE);
	expect("0.000001 == 0", EV_FALSE);
	expect("0.000001 > 0", EV_TRUE);
	expect("finished_per_min == 12.5", EV_TRUE);
	/* Infinity is a value: the drain time of a growing backlog. */
	expect("drain_time > 1000d", EV_TRUE);
	expect("drain_time == drain_time", EV_TRUE);
	expect("drain_time - drain_time == 0", EV_UNKNOWN);
}
END_TEST

START_TEST(figures_tables_and_groups)
{
	expect("outbox.stuck > 0", EV_TRUE);
	expect("message.stuck > 0", EV_FALSE);
	expect("OUTBOX.Stuck == 3", EV_TRUE);
	expect("Message . stuck == 0", EV_TRUE);
	expect("outbox.failed[ORDER_CREATED] == 4", EV_TRUE);
	expect("outbox.failed[ ORDER_CREATED ] == 4", EV_TRUE);
	expect("outbox.failed [ORDER_CREATED] == 4", EV_TRUE);
	/* Group values are exact: another spelling is another group, with no events. */
	expect("outbox.failed[order_created] == 0", EV_TRUE);
	expect("failed[NO_SUCH_TYPE] == 0", EV_TRUE);
	expect("failed[a.b:c-9_] == 0", EV_TRUE);
	expect("failed[9lives] == 0", EV_TRUE);
	/* Quoted: spaces, ']', '"' and '\' inside. */
	expect("outbox.failed[\"order created\"] == 2", EV_TRUE);
	expect("failed[\"a]b\\\"c\\\\\"] == 5", EV_TRUE);
	expect("failed[\"订单\"] == 6", EV_TRUE);
	expect("failed[ \"订单\" ]>5", EV_TRUE);
	/* A backslash before anything else is kept. */
	expect("failed[\"a\\b\"] == 0", EV_TRUE);

	struct ev_checkexpr *e = parse_ok("OUTBOX.FAILED[ORDER_CREATED] > 0 and Exhausted");
	struct lookup l = {0};

	ck_assert_int_eq(ev_checkexpr_eval(e, lookup, &l, NULL), EV_TRUE);
	/* The callback sees the lower-case names and the group as written. */
	ck_assert_str_eq(l.log, "outbox/failed/ORDER_CREATED;-/exhausted/-;");
	ev_checkexpr_free(&e);

	e = parse_ok("failed[\"a]b\\\"c\\\\\"] > 0");
	memset(&l, 0, sizeof(l));
	ev_checkexpr_eval(e, lookup, &l, NULL);
	ck_assert_str_eq(l.log, "-/failed/a]b\"c\\;");
	ev_checkexpr_free(&e);
}
END_TEST

START_TEST(unknown_truth_tables)
{
	/* T, F and U: a true, a false and an unknown comparison. */
	static const char *const v[] = {"outbox.stuck > 0", "message.stuck > 0",
	                                "message.processing > 0"};
	static const enum ev_tristate val[] = {EV_TRUE, EV_FALSE, EV_UNKNOWN};
	/* [a][b] for a, b in T, F, U. */
	static const enum ev_tristate and_[3][3] = {{EV_TRUE, EV_FALSE, EV_UNKNOWN},
	                                            {EV_FALSE, EV_FALSE, EV_FALSE},
	                                            {EV_UNKNOWN, EV_FALSE, EV_UNKNOWN}};
	static const enum ev_tristate or_[3][3] = {{EV_TRUE, EV_TRUE, EV_TRUE},
	                                           {EV_TRUE, EV_FALSE, EV_UNKNOWN},
	                                           {EV_TRUE, EV_UNKNOWN, EV_UNKNOWN}};
	static const enum ev_tristate not_[3] = {EV_FALSE, EV_TRUE, EV_UNKNOWN};
	char text[128];

	for (int a = 0; a < 3; a++) {
		expect(v[a], val[a]);
		snprintf(text, sizeof(text), "not %s", v[a]);
		expect(text, not_[a]);
		snprintf(text, sizeof(text), "!(%s)", v[a]);
		expect(text, not_[a]);
		for (int b = 0; b < 3; b++) {
			snprintf(text, sizeof(text), "%s and %s", v[a], v[b]);
			expect(text, and_[a][b]);
			snprintf(text, sizeof(text), "%s && %s", v[a], v[b]);
			expect(text, and_[a][b]);
			snprintf(text, sizeof(text), "%s or %s", v[a], v[b]);
			expect(text, or_[a][b]);
			snprintf(text, sizeof(text), "%s || %s", v[a], v[b]);
			expect(text, or_[a][b]);
		}
	}
	/* The order of the operands does not matter in longer chains either. */
	expect("message.processing > 0 or message.stuck > 0 or outbox.stuck > 0", EV_TRUE);
	expect("message.processing > 0 and outbox.stuck > 0 and message.stuck > 0", EV_FALSE);
	expect("outbox.stuck > 0 and message.processing > 0 and 1", EV_UNKNOWN);
	/* An unknown figure makes sums, comparisons and bare figures unknown. */
	expect("message.processing", EV_UNKNOWN);
	expect("message.processing + 1 > 0", EV_UNKNOWN);
	expect("message.processing - message.processing == 0", EV_UNKNOWN);
	expect("message.processing == message.processing", EV_UNKNOWN);
	expect("1 + message.processing >= 0", EV_UNKNOWN);
	/* A NaN from the lookup is unknown too. */
	expect("outbox.success >= 0", EV_UNKNOWN);
	expect("outbox.success >= 0 or 1", EV_TRUE);
}
END_TEST

START_TEST(capped_counts_are_lower_bounds)
{
	/* cancelled is 100000 and capped: at least 100000. */
	expect("cancelled >= 100000", EV_TRUE);
	expect("cancelled > 50000", EV_TRUE);
	expect("cancelled < 50000", EV_FALSE);
	expect("cancelled <= 99999", EV_FALSE);
	expect("cancelled == 5", EV_FALSE);
	expect("cancelled != 5", EV_TRUE);
	expect("cancelled > 200000", EV_UNKNOWN);
	expect("cancelled < 200000", EV_UNKNOWN);
	expect("cancelled > 100000", EV_UNKNOWN);
	expect("cancelled == 100000", EV_UNKNOWN);
	expect("cancelled != 100000", EV_UNKNOWN);
	expect("cancelled + 1 > 100000", EV_TRUE);
	expect("cancelled - 1 > 100000", EV_UNKNOWN);
	expect("0 - cancelled < 0", EV_TRUE);
	expect("0 - cancelled <= 0 - 100000", EV_TRUE);
	expect("cancelled - cancelled == 0", EV_UNKNOWN);
	expect("cancelled", EV_TRUE);
	expect("cancelled > 200000 or stuck > 0", EV_TRUE);
	expect("cancelled > 200000 and stuck > 5", EV_FALSE);
}
END_TEST

START_TEST(syntax_errors_name_the_column)
{
	expect_error("stuck >",
	             "column 8: expected a number, a duration, a figure or '(', got end of "
	             "expression");
	expect_error("stuck > > 1",
	             "column 9: expected a number, a duration, a figure or '(', got '>'");
	expect_error("(stuck > 0", "column 11: expected an operator or ')', got end of expression");
	expect_error("stuk > 0", "column 1: expected a figure (" FIGURE_NAMES
	                         "), got 'stuk'; did you mean 'stuck'?");
	expect_error("outbox.stuck[ > 0", "column 15: expected a group value, got '>'");
	expect_error("1 2", "column 3: expected an operator or end of expression, got '2'");
	expect_error("", "column 1: expected a number, a duration, a figure or '(', got end of "
	                 "expression");
	expect_error("   ", "column 4: expected a number, a duration, a figure or '(', got end of "
	                    "expression");
	expect_error("stuck > 0 and",
	             "column 14: expected a number, a duration, a figure or '(', got end of "
	             "expression");
	expect_error("stuck > 0 > 1",
	             "column 11: expected 'and' or 'or' between two comparisons, got '>'");
	expect_error("stuck & failed",
	             "column 7: expected an operator or end of expression, got '&'");
	expect_error("stuck > 0)",
	             "column 10: expected end of expression (this ')' closes nothing), got ')'");
	expect_error("(stuck 2)", "column 8: expected an operator or ')', got '2'");
	expect_error("and > 1",
	             "column 1: expected a number, a duration, a figure or '(', got 'and'");
	expect_error("stuck > 0 or or", "column 14: expected a number, a duration, a figure or "
	                                "'(', got 'or'");
	expect_error("stuck <> 1", "column 8: expected a number, a duration, a figure or '(', got "
	                           "'>'");
	expect_error("stuck > -1", "column 9: expected a number, a duration, a figure or '(', got "
	                           "'-'");
	expect_error("stuck > .5", "column 9: expected a number, a duration, a figure or '(', got "
	                           "'.'");
	expect_error("stuck ≥ 1", "column 7: expected an operator or end of expression, got '≥'");
	expect_error("stuck > \x1b[2J",
	             "column 9: expected a number, a duration, a figure or '(', got '␛'");
	/* Unknown tables and figures list the known names. */
	expect_error("outbx.stuck > 0",
	             "column 1: expected a table (outbox, message), got 'outbx'");
	expect_error("stuck.pending > 0",
	             "column 1: expected a table (outbox, message), got 'stuck'");
	expect_error("outbox.stk > 0", "column 8: expected a figure (" FIGURE_NAMES
	                               "), got 'stk'; did you mean 'stuck'?");
	expect_error("outbox.and > 0", "column 8: expected a figure (" FIGURE_NAMES "), got 'and'");
	expect_error("outbox. > 0", "column 9: expected a figure (" FIGURE_NAMES "), got '>'");
	expect_error("outbox > 0", "column 1: expected a figure (" FIGURE_NAMES "), got 'outbox'");
	expect_error("backlog > 0",
	             "column 1: expected a figure (" FIGURE_NAMES "), got 'backlog'");
	/* Numbers and durations. */
	expect_error("stuck > 10mins",
	             "column 9: expected a number (10, 0.5) or a duration (a whole number "
	             "followed by ms, s, m, h or d), got '10mins'");
	expect_error("oldest_pending_age > 1.5m",
	             "column 22: expected a number (10, 0.5) or a duration (a whole number "
	             "followed by ms, s, m, h or d), got '1.5m'");
	expect_error("1. > 0", "column 1: expected a number (10, 0.5) or a duration (a whole "
	                       "number followed by ms, s, m, h or d), got '1.'");
	expect_error("1.2.3 > 0", "column 1: expected a number (10, 0.5) or a duration (a whole "
	                          "number followed by ms, s, m, h or d), got '1.2.3'");
	expect_error("10M > 0", "column 1: expected a number (10, 0.5) or a duration (a whole "
	                        "number followed by ms, s, m, h or d), got '10M'");
	expect_error("stuck > 1and 1", "column 9: expected a number (10, 0.5) or a duration (a "
	                               "whole number followed by ms, s, m, h or d), got '1and'");
	expect_error("1234567890123456 > 0",
	             "column 1: expected a number of at most 15 digits, got '1234567890123456'");
	expect_error("1234567890123456s > 0",
	             "column 1: expected a number of at most 15 digits, got '1234567890123456s'");
	expect_error("0.1234567890123456 > 0",
	             "column 1: expected a number of at most 15 digits, got '0.1234567890123456'");
	/* Groups. */
	expect_error("stuck[]", "column 7: expected a group value, got ']'");
	expect_error("stuck[", "column 7: expected a group value, got end of expression");
	expect_error("stuck[a b]", "column 9: expected ']', got 'b'");
	expect_error("stuck[a", "column 8: expected ']', got end of expression");
	expect_error("failed[\"x", "column 10: expected '\"' to close the group value, got end of "
	                           "expression");
	expect_error("failed[\"\"] > 0", "column 8: expected a group value, got '\"\"'");
	expect_error("failed[\"a\tb\"]",
	             "column 10: expected printable UTF-8 text in the group value, got '␉'");
	expect_error("failed[\"a\xff\"]",
	             "column 10: expected printable UTF-8 text in the group value, got '�'");
	/* Columns count characters, not bytes. */
	expect_error("failed[\"订单\"] > > 1",
	             "column 16: expected a number, a duration, a figure or '(', got '>'");
	/* A truth value is not a number. */
	expect_error("(stuck > 0) + 1 > 0",
	             "column 1: expected a number, got the truth value '(stuck > 0)'");
	expect_error("1 + (stuck > 0) > 0",
	             "column 5: expected a number, got the truth value '(stuck > 0)'");
	expect_error("(stuck > 0) > 0",
	             "column 1: expected a number, got the truth value '(stuck > 0)'");
	expect_error("1 > (not stuck)", "column 5: expected a number, got the truth value '(not "
	                                "stuck)'");
	/* A long token is cut in the message. */
	expect_error("stuck > 0 and "
	             "an_exceedingly_long_figure_name_that_nobody_should_ever_type > 0",
	             "column 15: expected a figure (" FIGURE_NAMES
	             "), got 'an_exceedingly_long_figure_name_that_nob…'");
}
END_TEST

START_TEST(nesting_and_length_are_bounded)
{
	char text[EV_CHECKEXPR_MAX_LEN + 2], inner[256];
	char *big = malloc(10001);
	struct ev_error err = {0};
	struct ev_checkexpr *e;
	int n = EV_CHECKEXPR_MAX_DEPTH;

	ck_assert_ptr_nonnull(big);
	/* 10,000 "(": a clean error, not a crash. */
	memset(big, '(', 10000);
	big[10000] = '\0';
	expect_error(big, "the expression is 10000 bytes long; at most 4096 bytes are allowed");
	free(big);
	/* Under the length cap the nesting bound speaks. */
	memset(text, '(', 4000);
	text[4000] = '\0';
	expect_error(text, "column 65: expected at most 64 levels of parentheses and 'not', got "
	                   "more");

	/* 64 levels are fine, 65 are not. */
	text[0] = '\0';
	for (int i = 0; i < n; i++)
		strcat(text, "(");
	strcat(text, "1");
	for (int i = 0; i < n; i++)
		strcat(text, ")");
	expect(text, EV_TRUE);
	snprintf(inner, sizeof(inner), "%s", text);
	snprintf(text, sizeof(text), "(%s)", inner);
	expect_error(text, "column 65: expected at most 64 levels of parentheses and 'not', got "
	                   "more");

	/* not and ! count towards the same bound. */
	text[0] = '\0';
	for (int i = 0; i < n; i++)
		strcat(text, "not ");
	strcat(text, "0");
	expect(text, EV_FALSE);
	text[0] = '\0';
	for (int i = 0; i <= n; i++)
		strcat(text, "!");
	strcat(text, "0");
	expect_error(text, "column 65: expected at most 64 levels of parentheses and 'not', got "
	                   "more");
	text[0] = '\0';
	for (int i = 0; i < n / 2; i++)
		strcat(text, "(not ");
	strcat(text, "(1)");
	expect_error(text, "column 161: expected at most 64 levels of parentheses and 'not', got "
	                   "more");

	/* Long flat chains are fine: they do not nest. */
	text[0] = '\0';
	for (int i = 0; i < 1000; i++)
		strcat(text, "1+");
	strcat(text, "0 == 1000 and 1");
	for (int i = 0; i < 300; i++)
		strcat(text, " or 0");
	ck_assert_uint_le(strlen(text), EV_CHECKEXPR_MAX_LEN);
	expect(text, EV_TRUE);

	/* Exactly the cap is accepted; one byte more is not. */
	memset(text, ' ', EV_CHECKEXPR_MAX_LEN);
	text[0] = '1';
	text[EV_CHECKEXPR_MAX_LEN] = '\0';
	expect(text, EV_TRUE);
	text[EV_CHECKEXPR_MAX_LEN] = ' ';
	text[EV_CHECKEXPR_MAX_LEN + 1] = '\0';
	e = ev_checkexpr_parse(text, &err);
	ck_assert_ptr_null(e);
	ck_assert_int_eq(err.code, EV_ERR_USAGE);
	ck_assert_str_eq(err.msg, "the expression is 4097 bytes long; at most 4096 bytes are "
	                          "allowed");

	/* Group values have a bound of their own. */
	big = memset(malloc(300), 'g', 300);
	ck_assert_ptr_nonnull(big);
	snprintf(text, sizeof(text), "failed[%.*s] > 0", EV_CHECKEXPR_MAX_GROUP, big);
	expect(text, EV_FALSE);
	snprintf(text, sizeof(text), "failed[%.*s] > 0", EV_CHECKEXPR_MAX_GROUP + 1, big);
	expect_error(text, "column 8: expected a group value of at most 256 bytes, got "
	                   "'gggggggggggggggggggggggggggggggggggggggg…'");
	free(big);
}
END_TEST

START_TEST(exit_status_table)
{
	static const struct {
		enum ev_tristate warning, critical;
		enum ev_check_status want;
	} rows[] = {
	        {EV_FALSE, EV_FALSE, EV_CHECK_OK},
	        {EV_TRUE, EV_FALSE, EV_CHECK_WARNING},
	        {EV_UNKNOWN, EV_FALSE, EV_CHECK_UNKNOWN},
	        {EV_FALSE, EV_TRUE, EV_CHECK_CRITICAL},
	        {EV_TRUE, EV_TRUE, EV_CHECK_CRITICAL},
	        {EV_UNKNOWN, EV_TRUE, EV_CHECK_CRITICAL},
	        {EV_FALSE, EV_UNKNOWN, EV_CHECK_UNKNOWN},
	        {EV_TRUE, EV_UNKNOWN, EV_CHECK_UNKNOWN},
	        {EV_UNKNOWN, EV_UNKNOWN, EV_CHECK_UNKNOWN},
	};

	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
		ck_assert_msg(ev_checkexpr_status(rows[i].warning, rows[i].critical) ==
		                      rows[i].want,
		              "warning %s, critical %s: got %s", tri_name(rows[i].warning),
		              tri_name(rows[i].critical),
		              ev_checkexpr_status_name(
		                      ev_checkexpr_status(rows[i].warning, rows[i].critical)));
	/* The values are the plugin's exit codes. */
	ck_assert_int_eq(EV_CHECK_OK, 0);
	ck_assert_int_eq(EV_CHECK_WARNING, 1);
	ck_assert_int_eq(EV_CHECK_CRITICAL, 2);
	ck_assert_int_eq(EV_CHECK_UNKNOWN, 3);
	ck_assert_str_eq(ev_checkexpr_status_name(EV_CHECK_OK), "OK");
	ck_assert_str_eq(ev_checkexpr_status_name(EV_CHECK_WARNING), "WARNING");
	ck_assert_str_eq(ev_checkexpr_status_name(EV_CHECK_CRITICAL), "CRITICAL");
	ck_assert_str_eq(ev_checkexpr_status_name(EV_CHECK_UNKNOWN), "UNKNOWN");
}
END_TEST

static void collect(void *ctx, const char *table, const char *name, const char *group)
{
	char *log = ctx;
	size_t used = strlen(log);

	snprintf(log + used, 512 - used, "%s/%s/%s;", table ? table : "-", name,
	         group ? group : "-");
}

START_TEST(figures_are_listed_once)
{
	struct ev_checkexpr *e =
	        parse_ok("stuck > 0 or Outbox.stuck > 1 or STUCK > 5 or failed[A] > 0 or "
	                 "(failed[A] + failed[B] > 1 and outbox.stuck > 0) or failed[\"A\"] > 0 or "
	                 "message.failed[A] > 0 or failed[a] > 0");
	char log[512] = "";
	struct lookup l = {0};

	ck_assert_uint_eq(ev_checkexpr_figures(e, collect, log), 6);
	ck_assert_str_eq(log, "-/stuck/-;outbox/stuck/-;-/failed/A;-/failed/B;message/failed/A;"
	                      "-/failed/a;");
	ck_assert_uint_eq(ev_checkexpr_figures(e, NULL, NULL), 6);
	/* Evaluation asks for each figure once, in the same order. */
	ck_assert_int_eq(ev_checkexpr_eval(e, lookup, &l, NULL), EV_TRUE);
	ck_assert_int_eq(l.calls, 6);
	ck_assert_str_eq(l.log, log);
	ev_checkexpr_free(&e);
	ck_assert_ptr_null(e);
	ev_checkexpr_free(&e);
	ev_checkexpr_free(NULL);

	e = parse_ok("1 > 0");
	log[0] = '\0';
	ck_assert_uint_eq(ev_checkexpr_figures(e, collect, log), 0);
	ck_assert_str_eq(log, "");
	ev_checkexpr_free(&e);
}
END_TEST

START_TEST(why_summarises_the_figures)
{
	char *s;

	s = why("outbox.stuck > 0 or exhausted > 10");
	ck_assert_str_eq(s, "outbox.stuck=3 exhausted=12");
	free(s);
	s = why("stuck > 0 and stuck > 1");
	ck_assert_str_eq(s, "stuck=3");
	free(s);
	s = why("1 > 0");
	ck_assert_str_eq(s, "");
	free(s);
	/* Seconds with "s", fractions with at most two decimals, infinity, unknown, capped. */
	s = why("oldest_pending_age > 10m or created_per_min > 1 or finished_per_min > 1 or "
	        "drain_time > 1h or message.processing > 0 or outbox.success > 0 or "
	        "cancelled > 5 or message.failed_due > 0 or outbox.failed_due > 0");
	ck_assert_str_eq(s, "oldest_pending_age=754s created_per_min=0.3 finished_per_min=12.5 "
	                    "drain_time=inf message.processing=unknown outbox.success=unknown "
	                    "cancelled=≥100000 message.failed_due=0 outbox.failed_due=-2.5");
	free(s);
	/* Groups as an expression would name them. */
	s = why("outbox.failed[ORDER_CREATED] > 0 or outbox.failed[\"order created\"] > 0 or "
	        "failed[\"a]b\\\"c\\\\\"] > 0 or failed[\"订单\"] > 0 or failed[x.y:z-1] > 0");
	ck_assert_str_eq(s, "outbox.failed[ORDER_CREATED]=4 outbox.failed[\"order created\"]=2 "
	                    "failed[\"a]b\\\"c\\\\\"]=5 failed[\"订单\"]=6 failed[x.y:z-1]=0");
	free(s);

	/* The summary is appended to what the buffer holds. */
	struct ev_checkexpr *e = parse_ok("stuck");
	struct lookup l = {0};
	struct ev_buf b;

	ev_buf_init(&b);
	ev_buf_adds(&b, "STUCK: ");
	ck_assert_int_eq(ev_checkexpr_eval(e, lookup, &l, &b), EV_TRUE);
	ck_assert_str_eq(b.data, "STUCK: stuck=3");
	ev_buf_free(&b);
	ev_checkexpr_free(&e);
}
END_TEST

START_TEST(figure_table)
{
	size_t n;
	const struct ev_figure_def *defs = ev_checkexpr_figure_list(&n);
	char names[512] = "";

	ck_assert_uint_eq(n, 15);
	for (size_t i = 0; i < n; i++) {
		strcat(names, i ? ", " : "");
		strcat(names, defs[i].name);
		ck_assert_ptr_eq(ev_checkexpr_figure_find(defs[i].name), &defs[i]);
		ck_assert_ptr_nonnull(defs[i].help);
	}
	ck_assert_str_eq(names, FIGURE_NAMES);
	ck_assert_ptr_eq(ev_checkexpr_figure_find("Oldest_Pending_AGE"),
	                 ev_checkexpr_figure_find("oldest_pending_age"));
	ck_assert_int_eq(ev_checkexpr_figure_find("oldest_pending_age")->unit, EV_FIG_SECONDS);
	ck_assert_int_eq(ev_checkexpr_figure_find("drain_time")->unit, EV_FIG_SECONDS);
	ck_assert_int_eq(ev_checkexpr_figure_find("longest_retry_wait")->unit, EV_FIG_SECONDS);
	ck_assert_int_eq(ev_checkexpr_figure_find("created_per_min")->unit, EV_FIG_PER_MIN);
	ck_assert_int_eq(ev_checkexpr_figure_find("stuck")->unit, EV_FIG_EVENTS);
	ck_assert_ptr_null(ev_checkexpr_figure_find("stuc"));
	ck_assert_ptr_null(ev_checkexpr_figure_find("stuck "));
	ck_assert_ptr_null(ev_checkexpr_figure_find(""));
	ck_assert_ptr_null(ev_checkexpr_figure_find(NULL));
}
END_TEST

/* doc/check.md: from the harness's EVTOP_SRCDIR, or next to this file when run by hand. */
static char *read_doc(void)
{
	const char *srcdir = getenv("EVTOP_SRCDIR");
	char path[4096];
	char *text;
	FILE *f;
	long n;

	if (srcdir != NULL)
		snprintf(path, sizeof(path), "%s/doc/check.md", srcdir);
	else
		snprintf(path, sizeof(path), "%.*s/../../doc/check.md",
		         (int)(strrchr(__FILE__, '/') ? strrchr(__FILE__, '/') - __FILE__ : 1),
		         strrchr(__FILE__, '/') ? __FILE__ : ".");
	f = fopen(path, "r");
	ck_assert_msg(f != NULL, "cannot open %s", path);
	ck_assert_int_eq(fseek(f, 0, SEEK_END), 0);
	n = ftell(f);
	ck_assert_int_gt(n, 0);
	rewind(f);
	text = malloc((size_t)n + 1);
	ck_assert_ptr_nonnull(text);
	ck_assert_uint_eq(fread(text, 1, (size_t)n, f), (size_t)n);
	text[n] = '\0';
	fclose(f);
	return text;
}

START_TEST(doc_lists_every_figure_and_its_examples_parse)
{
	/* Every example in the doc's table, as written there. */
	static const char *const examples[] = {
	        "stuck > 0 or exhausted > 10",
	        "exhausted > 100 or oldest_pending_age > 30m",
	        "stuck > 0",
	        "outbox.stuck > 0 or message.stuck > 5",
	        "exhausted > 10",
	        "oldest_pending_age > 10m",
	        "longest_retry_wait >= 1h",
	        "pending > 1000 and drain_time > 1h",
	        "outbox.failed[ORDER_CREATED] > 0",
	        "failed[\"order created\"] + failed[ORDER_CREATED] >= 5",
	        "(outbox.pending + message.pending) > 5000",
	        "created_per_min > 0 and finished_per_min == 0",
	        "not (processing > 0) and pending > 100",
	        "failed - exhausted > 50",
	        "STUCK > 0 AND Outbox.Exhausted > 0",
	        "stuck > 0 && !(exhausted > 0)",
	        "outbox.stuck > 0 or message.stuck > 0",
	        "oldest_pending_age > 600",
	        "stuck > 1 and stuck < 5",
	        "0.1 + 0.2 == 0.3",
	};
	char *doc = read_doc();
	size_t n;
	const struct ev_figure_def *defs = ev_checkexpr_figure_list(&n);

	for (size_t i = 0; i < sizeof(examples) / sizeof(examples[0]); i++) {
		struct ev_checkexpr *e;

		ck_assert_msg(strstr(doc, examples[i]) != NULL, "not in doc/check.md: %s",
		              examples[i]);
		e = parse_ok(examples[i]);
		ev_checkexpr_free(&e);
	}
	/* The table of figures is the figure list, row for row: name, unit and help. */
	static const char *const units[] = {[EV_FIG_EVENTS] = "events",
	                                    [EV_FIG_SECONDS] = "seconds",
	                                    [EV_FIG_PER_MIN] = "events/min"};
	const char *row = strstr(doc, "| figure | unit | what it counts |\n|---|---|---|\n");
	ck_assert_ptr_nonnull(row);
	row = strchr(strchr(row, '\n') + 1, '\n') + 1;
	for (size_t i = 0; i < n; i++) {
		char line[1024];
		snprintf(line, sizeof(line), "| `%s` | %s | %s |\n", defs[i].name,
		         units[defs[i].unit], defs[i].help);
		const char *end = strchr(row, '\n');
		ck_assert_msg(end != NULL && strncmp(row, line, strlen(line)) == 0,
		              "doc/check.md's figure row %zu is\n%.*s\nthe figure list says\n%s",
		              i + 1, end ? (int)(end - row) : 0, row, line);
		row = end + 1;
	}
	ck_assert_msg(*row == '\n', "doc/check.md lists figures evtop does not know: %.60s", row);
	/* The error examples are the real messages. */
	ck_assert_ptr_nonnull(
	        strstr(doc, "column 9: expected a number, a duration, a figure or '(', got '>'"));
	ck_assert_ptr_nonnull(
	        strstr(doc, "column 11: expected an operator or ')', got end of expression"));
	expect_error("stuck > > 1",
	             "column 9: expected a number, a duration, a figure or '(', got '>'");
	free(doc);
}
END_TEST

int main(void)
{
	setlocale(LC_CTYPE, "C.UTF-8");
	Suite *s = suite_create("checkexpr");
	TCase *tc = tcase_create("checkexpr");
	tcase_add_test(tc, comparison_operators);
	tcase_add_test(tc, arithmetic_and_logic_operators);
	tcase_add_test(tc, precedence);
	tcase_add_test(tc, parentheses);
	tcase_add_test(tc, numbers_and_durations);
	tcase_add_test(tc, equality_has_a_tolerance);
	tcase_add_test(tc, figures_tables_and_groups);
	tcase_add_test(tc, unknown_truth_tables);
	tcase_add_test(tc, capped_counts_are_lower_bounds);
	tcase_add_test(tc, syntax_errors_name_the_column);
	tcase_add_test(tc, nesting_and_length_are_bounded);
	tcase_add_test(tc, exit_status_table);
	tcase_add_test(tc, figures_are_listed_once);
	tcase_add_test(tc, why_summarises_the_figures);
	tcase_add_test(tc, figure_table);
	tcase_add_test(tc, doc_lists_every_figure_and_its_examples_parse);
	suite_add_tcase(s, tc);
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? 0 : 1;
}
