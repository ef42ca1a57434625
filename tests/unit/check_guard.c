/* core/guard and core/auditlog: the exact SQL and parameters of every action on every table,
 * the refusals, fail_reason and its 1000-character cut, protected tokens, the one more attempt
 * of an exhausted retry, the row and its read-back, the audit record (JSON line and INSERT),
 * and the local audit file. */
#include <config.h>

#include "core/auditlog.h"
#include "core/guard.h"
#include "core/text.h"

#include <check.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The row's strings are the caller's to free in the library; the tests point them at
 * literals and never free them. */
#define S(x) ((char *)(x))

static char *tokens[] = {S("PAY"), S("REFUND"), S("STOCK"), S("INVENTORY"), NULL};

static struct ev_guard_row failed_row(void)
{
	struct ev_guard_row r = {
	        .id = 18446744073709551615ULL,
	        .event_no = S("OB-1"),
	        .status = 3,
	        .retry_count = 2,
	        .max_retry_count = 5,
	        .next_retry_time = S("2026-06-01 11:00:00"),
	        .version = 7,
	        .deleted = 0,
	        .event_type = S("ORDER_CREATED"),
	        .biz_type = S("ORDER"),
	};
	return r;
}

static struct ev_guard_req request(enum ev_table_kind t, enum ev_action a,
                                   const struct ev_guard_row *row)
{
	struct ev_guard_req req = {
	        .table = t,
	        .action = a,
	        .row = row,
	        .schedule_delay_s = 30,
	        .stuck_threshold_s = 600,
	        .recover_message = true,
	        .protected_types = tokens,
	};
	return req;
}

static void build_ok(const struct ev_guard_req *req, struct ev_guard *g)
{
	struct ev_error err = {0};
	ck_assert_msg(ev_guard_build(req, g, &err) == 0, "refused: %s", err.msg);
}

static int build_refused(const struct ev_guard_req *req, struct ev_error *err)
{
	struct ev_guard g;
	ck_assert_int_eq(ev_guard_build(req, &g, err), -1);
	ck_assert_ptr_null(g.update);
	return err->code;
}

/* The id and version as seen are always the params after the SET's. */
static void assert_guard_params(const struct ev_query *q, size_t first)
{
	ck_assert_int_eq(q->params[first].type, EV_P_UINT);
	ck_assert_uint_eq(q->params[first].u, 18446744073709551615ULL);
	ck_assert_int_eq(q->params[first + 1].type, EV_P_INT);
	ck_assert_int_eq(q->params[first + 1].i, 7);
}

START_TEST(retry_now_exact_sql_both_tables)
{
	struct ev_guard_row row = failed_row();
	struct ev_guard_req req = request(EV_TABLE_OUTBOX, EV_ACTION_RETRY_NOW, &row);
	struct ev_guard g;
	build_ok(&req, &g);
	ck_assert_str_eq(g.update->sql,
	                 "/* evtop:action.retry_now */ UPDATE `biz_outbox_event` SET "
	                 "publish_status = 0, next_retry_time = NULL, max_retry_count = "
	                 "GREATEST(max_retry_count, retry_count + 1), version = version + 1, "
	                 "update_time = NOW() WHERE id = ? AND deleted = 0 AND version = ? AND "
	                 "publish_status = 3");
	ck_assert_uint_eq(g.update->nparams, 2);
	assert_guard_params(g.update, 0);
	ck_assert_int_eq(g.from_status, 3);
	ck_assert_int_eq(g.to_status, 0);
	ck_assert_ptr_null(g.fail_reason);
	ck_assert(!g.grants_attempt);
	ck_assert_ptr_null(g.notice);
	ck_assert_str_eq(g.change,
	                 "publish_status 3 (failed) -> 0 (pending), next_retry_time "
	                 "2026-06-01 11:00:00 -> NULL, max_retry_count stays 5, version 7 "
	                 "-> 8, update_time -> NOW()");
	char *text = ev_query_render(g.update);
	ck_assert_ptr_nonnull(strstr(text, "WHERE id = 18446744073709551615 AND deleted = 0 AND "
	                                   "version = 7 AND publish_status = 3"));
	free(text);
	ev_guard_clear(&g);
	ck_assert_ptr_null(g.update);

	req = request(EV_TABLE_MESSAGE, EV_ACTION_RETRY_NOW, &row);
	req.table_name = "my_events";
	build_ok(&req, &g);
	ck_assert_str_eq(g.update->sql,
	                 "/* evtop:action.retry_now */ UPDATE `my_events` SET event_status = 0, "
	                 "next_retry_time = NULL, max_retry_count = GREATEST(max_retry_count, "
	                 "retry_count + 1), version = version + 1, update_time = NOW() WHERE id "
	                 "= ? AND deleted = 0 AND version = ? AND event_status = 3");
	ck_assert_uint_eq(g.update->nparams, 2);
	assert_guard_params(g.update, 0);
	ev_guard_clear(&g);
}
END_TEST

START_TEST(retry_schedule_exact_sql_both_tables)
{
	struct ev_guard_row row = failed_row();
	struct ev_guard_req req = request(EV_TABLE_OUTBOX, EV_ACTION_RETRY_SCHEDULE, &row);
	struct ev_guard g;
	build_ok(&req, &g);
	ck_assert_str_eq(g.update->sql,
	                 "/* evtop:action.retry_schedule */ UPDATE `biz_outbox_event` SET "
	                 "next_retry_time = NOW() + INTERVAL ? SECOND, max_retry_count = "
	                 "GREATEST(max_retry_count, retry_count + 1), version = version + 1, "
	                 "update_time = NOW() WHERE id = ? AND deleted = 0 AND version = ? AND "
	                 "publish_status = 3");
	ck_assert_uint_eq(g.update->nparams, 3);
	ck_assert_int_eq(g.update->params[0].type, EV_P_INT);
	ck_assert_int_eq(g.update->params[0].i, 30);
	assert_guard_params(g.update, 1);
	ck_assert_int_eq(g.to_status, 3);
	ev_guard_clear(&g);

	req = request(EV_TABLE_MESSAGE, EV_ACTION_RETRY_SCHEDULE, &row);
	req.schedule_delay_s = 0;
	build_ok(&req, &g);
	ck_assert_str_eq(g.update->sql,
	                 "/* evtop:action.retry_schedule */ UPDATE `biz_message_event` SET "
	                 "next_retry_time = NOW() + INTERVAL ? SECOND, max_retry_count = "
	                 "GREATEST(max_retry_count, retry_count + 1), version = version + 1, "
	                 "update_time = NOW() WHERE id = ? AND deleted = 0 AND version = ? AND "
	                 "event_status = 3");
	ck_assert_int_eq(g.update->params[0].i, 0);
	assert_guard_params(g.update, 1);
	ck_assert_ptr_nonnull(strstr(g.change, "event_status stays 3 (failed)"));
	ev_guard_clear(&g);
}
END_TEST

