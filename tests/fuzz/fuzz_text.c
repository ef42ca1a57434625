/* evtop — fuzz target for core/text, the module every database string passes through before a
 * terminal: decoding, sanitising, widths, fitting and horizontal skipping. Invariants, not
 * just "no crash":
 *   - a decoded code point other than U+FFFD re-encodes to exactly the bytes it came from;
 *   - the sanitised text is valid UTF-8 with no C0 control, DEL, C1 control or bidi override
 *     (multi-line: '\n' kept, as many as the input had), and sanitising it again changes
 *     nothing;
 *   - its width is the sum of its code points' widths;
 *   - ev_text_fit never exceeds the columns, pads to exactly them, cuts at a code point
 *     boundary (the kept text is a prefix), and keeps a text that fits whole;
 *   - ev_text_skip_cols stops on a character boundary, at the column or one past it (a wide
 *     character straddling it), and says so in *lead. */
#include <config.h>

#include "core/text.h"
#include "fuzz.h"

#include <locale.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	setlocale(LC_CTYPE, "C.UTF-8");
	return 0;
}

static int width_of(const char *s, size_t len)
{
	int w = 0;
	size_t i = 0;
	while (i < len) {
		uint32_t cp;
		size_t n = ev_utf8_decode(s + i, len - i, &cp);
		w += ev_text_cp_width(cp);
		i += n;
	}
	return w;
}

static void check_decode(const char *s, size_t len)
{
	size_t i = 0;
	while (i < len) {
		uint32_t cp;
		char enc[4];
		size_t n = ev_utf8_decode(s + i, len - i, &cp);
		FUZZ_CHECK(n >= 1 && n <= 4 && i + n <= len, "decode consumed %zu bytes at %zu", n,
		           i);
		FUZZ_CHECK(cp <= 0x10FFFF && !(cp >= 0xD800 && cp <= 0xDFFF), "cp U+%X", cp);
		size_t m = ev_utf8_encode(cp, enc);
		if (cp != EV_TEXT_REPLACEMENT)
			FUZZ_CHECK(m == n && memcmp(enc, s + i, n) == 0,
			           "U+%X does not re-encode to its %zu bytes at %zu", cp, n, i);
		else
			FUZZ_CHECK(n == 1 || (n == 3 && memcmp(s + i, "\xEF\xBF\xBD", 3) == 0),
			           "a replacement consumed %zu bytes at %zu", n, i);
		FUZZ_CHECK(ev_text_cp_width(cp) >= 0 && ev_text_cp_width(cp) <= 2, "width of U+%X",
		           cp);
		i += n;
	}
	uint32_t cp = 1;
	FUZZ_CHECK(ev_utf8_decode(s, 0, &cp) == 0 && cp == 0, "decode of nothing");
}

static void check_fit(const char *safe, int w, int cols, bool ellipsis, bool pad)
{
	size_t slen = strlen(safe);
	char *fit = ev_text_fit(safe, cols, ellipsis, pad);
	size_t flen = strlen(fit);
	int fw = ev_text_width(fit);
	FUZZ_CHECK(fuzz_unsafe_at(fit, flen, 0) == (size_t)-1, "fit made unsafe text");
	if (cols <= 0) {
		FUZZ_CHECK(flen == 0, "fit to %d columns gave '%s'", cols, fit);
		free(fit);
		return;
	}
	FUZZ_CHECK(fw <= cols, "fit to %d columns is %d wide", cols, fw);
	if (pad)
		FUZZ_CHECK(fw == cols, "padded fit to %d columns is %d wide", cols, fw);
	/* fit = a prefix of the text + maybe "…" + maybe spaces. The common prefix, backed off
	 * to a character boundary of the text, leaves only those two behind. (A cut inside a
	 * character would have made the fit invalid UTF-8, caught above.) */
	size_t k = 0;
	while (k < flen && k < slen && fit[k] == safe[k])
		k++;
	while (k > 0 && k < slen && (safe[k] & 0xC0) == 0x80)
		k--;
	const char *rest = fit + k;
	if (ellipsis && strncmp(rest, "\xE2\x80\xA6", 3) == 0)
		rest += 3;
	if (pad)
		rest += strspn(rest, " ");
	FUZZ_CHECK(*rest == '\0', "fit to %d columns is not a prefix + ellipsis + padding", cols);
	if (w <= cols) {
		/* It fits: all of it, and no ellipsis. */
		FUZZ_CHECK(flen >= slen && memcmp(fit, safe, slen) == 0 &&
		                   strspn(fit + slen, " ") == flen - slen,
		           "a text of width %d cut at %d columns", w, cols);
	} else if (ellipsis) {
		size_t end = flen;
		while (pad && end > 0 && fit[end - 1] == ' ')
			end--;
		FUZZ_CHECK(end >= 3 && memcmp(fit + end - 3, "\xE2\x80\xA6", 3) == 0,
		           "a cut text of width %d at %d columns has no ellipsis", w, cols);
	}
	free(fit);
}

