/* evtop — the model document's application SQL, for the simulator (see simsql.h). The texts
 * follow the document's statements clause for clause; only literals became parameters. */
#include <config.h>

#include "core/simsql.h"

#include <assert.h>
#include <stdio.h>
#include <string.h>

static struct ev_query *new_query(const char *name, int limit)
{
	struct ev_query *q = ev_xcalloc(1, sizeof(*q));
	q->name = name;
	q->limit = limit;
	return q;
}

static const char *name_or_default(enum ev_table_kind t, const char *table)
{
	return table != NULL ? table : ev_model_table(t)->default_name;
}

/* --- inserts -------------------------------------------------------------------------------- */

struct ev_query *ev_simsql_insert(enum ev_table_kind t, const char *table,
                                  const struct ev_sim_row *r)
{
	struct ev_query *q = new_query("sim.insert", 0);

	if (t == EV_TABLE_OUTBOX) {
		q->sql = ev_xasprintf(
		        "/* evtop-sim:insert */ INSERT INTO `%s` (id, event_no, aggregate_type, "
		        "aggregate_id, event_type, event_version, event_source, publish_channel, "
		        "topic, routing_key, event_payload, event_headers, publish_status, "
		        "retry_count, max_retry_count, trace_id, create_time, update_time) VALUES "
		        "(?, ?, ?, ?, ?, 1, ?, ?, ?, ?, ?, ?, 0, 0, ?, ?, NOW(), NOW())",
		        name_or_default(t, table));
		ev_query_add_uint(q, r->id);
		ev_query_add_text(q, r->event_no);
		ev_query_add_text(q, r->biz_type);
		ev_query_add_text(q, r->biz_id);
		ev_query_add_text(q, r->event_type);
		ev_query_add_text(q, r->source);
		ev_query_add_text(q, r->channel);
		ev_query_add_text(q, r->topic);
		ev_query_add_text(q, r->routing_key);
		ev_query_add_text(q, r->payload);
		ev_query_add_text(q, r->headers ? r->headers : "{}");
		ev_query_add_int(q, r->max_retry_count);
		ev_query_add_text(q, r->trace_id);
	} else {
		q->sql = ev_xasprintf(
		        "/* evtop-sim:insert */ INSERT INTO `%s` (id, event_no, event_type, "
		        "biz_type, biz_id, event_source, event_payload, event_status, retry_count, "
		        "max_retry_count, trace_id, create_time, update_time) VALUES (?, ?, ?, ?, "
		        "?, "
		        "?, ?, 0, 0, ?, ?, NOW(), NOW())",
		        name_or_default(t, table));
		ev_query_add_uint(q, r->id);
		ev_query_add_text(q, r->event_no);
		ev_query_add_text(q, r->event_type);
		ev_query_add_text(q, r->biz_type);
		ev_query_add_text(q, r->biz_id);
		ev_query_add_text(q, r->source);
		ev_query_add_text(q, r->payload);
		ev_query_add_int(q, r->max_retry_count);
		ev_query_add_text(q, r->trace_id);
	}
	return q;
}

/* The history INSERT has thousands of parameters: they go into an array sized once (at most
 * HISTORY_PARAMS per row), not through ev_query_add_*, which grows it one at a time. */
#define HISTORY_PARAMS 32

static struct ev_param *hparam(struct ev_query *q, enum ev_param_type type)
{
	struct ev_param *p = &q->params[q->nparams++];
	p->type = type;
	return p;
}

static void h_int(struct ev_query *q, long long v)
{
	hparam(q, EV_P_INT)->i = v;
}

static void h_text(struct ev_query *q, const char *s)
{
	hparam(q, EV_P_TEXT)->s = ev_xstrdup(s);
}

/* A time column of a history row: an offset from NOW(), or NULL. */
static void add_time(struct ev_query *q, struct ev_buf *b, bool set, long long offset_s)
{
	if (!set) {
		ev_buf_adds(b, ", NULL");
		return;
	}
	ev_buf_adds(b, ", DATE_ADD(NOW(), INTERVAL ? SECOND)");
	h_int(q, offset_s);
}

static void add_opt_text(struct ev_query *q, struct ev_buf *b, const char *s)
{
	if (s == NULL) {
		ev_buf_adds(b, ", NULL");
		return;
	}
	ev_buf_adds(b, ", ?");
	h_text(q, s);
}

