/* evtop — the query builders and the query table (filters are in filter.c, cursors and the
 * merging of sources in cursor.c). Every statement is tagged with a comment naming it (DBAs
 * find evtop in the process list and the slow log), has a LIMIT, compares times with the
 * server's NOW(), and names the index it needs. */
#include <config.h>

#include "core/query.h"

#include "core/i18n.h"

#include <ctype.h>
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* --- the query table ------------------------------------------------------------------ */

#define MSG EV_TABLE_MESSAGE
#define OB  EV_TABLE_OUTBOX
#define CAP (EV_PAGE_MAX + 1)

/* The model document's status index is idx_status_retry_time (status, next_retry_time,
 * retry_count); the outbox also has idx_status_lock_until (publish_status, lock_until). The
 * "(status, update_time)" and "(event_status, last_handle_time)" indexes are those evtop
 * doctor recommends (PRODUCT.md section 5): preferred when present, since they serve the sort.
 * The failed lists sort by the status index's own columns, then id (the primary key every
 * InnoDB secondary index ends with), so they are read in index order, never sorted. */
const struct ev_query_def ev_query_defs[] = {
        {"list.failed",
         MSG,
         {"event_status,next_retry_time,retry_count", "event_status,next_retry_time"},
         "next_retry_time,retry_count,id",
         false,
         CAP},
        {"list.failed",
         OB,
         {"publish_status,next_retry_time,retry_count", "publish_status,next_retry_time"},
         "next_retry_time,retry_count,id",
         false,
         CAP},
        {"list.failed_due",
         MSG,
         {"event_status,next_retry_time,retry_count", "event_status,next_retry_time"},
         "next_retry_time,retry_count,id",
         false,
         CAP},
        {"list.failed_due",
         OB,
         {"publish_status,next_retry_time,retry_count", "publish_status,next_retry_time"},
         "next_retry_time,retry_count,id",
         false,
         CAP},
        {"list.failed_waiting",
         MSG,
         {"event_status,next_retry_time,retry_count", "event_status,next_retry_time"},
         "next_retry_time,retry_count,id",
         false,
         CAP},
        {"list.failed_waiting",
         OB,
         {"publish_status,next_retry_time,retry_count", "publish_status,next_retry_time"},
         "next_retry_time,retry_count,id",
         false,
         CAP},
        {"list.failed_noretry",
         MSG,
         {"event_status,next_retry_time,retry_count", "event_status,next_retry_time"},
         "retry_count,id",
         false,
         CAP},
        {"list.failed_noretry",
         OB,
         {"publish_status,next_retry_time,retry_count", "publish_status,next_retry_time"},
         "retry_count,id",
         false,
         CAP},
        {"list.failed_exhausted",
         MSG,
         {"event_status,next_retry_time,retry_count", "event_status,next_retry_time"},
         "next_retry_time,retry_count,id",
         false,
         CAP},
        {"list.failed_exhausted",
         OB,
         {"publish_status,next_retry_time,retry_count", "publish_status,next_retry_time"},
         "next_retry_time,retry_count,id",
         false,
         CAP},
        {"list.stuck",
         MSG,
         {"event_status,last_handle_time", "event_status,next_retry_time"},
         "last_handle_time,id",
         true,
         CAP},
        {"list.stuck", OB, {"publish_status,lock_until"}, "lock_until,id", false, CAP},
        {"list.processing",
         MSG,
         {"event_status,last_handle_time", "event_status,next_retry_time"},
         "last_handle_time,id",
         true,
         CAP},
        {"list.processing", OB, {"publish_status,lock_until"}, "lock_until,id", false, CAP},
        {"list.pending", MSG, {"event_status,next_retry_time"}, "create_time,id", true, CAP},
        {"list.pending", OB, {"publish_status,next_retry_time"}, "create_time,id", true, CAP},
        {"list.high_retry",
         MSG,
         {"event_status,update_time", "event_status,next_retry_time"},
         "update_time DESC,id DESC",
         true,
         CAP},
        {"list.high_retry",
         OB,
         {"publish_status,update_time", "publish_status,next_retry_time"},
         "update_time DESC,id DESC",
         true,
         CAP},
        {"list.cancelled", MSG, {"create_time"}, "create_time DESC,id DESC", false, CAP},
        {"list.cancelled", OB, {"create_time"}, "create_time DESC,id DESC", false, CAP},
        {"list.recent", MSG, {"create_time"}, "create_time DESC,id DESC", false, CAP},
        {"list.recent", OB, {"create_time"}, "create_time DESC,id DESC", false, CAP},
        {"list.trail", MSG, {"biz_type,biz_id"}, "create_time,id", true, CAP},
        {"list.trail", OB, {"aggregate_type,aggregate_id"}, "create_time,id", true, CAP},
        {"list.trace", MSG, {"trace_id"}, "create_time,id", true, CAP},
        {"list.trace", OB, {"trace_id"}, "create_time,id", true, CAP},
        {"show.by_no", MSG, {"event_no"}, NULL, false, 1},
        {"show.by_no", OB, {"event_no"}, NULL, false, 1},
        {"show.by_id", MSG, {"id"}, NULL, false, 1},
        {"show.by_id", OB, {"id"}, NULL, false, 1},
        {NULL, MSG, {NULL}, NULL, false, 0},
};

const struct ev_query_def *ev_query_def_find(const char *name, enum ev_table_kind t)
{
	for (const struct ev_query_def *d = ev_query_defs; d->name != NULL; d++)
		if (d->table == t && strcmp(d->name, name) == 0)
			return d;
	return NULL;
}

/* --- list kinds --------------------------------------------------------------------------- */

static const struct {
	const char *name;
	const char *help;
	const char *query;
} kinds[EV_LIST_COUNT] = {
#define X(id, name, help) [EV_LIST_##id] = {name, help, NULL},
        EV_LIST_KIND_LIST(X)
#undef X
};

static const char *const kind_query[EV_LIST_COUNT] = {
        [EV_LIST_FAILED] = "list.failed",
        [EV_LIST_FAILED_DUE] = "list.failed_due",
        [EV_LIST_FAILED_WAITING] = "list.failed_waiting",
        [EV_LIST_FAILED_NORETRY] = "list.failed_noretry",
        [EV_LIST_FAILED_EXHAUSTED] = "list.failed_exhausted",
        [EV_LIST_STUCK] = "list.stuck",
        [EV_LIST_PROCESSING] = "list.processing",
        [EV_LIST_PENDING] = "list.pending",
        [EV_LIST_HIGH_RETRY] = "list.high_retry",
        [EV_LIST_CANCELLED] = "list.cancelled",
        [EV_LIST_RECENT] = "list.recent",
        [EV_LIST_TRAIL] = "list.trail",
        [EV_LIST_TRACE] = "list.trace",
};

