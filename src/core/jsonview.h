/* evtop — the payload pretty-printer: a payload's stored text as styled, foldable, searchable
 * lines for the detail pane.
 *
 * The operator sees the payload's own text: jansson only says whether it is JSON, and a
 * tokenizer of this module walks the stored bytes, so numbers (199.00, 1e-7, -0, integers past
 * 2^64), key order, duplicate keys and string escapes appear exactly as stored — "\u4e2d"
 * stays the six characters \u4e2d, never the decoded 中 (a raw 中 in the text stays 中).
 * Layout: two spaces per level, `{` or `[` on the line of its key, one member or element per
 * line, the closing bracket on its own line, empty `{}` and `[]` on one line, and a folded
 * object or array as `"key": {…} 3 keys` or `[…] 12 items`.
 *
 * Text that is not JSON (or not UTF-8, or nested deeper than jansson's 2048 levels) is shown
 * as stored: a marker line, then the text split at '\n'. In both views every line passes
 * through ev_text_sanitize, and a line longer than EV_JSONVIEW_LINE_MAX stored bytes goes on
 * in the next line, which starts with "↪" (MARKER style).
 *
 * Building a view is O(n) in time and memory (no recursion, so any nesting is safe); a fold
 * change costs O(lines shown), and one line is rendered only when asked for. A view belongs
 * to one thread at a time. */
#ifndef EV_CORE_JSONVIEW_H
#define EV_CORE_JSONVIEW_H

#include "core/style.h"

#include <stdbool.h>
#include <stddef.h>

/* Stored bytes on one line before it continues on the next. */
#define EV_JSONVIEW_LINE_MAX 4096

/* The first line of a view of text that is not JSON. */
#define EV_JSONVIEW_NOT_JSON "⚠ not valid JSON — shown as stored"

/* A styled run of a line's text, in byte offsets. Spans are in order and do not overlap;
 * bytes outside every span (indentation, the space after ':', raw text) are NORMAL. */
struct ev_jspan {
	size_t off;
	size_t len;
	enum ev_style style;
};

struct ev_jline {
	const char *text; /* sanitised UTF-8, NUL-terminated, no control character */
	size_t len;
	const struct ev_jspan *spans;
	size_t nspans;
	int depth;      /* nesting level; the indentation is 2 * depth spaces */
	bool cont;      /* continues the line above (it was longer than EV_JSONVIEW_LINE_MAX) */
	bool foldable;  /* first line of a non-empty object or array */
	bool folded;    /* ... which is folded now */
	size_t fold_id; /* that object's or array's id, when foldable */
};

struct ev_jsonview;

/* Build the view of text[0..len) (any bytes; copied, so the caller keeps its buffer). The
 * first fold_depth levels start unfolded and deeper objects and arrays folded; fold_depth 0
 * folds nothing (1 shows the top-level members, each folded). Never returns NULL. */
struct ev_jsonview *ev_jsonview_new(const char *text, size_t len, int fold_depth);

/* Whether the text was JSON (false: the raw view with its marker line). */
bool ev_jsonview_valid(const struct ev_jsonview *v);

/* Why the text is not JSON, sanitised ("line 1, column 6: string or '}' expected near end
 * of file"), for a status line; NULL when it is JSON. Owned by the view. */
const char *ev_jsonview_error(const struct ev_jsonview *v);

/* Number of lines as currently folded. */
size_t ev_jsonview_line_count(const struct ev_jsonview *v);

/* Line i (< ev_jsonview_line_count) as currently folded. The line and its text live in the
 * view until the next call on v other than ev_jsonview_valid, _error and _line_count: draw
 * (or copy) it before asking for another. */
const struct ev_jline *ev_jsonview_line(struct ev_jsonview *v, size_t i);

/* Fold or unfold the object or array that line opens, or the innermost one enclosing the
 * line (a closing bracket belongs to the one it closes). Returns the line that object or
 * array now starts on (where the cursor belongs), or -1 when there is none (a scalar at the
 * top, the raw view). */
long ev_jsonview_toggle(struct ev_jsonview *v, size_t line);

/* Fold or unfold the object or array fold_id (from ev_jline; ancestors stay as they are).
 * Returns the line it starts on, or -1 when it is hidden inside a folded ancestor or
 * fold_id is not a non-empty object or array. */
long ev_jsonview_set_folded(struct ev_jsonview *v, size_t fold_id, bool folded);

/* Fold every object and array (the whole payload becomes one line), or unfold them all. */
void ev_jsonview_fold_all(struct ev_jsonview *v, bool fold);

/* Fold as ev_jsonview_new does with fold_depth: the first `depth` levels open, deeper ones
 * folded; 0 unfolds everything. */
void ev_jsonview_fold_depth(struct ev_jsonview *v, int depth);

/* The first line after `from` (wrapping round, `from` itself last; from >= line count
 * starts at line 0) whose text contains needle, ASCII letters matched case-insensitively.
 * Folded objects and arrays are searched too, and those hiding the match are unfolded so
 * that the returned line shows it. Returns -1 when no line matches or needle is "". A
 * needle that spans a "↪" continuation is not found. O(payload size). */
long ev_jsonview_find(struct ev_jsonview *v, const char *needle, size_t from);

/* Free the view and set *v to NULL; NULL and *v == NULL are fine. */
void ev_jsonview_free(struct ev_jsonview **v);

#endif
