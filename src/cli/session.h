/* evtop — what every sub-command does around its work: parse the options, connect, check
 * the tables, report errors (sanitised) on stderr. */
#ifndef EV_CLI_SESSION_H
#define EV_CLI_SESSION_H

#include "cli/options.h"
#include "db/conn.h"

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>

struct ev_session {
	struct ev_opts *o;
	struct ev_conn *conn;
	FILE *log;
	struct ev_table_info info[EV_TABLE_COUNT];
	bool have_info[EV_TABLE_COUNT];
};

/* Parse the options; returns an exit code to return now (help shown, usage error), or -1
 * to go on. A wrong number of positional arguments prints the usage line. */
int ev_session_parse(struct ev_opts *o, int argc, char **argv, void (*usage)(FILE *), int min_args,
                     int max_args);
/* Open --log-sql and connect. */
int ev_session_open(struct ev_session *s, struct ev_opts *o, struct ev_error *err);
void ev_session_close(struct ev_session *s);
/* Read the table's indexes and columns once, and check it exists with the model's columns. */
int ev_session_check_table(struct ev_session *s, enum ev_table_kind t, struct ev_error *err);
/* The tables a command works on: --table's, or both (outbox first). Returns how many. */
int ev_session_tables(const struct ev_opts *o, enum ev_table_kind *kinds);
/* "evtop: <message>" on stderr, sanitised. */
void ev_session_report(const struct ev_error *err);

/* A JSON string of s, sanitised (no control byte), for the hand-written JSON outputs. */
void ev_session_json_string(FILE *out, const char *s);

/* The dashboards of the tables of o into dash[table] (NULL where a table failed). Returns an
 * exit code: 0, or 3 when a table could not be read (said on stderr unless quiet). */
struct ev_dash;
int ev_dashboard_collect(struct ev_session *s, const struct ev_opts *o, struct ev_dash **dash,
                         bool quiet);

/* The same over every chosen source (cli/fanout.h): dash[table] merged (counts summed; with
 * one source, its own), per[i][table] each source's (NULL where it did not answer; per may be
 * NULL). Problems are said on stderr, each named by its source, unless quiet. Returns 0, or 3
 * when a source or a table could not be read. */
struct ev_fan;
int ev_dashboard_collect_fan(struct ev_fan *f, const struct ev_opts *o, struct ev_dash **dash,
                             struct ev_dash *(*per)[EV_TABLE_COUNT], bool quiet);

/* Ctrl-C and SIGTERM during a long run (archive, bulk): they set *flag, and the run stops at
 * its next safe point. They never interrupt a statement under way (an interrupted read of the
 * client library is a lost connection): from start to end they are blocked in the calling
 * thread, and threads it starts then, and taken by a thread of their own. With second_ends, a
 * second one ends the process at once, as the signal would have. One ignored on entry stays
 * ignored. */
struct ev_stop_watch {
	atomic_bool *flag;
	bool second_ends;
	bool running;
	pthread_t thread;
	sigset_t set; /* the ones it takes */
	sigset_t old_mask;
};
/* -1 when it cannot (no thread): the signals keep their default action. */
int ev_stop_watch_start(struct ev_stop_watch *w, atomic_bool *flag, bool second_ends);
/* Stops taking them; one that came after the last is handled as before the start. */
void ev_stop_watch_end(struct ev_stop_watch *w);

#endif
