/* evtop — reading the shared audit table (core/audit.h builds the statements): its indexes
 * looked up, one page or one event's history read, and a failure said in words a person can
 * act on (no such table, no SELECT on it, the server gone). */
#ifndef EV_DB_AUDIT_H
#define EV_DB_AUDIT_H

#include "core/audit.h"
#include "db/conn.h"

/* evtop_audit's indexes into ti (ti->exists false when the account sees no such table: it
 * is missing, or the account has no privilege on it). Any thread with its own c. */
int ev_audit_table_info(struct ev_conn *c, struct ev_table_info *ti, struct ev_error *err);

/* Run a read built by ev_query_audit or ev_query_audit_event into *rs. On failure err says
 * it for a person (ev_audit_error_text: the missing table and the file that creates it, the
 * missing grant), err->code stays the server's errno, EV_ERR_SCHEMA or EV_ERR_CONNECT. */
int ev_audit_run(struct ev_conn *c, const struct ev_query *q, struct ev_rowset **rs,
                 struct ev_error *err);

/* One page: req->info from ev_audit_table_info (a table the account cannot see is read
 * without an index hint, so that the server says why: missing, or not allowed); *qp the
 * query run (the caller's, for ev_list_take_page). */
int ev_audit_read_page(struct ev_conn *c, const struct ev_audit_req *req, struct ev_query **qp,
                       struct ev_rowset **rs, struct ev_error *err);

#endif
