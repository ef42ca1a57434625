/* evtop — `evtop archive` (doc/archive.md): finished rows older than the retention moved out
 * of an online table into its archive table, a JSON-lines file, or (--purge) nowhere, in
 * small paced batches on each source's primary; --dry-run counts and prints the statements;
 * --create-archive-table makes the archive table from the online table's definition. */
#include <config.h>

#include "cli/cli.h"
#include "cli/options.h"
#include "cli/session.h"
#include "core/archive.h"
#include "core/auditlog.h"
#include "core/doctor.h"
#include "core/files.h"
#include "core/i18n.h"
#include "core/text.h"
#include "db/archive.h"
#include "db/conn.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define RATE_DEFAULT    2000 /* rows a second */
#define PAUSE_DEFAULT   100  /* ms between batches */
#define MAX_LAG_DEFAULT 10   /* seconds */

static void usage(FILE *out)
{
	fputs(_("Usage: evtop archive --table=message|outbox --older-than=DUR [options]\n"
	        "       evtop archive --table=message|outbox --create-archive-table [--to=TABLE]\n"
	        "Move finished events (success; cancelled with --status) created longer ago than\n"
	        "the retention out of the online table, in small batches on the source's primary.\n"
	        "Backlog rows (pending, processing, failed) are never moved.\n"
	        "\nArchive options:\n"
	        "      --older-than=DUR       the retention: rows created before NOW() - DUR move\n"
	        "                             (below 7d needs --force: producers replaying an\n"
	        "                             event_no after it is archived create it again)\n"
	        "      --status=LIST          success (default), cancelled, or success,cancelled\n"
	        "      --include-deleted      soft-deleted rows (deleted = 1) of either status "
	        "too\n"
	        "      --to=TABLE             the archive table (default <table>_archive)\n"
	        "      --to-file=FILE         JSON lines instead, fsync'ed before each DELETE\n"
	        "      --purge                delete without keeping a copy (explicit)\n"
	        "      --create-archive-table make the archive table, then exit\n"
	        "      --batch=N              rows a batch (default 500, 1 .. 5000)\n"
	        "      --rate=ROWS            rows a second at most (default 2000; 0: no limit)\n"
	        "      --pause=DUR            between batches (default 100ms)\n"
	        "      --max-lag=DUR          pause while the source's replica lags more (default\n"
	        "                             10s; a replica whose lag reads NULL counts as "
	        "lagging)\n"
	        "      --until=TIME           stop at this local time (HH:MM, or YYYY-MM-DD "
	        "HH:MM)\n"
	        "      --from-start           a full pass, not from the saved cursor\n"
	        "      --dry-run              count the rows and print the statements; write "
	        "nothing\n"
	        "      --yes                  start without asking (needed without a terminal)\n"
	        "      --force                a retention below 7 days\n"
	        "      --operator=ID          operator or ticket id for the audit\n"
	        "Ctrl-C (or SIGTERM) stops after the current batch; a rerun resumes from the "
	        "cursor\n"
	        "saved in the state directory. Every batch is audited (the local audit file, and\n"
	        "evtop_archive_log when it exists).\n"),
	      out);
	fputs("\n", out);
	ev_opts_usage(out);
}

static atomic_bool stop_flag;

/* The cursor file of a source and table: the state directory's archive/SOURCE.TABLE. */
static char *cursor_path(const char *source, const char *table)
{
	char *audit = ev_audit_log_default_path();
	if (audit == NULL)
		return NULL;
	char *slash = strrchr(audit, '/');
	if (slash != NULL)
		*slash = '\0';
	char *p = ev_xasprintf("%s/archive/%s.%s.cursor", audit, source, table);
	free(audit);
	for (char *c = strrchr(p, '/') + 1; *c; c++)
		if (*c == '/')
			*c = '_';
	return p;
}

static bool cursor_load(const char *path, struct ev_archive_cursor *c)
{
	char buf[128] = "";
	FILE *f = path ? fopen(path, "r") : NULL;
	memset(c, 0, sizeof(*c));
	if (f == NULL)
		return false;
	bool ok = fgets(buf, sizeof(buf), f) != NULL && ev_archive_cursor_parse(buf, c);
	fclose(f);
	return ok;
}

struct saver {
	const char *path;
	bool failed;
};

/* Written anew (a temporary file renamed over it): a crash leaves the old or the new one. */
static void cursor_save(const struct ev_archive_cursor *c, void *arg)
{
	struct saver *sv = arg;
	struct ev_error err = {0};
	if (sv->path == NULL ||
	    ev_file_make_parents(sv->path, _("the archive state directory"), &err) < 0) {
		sv->failed = true;
		return;
	}
	char *tmp = ev_xasprintf("%s.tmp", sv->path);
	char *text = ev_archive_cursor_text(c);
	int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
	bool ok =
	        fd >= 0 && write(fd, text, strlen(text)) == (ssize_t)strlen(text) && fsync(fd) == 0;
	if (fd >= 0)
		close(fd);
	if (!ok || rename(tmp, sv->path) < 0) {
		unlink(tmp);
		sv->failed = true;
	}
	free(text);
	free(tmp);
}

