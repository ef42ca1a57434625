/* evtop — fuzz target for the payload printer (core/jsonview): any bytes, as a payload column
 * can hold them. The first input byte picks the fold depth; the rest is the payload.
 * Invariants:
 *   - every line is valid UTF-8 with no control byte, len == strlen, spans in order, not
 *     overlapping and inside the line; the error says why exactly when the text is not JSON;
 *   - text jansson accepts is always indexed (the "could not be indexed" fallback only for
 *     a raw NUL byte, where jansson stops reading);
 *   - for printable-ASCII JSON, the unfolded lines hold exactly the stored tokens: joined
 *     (continuations too) and stripped of whitespace outside strings, they equal the input
 *     stripped the same way; for printable-ASCII text that is not JSON, the raw lines after
 *     the marker give the text back;
 *   - toggling a fold twice restores the layout; folding all, unfolding all and folding to
 *     a depth keep every line well formed; a search hit shows its needle. */
#include <config.h>

#include "core/jsonview.h"
#include "core/text.h"
#include "core/util.h"
#include "fuzz.h"

#include <locale.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#define CONT_MARK "\xE2\x86\xAA"
/* Lines looked at per layout: enough for any input the fuzzer grows, bounded for speed. */
#define MAX_LINES 20000

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	setlocale(LC_CTYPE, "C.UTF-8");
	return 0;
}

static void check_line(const struct ev_jline *l, size_t i)
{
	FUZZ_CHECK(l != NULL && l->text != NULL, "line %zu missing", i);
	FUZZ_CHECK(strlen(l->text) == l->len, "line %zu: len %zu, strlen %zu", i, l->len,
	           strlen(l->text));
	size_t bad = fuzz_unsafe_at(l->text, l->len, 0);
	FUZZ_CHECK(bad == (size_t)-1, "line %zu: unsafe byte at %zu", i, bad);
	FUZZ_CHECK(l->depth >= 0 && l->depth <= 2048, "line %zu: depth %d", i, l->depth);
	size_t end = 0;
	for (size_t k = 0; k < l->nspans; k++) {
		const struct ev_jspan *sp = &l->spans[k];
		FUZZ_CHECK(sp->off >= end, "line %zu: span %zu starts at %zu before %zu", i, k,
		           sp->off, end);
		FUZZ_CHECK(sp->off + sp->len <= l->len, "line %zu: span %zu past the end", i, k);
		FUZZ_CHECK((unsigned)sp->style < EV_STYLE_COUNT, "line %zu: style", i);
		end = sp->off + sp->len;
	}
	FUZZ_CHECK(!l->folded || l->foldable, "line %zu folded but not foldable", i);
}

static size_t check_all(struct ev_jsonview *v)
{
	size_t n = ev_jsonview_line_count(v);
	FUZZ_CHECK(n >= 1 || ev_jsonview_valid(v), "a raw view without its marker line");
	for (size_t i = 0; i < n && i < MAX_LINES; i++)
		check_line(ev_jsonview_line(v, i), i);
	return n;
}

/* Append s[0..len) without whitespace outside strings (JSON strings hold no raw whitespace
 * control, and the printer only adds spaces). *in_str carries the state across calls. */
static void add_stripped(struct ev_buf *b, const char *s, size_t len, bool *in_str, bool *esc)
{
	for (size_t i = 0; i < len; i++) {
		char c = s[i];
		if (*in_str) {
			if (*esc)
				*esc = false;
			else if (c == '\\')
				*esc = true;
			else if (c == '"')
				*in_str = false;
		} else if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
			continue;
		} else if (c == '"') {
			*in_str = true;
		}
		ev_buf_addc(b, c);
	}
}

/* A line's text after its indentation and its continuation mark. */
static const char *content(const struct ev_jline *l, size_t *len)
{
	size_t skip = 2 * (size_t)l->depth;
	FUZZ_CHECK(l->len >= skip, "line shorter than its indentation");
	for (size_t k = 0; k < skip; k++)
		FUZZ_CHECK(l->text[k] == ' ', "indentation is not spaces");
	if (l->cont) {
		FUZZ_CHECK(strncmp(l->text + skip, CONT_MARK, 3) == 0, "continuation without ↪");
		skip += 3;
	}
	*len = l->len - skip;
	return l->text + skip;
}

static void check_tokens_kept(struct ev_jsonview *v, const char *text, size_t len)
{
	struct ev_buf want, got;
	bool in_str = false, esc = false;
	ev_buf_init(&want);
	ev_buf_init(&got);
	ev_buf_add(&want, "", 0);
	ev_buf_add(&got, "", 0);
	add_stripped(&want, text, len, &in_str, &esc);
	in_str = esc = false;
	ev_jsonview_fold_all(v, false);
	size_t n = ev_jsonview_line_count(v);
	for (size_t i = 0; i < n; i++) {
		size_t clen;
		const char *c = content(ev_jsonview_line(v, i), &clen);
		add_stripped(&got, c, clen, &in_str, &esc);
	}
	FUZZ_CHECK(got.len == want.len && memcmp(got.data, want.data, got.len) == 0,
	           "the lines do not hold the stored tokens:\n want %s\n got  %s", want.data,
	           got.data);
	ev_buf_free(&want);
	ev_buf_free(&got);
}