START_TEST(cancel_exact_sql_both_tables)
{
	struct ev_guard_row row = failed_row();
	row.status = 0;
	struct ev_guard_req req = request(EV_TABLE_OUTBOX, EV_ACTION_CANCEL, &row);
	req.reason = "订单已退款 INC-42";
	struct ev_guard g;
	build_ok(&req, &g);
	ck_assert_str_eq(g.update->sql,
	                 "/* evtop:action.cancel */ UPDATE `biz_outbox_event` SET publish_status "
	                 "= 4, fail_reason = ?, locked_by = NULL, lock_until = NULL, version = "
	                 "version + 1, update_time = NOW() WHERE id = ? AND deleted = 0 AND "
	                 "version = ? AND publish_status IN (0, 3)");
	ck_assert_uint_eq(g.update->nparams, 3);
	ck_assert_int_eq(g.update->params[0].type, EV_P_TEXT);
	ck_assert_str_eq(g.update->params[0].s, "业务已关闭，取消事件发布：订单已退款 INC-42");
	assert_guard_params(g.update, 1);
	ck_assert_str_eq(g.fail_reason, "业务已关闭，取消事件发布：订单已退款 INC-42");
	ck_assert_str_eq(g.audit_reason, g.fail_reason);
	ck_assert_int_eq(g.to_status, 4);
	ck_assert_ptr_nonnull(strstr(g.change, ", locked_by stays NULL, lock_until stays NULL, "));
	ev_guard_clear(&g);

	row.status = 3;
	req = request(EV_TABLE_MESSAGE, EV_ACTION_CANCEL, &row);
	req.reason = "dead";
	build_ok(&req, &g);
	ck_assert_str_eq(g.update->sql,
	                 "/* evtop:action.cancel */ UPDATE `biz_message_event` SET event_status "
	                 "= 4, fail_reason = ?, version = version + 1, update_time = NOW() WHERE "
	                 "id = ? AND deleted = 0 AND version = ? AND event_status IN (0, 3)");
	ck_assert_str_eq(g.update->params[0].s, "业务已关闭，取消事件处理：dead");
	assert_guard_params(g.update, 1);
	ev_guard_clear(&g);
}
END_TEST

START_TEST(recover_exact_sql_both_tables)
{
	struct ev_guard_row row = failed_row();
	row.status = 1;
	row.locked_by = S("publisher-01");
	row.lock_until = S("2026-06-01 11:58:00");
	struct ev_guard_req req = request(EV_TABLE_OUTBOX, EV_ACTION_RECOVER, &row);
	struct ev_guard g;
	build_ok(&req, &g);
	ck_assert_str_eq(g.update->sql,
	                 "/* evtop:action.recover */ UPDATE `biz_outbox_event` SET publish_status "
	                 "= 3, retry_count = retry_count + 1, next_retry_time = NOW() + INTERVAL "
	                 "1 MINUTE, fail_reason = ?, locked_by = NULL, lock_until = NULL, version "
	                 "= version + 1, update_time = NOW() WHERE id = ? AND deleted = 0 AND "
	                 "version = ? AND publish_status = 1 AND lock_until <= NOW()");
	ck_assert_uint_eq(g.update->nparams, 3);
	ck_assert_str_eq(g.update->params[0].s, "发布器锁定超时，等待重新发布");
	assert_guard_params(g.update, 1);
	ck_assert_int_eq(g.to_status, 3);
	ck_assert_ptr_null(g.notice);
	ck_assert_str_eq(g.change, "publish_status 1 (publishing) -> 3 (failed), retry_count 2 -> "
	                           "3, next_retry_time 2026-06-01 11:00:00 -> NOW() + 1 minute, "
	                           "fail_reason -> '发布器锁定超时，等待重新发布', locked_by "
	                           "publisher-01 -> NULL, lock_until 2026-06-01 11:58:00 -> NULL, "
	                           "version 7 -> 8, update_time -> NOW()");
	ev_guard_clear(&g);

	row.locked_by = NULL;
	row.lock_until = NULL;
	row.last_handle_time = S("2026-06-01 11:40:00");
	req = request(EV_TABLE_MESSAGE, EV_ACTION_RECOVER, &row);
	req.reason = "consumer pod killed";
	req.stuck_threshold_s = 900;
	build_ok(&req, &g);
	ck_assert_str_eq(g.update->sql,
	                 "/* evtop:action.recover */ UPDATE `biz_message_event` SET event_status "
	                 "= 3, retry_count = retry_count + 1, next_retry_time = NOW() + INTERVAL "
	                 "1 MINUTE, fail_reason = ?, version = version + 1, update_time = NOW() "
	                 "WHERE id = ? AND deleted = 0 AND version = ? AND event_status = 1 AND "
	                 "last_handle_time <= NOW() - INTERVAL ? SECOND");
	ck_assert_uint_eq(g.update->nparams, 4);
	ck_assert_str_eq(g.update->params[0].s,
	                 "消费者处理超时，等待重新处理：consumer pod killed");
	assert_guard_params(g.update, 1);
	ck_assert_int_eq(g.update->params[3].type, EV_P_INT);
	ck_assert_int_eq(g.update->params[3].i, 900);
	/* The dialog shows the risk and last_handle_time. */
	ck_assert_ptr_nonnull(g.notice);
	ck_assert_ptr_nonnull(strstr(g.notice, "handled twice"));
	ck_assert_ptr_nonnull(strstr(g.notice, "2026-06-01 11:40:00"));
	ev_guard_clear(&g);
}
END_TEST