const char *ev_list_name(enum ev_list_kind k)
{
	return (unsigned)k < EV_LIST_COUNT ? kinds[k].name : "unknown";
}

const char *ev_list_help(enum ev_list_kind k)
{
	return (unsigned)k < EV_LIST_COUNT ? _(kinds[k].help) : "";
}

int ev_list_parse(const char *name)
{
	if (strcmp(name, "oldest-pending") == 0)
		return EV_LIST_PENDING;
	for (int i = 0; i < EV_LIST_COUNT; i++)
		if (strcmp(kinds[i].name, name) == 0)
			return i;
	return -1;
}

/* --- queries ------------------------------------------------------------------------------ */

static struct ev_query *query_new(const char *name)
{
	struct ev_query *q = ev_xcalloc(1, sizeof(*q));
	q->name = name;
	return q;
}

static struct ev_param *param_push(struct ev_query *q)
{
	/* Geometric growth: a multi-row INSERT binds thousands of parameters. */
	if (q->nparams == q->params_cap) {
		q->params_cap = q->params_cap ? q->params_cap * 2 : 8;
		q->params = ev_xrealloc(q->params, q->params_cap * sizeof(*q->params));
	}
	struct ev_param *p = &q->params[q->nparams++];
	memset(p, 0, sizeof(*p));
	return p;
}

void ev_query_add_int(struct ev_query *q, long long v)
{
	struct ev_param *p = param_push(q);
	p->type = EV_P_INT;
	p->i = v;
}

void ev_query_add_uint(struct ev_query *q, unsigned long long v)
{
	struct ev_param *p = param_push(q);
	p->type = EV_P_UINT;
	p->u = v;
}

void ev_query_add_text(struct ev_query *q, const char *s)
{
	struct ev_param *p = param_push(q);
	p->type = EV_P_TEXT;
	p->s = ev_xstrdup(s);
}

void ev_query_free(struct ev_query **qp)
{
	struct ev_query *q = *qp;
	if (q == NULL)
		return;
	for (size_t i = 0; i < q->nparams; i++)
		free(q->params[i].s);
	free(q->params);
	free(q->sql);
	free(q->col_names);
	free(q->col_types);
	free(q);
	*qp = NULL;
}

static void render_text(struct ev_buf *b, const char *s)
{
	ev_buf_addc(b, '\'');
	for (; *s; s++) {
		switch (*s) {
		case '\'':
			ev_buf_adds(b, "''");
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
		default:
			ev_buf_addc(b, *s);
		}
	}
	ev_buf_addc(b, '\'');
}

char *ev_query_render(const struct ev_query *q)
{
	struct ev_buf b;
	size_t n = 0;
	bool in_quote = false;

	ev_buf_init(&b);
	for (const char *s = q->sql; *s; s++) {
		if (*s == '\'')
			in_quote = !in_quote;
		if (*s != '?' || in_quote) {
			ev_buf_addc(&b, *s);
			continue;
		}
		if (n >= q->nparams) {
			ev_buf_addc(&b, '?');
			continue;
		}
		const struct ev_param *p = &q->params[n++];
		switch (p->type) {
		case EV_P_INT:
			ev_buf_printf(&b, "%lld", p->i);
			break;
		case EV_P_UINT:
			ev_buf_printf(&b, "%llu", p->u);
			break;
		case EV_P_TEXT:
			render_text(&b, p->s);
			break;
		}
	}
	return ev_buf_steal(&b);
}

/* --- schema info -------------------------------------------------------------------------- */

const char *ev_index_find(const struct ev_table_info *ti, const char *columns)
{
	size_t n = strlen(columns);

	for (size_t i = 0; i < ti->nindexes; i++) {
		const char *c = ti->indexes[i].columns;
		if (strncmp(c, columns, n) == 0 && (c[n] == '\0' || c[n] == ','))
			return ti->indexes[i].name;
	}
	return NULL;
}

void ev_table_info_copy(struct ev_table_info *dst, const struct ev_table_info *src)
{
	memset(dst, 0, sizeof(*dst));
	dst->exists = src->exists;
	dst->nindexes = src->nindexes;
	dst->indexes = ev_xcalloc(src->nindexes ? src->nindexes : 1, sizeof(*dst->indexes));
	for (size_t i = 0; i < src->nindexes; i++) {
		dst->indexes[i].name = ev_xstrdup(src->indexes[i].name);
		dst->indexes[i].columns = ev_xstrdup(src->indexes[i].columns);
		dst->indexes[i].unique = src->indexes[i].unique;
	}
	dst->ncolumns = src->ncolumns;
	dst->columns = ev_xcalloc(src->ncolumns ? src->ncolumns : 1, sizeof(*dst->columns));
	for (size_t i = 0; i < src->ncolumns; i++)
		dst->columns[i] = ev_xstrdup(src->columns[i]);
}

void ev_table_info_clear(struct ev_table_info *ti)
{
	for (size_t i = 0; i < ti->nindexes; i++) {
		free(ti->indexes[i].name);
		free(ti->indexes[i].columns);
	}
	free(ti->indexes);
	for (size_t i = 0; i < ti->ncolumns; i++)
		free(ti->columns[i]);
	free(ti->columns);
	memset(ti, 0, sizeof(*ti));
}

/* --- builders ----------------------------------------------------------------------------- */

static void select_columns(struct ev_query *q, struct ev_buf *b, const struct ev_table_def *t,
                           bool all)
{
	size_t n = 0;

	q->col_names = ev_xcalloc(t->ncolumns, sizeof(*q->col_names));
	q->col_types = ev_xcalloc(t->ncolumns, sizeof(*q->col_types));
	for (size_t i = 0; i < t->ncolumns; i++) {
		const struct ev_column_def *c = &t->columns[i];
		if (!all && !c->in_list)
			continue;
		ev_buf_printf(b, "%s%s", n ? ", " : "", c->name);
		q->col_names[n] = c->name;
		q->col_types[n] = c->type;
		n++;
	}
	q->ncols = n;
}

void ev_query_order_text(const struct ev_query *q, enum ev_table_kind t,
                         const struct ev_table_info *info, char *buf, size_t size)
{
	const struct ev_query_def *d = q ? ev_query_def_find(q->name, t) : NULL;
	if (d == NULL || q->sort_col == NULL) {
		snprintf(buf, size, _("the list's own order"));
		return;
	}
	const char *index = NULL;
	for (int i = 0; info != NULL && index == NULL && i < 3 && d->index[i] != NULL; i++)
		index = ev_index_find(info, d->index[i]);
	/* "a,b,id" as "a, b, id". */
	struct ev_buf cols;
	ev_buf_init(&cols);
	for (const char *c = d->sort; *c; c++)
		if (*c == ',')
			ev_buf_adds(&cols, ", ");
		else
			ev_buf_printf(&cols, "%c", *c);
	const char *arrow = q->sort_desc ? "↓" : "↑";
	if (d->sort_allowed)
		snprintf(buf, size, _("%s %s, sorted by the server among the rows %s finds"),
		         cols.data, arrow, index ? index : _("its index"));
	else
		snprintf(buf, size,
		         _("%s %s, the order of %s itself: no other order is read without sorting"),
		         cols.data, arrow, index ? index : _("its index"));
	ev_buf_free(&cols);
}

