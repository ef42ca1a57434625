/* evtop — table, json and csv output of a rowset. */
#include <config.h>

#include "core/format.h"

#include "core/text.h"
#include "core/util.h"

#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* The names ev_format_parse takes; ev_format_name hands them to shell completion. */
static const struct {
	const char *name;
	enum ev_format fmt;
} format_names[] = {
        {"table", EV_FMT_TABLE},
        {"json", EV_FMT_JSON},
        {"csv", EV_FMT_CSV},
};

int ev_format_parse(const char *name, enum ev_format *out)
{
	if (name == NULL)
		return -1;
	for (size_t i = 0; i < sizeof(format_names) / sizeof(format_names[0]); i++) {
		if (strcmp(name, format_names[i].name) == 0) {
			*out = format_names[i].fmt;
			return 0;
		}
	}
	return -1;
}

const char *ev_format_name(size_t i)
{
	return i < sizeof(format_names) / sizeof(format_names[0]) ? format_names[i].name : NULL;
}

/* Output goes out a line at a time: a row never holds a stdio lock for long and a full disk
 * shows up in ferror() at the end. */
static void put_line(FILE *out, struct ev_buf *line)
{
	if (line->len > 0)
		fwrite(line->data, 1, line->len, out);
	line->len = 0;
	if (line->data != NULL)
		line->data[0] = '\0';
}

static int finish(FILE *out)
{
	if (fflush(out) != 0 || ferror(out))
		return -1;
	return 0;
}

/* --- table ------------------------------------------------------------------------------ */

static bool is_number_type(enum ev_ctype t)
{
	return t == EV_CT_INT || t == EV_CT_ID;
}

/* The sanitised text of a cell as a person sees it. */
static char *cell_display(const struct ev_cell *cell)
{
	if (cell->s == NULL)
		return ev_xstrdup("NULL");
	return ev_text_sanitize(cell->s, cell->len);
}

static void table_add(struct ev_buf *line, const char *text, int width, bool first, bool right)
{
	int w = ev_text_width(text);
	char *cut = NULL;

	if (w > width) {
		cut = ev_text_fit(text, width, true, false);
		text = cut;
		w = ev_text_width(text);
	}
	if (!first)
		ev_buf_adds(line, "  ");
	if (right)
		for (int i = w; i < width; i++)
			ev_buf_addc(line, ' ');
	ev_buf_adds(line, text);
	if (!right)
		for (int i = w; i < width; i++)
			ev_buf_addc(line, ' ');
	free(cut);
}

static void table_end_line(FILE *out, struct ev_buf *line)
{
	/* Padding of the last column (or an empty last value) would leave trailing spaces. */
	while (line->len > 0 && line->data[line->len - 1] == ' ')
		line->len--;
	ev_buf_addc(line, '\n');
	put_line(out, line);
}

static int write_table(FILE *out, const struct ev_rowset *rs, int max_width)
{
	int *widths = ev_xcalloc(rs->ncols, sizeof(*widths));
	char **heads = ev_xcalloc(rs->ncols, sizeof(*heads));
	struct ev_buf line;

	for (size_t c = 0; c < rs->ncols; c++) {
		heads[c] = ev_text_sanitize(rs->cols[c].name, strlen(rs->cols[c].name));
		widths[c] = ev_text_width(heads[c]);
	}
	/* Sanitising twice (here and when printing) keeps memory at one row, not two sets. */
	for (size_t r = 0; r < rs->nrows; r++) {
		for (size_t c = 0; c < rs->ncols; c++) {
			char *text = cell_display(ev_rowset_cell(rs, r, c));
			int w = ev_text_width(text);

			if (w > widths[c])
				widths[c] = w;
			free(text);
		}
	}
	if (max_width > 0)
		for (size_t c = 0; c < rs->ncols; c++)
			if (widths[c] > max_width)
				widths[c] = max_width;

	ev_buf_init(&line);
	for (size_t c = 0; c < rs->ncols; c++)
		table_add(&line, heads[c], widths[c], c == 0, is_number_type(rs->cols[c].type));
	table_end_line(out, &line);
	for (size_t r = 0; r < rs->nrows; r++) {
		for (size_t c = 0; c < rs->ncols; c++) {
			char *text = cell_display(ev_rowset_cell(rs, r, c));

			table_add(&line, text, widths[c], c == 0, is_number_type(rs->cols[c].type));
			free(text);
		}
		table_end_line(out, &line);
	}
	ev_buf_free(&line);
	for (size_t c = 0; c < rs->ncols; c++)
		free(heads[c]);
	free(heads);
	free(widths);
	return finish(out);
}

/* --- json ------------------------------------------------------------------------------- */

