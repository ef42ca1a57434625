/* evtop — `evtop list`, `evtop show`, `evtop trail`, `evtop trace`. */
#include <config.h>

#include "cli/cli.h"
#include "cli/options.h"
#include "cli/session.h"
#include "core/format.h"
#include "core/text.h"
#include "db/conn.h"

#include <errno.h>
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
static struct ev_rowset *project(const struct ev_rowset *rs, enum ev_table_kind t, bool human,
                                 struct ev_rowset *into)
{
	const struct ev_table_def *def = ev_model_table(t);
	const char *const *want = t == EV_TABLE_OUTBOX ? table_cols_outbox : table_cols_message;
	const char *names[64];
	enum ev_ctype types[64];
	int src[64];
	size_t n = 0;

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
			names[n] = rs->cols[c].name;
			types[n] = rs->cols[c].type;
			src[n++] = (int)c;
		}
	}
	struct ev_rowset *out = into ? into : ev_rowset_new(n, names, types);
	int status_col = ev_rowset_col(rs, def->status_col);
	for (size_t r = 0; r < rs->nrows; r++) {
		struct ev_cell *cells = ev_rowset_add_row(out);
		for (size_t i = 0; i < n; i++) {
			if (src[i] < 0) {
				ev_cell_set(&cells[i], def->key, strlen(def->key));
				continue;
			}
			const struct ev_cell *cell = ev_rowset_cell(rs, r, (size_t)src[i]);
			if (human && src[i] == status_col && cell->s != NULL) {
				char *label = ev_xasprintf(
				        "%s %s", cell->s,
				        ev_model_status_name(def, atoi(cell->s), false));
				ev_cell_set(&cells[i], label, strlen(label));
				free(label);
			} else {
				ev_cell_set(&cells[i], cell->s, cell->len);
			}
		}
	}
	return out;
}

static void usage_list(FILE *out)
{
	fputs("Usage: evtop list KIND [OPTION]...\n"
	      "List events of one kind, oldest or most urgent first, a page at a time.\n\nKinds:\n",
	      out);
	for (int k = 0; k < EV_LIST_COUNT; k++)
		if (k != EV_LIST_TRAIL && k != EV_LIST_TRACE)
			fprintf(out, "  %-18s %s\n", ev_list_name((enum ev_list_kind)k),
			        ev_list_help((enum ev_list_kind)k));
	fputs("\nEach page ends with the cursor of its last row; pass it with --after to get the\n"
	      "next page (with --table). Without --table both tables are listed.\n\n",
	      out);
	ev_opts_usage(out);
}

/* Write the per-table results: the table format as one block per table, json as one array
 * whose objects carry their "table", csv for one table. */