static void check_skip(const char *safe, int total, int col)
{
	int lead = -1;
	size_t off = ev_text_skip_cols(safe, col, &lead);
	size_t slen = strlen(safe);
	FUZZ_CHECK(off <= slen, "skip past the end");
	FUZZ_CHECK(off == slen || (safe[off] & 0xC0) != 0x80, "skip split a character");
	FUZZ_CHECK(lead == 0 || lead == 1, "lead %d", lead);
	int before = width_of(safe, off);
	if (col <= 0) {
		FUZZ_CHECK(off == 0 && lead == 0, "skip of %d columns", col);
	} else if (col <= total) {
		FUZZ_CHECK(before == col + lead, "skip %d: %d columns before, lead %d", col, before,
		           lead);
	} else {
		FUZZ_CHECK(off == slen && lead == 0, "skip beyond the text");
	}
}

static void check_sanitized(const char *in, size_t len, bool multiline)
{
	char *out = multiline ? ev_text_sanitize_multiline(in, len) : ev_text_sanitize(in, len);
	size_t olen = strlen(out);
	size_t bad = fuzz_unsafe_at(out, olen, multiline);
	FUZZ_CHECK(bad == (size_t)-1, "unsafe byte 0x%02X at %zu of the sanitised text",
	           (unsigned char)out[bad == (size_t)-1 ? 0 : bad], bad);
	FUZZ_CHECK(olen <= 3 * len, "sanitised text grew from %zu to %zu bytes", len, olen);
	if (multiline) {
		size_t nl_in = 0, nl_out = 0;
		for (size_t i = 0; i < len; i++)
			nl_in += in[i] == '\n';
		for (size_t i = 0; i < olen; i++)
			nl_out += out[i] == '\n';
		FUZZ_CHECK(nl_in == nl_out, "%zu newlines became %zu", nl_in, nl_out);
	}
	char *again =
	        multiline ? ev_text_sanitize_multiline(out, olen) : ev_text_sanitize(out, olen);
	FUZZ_CHECK(strcmp(again, out) == 0, "sanitising is not idempotent");
	free(again);
	if (!multiline) {
		FUZZ_CHECK(ev_text_width(out) == width_of(out, olen), "width");
		/* Printable ASCII passes unchanged. */
		bool ascii = true;
		for (size_t i = 0; i < len && ascii; i++)
			ascii = in[i] >= 0x20 && in[i] < 0x7F;
		if (ascii)
			FUZZ_CHECK(olen == len && memcmp(out, in, len) == 0, "ASCII changed");
	}
	free(out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *s = (const char *)data;
	check_decode(s, size);
	check_sanitized(s, size, false);
	check_sanitized(s, size, true);

	char *safe = ev_text_sanitize(s, size);
	int w = ev_text_width(safe);
	/* Column counts around the interesting places: none, one, just short of the width (a
	 * cut), the width itself, and one taken from the input so the fuzzer can steer it. */
	int cols[] = {0, 1, w - 1, w, size ? data[0] % 64 - 1 : 5};
	for (size_t i = 0; i < sizeof(cols) / sizeof(cols[0]); i++) {
		for (int f = 0; f < 4; f++)
			check_fit(safe, w, cols[i], f & 1, f & 2);
		check_skip(safe, w, cols[i]);
	}
	free(safe);
	return 0;
}
