/* evtop — argument parsing and dispatch to the console or a sub-command; nothing else. */
#include <config.h>

#include "cli/cli.h"
#include "db/conn.h"
#include "db/dbinfo.h"
#include "ui/uiinfo.h"

#include <langinfo.h>
#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void usage(FILE *out)
{
	fprintf(out,
	        "Usage: evtop [OPTION]... [COMMAND [ARG]...]\n"
	        "A terminal console for the backlog of MySQL event tables (biz_message_event,\n"
	        "biz_outbox_event): watch it, and retry, cancel or recover events by hand.\n"
	        "\n"
	        "Options:\n"
	        "  -h, --help      show this help and exit\n"
	        "  -V, --version   show version information and exit\n");
	if (ev_subcommands[0].name != NULL) {
		fprintf(out, "\nCommands:\n");
		for (const struct ev_subcommand *s = ev_subcommands; s->name != NULL; s++)
			fprintf(out, "  %-28s %s\n", s->synopsis, s->summary);
	}
	fprintf(out, "\nSee evtop(1) for the full manual.\n");
}

static void version(void)
{
	printf("evtop %s\n", PACKAGE_VERSION);
	printf("client library: %s\n", ev_db_client_info());
	printf("curses: %s\n", ev_ui_curses_info());
}

/* Widths come from wcwidth(), which needs a UTF-8 LC_CTYPE: take the user's, or C.UTF-8. */
static void set_locale(void)
{
	setlocale(LC_ALL, "");
	const char *cs = nl_langinfo(CODESET);
	if (cs == NULL || strcmp(cs, "UTF-8") != 0)
		setlocale(LC_CTYPE, "C.UTF-8");
}

int main(int argc, char **argv)
{
	set_locale();
	if (ev_db_init() < 0) {
		fputs("evtop: cannot initialise the MySQL client library\n", stderr);
		return EV_EXIT_UNKNOWN;
	}
	atexit(ev_db_end);
	if (argc > 1) {
		if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
			usage(stdout);
			return EV_EXIT_OK;
		}
		if (strcmp(argv[1], "--version") == 0 || strcmp(argv[1], "-V") == 0) {
			version();
			return EV_EXIT_OK;
		}
		const struct ev_subcommand *sub = ev_subcommand_find(argv[1]);
		if (sub != NULL)
			return sub->run(argc - 1, argv + 1);
		fprintf(stderr, "evtop: unknown command or option '%s'\n", argv[1]);
		usage(stderr);
		return EV_EXIT_USAGE;
	}
	fprintf(stderr, "evtop: the interactive console is not available in this build yet\n");
	return EV_EXIT_USAGE;
}
