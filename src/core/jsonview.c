/* evtop — the payload pretty-printer. jansson validates; an iterative tokenizer indexes the
 * stored text into nodes in document order; the lines shown are a list of (node, part)
 * rebuilt on each fold change, and one line's text is rendered only when asked for. */
#include <config.h>

#include "core/jsonview.h"
#include "core/i18n.h"
#include "core/text.h"
#include "core/util.h"

#include <assert.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NONE      UINT32_MAX
#define CONT_MARK "\xE2\x86\xAA" /* U+21AA "↪" */

enum kind { K_OBJECT, K_ARRAY, K_STRING, K_NUMBER, K_LITERAL };

/* One JSON value, in document order (pre-order), so a subtree is the run [i, end). Each
 * takes at least one stored byte, and 28 bytes here: the index stays proportional to the
 * payload (hence uint32_t offsets; longer text gets the raw view). */
struct node {
	uint32_t key;     /* the member's key token, quotes included ... */
	uint32_t key_len; /* ... 0: not an object member */
	uint32_t off;     /* scalar: its token; container: its opening bracket */
	uint32_t len;     /* scalar: token length; container: number of children */
	uint32_t end;     /* one past the last node of the subtree */
	uint32_t parent;  /* NONE for the top-level value */
	uint16_t depth;   /* jansson refuses more than 2048 levels */
	uint8_t kind;
	bool folded;
};

/* A line of the current layout: a node's first line (sub even) or its closing bracket (sub
 * odd); sub >> 1 counts the continuation lines of one that is too long. */
struct vline {
	uint32_t node;
	uint32_t sub;
};

/* A line of the raw view, at most EV_JSONVIEW_LINE_MAX stored bytes. */
struct rawline {
	size_t off;
	uint32_t len;
	bool cont;
};

/* The pieces of one logical line after its indentation: stored tokens and constants. */
struct seg {
	const char *s;
	size_t len;
	enum ev_style style;
	bool stored; /* from the payload: sanitised; may be cut between code points */
};

struct segs {
	struct seg s[8];
	size_t n;
	size_t total;
	char count[32]; /* "3 keys" of a folded node */
};

struct ev_jsonview {
	char *text;
	size_t len;
	bool valid;
	char *error;

	struct node *nodes;
	uint32_t nnodes;
	struct vline *vis;
	size_t nvis, viscap;

	struct rawline *raw;
	size_t nraw;

	/* The line handed out by ev_jsonview_line (and scratch for ev_jsonview_find). */
	struct ev_buf buf;
	struct ev_jspan *spans;
	size_t nspans, spancap;
	struct ev_jline line;
};

static bool is_cont(char c)
{
	return ((unsigned char)c & 0xC0) == 0x80;
}

