#include <config.h>

#include "db/fetch.h"

#include "core/i18n.h"

#include <string.h>
#include <time.h>

static double mono_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

int ev_dash_fetch(struct ev_conn *c, const struct ev_dash_req *req, struct ev_dash **out,
                  struct ev_error *err)
{
	struct ev_dash *d = ev_dash_new(req);
	double t0 = mono_ms();

	*out = NULL;
	for (int w = 0; w < EV_DQ_COUNT; w++) {
		struct ev_error qerr = {0};
		if (req->skip & (1u << w)) {
			d->skipped |= 1u << w;
			continue;
		}
		struct ev_query *q = ev_dash_query(req, (enum ev_dash_query)w, &qerr);
		struct ev_rowset *rs = NULL;
		if (q == NULL) {
			if (qerr.code != EV_ERR_SCHEMA) {
				*err = qerr;
				ev_dash_free(&d);
				return -1;
			}
			ev_dash_unknown(d, (enum ev_dash_query)w, qerr.msg);
			continue;
		}
		if (ev_conn_run(c, q, &rs, &qerr) < 0) {
			ev_query_free(&q);
			if (qerr.code == EV_ERR_TIMEOUT) {
				/* TRANSLATORS: why a query's figures are unknown, after its name:
				 * "pending: timeout". */
				ev_dash_unknown(d, (enum ev_dash_query)w, _("timeout"));
				continue;
			}
			*err = qerr;
			ev_dash_free(&d);
			return -1;
		}
		ev_dash_add(d, (enum ev_dash_query)w, rs);
		ev_rowset_free(&rs);
		ev_query_free(&q);
	}
	/* The clock the figures depend on: a suspected zone mismatch marks them (a check that
	 * cannot run says nothing). */
	const char *name =
	        req->table_name ? req->table_name : ev_model_table(req->table)->default_name;
	struct ev_zone_newest zn;
	struct ev_error zerr = {0};
	if (ev_zone_fetch(c, name, req->info, &zn, &zerr) == 0) {
		d->clock_suspect = ev_zone_reason(name, &zn);
		d->clock_summary = ev_zone_summary(&zn);
	}
	ev_zone_newest_clear(&zn);
	/* The caller carries skipped figures over (ev_dash_carry) and then finishes. */
	if (d->skipped == 0)
		ev_dash_finish(d);
	d->server_ms = mono_ms() - t0;
	*out = d;
	return 0;
}

int ev_zone_fetch(struct ev_conn *c, const char *table_name, const struct ev_table_info *info,
                  struct ev_zone_newest *n, struct ev_error *err)
{
	struct ev_query *q =
	        ev_zone_query_newest(table_name, info ? ev_index_find(info, "create_time") : NULL);
	struct ev_rowset *rs = NULL;
	int rc = ev_conn_run(c, q, &rs, err);

	ev_query_free(&q);
	memset(n, 0, sizeof(*n));
	if (rc < 0)
		return -1;
	rc = ev_zone_from_rowset(rs, n, err);
	ev_rowset_free(&rs);
	return rc;
}
