/* evtop — `evtop dashboard`: the backlog per group, per table, for cron and scripts. */
#include <config.h>

#include "cli/cli.h"
#include "cli/fanout.h"
#include "cli/options.h"
#include "cli/session.h"
#include "core/dashboard.h"
#include "core/format.h"
#include "core/i18n.h"
#include "core/text.h"
#include "db/fetch.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void usage(FILE *out)
{
	fputs(_("Usage: evtop dashboard [OPTION]...\n"
	        "The backlog per group (--by event_type, topic, source, biz_type, channel), per\n"
	        "table: pending, processing, stuck, failed (due / waiting / no retry time /\n"
	        "exhausted), the oldest pending event's age, the longest wait since a retry, and\n"
	        "what was created in the window (--window, default 1h) with how many of those\n"
	        "succeeded or were cancelled. A count that reached its cap is a lower bound (≥N);\n"
	        "a figure whose query timed out or needs a missing index is shown as ?.\n"),
	      out);
	fputs("\n", out);
	ev_opts_usage(out);
}

/* One line of what went wrong or what a figure lacks, sanitised: "evtop: [table: ]msg" on
 * stderr, "[table: ]msg" into a buffer (named by its source later). */
static void say(FILE *msgs, const char *table, const char *msg)
{
	char *safe = ev_text_sanitize(msg, strlen(msg));
	fprintf(msgs, "%s%s%s%s\n", msgs == stderr ? "evtop: " : "", table ? table : "",
	        table ? ": " : "", safe);
	free(safe);
}

/* The clock-dependent figures are suspect: said with the messages, as the notes are. */
static void say_clock(FILE *msgs, const char *table, const char *why)
{
	char *line = ev_xasprintf(_("CLOCK SUSPECT: stuck, failed_due, failed_waiting, the ages "
	                            "and the drain compare with NOW() and are off: %s"),
	                          why);
	say(msgs, table, line);
	free(line);
}

static const enum ev_dash_figure shown[] = {
        EV_DASH_PENDING,
        EV_DASH_PROCESSING,
        EV_DASH_STUCK,
        EV_DASH_FAILED,
        EV_DASH_FAILED_DUE,
        EV_DASH_FAILED_WAITING,
        EV_DASH_FAILED_NORETRY,
        EV_DASH_EXHAUSTED,
        EV_DASH_OLDEST_PENDING_AGE,
        EV_DASH_LONGEST_RETRY_WAIT,
        EV_DASH_CREATED,
        EV_DASH_SUCCESS,
        EV_DASH_CANCELLED,
};
#define NSHOWN (sizeof(shown) / sizeof(shown[0]))

static bool is_age(enum ev_dash_figure f)
{
	return f == EV_DASH_OLDEST_PENDING_AGE || f == EV_DASH_LONGEST_RETRY_WAIT;
}

/* A figure's cell: for people ("?" unknown, "-" no age, "1h02m"), or for scripts (csv): an
 * unknown figure or an age that does not exist is an empty field (false), an age integer
 * seconds. A count that reached its cap keeps its "≥" in both: it is a lower bound. */
static bool cell_text(const struct ev_figure *f, enum ev_dash_figure which, bool csv, char *buf,
                      size_t size)
{
	if (csv) {
		if (f->unknown || (is_age(which) && f->value < 0))
			return false;
		snprintf(buf, size, "%s%lld", f->capped ? "≥" : "", f->value);
		return true;
	}
	if (is_age(which) && !f->unknown) {
		char d[32];
		ev_format_duration(f->value, d, sizeof(d));
		snprintf(buf, size, "%s%s", f->capped && f->value >= 0 ? "≥" : "", d);
	} else {
		ev_figure_format(f, buf, size);
	}
	return true;
}

static bool csv_cells; /* the rows are written as csv (set before as_rows) */

