/* evtop — check expressions: a hand-written recursive-descent parser over an on-demand lexer,
 * and a three-valued evaluator. The grammar is in doc/check.md.
 *
 * Recursion is bounded: the parser counts parentheses and not/! against
 * EV_CHECKEXPR_MAX_DEPTH, and chains (a or b or c, a + b + c) become one node with many
 * children rather than a left-leaning spine, so the tree is never deeper than a few nodes
 * per nesting level and evaluating it cannot exhaust the stack. */
#include <config.h>

#include "core/checkexpr.h"
#include "core/dashboard.h"
#include "core/text.h"

#include <assert.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Digits a number may have: 10^15 and every integer below it are exact doubles, so the
 * value parsed below is the correctly rounded one (no strtod: its decimal point follows
 * LC_NUMERIC, which main sets from the environment). */
#define MAX_DIGITS 15
/* How much of a bad token an error message quotes. */
#define MAX_SHOWN 40

/* Every figure an expression may name: the dashboard's (core/dashboard.h), then the rates
 * and the drain time derived from them (EV_CHECK_RATE_LIST). */
#define DASH_FIGURE_EVENTS(name, help)  {name, EV_FIG_EVENTS, help},
#define DASH_FIGURE_SECONDS(name, help) {name, EV_FIG_SECONDS, help},
#define DASH_FIGURE_NONE(name, help)
#define DASH_FIGURE(id, name, unit, help) DASH_FIGURE_##unit(name, help)
#define RATE_FIGURE(name, unit, help)     {name, EV_FIG_##unit, help},
static const struct ev_figure_def figures[] = {EV_DASH_FIGURE_LIST(DASH_FIGURE)
                                                       EV_CHECK_RATE_LIST(RATE_FIGURE)};
#undef DASH_FIGURE
#undef DASH_FIGURE_EVENTS
#undef DASH_FIGURE_SECONDS
#undef DASH_FIGURE_NONE
#undef RATE_FIGURE
#define NFIGURES (sizeof(figures) / sizeof(figures[0]))

static const char *const tables[] = {"outbox", "message"};

enum tok_kind {
	T_END,
	T_NUM, /* a number or a duration; the value is in tok.num (durations in seconds) */
	T_BADNUM,
	T_WORD,
	T_DOT,
	T_LBRACK,
	T_RBRACK,
	T_LPAREN,
	T_RPAREN,
	T_PLUS,
	T_MINUS,
	T_GT,
	T_GE,
	T_LT,
	T_LE,
	T_EQ,
	T_NE,
	T_NOT,
	T_AND,
	T_OR,
	T_BAD, /* a character no token starts with */
};

struct tok {
	enum tok_kind kind;
	size_t pos, len;
	double num;
	bool too_long; /* T_BADNUM: well formed but more than MAX_DIGITS digits */
};

enum node_kind { N_NUM, N_FIG, N_SUM, N_CMP, N_NOT, N_AND, N_OR };

struct node {
	enum node_kind kind;
	bool truth;       /* yields true/false/unknown rather than a number */
	bool neg;         /* subtracted by the N_SUM it belongs to */
	double num;       /* N_NUM */
	size_t fig;       /* N_FIG: index into ev_checkexpr.figs */
	enum tok_kind op; /* N_CMP */
	struct node **kid;
	size_t nkid, kidcap;
};

struct fig {
	const char *table; /* a tables[] entry, or NULL */
	const struct ev_figure_def *def;
	char *group; /* NULL = the total */
};

struct ev_checkexpr {
	struct node *root;
	/* Every node, owned here, so that freeing (also after a syntax error) needs no walk. */
	struct node **nodes;
	size_t nnodes, nodecap;
	struct fig *figs;
	size_t nfigs, figcap;
};

struct parser {
	const char *text;
	size_t len;
	size_t pos;      /* where the token after `tok` starts to be looked for */
	size_t prev_end; /* end of the token consumed before `tok` */
	struct tok tok;
	int depth;
	struct ev_checkexpr *e;
	struct ev_error *err;
};

/* --- figures ------------------------------------------------------------------------ */

static char to_lower(char c)
{
	return c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c;
}

/* Does s[0..n) equal the lower-case word w, ignoring ASCII case? */
static bool word_eq(const char *s, size_t n, const char *w)
{
	if (strlen(w) != n)
		return false;
	for (size_t i = 0; i < n; i++)
		if (to_lower(s[i]) != w[i])
			return false;
	return true;
}

