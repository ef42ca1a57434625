/* evtop — connections. The only code (with the rest of src/db) that includes <mysql.h>. */
#include <config.h>

#include "db/conn.h"

#include "core/i18n.h"
#include "core/refresh.h"

#include <errmsg.h>
#include <mysql.h>
#include <mysqld_error.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifndef ER_STATEMENT_TIMEOUT
#define ER_STATEMENT_TIMEOUT 1969
#endif
#define ER_MYSQL_QUERY_TIMEOUT 3024 /* MySQL's max_execution_time exceeded */
#define EV_STMT_CACHE          32   /* prepared statements kept per connection */

struct ev_conn {
	const struct ev_source *src;
	const struct ev_config *cfg;
	char *password;
	MYSQL *db;
	atomic_ulong thread_id;
	struct ev_server_version version;
	char *server_info;
	char *host_info;
	char *user;
	char *read_only; /* why writes are refused, or NULL */
	bool galera;     /* a Galera node (wsrep_on): reads wait for the cluster's commits */
	/* Prepared statements kept while the connection lives, the least recently used given up
	 * first: the writes' (a bulk action runs the same UPDATE and audit INSERT for every row,
	 * only the values change) and the reads marked `keep` (a refresh runs the same reads every
	 * time: the server parses them once, not at every refresh). */
	struct {
		char *sql;
		MYSQL_STMT *st;
		unsigned long used;
	} stmts[EV_STMT_CACHE];
	unsigned long stmt_clock;
	/* The refresh budget: the server time charged to the reads run since the last
	 * ev_conn_take_charged_ms (core/refresh says what a statement is charged), and the raw
	 * error of the last statement (before it became an ev_error). Owner thread only. */
	double charged_ms;
	unsigned int last_errno;
	char last_sqlstate[6];
	/* Cancelled (ev_conn_cancel, from any thread): no new statement starts. */
	atomic_bool cancelled;
};

static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;
static FILE *sql_log;

int ev_db_init(void)
{
	return mysql_library_init(0, NULL, NULL) == 0 ? 0 : -1;
}

void ev_db_end(void)
{
	/* A KILL sent on quit still reaches the server; a server that does not answer holds
	 * the exit at most a connect timeout longer. */
	ev_conn_kill_wait(5000);
	mysql_library_end();
}

void ev_db_thread_init(void)
{
	mysql_thread_init();
}

void ev_db_thread_end(void)
{
	mysql_thread_end();
}

void ev_db_set_sql_log(FILE *f)
{
	pthread_mutex_lock(&log_lock);
	sql_log = f;
	pthread_mutex_unlock(&log_lock);
}

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* A record's start in the SQL log: the local time, the source and the connection's thread. The
 * caller holds log_lock. */
static void log_head(const struct ev_conn *c)
{
	time_t t = time(NULL);
	struct tm tm;
	char when[32];
	localtime_r(&t, &tm);
	strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%S", &tm);
	fprintf(sql_log, "%s [%s #%lu] ", when, c->src->name ? c->src->name : "-",
	        (unsigned long)atomic_load(&c->thread_id));
}

static void log_sql(const struct ev_conn *c, const char *sql, double ms, long long rows,
                    const char *error)
{
	pthread_mutex_lock(&log_lock);
	if (sql_log != NULL) {
		log_head(c);
		fprintf(sql_log, "%.3f ms ", ms);
		if (error != NULL)
			fprintf(sql_log, "error: %s", error);
		else if (rows >= 0)
			fprintf(sql_log, "%lld rows", rows);
		else
			fputs("ok", sql_log);
		fprintf(sql_log, "\n  %s;\n", sql);
		fflush(sql_log);
	}
	pthread_mutex_unlock(&log_lock);
}

void ev_conn_log_note(const struct ev_conn *c, const char *note)
{
	pthread_mutex_lock(&log_lock);
	if (sql_log != NULL) {
		log_head(c);
		fprintf(sql_log, "note: %s\n", note);
		fflush(sql_log);
	}
	pthread_mutex_unlock(&log_lock);
}

static void log_query(const struct ev_conn *c, const struct ev_query *q, double ms, long long rows,
                      const char *error)
{
	if (sql_log == NULL)
		return;
	char *text = ev_query_render(q);
	log_sql(c, text, ms, rows, error);
	free(text);
}

struct ev_conn *ev_conn_new(const struct ev_source *src, const struct ev_config *cfg)
{
	struct ev_conn *c = ev_xcalloc(1, sizeof(*c));
	c->src = src;
	c->cfg = cfg;
	return c;
}

void ev_conn_set_password(struct ev_conn *c, const char *password)
{
	if (c->password != NULL) {
		memset(c->password, 0, strlen(c->password));
		free(c->password);
	}
	c->password = password ? ev_xstrdup(password) : NULL;
}

static void set_facts_free(struct ev_conn *c)
{
	free(c->server_info);
	free(c->host_info);
	free(c->user);
	c->server_info = c->host_info = c->user = NULL;
}

static void stmt_forget(struct ev_conn *c, int i)
{
	if (c->stmts[i].st != NULL)
		mysql_stmt_close(c->stmts[i].st);
	free(c->stmts[i].sql);
	c->stmts[i].st = NULL;
	c->stmts[i].sql = NULL;
}

/* The statement kept for this text, prepared before, or a new one prepared in place of the
 * least recently used; its slot in *slot. NULL when the prepare failed: the statement is in
 * the slot still, for its error (stmt_forget after). */
