/* evtop — `evtop list`, `evtop show`, `evtop trail`, `evtop trace`. */
#include <config.h>

#include "cli/cli.h"
#include "cli/fanout.h"
#include "cli/options.h"
#include "cli/session.h"
#include "core/auditlog.h"
#include "core/format.h"
#include "core/i18n.h"
#include "core/rowmask.h"
#include "core/text.h"
#include "db/action.h"
#include "db/conn.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Columns people read in a table; json and csv get every column. */
static const char *const table_cols_message[] = {"id",
                                                 "event_no",
                                                 "event_type",
                                                 "biz_type",
                                                 "biz_id",
                                                 "event_status",
                                                 "retry_count",
                                                 "max_retry_count",
                                                 "next_retry_time",
                                                 "last_handle_time",
                                                 "fail_reason",
                                                 "create_time",
                                                 NULL};
static const char *const table_cols_outbox[] = {
        "id",        "event_no",       "event_type",  "aggregate_type",  "aggregate_id",
        "topic",     "publish_status", "retry_count", "max_retry_count", "next_retry_time",
        "locked_by", "lock_until",     "fail_reason", "create_time",     NULL};

/* The rows to print: a leading "table" column, then the query's columns (or, for the table
 * format, the readable subset with the status named). */
/* Mask what a source read by the config's rules (doc/privacy.md), unless the source has
 * `mask = off` or --unmask asks for the clear text. */
static void mask_read(const struct ev_opts *o, const struct ev_source *src, struct ev_rowset *rs)
{
	if (o->unmask == NULL && src->mask)
		ev_mask_rowset(&o->cfg.mask, rs);
}

/* The events of rs that source fs read (rows merged from several sources name theirs). */
static const char **rows_of(bool merged, const struct ev_fan_src *fs, const struct ev_rowset *rs,
                            size_t *n)
{
	const char **nos = ev_xcalloc(rs->nrows + 1, sizeof(*nos));
	*n = 0;
	for (size_t r = 0; r < rs->nrows; r++) {
		const char *from = merged ? ev_rowset_get(rs, r, "source") : NULL;
		if (merged && (from == NULL || strcmp(from, fs->src->name) != 0))
			continue;
		const char *no = ev_rowset_get(rs, r, "event_no");
		nos[(*n)++] = no ? no : "";
	}
	return nos;
}

/* --unmask's record in evtop_access_log on each source's primary, after the local file's:
 * where the table exists and the account may INSERT into it. res holds the rows of source
 * `only`, or with only NULL the rows of every source of f. What cannot be written there is
 * said on stderr (the local file holds the record, so the data is still shown). */
static void access_log_unmask(const struct ev_opts *o, struct ev_fan *f,
                              const struct ev_fan_src *only, struct ev_audit_who *who,
                              struct ev_rowset *const *res, const enum ev_table_kind *kinds, int n)
{
	if (o->cfg.read_only) {
		ev_say_error("%s", _("note: --unmask recorded in the local audit file only "
		                     "(read-only: evtop_access_log is not written)"));
		return;
	}
	for (int k = 0; k < f->n; k++) {
		struct ev_fan_src *fs = &f->v[k];
		struct ev_conn *primary = NULL;
		struct ev_error err = {0};
		if (!fs->up || (only != NULL && fs != only))
			continue;
		who->source = fs->src->name ? fs->src->name : "default";
		for (int i = 0; i < n; i++) {
			const struct ev_rowset *rs = res[kinds[i]];
			size_t m = 0;
			if (rs == NULL || rs->nrows == 0)
				continue;
			const char **nos = rows_of(only == NULL && f->multi, fs, rs, &m);
			int rc = 1;
			if (m > 0 && primary == NULL && fs->on_replica) {
				/* Reads came from the replica; the record goes to the primary. */
				primary = ev_conn_new(fs->src, &o->cfg);
				if (o->password != NULL)
					ev_conn_set_password(primary, o->password);
				rc = ev_conn_connect(primary, &err) < 0 ? -1 : 1;
			}
			if (m > 0 && rc == 1)
				rc = ev_access_log_write(primary ? primary : fs->s.conn, who,
				                         ev_opts_table_name(&fs->o, kinds[i]),
				                         o->unmask, nos, m, &err);
			if (rc < 0) {
				if (f->multi)
					ev_say_error(_("note: %s: --unmask recorded in the local "
					               "audit file only: %s"),
					             fs->src->name, err.msg);
				else
					ev_say_error(_("note: --unmask recorded in the local audit "
					               "file only: %s"),
					             err.msg);
			}
			free(nos);
		}
		ev_conn_free(&primary);
	}
}

/* --unmask: the local audit file records who showed which events in the clear and why, before
 * anything is shown (res[t]: what each table's output will hold), and then, where it exists,
 * evtop_access_log on the sources' primaries. -1 (said on stderr) when the local file cannot
 * be written: then nothing is shown. */
static int audit_unmask(const struct ev_opts *o, struct ev_fan *f, const struct ev_fan_src *only,
                        struct ev_rowset *const *res, const enum ev_table_kind *kinds, int n)
{
	struct ev_error err = {0};
	struct ev_audit_log log = {.fd = -1};
	struct ev_audit_ident ident = {0};
	int rc = 0;

