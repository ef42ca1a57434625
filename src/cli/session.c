/* evtop — the frame of every sub-command (see session.h). */
#include <config.h>

#include "cli/session.h"
#include "cli/cli.h"
#include "core/files.h"
#include "core/i18n.h"
#include "core/text.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* SIGINT and SIGTERM, but not one ignored on entry (a background job of a script, nohup's
 * kind): the caller who ignored it meant it. */
static void stop_signals(sigset_t *set)
{
	static const int sigs[] = {SIGINT, SIGTERM};
	sigemptyset(set);
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++) {
		struct sigaction cur;
		if (sigaction(sigs[i], NULL, &cur) == 0 && cur.sa_handler == SIG_IGN)
			continue;
		sigaddset(set, sigs[i]);
	}
}

static void *stop_watch_main(void *arg)
{
	struct ev_stop_watch *w = arg;
	for (int seen = 0;; seen++) {
		int sig = 0;
		if (sigwait(&w->set, &sig) != 0)
			continue;
		if (seen > 0 && w->second_ends) {
			/* As the signal itself would have: its default action, the process ends. */
			signal(sig, SIG_DFL);
			sigset_t one;
			sigemptyset(&one);
			sigaddset(&one, sig);
			pthread_sigmask(SIG_UNBLOCK, &one, NULL);
			raise(sig);
		}
		atomic_store(w->flag, true);
	}
	return NULL;
}

int ev_stop_watch_start(struct ev_stop_watch *w, atomic_bool *flag, bool second_ends)
{
	memset(w, 0, sizeof(*w));
	w->flag = flag;
	w->second_ends = second_ends;
	atomic_store(flag, false);
	stop_signals(&w->set);
	if (!sigismember(&w->set, SIGINT) && !sigismember(&w->set, SIGTERM))
		return 0; /* both ignored: nothing to take */
	if (pthread_sigmask(SIG_BLOCK, &w->set, &w->old_mask) != 0)
		return -1;
	if (pthread_create(&w->thread, NULL, stop_watch_main, w) != 0) {
		pthread_sigmask(SIG_SETMASK, &w->old_mask, NULL);
		return -1;
	}
	w->running = true;
	return 0;
}

void ev_stop_watch_end(struct ev_stop_watch *w)
{
	if (!w->running)
		return;
	pthread_cancel(w->thread); /* sigwait is a cancellation point */
	pthread_join(w->thread, NULL);
	w->running = false;
	pthread_sigmask(SIG_SETMASK, &w->old_mask, NULL);
}

void ev_session_report(const struct ev_error *err)
{
	char *safe = ev_text_sanitize(err->msg, strlen(err->msg));
	fprintf(stderr, "evtop: %s\n", safe);
	free(safe);
}

int ev_session_open(struct ev_session *s, struct ev_opts *o, struct ev_error *err)
{
	memset(s, 0, sizeof(*s));
	s->o = o;
	if (o->log_sql != NULL) {
		/* It holds the statements' parameters: 0600, never through a link. */
		s->log = ev_file_stream(_("the --log-sql file"), o->log_sql, EV_FILE_PRIVATE,
		                        EV_FILE_APPEND, err);
		if (s->log == NULL) {
			err->code = EV_ERR_USAGE;
			return -1;
		}
		ev_db_set_sql_log(s->log);
	}
	s->conn = ev_conn_new(o->src, &o->cfg);
	if (o->password != NULL)
		ev_conn_set_password(s->conn, o->password);
	return ev_conn_connect(s->conn, err);
}

void ev_session_close(struct ev_session *s)
{
	for (int t = 0; t < EV_TABLE_COUNT; t++)
		ev_table_info_clear(&s->info[t]);
	ev_conn_free(&s->conn);
	if (s->log != NULL) {
		ev_db_set_sql_log(NULL);
		fclose(s->log);
	}
}

/* Read and check a table: it exists and has every column of the model. */
int ev_session_check_table(struct ev_session *s, enum ev_table_kind t, struct ev_error *err)
{
	const struct ev_table_def *def = ev_model_table(t);
	const char *name = ev_opts_table_name(s->o, t);
	struct ev_table_info *ti = &s->info[t];

	if (!s->have_info[t]) {
		if (ev_conn_table_info(s->conn, name, ti, err) < 0)
			return -1;
		s->have_info[t] = true;
	}
	if (!ti->exists)
		return ev_error_set(err, EV_ERR_SCHEMA,
		                    _("table %s (the %s table) does not exist in this database"),
		                    name, def->key);
	for (size_t i = 0; i < def->ncolumns; i++) {
		bool found = false;
		for (size_t j = 0; j < ti->ncolumns && !found; j++)
			found = strcmp(ti->columns[j], def->columns[i].name) == 0;
		if (!found)
			return ev_error_set(
			        err, EV_ERR_SCHEMA,
			        _("table %s has no column %s: its schema differs from the model "
			          "document (evtop doctor explains)"),
			        name, def->columns[i].name);
	}
	return 0;
}

int ev_session_tables(const struct ev_opts *o, enum ev_table_kind *kinds)
{
	if (o->table >= 0) {
		kinds[0] = (enum ev_table_kind)o->table;
		return 1;
	}
	kinds[0] = EV_TABLE_OUTBOX;
	kinds[1] = EV_TABLE_MESSAGE;
	return 2;
}

int ev_session_parse(struct ev_opts *o, int argc, char **argv, void (*usage)(FILE *), int min_args,
                     int max_args)
{
	struct ev_error err = {0};
	if (ev_opts_parse(o, argc, argv, &err) < 0) {
		ev_session_report(&err);
		return err.code == EV_ERR_CONFIG ? EV_EXIT_USAGE : EV_EXIT_USAGE;
	}
	if (o->help) {
		usage(stdout);
		return EV_EXIT_OK;
	}
	if (o->nargs < min_args || o->nargs > max_args) {
		/* The usage line alone; --help has the rest. */
		char *text = NULL;
		size_t len = 0;
		FILE *mem = open_memstream(&text, &len);
		if (mem != NULL) {
			usage(mem);
			fclose(mem);
			char *nl = strchr(text, '\n');
			fprintf(stderr, "%.*s\n", nl ? (int)(nl - text) : (int)len, text);
			/* TRANSLATORS: under a command's usage line; %s is the command ("list"). */
			fprintf(stderr, _("(%s --help for more)\n"), argv[0]);
			free(text);
		}
		return EV_EXIT_USAGE;
	}
	return -1;
}

void ev_session_json_string(FILE *out, const char *s)
{
	char *safe = ev_text_sanitize(s, strlen(s));
	fputc('"', out);
	for (const char *p = safe; *p; p++) {
		if (*p == '"' || *p == '\\')
			fputc('\\', out);
		fputc(*p, out);
	}
	fputc('"', out);
	free(safe);
}