struct ev_query *ev_simsql_history(enum ev_table_kind t, const char *table,
                                   const struct ev_sim_row *rows, size_t n)
{
	struct ev_query *q = new_query("sim.history", 0);
	struct ev_buf b;

	assert(n > 0);
	q->params = ev_xcalloc(n * HISTORY_PARAMS, sizeof(*q->params));
	q->params_cap = n * HISTORY_PARAMS;
	ev_buf_init(&b);
	if (t == EV_TABLE_OUTBOX)
		ev_buf_printf(&b,
		              "/* evtop-sim:history */ INSERT INTO `%s` (id, event_no, "
		              "aggregate_type, aggregate_id, event_type, event_version, "
		              "event_source, publish_channel, topic, routing_key, event_payload, "
		              "event_headers, publish_status, retry_count, max_retry_count, "
		              "next_retry_time, locked_by, lock_until, last_publish_time, "
		              "published_time, fail_reason, trace_id, version, create_time, "
		              "update_time) VALUES ",
		              name_or_default(t, table));
	else
		ev_buf_printf(&b,
		              "/* evtop-sim:history */ INSERT INTO `%s` (id, event_no, event_type, "
		              "biz_type, biz_id, event_source, event_payload, event_status, "
		              "retry_count, max_retry_count, next_retry_time, last_handle_time, "
		              "success_time, fail_reason, trace_id, version, create_time, "
		              "update_time) VALUES ",
		              name_or_default(t, table));
	for (size_t i = 0; i < n; i++) {
		const struct ev_sim_row *r = &rows[i];
		size_t before = q->nparams;
		ev_buf_adds(&b, i ? ", (?, ?" : "(?, ?");
		hparam(q, EV_P_UINT)->u = r->id;
		h_text(q, r->event_no);
		if (t == EV_TABLE_OUTBOX) {
			ev_buf_adds(&b, ", ?, ?, ?, 1, ?, ?, ?, ?, ?, ?, ?, ?, ?");
			h_text(q, r->biz_type);
			h_text(q, r->biz_id);
			h_text(q, r->event_type);
			h_text(q, r->source);
			h_text(q, r->channel);
			h_text(q, r->topic);
			h_text(q, r->routing_key);
			h_text(q, r->payload);
			h_text(q, r->headers ? r->headers : "{}");
			h_int(q, r->status);
			h_int(q, r->retry_count);
			h_int(q, r->max_retry_count);
			add_time(q, &b, r->has_next_retry, r->next_retry_s);
			add_opt_text(q, &b, r->locked_by);
			add_time(q, &b, r->has_lock_until, r->lock_until_s);
		} else {
			ev_buf_adds(&b, ", ?, ?, ?, ?, ?, ?, ?, ?");
			h_text(q, r->event_type);
			h_text(q, r->biz_type);
			h_text(q, r->biz_id);
			h_text(q, r->source);
			h_text(q, r->payload);
			h_int(q, r->status);
			h_int(q, r->retry_count);
			h_int(q, r->max_retry_count);
			add_time(q, &b, r->has_next_retry, r->next_retry_s);
		}
		add_time(q, &b, r->has_attempt, r->attempt_s);
		add_time(q, &b, r->has_done, r->done_s);
		add_opt_text(q, &b, r->fail_reason);
		add_opt_text(q, &b, r->trace_id);
		ev_buf_adds(&b, ", ?, DATE_ADD(NOW(), INTERVAL ? SECOND), "
		                "DATE_ADD(NOW(), INTERVAL ? SECOND))");
		h_int(q, r->version);
		h_int(q, r->create_s);
		h_int(q, r->update_s);
		assert(q->nparams - before <= HISTORY_PARAMS);
		(void)before;
	}
	q->sql = ev_buf_steal(&b);
	return q;
}

/* --- candidates ----------------------------------------------------------------------------- */

struct ev_query *ev_simsql_pending(enum ev_table_kind t, const char *table, int limit)
{
	struct ev_query *q = new_query("sim.pending", limit);

	if (t == EV_TABLE_OUTBOX)
		q->sql = ev_xasprintf(
		        "/* evtop-sim:pending */ SELECT id, event_no, aggregate_type, "
		        "aggregate_id, "
		        "event_type, event_version, event_source, publish_channel, topic, "
		        "routing_key, event_payload, event_headers, retry_count, max_retry_count, "
		        "trace_id, create_time FROM `%s` WHERE deleted = 0 AND publish_status = 0 "
		        "ORDER BY create_time ASC LIMIT ?",
		        name_or_default(t, table));
	else
		q->sql = ev_xasprintf(
		        "/* evtop-sim:pending */ SELECT id, event_no, event_type, biz_type, "
		        "biz_id, "
		        "event_source, event_payload, retry_count, max_retry_count, trace_id, "
		        "create_time FROM `%s` WHERE deleted = 0 AND event_status = 0 ORDER BY "
		        "create_time ASC LIMIT ?",
		        name_or_default(t, table));
	ev_query_add_int(q, limit);
	return q;
}

