/* evtop — the shared audit read (core/audit.h): its filter, its queries and its words. The
 * table is evtop's own (sql/<flavour>/audit.sql), so its indexes are found by their columns
 * as the event tables' are: idx_audit_time (audit_time), idx_event_no (event_no),
 * idx_table_event (table_name, event_id). */
#include <config.h>

#include "core/audit.h"
#include "core/filter.h"
#include "core/i18n.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The table's columns, in its DDL's order: every read selects them all (json and csv keys). */
static const char *const audit_cols[] = {
        "id",
        "audit_time",
        "source",
        "os_user",
        "sudo_user",
        "ssh_connection",
        "operator",
        "db_user",
        "table_name",
        "event_id",
        "event_no",
        "action",
        "before_status",
        "before_retry_count",
        "before_max_retry_count",
        "before_next_retry_time",
        "before_version",
        "after_status",
        "reason",
        "result",
};
static const enum ev_ctype audit_types[] = {
        EV_CT_ID,   EV_CT_DATETIME, EV_CT_TEXT, EV_CT_TEXT, EV_CT_TEXT, EV_CT_TEXT, EV_CT_TEXT,
        EV_CT_TEXT, EV_CT_TEXT,     EV_CT_ID,   EV_CT_TEXT, EV_CT_TEXT, EV_CT_INT,  EV_CT_INT,
        EV_CT_INT,  EV_CT_DATETIME, EV_CT_INT,  EV_CT_INT,  EV_CT_TEXT, EV_CT_TEXT,
};
#define NCOLS (sizeof(audit_cols) / sizeof(audit_cols[0]))

/* --- the filter --------------------------------------------------------------------------- */

struct fkey {
	const char *key, *alias;
	size_t off;
	size_t max; /* characters (the column's VARCHAR length) */
	bool time;
};

static const struct fkey fkeys[] = {
        {"operator", NULL, offsetof(struct ev_audit_filter, operator_id), 128, false},
        {"action", NULL, offsetof(struct ev_audit_filter, action), 32, false},
        {"event_no", "event-no", offsetof(struct ev_audit_filter, event_no), 64, false},
        {"table", "table_name", offsetof(struct ev_audit_filter, table_name), 64, false},
        {"result", NULL, offsetof(struct ev_audit_filter, result), 16, false},
        {"since", NULL, offsetof(struct ev_audit_filter, since), 0, true},
        {"until", NULL, offsetof(struct ev_audit_filter, until), 0, true},
};
#define NFKEYS (sizeof(fkeys) / sizeof(fkeys[0]))

static size_t utf8_chars(const char *s)
{
	size_t n = 0;
	for (; *s; s++)
		n += ((unsigned char)*s & 0xC0) != 0x80;
	return n;
}

int ev_audit_filter_set(struct ev_audit_filter *f, const char *key, const char *value,
                        struct ev_error *err)
{
	for (size_t i = 0; i < NFKEYS; i++) {
		const struct fkey *k = &fkeys[i];
		if (strcmp(key, k->key) != 0 && (k->alias == NULL || strcmp(key, k->alias) != 0))
			continue;
		char **slot = (char **)((char *)f + k->off);
		char norm[21];
		if (value[0] == '\0')
			return ev_error_set(err, EV_ERR_USAGE, _("audit filter %s: empty value"),
			                    key);
		if (k->time && !ev_datetime_normalize(value, norm))
			return ev_error_set(
			        err, EV_ERR_USAGE,
			        _("audit filter %s: expected YYYY-MM-DD[ hh:mm[:ss]], got "
			          "'%.40s'"),
			        key, value);
		if (!k->time && utf8_chars(value) > k->max)
			return ev_error_set(err, EV_ERR_USAGE,
			                    _("audit filter %s: at most %zu characters"), key,
			                    k->max);
		free(*slot);
		*slot = ev_xstrdup(k->time ? norm : value);
		return 0;
	}
	return ev_error_set(
	        err, EV_ERR_USAGE,
	        _("audit filter: unknown key '%.40s' (operator, action, event_no, table, "
	          "result, since, until)"),
	        key);
}

