/* evtop — retention: the rows a run moves and the statements of a batch (see archive.h). */
#include <config.h>

#include "core/archive.h"

#include "core/i18n.h"
#include "core/text.h"

#include <inttypes.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *ev_archive_target_name(enum ev_archive_target t)
{
	switch (t) {
	case EV_ARCHIVE_TO_TABLE:
		return "table";
	case EV_ARCHIVE_TO_FILE:
		return "file";
	case EV_ARCHIVE_PURGE:
		return "purge";
	}
	return "?";
}

int ev_archive_parse_statuses(const char *text, unsigned *out, struct ev_error *err)
{
	unsigned bits = 0;
	char *copy = ev_xstrdup(text ? text : "");
	char *save = NULL;
	int rc = 0;

	for (char *w = strtok_r(copy, ",", &save); w != NULL; w = strtok_r(NULL, ",", &save)) {
		while (*w == ' ')
			w++;
		size_t len = strlen(w);
		while (len > 0 && w[len - 1] == ' ')
			w[--len] = '\0';
		if (strcmp(w, "success") == 0 || strcmp(w, "2") == 0) {
			bits |= 1u << EV_ST_SUCCESS;
		} else if (strcmp(w, "cancelled") == 0 || strcmp(w, "canceled") == 0 ||
		           strcmp(w, "4") == 0) {
			bits |= 1u << EV_ST_CANCELLED;
		} else if (strcmp(w, "pending") == 0 || strcmp(w, "processing") == 0 ||
		           strcmp(w, "failed") == 0 || strcmp(w, "0") == 0 || strcmp(w, "1") == 0 ||
		           strcmp(w, "3") == 0) {
			rc = ev_error_set(
			        err, EV_ERR_USAGE,
			        _("--status %s: backlog rows (pending, processing, failed) are "
			          "never archived; only success and cancelled"),
			        w);
			break;
		} else {
			rc = ev_error_set(err, EV_ERR_USAGE,
			                  _("--status: unknown status '%s' (success, cancelled)"),
			                  w);
			break;
		}
	}
	free(copy);
	if (rc == 0 && bits == 0)
		rc = ev_error_set(err, EV_ERR_USAGE,
		                  _("--status: give success, cancelled or both"));
	if (rc == 0)
		*out = bits;
	return rc;
}

static bool finished(int status)
{
	return status == EV_ST_SUCCESS || status == EV_ST_CANCELLED;
}

bool ev_archive_row_eligible(const struct ev_archive_spec *s, int status, int deleted)
{
	if (!finished(status))
		return false;
	if (deleted == 0)
		return (s->statuses & (1u << status)) != 0;
	return deleted == 1 && s->include_deleted;
}

static struct ev_query *new_query(const char *name, char *sql, int limit)
{
	struct ev_query *q = ev_xcalloc(1, sizeof(*q));
	q->name = name;
	q->sql = sql;
	q->limit = limit;
	return q;
}

/* The guard of every statement that touches a row: finished, and deleted as chosen. */
static void add_guard(struct ev_buf *b, const struct ev_archive_spec *s)
{
	const char *st = ev_model_table(s->table)->status_col;
	bool ok = (s->statuses & (1u << EV_ST_SUCCESS)) != 0;
	bool cancelled = (s->statuses & (1u << EV_ST_CANCELLED)) != 0;
	const char *list = ok && cancelled ? "2, 4" : ok ? "2" : cancelled ? "4" : "-1";
	ev_buf_printf(b, "((`%s` IN (%s) AND deleted = 0)", st, list);
	if (s->include_deleted)
		ev_buf_printf(b, " OR (`%s` IN (2, 4) AND deleted = 1)", st);
	ev_buf_adds(b, ")");
}

static void add_ids(struct ev_buf *b, struct ev_query *q, const uint64_t *ids, size_t n)
{
	ev_buf_adds(b, "id IN (");
	for (size_t i = 0; i < n; i++) {
		ev_buf_adds(b, i ? ", ?" : "?");
		ev_query_add_uint(q, ids[i]);
	}
	ev_buf_adds(b, ")");
}

