/* evtop — applying one guarded action (core/guard.h) on the write endpoint: in one
 * transaction the guarded UPDATE and, when it changed the row and evtop_audit exists, the
 * audit row; the local audit file's lines around it. 1 affected row = applied; 0 = skipped,
 * with the row re-read as it is now. Nothing is ever retried: a lock wait timeout or the
 * statement time limit is reported as failed, and a connection lost during COMMIT is
 * resolved by reconnecting and re-reading the row — the database says what happened. */
#ifndef EV_DB_ACTION_H
#define EV_DB_ACTION_H

#include "core/auditlog.h"
#include "core/guard.h"
#include "db/conn.h"

#include <stdbool.h>

/* What a connection may write on one table, found once after connecting. */
struct ev_access {
	bool writable;
	char why[512];    /* when not writable: why, in the operator's words */
	bool audit_table; /* evtop_audit exists: every applied action adds its row there */
	/* A time zone mismatch is suspected on the table (core/zone.h): every comparison with
	 * NOW() is off, so writes are refused (writable false, why says so) unless the operator
	 * said the clock is right (clock_ok). */
	bool clock_suspect;
	bool clock_ok;
	char clock_why[512];
};

/* Check whether c may write table t: the server's read-only switches (@@read_only,
 * @@innodb_read_only, and @@super_read_only on MySQL; a read-only server also marks c
 * read-only), the account's UPDATE privilege on every column the actions write (the server
 * checks a PREPAREd, never executed, UPDATE: column grants and roles count), whether
 * evtop_audit exists, and if it does, the INSERT privilege on it. Returns 0 with a filled in,
 * or -1 with err set when the checks themselves failed (then treat the table as read-only). */
int ev_action_check_access(struct ev_conn *c, enum ev_table_kind t, const char *table_name,
                           struct ev_access *a, struct ev_error *err);
/* The same, and last the time zone check (the table's newest row through its create_time
 * index, judged by core/zone.h): a suspected mismatch refuses writes (why: the row, the offset,
 * the --time-zone that fixes it), unless clock_ok (--clock-ok, the console's clock-ok: the
 * operator knows the zone is right), which lets them through with a->clock_suspect still set.
 * ev_action_check_access is this with clock_ok false. */
int ev_action_check_access_clock(struct ev_conn *c, enum ev_table_kind t, const char *table_name,
                                 bool clock_ok, struct ev_access *a, struct ev_error *err);

enum ev_action_result {
	EV_RESULT_APPLIED, /* the row changed (and its audit row is committed with it) */
	EV_RESULT_SKIPPED, /* the guard matched no row: the row changed since it was read */
	EV_RESULT_FAILED,  /* an error; the database did not change the row */
	EV_RESULT_REFUSED, /* nothing was attempted (read-only, the audit file not writable) */
};

const char *ev_action_result_name(enum ev_action_result r);

struct ev_action_ctx {
	struct ev_conn *conn;           /* the write endpoint */
	const struct ev_access *access; /* from ev_action_check_access for the guard's table */
	struct ev_audit_log *log;       /* the local audit file, open */
	const struct ev_audit_who *who; /* db_user NULL = the connection's CURRENT_USER() */
};

struct ev_action_outcome {
	enum ev_action_result result;
	bool have_now;
	struct ev_guard_row now; /* the row as it is now (re-read), when have_now */
	char msg[640];           /* why skipped, failed or refused; a note when applied */
	bool audit_line_failed;  /* the local audit file's result line was not written */
	char audit_msg[512];     /* why */
};

/* Apply g to the row as seen. In order: the intent line to the audit file (if it cannot be
 * written, nothing is attempted: REFUSED); BEGIN; the guarded UPDATE; when it changed 1 row,
 * the audit INSERT (when the table exists); COMMIT; the row re-read; the result line to the
 * audit file, fsync'ed before this returns. Fills out (clear it with
 * ev_action_outcome_clear) and returns its result. */
enum ev_action_result ev_action_apply(const struct ev_action_ctx *ctx, const struct ev_guard *g,
                                      const struct ev_guard_row *seen,
                                      struct ev_action_outcome *out);
void ev_action_outcome_clear(struct ev_action_outcome *out);

/* Fault injection for the tests, at a known point of ev_action_apply: the hook runs just
 * before COMMIT (it may kill the connection from another session) and just after it (a
 * non-zero return makes apply act as if the COMMIT's answer had been lost). Set it before
 * any thread starts; NULL removes it. */
enum ev_action_point {
	EV_POINT_BEFORE_COMMIT,
	EV_POINT_AFTER_COMMIT,
};
typedef int (*ev_action_fault_fn)(enum ev_action_point point, struct ev_conn *c, void *arg);
void ev_action_set_fault(ev_action_fault_fn fn, void *arg);

/* Record in evtop_access_log (sql/.../audit.sql) that the events event_nos[0..n) of table_name
 * were shown in the clear for reason: one row each, in batches of one transaction, on c (a
 * source's primary). Returns 1 when written, 0 when the table does not exist (the local audit
 * file is then the record), or -1 with err saying why it could not be written (the account
 * may not INSERT into it, the server is read-only, it was lost): the caller says so and goes
 * on, as the local file has the record already. */
int ev_access_log_write(struct ev_conn *c, const struct ev_audit_who *who, const char *table_name,
                        const char *reason, const char *const *event_nos, size_t n,
                        struct ev_error *err);

#endif
