/* evtop — the operator's guarded writes (see guard.h). The SET and WHERE of each statement are
 * PRODUCT.md section 2's table, word for word; the model document's guarded UPDATEs are behind
 * them (its lock-timeout recovery and its cancel, narrowed to one row by id and version). */
#include <config.h>

#include "core/guard.h"
#include "core/config.h"
#include "core/i18n.h"
#include "core/text.h"

#include <errno.h>
#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

/* --- fail_reason ---------------------------------------------------------------------------- */

/* The outbox texts are the model document's own (its "恢复锁定超时事件" and "取消不再需要发布的
 * 事件" UPDATEs). The model document has no recover or cancel for the message table; these are
 * evtop's analogues in the same words, with 处理 ("handle", the message table's own status
 * vocabulary: 处理中, 处理失败) for 发布 ("publish"), and the consumer for the publisher:
 *   recover: 消费者处理超时，等待重新处理 ("the consumer timed out handling it; waiting to be
 *            handled again")
 *   cancel:  业务已关闭，取消事件处理     ("the business is closed; handling cancelled") */
static const char *const model_text[EV_TABLE_COUNT][2] = {
        [EV_TABLE_OUTBOX] = {"发布器锁定超时，等待重新发布", "业务已关闭，取消事件发布"},
        [EV_TABLE_MESSAGE] = {"消费者处理超时，等待重新处理", "业务已关闭，取消事件处理"},
};

#define FULLWIDTH_COLON "\xEF\xBC\x9A" /* U+FF1A, as the model document's texts punctuate */

const char *ev_guard_model_text(enum ev_table_kind t, enum ev_action a)
{
	if ((unsigned)t >= EV_TABLE_COUNT)
		return NULL;
	if (a == EV_ACTION_RECOVER)
		return model_text[t][0];
	if (a == EV_ACTION_CANCEL)
		return model_text[t][1];
	return NULL;
}

bool ev_guard_utf8_valid(const char *s)
{
	size_t len = strlen(s);
	while (len > 0) {
		uint32_t cp;
		size_t n = ev_utf8_decode(s, len, &cp);
		/* U+FFFD itself is valid when it was spelled out in full (3 bytes). */
		if (cp == EV_TEXT_REPLACEMENT && n != 3)
			return false;
		s += n;
		len -= n;
	}
	return true;
}

static const char *control_name(uint32_t cp)
{
	switch (cp) {
	case 0x07:
		return "BEL";
	case 0x08:
		return _("backspace");
	case 0x09:
		return _("a tab");
	case 0x0A:
		return _("a newline");
	case 0x0D:
		return _("a carriage return");
	case 0x1B:
		return "ESC";
	case 0x7F:
		return "DEL";
	}
	return _("a control character");
}

int ev_guard_reason_check(const char *reason, struct ev_error *err)
{
	if (reason == NULL || reason[0] == '\0')
		return 0;
	if (!ev_guard_utf8_valid(reason))
		return ev_error_set(
		        err, EV_GUARD_REFUSED_REASON,
		        _("the reason is not valid UTF-8: the database would refuse it"));
	size_t len = strlen(reason), off = 0, chars = 0;
	while (off < len) {
		uint32_t cp;
		off += ev_utf8_decode(reason + off, len - off, &cp);
		chars++;
		if (cp < 0x20 || (cp >= 0x7F && cp <= 0x9F))
			return ev_error_set(
			        err, EV_GUARD_REFUSED_REASON,
			        _("the reason holds %s (U+%04X, character %zu): a reason is one "
			          "line "
			          "of printable text, written into fail_reason and the audit as "
			          "typed"),
			        control_name(cp), (unsigned)cp, chars);
	}
	return 0;
}

char *ev_guard_cut_chars(const char *s, size_t max)
{
	size_t len = strlen(s), off = 0, chars = 0;
	while (off < len && chars < max) {
		uint32_t cp;
		off += ev_utf8_decode(s + off, len - off, &cp);
		chars++;
	}
	return ev_xstrndup(s, off);
}

char *ev_guard_compose_reason(const char *text, const char *reason)
{
	char *full = reason != NULL && reason[0] != '\0'
	                     ? ev_xasprintf("%s" FULLWIDTH_COLON "%s", text, reason)
	                     : ev_xstrdup(text);
	char *cut = ev_guard_cut_chars(full, EV_GUARD_REASON_MAX);
	free(full);
	return cut;
}

/* A copy of s that is valid UTF-8 (invalid bytes become U+FFFD), for JSON and the audit row. */
static char *valid_copy(const char *s)
{
	struct ev_buf b;
	size_t len = strlen(s);

	if (ev_guard_utf8_valid(s))
		return ev_xstrdup(s);
	ev_buf_init(&b);
	while (len > 0) {
		uint32_t cp;
		char enc[4];
		size_t n = ev_utf8_decode(s, len, &cp);
		ev_buf_add(&b, enc, ev_utf8_encode(cp, enc));
		s += n;
		len -= n;
	}
	return ev_buf_steal(&b);
}

/* --- protected types ---------------------------------------------------------------------------
 */

/* Is token a whole '_'-separated word of s (case-insensitive)? */
static bool has_word(const char *s, const char *token)
{
	size_t n = strlen(token);
	if (s == NULL || n == 0)
		return false;
	for (const char *w = s; *w;) {
		const char *end = strchr(w, '_');
		size_t wl = end ? (size_t)(end - w) : strlen(w);
		if (wl == n && strncasecmp(w, token, n) == 0)
			return true;
		if (end == NULL)
			break;
		w = end + 1;
	}
	return false;
}

const char *ev_guard_protected_token(const char *event_type, const char *biz_type,
                                     char *const *tokens)
{
	if (tokens == NULL)
		return NULL;
	for (char *const *t = tokens; *t != NULL; t++)
		if (has_word(event_type, *t) || has_word(biz_type, *t))
			return *t;
	return NULL;
}

/* --- the builder ---------------------------------------------------------------------------- */