/* The FORCE INDEX clause for the query's definition, or an error when the server has none of
 * the indexes it may use. */
static int index_hint(struct ev_buf *b, const struct ev_query_def *d,
                      const struct ev_table_info *info, struct ev_error *err)
{
	if (info == NULL)
		return 0;
	for (int i = 0; i < 3 && d->index[i] != NULL; i++) {
		const char *name = ev_index_find(info, d->index[i]);
		if (name != NULL) {
			ev_buf_printf(b, " FORCE INDEX (`%s`)", name);
			return 0;
		}
	}
	return ev_error_set(err, EV_ERR_SCHEMA, _("n/a — needs an index on (%s)"), d->index[0]);
}

static void add_eq(struct ev_query *q, struct ev_buf *b, const char *col, const char *v)
{
	if (v == NULL)
		return;
	ev_buf_printf(b, " AND %s = ?", col);
	ev_query_add_text(q, v);
}

/* A LIKE parameter matching text anywhere, its metacharacters (%, _, \\) literal. */
static void add_like(struct ev_query *q, const char *text)
{
	struct ev_buf like;
	ev_buf_init(&like);
	ev_buf_addc(&like, '%');
	for (const char *s = text; *s; s++) {
		if (*s == '%' || *s == '_' || *s == '\\')
			ev_buf_addc(&like, '\\');
		ev_buf_addc(&like, *s);
	}
	ev_buf_addc(&like, '%');
	ev_query_add_text(q, like.data);
	ev_buf_free(&like);
}

/* The payload terms as one condition: the value at a path compared as text, byte for byte,
 * on valid JSON only (a row that is not JSON never matches, never fails the statement, as
 * JSON_EXTRACT would on MySQL); a substring of the stored text through LIKE, in the column's
 * own collation (utf8mb4_bin, case-sensitive, for MariaDB's JSON). */
static void add_json_terms(struct ev_query *q, struct ev_buf *b, const struct ev_filter *f)
{
	for (int i = 0; i < f->njson; i++) {
		const struct ev_jterm *j = &f->json[i];
		const char *col = j->headers ? "event_headers" : "event_payload";
		if (i > 0)
			ev_buf_adds(b, " AND ");
		if (j->substring) {
			ev_buf_printf(b, "%s LIKE ?", col);
			add_like(q, j->value);
			continue;
		}
		ev_buf_printf(
		        b,
		        "CAST(CASE WHEN JSON_VALID(%s) THEN JSON_UNQUOTE(JSON_EXTRACT(%s, ?)) "
		        "END AS BINARY) = CAST(? AS BINARY)",
		        col, col);
		ev_query_add_text(q, j->path);
		ev_query_add_text(q, j->value);
	}
}

/* Make list query q (its text: the select list ends at from_at, then FROM ... ORDER BY ...
 * LIMIT ?; its columns from cols_at) a payload search: the list's own bounded, ordered read takes
 * at most cap candidates' ids (its index, its guards and filters, its keyset seek); they are
 * numbered in the list's order and counted, joined back by primary key, and the payload terms are
 * evaluated on them alone. The page is the matches and the last candidate (matched or not),
 * so the caller knows how far the search looked. */
static void wrap_search(struct ev_query *q, const char *tname, size_t cols_at, size_t from_at,
                        const struct ev_filter *f, long long cap)
{
	char *old = q->sql;
	struct ev_param *op = q->params;
	size_t onp = q->nparams;
	const char *d = q->sort_desc ? " DESC" : "";
	size_t tail_len = strlen(old + from_at) - strlen(" LIMIT ?");

	q->params = NULL;
	q->nparams = q->params_cap = 0;
	struct ev_buf b;
	ev_buf_init(&b);
	ev_buf_add(&b, old, from_at);
	ev_buf_adds(&b, ", _rn, _n, _hit FROM (SELECT ");
	ev_buf_add(&b, old + cols_at, from_at - cols_at);
	ev_buf_adds(&b, ", _rn, _n, IFNULL(");
	add_json_terms(q, &b, f);
	ev_buf_printf(&b, ", 0) AS _hit FROM (SELECT _sid, ROW_NUMBER() OVER (ORDER BY _k1%s", d);
	if (q->sort_mid != NULL)
		ev_buf_printf(&b, ", _k2%s", d);
	ev_buf_printf(&b,
	              ", _sid%s) AS _rn, COUNT(*) OVER () AS _n FROM (SELECT id AS _sid, %s AS _k1",
	              d, q->sort_col);
	if (q->sort_mid != NULL)
		ev_buf_printf(&b, ", %s AS _k2", q->sort_mid);
	ev_buf_add(&b, old + from_at, tail_len);
	ev_buf_printf(
	        &b,
	        " LIMIT ?) _c) _s JOIN `%s` ON `%s`.id = _s._sid) _x WHERE _hit = 1 OR _rn = _n "
	        "ORDER BY _rn LIMIT ?",
	        tname, tname);
	/* The parameters in the text's order: the terms', the list's, the cap, the page. */
	for (size_t i = 0; i + 1 < onp; i++) {
		struct ev_param *p = param_push(q);
		*p = op[i];
	}
	ev_query_add_int(q, cap);
	struct ev_param *p = param_push(q);
	*p = op[onp - 1];
	free(op);
	free(old);
	q->sql = ev_buf_steal(&b);

	const char *extra[] = {"_rn", "_n", "_hit"};
	q->col_names = ev_xrealloc(q->col_names, (q->ncols + 3) * sizeof(*q->col_names));
	q->col_types = ev_xrealloc(q->col_types, (q->ncols + 3) * sizeof(*q->col_types));
	for (int i = 0; i < 3; i++) {
		q->col_names[q->ncols + (size_t)i] = extra[i];
		q->col_types[q->ncols + (size_t)i] = EV_CT_INT;
	}
	q->ncols += 3;
	q->search = true;
	q->search_cap = cap;
}