/* One `key=value` term of text at *pp into key and val; *pp moved past it. */
static int next_term(const char **pp, struct ev_buf *key, struct ev_buf *val, struct ev_error *err)
{
	const char *p = *pp;
	key->len = val->len = 0;
	ev_buf_add(key, "", 0);
	ev_buf_add(val, "", 0);
	while (*p && *p != '=' && *p != ' ' && *p != '\t')
		ev_buf_addc(key, *p++);
	if (*p != '=')
		return ev_error_set(err, EV_ERR_USAGE,
		                    _("audit filter: expected key=value at '%.40s' (e.g. "
		                      "operator=INC-7 action=cancel)"),
		                    key->data);
	p++;
	if (*p == '"') {
		p++;
		while (*p && *p != '"') {
			if (*p == '\\' && (p[1] == '"' || p[1] == '\\'))
				p++;
			ev_buf_addc(val, *p++);
		}
		if (*p != '"')
			return ev_error_set(err, EV_ERR_USAGE,
			                    _("audit filter: unterminated quote after %.40s"),
			                    key->data);
		p++;
	} else {
		while (*p && *p != ' ' && *p != '\t')
			ev_buf_addc(val, *p++);
	}
	*pp = p;
	return 0;
}

int ev_audit_filter_parse(struct ev_audit_filter *f, const char *text, struct ev_error *err)
{
	struct ev_audit_filter n = {0};
	struct ev_buf key, val;
	const char *p = text;
	int rc = 0;

	ev_buf_init(&key);
	ev_buf_init(&val);
	for (;;) {
		while (*p == ' ' || *p == '\t')
			p++;
		if (*p == '\0')
			break;
		if (next_term(&p, &key, &val, err) < 0 ||
		    ev_audit_filter_set(&n, key.data, val.data, err) < 0) {
			rc = -1;
			break;
		}
	}
	ev_buf_free(&key);
	ev_buf_free(&val);
	if (rc < 0) {
		ev_audit_filter_free(&n);
		return -1;
	}
	ev_audit_filter_free(f);
	*f = n;
	return 0;
}

bool ev_audit_filter_capped(const struct ev_audit_filter *f)
{
	return f != NULL && (f->operator_id != NULL || f->action != NULL || f->table_name != NULL ||
	                     f->result != NULL);
}

void ev_audit_filter_free(struct ev_audit_filter *f)
{
	for (size_t i = 0; i < NFKEYS; i++) {
		char **slot = (char **)((char *)f + fkeys[i].off);
		free(*slot);
		*slot = NULL;
	}
}

/* --- the queries -------------------------------------------------------------------------- */

static struct ev_query *audit_query_new(const char *name)
{
	struct ev_query *q = ev_xcalloc(1, sizeof(*q));
	q->name = name;
	q->col_names = ev_xcalloc(NCOLS + 3, sizeof(*q->col_names));
	q->col_types = ev_xcalloc(NCOLS + 3, sizeof(*q->col_types));
	for (size_t i = 0; i < NCOLS; i++) {
		q->col_names[i] = audit_cols[i];
		q->col_types[i] = audit_types[i];
	}
	q->ncols = NCOLS;
	q->sort_col = "audit_time";
	q->sort_desc = true;
	return q;
}

static void add_columns(struct ev_buf *b, const char *prefix)
{
	for (size_t i = 0; i < NCOLS; i++)
		ev_buf_printf(b, "%s%s%s", i ? ", " : "", prefix, audit_cols[i]);
}

/* " FORCE INDEX (`name`)" for the index on columns, nothing without info, or an error. */
static int force_index(struct ev_buf *b, const struct ev_table_info *info, const char *columns,
                       struct ev_error *err)
{
	if (info == NULL)
		return 0;
	const char *name = ev_index_find(info, columns);
	if (name == NULL)
		return ev_error_set(err, EV_ERR_SCHEMA, _("n/a — %s needs an index on (%s)"),
		                    EV_AUDIT_TABLE, columns);
	ev_buf_printf(b, " FORCE INDEX (`%s`)", name);
	return 0;
}

static void add_cond(struct ev_buf *b, bool *where, const char *cond)
{
	ev_buf_adds(b, *where ? " AND " : " WHERE ");
	ev_buf_adds(b, cond);
	*where = true;
}

/* FROM, the index, the conditions an index serves, the keyset seek after req->after, the
 * order (audit_time DESC, id DESC) and LIMIT ? (its value the caller's). */
static int add_index_read(struct ev_query *q, struct ev_buf *b, const struct ev_audit_req *req,
                          struct ev_error *err)
{
	const struct ev_audit_filter *f = req->filter;
	bool where = false;

