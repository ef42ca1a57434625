/* evtop — `evtop metrics`: the dashboard's figures for Prometheus (doc/metrics.md). Every
 * --interval it refreshes each source's backlog mirror (the figures of both tables, by
 * event_type, and the outbox by topic), on a thread per source, within the refresh budget; it
 * serves the last exposition on /metrics (a scrape reads nothing from the database) and/or
 * writes it to a textfile for node_exporter, replaced atomically. Read-only, always. */
#include <config.h>

#include "cli/cli.h"
#include "cli/fanout.h"
#include "cli/httpd.h"
#include "cli/options.h"
#include "cli/session.h"
#include "core/dashboard.h"
#include "core/i18n.h"
#include "core/metrics.h"
#include "core/mirror.h"
#include "core/refresh.h"
#include "core/text.h"
#include "db/fetch.h"
#include "db/fan.h"
#include "db/mirror.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static void usage(FILE *out)
{
	/* TRANSLATORS: the metrics themselves and the service's log stay English. */
	fputs(_("Usage: evtop metrics [--listen ADDR:PORT] [--textfile FILE] [--once] [OPTION]...\n"
	        "The backlog of both tables for Prometheus: serves GET /metrics (the text format,\n"
	        "default 127.0.0.1:9787) and/or writes FILE for node_exporter's textfile\n"
	        "collector, refreshed every --interval (default 15s) from evtop's backlog mirror,\n"
	        "within the refresh budget; a scrape costs the database nothing. --once refreshes\n"
	        "once and writes FILE (or standard output). Read-only; SELECT is all it needs.\n"
	        "Every metric is in doc/metrics.md.\n"),
	      out);
	fputs("\n", out);
	ev_opts_usage(out);
}

static volatile sig_atomic_t stop_signal;

static void on_signal(int sig)
{
	stop_signal = sig;
}

/* One source: its session (in the fan), its mirrors and the last refresh's dashboards. */
struct msrc {
	struct ev_fan_src *fs;
	const struct ev_config *cfg;
	struct ev_mirror *mirror[EV_TABLE_COUNT];
	struct ev_dash *dash[EV_TABLE_COUNT], *topic;
	bool have_info[EV_TABLE_COUNT];
	double query_s, refreshed_at, cost_ms;
	long long drift_total[EV_TABLE_COUNT];
	/* What was said last on stderr, to say only changes. */
	int said_up; /* -1 nothing yet */
	char said_table[EV_TABLE_COUNT][200];
	char said_lag[200];
	/* This refresh: a table's problem, the source's. */
	char note[EV_TABLE_COUNT][200];
};

