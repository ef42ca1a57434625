/* evtop — one call per source, in parallel (fan.h). */
#include <config.h>

#include "db/fan.h"
#include "core/util.h"
#include "db/conn.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>

struct fan_call {
	void (*fn)(int i, void *ctx);
	void *ctx;
	int i;
};

static void *fan_thread(void *p)
{
	struct fan_call *c = p;
	ev_db_thread_init();
	c->fn(c->i, c->ctx);
	ev_db_thread_end();
	return NULL;
}

void ev_db_fan_run(int n, void (*fn)(int i, void *ctx), void *ctx)
{
	if (n <= 0)
		return;
	if (n == 1) {
		fn(0, ctx);
		return;
	}
	struct fan_call *calls = ev_xcalloc((size_t)n, sizeof(*calls));
	pthread_t *th = ev_xcalloc((size_t)n, sizeof(*th));
	bool *started = ev_xcalloc((size_t)n, sizeof(*started));
	for (int i = 0; i < n; i++) {
		calls[i] = (struct fan_call){fn, ctx, i};
		started[i] = pthread_create(&th[i], NULL, fan_thread, &calls[i]) == 0;
		if (!started[i])
			fn(i, ctx); /* no thread to be had: this one inline */
	}
	for (int i = 0; i < n; i++)
		if (started[i])
			pthread_join(th[i], NULL);
	free(started);
	free(th);
	free(calls);
}
