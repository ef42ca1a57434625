/* evtop — the options every command shares: the mysql client's connection flags, evtop's
 * config file, tables, filters, output. Parsed here, applied over the config file. */
#ifndef EV_CLI_OPTIONS_H
#define EV_CLI_OPTIONS_H

#include "core/config.h"
#include "core/format.h"
#include "core/model.h"
#include "core/query.h"
#include "core/util.h"

#include <stdbool.h>

struct ev_opts {
	struct ev_config cfg;
	struct ev_source *src; /* the first chosen source in cfg */
	/* The sources a command works on (--source NAME[,NAME...]; default: every source of the
	 * config), as pointers into cfg.sources. */
	int nchosen;
	struct ev_source **chosen;
	bool primary;   /* --primary: read from the write endpoint even where a replica is set */
	char *password; /* from -p / the prompt; NULL = option files decide */
	bool prompt_password; /* -p without a value */
	char *log_sql;        /* --log-sql FILE */
	int table;            /* --table: an ev_table_kind, or -1 for both */
	enum ev_format format;
	int limit;
	char *after;
	struct ev_filter filter;
	char *by;                     /* --by DIMENSION (dashboard) */
	char *script;                 /* --script FILE (console, scripted run) */
	int screen_cols, screen_rows; /* --screen COLSxROWS (scripted run) */
	bool mono;                    /* --mono */
	char *warning;                /* --warning EXPR (check) */
	char *critical;               /* --critical EXPR (check) */
	/* the actions (retry, cancel, recover); --operator and --enable-message-recover set
	 * cfg.operator_id and cfg.recover_message */
	bool retry_now;         /* --now: retry now (3 -> 0) instead of scheduling */
	int delay_s;            /* --delay: schedule the retry this far ahead (default 0) */
	bool delay_set;         /* --delay was given */
	bool dry_run;           /* --dry-run: print the statements, write nothing */
	bool yes;               /* --yes: apply without asking */
	bool include_protected; /* --include-protected: act on protected types too */
	bool clock_ok; /* --clock-ok: the session zone is right although a mismatch is suspected */
	char *unmask;  /* --unmask=REASON: personal data shown in the clear, audited */
	/* evtop metrics */
	char *listen;          /* --listen ADDR:PORT */
	char *textfile;        /* --textfile FILE */
	bool once;             /* --once: one refresh, then exit */
	char *tls_cert;        /* --tls-cert FILE (PEM) */
	char *tls_key;         /* --tls-key FILE (PEM) */
	char *basic_auth_file; /* --basic-auth-file FILE: user:crypt(3) hash lines */
	/* evtop archive (doc/archive.md) */
	long long older_than_s;    /* --older-than DUR (-1: not given) */
	char *archive_status;      /* --status LIST */
	char *archive_to;          /* --to TABLE */
	char *archive_file;        /* --to-file FILE */
	bool purge;                /* --purge */
	bool include_deleted;      /* --include-deleted */
	bool create_archive_table; /* --create-archive-table */
	bool force;                /* --force */
	int batch;                 /* --batch N (0: the default) */
	double rate;               /* --rate ROWS/s (-1: the default) */
	long long pause_ms;        /* --pause DUR (-1: the default) */
	long long max_lag_ms;      /* --max-lag DUR (-1: the default) */
	bool from_start;           /* --from-start */
	char *until_clock;         /* archive's --until HH:MM (today or tomorrow), else NULL */
	/* evtop audit's filters: --operator as given on the command line (the config's operator
	 * is who acts, not a filter), --action, --result */
	char *audit_operator;
	char *audit_action;
	char *audit_result;
	bool help;
	/* Positional arguments after the options. */
	int nargs;
	char **args;
};

/* Parse argv (argv[0] is the command's name) into o, loading the config file first (the
 * default path, or --config). `extra` is a short description of the positional arguments for
 * the usage line. Returns 0, or -1 with err set (err->code EV_ERR_USAGE or EV_ERR_CONFIG). */
int ev_opts_parse(struct ev_opts *o, int argc, char **argv, struct ev_error *err);
void ev_opts_free(struct ev_opts *o);
/* Does this argument (an option without "=value") take the next argument as its value? */
bool ev_opts_takes_value(const char *arg);
/* The i-th long option of the table the parser reads (without "--"), NULL past the last, for
 * shell completion: *value says whether it needs a value, *file whether that value names a
 * file or directory, *short_name its one-letter form (or 0). */
const char *ev_opts_long_option(size_t i, bool *value, bool *file, char *short_name);
/* Print the shared options' help. */
void ev_opts_usage(FILE *out);
/* Ask for the password on the terminal without echo when -p was given without a value.
 * Returns -1 if there is no terminal to ask on. */
int ev_opts_prompt_password(struct ev_opts *o, struct ev_error *err);

/* The table name to use for a table kind (from --outbox-table / --message-table / config). */
const char *ev_opts_table_name(const struct ev_opts *o, enum ev_table_kind t);

#endif
