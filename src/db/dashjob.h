/* evtop — the dashboard's refresh as a worker job (db/worker.h): the server's clock, the
 * tables' shapes when not known yet, and each table's dashboard, from its backlog mirror
 * (db/mirror.h) when one is lent to the job, else by the counts (db/fetch.h); or every source
 * at once, each on a thread of its own, a row per source. The console submits it; it draws
 * nothing. */
#ifndef EV_DB_DASHJOB_H
#define EV_DB_DASHJOB_H

#include "db/archive.h"
#include "db/fetch.h"
#include "db/mirror.h"
#include "db/worker.h"

/* The dimension of the every-source dashboard, a row per source: one object, so that its
 * pointer compares equal as the other dimensions' keys do. */
extern const char ev_dashjob_all_dim[];

/* One source of the every-source dashboard (its totals, a row per source). */
struct ev_dashjob_src {
	char *name;
	char *table_name[EV_TABLE_COUNT]; /* NULL: not one of its tables (the config's) */
	struct ev_table_info info[EV_TABLE_COUNT];
	bool need_info; /* its tables' shapes are not known: read them */
	bool replica;   /* read on its replica: its lag is read too */
};

/* What the job reads (owned by the job: ev_dashjob_arg_free): one source's dashboard, or
 * (all.n > 0) every source's totals at once, where only window_s and stuck_s of the rest
 * count. */
struct ev_dashjob_arg {
	char *table_name[EV_TABLE_COUNT];
	struct ev_mirror *mirror[EV_TABLE_COUNT]; /* moved to the result */
	struct ev_mirror_opts mirror_opts;
	const char *dimension[EV_TABLE_COUNT];
	int window_s, stuck_s;
	unsigned skip[EV_TABLE_COUNT];
	/* Read the table's size and history this time (every few minutes: db/archive.h), against
	 * its retention setting (seconds, 0: none). */
	bool facts[EV_TABLE_COUNT];
	int retention_s[EV_TABLE_COUNT];
	bool need_info;
	struct ev_table_info info[EV_TABLE_COUNT];
	char where[96];
	struct {
		int n;
		struct ev_conn **conns; /* the app's, used by this job only (job->conns) */
		struct ev_dashjob_src *src;
	} all;
};

/* What the every-source job read of one source. */
struct ev_dashjob_src_result {
	bool got_info; /* info read anew */
	struct ev_table_info info[EV_TABLE_COUNT];
	long long lag; /* its replica's lag in seconds, -1 unknown */
};

/* What it read (job->result, freed with the job). */
struct ev_dashjob_result {
	struct ev_mirror *mirror[EV_TABLE_COUNT]; /* given back to the view */
	bool have_info;
	struct ev_table_info info[EV_TABLE_COUNT];
	struct ev_dash *dash[EV_TABLE_COUNT];
	struct ev_table_facts facts[EV_TABLE_COUNT]; /* .read when asked for and read */
	char note[EV_TABLE_COUNT][200];
	bool gone[EV_TABLE_COUNT]; /* the table is missing or no longer has the model's shape */
	char now[32];
	long long unix_time;
	char server[160];
	bool failed; /* the connection: data is stale */
	struct ev_error err;
	/* Every source at once: what was read of each. */
	int nall;
	struct ev_dashjob_src_result *all;
};

void ev_dashjob_arg_free(void *arg);
/* The job's function (ev_job_new(..., ev_dashjob_run, arg, ev_dashjob_arg_free)): the mirrors
 * lent in the arg move to the result, to be given back. */
int ev_dashjob_run(struct ev_conn *c, struct ev_job *job, struct ev_error *err);

#endif
