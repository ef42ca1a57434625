/* evtop — a worker thread per connection. The UI thread submits jobs and never waits: a
 * finished job comes back through a queue, with a byte written to a wake-up pipe the UI
 * polls. Each job carries a generation so a superseded result can be dropped (and its query
 * cancelled on the server). The worker blocks all signals, uses blocking client calls, owns
 * its connection, reconnects with back-off (core/refresh: attempts under 5 s apart), and never
 * touches UI state. */
#ifndef EV_DB_WORKER_H
#define EV_DB_WORKER_H

#include "core/query.h"
#include "core/rowset.h"
#include "core/util.h"
#include "db/conn.h"

#include <stdbool.h>

struct ev_worker;

/* The work of a job, run on the worker thread with its connection. Returns 0 or -1 with
 * err set; may store a result in job->result (freed by job->free_result). */
struct ev_job;
typedef int (*ev_job_fn)(struct ev_conn *conn, struct ev_job *job, struct ev_error *err);

struct ev_job {
	/* Set by the submitter. */
	int tag;           /* what the job is for (a view, a tile); for ev_worker_supersede */
	unsigned long gen; /* the submitter's generation when submitted */
	ev_job_fn fn;
	void *arg;
	void (*free_arg)(void *arg);
	/* Who takes the finished job, when that is not simply the owner `tag` names: the taker
	 * calls done(ctx, job) with a context of its own (the console: its struct app), and
	 * nothing else looks at the job. NULL: the taker routes it by tag. */
	void (*done)(void *ctx, struct ev_job *job);
	/* Connections other than the worker's that fn uses (borrowed; every source's at once):
	 * cancelling the job cancels their statements too. */
	struct ev_conn *const *conns;
	size_t nconns;
	/* Set by the worker. */
	unsigned long id;
	int rc;
	struct ev_error err;
	double elapsed_ms; /* wall time of fn */
	/* Server time charged to its statements, on every connection it used (see
	 * ev_conn_take_charged_ms): what the refresh budget counts. */
	double charged_ms;
	double at_ms, queued_mono; /* the worker's clock and the monotonic one, at submit */
	bool cancelled;            /* superseded or cancelled before or while it ran */
	void *result;
	void (*free_result)(void *result);
	struct ev_job *next;
};

/* A job that runs one query (q is owned by the job) into an ev_rowset result. */
struct ev_job *ev_job_query(int tag, unsigned long gen, struct ev_query *q);
/* A job running fn(arg). */
struct ev_job *ev_job_new(int tag, unsigned long gen, ev_job_fn fn, void *arg,
                          void (*free_arg)(void *));
/* Free a job with its arg and result; NULLs the pointer. */
void ev_job_free(struct ev_job **job);

enum ev_worker_state {
	EV_WORKER_CONNECTING,
	EV_WORKER_CONNECTED,
	EV_WORKER_RECONNECTING, /* lost; retrying with back-off */
};

/* Start a worker that owns conn (connected or not). Returns NULL with err set if the thread
 * cannot start. */
struct ev_worker *ev_worker_start(struct ev_conn *conn, struct ev_error *err);
/* Run the back-off on the submitter's clock instead of the monotonic one: *clock_ms (ms) is
 * read by ev_worker_submit, on the submitting thread, which must be the one that changes it
 * (a scripted console's virtual clock). */
void ev_worker_set_clock(struct ev_worker *w, const long long *clock_ms);
/* Stop: cancel the running query on the server, drop queued jobs, join, free the connection.
 * NULLs the pointer. */
void ev_worker_stop(struct ev_worker **w);

/* Queue a job (ownership passes to the worker until it comes back from ev_worker_take).
 * Returns its id. */
unsigned long ev_worker_submit(struct ev_worker *w, struct ev_job *job);
/* A finished job, or NULL: the caller owns it. Never blocks. */
struct ev_job *ev_worker_take(struct ev_worker *w);
/* The read end of the wake-up pipe: readable when a job has finished. Drain it with
 * ev_worker_drain_fd before taking jobs. */
int ev_worker_fd(const struct ev_worker *w);
void ev_worker_drain_fd(struct ev_worker *w);

/* Cancel every queued or running job with this tag and a generation below gen: queued ones
 * come back cancelled without running; a running one is killed on the server (KILL QUERY on
 * its connections) and starts no statement after (ev_conn_cancel): the whole job ends. */
void ev_worker_supersede(struct ev_worker *w, int tag, unsigned long gen);
/* Let the next job try to connect at once, whatever the back-off (the operator asked). */
void ev_worker_retry_now(struct ev_worker *w);
/* Cancel everything (Esc, quit). */
void ev_worker_cancel_all(struct ev_worker *w);

/* Jobs queued, running, or finished and not yet taken (ev_worker_take). */
int ev_worker_pending(struct ev_worker *w);
enum ev_worker_state ev_worker_state(struct ev_worker *w, struct ev_error *last_err);
/* Connect attempts that failed in a row (0 once connected): a job refused within the
 * back-off makes none. */
int ev_worker_connect_failures(struct ev_worker *w);
/* Milliseconds the running job has run (0 if none): for the spinner. */
double ev_worker_running_ms(struct ev_worker *w);

#endif
