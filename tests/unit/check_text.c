/* core/text: UTF-8 decoding, sanitising, widths, fitting to columns. */
#include <config.h>

#include "core/text.h"

#include <check.h>
#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FFFD    "\xEF\xBF\xBD"     /* U+FFFD */
#define ACUTE   "\xCC\x81"         /* U+0301, combining */
#define EMOJI   "\xF0\x9F\x98\x80" /* U+1F600 */
#define PIC_NUL "\xE2\x90\x80"     /* U+2400 */
#define PIC_BEL "\xE2\x90\x87"
#define PIC_TAB "\xE2\x90\x89"
#define PIC_LF  "\xE2\x90\x8A"
#define PIC_CR  "\xE2\x90\x8D"
#define PIC_ESC "\xE2\x90\x9B"
#define PIC_DEL "\xE2\x90\xA1" /* U+2421 */
#define RLO     "\xE2\x80\xAE" /* U+202E */

/* Sanitise s[0..len) and compare the result byte for byte. */
#define ck_sanitize(s, len, want)                                                                  \
	do {                                                                                       \
		char *got_ = ev_text_sanitize((s), (len));                                         \
		ck_assert_str_eq(got_, (want));                                                    \
		free(got_);                                                                        \
	} while (0)

#define ck_fit(s, cols, ellipsis, pad, want)                                                       \
	do {                                                                                       \
		char *got_ = ev_text_fit((s), (cols), (ellipsis), (pad));                          \
		ck_assert_str_eq(got_, (want));                                                    \
		free(got_);                                                                        \
	} while (0)

static void ck_decode(const char *s, size_t len, size_t want_n, uint32_t want_cp)
{
	uint32_t cp = 0x12345;
	size_t n = ev_utf8_decode(s, len, &cp);

	ck_assert_uint_eq(n, want_n);
	ck_assert_uint_eq(cp, want_cp);
}

/* True when s is valid UTF-8 (U+FFFD only where it is really encoded) with no C0 or C1
 * control and no DEL. */
static bool clean_utf8(const char *s, size_t len, bool allow_nl)
{
	size_t i = 0;

	while (i < len) {
		uint32_t cp;
		size_t n = ev_utf8_decode(s + i, len - i, &cp);

		if (cp == EV_TEXT_REPLACEMENT && (n != 3 || memcmp(s + i, FFFD, 3) != 0))
			return false;
		if ((cp < 0x20 && !(allow_nl && cp == '\n')) || (cp >= 0x7F && cp <= 0x9F))
			return false;
		i += n;
	}
	return true;
}

START_TEST(decode_valid)
{
	ck_decode("", 0, 0, 0);
	ck_decode("A", 1, 1, 'A');
	ck_decode("\xC3\xA9", 2, 2, 0xE9);
	ck_decode("\xE8\xAE\xA2", 3, 3, 0x8BA2);
	ck_decode("\xF0\x9F\x98\x80", 4, 4, 0x1F600);
	/* The edges of each range. */
	ck_decode("\xC2\x80", 2, 2, 0x80);
	ck_decode("\xDF\xBF", 2, 2, 0x7FF);
	ck_decode("\xE0\xA0\x80", 3, 3, 0x800);
	ck_decode("\xED\x9F\xBF", 3, 3, 0xD7FF);
	ck_decode("\xEE\x80\x80", 3, 3, 0xE000);
	ck_decode("\xEF\xBF\xBF", 3, 3, 0xFFFF);
	ck_decode("\xF0\x90\x80\x80", 4, 4, 0x10000);
	ck_decode("\xF4\x8F\xBF\xBF", 4, 4, 0x10FFFF);
	/* Only len bytes are looked at. */
	ck_decode("ab", 1, 1, 'a');
}
END_TEST

