/* evtop — keyset cursors: encoding a list's position, comparing and merging rows of several
 * sources in a list's order, and the group breakdowns summed over sources (core/query.h). */
#include <config.h>

#include "core/cursor.h"
#include "core/i18n.h"
#include "core/query.h"

#include <ctype.h>
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* --- cursors ------------------------------------------------------------------------------ */

int ev_cursor_decode(const char *s, struct ev_cursor *c, struct ev_error *err)
{
	memset(c, 0, sizeof(*c));
	const char *whole = s;
	bool v2 = strncmp(s, "v2:", 3) == 0;
	if (strncmp(s, "v1:", 3) != 0 && !v2)
		goto bad;
	s += 3;
	char *end;
	char val[40];
	if (!isdigit((unsigned char)*s))
		goto bad;
	errno = 0;
	c->id = strtoull(s, &end, 10);
	if (errno != 0 || *end != ':')
		goto bad;
	s = end + 1;
	/* v2: the second key, then the value. */
	if (v2) {
		if (!(isdigit((unsigned char)*s) || (*s == '-' && isdigit((unsigned char)s[1]))))
			goto bad;
		errno = 0;
		c->mid = strtoll(s, &end, 10);
		if (errno != 0 || *end != ':')
			goto bad;
		c->has_mid = true;
		s = end + 1;
	}
	if (strlen(s) >= sizeof(val))
		goto bad;
	snprintf(val, sizeof(val), "%s", s);
	if (strcmp(val, "~") == 0) {
		c->value_null = true;
	} else {
		/* A DATETIME(3) key (evtop_audit's audit_time) keeps its fraction of a second. */
		char norm[21], *dot = strchr(val, '.');
		size_t frac = dot ? strlen(dot + 1) : 0;
		if (dot != NULL) {
			*dot = '\0';
			if (frac < 1 || frac > 6 || strspn(dot + 1, "0123456789") != frac)
				goto bad;
		}
		if (!ev_datetime_normalize(val, norm))
			goto bad;
		snprintf(c->value, sizeof(c->value), "%s%s%s", norm, dot ? "." : "",
		         dot ? dot + 1 : "");
	}
	c->set = true;
	return 0;
bad:
	return ev_error_set(
	        err, EV_ERR_USAGE,
	        _("bad cursor '%.60s': pass the value printed after a page (v1:ID:TIME, "
	          "v2:ID:N:TIME)"),
	        whole);
}

char *ev_cursor_encode(const struct ev_cursor *c)
{
	char *s = c->has_mid ? ev_xasprintf("v2:%llu:%lld:%s", c->id, c->mid,
	                                    c->value_null ? "~" : c->value)
	                     : ev_xasprintf("v1:%llu:%s", c->id, c->value_null ? "~" : c->value);
	/* The datetime has a space; keep the cursor one shell word. */
	for (char *p = s; *p; p++)
		if (*p == ' ')
			*p = 'T';
	return s;
}

void ev_cursor_from_row(const struct ev_query *q, const struct ev_rowset *rs, size_t row,
                        struct ev_cursor *c)
{
	memset(c, 0, sizeof(*c));
	const char *id = ev_rowset_get(rs, row, "id");
	c->id = id ? strtoull(id, NULL, 10) : 0;
	const char *v = q->sort_col ? ev_rowset_get(rs, row, q->sort_col) : NULL;
	if (v == NULL)
		c->value_null = true;
	else
		snprintf(c->value, sizeof(c->value), "%s", v);
	if (q->sort_mid != NULL) {
		const char *m = ev_rowset_get(rs, row, q->sort_mid);
		c->has_mid = true;
		c->mid = m ? strtoll(m, NULL, 10) : 0;
	}
	c->set = true;
}

static unsigned long long row_id(const struct ev_rowset *rs, size_t r)
{
	const char *id = ev_rowset_get(rs, r, "id");
	return id ? strtoull(id, NULL, 10) : 0;
}

int ev_list_row_cmp(const struct ev_query *q, const struct ev_rowset *a, size_t ra,
                    const struct ev_rowset *b, size_t rb)
{
	int c = 0;
	if (q->sort_col != NULL) {
		const char *x = ev_rowset_get(a, ra, q->sort_col);
		const char *y = ev_rowset_get(b, rb, q->sort_col);
		if (x == NULL || y == NULL)
			c = x == y ? 0 : (x == NULL ? -1 : 1);
		else
			c = strcmp(x, y); /* 'YYYY-MM-DD hh:mm:ss' sorts as text */
	}
	if (c == 0 && q->sort_mid != NULL) {
		const char *x = ev_rowset_get(a, ra, q->sort_mid);
		const char *y = ev_rowset_get(b, rb, q->sort_mid);
		long long i = x ? strtoll(x, NULL, 10) : 0, j = y ? strtoll(y, NULL, 10) : 0;
		c = i == j ? 0 : (i < j ? -1 : 1);
	}
	if (c == 0) {
		unsigned long long i = row_id(a, ra), j = row_id(b, rb);
		c = i == j ? 0 : (i < j ? -1 : 1);
	}
	return q->sort_desc ? -c : c;
}

