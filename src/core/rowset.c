/* evtop — result sets: named, typed columns and a growable array of cells. */
#include <config.h>

#include "core/rowset.h"

#include "core/i18n.h"
#include "core/util.h"

#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct ev_rowset *ev_rowset_new(size_t ncols, const char *const *names, const enum ev_ctype *types)
{
	struct ev_rowset *rs = ev_xcalloc(1, sizeof(*rs));

	rs->ncols = ncols;
	rs->cols = ev_xcalloc(ncols, sizeof(*rs->cols));
	for (size_t c = 0; c < ncols; c++) {
		rs->cols[c].name = ev_xstrdup(names[c] ? names[c] : "");
		rs->cols[c].type = types ? types[c] : EV_CT_TEXT;
	}
	return rs;
}

struct ev_cell *ev_rowset_add_row(struct ev_rowset *rs)
{
	if (rs->nrows == rs->cap) {
		size_t cap = rs->cap ? rs->cap * 2 : 16;
		size_t per_row = (rs->ncols ? rs->ncols : 1) * sizeof(struct ev_cell);

		if (cap < rs->cap || cap > SIZE_MAX / per_row)
			ev_fatal(_("out of memory (%zu rows)"), rs->cap);
		rs->cells = ev_xrealloc(rs->cells, cap * per_row);
		rs->cap = cap;
	}
	struct ev_cell *row = rs->cells + rs->nrows * rs->ncols;

	memset(row, 0, rs->ncols * sizeof(*row));
	rs->nrows++;
	return row;
}

void ev_cell_set(struct ev_cell *cell, const char *s, size_t len)
{
	free(cell->s);
	if (s == NULL) {
		cell->s = NULL;
		cell->len = 0;
		return;
	}
	if (len == SIZE_MAX)
		ev_fatal(_("out of memory (%zu bytes)"), len);
	cell->s = ev_xmalloc(len + 1);
	memcpy(cell->s, s, len);
	cell->s[len] = '\0';
	cell->len = len;
}

const struct ev_cell *ev_rowset_cell(const struct ev_rowset *rs, size_t row, size_t col)
{
	if (row >= rs->nrows || col >= rs->ncols)
		return NULL;
	return &rs->cells[row * rs->ncols + col];
}

int ev_rowset_col(const struct ev_rowset *rs, const char *name)
{
	for (size_t c = 0; c < rs->ncols; c++)
		if (strcmp(rs->cols[c].name, name) == 0)
			return c <= INT_MAX ? (int)c : -1;
	return -1;
}

const char *ev_rowset_get(const struct ev_rowset *rs, size_t row, const char *name)
{
	int c = ev_rowset_col(rs, name);
	const struct ev_cell *cell;

	/* "" rather than NULL, so a misspelt column name cannot pass for SQL NULL. */
	if (c < 0 || (cell = ev_rowset_cell(rs, row, (size_t)c)) == NULL)
		return "";
	return cell->s;
}

void ev_rowset_free(struct ev_rowset **rsp)
{
	struct ev_rowset *rs;

	if (rsp == NULL || (rs = *rsp) == NULL)
		return;
	for (size_t i = 0; i < rs->nrows * rs->ncols; i++)
		free(rs->cells[i].s);
	for (size_t c = 0; c < rs->ncols; c++)
		free(rs->cols[c].name);
	free(rs->cells);
	free(rs->cols);
	free(rs);
	*rsp = NULL;
}

void ev_rowset_truncate(struct ev_rowset *rs, size_t nrows)
{
	if (nrows >= rs->nrows)
		return;
	for (size_t i = nrows * rs->ncols; i < rs->nrows * rs->ncols; i++) {
		free(rs->cells[i].s);
		rs->cells[i].s = NULL;
		rs->cells[i].len = 0;
	}
	rs->nrows = nrows;
}
