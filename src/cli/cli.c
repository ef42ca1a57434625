#include "config.h"

#include "cli/cli.h"

#include <string.h>

const struct ev_subcommand ev_subcommands[] = {
    {NULL, NULL, NULL, NULL},
};

const struct ev_subcommand *ev_subcommand_find(const char *name)
{
	for (const struct ev_subcommand *s = ev_subcommands; s->name != NULL; s++)
		if (strcmp(s->name, name) == 0)
			return s;
	return NULL;
}