struct lag_ctx {
	struct ev_conn *conn;
};

static int read_lag(void *arg, long long *lag_s, char *why, size_t n)
{
	struct lag_ctx *l = arg;
	struct ev_error err = {0};
	struct ev_rowset *rs = NULL;
	if (!ev_conn_is_connected(l->conn) && ev_conn_connect(l->conn, &err) < 0) {
		snprintf(why, n, "%s", err.msg);
		return -1;
	}
	struct ev_query *q = ev_doctor_query_replica(ev_conn_server(l->conn));
	int rc = ev_conn_run(l->conn, q, &rs, &err);
	ev_query_free(&q);
	if (rc < 0) {
		snprintf(why, n, "%s",
		         err.code == 1227 ? _("the account lacks REPLICA MONITOR (MariaDB) / "
		                              "REPLICATION CLIENT (MySQL)")
		                          : err.msg);
		return -1;
	}
	char note[200] = "";
	bool channel = rs->nrows > 0; /* no row: not a replica (the note says so) */
	long long lag = ev_doctor_replica_lag(rs, note, sizeof(note));
	ev_rowset_free(&rs);
	/* Not a replica at all (no channel): nothing to wait for. */
	if (lag < 0 && !channel) {
		*lag_s = 0;
		return 0;
	}
	*lag_s = lag >= 0 ? lag : -1;
	return 0;
}

struct show {
	bool tty;
	long long total; /* the dry count (-1: not known) */
	double last_line;
	const char *table;
};

