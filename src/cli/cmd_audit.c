/* evtop — `evtop audit`: who did what, from the shared evtop_audit table of each chosen source,
 * newest first, a page at a time (--after), filtered; several sources merged newest first,
 * each row naming the source it was read from (doc/cli.md). */
#include <config.h>

#include "cli/cli.h"
#include "cli/fanout.h"
#include "cli/options.h"
#include "cli/session.h"
#include "core/audit.h"
#include "core/format.h"
#include "core/i18n.h"
#include "core/text.h"
#include "db/audit.h"
#include "db/conn.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The column that names the source a merged row was read from (the table's own `source` is
 * what the writing evtop called its source). */
#define READ_FROM "read_from"

static void usage_audit(FILE *out)
{
	fputs(_("Usage: evtop audit [OPTION]...\n"
	        "Every operator's writes as the evtop_audit table holds them, newest first, a "
	        "page\n"
	        "at a time: time, operator, OS and DB user, action, table, event_no, the status\n"
	        "before and after, reason, result.\n"),
	      out);
	fputs("\n", out);
	/* TRANSLATORS: keep the option names and their values (retry_now, applied, ...). */
	fputs(_("Filters: --operator=ID --action=retry_now|retry_schedule|cancel|recover\n"
	        "  --result=applied|skipped|failed --event-no=NO --table=outbox|message\n"
	        "  --since=TIME --until=TIME (audit_time). --operator, --action, --result and\n"
	        "  --table are read inside a capped number of rows a page (--search-cap).\n"
	        "Each page ends with the cursor of its last row: pass it with --after for the\n"
	        "next. With several sources, they are merged newest first, each row naming the\n"
	        "source it was read from (read_from).\n"),
	      out);
	fputs("\n", out);
	ev_opts_usage(out);
}

/* The audit filter of the options, or -1 (said) for a filter the audit has not. */
static int audit_filter(const struct ev_opts *o, struct ev_audit_filter *af)
{
	struct ev_filter rest;
	struct ev_error err = {0};
	ev_filter_copy(&rest, &o->filter);
	free(rest.event_no);
	free(rest.since);
	free(rest.until);
	rest.event_no = rest.since = rest.until = NULL;
	bool other = !ev_filter_empty(&rest);
	ev_filter_free(&rest);
	if (other) {
		fprintf(stderr, "evtop audit: %s\n",
		        _("filters by --operator, --action, --result, --event-no, --table, --since "
		          "and --until only"));
		return -1;
	}
	const char *keys[] = {"operator", "action", "result", "event_no", "since", "until"};
	const char *vals[] = {o->audit_operator,  o->audit_action, o->audit_result,
	                      o->filter.event_no, o->filter.since, o->filter.until};
	for (int i = 0; i < 6; i++)
		if (vals[i] != NULL && ev_audit_filter_set(af, keys[i], vals[i], &err) < 0) {
			ev_session_report(&err);
			return -1;
		}
	return 0;
}

/* One source's page. */
struct audit_part {
	struct ev_query *q;
	struct ev_rowset *rs;
	bool ran;
};

struct audit_ctx {
	const struct ev_fan *f;
	const struct ev_opts *o;
	const struct ev_audit_filter *filter;
	const struct ev_mcursor *mc; /* per source (several), or NULL */
	const struct ev_cursor *after;
	struct audit_part *parts;
};

static int fetch_audit(struct ev_fan_src *fs, void *arg)
{
	struct audit_ctx *x = arg;
	int i = (int)(fs - x->f->v);
	struct audit_part *p = &x->parts[i];
	struct ev_table_info ti = {0};
	struct ev_audit_filter f = *x->filter;

	if (x->mc != NULL && x->mc[i].state == EV_MC_DONE)
		return 0;
	/* --table names the event table by its kind: this source's name for it. */
	if (x->o->table >= 0)
		f.table_name = (char *)ev_opts_table_name(&fs->o, (enum ev_table_kind)x->o->table);
	if (ev_audit_table_info(fs->s.conn, &ti, &fs->err) < 0)
		return -1;
	struct ev_audit_req req = {
	        .info = &ti,
	        .filter = &f,
	        .limit = x->o->limit,
	        .cap = x->o->cfg.search_cap,
	};
	if (x->mc != NULL && x->mc[i].state == EV_MC_AT)
		req.after = x->mc[i].c;
	else if (x->mc == NULL)
		req.after = *x->after;
	int rc = ev_audit_read_page(fs->s.conn, &req, &p->q, &p->rs, &fs->err);
	ev_table_info_clear(&ti);
	if (rc < 0)
		return p->q == NULL && fs->err.code == EV_ERR_USAGE ? -2 : -1;
	p->ran = true;
	return 0;
}

/* The page to print and what follows it. */
struct audit_out {
	struct ev_rowset *rows; /* as read (READ_FROM's EV_SOURCE_COL first when merged) */
	char *next;             /* the next page's cursor, or NULL */
	char *note;             /* a capped read's note, or NULL */
};