static MYSQL_STMT *stmt_kept(struct ev_conn *c, const char *sql, int *slot)
{
	int k = 0;
	for (int i = 0; i < EV_STMT_CACHE; i++) {
		if (c->stmts[i].sql != NULL && strcmp(c->stmts[i].sql, sql) == 0) {
			k = i;
			break;
		}
		if (c->stmts[i].used < c->stmts[k].used)
			k = i;
	}
	*slot = k;
	c->stmts[k].used = ++c->stmt_clock;
	MYSQL_STMT *st = c->stmts[k].st;
	if (st != NULL && strcmp(c->stmts[k].sql, sql) == 0)
		return st;
	stmt_forget(c, k);
	st = mysql_stmt_init(c->db);
	if (st == NULL)
		ev_fatal(_("out of memory (mysql_stmt_init)"));
	c->stmts[k].st = st;
	c->stmts[k].sql = ev_xstrdup(sql);
	c->stmts[k].used = c->stmt_clock;
	return mysql_stmt_prepare(st, sql, strlen(sql)) == 0 ? st : NULL;
}

void ev_conn_close(struct ev_conn *c)
{
	/* The statements belong to the session: closed with it, before it. */
	for (int i = 0; i < EV_STMT_CACHE; i++)
		stmt_forget(c, i);
	if (c->db != NULL) {
		mysql_close(c->db);
		c->db = NULL;
	}
	atomic_store(&c->thread_id, 0);
}

void ev_conn_free(struct ev_conn **cp)
{
	struct ev_conn *c = *cp;
	if (c == NULL)
		return;
	ev_conn_close(c);
	ev_conn_set_password(c, NULL);
	set_facts_free(c);
	free(c->read_only);
	free(c);
	*cp = NULL;
}

bool ev_conn_is_connected(const struct ev_conn *c)
{
	return c->db != NULL;
}

/* Options every connection gets, the killer's included. */
static MYSQL *new_handle(const struct ev_conn *c)
{
	const struct ev_source *s = c->src;
	const struct ev_config *cfg = c->cfg;
	MYSQL *db = mysql_init(NULL);
	unsigned int t;

	if (db == NULL)
		ev_fatal(_("out of memory (mysql_init)"));
	if (s->defaults_file != NULL)
		mysql_options(db, MYSQL_READ_DEFAULT_FILE, s->defaults_file);
	mysql_options(db, MYSQL_READ_DEFAULT_GROUP,
	              s->defaults_group ? s->defaults_group : "evtop");
	t = (unsigned)cfg->connect_timeout_s;
	mysql_options(db, MYSQL_OPT_CONNECT_TIMEOUT, &t);
	t = (unsigned)cfg->read_timeout_s;
	mysql_options(db, MYSQL_OPT_READ_TIMEOUT, &t);
	t = (unsigned)cfg->write_timeout_s;
	mysql_options(db, MYSQL_OPT_WRITE_TIMEOUT, &t);
	mysql_options(db, MYSQL_SET_CHARSET_NAME, "utf8mb4");
	if (s->ssl || s->ssl_verify || s->ssl_ca || s->ssl_capath || s->ssl_cert || s->ssl_key) {
		if (s->ssl_key)
			mysql_options(db, MYSQL_OPT_SSL_KEY, s->ssl_key);
		if (s->ssl_cert)
			mysql_options(db, MYSQL_OPT_SSL_CERT, s->ssl_cert);
		if (s->ssl_ca)
			mysql_options(db, MYSQL_OPT_SSL_CA, s->ssl_ca);
		if (s->ssl_capath)
			mysql_options(db, MYSQL_OPT_SSL_CAPATH, s->ssl_capath);
		if (s->ssl_cipher)
			mysql_options(db, MYSQL_OPT_SSL_CIPHER, s->ssl_cipher);
#if defined(LIBMARIADB) || defined(MARIADB_BASE_VERSION)
		my_bool on = 1;
		mysql_options(db, MYSQL_OPT_SSL_ENFORCE, &on);
		my_bool verify = s->ssl_verify ? 1 : 0;
		mysql_options(db, MYSQL_OPT_SSL_VERIFY_SERVER_CERT, &verify);
#else
		unsigned int mode = s->ssl_verify ? SSL_MODE_VERIFY_IDENTITY : SSL_MODE_REQUIRED;
		mysql_options(db, MYSQL_OPT_SSL_MODE, &mode);
#endif
	}
	return db;
}

/* Words a person can act on, for the errors people meet when connecting. */
static int connect_error(const struct ev_conn *c, MYSQL *db, struct ev_error *err)
{
	unsigned int no = mysql_errno(db);
	const char *msg = mysql_error(db);
	const struct ev_source *s = c->src;
	const char *where = s->host     ? s->host
	                    : s->socket ? s->socket
	                                : _("the server in the option files");

	switch (no) {
	case ER_ACCESS_DENIED_ERROR:
		return ev_error_set(
		        err, (int)no,
		        _("access denied: %s (check the user and password: -u, -p, or the "
		          "option file)"),
		        msg);
	case ER_BAD_DB_ERROR:
		return ev_error_set(err, (int)no,
		                    _("no such database: %s (check -D or the option file)"), msg);
	case CR_CONNECTION_ERROR:
	case CR_CONN_HOST_ERROR:
	case CR_UNKNOWN_HOST:
	case CR_SERVER_LOST:
	case CR_SERVER_GONE_ERROR:
		return ev_error_set(err, EV_ERR_CONNECT, _("cannot connect to %s: %s"), where, msg);
	default:
		return ev_error_set(err, no ? (int)no : EV_ERR_CONNECT,
		                    _("cannot connect to %s: %s"), where, msg);
	}
}