static void add_filters(struct ev_query *q, struct ev_buf *b, const struct ev_table_def *t,
                        const struct ev_filter *f)
{
	if (f == NULL)
		return;
	add_eq(q, b, "event_type", f->event_type);
	add_eq(q, b, "topic", f->topic);
	add_eq(q, b, t->type_col, f->biz_type);
	add_eq(q, b, t->object_col, f->biz_id);
	add_eq(q, b, "event_no", f->event_no);
	add_eq(q, b, "trace_id", f->trace_id);
	add_eq(q, b, "event_source", f->source);
	add_eq(q, b, "locked_by", f->locked_by);
	add_eq(q, b, "publish_channel", f->channel);
	if (f->fail_reason != NULL) {
		ev_buf_adds(b, " AND fail_reason LIKE ?");
		add_like(q, f->fail_reason);
	}
	if (f->since != NULL) {
		ev_buf_adds(b, " AND create_time >= ?");
		ev_query_add_text(q, f->since);
	}
	if (f->until != NULL) {
		ev_buf_adds(b, " AND create_time < ?");
		ev_query_add_text(q, f->until);
	}
}

/* "after the cursor's id" (or, with a second key mid, "after its (mid, id)") among rows of
 * the same first key: its text and parameters. */
static void add_tail(struct ev_query *q, struct ev_buf *b, const char *mid, const char *gt,
                     const struct ev_cursor *c)
{
	if (mid != NULL) {
		ev_buf_printf(b, "(%s %s ? OR (%s = ? AND id %s ?))", mid, gt, mid, gt);
		ev_query_add_int(q, c->mid);
		ev_query_add_int(q, c->mid);
	} else {
		ev_buf_printf(b, "id %s ?", gt);
	}
	ev_query_add_uint(q, c->id);
}

/* The keyset seek after cursor c for ORDER BY col [DESC], [mid [DESC],] id [DESC], written
 * out so the index serves it (the row-constructor form often misses it). NULLs sort first
 * ascending, last descending, as MySQL and MariaDB do. */
static void add_seek(struct ev_query *q, struct ev_buf *b, const char *col, const char *mid,
                     bool desc, bool nullable, const struct ev_cursor *c)
{
	const char *gt = desc ? "<" : ">";

	if (!c->set)
		return;
	if (c->value_null) {
		ev_buf_printf(b, " AND (%s%s IS NULL AND ", desc ? "" : "(", col);
		add_tail(q, b, mid, gt, c);
		ev_buf_adds(b, ")");
		if (!desc)
			ev_buf_printf(b, " OR %s IS NOT NULL)", col);
		return;
	}
	ev_buf_printf(b, " AND (%s %s ? OR (%s = ? AND ", col, gt, col);
	ev_query_add_text(q, c->value);
	ev_query_add_text(q, c->value);
	add_tail(q, b, mid, gt, c);
	ev_buf_printf(b, ")%s%s%s)", desc && nullable ? " OR " : "", desc && nullable ? col : "",
	              desc && nullable ? " IS NULL" : "");
}

/* A list request's mistakes, found before any SQL: the table and list, the page size, the
 * filter's columns, what a trail and a trace need. */
static int check_list_req(const struct ev_list_req *req, const struct ev_table_def *t,
                          struct ev_error *err)
{
	const char *s;

	if (t == NULL || (unsigned)req->kind >= EV_LIST_COUNT)
		return ev_error_set(err, EV_ERR_USAGE, _("unknown table or list"));
	if (req->limit < 1 || req->limit > EV_PAGE_MAX)
		return ev_error_set(err, EV_ERR_USAGE, _("page size must be 1..%d, not %d"),
		                    EV_PAGE_MAX, req->limit);
	if (req->filter != NULL && (s = ev_filter_unsupported(req->filter, req->table)) != NULL)
		return ev_error_set(err, EV_ERR_USAGE, _("the %s table has no %s column"), t->key,
		                    s);
	if (req->kind == EV_LIST_TRAIL && (req->object_type == NULL || req->object_id == NULL))
		return ev_error_set(err, EV_ERR_USAGE, _("trail needs a %s and a %s"), t->type_col,
		                    t->object_col);
	if (req->kind == EV_LIST_TRACE && req->trace_id == NULL)
		return ev_error_set(err, EV_ERR_USAGE, _("trace needs a trace_id"));
	return 0;
}

/* The list kind's own terms of the WHERE (after "deleted = 0") and their parameters. Returns
 * its sort column; *desc when it reads newest first. */
static const char *add_kind_where(struct ev_query *q, struct ev_buf *b,
                                  const struct ev_table_def *t, const struct ev_list_req *req,
                                  bool *desc)
{
	const char *st = t->status_col;
	const char *sort = "next_retry_time";

	switch (req->kind) {
	case EV_LIST_FAILED:
		ev_buf_printf(b, " AND %s = 3", st);
		break;
	case EV_LIST_FAILED_DUE:
		ev_buf_printf(b,
		              " AND %s = 3 AND retry_count < max_retry_count AND next_retry_time "
		              "<= NOW()",
		              st);
		break;
	case EV_LIST_FAILED_WAITING:
		ev_buf_printf(
		        b,
		        " AND %s = 3 AND retry_count < max_retry_count AND next_retry_time > NOW()",
		        st);
		break;
	case EV_LIST_FAILED_NORETRY:
		ev_buf_printf(
		        b,
		        " AND %s = 3 AND retry_count < max_retry_count AND next_retry_time IS NULL",
		        st);
		break;
	case EV_LIST_FAILED_EXHAUSTED:
		ev_buf_printf(b, " AND %s = 3 AND retry_count >= max_retry_count", st);
		break;
	case EV_LIST_STUCK:
		if (t->has_lock) {
			ev_buf_printf(b, " AND %s = 1 AND lock_until <= NOW()", st);
			sort = "lock_until";
		} else {
			ev_buf_printf(
			        b, " AND %s = 1 AND last_handle_time <= NOW() - INTERVAL ? SECOND",
			        st);
			ev_query_add_int(q, req->stuck_threshold_s);
			sort = "last_handle_time";
		}
		break;
	case EV_LIST_PROCESSING:
		ev_buf_printf(b, " AND %s = 1", st);
		sort = t->has_lock ? "lock_until" : "last_handle_time";
		break;
	case EV_LIST_PENDING:
		ev_buf_printf(b, " AND %s = 0", st);
		sort = "create_time";
		break;
	case EV_LIST_HIGH_RETRY:
		ev_buf_printf(b, " AND %s = 3 AND retry_count >= ?", st);
		ev_query_add_int(q, req->high_retry_min);
		sort = "update_time";
		*desc = true;
		break;
	case EV_LIST_CANCELLED:
		/* Cancelled rows are the bulk of a table, as success: read them only inside the
		 * window, through the creation-time index, newest first. */
		ev_buf_printf(b, " AND %s = 4 AND create_time >= NOW() - INTERVAL ? SECOND", st);
		ev_query_add_int(q, req->window_s > 0 ? req->window_s : 3600);
		sort = "create_time";
		*desc = true;
		break;
	case EV_LIST_RECENT:
		/* Any status, through the creation-time index: the window, or the since filter's
		 * range when one is given. */
		if (req->filter == NULL || req->filter->since == NULL) {
			ev_buf_adds(b, " AND create_time >= NOW() - INTERVAL ? SECOND");
			ev_query_add_int(q, req->window_s > 0 ? req->window_s : 3600);
		}
		sort = "create_time";
		*desc = true;
		break;
	case EV_LIST_TRAIL:
		ev_buf_printf(b, " AND %s = ? AND %s = ?", t->type_col, t->object_col);
		ev_query_add_text(q, req->object_type);
		ev_query_add_text(q, req->object_id);
		sort = "create_time";
		break;
	case EV_LIST_TRACE:
		ev_buf_adds(b, " AND trace_id = ?");
		ev_query_add_text(q, req->trace_id);
		sort = "create_time";
		break;
	case EV_LIST_COUNT:
		break;
	}
	return sort;
}