static void take_one(struct audit_ctx *x, struct audit_out *out)
{
	struct audit_part *p = &x->parts[0];
	struct ev_list_page pg;
	if (!p->ran)
		return;
	ev_list_take_page(p->q, &p->rs, &pg);
	if (pg.more)
		out->next = ev_cursor_encode(&pg.next);
	out->note = ev_list_search_note(&pg, p->rs->nrows);
	out->rows = p->rs;
	p->rs = NULL;
}

/* The sources' pages merged newest first (core/cursor.h, ev_list_merge). */
static void take_merged(struct audit_ctx *x, struct audit_out *out)
{
	int n = x->f->n;
	struct ev_query **q = ev_xcalloc((size_t)n, sizeof(*q));
	struct ev_rowset **rs = ev_xcalloc((size_t)n, sizeof(*rs));
	struct ev_cursor *stop = ev_xcalloc((size_t)n, sizeof(*stop));
	const char **names = ev_xcalloc((size_t)n, sizeof(*names));
	struct ev_mcursor *mc = ev_xcalloc((size_t)n, sizeof(*mc));
	struct ev_list_page pg = {0};
	bool more = false;

	memcpy(mc, x->mc, (size_t)n * sizeof(*mc));
	for (int i = 0; i < n; i++) {
		struct audit_part *p = &x->parts[i];
		names[i] = x->f->v[i].src->name;
		if (!p->ran)
			continue;
		unsigned long long examined = 0;
		pg.search |= p->q->search;
		ev_list_search_fold(p->q, &p->rs, &examined, &stop[i]);
		pg.examined += examined;
		pg.stopped |= stop[i].set;
		q[i] = p->q;
		rs[i] = p->rs;
	}
	out->rows = ev_list_merge(q, rs, names, n, x->o->limit, stop, mc, &more);
	pg.more = more;
	if (out->rows != NULL) {
		if (more)
			out->next = ev_mcursor_encode(mc, n);
		out->note = ev_list_search_note(&pg, out->rows->nrows);
	}
	free(q);
	free(rs);
	free(stop);
	free(names);
	free(mc);
}

/* Which table row r's table_name is, in the source the row was read from (READ_FROM's, or the
 * one chosen): an ev_table_kind, or -1. */
static int row_table(const struct ev_opts *o, const struct ev_rowset *rs, size_t r)
{
	const char *from = ev_rowset_get(rs, r, EV_SOURCE_COL);
	const struct ev_source *s = o->src;
	for (int i = 0; from != NULL && i < o->cfg.nsources; i++)
		if (strcmp(o->cfg.sources[i].name, from) == 0)
			s = &o->cfg.sources[i];
	return s ? ev_source_table_kind(s, ev_rowset_get(rs, r, "table_name")) : -1;
}

/* The rows as printed: json and csv every column of the table (READ_FROM first when merged);
 * the table format the columns a person reads, the statuses named by their table. */
static struct ev_rowset *project(const struct ev_opts *o, const struct ev_rowset *rs, bool human)
{
	static const char *const human_cols[] = {"audit_time", "operator",   "os_user",  "db_user",
	                                         "action",     "table_name", "event_no", "change",
	                                         "reason",     "result"};
	const char *names[24];
	enum ev_ctype types[24];
	int src[24];
	size_t n = 0;
	int sc = ev_rowset_col(rs, EV_SOURCE_COL);

	if (sc >= 0) {
		names[n] = READ_FROM;
		types[n] = EV_CT_TEXT;
		src[n++] = sc;
	}
	for (size_t c = 0; !human && c < rs->ncols && n < 24; c++) {
		if ((int)c == sc || rs->cols[c].name[0] == '_')
			continue;
		names[n] = rs->cols[c].name;
		types[n] = rs->cols[c].type;
		src[n++] = (int)c;
	}
	for (size_t i = 0; human && i < sizeof(human_cols) / sizeof(human_cols[0]); i++) {
		int c = ev_rowset_col(rs, human_cols[i]);
		names[n] = strcmp(human_cols[i], "table_name") == 0 ? "table" : human_cols[i];
		types[n] = c >= 0 ? rs->cols[c].type : EV_CT_TEXT;
		src[n++] = c;
	}
	struct ev_rowset *out = ev_rowset_new(n, names, types);
	for (size_t r = 0; r < rs->nrows; r++) {
		struct ev_cell *cells = ev_rowset_add_row(out);
		for (size_t i = 0; i < n; i++) {
			if (src[i] >= 0) {
				const struct ev_cell *cell = ev_rowset_cell(rs, r, (size_t)src[i]);
				ev_cell_set(&cells[i], cell->s, cell->len);
				continue;
			}
			char *change = ev_audit_change_text(row_table(o, rs, r),
			                                    ev_rowset_get(rs, r, "before_status"),
			                                    ev_rowset_get(rs, r, "after_status"));
			ev_cell_set(&cells[i], change, strlen(change));
			free(change);
		}
	}
	return out;
}