/* A state as the person reading the guard's words names it: the table's own word, translated
 * (the model document's Chinese under zh_CN). */
static const char *status_label(enum ev_table_kind t, int status)
{
	return ev_model_status_label(ev_model_table(t), status);
}

/* The status an action leads to from `from` on this table, per the transition table; -1 if
 * the action does not start from there. */
static int action_target(enum ev_action a, enum ev_table_kind t, int from)
{
	for (const struct ev_transition *tr = ev_transitions; tr->from >= 0; tr++)
		if (tr->action == a && (tr->tables & (1u << t)) && tr->from == from)
			return tr->to;
	return -1;
}

/* "failed (3)" or "pending (0) or failed (3)": the statuses an action starts from. */
static char *action_sources(enum ev_action a, enum ev_table_kind t)
{
	struct ev_buf b;
	int n = 0;

	ev_buf_init(&b);
	for (int s = 0; s < EV_ST_COUNT; s++) {
		if (action_target(a, t, s) < 0)
			continue;
		/* TRANSLATORS: between two statuses: "pending (0) or failed (3)". */
		ev_buf_printf(&b, "%s%s (%d)", n ? _(" or ") : "", status_label(t, s), s);
		n++;
	}
	return ev_buf_steal(&b);
}

static const char *action_verb(enum ev_action a)
{
	switch (a) {
	case EV_ACTION_RETRY_NOW:
		/* TRANSLATORS: in "cannot %s event %s: ...": the verb of the refused action. */
		return P_("action verb", "retry now");
	case EV_ACTION_RETRY_SCHEDULE:
		return P_("action verb", "schedule a retry of");
	case EV_ACTION_CANCEL:
		return P_("action verb", "cancel");
	case EV_ACTION_RECOVER:
		return P_("action verb", "recover");
	default:
		return ev_action_name(a);
	}
}

static int refuse_status(const struct ev_guard_req *req, struct ev_error *err)
{
	const struct ev_table_def *def = ev_model_table(req->table);
	int st = req->row->status;
	char *from = action_sources(req->action, req->table);
	int rc;

	if (st == EV_ST_SUCCESS || st == EV_ST_CANCELLED)
		rc = ev_error_set(err, EV_GUARD_REFUSED_FINAL,
		                  _("cannot %s event %s: it is %s (%d, %s), and %s is final: evtop "
		                    "never changes it"),
		                  action_verb(req->action), req->row->event_no,
		                  ev_model_status_name(def, st, false), st,
		                  ev_model_status_name(def, st, true),
		                  status_label(req->table, st));
	else
		rc = ev_error_set(err, EV_GUARD_REFUSED_STATUS,
		                  _("cannot %s event %s: it is %s (%d, %s); %s needs %s"),
		                  action_verb(req->action), req->row->event_no,
		                  ev_model_status_name(def, st, false), st,
		                  ev_model_status_name(def, st, true), ev_action_name(req->action),
		                  from);
	free(from);
	return rc;
}

/* The checks that come before any SQL, in the order an operator would want to hear them. */
static int check_request(const struct ev_guard_req *req, struct ev_error *err)
{
	const struct ev_guard_row *row = req->row;
	const char *no = row->event_no ? row->event_no : "?";

	if (req->action != EV_ACTION_RETRY_NOW && req->action != EV_ACTION_RETRY_SCHEDULE &&
	    req->action != EV_ACTION_CANCEL && req->action != EV_ACTION_RECOVER)
		return ev_error_set(err, EV_GUARD_REFUSED_BAD_REQUEST,
		                    _("%s is the applications' transition, not an operator action"),
		                    ev_action_name(req->action));
	if ((unsigned)req->table >= EV_TABLE_COUNT ||
	    (req->table_name != NULL && !ev_ident_valid(req->table_name)))
		return ev_error_set(err, EV_GUARD_REFUSED_BAD_REQUEST, _("not a table name: %.64s"),
		                    req->table_name ? req->table_name : "?");
	if (row->deleted != 0)
		return ev_error_set(
		        err, EV_GUARD_REFUSED_DELETED,
		        _("cannot %s event %s: it is deleted (deleted = %d); evtop never "
		          "writes deleted rows"),
		        action_verb(req->action), no, row->deleted);
	if (req->action == EV_ACTION_RECOVER && req->table == EV_TABLE_MESSAGE &&
	    !req->recover_message)
		return ev_error_set(
		        err, EV_GUARD_REFUSED_RECOVER_OFF,
		        _("cannot recover event %s: recover on the message table is not enabled. "
		          "The "
		          "message table has no lock owner: a consumer that is only slow would "
		          "still "
		          "finish the event after evtop recovered it, and it would be handled "
		          "twice. "
		          "Enable it with --enable-message-recover or recover_message = true"),
		        no);
	if (action_target(req->action, req->table, row->status) < 0)
		return refuse_status(req, err);
	if (req->action == EV_ACTION_CANCEL && (req->reason == NULL || req->reason[0] == '\0'))
		return ev_error_set(err, EV_GUARD_REFUSED_REASON,
		                    _("cannot cancel event %s without a reason: it is written into "
		                      "fail_reason after the model's text"),
		                    no);
	if (ev_guard_reason_check(req->reason, err) < 0)
		return -1;
	if (req->action == EV_ACTION_RETRY_SCHEDULE &&
	    (req->schedule_delay_s < 0 || req->schedule_delay_s > 30 * 86400))
		return ev_error_set(err, EV_GUARD_REFUSED_BAD_REQUEST,
		                    _("a retry delay must be 0 .. 30 days, not %d s"),
		                    req->schedule_delay_s);
	if (req->action == EV_ACTION_RECOVER && req->table == EV_TABLE_MESSAGE &&
	    req->stuck_threshold_s <= 0)
		return ev_error_set(err, EV_GUARD_REFUSED_BAD_REQUEST,
		                    _("recover on the message table needs a stuck threshold > 0"));
	const char *token =
	        ev_guard_protected_token(row->event_type, row->biz_type, req->protected_types);
	if (token != NULL && !req->confirmed_protected) {
		const struct ev_table_def *def = ev_model_table(req->table);
		return ev_error_set(
		        err, EV_GUARD_REFUSED_PROTECTED,
		        _("event %s is of a protected type (event_type %s, %s %s: token "
		          "%s): confirm it explicitly (--include-protected)"),
		        no, row->event_type ? row->event_type : "?", def->type_col,
		        row->biz_type ? row->biz_type : "?", token);
	}
	return 0;
}