	ev_buf_adds(b, " FROM `" EV_AUDIT_TABLE "`");
	if (force_index(b, req->info, f && f->event_no ? "event_no" : "audit_time", err) < 0)
		return -1;
	if (f != NULL && f->event_no != NULL) {
		add_cond(b, &where, "event_no = ?");
		ev_query_add_text(q, f->event_no);
	}
	if (f != NULL && f->since != NULL) {
		add_cond(b, &where, "audit_time >= ?");
		ev_query_add_text(q, f->since);
	}
	if (f != NULL && f->until != NULL) {
		add_cond(b, &where, "audit_time < ?");
		ev_query_add_text(q, f->until);
	}
	if (req->after.set) {
		/* Expanded, not (t, id) < (?, ?): the row constructor often misses the index. */
		add_cond(b, &where, "(audit_time < ? OR (audit_time = ? AND id < ?))");
		ev_query_add_text(q, req->after.value);
		ev_query_add_text(q, req->after.value);
		ev_query_add_uint(q, req->after.id);
	}
	ev_buf_adds(b, " ORDER BY audit_time DESC, id DESC LIMIT ?");
	return 0;
}

/* The terms no index serves, as one condition on the joined row (NULL never matches). */
static void add_capped_terms(struct ev_query *q, struct ev_buf *b, const struct ev_audit_filter *f)
{
	const char *cols[] = {"operator", "action", "table_name", "result"};
	const char *vals[] = {f->operator_id, f->action, f->table_name, f->result};
	int n = 0;
	for (int i = 0; i < 4; i++) {
		if (vals[i] == NULL)
			continue;
		ev_buf_printf(b, "%sa.%s = ?", n++ ? " AND " : "", cols[i]);
		ev_query_add_text(q, vals[i]);
	}
}

/* A capped read, as the lists' payload search (core/query.c, wrap_search): the index's
 * ordered, bounded read takes at most cap ids, numbered and counted; they are joined back by
 * primary key and the unindexed terms evaluated on them alone; the page is the matches and
 * the last candidate, so ev_list_search_fold can say how far it looked. */
static int build_capped(struct ev_query *q, struct ev_buf *b, const struct ev_audit_req *req,
                        struct ev_error *err)
{
	long long cap = req->cap > 0 ? req->cap : EV_SEARCH_CAP_DEFAULT;

	ev_buf_adds(b, "SELECT ");
	add_columns(b, "");
	ev_buf_adds(b, ", _rn, _n, _hit FROM (SELECT ");
	add_columns(b, "a.");
	ev_buf_adds(b, ", _rn, _n, IFNULL(");
	add_capped_terms(q, b, req->filter);
	ev_buf_adds(b, ", 0) AS _hit FROM (SELECT _sid, ROW_NUMBER() OVER (ORDER BY _k1 DESC, _sid "
	               "DESC) AS _rn, COUNT(*) OVER () AS _n FROM (SELECT id AS _sid, audit_time "
	               "AS _k1");
	if (add_index_read(q, b, req, err) < 0)
		return -1;
	ev_query_add_int(q, cap);
	ev_buf_adds(b, ") _c) _s JOIN `" EV_AUDIT_TABLE "` a ON a.id = _s._sid) _x WHERE _hit = 1 "
	               "OR _rn = _n ORDER BY _rn LIMIT ?");
	ev_query_add_int(q, req->limit + 1);
	const char *extra[] = {"_rn", "_n", "_hit"};
	for (int i = 0; i < 3; i++) {
		q->col_names[q->ncols] = extra[i];
		q->col_types[q->ncols++] = EV_CT_INT;
	}
	q->search = true;
	q->search_cap = cap;
	return 0;
}

struct ev_query *ev_query_audit(const struct ev_audit_req *req, struct ev_error *err)
{
	const struct ev_audit_filter *f = req->filter;

	if (req->limit < 1 || req->limit > EV_PAGE_MAX) {
		ev_error_set(err, EV_ERR_USAGE, _("page size must be 1..%d, not %d"), EV_PAGE_MAX,
		             req->limit);
		return NULL;
	}
	if (req->after.set && (req->after.has_mid || req->after.value_null)) {
		ev_error_set(
		        err, EV_ERR_USAGE,
		        _("bad cursor: it is not one of the audit's (v1:ID:TIME): start from the "
		          "first page"));
		return NULL;
	}
	struct ev_query *q = audit_query_new(f != NULL && f->event_no != NULL ? "audit.by_event_no"
	                                                                      : "audit.by_time");
	struct ev_buf b;
	int rc;
	ev_buf_init(&b);
	ev_buf_printf(&b, "/* evtop:%s */ ", q->name);
	if (ev_audit_filter_capped(f)) {
		rc = build_capped(q, &b, req, err);
	} else {
		ev_buf_adds(&b, "SELECT ");
		add_columns(&b, "");
		rc = add_index_read(q, &b, req, err);
		ev_query_add_int(q, req->limit + 1);
	}
	if (rc < 0) {
		ev_buf_free(&b);
		ev_query_free(&q);
		return NULL;
	}
	q->sql = ev_buf_steal(&b);
	q->limit = req->limit;
	return q;
}

