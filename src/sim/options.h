/* evtop-sim — its command line: the options and their parsing (sim.c runs the world). */
#ifndef EV_SIM_OPTIONS_H
#define EV_SIM_OPTIONS_H

#include "core/config.h"
#include "core/model.h"
#include "core/util.h"

#include <stdbool.h>

#define MAX_INSTANCES 32
/* --kill: at most every publisher and consumer. */
#define MAX_KILLED (2 * MAX_INSTANCES)

struct sim_opts {
	double rate; /* events per second per table */
	int instances;
	double fail_rate;
	double crash_rate;
	long long outage_every_ms;
	long long outage_for_ms;
	double time_scale;
	long long lock_ms;
	long long recover_ms;
	long long poll_ms;
	long long duration_ms; /* 0 = until a signal */
	long long history_ms;
	long long history_events;
	bool history_only;
	int batch;
	unsigned long long seed;
	bool json;
	const char *table[EV_TABLE_COUNT];
	/* --kill NAME,...: instances that stop for good, at their first claim after
	 * --kill-after: they die holding that scan's locks and never claim again. */
	char killed[MAX_KILLED][32];
	int nkilled;
	long long kill_after_ms;
};

/* Whether instance `name` (publisher-01, consumer-02, ...) is one --kill names. */
bool sim_opts_killed(const struct sim_opts *o, const char *name);

/* Parse argv into o and cfg's first source (the connection options), *password when given.
 * Returns 0, 1 after --help or --version (printed), or -1 with err (EV_ERR_USAGE). */
int sim_parse_options(int argc, char **argv, struct sim_opts *o, struct ev_config *cfg,
                      char **password, struct ev_error *err);

#endif