	if (o->unmask == NULL)
		return 0;
	char *path = ev_audit_log_default_path();
	if (path == NULL || ev_audit_log_open(&log, path, &err) < 0) {
		ev_say_error(_("--unmask refused: %s (showing data in the clear is audited "
		               "there first); nothing shown"),
		             path ? err.msg : _("no home directory for the audit file"));
		free(path);
		return -1;
	}
	free(path);
	ev_audit_ident_fill(&ident);
	struct ev_audit_who who = {
	        .source = o->src && o->src->name ? o->src->name : "default",
	        .os_user = ident.os_user,
	        .sudo_user = ident.sudo_user,
	        .ssh_connection = ident.ssh_connection,
	        .operator_id = o->cfg.operator_id,
	};
	for (int i = 0; i < n && rc == 0; i++) {
		const struct ev_rowset *rs = res[kinds[i]];
		if (rs == NULL || rs->nrows == 0)
			continue;
		const char **nos = ev_xcalloc(rs->nrows, sizeof(*nos));
		for (size_t r = 0; r < rs->nrows; r++) {
			const char *no = ev_rowset_get(rs, r, "event_no");
			nos[r] = no ? no : "";
		}
		char now[32];
		ev_audit_time_now(now);
		char *line = ev_audit_unmask_line(now, &who, ev_opts_table_name(o, kinds[i]),
		                                  o->unmask, nos, rs->nrows);
		if (ev_audit_log_append(&log, line, &err) < 0) {
			ev_say_error(_("--unmask refused: %s; nothing shown"), err.msg);
			rc = -1;
		}
		free(line);
		free(nos);
	}
	ev_audit_log_close(&log);
	if (rc == 0)
		access_log_unmask(o, f, only, &who, res, kinds, n);
	ev_audit_ident_clear(&ident);
	return rc;
}

/* archived: -1 no such column (the lists); 0 or 1 a last column "archived" (show, trail,
 * trace: whether the row was found in the archive table). */
static struct ev_rowset *project_as(const struct ev_rowset *rs, enum ev_table_kind t, bool human,
                                    struct ev_rowset *into, int archived)
{
	const struct ev_table_def *def = ev_model_table(t);
	const char *const *want = t == EV_TABLE_OUTBOX ? table_cols_outbox : table_cols_message;
	const char *names[64];
	enum ev_ctype types[64];
	int src[64];
	size_t n = 0;

	/* Rows merged from several sources carry their source first. */
	int source_col = ev_rowset_col(rs, EV_SOURCE_COL);
	if (source_col >= 0) {
		names[n] = "source";
		types[n] = EV_CT_TEXT;
		src[n++] = source_col;
	}
	/* The table format heads each table's block instead. */
	if (!human) {
		names[n] = "table";
		types[n] = EV_CT_TEXT;
		src[n++] = -1;
	}
	if (human) {
		for (size_t i = 0; want[i] != NULL; i++) {
			int c = ev_rowset_col(rs, want[i]);
			if (c < 0)
				continue;
			names[n] = strcmp(want[i], def->status_col) == 0 ? "status" : want[i];
			types[n] = rs->cols[c].type;
			src[n++] = c;
		}
	} else {
		for (size_t c = 0; c < rs->ncols && n < 64; c++) {
			if ((int)c == source_col)
				continue;
			names[n] = rs->cols[c].name;
			types[n] = rs->cols[c].type;
			src[n++] = (int)c;
		}
	}
	/* Last, so that a CSV reader's column positions stay as they were. */
	if (!human && archived >= 0 && n < 64) {
		names[n] = "archived";
		types[n] = EV_CT_INT;
		src[n++] = -2;
	}
	struct ev_rowset *out = into ? into : ev_rowset_new(n, names, types);
	int status_col = ev_rowset_col(rs, def->status_col);
	for (size_t r = 0; r < rs->nrows; r++) {
		struct ev_cell *cells = ev_rowset_add_row(out);
		for (size_t i = 0; i < n; i++) {
			if (src[i] == -2) {
				ev_cell_set(&cells[i], archived > 0 ? "1" : "0", 1);
				continue;
			}
			if (src[i] < 0) {
				ev_cell_set(&cells[i], def->key, strlen(def->key));
				continue;
			}
			const struct ev_cell *cell = ev_rowset_cell(rs, r, (size_t)src[i]);
			if (human && src[i] == status_col && cell->s != NULL) {
				/* The state's name in the interface's language. */
				char *label =
				        ev_xasprintf("%s %s", cell->s,
				                     ev_model_status_label(def, atoi(cell->s)));
				ev_cell_set(&cells[i], label, strlen(label));
				free(label);
			} else {
				ev_cell_set(&cells[i], cell->s, cell->len);
			}
		}
	}
	return out;
}

static struct ev_rowset *project(const struct ev_rowset *rs, enum ev_table_kind t, bool human,
                                 struct ev_rowset *into)
{
	return project_as(rs, t, human, into, -1);
}

static void usage_list(FILE *out)
{
	fputs(_("Usage: evtop list KIND [OPTION]...\n"
	        "List events of one kind, oldest or most urgent first, a page at a time.\n"),
	      out);
	/* TRANSLATORS: the heading of the list kinds in evtop list --help. */
	fprintf(out, "\n%s\n", _("Kinds:"));
	for (int k = 0; k < EV_LIST_COUNT; k++)
		if (k != EV_LIST_TRAIL && k != EV_LIST_TRACE)
			fprintf(out, "  %-18s %s\n", ev_list_name((enum ev_list_kind)k),
			        ev_list_help((enum ev_list_kind)k));
	fputs("\n", out);
	fputs(_("Each page ends with the cursor of its last row; pass it with --after to get the\n"
	        "next page (with --table). Without --table both tables are listed.\n"),
	      out);
	fputs("\n", out);
	ev_opts_usage(out);
}

/* The cursor of a table's next page, where a script finds it: under the table's block in the
 * table format, on stderr otherwise. */
static void print_more(FILE *where, enum ev_table_kind t, const char *next)
{
	/* TRANSLATORS: the table as people read it, then the options that get the next page. */
	fprintf(where, _("-- more %s rows: --table %s --after %s\n"),
	        ev_model_table_label(ev_model_table(t)), ev_model_table(t)->key, next);
}