static void add_row(struct ev_rowset *rs, const char *source, const char *table, const char *group,
                    const struct ev_dash_row *row)
{
	struct ev_cell *cells = ev_rowset_add_row(rs);
	char buf[48];
	size_t c = 0;
	if (source != NULL)
		ev_cell_set(&cells[c++], source, strlen(source));
	ev_cell_set(&cells[c++], table, strlen(table));
	ev_cell_set(&cells[c++], group, group ? strlen(group) : 0);
	for (size_t i = 0; i < NSHOWN; i++) {
		if (cell_text(&row->f[shown[i]], shown[i], csv_cells, buf, sizeof(buf)))
			ev_cell_set(&cells[c], buf, strlen(buf));
		c++;
	}
}

/* The table format is for people: its headers, TOTAL and "all" are translated. csv keeps the
 * names json, check and the metrics use (scripts read them). */
static const char *human(const char *english, const char *translated)
{
	return csv_cells ? english : translated;
}

/* TRANSLATORS: the dashboard table's row of a table's totals, in its group column. */
#define TOTAL_ROW human("TOTAL", P_("dashboard row", "TOTAL"))
/* TRANSLATORS: the dashboard table's source column with several sources: all merged. */
#define ALL_SOURCES human("all", P_("dashboard source", "all"))

/* A figure's column header. */
static const char *figure_header(enum ev_dash_figure f)
{
	const char *name = ev_dash_figure_name(f);
	if (csv_cells)
		return name;
	/* The headers are at most as wide as the English ones (a Chinese character takes two
	 * cells): the glossary's short forms. Both tables' rows are under them, so the names that
	 * fit both tables' states. */
	switch (f) {
	case EV_DASH_PENDING:
		/* TRANSLATORS: a dashboard table's column header, at most 7 cells. */
		return P_("dashboard column", "pending");
	case EV_DASH_PROCESSING:
		/* TRANSLATORS: a dashboard table's column header, at most 10 cells. */
		return P_("dashboard column", "processing");
	case EV_DASH_STUCK:
		/* TRANSLATORS: a dashboard table's column header, at most 5 cells. */
		return P_("dashboard column", "stuck");
	case EV_DASH_FAILED:
		/* TRANSLATORS: a dashboard table's column header, at most 6 cells. */
		return P_("dashboard column", "failed");
	case EV_DASH_FAILED_DUE:
		/* TRANSLATORS: a dashboard table's column header, at most 10 cells. */
		return P_("dashboard column", "failed_due");
	case EV_DASH_FAILED_WAITING:
		/* TRANSLATORS: a dashboard table's column header, at most 14 cells. */
		return P_("dashboard column", "failed_waiting");
	case EV_DASH_FAILED_NORETRY:
		/* TRANSLATORS: a dashboard table's column header, at most 14 cells. */
		return P_("dashboard column", "failed_noretry");
	case EV_DASH_EXHAUSTED:
		/* TRANSLATORS: a dashboard table's column header, at most 9 cells. */
		return P_("dashboard column", "exhausted");
	case EV_DASH_OLDEST_PENDING_AGE:
		/* TRANSLATORS: a dashboard table's column header, at most 18 cells. */
		return P_("dashboard column", "oldest_pending_age");
	case EV_DASH_LONGEST_RETRY_WAIT:
		/* TRANSLATORS: a dashboard table's column header, at most 18 cells. */
		return P_("dashboard column", "longest_retry_wait");
	case EV_DASH_CREATED:
		/* TRANSLATORS: a dashboard table's column header, at most 7 cells. */
		return P_("dashboard column", "created");
	case EV_DASH_SUCCESS:
		/* TRANSLATORS: a dashboard table's column header, at most 7 cells. */
		return P_("dashboard column", "success");
	case EV_DASH_CANCELLED:
		/* TRANSLATORS: a dashboard table's column header, at most 9 cells. */
		return P_("dashboard column", "cancelled");
	default:
		return name;
	}
}

/* A source that did not answer: its TOTAL row, every figure unknown. */
static void add_missing(struct ev_rowset *rs, const char *source, const char *table)
{
	struct ev_dash_row row;
	memset(&row, 0, sizeof(row));
	for (int f = 0; f < EV_DASH_NFIGURES; f++)
		row.f[f].unknown = true;
	add_row(rs, source, table, TOTAL_ROW, &row);
}