static void add_table(struct ev_buf *b, const char *name)
{
	char *t = ev_query_quote_ident(name);
	ev_buf_adds(b, t);
	free(t);
}

static void add_columns(struct ev_buf *b, const struct ev_archive_spec *s)
{
	for (size_t i = 0; i < s->ncolumns; i++) {
		char *c = ev_query_quote_ident(s->columns[i]);
		ev_buf_printf(b, "%s%s", i ? ", " : "", c);
		free(c);
	}
}

struct ev_query *ev_archive_query_clock(long long older_than_s)
{
	struct ev_query *q = new_query(
	        "archive.clock",
	        ev_xstrdup("/* evtop:archive.clock */ SELECT NOW() AS now, NOW() - INTERVAL ? "
	                   "SECOND AS cutoff"),
	        1);
	ev_query_add_int(q, older_than_s);
	return q;
}

/* create_time before the cutoff, after the cursor: a range of the create_time index. */
static void add_window(struct ev_buf *b, struct ev_query *q, const struct ev_archive_spec *s,
                       const struct ev_archive_cursor *after)
{
	ev_buf_adds(b, " WHERE create_time < ?");
	ev_query_add_text(q, s->cutoff);
	if (after != NULL && after->set) {
		ev_buf_adds(b, " AND (create_time > ? OR (create_time = ? AND id > ?))");
		ev_query_add_text(q, after->create_time);
		ev_query_add_text(q, after->create_time);
		ev_query_add_uint(q, after->id);
	}
}

static void add_hint(struct ev_buf *b, const struct ev_archive_spec *s)
{
	if (s->create_index != NULL) {
		char *i = ev_query_quote_ident(s->create_index);
		ev_buf_printf(b, " FORCE INDEX (%s)", i);
		free(i);
	}
}

struct ev_query *ev_archive_query_candidates(const struct ev_archive_spec *s,
                                             const struct ev_archive_cursor *after, size_t limit)
{
	struct ev_buf b = {0};
	struct ev_query *q = new_query("archive.candidates", NULL, (int)limit);
	ev_buf_printf(&b,
	              "/* evtop:archive.candidates */ SELECT id, create_time, `%s` AS status, "
	              "deleted FROM ",
	              ev_model_table(s->table)->status_col);
	add_table(&b, s->table_name);
	add_hint(&b, s);
	add_window(&b, q, s, after);
	ev_buf_printf(&b, " ORDER BY create_time, id LIMIT %zu", limit);
	q->sql = ev_buf_steal(&b);
	return q;
}

struct ev_query *ev_archive_query_reread(const struct ev_archive_spec *s, const uint64_t *ids,
                                         size_t n)
{
	struct ev_buf b = {0};
	struct ev_query *q = new_query("archive.reread", NULL, 1);
	ev_buf_adds(&b, "/* evtop:archive.reread */ SELECT COUNT(*) FROM ");
	add_table(&b, s->table_name);
	ev_buf_adds(&b, " WHERE ");
	add_ids(&b, q, ids, n);
	q->sql = ev_buf_steal(&b);
	return q;
}

struct ev_query *ev_archive_query_count(const struct ev_archive_spec *s,
                                        const struct ev_archive_cursor *after)
{
	struct ev_buf b = {0};
	struct ev_query *q = new_query("archive.count", NULL, 1);
	ev_buf_adds(&b, "/* evtop:archive.count */ SELECT COUNT(*) AS n FROM (SELECT 1 FROM ");
	add_table(&b, s->table_name);
	add_hint(&b, s);
	add_window(&b, q, s, after);
	ev_buf_adds(&b, " AND ");
	add_guard(&b, s);
	ev_buf_printf(&b, " LIMIT %d) AS c", EV_ARCHIVE_COUNT_CAP + 1);
	q->sql = ev_buf_steal(&b);
	return q;
}