static const struct ev_figure_def *figure_find_n(const char *s, size_t n)
{
	for (size_t i = 0; i < NFIGURES; i++)
		if (word_eq(s, n, figures[i].name))
			return &figures[i];
	return NULL;
}

const struct ev_figure_def *ev_checkexpr_figure_list(size_t *n)
{
	*n = NFIGURES;
	return figures;
}

const struct ev_figure_def *ev_checkexpr_figure_find(const char *name)
{
	return name == NULL ? NULL : figure_find_n(name, strlen(name));
}

/* --- errors ------------------------------------------------------------------------- */

/* 1-based column of byte offset pos: characters, not bytes, for a group value in UTF-8. */
static int column(const struct parser *p, size_t pos)
{
	int col = 1;

	for (size_t i = 0; i < pos; i++)
		if (((unsigned char)p->text[i] & 0xC0) != 0x80)
			col++;
	return col;
}

/* Fill err with "column N: <message>" for byte offset pos; returns NULL for `return fail()`. */
static void *fail(struct parser *p, size_t pos, const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));

static void *fail(struct parser *p, size_t pos, const char *fmt, ...)
{
	char msg[sizeof(p->err->msg)];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	ev_error_set(p->err, EV_ERR_USAGE, "column %d: %s", column(p, pos), msg);
	return NULL;
}

/* text[pos..pos+len) quoted for a message, safe for a terminal, cut to MAX_SHOWN bytes at a
 * character boundary; the end of the text reads "end of expression". malloc'd. */
static char *shown(const struct parser *p, size_t pos, size_t len)
{
	size_t n = len;
	char *safe, *out;

	if (len == 0)
		return ev_xstrdup("end of expression");
	if (n > MAX_SHOWN) {
		n = MAX_SHOWN;
		while (n > 0 && ((unsigned char)p->text[pos + n] & 0xC0) == 0x80)
			n--;
	}
	safe = ev_text_sanitize(p->text + pos, n);
	out = ev_xasprintf("'%s%s'", safe, n < len ? "…" : "");
	free(safe);
	return out;
}

/* "expected <what>, got <the current token>". */
static void *expected(struct parser *p, const char *what)
{
	char *got = shown(p, p->tok.pos, p->tok.len);

	fail(p, p->tok.pos, "expected %s, got %s", what, got);
	free(got);
	return NULL;
}

/* --- the lexer ---------------------------------------------------------------------- */

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static bool is_word_start(char c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_';
}

static bool is_word(char c)
{
	return is_word_start(c) || is_digit(c);
}

/* A character of an unquoted group value. */
static bool is_group(char c)
{
	return is_word(c) || c == '.' || c == ':' || c == '-';
}

static bool is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

/* A number or a duration: the whole run of [A-Za-z0-9_.] from pos is one token, so "10mins"
 * and "1.5m" are reported whole instead of as a number followed by a stray word. */
static void lex_number(struct parser *p, struct tok *t)
{
	static const double pow10[] = {1e0, 1e1, 1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
	                               1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15};
	const char *s = p->text + t->pos;
	size_t n = 0, i = 0, digits = 0, frac = 0;
	unsigned long long mant = 0;

	while (t->pos + n < p->len && (is_word(s[n]) || s[n] == '.'))
		n++;
	t->len = n;
	t->kind = T_BADNUM;
	for (; i < n && is_digit(s[i]); i++, digits++)
		if (digits < MAX_DIGITS)
			mant = mant * 10 + (unsigned long long)(s[i] - '0');
	if (i + 1 < n && s[i] == '.' && is_digit(s[i + 1])) {
		for (i++; i < n && is_digit(s[i]); i++, digits++, frac++)
			if (digits < MAX_DIGITS)
				mant = mant * 10 + (unsigned long long)(s[i] - '0');
	}
	if (i < n) {
		/* Seconds = digits * mul / div: "500ms" is 500 / 1000 = 0.5, correctly rounded. */
		static const struct {
			const char *name;
			double mul, div;
		} units[] = {{"ms", 1, 1000},
		             {"s", 1, 1},
		             {"m", 60, 1},
		             {"h", 3600, 1},
		             {"d", 86400, 1}};

		for (size_t u = 0; u < sizeof(units) / sizeof(units[0]); u++) {
			if (strlen(units[u].name) != n - i ||
			    memcmp(s + i, units[u].name, n - i) != 0)
				continue;
			if (frac > 0)
				return; /* "1.5m": a duration is a whole number */
			if (digits > MAX_DIGITS) {
				t->too_long = true;
				return;
			}
			/* Even 10^15 days is a finite double: nothing to overflow. */
			t->kind = T_NUM;
			t->num = (double)mant * units[u].mul / units[u].div;
			return;
		}
		return; /* "10mins", "1.2.3" */
	}
	if (digits > MAX_DIGITS) {
		t->too_long = true;
		return;
	}
	t->kind = T_NUM;
	t->num = (double)mant / pow10[frac];
}