/* The table format: one rowset for every table, totals last in each. With several sources a
 * leading "source" column: the merged groups and TOTAL as "all", then each source's TOTAL. */
static struct ev_rowset *as_rows(struct ev_dash *const *dash, int n, const struct ev_fan *f,
                                 struct ev_dash *(*per)[EV_TABLE_COUNT])
{
	const char *names[3 + NSHOWN];
	enum ev_ctype types[3 + NSHOWN];
	size_t k = 0;
	bool multi = f != NULL && f->multi;
	if (multi) {
		/* TRANSLATORS: a dashboard table's column header, a few cells. */
		names[k] = human("source", P_("dashboard column", "source"));
		types[k++] = EV_CT_TEXT;
	}
	/* TRANSLATORS: a dashboard table's column header, a few cells. */
	names[k] = human("table", P_("dashboard column", "table"));
	types[k++] = EV_CT_TEXT;
	/* TRANSLATORS: a dashboard table's column header, a few cells. */
	names[k] = human("group", P_("dashboard column", "group"));
	types[k++] = EV_CT_TEXT;
	for (size_t i = 0; i < NSHOWN; i++) {
		names[k] = figure_header(shown[i]);
		types[k++] = EV_CT_INT;
	}
	struct ev_rowset *rs = ev_rowset_new(k, names, types);
	for (int i = 0; i < n; i++) {
		int t = n - 1 - i; /* the outbox first, as the lists */
		const struct ev_dash *d = dash[t];
		if (d == NULL)
			continue;
		const char *key = ev_model_table(d->table)->key;
		for (size_t r = 0; r < d->nrows; r++)
			add_row(rs, multi ? ALL_SOURCES : NULL, key,
			        d->rows[r].group ? d->rows[r].group : "(null)", &d->rows[r]);
		add_row(rs, multi ? ALL_SOURCES : NULL, key, TOTAL_ROW, &d->total);
		for (int s = 0; multi && s < f->n; s++) {
			if (!(f->v[s].src->tables & (1u << t)))
				continue;
			if (per[s][t] != NULL)
				add_row(rs, f->v[s].src->name, key, TOTAL_ROW, &per[s][t]->total);
			else
				add_missing(rs, f->v[s].src->name, key);
		}
	}
	return rs;
}

static void json_figures(FILE *out, const struct ev_dash_row *row, int window_s)
{
	bool first = true;
	struct ev_dash_rates rt;
	fputc('{', out);
	for (int f = 0; f < EV_DASH_NFIGURES; f++) {
		const struct ev_figure *x = &row->f[f];
		fprintf(out, "%s\"%s\":", first ? "" : ",",
		        ev_dash_figure_name((enum ev_dash_figure)f));
		if (x->unknown || (is_age((enum ev_dash_figure)f) && x->value < 0))
			fputs("null", out);
		else
			fprintf(out, "%lld", x->value);
		first = false;
	}
	/* The rates over the window and the drain time (null: unknown; drain null also when
	 * nothing finishes — "never" has no number). */
	ev_dash_rates(row, window_s, &rt);
	if (rt.known)
		fprintf(out, ",\"created_per_min\":%.3f,\"finished_per_min\":%.3f",
		        rt.created_per_min, rt.finished_per_min);
	else
		fputs(",\"created_per_min\":null,\"finished_per_min\":null", out);
	if (rt.known && !isinf(rt.drain_s))
		fprintf(out, ",\"drain_time\":%.0f", rt.drain_s);
	else
		fputs(",\"drain_time\":null", out);
	fputs(",\"lower_bound\":[", out);
	first = true;
	for (int f = 0; f < EV_DASH_NFIGURES; f++)
		if (row->f[f].capped && !row->f[f].unknown) {
			fprintf(out, "%s\"%s\"", first ? "" : ",",
			        ev_dash_figure_name((enum ev_dash_figure)f));
			first = false;
		}
	fputs("]}", out);
}

/* What each source said, for the JSON of one table: its name, whether it answered, its
 * replica lag, its totals. */