void ev_archive_pick(const struct ev_archive_spec *s, const struct ev_rowset *rs, size_t batch,
                     size_t limit, struct ev_archive_pick *out)
{
	memset(out, 0, sizeof(*out));
	out->ids = ev_xcalloc(batch ? batch : 1, sizeof(*out->ids));
	size_t r = 0;
	for (; r < rs->nrows && out->n < batch; r++) {
		const char *id = ev_rowset_cell(rs, r, 0)->s;
		const char *ct = ev_rowset_cell(rs, r, 1)->s;
		const char *st = ev_rowset_cell(rs, r, 2)->s;
		const char *del = ev_rowset_cell(rs, r, 3)->s;
		uint64_t v = 0;
		if (id == NULL || ct == NULL || !ev_parse_u64(id, &v))
			continue;
		int status = st ? atoi(st) : -1;
		int deleted = del ? atoi(del) : 0;
		out->examined++;
		if (ev_archive_row_eligible(s, status, deleted))
			out->ids[out->n++] = v;
		else if (finished(status) && deleted != 0)
			out->kept_deleted++;
		else if (finished(status))
			out->kept_status++;
		else
			out->kept_backlog++;
		out->next.set = true;
		snprintf(out->next.create_time, sizeof(out->next.create_time), "%s", ct);
		out->next.id = v;
	}
	out->end = r == rs->nrows && rs->nrows < limit;
}

void ev_archive_pick_clear(struct ev_archive_pick *p)
{
	free(p->ids);
	p->ids = NULL;
	p->n = 0;
}

struct ev_query *ev_archive_query_lock(const struct ev_archive_spec *s, const uint64_t *ids,
                                       size_t n, bool whole)
{
	struct ev_buf b = {0};
	struct ev_query *q = new_query("archive.lock", NULL, (int)n);
	/* CONCAT_WS skips a NULL: each one spelled \N, so NULL and '' differ in the checksum. */
	ev_buf_adds(&b, "/* evtop:archive.lock */ SELECT id, CRC32(CONCAT_WS('|'");
	for (size_t i = 0; i < s->ncolumns; i++) {
		char *c = ev_query_quote_ident(s->columns[i]);
		ev_buf_printf(&b, ", IFNULL(%s, '\\\\N')", c);
		free(c);
	}
	ev_buf_adds(&b, ")) AS crc, create_time AS row_create_time");
	if (whole) {
		ev_buf_adds(&b, ", ");
		add_columns(&b, s);
	}
	ev_buf_adds(&b, " FROM ");
	add_table(&b, s->table_name);
	ev_buf_adds(&b, " WHERE ");
	add_ids(&b, q, ids, n);
	ev_buf_adds(&b, " AND ");
	add_guard(&b, s);
	ev_buf_adds(&b, " ORDER BY create_time, id FOR UPDATE");
	q->sql = ev_buf_steal(&b);
	return q;
}

struct ev_query *ev_archive_query_copy(const struct ev_archive_spec *s, const uint64_t *ids,
                                       size_t n)
{
	struct ev_buf b = {0};
	struct ev_query *q = new_query("archive.copy", NULL, 0);
	ev_buf_adds(&b, "/* evtop:archive.copy */ INSERT INTO ");
	add_table(&b, s->archive_name);
	ev_buf_adds(&b, " (");
	add_columns(&b, s);
	ev_buf_adds(&b, ") SELECT ");
	add_columns(&b, s);
	ev_buf_adds(&b, " FROM ");
	add_table(&b, s->table_name);
	ev_buf_adds(&b, " WHERE ");
	add_ids(&b, q, ids, n);
	ev_buf_adds(&b, " AND ");
	add_guard(&b, s);
	q->sql = ev_buf_steal(&b);
	return q;
}

struct ev_query *ev_archive_query_delete(const struct ev_archive_spec *s, const uint64_t *ids,
                                         size_t n)
{
	struct ev_buf b = {0};
	struct ev_query *q = new_query("archive.delete", NULL, 0);
	ev_buf_adds(&b, "/* evtop:archive.delete */ DELETE FROM ");
	add_table(&b, s->table_name);
	ev_buf_adds(&b, " WHERE ");
	add_ids(&b, q, ids, n);
	ev_buf_adds(&b, " AND ");
	add_guard(&b, s);
	q->sql = ev_buf_steal(&b);
	return q;
}