/* Operators and punctuation, the two-character ones first. */
static const struct {
	const char *text;
	enum tok_kind kind;
} puncts[] = {
        {">=", T_GE},    {"<=", T_LE},    {"==", T_EQ},    {"!=", T_NE},    {"&&", T_AND},
        {"||", T_OR},    {">", T_GT},     {"<", T_LT},     {"=", T_EQ},     {"!", T_NOT},
        {"+", T_PLUS},   {"-", T_MINUS},  {"(", T_LPAREN}, {")", T_RPAREN}, {".", T_DOT},
        {"[", T_LBRACK}, {"]", T_RBRACK},
};

/* Move to the next token. Lexing never fails: what no token starts with becomes T_BAD (one
 * character) and the parser reports it with what it expected there. */
static void next(struct parser *p)
{
	struct tok *t = &p->tok;
	const char *s;

	p->prev_end = t->pos + t->len;
	while (p->pos < p->len && is_space(p->text[p->pos]))
		p->pos++;
	memset(t, 0, sizeof(*t));
	t->pos = p->pos;
	t->len = 1;
	s = p->text + p->pos;
	if (p->pos >= p->len) {
		t->kind = T_END;
		t->len = 0;
	} else if (is_digit(s[0])) {
		lex_number(p, t);
	} else if (is_word_start(s[0])) {
		while (t->pos + t->len < p->len && is_word(s[t->len]))
			t->len++;
		t->kind = word_eq(s, t->len, "and")   ? T_AND
		          : word_eq(s, t->len, "or")  ? T_OR
		          : word_eq(s, t->len, "not") ? T_NOT
		                                      : T_WORD;
	} else {
		uint32_t cp;

		t->kind = T_BAD;
		for (size_t i = 0; i < sizeof(puncts) / sizeof(puncts[0]); i++) {
			t->len = strlen(puncts[i].text);
			if (t->len <= p->len - p->pos && memcmp(s, puncts[i].text, t->len) == 0) {
				t->kind = puncts[i].kind;
				break;
			}
		}
		if (t->kind == T_BAD)
			t->len = ev_utf8_decode(s, p->len - p->pos, &cp);
	}
	p->pos = t->pos + t->len;
}

/* --- the tree ----------------------------------------------------------------------- */

static struct node *node_new(struct parser *p, enum node_kind kind, bool truth)
{
	struct ev_checkexpr *e = p->e;
	struct node *n = ev_xcalloc(1, sizeof(*n));

	n->kind = kind;
	n->truth = truth;
	if (e->nnodes == e->nodecap) {
		e->nodecap = e->nodecap ? 2 * e->nodecap : 16;
		e->nodes = ev_xrealloc(e->nodes, e->nodecap * sizeof(*e->nodes));
	}
	e->nodes[e->nnodes++] = n;
	return n;
}

static void node_add(struct node *n, struct node *kid)
{
	if (n->nkid == n->kidcap) {
		n->kidcap = n->kidcap ? 2 * n->kidcap : 2;
		n->kid = ev_xrealloc(n->kid, n->kidcap * sizeof(*n->kid));
	}
	n->kid[n->nkid++] = kid;
}

