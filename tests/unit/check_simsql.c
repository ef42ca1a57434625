/* core/simsql: the simulator's statements are the model document's, clause for clause, with
 * their literals bound: exact SQL text and parameters of every one, and the back-off. */
#include <config.h>

#include "core/simsql.h"

#include <check.h>
#include <stdlib.h>
#include <string.h>

/* The query rendered with its parameters as literals, without the leading tag comment. */
static char *rendered(struct ev_query *q)
{
	char *s = ev_query_render(q);
	const char *end = strstr(s, "*/ ");
	ck_assert_ptr_nonnull(end);
	ck_assert(strncmp(s, "/* evtop-sim:", 13) == 0);
	char *out = strdup(end + 3);
	free(s);
	ev_query_free(&q);
	return out;
}

#define ASSERT_SQL(q, text)                                                                        \
	do {                                                                                       \
		char *got_ = rendered(q);                                                          \
		ck_assert_str_eq(got_, text);                                                      \
		free(got_);                                                                        \
	} while (0)

START_TEST(claim_is_the_documents)
{
	/* 抢占待发布事件 */
	ASSERT_SQL(
	        ev_simsql_claim(EV_TABLE_OUTBOX, NULL, 200000000000000001ULL, "publisher-01", 120),
	        "UPDATE `biz_outbox_event` SET publish_status = 1, locked_by = 'publisher-01', "
	        "lock_until = DATE_ADD(NOW(), INTERVAL 120 SECOND), last_publish_time = NOW(), "
	        "version = version + 1, update_time = NOW() WHERE id = 200000000000000001 AND "
	        "deleted = 0 AND publish_status IN (0, 3) AND (next_retry_time IS NULL OR "
	        "next_retry_time <= NOW())");
	/* 抢占待处理消息 */
	ASSERT_SQL(
	        ev_simsql_claim(EV_TABLE_MESSAGE, NULL, 100000000000000001ULL, "consumer-01", 120),
	        "UPDATE `biz_message_event` SET event_status = 1, last_handle_time = NOW(), "
	        "version = version + 1, update_time = NOW() WHERE id = 100000000000000001 AND "
	        "event_status IN (0, 3) AND deleted = 0");
}
END_TEST

START_TEST(success_and_failure_are_the_documents)
{
	/* 标记发布成功: only the lock holder. */
	ASSERT_SQL(ev_simsql_succeed(EV_TABLE_OUTBOX, NULL, 7, "publisher-01"),
	           "UPDATE `biz_outbox_event` SET publish_status = 2, published_time = NOW(), "
	           "fail_reason = NULL, locked_by = NULL, lock_until = NULL, update_time = NOW() "
	           "WHERE id = 7 AND deleted = 0 AND publish_status = 1 AND locked_by = "
	           "'publisher-01'");
	/* 标记处理成功 */
	ASSERT_SQL(ev_simsql_succeed(EV_TABLE_MESSAGE, NULL, 7, "consumer-01"),
	           "UPDATE `biz_message_event` SET event_status = 2, success_time = NOW(), "
	           "fail_reason = NULL, update_time = NOW() WHERE id = 7 AND event_status = 1 AND "
	           "deleted = 0");
	/* 标记发布失败 */
	ASSERT_SQL(ev_simsql_fail(EV_TABLE_OUTBOX, NULL, 7, "publisher-02", 300, "发送MQ消息超时"),
	           "UPDATE `biz_outbox_event` SET publish_status = 3, retry_count = retry_count + "
	           "1, next_retry_time = DATE_ADD(NOW(), INTERVAL 300 SECOND), fail_reason = "
	           "'发送MQ消息超时', locked_by = NULL, lock_until = NULL, update_time = NOW() "
	           "WHERE id = 7 AND deleted = 0 AND publish_status = 1 AND locked_by = "
	           "'publisher-02' AND retry_count < max_retry_count");
	/* 标记处理失败 */
	ASSERT_SQL(ev_simsql_fail(EV_TABLE_MESSAGE, NULL, 7, "consumer-01", 60,
	                          "调用下游库存服务超时"),
	           "UPDATE `biz_message_event` SET event_status = 3, retry_count = retry_count + "
	           "1, next_retry_time = DATE_ADD(NOW(), INTERVAL 60 SECOND), fail_reason = "
	           "'调用下游库存服务超时', update_time = NOW() WHERE id = 7 AND event_status = 1 "
	           "AND retry_count < max_retry_count AND deleted = 0");
}
END_TEST

