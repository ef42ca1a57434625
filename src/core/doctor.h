/* evtop — `evtop doctor` as data and judgement. The schema the model document defines (every
 * column with its type and nullability, every index by its columns), the indexes evtop
 * recommends and what each speeds up, the statements doctor reads the server with, and the
 * rules that turn what the server says into findings: OK, INFO, WARN or FAIL, each with what it
 * breaks or slows down in evtop's own query table and the statement that would fix it (doctor
 * never runs one). Nothing here talks to a server: src/cli/cmd_doctor.c gathers the facts
 * through src/db and hands them to the ev_doctor_check_* functions. */
#ifndef EV_CORE_DOCTOR_H
#define EV_CORE_DOCTOR_H

#include "core/model.h"
#include "core/query.h"
#include "core/util.h"

#include <stdbool.h>
#include <stddef.h>

/* --- the expected schema -------------------------------------------------------------------- */

/* A column as the model document declares it. */
struct ev_doc_column {
	const char *name;
	const char
	        *type; /* "BIGINT UNSIGNED", "VARCHAR(64)", "JSON", "TINYINT", "INT", "DATETIME" */
	bool nullable;
	const char *def; /* the DEFAULT clause's value ("0", "CURRENT_TIMESTAMP ..."), or NULL */
	const char *comment; /* the DDL's COMMENT (the model document's words) */
};

/* An index of the model document, by its columns in order (names may differ on a server). */
struct ev_doc_index {
	const char *name; /* the model's name: PRIMARY, uk_event_no, idx_status_retry_time, ... */
	const char *columns; /* "col,col" */
	bool unique;
	const char *purpose; /* what the applications use it for (the model document's words) */
};

/* An index evtop recommends (sql/recommended-indexes.sql). */
struct ev_doc_recommended {
	const char *name;
	const char *columns;
	const char *speeds_up; /* which of evtop's queries, and the measured gain */
};

struct ev_doc_schema {
	enum ev_table_kind table;
	const char *comment; /* the model's table comment */
	const struct ev_doc_column *columns;
	size_t ncolumns;
	const struct ev_doc_index *indexes;
	size_t nindexes;
	const struct ev_doc_recommended *recommended;
	size_t nrecommended;
	/* The columns the operator actions write (the GRANT UPDATE list of sql/grants.sql). */
	const char *const *action_columns;
	size_t naction_columns;
};

/* The model document's schema of a table kind. */
const struct ev_doc_schema *ev_doctor_schema(enum ev_table_kind t);
/* The column's definition after its name, as the model document writes it:
 * "TINYINT NOT NULL DEFAULT 0", "DATETIME DEFAULT NULL". malloc'd. */
char *ev_doctor_column_ddl(const struct ev_doc_column *c);
/* The collation the model's DDL uses on this flavour (utf8mb4_0900_ai_ci on MySQL 8,
 * utf8mb4_unicode_ci on MariaDB, which lacks it). */
const char *ev_doctor_collation(enum ev_flavour f);

/* --- findings ------------------------------------------------------------------------------- */

/* INFO never changes the exit code: a recommendation, or a fact doctor could not judge. */
enum ev_doc_level {
	EV_DOC_OK,
	EV_DOC_INFO,
	EV_DOC_WARN,
	EV_DOC_FAIL,
};

/* "OK", "INFO", "WARN", "FAIL". */
const char *ev_doc_level_name(enum ev_doc_level l);

struct ev_doc_finding {
	enum ev_doc_level level;
	char *group;   /* "server", "privileges", "outbox", "message" */
	char *check;   /* "version", "table", "column", "index", "collation", "time zone", ... */
	char *subject; /* the column, the index's columns, the table...; may be NULL */
	char *message; /* one line */
	char *impact;  /* what it breaks or slows down in evtop; may be NULL */
	char *fix;     /* the statement (or setting) that fixes it, never run by doctor; or NULL */
};

struct ev_doc_report {
	size_t n;
	struct ev_doc_finding *f;
};

