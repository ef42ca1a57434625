/* evtop — argument parsing and dispatch to the console or a sub-command; nothing else. */
#include <config.h>

#include "cli/cli.h"
#include "cli/complete.h"
#include "cli/options.h"
#include "core/i18n.h"
#include "core/query.h"
#include "core/text.h"
#include "db/conn.h"
#include "db/dbinfo.h"
#include "ui/console.h"
#include "ui/uiinfo.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* s, then spaces to `cols` cells (a longer s is printed whole). */
static void put_padded(FILE *out, const char *s, int cols)
{
	fputs(s, out);
	for (int w = ev_text_width(s); w < cols; w++)
		fputc(' ', out);
}

/* The options main answers itself, as the first argument only (shell completion offers them
 * there, cli/complete.h). */
static const char *const first_only[] = {"--version", "-V", NULL};

static bool is_first_only(const char *arg)
{
	for (const char *const *o = first_only; *o != NULL; o++)
		if (strcmp(arg, *o) == 0)
			return true;
	return false;
}

static void usage(FILE *out)
{
	fputs(_("Usage: evtop [OPTION]... [COMMAND [ARG]...]\n"
	        "A terminal console for the backlog of MySQL event tables (biz_message_event,\n"
	        "biz_outbox_event): watch it, and retry, cancel or recover events by hand.\n"),
	      out);
	fputs("\n", out);
	fputs(_("Options:\n"
	        "      --help      show this help and exit (COMMAND --help: the command's)\n"
	        "  -V, --version   show version information and exit\n"
	        "Connection options (-h HOST, -P PORT, -S SOCKET, -u USER, -p, -D DATABASE,\n"
	        "--defaults-file, ...) follow the mysql client's conventions and may come before\n"
	        "or after the command; `evtop list --help` lists them all.\n"),
	      out);
	if (ev_subcommands[0].name != NULL) {
		/* TRANSLATORS: the heading of the sub-commands in evtop --help. */
		fprintf(out, "\n%s\n", _("Commands:"));
		/* The synopses are command syntax (English); a summary may be wider per byte. */
		for (const struct ev_subcommand *s = ev_subcommands; s->name != NULL; s++) {
			fputs("  ", out);
			put_padded(out, s->synopsis, 28);
			fprintf(out, " %s\n", _(s->summary));
		}
	}
	fprintf(out, "\n%s\n", _("See evtop(1) for the full manual."));
}

static void version(void)
{
	printf("evtop %s\n", PACKAGE_VERSION);
	/* TRANSLATORS: --version's lines; the value follows. */
	printf(_("client library: %s\n"), ev_db_client_info());
	printf(_("curses: %s\n"), ev_ui_curses_info());
	char servers[128] = "";
	for (int i = 0; i < ev_server_nfloors; i++) {
		const struct ev_server_floor *f = &ev_server_floors[i];
		size_t n = strlen(servers);
		snprintf(servers + n, sizeof(servers) - n, "%s%s %d.%d+", i > 0 ? ", " : "",
		         ev_flavour_name(f->flavour), f->major, f->minor);
	}
	/* TRANSLATORS: --version's line of the servers evtop supports: "MySQL 8.0+, MariaDB
	 * 10.6+", then the server the tests run on. */
	printf(_("servers: %s (tested on %s)\n"), servers, EV_SERVER_TESTED);
}

/* The console: the shared options, then the UI. */
static int run_console(int argc, char **argv)
{
	struct ev_opts o;
	struct ev_error err = {0};
	if (ev_opts_parse(&o, argc, argv, &err) < 0) {
		ev_say_error("%s", err.msg);
		ev_opts_free(&o);
		return EV_EXIT_USAGE;
	}
	if (o.help) {
		usage(stdout);
		ev_opts_free(&o);
		return EV_EXIT_OK;
	}
	if (o.nargs > 0) {
		ev_say_error(_("unknown command '%s'"), o.args[0]);
		usage(stderr);
		ev_opts_free(&o);
		return EV_EXIT_USAGE;
	}
	struct ev_console_args args = {
	        .cfg = &o.cfg,
	        .src = o.src,
	        .sources = o.chosen,
	        .nsources = o.nchosen,
	        .primary = o.primary,
	        .password = o.password,
	        .log_sql = o.log_sql,
	        .script = o.script,
	        .cols = o.screen_cols,
	        .rows = o.screen_rows,
	        .mono = o.mono,
	        .clock_ok = o.clock_ok,
	};
	int rc = ev_console_run(&args);
	ev_opts_free(&o);
	return rc;
}

int main(int argc, char **argv)
{
	ev_i18n_init(LOCALEDIR);
	/* The completion scripts' questions (hidden; doc/cli.md, "Shell completion"): no server,
	 * no terminal, and never a word of an error on the command line being completed. */
	if (argc > 1 && strcmp(argv[1], "--completion-words") == 0)
		return ev_cli_completion_words(argc - 1, argv + 1, first_only);
	if (argc > 1 && strcmp(argv[1], "--list-sources") == 0)
		return ev_cli_list_sources(argc - 1, argv + 1);
	if (ev_db_init() < 0) {
		fprintf(stderr, "evtop: %s\n", _("cannot initialise the MySQL client library"));
		return EV_EXIT_UNKNOWN;
	}
	atexit(ev_db_end);
	/* Options may come before the command, as with the mysql client's --defaults-file:
	 * find the command and hand it every other argument. */
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--") == 0)
			break;
		if (argv[i][0] == '-') {
			if (ev_opts_takes_value(argv[i]))
				i++;
			continue;
		}
		const struct ev_subcommand *sub = ev_subcommand_find(argv[i]);
		if (sub == NULL)
			break;
		char *cmd = argv[i];
		memmove(&argv[2], &argv[1], (size_t)(i - 1) * sizeof(*argv));
		argv[1] = cmd;
		return sub->run(argc - 1, argv + 1);
	}
	if (argc > 1 && argv[1][0] != '-') {
		const struct ev_subcommand *sub = ev_subcommand_find(argv[1]);
		if (sub == NULL) {
			ev_say_error(_("unknown command '%s'"), argv[1]);
			usage(stderr);
			return EV_EXIT_USAGE;
		}
	}
	if (argc > 1) {
		if (strcmp(argv[1], "--help") == 0) {
			usage(stdout);
			return EV_EXIT_OK;
		}
		if (is_first_only(argv[1])) {
			version();
			return EV_EXIT_OK;
		}
	}
	return run_console(argc, argv);
}
