/* evtop — masking personal data (see mask.h). One pass over the stored text: an iterative
 * scanner validates the JSON while it builds the output, which copies the input in runs and
 * writes only what replaces a masked character; a syntax error anywhere throws that output
 * away, and the whole text is masked as plain text instead.
 *
 * The value patterns run over a string's decoded bytes (so "\u0031..." is a digit too), with
 * each decoded byte's stored offset at hand: what stays visible of a match is copied as it was
 * stored, escapes included, and only whole characters are replaced, so the output is JSON
 * wherever the input was. */
#include <config.h>

#include "core/mask.h"

#include "core/i18n.h"
#include "core/text.h"

#include <assert.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define STARS "******"

/* What a value is masked by, from its key; everything inside an object or array inherits it
 * (a deeper key may change it, but nothing under a masked key escapes the mask). */
enum mode { M_PATTERN, M_IDENT, M_KEEP, M_ALL };

enum kind { P_IDCARD, P_BANKCARD, P_MOBILE, P_EMAIL };

/* A pattern match in decoded bytes [a, b); at: the '@' of an e-mail address. */
struct match {
	size_t a, b, at;
	enum kind kind;
};

/* Scratch space, reused by every string of one call. */
struct scratch {
	char *dec;            /* a string's decoded bytes */
	size_t *pos;          /* the stored offset of each decoded byte, and of the end */
	unsigned char *taken; /* decoded bytes inside an accepted match */
	size_t cap;
	struct match *mt;
	size_t nmt, mtcap;
};

struct walk {
	const struct ev_mask *m;
	const char *s;
	size_t len;
	size_t i;      /* the scanner's position */
	size_t copied; /* s[0..copied) is in out, or was replaced */
	struct ev_buf out;
	size_t nmasked;
	struct scratch sc;
};

/* --- the rules ---------------------------------------------------------------------------- */

static const char *const default_keep[] = {
        "phone", "mobile",   "tel",    "telNo", "tel_no",  "idCard",   "id_card",
        "idNo",  "bankCard", "cardNo", "email", "*phone*", "*mobile*", "*email*",
};
static const char *const default_all[] = {
        "password", "token", "secret", "address", "*password*", "*token*", "*secret*",
};
static const char *const default_ident[] = {"*id", "*Id", "*No", "*_no"};

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

void ev_mask_init(struct ev_mask *m)
{
	m->keys = NULL;
	m->nkeys = 0;
	m->ident = NULL;
	m->nident = 0;
	m->patterns = 0;
	m->pattern_style = EV_MASK_KEEP;
}

void ev_mask_defaults(struct ev_mask *m)
{
	ev_mask_init(m);
	for (size_t i = 0; i < COUNT(default_keep); i++)
		ev_mask_add_key(m, default_keep[i], EV_MASK_KEEP, NULL);
	for (size_t i = 0; i < COUNT(default_all); i++)
		ev_mask_add_key(m, default_all[i], EV_MASK_ALL, NULL);
	for (size_t i = 0; i < COUNT(default_ident); i++)
		ev_mask_add_ident(m, default_ident[i], NULL);
	m->patterns = EV_MASK_P_ALL;
	m->pattern_style = EV_MASK_KEEP;
}

void ev_mask_clear_keys(struct ev_mask *m)
{
	for (size_t i = 0; i < m->nkeys; i++)
		free(m->keys[i].glob);
	free(m->keys);
	m->keys = NULL;
	m->nkeys = 0;
}

void ev_mask_clear_ident(struct ev_mask *m)
{
	for (size_t i = 0; i < m->nident; i++)
		free(m->ident[i]);
	free(m->ident);
	m->ident = NULL;
	m->nident = 0;
}

void ev_mask_free(struct ev_mask *m)
{
	ev_mask_clear_keys(m);
	ev_mask_clear_ident(m);
	ev_mask_init(m);
}

/* A glob is what a person typed into a config: 1 to EV_MASK_GLOB_MAX characters of UTF-8,
 * no control character (it ends up in messages and on the screen). */