/* Append a finding (every string copied; impact, fix and subject may be NULL). */
void ev_doc_add(struct ev_doc_report *r, enum ev_doc_level level, const char *group,
                const char *check, const char *subject, const char *impact, const char *fix,
                const char *fmt, ...) __attribute__((format(printf, 8, 9)));
/* How many findings of a level. */
size_t ev_doc_count(const struct ev_doc_report *r, enum ev_doc_level level);
/* The exit code: 2 with any FAIL (evtop cannot work with this database), 1 with any WARN, else
 * 0 (INFO, the recommendations among them, does not count). */
int ev_doc_exit_code(const struct ev_doc_report *r);
void ev_doc_report_clear(struct ev_doc_report *r);

/* --- the statements doctor reads the server with (all bounded) ------------------------------- */

/* One row: the statement time limit in effect on this session (MariaDB max_statement_time in
 * seconds, MySQL max_execution_time in ms), innodb_lock_wait_timeout, the read-only switches
 * (read_only, innodb_read_only, and super_read_only on MySQL, else 0), the session time zone,
 * the server's system zone, the session's offset from UTC in seconds, NOW(), DATABASE(). */
struct ev_query *ev_doctor_query_server(enum ev_flavour f);
/* One row or none: ENGINE, TABLE_COLLATION, TABLE_ROWS (an estimate) of a table of the current
 * database. */
struct ev_query *ev_doctor_query_table(const char *table_name);
/* The table's columns: COLUMN_NAME, DATA_TYPE, COLUMN_TYPE, IS_NULLABLE,
 * CHARACTER_MAXIMUM_LENGTH, CHARACTER_SET_NAME. */
struct ev_query *ev_doctor_query_columns(const char *table_name);
/* MariaDB: the table's CREATE TABLE (one row), for its CHECK (json_valid(`col`)) clauses: a
 * JSON column is LONGTEXT with that check. */
struct ev_query *ev_doctor_query_create_table(const char *table_name);
/* Only ever prepared, never executed: a SELECT of `columns` (a NULL-terminated list; NULL = the
 * constant 1) from the table, so the server checks the account's SELECT privilege. */
struct ev_query *ev_doctor_query_select_probe(const char *table_name, const char *const *columns);
/* Only ever prepared: an INSERT into evtop_audit (the server checks the INSERT privilege). */
struct ev_query *ev_doctor_query_audit_probe(void);
/* One row: does evtop_audit exist in the current database (a count). */
struct ev_query *ev_doctor_query_audit_exists(void);
/* The same two for evtop_access_log (doc/privacy.md): its INSERT prepared only, and a count. */
struct ev_query *ev_doctor_query_access_log_probe(void);
struct ev_query *ev_doctor_query_access_log_exists(void);
/* The replica status (SHOW REPLICA STATUS where the server knows it, else SHOW SLAVE STATUS):
 * at most one row per replication channel; an account that may not read it gets error 1227. */
struct ev_query *ev_doctor_query_replica(const struct ev_server_version *v);
/* The lag the rows of that statement say: seconds behind the primary, or -1 with why in note
 * (not a replica; replication stopped). */
long long ev_doctor_replica_lag(const struct ev_rowset *rs, char *note, size_t size);

/* --- the judgement ------------------------------------------------------------------------------
 */

/* What the server said about one table. */
struct ev_doc_column_fact {
	char *name;
	char *data_type;   /* "varchar", "datetime", "longtext", "json", ... */
	char *column_type; /* "varchar(64)", "bigint(20) unsigned", ... */
	char *charset;     /* NULL for non-text columns */
	long long char_len;
	bool nullable;
	bool json_check; /* MariaDB: a CHECK (json_valid(`col`)) exists */
};

struct ev_doc_table_facts {
	const char *name; /* the real table name */
	bool exists;
	/* The SELECT probe failed with "denied" (server errno 1142/1143): the message. NULL when
	 * the account may read the table. */
	char *select_denied;
	char *engine;
	char *collation;
	long long rows; /* TABLE_ROWS, an estimate; -1 unknown */
	struct ev_table_info info;
	size_t ncols;
	struct ev_doc_column_fact *cols;
};