/* A text parameter cut to its column's width in characters ("" for NULL: NULLIF makes it
 * NULL again). */
static void add_cut(struct ev_query *q, const char *v, size_t max)
{
	char *cut = ev_guard_cut_chars(v ? v : "", max);
	ev_query_add_text(q, cut);
	free(cut);
}

static const char *target_label(const struct ev_archive_spec *s)
{
	return s->target == EV_ARCHIVE_TO_TABLE  ? s->archive_name
	       : s->target == EV_ARCHIVE_TO_FILE ? s->file_path
	                                         : NULL;
}

struct ev_query *ev_archive_query_log(const struct ev_archive_spec *s, const struct ev_audit_who *w,
                                      const struct ev_archive_batch *b)
{
	struct ev_query *q = new_query(
	        "archive.log",
	        ev_xstrdup(
	                "/* evtop:archive.log */ INSERT INTO `evtop_archive_log` (archive_time, "
	                "run_id, batch_no, source, os_user, sudo_user, ssh_connection, operator, "
	                "db_user, table_name, target, target_name, cutoff, first_id, last_id, "
	                "first_create_time, last_create_time, row_count, checksum) VALUES "
	                "(NOW(3), ?, ?, ?, ?, NULLIF(?, ''), NULLIF(?, ''), NULLIF(?, ''), "
	                "CURRENT_USER(), ?, ?, NULLIF(?, ''), ?, ?, ?, ?, ?, ?, ?)"),
	        0);
	add_cut(q, b->run_id, 64);
	ev_query_add_uint(q, b->number);
	add_cut(q, w->source ? w->source : "default", 64);
	add_cut(q, w->os_user ? w->os_user : "?", 64);
	add_cut(q, w->sudo_user, 64);
	add_cut(q, w->ssh_connection, 128);
	add_cut(q, w->operator_id, 128);
	add_cut(q, s->table_name, 64);
	ev_query_add_text(q, ev_archive_target_name(s->target));
	add_cut(q, target_label(s), 1024);
	ev_query_add_text(q, s->cutoff);
	ev_query_add_uint(q, b->first_id);
	ev_query_add_uint(q, b->last_id);
	ev_query_add_text(q, b->first_create_time ? b->first_create_time : s->cutoff);
	ev_query_add_text(q, b->last_create_time ? b->last_create_time : s->cutoff);
	ev_query_add_uint(q, b->rows);
	ev_query_add_uint(q, b->checksum);
	return q;
}

struct ev_query *ev_archive_query_log_exists(void)
{
	return new_query("archive.log_exists",
	                 ev_xstrdup("/* evtop:archive.log_exists */ SELECT COUNT(*) AS n FROM "
	                            "information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND "
	                            "TABLE_NAME = 'evtop_archive_log'"),
	                 1);
}

static json_t *ju64(uint64_t v)
{
	char buf[32];
	snprintf(buf, sizeof(buf), "%" PRIu64, v);
	return json_string(buf);
}

char *ev_archive_audit_line(const char *time, const struct ev_audit_who *w,
                            const struct ev_archive_spec *s, const struct ev_archive_batch *b,
                            const char *result, const char *error)
{
	json_t *o = json_object();
	if (o == NULL)
		ev_fatal(_("out of memory (jansson)"));
	ev_audit_who_fields(o, time, w);
	ev_audit_jset(o, "table", ev_audit_jstr(s->table_name));
	ev_audit_jset(o, "id", json_null());
	ev_audit_jset(o, "event_no", json_null());
	ev_audit_jset(o, "action", ev_audit_jstr("archive"));
	ev_audit_jset(o, "reason", json_null());
	ev_audit_jset(o, "result", ev_audit_jstr(result));
	ev_audit_jset(o, "error", ev_audit_jstr(error));
	ev_audit_jset(o, "run", ev_audit_jstr(b->run_id));
	ev_audit_jset(o, "batch", json_integer((json_int_t)b->number));
	ev_audit_jset(o, "target", ev_audit_jstr(ev_archive_target_name(s->target)));
	ev_audit_jset(o, "target_name", ev_audit_jstr(target_label(s)));
	ev_audit_jset(o, "cutoff", ev_audit_jstr(s->cutoff));
	ev_audit_jset(o, "first_id", ju64(b->first_id));
	ev_audit_jset(o, "last_id", ju64(b->last_id));
	ev_audit_jset(o, "first_create_time", ev_audit_jstr(b->first_create_time));
	ev_audit_jset(o, "last_create_time", ev_audit_jstr(b->last_create_time));
	ev_audit_jset(o, "rows", json_integer((json_int_t)b->rows));
	ev_audit_jset(o, "checksum", json_integer((json_int_t)b->checksum));
	return ev_audit_jline(o);
}