static int write_results(const struct ev_opts *o, struct ev_rowset *const *res,
                         const enum ev_table_kind *kinds, int n)
{
	int rc = 0;

	if (o->format == EV_FMT_TABLE) {
		for (int i = 0; i < n; i++) {
			const struct ev_rowset *rs = res[kinds[i]];
			if (rs == NULL)
				continue;
			if (n > 1)
				printf("# %s (%s): %zu row%s\n", ev_model_table(kinds[i])->key,
				       ev_opts_table_name(o, kinds[i]), rs->nrows,
				       rs->nrows == 1 ? "" : "s");
			if (rs->nrows > 0 && ev_format_write(stdout, rs, o->format, 48) < 0)
				rc = -1;
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
			ev_fatal("out of memory (open_memstream)");
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

/* Run one list page per table and print them. */
static int run_lists(struct ev_opts *o, enum ev_list_kind kind, const char *a1, const char *a2)
{
	struct ev_error err = {0};
	struct ev_session s;
	enum ev_table_kind kinds[EV_TABLE_COUNT];
	int n = ev_session_tables(o, kinds);
	int rc = EV_EXIT_OK;
	struct ev_cursor after = {0};
	struct ev_rowset *res[EV_TABLE_COUNT] = {NULL};
	char *next[EV_TABLE_COUNT] = {NULL};

	if (o->after != NULL) {
		if (n != 1) {
			fputs("evtop: --after needs --table (a cursor belongs to one table)\n",
			      stderr);
			return EV_EXIT_USAGE;
		}
		if (ev_cursor_decode(o->after, &after, &err) < 0) {
			ev_session_report(&err);
			return EV_EXIT_USAGE;
		}
	}
	if (o->format == EV_FMT_CSV && n != 1) {
		fputs("evtop: --format csv needs --table (the two tables have different columns)\n",
		      stderr);
		return EV_EXIT_USAGE;
	}
	if (o->table >= 0 && ev_filter_unsupported(&o->filter, (enum ev_table_kind)o->table)) {
		fprintf(stderr, "evtop: the %s table has no %s column\n",
		        ev_model_table((enum ev_table_kind)o->table)->key,
		        ev_filter_unsupported(&o->filter, (enum ev_table_kind)o->table));
		return EV_EXIT_USAGE;
	}
	if (ev_session_open(&s, o, &err) < 0) {
		ev_session_report(&err);
		ev_session_close(&s);
		return EV_EXIT_UNKNOWN;
	}
	for (int i = 0; i < n; i++) {
		enum ev_table_kind t = kinds[i];
		if (ev_filter_unsupported(&o->filter, t) != NULL)
			continue; /* a filter on an outbox-only column: that table only */
		if (ev_session_check_table(&s, t, &err) < 0) {
			ev_session_report(&err);
			rc = EV_EXIT_UNKNOWN;
			continue;
		}
		struct ev_list_req req = {
		        .info = &s.info[t],
		        .table = t,
		        .table_name = ev_opts_table_name(o, t),
		        .kind = kind,
		        .filter = &o->filter,
		        .after = after,
		        .limit = o->limit,
		        .stuck_threshold_s = o->cfg.stuck_threshold_s,
		        .high_retry_min = o->cfg.high_retry_min,
		        .object_type = a1,
		        .object_id = a2,
		        .trace_id = a1,
		};
		struct ev_query *q = ev_query_list(&req, &err);
		struct ev_rowset *rs = NULL;
		if (q == NULL) {
			/* Say it and go on: "n/a — needs an index" on one table leaves the other.
			 */
			ev_session_report(&err);
			rc = err.code == EV_ERR_SCHEMA ? EV_EXIT_UNKNOWN : EV_EXIT_USAGE;
			continue;
		}
		if (ev_conn_run(s.conn, q, &rs, &err) < 0) {
			ev_session_report(&err);
			rc = EV_EXIT_UNKNOWN;
			ev_query_free(&q);
			continue;
		}
		if (rs->nrows > (size_t)o->limit) {
			struct ev_cursor c;
			ev_cursor_from_row(q, rs, (size_t)o->limit - 1, &c);
			next[t] = ev_cursor_encode(&c);
			ev_rowset_truncate(rs, (size_t)o->limit);
		}
		res[t] = project(rs, t, o->format == EV_FMT_TABLE, NULL);
		ev_rowset_free(&rs);
		ev_query_free(&q);
	}
	if (write_results(o, res, kinds, n) < 0) {
		fprintf(stderr, "evtop: cannot write the output: %s\n", strerror(errno));
		rc = EV_EXIT_FAILURE;
	}
	for (int t = 0; t < EV_TABLE_COUNT; t++) {
		ev_rowset_free(&res[t]);
		if (next[t] == NULL)
			continue;
		FILE *where = o->format == EV_FMT_TABLE ? stdout : stderr;
		fprintf(where, "-- more %s rows: --table %s --after %s\n", ev_model_table(t)->key,
		        ev_model_table(t)->key, next[t]);
		free(next[t]);
	}
	ev_session_close(&s);
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
		char *safe = ev_text_sanitize(o.args[0], strlen(o.args[0]));
		fprintf(stderr, "evtop: unknown list '%s' (evtop list --help shows the kinds%s)\n",
		        safe, kind >= 0 ? "; use evtop trail / evtop trace" : "");
		free(safe);
		ev_opts_free(&o);
		return EV_EXIT_USAGE;
	}
	rc = run_lists(&o, (enum ev_list_kind)kind, NULL, NULL);
	ev_opts_free(&o);
	return rc;
}

static void usage_trail(FILE *out)
{
	fputs("Usage: evtop trail TYPE ID [OPTION]...\n"
	      "Every event of one business object (biz_type + biz_id, or aggregate_type +\n"
	      "aggregate_id in the outbox), in creation order.\n\n",
	      out);
	ev_opts_usage(out);
}

int ev_cmd_trail(int argc, char **argv)
{
	struct ev_opts o;
	int rc = ev_session_parse(&o, argc, argv, usage_trail, 2, 2);
	if (rc < 0)
		rc = run_lists(&o, EV_LIST_TRAIL, o.args[0], o.args[1]);
	ev_opts_free(&o);
	return rc;
}

static void usage_trace(FILE *out)
{
	fputs("Usage: evtop trace TRACE_ID [OPTION]...\n"
	      "Every event with this trace_id, in both tables, in creation order.\n\n",
	      out);
	ev_opts_usage(out);
}

int ev_cmd_trace(int argc, char **argv)
{
	struct ev_opts o;
	int rc = ev_session_parse(&o, argc, argv, usage_trace, 1, 1);
	if (rc < 0)
		rc = run_lists(&o, EV_LIST_TRACE, o.args[0], NULL);
	ev_opts_free(&o);
	return rc;
}

static void usage_show(FILE *out)
{
	fputs("Usage: evtop show EVENT_NO... [OPTION]...\n"
	      "Every column of an event, found by event_no in both tables (an event_no is unique\n"
	      "per table only). Deleted rows are shown, marked DELETED. --table limits the "
	      "search.\n\n",
	      out);
	ev_opts_usage(out);
}

/* The human form of one event: "column  value" lines, the payload as stored. */
static void print_event(const struct ev_rowset *rs, size_t r, enum ev_table_kind t)
{
	const struct ev_table_def *def = ev_model_table(t);
	const char *deleted = ev_rowset_get(rs, r, "deleted");
	bool is_deleted = deleted != NULL && strcmp(deleted, "0") != 0;

	printf("== %s event%s\n", def->key, is_deleted ? "  [DELETED]" : "");
	for (size_t c = 0; c < rs->ncols; c++) {
		const struct ev_cell *cell = ev_rowset_cell(rs, r, c);
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

int ev_cmd_show(int argc, char **argv)
{
	struct ev_opts o;
	struct ev_error err = {0};
	struct ev_session s;
	int rc = ev_session_parse(&o, argc, argv, usage_show, 1, 1000);
	if (rc >= 0) {
		ev_opts_free(&o);
		return rc;
	}
	enum ev_table_kind kinds[EV_TABLE_COUNT];
	int n = ev_session_tables(&o, kinds);
	if (o.format == EV_FMT_CSV && n != 1) {
		fputs("evtop: --format csv needs --table (the two tables have different columns)\n",
		      stderr);
		ev_opts_free(&o);
		return EV_EXIT_USAGE;
	}
	if (ev_session_open(&s, &o, &err) < 0) {
		ev_session_report(&err);
		ev_session_close(&s);
		ev_opts_free(&o);
		return EV_EXIT_UNKNOWN;
	}
	struct ev_rowset *out[EV_TABLE_COUNT] = {NULL};
	int found = 0, missing = 0;
	rc = EV_EXIT_OK;
	for (int a = 0; a < o.nargs; a++) {
		int hits = 0;
		if (strlen(o.args[a]) > 64) {
			fprintf(stderr,
			        "evtop: event_no longer than 64 characters: no such event\n");
			missing++;
			continue;
		}
		for (int i = 0; i < n; i++) {
			enum ev_table_kind t = kinds[i];
			if (ev_session_check_table(&s, t, &err) < 0) {
				if (o.table >= 0 || err.code != EV_ERR_SCHEMA) {
					ev_session_report(&err);
					rc = EV_EXIT_UNKNOWN;
				}
				continue;
			}
			struct ev_query *q =
			        ev_query_show_by_no(t, ev_opts_table_name(&o, t), o.args[a]);
			struct ev_rowset *rs = NULL;
			if (ev_conn_run(s.conn, q, &rs, &err) < 0) {
				ev_session_report(&err);
				rc = EV_EXIT_UNKNOWN;
			} else {
				for (size_t r = 0; r < rs->nrows; r++) {
					if (o.format == EV_FMT_TABLE)
						print_event(rs, r, t);
					hits++;
				}
				if (o.format != EV_FMT_TABLE && rs->nrows > 0) {
					if (out[t] == NULL)
						out[t] = project(rs, t, false, NULL);
					else
						project(rs, t, false, out[t]);
				}
			}
			ev_rowset_free(&rs);
			ev_query_free(&q);
		}
		if (hits == 0) {
			char *safe = ev_text_sanitize(o.args[a], strlen(o.args[a]));
			fprintf(stderr, "evtop: no event %s in %s\n", safe,
			        n == 2 ? "either table" : ev_model_table(kinds[0])->key);
			free(safe);
			missing++;
		}
		found += hits;
	}
	if (o.format != EV_FMT_TABLE && write_results(&o, out, kinds, n) < 0) {
		fprintf(stderr, "evtop: cannot write the output: %s\n", strerror(errno));
		rc = EV_EXIT_FAILURE;
	}
	for (int t = 0; t < EV_TABLE_COUNT; t++)
		ev_rowset_free(&out[t]);
	ev_session_close(&s);
	ev_opts_free(&o);
	if (rc == EV_EXIT_OK && missing > 0)
		rc = EV_EXIT_FAILURE;
	(void)found;
	return rc;
}