/* Write the per-table results: the table format as one block per table — its header even
 * with no rows, then its "-- more" line when it has one (next[t], may be NULL) — json as one
 * array whose objects carry their "table", csv for one table. */
static int write_results(const struct ev_opts *o, struct ev_rowset *const *res,
                         const enum ev_table_kind *kinds, int n, char *const *next,
                         char *const *note)
{
	int rc = 0;

	if (o->format == EV_FMT_TABLE) {
		for (int i = 0; i < n; i++) {
			const struct ev_rowset *rs = res[kinds[i]];
			if (rs == NULL)
				continue;
			if (n > 1)
				printf(rs->nrows == 1 ? _("# %s (%s): %zu row\n")
				                      : _("# %s (%s): %zu rows\n"),
				       ev_model_table_label(ev_model_table(kinds[i])),
				       ev_opts_table_name(o, kinds[i]), rs->nrows);
			if (ev_format_write(stdout, rs, o->format, 48) < 0)
				rc = -1;
			if (note != NULL && note[kinds[i]] != NULL)
				printf("-- %s\n", note[kinds[i]]);
			if (next != NULL && next[kinds[i]] != NULL)
				print_more(stdout, kinds[i], next[kinds[i]]);
			if (n > 1 && i + 1 < n)
				putchar('\n');
		}
		return rc;
	}
	if (o->format == EV_FMT_CSV) {
		for (int i = 0; i < n; i++)
			if (res[kinds[i]] != NULL &&
			    ev_format_write(stdout, res[kinds[i]], o->format, 0) < 0)
				rc = -1;
		return rc;
	}
	/* json: join the arrays ("[\n{..},\n{..}\n]\n") of each table into one. */
	bool first = true;
	fputs("[", stdout);
	for (int i = 0; i < n; i++) {
		const struct ev_rowset *rs = res[kinds[i]];
		if (rs == NULL || rs->nrows == 0)
			continue;
		char *text = NULL;
		size_t len = 0;
		FILE *mem = open_memstream(&text, &len);
		if (mem == NULL)
			ev_fatal(_("out of memory (open_memstream)"));
		ev_format_write(mem, rs, EV_FMT_JSON, 0);
		fclose(mem);
		if (len > 5) {
			fputs(first ? "\n" : ",\n", stdout);
			fwrite(text + 2, 1, len - 5, stdout);
			first = false;
		}
		free(text);
	}
	fputs(first ? "]\n" : "\n]\n", stdout);
	return fflush(stdout) == 0 && !ferror(stdout) ? rc : -1;
}

/* One source's page of one table. */
struct list_part {
	struct ev_query *q;
	struct ev_rowset *rs;
	bool ran;
};

struct list_ctx {
	const struct ev_fan *f;
	enum ev_list_kind kind;
	enum ev_table_kind t;
	const char *a1, *a2;
	const struct ev_mcursor *mc; /* per source (multi), or NULL */
	const struct ev_cursor *after;
	struct list_part *parts;
};

static int fetch_part(struct ev_fan_src *fs, void *arg)
{
	struct list_ctx *x = arg;
	int i = (int)(fs - x->f->v);
	struct list_part *p = &x->parts[i];
	enum ev_table_kind t = x->t;
	struct ev_opts *o = &fs->o;

	if (!(fs->src->tables & (1u << t)))
		return 0; /* the config says this source has no such table */
	if (x->mc != NULL && x->mc[i].state == EV_MC_DONE)
		return 0;
	if (ev_session_check_table(&fs->s, t, &fs->err) < 0)
		return -1;
	struct ev_list_req req = {
	        .info = &fs->s.info[t],
	        .table = t,
	        .table_name = ev_opts_table_name(o, t),
	        .kind = x->kind,
	        .filter = &o->filter,
	        .limit = o->limit,
	        .stuck_threshold_s = o->cfg.stuck_threshold_s,
	        .high_retry_min = o->cfg.high_retry_min,
	        .window_s = o->cfg.window_s,
	        .search_cap = o->cfg.search_cap,
	        .object_type = x->a1,
	        .object_id = x->a2,
	        .trace_id = x->a1,
	};
	if (x->mc != NULL && x->mc[i].state == EV_MC_AT)
		req.after = x->mc[i].c;
	else if (x->mc == NULL)
		req.after = *x->after;
	p->q = ev_query_list(&req, &fs->err);
	if (p->q == NULL)
		return fs->err.code == EV_ERR_SCHEMA ? -1 : -2;
	if (ev_conn_run(fs->s.conn, p->q, &p->rs, &fs->err) < 0)
		return -1;
	mask_read(o, fs->src, p->rs);
	p->ran = true;
	return 0;
}

/* Merge the sources' pages; a source without the table has no more rows. A payload search's
 * pages are folded first; *pg sums what they examined. */
static struct ev_rowset *merge_parts(const struct ev_fan *f, enum ev_table_kind t,
                                     struct list_part *parts, int limit, struct ev_mcursor *mc,
                                     bool *more, struct ev_list_page *pg)
{
	struct ev_query **q = ev_xcalloc((size_t)f->n, sizeof(*q));
	struct ev_rowset **rs = ev_xcalloc((size_t)f->n, sizeof(*rs));
	struct ev_cursor *stop = ev_xcalloc((size_t)f->n, sizeof(*stop));
	const char **names = ev_xcalloc((size_t)f->n, sizeof(*names));
	memset(pg, 0, sizeof(*pg));
	for (int i = 0; i < f->n; i++) {
		if (parts[i].ran) {
			unsigned long long examined = 0;
			pg->search |= parts[i].q->search;
			ev_list_search_fold(parts[i].q, &parts[i].rs, &examined, &stop[i]);
			pg->examined += examined;
			pg->stopped |= stop[i].set;
			q[i] = parts[i].q;
			rs[i] = parts[i].rs;
		} else if (!(f->v[i].src->tables & (1u << t))) {
			mc[i].state = EV_MC_DONE; /* no such table there */
		}
		names[i] = f->v[i].src->name;
	}
	struct ev_rowset *m = ev_list_merge(q, rs, names, f->n, limit, stop, mc, more);
	pg->more = *more;
	free(q);
	free(rs);
	free(stop);
	free(names);
	return m;
}

