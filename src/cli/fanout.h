/* evtop — a command over several sources at once (shards, services, a primary and its
 * replica): a session per source, opened and worked in parallel, each under its own time
 * limit, each reporting on its own. Reads go to a source's read endpoint (its replica) unless
 * --primary; writes always to the primary. A source that does not answer is said, and the
 * others still work. */
#ifndef EV_CLI_FANOUT_H
#define EV_CLI_FANOUT_H

#include "cli/options.h"
#include "cli/session.h"

#include <stdbool.h>

/* Replica lag: seconds behind, or one of these. */
#define EV_LAG_NONE    (-1LL) /* reads on the primary */
#define EV_LAG_UNKNOWN (-2LL) /* not readable, or replication stopped (see lag_note) */

struct ev_fan_src {
	const struct ev_source *src; /* the config's source (its name is the event's source) */
	struct ev_opts o;            /* the command's options with o.src = the endpoint used */
	struct ev_source *endpoint;  /* the read endpoint's settings (owned), or NULL */
	struct ev_session s;
	bool up;             /* connected */
	struct ev_error err; /* why not, or why the last work failed */
	int rc;              /* the last work's result */
	bool on_replica;     /* reads go to the read endpoint */
	long long lag_s;     /* seconds behind the primary, EV_LAG_NONE or EV_LAG_UNKNOWN */
	char lag_note[200];  /* why the lag is unknown */
	void *out;           /* the work's result, the caller's */
};

struct ev_fan {
	int n;
	struct ev_fan_src *v;
	FILE *log;  /* --log-sql */
	bool multi; /* several sources: outputs name each row's source */
};

/* Open a session on every chosen source of o, in parallel. `writes`: connect to the primary
 * (write endpoint) even where a read endpoint is set. Returns 0 when at least one source is
 * up; -1 with err when none is (err then says why for one source, or the --log-sql error).
 * The sources that are down keep their reason in v[i].err. */
int ev_fan_open(struct ev_fan *f, struct ev_opts *o, bool writes, struct ev_error *err);
/* Run fn on every source that is up, in parallel (inline for one). fn's return goes to
 * v[i].rc; fn reports into v[i].err. */
void ev_fan_run(struct ev_fan *f, int (*fn)(struct ev_fan_src *fs, void *arg), void *arg);
void ev_fan_close(struct ev_fan *f);

/* How many sources are up. */
int ev_fan_up(const struct ev_fan *f);
/* Say on stderr, per source, what is wrong: down ("shard2: no answer: ..."), or a replica
 * lagging past the warning threshold or with unknown lag. */
void ev_fan_report(const struct ev_fan *f, int lag_warning_s);
/* Read fs's replica lag into fs->lag_s (EV_LAG_UNKNOWN with fs->lag_note when it cannot be
 * read, or replication is stopped). */
void ev_fan_read_lag(struct ev_fan_src *fs);
/* "replica, 3s behind" / "replica, lag unknown (...)" / "primary": malloc'd. */
char *ev_fan_lag_text(const struct ev_fan_src *fs);

#endif