size_t ev_archive_create_sql(const struct ev_archive_spec *s, const struct ev_table_info *info,
                             char **out, size_t max)
{
	size_t n = 0;
	struct ev_buf b = {0};
	if (max < 2)
		return 0;
	char *arch = ev_query_quote_ident(s->archive_name);
	char *online = ev_query_quote_ident(s->table_name);
	out[n++] = ev_xasprintf("/* evtop:archive.create */ CREATE TABLE %s LIKE %s", arch, online);
	ev_buf_printf(&b, "/* evtop:archive.create_indexes */ ALTER TABLE %s", arch);
	const char *sep = " ";
	for (size_t i = 0; info != NULL && i < info->nindexes; i++) {
		const char *name = info->indexes[i].name;
		if (name == NULL || strcmp(name, "PRIMARY") == 0)
			continue;
		char *q = ev_query_quote_ident(name);
		ev_buf_printf(&b, "%sDROP INDEX %s", sep, q);
		free(q);
		sep = ", ";
	}
	const struct ev_table_def *d = ev_model_table(s->table);
	ev_buf_printf(&b,
	              "%sADD KEY `idx_event_no` (event_no), ADD KEY `idx_%s_%s` (`%s`, `%s`), "
	              "ADD KEY `idx_trace_id` (trace_id), ADD KEY `idx_create_time` (create_time)",
	              sep, d->type_col, d->object_col, d->type_col, d->object_col);
	out[n++] = ev_buf_steal(&b);
	free(arch);
	free(online);
	return n;
}

struct ev_query *ev_archive_query_columns(const char *table_name)
{
	struct ev_query *q = new_query(
	        "archive.columns",
	        ev_xstrdup("/* evtop:archive.columns */ SELECT COLUMN_NAME, COLUMN_TYPE, "
	                   "IS_NULLABLE FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = "
	                   "DATABASE() AND TABLE_NAME = ? ORDER BY ORDINAL_POSITION LIMIT 1000"),
	        1000);
	ev_query_add_text(q, table_name);
	return q;
}

static const char *cell(const struct ev_rowset *rs, size_t r, size_t c)
{
	const char *v = r < rs->nrows && c < rs->ncols ? ev_rowset_cell(rs, r, c)->s : NULL;
	return v ? v : "";
}

int ev_archive_columns_match(const struct ev_rowset *online, const struct ev_rowset *archive,
                             const char *archive_name, struct ev_error *err)
{
	size_t n = online->nrows > archive->nrows ? online->nrows : archive->nrows;
	for (size_t r = 0; r < n; r++) {
		if (r >= archive->nrows)
			return ev_error_set(err, EV_ERR_SCHEMA,
			                    _("the archive table %s lacks the column %s"),
			                    archive_name, cell(online, r, 0));
		if (r >= online->nrows)
			return ev_error_set(
			        err, EV_ERR_SCHEMA,
			        _("the archive table %s has a column the online table has "
			          "not: %s"),
			        archive_name, cell(archive, r, 0));
		for (size_t c = 0; c < 3; c++)
			if (strcasecmp(cell(online, r, c), cell(archive, r, c)) != 0)
				return ev_error_set(
				        err, EV_ERR_SCHEMA,
				        _("the archive table %s differs from the online "
				          "table at column %zu: %s %s %s there, %s %s %s "
				          "online"),
				        archive_name, r + 1, cell(archive, r, 0),
				        cell(archive, r, 1),
				        strcmp(cell(archive, r, 2), "YES") == 0 ? "NULL"
				                                                : "NOT NULL",
				        cell(online, r, 0), cell(online, r, 1),
				        strcmp(cell(online, r, 2), "YES") == 0 ? "NULL"
				                                               : "NOT NULL");
	}
	return 0;
}