/* The per-source positions of a merged list: from --after, or every source at its start. */
static int source_cursors(const struct ev_fan *f, const char *after, struct ev_mcursor **out,
                          struct ev_error *err)
{
	struct ev_mcursor *mc = ev_xcalloc((size_t)f->n, sizeof(*mc));
	for (int i = 0; i < f->n; i++)
		snprintf(mc[i].name, sizeof(mc[i].name), "%s", f->v[i].src->name);
	if (after != NULL) {
		struct ev_mcursor *given = NULL;
		int ngiven = 0;
		if (ev_mcursor_decode(after, &given, &ngiven, err) < 0) {
			free(mc);
			return -1;
		}
		for (int g = 0; g < ngiven; g++) {
			int i = 0;
			while (i < f->n && strcmp(mc[i].name, given[g].name) != 0)
				i++;
			if (i == f->n) {
				ev_error_set(
				        err, EV_ERR_USAGE,
				        _("the cursor names source '%.64s', which is not one of "
				          "the sources chosen"),
				        given[g].name);
				free(given);
				free(mc);
				return -1;
			}
			mc[i] = given[g];
		}
		free(given);
	}
	*out = mc;
	return 0;
}

/* Say a source's failure: "evtop: [source: ]message". */
static void report_source(const struct ev_fan *f, const struct ev_fan_src *fs)
{
	if (!f->multi) {
		ev_session_report(&fs->err);
		return;
	}
	struct ev_error e = {0};
	ev_error_set(&e, fs->err.code, "%s: %.400s", fs->src->name, fs->err.msg);
	ev_session_report(&e);
}

/* What a payload search says of its page: the terms, then what it found and examined
 * (malloc'd, the terms' text made safe for a terminal); NULL for a list without them. */
static char *search_note(const struct ev_filter *f, const struct ev_list_page *pg, size_t matches)
{
	char *said = ev_list_search_note(pg, matches);
	if (said == NULL)
		return NULL;
	char *terms = ev_filter_json_text(f);
	char *safe = ev_text_sanitize(terms ? terms : "", terms ? strlen(terms) : 0);
	/* TRANSLATORS: a payload search's note under its page: the terms, then what it found. */
	char *out = ev_xasprintf(_("search %s: %s"), safe, said);
	free(said);
	free(terms);
	free(safe);
	return out;
}

static struct ev_rowset *with_source(const struct ev_rowset *rs, const char *source);

/* A trail's or a trace's JSON and CSV carry an `archived` column (0 online, 1 from the archive
 * table); -1: no such column (the other lists, the table format). */
static int archived_col(const struct ev_opts *o, enum ev_list_kind kind)
{
	return (kind == EV_LIST_TRAIL || kind == EV_LIST_TRACE) && o->format != EV_FMT_TABLE ? 0
	                                                                                     : -1;
}

/* The archived part of a trail or a trace (first page only) added to res in JSON and CSV: its
 * rows from each source's TABLE_archive, masked, after the online ones. */
static void archived_rows_in(const struct ev_opts *o, struct ev_fan *f, enum ev_list_kind kind,
                             const char *a1, const char *a2, struct ev_rowset **res,
                             const enum ev_table_kind *kinds, int n)
{
	if (o->after != NULL)
		return;
	for (int i = 0; i < n; i++) {
		enum ev_table_kind t = kinds[i];
		for (int k = 0; k < f->n; k++) {
			struct ev_fan_src *fs = &f->v[k];
			struct ev_error err = {0};
			if (!fs->up || !(fs->src->tables & (1u << t)))
				continue;
			char *name = ev_xasprintf("%s_archive", ev_opts_table_name(&fs->o, t));
			struct ev_query *q =
			        ev_query_archived_list(t, name, kind, a1, a2, o->limit);
			struct ev_rowset *rs = NULL;
			if (ev_conn_run(fs->s.conn, q, &rs, &err) == 0 && rs->nrows > 0) {
				if (rs->nrows > (size_t)o->limit)
					ev_rowset_truncate(rs, (size_t)o->limit);
				mask_read(&fs->o, fs->src, rs);
				if (f->multi) {
					struct ev_rowset *m = with_source(rs, fs->src->name);
					ev_rowset_free(&rs);
					rs = m;
				}
				if (res[t] == NULL)
					res[t] = project_as(rs, t, false, NULL, 1);
				else
					project_as(rs, t, false, res[t], 1);
			}
			ev_rowset_free(&rs);
			ev_query_free(&q);
			free(name);
		}
	}
}

/* What run_lists gathers per table: the rows, the next page's cursor, a search's note. */
struct list_out {
	struct ev_rowset *res[EV_TABLE_COUNT];
	char *next[EV_TABLE_COUNT];
	char *note[EV_TABLE_COUNT];
};

static void list_out_free(struct list_out *out)
{
	for (int t = 0; t < EV_TABLE_COUNT; t++) {
		ev_rowset_free(&out->res[t]);
		free(out->next[t]);
		free(out->note[t]);
	}
}

/* The options a list refuses before it connects; --after decoded into *after (one source).
 * Returns 0, or EV_EXIT_USAGE (said). */
