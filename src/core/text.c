/* evtop — UTF-8 decoding, terminal-safe sanitising, display widths and fitting to columns. */
/* Angle brackets: "config.h" would find src/core/config.h (evtop's own settings module)
 * before the autoconf header, and lose _GNU_SOURCE, which wcwidth() needs. */
#include <config.h>

#include "core/text.h"

#include "core/ambiguous.h"
#include "core/i18n.h"
#include "core/util.h"

#include <assert.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#define ELLIPSIS     "\xE2\x80\xA6" /* U+2026, one column */
#define ELLIPSIS_LEN 3

static bool is_cont(unsigned char c)
{
	return (c & 0xC0) == 0x80;
}

size_t ev_utf8_decode(const char *s, size_t len, uint32_t *cp)
{
	const unsigned char *u = (const unsigned char *)s;
	unsigned char lo = 0x80, hi = 0xBF; /* allowed range of the second byte */
	size_t need;
	uint32_t c;

	if (len == 0) {
		*cp = 0;
		return 0;
	}
	if (u[0] < 0x80) {
		*cp = u[0];
		return 1;
	}
	/* The second-byte ranges are what rule out overlong forms, surrogates and values
	 * above U+10FFFF (RFC 3629, table 3-7 of the Unicode standard). */
	if (u[0] >= 0xC2 && u[0] <= 0xDF) {
		need = 1;
		c = u[0] & 0x1F;
	} else if (u[0] >= 0xE0 && u[0] <= 0xEF) {
		need = 2;
		c = u[0] & 0x0F;
		if (u[0] == 0xE0)
			lo = 0xA0;
		else if (u[0] == 0xED)
			hi = 0x9F;
	} else if (u[0] >= 0xF0 && u[0] <= 0xF4) {
		need = 3;
		c = u[0] & 0x07;
		if (u[0] == 0xF0)
			lo = 0x90;
		else if (u[0] == 0xF4)
			hi = 0x8F;
	} else {
		goto bad;
	}
	/* Bytes are checked one at a time, so a NUL terminator ends a truncated sequence
	 * before anything past it is read (the NUL-terminated helpers below rely on it). */
	if (len < 2 || u[1] < lo || u[1] > hi)
		goto bad;
	c = (c << 6) | (u[1] & 0x3F);
	for (size_t i = 2; i <= need; i++) {
		if (i >= len || !is_cont(u[i]))
			goto bad;
		c = (c << 6) | (u[i] & 0x3F);
	}
	*cp = c;
	return need + 1;
bad:
	/* One byte only, so decoding resynchronises on the next lead byte. */
	*cp = EV_TEXT_REPLACEMENT;
	return 1;
}

