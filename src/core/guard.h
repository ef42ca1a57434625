/* evtop — the operator's guarded writes (PRODUCT.md section 2): each action on one row becomes
 * exactly the single-row UPDATE of the spec's SET/WHERE table, with the row's id and version
 * as seen bound as parameters, or a refusal that says why before any SQL exists. Also the
 * statements around it (the read-back of the row, the evtop_audit INSERT, the access probes)
 * and the audit record as one JSON line. Pure: nothing here talks to a server or a file. */
#ifndef EV_CORE_GUARD_H
#define EV_CORE_GUARD_H

#include "core/model.h"
#include "core/query.h"
#include "core/rowset.h"
#include "core/util.h"

#include <stdbool.h>

/* Refusals (err->code of ev_guard_build). Distinct from the EV_ERR_* values. */
enum {
	EV_GUARD_REFUSED_STATUS = 100, /* the row's status is not one the action starts from */
	EV_GUARD_REFUSED_FINAL,        /* succeeded or cancelled: final, never changed */
	EV_GUARD_REFUSED_DELETED,      /* deleted = 1 */
	EV_GUARD_REFUSED_RECOVER_OFF,  /* recover on the message table is not enabled */
	EV_GUARD_REFUSED_PROTECTED,    /* a protected type and the operator did not confirm */
	EV_GUARD_REFUSED_REASON,       /* cancel without a reason; a reason that is not UTF-8 */
	EV_GUARD_REFUSED_BAD_REQUEST,  /* not an operator action; a bad table name or delay */
};

/* fail_reason and the audit reason are cut to this many characters (VARCHAR(1000)). */
#define EV_GUARD_REASON_MAX 1000

/* The columns of one event that the actions read, as text from the server. Strings are
 * malloc'd (NULL = SQL NULL); a row filled by ev_guard_row_from_rowset is freed with
 * ev_guard_row_clear. */
struct ev_guard_row {
	unsigned long long id;
	char *event_no;
	int status; /* event_status / publish_status */
	long long retry_count;
	long long max_retry_count;
	char *next_retry_time;
	long long version;
	int deleted;
	char *event_type;
	char *biz_type;         /* biz_type / aggregate_type */
	char *last_handle_time; /* message table (NULL in the outbox) */
	char *locked_by;        /* outbox (NULL in the message table) */
	char *lock_until;       /* outbox */
	char *fail_reason;
	char *update_time;
	char *db_now; /* the server's NOW() when the row was read, if the query asked for it */
};

/* Everything the builder needs besides the row. */
struct ev_guard_req {
	enum ev_table_kind table;
	const char *table_name;         /* the real name (a valid identifier); NULL = the model's */
	enum ev_action action;          /* RETRY_NOW, RETRY_SCHEDULE, CANCEL or RECOVER */
	const struct ev_guard_row *row; /* the row as the operator saw it */
	const char *reason;             /* the operator's reason; NULL or "" = none */
	int schedule_delay_s;           /* RETRY_SCHEDULE: next_retry_time = NOW() + this */
	int stuck_threshold_s;          /* RECOVER on the message table */
	bool recover_message;           /* RECOVER on the message table is enabled */
	char *const *protected_types;   /* NULL-terminated tokens (PAY, REFUND, ...); may be NULL */
	bool confirmed_protected;       /* the operator confirmed acting on a protected type */
};

/* A built action: the UPDATE and what the confirmation shows. */
struct ev_guard {
	enum ev_table_kind table;
	enum ev_action action;
	char *table_name;
	struct ev_query *update; /* the guarded UPDATE: SQL with '?' and its bound parameters */
	struct ev_query *match;  /* SELECT COUNT(*) with the UPDATE's exact WHERE and parameters:
	                            1 when the UPDATE would change the row now (--dry-run) */
	int from_status;         /* the row's status as seen */
	int to_status;           /* the status the UPDATE sets (the same for a scheduled retry) */
	char *fail_reason;       /* what the UPDATE writes into fail_reason, or NULL */
	char *audit_reason;    /* for the audit: fail_reason, else the operator's reason; or NULL */
	bool grants_attempt;   /* a retry of an exhausted event: exactly one more attempt */
	char *protected_token; /* the protected token the row matched (confirmed), or NULL */
	char *change;          /* one line: what will change, column by column */
	char *notice;          /* what the confirmation must say (one more attempt; the message
	                          table's recover risk), or NULL */
	int stuck_threshold_s; /* as requested (to explain a skip) */
};

