/* evtop — a command over several sources at once (see fanout.h). */
#include <config.h>

#include "cli/fanout.h"
#include "core/doctor.h"
#include "core/files.h"
#include "core/i18n.h"
#include "core/text.h"
#include "db/conn.h"
#include "db/fan.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void ev_fan_read_lag(struct ev_fan_src *fs)
{
	struct ev_error err = {0};
	struct ev_rowset *rs = NULL;
	struct ev_query *q = ev_doctor_query_replica(ev_conn_server(fs->s.conn));
	int rc = ev_conn_run(fs->s.conn, q, &rs, &err);
	ev_query_free(&q);
	fs->lag_s = EV_LAG_UNKNOWN;
	if (rc < 0) {
		const char *why = err.code == 1227 ? _("not readable: the account lacks REPLICA "
		                                       "MONITOR (MariaDB) / REPLICATION CLIENT "
		                                       "(MySQL)")
		                                   : err.msg;
		/* At most 190 bytes, never half a character: it may be translated, or quote the
		 * server. */
		snprintf(fs->lag_note, sizeof(fs->lag_note), "%.*s", (int)ev_utf8_prefix(why, 190),
		         why);
		return;
	}
	long long lag = ev_doctor_replica_lag(rs, fs->lag_note, sizeof(fs->lag_note));
	fs->lag_s = lag >= 0 ? lag : EV_LAG_UNKNOWN;
	ev_rowset_free(&rs);
}

static int open_one(struct ev_fan_src *fs, void *arg)
{
	(void)arg;
	if (ev_session_open(&fs->s, &fs->o, &fs->err) < 0)
		return -1;
	fs->up = true;
	if (fs->on_replica)
		ev_fan_read_lag(fs);
	return 0;
}

struct fan_work {
	struct ev_fan_src **fs; /* the sources to work on */
	int (*fn)(struct ev_fan_src *fs, void *arg);
	void *arg;
};

static void fan_one(int i, void *ctx)
{
	struct fan_work *w = ctx;
	w->fs[i]->rc = w->fn(w->fs[i], w->arg);
}

/* Run fn on each source (all when `all`, else the ones up), in parallel. */
static void run(struct ev_fan *f, int (*fn)(struct ev_fan_src *fs, void *arg), void *arg, bool all)
{
	struct fan_work w = {ev_xcalloc((size_t)f->n, sizeof(*w.fs)), fn, arg};
	int n = 0;
	for (int i = 0; i < f->n; i++)
		if (all || f->v[i].up)
			w.fs[n++] = &f->v[i];
	ev_db_fan_run(n, fan_one, &w);
	free(w.fs);
}

int ev_fan_open(struct ev_fan *f, struct ev_opts *o, bool writes, struct ev_error *err)
{
	memset(f, 0, sizeof(*f));
	if (o->log_sql != NULL) {
		/* It holds the statements' parameters: 0600, never through a link. */
		f->log = ev_file_stream(_("the --log-sql file"), o->log_sql, EV_FILE_PRIVATE,
		                        EV_FILE_APPEND, err);
		if (f->log == NULL) {
			err->code = EV_ERR_USAGE;
			return -1;
		}
		ev_db_set_sql_log(f->log);
	}
	f->n = o->nchosen;
	f->multi = o->nchosen > 1;
	f->v = ev_xcalloc((size_t)f->n, sizeof(*f->v));
	for (int i = 0; i < f->n; i++) {
		struct ev_fan_src *fs = &f->v[i];
		fs->src = o->chosen[i];
		fs->o = *o; /* shallow: the copies never free what they share */
		fs->o.log_sql = NULL;
		fs->o.src = o->chosen[i];
		fs->lag_s = EV_LAG_NONE;
		if (!writes && !o->primary && ev_source_has_replica(fs->src)) {
			fs->endpoint = ev_source_read_endpoint(fs->src);
			fs->o.src = fs->endpoint;
			fs->on_replica = true;
		}
	}
	run(f, open_one, NULL, true);
	int up = ev_fan_up(f);
	if (up > 0)
		return 0;
	/* Nothing answered: one error to say (the first source's), the rest on stderr. */
	*err = f->v[0].err;
	if (f->multi) {
		char first[sizeof(err->msg)];
		snprintf(first, sizeof(first), "%s", f->v[0].err.msg);
		ev_error_set(err, f->v[0].err.code, "%s: %s", f->v[0].src->name, first);
	}
	return -1;
}

void ev_fan_run(struct ev_fan *f, int (*fn)(struct ev_fan_src *fs, void *arg), void *arg)
{
	run(f, fn, arg, false);
}

void ev_fan_close(struct ev_fan *f)
{
	for (int i = 0; i < f->n; i++) {
		ev_session_close(&f->v[i].s);
		ev_source_free(&f->v[i].endpoint);
	}
	free(f->v);
	if (f->log != NULL) {
		ev_db_set_sql_log(NULL);
		fclose(f->log);
	}
	memset(f, 0, sizeof(*f));
}

int ev_fan_up(const struct ev_fan *f)
{
	int up = 0;
	for (int i = 0; i < f->n; i++)
		up += f->v[i].up;
	return up;
}

char *ev_fan_lag_text(const struct ev_fan_src *fs)
{
	if (!fs->on_replica)
		/* TRANSLATORS: where a source is read from: its primary (else "replica, ..."). */
		return ev_xstrdup(P_("endpoint", "primary"));
	if (fs->lag_s == EV_LAG_UNKNOWN)
		return ev_xasprintf(_("replica, lag unknown: %s"), fs->lag_note);
	return ev_xasprintf(_("replica, %llds behind"), fs->lag_s);
}

void ev_fan_report(const struct ev_fan *f, int lag_warning_s)
{
	for (int i = 0; i < f->n; i++) {
		const struct ev_fan_src *fs = &f->v[i];
		char *msg = NULL;
		if (!fs->up)
			msg = ev_xasprintf(_("%s: no answer: %s"), fs->src->name, fs->err.msg);
		else if (fs->on_replica && fs->lag_s == EV_LAG_UNKNOWN)
			msg = ev_xasprintf(
			        _("%s: warning: reading a replica whose lag is unknown (%s); "
			          "--primary reads the primary"),
			        fs->src->name, fs->lag_note);
		else if (fs->on_replica && fs->lag_s >= lag_warning_s)
			msg = ev_xasprintf(_("%s: warning: the replica is %llds behind the primary "
			                     "(figures are that old); --primary reads the primary"),
			                   fs->src->name, fs->lag_s);
		if (msg != NULL) {
			char *safe = ev_text_sanitize(msg, strlen(msg));
			fprintf(stderr, "evtop: %s\n", safe);
			free(safe);
			free(msg);
		}
	}
}