static void json_escape_byte(struct ev_buf *b, unsigned char ch)
{
	switch (ch) {
	case '"':
		ev_buf_adds(b, "\\\"");
		break;
	case '\\':
		ev_buf_adds(b, "\\\\");
		break;
	case '\n':
		ev_buf_adds(b, "\\n");
		break;
	case '\r':
		ev_buf_adds(b, "\\r");
		break;
	case '\t':
		ev_buf_adds(b, "\\t");
		break;
	case '\b':
		ev_buf_adds(b, "\\b");
		break;
	case '\f':
		ev_buf_adds(b, "\\f");
		break;
	default:
		ev_buf_printf(b, "\\u%04x", ch);
		break;
	}
}

/* C1 controls are escaped like C0 ones: as raw UTF-8 a terminal may still act on them
 * (U+009B is an 8-bit CSI) when someone reads the output with cat. So are the bidi marks,
 * overrides and isolates that ev_text_sanitize replaces: raw, they reorder what a terminal
 * shows around them (the same string value either way). */
static bool is_c1_or_bidi(uint32_t cp)
{
	return (cp >= 0x80 && cp <= 0x9f) || cp == 0x061c || cp == 0x200e || cp == 0x200f ||
	       (cp >= 0x202a && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069);
}

static void put_json_string(struct ev_buf *b, const char *s, size_t len)
{
	size_t i = 0;

	ev_buf_addc(b, '"');
	while (i < len) {
		unsigned char ch = (unsigned char)s[i];
		uint32_t cp;
		size_t n;

		if (ch < 0x80) {
			if (ch < 0x20 || ch == '"' || ch == '\\' || ch == 0x7f)
				json_escape_byte(b, ch);
			else
				ev_buf_addc(b, (char)ch);
			i++;
			continue;
		}
		n = ev_utf8_decode(s + i, len - i, &cp);
		if (n == 1 && cp == EV_TEXT_REPLACEMENT)
			ev_buf_adds(b, "\\ufffd");
		else if (is_c1_or_bidi(cp))
			ev_buf_printf(b, "\\u%04x", (unsigned)cp);
		else
			ev_buf_add(b, s + i, n);
		i += n;
	}
	ev_buf_addc(b, '"');
}

/* A JSON integer literal: -?(0|[1-9][0-9]*). */
static bool is_json_integer(const char *s, size_t len)
{
	size_t i = 0;

	if (i < len && s[i] == '-')
		i++;
	if (i == len)
		return false;
	if (s[i] == '0')
		return i + 1 == len;
	for (; i < len; i++)
		if (s[i] < '0' || s[i] > '9')
			return false;
	return true;
}

static bool is_json_space(char ch)
{
	return ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r';
}

/* Whether s[0..len) is a JSON text jansson accepts. Big integers are read as reals so that
 * an id like 18446744073709551615 inside a payload does not make the whole payload "invalid";
 * a raw NUL byte is never JSON. */
static bool is_valid_json(const char *s, size_t len)
{
	json_error_t error;
	json_t *j;

	if (memchr(s, '\0', len) != NULL)
		return false;
	j = json_loadb(s, len, JSON_DECODE_ANY | JSON_ALLOW_NUL | JSON_DECODE_INT_AS_REAL, &error);
	if (j == NULL)
		return false;
	json_decref(j);
	return true;
}

/* Embed valid JSON text as stored: numbers, key order and duplicate keys stay byte for byte.
 * Only what JSON itself calls insignificant changes, to keep one object per line and the
 * terminal safe: outer whitespace is dropped, whitespace runs holding a line break or tab
 * become one space, and DEL and C1 controls inside strings become \u00XX escapes (the same
 * string value). */
static void put_json_embed(struct ev_buf *b, const char *s, size_t len)
{
	bool in_string = false;
	size_t i = 0;

	while (len > 0 && is_json_space(s[len - 1]))
		len--;
	while (i < len && is_json_space(s[i]))
		i++;
	while (i < len) {
		unsigned char ch = (unsigned char)s[i];

		if (!in_string) {
			if (is_json_space((char)ch)) {
				size_t start = i;
				bool plain = true;

				for (; i < len && is_json_space(s[i]); i++)
					if (s[i] != ' ')
						plain = false;
				if (plain)
					ev_buf_add(b, s + start, i - start);
				else
					ev_buf_addc(b, ' ');
				continue;
			}
			if (ch == '"')
				in_string = true;
			ev_buf_addc(b, (char)ch);
			i++;
			continue;
		}
		if (ch == '\\' && i + 1 < len) {
			ev_buf_add(b, s + i, 2);
			i += 2;
			continue;
		}
		if (ch == '"')
			in_string = false;
		if (ch == 0x7f) {
			json_escape_byte(b, ch);
			i++;
		} else if (ch >= 0x80) {
			uint32_t cp;
			size_t n = ev_utf8_decode(s + i, len - i, &cp);

			if (is_c1_or_bidi(cp))
				ev_buf_printf(b, "\\u%04x", (unsigned)cp);
			else
				ev_buf_add(b, s + i, n);
			i += n;
		} else {
			ev_buf_addc(b, (char)ch);
			i++;
		}
	}
}

