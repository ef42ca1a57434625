/* evtop — semantic styles: what a piece of text is, not what colour it has. The UI maps each
 * to colours per theme (with a monochrome fallback); core tags text with them. */
#ifndef EV_CORE_STYLE_H
#define EV_CORE_STYLE_H

#define EV_STYLE_LIST(X)                                                                           \
	X(NORMAL, "normal")                                                                        \
	X(SELECTED, "selected")                                                                    \
	X(HEADER, "header")                                                                        \
	X(TITLE, "title")                                                                          \
	X(HINT, "hint")                                                                            \
	X(STATUS_LINE, "status_line")                                                              \
	X(STATUS_PENDING, "status_pending")                                                        \
	X(STATUS_PROCESSING, "status_processing")                                                  \
	X(STATUS_SUCCESS, "status_success")                                                        \
	X(STATUS_FAILED, "status_failed")                                                          \
	X(STATUS_CANCELLED, "status_cancelled")                                                    \
	X(STUCK, "stuck")                                                                          \
	X(CHANGED, "changed")                                                                      \
	X(STALE, "stale")                                                                          \
	X(ERROR, "error")                                                                          \
	X(WARNING, "warning")                                                                      \
	X(MARKED, "marked")                                                                        \
	X(DELETED, "deleted")                                                                      \
	X(NULL_VALUE, "null_value")                                                                \
	X(MARKER, "marker")                                                                        \
	X(JSON_KEY, "json_key")                                                                    \
	X(JSON_STRING, "json_string")                                                              \
	X(JSON_NUMBER, "json_number")                                                              \
	X(JSON_LITERAL, "json_literal")                                                            \
	X(JSON_PUNCT, "json_punct")                                                                \
	X(JSON_FOLD, "json_fold")                                                                  \
	X(MATCH, "match")

enum ev_style {
#define X(id, name) EV_STYLE_##id,
	EV_STYLE_LIST(X)
#undef X
	        EV_STYLE_COUNT,
};

#endif