struct ev_rowset *ev_rowset_with_source(const struct ev_rowset *shape)
{
	const char *names[65];
	enum ev_ctype types[65];
	size_t nc = shape->ncols < 64 ? shape->ncols : 64;
	names[0] = EV_SOURCE_COL;
	types[0] = EV_CT_TEXT;
	for (size_t c = 0; c < nc; c++) {
		names[c + 1] = shape->cols[c].name;
		types[c + 1] = shape->cols[c].type;
	}
	return ev_rowset_new(nc + 1, names, types);
}

void ev_rowset_add_sourced(struct ev_rowset *m, const struct ev_rowset *rs, size_t r,
                           const char *source)
{
	struct ev_cell *cells = ev_rowset_add_row(m);
	ev_cell_set(&cells[0], source, strlen(source));
	for (size_t c = 0; c + 1 < m->ncols; c++) {
		const struct ev_cell *cell = ev_rowset_cell(rs, r, c);
		ev_cell_set(&cells[c + 1], cell->s, cell->len);
	}
}

/* Order a cursor against a row of a result of q, as ev_list_row_cmp orders two rows. */
static int cursor_row_cmp(const struct ev_query *q, const struct ev_cursor *cur,
                          const struct ev_rowset *rs, size_t r)
{
	int c = 0;
	if (q->sort_col != NULL) {
		const char *x = cur->value_null ? NULL : cur->value;
		const char *y = ev_rowset_get(rs, r, q->sort_col);
		if (x == NULL || y == NULL)
			c = x == y ? 0 : (x == NULL ? -1 : 1);
		else
			c = strcmp(x, y);
	}
	if (c == 0 && q->sort_mid != NULL) {
		const char *y = ev_rowset_get(rs, r, q->sort_mid);
		long long j = y ? strtoll(y, NULL, 10) : 0;
		c = cur->mid == j ? 0 : (cur->mid < j ? -1 : 1);
	}
	if (c == 0) {
		unsigned long long j = row_id(rs, r);
		c = cur->id == j ? 0 : (cur->id < j ? -1 : 1);
	}
	return q->sort_desc ? -c : c;
}

struct ev_rowset *ev_list_merge(struct ev_query *const *q, struct ev_rowset *const *rs,
                                const char *const *names, int n, int limit,
                                const struct ev_cursor *stop, struct ev_mcursor *mc, bool *more)
{
	int first = -1;
	for (int i = 0; i < n && first < 0; i++)
		if (rs[i] != NULL)
			first = i;
	*more = false;
	if (first < 0)
		return NULL;
	struct ev_rowset *m = ev_rowset_with_source(rs[first]);
	size_t *pos = ev_xcalloc((size_t)n, sizeof(*pos));
	for (int taken = 0; taken < limit; taken++) {
		int best = -1;
		for (int i = 0; i < n; i++) {
			if (rs[i] == NULL || pos[i] >= rs[i]->nrows || pos[i] >= (size_t)limit)
				continue;
			if (best < 0 ||
			    ev_list_row_cmp(q[first], rs[i], pos[i], rs[best], pos[best]) < 0)
				best = i;
		}
		if (best < 0)
			break;
		/* A search stopped at its cap has not looked past its stop: nothing after it is
		 * taken from anyone until that source has been read on. */
		bool blocked = false;
		for (int i = 0; stop != NULL && i < n && !blocked; i++)
			blocked = rs[i] != NULL && stop[i].set && pos[i] == rs[i]->nrows &&
			          cursor_row_cmp(q[first], &stop[i], rs[best], pos[best]) < 0;
		if (blocked)
			break;
		ev_rowset_add_sourced(m, rs[best], pos[best], names[best]);
		pos[best]++;
	}
	for (int i = 0; i < n; i++) {
		if (rs[i] != NULL) {
			if (pos[i] > 0) {
				mc[i].state = EV_MC_AT;
				ev_cursor_from_row(q[i], rs[i], pos[i] - 1, &mc[i].c);
			}
			if (rs[i]->nrows <= (size_t)limit && pos[i] == rs[i]->nrows)
				mc[i].state = EV_MC_DONE;
			if (stop != NULL && stop[i].set && pos[i] == rs[i]->nrows) {
				mc[i].state = EV_MC_AT;
				mc[i].c = stop[i];
			}
		}
		if (mc[i].state != EV_MC_DONE)
			*more = true;
	}
	free(pos);
	return m;
}

struct group_sum {
	const struct ev_cell *grp, *oldest;
	unsigned long long count;
};

static int cell_cmp(const struct ev_cell *a, const struct ev_cell *b)
{
	if (a->s == NULL || b->s == NULL)
		return a->s == b->s ? 0 : (a->s == NULL ? -1 : 1);
	size_t n = a->len < b->len ? a->len : b->len;
	int c = memcmp(a->s, b->s, n);
	return c != 0 ? c : (a->len > b->len) - (a->len < b->len);
}

