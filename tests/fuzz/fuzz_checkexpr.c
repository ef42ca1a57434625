/* evtop — fuzz target for the check expressions of `evtop check --warning/--critical`.
 * Invariants:
 *   - a parse fails with EV_ERR_USAGE and "column N: ..." where N is inside the text (or the
 *     length message), never silently;
 *   - a parsed expression round-trips through its own syntax: "(E)", "not not (E)" and
 *     "(E) and (E)", "(E) or (E)" parse (unless that passes the nesting or length limit, which
 *     is then said) and evaluate to the same value, with the same figures;
 *   - the figure lookup is called exactly once per figure ev_checkexpr_figures lists;
 *   - three-valued logic is sound: when some figures are unknown or only lower bounds and
 *     the result is still true or false, every exact value consistent with them gives that
 *     same result;
 *   - the "why" summary is safe for a terminal and the same on every evaluation. */
#include <config.h>

#include "core/checkexpr.h"
#include "core/util.h"
#include "fuzz.h"

#include <locale.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	setlocale(LC_CTYPE, "C.UTF-8");
	return 0;
}

struct lookup {
	unsigned seed;
	int variant; /* -1: unknowns and lower bounds as such; k >= 0: replaced by exact values */
	size_t calls;
};

static unsigned hash(unsigned h, const char *s)
{
	for (; s != NULL && *s; s++)
		h = h * 31u + (unsigned char)*s;
	return h * 2654435761u;
}

static int figure(void *ctx, const char *table, const char *name, const char *group, double *value)
{
	static const double exact[] = {0, 1, 7, 120, 1e6, 0.5};
	static const double unknown_as[] = {0, 5, -3, 1e9, 0.1 + 0.2};
	static const double bound_as[] = {5, 6, 1e9, 5.0000001};
	struct lookup *l = ctx;
	unsigned h = hash(hash(hash(l->seed, table ? table : "*"), name), group ? group : "#");
	l->calls++;
	switch (h % 8) {
	case 6: /* a count that reached its cap: at least 5 */
		if (l->variant < 0) {
			*value = 5;
			return 1;
		}
		*value = bound_as[(unsigned)l->variant % 4];
		return 0;
	case 7: /* a figure that could not be read */
		if (l->variant < 0) {
			*value = (h >> 8) % 2 ? NAN : 3;
			return (h >> 8) % 2 ? 0 : -1;
		}
		*value = unknown_as[(unsigned)l->variant % 5];
		return 0;
	default:
		*value = exact[h % 6];
		return 0;
	}
}

static void count_figure(void *ctx, const char *table, const char *name, const char *group)
{
	(void)table;
	(void)group;
	FUZZ_CHECK(name != NULL && ev_checkexpr_figure_find(name) != NULL, "figure %s",
	           name ? name : "(null)");
	(*(size_t *)ctx)++;
}

static enum ev_tristate eval(const struct ev_checkexpr *e, unsigned seed, int variant, char **why)
{
	struct lookup l = {seed, variant, 0};
	struct ev_buf b;
	ev_buf_init(&b);
	ev_buf_add(&b, "", 0);
	enum ev_tristate r = ev_checkexpr_eval(e, figure, &l, &b);
	FUZZ_CHECK(r == EV_TRUE || r == EV_FALSE || r == EV_UNKNOWN, "result %d", (int)r);
	FUZZ_CHECK(l.calls == ev_checkexpr_figures(e, NULL, NULL), "%zu lookups for %zu figures",
	           l.calls, ev_checkexpr_figures(e, NULL, NULL));
	FUZZ_CHECK(fuzz_unsafe_at(b.data, b.len, 0) == (size_t)-1, "unsafe why: %s", b.data);
	if (why != NULL)
		*why = ev_buf_steal(&b);
	else
		ev_buf_free(&b);
	return r;
}

static void check_error(const char *text, const struct ev_error *err)
{
	FUZZ_CHECK(err->code == EV_ERR_USAGE, "error code %d", err->code);
	FUZZ_CHECK(fuzz_unsafe_at(err->msg, strlen(err->msg), 0) == (size_t)-1, "unsafe message");
	if (strncmp(err->msg, "the expression is ", 18) == 0) {
		FUZZ_CHECK(strlen(text) > EV_CHECKEXPR_MAX_LEN, "a length error for %zu bytes",
		           strlen(text));
		return;
	}
	int col = 0;
	FUZZ_CHECK(sscanf(err->msg, "column %d: ", &col) == 1, "no column: %s", err->msg);
	size_t chars = 0;
	for (const char *s = text; *s; s++)
		chars += ((unsigned char)*s & 0xC0) != 0x80;
	FUZZ_CHECK(col >= 1 && (size_t)col <= chars + 1, "column %d of %zu characters", col, chars);
}

/* `form` with every %s replaced by text, parsed and compared with e. */
static void check_same(const struct ev_checkexpr *e, const char *text, const char *form,
                       unsigned seed)
{
	struct ev_buf b;
	ev_buf_init(&b);
	ev_buf_add(&b, "", 0);
	for (const char *f = form; *f; f++) {
		if (f[0] == '%' && f[1] == 's') {
			ev_buf_adds(&b, text);
			f++;
		} else {
			ev_buf_addc(&b, *f);
		}
	}
	struct ev_error err = {0};
	struct ev_checkexpr *w = ev_checkexpr_parse(b.data, &err);
	if (w == NULL) {
		check_error(b.data, &err);
		FUZZ_CHECK(strstr(err.msg, "levels of parentheses") != NULL ||
		                   strncmp(err.msg, "the expression is ", 18) == 0,
		           "'%s' parses but '%s' does not: %s", text, b.data, err.msg);
		ev_buf_free(&b);
		return;
	}
	FUZZ_CHECK(ev_checkexpr_figures(w, NULL, NULL) == ev_checkexpr_figures(e, NULL, NULL),
	           "'%s' has other figures than '%s'", b.data, text);
	for (int v = -1; v < 2; v++)
		FUZZ_CHECK(eval(w, seed, v, NULL) == eval(e, seed, v, NULL), "'%s' and '%s' differ",
		           b.data, text);
	ev_checkexpr_free(&w);
	ev_buf_free(&b);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = ev_xstrndup((const char *)data, size);
	struct ev_error err = {0};
	struct ev_checkexpr *e = ev_checkexpr_parse(text, &err);
	if (e == NULL) {
		check_error(text, &err);
		free(text);
		return 0;
	}
	size_t nfig = 0;
	FUZZ_CHECK(ev_checkexpr_figures(e, count_figure, &nfig) == nfig, "figure count");
	unsigned seed = (unsigned)size;
	for (unsigned s = seed; s < seed + 3; s++) {
		char *why1, *why2;
		enum ev_tristate partial = eval(e, s, -1, &why1);
		FUZZ_CHECK(eval(e, s, -1, &why2) == partial && strcmp(why1, why2) == 0,
		           "two evaluations differ");
		free(why1);
		free(why2);
		if (partial == EV_UNKNOWN)
			continue;
		for (int v = 0; v < 20; v++)
			FUZZ_CHECK(eval(e, s, v, NULL) == partial,
			           "'%s' is %d with unknowns and lower bounds, %d with values %d",
			           text, (int)partial, (int)eval(e, s, v, NULL), v);
	}
	check_same(e, text, "(%s)", seed);
	check_same(e, text, "not not (%s)", seed);
	check_same(e, text, "(%s) and (%s)", seed);
	check_same(e, text, "(%s) or (%s)", seed);
	ev_checkexpr_free(&e);
	FUZZ_CHECK(e == NULL, "free did not NULL");
	free(text);
	return 0;
}
