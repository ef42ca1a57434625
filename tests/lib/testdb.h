/* evtop tests — a connection to the test database the harness prepared, and helpers. */
#ifndef EV_TESTS_TESTDB_H
#define EV_TESTS_TESTDB_H

#include <mysql.h>

/* Connect with the harness's option file (EVTOP_TEST_DEFAULTS_FILE, group [client]), utf8mb4.
 * Aborts the current test on failure. */
MYSQL *tdb_connect(void);
/* Run a statement; aborts the current test on error. */
void tdb_exec(MYSQL *db, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* First column of the first row as a malloc'd string ("NULL" for SQL NULL); aborts on error. */
char *tdb_scalar(MYSQL *db, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Same as tdb_scalar, converted to a long long. */
long long tdb_int(MYSQL *db, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Absolute path of a file in the source tree (EVTOP_SRCDIR); malloc'd. */
char *tdb_srcpath(const char *rel);
/* Run every statement of a file of ';'-terminated statements (no DELIMITER support). */
void tdb_source(MYSQL *db, const char *path);

/* A copy of the harness's option file whose [evtop] group pins NOW() to `now`
 * ('YYYY-MM-DD hh:mm:ss') on every connect of evtop's sessions; malloc'd path. */
char *tdb_pinned_defaults(const char *now);

/* The path of evtop-sim: EVTOP_SIM, else beside evtop (make check sets EVTOP), else at the top
 * of the build directory the test was built in (BUILD/tests/db/TEST); malloc'd. Aborts the
 * current test when none can be told. */
char *tdb_sim_path(void);

/* The harness's own server (tests/harness/run-test starts one per test; not a shared
 * EVTOP_TEST_SOCKET one): its pid; killed with SIGKILL (waited for, its pid file and socket
 * removed); started again on the same data (tests/harness/server.sh, in a session of its own
 * so that Check's end of the test does not take it along). Abort the test on failure. */
#include <sys/types.h>
pid_t tdb_server_pid(void);
void tdb_server_kill(void);
void tdb_server_start(void);

/* Start evtop-sim on the harness's option file with --format json and args (NULL-ended), its
 * summary written to the file out; returns its pid. */
pid_t tdb_sim_start(char *const *args, const char *out);

#endif
