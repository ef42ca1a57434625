/* evtop — the worker thread (see worker.h). */
#include <config.h>

#include "db/worker.h"

#include "core/i18n.h"
#include "core/refresh.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

struct ev_worker {
	struct ev_conn *conn;
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	int pipe_rd, pipe_wr;
	struct ev_job *queue, *queue_tail;
	struct ev_job *done, *done_tail;
	struct ev_job *running;
	double running_since;
	bool stopping;
	unsigned long next_id;
	enum ev_worker_state state;
	struct ev_error last_err;
	const long long *clock; /* the jobs' clock (ev_worker_set_clock), or NULL: monotonic */
	double retry_at;        /* the jobs' clock at the next connect attempt */
	int failures;           /* connect attempts failed in a row */
};

/* At most this early, an attempt counts as due: timers that fire on the back-off's edge. */
#define RETRY_SLACK_MS 250

static double mono_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int run_query_job(struct ev_conn *conn, struct ev_job *job, struct ev_error *err)
{
	struct ev_rowset *rs = NULL;
	if (ev_conn_run(conn, job->arg, &rs, err) < 0)
		return -1;
	job->result = rs;
	return 0;
}

static void free_query(void *q)
{
	struct ev_query *p = q;
	ev_query_free(&p);
}

static void free_rowset(void *r)
{
	struct ev_rowset *p = r;
	ev_rowset_free(&p);
}

struct ev_job *ev_job_new(int tag, unsigned long gen, ev_job_fn fn, void *arg,
                          void (*free_arg)(void *))
{
	struct ev_job *j = ev_xcalloc(1, sizeof(*j));
	j->tag = tag;
	j->gen = gen;
	j->fn = fn;
	j->arg = arg;
	j->free_arg = free_arg;
	return j;
}

struct ev_job *ev_job_query(int tag, unsigned long gen, struct ev_query *q)
{
	struct ev_job *j = ev_job_new(tag, gen, run_query_job, q, free_query);
	j->free_result = free_rowset;
	return j;
}

void ev_job_free(struct ev_job **jp)
{
	struct ev_job *j = *jp;
	if (j == NULL)
		return;
	if (j->free_arg != NULL && j->arg != NULL)
		j->free_arg(j->arg);
	if (j->free_result != NULL && j->result != NULL)
		j->free_result(j->result);
	free(j);
	*jp = NULL;
}

static void push(struct ev_job **head, struct ev_job **tail, struct ev_job *j)
{
	j->next = NULL;
	if (*tail)
		(*tail)->next = j;
	else
		*head = j;
	*tail = j;
}

/* Hand a finished job back and wake the UI. Called with the lock held. */
static void finish_locked(struct ev_worker *w, struct ev_job *j)
{
	push(&w->done, &w->done_tail, j);
	ssize_t n;
	do
		n = write(w->pipe_wr, "", 1);
	while (n < 0 && errno == EINTR);
	/* A full pipe (EAGAIN) already wakes the reader. */
}