static void json_sources(FILE *out, const struct ev_fan *f, struct ev_dash *(*per)[EV_TABLE_COUNT],
                         int t, int window_s)
{
	bool first = true;
	fputs(",\"sources\":[", out);
	for (int s = 0; s < f->n; s++) {
		const struct ev_fan_src *fs = &f->v[s];
		if (!(fs->src->tables & (1u << t)))
			continue;
		const struct ev_dash *d = per[s][t];
		fprintf(out, "%s{\"source\":", first ? "" : ",");
		ev_session_json_string(out, fs->src->name);
		fprintf(out, ",\"ok\":%s,\"error\":", d != NULL ? "true" : "false");
		if (d == NULL)
			ev_session_json_string(out, fs->up ? "the table could not be read"
			                                   : fs->err.msg);
		else
			fputs("null", out);
		fprintf(out, ",\"read_from\":\"%s\",\"replica_lag_s\":",
		        fs->on_replica ? "replica" : "primary");
		if (fs->on_replica && fs->lag_s >= 0)
			fprintf(out, "%lld", fs->lag_s);
		else
			fputs("null", out);
		fputs(",\"total\":", out);
		if (d != NULL)
			json_figures(out, &d->total, d->window_s);
		else
			fputs("null", out);
		fputc('}', out);
		first = false;
	}
	(void)window_s;
	fputc(']', out);
}

static void write_json(FILE *out, struct ev_dash *const *dash, int n, const struct ev_fan *f,
                       struct ev_dash *(*per)[EV_TABLE_COUNT])
{
	bool first = true;
	bool with_sources = f != NULL && (f->multi || f->v[0].on_replica);
	fputs("[\n", out);
	for (int i = 0; i < n; i++) {
		int t = n - 1 - i; /* the outbox first, as the lists */
		const struct ev_dash *d = dash[t];
		if (d == NULL)
			continue;
		fprintf(out, "%s{\"table\":\"%s\",\"dimension\":", first ? "" : ",\n",
		        ev_model_table(d->table)->key);
		if (d->dimension)
			fprintf(out, "\"%s\"", d->dimension);
		else
			fputs("null", out);
		fprintf(out, ",\"window_s\":%d,\"query_ms\":%.1f,\"notes\":", d->window_s,
		        d->server_ms);
		if (d->notes)
			ev_session_json_string(out, d->notes);
		else
			fputs("null", out);
		/* A suspected time zone mismatch: the figures that compare with NOW() are off. */
		fputs(",\"clock_suspect\":", out);
		if (d->clock_suspect) {
			fputs("{\"reason\":", out);
			ev_session_json_string(out, d->clock_suspect);
			fputs(",\"figures\":[\"stuck\",\"failed_due\",\"failed_waiting\","
			      "\"oldest_pending_age\",\"longest_retry_wait\",\"drain_time\"]}",
			      out);
		} else {
			fputs("null", out);
		}
		if (with_sources)
			json_sources(out, f, per, t, d->window_s);
		fputs(",\"total\":", out);
		json_figures(out, &d->total, d->window_s);
		fputs(",\"groups\":[", out);
		for (size_t r = 0; r < d->nrows; r++) {
			fprintf(out, "%s\n{\"group\":", r ? "," : "");
			if (d->rows[r].group)
				ev_session_json_string(out, d->rows[r].group);
			else
				fputs("null", out);
			fputs(",\"figures\":", out);
			json_figures(out, &d->rows[r], d->window_s);
			fputc('}', out);
		}
		fputs("]}", out);
		first = false;
	}
	fputs("\n]\n", out);
}

/* The dashboards of one source's tables into dash[table]; what goes wrong is said on msgs
 * (NULL: not said). */