START_TEST(every_built_transition_is_in_the_model)
{
	static const enum ev_action acts[] = {EV_ACTION_RETRY_NOW, EV_ACTION_RETRY_SCHEDULE,
	                                      EV_ACTION_CANCEL, EV_ACTION_RECOVER};
	int built = 0;
	for (int t = 0; t < EV_TABLE_COUNT; t++)
		for (size_t a = 0; a < 4; a++)
			for (int st = 0; st < EV_ST_COUNT; st++) {
				struct ev_guard_row row = failed_row();
				row.status = st;
				row.last_handle_time = S("2026-06-01 11:00:00");
				struct ev_guard_req req =
				        request((enum ev_table_kind)t, acts[a], &row);
				req.reason = "r";
				struct ev_guard g;
				struct ev_error err = {0};
				if (ev_guard_build(&req, &g, &err) < 0) {
					ck_assert(!ev_action_allows(acts[a], (enum ev_table_kind)t,
					                            st, 0) &&
					          !ev_action_allows(acts[a], (enum ev_table_kind)t,
					                            st, 3) &&
					          !ev_action_allows(acts[a], (enum ev_table_kind)t,
					                            st, 4));
					continue;
				}
				ck_assert(ev_action_allows(acts[a], (enum ev_table_kind)t,
				                           g.from_status, g.to_status));
				ck_assert(ev_action_actor(acts[a]) == EV_ACTOR_OPERATOR);
				/* Every operator write bumps the version and the update time. */
				ck_assert_ptr_nonnull(strstr(
				        g.update->sql, "version = version + 1, update_time = "
				                       "NOW() WHERE id = ? AND deleted = 0 AND "
				                       "version = ? AND "));
				built++;
				ev_guard_clear(&g);
			}
	/* retry x2 from 3, cancel from 0 and 3, recover from 1: per table 5, both 10. */
	ck_assert_int_eq(built, 10);
}
END_TEST

START_TEST(refusals_say_why)
{
	struct ev_guard_row row = failed_row();
	struct ev_guard_req req;
	struct ev_error err = {0};

	/* Wrong status, by name. */
	row.status = 0;
	req = request(EV_TABLE_OUTBOX, EV_ACTION_RETRY_NOW, &row);
	ck_assert_int_eq(build_refused(&req, &err), EV_GUARD_REFUSED_STATUS);
	ck_assert_str_eq(err.msg, "cannot retry now event OB-1: it is pending (0, 待发布); "
	                          "retry_now needs failed (3)");
	row.status = 1;
	req = request(EV_TABLE_MESSAGE, EV_ACTION_CANCEL, &row);
	req.reason = "x";
	ck_assert_int_eq(build_refused(&req, &err), EV_GUARD_REFUSED_STATUS);
	ck_assert_str_eq(err.msg, "cannot cancel event OB-1: it is processing (1, 处理中); cancel "
	                          "needs pending (0) or failed (3)");
	row.status = 3;
	req = request(EV_TABLE_OUTBOX, EV_ACTION_RECOVER, &row);
	ck_assert_int_eq(build_refused(&req, &err), EV_GUARD_REFUSED_STATUS);
	ck_assert_ptr_nonnull(strstr(err.msg, "recover needs publishing (1)"));

	/* Cancelled and succeeded are final. */
	row.status = 4;
	req = request(EV_TABLE_OUTBOX, EV_ACTION_CANCEL, &row);
	req.reason = "x";
	ck_assert_int_eq(build_refused(&req, &err), EV_GUARD_REFUSED_FINAL);
	ck_assert_str_eq(err.msg, "cannot cancel event OB-1: it is cancelled (4, 已取消), and "
	                          "cancelled is final: evtop never changes it");
	row.status = 2;
	req = request(EV_TABLE_MESSAGE, EV_ACTION_RETRY_NOW, &row);
	ck_assert_int_eq(build_refused(&req, &err), EV_GUARD_REFUSED_FINAL);
	ck_assert_ptr_nonnull(strstr(err.msg, "succeeded (2, 处理成功)"));

	/* Deleted rows, whatever their status. */
	row = failed_row();
	row.deleted = 1;
	req = request(EV_TABLE_OUTBOX, EV_ACTION_RETRY_NOW, &row);
	ck_assert_int_eq(build_refused(&req, &err), EV_GUARD_REFUSED_DELETED);
	ck_assert_ptr_nonnull(strstr(err.msg, "it is deleted"));

	/* Message recover off. */
	row = failed_row();
	row.status = 1;
	req = request(EV_TABLE_MESSAGE, EV_ACTION_RECOVER, &row);
	req.recover_message = false;
	ck_assert_int_eq(build_refused(&req, &err), EV_GUARD_REFUSED_RECOVER_OFF);
	ck_assert_ptr_nonnull(strstr(err.msg, "not enabled"));
	ck_assert_ptr_nonnull(strstr(err.msg, "--enable-message-recover"));
	/* ... while the outbox's needs no switch. */
	req = request(EV_TABLE_OUTBOX, EV_ACTION_RECOVER, &row);
	req.recover_message = false;
	struct ev_guard g;
	build_ok(&req, &g);
	ev_guard_clear(&g);

	/* Protected without confirmation; then confirmed. */
	row = failed_row();
	row.event_type = S("PAY_SUCCESS");
	req = request(EV_TABLE_OUTBOX, EV_ACTION_RETRY_NOW, &row);
	ck_assert_int_eq(build_refused(&req, &err), EV_GUARD_REFUSED_PROTECTED);
	ck_assert_ptr_nonnull(strstr(err.msg, "protected type"));
	ck_assert_ptr_nonnull(strstr(err.msg, "token PAY"));
	req.confirmed_protected = true;
	build_ok(&req, &g);
	ck_assert_str_eq(g.protected_token, "PAY");
	ev_guard_clear(&g);

	/* Cancel needs a reason; a reason must be UTF-8. */
	row = failed_row();
	req = request(EV_TABLE_OUTBOX, EV_ACTION_CANCEL, &row);
	ck_assert_int_eq(build_refused(&req, &err), EV_GUARD_REFUSED_REASON);
	req.reason = "";
	ck_assert_int_eq(build_refused(&req, &err), EV_GUARD_REFUSED_REASON);
	req.reason = "bad \xff byte";
	ck_assert_int_eq(build_refused(&req, &err), EV_GUARD_REFUSED_REASON);
	ck_assert_ptr_nonnull(strstr(err.msg, "UTF-8"));
	/* ... and one line of printable text: no C0, DEL or C1 control, for any action. */
	req.reason = "dup\x1b[31m";
	ck_assert_int_eq(build_refused(&req, &err), EV_GUARD_REFUSED_REASON);
	ck_assert_str_eq(err.msg,
	                 "the reason holds ESC (U+001B, character 4): a reason is one line "
	                 "of printable text, written into fail_reason and the audit as "
	                 "typed");
	req = request(EV_TABLE_OUTBOX, EV_ACTION_RETRY_NOW, &row);
	req.reason = "a\tb";
	ck_assert_int_eq(build_refused(&req, &err), EV_GUARD_REFUSED_REASON);
	ck_assert_ptr_nonnull(strstr(err.msg, "a tab (U+0009, character 2)"));

	/* Not an operator action; a table name that is not an identifier. */
	req = request(EV_TABLE_OUTBOX, EV_ACTION_CLAIM, &row);
	ck_assert_int_eq(build_refused(&req, &err), EV_GUARD_REFUSED_BAD_REQUEST);
	req = request(EV_TABLE_OUTBOX, EV_ACTION_RETRY_NOW, &row);
	req.table_name = "x`; DROP TABLE y";
	ck_assert_int_eq(build_refused(&req, &err), EV_GUARD_REFUSED_BAD_REQUEST);
}
END_TEST