static int check_glob(const char *glob, struct ev_error *err)
{
	size_t len = strlen(glob), n = 0;

	for (size_t i = 0; i < len; n++) {
		uint32_t cp;
		size_t k = ev_utf8_decode(glob + i, len - i, &cp);

		if (cp == EV_TEXT_REPLACEMENT && k == 1)
			return ev_error_set(err, EV_ERR_USAGE,
			                    _("mask key glob: not UTF-8 at byte %zu"), i + 1);
		if (cp < 0x20 || cp == 0x7F || (cp >= 0x80 && cp <= 0x9F))
			return ev_error_set(
			        err, EV_ERR_USAGE,
			        _("mask key glob: a control character at character %zu"), n + 1);
		i += k;
	}
	if (n == 0)
		return ev_error_set(err, EV_ERR_USAGE, _("mask key glob: empty"));
	if (n > EV_MASK_GLOB_MAX)
		return ev_error_set(err, EV_ERR_USAGE,
		                    _("mask key glob: %zu characters, at most %d allowed"), n,
		                    EV_MASK_GLOB_MAX);
	return 0;
}

int ev_mask_add_key(struct ev_mask *m, const char *glob, enum ev_mask_style style,
                    struct ev_error *err)
{
	assert(glob != NULL);
	if (check_glob(glob, err) < 0)
		return -1;
	m->keys = ev_xrealloc(m->keys, (m->nkeys + 1) * sizeof(*m->keys));
	m->keys[m->nkeys].glob = ev_xstrdup(glob);
	m->keys[m->nkeys].style = style;
	m->nkeys++;
	return 0;
}

int ev_mask_add_ident(struct ev_mask *m, const char *glob, struct ev_error *err)
{
	assert(glob != NULL);
	if (check_glob(glob, err) < 0)
		return -1;
	m->ident = ev_xrealloc(m->ident, (m->nident + 1) * sizeof(*m->ident));
	m->ident[m->nident++] = ev_xstrdup(glob);
	return 0;
}

static char lower(char c)
{
	return c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c;
}

int ev_mask_style_parse(const char *s, enum ev_mask_style *out)
{
	static const char *const names[] = {"keep", "all"};

	for (size_t k = 0; k < COUNT(names); k++) {
		size_t i = 0;

		while (s[i] != '\0' && lower(s[i]) == names[k][i])
			i++;
		if (s[i] == '\0' && names[k][i] == '\0') {
			*out = k == 0 ? EV_MASK_KEEP : EV_MASK_ALL;
			return 0;
		}
	}
	return -1;
}

const char *ev_mask_style_name(enum ev_mask_style style)
{
	return style == EV_MASK_ALL ? "all" : "keep";
}

void ev_mask_copy(struct ev_mask *dst, const struct ev_mask *src)
{
	ev_mask_init(dst);
	for (size_t i = 0; i < src->nkeys; i++) {
		dst->keys = ev_xrealloc(dst->keys, (i + 1) * sizeof(*dst->keys));
		dst->keys[i].glob = ev_xstrdup(src->keys[i].glob);
		dst->keys[i].style = src->keys[i].style;
		dst->nkeys++;
	}
	for (size_t i = 0; i < src->nident; i++) {
		dst->ident = ev_xrealloc(dst->ident, (i + 1) * sizeof(*dst->ident));
		dst->ident[dst->nident++] = ev_xstrdup(src->ident[i]);
	}
	dst->patterns = src->patterns;
	dst->pattern_style = src->pattern_style;
}

/* The length of the character at k[0..len): a UTF-8 sequence or one byte that is not. */
static size_t char_len(const char *k, size_t len)
{
	uint32_t cp;

	return ev_utf8_decode(k, len, &cp);
}

/* Whether k[0..klen) matches glob g: '*' any run, '?' one character, other characters as
 * themselves (ASCII letters either case with icase). A '*' is retried one character further
 * on a mismatch, the last one only: O(klen * strlen(g)), no recursion. */