struct ev_query *ev_simsql_due(enum ev_table_kind t, const char *table, int limit)
{
	struct ev_query *q = new_query("sim.due", limit);

	if (t == EV_TABLE_OUTBOX)
		q->sql = ev_xasprintf(
		        "/* evtop-sim:due */ SELECT id, event_no, aggregate_type, aggregate_id, "
		        "event_type, publish_channel, topic, routing_key, event_payload, "
		        "retry_count, max_retry_count, next_retry_time, fail_reason FROM `%s` "
		        "WHERE deleted = 0 AND publish_status = 3 AND retry_count < "
		        "max_retry_count AND next_retry_time <= NOW() ORDER BY next_retry_time ASC "
		        "LIMIT ?",
		        name_or_default(t, table));
	else
		q->sql = ev_xasprintf(
		        "/* evtop-sim:due */ SELECT id, event_no, event_type, biz_type, biz_id, "
		        "event_payload, retry_count, max_retry_count, next_retry_time, fail_reason "
		        "FROM `%s` WHERE deleted = 0 AND event_status = 3 AND retry_count < "
		        "max_retry_count AND next_retry_time <= NOW() ORDER BY next_retry_time ASC "
		        "LIMIT ?",
		        name_or_default(t, table));
	ev_query_add_int(q, limit);
	return q;
}

struct ev_query *ev_simsql_lock_expired(const char *table, int limit)
{
	struct ev_query *q = new_query("sim.lock_expired", limit);

	q->sql = ev_xasprintf("/* evtop-sim:lock_expired */ SELECT id, event_no, aggregate_type, "
	                      "aggregate_id, event_type, publish_status, locked_by, lock_until, "
	                      "last_publish_time, retry_count, fail_reason FROM `%s` WHERE "
	                      "deleted = 0 AND publish_status = 1 AND lock_until <= NOW() ORDER "
	                      "BY lock_until ASC LIMIT ?",
	                      name_or_default(EV_TABLE_OUTBOX, table));
	ev_query_add_int(q, limit);
	return q;
}

struct ev_query *ev_simsql_high_retry(const char *table, int min_retry, int limit)
{
	struct ev_query *q = new_query("sim.high_retry", limit);

	q->sql = ev_xasprintf("/* evtop-sim:high_retry */ SELECT id, event_no, event_type, "
	                      "biz_type, biz_id, retry_count, max_retry_count, next_retry_time, "
	                      "fail_reason, update_time FROM `%s` WHERE deleted = 0 AND "
	                      "event_status = 3 AND retry_count >= ? ORDER BY update_time DESC "
	                      "LIMIT ?",
	                      name_or_default(EV_TABLE_MESSAGE, table));
	ev_query_add_int(q, min_retry);
	ev_query_add_int(q, limit);
	return q;
}

/* --- guarded updates ------------------------------------------------------------------------ */

struct ev_query *ev_simsql_claim(enum ev_table_kind t, const char *table, unsigned long long id,
                                 const char *instance, int lock_s)
{
	struct ev_query *q = new_query("sim.claim", 0);

	if (t == EV_TABLE_OUTBOX) {
		q->sql = ev_xasprintf(
		        "/* evtop-sim:claim */ UPDATE `%s` SET publish_status = 1, locked_by = ?, "
		        "lock_until = DATE_ADD(NOW(), INTERVAL ? SECOND), last_publish_time = "
		        "NOW(), version = version + 1, update_time = NOW() WHERE id = ? AND "
		        "deleted = 0 AND publish_status IN (0, 3) AND (next_retry_time IS NULL OR "
		        "next_retry_time <= NOW())",
		        name_or_default(t, table));
		ev_query_add_text(q, instance);
		ev_query_add_int(q, lock_s);
		ev_query_add_uint(q, id);
	} else {
		q->sql = ev_xasprintf("/* evtop-sim:claim */ UPDATE `%s` SET event_status = 1, "
		                      "last_handle_time = NOW(), version = version + 1, "
		                      "update_time = NOW() WHERE id = ? AND event_status IN (0, 3) "
		                      "AND deleted = 0",
		                      name_or_default(t, table));
		ev_query_add_uint(q, id);
	}
	return q;
}

