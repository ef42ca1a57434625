/* evtop — `evtop check`: a monitoring plugin over the dashboard's figures (doc/check.md).
 * Exit 0 OK, 1 WARNING, 2 CRITICAL, 3 UNKNOWN (cannot tell, usage error, server gone). */
#include <config.h>

#include "cli/cli.h"
#include "cli/fanout.h"
#include "cli/options.h"
#include "cli/session.h"
#include "core/checkexpr.h"
#include "core/dashboard.h"
#include "core/i18n.h"
#include "core/text.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static void usage(FILE *out)
{
	/* TRANSLATORS: the plugin's own output stays English (monitoring systems parse it);
	 * keep OK, WARNING, CRITICAL, UNKNOWN and the expressions as they are. */
	fputs(_("Usage: evtop check [--warning EXPR] [--critical EXPR] [OPTION]...\n"
	        "A monitoring plugin: reads the dashboard's figures of both tables and exits 0 "
	        "(OK),\n"
	        "1 (WARNING), 2 (CRITICAL) or 3 (UNKNOWN: evtop cannot tell, e.g. the server is\n"
	        "unreachable). Expressions: 'stuck > 0 or exhausted > 10', 'oldest_pending_age >\n"
	        "10m', 'outbox.failed[ORDER_CREATED] > 0' (groups of --by, default event_type);\n"
	        "doc/check.md has the grammar and every figure. A suspected time zone mismatch\n"
	        "(the newest rows dated ahead of NOW() or a whole or half hour behind it) is\n"
	        "UNKNOWN, unless --clock-ok.\n"),
	      out);
	fputs("\n", out);
	ev_opts_usage(out);
}

struct lookup {
	struct ev_dash *dash[EV_TABLE_COUNT];
	bool have[EV_TABLE_COUNT];
	/* The tables the check covers: both, or --table's. A figure that names no table covers
	 * these only, so `--table outbox 'failed > 0'` is the outbox's failed count, not unknown
	 * for want of the message table that was never read. */
	bool covered[EV_TABLE_COUNT];
	int window_s;
};

/* One table's figure: 0 exact, 1 lower bound, -1 unknown. */
static int table_figure(const struct lookup *lk, enum ev_table_kind t, const char *name,
                        const char *group, double *value)
{
	const struct ev_dash *d = lk->dash[t];
	if (!lk->have[t] || d == NULL)
		return -1;
	const struct ev_dash_row *row = ev_dash_find(d, group);
	int idx = ev_dash_figure_parse(name);
	if (row == NULL) {
		/* A group with no events: its counts are 0, its ages 0 — at least, when the
		 * totals are lower bounds (a cap reached, a source that did not answer). */
		*value = 0;
		return idx >= 0 && d->total.f[idx].capped ? 1 : 0;
	}
	const struct ev_figure *f = row->f;
	if (idx >= 0) {
		if (f[idx].unknown)
			return -1;
		*value = f[idx].value < 0 ? 0 : (double)f[idx].value;
		return f[idx].capped ? 1 : 0;
	}
	/* Rates over the window, by creation time (core/dashboard.c). */
	struct ev_dash_rates rt;
	ev_dash_rates(row, lk->window_s, &rt);
	if (!rt.known)
		return -1;
	if (strcasecmp(name, "created_per_min") == 0) {
		*value = rt.created_per_min;
		return rt.lower_bound ? 1 : 0;
	}
	if (strcasecmp(name, "finished_per_min") == 0) {
		*value = rt.finished_per_min;
		return rt.lower_bound ? 1 : 0;
	}
	if (strcasecmp(name, "drain_time") == 0) {
		if (f[EV_DASH_PENDING].capped || f[EV_DASH_PROCESSING].capped ||
		    f[EV_DASH_FAILED].capped)
			return -1;
		*value = rt.drain_s;
		return 0;
	}
	return -1;
}