static int collect(struct ev_session *s, const struct ev_opts *o, struct ev_dash **dash, FILE *msgs)
{
	enum ev_table_kind kinds[EV_TABLE_COUNT];
	int n = ev_session_tables(o, kinds);
	int rc = EV_EXIT_OK;
	struct ev_error err = {0};

	for (int i = 0; i < n; i++) {
		enum ev_table_kind t = kinds[i];
		if (!(o->src->tables & (1u << t)))
			continue; /* the config says this source has no such table */
		if (ev_session_check_table(s, t, &err) < 0) {
			if (msgs)
				say(msgs, NULL, err.msg);
			rc = EV_EXIT_UNKNOWN;
			continue;
		}
		const char *dim = o->by;
		if (dim != NULL && ev_model_dimension(ev_model_table(t), dim) == NULL) {
			if (o->table >= 0) {
				ev_say_error(_("the %s table has no dimension '%s'"),
				             ev_model_table(t)->key, dim);
				return EV_EXIT_USAGE;
			}
			dim = NULL; /* topic and channel: the outbox's only; totals for the other */
		}
		struct ev_dash_req req = {
		        .info = &s->info[t],
		        .table = t,
		        .table_name = ev_opts_table_name(o, t),
		        .dimension = dim,
		        .window_s = o->cfg.window_s,
		        .stuck_threshold_s = o->cfg.stuck_threshold_s,
		};
		if (ev_dash_fetch(s->conn, &req, &dash[t], &err) < 0) {
			if (msgs)
				say(msgs, NULL, err.msg);
			rc = EV_EXIT_UNKNOWN;
			continue;
		}
		if (dash[t]->notes != NULL && msgs)
			say(msgs, ev_model_table(t)->key, dash[t]->notes);
		if (dash[t]->clock_suspect != NULL && msgs)
			say_clock(msgs, ev_model_table(t)->key, dash[t]->clock_suspect);
	}
	return rc;
}

int ev_dashboard_collect(struct ev_session *s, const struct ev_opts *o, struct ev_dash **dash,
                         bool quiet)
{
	return collect(s, o, dash, quiet ? NULL : stderr);
}

/* One source's part of a fanned-out dashboard. */
struct part {
	struct ev_dash *dash[EV_TABLE_COUNT];
	char *msgs;
	size_t len;
	int rc;
};

static int collect_part(struct ev_fan_src *fs, void *arg)
{
	(void)arg;
	struct part *p = fs->out;
	FILE *mem = open_memstream(&p->msgs, &p->len);
	p->rc = collect(&fs->s, &fs->o, p->dash, mem);
	if (mem != NULL)
		fclose(mem);
	return p->rc;
}

int ev_dashboard_collect_fan(struct ev_fan *f, const struct ev_opts *o, struct ev_dash **dash,
                             struct ev_dash *(*per)[EV_TABLE_COUNT], bool quiet)
{
	struct part *parts = ev_xcalloc((size_t)f->n, sizeof(*parts));
	int rc = EV_EXIT_OK;

	for (int i = 0; i < f->n; i++)
		f->v[i].out = &parts[i];
	ev_fan_run(f, collect_part, NULL);
	for (int i = 0; i < f->n; i++) {
		struct part *p = &parts[i];
		if (!f->v[i].up)
			rc = EV_EXIT_UNKNOWN;
		else if (p->rc != EV_EXIT_OK && rc != EV_EXIT_USAGE)
			rc = p->rc;
		if (p->msgs != NULL && p->len > 0 && !quiet) {
			/* Each line named by its source when there are several. */
			for (char *line = p->msgs; *line;) {
				char *nl = strchr(line, '\n');
				if (nl)
					*nl = '\0';
				if (f->multi)
					fprintf(stderr, "evtop: %s: %s\n", f->v[i].src->name, line);
				else
					fprintf(stderr, "evtop: %s\n", line);
				line = nl ? nl + 1 : line + strlen(line);
			}
		}
		free(p->msgs);
		f->v[i].out = NULL;
	}
	enum ev_table_kind kinds[EV_TABLE_COUNT];
	int nt = ev_session_tables(o, kinds);
	for (int k = 0; k < nt; k++) {
		enum ev_table_kind t = kinds[k];
		struct ev_dash **tparts = ev_xcalloc((size_t)f->n, sizeof(*tparts));
		const char **names = ev_xcalloc((size_t)f->n, sizeof(*names));
		int have = 0;
		const struct ev_dash *any = NULL;
		for (int i = 0; i < f->n; i++) {
			if (!(f->v[i].src->tables & (1u << t)))
				continue; /* the config says this source has no such table */
			tparts[have] = parts[i].dash[t];
			names[have] = f->v[i].src->name;
			if (tparts[have] != NULL)
				any = tparts[have];
			have++;
		}
		if (any != NULL) {
			struct ev_dash_req req = {
			        .table = t,
			        .dimension = any->dimension,
			        .window_s = any->window_s,
			};
			dash[t] = ev_dash_merged(tparts, f->multi ? names : NULL, have, &req);
		}
		free(tparts);
		free(names);
	}
	for (int i = 0; i < f->n; i++)
		for (int t = 0; t < EV_TABLE_COUNT; t++) {
			if (per != NULL)
				per[i][t] = parts[i].dash[t];
			else
				ev_dash_free(&parts[i].dash[t]);
		}
	free(parts);
	return rc;
}

