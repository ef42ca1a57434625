/* evtop — publisher instances, as the outbox's processing rows show them: one per locked_by,
 * the locks it holds, how many expired, its oldest lock, its newest claim seen, and whether it
 * is alive (claimed recently) or dead (only expired locks). On the message table, which has no
 * lock owner, the processing rows by event_source and the age of their last_handle_time.
 * Pure: the rows come from ev_query_instances (core/query.h), the clock from the server. */
#ifndef EV_CORE_INSTANCES_H
#define EV_CORE_INSTANCES_H

#include "core/model.h"
#include "core/rowset.h"

#include <stdbool.h>

enum ev_inst_verdict {
	EV_INST_ALIVE, /* a claim within two leases of now */
	EV_INST_DEAD,  /* no recent claim, every lock it holds expired */
	EV_INST_QUIET, /* no recent claim, yet a lock that does not expire (lock_until NULL:
	                  written by hand, not by the model's claim) */
	EV_INST_NONE,  /* the message table: no lock owner, no verdict */
};

/* "alive", "dead", "quiet", "" (none), translated (P_ context "instance"): for people. */
const char *ev_inst_verdict_name(enum ev_inst_verdict v);

/* An instance is alive while its newest claim is at most this many leases old. */
#define EV_INST_ALIVE_LEASES 2

/* The newest claim seen of an instance from its held rows: the later of its newest lock_until
 * minus the lease (the claim sets lock_until = NOW() + lease) and its newest
 * last_publish_time (the claim sets it to NOW()). Unix seconds; 0 for either means unknown
 * (NULL); 0 when both are. */
long long ev_inst_newest_claim(long long max_lock_until, long long max_last_publish, int lease_s);

/* The verdict from the figures at the server's time now (Unix seconds): locks held, of them
 * expired, the newest claim seen (0: unknown), the lease. */
enum ev_inst_verdict ev_inst_verdict(long long now, long long locks, long long expired,
                                     long long newest_claim, int lease_s);

struct ev_instance {
	char *name;             /* locked_by or event_source; NULL for rows without one */
	long long locks;        /* processing rows it holds */
	long long expired;      /* of them, stuck (outbox: lock_until <= NOW()) */
	long long oldest;       /* outbox: its earliest lock_until; message: earliest
	                           last_handle_time; Unix s, 0 unknown */
	long long newest_claim; /* outbox: ev_inst_newest_claim; message: latest last_handle_time */
	enum ev_inst_verdict verdict;
};

struct ev_instances {
	enum ev_table_kind table;
	long long now;  /* the server's clock at the read, Unix s */
	long long rows; /* processing rows read */
	bool capped;    /* the read stopped at its cap: the figures are lower bounds */
	size_t n;       /* instances, by name */
	struct ev_instance *v;
	size_t alive, dead;
};

/* The instances from a result of ev_query_instances for table t (lease_s: the config's
 * lease). Never NULL; free with ev_instances_free. */
struct ev_instances *ev_instances_from_rows(const struct ev_rowset *rs, enum ev_table_kind t,
                                            int lease_s);
void ev_instances_free(struct ev_instances **in);
/* The instance named name (NULL: the rows without a locked_by), or NULL. */
const struct ev_instance *ev_instances_find(const struct ev_instances *in, const char *name);

#endif