START_TEST(decode_rejects_invalid)
{
	ck_decode("\x80", 1, 1, EV_TEXT_REPLACEMENT);
	ck_decode("\xBF", 1, 1, EV_TEXT_REPLACEMENT);
	ck_decode("\xC0\xAF", 2, 1, EV_TEXT_REPLACEMENT);     /* overlong '/' */
	ck_decode("\xC1\xBF", 2, 1, EV_TEXT_REPLACEMENT);     /* overlong */
	ck_decode("\xE0\x80\xAF", 3, 1, EV_TEXT_REPLACEMENT); /* overlong */
	ck_decode("\xE0\x9F\xBF", 3, 1, EV_TEXT_REPLACEMENT); /* overlong */
	ck_decode("\xF0\x8F\xBF\xBF", 4, 1, EV_TEXT_REPLACEMENT);
	ck_decode("\xED\xA0\x80", 3, 1, EV_TEXT_REPLACEMENT);     /* U+D800 */
	ck_decode("\xED\xBF\xBF", 3, 1, EV_TEXT_REPLACEMENT);     /* U+DFFF */
	ck_decode("\xF4\x90\x80\x80", 4, 1, EV_TEXT_REPLACEMENT); /* U+110000 */
	ck_decode("\xF5\x80\x80\x80", 4, 1, EV_TEXT_REPLACEMENT);
	ck_decode("\xFF", 1, 1, EV_TEXT_REPLACEMENT);
	ck_decode("\xFE", 1, 1, EV_TEXT_REPLACEMENT);
	/* Truncated: at the end of the input, or cut short by a non-continuation byte. */
	ck_decode("\xE4\xB8", 2, 1, EV_TEXT_REPLACEMENT);
	ck_decode("\xE4\xB8\xAD", 2, 1, EV_TEXT_REPLACEMENT);
	ck_decode("\xE4\xB8Z", 3, 1, EV_TEXT_REPLACEMENT);
	ck_decode("\xF0\x9F\x98", 3, 1, EV_TEXT_REPLACEMENT);
	ck_decode("\xC3", 1, 1, EV_TEXT_REPLACEMENT);
	ck_decode("\xC3Z", 2, 1, EV_TEXT_REPLACEMENT);
}
END_TEST

START_TEST(encode_round_trips)
{
	char buf[4];

	for (uint32_t cp = 0; cp <= 0x10FFFF; cp++) {
		uint32_t back;
		size_t n;

		if (cp >= 0xD800 && cp <= 0xDFFF)
			continue;
		n = ev_utf8_encode(cp, buf);
		/* A plain test first: a ck_assert per code point would record a million points. */
		if (n != (cp < 0x80      ? 1
		          : cp < 0x800   ? 2
		          : cp < 0x10000 ? 3
		                         : 4) ||
		    ev_utf8_decode(buf, n, &back) != n || back != cp)
			ck_abort_msg("U+%04X does not round-trip (%zu bytes)", (unsigned)cp, n);
	}
	ck_assert_uint_eq(ev_utf8_encode(0xD800, buf), 3);
	ck_assert_int_eq(memcmp(buf, FFFD, 3), 0);
	ck_assert_uint_eq(ev_utf8_encode(0x110000, buf), 3);
	ck_assert_int_eq(memcmp(buf, FFFD, 3), 0);
}
END_TEST

START_TEST(cp_widths)
{
	ck_assert_int_eq(ev_text_cp_width('a'), 1);
	ck_assert_int_eq(ev_text_cp_width(0x8BA2), 2);  /* 订 */
	ck_assert_int_eq(ev_text_cp_width(0x1F600), 2); /* 😀 */
	ck_assert_int_eq(ev_text_cp_width(0x0301), 0);
	ck_assert_int_eq(ev_text_cp_width(0x20D7), 0);
	ck_assert_int_eq(ev_text_cp_width(0x200D), 0);
	ck_assert_int_eq(ev_text_cp_width(0xFE0F), 0);
	/* Shown as a picture or U+FFFD, so one column. */
	ck_assert_int_eq(ev_text_cp_width(0x00), 1);
	ck_assert_int_eq(ev_text_cp_width(0x1B), 1);
	ck_assert_int_eq(ev_text_cp_width('\n'), 1);
	ck_assert_int_eq(ev_text_cp_width(0x7F), 1);
	ck_assert_int_eq(ev_text_cp_width(0x9B), 1);
	ck_assert_int_eq(ev_text_cp_width(0x202E), 1);
	ck_assert_int_eq(ev_text_cp_width(0x200F), 1);
	ck_assert_int_eq(ev_text_cp_width(0xFFFD), 1);
	ck_assert_int_eq(ev_text_cp_width(0xFFFF), 1);
	ck_assert_int_eq(ev_text_cp_width(0xD800), 1);
	ck_assert_int_eq(ev_text_cp_width(0x110000), 1);
}
END_TEST