/* The index of figure (table, def, group) in e->figs, adding it if new; takes group. */
static size_t fig_intern(struct ev_checkexpr *e, const char *table, const struct ev_figure_def *def,
                         char *group)
{
	for (size_t i = 0; i < e->nfigs; i++) {
		const struct fig *f = &e->figs[i];

		if (f->table == table && f->def == def &&
		    (f->group == NULL ? group == NULL
		                      : group != NULL && strcmp(f->group, group) == 0)) {
			free(group);
			return i;
		}
	}
	if (e->nfigs == e->figcap) {
		e->figcap = e->figcap ? 2 * e->figcap : 8;
		e->figs = ev_xrealloc(e->figs, e->figcap * sizeof(*e->figs));
	}
	e->figs[e->nfigs] = (struct fig){table, def, group};
	return e->nfigs++;
}

/* --- the parser --------------------------------------------------------------------- */

static struct node *parse_or(struct parser *p);

/* Levenshtein distance of a[0..n) (any case) and the lower-case b, for "did you mean". */
static size_t distance(const char *a, size_t n, const char *b)
{
	size_t m = strlen(b), row[32];

	assert(m < sizeof(row) / sizeof(row[0]));
	for (size_t j = 0; j <= m; j++)
		row[j] = j;
	for (size_t i = 1; i <= n; i++) {
		size_t diag = row[0];

		row[0] = i;
		for (size_t j = 1; j <= m; j++) {
			size_t up = row[j];
			size_t best = diag + (to_lower(a[i - 1]) != b[j - 1]);

			if (up + 1 < best)
				best = up + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			row[j] = best;
			diag = up;
		}
	}
	return row[m];
}

/* "expected a figure (every name), got 'x'", with the nearest name when one is close. */
static void *unknown_figure(struct parser *p)
{
	struct ev_buf b;
	const char *near = NULL;
	size_t best = 3;

	ev_buf_init(&b);
	ev_buf_adds(&b, "a figure (");
	for (size_t i = 0; i < NFIGURES; i++) {
		ev_buf_printf(&b, "%s%s", i ? ", " : "", figures[i].name);
		if (p->tok.kind == T_WORD && p->tok.len <= MAX_SHOWN) {
			size_t d = distance(p->text + p->tok.pos, p->tok.len, figures[i].name);

			if (d < best) {
				best = d;
				near = figures[i].name;
			}
		}
	}
	ev_buf_adds(&b, ")");
	if (near != NULL) {
		char *got = shown(p, p->tok.pos, p->tok.len);

		fail(p, p->tok.pos, "expected %s, got %s; did you mean '%s'?", b.data, got, near);
		free(got);
	} else {
		expected(p, b.data);
	}
	ev_buf_free(&b);
	return NULL;
}

/* The group value after '[' (the current token), up to and including ']'. Returns the
 * malloc'd value, or NULL with the error set. Lexed here rather than by next(): a group
 * value may start with a digit, hold '-', ':' and '.', or be quoted. */
static char *parse_group(struct parser *p)
{
	const char *s = p->text;
	size_t i = p->tok.pos + 1, start, end;
	struct ev_buf v;

	while (i < p->len && is_space(s[i]))
		i++;
	start = i;
	ev_buf_init(&v);
	if (i < p->len && s[i] == '"') {
		for (i++;; i++) {
			uint32_t cp;
			size_t n;

			if (i >= p->len) {
				p->tok = (struct tok){.kind = T_END, .pos = i};
				ev_buf_free(&v);
				return expected(p, "'\"' to close the group value");
			}
			if (s[i] == '"')
				break;
			if (s[i] == '\\' && i + 1 < p->len && (s[i + 1] == '"' || s[i + 1] == '\\'))
				i++;
			n = ev_utf8_decode(s + i, p->len - i, &cp);
			if ((cp == EV_TEXT_REPLACEMENT && n == 1) || cp < 0x20 ||
			    (cp >= 0x7F && cp < 0xA0)) {
				p->tok = (struct tok){.kind = T_BAD, .pos = i, .len = n};
				ev_buf_free(&v);
				return expected(p, "printable UTF-8 text in the group value");
			}
			ev_buf_add(&v, s + i, n);
			i += n - 1;
		}
		i++;
		if (v.len == 0) {
			p->tok = (struct tok){.kind = T_BAD, .pos = start, .len = 2};
			ev_buf_free(&v);
			return expected(p, "a group value");
		}
	} else {
		while (i < p->len && is_group(s[i]))
			i++;
		if (i == start) {
			p->pos = start;
			next(p);
			return expected(p, "a group value");
		}
		ev_buf_add(&v, s + start, i - start);
	}
	end = i;
	if (v.len > EV_CHECKEXPR_MAX_GROUP) {
		char what[64];

		snprintf(what, sizeof(what), "a group value of at most %d bytes",
		         EV_CHECKEXPR_MAX_GROUP);
		p->tok = (struct tok){.kind = T_BAD, .pos = start, .len = end - start};
		ev_buf_free(&v);
		return expected(p, what);
	}
	while (i < p->len && is_space(s[i]))
		i++;
	p->pos = i;
	next(p);
	if (p->tok.kind != T_RBRACK) {
		ev_buf_free(&v);
		return expected(p, "']'");
	}
	next(p);
	return ev_buf_steal(&v);
}