static int figure(void *ctx, const char *table, const char *name, const char *group, double *value)
{
	struct lookup *lk = ctx;
	if (table != NULL) {
		int t = ev_model_table_parse(table);
		return t < 0 ? -1 : table_figure(lk, (enum ev_table_kind)t, name, group, value);
	}
	/* Both tables: counts and rates add up, ages and durations take the larger. */
	const struct ev_figure_def *def = ev_checkexpr_figure_find(name);
	bool sum = def == NULL || def->unit != EV_FIG_SECONDS;
	int rc = 0;
	double total = 0;
	for (int t = 0; t < EV_TABLE_COUNT; t++) {
		if (!lk->covered[t])
			continue;
		double v = 0;
		int r = table_figure(lk, (enum ev_table_kind)t, name, group, &v);
		if (r < 0)
			return -1;
		if (r == 1)
			rc = 1;
		total = sum ? total + v : (v > total ? v : total);
	}
	*value = total;
	return rc;
}

struct outside {
	const struct lookup *lk;
	const char *table; /* the first table named that the check does not cover */
};

static void note_outside(void *ctx, const char *table, const char *name, const char *group)
{
	struct outside *o = ctx;
	(void)name;
	(void)group;
	if (table == NULL || o->table != NULL)
		return;
	int t = ev_model_table_parse(table);
	if (t >= 0 && !o->lk->covered[t])
		o->table = table;
}

/* An expression naming a table that --table leaves out could only ever be unknown: say so
 * as a usage error instead. Returns the table's name, or NULL when e is fine. */
static const char *names_outside(const struct ev_checkexpr *e, const struct lookup *lk)
{
	struct outside o = {lk, NULL};
	if (e != NULL)
		ev_checkexpr_figures(e, note_outside, &o);
	return o.table;
}

static void perfdata(const struct lookup *lk)
{
	static const enum ev_dash_figure shown[] = {EV_DASH_PENDING,   EV_DASH_PROCESSING,
	                                            EV_DASH_STUCK,     EV_DASH_FAILED,
	                                            EV_DASH_EXHAUSTED, EV_DASH_OLDEST_PENDING_AGE};
	bool first = true;
	for (int t = EV_TABLE_COUNT - 1; t >= 0; t--) {
		if (lk->dash[t] == NULL)
			continue;
		for (size_t i = 0; i < sizeof(shown) / sizeof(shown[0]); i++) {
			const struct ev_figure *f = &lk->dash[t]->total.f[shown[i]];
			if (f->unknown)
				continue;
			printf("%s%s_%s=%lld%s", first ? " | " : " ",
			       ev_model_table((enum ev_table_kind)t)->key,
			       ev_dash_figure_name(shown[i]), f->value < 0 ? 0 : f->value,
			       shown[i] == EV_DASH_OLDEST_PENDING_AGE ? "s" : "");
			first = false;
		}
	}
}

/* A step's answer that lets the check go on (any other is its exit code). */
#define GO_ON -1

/* --warning and --critical parsed, and held to the tables the check covers (set in lk).
 * Returns GO_ON, or UNKNOWN (said on standard output, as a plugin says it; *warn and *crit
 * freed). */