static void *worker_main(void *p)
{
	struct ev_worker *w = p;
	sigset_t all;

	sigfillset(&all);
	/* A fault in this thread (a bug here or in the client library) must still reach the
	 * console's crash handler, which gives the terminal back: blocked, the kernel kills the
	 * process without running it. Every other signal is the main thread's. */
	sigdelset(&all, SIGSEGV);
	sigdelset(&all, SIGBUS);
	sigdelset(&all, SIGFPE);
	sigdelset(&all, SIGILL);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	ev_db_thread_init();

	pthread_mutex_lock(&w->lock);
	for (;;) {
		while (w->queue == NULL && !w->stopping)
			pthread_cond_wait(&w->cond, &w->lock);
		if (w->stopping)
			break;
		struct ev_job *j = w->queue;
		w->queue = j->next;
		if (w->queue == NULL)
			w->queue_tail = NULL;
		w->running = j;
		w->running_since = mono_ms();
		/* A cancel was for the job before: this one may run its statements. */
		ev_conn_cancel(w->conn, false);
		for (size_t i = 0; i < j->nconns; i++)
			ev_conn_cancel(j->conns[i], false);
		pthread_mutex_unlock(&w->lock);

		struct ev_error err = {0};
		double t0 = mono_ms();
		/* Now on the jobs' clock: its time at submit and what it has waited since. */
		double now = j->at_ms + (t0 - j->queued_mono);
		bool gated = false;
		int rc;
		(void)ev_conn_take_charged_ms(w->conn);
		for (size_t i = 0; i < j->nconns; i++)
			(void)ev_conn_take_charged_ms(j->conns[i]);
		if (!ev_conn_is_connected(w->conn) && now + RETRY_SLACK_MS < w->retry_at) {
			gated = true;
			rc = ev_error_set(&err, EV_ERR_CONNECT, _("reconnecting in %.0f s: %s"),
			                  (w->retry_at - now) / 1000.0, w->last_err.msg);
		} else if (!ev_conn_is_connected(w->conn) && ev_conn_connect(w->conn, &err) < 0) {
			rc = -1;
		} else {
			rc = j->fn(w->conn, j, &err);
		}
		double t1 = mono_ms();
		double charged = ev_conn_take_charged_ms(w->conn);
		for (size_t i = 0; i < j->nconns; i++)
			charged += ev_conn_take_charged_ms(j->conns[i]);

		pthread_mutex_lock(&w->lock);
		j->rc = rc;
		j->err = err;
		j->elapsed_ms = t1 - t0;
		j->charged_ms = charged;
		w->running = NULL;
		if (ev_conn_is_connected(w->conn)) {
			w->state = EV_WORKER_CONNECTED;
			w->failures = 0;
			w->retry_at = 0;
		} else if (rc < 0) {
			/* Lost or never reached: back off before the next attempt, counted from
			 * this one's start (attempts under 5 s apart, however long one takes). */
			if (!gated) {
				w->failures++;
				w->retry_at = now + ev_refresh_backoff_ms(w->failures);
				w->last_err = err;
			}
			w->state = EV_WORKER_RECONNECTING;
		}
		finish_locked(w, j);
	}
	pthread_mutex_unlock(&w->lock);
	ev_db_thread_end();
	return NULL;
}

struct ev_worker *ev_worker_start(struct ev_conn *conn, struct ev_error *err)
{
	struct ev_worker *w = ev_xcalloc(1, sizeof(*w));
	int fds[2];

	if (pipe(fds) < 0) {
		ev_error_set(err, EV_ERR_GENERIC, "pipe: %s", strerror(errno));
		free(w);
		return NULL;
	}
	for (int i = 0; i < 2; i++) {
		fcntl(fds[i], F_SETFL, fcntl(fds[i], F_GETFL) | O_NONBLOCK);
		fcntl(fds[i], F_SETFD, FD_CLOEXEC);
	}
	w->pipe_rd = fds[0];
	w->pipe_wr = fds[1];
	w->conn = conn;
	w->state = ev_conn_is_connected(conn) ? EV_WORKER_CONNECTED : EV_WORKER_CONNECTING;
	pthread_mutex_init(&w->lock, NULL);
	pthread_cond_init(&w->cond, NULL);
	if (pthread_create(&w->thread, NULL, worker_main, w) != 0) {
		ev_error_set(err, EV_ERR_GENERIC, _("cannot start a worker thread"));
		close(fds[0]);
		close(fds[1]);
		pthread_mutex_destroy(&w->lock);
		pthread_cond_destroy(&w->cond);
		free(w);
		return NULL;
	}
	return w;
}

void ev_worker_stop(struct ev_worker **wp)
{
	struct ev_worker *w = *wp;
	if (w == NULL)
		return;
	ev_worker_cancel_all(w);
	pthread_mutex_lock(&w->lock);
	w->stopping = true;
	pthread_cond_signal(&w->cond);
	pthread_mutex_unlock(&w->lock);
	pthread_join(w->thread, NULL);
	for (struct ev_job *j = w->done, *n; j; j = n) {
		n = j->next;
		ev_job_free(&j);
	}
	for (struct ev_job *j = w->queue, *n; j; j = n) {
		n = j->next;
		ev_job_free(&j);
	}
	close(w->pipe_rd);
	close(w->pipe_wr);
	pthread_mutex_destroy(&w->lock);
	pthread_cond_destroy(&w->cond);
	ev_conn_free(&w->conn);
	free(w);
	*wp = NULL;
}

void ev_worker_set_clock(struct ev_worker *w, const long long *clock_ms)
{
	pthread_mutex_lock(&w->lock);
	w->clock = clock_ms;
	pthread_mutex_unlock(&w->lock);
}