static int list_usage(const struct ev_opts *o, int n, struct ev_cursor *after)
{
	struct ev_error err = {0};

	if (o->after != NULL) {
		if (n != 1) {
			ev_say_error("%s",
			             _("--after needs --table (a cursor belongs to one table)"));
			return EV_EXIT_USAGE;
		}
		if (o->nchosen <= 1 && ev_cursor_decode(o->after, after, &err) < 0) {
			ev_session_report(&err);
			return EV_EXIT_USAGE;
		}
	}
	if (o->format == EV_FMT_CSV && n != 1) {
		ev_say_error("%s", _("--format csv needs --table (the two tables have different "
		                     "columns)"));
		return EV_EXIT_USAGE;
	}
	if (o->table >= 0 && ev_filter_unsupported(&o->filter, (enum ev_table_kind)o->table)) {
		ev_say_error(_("the %s table has no %s column"),
		             ev_model_table_label(ev_model_table((enum ev_table_kind)o->table)),
		             ev_filter_unsupported(&o->filter, (enum ev_table_kind)o->table));
		return EV_EXIT_USAGE;
	}
	return 0;
}

/* One source's page of table x->t as the list's page. */
static void take_page(const struct ev_opts *o, const struct list_ctx *x, struct list_out *out)
{
	enum ev_table_kind t = x->t;
	struct list_part *p = &x->parts[0];
	if (!p->ran)
		return;
	struct ev_list_page pg;
	ev_list_take_page(p->q, &p->rs, &pg);
	if (pg.more)
		out->next[t] = ev_cursor_encode(&pg.next);
	out->note[t] = search_note(&o->filter, &pg, p->rs->nrows);
	out->res[t] =
	        project_as(p->rs, t, o->format == EV_FMT_TABLE, NULL, archived_col(o, x->kind));
}

/* The sources' pages of table x->t merged into the list's page. */
static void take_merged(const struct ev_opts *o, const struct ev_fan *f, const struct list_ctx *x,
                        struct list_out *out)
{
	enum ev_table_kind t = x->t;
	struct ev_mcursor *page = ev_xcalloc((size_t)f->n, sizeof(*page));
	memcpy(page, x->mc, (size_t)f->n * sizeof(*page));
	bool more = false;
	struct ev_list_page pg;
	struct ev_rowset *m = merge_parts(f, t, x->parts, o->limit, page, &more, &pg);
	if (m != NULL) {
		if (more)
			out->next[t] = ev_mcursor_encode(page, f->n);
		out->note[t] = search_note(&o->filter, &pg, m->nrows);
		out->res[t] =
		        project_as(m, t, o->format == EV_FMT_TABLE, NULL, archived_col(o, x->kind));
		ev_rowset_free(&m);
	}
	free(page);
}

/* Table x->t on every source: their failures said, their pages taken into out. Returns rc
 * raised by the failures. */
static int list_table(const struct ev_opts *o, struct ev_fan *f, struct list_ctx *x,
                      struct list_out *out, int rc)
{
	x->parts = ev_xcalloc((size_t)f->n, sizeof(struct list_part));
	ev_fan_run(f, fetch_part, x);
	for (int k = 0; k < f->n; k++) {
		if (!f->v[k].up || f->v[k].rc == 0)
			continue;
		report_source(f, &f->v[k]);
		if (f->v[k].rc == -2 && rc != EV_EXIT_UNKNOWN)
			rc = EV_EXIT_USAGE;
		else
			rc = EV_EXIT_UNKNOWN;
	}
	if (o->nchosen <= 1)
		take_page(o, x, out);
	else
		take_merged(o, f, x, out);
	for (int k = 0; k < f->n; k++) {
		ev_rowset_free(&x->parts[k].rs);
		ev_query_free(&x->parts[k].q);
	}
	free(x->parts);
	return rc;
}

/* The pages written; JSON and CSV say their notes and next cursors on stderr. Returns 0, or
 * EV_EXIT_FAILURE when the output could not be written (said). */
static int print_lists(const struct ev_opts *o, const struct list_out *out,
                       const enum ev_table_kind *kinds, int n)
{
	int rc = 0;
	if (write_results(o, out->res, kinds, n, out->next, out->note) < 0) {
		ev_say_error(_("cannot write the output: %s"), strerror(errno));
		rc = EV_EXIT_FAILURE;
	}
	for (int t = 0; t < EV_TABLE_COUNT; t++) {
		if (out->note[t] != NULL && o->format != EV_FMT_TABLE)
			fprintf(stderr, "-- %s: %s\n", ev_model_table((enum ev_table_kind)t)->key,
			        out->note[t]);
		if (out->next[t] != NULL && o->format != EV_FMT_TABLE)
			print_more(stderr, (enum ev_table_kind)t, out->next[t]);
	}
	return rc;
}