/* FIGURE := [TABLE "."] NAME ["[" GROUP "]"]; the current token is the first word. */
static struct node *parse_figure(struct parser *p)
{
	const char *table = NULL;
	const struct ev_figure_def *def;
	char *group = NULL;
	struct node *n;
	struct tok first = p->tok;

	next(p);
	if (p->tok.kind == T_DOT) {
		for (size_t i = 0; i < sizeof(tables) / sizeof(tables[0]); i++)
			if (word_eq(p->text + first.pos, first.len, tables[i]))
				table = tables[i];
		if (table == NULL) {
			p->tok = first;
			return expected(p, "a table (outbox, message)");
		}
		next(p);
		if (p->tok.kind != T_WORD && p->tok.kind != T_AND && p->tok.kind != T_OR &&
		    p->tok.kind != T_NOT)
			return unknown_figure(p);
		first = p->tok;
		next(p);
	}
	def = figure_find_n(p->text + first.pos, first.len);
	if (def == NULL) {
		p->tok = first;
		return unknown_figure(p);
	}
	if (p->tok.kind == T_LBRACK && (group = parse_group(p)) == NULL)
		return NULL;
	n = node_new(p, N_FIG, false);
	n->fig = fig_intern(p->e, table, def, group);
	return n;
}

/* ATOM := NUMBER | DURATION | FIGURE | "(" expr ")" */
static struct node *parse_atom(struct parser *p)
{
	struct node *n;

	switch (p->tok.kind) {
	case T_NUM:
		n = node_new(p, N_NUM, false);
		n->num = p->tok.num;
		next(p);
		return n;
	case T_BADNUM:
		if (p->tok.too_long)
			return expected(p, "a number of at most 15 digits");
		return expected(p, "a number (10, 0.5) or a duration (a whole number followed by "
		                   "ms, s, m, h or d)");
	case T_WORD:
		return parse_figure(p);
	case T_LPAREN:
		if (++p->depth > EV_CHECKEXPR_MAX_DEPTH)
			return fail(p, p->tok.pos,
			            "expected at most %d levels of parentheses and 'not', got more",
			            EV_CHECKEXPR_MAX_DEPTH);
		next(p);
		if ((n = parse_or(p)) == NULL)
			return NULL;
		if (p->tok.kind != T_RPAREN)
			return expected(p, "an operator or ')'");
		next(p);
		p->depth--;
		return n;
	default:
		return expected(p, "a number, a duration, a figure or '('");
	}
}

/* Refuse a truth value where a number is needed: "(a > 1) + 1", "(a > 1) > 0". */
static void *not_a_number(struct parser *p, size_t start)
{
	char *got = shown(p, start, p->prev_end - start);

	fail(p, start, "expected a number, got the truth value %s", got);
	free(got);
	return NULL;
}

/* SUM := ATOM (("+" | "-") ATOM)* */
static struct node *parse_sum(struct parser *p)
{
	size_t start = p->tok.pos;
	struct node *n, *kid = parse_atom(p);

	if (kid == NULL)
		return NULL;
	if (p->tok.kind != T_PLUS && p->tok.kind != T_MINUS)
		return kid;
	if (kid->truth)
		return not_a_number(p, start);
	n = node_new(p, N_SUM, false);
	node_add(n, kid);
	while (p->tok.kind == T_PLUS || p->tok.kind == T_MINUS) {
		bool neg = p->tok.kind == T_MINUS;

		next(p);
		start = p->tok.pos;
		if ((kid = parse_atom(p)) == NULL)
			return NULL;
		if (kid->truth)
			return not_a_number(p, start);
		kid->neg = neg;
		node_add(n, kid);
	}
	return n;
}