size_t ev_utf8_encode(uint32_t cp, char out[4])
{
	if (cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
		cp = EV_TEXT_REPLACEMENT;
	if (cp < 0x80) {
		out[0] = (char)cp;
		return 1;
	}
	if (cp < 0x800) {
		out[0] = (char)(0xC0 | (cp >> 6));
		out[1] = (char)(0x80 | (cp & 0x3F));
		return 2;
	}
	if (cp < 0x10000) {
		out[0] = (char)(0xE0 | (cp >> 12));
		out[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
		out[2] = (char)(0x80 | (cp & 0x3F));
		return 3;
	}
	out[0] = (char)(0xF0 | (cp >> 18));
	out[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
	out[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
	out[3] = (char)(0x80 | (cp & 0x3F));
	return 4;
}

/* Marks that attach to the previous character. Listed rather than left to wcwidth() alone
 * so that they survive a C library that does not know them yet (wcwidth() == -1). */
static bool is_combining(uint32_t cp)
{
	return (cp >= 0x0300 && cp <= 0x036F) || (cp >= 0x1AB0 && cp <= 0x1AFF) ||
	       (cp >= 0x1DC0 && cp <= 0x1DFF) || (cp >= 0x20D0 && cp <= 0x20FF) ||
	       (cp >= 0xFE20 && cp <= 0xFE2F) || cp == 0x200D || (cp >= 0xFE00 && cp <= 0xFE0F) ||
	       (cp >= 0xE0100 && cp <= 0xE01EF);
}

/* Invisible characters that reorder the text around them: a payload could use them to
 * make one status or id look like another. */
static bool is_bidi_control(uint32_t cp)
{
	return cp == 0x061C || cp == 0x200E || cp == 0x200F || (cp >= 0x202A && cp <= 0x202E) ||
	       (cp >= 0x2066 && cp <= 0x2069);
}

/* What the terminal is given in place of cp. Pictures and U+FFFD are one column wide. */
static uint32_t display_cp(uint32_t cp, bool keep_nl)
{
	if (cp < 0x20)
		return keep_nl && cp == '\n' ? cp : 0x2400 + cp;
	if (cp < 0x7F)
		return cp;
	if (cp == 0x7F)
		return 0x2421;
	if (cp <= 0x9F || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF) || is_bidi_control(cp))
		return EV_TEXT_REPLACEMENT;
	if (is_combining(cp))
		return cp;
	if (wcwidth((wchar_t)cp) < 0)
		return EV_TEXT_REPLACEMENT;
	return cp;
}

size_t ev_utf8_prefix(const char *s, size_t max)
{
	size_t n = strnlen(s, max);
	if (n < max || s[n] == '\0' || ((unsigned char)s[n] & 0xC0) != 0x80)
		return n; /* all of s, or the cut falls before a character's first byte */
	while (n > 0 && ((unsigned char)s[n] & 0xC0) == 0x80)
		n--;
	return n;
}

void ev_utf8_fix_tail(char *s)
{
	size_t n = strlen(s), i = n;
	while (i > 0 && ((unsigned char)s[i - 1] & 0xC0) == 0x80)
		i--;
	if (i == 0)
		return;
	unsigned char lead = (unsigned char)s[i - 1];
	size_t want = lead < 0x80 ? 1 : lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : lead >= 0xC0 ? 2 : 1;
	if (n - (i - 1) < want)
		s[i - 1] = '\0';
}

int ev_text_cp_width(uint32_t cp)
{
	uint32_t d = display_cp(cp, false);
	int w;

	if (d != cp || d == EV_TEXT_REPLACEMENT)
		return 1;
	if (d < 0x7F)
		return 1;
	if (is_combining(d))
		return 0;
	if (ev_ambiguous_width() == 2 && ev_ambiguous_is(d)) {
		int cells = 2;
		ev_ambiguous_standin(d, &cells);
		return cells;
	}
	w = wcwidth((wchar_t)d);
	return w > 2 ? 2 : w;
}

static char *sanitize(const char *s, size_t len, bool keep_nl)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t i = 0, o = 0;
	char *out;

	assert(s != NULL || len == 0);
	/* No input byte grows to more than three output bytes (a control byte or a bad byte
	 * becomes a three-byte picture or U+FFFD), so one allocation suffices. */
	if (len > (SIZE_MAX - 1) / 3)
		ev_fatal(_("string too long to sanitise (%zu bytes)"), len);
	out = ev_xmalloc(3 * len + 1);
	while (i < len) {
		uint32_t cp, d;
		size_t n;

		if (u[i] >= 0x20 && u[i] < 0x7F) {
			out[o++] = (char)u[i++];
			continue;
		}
		n = ev_utf8_decode(s + i, len - i, &cp);
		d = display_cp(cp, keep_nl);
		if (d == cp && cp != EV_TEXT_REPLACEMENT) {
			memcpy(out + o, s + i, n);
			o += n;
		} else {
			o += ev_utf8_encode(d, out + o);
		}
		i += n;
	}
	out[o] = '\0';
	return ev_xrealloc(out, o + 1);
}

char *ev_text_sanitize(const char *s, size_t len)
{
	return sanitize(s, len, false);
}

char *ev_text_sanitize_multiline(const char *s, size_t len)
{
	return sanitize(s, len, true);
}

/* Decode from a NUL-terminated string; returns 0 at the terminator. */
static size_t decode_z(const char *s, uint32_t *cp)
{
	return ev_utf8_decode(s, strnlen(s, 4), cp);
}

int ev_text_width(const char *s)
{
	long long w = 0;
	uint32_t cp;
	size_t n;

	while ((n = decode_z(s, &cp)) > 0) {
		w += ev_text_cp_width(cp);
		s += n;
	}
	return w > INT_MAX ? INT_MAX : (int)w;
}

/* s[0..len) into out as it is drawn: under ambiguous_width = 2 the Ambiguous characters
 * that have a stand-in get it (their width already counted as the stand-in's). Returns the
 * bytes written; out has room for len * 3 / 2 + 1 (a stand-in of three bytes for two). */
static size_t copy_drawn(char *out, const char *s, size_t len)
{
	if (ev_ambiguous_width() != 2) {
		memcpy(out, s, len);
		return len;
	}
	size_t i = 0, o = 0, n;
	uint32_t cp;
	while (i < len && (n = ev_utf8_decode(s + i, len - i, &cp)) > 0) {
		const char *in = cp >= 0xA0 ? ev_ambiguous_standin(cp, NULL) : NULL;
		if (in != NULL) {
			size_t k = strlen(in);
			memcpy(out + o, in, k);
			o += k;
		} else {
			memcpy(out + o, s + i, n);
			o += n;
		}
		i += n;
	}
	return o;
}

char *ev_text_fit(const char *s, int cols, bool ellipsis, bool pad)
{
	/* The ellipsis is one cell, or its stand-in's under ambiguous_width = 2. */
	int ell_w = ev_text_cp_width(0x2026);
	if (cols < ell_w) /* no room for it: cut without */
		ellipsis = false;
	int limit = ellipsis ? cols - ell_w : cols; /* room for text when cut */
	int used = 0, cut_used = 0;
	size_t i = 0, cut = 0, n;
	bool over = false, past_limit = false;
	uint32_t cp;
	char *out;
	size_t o;

	if (cols <= 0)
		return ev_xstrdup("");
	/* One pass that stops as soon as the text is known not to fit, remembering the last
	 * point at which the cut text (plus the ellipsis) still fits. */
	while ((n = decode_z(s + i, &cp)) > 0) {
		int w = ev_text_cp_width(cp);

		if (w > 0) {
			if (used + w > cols) {
				over = true;
				break;
			}
			used += w;
			if (used > limit)
				past_limit = true;
		}
		/* Zero-width marks extend the cut only while their base was kept. */
		if (!past_limit) {
			cut = i + n;
			cut_used = used;
		}
		i += n;
	}
	if (!over) {
		cut = i;
		cut_used = used;
		ellipsis = false;
	}
	out = ev_xmalloc(cut + cut / 2 + ELLIPSIS_LEN + (size_t)cols + 1);
	o = copy_drawn(out, s, cut);
	if (ellipsis) {
		o += copy_drawn(out + o, ELLIPSIS, ELLIPSIS_LEN);
		cut_used += ell_w;
	}
	if (pad) {
		for (; cut_used < cols; cut_used++)
			out[o++] = ' ';
	}
	out[o] = '\0';
	return out;
}

size_t ev_text_prefix_cols(const char *s, int cols)
{
	size_t i = 0, n;
	int used = 0;
	uint32_t cp;

	while ((n = decode_z(s + i, &cp)) > 0) {
		int w = ev_text_cp_width(cp);
		if (w > 0 && used + w > cols)
			break;
		used += w;
		i += n;
	}
	return i;
}

/* Punctuation a line of Chinese text may not begin with (closing), or end with (opening). */
static bool no_line_start(uint32_t cp)
{
	static const uint32_t set[] = {0x3001, 0x3002, 0x3009, 0x300B, 0x300D, 0x300F, 0x3011,
	                               0x3015, 0x3017, 0xFF01, 0xFF05, 0xFF09, 0xFF0C, 0xFF0E,
	                               0xFF1A, 0xFF1B, 0xFF1F, 0xFF3D, 0xFF5D};
	for (size_t i = 0; i < sizeof(set) / sizeof(set[0]); i++)
		if (set[i] == cp)
			return true;
	return false;
}

static bool no_line_end(uint32_t cp)
{
	static const uint32_t set[] = {0x3008, 0x300A, 0x300C, 0x300E, 0x3010,
	                               0x3014, 0x3016, 0xFF08, 0xFF3B, 0xFF5B};
	for (size_t i = 0; i < sizeof(set) / sizeof(set[0]); i++)
		if (set[i] == cp)
			return true;
	return false;
}

/* The start of the character before byte i of s (i > 0). */
static size_t char_before(const char *s, size_t i)
{
	do
		i--;
	while (i > 0 && ((unsigned char)s[i] & 0xC0) == 0x80);
	return i;
}

size_t ev_text_wrap_cut(const char *s, int cols)
{
	size_t cut = ev_text_prefix_cols(s, cols);
	uint32_t next = 0, last = 0;
	if (cut == 0 || s[cut] == '\0')
		return cut;
	/* At most a few steps back: a run of punctuation is not carried whole. */
	for (int step = 0; step < 3; step++) {
		size_t prev = char_before(s, cut);
		decode_z(s + cut, &next);
		decode_z(s + prev, &last);
		if (!no_line_start(next) && !no_line_end(last))
			break;
		if (prev == 0 || ev_text_cp_width(last) == 0)
			break; /* the line's only character, or a combining mark kept with its base
			        */
		/* A closing mark takes its character with it; an opening one goes down alone. */
		cut = prev;
	}
	return cut;
}

size_t ev_text_skip_cols(const char *s, int col, int *lead)
{
	int pos = 0;
	size_t i = 0, n;
	uint32_t cp;

	/* A zero-width mark at `col` belongs to a base that starts before it, so only a
	 * character with width ends the skip. */
	while (col > 0 && (n = decode_z(s + i, &cp)) > 0) {
		int w = ev_text_cp_width(cp);

		if (w > 0 && pos >= col)
			break;
		pos += w;
		i += n;
	}
	if (lead != NULL)
		*lead = col > 0 && pos > col ? pos - col : 0;
	return i;
}

void ev_say_error(const char *fmt, ...)
{
	char msg[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	char *safe = ev_text_sanitize(msg, strlen(msg));
	fprintf(stderr, "evtop: %s\n", safe);
	free(safe);
}