/* Run one list page per table and print them. */
static int run_lists(struct ev_opts *o, enum ev_list_kind kind, const char *a1, const char *a2)
{
	struct ev_error err = {0};
	struct ev_fan f;
	enum ev_table_kind kinds[EV_TABLE_COUNT];
	int n = ev_session_tables(o, kinds);
	int rc;
	struct ev_cursor after = {0};
	struct list_out out = {{NULL}};

	if ((rc = list_usage(o, n, &after)) != 0)
		return rc;
	if (ev_fan_open(&f, o, false, &err) < 0) {
		ev_session_report(&err);
		ev_fan_close(&f);
		return EV_EXIT_UNKNOWN;
	}
	ev_fan_report(&f, o->cfg.lag_warning_s);
	rc = ev_fan_up(&f) < f.n ? EV_EXIT_UNKNOWN : EV_EXIT_OK;
	struct ev_mcursor *mc = NULL;
	if (o->nchosen > 1 && source_cursors(&f, o->after, &mc, &err) < 0) {
		ev_session_report(&err);
		ev_fan_close(&f);
		return EV_EXIT_USAGE;
	}
	for (int i = 0; i < n; i++) {
		if (ev_filter_unsupported(&o->filter, kinds[i]) != NULL)
			continue; /* a filter on an outbox-only column: that table only */
		struct list_ctx x = {
		        .f = &f,
		        .kind = kind,
		        .t = kinds[i],
		        .a1 = a1,
		        .a2 = a2,
		        .mc = mc,
		        .after = &after,
		};
		rc = list_table(o, &f, &x, &out, rc);
	}
	free(mc);
	if (archived_col(o, kind) == 0)
		archived_rows_in(o, &f, kind, a1, a2, out.res, kinds, n);
	if (audit_unmask(o, &f, NULL, out.res, kinds, n) < 0) {
		list_out_free(&out);
		ev_fan_close(&f);
		return EV_EXIT_FAILURE;
	}
	if (print_lists(o, &out, kinds, n) != 0)
		rc = EV_EXIT_FAILURE;
	list_out_free(&out);
	ev_fan_close(&f);
	return rc;
}

int ev_cmd_list(int argc, char **argv)
{
	struct ev_opts o;
	int rc = ev_session_parse(&o, argc, argv, usage_list, 1, 1);
	if (rc >= 0) {
		ev_opts_free(&o);
		return rc;
	}
	int kind = ev_list_parse(o.args[0]);
	if (kind < 0 || kind == EV_LIST_TRAIL || kind == EV_LIST_TRACE) {
		if (kind >= 0)
			ev_say_error(_("unknown list '%s' (evtop list --help shows the kinds; use "
			               "evtop trail / evtop trace)"),
			             o.args[0]);
		else
			ev_say_error(_("unknown list '%s' (evtop list --help shows the kinds)"),
			             o.args[0]);
		ev_opts_free(&o);
		return EV_EXIT_USAGE;
	}
	rc = run_lists(&o, (enum ev_list_kind)kind, NULL, NULL);
	ev_opts_free(&o);
	return rc;
}

static void usage_trail(FILE *out)
{
	fputs(_("Usage: evtop trail TYPE ID [OPTION]...\n"
	        "Every event of one business object (biz_type + biz_id, or aggregate_type +\n"
	        "aggregate_id in the outbox), in creation order.\n"),
	      out);
	fputs("\n", out);
	ev_opts_usage(out);
}

/* After a trail's or a trace's first page in the table format: its events in the tables'
 * archives (evtop archive's TABLE_archive, where they exist), printed after it, masked as the
 * rest (JSON and CSV have them in their one output, marked archived 1). */
static void archived_part(struct ev_opts *o, enum ev_list_kind kind, const char *a1, const char *a2)
{
	struct ev_error err = {0};
	struct ev_fan f;
	enum ev_table_kind kinds[EV_TABLE_COUNT];
	int n = ev_session_tables(o, kinds);
	if (o->after != NULL || o->format != EV_FMT_TABLE)
		return; /* JSON and CSV: in the list's own output (archived_rows_in) */
	if (ev_fan_open(&f, o, false, &err) < 0) {
		ev_fan_close(&f);
		return;
	}
	for (int k = 0; k < f.n; k++) {
		struct ev_fan_src *fs = &f.v[k];
		for (int i = 0; i < n && fs->up; i++) {
			enum ev_table_kind t = kinds[i];
			char *name = ev_xasprintf("%s_archive", ev_opts_table_name(&fs->o, t));
			struct ev_query *q =
			        ev_query_archived_list(t, name, kind, a1, a2, o->limit);
			struct ev_rowset *rs = NULL;
			if (ev_conn_run(fs->s.conn, q, &rs, &err) == 0 && rs->nrows > 0) {
				bool more = rs->nrows > (size_t)o->limit;
				if (more)
					ev_rowset_truncate(rs, (size_t)o->limit);
				mask_read(&fs->o, fs->src, rs);
				struct ev_rowset *one[EV_TABLE_COUNT] = {NULL};
				one[t] = rs;
				char *safe = ev_text_sanitize(name, strlen(name));
				if (audit_unmask(o, &f, fs, one, &t, 1) < 0) {
					/* said; nothing shown in the clear unaudited */
				} else {
					struct ev_rowset *p = project(rs, t, true, NULL);
					char count[32];
					snprintf(count, sizeof(count), "%zu%s", rs->nrows,
					         more ? "+" : "");
					putchar('\n');
					if (f.multi)
						printf(rs->nrows == 1 ? _("# archived in %s on "
						                          "source %s: %s row\n")
						                      : _("# archived in %s on "
						                          "source %s: %s "
						                          "rows\n"),
						       safe, fs->src->name, count);
					else
						printf(rs->nrows == 1
						               ? _("# archived in %s: %s row\n")
						               : _("# archived in %s: %s rows\n"),
						       safe, count);
					ev_format_write(stdout, p, o->format, 48);
					ev_rowset_free(&p);
				}
				free(safe);
			}
			ev_rowset_free(&rs);
			ev_query_free(&q);
			free(name);
		}
	}
	ev_fan_close(&f);
}

int ev_cmd_trail(int argc, char **argv)
{
	struct ev_opts o;
	int rc = ev_session_parse(&o, argc, argv, usage_trail, 2, 2);
	if (rc < 0) {
		rc = run_lists(&o, EV_LIST_TRAIL, o.args[0], o.args[1]);
		if (rc == EV_EXIT_OK)
			archived_part(&o, EV_LIST_TRAIL, o.args[0], o.args[1]);
	}
	ev_opts_free(&o);
	return rc;
}

