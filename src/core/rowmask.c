/* evtop — masking a result set's payload and free-text columns. */
#include <config.h>

#include "core/rowmask.h"

#include <stdlib.h>
#include <string.h>

static const char *const text_columns[] = {"biz_id", "aggregate_id", "fail_reason", "remark"};

static bool is_text_column(const char *name)
{
	for (size_t i = 0; i < sizeof(text_columns) / sizeof(text_columns[0]); i++)
		if (strcmp(name, text_columns[i]) == 0)
			return true;
	return false;
}

size_t ev_mask_rowset(const struct ev_mask *m, struct ev_rowset *rs)
{
	size_t total = 0;

	if (m == NULL || rs == NULL)
		return 0;
	for (size_t c = 0; c < rs->ncols; c++) {
		bool json = rs->cols[c].type == EV_CT_JSON;
		if (!json && !is_text_column(rs->cols[c].name))
			continue;
		for (size_t r = 0; r < rs->nrows; r++) {
			struct ev_cell *cell = &rs->cells[r * rs->ncols + c];
			if (cell->s == NULL)
				continue;
			size_t len = 0, n = 0;
			char *out = json ? ev_mask_json(m, cell->s, cell->len, &len, &n)
			                 : ev_mask_text(m, cell->s, cell->len, &len, &n);
			if (n == 0) {
				free(out);
				continue;
			}
			free(cell->s);
			cell->s = out;
			cell->len = len;
			total += n;
		}
	}
	return total;
}
