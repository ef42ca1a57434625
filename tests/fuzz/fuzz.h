/* evtop — what every fuzz target shares: the libFuzzer entry points (defined by each target,
 * called by libFuzzer in the fuzzing build and by tests/fuzz/replay.c in the normal one) and
 * an invariant check that fails loudly in both. */
#ifndef EV_TESTS_FUZZ_H
#define EV_TESTS_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* An invariant that must hold for every input. abort() makes libFuzzer save the input as a
 * crash and makes the replay driver fail. */
#define FUZZ_CHECK(cond, ...)                                                                      \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			fprintf(stderr, "%s:%d: invariant failed: %s: ", __FILE__, __LINE__,       \
			        #cond);                                                            \
			fprintf(stderr, __VA_ARGS__);                                              \
			fputc('\n', stderr);                                                       \
			abort();                                                                   \
		}                                                                                  \
	} while (0)

/* Whether s[0..len) is valid UTF-8 (RFC 3629: no overlong forms, surrogates or values above
 * U+10FFFF), checked independently of core/text. */
static inline int fuzz_utf8_valid(const char *s, size_t len)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t i = 0;
	while (i < len) {
		unsigned char c = u[i];
		size_t need;
		unsigned char lo = 0x80, hi = 0xBF;
		if (c < 0x80) {
			i++;
			continue;
		} else if (c >= 0xC2 && c <= 0xDF) {
			need = 1;
		} else if (c >= 0xE0 && c <= 0xEF) {
			need = 2;
			lo = c == 0xE0 ? 0xA0 : 0x80;
			hi = c == 0xED ? 0x9F : 0xBF;
		} else if (c >= 0xF0 && c <= 0xF4) {
			need = 3;
			lo = c == 0xF0 ? 0x90 : 0x80;
			hi = c == 0xF4 ? 0x8F : 0xBF;
		} else {
			return 0;
		}
		if (i + need >= len)
			return 0;
		if (u[i + 1] < lo || u[i + 1] > hi)
			return 0;
		for (size_t k = 2; k <= need; k++)
			if ((u[i + k] & 0xC0) != 0x80)
				return 0;
		i += need + 1;
	}
	return 1;
}

/* Whether the text is safe for a terminal: valid UTF-8 with no C0 control, DEL, C1 control
 * (U+0080-U+009F, which an 8-bit terminal takes for CSI and friends) or bidi override. With
 * allow_nl, '\n' is allowed. Returns the offset of the first offence, or (size_t)-1. */
static inline size_t fuzz_unsafe_at(const char *s, size_t len, int allow_nl)
{
	const unsigned char *u = (const unsigned char *)s;
	if (!fuzz_utf8_valid(s, len))
		return 0;
	for (size_t i = 0; i < len; i++) {
		if ((u[i] < 0x20 && !(allow_nl && u[i] == '\n')) || u[i] == 0x7F)
			return i;
		/* U+0080-U+009F encode as C2 80 .. C2 9F. */
		if (u[i] == 0xC2 && i + 1 < len && u[i + 1] >= 0x80 && u[i + 1] <= 0x9F)
			return i;
		/* U+202A-U+202E (E2 80 AA-AE), U+2066-U+2069 (E2 81 A6-A9), U+200E/F (E2 80
		 * 8E/8F), U+061C (D8 9C). */
		if (u[i] == 0xE2 && i + 2 < len &&
		    ((u[i + 1] == 0x80 && ((u[i + 2] >= 0xAA && u[i + 2] <= 0xAE) ||
		                           u[i + 2] == 0x8E || u[i + 2] == 0x8F)) ||
		     (u[i + 1] == 0x81 && u[i + 2] >= 0xA6 && u[i + 2] <= 0xA9)))
			return i;
		if (u[i] == 0xD8 && i + 1 < len && u[i + 1] == 0x9C)
			return i;
	}
	return (size_t)-1;
}

#endif