int ev_conn_connect(struct ev_conn *c, struct ev_error *err)
{
	const struct ev_source *s = c->src;
	MYSQL *db;

	ev_conn_close(c);
	set_facts_free(c);
	db = new_handle(c);
	if (mysql_real_connect(db, s->host, s->user, c->password, s->database, s->port, s->socket,
	                       0) == NULL) {
		connect_error(c, db, err);
		mysql_close(db);
		return -1;
	}
	/* An option file may name another character set; evtop always speaks utf8mb4. */
	if (mysql_set_character_set(db, "utf8mb4") != 0) {
		ev_error_set(err, EV_ERR_CONNECT, _("cannot use utf8mb4: %s"), mysql_error(db));
		mysql_close(db);
		return -1;
	}
	c->db = db;
	atomic_store(&c->thread_id, mysql_thread_id(db));
	c->server_info = ev_xstrdup(mysql_get_server_info(db));
	c->host_info = ev_xstrdup(mysql_get_host_info(db) ? mysql_get_host_info(db) : "");
	if (ev_server_version_parse(c->server_info, &c->version) < 0)
		c->version.flavour = EV_FLAVOUR_MYSQL;

	char **setup = ev_query_session_setup(c->version.flavour, c->cfg->statement_timeout_ms,
	                                      s->time_zone);
	for (char **sql = setup; *sql != NULL; sql++) {
		if (ev_conn_exec(c, *sql, err) < 0) {
			if (strstr(*sql, "time_zone") != NULL) {
				/* err->msg is the server's reason: copy it before rewriting err. */
				char why[sizeof(err->msg)];
				snprintf(why, sizeof(why), "%s", err->msg);
				ev_error_set(
				        err, EV_ERR_CONFIG,
				        _("the server refused time zone '%s': %.300s (named zones "
				          "need the server's time zone tables; an offset like "
				          "+08:00 "
				          "always works)"),
				        s->time_zone, why);
			}
			ev_strv_free(&setup);
			ev_conn_close(c);
			return -1;
		}
	}
	ev_strv_free(&setup);

	/* A Galera node: read your writes (and everyone's) with wsrep_sync_wait, so the re-read
	 * after a guarded update on another node sees the cluster's latest commit. */
	c->galera = false;
	if (mysql_query(db, "/* evtop */ SELECT @@wsrep_on") == 0) {
		MYSQL_RES *r = mysql_store_result(db);
		MYSQL_ROW row = r ? mysql_fetch_row(r) : NULL;
		c->galera = row != NULL && row[0] != NULL && strcmp(row[0], "1") == 0;
		if (r)
			mysql_free_result(r);
	}
	if (c->galera && ev_conn_exec(c, "/* evtop */ SET SESSION wsrep_sync_wait = 1", err) < 0) {
		ev_conn_close(c);
		return -1;
	}

	struct ev_query *uq = ev_query_current_user();
	int uq_rc = mysql_query(db, uq->sql);
	ev_query_free(&uq);
	if (uq_rc == 0) {
		MYSQL_RES *r = mysql_store_result(db);
		MYSQL_ROW row = r ? mysql_fetch_row(r) : NULL;
		c->user = ev_xstrdup(row && row[0] ? row[0] : "");
		if (r)
			mysql_free_result(r);
	} else {
		c->user = ev_xstrdup("");
	}
	return 0;
}

int ev_conn_exec(struct ev_conn *c, const char *sql, struct ev_error *err)
{
	double t0 = now_ms();

	if (c->db == NULL)
		return ev_error_set(err, EV_ERR_CONNECT, _("not connected"));
	/* A cancelled job starts nothing more either: only the end of its transaction. */
	if (atomic_load(&c->cancelled) && strncmp(sql, "ROLLBACK", 8) != 0)
		return ev_error_set(err, ER_QUERY_INTERRUPTED, _("cancelled: %.60s (not run)"),
		                    sql);
	if (mysql_query(c->db, sql) != 0) {
		ev_error_set(err, (int)mysql_errno(c->db), "%s", mysql_error(c->db));
		c->charged_ms += ev_refresh_charge_ms((int)mysql_errno(c->db),
		                                      mysql_sqlstate(c->db), now_ms() - t0);
		log_sql(c, sql, now_ms() - t0, -1, err->msg);
		return -1;
	}
	MYSQL_RES *r = mysql_store_result(c->db);
	if (r != NULL)
		mysql_free_result(r);
	c->charged_ms += now_ms() - t0;
	log_sql(c, sql, now_ms() - t0, -1, NULL);
	return 0;
}

/* MySQL 8.0.24 and later: the server closed an idle connection (wait_timeout) and says so. */
#define ER_CLIENT_INTERACTION_TIMEOUT_ 4031

static bool is_lost(unsigned int no)
{
	return no == CR_SERVER_GONE_ERROR || no == CR_SERVER_LOST ||
	       no == ER_CLIENT_INTERACTION_TIMEOUT_
#ifdef CR_SERVER_LOST_EXTENDED
	       || no == CR_SERVER_LOST_EXTENDED
#endif
	       || no == CR_CONNECTION_ERROR || no == CR_CONN_HOST_ERROR;
}