static bool is_ws(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

static bool is_container(const struct node *d)
{
	return d->kind == K_OBJECT || d->kind == K_ARRAY;
}

static bool can_fold(const struct node *d)
{
	return is_container(d) && d->len > 0;
}

/* --- segments and cutting long lines ------------------------------------------------- */

static void seg_add(struct segs *g, const char *s, size_t len, enum ev_style style, bool stored)
{
	assert(g->n < sizeof(g->s) / sizeof(g->s[0]));
	g->s[g->n++] = (struct seg){s, len, style, stored};
	g->total += len;
}

static void seg_const(struct segs *g, const char *s, enum ev_style style)
{
	seg_add(g, s, strlen(s), style, false);
}

/* Where the line part starting at content offset pos ends: EV_JSONVIEW_LINE_MAX bytes on,
 * moved back so that it splits neither a UTF-8 sequence nor a constant ("{…}"). */
static size_t next_cut(const struct segs *g, size_t pos)
{
	size_t b = pos + EV_JSONVIEW_LINE_MAX, start = 0;

	if (b >= g->total)
		return g->total;
	for (size_t i = 0; i < g->n; start += g->s[i].len, i++) {
		const struct seg *s = &g->s[i];

		if (b >= start + s->len)
			continue;
		if (!s->stored)
			return start > pos ? start : b;
		/* A lead byte has at most three continuation bytes after it. */
		for (int back = 0; back < 3 && b - 1 > pos && b > start && is_cont(s->s[b - start]);
		     back++)
			b--;
		return b;
	}
	return b;
}

static size_t chunk_count(const struct segs *g)
{
	size_t n = 1, pos = 0;

	if (g->total <= EV_JSONVIEW_LINE_MAX)
		return 1;
	while ((pos = next_cut(g, pos)) < g->total)
		n++;
	return n;
}

/* The segments of node j's first line (or of its closing line), as folded or unfolded. */
static void segs_of(const struct ev_jsonview *v, uint32_t j, bool close, bool folded,
                    struct segs *g)
{
	const struct node *d = &v->nodes[j];
	bool comma = d->parent != NONE && d->end != v->nodes[d->parent].end;
	bool obj = d->kind == K_OBJECT;

	g->n = 0;
	g->total = 0;
	if (close) {
		seg_const(g, obj ? "}" : "]", EV_STYLE_JSON_PUNCT);
		if (comma)
			seg_const(g, ",", EV_STYLE_JSON_PUNCT);
		return;
	}
	if (d->key_len > 0) {
		seg_add(g, v->text + d->key, d->key_len, EV_STYLE_JSON_KEY, true);
		seg_const(g, ":", EV_STYLE_JSON_PUNCT);
		seg_const(g, " ", EV_STYLE_NORMAL);
	}
	switch ((enum kind)d->kind) {
	case K_OBJECT:
	case K_ARRAY:
		if (d->len == 0) {
			seg_const(g, obj ? "{}" : "[]", EV_STYLE_JSON_PUNCT);
		} else if (folded) {
			seg_const(g, obj ? "{\xE2\x80\xA6}" : "[\xE2\x80\xA6]", EV_STYLE_JSON_FOLD);
			seg_const(g, " ", EV_STYLE_NORMAL);
			snprintf(g->count, sizeof(g->count),
			         /* TRANSLATORS: a folded object's size: "{…} 3 keys". */
			         obj ? (d->len == 1 ? _("%u key") : _("%u keys"))
			             : (d->len == 1 ? _("%u item") : _("%u items")),
			         (unsigned)d->len);
			seg_const(g, g->count, EV_STYLE_JSON_FOLD);
		} else {
			seg_const(g, obj ? "{" : "[", EV_STYLE_JSON_PUNCT);
			comma = false; /* it goes on the closing line */
		}
		break;
	case K_STRING:
		seg_add(g, v->text + d->off, d->len, EV_STYLE_JSON_STRING, true);
		break;
	case K_NUMBER:
		seg_add(g, v->text + d->off, d->len, EV_STYLE_JSON_NUMBER, true);
		break;
	case K_LITERAL:
		seg_add(g, v->text + d->off, d->len, EV_STYLE_JSON_LITERAL, true);
		break;
	}
	if (comma)
		seg_const(g, ",", EV_STYLE_JSON_PUNCT);
}

/* --- rendering one line ---------------------------------------------------------------- */

static void span_add(struct ev_jsonview *v, size_t off, size_t len, enum ev_style style)
{
	if (len == 0 || style == EV_STYLE_NORMAL)
		return;
	if (v->nspans == v->spancap) {
		v->spancap = v->spancap ? 2 * v->spancap : 16;
		v->spans = ev_xrealloc(v->spans, v->spancap * sizeof(*v->spans));
	}
	v->spans[v->nspans++] = (struct ev_jspan){off, len, style};
}

static void add_stored(struct ev_buf *b, const char *s, size_t n)
{
	size_t i = 0;
	char *clean;

	while (i < n && (unsigned char)s[i] >= 0x20 && (unsigned char)s[i] < 0x7F)
		i++;
	if (i == n) {
		ev_buf_add(b, s, n);
		return;
	}
	clean = ev_text_sanitize(s, n);
	ev_buf_adds(b, clean);
	free(clean);
}

/* Render content bytes [from, to) of g into v->line, indented by depth. */
static const struct ev_jline *render(struct ev_jsonview *v, const struct segs *g, size_t from,
                                     size_t to, int depth, bool cont)
{
	static const char spaces[] = "                                ";
	size_t start = 0;

	v->buf.len = 0;
	ev_buf_add(&v->buf, "", 0);
	v->nspans = 0;
	for (size_t n = 2 * (size_t)depth; n > 0;) {
		size_t k = n < sizeof(spaces) - 1 ? n : sizeof(spaces) - 1;

		ev_buf_add(&v->buf, spaces, k);
		n -= k;
	}
	if (cont) {
		span_add(v, v->buf.len, strlen(CONT_MARK), EV_STYLE_MARKER);
		ev_buf_adds(&v->buf, CONT_MARK);
	}
	for (size_t i = 0; i < g->n; start += g->s[i].len, i++) {
		const struct seg *s = &g->s[i];
		size_t lo = from > start ? from : start;
		size_t hi = to < start + s->len ? to : start + s->len;
		size_t at = v->buf.len;

		if (lo >= hi)
			continue;
		if (s->stored)
			add_stored(&v->buf, s->s + (lo - start), hi - lo);
		else
			ev_buf_add(&v->buf, s->s + (lo - start), hi - lo);
		span_add(v, at, v->buf.len - at, s->style);
	}
	v->line = (struct ev_jline){
	        .text = v->buf.data,
	        .len = v->buf.len,
	        .spans = v->spans,
	        .nspans = v->nspans,
	        .depth = depth,
	        .cont = cont,
	};
	return &v->line;
}

/* Render line p of the JSON view; `unfolded` renders a folded node's first line as if open. */
static const struct ev_jline *render_node(struct ev_jsonview *v, struct vline p, bool unfolded)
{
	const struct node *d = &v->nodes[p.node];
	bool close = p.sub & 1, folded = d->folded && !unfolded;
	size_t chunk = p.sub >> 1, from = 0, to;
	struct segs g;
	const struct ev_jline *l;

	segs_of(v, p.node, close, folded, &g);
	for (size_t k = 0; k < chunk; k++)
		from = next_cut(&g, from);
	to = next_cut(&g, from);
	l = render(v, &g, from, to, d->depth, chunk > 0);
	if (!close && chunk == 0 && can_fold(d)) {
		v->line.foldable = true;
		v->line.folded = folded;
		v->line.fold_id = p.node;
	}
	return l;
}

static const struct ev_jline *render_raw(struct ev_jsonview *v, size_t i)
{
	struct segs g = {.n = 0};

	if (i == 0) {
		seg_const(&g, EV_JSONVIEW_NOT_JSON, EV_STYLE_MARKER);
		return render(v, &g, 0, g.total, 0, false);
	}
	const struct rawline *r = &v->raw[i - 1];

	seg_add(&g, v->text + r->off, r->len, EV_STYLE_NORMAL, true);
	return render(v, &g, 0, g.total, 0, r->cont);
}

/* --- building ---------------------------------------------------------------------------- */

static void raw_add(struct ev_jsonview *v, size_t *cap, size_t off, size_t len, bool cont)
{
	if (v->nraw == *cap) {
		*cap = *cap ? 2 * *cap : 64;
		v->raw = ev_xrealloc(v->raw, *cap * sizeof(*v->raw));
	}
	v->raw[v->nraw++] = (struct rawline){off, (uint32_t)len, cont};
}

/* The stored text split at '\n' (a final '\n' ends the last line rather than starting an
 * empty one), each piece cut into parts of at most EV_JSONVIEW_LINE_MAX bytes. */
static void index_raw(struct ev_jsonview *v)
{
	size_t pos = 0, cap = 0;

	while (pos < v->len) {
		const char *nl = memchr(v->text + pos, '\n', v->len - pos);
		size_t eol = nl ? (size_t)(nl - v->text) : v->len, s = pos;
		struct segs g = {.n = 0};

		seg_add(&g, v->text + pos, eol - pos, EV_STYLE_NORMAL, true);
		do {
			size_t e = pos + next_cut(&g, s - pos);

			raw_add(v, &cap, s, e - s, s > pos);
			s = e;
		} while (s < eol);
		pos = nl ? eol + 1 : v->len;
	}
}

/* Past the string token starting at i (a '"'), or 0 when it does not end. */
static size_t scan_string(const char *t, size_t n, size_t i)
{
	for (i++; i < n; i++) {
		if (t[i] == '\\')
			i++;
		else if (t[i] == '"')
			return i + 1;
	}
	return 0;
}

static uint32_t node_add(struct ev_jsonview *v, uint32_t *cap, const uint32_t *stack, size_t depth,
                         uint32_t key, uint32_t key_len, enum kind kind, size_t off)
{
	uint32_t parent = depth ? stack[depth - 1] : NONE;

	if (v->nnodes == *cap) {
		*cap = *cap ? 2 * *cap : 256;
		v->nodes = ev_xrealloc(v->nodes, (size_t)*cap * sizeof(*v->nodes));
	}
	if (parent != NONE)
		v->nodes[parent].len++;
	v->nodes[v->nnodes] = (struct node){
	        .key = key,
	        .key_len = key_len,
	        .off = (uint32_t)off,
	        .end = v->nnodes + 1,
	        .parent = parent,
	        .depth = (uint16_t)depth,
	        .kind = (uint8_t)kind,
	};
	return v->nnodes++;
}

/* Index the stored text, which jansson has accepted, into v->nodes. An explicit stack of
 * open containers, not recursion, so depth costs heap, never C stack. False if the text is
 * not what this tokenizer expects after all (then the raw view is shown). */
static bool index_json(struct ev_jsonview *v)
{
	enum { S_VALUE, S_ELEM_OR_END, S_MEMBER_OR_END, S_MEMBER, S_AFTER } st = S_VALUE;
	const char *t = v->text;
	size_t n = v->len, i = 0, depth = 0, stackcap = 0;
	uint32_t *stack = NULL, cap = 0, key = 0, key_len = 0;
	bool ok = false;

	for (;;) {
		while (i < n && is_ws(t[i]))
			i++;
		if (st == S_AFTER && depth == 0) {
			ok = i == n;
			break;
		}
		if (i >= n)
			break;
		char c = t[i];
		bool end_obj = c == '}' && st == S_MEMBER_OR_END;
		bool end_arr = c == ']' && st == S_ELEM_OR_END;

		if (st == S_AFTER && depth > 0) {
			enum kind k = (enum kind)v->nodes[stack[depth - 1]].kind;

			if (c == ',') {
				st = k == K_OBJECT ? S_MEMBER : S_VALUE;
				i++;
				continue;
			}
			end_obj = c == '}' && k == K_OBJECT;
			end_arr = c == ']' && k == K_ARRAY;
			if (!end_obj && !end_arr)
				break;
		}
		if (end_obj || end_arr) {
			v->nodes[stack[--depth]].end = v->nnodes;
			st = S_AFTER;
			i++;
			continue;
		}
		if (st == S_MEMBER_OR_END || st == S_MEMBER) {
			size_t e = c == '"' ? scan_string(t, n, i) : 0;

			if (e == 0)
				break;
			key = (uint32_t)i;
			key_len = (uint32_t)(e - i);
			for (i = e; i < n && is_ws(t[i]);)
				i++;
			if (i >= n || t[i] != ':')
				break;
			i++;
			st = S_VALUE;
			continue;
		}
		/* S_VALUE or S_ELEM_OR_END: a value starts here. */
		if (depth >= UINT16_MAX)
			break;
		if (c == '{' || c == '[') {
			uint32_t j = node_add(v, &cap, stack, depth, key, key_len,
			                      c == '{' ? K_OBJECT : K_ARRAY, i);

			if (depth == stackcap) {
				stackcap = stackcap ? 2 * stackcap : 64;
				stack = ev_xrealloc(stack, stackcap * sizeof(*stack));
			}
			stack[depth++] = j;
			st = c == '{' ? S_MEMBER_OR_END : S_ELEM_OR_END;
			i++;
		} else {
			enum kind k;
			size_t e = i;

			if (c == '"') {
				k = K_STRING;
				e = scan_string(t, n, i);
			} else if (c == '-' || (c >= '0' && c <= '9')) {
				k = K_NUMBER;
				while (e < n && t[e] != '\0' &&
				       strchr("+-.eE0123456789", t[e]) != NULL)
					e++;
			} else {
				k = K_LITERAL;
				while (e < n && t[e] >= 'a' && t[e] <= 'z')
					e++;
			}
			if (e <= i)
				break;
			uint32_t j = node_add(v, &cap, stack, depth, key, key_len, k, i);

			v->nodes[j].len = (uint32_t)(e - i);
			i = e;
			st = S_AFTER;
		}
		key = key_len = 0;
	}
	free(stack);
	return ok && v->nnodes > 0;
}

/* The lines shown: pre-order, skipping folded subtrees in one step each, so the cost is the
 * number of lines shown (and of parts of lines longer than EV_JSONVIEW_LINE_MAX). */
static void vis_add(struct ev_jsonview *v, uint32_t node, uint32_t sub)
{
	if (v->nvis == v->viscap) {
		v->viscap = v->viscap ? 2 * v->viscap : 256;
		v->vis = ev_xrealloc(v->vis, v->viscap * sizeof(*v->vis));
	}
	v->vis[v->nvis++] = (struct vline){node, sub};
}

static void rebuild(struct ev_jsonview *v)
{
	uint32_t j = 0;

	v->nvis = 0;
	while (j < v->nnodes) {
		const struct node *d = &v->nodes[j];
		struct segs g;
		size_t parts;

		segs_of(v, j, false, d->folded, &g);
		parts = chunk_count(&g);
		for (size_t k = 0; k < parts; k++)
			vis_add(v, j, (uint32_t)(k << 1));
		if (can_fold(d) && !d->folded) {
			j++;
			continue;
		}
		for (uint32_t p = d->parent; p != NONE && v->nodes[p].end == d->end;
		     p = v->nodes[p].parent)
			vis_add(v, p, 1);
		j = d->end;
	}
}

static void set_depth(struct ev_jsonview *v, int depth)
{
	for (uint32_t j = 0; j < v->nnodes; j++)
		v->nodes[j].folded = depth > 0 && v->nodes[j].depth >= depth;
}

/* Validate with jansson, with the flags that accept every JSON text: any top-level value,
 * integers of any size (as reals), "\u0000". */
static bool validate(struct ev_jsonview *v)
{
	json_error_t err;
	json_t *j;
	char *msg;

	if (v->len >= UINT32_MAX) {
		v->error = ev_xasprintf(_("too large to pretty-print (%zu bytes)"), v->len);
		return false;
	}
	j = json_loadb(v->text, v->len, JSON_DECODE_ANY | JSON_DECODE_INT_AS_REAL | JSON_ALLOW_NUL,
	               &err);
	if (j != NULL) {
		json_decref(j);
		return true;
	}
	/* jansson quotes the offending bytes ("near '...'"): sanitise. */
	msg = ev_xasprintf(_("line %d, column %d: %s"), err.line, err.column, err.text);
	v->error = ev_text_sanitize(msg, strlen(msg));
	free(msg);
	return false;
}

struct ev_jsonview *ev_jsonview_new(const char *text, size_t len, int fold_depth)
{
	struct ev_jsonview *v = ev_xcalloc(1, sizeof(*v));

	assert(text != NULL || len == 0);
	v->text = ev_xmalloc(len + 1);
	if (len > 0)
		memcpy(v->text, text, len);
	v->text[len] = '\0';
	v->len = len;
	ev_buf_init(&v->buf);
	v->valid = validate(v);
	if (v->valid && !index_json(v)) {
		v->valid = false;
		v->error = ev_xstrdup(_("the JSON could not be indexed"));
	}
	if (v->valid) {
		set_depth(v, fold_depth);
		rebuild(v);
	} else {
		free(v->nodes);
		v->nodes = NULL;
		v->nnodes = 0;
		index_raw(v);
	}
	return v;
}

bool ev_jsonview_valid(const struct ev_jsonview *v)
{
	return v->valid;
}

const char *ev_jsonview_error(const struct ev_jsonview *v)
{
	return v->error;
}

size_t ev_jsonview_line_count(const struct ev_jsonview *v)
{
	return v->valid ? v->nvis : v->nraw + 1;
}

const struct ev_jline *ev_jsonview_line(struct ev_jsonview *v, size_t i)
{
	assert(i < ev_jsonview_line_count(v));
	return v->valid ? render_node(v, v->vis[i], false) : render_raw(v, i);
}

/* The line that shows p now: the same part if it exists, else the node's first line. */
static long locate(const struct ev_jsonview *v, struct vline p)
{
	long first = -1;

	for (size_t i = 0; i < v->nvis; i++) {
		if (v->vis[i].node != p.node || (v->vis[i].sub & 1) != (p.sub & 1))
			continue;
		if (v->vis[i].sub == p.sub)
			return (long)i;
		if (first < 0)
			first = (long)i;
	}
	return first;
}

long ev_jsonview_set_folded(struct ev_jsonview *v, size_t fold_id, bool folded)
{
	if (!v->valid || fold_id >= v->nnodes || !can_fold(&v->nodes[fold_id]))
		return -1;
	v->nodes[fold_id].folded = folded;
	rebuild(v);
	return locate(v, (struct vline){(uint32_t)fold_id, 0});
}

long ev_jsonview_toggle(struct ev_jsonview *v, size_t line)
{
	struct vline p;
	uint32_t j;

	if (!v->valid || line >= v->nvis)
		return -1;
	p = v->vis[line];
	j = p.node;
	if (!(p.sub & 1) && !can_fold(&v->nodes[j]))
		j = v->nodes[j].parent;
	if (j == NONE)
		return -1;
	return ev_jsonview_set_folded(v, j, !v->nodes[j].folded);
}

void ev_jsonview_fold_all(struct ev_jsonview *v, bool fold)
{
	for (uint32_t j = 0; j < v->nnodes; j++)
		v->nodes[j].folded = fold;
	if (v->valid)
		rebuild(v);
}

void ev_jsonview_fold_depth(struct ev_jsonview *v, int depth)
{
	set_depth(v, depth);
	if (v->valid)
		rebuild(v);
}

/* --- search ------------------------------------------------------------------------------ */

static bool contains_ci(const char *hay, size_t hlen, const char *needle, size_t nlen)
{
	for (size_t i = 0; i + nlen <= hlen; i++) {
		size_t k = 0;

		while (k < nlen) {
			char a = hay[i + k], b = needle[k];

			if (a >= 'A' && a <= 'Z')
				a = (char)(a - 'A' + 'a');
			if (b >= 'A' && b <= 'Z')
				b = (char)(b - 'A' + 'a');
			if (a != b)
				break;
			k++;
		}
		if (k == nlen)
			return true;
	}
	return false;
}

static size_t parts_unfolded(const struct ev_jsonview *v, uint32_t j)
{
	struct segs g;

	segs_of(v, j, false, false, &g);
	return chunk_count(&g);
}

/* The line after p with every node unfolded; false after the last one. */
static bool advance(const struct ev_jsonview *v, struct vline *p)
{
	const struct node *d = &v->nodes[p->node];

	if (!(p->sub & 1)) {
		if ((p->sub >> 1) + 1 < parts_unfolded(v, p->node)) {
			p->sub += 2;
			return true;
		}
		if (can_fold(d)) {
			p->node++;
			p->sub = 0;
			return true;
		}
	}
	if (d->parent != NONE && v->nodes[d->parent].end == d->end) {
		p->node = d->parent;
		p->sub = 1;
		return true;
	}
	if (d->end >= v->nnodes)
		return false;
	p->node = d->end;
	p->sub = 0;
	return true;
}

static long find_raw(struct ev_jsonview *v, const char *needle, size_t nlen, size_t from)
{
	size_t count = v->nraw + 1;
	size_t i = from < count ? from : count - 1;

	for (size_t step = 0; step < count; step++) {
		const struct ev_jline *l;

		i = i + 1 < count ? i + 1 : 0;
		l = render_raw(v, i);
		if (contains_ci(l->text, l->len, needle, nlen))
			return (long)i;
	}
	return -1;
}

long ev_jsonview_find(struct ev_jsonview *v, const char *needle, size_t from)
{
	size_t nlen;
	bool at_top = from >= v->nvis;
	struct vline p = {0, 0}, start;
	const struct ev_jline *l;

	assert(needle != NULL);
	nlen = strlen(needle);
	if (nlen == 0)
		return -1;
	if (!v->valid)
		return find_raw(v, needle, nlen, from);
	if (!at_top) {
		/* A folded node's first line is its open line in the unfolded layout, so the
		 * search goes on inside it. */
		size_t parts;

		p = v->vis[from];
		parts = p.sub & 1 ? 1 : parts_unfolded(v, p.node);
		if ((p.sub >> 1) >= parts)
			p.sub = (uint32_t)((parts - 1) << 1);
	}
	start = p;
	if (at_top) {
		l = render_node(v, p, true);
		if (contains_ci(l->text, l->len, needle, nlen))
			goto found;
	}
	for (;;) {
		if (!advance(v, &p))
			p = (struct vline){0, 0};
		bool back = p.node == start.node && p.sub == start.sub;

		if (back && at_top)
			return -1;
		l = render_node(v, p, true);
		if (contains_ci(l->text, l->len, needle, nlen))
			goto found;
		if (back)
			return -1;
	}
found:
	/* Unfold what hides the line: its ancestors, and for a closing bracket its node. */
	for (uint32_t a = p.sub & 1 ? p.node : v->nodes[p.node].parent; a != NONE;
	     a = v->nodes[a].parent)
		v->nodes[a].folded = false;
	rebuild(v);
	return locate(v, p);
}

void ev_jsonview_free(struct ev_jsonview **vp)
{
	struct ev_jsonview *v;

	if (vp == NULL || *vp == NULL)
		return;
	v = *vp;
	free(v->text);
	free(v->error);
	free(v->nodes);
	free(v->vis);
	free(v->raw);
	free(v->spans);
	ev_buf_free(&v->buf);
	free(v);
	*vp = NULL;
}