static bool is_cmp(enum tok_kind k)
{
	return k == T_GT || k == T_GE || k == T_LT || k == T_LE || k == T_EQ || k == T_NE;
}

/* CMP := SUM (op SUM)? */
static struct node *parse_cmp(struct parser *p)
{
	size_t start = p->tok.pos;
	struct node *n, *l = parse_sum(p), *r;

	if (l == NULL || !is_cmp(p->tok.kind))
		return l;
	if (l->truth)
		return not_a_number(p, start);
	n = node_new(p, N_CMP, true);
	n->op = p->tok.kind;
	next(p);
	start = p->tok.pos;
	if ((r = parse_sum(p)) == NULL)
		return NULL;
	if (r->truth)
		return not_a_number(p, start);
	node_add(n, l);
	node_add(n, r);
	if (is_cmp(p->tok.kind))
		return expected(p, "'and' or 'or' between two comparisons");
	return n;
}

/* NOT := ("not" | "!") NOT | CMP */
static struct node *parse_not(struct parser *p)
{
	struct node *n, *kid;

	if (p->tok.kind != T_NOT)
		return parse_cmp(p);
	if (++p->depth > EV_CHECKEXPR_MAX_DEPTH)
		return fail(p, p->tok.pos,
		            "expected at most %d levels of parentheses and 'not', got more",
		            EV_CHECKEXPR_MAX_DEPTH);
	next(p);
	if ((kid = parse_not(p)) == NULL)
		return NULL;
	p->depth--;
	n = node_new(p, N_NOT, true);
	node_add(n, kid);
	return n;
}

/* AND := NOT (("and" | "&&") NOT)*  and  OR := AND (("or" | "||") AND)*, as one n-ary node. */
static struct node *parse_chain(struct parser *p, enum tok_kind op, enum node_kind kind,
                                struct node *(*operand)(struct parser *))
{
	struct node *n, *kid = operand(p);

	if (kid == NULL || p->tok.kind != op)
		return kid;
	n = node_new(p, kind, true);
	node_add(n, kid);
	while (p->tok.kind == op) {
		next(p);
		if ((kid = operand(p)) == NULL)
			return NULL;
		node_add(n, kid);
	}
	return n;
}

static struct node *parse_and(struct parser *p)
{
	return parse_chain(p, T_AND, N_AND, parse_not);
}

static struct node *parse_or(struct parser *p)
{
	return parse_chain(p, T_OR, N_OR, parse_and);
}

struct ev_checkexpr *ev_checkexpr_parse(const char *text, struct ev_error *err)
{
	struct parser p = {.text = text, .err = err};
	size_t len;

	assert(text != NULL);
	ev_error_clear(err);
	len = strlen(text);
	if (len > EV_CHECKEXPR_MAX_LEN) {
		ev_error_set(err, EV_ERR_USAGE,
		             "the expression is %zu bytes long; at most %d bytes are allowed", len,
		             EV_CHECKEXPR_MAX_LEN);
		return NULL;
	}
	p.len = len;
	p.e = ev_xcalloc(1, sizeof(*p.e));
	next(&p);
	p.e->root = parse_or(&p);
	if (p.e->root != NULL && p.tok.kind != T_END)
		p.e->root = expected(&p, p.tok.kind == T_RPAREN
		                                 ? "end of expression (this ')' closes nothing)"
		                                 : "an operator or end of expression");
	if (p.e->root == NULL) {
		ev_checkexpr_free(&p.e);
		return NULL;
	}
	assert(p.depth == 0);
	return p.e;
}

void ev_checkexpr_free(struct ev_checkexpr **e)
{
	if (e == NULL || *e == NULL)
		return;
	for (size_t i = 0; i < (*e)->nnodes; i++) {
		free((*e)->nodes[i]->kid);
		free((*e)->nodes[i]);
	}
	for (size_t i = 0; i < (*e)->nfigs; i++)
		free((*e)->figs[i].group);
	free((*e)->nodes);
	free((*e)->figs);
	free(*e);
	*e = NULL;
}

size_t ev_checkexpr_figures(const struct ev_checkexpr *e,
                            void (*each)(void *ctx, const char *table, const char *name,
                                         const char *group),
                            void *ctx)
{
	assert(e != NULL);
	for (size_t i = 0; each != NULL && i < e->nfigs; i++)
		each(ctx, e->figs[i].table, e->figs[i].def->name, e->figs[i].group);
	return e->nfigs;
}