/* A server or client error as evtop reports it. */
static int stmt_error(struct ev_conn *c, const struct ev_query *q, unsigned int no, const char *msg,
                      const char *sqlstate, struct ev_error *err)
{
	if (no == ER_STATEMENT_TIMEOUT || no == ER_MYSQL_QUERY_TIMEOUT)
		return ev_error_set(
		        err, EV_ERR_TIMEOUT,
		        _("timeout: %s stopped by the server's statement time limit (%d ms)"),
		        q->name, c->cfg->statement_timeout_ms);
	if (no == ER_QUERY_INTERRUPTED)
		return ev_error_set(err, (int)no, _("cancelled: %s"), q->name);
	if (no == ER_NO_SUCH_TABLE)
		return ev_error_set(err, EV_ERR_SCHEMA, _("missing table: %s"), msg);
	if (no == ER_BAD_FIELD_ERROR)
		return ev_error_set(
		        err, EV_ERR_SCHEMA,
		        _("missing column: %s (the table differs from the model document; "
		          "evtop doctor explains)"),
		        msg);
	if (no == ER_KEY_DOES_NOT_EXISTS)
		return ev_error_set(err, EV_ERR_SCHEMA, _("missing index: %s"), msg);
	if (no == ER_TABLEACCESS_DENIED_ERROR || no == ER_COLUMNACCESS_DENIED_ERROR)
		return ev_error_set(err, (int)no, _("not allowed: %s"), msg);
	if (is_lost(no))
		return ev_error_set(err, EV_ERR_CONNECT, _("connection lost: %s"), msg);
	(void)sqlstate;
	return ev_error_set(err, no ? (int)no : EV_ERR_GENERIC, "%s: %s", q->name, msg);
}

struct fetch_col {
	char *buf;
	unsigned long cap;
	unsigned long length;
	my_bool is_null;
	my_bool error;
};

/* Bind q's parameters to st; the arrays are the caller's to free. */
static int bind_params(MYSQL_STMT *st, const struct ev_query *q, MYSQL_BIND **pbp,
                       unsigned long **plenp)
{
	if (q->nparams == 0)
		return 0;
	MYSQL_BIND *pb = ev_xcalloc(q->nparams, sizeof(*pb));
	unsigned long *plen = ev_xcalloc(q->nparams, sizeof(*plen));
	*pbp = pb;
	*plenp = plen;
	for (size_t i = 0; i < q->nparams; i++) {
		struct ev_param *p = &q->params[i];
		switch (p->type) {
		case EV_P_INT:
			pb[i].buffer_type = MYSQL_TYPE_LONGLONG;
			pb[i].buffer = &p->i;
			break;
		case EV_P_UINT:
			pb[i].buffer_type = MYSQL_TYPE_LONGLONG;
			pb[i].buffer = &p->u;
			pb[i].is_unsigned = 1;
			break;
		case EV_P_TEXT:
			plen[i] = strlen(p->s);
			pb[i].buffer_type = MYSQL_TYPE_STRING;
			pb[i].buffer = p->s;
			pb[i].buffer_length = plen[i];
			pb[i].length = &plen[i];
			break;
		}
	}
	return mysql_stmt_bind_param(st, pb) == 0 ? 0 : -1;
}

/* q's statement in *st: prepared now, or the one kept from an earlier run (*slot >= 0, q->keep).
 * -1 when preparing failed; *st is then the statement whose error says why. */
static int prepare_stmt(struct ev_conn *c, const struct ev_query *q, MYSQL_STMT **st, int *slot)
{
	if (q->keep) {
		*st = stmt_kept(c, q->sql, slot);
		if (*st == NULL) {
			*st = c->stmts[*slot].st;
			return -1;
		}
		return 0;
	}
	*st = mysql_stmt_init(c->db);
	if (*st == NULL)
		ev_fatal(_("out of memory (mysql_stmt_init)"));
	if (mysql_stmt_prepare(*st, q->sql, strlen(q->sql)) != 0)
		return -1;
	return 0;
}

/* An empty rowset of the result's ncols columns: named and typed as q says, the columns q does
 * not describe by the server's names, as text. */
static struct ev_rowset *result_rowset(const struct ev_query *q, MYSQL_RES *meta, unsigned ncols)
{
	const char **names = ev_xcalloc(ncols ? ncols : 1, sizeof(*names));
	enum ev_ctype *types = ev_xcalloc(ncols ? ncols : 1, sizeof(*types));
	MYSQL_FIELD *fields = meta ? mysql_fetch_fields(meta) : NULL;
	for (unsigned i = 0; i < ncols; i++) {
		names[i] = i < q->ncols ? q->col_names[i] : fields[i].name;
		types[i] = i < q->ncols ? q->col_types[i] : EV_CT_TEXT;
	}
	struct ev_rowset *rs = ev_rowset_new(ncols, names, types);
	free(names);
	free(types);
	return rs;
}

/* Column i of the row just fetched, into cell; a value longer than its buffer is fetched again
 * whole. */
static int fetch_cell(MYSQL_STMT *st, const struct fetch_col *fc, unsigned i, struct ev_cell *cell)
{
	if (fc->is_null) {
		ev_cell_set(cell, NULL, 0);
		return 0;
	}
	if (fc->length <= fc->cap) {
		ev_cell_set(cell, fc->buf, fc->length);
		return 0;
	}
	/* MYSQL_DATA_TRUNCATED: grow and fetch the column again. */
	char *big = ev_xmalloc(fc->length + 1);
	MYSQL_BIND one;
	memset(&one, 0, sizeof(one));
	one.buffer_type = MYSQL_TYPE_STRING;
	one.buffer = big;
	one.buffer_length = fc->length + 1;
	unsigned long len = 0;
	one.length = &len;
	if (mysql_stmt_fetch_column(st, &one, i, 0) != 0) {
		free(big);
		return -1;
	}
	ev_cell_set(cell, big, fc->length);
	free(big);
	return 0;
}