START_TEST(string_widths)
{
	ck_assert_int_eq(ev_text_width(""), 0);
	ck_assert_int_eq(ev_text_width("hello"), 5);
	ck_assert_int_eq(ev_text_width("订单"), 4);
	ck_assert_int_eq(ev_text_width(EMOJI), 2);
	ck_assert_int_eq(ev_text_width("e" ACUTE), 1);
	ck_assert_int_eq(ev_text_width("a订" EMOJI "e" ACUTE), 6);
}
END_TEST

START_TEST(sanitize_ascii_and_unicode_unchanged)
{
	ck_sanitize("", 0, "");
	ck_sanitize(NULL, 0, "");
	ck_sanitize("hello, world ~!", 15, "hello, world ~!");
	ck_sanitize("订单 " EMOJI, 11, "订单 " EMOJI);
	ck_sanitize("e" ACUTE, 3, "e" ACUTE);
	/* ZWJ and the emoji variation selector stay. */
	ck_sanitize("\xE2\x9D\xA4\xEF\xB8\x8F\xE2\x80\x8D", 9, "\u2764\uFE0F\u200D");
	/* A real U+FFFD is kept as it is. */
	ck_sanitize(FFFD, 3, FFFD);
	/* Only len bytes are read. */
	ck_sanitize("abcdef", 3, "abc");
}
END_TEST

START_TEST(sanitize_invalid_bytes)
{
	ck_sanitize("a\x80z", 3, "a" FFFD "z");
	ck_sanitize("\xC0\xAF", 2, FFFD FFFD);
	ck_sanitize("\xED\xA0\x80", 3, FFFD FFFD FFFD);
	ck_sanitize("\xF4\x90\x80\x80", 4, FFFD FFFD FFFD FFFD);
	ck_sanitize("x\xE4\xB8", 3, "x" FFFD FFFD);
	/* After a bad byte decoding picks up at the next character. */
	ck_sanitize("\xE4\xB8订", 5, FFFD FFFD "订");
	ck_sanitize("\xFFz\xFE", 3, FFFD "z" FFFD);
}
END_TEST

START_TEST(sanitize_escape_sequences)
{
	char *s;

	ck_sanitize("\x1b[2J", 4, PIC_ESC "[2J");
	ck_sanitize("\x1b]0;title\x07", 10, PIC_ESC "]0;title" PIC_BEL);
	s = ev_text_sanitize("a\x1b[31mred\x1b[0m\x1b]0;t\x07z", 20);
	ck_assert_ptr_null(strchr(s, 0x1b));
	ck_assert_ptr_null(strchr(s, 0x07));
	ck_assert_str_eq(s, "a" PIC_ESC "[31mred" PIC_ESC "[0m" PIC_ESC "]0;t" PIC_BEL "z");
	free(s);
	/* The 8-bit CSI (U+009B) and other C1 controls. */
	ck_sanitize("\xC2\x9B[2J", 5, FFFD "[2J");
	ck_sanitize("\xC2\x80\xC2\x9F\xC2\xA0", 6, FFFD FFFD "\xC2\xA0");
	/* A raw 0x9B byte is not valid UTF-8 on its own. */
	ck_sanitize("\x9B[2J", 4, FFFD "[2J");
}
END_TEST

START_TEST(sanitize_controls)
{
	char *s;

	/* NUL in the middle of a length-delimited value. */
	s = ev_text_sanitize("a\0z", 3);
	ck_assert_uint_eq(strlen(s), 5);
	ck_assert_str_eq(s, "a" PIC_NUL "z");
	free(s);
	ck_sanitize("\x7f", 1, PIC_DEL);
	ck_sanitize("\x01\x1f", 2, "\xE2\x90\x81\xE2\x90\x9F");
	ck_sanitize("a\tb\nc\rd", 7, "a" PIC_TAB "b" PIC_LF "c" PIC_CR "d");

	s = ev_text_sanitize_multiline("a\tb\nc\r\nd\x1b", 9);
	ck_assert_str_eq(s, "a" PIC_TAB "b\nc" PIC_CR "\nd" PIC_ESC);
	free(s);
}
END_TEST