static bool glob_match(const char *g, const char *k, size_t klen, bool icase)
{
	size_t glen = strlen(g), gi = 0, ki = 0, star_g = SIZE_MAX, star_k = 0;

	while (ki < klen) {
		if (gi < glen && g[gi] == '*') {
			star_g = ++gi;
			star_k = ki;
		} else if (gi < glen && g[gi] == '?') {
			gi++;
			ki += char_len(k + ki, klen - ki);
		} else if (gi < glen &&
		           (g[gi] == k[ki] || (icase && lower(g[gi]) == lower(k[ki])))) {
			gi++;
			ki++;
		} else if (star_g != SIZE_MAX) {
			gi = star_g;
			star_k += char_len(k + star_k, klen - star_k);
			ki = star_k;
		} else {
			return false;
		}
	}
	while (gi < glen && g[gi] == '*')
		gi++;
	return gi == glen;
}

/* Any key rule matching: ALL when one of those matching says ALL, the stricter style. */
static bool key_rule(const struct ev_mask *m, const char *k, size_t klen, enum ev_mask_style *style)
{
	bool hit = false;

	for (size_t i = 0; i < m->nkeys; i++) {
		if (!glob_match(m->keys[i].glob, k, klen, true))
			continue;
		hit = true;
		*style = m->keys[i].style;
		if (*style == EV_MASK_ALL)
			break;
	}
	return hit;
}

static bool ident_match(const struct ev_mask *m, const char *k, size_t klen)
{
	for (size_t i = 0; i < m->nident; i++)
		if (glob_match(m->ident[i], k, klen, false))
			return true;
	return false;
}

bool ev_mask_key_matches(const struct ev_mask *m, const char *key, enum ev_mask_style *style)
{
	enum ev_mask_style st = EV_MASK_KEEP;
	bool hit = key_rule(m, key, strlen(key), &st);

	if (hit && style != NULL)
		*style = st;
	return hit;
}

bool ev_mask_key_is_ident(const struct ev_mask *m, const char *key)
{
	return ident_match(m, key, strlen(key));
}

/* --- output ------------------------------------------------------------------------------- */

/* Copy the stored text up to off into the output. */
static void keep_to(struct walk *w, size_t off)
{
	assert(off >= w->copied && off <= w->len);
	if (off > w->copied)
		ev_buf_add(&w->out, w->s + w->copied, off - w->copied);
	w->copied = off;
}

/* Leave the stored text up to off out (what replaces it has been written). */
static void drop_to(struct walk *w, size_t off)
{
	assert(off >= w->copied && off <= w->len);
	w->copied = off;
}

static void add_stars(struct walk *w, size_t n)
{
	static const char many[] =
	        "****************************************************************";

	while (n > 0) {
		size_t k = n < sizeof(many) - 1 ? n : sizeof(many) - 1;

		ev_buf_add(&w->out, many, k);
		n -= k;
	}
}

/* --- JSON strings ------------------------------------------------------------------------- */

static int hex_digit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c = lower(c);
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

/* The value of the four hex digits at s (checked by the scanner). */
static uint32_t hex4(const char *s)
{
	uint32_t v = 0;

	for (int i = 0; i < 4; i++)
		v = v << 4 | (uint32_t)hex_digit(s[i]);
	return v;
}

/* The escape at s[i] (s[i] == '\\', checked by the scanner) up to end: its length, and the
 * code point it stands for (a surrogate pair's two escapes are one character; a lone
 * surrogate stands for U+FFFD). */
static size_t escape_at(const char *s, size_t i, size_t end, uint32_t *cp)
{
	static const char from[] = "\"\\/bfnrt", to[] = "\"\\/\b\f\n\r\t";

	if (s[i + 1] != 'u') {
		*cp = (uint32_t)(unsigned char)to[strchr(from, s[i + 1]) - from];
		return 2;
	}
	uint32_t hi = hex4(s + i + 2);
	if (hi >= 0xD800 && hi <= 0xDBFF && i + 12 <= end && s[i + 6] == '\\' && s[i + 7] == 'u') {
		uint32_t lo = hex4(s + i + 8);

		if (lo >= 0xDC00 && lo <= 0xDFFF) {
			*cp = 0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00);
			return 12;
		}
	}
	*cp = hi >= 0xD800 && hi <= 0xDFFF ? EV_TEXT_REPLACEMENT : hi;
	return 6;
}

