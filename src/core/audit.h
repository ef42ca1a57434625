/* evtop — the shared audit read: every operator's writes as the evtop_audit table holds them
 * (sql/<flavour>/audit.sql), newest first, keyset-paged by (audit_time, id), filtered; and one
 * event's own history. Queries as SQL text plus parameters, and the words the console and
 * `evtop audit` show for a row (core/audit.c). Nothing here talks to a server. */
#ifndef EV_CORE_AUDIT_H
#define EV_CORE_AUDIT_H

#include "core/cursor.h"
#include "core/model.h"
#include "core/query.h"
#include "core/rowset.h"
#include "core/util.h"

#include <stdbool.h>

/* The table's name: evtop writes it under this name only (core/guard.c). */
#define EV_AUDIT_TABLE "evtop_audit"
/* The detail pane's history of one event: its newest rows. */
#define EV_AUDIT_EVENT_ROWS 20

/* What the read is filtered by (all malloc'd, NULL = not set). event_no is served by
 * idx_event_no and since/until by idx_audit_time; the others no index serves, so a page
 * examines at most a capped number of the index's rows for them (ev_audit_req.cap). */
struct ev_audit_filter {
	char *operator_id; /* operator = ? */
	char *action;      /* retry_now, retry_schedule, cancel, recover */
	char *event_no;
	char *table_name; /* the event table written */
	char *result;     /* applied, skipped, failed */
	char *since;      /* audit_time >= since ('YYYY-MM-DD hh:mm:ss') */
	char *until;      /* audit_time < until */
};

/* Set one term by key: operator, action, event_no, table, result, since, until (also the
 * lists' spellings: event-no, table_name). Validates the value (length, datetime form). */
int ev_audit_filter_set(struct ev_audit_filter *f, const char *key, const char *value,
                        struct ev_error *err);
/* Parse `key=value` terms separated by spaces, values optionally in double quotes (as the
 * lists' filter): `operator=INC-7 action=cancel since="2026-06-01 10:00"`. On error f is left
 * as it was before the call. */
int ev_audit_filter_parse(struct ev_audit_filter *f, const char *text, struct ev_error *err);
/* Whether a term no index serves is set (the page's read is then capped). */
bool ev_audit_filter_capped(const struct ev_audit_filter *f);
void ev_audit_filter_free(struct ev_audit_filter *f);

struct ev_audit_req {
	const struct ev_table_info *info;     /* the table's indexes; NULL = no index hint */
	const struct ev_audit_filter *filter; /* may be NULL */
	struct ev_cursor after;               /* start after this row (unset = first page) */
	int limit;                            /* rows a page, 1 .. EV_PAGE_MAX */
	long long cap; /* capped terms: index rows examined a page (0: EV_SEARCH_CAP_DEFAULT) */
};

/* One page of the audit, newest first: "audit.by_time" through idx_audit_time (audit_time),
 * or "audit.by_event_no" through idx_event_no (event_no) when the filter names an event_no.
 * Asks limit + 1 rows (more?). With a capped term it is a search as the lists' payload search
 * (query.h: q->search): ev_list_take_page folds it, and ev_list_search_note says what it
 * examined. NULL with err for a bad request, or EV_ERR_SCHEMA when info lacks the index. */
struct ev_query *ev_query_audit(const struct ev_audit_req *req, struct ev_error *err);
/* One event's history (table_name, event_id) through idx_table_event, newest first, at most
 * limit rows: "audit.event". NULL with EV_ERR_SCHEMA when info lacks the index. */
struct ev_query *ev_query_audit_event(const struct ev_table_info *info, const char *table_name,
                                      unsigned long long event_id, int limit, struct ev_error *err);

/* The change a row of table (an ev_table_kind, -1 unknown) records, "3 failed → 0 pending",
 * "1 publishing → not applied" (the after_status NULL): each number followed by the table's
 * name of the state in the interface's language (ev_model_status_label); of a table not known
 * the number alone. NULL stays "?", a value not a state stays as it is. malloc'd. */
char *ev_audit_change_text(int table, const char *before_status, const char *after_status);
/* The state a status column's text (before_status, after_status) names: 0..EV_ST_COUNT-1, or -1
 * for NULL or anything else. */
int ev_audit_status(const char *st);
/* The people behind a row: "INC-7 (alice via sudo bob)"-like: operator, then the OS user and
 * SUDO_USER; "-" parts left out. malloc'd. */
char *ev_audit_who_text(const char *operator_id, const char *os_user, const char *sudo_user);

/* The message for an audit read that failed with err (the server's errno in err->code):
 * no table ("no evtop_audit table in this database: sql/mariadb/audit.sql creates it"), no
 * SELECT on it (the grant named), or err's own. flavour: "mariadb" or "mysql8". Into out. */
void ev_audit_error_text(const struct ev_error *err, const char *flavour, const char *db_user,
                         char *out, size_t size);

#endif