/* --- evaluation --------------------------------------------------------------------- */

/* What is known of a number: it lies in [lo, hi]. A count that reached its cap is
 * [cap, +inf]; everything else is a point, lo == hi. */
struct val {
	bool known;
	double lo, hi;
};

/* -1, 0 or 1 as a is less than, equal to (within the tolerance) or greater than b. One
 * tolerance for every operator keeps them consistent: a >= b exactly when a > b or a == b. */
static int compare(double a, double b)
{
	double tol;

	if (a == b)
		return 0;
	if (isinf(a) || isinf(b))
		return a < b ? -1 : 1;
	tol = 1e-12 * fmax(1.0, fmax(fabs(a), fabs(b)));
	if (fabs(a - b) <= tol)
		return 0;
	return a < b ? -1 : 1;
}

static struct val num_eval(const struct node *n, const struct val *figv)
{
	struct val r = {true, 0, 0};

	switch (n->kind) {
	case N_NUM:
		r.lo = r.hi = n->num;
		return r;
	case N_FIG:
		return figv[n->fig];
	case N_SUM:
		for (size_t i = 0; i < n->nkid; i++) {
			struct val k = num_eval(n->kid[i], figv);

			r.known = r.known && k.known;
			r.lo += n->kid[i]->neg ? -k.hi : k.lo;
			r.hi += n->kid[i]->neg ? -k.lo : k.hi;
		}
		/* inf - inf: no value a person could compare with. */
		if (isnan(r.lo) || isnan(r.hi))
			r.known = false;
		return r;
	default:
		assert(0 && "a truth value where a number is needed");
		return (struct val){false, 0, 0};
	}
}

static enum ev_tristate tri(bool is_true, bool is_false)
{
	return is_true ? EV_TRUE : is_false ? EV_FALSE : EV_UNKNOWN;
}

/* a op b, for a and b known to lie in their intervals: true or false when that holds for
 * every pair of values in them, else unknown ("pending > 200000" with pending ≥100000). */
static enum ev_tristate compare_vals(enum tok_kind op, struct val a, struct val b)
{
	bool lt = compare(a.hi, b.lo) < 0, le = compare(a.hi, b.lo) <= 0;
	bool gt = compare(a.lo, b.hi) > 0, ge = compare(a.lo, b.hi) >= 0;
	bool eq = compare(a.lo, a.hi) == 0 && compare(b.lo, b.hi) == 0 && compare(a.lo, b.lo) == 0;

	switch (op) {
	case T_GT:
		return tri(gt, le);
	case T_GE:
		return tri(ge, lt);
	case T_LT:
		return tri(lt, ge);
	case T_LE:
		return tri(le, gt);
	case T_EQ:
		return tri(eq, lt || gt);
	default:
		assert(op == T_NE);
		return tri(lt || gt, eq);
	}
}

static enum ev_tristate truth_eval(const struct node *n, const struct val *figv)
{
	enum ev_tristate r, k, decisive;
	struct val a, b;

	switch (n->kind) {
	case N_CMP:
		a = num_eval(n->kid[0], figv);
		b = num_eval(n->kid[1], figv);
		if (!a.known || !b.known)
			return EV_UNKNOWN;
		return compare_vals(n->op, a, b);
	case N_NOT:
		r = truth_eval(n->kid[0], figv);
		return r == EV_UNKNOWN ? EV_UNKNOWN : r == EV_TRUE ? EV_FALSE : EV_TRUE;
	case N_AND:
	case N_OR:
		/* One false child decides "and", one true child "or"; else any unknown child
		 * makes it unknown. No short cut: the figures were all looked up already. */
		decisive = n->kind == N_AND ? EV_FALSE : EV_TRUE;
		r = n->kind == N_AND ? EV_TRUE : EV_FALSE;
		for (size_t i = 0; i < n->nkid; i++) {
			k = truth_eval(n->kid[i], figv);
			if (k == decisive)
				r = k;
			else if (k == EV_UNKNOWN && r != decisive)
				r = EV_UNKNOWN;
		}
		return r;
	default:
		/* A bare number: true when not 0. */
		a = num_eval(n, figv);
		if (!a.known)
			return EV_UNKNOWN;
		b = (struct val){true, 0, 0};
		return compare_vals(T_NE, a, b);
	}
}

