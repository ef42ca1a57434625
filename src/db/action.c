/* evtop — applying one guarded action (see action.h). */
#include <config.h>

#include "db/action.h"
#include "db/fetch.h"

#include "core/i18n.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static ev_action_fault_fn fault_fn;
static void *fault_arg;

void ev_action_set_fault(ev_action_fault_fn fn, void *arg)
{
	fault_fn = fn;
	fault_arg = arg;
}

static int fault(enum ev_action_point point, struct ev_conn *c)
{
	return fault_fn != NULL ? fault_fn(point, c, fault_arg) : 0;
}

/* Format into a fixed buffer, cut at a UTF-8 boundary when it does not fit (messages carry
 * the server's text and the operator's reason). */
static void msgf(char *dst, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void msgf(char *dst, size_t n, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *text = ev_xvasprintf(fmt, ap);
	va_end(ap);
	size_t len = strlen(text);
	if (len >= n) {
		len = n - 1;
		while (len > 0 && ((unsigned char)text[len] & 0xC0) == 0x80)
			len--;
	}
	memcpy(dst, text, len);
	dst[len] = '\0';
	free(text);
}

const char *ev_action_result_name(enum ev_action_result r)
{
	switch (r) {
	case EV_RESULT_APPLIED:
		return "applied";
	case EV_RESULT_SKIPPED:
		return "skipped";
	case EV_RESULT_FAILED:
		return "failed";
	case EV_RESULT_REFUSED:
		return "refused";
	}
	return "failed";
}

/* The first cell of a one-row result as a number; -1 on error. */
static int run_scalar(struct ev_conn *c, struct ev_query *q, long long *vals, size_t n,
                      struct ev_error *err)
{
	struct ev_rowset *rs = NULL;
	int rc = ev_conn_run(c, q, &rs, err);
	ev_query_free(&q);
	if (rc < 0)
		return -1;
	if (rs->nrows < 1 || rs->ncols < n) {
		ev_rowset_free(&rs);
		return ev_error_set(err, EV_ERR_GENERIC, "%s", _("no answer to a check"));
	}
	for (size_t i = 0; i < n; i++) {
		const char *s = ev_rowset_cell(rs, 0, i)->s;
		vals[i] = s ? strtoll(s, NULL, 10) : 0;
	}
	ev_rowset_free(&rs);
	return 0;
}

/* Whether a time zone mismatch is suspected on the table (core/zone.h): then every
 * comparison with NOW() is off (processing rows look stuck, retries due too early or late).
 * A check that cannot run (no such table, the query failed) says nothing. */
static bool zone_suspected(struct ev_conn *c, const char *name, char *why, size_t size)
{
	struct ev_table_info ti = {0};
	struct ev_error e = {0};
	struct ev_zone_newest zn;
	bool suspected = false;
	if (ev_conn_table_info(c, name, &ti, &e) < 0 || !ti.exists) {
		ev_table_info_clear(&ti);
		return false;
	}
	int rc = ev_zone_fetch(c, name, &ti, &zn, &e);
	ev_table_info_clear(&ti);
	char *reason = rc == 0 ? ev_zone_reason(name, &zn) : NULL;
	if (reason != NULL) {
		msgf(why, size, "%s", reason);
		suspected = true;
	}
	free(reason);
	ev_zone_newest_clear(&zn);
	return suspected;
}

static bool is_denied(int code)
{
	return code == 1142 || code == 1143; /* table / column access denied */
}

int ev_action_check_access(struct ev_conn *c, enum ev_table_kind t, const char *table_name,
                           struct ev_access *a, struct ev_error *err)
{
	return ev_action_check_access_clock(c, t, table_name, false, a, err);
}

int ev_action_check_access_clock(struct ev_conn *c, enum ev_table_kind t, const char *table_name,
                                 bool clock_ok, struct ev_access *a, struct ev_error *err)
{
	const struct ev_server_version *v = ev_conn_server(c);
	const char *name = table_name ? table_name : ev_model_table(t)->default_name;
	struct ev_error e = {0};
	long long ro[3] = {0, 0, 0};
	size_t nro = v->flavour == EV_FLAVOUR_MYSQL ? 3 : 2;
	static const char *const ro_names[] = {"@@read_only", "@@innodb_read_only",
	                                       "@@super_read_only"};

	memset(a, 0, sizeof(*a));
	a->writable = false;
	a->clock_ok = clock_ok;
	msgf(a->why, sizeof(a->why), _("not checked"));
	if (run_scalar(c, ev_guard_query_server_read_only(v->flavour), ro, nro, err) < 0) {
		msgf(a->why, sizeof(a->why), _("cannot tell whether the server is read-only: %s"),
		     err->msg);
		return -1;
	}
	for (size_t i = 0; i < nro; i++) {
		if (ro[i] == 0)
			continue;
		msgf(a->why, sizeof(a->why),
		     _("the server is read-only (%s = 1): a replica or a primary being switched "
		       "over; writes go to the primary"),
		     ro_names[i]);
		ev_conn_set_read_only(c, a->why);
		return 0;
	}

	struct ev_query *q = ev_guard_query_probe(t, name);
	int rc = ev_conn_prepare_check(c, q, &e);
	ev_query_free(&q);
	if (rc < 0) {
		if (!is_denied(e.code)) {
			msgf(a->why, sizeof(a->why), _("cannot check the write privileges: %s"),
			     e.msg);
			*err = e;
			return -1;
		}
		msgf(a->why, sizeof(a->why),
		     _("the account %s may not write %s: %s (doc/actions.md lists the GRANTs "
		       "evtop needs)"),
		     ev_conn_user(c), name, e.msg);
		return 0;
	}

	long long n = 0;
	if (run_scalar(c, ev_guard_query_audit_exists(), &n, 1, err) < 0) {
		msgf(a->why, sizeof(a->why), _("cannot tell whether evtop_audit exists: %s"),
		     err->msg);
		return -1;
	}
	a->audit_table = n > 0;
	if (a->audit_table) {
		/* The INSERT as it will run, prepared only: the server checks the privilege. */
		struct ev_guard g = {.table = t, .action = EV_ACTION_RETRY_NOW};
		struct ev_guard_row row = {0};
		struct ev_audit_who who = {0};
		struct ev_audit_rec rec = {.who = &who, .g = &g, .before = &row};
		g.table_name = ev_xstrdup(name);
		q = ev_guard_query_audit_insert(&rec);
		free(g.table_name);
		rc = ev_conn_prepare_check(c, q, &e);
		ev_query_free(&q);
		if (rc < 0) {
			if (!is_denied(e.code)) {
				msgf(a->why, sizeof(a->why), _("cannot check evtop_audit: %s"),
				     e.msg);
				*err = e;
				return -1;
			}
			msgf(a->why, sizeof(a->why),
			     _("the account %s may not INSERT into evtop_audit, which records "
			       "every write: %s"),
			     ev_conn_user(c), e.msg);
			return 0;
		}
	}
	a->clock_suspect = zone_suspected(c, name, a->clock_why, sizeof(a->clock_why));
	if (a->clock_suspect && !clock_ok) {
		msgf(a->why, sizeof(a->why), "%s", a->clock_why);
		return 0;
	}
	a->writable = true;
	a->why[0] = '\0';
	return 0;
}

/* Re-read the row by id into out->now. */
static int reread(const struct ev_action_ctx *ctx, const struct ev_guard *g,
                  const struct ev_guard_row *seen, struct ev_action_outcome *out,
                  struct ev_error *err)
{
	struct ev_rowset *rs = NULL;
	struct ev_query *q = ev_guard_query_row(g->table, g->table_name, seen->id);
	int rc = ev_conn_run(ctx->conn, q, &rs, err);

	ev_query_free(&q);
	if (rc < 0)
		return -1;
	if (rs->nrows == 1 && ev_guard_row_from_rowset(rs, 0, g->table, &out->now, err) == 0)
		out->have_now = true;
	else
		ev_guard_row_clear(&out->now);
	ev_rowset_free(&rs);
	return 0;
}

/* Was the audit row committed with the UPDATE? 1 yes, 0 no, -1 cannot tell. */
static int audit_row_found(const struct ev_action_ctx *ctx, const struct ev_guard *g,
                           const struct ev_guard_row *seen, const struct ev_audit_who *who)
{
	struct ev_error err = {0};
	long long n = 0;
	if (run_scalar(ctx->conn, ev_guard_query_audit_find(g, seen, who), &n, 1, &err) < 0)
		return -1;
	return n > 0 ? 1 : 0;
}

/* A COMMIT whose answer was lost: reconnect, re-read and let the database say. */
static enum ev_action_result resolve_in_doubt(const struct ev_action_ctx *ctx,
                                              const struct ev_guard *g,
                                              const struct ev_guard_row *seen,
                                              const struct ev_audit_who *who, const char *why,
                                              struct ev_action_outcome *out)
{
	struct ev_error err = {0};

	if (reread(ctx, g, seen, out, &err) < 0) {
		msgf(out->msg, sizeof(out->msg),
		     _("IN DOUBT: %s, and the server cannot be reached to re-read the row (%s): "
		       "whether the change was committed is unknown; check it with evtop show "
		       "before acting again"),
		     why, err.msg);
		return EV_RESULT_FAILED;
	}
	bool applied = ev_guard_row_shows_applied(g, seen, out->have_now ? &out->now : NULL);
	/* With an audit table the proof is exact: its row was in the same transaction. */
	if (applied && ctx->access->audit_table && audit_row_found(ctx, g, seen, who) == 0)
		applied = false;
	if (applied) {
		msgf(out->msg, sizeof(out->msg),
		     _("%s; re-read after reconnecting: the change was committed (version %lld)"),
		     why, out->now.version);
		return EV_RESULT_APPLIED;
	}
	msgf(out->msg, sizeof(out->msg),
	     _("%s; re-read after reconnecting: the change was NOT committed (the row is at "
	       "version %lld, %s); nothing was retried"),
	     why, out->have_now ? out->now.version : seen->version,
	     out->have_now ? _("as now shown") : _("the row is gone"));
	return EV_RESULT_FAILED;
}

static enum ev_audit_result audit_result(enum ev_action_result r)
{
	switch (r) {
	case EV_RESULT_APPLIED:
		return EV_AUDIT_APPLIED;
	case EV_RESULT_SKIPPED:
		return EV_AUDIT_SKIPPED;
	default:
		return EV_AUDIT_FAILED;
	}
}

/* The write itself, between the intent line and the result line. */
static enum ev_action_result write_row(const struct ev_action_ctx *ctx, const struct ev_guard *g,
                                       const struct ev_guard_row *seen,
                                       const struct ev_audit_who *who,
                                       struct ev_action_outcome *out)
{
	struct ev_conn *c = ctx->conn;
	struct ev_error err = {0};
	unsigned long long affected = 0;

	if (ev_conn_begin(c, &err) < 0) {
		msgf(out->msg, sizeof(out->msg), _("%s; nothing was changed"), err.msg);
		return EV_RESULT_FAILED;
	}
	if (ev_conn_write(c, g->update, &affected, &err) < 0) {
		bool lost = err.code == EV_ERR_CONNECT;
		msgf(out->msg, sizeof(out->msg), "%s%s", err.msg,
		     lost ? _("; the transaction was not committed, so nothing was changed") : "");
		ev_conn_rollback(c);
		struct ev_error e2 = {0};
		reread(ctx, g, seen, out, &e2); /* the row as now, if the server answers */
		return EV_RESULT_FAILED;
	}
	if (affected == 0) {
		ev_conn_rollback(c);
		if (reread(ctx, g, seen, out, &err) < 0) {
			msgf(out->msg, sizeof(out->msg),
			     _("the guard matched no row; the row could not be re-read: %s"),
			     err.msg);
			return EV_RESULT_SKIPPED;
		}
		char *why = ev_guard_explain_skip(g, seen, out->have_now ? &out->now : NULL);
		msgf(out->msg, sizeof(out->msg), "%s", why);
		free(why);
		return EV_RESULT_SKIPPED;
	}
	if (affected != 1) {
		ev_conn_rollback(c);
		msgf(out->msg, sizeof(out->msg),
		     _("the UPDATE by primary key changed %llu rows; rolled back"), affected);
		return EV_RESULT_FAILED;
	}
	if (ctx->access->audit_table) {
		struct ev_audit_rec rec = {
		        .who = who, .g = g, .before = seen, .result = EV_AUDIT_APPLIED};
		struct ev_query *q = ev_guard_query_audit_insert(&rec);
		int rc = ev_conn_write(c, q, &affected, &err);
		ev_query_free(&q);
		if (rc < 0) {
			ev_conn_rollback(c);
			msgf(out->msg, sizeof(out->msg),
			     _("the audit row could not be written, so the change was rolled back: "
			       "%s"),
			     err.msg);
			return EV_RESULT_FAILED;
		}
	}
	fault(EV_POINT_BEFORE_COMMIT, c);
	if (ev_conn_commit(c, &err) < 0) {
		if (err.code != EV_ERR_CONNECT) {
			/* The server answered: the transaction was rolled back (a conflict with
			 * another node, a deadlock). Not in doubt, and never someone else's change
			 * taken for ours: the row is re-read only to show it as it is now. */
			char why[600];
			msgf(why, sizeof(why), "%s", err.msg);
			struct ev_error rerr = {0};
			if (reread(ctx, g, seen, out, &rerr) < 0)
				out->have_now = false;
			msgf(out->msg, sizeof(out->msg), "%s", why);
			return EV_RESULT_FAILED;
		}
		/* Lost: the database alone knows whether the change is in: ask it. */
		return resolve_in_doubt(ctx, g, seen, who,
		                        _("the connection was lost during COMMIT"), out);
	}
	if (fault(EV_POINT_AFTER_COMMIT, c) != 0) {
		ev_conn_close(c);
		return resolve_in_doubt(ctx, g, seen, who, _("the answer to COMMIT was lost"), out);
	}
	if (g->grants_attempt)
		msgf(out->msg, sizeof(out->msg), _("exhausted: granted exactly one more attempt"));
	if (reread(ctx, g, seen, out, &err) < 0 && out->msg[0] == '\0')
		msgf(out->msg, sizeof(out->msg), _("committed; the row could not be re-read: %s"),
		     err.msg);
	return EV_RESULT_APPLIED;
}

/* The intent line, the write, the result line. */
static enum ev_action_result apply_logged(const struct ev_action_ctx *ctx, const struct ev_guard *g,
                                          const struct ev_guard_row *seen,
                                          const struct ev_audit_who *who,
                                          struct ev_action_outcome *out)
{
	struct ev_error err = {0};
	char now[32];

	out->result = EV_RESULT_REFUSED;
	if (ev_conn_read_only(ctx->conn) != NULL) {
		msgf(out->msg, sizeof(out->msg), _("read-only: %s"), ev_conn_read_only(ctx->conn));
		return out->result;
	}
	if (ctx->access == NULL || !ctx->access->writable) {
		msgf(out->msg, sizeof(out->msg), _("read-only: %s"),
		     ctx->access ? ctx->access->why : _("the write access was not checked"));
		return out->result;
	}
	if (ctx->log == NULL || ctx->log->fd < 0) {
		msgf(out->msg, sizeof(out->msg), _("refused: the audit file is not open"));
		return out->result;
	}
	ev_audit_time_now(now);
	struct ev_audit_rec rec = {
	        .time = now, .who = who, .g = g, .before = seen, .result = EV_AUDIT_INTENT};
	char *line = ev_audit_json_line(&rec);
	int rc = ev_audit_log_append(ctx->log, line, &err);
	free(line);
	if (rc < 0) {
		msgf(out->msg, sizeof(out->msg), _("refused: %s; nothing was done"), err.msg);
		return out->result;
	}

	out->result = write_row(ctx, g, seen, who, out);

	ev_audit_time_now(now);
	rec.result = audit_result(out->result);
	rec.error = out->result == EV_RESULT_APPLIED ? NULL : out->msg;
	line = ev_audit_json_line(&rec);
	if (ev_audit_log_append(ctx->log, line, &err) < 0) {
		out->audit_line_failed = true;
		msgf(out->audit_msg, sizeof(out->audit_msg), "%s", err.msg);
	}
	free(line);
	return out->result;
}

enum ev_action_result ev_action_apply(const struct ev_action_ctx *ctx, const struct ev_guard *g,
                                      const struct ev_guard_row *seen,
                                      struct ev_action_outcome *out)
{
	struct ev_audit_who who = *ctx->who;

	memset(out, 0, sizeof(*out));
	/* A copy: a reconnect (to resolve a lost COMMIT) replaces the connection's own. */
	char *db_user = ev_xstrdup(who.db_user ? who.db_user : ev_conn_user(ctx->conn));
	who.db_user = db_user;
	enum ev_action_result res = apply_logged(ctx, g, seen, &who, out);
	free(db_user);
	return res;
}

void ev_action_outcome_clear(struct ev_action_outcome *out)
{
	ev_guard_row_clear(&out->now);
	memset(out, 0, sizeof(*out));
}

int ev_access_log_write(struct ev_conn *c, const struct ev_audit_who *who, const char *table_name,
                        const char *reason, const char *const *event_nos, size_t n,
                        struct ev_error *err)
{
	struct ev_error e = {0};
	if (n == 0)
		return 1;
	if (ev_conn_begin(c, &e) < 0)
		goto failed;
	for (size_t at = 0; at < n; at += EV_ACCESS_LOG_BATCH) {
		size_t k = n - at < EV_ACCESS_LOG_BATCH ? n - at : EV_ACCESS_LOG_BATCH;
		struct ev_query *q =
		        ev_guard_query_access_insert(who, table_name, reason, event_nos + at, k, n);
		unsigned long long affected = 0;
		int rc = ev_conn_write(c, q, &affected, &e);
		ev_query_free(&q);
		if (rc < 0) {
			ev_conn_rollback(c);
			if (e.code == EV_ERR_SCHEMA) /* no such table (db/conn.c) */
				return 0;
			goto failed;
		}
	}
	if (ev_conn_commit(c, &e) == 0)
		return 1;
failed:
	if (is_denied(e.code))
		ev_error_set(err, e.code,
		             _("the account %s may not INSERT into evtop_access_log (%s)"),
		             ev_conn_user(c), e.msg);
	else
		ev_error_set(err, e.code, _("evtop_access_log not written: %s"), e.msg);
	return -1;
}