/* q's keyset sort key: column sort (desc) and, for the failed lists, a second key. A cursor
 * of another list's shape is refused. */
static int set_sort(struct ev_query *q, const struct ev_table_def *t, const char *sort, bool desc,
                    const struct ev_cursor *after, struct ev_error *err)
{
	q->sort_col = sort;
	q->sort_desc = desc;
	q->sort_nullable = ev_model_column(t, sort)->nullable;
	/* The status index is (status, next_retry_time, retry_count): ordered by its columns
	 * the failed lists are read in index order, a page at a time, not sorted whole. */
	if (strcmp(sort, "next_retry_time") == 0)
		q->sort_mid = "retry_count";
	if (after->set && after->has_mid != (q->sort_mid != NULL))
		return ev_error_set(err, EV_ERR_USAGE,
		                    _("bad cursor: it is not one of this list's (%s cursors are "
		                      "v%d:...): start "
		                      "from the first page"),
		                    q->name, q->sort_mid ? 2 : 1);
	return 0;
}

/* The keyset seek after req->after, the ORDER BY of q's sort key, and LIMIT ? (a page and
 * one row more). */
static void add_seek_order(struct ev_query *q, struct ev_buf *b, const struct ev_list_req *req)
{
	const char *sort = q->sort_col;
	bool desc = q->sort_desc;

	/* In the no-retry-time bucket next_retry_time is NULL in every row, but the server does
	 * not take "IS NULL" for a constant and would sort: it is left out of the order and of
	 * the seek, which is then the same order. */
	bool null_lead = req->kind == EV_LIST_FAILED_NORETRY;
	if (null_lead && req->after.set && req->after.value_null) {
		ev_buf_adds(b, " AND ");
		add_tail(q, b, q->sort_mid, desc ? "<" : ">", &req->after);
	} else {
		add_seek(q, b, sort, q->sort_mid, desc, q->sort_nullable, &req->after);
	}
	if (null_lead)
		ev_buf_printf(b, " ORDER BY %s%s, id%s LIMIT ?", q->sort_mid, desc ? " DESC" : "",
		              desc ? " DESC" : "");
	else if (q->sort_mid != NULL)
		ev_buf_printf(b, " ORDER BY %s%s, %s%s, id%s LIMIT ?", sort, desc ? " DESC" : "",
		              q->sort_mid, desc ? " DESC" : "", desc ? " DESC" : "");
	else
		ev_buf_printf(b, " ORDER BY %s%s, id%s LIMIT ?", sort, desc ? " DESC" : "",
		              desc ? " DESC" : "");
	ev_query_add_int(q, req->limit + 1);
	q->limit = req->limit;
}

struct ev_query *ev_query_list(const struct ev_list_req *req, struct ev_error *err)
{
	const struct ev_table_def *t = ev_model_table(req->table);

	if (check_list_req(req, t, err) < 0)
		return NULL;

	const struct ev_query_def *d = ev_query_def_find(kind_query[req->kind], req->table);
	struct ev_query *q = query_new(d->name);
	struct ev_buf b;
	bool desc = false;

	ev_buf_init(&b);
	ev_buf_printf(&b, "/* evtop:%s */ SELECT ", d->name);
	size_t cols_at = b.len;
	select_columns(q, &b, t, false);
	size_t from_at = b.len;
	const char *tname = req->table_name ? req->table_name : t->default_name;
	ev_buf_printf(&b, " FROM `%s`", tname);
	if (index_hint(&b, d, req->info, err) < 0)
		goto fail;
	ev_buf_adds(&b, " WHERE deleted = 0");
	const char *sort = add_kind_where(q, &b, t, req, &desc);
	add_filters(q, &b, t, req->filter);
	if (req->reverse)
		desc = !desc;
	if (set_sort(q, t, sort, desc, &req->after, err) < 0)
		goto fail;
	add_seek_order(q, &b, req);
	q->sql = ev_buf_steal(&b);
	if (req->filter != NULL && req->filter->njson > 0)
		wrap_search(q, tname, cols_at, from_at, req->filter,
		            req->search_cap > 0 ? req->search_cap : EV_SEARCH_CAP_DEFAULT);
	return q;
fail:
	ev_buf_free(&b);
	ev_query_free(&q);
	return NULL;
}

void ev_list_search_fold(const struct ev_query *q, struct ev_rowset **rsp,
                         unsigned long long *examined, struct ev_cursor *stop)
{
	struct ev_rowset *rs = *rsp;

	*examined = 0;
	memset(stop, 0, sizeof(*stop));
	/* Folded once: a page already folded has no _hit column left. */
	if (!q->search || rs == NULL || rs->ncols < 3 ||
	    strcmp(rs->cols[rs->ncols - 1].name, "_hit") != 0)
		return;
	size_t nc = rs->ncols - 3;
	const char *names[64];
	enum ev_ctype types[64];
	for (size_t c = 0; c < nc && c < 64; c++) {
		names[c] = rs->cols[c].name;
		types[c] = rs->cols[c].type;
	}
	struct ev_rowset *m = ev_rowset_new(nc < 64 ? nc : 64, names, types);
	size_t matched = 0;
	for (size_t r = 0; r < rs->nrows; r++) {
		const struct ev_cell *n = ev_rowset_cell(rs, r, nc + 1);
		const struct ev_cell *hit = ev_rowset_cell(rs, r, nc + 2);
		if (n->s != NULL)
			*examined = strtoull(n->s, NULL, 10);
		if (hit->s == NULL || strcmp(hit->s, "1") != 0)
			continue;
		struct ev_cell *cells = ev_rowset_add_row(m);
		for (size_t c = 0; c < m->ncols; c++) {
			const struct ev_cell *cell = ev_rowset_cell(rs, r, c);
			ev_cell_set(&cells[c], cell->s, cell->len);
		}
		matched++;
	}
	/* The cap reached before the page filled: the search goes on after its last candidate
	 * (the page's last row, in candidate order). */
	if (rs->nrows > 0 && matched <= (size_t)q->limit &&
	    *examined >= (unsigned long long)q->search_cap)
		ev_cursor_from_row(q, rs, rs->nrows - 1, stop);
	ev_rowset_free(rsp);
	*rsp = m;
}