START_TEST(exhausted_retry_grants_one_more_attempt)
{
	struct ev_guard_row row = failed_row();
	row.retry_count = 5;
	row.max_retry_count = 5;
	struct ev_guard_req req = request(EV_TABLE_OUTBOX, EV_ACTION_RETRY_NOW, &row);
	struct ev_guard g;
	build_ok(&req, &g);
	ck_assert(g.grants_attempt);
	ck_assert_ptr_nonnull(g.notice);
	ck_assert_ptr_nonnull(strstr(g.notice, "exactly one more attempt"));
	ck_assert_ptr_nonnull(strstr(g.notice, "max_retry_count 5 -> 6"));
	ck_assert_ptr_nonnull(strstr(g.change, "max_retry_count 5 -> 6"));
	ev_guard_clear(&g);

	/* Past the maximum (a lowered max_retry_count): still exactly one more. */
	row.retry_count = 9;
	req = request(EV_TABLE_MESSAGE, EV_ACTION_RETRY_SCHEDULE, &row);
	build_ok(&req, &g);
	ck_assert(g.grants_attempt);
	ck_assert_ptr_nonnull(strstr(g.change, "max_retry_count 5 -> 10"));
	ev_guard_clear(&g);

	/* With retries left, nothing is granted. */
	row.retry_count = 4;
	build_ok(&req, &g);
	ck_assert(!g.grants_attempt);
	ck_assert_ptr_null(g.notice);
	ev_guard_clear(&g);
}
END_TEST

static size_t code_points(const char *s)
{
	size_t n = 0;
	for (; *s; s++)
		n += ((unsigned char)*s & 0xC0) != 0x80;
	return n;
}

START_TEST(fail_reason_composed_and_cut_to_1000_characters)
{
	/* The model's text alone without a reason. */
	char *r = ev_guard_compose_reason(ev_guard_model_text(EV_TABLE_OUTBOX, EV_ACTION_RECOVER),
	                                  NULL);
	ck_assert_str_eq(r, "发布器锁定超时，等待重新发布");
	free(r);
	r = ev_guard_compose_reason("业务已关闭，取消事件发布", "");
	ck_assert_str_eq(r, "业务已关闭，取消事件发布");
	free(r);
	ck_assert_ptr_null(ev_guard_model_text(EV_TABLE_OUTBOX, EV_ACTION_RETRY_NOW));

	/* 2000 CJK characters: cut to 1000 code points (12 + 1 + 987), 3 bytes each. */
	char big[6001];
	for (int i = 0; i < 2000; i++)
		memcpy(big + 3 * i, "中", 3);
	big[6000] = '\0';
	r = ev_guard_compose_reason("业务已关闭，取消事件发布", big);
	ck_assert_uint_eq(code_points(r), 1000);
	ck_assert_uint_eq(strlen(r), 3000);
	ck_assert(ev_guard_utf8_valid(r));
	ck_assert_str_eq(r + strlen(r) - 3, "中");
	free(r);

	/* A 4-byte emoji straddling the limit is dropped whole, never split. */
	struct ev_buf b;
	ev_buf_init(&b);
	for (int i = 0; i < 986; i++)
		ev_buf_addc(&b, 'a');
	ev_buf_adds(&b, "😀😀");
	r = ev_guard_compose_reason("发布器锁定超时，等待重新发布", b.data);
	/* 14 + 1 + 986 = 1001 before the emoji: the cut ends inside the ASCII. */
	ck_assert_uint_eq(code_points(r), 1000);
	ck_assert(ev_guard_utf8_valid(r));
	ck_assert_ptr_null(strstr(r, "\xF0"));
	free(r);
	ev_buf_free(&b);
	ev_buf_init(&b);
	for (int i = 0; i < 984; i++)
		ev_buf_addc(&b, 'a');
	ev_buf_adds(&b, "😀😀");
	r = ev_guard_compose_reason("发布器锁定超时，等待重新发布", b.data);
	/* 15 + 984 = 999, then one emoji fits and the second does not. */
	ck_assert_uint_eq(code_points(r), 1000);
	ck_assert_str_eq(r + strlen(r) - 4, "😀");
	free(r);
	ev_buf_free(&b);

	/* The cut itself. */
	r = ev_guard_cut_chars("中文ab", 3);
	ck_assert_str_eq(r, "中文a");
	free(r);
	r = ev_guard_cut_chars("ab", 10);
	ck_assert_str_eq(r, "ab");
	free(r);
	ck_assert(ev_guard_utf8_valid("中文 😀 \xEF\xBF\xBD"));
	ck_assert(!ev_guard_utf8_valid("\xC0\xAF"));     /* overlong */
	ck_assert(!ev_guard_utf8_valid("\xED\xA0\x80")); /* surrogate */
	ck_assert(!ev_guard_utf8_valid("abc\xE4\xB8"));  /* truncated */

	/* A reason: printable UTF-8, or nothing. */
	struct ev_error rerr = {0};
	ck_assert_int_eq(ev_guard_reason_check(NULL, &rerr), 0);
	ck_assert_int_eq(ev_guard_reason_check("", &rerr), 0);
	ck_assert_int_eq(ev_guard_reason_check("客户取消 (INC-7) 😀 \xEF\xBF\xBD ~", &rerr), 0);
	static const struct {
		const char *s, *what;
	} bad[] = {
	        {"a\x1b", "ESC (U+001B, character 2)"},
	        {"\x07", "BEL (U+0007, character 1)"},
	        {"two\nlines", "a newline (U+000A, character 4)"},
	        {"a\tb", "a tab (U+0009, character 2)"},
	        {"cr\r", "a carriage return (U+000D, character 3)"},
	        {"\x7f", "DEL (U+007F, character 1)"},
	        {"中\x01", "a control character (U+0001, character 2)"},
	        {"8-bit CSI \xC2\x9B", "a control character (U+009B, character 11)"},
	        {"\xC2\x80", "a control character (U+0080, character 1)"},
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		ev_error_clear(&rerr);
		ck_assert_int_eq(ev_guard_reason_check(bad[i].s, &rerr), -1);
		ck_assert_int_eq(rerr.code, EV_GUARD_REFUSED_REASON);
		ck_assert_msg(strstr(rerr.msg, bad[i].what) != NULL, "%zu: %s", i, rerr.msg);
	}
	ck_assert_int_eq(ev_guard_reason_check("\xC2\xA0 nbsp is text", &rerr), 0);
	ck_assert_int_eq(ev_guard_reason_check("bad \xff", &rerr), -1);
	ck_assert_ptr_nonnull(strstr(rerr.msg, "UTF-8"));

	/* Retries carry the operator's reason to the audit only, also cut. */
	struct ev_guard_row row = failed_row();
	struct ev_guard_req req = request(EV_TABLE_OUTBOX, EV_ACTION_RETRY_NOW, &row);
	req.reason = big;
	struct ev_guard g;
	build_ok(&req, &g);
	ck_assert_ptr_null(g.fail_reason);
	ck_assert_uint_eq(code_points(g.audit_reason), 1000);
	ev_guard_clear(&g);
}
END_TEST