/* Where the character at s[i] (i < end) ends: a UTF-8 sequence, a byte that is not UTF-8,
 * or, in a JSON string (json), an escape. */
static size_t char_end(const char *s, size_t i, size_t end, bool json)
{
	uint32_t cp;

	if (json && s[i] == '\\')
		return i + escape_at(s, i, end, &cp);
	return i + ev_utf8_decode(s + i, end - i, &cp);
}

static void scratch_reserve(struct scratch *sc, size_t n)
{
	if (n + 1 <= sc->cap)
		return;
	size_t cap = sc->cap ? sc->cap : 64;
	while (cap < n + 1)
		cap *= 2;
	sc->dec = ev_xrealloc(sc->dec, cap);
	sc->pos = ev_xrealloc(sc->pos, cap * sizeof(*sc->pos));
	sc->taken = ev_xrealloc(sc->taken, cap);
	sc->cap = cap;
}

static void scratch_free(struct scratch *sc)
{
	free(sc->dec);
	free(sc->pos);
	free(sc->taken);
	free(sc->mt);
}

/* Decode the content s[a..b) of a JSON string with escapes into sc->dec (never longer than
 * the stored text), each byte's stored offset in sc->pos. Returns the decoded length. */
static size_t decode(struct scratch *sc, const char *s, size_t a, size_t b)
{
	size_t n = 0;

	scratch_reserve(sc, b - a);
	for (size_t i = a; i < b;) {
		if (s[i] != '\\') {
			sc->pos[n] = i;
			sc->dec[n++] = s[i++];
			continue;
		}
		uint32_t cp;
		size_t k = escape_at(s, i, b, &cp);
		char u[4];
		size_t ul = ev_utf8_encode(cp, u);
		for (size_t j = 0; j < ul; j++) {
			sc->pos[n] = i;
			sc->dec[n++] = u[j];
		}
		i += k;
	}
	sc->pos[n] = b;
	return n;
}