static void check_raw_kept(struct ev_jsonview *v, const char *text, size_t len)
{
	struct ev_buf got;
	ev_buf_init(&got);
	ev_buf_add(&got, "", 0);
	size_t n = ev_jsonview_line_count(v);
	for (size_t i = 1; i < n; i++) {
		const struct ev_jline *l = ev_jsonview_line(v, i);
		size_t clen;
		const char *c = content(l, &clen);
		if (i > 1 && !l->cont)
			ev_buf_addc(&got, '\n');
		ev_buf_add(&got, c, clen);
	}
	/* A final '\n' ends the last line rather than starting an empty one. */
	size_t want = len > 0 && text[len - 1] == '\n' ? len - 1 : len;
	FUZZ_CHECK(got.len == want && memcmp(got.data, text, want) == 0,
	           "the raw view does not give the text back");
	ev_buf_free(&got);
}

static bool printable_ascii(const char *s, size_t len, bool json)
{
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c == '\n' || (json && (c == ' ' || c == '\t' || c == '\r')))
			continue;
		if (c < 0x20 || c >= 0x7F)
			return false;
	}
	return true;
}

static bool contains_ci(const char *hay, const char *needle)
{
	size_t n = strlen(needle);
	for (const char *h = hay; *h; h++) {
		size_t k = 0;
		while (k < n && h[k] && (h[k] | 0x20) == (needle[k] | 0x20))
			k++;
		if (k == n)
			return true;
	}
	return n == 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	int depth = size ? data[0] % 4 : 0;
	const char *text = size ? (const char *)data + 1 : "";
	size_t len = size ? size - 1 : 0;

	struct ev_jsonview *v = ev_jsonview_new(text, len, depth);
	bool valid = ev_jsonview_valid(v);
	const char *err = ev_jsonview_error(v);
	FUZZ_CHECK(valid == (err == NULL), "valid %d but error %s", valid, err ? err : "(none)");
	if (err != NULL) {
		FUZZ_CHECK(fuzz_unsafe_at(err, strlen(err), 0) == (size_t)-1, "unsafe error text");
		/* jansson stops at a raw NUL byte ("2\0" loads as 2), the indexer does not: such
		 * a payload is shown raw, which is right, with that vaguer reason. Any other
		 * disagreement is a bug. */
		FUZZ_CHECK(strcmp(err, "the JSON could not be indexed") != 0 ||
		                   memchr(text, '\0', len) != NULL,
		           "jansson took it but the indexer did not");
	}
	size_t n = check_all(v);
	if (!valid) {
		FUZZ_CHECK(strcmp(ev_jsonview_line(v, 0)->text, EV_JSONVIEW_NOT_JSON) == 0,
		           "the raw view starts with its marker");
		FUZZ_CHECK(ev_jsonview_toggle(v, 0) == -1, "a fold in the raw view");
		if (printable_ascii(text, len, false))
			check_raw_kept(v, text, len);
	}

	/* Toggle a line chosen by the input, then the line it returned: the same layout. */
	if (n > 0) {
		size_t at = (len * 7919u) % n;
		long r = ev_jsonview_toggle(v, at);
		size_t n2 = ev_jsonview_line_count(v);
		FUZZ_CHECK(r == -1 || (size_t)r < n2, "toggle returned %ld of %zu lines", r, n2);
		if (r >= 0) {
			check_line(ev_jsonview_line(v, (size_t)r), (size_t)r);
			long back = ev_jsonview_toggle(v, (size_t)r);
			FUZZ_CHECK(back == r, "toggling back moved from %ld to %ld", r, back);
			FUZZ_CHECK(ev_jsonview_line_count(v) == n,
			           "toggling twice: %zu lines, was %zu", ev_jsonview_line_count(v),
			           n);
		} else {
			FUZZ_CHECK(n2 == n, "a toggle that did nothing changed the layout");
		}
	}

	ev_jsonview_fold_all(v, true);
	size_t folded = check_all(v);
	ev_jsonview_fold_all(v, false);
	size_t open = check_all(v);
	FUZZ_CHECK(folded <= open, "folding all gave more lines (%zu > %zu)", folded, open);
	ev_jsonview_fold_depth(v, 1);
	check_all(v);

	/* Search for the first run of letters and digits of the input. */
	char needle[4] = "";
	for (size_t i = 0, k = 0; i < len && k < 3; i++) {
		char c = text[i];
		if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'))
			needle[k++] = c;
		else if (k > 0)
			break;
		needle[k] = '\0';
	}
	long hit = ev_jsonview_find(v, needle, 0);
	size_t nh = ev_jsonview_line_count(v);
	FUZZ_CHECK(hit == -1 || (size_t)hit < nh, "find returned %ld of %zu lines", hit, nh);
	if (needle[0] == '\0')
		FUZZ_CHECK(hit == -1, "an empty needle matched");
	if (hit >= 0)
		FUZZ_CHECK(contains_ci(ev_jsonview_line(v, (size_t)hit)->text, needle),
		           "line %ld does not show '%s'", hit, needle);

	if (valid && printable_ascii(text, len, true))
		check_tokens_kept(v, text, len);
	ev_jsonview_free(&v);
	FUZZ_CHECK(v == NULL, "free did not NULL the pointer");
	return 0;
}