static void put_json_value(struct ev_buf *b, const struct ev_cell *cell, enum ev_ctype type)
{
	if (cell->s == NULL) {
		ev_buf_adds(b, "null");
		return;
	}
	switch (type) {
	case EV_CT_INT:
		if (is_json_integer(cell->s, cell->len)) {
			ev_buf_add(b, cell->s, cell->len);
			return;
		}
		break;
	case EV_CT_JSON:
		if (is_valid_json(cell->s, cell->len)) {
			put_json_embed(b, cell->s, cell->len);
			return;
		}
		break;
	case EV_CT_TEXT:
	case EV_CT_ID:
	case EV_CT_DATETIME:
		break;
	}
	put_json_string(b, cell->s, cell->len);
}

static void put_json_row(struct ev_buf *line, const struct ev_rowset *rs, size_t r)
{
	ev_buf_addc(line, '{');
	for (size_t c = 0; c < rs->ncols; c++) {
		if (c > 0)
			ev_buf_addc(line, ',');
		put_json_string(line, rs->cols[c].name, strlen(rs->cols[c].name));
		ev_buf_addc(line, ':');
		put_json_value(line, ev_rowset_cell(rs, r, c), rs->cols[c].type);
	}
	ev_buf_addc(line, '}');
}

char *ev_format_row_json(const struct ev_rowset *rs, size_t row)
{
	struct ev_buf b;
	if (rs == NULL || row >= rs->nrows)
		return NULL;
	ev_buf_init(&b);
	put_json_row(&b, rs, row);
	return ev_buf_steal(&b);
}

static int write_json(FILE *out, const struct ev_rowset *rs)
{
	struct ev_buf line;

	if (rs->nrows == 0) {
		fputs("[]\n", out);
		return finish(out);
	}
	ev_buf_init(&line);
	ev_buf_adds(&line, "[\n");
	for (size_t r = 0; r < rs->nrows; r++) {
		put_json_row(&line, rs, r);
		ev_buf_adds(&line, r + 1 < rs->nrows ? ",\n" : "\n");
		put_line(out, &line);
	}
	ev_buf_adds(&line, "]\n");
	put_line(out, &line);
	ev_buf_free(&line);
	return finish(out);
}

/* --- csv -------------------------------------------------------------------------------- */

static void csv_field(struct ev_buf *line, const char *s, size_t len)
{
	char *text = ev_text_sanitize(s, len);
	size_t n = strlen(text);
	/* An empty string is quoted so that it reads back apart from NULL (an empty field). */
	bool quote = n == 0 || strpbrk(text, ",\"") != NULL || text[0] == ' ' || text[n - 1] == ' ';

	if (!quote) {
		ev_buf_add(line, text, n);
	} else {
		ev_buf_addc(line, '"');
		for (const char *p = text; *p; p++) {
			if (*p == '"')
				ev_buf_addc(line, '"');
			ev_buf_addc(line, *p);
		}
		ev_buf_addc(line, '"');
	}
	free(text);
}

static int write_csv(FILE *out, const struct ev_rowset *rs)
{
	struct ev_buf line;

	ev_buf_init(&line);
	for (size_t c = 0; c < rs->ncols; c++) {
		if (c > 0)
			ev_buf_addc(&line, ',');
		csv_field(&line, rs->cols[c].name, strlen(rs->cols[c].name));
	}
	ev_buf_addc(&line, '\n');
	put_line(out, &line);
	for (size_t r = 0; r < rs->nrows; r++) {
		for (size_t c = 0; c < rs->ncols; c++) {
			const struct ev_cell *cell = ev_rowset_cell(rs, r, c);

			if (c > 0)
				ev_buf_addc(&line, ',');
			if (cell->s != NULL)
				csv_field(&line, cell->s, cell->len);
		}
		ev_buf_addc(&line, '\n');
		put_line(out, &line);
	}
	ev_buf_free(&line);
	return finish(out);
}

int ev_format_write(FILE *out, const struct ev_rowset *rs, enum ev_format fmt, int max_width)
{
	switch (fmt) {
	case EV_FMT_TABLE:
		return write_table(out, rs, max_width);
	case EV_FMT_JSON:
		return write_json(out, rs);
	case EV_FMT_CSV:
		return write_csv(out, rs);
	}
	return -1;
}