struct ev_query *ev_query_audit_event(const struct ev_table_info *info, const char *table_name,
                                      unsigned long long event_id, int limit, struct ev_error *err)
{
	struct ev_query *q = audit_query_new("audit.event");
	struct ev_buf b;

	ev_buf_init(&b);
	ev_buf_adds(&b, "/* evtop:audit.event */ SELECT ");
	add_columns(&b, "");
	ev_buf_adds(&b, " FROM `" EV_AUDIT_TABLE "`");
	if (force_index(&b, info, "table_name,event_id", err) < 0) {
		ev_buf_free(&b);
		ev_query_free(&q);
		return NULL;
	}
	/* One event's rows only: a bounded sort of them. */
	ev_buf_adds(&b, " WHERE table_name = ? AND event_id = ? ORDER BY audit_time DESC, id DESC "
	                "LIMIT ?");
	ev_query_add_text(q, table_name);
	ev_query_add_uint(q, event_id);
	ev_query_add_int(q, limit);
	q->sql = ev_buf_steal(&b);
	q->limit = limit;
	return q;
}

/* --- the words ---------------------------------------------------------------------------- */

int ev_audit_status(const char *st)
{
	char *end = NULL;
	long v = st ? strtol(st, &end, 10) : -1;
	if (st == NULL || end == st || *end != '\0' || v < 0 || v >= EV_ST_COUNT)
		return -1;
	return (int)v;
}

static void status_words(struct ev_buf *b, int table, const char *st)
{
	int v = ev_audit_status(st);
	if (st == NULL)
		ev_buf_adds(b, "?");
	else if (v < 0)
		ev_buf_printf(b, "%.12s", st);
	else if (table < 0 || table >= EV_TABLE_COUNT)
		ev_buf_printf(b, "%d", v);
	else
		ev_buf_printf(b, "%d %s", v,
		              ev_model_status_label(ev_model_table((enum ev_table_kind)table), v));
}

char *ev_audit_change_text(int table, const char *before_status, const char *after_status)
{
	struct ev_buf b;
	ev_buf_init(&b);
	status_words(&b, table, before_status);
	ev_buf_adds(&b, " → ");
	if (after_status == NULL)
		ev_buf_adds(&b, _("not applied"));
	else
		status_words(&b, table, after_status);
	return ev_buf_steal(&b);
}

char *ev_audit_who_text(const char *operator_id, const char *os_user, const char *sudo_user)
{
	struct ev_buf b;
	ev_buf_init(&b);
	ev_buf_adds(&b, operator_id && *operator_id ? operator_id : "-");
	if (os_user && *os_user) {
		ev_buf_printf(&b, " (%s", os_user);
		if (sudo_user && *sudo_user)
			/* TRANSLATORS: after the OS user: "INC-7 (alice via sudo bob)". */
			ev_buf_printf(&b, _(" via sudo %s"), sudo_user);
		ev_buf_adds(&b, ")");
	}
	return ev_buf_steal(&b);
}

/* Whether msg is db/conn.c's "missing table: ..." (in the language of the interface). */
static bool missing_table(const char *msg)
{
	char prefix[128];
	snprintf(prefix, sizeof(prefix), _("missing table: %s"), "");
	return strncmp(msg, prefix, strlen(prefix)) == 0;
}

void ev_audit_error_text(const struct ev_error *err, const char *flavour, const char *db_user,
                         char *out, size_t size)
{
	if (err->code == 1142 || err->code == 1143)
		snprintf(out, size,
		         _("no SELECT on %s for %.200s: GRANT SELECT ON %s (optional for watching, "
		           "sql/grants.sql; doc/privileges.md); nothing changed"),
		         EV_AUDIT_TABLE, db_user && *db_user ? db_user : _("this account"),
		         EV_AUDIT_TABLE);
	else if (err->code == EV_ERR_SCHEMA && missing_table(err->msg))
		snprintf(out, size, _("no %s table in this database: sql/%s/audit.sql creates it"),
		         EV_AUDIT_TABLE, flavour && *flavour ? flavour : "mariadb");
	else
		snprintf(out, size, "%s", err->msg);
}
