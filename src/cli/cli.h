/* evtop — the non-interactive sub-commands. Uses core and db, never curses. */
#ifndef EV_CLI_CLI_H
#define EV_CLI_CLI_H

#include <stdio.h>

/* Exit codes of every evtop command (documented in doc/evtop.1, EXIT STATUS). */
enum {
	EV_EXIT_OK = 0,
	EV_EXIT_FAILURE = 1, /* the command ran and found a problem (or check: warning) */
	EV_EXIT_USAGE = 2,   /* bad arguments or configuration */
	EV_EXIT_UNKNOWN = 3, /* could not tell: server unreachable, schema unusable */
};

struct ev_subcommand {
	const char *name;
	const char *synopsis;
	const char *summary;
	int (*run)(int argc, char **argv);
};

/* The table of sub-commands, ended by an entry with name NULL. */
extern const struct ev_subcommand ev_subcommands[];

/* The sub-commands (each parses its own options; argv[0] is the command's name). */
int ev_cmd_list(int argc, char **argv);
int ev_cmd_show(int argc, char **argv);
int ev_cmd_trail(int argc, char **argv);
int ev_cmd_trace(int argc, char **argv);
int ev_cmd_dashboard(int argc, char **argv);
/* The guarded actions on single events (cmd_action.c). */
int ev_cmd_retry(int argc, char **argv);
int ev_cmd_cancel(int argc, char **argv);
int ev_cmd_recover(int argc, char **argv);
int ev_cmd_check(int argc, char **argv);
int ev_cmd_doctor(int argc, char **argv);  /* cmd_doctor.c */
int ev_cmd_metrics(int argc, char **argv); /* cmd_metrics.c: Prometheus */
int ev_cmd_archive(int argc, char **argv); /* cmd_archive.c: retention */
int ev_cmd_audit(int argc, char **argv);   /* cmd_audit.c: who did what (evtop_audit) */

/* One line to f through the sanitiser (event_nos, reasons and rows come from the database or
 * the operator and may hold control characters). */
void ev_cli_say(FILE *f, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The same, starting with indent and a label padded to `cols` cells (at least one space after
 * it): result lines ("applied  outbox E1 ...") and fields ("  row:       ...") line up
 * whatever the language of the label. */
void ev_cli_say_at(FILE *f, const char *indent, const char *label, int cols, const char *fmt, ...)
        __attribute__((format(printf, 5, 6)));

/* Look up a sub-command by name; NULL if there is none. */
const struct ev_subcommand *ev_subcommand_find(const char *name);

#endif