static const char *or_null(const char *s)
{
	return s ? s : "NULL";
}

/* ", col old -> NULL", or ", col stays NULL". */
static void change_to_null(struct ev_buf *b, const char *col, const char *old)
{
	if (old == NULL)
		ev_buf_printf(b, _(", %s stays NULL"), col);
	else
		ev_buf_printf(b, ", %s %s -> NULL", col, old);
}

/* The action's own terms of the UPDATE's SET list and their parameters (the version and
 * update_time follow them in every action). */
static void add_set(struct ev_query *q, struct ev_buf *sql, const struct ev_guard_req *req,
                    const struct ev_guard *g)
{
	const struct ev_table_def *def = ev_model_table(req->table);
	const char *st = def->status_col;

	switch (req->action) {
	case EV_ACTION_RETRY_NOW:
		ev_buf_printf(sql,
		              "%s = 0, next_retry_time = NULL, max_retry_count = "
		              "GREATEST(max_retry_count, retry_count + 1)",
		              st);
		break;
	case EV_ACTION_RETRY_SCHEDULE:
		ev_buf_adds(sql, "next_retry_time = NOW() + INTERVAL ? SECOND, max_retry_count = "
		                 "GREATEST(max_retry_count, retry_count + 1)");
		ev_query_add_int(q, req->schedule_delay_s);
		break;
	case EV_ACTION_CANCEL:
		ev_buf_printf(sql, "%s = 4, fail_reason = ?", st);
		if (def->has_lock)
			ev_buf_adds(sql, ", locked_by = NULL, lock_until = NULL");
		ev_query_add_text(q, g->fail_reason);
		break;
	default: /* EV_ACTION_RECOVER */
		ev_buf_printf(sql,
		              "%s = 3, retry_count = retry_count + 1, next_retry_time = NOW() + "
		              "INTERVAL 1 MINUTE, fail_reason = ?",
		              st);
		if (def->has_lock)
			ev_buf_adds(sql, ", locked_by = NULL, lock_until = NULL");
		ev_query_add_text(q, g->fail_reason);
		break;
	}
}

/* What the UPDATE will change, column by column, in one line (the confirmation's). */
static char *change_line(const struct ev_guard_req *req, const struct ev_guard *g)
{
	const struct ev_table_def *def = ev_model_table(req->table);
	const struct ev_guard_row *row = req->row;
	const char *st = def->status_col;
	long long new_max = row->max_retry_count > row->retry_count + 1 ? row->max_retry_count
	                                                                : row->retry_count + 1;
	struct ev_buf chg;

	ev_buf_init(&chg);
	switch (req->action) {
	case EV_ACTION_RETRY_NOW:
		ev_buf_printf(&chg, "%s %d (%s) -> 0 (%s)", st, row->status,
		              status_label(req->table, row->status), status_label(req->table, 0));
		change_to_null(&chg, "next_retry_time", row->next_retry_time);
		break;
	case EV_ACTION_RETRY_SCHEDULE:
		ev_buf_printf(&chg, _("%s stays %d (%s), next_retry_time %s -> NOW() + %d s"), st,
		              row->status, status_label(req->table, row->status),
		              or_null(row->next_retry_time), req->schedule_delay_s);
		break;
	case EV_ACTION_CANCEL:
		ev_buf_printf(&chg, "%s %d (%s) -> 4 (%s), fail_reason -> '%s'", st, row->status,
		              status_label(req->table, row->status), status_label(req->table, 4),
		              g->fail_reason);
		if (def->has_lock) {
			change_to_null(&chg, "locked_by", row->locked_by);
			change_to_null(&chg, "lock_until", row->lock_until);
		}
		break;
	default: /* EV_ACTION_RECOVER */
		ev_buf_printf(
		        &chg,
		        _("%s %d (%s) -> 3 (%s), retry_count %lld -> %lld, next_retry_time %s "
		          "-> NOW() + 1 minute, fail_reason -> '%s'"),
		        st, row->status, status_label(req->table, row->status),
		        status_label(req->table, 3), row->retry_count, row->retry_count + 1,
		        or_null(row->next_retry_time), g->fail_reason);
		if (def->has_lock) {
			change_to_null(&chg, "locked_by", row->locked_by);
			change_to_null(&chg, "lock_until", row->lock_until);
		}
		break;
	}
	if (req->action == EV_ACTION_RETRY_NOW || req->action == EV_ACTION_RETRY_SCHEDULE) {
		if (new_max != row->max_retry_count)
			ev_buf_printf(&chg, ", max_retry_count %lld -> %lld", row->max_retry_count,
			              new_max);
		else
			ev_buf_printf(&chg, _(", max_retry_count stays %lld"),
			              row->max_retry_count);
	}
	ev_buf_printf(&chg, ", version %lld -> %lld, update_time -> NOW()", row->version,
	              row->version + 1);
	return ev_buf_steal(&chg);
}

/* The guard: the row by primary key, not deleted, at the version seen, and in a status the
 * action starts from (judged by the server's clock where a time decides it). */
static void add_guard_where(struct ev_query *q, struct ev_buf *sql, const struct ev_guard_req *req)
{
	const struct ev_table_def *def = ev_model_table(req->table);
	const char *st = def->status_col;

	ev_buf_adds(sql, "id = ? AND deleted = 0 AND version = ? AND ");
	ev_query_add_uint(q, req->row->id);
	ev_query_add_int(q, req->row->version);
	switch (req->action) {
	case EV_ACTION_RETRY_NOW:
	case EV_ACTION_RETRY_SCHEDULE:
		ev_buf_printf(sql, "%s = 3", st);
		break;
	case EV_ACTION_CANCEL:
		ev_buf_printf(sql, "%s IN (0, 3)", st);
		break;
	default:
		if (def->has_lock) {
			ev_buf_printf(sql, "%s = 1 AND lock_until <= NOW()", st);
		} else {
			ev_buf_printf(sql,
			              "%s = 1 AND last_handle_time <= NOW() - INTERVAL ? SECOND",
			              st);
			ev_query_add_int(q, req->stuck_threshold_s);
		}
		break;
	}
}