static double now_unix(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double mono_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void drop_figures(struct msrc *m)
{
	for (int t = 0; t < EV_TABLE_COUNT; t++)
		ev_dash_free(&m->dash[t]);
	ev_dash_free(&m->topic);
}

/* The source is down: its figures go, its connection is closed, tried again next time. */
static void went_down(struct msrc *m, const struct ev_error *err)
{
	m->fs->up = false;
	m->fs->err = *err;
	drop_figures(m);
	for (int t = 0; t < EV_TABLE_COUNT; t++)
		m->have_info[t] = false;
}

/* The dashboard finished without its window counts (not read: the rates come from the
 * mirror's flows, and no window figure is exported). */
static void finish(struct ev_dash *d)
{
	if (d->skipped == 0)
		return;
	d->skipped = 0;
	ev_dash_finish(d);
}

/* One table of a source that is up. Returns -1 with *lost when the connection is lost. */
static int refresh_table(struct msrc *m, enum ev_table_kind t, struct ev_error *lost)
{
	struct ev_fan_src *fs = m->fs;
	struct ev_error err = {0};
	const char *name = ev_opts_table_name(&fs->o, t);
	if (!m->have_info[t]) {
		if (ev_session_check_table(&fs->s, t, &err) < 0) {
			fs->s.have_info[t] = false; /* read again next time */
			ev_table_info_clear(&fs->s.info[t]);
			if (err.code == EV_ERR_CONNECT) {
				*lost = err;
				return -1;
			}
			snprintf(m->note[t], sizeof(m->note[t]), "%.190s", err.msg);
			return 0;
		}
		m->have_info[t] = true;
	}
	struct ev_dash_req req = {
	        .info = &fs->s.info[t],
	        .table = t,
	        .table_name = name,
	        .dimension = "event_type",
	        .window_s = m->cfg->window_s,
	        .stuck_threshold_s = m->cfg->stuck_threshold_s,
	        .skip = 1u << EV_DQ_WINDOW, /* the rates come from the mirror's flows */
	};
	struct ev_mirror_opts mo = {
	        .interval_s = m->cfg->metrics_interval_s,
	        .reverify_s = m->cfg->mirror_reverify_s,
	        .check_s = m->cfg->mirror_check_s,
	        .settle_s = m->cfg->mirror_settle_s,
	};
	struct ev_dash *d = NULL;
	int rc;
	if (m->cfg->mirror) {
		if (m->mirror[t] == NULL)
			m->mirror[t] = ev_mirror_new(t);
		rc = ev_mirror_fetch(fs->s.conn, m->mirror[t], &req, &mo, &d, &err);
	} else {
		rc = ev_dash_fetch(fs->s.conn, &req, &d, &err);
	}
	if (rc < 0) {
		if (err.code == EV_ERR_CONNECT) {
			*lost = err;
			return -1;
		}
		if (err.code == EV_ERR_SCHEMA)
			m->have_info[t] = false;
		snprintf(m->note[t], sizeof(m->note[t]), "%.190s", err.msg);
		return 0;
	}
	finish(d);
	if (d->notes != NULL)
		snprintf(m->note[t], sizeof(m->note[t]), "%.190s", d->notes);
	m->dash[t] = d;
	m->drift_total[t] = d->mirror.drift_total;
	if (t == EV_TABLE_OUTBOX && m->cfg->metrics_topic && d->mirror.on) {
		/* The same refresh's rows, by topic: no query. */
		struct ev_dash_req tr = req;
		tr.dimension = "topic";
		struct ev_dash *td = ev_dash_new(&tr);
		ev_mirror_fill(m->mirror[t], &tr, ev_mirror_now(m->mirror[t]), td);
		td->skipped = 1u << EV_DQ_WINDOW;
		finish(td);
		m->topic = td;
	}
	return 0;
}

static void refresh_source(int i, void *ctx)
{
	struct msrc *m = &((struct msrc *)ctx)[i];
	struct ev_fan_src *fs = m->fs;
	struct ev_error err = {0};
	drop_figures(m);
	memset(m->note, 0, sizeof(m->note));
	if (!fs->up) {
		ev_session_close(&fs->s);
		if (ev_session_open(&fs->s, &fs->o, &err) < 0) {
			went_down(m, &err);
			goto out;
		}
		fs->up = true;
	}
	for (int t = 0; t < EV_TABLE_COUNT; t++) {
		if (!(fs->src->tables & (1u << t)))
			continue;
		if (refresh_table(m, (enum ev_table_kind)t, &err) < 0) {
			went_down(m, &err);
			goto out;
		}
	}
	if (fs->on_replica)
		ev_fan_read_lag(fs);
	m->refreshed_at = now_unix();
out:
	if (fs->s.conn != NULL) {
		m->cost_ms = ev_conn_take_charged_ms(fs->s.conn);
		m->query_s += m->cost_ms / 1000.0;
	} else {
		m->cost_ms = 0;
	}
}

/* A line on stderr, sanitised. */
static void say(const char *source, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void say(const char *source, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *msg = ev_xvasprintf(fmt, ap);
	va_end(ap);
	char *safe = ev_text_sanitize(msg, strlen(msg));
	if (source != NULL) {
		char *src = ev_text_sanitize(source, strlen(source));
		fprintf(stderr, "evtop metrics: %s: %s\n", src, safe);
		free(src);
	} else {
		fprintf(stderr, "evtop metrics: %s\n", safe);
	}
	fflush(stderr);
	free(safe);
	free(msg);
}

/* What changed since the last refresh, said once. */
static void report(struct msrc *m)
{
	struct ev_fan_src *fs = m->fs;
	const char *name = fs->src->name;
	if (m->said_up < 0 || fs->up != (m->said_up == 1)) {
		if (fs->up) {
			const struct ev_server_version *v = ev_conn_server(fs->s.conn);
			say(name, "up (%s %d.%d.%d, %s%s)", ev_flavour_name(v->flavour), v->major,
			    v->minor, v->patch, ev_conn_host_info(fs->s.conn),
			    fs->on_replica ? ", a replica" : "");
		} else {
			say(name, "down: %s (its figures are left out; evtop_up 0)", fs->err.msg);
		}
		m->said_up = fs->up;
	}
	for (int t = 0; fs->up && t < EV_TABLE_COUNT; t++) {
		if (strcmp(m->note[t], m->said_table[t]) == 0)
			continue;
		const char *key = ev_model_table((enum ev_table_kind)t)->key;
		if (m->note[t][0])
			say(name, "%s: %s", key, m->note[t]);
		else
			say(name, "%s: read again in full", key);
		snprintf(m->said_table[t], sizeof(m->said_table[t]), "%s", m->note[t]);
	}
	if (fs->up && fs->on_replica) {
		const char *now = fs->lag_s == EV_LAG_UNKNOWN ? fs->lag_note : "";
		if (strcmp(now, m->said_lag) != 0) {
			if (now[0])
				say(name, "replica lag unknown: %s", now);
			else
				say(name, "replica lag readable again");
			snprintf(m->said_lag, sizeof(m->said_lag), "%s", now);
		}
	}
}

/* Every source at once, each on a thread of its own (one inline). */
static void refresh_all(struct msrc *ms, int n)
{
	ev_db_fan_run(n, refresh_source, ms);
}

/* The exposition of the last refresh. */
static void render(struct ev_metrics *mx, struct msrc *ms, int n, double refresh_s,
                   struct ev_buf *out)
{
	struct ev_metrics_source *src = ev_xcalloc((size_t)n, sizeof(*src));
	for (int i = 0; i < n; i++) {
		struct ev_fan_src *fs = ms[i].fs;
		struct ev_metrics_source *s = &src[i];
		s->name = fs->src->name;
		s->up = fs->up;
		s->on_replica = fs->on_replica;
		s->lag_s = fs->lag_s >= 0 ? fs->lag_s : -1;
		s->query_s = ms[i].query_s;
		s->refreshed_at = ms[i].refreshed_at;
		for (int t = 0; t < EV_TABLE_COUNT; t++) {
			s->t[t].watched = (fs->src->tables & (1u << t)) != 0;
			s->t[t].by_type = ms[i].dash[t];
			s->t[t].by_topic = t == EV_TABLE_OUTBOX ? ms[i].topic : NULL;
			s->t[t].drift_total = ms[i].drift_total[t];
		}
		ev_metrics_update(mx, i, s);
	}
	ev_buf_init(out);
	ev_metrics_render(mx, src, n, refresh_s, PACKAGE_VERSION, out);
	free(src);
}

/* FILE replaced by text: a temporary file beside it whose name does not end in .prom (the
 * collector reads every *.prom), 0644 (the collector's user reads it; it holds no
 * parameters), fsync'ed, renamed over FILE; the directory fsync'ed. */
static int write_textfile(const char *path, const char *text, size_t len, struct ev_error *err)
{
	const char *slash = strrchr(path, '/');
	char *dir = slash ? ev_xstrndup(path, slash == path ? 1 : (size_t)(slash - path))
	                  : ev_xstrdup(".");
	char *tmp = ev_xasprintf("%s/.%s.tmp", dir, slash ? slash + 1 : path);
	int rc = -1;
	int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY, 0644);
	if (fd < 0) {
		ev_error_set(err, EV_ERR_USAGE, "--textfile: cannot write %.200s: %s", tmp,
		             strerror(errno));
		goto out;
	}
	struct stat st;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		ev_error_set(err, EV_ERR_USAGE, "--textfile: %.200s is not a regular file", tmp);
		close(fd);
		goto out;
	}
	(void)fchmod(fd, 0644);
	for (size_t off = 0; off < len;) {
		ssize_t w = write(fd, text + off, len - off);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			ev_error_set(err, EV_ERR_USAGE, "--textfile: writing %.200s: %s", tmp,
			             w < 0 ? strerror(errno) : "nothing written");
			close(fd);
			unlink(tmp);
			goto out;
		}
		off += (size_t)w;
	}
	if (fsync(fd) < 0 || close(fd) < 0) {
		ev_error_set(err, EV_ERR_USAGE, "--textfile: %.200s: %s", tmp, strerror(errno));
		unlink(tmp);
		goto out;
	}
	if (rename(tmp, path) < 0) {
		ev_error_set(err, EV_ERR_USAGE, "--textfile: renaming %.200s to %.200s: %s", tmp,
		             path, strerror(errno));
		unlink(tmp);
		goto out;
	}
	int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd >= 0) {
		(void)fsync(dfd);
		close(dfd);
	}
	rc = 0;