unsigned long ev_worker_submit(struct ev_worker *w, struct ev_job *job)
{
	job->queued_mono = mono_ms();
	pthread_mutex_lock(&w->lock);
	job->at_ms = w->clock != NULL ? (double)*w->clock : job->queued_mono;
	job->id = ++w->next_id;
	push(&w->queue, &w->queue_tail, job);
	pthread_cond_signal(&w->cond);
	unsigned long id = job->id;
	pthread_mutex_unlock(&w->lock);
	return id;
}

struct ev_job *ev_worker_take(struct ev_worker *w)
{
	pthread_mutex_lock(&w->lock);
	struct ev_job *j = w->done;
	if (j != NULL) {
		w->done = j->next;
		if (w->done == NULL)
			w->done_tail = NULL;
		j->next = NULL;
	}
	pthread_mutex_unlock(&w->lock);
	return j;
}

int ev_worker_fd(const struct ev_worker *w)
{
	return w->pipe_rd;
}

void ev_worker_drain_fd(struct ev_worker *w)
{
	char buf[64];
	while (read(w->pipe_rd, buf, sizeof(buf)) > 0)
		;
}

/* Cancel matching jobs. Queued ones go straight to done; a running one is killed on the
 * server, outside the lock (KILL QUERY opens a connection). */
static void cancel_where(struct ev_worker *w, bool all, int tag, unsigned long gen)
{
	bool kill = false;

	pthread_mutex_lock(&w->lock);
	struct ev_job **pp = &w->queue;
	w->queue_tail = NULL;
	while (*pp != NULL) {
		struct ev_job *j = *pp;
		if (all || (j->tag == tag && j->gen < gen)) {
			*pp = j->next;
			j->cancelled = true;
			/* TRANSLATORS: a query dropped before it ran (superseded or stopped). */
			j->rc = ev_error_set(&j->err, EV_ERR_GENERIC, _("cancelled"));
			finish_locked(w, j);
			continue;
		}
		w->queue_tail = j;
		pp = &j->next;
	}
	struct ev_conn *const *conns = NULL;
	size_t nconns = 0;
	if (w->running != NULL && (all || (w->running->tag == tag && w->running->gen < gen))) {
		w->running->cancelled = true;
		kill = true;
		/* Flagged before the KILL: the statement after the killed one never starts. The
		 * job (and what it borrows) stays until the caller, this thread, takes it back. */
		ev_conn_cancel(w->conn, true);
		conns = w->running->conns;
		nconns = w->running->nconns;
		for (size_t i = 0; i < nconns; i++)
			ev_conn_cancel(conns[i], true);
	}
	pthread_mutex_unlock(&w->lock);
	if (kill) {
		/* From a thread of their own: the caller is the UI thread, which must not wait on
		 * a server that may not answer (a connect takes up to connect_timeout). */
		ev_conn_kill_query_async(w->conn);
		for (size_t i = 0; i < nconns; i++)
			ev_conn_kill_query_async(conns[i]);
	}
}

void ev_worker_supersede(struct ev_worker *w, int tag, unsigned long gen)
{
	cancel_where(w, false, tag, gen);
}

void ev_worker_retry_now(struct ev_worker *w)
{
	pthread_mutex_lock(&w->lock);
	w->retry_at = 0;
	pthread_mutex_unlock(&w->lock);
}

void ev_worker_cancel_all(struct ev_worker *w)
{
	cancel_where(w, true, 0, 0);
}

int ev_worker_pending(struct ev_worker *w)
{
	int n = 0;
	pthread_mutex_lock(&w->lock);
	for (struct ev_job *j = w->queue; j; j = j->next)
		n++;
	if (w->running)
		n++;
	/* Finished but not yet taken back counts too: its result is still to be seen. */
	for (struct ev_job *j = w->done; j; j = j->next)
		n++;
	pthread_mutex_unlock(&w->lock);
	return n;
}

enum ev_worker_state ev_worker_state(struct ev_worker *w, struct ev_error *last_err)
{
	pthread_mutex_lock(&w->lock);
	enum ev_worker_state s = w->state;
	if (last_err != NULL)
		*last_err = w->last_err;
	pthread_mutex_unlock(&w->lock);
	return s;
}

int ev_worker_connect_failures(struct ev_worker *w)
{
	pthread_mutex_lock(&w->lock);
	int n = w->failures;
	pthread_mutex_unlock(&w->lock);
	return n;
}

double ev_worker_running_ms(struct ev_worker *w)
{
	pthread_mutex_lock(&w->lock);
	double ms = w->running ? mono_ms() - w->running_since : 0;
	pthread_mutex_unlock(&w->lock);
	return ms;
}