START_TEST(recovery_is_single_row)
{
	/* 恢复锁定超时事件, by id: never the document's unbounded UPDATE. */
	ASSERT_SQL(ev_simsql_recover(NULL, 9, 60, "发布器锁定超时，等待重新发布"),
	           "UPDATE `biz_outbox_event` SET publish_status = 3, retry_count = retry_count + "
	           "1, next_retry_time = DATE_ADD(NOW(), INTERVAL 60 SECOND), fail_reason = "
	           "'发布器锁定超时，等待重新发布', locked_by = NULL, lock_until = NULL, "
	           "update_time = NOW() WHERE id = 9 AND deleted = 0 AND publish_status = 1 AND "
	           "lock_until <= NOW()");
	/* 取消不再需要发布的事件 */
	ASSERT_SQL(ev_simsql_cancel(EV_TABLE_OUTBOX, NULL, 9, "业务已关闭，取消事件发布"),
	           "UPDATE `biz_outbox_event` SET publish_status = 4, fail_reason = "
	           "'业务已关闭，取消事件发布', locked_by = NULL, lock_until = NULL, update_time = "
	           "NOW() WHERE id = 9 AND deleted = 0 AND publish_status IN (0, 3)");
	/* 超过最大重试次数后停止重试 */
	ASSERT_SQL(ev_simsql_cancel(EV_TABLE_MESSAGE, NULL, 9, "超过最大重试次数，自动取消处理"),
	           "UPDATE `biz_message_event` SET event_status = 4, fail_reason = "
	           "'超过最大重试次数，自动取消处理', update_time = NOW() WHERE id = 9 AND "
	           "event_status = 3 AND retry_count >= max_retry_count AND deleted = 0");
}
END_TEST

START_TEST(candidate_queries_are_the_documents)
{
	/* 查询待发布事件 */
	ASSERT_SQL(ev_simsql_pending(EV_TABLE_OUTBOX, NULL, 100),
	           "SELECT id, event_no, aggregate_type, aggregate_id, event_type, event_version, "
	           "event_source, publish_channel, topic, routing_key, event_payload, "
	           "event_headers, retry_count, max_retry_count, trace_id, create_time FROM "
	           "`biz_outbox_event` WHERE deleted = 0 AND publish_status = 0 ORDER BY "
	           "create_time ASC LIMIT 100");
	/* 查询到期可重试事件 */
	ASSERT_SQL(ev_simsql_due(EV_TABLE_OUTBOX, NULL, 100),
	           "SELECT id, event_no, aggregate_type, aggregate_id, event_type, "
	           "publish_channel, topic, routing_key, event_payload, retry_count, "
	           "max_retry_count, next_retry_time, fail_reason FROM `biz_outbox_event` WHERE "
	           "deleted = 0 AND publish_status = 3 AND retry_count < max_retry_count AND "
	           "next_retry_time <= NOW() ORDER BY next_retry_time ASC LIMIT 100");
	/* 查询锁定超时事件 */
	ASSERT_SQL(ev_simsql_lock_expired(NULL, 100),
	           "SELECT id, event_no, aggregate_type, aggregate_id, event_type, publish_status, "
	           "locked_by, lock_until, last_publish_time, retry_count, fail_reason FROM "
	           "`biz_outbox_event` WHERE deleted = 0 AND publish_status = 1 AND lock_until <= "
	           "NOW() ORDER BY lock_until ASC LIMIT 100");
	/* 查询待处理消息 */
	ASSERT_SQL(ev_simsql_pending(EV_TABLE_MESSAGE, NULL, 100),
	           "SELECT id, event_no, event_type, biz_type, biz_id, event_source, "
	           "event_payload, retry_count, max_retry_count, trace_id, create_time FROM "
	           "`biz_message_event` WHERE deleted = 0 AND event_status = 0 ORDER BY "
	           "create_time ASC LIMIT 100");
	/* 查询到期可重试消息 */
	ASSERT_SQL(ev_simsql_due(EV_TABLE_MESSAGE, NULL, 100),
	           "SELECT id, event_no, event_type, biz_type, biz_id, event_payload, "
	           "retry_count, max_retry_count, next_retry_time, fail_reason FROM "
	           "`biz_message_event` WHERE deleted = 0 AND event_status = 3 AND retry_count < "
	           "max_retry_count AND next_retry_time <= NOW() ORDER BY next_retry_time ASC "
	           "LIMIT 100");
	/* 查询失败次数较多的消息 */
	ASSERT_SQL(ev_simsql_high_retry(NULL, 3, 100),
	           "SELECT id, event_no, event_type, biz_type, biz_id, retry_count, "
	           "max_retry_count, next_retry_time, fail_reason, update_time FROM "
	           "`biz_message_event` WHERE deleted = 0 AND event_status = 3 AND retry_count >= "
	           "3 ORDER BY update_time DESC LIMIT 100");
}
END_TEST