static int group_sum_cmp(const void *x, const void *y)
{
	const struct group_sum *a = x, *b = y;
	if (a->count != b->count)
		return a->count > b->count ? -1 : 1;
	return cell_cmp(a->grp, b->grp);
}

struct ev_rowset *ev_group_merge(struct ev_rowset *const *parts, int n)
{
	int first = -1;
	size_t total = 0;
	for (int i = 0; i < n; i++)
		if (parts[i] != NULL && parts[i]->ncols >= 3) {
			if (first < 0)
				first = i;
			total += parts[i]->nrows;
		}
	if (first < 0)
		return NULL;
	struct group_sum *g = ev_xcalloc(total + 1, sizeof(*g));
	size_t ng = 0;
	for (int i = 0; i < n; i++) {
		if (parts[i] == NULL || parts[i]->ncols < 3)
			continue;
		for (size_t r = 0; r < parts[i]->nrows; r++) {
			const struct ev_cell *grp = ev_rowset_cell(parts[i], r, 0);
			const struct ev_cell *cnt = ev_rowset_cell(parts[i], r, 1);
			const struct ev_cell *old = ev_rowset_cell(parts[i], r, 2);
			size_t k = 0;
			while (k < ng && cell_cmp(g[k].grp, grp) != 0)
				k++;
			if (k == ng)
				g[ng++] = (struct group_sum){grp, old, 0};
			g[k].count += cnt->s ? strtoull(cnt->s, NULL, 10) : 0;
			/* 'YYYY-MM-DD hh:mm:ss' orders as text; NULL (no time) never wins. */
			if (old->s != NULL &&
			    (g[k].oldest->s == NULL || cell_cmp(old, g[k].oldest) < 0))
				g[k].oldest = old;
		}
	}
	qsort(g, ng, sizeof(*g), group_sum_cmp);
	const struct ev_rowset *shape = parts[first];
	const char *names[3] = {shape->cols[0].name, shape->cols[1].name, shape->cols[2].name};
	enum ev_ctype types[3] = {shape->cols[0].type, shape->cols[1].type, shape->cols[2].type};
	struct ev_rowset *m = ev_rowset_new(3, names, types);
	for (size_t k = 0; k < ng && k < 200; k++) {
		struct ev_cell *cells = ev_rowset_add_row(m);
		char buf[24];
		snprintf(buf, sizeof(buf), "%llu", g[k].count);
		ev_cell_set(&cells[0], g[k].grp->s, g[k].grp->len);
		ev_cell_set(&cells[1], buf, strlen(buf));
		ev_cell_set(&cells[2], g[k].oldest->s, g[k].oldest->len);
	}
	free(g);
	return m;
}

char *ev_mcursor_encode(const struct ev_mcursor *v, int n)
{
	struct ev_buf b;
	ev_buf_init(&b);
	ev_buf_adds(&b, "m1");
	for (int i = 0; i < n; i++) {
		ev_buf_printf(&b, ",%s=", v[i].name);
		if (v[i].state == EV_MC_AT) {
			char *c = ev_cursor_encode(&v[i].c);
			ev_buf_adds(&b, c);
			free(c);
		} else {
			ev_buf_addc(&b, v[i].state == EV_MC_DONE ? '.' : '-');
		}
	}
	return ev_buf_steal(&b);
}

int ev_mcursor_decode(const char *s, struct ev_mcursor **out, int *nout, struct ev_error *err)
{
	*out = NULL;
	*nout = 0;
	if (strncmp(s, "m1,", 3) != 0)
		return ev_error_set(
		        err, EV_ERR_USAGE,
		        _("bad cursor '%.60s': with several sources pass the value printed "
		          "after a page (m1,SOURCE=...)"),
		        s);
	char *copy = ev_xstrdup(s + 3);
	struct ev_mcursor *v = NULL;
	int n = 0, rc = 0;
	char *save = NULL;
	for (char *part = strtok_r(copy, ",", &save); part != NULL && rc == 0;
	     part = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(part, '=');
		if (eq == NULL || eq == part || eq - part > 64) {
			rc = ev_error_set(err, EV_ERR_USAGE,
			                  _("bad cursor: '%.60s' is not SOURCE=POSITION"), part);
			break;
		}
		v = ev_xrealloc(v, (size_t)(n + 1) * sizeof(*v));
		struct ev_mcursor *m = &v[n++];
		memset(m, 0, sizeof(*m));
		memcpy(m->name, part, (size_t)(eq - part));
		const char *pos = eq + 1;
		if (strcmp(pos, "-") == 0)
			m->state = EV_MC_START;
		else if (strcmp(pos, ".") == 0)
			m->state = EV_MC_DONE;
		else if (ev_cursor_decode(pos, &m->c, err) == 0)
			m->state = EV_MC_AT;
		else
			rc = -1;
	}
	free(copy);
	if (rc < 0 || n == 0) {
		free(v);
		return rc < 0 ? rc
		              : ev_error_set(err, EV_ERR_USAGE, _("bad cursor: no source in it"));
	}
	*out = v;
	*nout = n;
	return 0;
}