/* A value for the summary: whole numbers as integers, others with at most two decimals,
 * seconds with "s". Printed by hand, not with "%.2f", whose decimal point is the locale's. */
static void add_value(struct ev_buf *b, double v, enum ev_figure_unit unit)
{
	const char *suffix = unit == EV_FIG_SECONDS ? "s" : "";

	if (isinf(v)) {
		ev_buf_adds(b, v < 0 ? "-inf" : "inf");
	} else if (fabs(v) >= 1e15 || v == floor(v)) {
		ev_buf_printf(b, "%.0f%s", v == 0 ? 0.0 : v, suffix);
	} else {
		long long c = llround(fabs(v) * 100);
		const char *sign = v < 0 && c != 0 ? "-" : "";

		if (c % 100 == 0)
			ev_buf_printf(b, "%s%lld%s", sign, c / 100, suffix);
		else if (c % 10 == 0)
			ev_buf_printf(b, "%s%lld.%lld%s", sign, c / 100, c % 100 / 10, suffix);
		else
			ev_buf_printf(b, "%s%lld.%02lld%s", sign, c / 100, c % 100, suffix);
	}
}

/* outbox.failed[ORDER_CREATED], exhausted, failed["a b"]: as an expression would name it. */
static void add_label(struct ev_buf *b, const struct fig *f)
{
	struct ev_buf g;
	bool bare = true;
	char *safe;

	if (f->table != NULL)
		ev_buf_printf(b, "%s.", f->table);
	ev_buf_adds(b, f->def->name);
	if (f->group == NULL)
		return;
	for (const char *s = f->group; *s != '\0'; s++)
		bare = bare && is_group(*s);
	ev_buf_init(&g);
	for (const char *s = f->group; *s != '\0'; s++) {
		if (!bare && (*s == '"' || *s == '\\'))
			ev_buf_addc(&g, '\\');
		ev_buf_addc(&g, *s);
	}
	/* The parser let through only printable UTF-8; this is for the characters that reorder
	 * text (bidi overrides), which a terminal line should not carry either. */
	safe = ev_text_sanitize(g.data, g.len);
	ev_buf_printf(b, bare ? "[%s]" : "[\"%s\"]", safe);
	free(safe);
	ev_buf_free(&g);
}

enum ev_tristate ev_checkexpr_eval(const struct ev_checkexpr *e, ev_figure_fn fn, void *ctx,
                                   struct ev_buf *why)
{
	struct val *figv;
	enum ev_tristate r;

	assert(e != NULL && fn != NULL);
	figv = ev_xcalloc(e->nfigs, sizeof(*figv));
	for (size_t i = 0; i < e->nfigs; i++) {
		const struct fig *f = &e->figs[i];
		double v = NAN;
		int rc = fn(ctx, f->table, f->def->name, f->group, &v);

		figv[i].known = (rc == 0 || rc == 1) && !isnan(v);
		figv[i].lo = figv[i].known ? v : 0;
		figv[i].hi = figv[i].known && rc == 1 ? INFINITY : figv[i].lo;
		if (why != NULL) {
			if (i > 0)
				ev_buf_addc(why, ' ');
			add_label(why, f);
			ev_buf_adds(why, !figv[i].known ? "=unknown" : rc == 1 ? "=≥" : "=");
			if (figv[i].known)
				add_value(why, v, f->def->unit);
		}
	}
	r = truth_eval(e->root, figv);
	free(figv);
	return r;
}

/* --- the plugin's status ------------------------------------------------------------ */

enum ev_check_status ev_checkexpr_status(enum ev_tristate warning, enum ev_tristate critical)
{
	if (critical == EV_TRUE)
		return EV_CHECK_CRITICAL;
	if (critical == EV_UNKNOWN || warning == EV_UNKNOWN)
		return EV_CHECK_UNKNOWN;
	return warning == EV_TRUE ? EV_CHECK_WARNING : EV_CHECK_OK;
}

const char *ev_checkexpr_status_name(enum ev_check_status s)
{
	switch (s) {
	case EV_CHECK_OK:
		return "OK";
	case EV_CHECK_WARNING:
		return "WARNING";
	case EV_CHECK_CRITICAL:
		return "CRITICAL";
	default:
		return "UNKNOWN";
	}
}
