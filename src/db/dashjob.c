/* evtop — the dashboard's refresh as a worker job (see dashjob.h). */
#include <config.h>

#include "db/dashjob.h"

#include "core/doctor.h"
#include "core/i18n.h"
#include "core/text.h"
#include "core/util.h"
#include "db/fan.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char ev_dashjob_all_dim[] = "source";

/* A table's note: at most 190 bytes of text, cut on a whole character. */
static void note_set(char *note, size_t size, const char *text)
{
	snprintf(note, size, "%.*s", (int)ev_utf8_prefix(text, 190), text);
}

void ev_dashjob_arg_free(void *p)
{
	struct ev_dashjob_arg *a = p;
	for (int t = 0; t < EV_TABLE_COUNT; t++) {
		free(a->table_name[t]);
		ev_table_info_clear(&a->info[t]);
		ev_mirror_free(&a->mirror[t]);
	}
	for (int i = 0; i < a->all.n; i++) {
		struct ev_dashjob_src *s = &a->all.src[i];
		free(s->name);
		for (int t = 0; t < EV_TABLE_COUNT; t++) {
			ev_table_info_clear(&s->info[t]);
			free(s->table_name[t]);
		}
	}
	free(a->all.src);
	free(a->all.conns);
	free(a);
}

static void free_result(void *p)
{
	struct ev_dashjob_result *r = p;
	for (int t = 0; t < EV_TABLE_COUNT; t++) {
		ev_table_info_clear(&r->info[t]);
		ev_dash_free(&r->dash[t]);
		ev_mirror_free(&r->mirror[t]);
	}
	for (int i = 0; i < r->nall; i++)
		for (int t = 0; t < EV_TABLE_COUNT; t++)
			ev_table_info_clear(&r->all[i].info[t]);
	free(r->all);
	free(r);
}

/* One source's part of the every-source dashboard: its clock, its tables (when not known
 * yet), the totals of both tables. Runs on a thread of its own (ev_db_fan_run). */
struct part {
	const struct ev_dashjob_arg *arg;
	struct ev_dashjob_result *r;
	int i;
	struct ev_dash *dash[EV_TABLE_COUNT];
	char now[32];
	long long unix_time;
	char server[160];
	bool ok;
	struct ev_error err;
};

static void part_main(int i, void *ctx)
{
	struct part *pt = &((struct part *)ctx)[i];
	const struct ev_dashjob_arg *arg = pt->arg;
	const struct ev_dashjob_src *src = &arg->all.src[pt->i];
	struct ev_dashjob_src_result *out = &pt->r->all[pt->i];
	struct ev_conn *c = arg->all.conns[pt->i];
	struct ev_rowset *rs = NULL;
	struct ev_query *q = ev_query_server_clock();
	int rc = ev_conn_run(c, q, &rs, &pt->err);
	ev_query_free(&q);
	if (rc == 0 && rs->nrows > 0) {
		snprintf(pt->now, sizeof(pt->now), "%s",
		         ev_rowset_cell(rs, 0, 0)->s ? ev_rowset_cell(rs, 0, 0)->s : "");
		pt->unix_time =
		        ev_rowset_cell(rs, 0, 1)->s ? atoll(ev_rowset_cell(rs, 0, 1)->s) : 0;
		const struct ev_server_version *v = ev_conn_server(c);
		snprintf(pt->server, sizeof(pt->server), "%s %d.%d.%d", ev_flavour_name(v->flavour),
		         v->major, v->minor, v->patch);
	}
	ev_rowset_free(&rs);
	for (int t = 0; rc == 0 && t < EV_TABLE_COUNT; t++) {
		const struct ev_table_info *ti = &src->info[t];
		if (src->table_name[t] == NULL)
			continue; /* not one of this source's tables (the config's) */
		if (src->need_info) {
			ti = &out->info[t];
			if (ev_conn_table_info(c, src->table_name[t], &out->info[t], &pt->err) <
			    0) {
				rc = -1;
				break;
			}
		}
		if (!ti->exists)
			continue;
		struct ev_dash_req req = {
		        .info = ti,
		        .table = (enum ev_table_kind)t,
		        .table_name = src->table_name[t],
		        .window_s = arg->window_s,
		        .stuck_threshold_s = arg->stuck_s,
		};
		struct ev_error qerr = {0};
		if (ev_dash_fetch(c, &req, &pt->dash[t], &qerr) < 0 &&
		    qerr.code == EV_ERR_CONNECT) {
			pt->err = qerr;
			rc = -1;
		}
	}
	if (rc == 0 && src->need_info)
		out->got_info = true;
	out->lag = -1;
	if (rc == 0 && src->replica) {
		/* Its figures are as old as its lag. */
		struct ev_query *lq = ev_doctor_query_replica(ev_conn_server(c));
		char note[160];
		if (ev_conn_run(c, lq, &rs, &pt->err) == 0)
			out->lag = ev_doctor_replica_lag(rs, note, sizeof(note));
		ev_rowset_free(&rs);
		ev_query_free(&lq);
	}
	pt->ok = rc == 0;
}