START_TEST(inserts_are_the_documents)
{
	struct ev_sim_row r;
	memset(&r, 0, sizeof(r));
	r.id = 200000000000000001ULL;
	r.event_no = "OUTBOX_ORDER_CREATED_100000000000000001";
	r.event_type = "ORDER_CREATED";
	r.biz_type = "ORDER";
	r.biz_id = "100000000000000001";
	r.source = "order-service";
	r.channel = "MQ";
	r.topic = "order.event";
	r.routing_key = "order.created";
	r.payload = "{\"orderId\": 100000000000000001, \"orderAmount\": 199.00}";
	r.headers = "{\"tenantId\": \"default\", \"source\": \"order-service\"}";
	r.trace_id = "trace-202605130001";
	r.max_retry_count = 5;
	/* 在业务事务中写入 Outbox 事件 */
	ASSERT_SQL(ev_simsql_insert(EV_TABLE_OUTBOX, NULL, &r),
	           "INSERT INTO `biz_outbox_event` (id, event_no, aggregate_type, aggregate_id, "
	           "event_type, event_version, event_source, publish_channel, topic, routing_key, "
	           "event_payload, event_headers, publish_status, retry_count, max_retry_count, "
	           "trace_id, create_time, update_time) VALUES (200000000000000001, "
	           "'OUTBOX_ORDER_CREATED_100000000000000001', 'ORDER', '100000000000000001', "
	           "'ORDER_CREATED', 1, 'order-service', 'MQ', 'order.event', 'order.created', "
	           "'{\"orderId\": 100000000000000001, \"orderAmount\": 199.00}', '{\"tenantId\": "
	           "\"default\", \"source\": \"order-service\"}', 0, 0, 5, 'trace-202605130001', "
	           "NOW(), NOW())");
	/* 创建消息事件 */
	r.id = 100000000000000001ULL;
	r.event_no = "EVT202605130001";
	r.biz_id = "ORDER202605130001";
	r.payload = "{\"orderId\": \"ORDER202605130001\"}";
	r.max_retry_count = 3;
	ASSERT_SQL(ev_simsql_insert(EV_TABLE_MESSAGE, "my_events", &r),
	           "INSERT INTO `my_events` (id, event_no, event_type, biz_type, biz_id, "
	           "event_source, event_payload, event_status, retry_count, max_retry_count, "
	           "trace_id, create_time, update_time) VALUES (100000000000000001, "
	           "'EVT202605130001', 'ORDER_CREATED', 'ORDER', 'ORDER202605130001', "
	           "'order-service', '{\"orderId\": \"ORDER202605130001\"}', 0, 0, 3, "
	           "'trace-202605130001', NOW(), NOW())");
}
END_TEST

