/* evtop — the statements `evtop doctor` reads the server with (information_schema, SHOW,
 * the privilege probes, the replica's lag) and the lag read from their answer (doctor.h).
 * Judging what they return is doctor.c's. */
#include <config.h>

#include "core/doctor.h"
#include "core/i18n.h"
#include "core/query.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N(a) (sizeof(a) / sizeof((a)[0]))

/* --- statements ----------------------------------------------------------------------------- */

static struct ev_query *text_query(const char *name, char *sql, size_t ncols,
                                   const char *const *names, int limit)
{
	struct ev_query *q = ev_xcalloc(1, sizeof(*q));
	q->name = name;
	q->sql = sql;
	q->ncols = ncols;
	q->col_names = ev_xcalloc(ncols ? ncols : 1, sizeof(*q->col_names));
	q->col_types = ev_xcalloc(ncols ? ncols : 1, sizeof(*q->col_types));
	for (size_t i = 0; i < ncols; i++) {
		q->col_names[i] = names[i];
		q->col_types[i] = EV_CT_TEXT;
	}
	q->limit = limit;
	return q;
}

struct ev_query *ev_doctor_query_server(enum ev_flavour f)
{
	static const char *const names[] = {"limit_ms", "lock_wait", "read_only", "innodb_ro",
	                                    "super_ro", "time_zone", "system_tz", "utc_offset_s",
	                                    "now",      "database"};
	const char *limit = f == EV_FLAVOUR_MARIADB ? "@@session.max_statement_time * 1000"
	                                            : "@@session.max_execution_time";
	const char *super_ro = f == EV_FLAVOUR_MYSQL ? "@@global.super_read_only" : "0";
	char *sql =
	        ev_xasprintf("/* evtop:doctor.server */ SELECT %s, "
	                     "@@session.innodb_lock_wait_timeout, @@global.read_only, "
	                     "@@global.innodb_read_only, %s, @@session.time_zone, "
	                     "@@system_time_zone, TIMESTAMPDIFF(SECOND, UTC_TIMESTAMP(), NOW()), "
	                     "NOW(), DATABASE() LIMIT 1",
	                     limit, super_ro);
	return text_query("doctor.server", sql, N(names), names, 1);
}

struct ev_query *ev_doctor_query_table(const char *table_name)
{
	static const char *const names[] = {"engine", "collation", "rows"};
	struct ev_query *q =
	        text_query("doctor.table",
	                   ev_xstrdup("/* evtop:doctor.table */ SELECT ENGINE, TABLE_COLLATION, "
	                              "TABLE_ROWS FROM information_schema.TABLES WHERE "
	                              "TABLE_SCHEMA = DATABASE() AND TABLE_NAME = ? LIMIT 1"),
	                   N(names), names, 1);
	ev_query_add_text(q, table_name);
	return q;
}

struct ev_query *ev_doctor_query_columns(const char *table_name)
{
	static const char *const names[] = {"column_name", "data_type", "column_type",
	                                    "is_nullable", "char_len",  "charset"};
	struct ev_query *q = text_query(
	        "doctor.columns",
	        ev_xstrdup("/* evtop:doctor.columns */ SELECT COLUMN_NAME, DATA_TYPE, COLUMN_TYPE, "
	                   "IS_NULLABLE, CHARACTER_MAXIMUM_LENGTH, CHARACTER_SET_NAME FROM "
	                   "information_schema.COLUMNS WHERE TABLE_SCHEMA = DATABASE() AND "
	                   "TABLE_NAME = ? ORDER BY ORDINAL_POSITION LIMIT 1000"),
	        N(names), names, 1000);
	ev_query_add_text(q, table_name);
	return q;
}

struct ev_query *ev_doctor_query_create_table(const char *table_name)
{
	/* information_schema.CHECK_CONSTRAINTS shows nothing to an account with SELECT only;
	 * SHOW CREATE TABLE shows the checks to anyone who may read the table. */
	return text_query(
	        "doctor.create_table",
	        ev_xasprintf("/* evtop:doctor.create_table */ SHOW CREATE TABLE `%s`", table_name),
	        0, NULL, 1);
}

struct ev_query *ev_doctor_query_select_probe(const char *table_name, const char *const *columns)
{
	struct ev_buf b;

	ev_buf_init(&b);
	ev_buf_adds(&b, "/* evtop:doctor.select_probe */ SELECT ");
	if (columns == NULL || columns[0] == NULL)
		ev_buf_adds(&b, "1");
	for (size_t i = 0; columns != NULL && columns[i] != NULL; i++)
		ev_buf_printf(&b, "%s`%s`", i ? ", " : "", columns[i]);
	ev_buf_printf(&b, " FROM `%s` WHERE 1 = 0 LIMIT 0", table_name);
	return text_query("doctor.select_probe", ev_buf_steal(&b), 0, NULL, 0);
}