/* Every source at once, in parallel: a row per source, the totals summed. */
static int all_job(struct ev_job *job, struct ev_error *err)
{
	struct ev_dashjob_arg *arg = job->arg;
	struct ev_dashjob_result *r = ev_xcalloc(1, sizeof(*r));
	job->result = r;
	job->free_result = free_result;
	int nall = arg->all.n;
	r->nall = nall;
	r->all = ev_xcalloc((size_t)nall, sizeof(*r->all));
	struct part *parts = ev_xcalloc((size_t)nall, sizeof(*parts));
	for (int i = 0; i < nall; i++)
		parts[i] = (struct part){.arg = arg, .r = r, .i = i};
	ev_db_fan_run(nall, part_main, parts);
	int up = 0;
	for (int i = 0; i < nall; i++) {
		if (parts[i].ok && up++ == 0) {
			snprintf(r->now, sizeof(r->now), "%s", parts[i].now);
			r->unix_time = parts[i].unix_time;
		}
	}
	snprintf(r->server, sizeof(r->server), _("%d of %d sources answer"), up, nall);
	if (up == 0) {
		r->failed = true;
		ev_error_set(&r->err, parts[0].err.code, _("no source answers (%s: %.*s)"),
		             arg->all.src[0].name, (int)ev_utf8_prefix(parts[0].err.msg, 300),
		             parts[0].err.msg);
		*err = r->err;
	}
	for (int t = 0; up > 0 && t < EV_TABLE_COUNT; t++) {
		/* The sources that have the table (by the config): a row each. */
		struct ev_dash **dash = ev_xcalloc((size_t)nall, sizeof(*dash));
		const char **names = ev_xcalloc((size_t)nall, sizeof(*names));
		int k = 0;
		struct ev_buf why;
		ev_buf_init(&why);
		for (int i = 0; i < nall; i++) {
			const struct ev_dashjob_src *src = &arg->all.src[i];
			if (src->table_name[t] == NULL)
				continue;
			names[k] = src->name;
			dash[k++] = parts[i].dash[t];
			if (!parts[i].ok)
				ev_buf_printf(&why, _("%s%s: no answer (%.*s)"),
				              why.len ? "; " : "", src->name,
				              (int)ev_utf8_prefix(parts[i].err.msg, 120),
				              parts[i].err.msg);
			else if (parts[i].dash[t] == NULL)
				ev_buf_printf(&why, _("%s%s: no such table"), why.len ? "; " : "",
				              src->name);
		}
		struct ev_dash_req req = {
		        .table = (enum ev_table_kind)t,
		        .dimension = ev_dashjob_all_dim,
		        .window_s = arg->window_s,
		};
		r->dash[t] = ev_dash_by_source(dash, names, k, &req);
		free(names);
		if (why.len > 0)
			note_set(r->note[t], sizeof(r->note[t]), why.data);
		else if (r->dash[t]->notes != NULL)
			note_set(r->note[t], sizeof(r->note[t]), r->dash[t]->notes);
		ev_buf_free(&why);
		for (int i = 0; i < nall; i++)
			ev_dash_free(&parts[i].dash[t]);
		free(dash);
	}
	free(parts);
	return up == 0 ? -1 : 0;
}

