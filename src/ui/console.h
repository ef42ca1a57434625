/* evtop — the interactive console (`evtop` with no sub-command). */
#ifndef EV_UI_CONSOLE_H
#define EV_UI_CONSOLE_H

#include "core/config.h"
#include "ui/keys.h"

struct ev_console_args {
	struct ev_config *cfg;
	struct ev_source *src; /* the source shown first */
	/* Every source the console may switch to (src among them); at least src. */
	struct ev_source **sources;
	int nsources;
	bool primary;         /* read from the primary even where a source has a read endpoint */
	const char *password; /* NULL: the option files decide */
	const char *log_sql;  /* --log-sql FILE, or NULL */
	/* Scripted runs (tests, demos): keys and commands from a file, rendering into a
	 * virtual terminal of cols x rows that needs no tty. */
	const char *script;
	int cols, rows;
	bool mono;
	bool clock_ok; /* --clock-ok: writes proceed while a time zone mismatch is suspected */
};

/* Run the console until the operator quits. Returns the process exit code. */
int ev_console_run(const struct ev_console_args *args);

/* The one dispatcher, inside the console (and for its tests): every action, from a key or a
 * ':' command, passes through ev_console_dispatch, which checks what its flags say once — a
 * write is refused read-only or while another one applies, and where no view has a row —
 * then gives it to the view on top, else to the console. ev_console_command runs one ':'
 * command line (without the ':'). */
struct app;
void ev_console_dispatch(struct app *a, enum ev_ui_action act);
void ev_console_command(struct app *a, const char *text);

#endif
