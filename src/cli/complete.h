/* evtop — the questions the shell completion scripts (completion/) ask at completion time.
 * Hidden options of evtop, answered as its first argument, without a server or a terminal;
 * the output is never translated (doc/cli.md, "Shell completion"). */
#ifndef EV_CLI_COMPLETE_H
#define EV_CLI_COMPLETE_H

/* evtop --completion-words WHAT [COMMAND] (argv[0] is the option): one word a line.
 * WHAT: commands, options (the long ones), value-options (those that need a value) and
 * file-options (those whose value is a path), both with their one-letter forms, first-options
 * (first_only: main's own, taken as the first argument only), tables, kinds, figures, formats,
 * dimensions. COMMAND narrows options, value-options and kinds to a command's (retry, cancel,
 * recover: their --list). Returns the exit code: 0, or 2 for an unknown WHAT. */
int ev_cli_completion_words(int argc, char **argv, const char *const *first_only);

/* evtop --list-sources [--config FILE]: the names of the sources of the config file evtop
 * would read, one a line. Prints nothing when that file cannot be read or parsed, and exits
 * 0 whatever happens: nothing may reach the command line being completed. */
int ev_cli_list_sources(int argc, char **argv);

#endif