int ev_dashjob_run(struct ev_conn *c, struct ev_job *job, struct ev_error *err)
{
	struct ev_dashjob_arg *arg = job->arg;
	if (arg->all.n > 0)
		return all_job(job, err);
	struct ev_dashjob_result *r = ev_xcalloc(1, sizeof(*r));
	job->result = r;
	job->free_result = free_result;

	struct ev_query *q = ev_query_server_clock();
	struct ev_rowset *rs = NULL;
	if (ev_conn_run(c, q, &rs, err) < 0) {
		ev_query_free(&q);
		r->failed = true;
		r->err = *err;
		return -1;
	}
	snprintf(r->now, sizeof(r->now), "%s",
	         ev_rowset_cell(rs, 0, 0)->s ? ev_rowset_cell(rs, 0, 0)->s : "");
	r->unix_time = ev_rowset_cell(rs, 0, 1)->s ? atoll(ev_rowset_cell(rs, 0, 1)->s) : 0;
	ev_rowset_free(&rs);
	ev_query_free(&q);
	const struct ev_server_version *v = ev_conn_server(c);
	snprintf(r->server, sizeof(r->server), "%s (%s %d.%d.%d)", arg->where,
	         ev_flavour_name(v->flavour), v->major, v->minor, v->patch);

	for (int t = 0; t < EV_TABLE_COUNT; t++) {
		r->mirror[t] = arg->mirror[t];
		arg->mirror[t] = NULL;
	}
	for (int t = 0; t < EV_TABLE_COUNT; t++) {
		struct ev_table_info *ti = arg->need_info ? &r->info[t] : &arg->info[t];
		if (arg->table_name[t] == NULL) {
			note_set(
			        r->note[t], sizeof(r->note[t]),
			        _("not watched on this source (the config's tables leave it out)"));
			continue;
		}
		if (arg->need_info && ev_conn_table_info(c, arg->table_name[t], ti, err) < 0) {
			r->failed = true;
			r->err = *err;
			return -1;
		}
		if (!ti->exists) {
			snprintf(r->note[t], sizeof(r->note[t]),
			         _("%s: no such table in this database"), arg->table_name[t]);
			ev_utf8_fix_tail(r->note[t]);
			continue;
		}
		struct ev_dash_req req = {
		        .info = ti,
		        .table = (enum ev_table_kind)t,
		        .table_name = arg->table_name[t],
		        .dimension = arg->dimension[t],
		        .window_s = arg->window_s,
		        .stuck_threshold_s = arg->stuck_s,
		        .skip = arg->skip[t],
		};
		struct ev_error qerr = {0};
		int frc = r->mirror[t] != NULL
		                  ? ev_mirror_fetch(c, r->mirror[t], &req, &arg->mirror_opts,
		                                    &r->dash[t], &qerr)
		                  : ev_dash_fetch(c, &req, &r->dash[t], &qerr);
		if (frc < 0) {
			if (qerr.code == EV_ERR_CONNECT) {
				r->failed = true;
				r->err = qerr;
				*err = qerr;
				return -1;
			}
			note_set(r->note[t], sizeof(r->note[t]), qerr.msg);
			r->gone[t] = qerr.code == EV_ERR_SCHEMA;
		} else if (r->dash[t] != NULL && r->dash[t]->notes != NULL) {
			/* Why some figures show ? (a time limit hit, an index missing): said under
			 * the table, as the sub-command says it. */
			note_set(r->note[t], sizeof(r->note[t]), r->dash[t]->notes);
		}
		/* The size and history, now and then; best effort (the header leaves it out). */
		if (arg->facts[t] && r->dash[t] != NULL) {
			struct ev_error ferr = {0};
			if (ev_archive_read_facts(c, arg->table_name[t],
			                          ev_index_find(ti, "create_time"),
			                          arg->retention_s[t], &r->facts[t], &ferr) < 0)
				r->facts[t].read = false;
		}
	}
	r->have_info = arg->need_info;
	return 0;
}