void ev_list_take_page(const struct ev_query *q, struct ev_rowset **rs, struct ev_list_page *pg)
{
	struct ev_cursor stop;

	memset(pg, 0, sizeof(*pg));
	pg->search = q->search;
	ev_list_search_fold(q, rs, &pg->examined, &stop);
	if (*rs == NULL)
		return;
	if ((*rs)->nrows > (size_t)q->limit) {
		pg->more = true;
		ev_cursor_from_row(q, *rs, (size_t)q->limit - 1, &pg->next);
		ev_rowset_truncate(*rs, (size_t)q->limit);
	} else if (stop.set) {
		pg->more = true;
		pg->stopped = true;
		pg->next = stop;
	}
}

/* n with thousands separators, "48,213". */
static void grouped(char out[32], unsigned long long n)
{
	char digits[24];
	int len = snprintf(digits, sizeof(digits), "%llu", n), o = 0;
	for (int i = 0; i < len; i++) {
		if (i > 0 && (len - i) % 3 == 0)
			out[o++] = ',';
		out[o++] = digits[i];
	}
	out[o] = '\0';
}

char *ev_list_search_note(const struct ev_list_page *pg, size_t matches)
{
	if (pg == NULL || !pg->search)
		return NULL;
	char m[32], e[32];
	grouped(m, matches);
	grouped(e, pg->examined);
	if (pg->stopped)
		return ev_xasprintf(matches == 1
		                            ? _("%s match; stopped at %s rows examined: narrow "
		                                "the window, or the next page goes on")
		                            : _("%s matches; stopped at %s rows examined: "
		                                "narrow the window, or the next page goes on"),
		                    m, e);
	return ev_xasprintf(matches == 1 ? _("%s match in %s rows examined%s")
	                                 : _("%s matches in %s rows examined%s"),
	                    m, e, pg->more ? _(" (more on the next page)") : "");
}

static struct ev_query *show_query(enum ev_table_kind kind, const char *table_name,
                                   const char *name, const char *where)
{
	const struct ev_table_def *t = ev_model_table(kind);
	struct ev_query *q = query_new(name);
	struct ev_buf b;

	ev_buf_init(&b);
	ev_buf_printf(&b, "/* evtop:%s */ SELECT ", name);
	select_columns(q, &b, t, true);
	ev_buf_printf(&b, " FROM `%s` WHERE %s LIMIT 2", table_name ? table_name : t->default_name,
	              where);
	q->sql = ev_buf_steal(&b);
	q->limit = 1;
	return q;
}

struct ev_query *ev_query_show_by_no(enum ev_table_kind t, const char *table_name,
                                     const char *event_no)
{
	struct ev_query *q = show_query(t, table_name, "show.by_no", "event_no = ?");
	ev_query_add_text(q, event_no);
	return q;
}

struct ev_query *ev_query_archived_list(enum ev_table_kind t, const char *archive_name,
                                        enum ev_list_kind kind, const char *a1, const char *a2,
                                        int limit)
{
	const struct ev_table_def *def = ev_model_table(t);
	struct ev_query *q = query_new(kind == EV_LIST_TRAIL ? "archived.trail" : "archived.trace");
	struct ev_buf b;
	char *name = ev_query_quote_ident(archive_name);
	ev_buf_init(&b);
	ev_buf_printf(&b, "/* evtop:%s */ SELECT ", q->name);
	select_columns(q, &b, def, false);
	if (kind == EV_LIST_TRAIL) {
		ev_buf_printf(&b, " FROM %s WHERE %s = ? AND %s = ?", name, def->type_col,
		              def->object_col);
		ev_query_add_text(q, a1);
		ev_query_add_text(q, a2 ? a2 : "");
	} else {
		ev_buf_printf(&b, " FROM %s WHERE trace_id = ?", name);
		ev_query_add_text(q, a1);
	}
	ev_buf_printf(&b, " ORDER BY create_time, id LIMIT %d", limit + 1);
	free(name);
	q->sql = ev_buf_steal(&b);
	q->limit = limit;
	return q;
}

struct ev_query *ev_query_show_archived(enum ev_table_kind t, const char *archive_name,
                                        const char *event_no)
{
	struct ev_query *q = query_new("show.archived");
	struct ev_buf b;
	char *name = ev_query_quote_ident(archive_name);
	ev_buf_init(&b);
	ev_buf_adds(&b, "/* evtop:show.archived */ SELECT ");
	select_columns(q, &b, ev_model_table(t), true);
	ev_buf_printf(&b, " FROM %s WHERE event_no = ? ORDER BY id DESC LIMIT 10", name);
	free(name);
	q->sql = ev_buf_steal(&b);
	q->limit = 10;
	ev_query_add_text(q, event_no);
	return q;
}

struct ev_query *ev_query_show_by_id(enum ev_table_kind t, const char *table_name,
                                     unsigned long long id)
{
	struct ev_query *q = show_query(t, table_name, "show.by_id", "id = ?");
	ev_query_add_uint(q, id);
	return q;
}

/* --- server and session --------------------------------------------------------------------- */

int ev_server_version_parse(const char *info, struct ev_server_version *v)
{
	const char *p = info;

	memset(v, 0, sizeof(*v));
	v->flavour = EV_FLAVOUR_MYSQL;
	if (strstr(info, "MariaDB") != NULL)
		v->flavour = EV_FLAVOUR_MARIADB;
	else if (strstr(info, "TiDB") != NULL)
		v->flavour = EV_FLAVOUR_TIDB;
	/* MariaDB 10.x over the old protocol reports "5.5.5-10.x.y-MariaDB". */
	if (v->flavour == EV_FLAVOUR_MARIADB && strncmp(p, "5.5.5-", 6) == 0)
		p += 6;
	if (sscanf(p, "%d.%d.%d", &v->major, &v->minor, &v->patch) < 2)
		return -1;
	return 0;
}

const char *ev_flavour_name(enum ev_flavour f)
{
	switch (f) {
	case EV_FLAVOUR_MARIADB:
		return "MariaDB";
	case EV_FLAVOUR_TIDB:
		return "TiDB";
	case EV_FLAVOUR_MYSQL:
		break;
	}
	return "MySQL";
}

const struct ev_server_floor ev_server_floors[] = {
        {EV_FLAVOUR_MYSQL, 8, 0},
        {EV_FLAVOUR_MARIADB, 10, 6},
};
const int ev_server_nfloors = (int)(sizeof(ev_server_floors) / sizeof(ev_server_floors[0]));