struct ev_query *ev_doctor_query_audit_probe(void)
{
	/* The columns evtop's audit INSERT names (doc/actions.md), so a column-level grant that
	 * misses one is caught too. */
	return text_query(
	        "doctor.audit_probe",
	        ev_xstrdup("/* evtop:doctor.audit_probe */ INSERT INTO `evtop_audit` (audit_time, "
	                   "source, os_user, sudo_user, ssh_connection, operator, db_user, "
	                   "table_name, event_id, event_no, action, before_status, "
	                   "before_retry_count, before_max_retry_count, before_next_retry_time, "
	                   "before_version, after_status, reason, result) SELECT NOW(3), '', '', "
	                   "NULL, NULL, NULL, '', '', 0, '', '', 0, 0, 0, NULL, 0, NULL, NULL, '' "
	                   "FROM DUAL WHERE 1 = 0"),
	        0, NULL, 0);
}

/* One row: does the table `name` (a fixed name of evtop's) exist in the current database. */
static struct ev_query *own_table_exists(const char *qname, const char *name)
{
	static const char *const names[] = {"n"};
	return text_query(qname,
	                  ev_xasprintf("/* evtop:%s */ SELECT COUNT(*) FROM "
	                               "information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() "
	                               "AND TABLE_NAME = '%s' LIMIT 1",
	                               qname, name),
	                  N(names), names, 1);
}

struct ev_query *ev_doctor_query_audit_exists(void)
{
	return own_table_exists("doctor.audit_exists", "evtop_audit");
}

struct ev_query *ev_doctor_query_access_log_exists(void)
{
	return own_table_exists("doctor.access_log_exists", "evtop_access_log");
}

struct ev_query *ev_doctor_query_access_log_probe(void)
{
	/* Every column evtop's access-log INSERT names (core/guard.c). */
	return text_query(
	        "doctor.access_log_probe",
	        ev_xstrdup("/* evtop:doctor.access_log_probe */ INSERT INTO "
	                   "`evtop_access_log` (access_time, source, os_user, sudo_user, "
	                   "ssh_connection, operator, db_user, table_name, event_no, "
	                   "action, shown_count, reason) SELECT NOW(3), '', '', NULL, NULL, "
	                   "NULL, '', '', '', '', 0, '' FROM DUAL WHERE 1 = 0"),
	        0, NULL, 0);
}

struct ev_query *ev_doctor_query_replica(const struct ev_server_version *v)
{
	bool replica_word = (v->flavour == EV_FLAVOUR_MARIADB &&
	                     (v->major > 10 || (v->major == 10 && v->minor >= 5))) ||
	                    (v->flavour == EV_FLAVOUR_MYSQL &&
	                     (v->major > 8 || (v->major == 8 && (v->minor > 0 || v->patch >= 22))));
	return text_query("doctor.replica",
	                  ev_xstrdup(replica_word ? "/* evtop:doctor.replica */ SHOW REPLICA STATUS"
	                                          : "/* evtop:doctor.replica */ SHOW SLAVE STATUS"),
	                  0, NULL, 16);
}

long long ev_doctor_replica_lag(const struct ev_rowset *rs, char *note, size_t size)
{
	if (rs->nrows == 0) {
		snprintf(note, size, "%s", _("not a replica (SHOW REPLICA STATUS is empty)"));
		return -1;
	}
	int c = ev_rowset_col(rs, "Seconds_Behind_Master");
	if (c < 0)
		c = ev_rowset_col(rs, "Seconds_Behind_Source");
	const char *v = c >= 0 ? ev_rowset_cell(rs, 0, (size_t)c)->s : NULL;
	if (v == NULL) {
		snprintf(note, size, "%s",
		         _("replication stopped (Seconds_Behind_Master is NULL)"));
		return -1;
	}
	return strtoll(v, NULL, 10);
}

static void add_hint(struct ev_buf *b, const char *index)
{
	if (index != NULL) {
		char *i = ev_query_quote_ident(index);
		ev_buf_printf(b, " FORCE INDEX (%s)", i);
		free(i);
	}
}

struct ev_query *ev_doctor_query_oldest(const char *table_name, const char *index)
{
	static const char *const names[] = {"create_time", "age_s"};
	struct ev_buf b;
	char *t = ev_query_quote_ident(table_name);
	ev_buf_init(&b);
	ev_buf_printf(&b,
	              "/* evtop:doctor.oldest */ SELECT create_time, TIMESTAMPDIFF(SECOND, "
	              "create_time, NOW()) FROM %s",
	              t);
	add_hint(&b, index);
	ev_buf_adds(&b, " ORDER BY create_time LIMIT 1");
	free(t);
	return text_query("doctor.oldest", ev_buf_steal(&b), N(names), names, 1);
}

struct ev_query *ev_doctor_query_past(const char *table_name, const char *index, int retention_s)
{
	static const char *const names[] = {"n"};
	struct ev_buf b;
	char *t = ev_query_quote_ident(table_name);
	ev_buf_init(&b);
	ev_buf_printf(&b, "/* evtop:doctor.past */ SELECT COUNT(*) FROM (SELECT 1 FROM %s", t);
	add_hint(&b, index);
	ev_buf_printf(&b, " WHERE create_time < NOW() - INTERVAL ? SECOND LIMIT %d) AS p",
	              EV_DOC_PAST_CAP + 1);
	free(t);
	struct ev_query *q = text_query("doctor.past", ev_buf_steal(&b), N(names), names, 1);
	ev_query_add_int(q, retention_s);
	return q;
}
