/* evtop — the one UTF-8 module every string from the database passes through before it
 * reaches a terminal, a table or a CSV file. Pure C; widths from wcwidth(), so the caller
 * must have set an LC_CTYPE with UTF-8 (main does; tests use C.UTF-8). */
#ifndef EV_CORE_TEXT_H
#define EV_CORE_TEXT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define EV_TEXT_REPLACEMENT 0xFFFDu

/* Decode one code point from s[0..len). Returns the bytes consumed (>= 1 when len > 0) and
 * stores the code point in *cp; an invalid, overlong, surrogate or truncated sequence
 * consumes one byte and yields U+FFFD. Returns 0 only when len == 0. */
size_t ev_utf8_decode(const char *s, size_t len, uint32_t *cp);

/* Encode cp (<= 0x10FFFF, not a surrogate; otherwise U+FFFD) into out[0..4); returns bytes. */
size_t ev_utf8_encode(uint32_t cp, char out[4]);

/* The length of s's longest prefix of at most max bytes that ends on a character boundary: for
 * "%.*s" in place of a byte precision ("%.190s") that could cut a character in two. */
size_t ev_utf8_prefix(const char *s, size_t max);

/* End s after its last whole UTF-8 sequence: for text that snprintf (or "%.Ns") may have cut at
 * a byte count, in the middle of a character. Bytes before the last sequence are not checked. */
void ev_utf8_fix_tail(char *s);

/* Display width of one code point as the terminal will show it after sanitising: 0 for
 * combining marks, 2 for wide (CJK, most emoji), 1 otherwise. Never negative. */
int ev_text_cp_width(uint32_t cp);

/* Make s[0..len) safe and valid for a terminal. Returns a malloc'd, NUL-terminated, valid
 * UTF-8 string in which:
 *   - invalid bytes are U+FFFD;
 *   - C0 controls (NUL, ESC, CR, LF, TAB, ... 0x00-0x1F) become the Control Pictures
 *     U+2400 + c (ESC -> U+241B "␛", LF -> U+240A "␊", NUL -> U+2400 "␀"); DEL -> U+2421;
 *   - C1 controls (U+0080-U+009F, e.g. the 8-bit CSI U+009B), bidi overrides and isolates
 *     (U+202A-U+202E, U+2066-U+2069), the bidi marks U+061C/U+200E/U+200F, and any code
 *     point wcwidth() calls non-printable (other than combining marks) become U+FFFD;
 *   - everything else is kept as is.
 * So no byte of the result can start an escape sequence, move the cursor or reorder text. */
char *ev_text_sanitize(const char *s, size_t len);

/* Like ev_text_sanitize, but keeps '\n' as is (for multi-line panes that split on it). */
char *ev_text_sanitize_multiline(const char *s, size_t len);
/* "evtop: <message>" on stderr, the message sanitised (it may quote an argument, a path or a
 * server's words) and cut at 1 KiB. */
void ev_say_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Display width of a sanitised (valid UTF-8, control-free) string. */
int ev_text_width(const char *s);

/* Fit a sanitised string into at most `cols` columns. Returns a malloc'd copy cut at a code
 * point boundary so that its width is <= cols; a double-width character that would straddle
 * the limit is dropped (never split). With `ellipsis` and a cut, the last column shows "…"
 * (U+2026, width 1; under ambiguous_width = 2 its stand-in "...", and every Ambiguous
 * character with a stand-in is written as it, core/ambiguous) — when cols >= 1. With `pad`, spaces
 * fill the result to exactly `cols`. Combining marks stay with their base character. cols <= 0
 * gives "". */
char *ev_text_fit(const char *s, int cols, bool ellipsis, bool pad);

/* Bytes of the longest start of s, in whole characters (and their combining marks), that
 * fits in `cols` columns: where a line is wrapped, so that a wide character at the edge
 * starts the next line. */
size_t ev_text_prefix_cols(const char *s, int cols);

/* Byte offset in s of the first character that starts at or beyond column `col` (for
 * horizontal scrolling); a wide character that straddles `col` is skipped, and *lead is set
 * to the number of columns to pad (0 or 1). */
size_t ev_text_skip_cols(const char *s, int col, int *lead);
/* Where to break s for a line of at most cols cells: ev_text_prefix_cols, moved back as
 * Chinese typesetting asks (GB/T 15834), so that the next line does not begin with full-width
 * closing punctuation (、。，；：？！ and closing brackets) and this one does not end with a
 * full-width opening bracket: the character before goes down with it, up to three steps.
 * Never back to 0: a line of such characters alone breaks where it must. */
size_t ev_text_wrap_cut(const char *s, int cols);

#endif