START_TEST(history_rows)
{
	struct ev_sim_row r[2];
	memset(r, 0, sizeof(r));
	for (int i = 0; i < 2; i++) {
		r[i].id = 10 + (unsigned)i;
		r[i].event_no = i ? "E2" : "E1";
		r[i].event_type = "PAY_SUCCESS";
		r[i].biz_type = "PAYMENT";
		r[i].biz_id = "PAY1";
		r[i].source = "payment-service";
		r[i].channel = "MQ";
		r[i].topic = "pay.event";
		r[i].routing_key = "pay.success";
		r[i].payload = "{}";
		r[i].trace_id = "t";
		r[i].max_retry_count = 5;
	}
	/* A stuck row: processing, locked, lock expired. */
	r[0].status = 1;
	r[0].version = 1;
	r[0].locked_by = "publisher-01";
	r[0].has_lock_until = r[0].has_attempt = true;
	r[0].attempt_s = -200;
	r[0].lock_until_s = -80;
	r[0].create_s = -202;
	r[0].update_s = -200;
	/* A failed one waiting for its retry. */
	r[1].status = 3;
	r[1].retry_count = 1;
	r[1].version = 1;
	r[1].fail_reason = "发送MQ消息超时";
	r[1].has_next_retry = r[1].has_attempt = true;
	r[1].next_retry_s = 30;
	r[1].attempt_s = -30;
	r[1].create_s = -31;
	r[1].update_s = -30;
	ASSERT_SQL(
	        ev_simsql_history(EV_TABLE_OUTBOX, NULL, r, 2),
	        "INSERT INTO `biz_outbox_event` (id, event_no, aggregate_type, aggregate_id, "
	        "event_type, event_version, event_source, publish_channel, topic, routing_key, "
	        "event_payload, event_headers, publish_status, retry_count, max_retry_count, "
	        "next_retry_time, locked_by, lock_until, last_publish_time, published_time, "
	        "fail_reason, trace_id, version, create_time, update_time) VALUES (10, 'E1', "
	        "'PAYMENT', 'PAY1', 'PAY_SUCCESS', 1, 'payment-service', 'MQ', 'pay.event', "
	        "'pay.success', '{}', '{}', 1, 0, 5, NULL, 'publisher-01', DATE_ADD(NOW(), "
	        "INTERVAL -80 SECOND), DATE_ADD(NOW(), INTERVAL -200 SECOND), NULL, NULL, 't', "
	        "1, DATE_ADD(NOW(), INTERVAL -202 SECOND), DATE_ADD(NOW(), INTERVAL -200 "
	        "SECOND)), (11, 'E2', 'PAYMENT', 'PAY1', 'PAY_SUCCESS', 1, 'payment-service', "
	        "'MQ', 'pay.event', 'pay.success', '{}', '{}', 3, 1, 5, DATE_ADD(NOW(), "
	        "INTERVAL 30 SECOND), NULL, NULL, DATE_ADD(NOW(), INTERVAL -30 SECOND), NULL, "
	        "'发送MQ消息超时', 't', 1, DATE_ADD(NOW(), INTERVAL -31 SECOND), DATE_ADD(NOW(), "
	        "INTERVAL -30 SECOND))");
	struct ev_query *q = ev_simsql_history(EV_TABLE_MESSAGE, NULL, r, 2);
	ck_assert_ptr_nonnull(strstr(q->sql, "(id, event_no, event_type, biz_type, biz_id, "
	                                     "event_source, event_payload, event_status, "
	                                     "retry_count, max_retry_count, next_retry_time, "
	                                     "last_handle_time, success_time, fail_reason, "
	                                     "trace_id, version, create_time, update_time)"));
	ck_assert_ptr_null(strstr(q->sql, "locked_by"));
	ev_query_free(&q);
}
END_TEST

START_TEST(backoff)
{
	/* 1 min, 5 min, 30 min, then 2 h; scaled; never under a second. */
	ck_assert_int_eq(ev_simsql_backoff_s(0, 1), 60);
	ck_assert_int_eq(ev_simsql_backoff_s(1, 1), 300);
	ck_assert_int_eq(ev_simsql_backoff_s(2, 1), 1800);
	ck_assert_int_eq(ev_simsql_backoff_s(3, 1), 7200);
	ck_assert_int_eq(ev_simsql_backoff_s(9, 1), 7200);
	ck_assert_int_eq(ev_simsql_backoff_s(-1, 1), 60);
	ck_assert_int_eq(ev_simsql_backoff_s(1, 60), 5);
	ck_assert_int_eq(ev_simsql_backoff_s(3, 60), 120);
	ck_assert_int_eq(ev_simsql_backoff_s(0, 600), 1);
	ck_assert_int_eq(ev_simsql_backoff_s(0, 0.5), 60);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("simsql");
	TCase *tc = tcase_create("simsql");
	tcase_add_test(tc, claim_is_the_documents);
	tcase_add_test(tc, success_and_failure_are_the_documents);
	tcase_add_test(tc, recovery_is_single_row);
	tcase_add_test(tc, candidate_queries_are_the_documents);
	tcase_add_test(tc, inserts_are_the_documents);
	tcase_add_test(tc, history_rows);
	tcase_add_test(tc, backoff);
	suite_add_tcase(s, tc);
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? 0 : 1;
}