/* The same WHERE, counted: what --dry-run asks the server (the UPDATE's own guard, with its
 * NOW(), by primary key). where: the WHERE's text; its parameters are update's from
 * where_param on. */
static struct ev_query *match_query(const char *table_name, const char *where,
                                    const struct ev_query *update, size_t where_param)
{
	struct ev_query *m = ev_xcalloc(1, sizeof(*m));
	m->name = "action.match";
	m->sql = ev_xasprintf("/* evtop:action.match */ SELECT COUNT(*) FROM `%s` WHERE %s",
	                      table_name, where);
	for (size_t i = where_param; i < update->nparams; i++) {
		const struct ev_param *p = &update->params[i];
		if (p->type == EV_P_TEXT)
			ev_query_add_text(m, p->s);
		else if (p->type == EV_P_UINT)
			ev_query_add_uint(m, p->u);
		else
			ev_query_add_int(m, p->i);
	}
	m->ncols = 1;
	m->col_names = ev_xcalloc(1, sizeof(*m->col_names));
	m->col_types = ev_xcalloc(1, sizeof(*m->col_types));
	m->col_names[0] = "n";
	m->col_types[0] = EV_CT_INT;
	m->limit = 1;
	return m;
}

/* The guarded UPDATE, its counting twin and the change line, per action and table. */
static void build_update(const struct ev_guard_req *req, struct ev_guard *g)
{
	struct ev_query *q = ev_xcalloc(1, sizeof(*q));
	struct ev_buf sql;

	ev_buf_init(&sql);
	q->name = req->action == EV_ACTION_RETRY_NOW        ? "action.retry_now"
	          : req->action == EV_ACTION_RETRY_SCHEDULE ? "action.retry_schedule"
	          : req->action == EV_ACTION_CANCEL         ? "action.cancel"
	                                                    : "action.recover";
	ev_buf_printf(&sql, "/* evtop:%s */ UPDATE `%s` SET ", q->name, g->table_name);
	add_set(q, &sql, req, g);
	ev_buf_adds(&sql, ", version = version + 1, update_time = NOW() WHERE ");
	size_t where_at = sql.len, where_param = q->nparams;
	add_guard_where(q, &sql, req);
	g->match = match_query(g->table_name, sql.data + where_at, q, where_param);
	q->sql = ev_buf_steal(&sql);
	q->limit = 1;
	g->update = q;
	g->change = change_line(req, g);
}

int ev_guard_build(const struct ev_guard_req *req, struct ev_guard *g, struct ev_error *err)
{
	const struct ev_guard_row *row = req->row;

	memset(g, 0, sizeof(*g));
	if (check_request(req, err) < 0)
		return -1;
	g->table = req->table;
	g->action = req->action;
	g->table_name = ev_xstrdup(req->table_name ? req->table_name
	                                           : ev_model_table(req->table)->default_name);
	g->from_status = row->status;
	g->to_status = action_target(req->action, req->table, row->status);
	g->stuck_threshold_s = req->stuck_threshold_s;
	const char *text = ev_guard_model_text(req->table, req->action);
	if (text != NULL) {
		g->fail_reason = ev_guard_compose_reason(text, req->reason);
		g->audit_reason = ev_xstrdup(g->fail_reason);
	} else if (req->reason != NULL && req->reason[0] != '\0') {
		g->audit_reason = ev_guard_cut_chars(req->reason, EV_GUARD_REASON_MAX);
	}
	const char *token =
	        ev_guard_protected_token(row->event_type, row->biz_type, req->protected_types);
	if (token != NULL)
		g->protected_token = ev_xstrdup(token);

	if ((req->action == EV_ACTION_RETRY_NOW || req->action == EV_ACTION_RETRY_SCHEDULE) &&
	    row->retry_count >= row->max_retry_count) {
		g->grants_attempt = true;
		g->notice = ev_xasprintf(
		        _("exhausted (retry_count %lld >= max_retry_count %lld): this retry grants "
		          "exactly one more attempt (max_retry_count %lld -> %lld); if that "
		          "attempt "
		          "fails, the event stops again"),
		        row->retry_count, row->max_retry_count, row->max_retry_count,
		        row->retry_count + 1);
	} else if (req->action == EV_ACTION_RECOVER && req->table == EV_TABLE_MESSAGE) {
		g->notice = ev_xasprintf(
		        _("risk: the message table has no lock owner: if the consumer that claimed "
		          "this event is only slow (last_handle_time %s, stuck after %d s), it "
		          "will "
		          "still finish it, and the event will be handled twice"),
		        or_null(row->last_handle_time), req->stuck_threshold_s);
	}
	build_update(req, g);
	return 0;
}

void ev_guard_clear(struct ev_guard *g)
{
	ev_query_free(&g->update);
	ev_query_free(&g->match);
	free(g->table_name);
	free(g->fail_reason);
	free(g->audit_reason);
	free(g->protected_token);
	free(g->change);
	free(g->notice);
	memset(g, 0, sizeof(*g));
}

/* --- the row ------------------------------------------------------------------------------ */

static const char *const row_cols_message[] = {"id",
                                               "event_no",
                                               "event_type",
                                               "biz_type",
                                               "event_status",
                                               "retry_count",
                                               "max_retry_count",
                                               "next_retry_time",
                                               "last_handle_time",
                                               "fail_reason",
                                               "version",
                                               "deleted",
                                               "update_time",
                                               NULL};
