/* evtop — one connection to one source: the mysql client's options and option files,
 * timeouts, TLS, utf8mb4, the session set up on every (re)connect, prepared statements,
 * reconnect after a lost connection, and KILL QUERY from a second connection.
 * A connection belongs to one thread at a time; only ev_conn_kill_query may be called from
 * another thread while a query runs. */
#ifndef EV_DB_CONN_H
#define EV_DB_CONN_H

#include "core/config.h"
#include "core/query.h"
#include "core/rowset.h"
#include "core/util.h"

#include <stdbool.h>
#include <stdio.h>

struct ev_conn;

/* Call once, before any thread starts (mysql_library_init). */
int ev_db_init(void);
/* Call once at exit, after every thread has ended. */
void ev_db_end(void);
/* Each thread other than the main one that uses a connection calls these around its work. */
void ev_db_thread_init(void);
void ev_db_thread_end(void);

/* Record every statement, with its parameters, duration and outcome, to f (NULL to stop).
 * Lines are written whole under a lock, flushed each time. f stays the caller's. */
void ev_db_set_sql_log(FILE *f);

/* A new connection for src with cfg's timeouts; nothing is connected yet. src and cfg are
 * borrowed and must outlive the connection. */
struct ev_conn *ev_conn_new(const struct ev_source *src, const struct ev_config *cfg);
/* A password to use instead of the option files' (from the prompt); copied. */
void ev_conn_set_password(struct ev_conn *c, const char *password);
/* Connect (or reconnect) and set the session up. On failure, err says why in words a person
 * can act on (wrong password, unknown host, server gone, no such database, TLS refused). */
int ev_conn_connect(struct ev_conn *c, struct ev_error *err);
bool ev_conn_is_connected(const struct ev_conn *c);
/* Close the connection (the object stays usable for a later connect). */
void ev_conn_close(struct ev_conn *c);
void ev_conn_free(struct ev_conn **c);

/* Run a read query as a prepared statement and return its rows (at most q->limit + 1 for a
 * list). A lost connection (2006/2013) is reconnected once and the read retried. Errors:
 * EV_ERR_TIMEOUT when the server's statement time limit stopped it, EV_ERR_SCHEMA for a
 * missing table or column, otherwise the server's errno; err->msg says which. */
int ev_conn_run(struct ev_conn *c, const struct ev_query *q, struct ev_rowset **out,
                struct ev_error *err);
/* A line of its own in the SQL log (--log-sql), when there is one: "note: TEXT". */
void ev_conn_log_note(const struct ev_conn *c, const char *note);
/* Run one statement without a result (session settings, a transaction's start and end;
 * while c is cancelled only a ROLLBACK runs). */
int ev_conn_exec(struct ev_conn *c, const char *sql, struct ev_error *err);

/* Read a table's indexes and columns (ti->exists false if there is no such table). */
int ev_conn_table_info(struct ev_conn *c, const char *table, struct ev_table_info *ti,
                       struct ev_error *err);

/* Cancel the statement running on c, on the server: opens a second connection with the same
 * settings and sends KILL QUERY <c's thread id>. Safe from another thread. */
int ev_conn_kill_query(struct ev_conn *c, struct ev_error *err);
/* The same, sent from a thread of its own so that the caller (the UI thread) never waits on
 * the network: what it needs of c is copied first, so c may be freed at once. */
void ev_conn_kill_query_async(struct ev_conn *c);
/* Wait until every KILL sent by ev_conn_kill_query_async is done, at most max_ms (before the
 * program ends: a cancel on quit still reaches the server). */
void ev_conn_kill_wait(int max_ms);
/* Cancel (on) or allow again (off) everything c would start: while cancelled, ev_conn_run
 * starts no statement (and no reconnect) and fails at once with 1317 "cancelled"; a statement
 * being prepared is not executed. Safe from another thread; with ev_conn_kill_query it ends a
 * job's statement and every one after it. */
void ev_conn_cancel(struct ev_conn *c, bool on);
/* The server time charged to c's reads (ev_conn_run, ev_conn_exec) since the last call, by
 * core/refresh's rule (a lock wait, time limit or kill is charged 0; the rest their wall
 * time), and start counting anew. The thread that owns c only. */
double ev_conn_take_charged_ms(struct ev_conn *c);

/* Facts about the connected server. Strings are owned by c. */
const struct ev_server_version *ev_conn_server(const struct ev_conn *c);
const char *ev_conn_server_info(const struct ev_conn *c); /* "10.11.19-MariaDB-0+deb12u1" */
const char *ev_conn_host_info(const struct ev_conn *c);   /* "Localhost via UNIX socket" */
const char *ev_conn_user(const struct ev_conn *c);        /* CURRENT_USER() */
unsigned long ev_conn_thread_id(const struct ev_conn *c);
const char *ev_conn_tls_cipher(const struct ev_conn *c); /* NULL without TLS */

/* --- writes (the operator's guarded actions; see db/action.h) ------------------------------- */

/* Run one write statement (UPDATE, INSERT) as a prepared statement; *affected = the rows it
 * changed. Never retried: a lost connection (2006/2013) closes c and fails with err->code
 * EV_ERR_CONNECT; a lock wait timeout fails with 1205, the server's statement time limit with
 * EV_ERR_TIMEOUT, a read-only server with 1290. Refused without a round trip when c has been
 * marked read-only. */
int ev_conn_write(struct ev_conn *c, const struct ev_query *q, unsigned long long *affected,
                  struct ev_error *err);
/* Start a transaction (autocommit off until ev_conn_commit or ev_conn_rollback). Connects
 * first when needed; a connection lost here is reconnected once (nothing was written yet). */
int ev_conn_begin(struct ev_conn *c, struct ev_error *err);
/* Commit. A connection lost during COMMIT closes c and fails with err->code EV_ERR_CONNECT:
 * the outcome is then unknown to the client, and only a re-read can tell. */
int ev_conn_commit(struct ev_conn *c, struct ev_error *err);
/* Roll back (a lost connection is rolled back by the server; c is then closed). */
void ev_conn_rollback(struct ev_conn *c);
/* Prepare q without executing it: the server checks it as it would run (privileges on the
 * tables and columns, roles included; the columns exist). */
int ev_conn_prepare_check(struct ev_conn *c, const struct ev_query *q, struct ev_error *err);
/* Mark the connection read-only, with the reason shown to the operator (NULL = writable
 * again). Every ev_conn_write is then refused. */
void ev_conn_set_read_only(struct ev_conn *c, const char *reason);
/* The reason the connection is read-only, or NULL when it may write. */
const char *ev_conn_read_only(const struct ev_conn *c);

#endif