out:
	free(tmp);
	free(dir);
	return rc;
}

/* Sleep until `until` (monotonic) or a signal. */
static void wait_until(double until)
{
	while (!stop_signal) {
		double left = until - mono_s();
		if (left <= 0)
			return;
		if (left > 0.2)
			left = 0.2;
		struct timespec ts = {0, (long)(left * 1e9)};
		nanosleep(&ts, NULL);
	}
}

/* --listen's server started (the address is checked before any connection: a usage error
 * says so at once), or the options that need it refused. Returns 0, or EV_EXIT_USAGE (said). */
static int start_listening(struct ev_opts *o, struct ev_httpd **http, struct ev_error *err)
{
	if (o->listen != NULL) {
		struct ev_httpd_opts ho = {o->listen, o->tls_cert, o->tls_key, o->basic_auth_file};
		char *where = NULL;
		if ((*http = ev_httpd_start(&ho, &where, err)) == NULL) {
			ev_session_report(err);
			return EV_EXIT_USAGE;
		}
		ev_httpd_set(*http, "", 0);
		say(NULL, "listening on %s/metrics (refresh every %ds)", where,
		    o->cfg.metrics_interval_s);
		free(where);
	} else if (o->basic_auth_file != NULL || o->tls_cert != NULL) {
		fputs("evtop: --basic-auth-file and --tls-cert go with --listen\n", stderr);
		return EV_EXIT_USAGE;
	}
	return 0;
}