static double mono(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void show_progress(const struct ev_archive_progress *p, void *arg)
{
	struct show *sh = arg;
	char eta[64] = "";
	if (sh->total > 0 && p->rate > 0 && (long long)p->moved < sh->total)
		/* TRANSLATORS: after the rate: the seconds left. */
		snprintf(eta, sizeof(eta), _(", ETA %.0fs"),
		         (double)(sh->total - (long long)p->moved) / p->rate);
	if (sh->tty) {
		int width = 30;
		int fill = sh->total > 0 ? (int)((double)p->moved * width / (double)sh->total) : 0;
		if (fill > width)
			fill = width;
		fprintf(stderr, "\r\033[K%s [%.*s%*s] ", sh->table, fill,
		        "##############################", width - fill, "");
		/* TRANSLATORS: an archive run's progress after its bar: the rows moved, the rate,
		 * the ETA, then why it waits (after " - "). */
		fprintf(stderr, _("%zu rows, %.0f rows/s%s%s%s"), p->moved, p->rate, eta,
		        p->waiting ? " - " : "", p->waiting ? p->waiting : "");
		if (p->finished)
			fputc('\n', stderr);
		return;
	}
	double now = mono();
	if (sh->last_line == 0)
		sh->last_line = now; /* the first line a minute in */
	if (p->finished || p->waiting != NULL || now - sh->last_line >= 60) {
		if (p->finished && p->batches == 0 && p->waiting == NULL)
			return;
		sh->last_line = now;
		/* TRANSLATORS: a count of rows ("3 rows"), in longer sentences. */
		char *rows = ev_xasprintf(p->moved == 1 ? _("%zu row") : _("%zu rows"), p->moved);
		char *batches =
		        ev_xasprintf(p->batches == 1 ? _("%u batch") : _("%u batches"), p->batches);
		/* TRANSLATORS: "archive biz_outbox_event: 500 rows moved in 1 batch, 2000 rows/s",
		 * then the ETA and why it waits. */
		fputs("evtop: ", stderr);
		fprintf(stderr, _("archive %s: %s moved in %s, %.0f rows/s%s%s%s\n"), sh->table,
		        rows, batches, p->rate, eta, p->waiting ? "; " : "",
		        p->waiting ? p->waiting : "");
		free(rows);
		free(batches);
	}
}

/* Local time "HH:MM" (the next one) or "YYYY-MM-DD hh:mm:ss" as a time_t; -1 when past. */
static time_t until_time(const struct ev_opts *o, struct ev_error *err)
{
	struct tm tm = {0};
	time_t now = time(NULL);
	if (o->until_clock != NULL) {
		int h, m;
		if (sscanf(o->until_clock, "%2d:%2d", &h, &m) != 2 || h < 0 || h > 23 || m < 0 ||
		    m > 59)
			return ev_error_set(err, EV_ERR_USAGE,
			                    _("--until: expected HH:MM, got '%s'"), o->until_clock);
		localtime_r(&now, &tm);
		tm.tm_hour = h;
		tm.tm_min = m;
		tm.tm_sec = 0;
		time_t t = mktime(&tm);
		return t <= now ? t + 86400 : t;
	}
	if (o->filter.until == NULL)
		return 0;
	if (strptime(o->filter.until, "%Y-%m-%d %H:%M:%S", &tm) == NULL)
		return ev_error_set(err, EV_ERR_USAGE,
		                    _("--until: expected a local time, got '%s'"), o->filter.until);
	tm.tm_isdst = -1;
	time_t t = mktime(&tm);
	if (t <= now)
		return ev_error_set(err, EV_ERR_USAGE, _("--until %s is past"), o->filter.until);
	return t;
}

/* "  label:     text": the label in 11 cells, the text lined up after it. */
static void say_field(const char *label, const char *fmt, ...)
        __attribute__((format(printf, 2, 3)));
static void say_field(const char *label, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *text = ev_xvasprintf(fmt, ap);
	va_end(ap);
	int w = ev_text_width(label);
	printf("  %s%*s%s\n", label, w < 11 ? 11 - w : 1, "", text);
	free(text);
}

/* A statement's text as it would run, for --dry-run. */
static void print_statement(const char *what, struct ev_query *q, bool render)
{
	char *text = render ? ev_query_render(q) : ev_xstrdup(q->sql);
	char *safe = ev_text_sanitize(text, strlen(text));
	/* The label in 11 cells, the statements lined up after it. */
	int w = ev_text_width(what);
	printf("  %s%*s%s\n", what, w < 11 ? 11 - w : 1, "", safe);
	free(safe);
	free(text);
	ev_query_free(&q);
}

static long long count_of(struct ev_conn *c, struct ev_query *q)
{
	struct ev_error err = {0};
	struct ev_rowset *rs = NULL;
	long long n = -1;
	if (ev_conn_run(c, q, &rs, &err) == 0 && rs->nrows > 0 && ev_rowset_cell(rs, 0, 0)->s)
		n = atoll(ev_rowset_cell(rs, 0, 0)->s);
	ev_rowset_free(&rs);
	ev_query_free(&q);
	return n;
}

/* The statement prepared only: the server checks the privileges it needs. */
static int may_run(struct ev_conn *c, struct ev_query *q, const char *what, struct ev_error *err)
{
	struct ev_error e = {0};
	int rc = ev_conn_prepare_check(c, q, &e);
	ev_query_free(&q);
	if (rc == 0)
		return 0;
	/* TRANSLATORS: the account, what it would do ("DELETE from the table"), the server's
	 * words. */
	return ev_error_set(err, e.code, _("the account %s may not %s: %s"), ev_conn_user(c), what,
	                    e.msg);
}

struct job {
	struct ev_opts *o;
	const struct ev_source *src;
	enum ev_table_kind table;
	struct ev_audit_ident *ident;
	const char *run_id;
};

/* The archive table: made (--create-archive-table), or checked to hold the same columns. */
static int archive_table(struct ev_session *s, struct ev_archive_spec *sp, bool create,
                         struct ev_error *err)
{
	struct ev_rowset *on = NULL, *ar = NULL;
	struct ev_query *q = ev_archive_query_columns(sp->archive_name);
	int rc = ev_conn_run(s->conn, q, &ar, err);
	ev_query_free(&q);
	if (rc < 0)
		return -1;
	if (ar->nrows == 0 && create) {
		char *sql[4];
		size_t n = ev_archive_create_sql(sp, &s->info[sp->table], sql, 4);
		for (size_t i = 0; i < n; i++) {
			if (rc == 0 && ev_conn_exec(s->conn, sql[i], err) < 0)
				rc = -1;
			if (rc == 0)
				printf("%s;\n", sql[i]);
			free(sql[i]);
		}
		ev_rowset_free(&ar);
		if (rc < 0)
			return -1;
		q = ev_archive_query_columns(sp->archive_name);
		rc = ev_conn_run(s->conn, q, &ar, err);
		ev_query_free(&q);
		if (rc < 0)
			return -1;
	} else if (ar->nrows == 0) {
		ev_rowset_free(&ar);
		return ev_error_set(
		        err, EV_ERR_SCHEMA,
		        _("no archive table %s: make it with --create-archive-table (or "
		          "name another with --to, or use --to-file / --purge)"),
		        sp->archive_name);
	} else if (create) {
		printf(_("the archive table %s exists already\n"), sp->archive_name);
	}
	q = ev_archive_query_columns(sp->table_name);
	rc = ev_conn_run(s->conn, q, &on, err);
	ev_query_free(&q);
	if (rc == 0)
		rc = ev_archive_columns_match(on, ar, sp->archive_name, err);
	ev_rowset_free(&on);
	ev_rowset_free(&ar);
	return rc;
}

static const char *retention_risk(long long s)
{
	return s < EV_ARCHIVE_MIN_RETENTION_S
	               ? _("below 7 days: a producer replaying an event_no after its row is "
	                   "archived creates it again as a new pending event, published twice")
	               : _("a producer replaying an event_no older than this creates it again as "
	                   "a new pending event (the idempotent INSERT needs the row online)");
}

/* What the steps of one run (one source, one table) share; one() frees it. */
struct run {
	struct job *j;
	struct ev_opts *o;
	struct ev_session s;
	struct ev_error err;
	const char *name; /* the online table */
	const char *src_name;
	struct ev_archive_spec sp;
	char *arch_name, *cpath, *now, *cutoff;
	struct ev_archive_cursor cursor;
	bool resumed;
	long long total; /* the dry count (-1: not known) */
	bool log_table;  /* evtop_archive_log exists */
	struct ev_audit_who w;
	struct ev_audit_log log;
	int file_fd;
	struct ev_conn *replica;
	struct ev_source *endpoint;
};

/* A step's answer that lets the run go on (any other is its exit code). */
#define GO_ON -1

/* Connect, check the table, and fill the run's spec from the options. */
static int open_source(struct run *r)
{
	struct ev_opts *o = r->o;
	struct ev_archive_spec *sp = &r->sp;

	o->src = (struct ev_source *)r->j->src;
	r->name = ev_opts_table_name(o, r->j->table); /* this source's own name for it */
	if (ev_session_open(&r->s, o, &r->err) < 0 ||
	    ev_session_check_table(&r->s, r->j->table, &r->err) < 0) {
		ev_session_report(&r->err);
		return r->err.code == EV_ERR_CONNECT || r->err.code == EV_ERR_SCHEMA
		               ? EV_EXIT_UNKNOWN
		               : EV_EXIT_FAILURE;
	}
	const struct ev_table_info *ti = &r->s.info[r->j->table];
	sp->table = r->j->table;
	sp->table_name = r->name;
	r->arch_name =
	        o->archive_to ? ev_xstrdup(o->archive_to) : ev_xasprintf("%s_archive", r->name);
	sp->archive_name = r->arch_name;
	sp->file_path = o->archive_file;
	sp->target = o->purge          ? EV_ARCHIVE_PURGE
	             : o->archive_file ? EV_ARCHIVE_TO_FILE
	                               : EV_ARCHIVE_TO_TABLE;
	sp->include_deleted = o->include_deleted;
	sp->columns = (const char *const *)ti->columns;
	sp->ncolumns = ti->ncolumns;
	sp->create_index = ev_index_find(ti, "create_time");
	if (ev_archive_parse_statuses(o->archive_status ? o->archive_status : "success",
	                              &sp->statuses, &r->err) < 0) {
		ev_session_report(&r->err);
		return EV_EXIT_USAGE;
	}
	return GO_ON;
}

/* --create-archive-table: make the archive table (or find it made), and nothing else. */
static int create_only(struct run *r)
{
	if (r->o->cfg.read_only) {
		ev_say_error("%s",
		             _("refused: read-only (--read-only or read_only in the config)"));
		return EV_EXIT_FAILURE;
	}
	if (archive_table(&r->s, &r->sp, true, &r->err) < 0) {
		ev_session_report(&r->err);
		return EV_EXIT_FAILURE;
	}
	return EV_EXIT_OK;
}

/* Before anything moves: the index the reads need, the archive table, the run's cutoff from
 * the server's clock (fixed for the run), the saved cursor, and the rows to move counted. */
static int survey(struct run *r)
{
	struct ev_opts *o = r->o;
	struct ev_archive_spec *sp = &r->sp;

	if (sp->create_index == NULL) {
		ev_say_error(_("%s has no index on (create_time): archive reads the oldest rows "
		               "through it (the model's idx_create_time); evtop doctor gives the "
		               "statement"),
		             r->name);
		return EV_EXIT_UNKNOWN;
	}
	if (sp->target == EV_ARCHIVE_TO_TABLE && archive_table(&r->s, sp, false, &r->err) < 0) {
		ev_session_report(&r->err);
		if (!o->dry_run)
			return EV_EXIT_FAILURE;
	}
	struct ev_rowset *rs = NULL;
	struct ev_query *q = ev_archive_query_clock(o->older_than_s);
	if (ev_conn_run(r->s.conn, q, &rs, &r->err) < 0 || rs->nrows != 1) {
		ev_query_free(&q);
		ev_rowset_free(&rs);
		ev_session_report(&r->err);
		return EV_EXIT_UNKNOWN;
	}
	ev_query_free(&q);
	r->now = ev_xstrdup(ev_rowset_cell(rs, 0, 0)->s ? ev_rowset_cell(rs, 0, 0)->s : "");
	r->cutoff = ev_xstrdup(ev_rowset_cell(rs, 0, 1)->s ? ev_rowset_cell(rs, 0, 1)->s : "");
	ev_rowset_free(&rs);
	sp->cutoff = r->cutoff;

	r->cpath = cursor_path(r->src_name, r->name);
	r->resumed = !o->from_start && cursor_load(r->cpath, &r->cursor);
	r->total = ev_archive_count(r->s.conn, sp, r->resumed ? &r->cursor : NULL, &r->err);
	/* A count stopped by the statement time limit (a large table): the run goes on, its
	 * size unknown; the batches are bounded whatever it is. */
	if (r->total < 0 && r->err.code != EV_ERR_TIMEOUT) {
		ev_session_report(&r->err);
		return EV_EXIT_UNKNOWN;
	}
	return GO_ON;
}

/* What the run is about to do: the rows, the cutoff, the target, the statuses, the risk of
 * the retention, the account. */
static void print_plan(const struct run *r)
{
	const struct ev_opts *o = r->o;
	const struct ev_archive_spec *sp = &r->sp;
	bool counted = r->total >= 0;
	long long total = r->total;

	char *who = ev_text_sanitize(ev_conn_user(r->s.conn), strlen(ev_conn_user(r->s.conn)));
	char *target = sp->target == EV_ARCHIVE_PURGE
	                       ? ev_xstrdup(_("to delete (--purge: no copy is kept)"))
	               : sp->target == EV_ARCHIVE_TO_FILE
	                       ? ev_xasprintf(_("to move to the file %s"), o->archive_file)
	                       : ev_xasprintf(_("to move to the table %s"), sp->archive_name);
	if (r->resumed) {
		/* TRANSLATORS: where the rows go ("to move to the table X"), then from where on. */
		char *from = ev_xasprintf(
		        _("%s (after the saved cursor; --from-start for a full pass)"), target);
		free(target);
		target = from;
	}
	char *tsafe = ev_text_sanitize(target, strlen(target));
	/* TRANSLATORS: the plan of an archive run: the table, the source, how many rows, the
	 * cutoff (a server time), the server's NOW(), where they go ("to move to the table X",
	 * perhaps with where it resumes). */
	if (!counted)
		printf(_("archive %s (source %s): an uncounted number of (the count reached the "
		         "statement time limit) finished rows created before %s (server time; now "
		         "%s), %s\n"),
		       r->name, r->src_name, r->cutoff, r->now, tsafe);
	else if (total > EV_ARCHIVE_COUNT_CAP)
		printf(_("archive %s (source %s): more than %lld finished rows created before %s "
		         "(server time; now %s), %s\n"),
		       r->name, r->src_name, (long long)EV_ARCHIVE_COUNT_CAP, r->cutoff, r->now,
		       tsafe);
	else
		printf(total == 1
		               ? _("archive %s (source %s): %lld finished row created before %s "
		                   "(server time; now %s), %s\n")
		               : _("archive %s (source %s): %lld finished rows created before %s "
		                   "(server time; now %s), %s\n"),
		       r->name, r->src_name, total, r->cutoff, r->now, tsafe);
	free(tsafe);
	free(target);
	/* The statuses as --status names them. */
	char *statuses = ev_xasprintf(
	        "%s%s%s%s", sp->statuses & (1u << EV_ST_SUCCESS) ? "success" : "",
	        sp->statuses == ((1u << EV_ST_SUCCESS) | (1u << EV_ST_CANCELLED)) ? ", " : "",
	        sp->statuses & (1u << EV_ST_CANCELLED) ? "cancelled" : "",
	        sp->include_deleted ? _(", and soft-deleted rows of either") : "");
	/* TRANSLATORS: the labels of an archive run's plan (at most 10 cells); the fields line
	 * up after them. */
	say_field(_("statuses:"), _("%s; backlog rows (0, 1, 3) stay"), statuses);
	/* TRANSLATORS: a field label (at most 10 cells). */
	say_field(_("retention:"), "%s", retention_risk(o->older_than_s));
	/* TRANSLATORS: a field label (at most 10 cells). */
	say_field(_("account:"), "%s", who);
	free(statuses);
	free(who);
}

/* --dry-run: the statements of a batch, as they would run. */
static int dry_run(struct run *r)
{
	struct ev_archive_spec *sp = &r->sp;
	uint64_t ids[1] = {0};

	printf("%s", _("  statements of a batch (? the ids chosen):\n"));
	/* TRANSLATORS: the statements of an archive batch (at most 10 cells each). */
	print_statement(P_("archive statement", "read"),
	                ev_archive_query_candidates(
	                        sp, r->resumed ? &r->cursor : NULL,
	                        (size_t)(r->o->batch ? r->o->batch : EV_ARCHIVE_BATCH_DEFAULT) *
	                                EV_ARCHIVE_EXAMINE_FACTOR),
	                true);
	/* TRANSLATORS: an archive batch's statement (at most 10 cells). */
	print_statement(P_("archive statement", "lock"),
	                ev_archive_query_lock(sp, ids, 1, sp->target == EV_ARCHIVE_TO_FILE), false);
	if (sp->target == EV_ARCHIVE_TO_TABLE)
		/* TRANSLATORS: an archive batch's statement (at most 10 cells). */
		print_statement(P_("archive statement", "copy"), ev_archive_query_copy(sp, ids, 1),
		                false);
	/* TRANSLATORS: an archive batch's statement (at most 10 cells). */
	print_statement(P_("archive statement", "delete"), ev_archive_query_delete(sp, ids, 1),
	                false);
	printf("%s", _("dry run: nothing written\n"));
	return EV_EXIT_OK;
}

/* The privileges, checked before the first batch: DELETE, INSERT into the archive table, and
 * into evtop_archive_log when it exists (no batch runs without its record there). */
static int check_grants(struct run *r)
{
	struct ev_archive_spec *sp = &r->sp;
	uint64_t probe_ids[1] = {0};

	if (may_run(r->s.conn, ev_archive_query_delete(sp, probe_ids, 1),
	            _("DELETE from the table"), &r->err) < 0 ||
	    (sp->target == EV_ARCHIVE_TO_TABLE &&
	     may_run(r->s.conn, ev_archive_query_copy(sp, probe_ids, 1),
	             _("INSERT into the archive table"), &r->err) < 0)) {
		ev_session_report(&r->err);
		ev_say_error("%s", _("nothing archived (sql/grants.sql has the archiving account's "
		                     "GRANTs)"));
		return EV_EXIT_FAILURE;
	}
	r->log_table = count_of(r->s.conn, ev_archive_query_log_exists()) > 0;
	r->w = (struct ev_audit_who){
	        .source = r->src_name,
	        .os_user = r->j->ident->os_user,
	        .sudo_user = r->j->ident->sudo_user,
	        .ssh_connection = r->j->ident->ssh_connection,
	        .operator_id = r->o->cfg.operator_id,
	        .db_user = ev_conn_user(r->s.conn),
	};
	struct ev_archive_batch probe = {.run_id = r->j->run_id, .number = 1};
	if (r->log_table && may_run(r->s.conn, ev_archive_query_log(sp, &r->w, &probe),
	                            _("INSERT into evtop_archive_log"), &r->err) < 0) {
		ev_session_report(&r->err);
		ev_say_error("%s",
		             _("nothing archived: evtop_archive_log exists, and no batch runs "
		               "without its record"));
		return EV_EXIT_FAILURE;
	}
	return GO_ON;
}

/* Without --yes, asked on the terminal; refused without one. */
static int confirm(const struct ev_opts *o)
{
	if (o->yes)
		return GO_ON;
	if (!isatty(STDIN_FILENO)) {
		ev_say_error("%s",
		             _("refused: no terminal to confirm on; add --yes to start without "
		               "asking, or --dry-run to see the statements"));
		return EV_EXIT_FAILURE;
	}
	/* TRANSLATORS: the answer is read as y (any case): keep [y/N]. */
	printf("%s", _("Start? [y/N] "));
	fflush(stdout);
	char answer[16] = "";
	if (fgets(answer, sizeof(answer), stdin) == NULL ||
	    (answer[0] != 'y' && answer[0] != 'Y')) {
		printf("%s", _("nothing archived\n"));
		return EV_EXIT_FAILURE;
	}
	return GO_ON;
}

/* Everything a real run writes besides the tables, or why it may not: read-only, nothing to
 * do, the grants, the confirmation, the audit file, the archive file. */
static int may_start(struct run *r)
{
	struct ev_opts *o = r->o;
	int rc;

	if (o->cfg.read_only) {
		ev_say_error("%s", _("refused: read-only (--read-only or read_only in the config): "
		                     "archive writes nothing"));
		return EV_EXIT_FAILURE;
	}
	if (r->total == 0) {
		printf("%s", _("nothing to archive\n"));
		return EV_EXIT_OK;
	}
	if ((rc = check_grants(r)) != GO_ON || (rc = confirm(o)) != GO_ON)
		return rc;
	char *apath = ev_audit_log_default_path();
	if (apath == NULL || ev_audit_log_open(&r->log, apath, &r->err) < 0) {
		ev_say_error(_("refused: %s (each batch is audited there first)"),
		             apath ? r->err.msg : _("no home directory for the audit file"));
		free(apath);
		return EV_EXIT_FAILURE;
	}
	free(apath);
	if (r->sp.target == EV_ARCHIVE_TO_FILE) {
		/* TRANSLATORS: a file in "%s %s is not a regular file" and such (the file's path
		 * follows). */
		r->file_fd = ev_file_open_safe(_("the archive file"), o->archive_file,
		                               EV_FILE_PRIVATE, EV_FILE_APPEND, &r->err);
		if (r->file_fd < 0) {
			ev_session_report(&r->err);
			return EV_EXIT_FAILURE;
		}
	}
	return GO_ON;
}

/* What the batches did: moved, rolled back, kept online, where the cursor stands. */
static int print_result(const struct run *r, const struct ev_archive_result *res,
                        bool cursor_unsaved)
{
	const struct ev_archive_progress *p = &res->p;
	/* TRANSLATORS: a count of rows ("3 rows"), in longer sentences. */
	char *rows = ev_xasprintf(p->moved == 1 ? _("%zu row") : _("%zu rows"), p->moved);
	char *batches = ev_xasprintf(p->batches == 1 ? _("%u batch") : _("%u batches"), p->batches);
	/* TRANSLATORS: "archived 500 rows of biz_outbox_event in 1 batch (...)", then how the
	 * run ended (": nothing older is left"). */
	printf(_("archived %s of %s in %s (%.0f rows/s, the longest lock hold %.0f ms)%s\n"), rows,
	       r->name, batches, p->rate, p->max_lock_ms,
	       res->complete        ? _(": nothing older is left")
	       : res->stopped       ? _(": stopped (the rest stays; a rerun resumes)")
	       : res->until_reached ? _(": --until reached (a rerun resumes)")
	                            : "");
	free(rows);
	free(batches);
	if (p->rolled_back > 0)
		printf(p->rolled_back == 1 ? _("  %u batch rolled back before COMMIT for holding "
		                               "locks over %d ms "
		                               "(the longest %.0f ms), done again smaller\n")
		                           : _("  %u batches rolled back before COMMIT for holding "
		                               "locks over %d "
		                               "ms (the longest %.0f ms), done again smaller\n"),
		       p->rolled_back, EV_ARCHIVE_LOCK_MS, p->max_rolled_back_ms);
	printf(_("  kept online: %zu still in the backlog, %zu of a status not asked for, %zu "
	         "soft-deleted (--include-deleted moves them), %zu changed before their lock\n"),
	       p->kept_backlog, p->kept_status, p->kept_deleted, p->changed);
	if (p->cursor.set)
		printf(cursor_unsaved
		               ? _("  cursor: create_time %s, id %llu (could not be saved)\n")
		               : _("  cursor: create_time %s, id %llu\n"),
		       p->cursor.create_time, (unsigned long long)p->cursor.id);
	if (res->error[0] != '\0') {
		/* TRANSLATORS: the table, and what went wrong. */
		ev_say_error(_("archive %s: %s"), r->name, res->error);
		return EV_EXIT_FAILURE;
	}
	return EV_EXIT_OK;
}

/* The batches, paced, watching the replica's lag where the source has one. */
static int run_batches(struct run *r)
{
	struct ev_opts *o = r->o;
	struct lag_ctx lag = {0};

	if (ev_source_has_replica(r->j->src)) {
		r->endpoint = ev_source_read_endpoint(r->j->src);
		r->replica = ev_conn_new(r->endpoint, &o->cfg);
		if (o->password != NULL)
			ev_conn_set_password(r->replica, o->password);
		lag.conn = r->replica;
	}
	struct saver sv = {.path = r->cpath};
	struct show sh = {.tty = isatty(STDERR_FILENO), .total = r->total, .table = r->name};
	struct ev_archive_ctx x = {
	        .conn = r->s.conn,
	        .spec = &r->sp,
	        .batch = (size_t)(o->batch ? o->batch : EV_ARCHIVE_BATCH_DEFAULT),
	        .rate = o->rate >= 0 ? o->rate : RATE_DEFAULT,
	        .pause_ms = (int)(o->pause_ms >= 0 ? o->pause_ms : PAUSE_DEFAULT),
	        .log = &r->log,
	        .who = r->w,
	        .run_id = r->j->run_id,
	        .log_table = r->log_table,
	        .file_fd = r->file_fd,
	        .stop = &stop_flag,
	        .until = until_time(o, &r->err),
	        .lag = r->replica ? read_lag : NULL,
	        .lag_arg = &lag,
	        .max_lag_s = o->max_lag_ms >= 0 ? o->max_lag_ms / 1000 : MAX_LAG_DEFAULT,
	        .progress = show_progress,
	        .progress_arg = &sh,
	        .save_cursor = cursor_save,
	        .save_arg = &sv,
	};
	struct ev_archive_result res;
	if (ev_archive_run(&x, &r->cursor, &res, &r->err) < 0) {
		ev_session_report(&r->err);
		return EV_EXIT_FAILURE;
	}
	return print_result(r, &res, sv.failed);
}

/* One source's run on the table: each step either answers the run's exit code or lets it go
 * on to the next. */
static int one(struct job *j)
{
	struct run r = {
	        .j = j,
	        .o = j->o,
	        .src_name = j->src->name ? j->src->name : "default",
	        .log = {.fd = -1},
	        .file_fd = -1,
	};
	int rc = open_source(&r);
	if (rc == GO_ON && r.o->create_archive_table)
		rc = create_only(&r);
	if (rc == GO_ON)
		rc = survey(&r);
	if (rc == GO_ON) {
		print_plan(&r);
		rc = r.o->dry_run ? dry_run(&r) : may_start(&r);
	}
	if (rc == GO_ON)
		rc = run_batches(&r);

	if (r.file_fd >= 0)
		close(r.file_fd);
	ev_conn_free(&r.replica);
	ev_source_free(&r.endpoint);
	ev_audit_log_close(&r.log);
	ev_session_close(&r.s);
	free(r.arch_name);
	free(r.cpath);
	free(r.now);
	free(r.cutoff);
	return rc;
}

int ev_cmd_archive(int argc, char **argv)
{
	struct ev_opts o;
	int rc = ev_session_parse(&o, argc, argv, usage, 0, 0);
	if (rc >= 0) {
		ev_opts_free(&o);
		return rc;
	}
	const char *bad = NULL;
	if (o.table < 0)
		bad = _("--table=message|outbox is needed (one table a run)");
	else if (!o.create_archive_table && o.older_than_s < 0)
		bad = _("--older-than=DUR is needed (the retention, like 30d)");
	else if ((o.purge ? 1 : 0) + (o.archive_file ? 1 : 0) + (o.archive_to ? 1 : 0) > 1)
		bad = _("--to, --to-file and --purge are one target each; give one");
	else if (o.create_archive_table && (o.purge || o.archive_file))
		bad = _("--create-archive-table makes a table: not with --to-file or --purge");
	else if (!o.create_archive_table && o.older_than_s < EV_ARCHIVE_MIN_RETENTION_S &&
	         !o.force && !o.dry_run)
		bad = _("--older-than below 7d is refused without --force: a producer replaying an "
		        "event_no after its row is archived creates it again as a new pending "
		        "event "
		        "(the model's idempotent INSERT needs the row online)");
	if (bad != NULL) {
		/* TRANSLATORS: what is wrong with the options. */
		ev_say_error(_("archive: %s"), bad);
		ev_opts_free(&o);
		return EV_EXIT_USAGE;
	}
	struct ev_error err = {0};
	if (until_time(&o, &err) < 0) {
		ev_session_report(&err);
		ev_opts_free(&o);
		return EV_EXIT_USAGE;
	}
	struct ev_stop_watch watch;
	/* Without the watch an interrupt would end evtop in the middle of a batch: refused
	 * before anything is moved. */
	if (ev_stop_watch_start(&watch, &stop_flag, false) < 0) {
		ev_say_error("%s",
		             _("archive: cannot watch for Ctrl-C (no thread could be started); "
		               "nothing moved"));
		ev_opts_free(&o);
		return EV_EXIT_FAILURE;
	}
	struct sigaction old_pipe, old_xfsz;
	/* A file target that cannot take more (a closed pipe, a size limit) fails the write. */
	struct sigaction ign = {0};
	ign.sa_handler = SIG_IGN;
	sigaction(SIGPIPE, &ign, &old_pipe);
	sigaction(SIGXFSZ, &ign, &old_xfsz);

	struct ev_audit_ident ident = {0};
	ev_audit_ident_fill(&ident);
	char run_id[64];
	snprintf(run_id, sizeof(run_id), "%lld-%ld", (long long)time(NULL), (long)getpid());
	rc = EV_EXIT_OK;
	for (int i = 0; i < o.nchosen && !atomic_load(&stop_flag); i++) {
		struct job j = {
		        .o = &o,
		        .src = o.chosen[i],
		        .table = (enum ev_table_kind)o.table,
		        .ident = &ident,
		        .run_id = run_id,
		};
		int r = one(&j);
		if (r > rc)
			rc = r;
	}
	ev_audit_ident_clear(&ident);
	ev_stop_watch_end(&watch);
	sigaction(SIGPIPE, &old_pipe, NULL);
	sigaction(SIGXFSZ, &old_xfsz, NULL);
	ev_opts_free(&o);
	return rc;
}