static const char *const row_cols_outbox[] = {
        "id",          "event_no",        "event_type",      "aggregate_type", "publish_status",
        "retry_count", "max_retry_count", "next_retry_time", "locked_by",      "lock_until",
        "fail_reason", "version",         "deleted",         "update_time",    NULL};

static struct ev_query *row_query(enum ev_table_kind t, const char *table_name, const char *name)
{
	const struct ev_table_def *def = ev_model_table(t);
	const char *const *cols = t == EV_TABLE_OUTBOX ? row_cols_outbox : row_cols_message;
	struct ev_query *q = ev_xcalloc(1, sizeof(*q));
	struct ev_buf b;
	size_t n = 0;

	while (cols[n] != NULL)
		n++;
	q->name = name;
	q->ncols = n + 1;
	q->col_names = ev_xcalloc(n + 1, sizeof(*q->col_names));
	q->col_types = ev_xcalloc(n + 1, sizeof(*q->col_types));
	ev_buf_init(&b);
	ev_buf_printf(&b, "/* evtop:%s */ SELECT ", name);
	for (size_t i = 0; i < n; i++) {
		ev_buf_printf(&b, "%s, ", cols[i]);
		q->col_names[i] = cols[i];
		q->col_types[i] = ev_model_column(def, cols[i])->type;
	}
	ev_buf_printf(&b, "NOW() FROM `%s` WHERE ", table_name ? table_name : def->default_name);
	q->col_names[n] = "db_now";
	q->col_types[n] = EV_CT_DATETIME;
	q->sql = ev_buf_steal(&b);
	return q;
}

struct ev_query *ev_guard_query_row(enum ev_table_kind t, const char *table_name,
                                    unsigned long long id)
{
	struct ev_query *q = row_query(t, table_name, "action.row");
	char *sql = ev_xasprintf("%sid = ?", q->sql);
	free(q->sql);
	q->sql = sql;
	ev_query_add_uint(q, id);
	q->limit = 1;
	return q;
}

struct ev_query *ev_guard_query_row_by_no(enum ev_table_kind t, const char *table_name,
                                          const char *event_no)
{
	struct ev_query *q = row_query(t, table_name, "action.row_by_no");
	char *sql = ev_xasprintf("%sevent_no = ? LIMIT 2", q->sql);
	free(q->sql);
	q->sql = sql;
	ev_query_add_text(q, event_no);
	q->limit = 1;
	return q;
}

static int cell_ll(const struct ev_rowset *rs, size_t r, const char *col, long long *out,
                   struct ev_error *err)
{
	const char *s = ev_rowset_get(rs, r, col);
	char *end;
	if (s == NULL || s[0] == '\0')
		return ev_error_set(err, EV_ERR_SCHEMA, _("column %s is missing or NULL"), col);
	errno = 0;
	*out = strtoll(s, &end, 10);
	if (errno != 0 || *end != '\0')
		return ev_error_set(err, EV_ERR_SCHEMA, _("column %s is not a number: %.40s"), col,
		                    s);
	return 0;
}

static char *cell_dup(const struct ev_rowset *rs, size_t r, const char *col)
{
	if (ev_rowset_col(rs, col) < 0)
		return NULL;
	const char *s = ev_rowset_get(rs, r, col);
	return s ? ev_xstrdup(s) : NULL;
}

int ev_guard_row_from_rowset(const struct ev_rowset *rs, size_t r, enum ev_table_kind t,
                             struct ev_guard_row *row, struct ev_error *err)
{
	const struct ev_table_def *def = ev_model_table(t);
	long long v;
	const char *id = ev_rowset_get(rs, r, "id");
	char *end;

	memset(row, 0, sizeof(*row));
	if (id == NULL || id[0] == '\0')
		return ev_error_set(err, EV_ERR_SCHEMA, _("column id is missing"));
	errno = 0;
	row->id = strtoull(id, &end, 10);
	if (errno != 0 || *end != '\0' || id[0] == '-')
		return ev_error_set(err, EV_ERR_SCHEMA, _("column id is not a number: %.40s"), id);
	if (cell_ll(rs, r, def->status_col, &v, err) < 0)
		return -1;
	row->status = (int)v;
	if (cell_ll(rs, r, "retry_count", &row->retry_count, err) < 0 ||
	    cell_ll(rs, r, "max_retry_count", &row->max_retry_count, err) < 0 ||
	    cell_ll(rs, r, "version", &row->version, err) < 0 ||
	    cell_ll(rs, r, "deleted", &v, err) < 0)
		return -1;
	row->deleted = (int)v;
	row->event_no = cell_dup(rs, r, "event_no");
	row->next_retry_time = cell_dup(rs, r, "next_retry_time");
	row->event_type = cell_dup(rs, r, "event_type");
	row->biz_type = cell_dup(rs, r, def->type_col);
	row->last_handle_time = cell_dup(rs, r, "last_handle_time");
	row->locked_by = cell_dup(rs, r, "locked_by");
	row->lock_until = cell_dup(rs, r, "lock_until");
	row->fail_reason = cell_dup(rs, r, "fail_reason");
	row->update_time = cell_dup(rs, r, "update_time");
	row->db_now = cell_dup(rs, r, "db_now");
	return 0;
}

static char *dup_or_null(const char *s)
{
	return s ? ev_xstrdup(s) : NULL;
}

void ev_guard_row_copy(struct ev_guard_row *dst, const struct ev_guard_row *src)
{
	*dst = *src;
	dst->event_no = dup_or_null(src->event_no);
	dst->next_retry_time = dup_or_null(src->next_retry_time);
	dst->event_type = dup_or_null(src->event_type);
	dst->biz_type = dup_or_null(src->biz_type);
	dst->last_handle_time = dup_or_null(src->last_handle_time);
	dst->locked_by = dup_or_null(src->locked_by);
	dst->lock_until = dup_or_null(src->lock_until);
	dst->fail_reason = dup_or_null(src->fail_reason);
	dst->update_time = dup_or_null(src->update_time);
	dst->db_now = dup_or_null(src->db_now);
}