/* Every row of st's result into rs, each column as a string. -1 on an error (the statement's
 * or the connection's). */
static int fetch_rows(MYSQL_STMT *st, struct ev_rowset *rs, unsigned ncols)
{
	if (ncols == 0)
		return 0;

	MYSQL_BIND *rb = ev_xcalloc(ncols, sizeof(*rb));
	struct fetch_col *fc = ev_xcalloc(ncols, sizeof(*fc));
	int rc = -1;

	for (unsigned i = 0; i < ncols; i++) {
		fc[i].cap = 256;
		fc[i].buf = ev_xmalloc(fc[i].cap);
		rb[i].buffer_type = MYSQL_TYPE_STRING;
		rb[i].buffer = fc[i].buf;
		rb[i].buffer_length = fc[i].cap;
		rb[i].length = &fc[i].length;
		rb[i].is_null = &fc[i].is_null;
		rb[i].error = &fc[i].error;
	}
	if (mysql_stmt_bind_result(st, rb) != 0)
		goto out;
	for (;;) {
		int f = mysql_stmt_fetch(st);
		if (f == MYSQL_NO_DATA)
			break;
		if (f == 1)
			goto out;
		struct ev_cell *cells = ev_rowset_add_row(rs);
		for (unsigned i = 0; i < ncols; i++)
			if (fetch_cell(st, &fc[i], i, &cells[i]) < 0)
				goto out;
	}
	rc = 0;
out:
	for (unsigned i = 0; i < ncols; i++)
		free(fc[i].buf);
	free(fc);
	free(rb);
	return rc;
}

/* A failure of st in err, with c's last errno and SQLSTATE, and *lost. An error packet that
 * arrives while rows are read lands on the connection, not the statement. */
static void stmt_failed(struct ev_conn *c, const struct ev_query *q, MYSQL_STMT *st,
                        struct ev_error *err, bool *lost)
{
	if (mysql_stmt_errno(st) != 0) {
		*lost = is_lost(mysql_stmt_errno(st));
		c->last_errno = mysql_stmt_errno(st);
		snprintf(c->last_sqlstate, sizeof(c->last_sqlstate), "%s", mysql_stmt_sqlstate(st));
		stmt_error(c, q, mysql_stmt_errno(st), mysql_stmt_error(st),
		           mysql_stmt_sqlstate(st), err);
	} else {
		*lost = is_lost(mysql_errno(c->db));
		c->last_errno = mysql_errno(c->db);
		snprintf(c->last_sqlstate, sizeof(c->last_sqlstate), "%s", mysql_sqlstate(c->db));
		stmt_error(c, q, mysql_errno(c->db), mysql_error(c->db), mysql_sqlstate(c->db),
		           err);
	}
}

/* One attempt: prepare, bind, execute, fetch. Returns 0, or -1 with err and *lost set. */
static int run_once(struct ev_conn *c, const struct ev_query *q, struct ev_rowset **out,
                    struct ev_error *err, bool *lost)
{
	MYSQL_STMT *st = NULL;
	MYSQL_BIND *pb = NULL;
	unsigned long *plen = NULL;
	struct ev_rowset *rs = NULL;
	MYSQL_RES *meta = NULL;
	unsigned int ncols = 0;
	int slot = -1; /* the kept statement's slot (q->keep), else -1 */
	int rc = -1;

	*lost = false;
	c->last_errno = 0;
	c->last_sqlstate[0] = '\0';
	if (prepare_stmt(c, q, &st, &slot) < 0)
		goto fail;
	if (q->nparams != mysql_stmt_param_count(st)) {
		ev_error_set(err, EV_ERR_GENERIC, _("%s: %zu parameters for %lu placeholders"),
		             q->name, q->nparams, mysql_stmt_param_count(st));
		goto out;
	}
	if (bind_params(st, q, &pb, &plen) < 0)
		goto fail;
	if (atomic_load(&c->cancelled)) {
		/* Cancelled while it was being prepared (a prepare waits for a table's lock as
		 * the statement would): never executed. */
		c->last_errno = ER_QUERY_INTERRUPTED;
		ev_error_set(err, ER_QUERY_INTERRUPTED, _("cancelled: %s"), q->name);
		goto out;
	}
	if (mysql_stmt_execute(st) != 0)
		goto fail;

	meta = mysql_stmt_result_metadata(st);
	ncols = meta ? mysql_num_fields(meta) : 0;
	rs = result_rowset(q, meta, ncols);
	if (fetch_rows(st, rs, ncols) < 0)
		goto fail;
	*out = rs;
	rs = NULL;
	rc = 0;
	goto out;
fail:
	stmt_failed(c, q, st, err, lost);
out:
	if (meta)
		mysql_free_result(meta);
	free(pb);
	free(plen);
	ev_rowset_free(&rs);
	if (slot < 0)
		mysql_stmt_close(st);
	else if (rc == 0)
		mysql_stmt_free_result(st); /* kept for the next run */
	else
		stmt_forget(c, slot); /* prepared anew next time: nothing of a failure is kept */
	return rc;
}