void ev_doc_table_facts_clear(struct ev_doc_table_facts *tf);

/* Judge a server column against the model's: OK, WARN (evtop works, but it differs), FAIL
 * (evtop's comparisons would be wrong). why (at least 256 bytes) says how it differs. */
enum ev_doc_level ev_doctor_judge_column(const struct ev_doc_column *want,
                                         const struct ev_doc_column_fact *have, char *why,
                                         size_t size);
/* Judge a table's collation: the model's utf8mb4_0900_ai_ci or an equivalent (MariaDB's
 * utf8mb4_unicode_ci, utf8mb4_uca1400_ai_ci) is OK; another utf8mb4 collation WARN; anything
 * that is not utf8mb4 FAIL. */
enum ev_doc_level ev_doctor_judge_collation(const char *collation);

/* The schema checks of one table, in the group of its kind ("outbox" / "message"): exists,
 * engine, every column, every index of the model document (found by columns), the collation,
 * and the recommended indexes (INFO when missing, with their size estimate). */
void ev_doctor_check_table(struct ev_doc_report *r, enum ev_table_kind t, enum ev_flavour f,
                           const struct ev_doc_table_facts *tf);

/* What evtop loses without an index whose leading columns are `columns`, given the indexes the
 * server has: the queries of the query table (ev_query_defs) and of the dashboard that would
 * not run ("n/a"), that would scan, and that would use a slower index. malloc'd text, or NULL
 * when none of evtop's queries would pick such an index. *breaks is set when one would not
 * run. */
char *ev_doctor_index_impact(enum ev_table_kind t, const char *table_name,
                             const struct ev_table_info *have, const char *columns, bool *breaks);

/* Estimated bytes of a secondary index on `columns` (model columns) over `rows` rows: each
 * entry holds the key at its declared size (a VARCHAR as many bytes as characters: the
 * model's codes are ASCII), the 8-byte primary key and a 6-byte record header, in pages about
 * 70% full. An estimate, and said so wherever it is shown. */
long long ev_doctor_index_size(enum ev_table_kind t, const char *columns, long long rows);

/* A suspected time zone mismatch from the newest row's distance to NOW() (ahead_s > 0: in
 * the future): ev_zone_judge (core/zone.h) is not EV_ZONE_OK; *shift_s the offset to add to
 * the session zone. */
bool ev_doctor_zone_mismatch(long long ahead_s, long long *shift_s);

/* The server's facts. */
struct ev_doc_server {
	struct ev_server_version version;
	const char *info;      /* mysql_get_server_info() */
	const char *host_info; /* "Localhost via UNIX socket" */
	const char *user;      /* CURRENT_USER() */
	const char *database;  /* DATABASE(), NULL when none is selected */
	bool have_vars;        /* the variables below were read */
	double limit_ms;       /* the statement time limit in effect on the session (0 = none) */
	int want_limit_ms;     /* the one evtop sets (statement_timeout) */
	long long lock_wait_s; /* innodb_lock_wait_timeout */
	bool read_only, innodb_read_only, super_read_only;
	const char *time_zone;        /* @@session.time_zone */
	const char *system_time_zone; /* @@system_time_zone */
	const char *configured_zone;  /* --time-zone / time_zone in the config; NULL = not set */
	long long utc_offset_s;       /* the session zone's offset from UTC now */
};

/* The server checks: flavour and version, the statement time limit, read-only, the session
 * time zone (group "server"). */
void ev_doctor_check_server(struct ev_doc_report *r, const struct ev_doc_server *s);

/* The newest row of a table (core/zone.h's query), for the time zone check. */
struct ev_doc_recent {
	bool checked;         /* the query ran */
	const char *why_not;  /* when not checked: why */
	long long rows;       /* rows read (0 or 1) */
	long long ahead_s;    /* newest create_time - NOW(), seconds */
	const char *newest;   /* its create_time, 'YYYY-MM-DD hh:mm:ss' */
	const char *event_no; /* the newest row's event_no and id */
	unsigned long long id;
	const char *now;      /* NOW() in the session zone */
	long long utc_offset; /* the session zone's offset from UTC, seconds */
	const char *zone;     /* the session zone's name (@@time_zone) */
};

