/* evtop — work over several sources at once: the console's every-source dashboard, the
 * sub-commands' fan-out and the metrics exporter all run one call per source in parallel. */
#ifndef EV_DB_FAN_H
#define EV_DB_FAN_H

/* Run fn(i, ctx) for every i in [0, n), in parallel: each on a thread of its own (the client
 * library's thread state set up around it) when there is more than one; inline on the
 * caller's thread when there is one, or when no thread can be had. Returns when every call
 * has returned. */
void ev_db_fan_run(int n, void (*fn)(int i, void *ctx), void *ctx);

#endif
