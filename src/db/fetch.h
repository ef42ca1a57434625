/* evtop — multi-query reads built from core's queries: the dashboard of one table. Used by
 * the sub-commands directly and by the console through its worker. */
#ifndef EV_DB_FETCH_H
#define EV_DB_FETCH_H

#include "core/dashboard.h"
#include "core/zone.h"
#include "db/conn.h"

/* Run the dashboard's queries for req on c and fold them into *out. A query that times out
 * or needs a missing index leaves its figures unknown (with a note) and the rest stand.
 * Returns -1 (and no dashboard) only when the connection is lost or the table is missing.
 * With req->skip, the skipped queries are not run and the dashboard is left unfinished: the
 * caller calls ev_dash_carry and then ev_dash_finish. */
int ev_dash_fetch(struct ev_conn *c, const struct ev_dash_req *req, struct ev_dash **out,
                  struct ev_error *err);

/* Read the newest row of table_name (core/zone.h, through the index whose first column is
 * create_time in info; info NULL: the primary key) and judge it into *n (clear it with
 * ev_zone_newest_clear). Returns -1 with err set when the query failed. */
int ev_zone_fetch(struct ev_conn *c, const char *table_name, const struct ev_table_info *info,
                  struct ev_zone_newest *n, struct ev_error *err);

#endif