static void usage_trace(FILE *out)
{
	fputs(_("Usage: evtop trace TRACE_ID [OPTION]...\n"
	        "Every event with this trace_id, in both tables, in creation order.\n"),
	      out);
	fputs("\n", out);
	ev_opts_usage(out);
}

int ev_cmd_trace(int argc, char **argv)
{
	struct ev_opts o;
	int rc = ev_session_parse(&o, argc, argv, usage_trace, 1, 1);
	if (rc < 0) {
		rc = run_lists(&o, EV_LIST_TRACE, o.args[0], NULL);
		if (rc == EV_EXIT_OK)
			archived_part(&o, EV_LIST_TRACE, o.args[0], NULL);
	}
	ev_opts_free(&o);
	return rc;
}

static void usage_show(FILE *out)
{
	fputs(_("Usage: evtop show EVENT_NO... [OPTION]...\n"
	        "Every column of an event, found by event_no in both tables (an event_no is "
	        "unique\n"
	        "per table only). Deleted rows are shown, marked DELETED. --table limits the "
	        "search.\n"),
	      out);
	fputs("\n", out);
	ev_opts_usage(out);
}

/* The human form of one event: "column  value" lines, the payload as stored. */
/* archive: the archive table the row was found in, or NULL (online). */
static void print_event(const struct ev_rowset *rs, size_t r, enum ev_table_kind t,
                        const char *archive)
{
	const struct ev_table_def *def = ev_model_table(t);
	const char *deleted = ev_rowset_get(rs, r, "deleted");
	bool is_deleted = deleted != NULL && strcmp(deleted, "0") != 0;
	char *badge = archive ? ev_text_sanitize(archive, strlen(archive)) : NULL;

	const char *source =
	        ev_rowset_col(rs, EV_SOURCE_COL) >= 0 ? ev_rowset_get(rs, r, EV_SOURCE_COL) : NULL;
	struct ev_buf head;
	ev_buf_init(&head);
	if (source != NULL) {
		char *safe = ev_text_sanitize(source, strlen(source));
		ev_buf_printf(&head, _("== %s event on source %s"), ev_model_table_label(def),
		              safe);
		free(safe);
	} else {
		/* TRANSLATORS: the head of a shown event: its table as people read it. */
		ev_buf_printf(&head, _("== %s event"), ev_model_table_label(def));
	}
	if (is_deleted)
		/* TRANSLATORS: after the head of a shown event that is soft-deleted. */
		ev_buf_adds(&head, _("  [DELETED]"));
	if (badge)
		ev_buf_printf(&head, _("  [ARCHIVED in %s]"), badge);
	printf("%s\n", head.data);
	ev_buf_free(&head);
	free(badge);
	for (size_t c = 0; c < rs->ncols; c++) {
		const struct ev_cell *cell = ev_rowset_cell(rs, r, c);
		if (strcmp(rs->cols[c].name, EV_SOURCE_COL) == 0)
			continue;
		char *v = cell->s ? ev_text_sanitize(cell->s, cell->len) : ev_xstrdup("NULL");
		if (strcmp(rs->cols[c].name, def->status_col) == 0 && cell->s != NULL)
			printf("%-18s %s (%s / %s)\n", rs->cols[c].name, v,
			       ev_model_status_name(def, atoi(cell->s), false),
			       ev_model_status_name(def, atoi(cell->s), true));
		else
			printf("%-18s %s\n", rs->cols[c].name, v);
		free(v);
	}
}

/* A copy of rs with its source as the first column. */
static struct ev_rowset *with_source(const struct ev_rowset *rs, const char *source)
{
	struct ev_rowset *m = ev_rowset_with_source(rs);
	for (size_t r = 0; r < rs->nrows; r++)
		ev_rowset_add_sourced(m, rs, r, source);
	return m;
}

/* An event_no not online, looked up in the table's archive (<table>_archive, as evtop archive
 * makes it): the archive's name (malloc'd) with its rows in *rs, or NULL with *rs the empty
 * online read kept. No archive table is no archive: nothing is said. */
static char *archived_rows(struct ev_fan_src *fs, enum ev_table_kind t, const char *event_no,
                           struct ev_rowset **rs)
{
	struct ev_error err = {0};
	struct ev_rowset *arch = NULL;
	char *name = ev_xasprintf("%s_archive", ev_opts_table_name(&fs->o, t));
	struct ev_query *q = ev_query_show_archived(t, name, event_no);
	int rc = ev_conn_run(fs->s.conn, q, &arch, &err);
	ev_query_free(&q);
	if (rc < 0 || arch->nrows == 0) {
		ev_rowset_free(&arch);
		free(name);
		return NULL;
	}
	ev_rowset_free(rs);
	*rs = arch;
	return name;
}

/* What ev_cmd_show keeps over its event_nos. */
struct show_run {
	struct ev_opts *o;
	struct ev_fan f;
	enum ev_table_kind kinds[EV_TABLE_COUNT];
	int n;
	struct ev_rowset *out[EV_TABLE_COUNT]; /* JSON and CSV: the rows found, for one output */
	struct ev_error err;
	int rc;
};

/* The rows of one event found on a source (rs, masked; archive: the archive table they were
 * in, or NULL): printed (the table format) or kept for the one output. Returns the rows. */
