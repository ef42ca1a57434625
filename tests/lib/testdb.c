#include <config.h>

#include "testdb.h"

#include <check.h>
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <sys/stat.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char *vfmt(const char *fmt, va_list ap)
{
	va_list aq;
	va_copy(aq, ap);
	int n = vsnprintf(NULL, 0, fmt, aq);
	va_end(aq);
	char *s = malloc((size_t)n + 1);
	ck_assert_ptr_nonnull(s);
	vsnprintf(s, (size_t)n + 1, fmt, ap);
	return s;
}

MYSQL *tdb_connect(void)
{
	const char *file = getenv("EVTOP_TEST_DEFAULTS_FILE");
	ck_assert_msg(file != NULL,
	              "EVTOP_TEST_DEFAULTS_FILE is not set: run through tests/harness/run-test");
	MYSQL *db = mysql_init(NULL);
	ck_assert_ptr_nonnull(db);
	mysql_options(db, MYSQL_READ_DEFAULT_FILE, file);
	mysql_options(db, MYSQL_READ_DEFAULT_GROUP, "client");
	mysql_options(db, MYSQL_SET_CHARSET_NAME, "utf8mb4");
	if (mysql_real_connect(db, NULL, NULL, NULL, NULL, 0, NULL, 0) == NULL)
		ck_abort_msg("cannot connect to the test server: %s", mysql_error(db));
	return db;
}

static void exec_str(MYSQL *db, const char *q)
{
	if (mysql_query(db, q) != 0)
		ck_abort_msg("query failed: %s\n  %s", mysql_error(db), q);
	/* Discard any result set. */
	MYSQL_RES *r = mysql_store_result(db);
	if (r != NULL)
		mysql_free_result(r);
}

void tdb_exec(MYSQL *db, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *q = vfmt(fmt, ap);
	va_end(ap);
	exec_str(db, q);
	free(q);
}

static char *scalar_v(MYSQL *db, const char *fmt, va_list ap)
{
	char *q = vfmt(fmt, ap);
	if (mysql_query(db, q) != 0)
		ck_abort_msg("query failed: %s\n  %s", mysql_error(db), q);
	MYSQL_RES *r = mysql_store_result(db);
	ck_assert_msg(r != NULL, "no result: %s", q);
	MYSQL_ROW row = mysql_fetch_row(r);
	ck_assert_msg(row != NULL, "no row: %s", q);
	char *v = strdup(row[0] ? row[0] : "NULL");
	mysql_free_result(r);
	free(q);
	return v;
}

char *tdb_scalar(MYSQL *db, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *v = scalar_v(db, fmt, ap);
	va_end(ap);
	return v;
}

long long tdb_int(MYSQL *db, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *v = scalar_v(db, fmt, ap);
	va_end(ap);
	long long n = strtoll(v, NULL, 10);
	free(v);
	return n;
}

char *tdb_srcpath(const char *rel)
{
	const char *src = getenv("EVTOP_SRCDIR");
	if (src == NULL)
		src = ".";
	size_t n = strlen(src) + strlen(rel) + 2;
	char *p = malloc(n);
	ck_assert_ptr_nonnull(p);
	snprintf(p, n, "%s/%s", src, rel);
	return p;
}

void tdb_source(MYSQL *db, const char *path)
{
	FILE *f = fopen(path, "r");
	ck_assert_msg(f != NULL, "cannot open %s", path);
	char *stmt = NULL;
	size_t len = 0, cap = 0;
	char line[8192];
	while (fgets(line, sizeof(line), f) != NULL) {
		if (strncmp(line, "--", 2) == 0)
			continue;
		size_t n = strlen(line);
		if (len + n + 1 > cap) {
			cap = (len + n + 1) * 2;
			stmt = realloc(stmt, cap);
			ck_assert_ptr_nonnull(stmt);
		}
		memcpy(stmt + len, line, n + 1);
		len += n;
		char *end = strrchr(stmt, ';');
		if (end != NULL && strspn(end + 1, " \t\r\n") == strlen(end + 1)) {
			*end = '\0';
			exec_str(db, stmt);
			len = 0;
			stmt[0] = '\0';
		}
	}
	fclose(f);
	free(stmt);
}

