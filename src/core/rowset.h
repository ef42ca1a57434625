/* evtop — a result set: named, typed columns and rows of cells (text as the server sent it,
 * or NULL). One owner at a time; ev_rowset_free frees everything. */
#ifndef EV_CORE_ROWSET_H
#define EV_CORE_ROWSET_H

#include <stdbool.h>
#include <stddef.h>

enum ev_ctype {
	EV_CT_TEXT,     /* VARCHAR and friends */
	EV_CT_INT,      /* signed integer, printed as a JSON number */
	EV_CT_ID,       /* BIGINT UNSIGNED identifiers: a JSON string (tools round past 2^53) */
	EV_CT_DATETIME, /* 'YYYY-MM-DD hh:mm:ss' */
	EV_CT_JSON,     /* stored JSON text: embedded as is in JSON output when valid */
};

struct ev_cell {
	char *s;    /* NUL-terminated; NULL when the value is SQL NULL */
	size_t len; /* bytes in s (the value may contain NUL bytes) */
};

struct ev_column {
	char *name;
	enum ev_ctype type;
};

struct ev_rowset {
	size_t ncols;
	struct ev_column *cols;
	size_t nrows;
	size_t cap;            /* rows allocated */
	struct ev_cell *cells; /* row-major: cells[r * ncols + c] */
};

/* A new, empty rowset with these columns (names copied). */
struct ev_rowset *ev_rowset_new(size_t ncols, const char *const *names, const enum ev_ctype *types);
/* Append a row; returns its cells (all NULL) for the caller to fill with ev_cell_set. */
struct ev_cell *ev_rowset_add_row(struct ev_rowset *rs);
/* Store a copy of s[0..len) in cell (s == NULL stores SQL NULL). */
void ev_cell_set(struct ev_cell *cell, const char *s, size_t len);
/* The cell at (row, col). */
const struct ev_cell *ev_rowset_cell(const struct ev_rowset *rs, size_t row, size_t col);
/* Column index by name, or -1. */
int ev_rowset_col(const struct ev_rowset *rs, const char *name);
/* Convenience: the cell text by column name ("" if no such column; NULL if SQL NULL). */
const char *ev_rowset_get(const struct ev_rowset *rs, size_t row, const char *name);
/* Keep only the first nrows rows. */
void ev_rowset_truncate(struct ev_rowset *rs, size_t nrows);
/* Free the rowset and NULL the pointer. */
void ev_rowset_free(struct ev_rowset **rs);

#endif
