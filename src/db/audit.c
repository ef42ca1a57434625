/* evtop — reading the shared audit table (db/audit.h). */
#include <config.h>

#include "db/audit.h"

#include <stdio.h>
#include <string.h>

int ev_audit_table_info(struct ev_conn *c, struct ev_table_info *ti, struct ev_error *err)
{
	return ev_conn_table_info(c, EV_AUDIT_TABLE, ti, err);
}

int ev_audit_run(struct ev_conn *c, const struct ev_query *q, struct ev_rowset **rs,
                 struct ev_error *err)
{
	if (ev_conn_run(c, q, rs, err) == 0)
		return 0;
	const struct ev_server_version *v = ev_conn_server(c);
	char text[sizeof(err->msg)];
	ev_audit_error_text(err, v && v->flavour == EV_FLAVOUR_MARIADB ? "mariadb" : "mysql8",
	                    ev_conn_user(c), text, sizeof(text));
	snprintf(err->msg, sizeof(err->msg), "%s", text);
	return -1;
}

int ev_audit_read_page(struct ev_conn *c, const struct ev_audit_req *req, struct ev_query **qp,
                       struct ev_rowset **rs, struct ev_error *err)
{
	struct ev_audit_req r = *req;
	if (r.info != NULL && !r.info->exists)
		r.info = NULL;
	*qp = ev_query_audit(&r, err);
	if (*qp == NULL)
		return -1;
	return ev_audit_run(c, *qp, rs, err);
}