/* Build the guarded UPDATE for req into g (zeroed first). Returns 0, or -1 with err->code one
 * of EV_GUARD_REFUSED_* and err->msg saying why in words the operator can act on (statuses by
 * name). On -1, g holds nothing to free. The conditions that need the server's clock (the
 * outbox lock has expired, the message row is past the stuck threshold) are not judged here:
 * they are in the UPDATE's WHERE, evaluated with the server's NOW() at the moment of the write. */
int ev_guard_build(const struct ev_guard_req *req, struct ev_guard *g, struct ev_error *err);
/* Free what g holds and zero it. */
void ev_guard_clear(struct ev_guard *g);

/* The first protected token that is a whole '_'-separated word (case-insensitive) of
 * event_type or of biz_type: PAY protects PAY_SUCCESS and REFUND_PAY, not PAYMENT. NULL if
 * none. The result points into tokens. */
const char *ev_guard_protected_token(const char *event_type, const char *biz_type,
                                     char *const *tokens);

/* The model document's text for an action's fail_reason, or NULL (retries write none).
 * Outbox: recover '发布器锁定超时，等待重新发布', cancel '业务已关闭，取消事件发布' (the model
 * document's own UPDATEs); message table: see guard.c. */
const char *ev_guard_model_text(enum ev_table_kind t, enum ev_action a);
/* text + "：" + reason (just text when the reason is empty), cut to EV_GUARD_REASON_MAX code
 * points. malloc'd. The reason must be valid UTF-8 (ev_guard_build checks). */
char *ev_guard_compose_reason(const char *text, const char *reason);
/* A malloc'd copy of s cut to at most max code points, never splitting a UTF-8 sequence. s
 * must be valid UTF-8. */
char *ev_guard_cut_chars(const char *s, size_t max);
/* Is s valid UTF-8 (no overlong forms, no surrogates)? */
bool ev_guard_utf8_valid(const char *s);
/* Whether an operator's reason may be written (into fail_reason and the audit): NULL or ""
 * is none and fine; otherwise valid UTF-8 without a control character (C0 such as tab,
 * newline, BEL and ESC, DEL, or C1 U+0080..U+009F). Returns 0, or -1 with err
 * (EV_GUARD_REFUSED_REASON) naming the character and where it is. */
int ev_guard_reason_check(const char *reason, struct ev_error *err);

/* --- the row ----------------------------------------------------------------------------- */

/* The row of one event, every column the actions read plus the server's NOW(): by id (the
 * read-back after a write, always on the write endpoint) and by event_no (LIMIT 2; deleted
 * rows included, so that the action can refuse them by name). */
struct ev_query *ev_guard_query_row(enum ev_table_kind t, const char *table_name,
                                    unsigned long long id);
struct ev_query *ev_guard_query_row_by_no(enum ev_table_kind t, const char *table_name,
                                          const char *event_no);
/* Fill row from row r of a result of those queries. Returns -1 with err set when a column is
 * missing or not a number. */
int ev_guard_row_from_rowset(const struct ev_rowset *rs, size_t r, enum ev_table_kind t,
                             struct ev_guard_row *row, struct ev_error *err);
void ev_guard_row_copy(struct ev_guard_row *dst, const struct ev_guard_row *src);
void ev_guard_row_clear(struct ev_guard_row *row);
/* "publish_status 3 (failed), retry_count 2, max_retry_count 5, next_retry_time NULL,
 * version 7" — the row as the operator reads it in a result line. malloc'd. */
char *ev_guard_row_describe(enum ev_table_kind t, const struct ev_guard_row *row);
/* Why the guard matched no row, judged from the row as seen and as it is now (now == NULL:
 * the row is gone). malloc'd. */
char *ev_guard_explain_skip(const struct ev_guard *g, const struct ev_guard_row *seen,
                            const struct ev_guard_row *now);
/* Did the write of g happen, judged from the row as it is now: version = seen + 1 and the
 * status is the action's target (for resolving a COMMIT whose answer was lost). */
bool ev_guard_row_shows_applied(const struct ev_guard *g, const struct ev_guard_row *seen,
                                const struct ev_guard_row *now);

/* --- access -------------------------------------------------------------------------------- */

/* The server's read-only switches: one row of 0/1 values named read_only, innodb_read_only
 * (and super_read_only on MySQL). */
struct ev_query *ev_guard_query_server_read_only(enum ev_flavour f);
/* One row, one count: does evtop_audit exist in the current database? */
struct ev_query *ev_guard_query_audit_exists(void);
/* An UPDATE that writes every column any operator action writes on the table, with the
 * actions' WHERE columns and "AND 1 = 0". Only ever PREPARED (never executed): preparing it
 * makes the server check the account's UPDATE privileges, roles and column grants included. */
struct ev_query *ev_guard_query_probe(enum ev_table_kind t, const char *table_name);

