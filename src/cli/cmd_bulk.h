/* evtop — the bulk form of `evtop retry|cancel|recover` (cmd_bulk.c): every row of a list
 * (`--list KIND --table T` with the filters of `evtop list`) instead of EVENT_NOs, counted,
 * shown, confirmed and applied in batches (src/db/bulk.h). cmd_action.c parses the shared
 * options, checks the terminal, opens the audit file and connects, then calls in here. */
#ifndef EV_CLI_CMD_BULK_H
#define EV_CLI_CMD_BULK_H

#include "cli/options.h"
#include "cli/session.h"
#include "core/auditlog.h"
#include "core/model.h"
#include "db/action.h"

#include <stdbool.h>
#include <stdio.h>

/* The bulk options, taken out of argv before the shared options see it. */
struct ev_bulk_cli {
	char *list;         /* --list KIND: a bulk run; NULL = the event_no form */
	long long batch;    /* --batch-size N; 0 = the default */
	double rate;        /* --rate N (events per second); < 0 = the default */
	long long pause_ms; /* --pause DUR; < 0 = the default */
	long long max_rows; /* --max-rows N; 0 = the default */
	bool any;           /* any of them was given */
};

/* Take --list, --batch-size, --rate, --pause and --max-rows (and their values) out of argv.
 * Returns -1 with err (EV_ERR_USAGE) for a missing or bad value. */
int ev_bulk_cli_take(int *argc, char **argv, struct ev_bulk_cli *b, struct ev_error *err);
void ev_bulk_cli_free(struct ev_bulk_cli *b);
/* The i-th bulk option's name (without "--"; each takes a value), NULL past the last: for
 * shell completion of retry, cancel and recover. */
const char *ev_bulk_cli_option(size_t i);
/* The action whose lists `evtop COMMAND --list KIND` takes (retry: retry_schedule, whose
 * lists are retry_now's), or -1 when COMMAND has no bulk form (cmd_action.c). */
int ev_bulk_cli_action(const char *command);
/* The bulk part of the actions' --help. */
void ev_bulk_cli_usage(FILE *out);

/* What cmd_action.c has prepared. */
struct ev_bulk_cli_ctx {
	struct ev_opts *o;
	struct ev_session *s;           /* connected; the table checked */
	const struct ev_access *access; /* for o->table */
	bool access_checked;
	struct ev_audit_log *log; /* open unless --dry-run */
	const struct ev_audit_who *who;
	enum ev_action action;
	const char *reason;
	bool interactive; /* a terminal and no --yes: show, ask, then apply */
};

/* Check the bulk request (--table given, the list fits the action, no EVENT_NO) before
 * connecting; returns 0 or an exit code, having said why on stderr. */
int ev_bulk_cli_check(const struct ev_bulk_cli *b, const struct ev_opts *o, enum ev_action action,
                      const char *verb);
/* Count, show, confirm, apply, report. Returns the exit code: 0 the run went to its end and
 * no row failed (skipped and protected rows are counted, not errors); 1 a row failed, a batch
 * stayed in doubt, the run stopped, or it was refused or declined; 3 the database could not
 * be read. */
int ev_bulk_cli_run(const struct ev_bulk_cli_ctx *c, const struct ev_bulk_cli *b);

#endif