START_TEST(sanitize_bidi_and_nonprintable)
{
	ck_sanitize("a" RLO "z", 5, "a" FFFD "z");
	ck_sanitize("\xE2\x80\xAA\xE2\x81\xA6\xE2\x81\xA9", 9, FFFD FFFD FFFD);
	ck_sanitize("\xE2\x80\x8E\xE2\x80\x8F\xD8\x9C", 8, FFFD FFFD FFFD);
	/* Noncharacters and the line separator: wcwidth() calls them non-printable. */
	ck_sanitize("\xEF\xBF\xBF\xE2\x80\xA8", 6, FFFD FFFD);
}
END_TEST

START_TEST(fit_ascii)
{
	ck_fit("hello", 5, true, false, "hello");
	ck_fit("hello", 8, false, true, "hello   ");
	ck_fit("hello", 3, false, false, "hel");
	ck_fit("hello", 3, true, false, "he…");
	ck_fit("hello", 3, true, true, "he…");
	ck_fit("hello", 1, true, false, "…");
	ck_fit("hello", 1, false, false, "h");
	ck_fit("hello", 0, true, true, "");
	ck_fit("hello", -4, false, true, "");
	ck_fit("", 3, true, true, "   ");
	ck_fit("", 3, true, false, "");
}
END_TEST

START_TEST(fit_wide)
{
	ck_fit("订单", 4, true, true, "订单");
	ck_fit("订单", 3, false, false, "订");
	ck_fit("订单", 3, false, true, "订 ");
	ck_fit("订单", 3, true, false, "订…");
	ck_fit("订单", 3, true, true, "订…");
	ck_fit("订单", 2, true, true, "… ");
	ck_fit("订单", 1, false, false, "");
	ck_fit("订单", 1, false, true, " ");
	ck_fit("订单", 1, true, false, "…");
	/* The wide character that would straddle the limit is dropped, not split. */
	ck_fit("a订单", 2, false, false, "a");
	ck_fit("a订单", 2, false, true, "a ");
	ck_fit("a订单", 3, true, false, "a…");
	ck_fit("a订单", 3, true, true, "a… ");
	ck_fit(EMOJI EMOJI, 3, false, true, EMOJI " ");
	ck_fit(EMOJI EMOJI, 3, true, false, EMOJI "…");
}
END_TEST

START_TEST(fit_combining)
{
	const char *eee = "e" ACUTE "e" ACUTE "e" ACUTE;

	ck_fit(eee, 3, true, false, eee);
	ck_fit(eee, 2, false, false, "e" ACUTE "e" ACUTE);
	ck_fit(eee, 2, true, false, "e" ACUTE "…");
	ck_fit(eee, 1, false, true, "e" ACUTE);
	ck_fit("e" ACUTE ACUTE "x", 1, false, false, "e" ACUTE ACUTE);
}
END_TEST

START_TEST(fit_width_property)
{
	static const char *const samples[] = {
	        "",
	        "a",
	        "hello world",
	        "订单号码",
	        "a订b单c",
	        EMOJI "x" EMOJI,
	        "e" ACUTE "订e" ACUTE,
	        PIC_ESC "[2J",
	};

	for (size_t k = 0; k < sizeof(samples) / sizeof(samples[0]); k++) {
		int full = ev_text_width(samples[k]);
		size_t len = strlen(samples[k]);

		for (int cols = -1; cols <= 12; cols++) {
			for (int f = 0; f < 4; f++) {
				bool ellipsis = f & 1, pad = f & 2;
				char *r = ev_text_fit(samples[k], cols, ellipsis, pad);
				int w = ev_text_width(r);

				if (cols <= 0)
					ck_assert_str_eq(r, "");
				else if (pad)
					ck_assert_int_eq(w, cols);
				else
					ck_assert_int_le(w, cols);
				/* A cut shows the ellipsis; a fit is the string itself. */
				if (cols > 0 && full <= cols)
					ck_assert_int_eq(strncmp(r, samples[k], len), 0);
				else if (cols > 0 && ellipsis)
					ck_assert_ptr_nonnull(strstr(r, "…"));
				free(r);
			}
		}
	}
}
END_TEST