/* --- audit ----------------------------------------------------------------------------------- */

/* Who acts: fixed for a session. Strings are the caller's. */
struct ev_audit_who {
	const char *source;         /* the evtop source name */
	const char *os_user;        /* the OS user running evtop */
	const char *sudo_user;      /* SUDO_USER, or NULL */
	const char *ssh_connection; /* SSH_CONNECTION, or NULL */
	const char *operator_id;    /* --operator / asked; NULL = not given */
	const char *db_user;        /* CURRENT_USER() of the write connection */
};

enum ev_audit_result {
	EV_AUDIT_INTENT,  /* the local file's line before the write */
	EV_AUDIT_APPLIED, /* 1 row changed */
	EV_AUDIT_SKIPPED, /* the guard matched no row (the row changed) */
	EV_AUDIT_FAILED,  /* an error: lock wait timeout, time limit, lost connection, ... */
};

const char *ev_audit_result_name(enum ev_audit_result r);

struct ev_audit_rec {
	const char *time; /* local file: the local clock, ISO 8601 UTC; unused by the INSERT,
	                     whose audit_time is the server's NOW(3) */
	const struct ev_audit_who *who;
	const struct ev_guard *g;
	const struct ev_guard_row *before; /* the row as seen */
	enum ev_audit_result result;
	const char *error; /* why skipped or failed; NULL otherwise */
};

/* The audit record as one JSON object and a newline: time, source, os_user, sudo_user,
 * ssh_connection, operator, db_user, table, id (a string), event_no, action, before {status,
 * retry_count, max_retry_count, next_retry_time, version}, after_status (null unless applied),
 * reason, result, error. malloc'd. */
char *ev_audit_json_line(const struct ev_audit_rec *r);
/* The audit line of an operator's word that the clock is right while a time zone mismatch
 * is suspected (the console's clock-ok, --clock-ok): action "clock-ok", the operator's reason,
 * the table and the suspicion it lifts (clock_suspect), result "allowed"; id and event_no
 * null. time as in ev_audit_rec. malloc'd, ending in a newline. */
char *ev_audit_clock_ok_line(const char *time, const struct ev_audit_who *who,
                             const char *table_name, const char *reason, const char *suspect);
/* The helpers of every local audit line (jansson's json_t): a string, valid UTF-8 whatever
 * the input (NULL: null); a member set (out of memory is fatal); who did it ("time",
 * "source", "os_user", "sudo_user", "ssh_connection", "operator", "db_user"); the object as
 * one compact line ending in a newline (o is consumed; malloc'd). */
struct json_t *ev_audit_jstr(const char *s);
void ev_audit_jset(struct json_t *o, const char *key, struct json_t *v);
void ev_audit_who_fields(struct json_t *o, const char *time, const struct ev_audit_who *w);
char *ev_audit_jline(struct json_t *o);
/* The line recording that an operator showed masked personal data in the clear (--unmask,
 * doc/privacy.md): action "unmask", the reason, the table, the events shown (event_nos, at
 * most 1000 and then "..."; id and event_no the single event's when only one was shown),
 * result "shown". Written before the data is shown. malloc'd, ending in a newline. */
char *ev_audit_unmask_line(const char *time, const struct ev_audit_who *who, const char *table_name,
                           const char *reason, const char *const *event_nos, size_t n);
/* The INSERT into evtop_audit of every column of sql/.../audit.sql (audit_time = NOW(3), in
 * the same transaction as the UPDATE). Nullable values are bound as text and turned into NULL
 * by NULLIF(?, '') (after_status: NULLIF(?, -1)). */
struct ev_query *ev_guard_query_audit_insert(const struct ev_audit_rec *r);
/* The INSERT into evtop_access_log (sql/.../audit.sql) of one row per event shown in the clear:
 * event_nos[0..n) of a showing of shown_count events in all (written in batches of at most
 * EV_ACCESS_LOG_BATCH rows), db_user the connection's CURRENT_USER(), action "unmask". */
#define EV_ACCESS_LOG_BATCH 100
struct ev_query *ev_guard_query_access_insert(const struct ev_audit_who *who,
                                              const char *table_name, const char *reason,
                                              const char *const *event_nos, size_t n,
                                              size_t shown_count);
/* One count: the evtop_audit rows recording g applied to the row as seen by this operator
 * from this source (the same transaction as the UPDATE wrote it, so it is proof the write
 * committed; another evtop's record of the same change, on another node, is not). */
struct ev_query *ev_guard_query_audit_find(const struct ev_guard *g,
                                           const struct ev_guard_row *seen,
                                           const struct ev_audit_who *who);

#endif