static int parse_exprs(const struct ev_opts *o, struct lookup *lk, struct ev_checkexpr **warn,
                       struct ev_checkexpr **crit, struct ev_error *err)
{
	if (o->warning == NULL && o->critical == NULL) {
		fputs("EVTOP UNKNOWN - give --warning EXPR and/or --critical EXPR (doc/check.md)\n",
		      stdout);
		return EV_CHECK_UNKNOWN;
	}
	if (o->warning != NULL && (*warn = ev_checkexpr_parse(o->warning, err)) == NULL) {
		printf("EVTOP UNKNOWN - --warning: %s\n", err->msg);
		return EV_CHECK_UNKNOWN;
	}
	if (o->critical != NULL && (*crit = ev_checkexpr_parse(o->critical, err)) == NULL) {
		printf("EVTOP UNKNOWN - --critical: %s\n", err->msg);
		ev_checkexpr_free(warn);
		return EV_CHECK_UNKNOWN;
	}
	for (int t = 0; t < EV_TABLE_COUNT; t++)
		lk->covered[t] = o->table < 0 || o->table == t;
	const char *outside = names_outside(*warn, lk);
	const char *which_opt = "--warning";
	if (outside == NULL) {
		outside = names_outside(*crit, lk);
		which_opt = "--critical";
	}
	if (outside != NULL) {
		printf("EVTOP UNKNOWN - %s names the %s table, which --table %s leaves out\n",
		       which_opt, outside, ev_model_table((enum ev_table_kind)o->table)->key);
		ev_checkexpr_free(warn);
		ev_checkexpr_free(crit);
		return EV_CHECK_UNKNOWN;
	}
	return GO_ON;
}

/* What the check found: each expression's result, the status, the figures the expressions
 * read, and the covered tables' suspected time zone mismatches. */
struct verdict {
	enum ev_tristate w, c;
	enum ev_check_status st;
	struct ev_buf why;
	struct ev_buf clock;
};

static void judge(const struct ev_opts *o, struct lookup *lk, const struct ev_checkexpr *warn,
                  const struct ev_checkexpr *crit, struct verdict *v)
{
	ev_buf_init(&v->why);
	v->w = warn ? ev_checkexpr_eval(warn, figure, lk, &v->why) : EV_FALSE;
	if (warn && crit)
		ev_buf_adds(&v->why, " ");
	v->c = crit ? ev_checkexpr_eval(crit, figure, lk, &v->why) : EV_FALSE;
	v->st = ev_checkexpr_status(v->w, v->c);
	/* A suspected time zone mismatch: stuck, due, the ages and the drain are off by the zones'
	 * difference, so no threshold can be judged (UNKNOWN), unless --clock-ok says the zone
	 * is right. */
	ev_buf_init(&v->clock);
	for (int t = 0; t < EV_TABLE_COUNT; t++)
		if (lk->covered[t] && lk->dash[t] != NULL && lk->dash[t]->clock_suspect != NULL)
			ev_buf_printf(&v->clock, "%s%s", v->clock.len ? "; " : "",
			              lk->dash[t]->clock_suspect);
	if (v->clock.len > 0 && !o->clock_ok)
		v->st = EV_CHECK_UNKNOWN;
}

static void json_string_or_null(const char *s)
{
	if (s)
		ev_session_json_string(stdout, s);
	else
		fputs("null", stdout);
}

/* --format json: one object. */
static void print_json(const struct ev_opts *o, const struct ev_fan *s, bool have_warn,
                       bool have_crit, const struct verdict *v)
{
	static const char *const tri[] = {"false", "true", "null"};
	printf("{\"status\":\"%s\",\"code\":%d,\"warning\":", ev_checkexpr_status_name(v->st),
	       (int)v->st);
	json_string_or_null(o->warning);
	printf(",\"warning_result\":%s,\"critical\":", have_warn ? tri[v->w] : "null");
	json_string_or_null(o->critical);
	printf(",\"critical_result\":%s,\"figures\":", have_crit ? tri[v->c] : "null");
	ev_session_json_string(stdout, v->why.data ? v->why.data : "");
	fputs(",\"clock_suspect\":", stdout);
	json_string_or_null(v->clock.len > 0 ? v->clock.data : NULL);
	printf(",\"clock_ok\":%s", o->clock_ok ? "true" : "false");
	fputs(",\"no_answer\":[", stdout);
	for (int i = 0, k = 0; i < s->n; i++)
		if (!s->v[i].up) {
			fputs(k++ ? "," : "", stdout);
			ev_session_json_string(stdout, s->v[i].src->name);
		}
	fputs("]}\n", stdout);
}

/* The plugin's line: the status, what the expressions read, the sources that did not answer,
 * the performance data. */