/* The page printed; the note and the next cursor under it (table) or on stderr (json, csv). */
static int print_audit(const struct ev_opts *o, const struct audit_out *out)
{
	struct ev_rowset *p = project(o, out->rows, o->format == EV_FMT_TABLE);
	int rc = ev_format_write(stdout, p, o->format, 48);
	FILE *meta = o->format == EV_FMT_TABLE ? stdout : stderr;
	ev_rowset_free(&p);
	if (out->note != NULL)
		fprintf(meta, "-- %s\n", out->note);
	if (out->next != NULL)
		fprintf(meta, _("-- more audit rows: --after %s\n"), out->next);
	if (rc < 0 || fflush(stdout) != 0 || ferror(stdout)) {
		ev_say_error(_("cannot write the output: %s"), strerror(errno));
		return EV_EXIT_FAILURE;
	}
	return EV_EXIT_OK;
}

/* Each source that failed said ("evtop: [source: ]message"); the exit code they make. */
static int report_failures(const struct ev_fan *f, int rc)
{
	for (int k = 0; k < f->n; k++) {
		const struct ev_fan_src *fs = &f->v[k];
		if (!fs->up || fs->rc == 0)
			continue;
		struct ev_error e = {0};
		if (f->multi)
			ev_error_set(&e, fs->err.code, "%s: %.400s", fs->src->name, fs->err.msg);
		else
			e = fs->err;
		ev_session_report(&e);
		rc = fs->rc == -2 && rc != EV_EXIT_UNKNOWN ? EV_EXIT_USAGE : EV_EXIT_UNKNOWN;
	}
	return rc;
}

/* The per-source positions of a merged read, from --after or every source at its start. */
static int start_cursors(const struct ev_fan *f, const char *after, struct ev_mcursor **out)
{
	struct ev_error err = {0};
	struct ev_mcursor *mc = ev_xcalloc((size_t)f->n, sizeof(*mc)), *given = NULL;
	int ngiven = 0;
	for (int i = 0; i < f->n; i++)
		snprintf(mc[i].name, sizeof(mc[i].name), "%s", f->v[i].src->name);
	*out = mc;
	if (after == NULL)
		return 0;
	if (ev_mcursor_decode(after, &given, &ngiven, &err) < 0) {
		ev_session_report(&err);
		return -1;
	}
	for (int g = 0; g < ngiven; g++) {
		int i = 0;
		while (i < f->n && strcmp(mc[i].name, given[g].name) != 0)
			i++;
		if (i == f->n) {
			ev_say_error(_("the cursor names source '%.64s', which is not one of "
			               "the sources chosen"),
			             given[g].name);
			free(given);
			return -1;
		}
		mc[i] = given[g];
	}
	free(given);
	return 0;
}

/* One page read on every chosen source and printed. */
static int run_audit(struct ev_opts *o, const struct ev_audit_filter *af)
{
	struct ev_error err = {0};
	struct ev_cursor after = {0};
	struct ev_mcursor *mc = NULL;
	struct audit_out out = {0};
	struct ev_fan f;
	int rc;

	if (o->after != NULL && o->nchosen <= 1 && ev_cursor_decode(o->after, &after, &err) < 0) {
		ev_session_report(&err);
		return EV_EXIT_USAGE;
	}
	if (ev_fan_open(&f, o, false, &err) < 0) {
		ev_session_report(&err);
		ev_fan_close(&f);
		return EV_EXIT_UNKNOWN;
	}
	ev_fan_report(&f, o->cfg.lag_warning_s);
	rc = ev_fan_up(&f) < f.n ? EV_EXIT_UNKNOWN : EV_EXIT_OK;
	if (o->nchosen > 1 && start_cursors(&f, o->after, &mc) < 0) {
		free(mc);
		ev_fan_close(&f);
		return EV_EXIT_USAGE;
	}
	struct audit_ctx x = {.f = &f, .o = o, .filter = af, .mc = mc, .after = &after};
	x.parts = ev_xcalloc((size_t)f.n, sizeof(*x.parts));
	ev_fan_run(&f, fetch_audit, &x);
	rc = report_failures(&f, rc);
	if (o->nchosen <= 1)
		take_one(&x, &out);
	else
		take_merged(&x, &out);
	if (out.rows != NULL && print_audit(o, &out) != EV_EXIT_OK)
		rc = EV_EXIT_FAILURE;
	for (int i = 0; i < f.n; i++) {
		ev_rowset_free(&x.parts[i].rs);
		ev_query_free(&x.parts[i].q);
	}
	free(x.parts);
	ev_rowset_free(&out.rows);
	free(out.next);
	free(out.note);
	free(mc);
	ev_fan_close(&f);
	return rc;
}

int ev_cmd_audit(int argc, char **argv)
{
	struct ev_opts o;
	struct ev_audit_filter af = {0};
	int rc = ev_session_parse(&o, argc, argv, usage_audit, 0, 0);
	if (rc >= 0) {
		ev_opts_free(&o);
		return rc;
	}
	if (audit_filter(&o, &af) < 0)
		rc = EV_EXIT_USAGE;
	else
		rc = run_audit(&o, &af);
	ev_audit_filter_free(&af);
	ev_opts_free(&o);
	return rc;
}
