/* evtop — the shell completion's questions (completion/evtop.bash, completion/_evtop; see
 * complete.h). Every word is read from the table the parser itself uses, so what the shell
 * offers is what evtop takes. */
#include <config.h>

#include "cli/cli.h"
#include "cli/cmd_bulk.h"
#include "cli/complete.h"
#include "cli/options.h"
#include "core/bulk.h"
#include "core/checkexpr.h"
#include "core/config.h"
#include "core/format.h"
#include "core/model.h"
#include "core/query.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Which options: all of them (long only), those that take a value, or those whose value is a
 * path (these two with the one-letter forms as well). */
enum opt_set {
	OPTS_ALL,
	OPTS_VALUE,
	OPTS_FILE,
};

static bool shared_option(const char *name)
{
	bool value, file;
	char short_name;
	const char *o;

	for (size_t i = 0; (o = ev_opts_long_option(i, &value, &file, &short_name)) != NULL; i++)
		if (strcmp(o, name) == 0)
			return true;
	return false;
}

/* The shared options (cli/options.c's long_opts). Every sub-command and the console parse
 * the same table, so every one of them takes every option: there is no per-command subset to
 * offer. retry, cancel and recover take their bulk options (cli/cmd_bulk.c) besides. */
static void put_options(FILE *out, enum opt_set set, const char *command)
{
	bool value, file;
	char short_name;
	const char *name;

	for (size_t i = 0; (name = ev_opts_long_option(i, &value, &file, &short_name)) != NULL;
	     i++) {
		if ((set == OPTS_VALUE && !value) || (set == OPTS_FILE && !file))
			continue;
		fprintf(out, "--%s\n", name);
		if (set != OPTS_ALL && short_name != 0)
			fprintf(out, "-%c\n", short_name);
	}
	if (set == OPTS_FILE || command == NULL || ev_bulk_cli_action(command) < 0)
		return;
	for (size_t i = 0; (name = ev_bulk_cli_option(i)) != NULL; i++)
		if (!shared_option(name))
			fprintf(out, "--%s\n", name); /* each takes a value */
}

/* evtop list's kinds (cli/cmd_list.c: every kind but trail and trace, which are commands of
 * their own), or those a write command's --list takes (core/bulk.c). */
static void put_kinds(FILE *out, const char *command)
{
	int action = command != NULL ? ev_bulk_cli_action(command) : -1;

	for (int k = 0; k < EV_LIST_COUNT; k++) {
		if (k == EV_LIST_TRAIL || k == EV_LIST_TRACE)
			continue;
		if (action >= 0 && !ev_bulk_list_fits((enum ev_action)action, (enum ev_list_kind)k))
			continue;
		fprintf(out, "%s\n", ev_list_name((enum ev_list_kind)k));
	}
}

int ev_cli_completion_words(int argc, char **argv, const char *const *first_only)
{
	const char *what = argc > 1 ? argv[1] : "";
	const char *command = argc > 2 ? argv[2] : NULL;
	const char *w;
	size_t n;

	if (strcmp(what, "commands") == 0) {
		for (const struct ev_subcommand *s = ev_subcommands; s->name != NULL; s++)
			printf("%s\n", s->name);
	} else if (strcmp(what, "options") == 0) {
		put_options(stdout, OPTS_ALL, command);
	} else if (strcmp(what, "value-options") == 0) {
		put_options(stdout, OPTS_VALUE, command);
	} else if (strcmp(what, "file-options") == 0) {
		put_options(stdout, OPTS_FILE, NULL);
	} else if (strcmp(what, "first-options") == 0) {
		/* main's own, taken as the first argument only (--version) */
		for (; *first_only != NULL; first_only++)
			printf("%s\n", *first_only);
	} else if (strcmp(what, "tables") == 0) {
		/* --table: ev_model_table_parse takes each table's key (and short forms) */
		for (int t = 0; t < EV_TABLE_COUNT; t++)
			printf("%s\n", ev_model_table((enum ev_table_kind)t)->key);
	} else if (strcmp(what, "kinds") == 0) {
		put_kinds(stdout, command);
	} else if (strcmp(what, "figures") == 0) {
		/* check's --warning and --critical: the names its expression parser knows */
		const struct ev_figure_def *f = ev_checkexpr_figure_list(&n);
		for (size_t i = 0; i < n; i++)
			printf("%s\n", f[i].name);
	} else if (strcmp(what, "formats") == 0) {
		for (size_t i = 0; (w = ev_format_name(i)) != NULL; i++)
			printf("%s\n", w);
	} else if (strcmp(what, "dimensions") == 0) {
		for (size_t i = 0; (w = ev_model_dimension_key(i)) != NULL; i++)
			printf("%s\n", w);
	} else {
		fprintf(stderr, "evtop: --completion-words: unknown word set '%.40s'\n", what);
		return EV_EXIT_USAGE;
	}
	return EV_EXIT_OK;
}

/* A source name as the config parser takes it is [A-Za-z0-9_.-]; anything else (a control
 * character above all) is never put on the user's command line. */
static bool printable_name(const char *s)
{
	for (; *s != '\0'; s++)
		if ((unsigned char)*s <= ' ' || (unsigned char)*s >= 127)
			return false;
	return true;
}

int ev_cli_list_sources(int argc, char **argv)
{
	const char *path = NULL;
	struct ev_config cfg;
	struct ev_error err = {0};
	int rc;

	for (int i = 1; i < argc; i++) {
		if (strncmp(argv[i], "--config=", 9) == 0)
			path = argv[i] + 9;
		else if (strcmp(argv[i], "--config") == 0 && i + 1 < argc)
			path = argv[++i];
	}
	/* The same lookup as every command (cli/options.c): --config, else the default path,
	 * where a missing file is no error. */
	ev_config_init(&cfg);
	if (path != NULL) {
		rc = ev_config_load(&cfg, path, true, &err);
	} else {
		char *def = ev_config_default_path();
		rc = ev_config_load(&cfg, def, false, &err);
		free(def);
	}
	if (rc == 0)
		for (int i = 0; i < cfg.nsources; i++)
			if (printable_name(cfg.sources[i].name))
				printf("%s\n", cfg.sources[i].name);
	ev_config_free(&cfg);
	return EV_EXIT_OK;
}