/* --by: a dimension of either table (the model's; topic and channel are the outbox's). */
static bool known_dimension(const char *key)
{
	for (size_t i = 0; ev_model_dimension_key(i) != NULL; i++)
		if (strcmp(ev_model_dimension_key(i), key) == 0)
			return true;
	return false;
}

int ev_cmd_dashboard(int argc, char **argv)
{
	struct ev_opts o;
	struct ev_error err = {0};
	struct ev_fan f;
	struct ev_dash *dash[EV_TABLE_COUNT] = {NULL};
	int rc = ev_session_parse(&o, argc, argv, usage, 0, 0);

	if (rc >= 0) {
		ev_opts_free(&o);
		return rc;
	}
	if (o.by != NULL && !known_dimension(o.by)) {
		ev_say_error("%s",
		             _("--by: expected event_type, topic, source, biz_type or channel"));
		ev_opts_free(&o);
		return EV_EXIT_USAGE;
	}
	if (o.by == NULL)
		o.by = ev_xstrdup("event_type");
	if (ev_fan_open(&f, &o, false, &err) < 0) {
		ev_session_report(&err);
		ev_fan_close(&f);
		ev_opts_free(&o);
		return EV_EXIT_UNKNOWN;
	}
	ev_fan_report(&f, o.cfg.lag_warning_s);
	struct ev_dash *(*per)[EV_TABLE_COUNT] = ev_xcalloc((size_t)f.n, sizeof(*per));
	rc = ev_dashboard_collect_fan(&f, &o, dash, per, false);
	if (rc != EV_EXIT_USAGE) {
		if (o.format == EV_FMT_JSON) {
			write_json(stdout, dash, EV_TABLE_COUNT, &f, per);
		} else {
			csv_cells = o.format == EV_FMT_CSV;
			struct ev_rowset *rs = as_rows(dash, EV_TABLE_COUNT, &f, per);
			char win[32];
			if (o.format == EV_FMT_TABLE) {
				printf(_("# created, success, cancelled: created in the last %s "
				         "(create_time)\n"),
				       ev_format_duration(o.cfg.window_s, win, sizeof(win)));
				for (int i = 0; i < f.n; i++) {
					if (!f.v[i].on_replica && !f.multi)
						continue;
					char *lag =
					        f.v[i].up ? ev_fan_lag_text(&f.v[i])
					                  /* TRANSLATORS: a source that did not
					                     answer, in place of its replica lag. */
					                  : ev_xstrdup(_("no answer"));
					char *safe = ev_text_sanitize(lag, strlen(lag));
					char *name = ev_text_sanitize(f.v[i].src->name,
					                              strlen(f.v[i].src->name));
					printf(_("# source %s: %s\n"), name, safe);
					free(name);
					free(safe);
					free(lag);
				}
			}
			if (ev_format_write(stdout, rs, o.format, 40) < 0) {
				ev_say_error(_("cannot write the output: %s"), strerror(errno));
				rc = EV_EXIT_FAILURE;
			}
			ev_rowset_free(&rs);
		}
	}
	for (int t = 0; t < EV_TABLE_COUNT; t++)
		ev_dash_free(&dash[t]);
	for (int i = 0; i < f.n; i++)
		for (int t = 0; t < EV_TABLE_COUNT; t++)
			ev_dash_free(&per[i][t]);
	free(per);
	ev_fan_close(&f);
	ev_opts_free(&o);
	return rc;
}