int ev_conn_run(struct ev_conn *c, const struct ev_query *q, struct ev_rowset **out,
                struct ev_error *err)
{
	*out = NULL;
	for (int attempt = 0; attempt < 2; attempt++) {
		bool lost = false;
		/* A cancelled job starts nothing more: not its next statement, not a retry. */
		if (atomic_load(&c->cancelled))
			return ev_error_set(err, ER_QUERY_INTERRUPTED, _("cancelled: %s (not run)"),
			                    q->name);
		if (c->db == NULL && ev_conn_connect(c, err) < 0)
			return -1;
		double t0 = now_ms();
		if (run_once(c, q, out, err, &lost) == 0) {
			c->charged_ms += now_ms() - t0;
			log_query(c, q, now_ms() - t0, (long long)(*out)->nrows, NULL);
			return 0;
		}
		c->charged_ms +=
		        ev_refresh_charge_ms((int)c->last_errno, c->last_sqlstate, now_ms() - t0);
		log_query(c, q, now_ms() - t0, -1, err->msg);
		if (!lost)
			return -1;
		/* A read is safe to retry once on a new connection. */
		ev_conn_close(c);
	}
	return -1;
}

int ev_conn_table_info(struct ev_conn *c, const char *table, struct ev_table_info *ti,
                       struct ev_error *err)
{
	struct ev_query *q;
	struct ev_rowset *rs = NULL;

	memset(ti, 0, sizeof(*ti));
	q = ev_query_table_columns(table);
	if (ev_conn_run(c, q, &rs, err) < 0) {
		ev_query_free(&q);
		return -1;
	}
	ev_query_free(&q);
	ti->exists = rs->nrows > 0;
	ti->ncolumns = rs->nrows;
	ti->columns = ev_xcalloc(rs->nrows ? rs->nrows : 1, sizeof(*ti->columns));
	for (size_t i = 0; i < rs->nrows; i++)
		ti->columns[i] = ev_xstrdup(ev_rowset_cell(rs, i, 0)->s);
	ev_rowset_free(&rs);

	q = ev_query_table_indexes(table);
	if (ev_conn_run(c, q, &rs, err) < 0) {
		ev_query_free(&q);
		ev_table_info_clear(ti);
		return -1;
	}
	ev_query_free(&q);
	ti->nindexes = rs->nrows;
	ti->indexes = ev_xcalloc(rs->nrows ? rs->nrows : 1, sizeof(*ti->indexes));
	for (size_t i = 0; i < rs->nrows; i++) {
		ti->indexes[i].name = ev_xstrdup(ev_rowset_cell(rs, i, 0)->s);
		ti->indexes[i].columns = ev_xstrdup(ev_rowset_cell(rs, i, 1)->s);
		ti->indexes[i].unique = strcmp(ev_rowset_cell(rs, i, 2)->s, "0") == 0;
	}
	ev_rowset_free(&rs);
	return 0;
}

double ev_conn_take_charged_ms(struct ev_conn *c)
{
	double ms = c->charged_ms;
	c->charged_ms = 0;
	return ms;
}

void ev_conn_cancel(struct ev_conn *c, bool on)
{
	atomic_store(&c->cancelled, on);
}

int ev_conn_kill_query(struct ev_conn *c, struct ev_error *err)
{
	unsigned long id = atomic_load(&c->thread_id);
	int rc = 0;

	if (id == 0)
		return 0;
	MYSQL *db = new_handle(c);
	if (mysql_real_connect(db, c->src->host, c->src->user, c->password, c->src->database,
	                       c->src->port, c->src->socket, 0) == NULL) {
		connect_error(c, db, err);
		mysql_close(db);
		return -1;
	}
	char *sql = ev_sql_kill_query(id);
	int qrc = mysql_query(db, sql);
	free(sql);
	if (qrc != 0 && mysql_errno(db) != ER_NO_SUCH_THREAD)
		rc = ev_error_set(err, (int)mysql_errno(db), _("KILL QUERY failed: %s"),
		                  mysql_error(db));
	mysql_close(db);
	return rc;
}

/* A KILL QUERY to send from a thread of its own: what it needs is copied, since the connection
 * it cancels may be gone by the time the killer connects. */
struct kill_ticket {
	MYSQL *db; /* configured (options only) in the caller's thread; no network yet */
	char *host, *user, *password, *database, *socket;
	unsigned int port;
	unsigned long id;
};

static pthread_mutex_t kill_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t kill_cond = PTHREAD_COND_INITIALIZER;
static int kill_inflight;

static char *dup_or_null(const char *s)
{
	return s ? ev_xstrdup(s) : NULL;
}

static void *kill_thread(void *arg)
{
	struct kill_ticket *k = arg;
	mysql_thread_init();
	if (mysql_real_connect(k->db, k->host, k->user, k->password, k->database, k->port,
	                       k->socket, 0) != NULL) {
		char *sql = ev_sql_kill_query(k->id);
		(void)mysql_query(k->db, sql); /* ER_NO_SUCH_THREAD: it ended meanwhile */
		free(sql);
	}
	mysql_close(k->db);
	free(k->host);
	free(k->user);
	free(k->password);
	free(k->database);
	free(k->socket);
	free(k);
	pthread_mutex_lock(&kill_lock);
	kill_inflight--;
	pthread_cond_broadcast(&kill_cond);
	pthread_mutex_unlock(&kill_lock);
	mysql_thread_end();
	return NULL;
}