/* A value as stored: a string, null for NULL, {"hex": ...} when it is not UTF-8. */
static json_t *jvalue(const struct ev_cell *c)
{
	if (c->s == NULL)
		return json_null();
	json_t *v = json_stringn(c->s, c->len);
	if (v != NULL)
		return v;
	char *hex = ev_xcalloc(c->len * 2 + 1, 1);
	for (size_t i = 0; i < c->len; i++)
		snprintf(hex + 2 * i, 3, "%02x", (unsigned char)c->s[i]);
	json_t *o = json_object();
	ev_audit_jset(o, "hex", json_string(hex));
	free(hex);
	return o;
}

char *ev_archive_file_row(const struct ev_archive_spec *s, const struct ev_archive_batch *b,
                          const struct ev_rowset *rs, size_t row)
{
	json_t *o = json_object();
	json_t *r = json_object();
	if (o == NULL || r == NULL)
		ev_fatal(_("out of memory (jansson)"));
	ev_audit_jset(o, "batch", json_integer((json_int_t)b->number));
	ev_audit_jset(o, "run", ev_audit_jstr(b->run_id));
	ev_audit_jset(o, "table", ev_audit_jstr(s->table_name));
	for (size_t c = 3; c < rs->ncols; c++)
		ev_audit_jset(r, rs->cols[c].name, jvalue(ev_rowset_cell(rs, row, c)));
	ev_audit_jset(o, "row", r);
	return ev_audit_jline(o);
}

char *ev_archive_file_commit(const struct ev_archive_spec *s, const struct ev_archive_batch *b)
{
	json_t *o = json_object();
	if (o == NULL)
		ev_fatal(_("out of memory (jansson)"));
	ev_audit_jset(o, "batch", json_integer((json_int_t)b->number));
	ev_audit_jset(o, "run", ev_audit_jstr(b->run_id));
	ev_audit_jset(o, "table", ev_audit_jstr(s->table_name));
	ev_audit_jset(o, "committed", json_true());
	ev_audit_jset(o, "rows", json_integer((json_int_t)b->rows));
	ev_audit_jset(o, "first_id", ju64(b->first_id));
	ev_audit_jset(o, "last_id", ju64(b->last_id));
	ev_audit_jset(o, "checksum", json_integer((json_int_t)b->checksum));
	return ev_audit_jline(o);
}

struct ev_query *ev_archive_query_size(const char *table_name)
{
	struct ev_query *q = new_query(
	        "archive.size",
	        ev_xstrdup("/* evtop:archive.size */ SELECT TABLE_ROWS, DATA_LENGTH + INDEX_LENGTH "
	                   "FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND "
	                   "TABLE_NAME = ? LIMIT 1"),
	        1);
	ev_query_add_text(q, table_name);
	return q;
}

struct ev_query *ev_archive_query_past(const char *table_name, const char *index, int retention_s)
{
	struct ev_buf b = {0};
	struct ev_query *q = new_query("archive.past", NULL, 1);
	ev_buf_adds(&b, "/* evtop:archive.past */ SELECT COUNT(*) FROM (SELECT 1 FROM ");
	add_table(&b, table_name);
	if (index != NULL) {
		char *i = ev_query_quote_ident(index);
		ev_buf_printf(&b, " FORCE INDEX (%s)", i);
		free(i);
	}
	ev_buf_printf(&b, " WHERE create_time < NOW() - INTERVAL ? SECOND LIMIT %d) AS p",
	              EV_ARCHIVE_PAST_CAP + 1);
	ev_query_add_int(q, retention_s);
	q->sql = ev_buf_steal(&b);
	return q;
}