/* What serve() keeps from one refresh to the next. */
struct serving {
	const struct ev_opts *o;
	struct ev_httpd *http;
	struct ev_metrics *mx;
	struct msrc *ms;
	int n;
	bool said_file_error;
	int exit_code;
};

/* One refresh's exposition to the server, the text file or (--once) standard output. */
static void publish(struct serving *sv, const struct ev_buf *text)
{
	const struct ev_opts *o = sv->o;
	struct ev_error err = {0};

	if (sv->http != NULL)
		ev_httpd_set(sv->http, text->data, text->len);
	if (o->textfile != NULL) {
		if (write_textfile(o->textfile, text->data, text->len, &err) < 0) {
			if (!sv->said_file_error || o->once)
				ev_session_report(&err);
			sv->said_file_error = true;
			sv->exit_code = EV_EXIT_FAILURE;
		} else {
			if (sv->said_file_error)
				say(NULL, "writing %s again", o->textfile);
			sv->said_file_error = false;
		}
	} else if (o->once) {
		fwrite(text->data, 1, text->len, stdout);
		fflush(stdout);
	}
}

/* Refresh, report and publish every interval until a signal (or once, with --once). */
static void serve(struct serving *sv)
{
	const struct ev_opts *o = sv->o;

	while (!stop_signal) {
		double t0 = mono_s();
		refresh_all(sv->ms, sv->n);
		double took = mono_s() - t0;
		double cost = 0;
		int up = 0;
		for (int i = 0; i < sv->n; i++) {
			report(&sv->ms[i]);
			cost = sv->ms[i].cost_ms > cost ? sv->ms[i].cost_ms : cost;
			up += sv->ms[i].fs->up;
		}
		struct ev_buf text;
		render(sv->mx, sv->ms, sv->n, took, &text);
		publish(sv, &text);
		ev_buf_free(&text);
		if (o->once) {
			if (sv->exit_code == EV_EXIT_OK && up < sv->n)
				sv->exit_code = EV_EXIT_UNKNOWN;
			break;
		}
		/* The budget, as the console's: a costly refresh stretches the next interval. */
		int wait_ms = ev_refresh_interval_ms(o->cfg.metrics_interval_s * 1000, cost,
		                                     o->cfg.budget_permille);
		wait_until(t0 + wait_ms / 1000.0);
	}
	if (stop_signal)
		say(NULL, "stopping (%s)", stop_signal == SIGTERM ? "SIGTERM" : "SIGINT");
}