START_TEST(protected_tokens_are_whole_words)
{
	ck_assert_str_eq(ev_guard_protected_token("PAY_SUCCESS", "ORDER", tokens), "PAY");
	ck_assert_str_eq(ev_guard_protected_token("REFUND_FINISHED", "ORDER", tokens), "REFUND");
	ck_assert_ptr_null(ev_guard_protected_token("ORDER_CREATED", "PAYMENT", tokens));
	ck_assert_ptr_null(ev_guard_protected_token("PAYMENT_DONE", "ORDER", tokens));
	ck_assert_ptr_null(ev_guard_protected_token("PAYPAL", "PREPAY", tokens));
	ck_assert_str_eq(ev_guard_protected_token("pay_success", "order", tokens), "PAY");
	ck_assert_str_eq(ev_guard_protected_token("ORDER_CREATED", "STOCK", tokens), "STOCK");
	ck_assert_str_eq(ev_guard_protected_token("ORDER_PAY", "X", tokens), "PAY");
	ck_assert_str_eq(ev_guard_protected_token("A_INVENTORY_B", "X", tokens), "INVENTORY");
	ck_assert_str_eq(ev_guard_protected_token("X__PAY_", "X", tokens), "PAY");
	ck_assert_ptr_null(ev_guard_protected_token(NULL, NULL, tokens));
	ck_assert_ptr_null(ev_guard_protected_token("PAY", "PAY", NULL));
	char *none[] = {NULL};
	ck_assert_ptr_null(ev_guard_protected_token("PAY", "PAY", none));
}
END_TEST

START_TEST(row_query_and_read_back)
{
	struct ev_query *q = ev_guard_query_row(EV_TABLE_OUTBOX, NULL, 42);
	ck_assert_str_eq(q->sql,
	                 "/* evtop:action.row */ SELECT id, event_no, event_type, "
	                 "aggregate_type, publish_status, retry_count, max_retry_count, "
	                 "next_retry_time, locked_by, lock_until, fail_reason, version, "
	                 "deleted, update_time, NOW() FROM `biz_outbox_event` WHERE id = ?");
	ck_assert_uint_eq(q->nparams, 1);
	ck_assert_uint_eq(q->params[0].u, 42);
	ck_assert_uint_eq(q->ncols, 15);
	ck_assert_str_eq(q->col_names[14], "db_now");
	ev_query_free(&q);
	q = ev_guard_query_row_by_no(EV_TABLE_MESSAGE, "t1", "E'1");
	ck_assert_str_eq(q->sql,
	                 "/* evtop:action.row_by_no */ SELECT id, event_no, event_type, "
	                 "biz_type, event_status, retry_count, max_retry_count, "
	                 "next_retry_time, last_handle_time, fail_reason, version, deleted, "
	                 "update_time, NOW() FROM `t1` WHERE event_no = ? LIMIT 2");
	ck_assert_str_eq(q->params[0].s, "E'1");

	/* A result of it, as the server sends text. */
	struct ev_rowset *rs = ev_rowset_new(q->ncols, q->col_names, q->col_types);
	static const char *const vals[] = {"18446744073709551615",
	                                   "E'1",
	                                   "PAY_SUCCESS",
	                                   "PAYMENT",
	                                   "1",
	                                   "2",
	                                   "3",
	                                   NULL,
	                                   "2026-06-01 11:40:00",
	                                   NULL,
	                                   "8",
	                                   "0",
	                                   "2026-06-01 11:40:00",
	                                   "2026-06-01 12:00:00"};
	struct ev_cell *cells = ev_rowset_add_row(rs);
	for (size_t i = 0; i < q->ncols; i++)
		ev_cell_set(&cells[i], vals[i], vals[i] ? strlen(vals[i]) : 0);
	struct ev_guard_row row;
	struct ev_error err = {0};
	ck_assert_int_eq(ev_guard_row_from_rowset(rs, 0, EV_TABLE_MESSAGE, &row, &err), 0);
	ck_assert_uint_eq(row.id, 18446744073709551615ULL);
	ck_assert_int_eq(row.status, 1);
	ck_assert_int_eq(row.retry_count, 2);
	ck_assert_int_eq(row.max_retry_count, 3);
	ck_assert_ptr_null(row.next_retry_time);
	ck_assert_int_eq(row.version, 8);
	ck_assert_str_eq(row.biz_type, "PAYMENT");
	ck_assert_str_eq(row.last_handle_time, "2026-06-01 11:40:00");
	ck_assert_str_eq(row.db_now, "2026-06-01 12:00:00");
	ck_assert_ptr_null(row.lock_until);
	struct ev_guard_row copy;
	ev_guard_row_copy(&copy, &row);
	ck_assert_str_eq(copy.event_no, "E'1");
	char *d = ev_guard_row_describe(EV_TABLE_MESSAGE, &copy);
	ck_assert_str_eq(d,
	                 "event_status 1 (processing), retry_count 2, max_retry_count 3, "
	                 "next_retry_time NULL, version 8, last_handle_time 2026-06-01 11:40:00");
	free(d);
	ev_guard_row_clear(&copy);
	ev_guard_row_clear(&row);
	ck_assert_ptr_null(row.event_no);

	/* A broken number is said. */
	ev_cell_set(&cells[10], "x", 1);
	ck_assert_int_eq(ev_guard_row_from_rowset(rs, 0, EV_TABLE_MESSAGE, &row, &err), -1);
	ck_assert_ptr_nonnull(strstr(err.msg, "version"));
	ev_guard_row_clear(&row);
	ev_rowset_free(&rs);
	ev_query_free(&q);
}
END_TEST