/* 999, 1.2k, 34k, 1.2M, 56M: a count for a header. */
static void short_count(long long n, char *out, size_t size)
{
	if (n < 1000)
		snprintf(out, size, "%lld", n);
	else if (n < 10000)
		snprintf(out, size, "%.1fk", (double)n / 1e3);
	else if (n < 1000000)
		snprintf(out, size, "%lldk", n / 1000);
	else if (n < 10000000)
		snprintf(out, size, "%.1fM", (double)n / 1e6);
	else
		snprintf(out, size, "%lldM", n / 1000000);
}

static void short_bytes(long long n, char *out, size_t size)
{
	static const char *const unit[] = {"B", "KB", "MB", "GB", "TB"};
	double v = (double)n;
	int u = 0;
	while (v >= 1024 && u < 4) {
		v /= 1024;
		u++;
	}
	snprintf(out, size, u == 0 || v >= 10 ? "%.0f %s" : "%.1f %s", v, unit[u]);
}

/* 45s, 12m, 5h, 95d: a whole unit. */
static void short_age(long long s, char *out, size_t size)
{
	if (s < 60)
		snprintf(out, size, "%llds", s < 0 ? 0 : s);
	else if (s < 3600)
		snprintf(out, size, "%lldm", s / 60);
	else if (s < 86400)
		snprintf(out, size, "%lldh", s / 3600);
	else
		snprintf(out, size, "%lldd", s / 86400);
}

void ev_archive_facts_text(const struct ev_table_facts *f, char *out, size_t size)
{
	char rows[32] = "?", bytes[32] = "?", age[32] = "", past[32] = "", ret[32] = "";
	if (size == 0)
		return;
	out[0] = '\0';
	if (!f->read)
		return;
	if (f->rows >= 0)
		short_count(f->rows, rows, sizeof(rows));
	if (f->bytes >= 0)
		short_bytes(f->bytes, bytes, sizeof(bytes));
	size_t n = (size_t)snprintf(out, size, _("~%s rows, %s"), rows, bytes);
	if (n < size && f->have_oldest) {
		short_age(f->oldest_age_s, age, sizeof(age));
		n += (size_t)snprintf(out + n, size - n, _(", oldest %s"), age);
	} else if (n < size) {
		n += (size_t)snprintf(out + n, size - n, _(", empty"));
	}
	if (n < size && f->retention_s > 0 && f->past >= 0) {
		short_count(f->past, past, sizeof(past));
		short_age(f->retention_s, ret, sizeof(ret));
		snprintf(out + n, size - n, _(", %s%s before the %s retention"), past,
		         f->past_capped ? "+" : "", ret);
	}
	ev_utf8_fix_tail(out); /* a cut by snprintf ends on a whole character */
}

char *ev_archive_cursor_text(const struct ev_archive_cursor *c)
{
	return ev_xasprintf("%s\t%" PRIu64 "\n", c->create_time, c->id);
}

bool ev_archive_cursor_parse(const char *text, struct ev_archive_cursor *c)
{
	const char *tab = text ? strchr(text, '\t') : NULL;
	memset(c, 0, sizeof(*c));
	if (tab == NULL || tab == text || (size_t)(tab - text) >= sizeof(c->create_time))
		return false;
	char num[32];
	size_t k = strcspn(tab + 1, "\n");
	if (k == 0 || k >= sizeof(num))
		return false;
	memcpy(num, tab + 1, k);
	num[k] = '\0';
	memcpy(c->create_time, text, (size_t)(tab - text));
	c->create_time[tab - text] = '\0';
	for (const char *p = c->create_time; *p; p++)
		if (!((*p >= '0' && *p <= '9') || *p == '-' || *p == ' ' || *p == ':' || *p == '.'))
			return false;
	if (!ev_parse_u64(num, &c->id))
		return false;
	c->set = true;
	return true;
}