int ev_cmd_metrics(int argc, char **argv)
{
	struct ev_opts o;
	struct ev_error err = {0};
	int rc = ev_session_parse(&o, argc, argv, usage, 0, 0);
	if (rc >= 0) {
		ev_opts_free(&o);
		return rc;
	}
	o.cfg.read_only = true; /* it never writes */
	/* The exposition (names, labels, HELP) and the service's log stay English. */
	ev_i18n_off();
	if (o.once && o.listen != NULL) {
		fputs("evtop: --once writes the figures once (to --textfile or standard output); "
		      "it does not go with --listen\n",
		      stderr);
		ev_opts_free(&o);
		return EV_EXIT_USAGE;
	}
	if (!o.once && o.textfile == NULL && o.listen == NULL)
		o.listen = ev_xstrdup("127.0.0.1:9787");
	ev_mirror_set_cap((size_t)o.cfg.mirror_rows);

	struct ev_httpd *http = NULL;
	if ((rc = start_listening(&o, &http, &err)) != 0) {
		ev_opts_free(&o);
		return rc;
	}
	struct ev_fan fan;
	if (ev_fan_open(&fan, &o, false, &err) < 0 && fan.v == NULL) {
		ev_session_report(&err);
		ev_httpd_stop(&http);
		ev_opts_free(&o);
		return EV_EXIT_USAGE;
	}
	struct serving sv = {.o = &o, .http = http, .n = fan.n, .exit_code = EV_EXIT_OK};
	sv.ms = ev_xcalloc((size_t)sv.n, sizeof(*sv.ms));
	for (int i = 0; i < sv.n; i++) {
		sv.ms[i].fs = &fan.v[i];
		sv.ms[i].cfg = &o.cfg;
		sv.ms[i].said_up = -1;
	}
	sv.mx = ev_metrics_new(sv.n, o.cfg.metrics_label_cap);

	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);

	serve(&sv);
	ev_httpd_stop(&http);
	for (int i = 0; i < sv.n; i++) {
		drop_figures(&sv.ms[i]);
		for (int t = 0; t < EV_TABLE_COUNT; t++)
			ev_mirror_free(&sv.ms[i].mirror[t]);
	}
	free(sv.ms);
	ev_metrics_free(&sv.mx);
	ev_fan_close(&fan);
	ev_opts_free(&o);
	return sv.exit_code;
}