START_TEST(skips_are_explained)
{
	struct ev_guard_row seen = failed_row();
	seen.status = 1;
	seen.lock_until = S("2026-06-01 12:05:00");
	struct ev_guard_req req = request(EV_TABLE_OUTBOX, EV_ACTION_RECOVER, &seen);
	struct ev_guard g;
	build_ok(&req, &g);
	struct ev_guard_row now = seen;
	now.db_now = S("2026-06-01 12:00:00");
	char *why = ev_guard_explain_skip(&g, &seen, &now);
	ck_assert_str_eq(why, "its lock has not expired: lock_until 2026-06-01 12:05:00 is not "
	                      "yet past (server time 2026-06-01 12:00:00); the publisher that "
	                      "holds it may still finish");
	free(why);
	now.version = 9;
	now.status = 2;
	why = ev_guard_explain_skip(&g, &seen, &now);
	ck_assert_str_eq(why, "the row changed since it was read (version 7 -> 9, publish_status "
	                      "1 (publishing) -> 2 (published))");
	free(why);
	now.deleted = 1;
	why = ev_guard_explain_skip(&g, &seen, &now);
	ck_assert_ptr_nonnull(strstr(why, "deleted"));
	free(why);
	why = ev_guard_explain_skip(&g, &seen, NULL);
	ck_assert_ptr_nonnull(strstr(why, "gone"));
	free(why);

	/* Applied, as a re-read after a lost COMMIT judges it. */
	now = seen;
	ck_assert(!ev_guard_row_shows_applied(&g, &seen, &now));
	now.version = 8;
	now.status = 3;
	ck_assert(ev_guard_row_shows_applied(&g, &seen, &now));
	now.status = 1;
	ck_assert(!ev_guard_row_shows_applied(&g, &seen, &now));
	ck_assert(!ev_guard_row_shows_applied(&g, &seen, NULL));
	ev_guard_clear(&g);

	/* The message table: within the stuck threshold. */
	seen.lock_until = NULL;
	seen.last_handle_time = S("2026-06-01 11:55:00");
	req = request(EV_TABLE_MESSAGE, EV_ACTION_RECOVER, &seen);
	build_ok(&req, &g);
	now = seen;
	now.db_now = S("2026-06-01 12:00:00");
	why = ev_guard_explain_skip(&g, &seen, &now);
	ck_assert_str_eq(why, "it is not stuck: last_handle_time 2026-06-01 11:55:00 is 300 s "
	                      "before server time 2026-06-01 12:00:00, within the stuck threshold "
	                      "of 600 s");
	free(why);
	ev_guard_clear(&g);
}
END_TEST

START_TEST(access_probes)
{
	struct ev_query *q = ev_guard_query_probe(EV_TABLE_OUTBOX, NULL);
	ck_assert_str_eq(q->sql,
	                 "/* evtop:action.probe */ UPDATE `biz_outbox_event` SET publish_status = "
	                 "?, retry_count = retry_count + 1, max_retry_count = "
	                 "GREATEST(max_retry_count, retry_count + 1), next_retry_time = NOW() + "
	                 "INTERVAL ? SECOND, fail_reason = ?, locked_by = NULL, lock_until = NULL, "
	                 "version = version + 1, update_time = NOW() WHERE id = ? AND deleted = 0 "
	                 "AND version = ? AND publish_status IN (0, 1, 3) AND lock_until <= NOW() "
	                 "AND 1 = 0");
	ev_query_free(&q);
	q = ev_guard_query_probe(EV_TABLE_MESSAGE, NULL);
	ck_assert_ptr_nonnull(strstr(q->sql, "last_handle_time <= NOW() - INTERVAL ? SECOND AND "
	                                     "1 = 0"));
	ck_assert_ptr_null(strstr(q->sql, "locked_by"));
	ev_query_free(&q);
	q = ev_guard_query_server_read_only(EV_FLAVOUR_MARIADB);
	ck_assert_str_eq(q->sql, "/* evtop:action.read_only */ SELECT @@global.read_only, "
	                         "@@global.innodb_read_only");
	ev_query_free(&q);
	q = ev_guard_query_server_read_only(EV_FLAVOUR_MYSQL);
	ck_assert_ptr_nonnull(strstr(q->sql, "@@global.super_read_only"));
	ev_query_free(&q);
	q = ev_guard_query_audit_exists();
	ck_assert_ptr_nonnull(strstr(q->sql, "TABLE_NAME = 'evtop_audit'"));
	ev_query_free(&q);
}
END_TEST

static const struct ev_audit_who who = {
        .source = "default",
        .os_user = "ops",
        .sudo_user = NULL,
        .ssh_connection = "10.0.0.1 5555 10.0.0.2 22",
        .operator_id = "INC-42",
        .db_user = "evtop_ops@%",
};