char *tdb_pinned_defaults(const char *now)
{
	const char *src = getenv("EVTOP_TEST_DEFAULTS_FILE");
	const char *dir = getenv("EVTOP_TEST_DIR");
	ck_assert_msg(src != NULL && dir != NULL, "EVTOP_TEST_DEFAULTS_FILE/EVTOP_TEST_DIR unset: "
	                                          "run through tests/harness/run-test");
	size_t n = strlen(dir) + 32;
	char *path = malloc(n);
	ck_assert_ptr_nonnull(path);
	snprintf(path, n, "%s/pinned.cnf", dir);
	FILE *in = fopen(src, "r");
	FILE *out = fopen(path, "w");
	ck_assert_msg(in != NULL && out != NULL, "cannot copy %s to %s", src, path);
	ck_assert_int_eq(chmod(path, 0600), 0);
	char line[1024];
	bool pinned = false;
	while (fgets(line, sizeof(line), in) != NULL) {
		fputs(line, out);
		if (strncmp(line, "[evtop]", 7) == 0) {
			fprintf(out, "init-command=\"SET timestamp = UNIX_TIMESTAMP('%s')\"\n",
			        now);
			pinned = true;
		}
	}
	if (!pinned)
		fprintf(out, "\n[evtop]\ninit-command=\"SET timestamp = UNIX_TIMESTAMP('%s')\"\n",
		        now);
	fclose(in);
	ck_assert_int_eq(fclose(out), 0);
	return path;
}

char *tdb_sim_path(void)
{
	const char *p = getenv("EVTOP_SIM");
	if (p != NULL)
		return strdup(p);
	char buf[4096];
	const char *evtop = getenv("EVTOP");
	int up = 1;
	if (evtop == NULL) {
		ssize_t n = readlink("/proc/self/exe", buf, sizeof(buf) - 32);
		ck_assert_msg(n > 0, "set EVTOP_SIM to the path of evtop-sim");
		buf[n] = '\0';
		evtop = buf;
		up = 3;
	}
	char *s = malloc(strlen(evtop) + 16);
	ck_assert_ptr_nonnull(s);
	strcpy(s, evtop);
	for (int i = 0; i < up; i++) {
		char *slash = strrchr(s, '/');
		ck_assert_ptr_nonnull(slash);
		*slash = '\0';
	}
	strcat(s, "/evtop-sim");
	return s;
}

/* The harness's server folder: beside the test's scratch folder. */
static char *server_dir(void)
{
	const char *t = getenv("EVTOP_TEST_DIR");
	ck_assert_msg(t != NULL, "EVTOP_TEST_DIR is not set");
	char *d = malloc(strlen(t) + 4);
	sprintf(d, "%s/..", t);
	return d;
}

pid_t tdb_server_pid(void)
{
	char *d = server_dir(), path[4096];
	snprintf(path, sizeof(path), "%s/mariadbd.pid", d);
	free(d);
	FILE *f = fopen(path, "r");
	ck_assert_msg(f != NULL, "no pid file %s: %s", path, strerror(errno));
	long pid = 0;
	ck_assert_int_eq(fscanf(f, "%ld", &pid), 1);
	fclose(f);
	return (pid_t)pid;
}

void tdb_server_kill(void)
{
	pid_t pid = tdb_server_pid();
	ck_assert_int_eq(kill(pid, SIGKILL), 0);
	while (kill(pid, 0) == 0)
		usleep(50 * 1000);
	char *d = server_dir(), cmd[4096];
	snprintf(cmd, sizeof(cmd), "rm -f '%s/mariadbd.pid' '%s/sock'", d, d);
	free(d);
	ck_assert_int_eq(system(cmd), 0);
}

void tdb_server_start(void)
{
	char *d = server_dir(), *script = tdb_srcpath("tests/harness/server.sh"), cmd[8192];
	snprintf(cmd, sizeof(cmd), "setsid -w sh '%s' start '%s' >/dev/null", script, d);
	free(script);
	free(d);
	ck_assert_int_eq(system(cmd), 0);
}

pid_t tdb_sim_start(char *const *args, const char *out)
{
	char *sim = tdb_sim_path();
	char arg[600];
	char *argv[40];
	int n = 0;
	snprintf(arg, sizeof(arg), "--defaults-file=%s", getenv("EVTOP_TEST_DEFAULTS_FILE"));
	argv[n++] = sim;
	argv[n++] = arg;
	argv[n++] = (char *)"--format";
	argv[n++] = (char *)"json";
	for (int i = 0; args[i] != NULL && n < 39; i++)
		argv[n++] = args[i];
	argv[n] = NULL;
	pid_t pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		if (freopen(out, "w", stdout) == NULL)
			_exit(99);
		execv(sim, argv);
		_exit(98);
	}
	free(sim);
	return pid;
}