const struct ev_server_floor *ev_server_floor_of(enum ev_flavour flavour)
{
	for (int i = 0; i < ev_server_nfloors; i++)
		if (ev_server_floors[i].flavour == flavour)
			return &ev_server_floors[i];
	return NULL;
}

int ev_server_supported(const struct ev_server_version *v)
{
	const struct ev_server_floor *f = ev_server_floor_of(v->flavour);
	if (f == NULL)
		return -1;
	return v->major > f->major || (v->major == f->major && v->minor >= f->minor);
}

char **ev_query_session_setup(enum ev_flavour f, int statement_timeout_ms, const char *time_zone)
{
	char **v = ev_xcalloc(5, sizeof(*v));
	int n = 0;

	if (time_zone != NULL && time_zone[0] != '\0')
		v[n++] = ev_xasprintf("/* evtop */ SET time_zone = '%s'", time_zone);
	if (f == EV_FLAVOUR_MARIADB)
		v[n++] = ev_xasprintf("/* evtop */ SET SESSION max_statement_time = %d.%03d",
		                      statement_timeout_ms / 1000, statement_timeout_ms % 1000);
	else
		v[n++] = ev_xasprintf("/* evtop */ SET SESSION max_execution_time = %d",
		                      statement_timeout_ms);
	v[n++] = ev_xstrdup("/* evtop */ SET SESSION innodb_lock_wait_timeout = 5");
	v[n++] = ev_xstrdup("/* evtop */ SET SESSION lock_wait_timeout = 10");
	return v;
}

struct ev_query *ev_query_table_indexes(const char *table_name)
{
	static const char *names[] = {"index_name", "columns", "non_unique"};
	static const enum ev_ctype types[] = {EV_CT_TEXT, EV_CT_TEXT, EV_CT_INT};
	struct ev_query *q = query_new("schema.indexes");

	q->sql = ev_xstrdup(
	        "/* evtop:schema.indexes */ SELECT INDEX_NAME, "
	        "GROUP_CONCAT(COLUMN_NAME ORDER BY SEQ_IN_INDEX SEPARATOR ','), MIN(NON_UNIQUE) "
	        "FROM information_schema.STATISTICS WHERE TABLE_SCHEMA = DATABASE() AND "
	        "TABLE_NAME = ? GROUP BY INDEX_NAME ORDER BY INDEX_NAME = 'PRIMARY' DESC, "
	        "INDEX_NAME LIMIT 200");
	ev_query_add_text(q, table_name);
	q->ncols = 3;
	q->col_names = ev_xcalloc(3, sizeof(*q->col_names));
	q->col_types = ev_xcalloc(3, sizeof(*q->col_types));
	for (int i = 0; i < 3; i++) {
		q->col_names[i] = names[i];
		q->col_types[i] = types[i];
	}
	q->limit = 200;
	return q;
}

struct ev_query *ev_query_table_columns(const char *table_name)
{
	struct ev_query *q = query_new("schema.columns");

	q->sql = ev_xstrdup("/* evtop:schema.columns */ SELECT COLUMN_NAME FROM "
	                    "information_schema.COLUMNS WHERE TABLE_SCHEMA = DATABASE() AND "
	                    "TABLE_NAME = ? ORDER BY ORDINAL_POSITION LIMIT 1000");
	ev_query_add_text(q, table_name);
	q->ncols = 1;
	q->col_names = ev_xcalloc(1, sizeof(*q->col_names));
	q->col_types = ev_xcalloc(1, sizeof(*q->col_types));
	q->col_names[0] = "column_name";
	q->col_types[0] = EV_CT_TEXT;
	q->limit = 1000;
	return q;
}

struct ev_query *ev_query_server_clock(void)
{
	struct ev_query *q = query_new("server.clock");

	q->sql = ev_xstrdup("/* evtop:server.clock */ SELECT NOW(), UNIX_TIMESTAMP()");
	q->ncols = 2;
	q->col_names = ev_xcalloc(2, sizeof(*q->col_names));
	q->col_types = ev_xcalloc(2, sizeof(*q->col_types));
	q->col_names[0] = "now";
	q->col_types[0] = EV_CT_DATETIME;
	q->col_names[1] = "unix_time";
	q->col_types[1] = EV_CT_INT;
	q->limit = 1;
	q->keep = true;
	return q;
}

/* Copy the parameters of q into out, but its last one (the list's LIMIT). */
static void copy_params_but_limit(struct ev_query *out, const struct ev_query *q)
{
	for (size_t i = 0; i + 1 < q->nparams; i++) {
		const struct ev_param *p = &q->params[i];
		if (p->type == EV_P_TEXT)
			ev_query_add_text(out, p->s);
		else if (p->type == EV_P_UINT)
			ev_query_add_uint(out, p->u);
		else
			ev_query_add_int(out, p->i);
	}
}

struct ev_query *ev_query_group(const struct ev_list_req *req, const char *column,
                                struct ev_error *err)
{
	const struct ev_table_def *t = ev_model_table(req->table);
	if (req->filter != NULL && req->filter->njson > 0) {
		ev_error_set(err, EV_ERR_USAGE,
		             _("a breakdown counts the list's rows whole; payload terms search its "
		               "pages: open the list with them"));
		return NULL;
	}
	if (t == NULL || (strcmp(column, "fail_reason") != 0 && strcmp(column, "locked_by") != 0)) {
		ev_error_set(err, EV_ERR_USAGE, _("group by fail_reason or locked_by"));
		return NULL;
	}
	if (strcmp(column, "locked_by") == 0 && !t->has_lock) {
		ev_error_set(err, EV_ERR_USAGE, _("the %s table has no locked_by column"), t->key);
		return NULL;
	}
	/* The list's own query (its index, guard conditions and filters) reads the rows, with
	 * the cap as its limit; the grouping happens over what it read. */
	struct ev_list_req r = *req;
	memset(&r.after, 0, sizeof(r.after));
	r.limit = EV_PAGE_MAX;
	struct ev_query *inner = ev_query_list(&r, err);
	if (inner == NULL)
		return NULL;
	const char *from = strstr(inner->sql, " FROM `");
	const char *order = strstr(inner->sql, " ORDER BY ");
	struct ev_query *q = query_new("list.group");
	struct ev_buf b;
	ev_buf_init(&b);
	ev_buf_printf(
	        &b,
	        "/* evtop:list.group */ SELECT grp, COUNT(*), MIN(create_time) FROM (SELECT "
	        "%s AS grp, create_time%.*s LIMIT ?) AS capped GROUP BY grp ORDER BY COUNT(*) "
	        "DESC, grp LIMIT 200",
	        column, (int)(order - from), from);
	/* The inner parameters, but the list's LIMIT becomes the cap. */
	copy_params_but_limit(q, inner);
	ev_query_add_int(q, 100001);
	q->sql = ev_buf_steal(&b);
	q->ncols = 3;
	q->col_names = ev_xcalloc(3, sizeof(*q->col_names));
	q->col_types = ev_xcalloc(3, sizeof(*q->col_types));
	q->col_names[0] = column;
	q->col_types[0] = EV_CT_TEXT;
	q->col_names[1] = "count";
	q->col_types[1] = EV_CT_INT;
	q->col_names[2] = "oldest";
	q->col_types[2] = EV_CT_DATETIME;
	q->limit = 200;
	ev_query_free(&inner);
	return q;
}