void ev_guard_row_clear(struct ev_guard_row *row)
{
	free(row->event_no);
	free(row->next_retry_time);
	free(row->event_type);
	free(row->biz_type);
	free(row->last_handle_time);
	free(row->locked_by);
	free(row->lock_until);
	free(row->fail_reason);
	free(row->update_time);
	free(row->db_now);
	memset(row, 0, sizeof(*row));
}

char *ev_guard_row_describe(enum ev_table_kind t, const struct ev_guard_row *row)
{
	const struct ev_table_def *def = ev_model_table(t);
	struct ev_buf b;

	ev_buf_init(&b);
	ev_buf_printf(&b,
	              "%s %d (%s), retry_count %lld, max_retry_count %lld, next_retry_time %s, "
	              "version %lld",
	              def->status_col, row->status, status_label(t, row->status), row->retry_count,
	              row->max_retry_count, or_null(row->next_retry_time), row->version);
	if (def->has_lock && (row->locked_by != NULL || row->lock_until != NULL))
		ev_buf_printf(&b, ", locked_by %s, lock_until %s", or_null(row->locked_by),
		              or_null(row->lock_until));
	if (!def->has_lock && row->status == EV_ST_PROCESSING)
		ev_buf_printf(&b, ", last_handle_time %s", or_null(row->last_handle_time));
	if (row->deleted)
		ev_buf_adds(&b, _(", DELETED"));
	return ev_buf_steal(&b);
}

/* 'YYYY-MM-DD hh:mm:ss' as seconds (the zone does not matter: only differences are used). */
static bool parse_dt(const char *s, long long *out)
{
	struct tm tm;
	memset(&tm, 0, sizeof(tm));
	if (s == NULL || sscanf(s, "%4d-%2d-%2d %2d:%2d:%2d", &tm.tm_year, &tm.tm_mon, &tm.tm_mday,
	                        &tm.tm_hour, &tm.tm_min, &tm.tm_sec) != 6)
		return false;
	tm.tm_year -= 1900;
	tm.tm_mon -= 1;
	*out = (long long)timegm(&tm);
	return true;
}

char *ev_guard_explain_skip(const struct ev_guard *g, const struct ev_guard_row *seen,
                            const struct ev_guard_row *now)
{
	const struct ev_table_def *def = ev_model_table(g->table);
	long long t_now, t;

	if (now == NULL)
		return ev_xstrdup(_("the row is gone: no row with this id any more"));
	if (now->deleted)
		return ev_xstrdup(_("the row was deleted meanwhile (deleted = 1)"));
	if (now->version != seen->version)
		return ev_xasprintf(_("the row changed since it was read (version %lld -> %lld, %s "
		                      "%d (%s) -> %d (%s))"),
		                    seen->version, now->version, def->status_col, seen->status,
		                    status_label(g->table, seen->status), now->status,
		                    status_label(g->table, now->status));
	if (now->status != g->from_status)
		return ev_xasprintf(
		        _("the row's status changed without a new version: %s is %d (%s)"),
		        def->status_col, now->status, status_label(g->table, now->status));
	if (g->action == EV_ACTION_RECOVER && def->has_lock) {
		if (now->lock_until == NULL)
			return ev_xstrdup(
			        _("the row has no lock_until: its publisher's lock cannot "
			          "expire, so it is not stuck"));
		return ev_xasprintf(
		        _("its lock has not expired: lock_until %s is not yet past (server "
		          "time %s); the publisher that holds it may still finish"),
		        now->lock_until, or_null(now->db_now));
	}
	if (g->action == EV_ACTION_RECOVER) {
		if (now->last_handle_time == NULL)
			return ev_xstrdup(_("the row has no last_handle_time, so it is not stuck"));
		if (parse_dt(now->db_now, &t_now) && parse_dt(now->last_handle_time, &t))
			return ev_xasprintf(
			        _("it is not stuck: last_handle_time %s is %lld s before "
			          "server time %s, within the stuck threshold of %d s"),
			        now->last_handle_time, t_now - t, now->db_now,
			        g->stuck_threshold_s);
		return ev_xasprintf(_("it is not stuck: last_handle_time %s is within the stuck "
		                      "threshold of %d s"),
		                    now->last_handle_time, g->stuck_threshold_s);
	}
	return ev_xstrdup(_("the guard matched no row"));
}

bool ev_guard_row_shows_applied(const struct ev_guard *g, const struct ev_guard_row *seen,
                                const struct ev_guard_row *now)
{
	return now != NULL && !now->deleted && now->version == seen->version + 1 &&
	       now->status == g->to_status;
}

/* --- access ---------------------------------------------------------------------------------- */

static struct ev_query *scalar_query(const char *name, const char *sql, size_t ncols,
                                     const char *const *names)
{
	struct ev_query *q = ev_xcalloc(1, sizeof(*q));
	q->name = name;
	q->sql = ev_xstrdup(sql);
	q->ncols = ncols;
	q->col_names = ev_xcalloc(ncols, sizeof(*q->col_names));
	q->col_types = ev_xcalloc(ncols, sizeof(*q->col_types));
	for (size_t i = 0; i < ncols; i++) {
		q->col_names[i] = names[i];
		q->col_types[i] = EV_CT_INT;
	}
	q->limit = 1;
	return q;
}

struct ev_query *ev_guard_query_server_read_only(enum ev_flavour f)
{
	static const char *const names[] = {"read_only", "innodb_read_only", "super_read_only"};
	if (f == EV_FLAVOUR_MYSQL)
		return scalar_query("action.read_only",
		                    "/* evtop:action.read_only */ SELECT @@global.read_only, "
		                    "@@global.innodb_read_only, @@global.super_read_only",
		                    3, names);
	return scalar_query("action.read_only",
	                    "/* evtop:action.read_only */ SELECT @@global.read_only, "
	                    "@@global.innodb_read_only",
	                    2, names);
}