void ev_conn_kill_query_async(struct ev_conn *c)
{
	unsigned long id = atomic_load(&c->thread_id);
	if (id == 0)
		return;
	struct kill_ticket *k = ev_xcalloc(1, sizeof(*k));
	k->db = new_handle(c);
	k->host = dup_or_null(c->src->host);
	k->user = dup_or_null(c->src->user);
	k->password = dup_or_null(c->password);
	k->database = dup_or_null(c->src->database);
	k->socket = dup_or_null(c->src->socket);
	k->port = c->src->port;
	k->id = id;
	pthread_mutex_lock(&kill_lock);
	kill_inflight++;
	pthread_mutex_unlock(&kill_lock);
	/* The killer takes no signal: the UI thread handles them. */
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	pthread_attr_t attr;
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	pthread_t t;
	int rc = pthread_create(&t, &attr, kill_thread, k);
	pthread_attr_destroy(&attr);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc != 0) {
		/* No thread to be had: send it from here (it waits at most connect_timeout). */
		kill_thread(k);
	}
}

void ev_conn_kill_wait(int max_ms)
{
	struct timespec until;
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += max_ms / 1000;
	until.tv_nsec += (long)(max_ms % 1000) * 1000000L;
	if (until.tv_nsec >= 1000000000L) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000L;
	}
	pthread_mutex_lock(&kill_lock);
	while (kill_inflight > 0)
		if (pthread_cond_timedwait(&kill_cond, &kill_lock, &until) != 0)
			break;
	pthread_mutex_unlock(&kill_lock);
}

const struct ev_server_version *ev_conn_server(const struct ev_conn *c)
{
	return &c->version;
}

const char *ev_conn_server_info(const struct ev_conn *c)
{
	return c->server_info ? c->server_info : "";
}

const char *ev_conn_host_info(const struct ev_conn *c)
{
	return c->host_info ? c->host_info : "";
}

const char *ev_conn_user(const struct ev_conn *c)
{
	return c->user ? c->user : "";
}

unsigned long ev_conn_thread_id(const struct ev_conn *c)
{
	return atomic_load(&c->thread_id);
}

const char *ev_conn_tls_cipher(const struct ev_conn *c)
{
	return c->db ? mysql_get_ssl_cipher(c->db) : NULL;
}

/* --- writes ---------------------------------------------------------------------------------- */

#ifndef ER_LOCK_WAIT_TIMEOUT
#define ER_LOCK_WAIT_TIMEOUT 1205
#endif
#ifndef ER_LOCK_DEADLOCK
#define ER_LOCK_DEADLOCK 1213
#endif
#ifndef ER_OPTION_PREVENTS_STATEMENT
#define ER_OPTION_PREVENTS_STATEMENT 1290
#endif
#define ER_CONNECTION_KILLED_ 1927 /* MariaDB: this connection was killed (KILL CONNECTION) */
#define ER_WSREP_NOT_READY    1047 /* Galera: the node is not in the primary component */

/* For a write, a killed connection is a lost one: its transaction is gone with it. */
static bool write_lost(unsigned int no)
{
	return is_lost(no) || no == ER_CONNECTION_KILLED_;
}

void ev_conn_set_read_only(struct ev_conn *c, const char *reason)
{
	free(c->read_only);
	c->read_only = reason ? ev_xstrdup(reason) : NULL;
}

const char *ev_conn_read_only(const struct ev_conn *c)
{
	return c->read_only;
}

/* A write's error in the operator's words. */
static int write_error(struct ev_conn *c, const struct ev_query *q, unsigned int no,
                       const char *msg, const char *sqlstate, struct ev_error *err)
{
	if (write_lost(no))
		return ev_error_set(err, EV_ERR_CONNECT, _("connection lost during %s: %s"),
		                    q->name, msg);
	if (no == ER_LOCK_WAIT_TIMEOUT)
		return ev_error_set(
		        err, (int)no,
		        _("lock wait timeout: another session holds the row (waited "
		          "innodb_lock_wait_timeout); nothing was changed and nothing is "
		          "retried"));
	if (no == ER_LOCK_DEADLOCK)
		return ev_error_set(
		        err, (int)no,
		        _("deadlock (or a conflict with another node): the transaction was "
		          "rolled back; nothing was changed and nothing is retried"));
	if (no == ER_OPTION_PREVENTS_STATEMENT)
		return ev_error_set(err, (int)no, _("the server refuses writes: %s"), msg);
	if (no == ER_WSREP_NOT_READY)
		return ev_error_set(err, (int)no,
		                    _("the node is not part of the cluster's primary component "
		                      "(%s); nothing was changed"),
		                    msg);
	return stmt_error(c, q, no, msg, sqlstate, err);
}

int ev_conn_write(struct ev_conn *c, const struct ev_query *q, unsigned long long *affected,
                  struct ev_error *err)
{
	MYSQL_BIND *pb = NULL;
	unsigned long *plen = NULL;
	double t0 = now_ms();
	bool lost = false;
	int rc = -1;