static int show_rows(struct show_run *sr, const struct ev_fan_src *fs, enum ev_table_kind t,
                     struct ev_rowset **rs, const char *archive)
{
	const struct ev_opts *o = sr->o;
	int hits = 0;
	if (sr->f.multi) {
		struct ev_rowset *m = with_source(*rs, fs->src->name);
		ev_rowset_free(rs);
		*rs = m;
	}
	for (size_t r = 0; r < (*rs)->nrows; r++) {
		if (o->format == EV_FMT_TABLE)
			print_event(*rs, r, t, archive);
		hits++;
	}
	if (o->format != EV_FMT_TABLE && (*rs)->nrows > 0) {
		if (sr->out[t] == NULL)
			sr->out[t] = project_as(*rs, t, false, NULL, archive != NULL);
		else
			project_as(*rs, t, false, sr->out[t], archive != NULL);
	}
	return hits;
}

/* event_no in table t of source fs: online, else in its archive. Returns the rows found
 * (those refused to be shown in the clear included). */
static int show_in(struct show_run *sr, struct ev_fan_src *fs, enum ev_table_kind t,
                   const char *event_no)
{
	struct ev_opts *o = sr->o;
	int hits = 0;

	if (ev_session_check_table(&fs->s, t, &sr->err) < 0) {
		if (o->table >= 0 || sr->err.code != EV_ERR_SCHEMA) {
			fs->err = sr->err;
			report_source(&sr->f, fs);
			sr->rc = EV_EXIT_UNKNOWN;
		}
		return 0;
	}
	struct ev_query *q = ev_query_show_by_no(t, ev_opts_table_name(&fs->o, t), event_no);
	struct ev_rowset *rs = NULL;
	struct ev_rowset *one[EV_TABLE_COUNT] = {NULL};
	bool refused = false;
	char *archive = NULL;
	if (ev_conn_run(fs->s.conn, q, &rs, &fs->err) == 0 && rs->nrows == 0) {
		/* Not online: perhaps archived (evtop archive's table). */
		archive = archived_rows(fs, t, event_no, &rs);
	}
	if (rs != NULL) {
		mask_read(&fs->o, fs->src, rs);
		one[t] = rs;
		refused = audit_unmask(o, &sr->f, fs, one, &t, 1) < 0;
	}
	if (rs == NULL) {
		report_source(&sr->f, fs);
		sr->rc = EV_EXIT_UNKNOWN;
	} else if (refused) {
		sr->rc = EV_EXIT_FAILURE;
		hits++; /* found, not shown: said so */
	} else {
		hits += show_rows(sr, fs, t, &rs, archive);
	}
	free(archive);
	ev_rowset_free(&rs);
	ev_query_free(&q);
	return hits;
}

/* One event_no, in the tables of every source that answers. Returns 1 when it is nowhere
 * (said), else 0. */
static int show_one(struct show_run *sr, const char *event_no)
{
	int hits = 0;
	if (strlen(event_no) > 64) {
		ev_say_error("%s", _("event_no longer than 64 characters: no such event"));
		return 1;
	}
	for (int k = 0; k < sr->f.n; k++) {
		struct ev_fan_src *fs = &sr->f.v[k];
		if (!fs->up)
			continue;
		for (int i = 0; i < sr->n; i++)
			if (fs->src->tables & (1u << sr->kinds[i]))
				hits += show_in(sr, fs, sr->kinds[i], event_no);
	}
	if (hits > 0)
		return 0;
	const char *where = ev_model_table_label(ev_model_table(sr->kinds[0]));
	if (sr->n == 2 && sr->f.multi)
		ev_say_error(_("no event %s in either table of any source"), event_no);
	else if (sr->n == 2)
		ev_say_error(_("no event %s in either table"), event_no);
	else if (sr->f.multi)
		ev_say_error(_("no event %s in %s of any source"), event_no, where);
	else
		ev_say_error(_("no event %s in %s"), event_no, where);
	return 1;
}

int ev_cmd_show(int argc, char **argv)
{
	struct ev_opts o;
	struct show_run sr = {.o = &o};
	int rc = ev_session_parse(&o, argc, argv, usage_show, 1, INT_MAX);
	if (rc >= 0) {
		ev_opts_free(&o);
		return rc;
	}
	if (o.nargs > 1000) {
		ev_say_error(_("at most 1000 event_nos at once (%d given); for more, list them "
		               "with evtop list and its filters, or feed a file of event_nos "
		               "through xargs -n 1000"),
		             o.nargs);
		ev_opts_free(&o);
		return EV_EXIT_USAGE;
	}
	sr.n = ev_session_tables(&o, sr.kinds);
	if (o.format == EV_FMT_CSV && sr.n != 1) {
		ev_say_error("%s", _("--format csv needs --table (the two tables have different "
		                     "columns)"));
		ev_opts_free(&o);
		return EV_EXIT_USAGE;
	}
	if (ev_fan_open(&sr.f, &o, false, &sr.err) < 0) {
		ev_session_report(&sr.err);
		ev_fan_close(&sr.f);
		ev_opts_free(&o);
		return EV_EXIT_UNKNOWN;
	}
	ev_fan_report(&sr.f, o.cfg.lag_warning_s);
	sr.rc = ev_fan_up(&sr.f) < sr.f.n ? EV_EXIT_UNKNOWN : EV_EXIT_OK;
	int missing = 0;
	for (int a = 0; a < o.nargs; a++)
		missing += show_one(&sr, o.args[a]);
	if (o.format != EV_FMT_TABLE && write_results(&o, sr.out, sr.kinds, sr.n, NULL, NULL) < 0) {
		ev_say_error(_("cannot write the output: %s"), strerror(errno));
		sr.rc = EV_EXIT_FAILURE;
	}
	for (int t = 0; t < EV_TABLE_COUNT; t++)
		ev_rowset_free(&sr.out[t]);
	ev_fan_close(&sr.f);
	ev_opts_free(&o);
	if (sr.rc == EV_EXIT_OK && missing > 0)
		sr.rc = EV_EXIT_FAILURE;
	return sr.rc;
}
