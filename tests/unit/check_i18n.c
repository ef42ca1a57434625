/* core/i18n and core/ambiguous: the catalogue's fallbacks, and ambiguous_width = 2 — which
 * characters are East Asian Ambiguous, their stand-ins, and the widths and fitting of text
 * under either setting. */
#include <config.h>

#include "core/ambiguous.h"
#include "core/i18n.h"
#include "core/text.h"

#include <check.h>
#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Without a catalogue every message is its English self, with a context or without. */
START_TEST(untranslated_is_english)
{
	ck_assert_str_eq(_("pending"), "pending");
	ck_assert_str_eq(P_("outbox", "pending"), "pending");
	ck_assert(!ev_i18n_active());
}
END_TEST

/* The tables are sorted (binary searches), and every stand-in is for an Ambiguous character
 * and takes the cells it says (ASCII one a byte; a Wide character two). */
START_TEST(ambiguous_tables)
{
	ck_assert(ev_ambiguous_is(0x00B7)); /* · */
	ck_assert(ev_ambiguous_is(0x2026)); /* … */
	ck_assert(ev_ambiguous_is(0x2192)); /* → */
	ck_assert(ev_ambiguous_is(0x2265)); /* ≥ */
	ck_assert(ev_ambiguous_is(0x2500)); /* ─ */
	ck_assert(ev_ambiguous_is(0x2588)); /* █ */
	ck_assert(ev_ambiguous_is(0x03B1)); /* α */
	ck_assert(ev_ambiguous_is(0xE000)); /* private use */
	ck_assert(ev_ambiguous_is(0x10FFFD));
	ck_assert(!ev_ambiguous_is('a'));
	ck_assert(!ev_ambiguous_is(0x4E2D));  /* 中: Wide */
	ck_assert(!ev_ambiguous_is(0x0301));  /* combining: no cell */
	ck_assert(!ev_ambiguous_is(0x2800));  /* braille: Neutral */
	ck_assert(!ev_ambiguous_is(0x00AB));  /* «: Neutral */
	ck_assert(!ev_ambiguous_is(0xFE0F));  /* a variation selector: no cell */
	ck_assert(!ev_ambiguous_is(0x1F600)); /* emoji: Wide */

	int n = 0;
	uint32_t prev = 0;
	for (uint32_t cp = 0x80; cp < 0x30000; cp++) {
		int cells = 0;
		const char *s = ev_ambiguous_standin(cp, &cells);
		if (s == NULL)
			continue;
		ck_assert_msg(ev_ambiguous_is(cp), "U+%04X has a stand-in and is not Ambiguous",
		              cp);
		ck_assert_msg(cp > prev, "stand-ins out of order at U+%04X", cp);
		prev = cp;
		bool ascii = true;
		for (const char *p = s; *p; p++)
			ascii = ascii && (unsigned char)*p < 0x80;
		if (ascii)
			ck_assert_int_eq(cells, (int)strlen(s));
		else
			ck_assert_int_eq(cells, 2);
		n++;
	}
	ck_assert_int_ge(n, 20);
	ck_assert_ptr_null(ev_ambiguous_standin('a', NULL));
}
END_TEST

#define ck_fit(s, cols, ellipsis, pad, want)                                                       \
	do {                                                                                       \
		char *got_ = ev_text_fit((s), (cols), (ellipsis), (pad));                          \
		ck_assert_str_eq(got_, (want));                                                    \
		free(got_);                                                                        \
	} while (0)

/* Widths and fitting under either setting: under 2 an Ambiguous character counts two cells,
 * or its stand-in's, and is drawn as the stand-in; nothing else changes. */
START_TEST(widths_follow_the_setting)
{
	ev_ambiguous_set_width(1);
	ck_assert_int_eq(ev_text_width("a\xC2\xB7"
	                               "b"),
	                 3);                                            /* a·b */
	ck_assert_int_eq(ev_text_width("\xE2\x80\xA6"), 1);             /* … */
	ck_assert_int_eq(ev_text_width("\xCE\xB1"), 1);                 /* α */
	ck_assert_int_eq(ev_text_width("\xE4\xB8\xAD\xE6\x96\x87"), 4); /* 中文 */
	ck_fit("\xE2\x86\x92 x", 10, true, false, "\xE2\x86\x92 x");
	ck_fit("abcdefgh", 5, true, false, "abcd\xE2\x80\xA6");

	ev_ambiguous_set_width(2);
	ck_assert_int_eq(ev_ambiguous_width(), 2);
	ck_assert_int_eq(ev_text_width("a\xC2\xB7"
	                               "b"),
	                 4);                                            /* a・b */
	ck_assert_int_eq(ev_text_width("\xE2\x80\xA6"), 3);             /* ... */
	ck_assert_int_eq(ev_text_width("\xE2\x86\x92"), 2);             /* -> */
	ck_assert_int_eq(ev_text_width("\xCE\xB1"), 2);                 /* α: no stand-in */
	ck_assert_int_eq(ev_text_width("\xE4\xB8\xAD\xE6\x96\x87"), 4); /* 中文 as before */
	ck_assert_int_eq(ev_text_width("abc"), 3);
	/* Drawn as the stand-ins, cut with "..." and padded by the same count. */
	ck_fit("\xE2\x86\x92 \xE4\xB8\xAD\xC2\xB7x", 20, true, false,
	       "-> \xE4\xB8\xAD\xE3\x83\xBBx");
	ck_fit("abcdefgh", 5, true, false, "ab...");
	ck_fit("abcdefgh", 2, true, false, "ab");
	ck_fit("\xE2\x89\xA5"
	       "5",
	       4, false, true, ">=5 ");
	ck_fit("\xCE\xB1\xCE\xB2\xCE\xB3", 5, false, true, "\xCE\xB1\xCE\xB2 ");
	/* A wrapped line ends before a character that would cross the edge. */
	ck_assert_uint_eq(ev_text_prefix_cols("a\xE2\x86\x92"
	                                      "b",
	                                      2),
	                  1);
	ev_ambiguous_set_width(1);
	ck_assert_uint_eq(ev_text_prefix_cols("a\xE2\x86\x92"
	                                      "b",
	                                      2),
	                  4);
	ck_assert_uint_eq(ev_text_prefix_cols("a\xE4\xB8\xAD", 2), 1);
	ck_assert_int_eq(ev_ambiguous_width(), 1);
	ev_ambiguous_set_width(7); /* anything but 2 is 1 */
	ck_assert_int_eq(ev_ambiguous_width(), 1);
}
END_TEST