/* Retention (doc/archive.md): the table's size and oldest row against the configured
 * retention_* setting. */
struct ev_doc_retention {
	long long rows;      /* TABLE_ROWS, an estimate; -1 unknown */
	int retention_s;     /* the setting; 0 none */
	bool checked;        /* the oldest row was read */
	const char *why_not; /* when not */
	const char *oldest;  /* its create_time; NULL for an empty table */
	long long oldest_age_s;
	long long past; /* rows created before NOW() - retention (a capped count); -1 not read */
	bool past_capped;
	const char *setting; /* "retention_outbox" / "retention_message" */
};
#define EV_DOC_RETENTION_BIG 10000000LL /* rows: no retention on a larger table is a WARN */
#define EV_DOC_PAST_CAP      100000     /* rows past the retention counted up to this */
/* One row: create_time of the oldest row and its age in seconds (through index, NULL: none). */
struct ev_query *ev_doctor_query_oldest(const char *table_name, const char *index);
/* One row: the rows created before NOW() - retention_s, up to EV_DOC_PAST_CAP + 1. */
struct ev_query *ev_doctor_query_past(const char *table_name, const char *index, int retention_s);
/* The retention finding of a table (in its group): INFO, OK, or WARN when a table of over
 * EV_DOC_RETENTION_BIG rows has none, or its oldest row is over twice the retention old. */
void ev_doctor_check_retention(struct ev_doc_report *r, enum ev_table_kind t,
                               const char *table_name, const struct ev_doc_retention *x);

/* The time zone check of one table (in the table's group): a suspected mismatch is a FAIL. */
void ev_doctor_check_zone(struct ev_doc_report *r, enum ev_table_kind t, const char *table_name,
                          const struct ev_doc_recent *rc);

/* What the account may do with one table. */
struct ev_doc_access {
	const char *table_name;
	const char *database;
	const char *user;              /* CURRENT_USER(): 'user@host' */
	const char *select_denied;     /* NULL = may read; else the server's message */
	bool update_checked;           /* the UPDATE probe was prepared */
	const char *update_denied;     /* NULL = may write the action columns; else why */
	const char *update_error;      /* the probe failed for another reason (not checked) */
	int audit;                     /* evtop_audit: 1 exists, 0 does not, -1 unknown */
	const char *audit_denied;      /* NULL = may INSERT into evtop_audit */
	const char *audit_error;       /* the INSERT probe failed for another reason */
	int access_log;                /* evtop_access_log: 1 exists, 0 does not, -1 unknown */
	const char *access_log_denied; /* NULL = may INSERT into evtop_access_log */
	const char *access_log_error;  /* its INSERT probe failed for another reason */
	enum ev_flavour flavour;
};

/* The privilege checks of one table (group "privileges"): watch (SELECT) and compensate
 * (UPDATE on the action columns, INSERT on evtop_audit), each with the GRANT that fixes it. */
void ev_doctor_check_access(struct ev_doc_report *r, enum ev_table_kind t,
                            const struct ev_doc_access *a);
/* The evtop_audit finding (once, group "privileges"). */
void ev_doctor_check_audit(struct ev_doc_report *r, const struct ev_doc_access *a);
/* The evtop_access_log finding (once, group "privileges"): never worse than INFO, as the local
 * audit file records every unmasking whatever it says. */
void ev_doctor_check_access_log(struct ev_doc_report *r, const struct ev_doc_access *a);

/* The replica-lag check (group "privileges"): err_code 0 = readable (nrows channels; lag the
 * first channel's Seconds_Behind_Master, NULL when replication is stopped or the server is no
 * replica), 1227 = denied, anything else: could not tell (err_msg). */
void ev_doctor_check_replica(struct ev_doc_report *r, const struct ev_doc_server *s, int err_code,
                             const char *err_msg, size_t nrows, const char *lag);

/* The account as a GRANT names it: "w@localhost" -> 'w'@'localhost'. malloc'd. */
char *ev_doctor_grantee(const char *current_user);

#endif