struct ev_query *ev_query_count(const struct ev_list_req *req, long long cap, struct ev_error *err)
{
	if (req->filter != NULL && req->filter->njson > 0) {
		ev_error_set(
		        err, EV_ERR_USAGE,
		        _("a count reads the list's rows whole; payload terms search its pages"));
		return NULL;
	}
	if (cap < 1) {
		ev_error_set(err, EV_ERR_USAGE, _("a count needs a cap of at least one row"));
		return NULL;
	}
	struct ev_list_req r = *req;
	memset(&r.after, 0, sizeof(r.after));
	r.limit = 1;
	r.reverse = false;
	struct ev_query *inner = ev_query_list(&r, err);
	if (inner == NULL)
		return NULL;
	const char *from = strstr(inner->sql, " FROM `");
	const char *order = strstr(inner->sql, " ORDER BY ");
	struct ev_query *q = query_new("list.count");
	struct ev_buf b;
	ev_buf_init(&b);
	ev_buf_printf(&b,
	              "/* evtop:list.count */ SELECT COUNT(*) FROM (SELECT 1 AS one%.*s LIMIT ?) "
	              "AS capped",
	              (int)(order - from), from);
	copy_params_but_limit(q, inner);
	ev_query_add_int(q, cap);
	q->sql = ev_buf_steal(&b);
	q->ncols = 1;
	q->col_names = ev_xcalloc(1, sizeof(*q->col_names));
	q->col_types = ev_xcalloc(1, sizeof(*q->col_types));
	q->col_names[0] = "count";
	q->col_types[0] = EV_CT_INT;
	q->limit = 1;
	ev_query_free(&inner);
	return q;
}

struct ev_query *ev_query_instances(const struct ev_list_req *req, struct ev_error *err)
{
	bool outbox = req->table == EV_TABLE_OUTBOX;
	if (req->filter != NULL && req->filter->njson > 0) {
		ev_error_set(
		        err, EV_ERR_USAGE,
		        _("the instances count the processing rows whole; payload terms search "
		          "a list's pages: open the list with them"));
		return NULL;
	}
	/* The processing list's own query (its index, deleted = 0 and the filters) reads the
	 * rows, the cap as its limit; the grouping happens over what it read. */
	struct ev_list_req r = *req;
	memset(&r.after, 0, sizeof(r.after));
	r.kind = EV_LIST_PROCESSING;
	r.limit = EV_PAGE_MAX;
	struct ev_query *inner = ev_query_list(&r, err);
	if (inner == NULL)
		return NULL;
	const char *from = strstr(inner->sql, " FROM `");
	const char *order = strstr(inner->sql, " ORDER BY ");
	struct ev_query *q = query_new("list.instances");
	struct ev_buf b;
	ev_buf_init(&b);
	if (outbox)
		ev_buf_printf(
		        &b,
		        "/* evtop:list.instances */ SELECT grp, COUNT(*), SUM(lock_until <= "
		        "NOW()), UNIX_TIMESTAMP(MIN(lock_until)), "
		        "UNIX_TIMESTAMP(MAX(lock_until)), UNIX_TIMESTAMP(MAX(last_publish_time)), "
		        "UNIX_TIMESTAMP() FROM (SELECT locked_by AS grp, lock_until, "
		        "last_publish_time%.*s LIMIT ?) AS capped GROUP BY grp ORDER BY grp "
		        "LIMIT 200",
		        (int)(order - from), from);
	else
		ev_buf_printf(
		        &b,
		        "/* evtop:list.instances */ SELECT grp, COUNT(*), SUM(last_handle_time "
		        "<= NOW() - INTERVAL ? SECOND), UNIX_TIMESTAMP(MIN(last_handle_time)), "
		        "UNIX_TIMESTAMP(MAX(last_handle_time)), NULL, UNIX_TIMESTAMP() FROM "
		        "(SELECT event_source AS grp, last_handle_time%.*s LIMIT ?) AS capped "
		        "GROUP BY grp ORDER BY grp LIMIT 200",
		        (int)(order - from), from);
	if (!outbox)
		ev_query_add_int(q, req->stuck_threshold_s);
	copy_params_but_limit(q, inner);
	ev_query_add_int(q, EV_INSTANCES_CAP);
	q->sql = ev_buf_steal(&b);
	static const char *const names[] = {"grp",    "locks",      "expired", "oldest",
	                                    "newest", "last_claim", "now"};
	static const enum ev_ctype types[] = {EV_CT_TEXT, EV_CT_INT, EV_CT_INT, EV_CT_INT,
	                                      EV_CT_INT,  EV_CT_INT, EV_CT_INT};
	q->ncols = 7;
	q->col_names = ev_xcalloc(q->ncols, sizeof(*q->col_names));
	q->col_types = ev_xcalloc(q->ncols, sizeof(*q->col_types));
	for (size_t i = 0; i < q->ncols; i++) {
		q->col_names[i] = names[i];
		q->col_types[i] = types[i];
	}
	q->limit = 200;
	ev_query_free(&inner);
	return q;
}

struct ev_query *ev_query_current_user(void)
{
	struct ev_query *q = query_new("server.user");

	q->sql = ev_xstrdup("/* evtop:server.user */ SELECT CURRENT_USER()");
	q->ncols = 1;
	q->col_names = ev_xcalloc(1, sizeof(*q->col_names));
	q->col_types = ev_xcalloc(1, sizeof(*q->col_types));
	q->col_names[0] = "user";
	q->col_types[0] = EV_CT_TEXT;
	q->limit = 1;
	return q;
}

char *ev_sql_kill_query(unsigned long thread_id)
{
	return ev_xasprintf("/* evtop */ KILL QUERY %lu", thread_id);
}

char *ev_query_quote_ident(const char *name)
{
	struct ev_buf b;

	ev_buf_init(&b);
	ev_buf_addc(&b, '`');
	for (const char *p = name; *p; p++) {
		if (*p == '`')
			ev_buf_addc(&b, '`');
		ev_buf_addc(&b, *p);
	}
	ev_buf_addc(&b, '`');
	return ev_buf_steal(&b);
}