/* --- the value patterns ------------------------------------------------------------------- */

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static bool is_alpha(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static bool is_alnum(char c)
{
	return is_digit(c) || is_alpha(c);
}

/* Two digits at d as a number. */
static int num2(const char *d)
{
	return (d[0] - '0') * 10 + (d[1] - '0');
}

static bool province_ok(int p)
{
	return (p >= 11 && p <= 15) || (p >= 21 && p <= 23) || (p >= 31 && p <= 37) ||
	       (p >= 41 && p <= 46) || (p >= 50 && p <= 54) || (p >= 61 && p <= 65) || p == 71 ||
	       p == 81 || p == 82 || p == 91;
}

static bool date_ok(const char *d)
{
	static const int mdays[12] = {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
	int y = num2(d) * 100 + num2(d + 2), mo = num2(d + 4), day = num2(d + 6);

	if (y < 1900 || y > 2099 || mo < 1 || mo > 12 || day < 1 || day > mdays[mo - 1])
		return false;
	bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
	return !(mo == 2 && day == 29 && !leap);
}

/* 17 digits and a check character (GB 11643-1999): province, date of birth, checksum. */
static bool idcard_ok(const char *d)
{
	static const int weight[17] = {7, 9, 10, 5, 8, 4, 2, 1, 6, 3, 7, 9, 10, 5, 8, 4, 2};
	int sum = 0;

	if (!province_ok(num2(d)) || !date_ok(d + 6))
		return false;
	for (int i = 0; i < 17; i++)
		sum += (d[i] - '0') * weight[i];
	char want = "10X98765432"[sum % 11];
	char got = d[17] == 'x' ? 'X' : d[17];
	return got == want;
}

static bool luhn_ok(const char *d, size_t n)
{
	int sum = 0;

	for (size_t i = 0; i < n; i++) {
		int v = d[n - 1 - i] - '0';

		if (i % 2 == 1) {
			v *= 2;
			if (v > 9)
				v -= 9;
		}
		sum += v;
	}
	return sum % 10 == 0;
}

/* UnionPay, Visa, Mastercard, American Express, JCB. */
static bool card_prefix_ok(const char *d)
{
	int two = num2(d), four = two * 100 + num2(d + 2);

	return two == 62 || d[0] == '4' || (two >= 51 && two <= 55) ||
	       (four >= 2221 && four <= 2720) || two == 34 || two == 37 ||
	       (four >= 3528 && four <= 3589);
}

static bool is_local(char c)
{
	return is_alnum(c) || c == '.' || c == '_' || c == '%' || c == '+' || c == '-';
}

/* Accept [a, b) unless a match of an earlier kind took one of its bytes. */
static void take(struct scratch *sc, size_t a, size_t b, size_t at, enum kind kind)
{
	for (size_t i = a; i < b; i++)
		if (sc->taken[i])
			return;
	memset(sc->taken + a, 1, b - a);
	if (sc->nmt == sc->mtcap) {
		sc->mtcap = sc->mtcap ? 2 * sc->mtcap : 16;
		sc->mt = ev_xrealloc(sc->mt, sc->mtcap * sizeof(*sc->mt));
	}
	sc->mt[sc->nmt++] = (struct match){a, b, at, kind};
}

/* The end of the longest domain at d[i..n): labels of [A-Za-z0-9-] joined by '.', two at
 * least, the last of two or more letters. i when there is none. */
static size_t domain_end(const char *d, size_t i, size_t n)
{
	size_t best = i, labels = 0;

	for (;;) {
		size_t start = i;
		bool letters = true;

		while (i < n && (is_alnum(d[i]) || d[i] == '-')) {
			letters = letters && is_alpha(d[i]);
			i++;
		}
		if (i == start)
			break;
		if (++labels >= 2 && letters && i - start >= 2)
			best = i;
		if (i >= n || d[i] != '.')
			break;
		i++;
	}
	return best;
}

static int by_start(const void *x, const void *y)
{
	const struct match *a = x, *b = y;

	return a->a < b->a ? -1 : a->a > b->a;
}

/* The matches of the patterns in d[0..n), in order and not overlapping, into sc->mt. Each
 * kind is looked for over the whole text in order of precedence. */
static void find_matches(struct scratch *sc, const char *d, size_t n, unsigned patterns)
{
	sc->nmt = 0;
	if (n < 6)
		return;
	/* Never moves d when it is sc->dec: decode reserved at least n. */
	scratch_reserve(sc, n);
	memset(sc->taken, 0, n);
	/* An ID number is a whole run of letters and digits. */
	if (patterns & EV_MASK_P_IDCARD) {
		for (size_t i = 0; i < n;) {
			size_t j = i;

			while (j < n && is_alnum(d[j]))
				j++;
			if (j - i == 18) {
				size_t k = i;

				while (k < i + 17 && is_digit(d[k]))
					k++;
				if (k == i + 17 && (is_digit(d[k]) || d[k] == 'X' || d[k] == 'x') &&
				    idcard_ok(d + i))
					take(sc, i, j, 0, P_IDCARD);
			}
			i = j > i ? j : i + 1;
		}
	}
	/* Cards and mobile numbers are whole runs of digits. */
	if (patterns & (EV_MASK_P_BANKCARD | EV_MASK_P_MOBILE)) {
		for (size_t i = 0; i < n;) {
			size_t j = i;

			while (j < n && is_digit(d[j]))
				j++;
			size_t r = j - i;
			if ((patterns & EV_MASK_P_BANKCARD) && r >= 15 && r <= 19 &&
			    card_prefix_ok(d + i) && luhn_ok(d + i, r))
				take(sc, i, j, 0, P_BANKCARD);
			/* "86" directly before the number is the country code, kept. */
			size_t at = r == 13 && d[i] == '8' && d[i + 1] == '6' ? i + 2 : i;
			if ((patterns & EV_MASK_P_MOBILE) && j - at == 11 && d[at] == '1' &&
			    d[at + 1] >= '3' && d[at + 1] <= '9')
				take(sc, at, j, 0, P_MOBILE);
			i = j > i ? j : i + 1;
		}
	}
	if (patterns & EV_MASK_P_EMAIL) {
		const char *p = d, *end = d + n;

		while ((p = memchr(p, '@', (size_t)(end - p))) != NULL) {
			size_t at = (size_t)(p - d), a = at;

			while (a > 0 && is_local(d[a - 1]))
				a--;
			size_t b = domain_end(d, at + 1, n);
			if (a < at && b > at + 1)
				take(sc, a, b, at, P_EMAIL);
			p++;
		}
	}
	if (sc->nmt > 1)
		qsort(sc->mt, sc->nmt, sizeof(*sc->mt), by_start);
}

/* Mask the patterns' matches in the stored text s[a..b): decoded first when it is a JSON
 * string with escapes (esc). */
static void mask_patterns(struct walk *w, size_t a, size_t b, bool esc)
{
	struct scratch *sc = &w->sc;
	const char *d = w->s + a;
	size_t n = b - a;
	const size_t *pos = NULL;

	if (w->m->patterns == 0)
		return;
	if (esc) {
		n = decode(sc, w->s, a, b);
		d = sc->dec;
		pos = sc->pos;
	}
	find_matches(sc, d, n, w->m->patterns);
	for (size_t k = 0; k < sc->nmt; k++) {
		const struct match *mt = &sc->mt[k];
/* The stored offset of decoded byte i. */
#define OFF(i) (pos ? pos[(i)] : a + (i))
		if (w->m->pattern_style == EV_MASK_ALL) {
			keep_to(w, OFF(mt->a));
			ev_buf_adds(&w->out, STARS);
		} else if (mt->kind == P_EMAIL) {
			keep_to(w, OFF(mt->a + 1));
			ev_buf_adds(&w->out, "***");
			drop_to(w, OFF(mt->at));
			continue;
		} else {
			/* Every character of a digit pattern is one decoded byte. */
			keep_to(w, OFF(mt->a + 3));
			add_stars(w, mt->b - mt->a - 7);
			drop_to(w, OFF(mt->b - 4));
			continue;
		}
		drop_to(w, OFF(mt->b));
#undef OFF
	}
	w->nmasked += sc->nmt;
}

/* Mask the whole value stored at s[a..b) in style: a string's content (between its quotes),
 * or a number's token, which becomes a string. */
static void mask_value(struct walk *w, size_t a, size_t b, bool number, enum ev_mask_style style)
{
	keep_to(w, a);
	if (number)
		ev_buf_addc(&w->out, '"');
	if (style == EV_MASK_ALL) {
		/* Fewer stars for the shortest values, so that the output stays under twice the
		 * input (the byte before a value, ',', '[' or ':', counting as its own) and
		 * masking it again changes nothing. */
		size_t stored = b - a;
		if (number)
			add_stars(w, stored <= 3 ? 1 : 6);
		else
			add_stars(w, stored <= 1 ? stored : 6);
		drop_to(w, b);
	} else {
		size_t n = 0, i = a;

		for (size_t j = a; j < b; j = char_end(w->s, j, b, !number))
			n++;
		if (n < 8) {
			add_stars(w, n);
			drop_to(w, b);
		} else {
			for (int k = 0; k < 3; k++)
				i = char_end(w->s, i, b, !number);
			keep_to(w, i);
			add_stars(w, n - 7);
			for (size_t k = 3; k < n - 4; k++)
				i = char_end(w->s, i, b, !number);
			drop_to(w, i);
		}
	}
	if (number) {
		keep_to(w, b);
		ev_buf_addc(&w->out, '"');
	}
	w->nmasked++;
}

/* --- the JSON scanner --------------------------------------------------------------------- */

static void skip_ws(struct walk *w)
{
	while (w->i < w->len && (w->s[w->i] == ' ' || w->s[w->i] == '\t' || w->s[w->i] == '\n' ||
	                         w->s[w->i] == '\r'))
		w->i++;
}

/* The string at w->i (its opening quote): its content s[*a..*b), whether it has escapes. */
static bool scan_string(struct walk *w, size_t *a, size_t *b, bool *esc)
{
	const char *s = w->s;
	size_t i = w->i + 1;

	*a = i;
	*esc = false;
	for (;;) {
		if (i >= w->len)
			return false;
		unsigned char c = (unsigned char)s[i];
		if (c == '"')
			break;
		if (c < 0x20)
			return false;
		if (c != '\\') {
			i++;
			continue;
		}
		*esc = true;
		if (i + 1 >= w->len)
			return false;
		char e = s[i + 1];
		if (e == 'u') {
			if (i + 6 > w->len)
				return false;
			for (int k = 2; k < 6; k++)
				if (hex_digit(s[i + k]) < 0)
					return false;
			i += 6;
		} else if (e != '\0' && strchr("\"\\/bfnrt", e) != NULL) {
			i += 2;
		} else {
			return false;
		}
	}
	*b = i;
	w->i = i + 1;
	return true;
}

static bool scan_digits(struct walk *w)
{
	size_t start = w->i;

	while (w->i < w->len && is_digit(w->s[w->i]))
		w->i++;
	return w->i > start;
}

/* -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)? */
static bool scan_number(struct walk *w)
{
	if (w->s[w->i] == '-')
		w->i++;
	if (w->i < w->len && w->s[w->i] == '0')
		w->i++;
	else if (!scan_digits(w))
		return false;
	if (w->i < w->len && w->s[w->i] == '.') {
		w->i++;
		if (!scan_digits(w))
			return false;
	}
	if (w->i < w->len && (w->s[w->i] == 'e' || w->s[w->i] == 'E')) {
		w->i++;
		if (w->i < w->len && (w->s[w->i] == '+' || w->s[w->i] == '-'))
			w->i++;
		if (!scan_digits(w))
			return false;
	}
	return true;
}

static bool scan_literal(struct walk *w, const char *lit)
{
	size_t n = strlen(lit);

	if (w->len - w->i < n || memcmp(w->s + w->i, lit, n) != 0)
		return false;
	w->i += n;
	return true;
}

/* A member's key and its ':', at w->i; the mode of its value, from the key and the mode of
 * the object (parent), into *mode. */
static bool scan_member(struct walk *w, enum mode parent, enum mode *mode)
{
	const struct ev_mask *m = w->m;
	size_t a, b;
	bool esc;

	skip_ws(w);
	if (w->i >= w->len || w->s[w->i] != '"' || !scan_string(w, &a, &b, &esc))
		return false;
	*mode = parent;
	if (m->nkeys > 0 || (parent == M_PATTERN && m->nident > 0)) {
		const char *k = w->s + a;
		size_t klen = b - a;
		enum ev_mask_style style;

		if (esc) {
			klen = decode(&w->sc, w->s, a, b);
			k = w->sc.dec;
		}
		/* Under a masked key, the stricter style of the two. */
		if (key_rule(m, k, klen, &style))
			*mode = style == EV_MASK_ALL || parent == M_ALL ? M_ALL : M_KEEP;
		else if (parent == M_PATTERN && ident_match(m, k, klen))
			*mode = M_IDENT;
	}
	skip_ws(w);
	if (w->i >= w->len || w->s[w->i] != ':')
		return false;
	w->i++;
	return true;
}

/* A scalar at w->i, masked as mode says. */
static bool scan_scalar(struct walk *w, enum mode mode)
{
	size_t start = w->i, a, b;
	bool esc;
	char c = w->s[w->i];

	if (c == '"') {
		if (!scan_string(w, &a, &b, &esc))
			return false;
		if (mode == M_PATTERN)
			mask_patterns(w, a, b, esc);
		else if (mode != M_IDENT)
			mask_value(w, a, b, false, mode == M_ALL ? EV_MASK_ALL : EV_MASK_KEEP);
		return true;
	}
	if (c == '-' || is_digit(c)) {
		if (!scan_number(w))
			return false;
		if (mode == M_KEEP || mode == M_ALL)
			mask_value(w, start, w->i, true,
			           mode == M_ALL ? EV_MASK_ALL : EV_MASK_KEEP);
		return true;
	}
	return scan_literal(w, "true") || scan_literal(w, "false") || scan_literal(w, "null");
}

/* The whole text as one JSON value, masked into w->out; false on any syntax error. */
static bool walk_json(struct walk *w)
{
	struct {
		bool object;
		enum mode mode;
	} st[EV_MASK_MAX_DEPTH];
	size_t depth = 0;
	enum mode mode = M_PATTERN;

	for (;;) {
		/* A value, in mode. */
		skip_ws(w);
		if (w->i >= w->len)
			return false;
		char c = w->s[w->i];
		if (c == '{' || c == '[') {
			if (depth == EV_MASK_MAX_DEPTH)
				return false;
			st[depth].object = c == '{';
			st[depth].mode = mode;
			depth++;
			w->i++;
			skip_ws(w);
			if (w->i < w->len && w->s[w->i] == (c == '{' ? '}' : ']')) {
				w->i++;
				depth--;
			} else if (c == '{') {
				if (!scan_member(w, st[depth - 1].mode, &mode))
					return false;
				continue;
			} else {
				continue;
			}
		} else if (!scan_scalar(w, mode)) {
			return false;
		}
		/* After a value: a comma, a closing bracket, or the end. */
		for (;;) {
			skip_ws(w);
			if (depth == 0)
				return w->i == w->len;
			if (w->i >= w->len)
				return false;
			c = w->s[w->i++];
			if (c == ',') {
				mode = st[depth - 1].mode;
				if (st[depth - 1].object && !scan_member(w, mode, &mode))
					return false;
				break;
			}
			if (c != (st[depth - 1].object ? '}' : ']'))
				return false;
			depth--;
		}
	}
}

/* --- entry points ------------------------------------------------------------------------- */

static void walk_init(struct walk *w, const struct ev_mask *m, const char *s, size_t len)
{
	memset(w, 0, sizeof(*w));
	w->m = m;
	w->s = s;
	w->len = len;
	ev_buf_init(&w->out);
}

static char *walk_done(struct walk *w, size_t *outlen, size_t *nmasked)
{
	keep_to(w, w->len);
	scratch_free(&w->sc);
	*outlen = w->out.len;
	if (nmasked != NULL)
		*nmasked = w->nmasked;
	return ev_buf_steal(&w->out);
}

char *ev_mask_text(const struct ev_mask *m, const char *s, size_t len, size_t *outlen,
                   size_t *nmasked)
{
	struct walk w;

	assert(s != NULL || len == 0);
	walk_init(&w, m, s, len);
	if (len > 0)
		mask_patterns(&w, 0, len, false);
	return walk_done(&w, outlen, nmasked);
}

char *ev_mask_json(const struct ev_mask *m, const char *s, size_t len, size_t *outlen,
                   size_t *nmasked)
{
	struct walk w;

	assert(s != NULL || len == 0);
	if (m->nkeys == 0 && m->patterns == 0)
		return ev_mask_text(m, s, len, outlen, nmasked);
	walk_init(&w, m, s, len);
	if (!walk_json(&w)) {
		ev_buf_free(&w.out);
		scratch_free(&w.sc);
		return ev_mask_text(m, s, len, outlen, nmasked);
	}
	return walk_done(&w, outlen, nmasked);
}