static void ck_skip(const char *s, int col, size_t want_off, int want_lead)
{
	int lead = -1;

	ck_assert_uint_eq(ev_text_skip_cols(s, col, &lead), want_off);
	ck_assert_int_eq(lead, want_lead);
}

START_TEST(skip_cols)
{
	const char *s = "ab订c"; /* columns: a=0 b=1 订=2,3 c=4 */

	ck_skip(s, 0, 0, 0);
	ck_skip(s, -2, 0, 0);
	ck_skip(s, 1, 1, 0);
	ck_skip(s, 2, 2, 0);
	ck_skip(s, 3, 5, 1); /* 订 straddles column 3: skipped, one column of padding */
	ck_skip(s, 4, 5, 0);
	ck_skip(s, 5, 6, 0);
	ck_skip(s, 50, 6, 0);
	ck_skip("订", 1, 3, 1);
	/* A combining mark goes with its base, never starts the visible part. */
	ck_skip("e" ACUTE "x", 1, 3, 0);
	ck_skip("e" ACUTE "x", 0, 0, 0);
	ck_assert_uint_eq(ev_text_skip_cols(s, 3, NULL), 5);
}
END_TEST

START_TEST(sanitize_one_megabyte)
{
	const size_t len = 1024 * 1024;
	char *in = malloc(len);
	uint32_t seed = 12345;
	char *out;
	size_t n;

	ck_assert_ptr_nonnull(in);
	/* Random bytes, with many ESC and a dose of valid multi-byte text. */
	for (size_t i = 0; i < len; i++) {
		seed = seed * 1103515245u + 12345u;
		unsigned char b = (unsigned char)(seed >> 16);
		if (b % 7 == 0)
			b = 0x1b;
		in[i] = (char)b;
	}
	for (size_t i = 0; i + 3 <= len; i += 997)
		memcpy(in + i, "订", 3);

	out = ev_text_sanitize(in, len);
	n = strlen(out);
	ck_assert_uint_ge(n, len);
	ck_assert(clean_utf8(out, n, false));
	ck_assert_ptr_null(strchr(out, 0x1b));
	ck_assert_int_gt(ev_text_width(out), 0);
	free(out);

	out = ev_text_sanitize_multiline(in, len);
	n = strlen(out);
	ck_assert(clean_utf8(out, n, true));
	ck_assert_ptr_null(strchr(out, 0x1b));
	free(out);

	/* Plain ASCII comes through unchanged. */
	memset(in, 'x', len);
	out = ev_text_sanitize(in, len);
	ck_assert_uint_eq(strlen(out), len);
	ck_assert_int_eq(memcmp(out, in, len), 0);
	free(out);
	free(in);
}
END_TEST

int main(void)
{
	if (setlocale(LC_CTYPE, "C.UTF-8") == NULL && setlocale(LC_CTYPE, "en_US.UTF-8") == NULL) {
		fputs("check_text: neither C.UTF-8 nor en_US.UTF-8 is available\n", stderr);
		return 1;
	}

	Suite *s = suite_create("text");
	TCase *tc = tcase_create("text");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, decode_valid);
	tcase_add_test(tc, decode_rejects_invalid);
	tcase_add_test(tc, encode_round_trips);
	tcase_add_test(tc, cp_widths);
	tcase_add_test(tc, string_widths);
	tcase_add_test(tc, sanitize_ascii_and_unicode_unchanged);
	tcase_add_test(tc, sanitize_invalid_bytes);
	tcase_add_test(tc, sanitize_escape_sequences);
	tcase_add_test(tc, sanitize_controls);
	tcase_add_test(tc, sanitize_bidi_and_nonprintable);
	tcase_add_test(tc, fit_ascii);
	tcase_add_test(tc, fit_wide);
	tcase_add_test(tc, fit_combining);
	tcase_add_test(tc, fit_width_property);
	tcase_add_test(tc, skip_cols);
	tcase_add_test(tc, sanitize_one_megabyte);
	suite_add_tcase(s, tc);
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? 0 : 1;
}