struct ev_query *ev_guard_query_audit_exists(void)
{
	static const char *const names[] = {"audit_tables"};
	return scalar_query("action.audit_exists",
	                    "/* evtop:action.audit_exists */ SELECT COUNT(*) FROM "
	                    "information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND "
	                    "TABLE_NAME = 'evtop_audit'",
	                    1, names);
}

struct ev_query *ev_guard_query_probe(enum ev_table_kind t, const char *table_name)
{
	const struct ev_table_def *def = ev_model_table(t);
	struct ev_query *q = ev_xcalloc(1, sizeof(*q));
	struct ev_buf b;

	ev_buf_init(&b);
	ev_buf_printf(&b,
	              "/* evtop:action.probe */ UPDATE `%s` SET %s = ?, retry_count = retry_count "
	              "+ 1, max_retry_count = GREATEST(max_retry_count, retry_count + 1), "
	              "next_retry_time = NOW() + INTERVAL ? SECOND, fail_reason = ?",
	              table_name ? table_name : def->default_name, def->status_col);
	if (def->has_lock)
		ev_buf_adds(&b, ", locked_by = NULL, lock_until = NULL");
	ev_buf_printf(&b,
	              ", version = version + 1, update_time = NOW() WHERE id = ? AND deleted = 0 "
	              "AND version = ? AND %s IN (0, 1, 3) AND %s AND 1 = 0",
	              def->status_col,
	              def->has_lock ? "lock_until <= NOW()"
	                            : "last_handle_time <= NOW() - INTERVAL ? SECOND");
	q->name = "action.probe";
	q->sql = ev_buf_steal(&b);
	return q;
}

/* --- audit ------------------------------------------------------------------------------------ */

const char *ev_audit_result_name(enum ev_audit_result r)
{
	switch (r) {
	case EV_AUDIT_INTENT:
		return "intent";
	case EV_AUDIT_APPLIED:
		return "applied";
	case EV_AUDIT_SKIPPED:
		return "skipped";
	case EV_AUDIT_FAILED:
		return "failed";
	}
	return "failed";
}

/* A JSON string (valid UTF-8 whatever the input), or null. */
json_t *ev_audit_jstr(const char *s)
{
	if (s == NULL)
		return json_null();
	char *v = valid_copy(s);
	json_t *j = json_string(v);
	free(v);
	return j ? j : json_null();
}

void ev_audit_jset(json_t *o, const char *key, json_t *v)
{
	if (v == NULL || json_object_set_new(o, key, v) != 0)
		ev_fatal(_("out of memory (jansson)"));
}

static json_t *jstr(const char *s)
{
	return ev_audit_jstr(s);
}

static void jset(json_t *o, const char *key, json_t *v)
{
	ev_audit_jset(o, key, v);
}

/* Who did it, as every local audit record says it. */
void ev_audit_who_fields(json_t *o, const char *time, const struct ev_audit_who *w)
{
	jset(o, "time", jstr(time));
	jset(o, "source", jstr(w->source));
	jset(o, "os_user", jstr(w->os_user));
	jset(o, "sudo_user", jstr(w->sudo_user));
	jset(o, "ssh_connection", jstr(w->ssh_connection));
	jset(o, "operator", jstr(w->operator_id));
	jset(o, "db_user", jstr(w->db_user));
}

static void who_fields(json_t *o, const char *time, const struct ev_audit_who *w)
{
	ev_audit_who_fields(o, time, w);
}

/* One JSON line of the audit file (o is consumed). */
char *ev_audit_jline(json_t *o)
{
	char *text = json_dumps(o, JSON_COMPACT);
	json_decref(o);
	if (text == NULL)
		ev_fatal(_("out of memory (json_dumps)"));
	char *line = ev_xasprintf("%s\n", text);
	free(text);
	return line;
}

static char *json_line(json_t *o)
{
	return ev_audit_jline(o);
}

char *ev_audit_json_line(const struct ev_audit_rec *r)
{
	const struct ev_audit_who *w = r->who;
	const struct ev_guard_row *b = r->before;
	json_t *o = json_object(), *before = json_object();
	char id[32];

	if (o == NULL || before == NULL)
		ev_fatal(_("out of memory (jansson)"));
	snprintf(id, sizeof(id), "%llu", b->id);
	who_fields(o, r->time, w);
	jset(o, "table", jstr(r->g->table_name));
	jset(o, "id", jstr(id));
	jset(o, "event_no", jstr(b->event_no));
	jset(o, "action", jstr(ev_action_name(r->g->action)));
	jset(before, "status", json_integer(b->status));
	jset(before, "retry_count", json_integer(b->retry_count));
	jset(before, "max_retry_count", json_integer(b->max_retry_count));
	jset(before, "next_retry_time", jstr(b->next_retry_time));
	jset(before, "version", json_integer(b->version));
	jset(o, "before", before);
	jset(o, "after_status",
	     r->result == EV_AUDIT_APPLIED ? json_integer(r->g->to_status) : json_null());
	jset(o, "reason", jstr(r->g->audit_reason));
	jset(o, "result", jstr(ev_audit_result_name(r->result)));
	jset(o, "error", jstr(r->error));
	return json_line(o);
}

char *ev_audit_clock_ok_line(const char *time, const struct ev_audit_who *w, const char *table_name,
                             const char *reason, const char *suspect)
{
	json_t *o = json_object();

	if (o == NULL)
		ev_fatal(_("out of memory (jansson)"));
	who_fields(o, time, w);
	jset(o, "table", jstr(table_name));
	jset(o, "id", json_null());
	jset(o, "event_no", json_null());
	jset(o, "action", jstr("clock-ok"));
	jset(o, "reason", jstr(reason));
	jset(o, "result", jstr("allowed"));
	jset(o, "error", json_null());
	jset(o, "clock_suspect", jstr(suspect));
	return json_line(o);
}

