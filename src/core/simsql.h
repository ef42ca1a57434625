/* evtop — the applications' side of the model document (seeds/000), for the simulator
 * (src/sim): the INSERTs, candidate SELECTs and guarded UPDATEs that producers, publishers,
 * consumers and the outbox's lock-timeout job run, as SQL text plus bound parameters.
 *
 * Each statement is the model document's, clause for clause, with its literals bound as
 * parameters: the id, the instance name, the failure reason, the batch size, and the
 * intervals, written DATE_ADD(NOW(), INTERVAL ? SECOND) so a demo can scale its clock (the
 * document itself says the back-off is computed by the application). The document's one
 * unbounded UPDATE (恢复锁定超时事件) is run row by row: candidates from its SELECT, then the
 * UPDATE with its own guard and `id = ?`. */
#ifndef EV_CORE_SIMSQL_H
#define EV_CORE_SIMSQL_H

#include "core/model.h"
#include "core/query.h"

#include <stdbool.h>

/* One row to insert. Strings are borrowed. A live insert (ev_simsql_insert) is always the
 * document's 创建消息事件 / 写入 Outbox 事件: pending, no retries, NOW(); the state fields are
 * used by ev_simsql_history only. Times there are offsets in seconds from the server's NOW()
 * (negative = in the past). */
struct ev_sim_row {
	unsigned long long id;
	const char *event_no;
	const char *event_type;
	const char *biz_type; /* biz_type / aggregate_type */
	const char *biz_id;   /* biz_id / aggregate_id */
	const char *source;   /* event_source */
	const char *channel;  /* publish_channel (outbox) */
	const char *topic;    /* outbox */
	const char *routing_key;
	const char *payload; /* JSON text */
	const char *headers; /* JSON text or NULL (outbox) */
	const char *trace_id;
	int max_retry_count;
	/* History only. */
	int status;
	int retry_count;
	int version;
	const char *locked_by;   /* NULL = SQL NULL */
	const char *fail_reason; /* NULL = SQL NULL */
	long long create_s, update_s;
	bool has_next_retry, has_lock_until, has_attempt, has_done;
	long long next_retry_s; /* next_retry_time */
	long long lock_until_s; /* lock_until (outbox) */
	long long attempt_s;    /* last_publish_time / last_handle_time */
	long long done_s;       /* published_time / success_time */
};

/* 创建消息事件 / 在业务事务中写入 Outbox 事件: one pending row, create_time = update_time = NOW().
 */
struct ev_query *ev_simsql_insert(enum ev_table_kind t, const char *table,
                                  const struct ev_sim_row *r);
/* Seeding: n rows in the states their fields say, in one multi-row INSERT. */
struct ev_query *ev_simsql_history(enum ev_table_kind t, const char *table,
                                   const struct ev_sim_row *rows, size_t n);

/* 查询待处理消息 / 查询待发布事件: status 0, oldest first, at most `limit`. */
struct ev_query *ev_simsql_pending(enum ev_table_kind t, const char *table, int limit);
/* 查询到期可重试消息 / 查询到期可重试事件: status 3, retries left, next_retry_time <= NOW(). */
struct ev_query *ev_simsql_due(enum ev_table_kind t, const char *table, int limit);
/* 查询锁定超时事件 (outbox): status 1 with lock_until <= NOW(), oldest lock first. */
struct ev_query *ev_simsql_lock_expired(const char *table, int limit);
/* 查询失败次数较多的消息 (message): status 3 with retry_count >= min_retry, latest first. */
struct ev_query *ev_simsql_high_retry(const char *table, int min_retry, int limit);

/* 抢占待处理消息 / 抢占待发布事件: 0,3 -> 1. On the outbox it writes locked_by = instance and
 * lock_until = NOW() + lock_s and refuses a row whose next_retry_time is still ahead; the
 * message table's claim takes neither (the document's). Affected rows 1 = claimed. */
struct ev_query *ev_simsql_claim(enum ev_table_kind t, const char *table, unsigned long long id,
                                 const char *instance, int lock_s);
/* 标记处理成功 / 标记发布成功: 1 -> 2 (the outbox's only by the lock holder). */
struct ev_query *ev_simsql_succeed(enum ev_table_kind t, const char *table, unsigned long long id,
                                   const char *instance);
/* 标记处理失败 / 标记发布失败: 1 -> 3, retry_count + 1, next_retry_time = NOW() + retry_after_s,
 * guarded by retry_count < max_retry_count (and the lock holder on the outbox). */
struct ev_query *ev_simsql_fail(enum ev_table_kind t, const char *table, unsigned long long id,
                                const char *instance, int retry_after_s, const char *reason);
/* 恢复锁定超时事件 (outbox), for one candidate: 1 -> 3 when its lock has expired. */
struct ev_query *ev_simsql_recover(const char *table, unsigned long long id, int retry_after_s,
                                   const char *reason);
/* The applications' cancel: on the outbox 取消不再需要发布的事件 (0,3 -> 4); on the message
 * table 超过最大重试次数后停止重试 (3 -> 4 once retry_count >= max_retry_count). */
struct ev_query *ev_simsql_cancel(enum ev_table_kind t, const char *table, unsigned long long id,
                                  const char *reason);

/* The back-off after a failure of a row that had retry_count retries: 1 min, 5 min, 30 min,
 * then 2 h, divided by time_scale (>= 1), never under 1 s (DATETIME has whole seconds). */
int ev_simsql_backoff_s(int retry_count, double time_scale);

#endif