START_TEST(audit_json_line)
{
	struct ev_guard_row row = failed_row();
	row.retry_count = 5;
	/* A newline from the database (reasons refuse one) stays escaped: one line. */
	row.event_no = S("OB-1\n");
	struct ev_guard_req req = request(EV_TABLE_OUTBOX, EV_ACTION_CANCEL, &row);
	req.reason = "订单关闭 \"quoted\" \\";
	struct ev_guard g;
	build_ok(&req, &g);
	struct ev_audit_rec rec = {.time = "2026-06-01T12:00:00.000Z",
	                           .who = &who,
	                           .g = &g,
	                           .before = &row,
	                           .result = EV_AUDIT_APPLIED};
	char *line = ev_audit_json_line(&rec);
	ck_assert_uint_gt(strlen(line), 2);
	ck_assert_int_eq(line[strlen(line) - 1], '\n');
	ck_assert(strchr(line, '\n') == line + strlen(line) - 1);
	json_error_t e;
	json_t *j = json_loads(line, 0, &e);
	ck_assert_msg(j != NULL, "not JSON: %s", e.text);
	ck_assert_str_eq(json_string_value(json_object_get(j, "time")), "2026-06-01T12:00:00.000Z");
	ck_assert_str_eq(json_string_value(json_object_get(j, "source")), "default");
	ck_assert_str_eq(json_string_value(json_object_get(j, "os_user")), "ops");
	ck_assert(json_is_null(json_object_get(j, "sudo_user")));
	ck_assert_str_eq(json_string_value(json_object_get(j, "ssh_connection")),
	                 "10.0.0.1 5555 10.0.0.2 22");
	ck_assert_str_eq(json_string_value(json_object_get(j, "operator")), "INC-42");
	ck_assert_str_eq(json_string_value(json_object_get(j, "db_user")), "evtop_ops@%");
	ck_assert_str_eq(json_string_value(json_object_get(j, "table")), "biz_outbox_event");
	ck_assert_str_eq(json_string_value(json_object_get(j, "id")), "18446744073709551615");
	ck_assert_str_eq(json_string_value(json_object_get(j, "event_no")), "OB-1\n");
	ck_assert_str_eq(json_string_value(json_object_get(j, "action")), "cancel");
	json_t *b = json_object_get(j, "before");
	ck_assert_int_eq(json_integer_value(json_object_get(b, "status")), 3);
	ck_assert_int_eq(json_integer_value(json_object_get(b, "retry_count")), 5);
	ck_assert_int_eq(json_integer_value(json_object_get(b, "max_retry_count")), 5);
	ck_assert_str_eq(json_string_value(json_object_get(b, "next_retry_time")),
	                 "2026-06-01 11:00:00");
	ck_assert_int_eq(json_integer_value(json_object_get(b, "version")), 7);
	ck_assert_int_eq(json_integer_value(json_object_get(j, "after_status")), 4);
	ck_assert_str_eq(json_string_value(json_object_get(j, "reason")),
	                 "业务已关闭，取消事件发布：订单关闭 \"quoted\" \\");
	ck_assert_str_eq(json_string_value(json_object_get(j, "result")), "applied");
	ck_assert(json_is_null(json_object_get(j, "error")));
	ck_assert_uint_eq(json_object_size(j), 16);
	json_decref(j);
	free(line);

	/* Skipped: no status after; the error says why; invalid UTF-8 never breaks the line. */
	struct ev_audit_who w2 = who;
	w2.os_user = "bad\xff";
	rec.who = &w2;
	rec.result = EV_AUDIT_SKIPPED;
	rec.error = "the row changed";
	line = ev_audit_json_line(&rec);
	j = json_loads(line, 0, &e);
	ck_assert_ptr_nonnull(j);
	ck_assert(json_is_null(json_object_get(j, "after_status")));
	ck_assert_str_eq(json_string_value(json_object_get(j, "result")), "skipped");
	ck_assert_str_eq(json_string_value(json_object_get(j, "error")), "the row changed");
	ck_assert_str_eq(json_string_value(json_object_get(j, "os_user")), "bad\xEF\xBF\xBD");
	json_decref(j);
	free(line);
	ev_guard_clear(&g);
}
END_TEST

START_TEST(audit_insert_exact_sql)
{
	struct ev_guard_row row = failed_row();
	row.next_retry_time = NULL;
	struct ev_guard_req req = request(EV_TABLE_MESSAGE, EV_ACTION_RETRY_NOW, &row);
	struct ev_guard g;
	build_ok(&req, &g);
	struct ev_audit_rec rec = {
	        .who = &who, .g = &g, .before = &row, .result = EV_AUDIT_APPLIED};
	struct ev_query *q = ev_guard_query_audit_insert(&rec);
	ck_assert_str_eq(q->sql,
	                 "/* evtop:action.audit */ INSERT INTO `evtop_audit` (audit_time, "
	                 "source, os_user, sudo_user, ssh_connection, operator, db_user, "
	                 "table_name, event_id, event_no, action, before_status, "
	                 "before_retry_count, before_max_retry_count, "
	                 "before_next_retry_time, before_version, after_status, reason, "
	                 "result) VALUES (NOW(3), ?, ?, NULLIF(?, ''), NULLIF(?, ''), "
	                 "NULLIF(?, ''), ?, ?, ?, ?, ?, ?, ?, ?, NULLIF(?, ''), ?, NULLIF(?, "
	                 "-1), NULLIF(?, ''), ?)");
	ck_assert_uint_eq(q->nparams, 18);
	ck_assert_str_eq(q->params[0].s, "default");
	ck_assert_str_eq(q->params[1].s, "ops");
	ck_assert_str_eq(q->params[2].s, ""); /* sudo_user -> NULL */
	ck_assert_str_eq(q->params[4].s, "INC-42");
	ck_assert_str_eq(q->params[6].s, "biz_message_event");
	ck_assert_uint_eq(q->params[7].u, 18446744073709551615ULL);
	ck_assert_str_eq(q->params[8].s, "OB-1");
	ck_assert_str_eq(q->params[9].s, "retry_now");
	ck_assert_int_eq(q->params[10].i, 3);
	ck_assert_int_eq(q->params[11].i, 2);
	ck_assert_int_eq(q->params[12].i, 5);
	ck_assert_str_eq(q->params[13].s, "");
	ck_assert_int_eq(q->params[14].i, 7);
	ck_assert_int_eq(q->params[15].i, 0);
	ck_assert_str_eq(q->params[16].s, "");
	ck_assert_str_eq(q->params[17].s, "applied");
	char *text = ev_query_render(q);
	ck_assert_ptr_nonnull(strstr(text, "VALUES (NOW(3), 'default', 'ops', NULLIF('', ''), "));
	free(text);
	ev_query_free(&q);

	/* The proof a write committed is this operator's own record of it: another evtop's
	 * record of the same change (on another node) is not. */
	q = ev_guard_query_audit_find(&g, &row, &who);
	ck_assert_str_eq(q->sql, "/* evtop:action.audit_find */ SELECT COUNT(*) FROM "
	                         "`evtop_audit` WHERE table_name = ? AND event_id = ? AND "
	                         "before_version = ? AND action = ? AND result = 'applied' AND "
	                         "source = ? AND os_user = ? AND operator <=> NULLIF(?, '')");
	ck_assert_uint_eq(q->nparams, 7);
	ck_assert_str_eq(q->params[4].s, "default");
	ck_assert_str_eq(q->params[5].s, "ops");
	ck_assert_str_eq(q->params[6].s, "INC-42");
	ev_query_free(&q);

	/* A long operator id is cut to its column (128 characters). */
	char op[400];
	memset(op, 'x', sizeof(op) - 1);
	op[sizeof(op) - 1] = '\0';
	struct ev_audit_who w2 = who;
	w2.operator_id = op;
	rec.who = &w2;
	q = ev_guard_query_audit_insert(&rec);
	ck_assert_uint_eq(strlen(q->params[4].s), 128);
	ev_query_free(&q);
	ev_guard_clear(&g);
}
END_TEST