/* Any mix of ASCII, Wide and Ambiguous characters fits: width(fit(s, c)) <= c, exactly c when
 * padded, and no character with a stand-in is left in it under 2. */
START_TEST(wrap_keeps_punctuation_off_line_starts)
{
	static const struct {
		const char *text;
		int cols;
		const char *line; /* the first line of the wrap */
	} cases[] = {
	        /* 6 characters of 2 cells in 12: the 7th, "、", would begin the next line: 个
	         * goes with it. */
	        {"受保护的行个、被拒绝", 12, "受保护的行"},
	        /* Nothing to mend: the plain cut. */
	        {"受保护的行个被拒绝", 12, "受保护的行个"},
	        /* An opening bracket does not end a line. */
	        {"已生效的行（12）", 12, "已生效的行"},
	        /* The character before a run of closing marks goes down with the run. */
	        {"一二三四五六。。。。。", 12, "一二三四五"},
	        /* A longer run than three: it breaks inside the run, three characters back. */
	        {"一二三，。。。。。", 12, "一二三"},
	        /* Never back to nothing. */
	        {"一、", 2, "一"},
	        /* ASCII punctuation is left alone (statements wrap where the width ends). */
	        {"abcdef, ghi", 6, "abcdef"},
	        /* The whole text fits: no cut to mend. */
	        {"一二、", 12, "一二、"},
	};
	ev_ambiguous_set_width(1);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		size_t cut = ev_text_wrap_cut(cases[i].text, cases[i].cols);
		ck_assert_msg(cut == strlen(cases[i].line) &&
		                      strncmp(cases[i].text, cases[i].line, cut) == 0,
		              "\"%s\" at %d: \"%.*s\", not \"%s\"", cases[i].text, cases[i].cols,
		              (int)cut, cases[i].text, cases[i].line);
	}
}
END_TEST

START_TEST(fit_property_under_both)
{
	static const char *const parts[] = {"a",
	                                    "\xC2\xB7",
	                                    "\xE2\x80\xA6",
	                                    "\xE2\x86\x92",
	                                    "\xE4\xB8\xAD",
	                                    "\xCE\xB1",
	                                    "\xE2\x94\x80",
	                                    "\xE2\x96\x88",
	                                    " ",
	                                    "\xE2\x89\xA5"};
	unsigned seed = 23;
	for (int amb = 1; amb <= 2; amb++) {
		ev_ambiguous_set_width(amb);
		for (int round = 0; round < 2000; round++) {
			char s[256] = "";
			int k = (int)((seed = seed * 1103515245u + 12345u) >> 16) % 20;
			for (int i = 0; i < k; i++)
				strcat(s, parts[((seed = seed * 1103515245u + 12345u) >> 16) % 10]);
			int cols = (int)((seed = seed * 1103515245u + 12345u) >> 16) % 12;
			for (int pad = 0; pad < 2; pad++) {
				char *f = ev_text_fit(s, cols, true, pad);
				int w = ev_text_width(f);
				ck_assert_msg(w <= cols, "'%s' fit in %d is %d wide (amb %d)", s,
				              cols, w, amb);
				if (pad)
					ck_assert_int_eq(w, cols);
				if (amb == 2)
					ck_assert_msg(
					        strstr(f, "\xE2\x86\x92") == NULL &&
					                strstr(f, "\xC2\xB7") == NULL &&
					                strstr(f, "\xE2\x80\xA6") == NULL,
					        "'%s' drawn with a character that has a stand-in",
					        f);
				free(f);
			}
		}
	}
	ev_ambiguous_set_width(1);
}
END_TEST

int main(void)
{
	if (setlocale(LC_CTYPE, "C.UTF-8") == NULL && setlocale(LC_CTYPE, "en_US.UTF-8") == NULL) {
		fputs("check_i18n: neither C.UTF-8 nor en_US.UTF-8 is available\n", stderr);
		return 1;
	}
	Suite *s = suite_create("i18n");
	TCase *tc = tcase_create("i18n");
	tcase_add_test(tc, untranslated_is_english);
	tcase_add_test(tc, ambiguous_tables);
	tcase_add_test(tc, widths_follow_the_setting);
	tcase_add_test(tc, fit_property_under_both);
	tcase_add_test(tc, wrap_keeps_punctuation_off_line_starts);
	suite_add_tcase(s, tc);
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? 0 : 1;
}
