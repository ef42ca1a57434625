#include <config.h>

#include "cli/cli.h"
#include "core/i18n.h"
#include "core/text.h"
#include "core/util.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* TRANSLATORS: the summaries of evtop --help's commands, after their synopses (from column
 * 32): at most 48 cells where the synopsis is short. */
const struct ev_subcommand ev_subcommands[] = {
        {"check", "check --warning E --critical E", N_("a monitoring plugin (exit 0/1/2/3)"),
         ev_cmd_check},
        {"doctor", "doctor", N_("check the schema, account and server (exit 0/1/2)"),
         ev_cmd_doctor},
        {"dashboard", "dashboard", N_("the backlog per group, per table"), ev_cmd_dashboard},
        {"list", "list KIND", N_("a list of events: failed, stuck, pending, high-retry, ..."),
         ev_cmd_list},
        {"show", "show EVENT_NO...", N_("every column of events, found in both tables"),
         ev_cmd_show},
        {"trail", "trail TYPE ID", N_("every event of one business object, in order"),
         ev_cmd_trail},
        {"trace", "trace TRACE_ID", N_("every event of one trace, in both tables"), ev_cmd_trace},
        {"retry", "retry EVENT_NO...", N_("retry failed events (scheduled, or --now)"),
         ev_cmd_retry},
        {"cancel", "cancel EVENT_NO... --reason T", N_("cancel pending or failed events"),
         ev_cmd_cancel},
        {"recover", "recover EVENT_NO...", N_("recover stuck events (processing -> failed)"),
         ev_cmd_recover},
        {"archive", "archive --table T --older-than DUR",
         N_("move finished history out of a table (archive table, file or purge)"), ev_cmd_archive},
        {"audit", "audit", N_("who did what: every operator's writes (evtop_audit), newest first"),
         ev_cmd_audit},
        {"metrics", "metrics [--listen ADDR:PORT] [--textfile FILE]",
         N_("the backlog for Prometheus (read-only)"), ev_cmd_metrics},
        {NULL, NULL, NULL, NULL},
};

const struct ev_subcommand *ev_subcommand_find(const char *name)
{
	for (const struct ev_subcommand *s = ev_subcommands; s->name != NULL; s++)
		if (strcmp(s->name, name) == 0)
			return s;
	return NULL;
}

void ev_cli_say(FILE *f, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *text = ev_xvasprintf(fmt, ap);
	va_end(ap);
	char *safe = ev_text_sanitize(text, strlen(text));
	fprintf(f, "%s\n", safe);
	free(safe);
	free(text);
}

void ev_cli_say_at(FILE *f, const char *indent, const char *label, int cols, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *rest = ev_xvasprintf(fmt, ap);
	va_end(ap);
	int w = ev_text_width(label);
	ev_cli_say(f, "%s%s%*s%s", indent, label, w < cols ? cols - w : 1, "", rest);
	free(rest);
}