char *ev_audit_unmask_line(const char *time, const struct ev_audit_who *w, const char *table_name,
                           const char *reason, const char *const *event_nos, size_t n)
{
	json_t *o = json_object();
	json_t *shown = json_array();

	if (o == NULL || shown == NULL)
		ev_fatal(_("out of memory (jansson)"));
	who_fields(o, time, w);
	jset(o, "table", jstr(table_name));
	jset(o, "id", json_null());
	jset(o, "event_no", n == 1 ? jstr(event_nos[0]) : json_null());
	jset(o, "action", jstr("unmask"));
	jset(o, "reason", jstr(reason));
	jset(o, "result", jstr("shown"));
	jset(o, "error", json_null());
	for (size_t i = 0; i < n && i < 1000; i++)
		json_array_append_new(shown, jstr(event_nos[i]));
	if (n > 1000)
		json_array_append_new(shown, jstr("..."));
	jset(o, "events", shown);
	jset(o, "count", json_integer((json_int_t)n));
	return json_line(o);
}

/* A text parameter cut to the audit column's width (in characters); "" for NULL, which the
 * statement's NULLIF(?, '') turns back into NULL. */
static void add_text_cut(struct ev_query *q, const char *s, size_t max)
{
	if (s == NULL) {
		ev_query_add_text(q, "");
		return;
	}
	char *v = valid_copy(s);
	char *cut = ev_guard_cut_chars(v, max);
	ev_query_add_text(q, cut);
	free(cut);
	free(v);
}

struct ev_query *ev_guard_query_audit_insert(const struct ev_audit_rec *r)
{
	const struct ev_audit_who *w = r->who;
	const struct ev_guard_row *b = r->before;
	struct ev_query *q = ev_xcalloc(1, sizeof(*q));

	q->name = "action.audit";
	q->sql = ev_xstrdup(
	        "/* evtop:action.audit */ INSERT INTO `evtop_audit` (audit_time, source, os_user, "
	        "sudo_user, ssh_connection, operator, db_user, table_name, event_id, event_no, "
	        "action, before_status, before_retry_count, before_max_retry_count, "
	        "before_next_retry_time, before_version, after_status, reason, result) VALUES "
	        "(NOW(3), ?, ?, NULLIF(?, ''), NULLIF(?, ''), NULLIF(?, ''), ?, ?, ?, ?, ?, ?, ?, "
	        "?, NULLIF(?, ''), ?, NULLIF(?, -1), NULLIF(?, ''), ?)");
	add_text_cut(q, w->source ? w->source : "default", 64);
	add_text_cut(q, w->os_user ? w->os_user : "?", 64);
	add_text_cut(q, w->sudo_user, 64);
	add_text_cut(q, w->ssh_connection, 128);
	add_text_cut(q, w->operator_id, 128);
	add_text_cut(q, w->db_user ? w->db_user : "?", 288);
	add_text_cut(q, r->g->table_name, 64);
	ev_query_add_uint(q, b->id);
	add_text_cut(q, b->event_no ? b->event_no : "", 64);
	ev_query_add_text(q, ev_action_name(r->g->action));
	ev_query_add_int(q, b->status);
	ev_query_add_int(q, b->retry_count);
	ev_query_add_int(q, b->max_retry_count);
	add_text_cut(q, b->next_retry_time, 32);
	ev_query_add_int(q, b->version);
	ev_query_add_int(q, r->result == EV_AUDIT_APPLIED ? r->g->to_status : -1);
	add_text_cut(q, r->g->audit_reason, EV_GUARD_REASON_MAX);
	ev_query_add_text(q, ev_audit_result_name(r->result));
	q->limit = 1;
	return q;
}

struct ev_query *ev_guard_query_access_insert(const struct ev_audit_who *w, const char *table_name,
                                              const char *reason, const char *const *event_nos,
                                              size_t n, size_t shown_count)
{
	struct ev_query *q = ev_xcalloc(1, sizeof(*q));
	struct ev_buf sql = {0};

	q->name = "unmask.access_log";
	ev_buf_adds(&sql, "/* evtop:unmask.access_log */ INSERT INTO `evtop_access_log` "
	                  "(access_time, source, os_user, sudo_user, ssh_connection, operator, "
	                  "db_user, table_name, event_no, action, shown_count, reason) VALUES ");
	for (size_t i = 0; i < n; i++) {
		ev_buf_adds(&sql, i ? ", " : "");
		ev_buf_adds(&sql, "(NOW(3), ?, ?, NULLIF(?, ''), NULLIF(?, ''), NULLIF(?, ''), "
		                  "CURRENT_USER(), ?, ?, 'unmask', ?, ?)");
		add_text_cut(q, w->source ? w->source : "default", 64);
		add_text_cut(q, w->os_user ? w->os_user : "?", 64);
		add_text_cut(q, w->sudo_user, 64);
		add_text_cut(q, w->ssh_connection, 128);
		add_text_cut(q, w->operator_id, 128);
		add_text_cut(q, table_name, 64);
		add_text_cut(q, event_nos[i] ? event_nos[i] : "", 64);
		ev_query_add_uint(q, shown_count);
		add_text_cut(q, reason, EV_GUARD_REASON_MAX);
	}
	q->sql = ev_buf_steal(&sql);
	q->limit = (long)n;
	return q;
}

struct ev_query *ev_guard_query_audit_find(const struct ev_guard *g,
                                           const struct ev_guard_row *seen,
                                           const struct ev_audit_who *who)
{
	static const char *const names[] = {"audit_rows"};
	struct ev_query *q =
	        scalar_query("action.audit_find",
	                     "/* evtop:action.audit_find */ SELECT COUNT(*) FROM `evtop_audit` "
	                     "WHERE table_name = ? AND event_id = ? AND before_version = ? AND "
	                     "action = ? AND result = 'applied' AND source = ? AND os_user = ? AND "
	                     "operator <=> NULLIF(?, '')",
	                     1, names);
	ev_query_add_text(q, g->table_name);
	ev_query_add_uint(q, seen->id);
	ev_query_add_int(q, seen->version);
	ev_query_add_text(q, ev_action_name(g->action));
	add_text_cut(q, who->source ? who->source : "default", 64);
	add_text_cut(q, who->os_user ? who->os_user : "?", 64);
	add_text_cut(q, who->operator_id, 128);
	return q;
}