/* evtop_access_log: a row per event shown, every text cut to its column, db_user the server's. */
START_TEST(access_log_insert_rows)
{
	char longno[100];
	memset(longno, 'N', sizeof(longno) - 1);
	longno[sizeof(longno) - 1] = '\0';
	const char *nos[] = {"OB-1", "OB-2", longno};
	struct ev_query *q =
	        ev_guard_query_access_insert(&who, "biz_outbox_event", "INC-9 why", nos, 3, 7);
	ck_assert_ptr_nonnull(strstr(q->sql, "INSERT INTO `evtop_access_log` (access_time, source, "
	                                     "os_user, sudo_user, ssh_connection, operator, "
	                                     "db_user, table_name, event_no, action, shown_count, "
	                                     "reason) VALUES (NOW(3), ?, ?, NULLIF(?, ''), "));
	ck_assert_ptr_nonnull(strstr(q->sql, "CURRENT_USER(), ?, ?, 'unmask', ?, ?), (NOW(3), "));
	ck_assert_uint_eq(q->nparams, 27);
	ck_assert_str_eq(q->params[0].s, "default");
	ck_assert_str_eq(q->params[5].s, "biz_outbox_event");
	ck_assert_str_eq(q->params[6].s, "OB-1");
	ck_assert_uint_eq(q->params[7].u, 7);
	ck_assert_str_eq(q->params[8].s, "INC-9 why");
	ck_assert_str_eq(q->params[15].s, "OB-2");
	ck_assert_uint_eq(strlen(q->params[24].s), 64); /* event_no cut to VARCHAR(64) */
	ev_query_free(&q);
}
END_TEST

static char *scratch_dir(void)
{
	char tmpl[] = "/tmp/evg.XXXXXX";
	char *d = mkdtemp(tmpl);
	ck_assert_ptr_nonnull(d);
	return strdup(d);
}

START_TEST(audit_file_created_private_and_appended)
{
	char *dir = scratch_dir();
	char *state = NULL;
	ck_assert_int_ne(asprintf(&state, "%s/state", dir), -1);
	setenv("XDG_STATE_HOME", state, 1);
	char *path = ev_audit_log_default_path();
	char *want = NULL;
	ck_assert_int_ne(asprintf(&want, "%s/evtop/audit.jsonl", state), -1);
	ck_assert_str_eq(path, want);

	mode_t old = umask(0);
	struct ev_audit_log log;
	struct ev_error err = {0};
	ck_assert_msg(ev_audit_log_open(&log, path, &err) == 0, "%s", err.msg);
	umask(old);
	struct stat st;
	ck_assert_int_eq(stat(path, &st), 0);
	ck_assert_int_eq(st.st_mode & 0777, 0600);
	char *evdir = NULL;
	ck_assert_int_ne(asprintf(&evdir, "%s/evtop", state), -1);
	ck_assert_int_eq(stat(evdir, &st), 0);
	ck_assert_int_eq(st.st_mode & 0777, 0700);
	ck_assert_int_eq(stat(state, &st), 0);
	ck_assert_int_eq(st.st_mode & 0777, 0700);
	ck_assert_int_eq(ev_audit_log_append(&log, "{\"a\":1}\n", &err), 0);
	ev_audit_log_close(&log);
	/* Reopened: appended, never truncated. */
	ck_assert_int_eq(ev_audit_log_open(&log, path, &err), 0);
	ck_assert_int_eq(ev_audit_log_append(&log, "{\"a\":2}\n", &err), 0);
	ev_audit_log_close(&log);
	FILE *f = fopen(path, "r");
	char buf[64] = {0};
	ck_assert_uint_eq(fread(buf, 1, sizeof(buf) - 1, f), 16);
	fclose(f);
	ck_assert_str_eq(buf, "{\"a\":1}\n{\"a\":2}\n");

	/* A relative XDG_STATE_HOME is ignored (the XDG spec), for HOME. */
	setenv("XDG_STATE_HOME", "relative/state", 1);
	setenv("HOME", dir, 1);
	free(path);
	path = ev_audit_log_default_path();
	free(want);
	ck_assert_int_ne(asprintf(&want, "%s/.local/state/evtop/audit.jsonl", dir), -1);
	ck_assert_str_eq(path, want);

	/* A place that cannot be written: refused with the reason. */
	ck_assert_int_eq(ev_audit_log_open(&log, "/proc/evtop-no/audit.jsonl", &err), -1);
	ck_assert_ptr_nonnull(strstr(err.msg, "cannot create the audit directory"));
	ck_assert_int_eq(ev_audit_log_open(&log, dir, &err), -1);
	ck_assert_int_eq(ev_audit_log_open(&log, NULL, &err), -1);
	ck_assert_int_eq(ev_audit_log_append(&log, "x\n", &err), -1);

	char ts[32];
	ev_audit_time_now(ts);
	ck_assert_uint_eq(strlen(ts), 24);
	ck_assert_int_eq(ts[10], 'T');
	ck_assert_int_eq(ts[23], 'Z');

	struct ev_audit_ident id;
	setenv("SUDO_USER", "alice", 1);
	unsetenv("SSH_CONNECTION");
	ev_audit_ident_fill(&id);
	ck_assert_ptr_nonnull(id.os_user);
	ck_assert_str_eq(id.sudo_user, "alice");
	ck_assert_ptr_null(id.ssh_connection);
	ev_audit_ident_clear(&id);

	free(evdir);
	free(want);
	free(path);
	free(state);
	char *cmd = NULL;
	ck_assert_int_ne(asprintf(&cmd, "rm -rf '%s'", dir), -1);
	ck_assert_int_eq(system(cmd), 0);
	free(cmd);
	free(dir);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("guard");
	TCase *tc = tcase_create("guard");
	tcase_add_test(tc, retry_now_exact_sql_both_tables);
	tcase_add_test(tc, retry_schedule_exact_sql_both_tables);
	tcase_add_test(tc, cancel_exact_sql_both_tables);
	tcase_add_test(tc, recover_exact_sql_both_tables);
	tcase_add_test(tc, every_built_transition_is_in_the_model);
	tcase_add_test(tc, refusals_say_why);
	tcase_add_test(tc, exhausted_retry_grants_one_more_attempt);
	tcase_add_test(tc, fail_reason_composed_and_cut_to_1000_characters);
	tcase_add_test(tc, protected_tokens_are_whole_words);
	tcase_add_test(tc, row_query_and_read_back);
	tcase_add_test(tc, skips_are_explained);
	tcase_add_test(tc, access_probes);
	tcase_add_test(tc, audit_json_line);
	tcase_add_test(tc, audit_insert_exact_sql);
	tcase_add_test(tc, access_log_insert_rows);
	tcase_add_test(tc, audit_file_created_private_and_appended);
	suite_add_tcase(s, tc);
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? 0 : 1;
}