static void print_line(const struct ev_opts *o, struct ev_fan *s, const struct lookup *lk,
                       const struct verdict *v)
{
	const char *which = v->st == EV_CHECK_CRITICAL  ? "critical"
	                    : v->st == EV_CHECK_WARNING ? "warning"
	                    : v->st == EV_CHECK_UNKNOWN ? "cannot tell"
	                                                : "ok";
	char *safe = ev_text_sanitize(v->why.data ? v->why.data : "", v->why.len);
	if (v->clock.len > 0 && !o->clock_ok) {
		char *cs = ev_text_sanitize(v->clock.data, v->clock.len);
		printf("EVTOP %s - clock suspect: %s (the expressions read: %s)",
		       ev_checkexpr_status_name(v->st), cs, safe);
		free(cs);
	} else {
		printf("EVTOP %s - %s: %s%s", ev_checkexpr_status_name(v->st), which, safe,
		       v->clock.len > 0 ? " (clock suspect, taken as right: --clock-ok)" : "");
	}
	free(safe);
	/* The figures are lower bounds without a source: say which. */
	for (int i = 0, k = 0; i < s->n; i++)
		if (!s->v[i].up) {
			char *name = ev_text_sanitize(s->v[i].src->name, strlen(s->v[i].src->name));
			printf("%s%s", k++ ? ", " : " (no answer from ", name);
			free(name);
		}
	if (ev_fan_up(s) < s->n)
		putchar(')');
	perfdata(lk);
	putchar('\n');
}

int ev_cmd_check(int argc, char **argv)
{
	struct ev_opts o;
	struct ev_error err = {0};
	struct ev_fan s;
	struct ev_checkexpr *warn = NULL, *crit = NULL;
	struct lookup lk;
	int rc = ev_session_parse(&o, argc, argv, usage, 0, 0);

	memset(&lk, 0, sizeof(lk));
	if (rc >= 0) {
		ev_opts_free(&o);
		/* The plugin convention: a usage error is UNKNOWN. */
		return rc == EV_EXIT_OK ? EV_EXIT_OK : EV_CHECK_UNKNOWN;
	}
	/* Monitoring systems parse the whole plugin line: it stays English. */
	ev_i18n_off();
	if ((rc = parse_exprs(&o, &lk, &warn, &crit, &err)) != GO_ON) {
		ev_opts_free(&o);
		return rc;
	}
	if (o.by == NULL)
		o.by = ev_xstrdup("event_type");
	if (ev_fan_open(&s, &o, false, &err) < 0) {
		char *safe = ev_text_sanitize(err.msg, strlen(err.msg));
		printf("EVTOP UNKNOWN - %s\n", safe);
		free(safe);
		ev_fan_close(&s);
		ev_checkexpr_free(&warn);
		ev_checkexpr_free(&crit);
		ev_opts_free(&o);
		return EV_CHECK_UNKNOWN;
	}
	/* Every source's figures merged: a source that does not answer leaves lower bounds,
	 * which can still prove a threshold crossed, and is named in the output. */
	ev_dashboard_collect_fan(&s, &o, lk.dash, NULL, true);
	for (int t = 0; t < EV_TABLE_COUNT; t++)
		lk.have[t] = lk.dash[t] != NULL;
	lk.window_s = o.cfg.window_s;

	struct verdict v;
	judge(&o, &lk, warn, crit, &v);
	if (o.format == EV_FMT_JSON)
		print_json(&o, &s, warn != NULL, crit != NULL, &v);
	else
		print_line(&o, &s, &lk, &v);
	ev_buf_free(&v.why);
	ev_buf_free(&v.clock);
	for (int t = 0; t < EV_TABLE_COUNT; t++)
		ev_dash_free(&lk.dash[t]);
	ev_fan_close(&s);
	ev_checkexpr_free(&warn);
	ev_checkexpr_free(&crit);
	ev_opts_free(&o);
	return (int)v.st;
}
