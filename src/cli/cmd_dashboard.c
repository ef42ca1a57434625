/* evtop — `evtop dashboard`: the backlog per group, per table, for cron and scripts. */
#include <config.h>

#include "cli/cli.h"
#include "cli/options.h"
#include "cli/session.h"
#include "core/dashboard.h"
#include "core/format.h"
#include "core/text.h"
#include "db/fetch.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void usage(FILE *out)
{
	fputs("Usage: evtop dashboard [OPTION]...\n"
	      "The backlog per group (--by event_type, topic, source, biz_type, channel), per\n"
	      "table: pending, processing, stuck, failed (due / waiting / no retry time /\n"
	      "exhausted), the oldest pending event's age, the longest wait since a retry, and\n"
	      "what was created in the window (--window, default 1h) with how many of those\n"
	      "succeeded or were cancelled. A count that reached its cap is a lower bound (≥N);\n"
	      "a figure whose query timed out or needs a missing index is shown as ?.\n\n",
	      out);
	ev_opts_usage(out);
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

static void cell_text(const struct ev_figure *f, enum ev_dash_figure which, char *buf, size_t size)
{
	if (is_age(which) && !f->unknown) {
		char d[32];
		ev_format_duration(f->value, d, sizeof(d));
		snprintf(buf, size, "%s%s", f->capped && f->value >= 0 ? "≥" : "", d);
	} else {
		ev_figure_format(f, buf, size);
	}
}

static void add_row(struct ev_rowset *rs, const char *table, const char *group,
                    const struct ev_dash_row *row)
{
	struct ev_cell *cells = ev_rowset_add_row(rs);
	char buf[48];
	size_t c = 0;
	ev_cell_set(&cells[c++], table, strlen(table));
	ev_cell_set(&cells[c++], group, group ? strlen(group) : 0);
	for (size_t i = 0; i < NSHOWN; i++) {
		cell_text(&row->f[shown[i]], shown[i], buf, sizeof(buf));
		ev_cell_set(&cells[c++], buf, strlen(buf));
	}
}

/* The table format: one rowset for every table, totals last in each. */
static struct ev_rowset *as_rows(struct ev_dash *const *dash, int n)
{
	const char *names[2 + NSHOWN];
	enum ev_ctype types[2 + NSHOWN];
	names[0] = "table";
	types[0] = EV_CT_TEXT;
	names[1] = "group";
	types[1] = EV_CT_TEXT;
	for (size_t i = 0; i < NSHOWN; i++) {
		names[2 + i] = ev_dash_figure_name(shown[i]);
		types[2 + i] = EV_CT_INT;
	}
	struct ev_rowset *rs = ev_rowset_new(2 + NSHOWN, names, types);
	for (int i = 0; i < n; i++) {
		const struct ev_dash *d = dash[n - 1 - i]; /* the outbox first, as the lists */
		if (d == NULL)
			continue;
		const char *key = ev_model_table(d->table)->key;
		for (size_t r = 0; r < d->nrows; r++)
			add_row(rs, key, d->rows[r].group ? d->rows[r].group : "(null)",
			        &d->rows[r]);
		add_row(rs, key, "TOTAL", &d->total);
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

static void write_json(FILE *out, struct ev_dash *const *dash, int n)
{
	bool first = true;
	fputs("[\n", out);
	for (int i = 0; i < n; i++) {
		const struct ev_dash *d = dash[n - 1 - i]; /* the outbox first, as the lists */
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

int ev_dashboard_collect(struct ev_session *s, const struct ev_opts *o, struct ev_dash **dash,
                         bool quiet)
{
	enum ev_table_kind kinds[EV_TABLE_COUNT];
	int n = ev_session_tables(o, kinds);
	int rc = EV_EXIT_OK;
	struct ev_error err = {0};

	for (int i = 0; i < n; i++) {
		enum ev_table_kind t = kinds[i];
		if (ev_session_check_table(s, t, &err) < 0) {
			if (!quiet)
				ev_session_report(&err);
			rc = EV_EXIT_UNKNOWN;
			continue;
		}
		const char *dim = o->by;
		if (dim != NULL && ev_model_dimension(ev_model_table(t), dim) == NULL) {
			if (o->table >= 0) {
				fprintf(stderr, "evtop: the %s table has no dimension '%s'\n",
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
			if (!quiet)
				ev_session_report(&err);
			rc = EV_EXIT_UNKNOWN;
			continue;
		}
		if (dash[t]->notes != NULL && !quiet) {
			char *safe = ev_text_sanitize(dash[t]->notes, strlen(dash[t]->notes));
			fprintf(stderr, "evtop: %s: %s\n", ev_model_table(t)->key, safe);
			free(safe);
		}
	}
	return rc;
}

int ev_cmd_dashboard(int argc, char **argv)
{
	struct ev_opts o;
	struct ev_error err = {0};
	struct ev_session s;
	struct ev_dash *dash[EV_TABLE_COUNT] = {NULL};
	int rc = ev_session_parse(&o, argc, argv, usage, 0, 0);

	if (rc >= 0) {
		ev_opts_free(&o);
		return rc;
	}
	if (o.by != NULL && strcmp(o.by, "event_type") != 0 && strcmp(o.by, "topic") != 0 &&
	    strcmp(o.by, "source") != 0 && strcmp(o.by, "biz_type") != 0 &&
	    strcmp(o.by, "channel") != 0) {
		fprintf(stderr,
		        "evtop: --by: expected event_type, topic, source, biz_type or channel\n");
		ev_opts_free(&o);
		return EV_EXIT_USAGE;
	}
	if (o.by == NULL)
		o.by = ev_xstrdup("event_type");
	if (ev_session_open(&s, &o, &err) < 0) {
		ev_session_report(&err);
		ev_session_close(&s);
		ev_opts_free(&o);
		return EV_EXIT_UNKNOWN;
	}
	rc = ev_dashboard_collect(&s, &o, dash, false);
	if (rc != EV_EXIT_USAGE) {
		if (o.format == EV_FMT_JSON) {
			write_json(stdout, dash, EV_TABLE_COUNT);
		} else {
			struct ev_rowset *rs = as_rows(dash, EV_TABLE_COUNT);
			char win[32];
			if (o.format == EV_FMT_TABLE)
				printf("# created, success, cancelled: created in the last %s "
				       "(create_time)\n",
				       ev_format_duration(o.cfg.window_s, win, sizeof(win)));
			if (ev_format_write(stdout, rs, o.format, 40) < 0) {
				fprintf(stderr, "evtop: cannot write the output: %s\n",
				        strerror(errno));
				rc = EV_EXIT_FAILURE;
			}
			ev_rowset_free(&rs);
		}
	}
	for (int t = 0; t < EV_TABLE_COUNT; t++)
		ev_dash_free(&dash[t]);
	ev_session_close(&s);
	ev_opts_free(&o);
	return rc;
}
