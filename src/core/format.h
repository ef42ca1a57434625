/* evtop — the output formats of the sub-commands: table (for people), json and csv (for
 * scripts). Every text goes through core/text. */
#ifndef EV_CORE_FORMAT_H
#define EV_CORE_FORMAT_H

#include "core/rowset.h"

#include <stdio.h>

enum ev_format {
	EV_FMT_TABLE,
	EV_FMT_JSON,
	EV_FMT_CSV,
};

/* Parse "table", "json" or "csv"; returns -1 on anything else. */
int ev_format_parse(const char *name, enum ev_format *out);
/* The i-th name ev_format_parse takes, NULL past the last (for shell completion). */
const char *ev_format_name(size_t i);

/* Write rs to out.
 *   table: a header line of column names, then one line per row; columns separated by two
 *          spaces, each as wide as its widest value (display width) up to max_width columns
 *          (cut with "…" by ev_text_fit; 0 = no limit); every value sanitised; NULL shown as
 *          "NULL"; numbers (EV_CT_INT, EV_CT_ID) right-aligned. No trailing spaces.
 *   json:  a JSON array of objects, one per row, keys in column order; EV_CT_ID as strings,
 *          EV_CT_INT as numbers, NULL as null, EV_CT_JSON embedded as the stored text itself
 *          when jansson accepts it (JSON_DECODE_ANY) — byte for byte, so 199.00 stays 199.00
 *          and key order is kept — or else as a JSON string; all other text as JSON strings
 *          (invalid UTF-8 replaced by U+FFFD; control characters escaped as \u00XX).
 *          Pretty: one object per line ("[\n{...},\n{...}\n]\n"); an empty set is "[]\n".
 *   csv:   RFC 4180: a header line, "\n" line ends, a field quoted when it holds a comma, a
 *          quote, or leading/trailing spaces; quotes doubled; NULL as an empty field; values
 *          sanitised exactly like table values, so no control byte (nor raw newline) is
 *          written; EV_CT_JSON written as its sanitised text.
 * Returns 0, or -1 if writing failed. */
int ev_format_write(FILE *out, const struct ev_rowset *rs, enum ev_format fmt, int max_width);
/* One row as the json format writes it, a single object without the array or a line end
 * (copying a row); malloc'd, NULL when there is no such row. */
char *ev_format_row_json(const struct ev_rowset *rs, size_t row);

#endif