struct ev_query *ev_simsql_succeed(enum ev_table_kind t, const char *table, unsigned long long id,
                                   const char *instance)
{
	struct ev_query *q = new_query("sim.succeed", 0);

	if (t == EV_TABLE_OUTBOX) {
		q->sql = ev_xasprintf(
		        "/* evtop-sim:succeed */ UPDATE `%s` SET publish_status = 2, "
		        "published_time = NOW(), fail_reason = NULL, locked_by = NULL, lock_until "
		        "= NULL, update_time = NOW() WHERE id = ? AND deleted = 0 AND "
		        "publish_status = 1 AND locked_by = ?",
		        name_or_default(t, table));
		ev_query_add_uint(q, id);
		ev_query_add_text(q, instance);
	} else {
		q->sql = ev_xasprintf("/* evtop-sim:succeed */ UPDATE `%s` SET event_status = 2, "
		                      "success_time = NOW(), fail_reason = NULL, update_time = "
		                      "NOW() WHERE id = ? AND event_status = 1 AND deleted = 0",
		                      name_or_default(t, table));
		ev_query_add_uint(q, id);
	}
	return q;
}

struct ev_query *ev_simsql_fail(enum ev_table_kind t, const char *table, unsigned long long id,
                                const char *instance, int retry_after_s, const char *reason)
{
	struct ev_query *q = new_query("sim.fail", 0);

	if (t == EV_TABLE_OUTBOX) {
		q->sql = ev_xasprintf(
		        "/* evtop-sim:fail */ UPDATE `%s` SET publish_status = 3, retry_count = "
		        "retry_count + 1, next_retry_time = DATE_ADD(NOW(), INTERVAL ? SECOND), "
		        "fail_reason = ?, locked_by = NULL, lock_until = NULL, update_time = NOW() "
		        "WHERE id = ? AND deleted = 0 AND publish_status = 1 AND locked_by = ? AND "
		        "retry_count < max_retry_count",
		        name_or_default(t, table));
		ev_query_add_int(q, retry_after_s);
		ev_query_add_text(q, reason);
		ev_query_add_uint(q, id);
		ev_query_add_text(q, instance);
	} else {
		q->sql = ev_xasprintf(
		        "/* evtop-sim:fail */ UPDATE `%s` SET event_status = 3, retry_count = "
		        "retry_count + 1, next_retry_time = DATE_ADD(NOW(), INTERVAL ? SECOND), "
		        "fail_reason = ?, update_time = NOW() WHERE id = ? AND event_status = 1 "
		        "AND "
		        "retry_count < max_retry_count AND deleted = 0",
		        name_or_default(t, table));
		ev_query_add_int(q, retry_after_s);
		ev_query_add_text(q, reason);
		ev_query_add_uint(q, id);
	}
	return q;
}

struct ev_query *ev_simsql_recover(const char *table, unsigned long long id, int retry_after_s,
                                   const char *reason)
{
	struct ev_query *q = new_query("sim.recover", 0);

	q->sql = ev_xasprintf(
	        "/* evtop-sim:recover */ UPDATE `%s` SET publish_status = 3, retry_count = "
	        "retry_count + 1, next_retry_time = DATE_ADD(NOW(), INTERVAL ? SECOND), "
	        "fail_reason = ?, locked_by = NULL, lock_until = NULL, update_time = NOW() WHERE "
	        "id = ? AND deleted = 0 AND publish_status = 1 AND lock_until <= NOW()",
	        name_or_default(EV_TABLE_OUTBOX, table));
	ev_query_add_int(q, retry_after_s);
	ev_query_add_text(q, reason);
	ev_query_add_uint(q, id);
	return q;
}

struct ev_query *ev_simsql_cancel(enum ev_table_kind t, const char *table, unsigned long long id,
                                  const char *reason)
{
	struct ev_query *q = new_query("sim.cancel", 0);

	if (t == EV_TABLE_OUTBOX)
		q->sql = ev_xasprintf("/* evtop-sim:cancel */ UPDATE `%s` SET publish_status = 4, "
		                      "fail_reason = ?, locked_by = NULL, lock_until = NULL, "
		                      "update_time = NOW() WHERE id = ? AND deleted = 0 AND "
		                      "publish_status IN (0, 3)",
		                      name_or_default(t, table));
	else
		q->sql = ev_xasprintf("/* evtop-sim:cancel */ UPDATE `%s` SET event_status = 4, "
		                      "fail_reason = ?, update_time = NOW() WHERE id = ? AND "
		                      "event_status = 3 AND retry_count >= max_retry_count AND "
		                      "deleted = 0",
		                      name_or_default(t, table));
	ev_query_add_text(q, reason);
	ev_query_add_uint(q, id);
	return q;
}

int ev_simsql_backoff_s(int retry_count, double time_scale)
{
	static const int steps[] = {60, 300, 1800, 7200};
	int i = retry_count < 0 ? 0 : retry_count > 3 ? 3 : retry_count;
	double s = steps[i] / (time_scale >= 1 ? time_scale : 1);
	int r = (int)(s + 0.5);
	return r < 1 ? 1 : r;
}