	*affected = 0;
	if (c->read_only != NULL)
		return ev_error_set(err, EV_ERR_GENERIC, _("read-only: %s"), c->read_only);
	if (c->db == NULL)
		return ev_error_set(err, EV_ERR_CONNECT, _("not connected"));
	int slot;
	MYSQL_STMT *st = stmt_kept(c, q->sql, &slot);
	if (st == NULL) {
		st = c->stmts[slot].st;
		goto fail;
	}
	if (q->nparams != mysql_stmt_param_count(st)) {
		ev_error_set(err, EV_ERR_GENERIC, _("%s: %zu parameters for %lu placeholders"),
		             q->name, q->nparams, mysql_stmt_param_count(st));
		goto out;
	}
	if (bind_params(st, q, &pb, &plen) < 0 || mysql_stmt_execute(st) != 0)
		goto fail;
	*affected = (unsigned long long)mysql_stmt_affected_rows(st);
	rc = 0;
	goto out;
fail:
	if (mysql_stmt_errno(st) != 0) {
		lost = write_lost(mysql_stmt_errno(st));
		write_error(c, q, mysql_stmt_errno(st), mysql_stmt_error(st),
		            mysql_stmt_sqlstate(st), err);
	} else {
		lost = write_lost(mysql_errno(c->db));
		write_error(c, q, mysql_errno(c->db), mysql_error(c->db), mysql_sqlstate(c->db),
		            err);
	}
out:
	if (sql_log != NULL) {
		char *text = ev_query_render(q);
		log_sql(c, text, now_ms() - t0, rc == 0 ? (long long)*affected : -1,
		        rc == 0 ? NULL : err->msg);
		free(text);
	}
	free(pb);
	free(plen);
	if (rc < 0)
		stmt_forget(c, slot); /* prepared anew next time: nothing of a failure is kept */
	if (lost)
		ev_conn_close(c); /* never retried: the caller re-reads on a new connection */
	return rc;
}

int ev_conn_begin(struct ev_conn *c, struct ev_error *err)
{
	for (int attempt = 0; attempt < 2; attempt++) {
		if (c->db == NULL && ev_conn_connect(c, err) < 0)
			return -1;
		if (mysql_autocommit(c->db, 0) == 0) {
			log_sql(c, "/* evtop */ SET autocommit = 0", 0, -1, NULL);
			return 0;
		}
		unsigned int no = mysql_errno(c->db);
		ev_error_set(err, write_lost(no) ? EV_ERR_CONNECT : (int)no,
		             _("cannot start a transaction: %s"), mysql_error(c->db));
		if (!write_lost(no))
			return -1;
		ev_conn_close(c); /* nothing was written: safe to reconnect and try again */
	}
	return -1;
}

int ev_conn_commit(struct ev_conn *c, struct ev_error *err)
{
	double t0 = now_ms();

	if (c->db == NULL)
		return ev_error_set(err, EV_ERR_CONNECT, _("connection lost before COMMIT"));
	if (mysql_commit(c->db) != 0) {
		unsigned int no = mysql_errno(c->db);
		if (write_lost(no)) {
			ev_error_set(err, EV_ERR_CONNECT, _("connection lost during COMMIT: %s"),
			             mysql_error(c->db));
			log_sql(c, "COMMIT", now_ms() - t0, -1, err->msg);
			ev_conn_close(c);
			return -1;
		}
		if (no == ER_LOCK_DEADLOCK)
			ev_error_set(
			        err, (int)no,
			        _("conflict: %s changed the row first (%s); the transaction was "
			          "rolled back, nothing was changed and nothing is retried"),
			        c->galera ? _("another node of the cluster") : _("another session"),
			        mysql_error(c->db));
		else if (no == ER_WSREP_NOT_READY)
			ev_error_set(
			        err, (int)no,
			        _("COMMIT refused: the node is not part of the cluster's primary "
			          "component (%s); nothing was changed"),
			        mysql_error(c->db));
		else
			ev_error_set(err, (int)no, _("COMMIT failed: %s"), mysql_error(c->db));
		log_sql(c, "COMMIT", now_ms() - t0, -1, err->msg);
		ev_conn_rollback(c);
		return -1;
	}
	log_sql(c, "COMMIT", now_ms() - t0, -1, NULL);
	/* The commit is done; a failure to switch autocommit back only costs the connection. */
	if (mysql_autocommit(c->db, 1) != 0)
		ev_conn_close(c);
	return 0;
}

void ev_conn_rollback(struct ev_conn *c)
{
	if (c->db == NULL)
		return;
	if (mysql_rollback(c->db) != 0 || mysql_autocommit(c->db, 1) != 0) {
		/* The server rolls an open transaction back when its connection goes. */
		ev_conn_close(c);
		return;
	}
	log_sql(c, "ROLLBACK", 0, -1, NULL);
}

int ev_conn_prepare_check(struct ev_conn *c, const struct ev_query *q, struct ev_error *err)
{
	bool lost = false;
	int rc = 0;

	if (c->db == NULL && ev_conn_connect(c, err) < 0)
		return -1;
	MYSQL_STMT *st = mysql_stmt_init(c->db);
	if (st == NULL)
		ev_fatal(_("out of memory (mysql_stmt_init)"));
	if (mysql_stmt_prepare(st, q->sql, strlen(q->sql)) != 0) {
		unsigned int no = mysql_stmt_errno(st);
		if (no == ER_TABLEACCESS_DENIED_ERROR || no == ER_COLUMNACCESS_DENIED_ERROR)
			rc = ev_error_set(err, (int)no, "%s", mysql_stmt_error(st));
		else
			rc = stmt_error(c, q, no, mysql_stmt_error(st), mysql_stmt_sqlstate(st),
			                err);
		lost = is_lost(no);
	}
	mysql_stmt_close(st);
	if (lost)
		ev_conn_close(c);
	return rc;
}
