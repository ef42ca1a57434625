/* core/model: the two tables and the transition table. */
#include <config.h>

#include "core/model.h"

#include <check.h>
#include <string.h>

START_TEST(tables_match_the_model_document)
{
	const struct ev_table_def *m = ev_model_table(EV_TABLE_MESSAGE);
	const struct ev_table_def *o = ev_model_table(EV_TABLE_OUTBOX);
	ck_assert_str_eq(m->default_name, "biz_message_event");
	ck_assert_str_eq(o->default_name, "biz_outbox_event");
	ck_assert_uint_eq(m->ncolumns, 20);
	ck_assert_uint_eq(o->ncolumns, 27);
	ck_assert_str_eq(m->status_col, "event_status");
	ck_assert_str_eq(o->status_col, "publish_status");
	ck_assert(ev_model_column(o, "lock_until")->nullable);
	ck_assert(!ev_model_column(o, "create_time")->nullable);
	ck_assert_ptr_null(ev_model_column(m, "lock_until"));
	ck_assert_int_eq(ev_model_column(m, "id")->type, EV_CT_ID);
	ck_assert_int_eq(ev_model_column(o, "event_headers")->type, EV_CT_JSON);
	ck_assert(!ev_model_column(o, "event_payload")->in_list);
	ck_assert_int_eq(m->default_max_retry, 3);
	ck_assert_int_eq(o->default_max_retry, 5);
	ck_assert(o->has_lock && !m->has_lock);
}
END_TEST

START_TEST(status_names)
{
	const struct ev_table_def *m = ev_model_table(EV_TABLE_MESSAGE);
	const struct ev_table_def *o = ev_model_table(EV_TABLE_OUTBOX);
	ck_assert_str_eq(ev_model_status_name(m, 0, true), "待处理");
	ck_assert_str_eq(ev_model_status_name(m, 3, true), "处理失败");
	ck_assert_str_eq(ev_model_status_name(o, 1, true), "发布中");
	ck_assert_str_eq(ev_model_status_name(o, 2, false), "published");
	ck_assert_str_eq(ev_model_status_name(m, 4, false), "cancelled");
	ck_assert_str_eq(ev_model_status_name(m, 5, false), "unknown");
	ck_assert_str_eq(ev_model_status_name(m, -1, true), "unknown");
}
END_TEST

START_TEST(table_and_dimension_lookup)
{
	ck_assert_int_eq(ev_model_table_parse("outbox"), EV_TABLE_OUTBOX);
	ck_assert_int_eq(ev_model_table_parse("MESSAGE"), EV_TABLE_MESSAGE);
	ck_assert_int_eq(ev_model_table_parse("orders"), -1);
	const struct ev_table_def *m = ev_model_table(EV_TABLE_MESSAGE);
	const struct ev_table_def *o = ev_model_table(EV_TABLE_OUTBOX);
	ck_assert_str_eq(ev_model_dimension(o, "biz_type")->column, "aggregate_type");
	ck_assert_str_eq(ev_model_dimension(m, "biz_type")->column, "biz_type");
	ck_assert_str_eq(ev_model_dimension(o, "channel")->column, "publish_channel");
	ck_assert_ptr_null(ev_model_dimension(m, "topic"));
	ck_assert_ptr_null(ev_model_dimension(m, "channel"));
	/* --by's keys: every dimension of either table, each once. */
	static const char *const keys[] = {"event_type", "source", "biz_type", "topic", "channel"};
	size_t n = 0;
	for (; ev_model_dimension_key(n) != NULL; n++) {
		ck_assert_uint_lt(n, sizeof(keys) / sizeof(keys[0]));
		ck_assert_str_eq(ev_model_dimension_key(n), keys[n]);
	}
	ck_assert_uint_eq(n, sizeof(keys) / sizeof(keys[0]));
}
END_TEST

/* Every pair (from, to) the applications and the operator may make, per table; anything else
 * is refused. The applications' part is the model document's SQL; the operator's PRODUCT.md. */
START_TEST(transition_table)
{
	static const int allowed[2][5][5] = {
	        /* message: from \ to   0  1  2  3  4 */
	        {{0, 1, 0, 0, 1},
	         {0, 0, 1, 1, 0},
	         {0, 0, 0, 0, 0},
	         {1, 1, 0, 1, 1},
	         {0, 0, 0, 0, 0}},
	        /* outbox */
	        {{0, 1, 0, 0, 1},
	         {0, 0, 1, 1, 0},
	         {0, 0, 0, 0, 0},
	         {1, 1, 0, 1, 1},
	         {0, 0, 0, 0, 0}},
	};
	for (int t = 0; t < 2; t++)
		for (int from = 0; from < 5; from++)
			for (int to = 0; to < 5; to++)
				ck_assert_msg(
				        ev_transition_allowed((enum ev_table_kind)t, from, to) ==
				                (allowed[t][from][to] != 0),
				        "table %d: %d -> %d", t, from, to);
	/* Success and cancelled are final. */
	for (int to = 0; to < 5; to++) {
		ck_assert(!ev_transition_allowed(EV_TABLE_OUTBOX, 2, to));
		ck_assert(!ev_transition_allowed(EV_TABLE_MESSAGE, 4, to));
	}
}
END_TEST

START_TEST(operator_actions)
{
	ck_assert(ev_action_allows(EV_ACTION_RETRY_NOW, EV_TABLE_OUTBOX, 3, 0));
	ck_assert(!ev_action_allows(EV_ACTION_RETRY_NOW, EV_TABLE_OUTBOX, 1, 0));
	ck_assert(ev_action_allows(EV_ACTION_RETRY_SCHEDULE, EV_TABLE_MESSAGE, 3, 3));
	ck_assert(ev_action_allows(EV_ACTION_CANCEL, EV_TABLE_MESSAGE, 0, 4));
	ck_assert(ev_action_allows(EV_ACTION_CANCEL, EV_TABLE_OUTBOX, 3, 4));
	ck_assert(!ev_action_allows(EV_ACTION_CANCEL, EV_TABLE_OUTBOX, 1, 4));
	ck_assert(ev_action_allows(EV_ACTION_RECOVER, EV_TABLE_OUTBOX, 1, 3));
	ck_assert(ev_action_allows(EV_ACTION_RECOVER, EV_TABLE_MESSAGE, 1, 3));
	/* The lock-timeout job is the outbox's only. */
	ck_assert(ev_action_allows(EV_ACTION_LOCK_TIMEOUT, EV_TABLE_OUTBOX, 1, 3));
	ck_assert(!ev_action_allows(EV_ACTION_LOCK_TIMEOUT, EV_TABLE_MESSAGE, 1, 3));
	ck_assert_int_eq(ev_action_actor(EV_ACTION_CLAIM), EV_ACTOR_APP);
	ck_assert_int_eq(ev_action_actor(EV_ACTION_RECOVER), EV_ACTOR_OPERATOR);
	ck_assert_int_eq(ev_action_parse("retry_now"), EV_ACTION_RETRY_NOW);
	ck_assert_int_eq(ev_action_parse("nuke"), -1);
	ck_assert_str_eq(ev_action_name(EV_ACTION_CANCEL), "cancel");
	/* Every operator action has at least one transition; every transition a known action. */
	for (int a = 0; a < EV_ACTION_COUNT; a++) {
		int n = 0;
		for (const struct ev_transition *tr = ev_transitions; tr->from >= 0; tr++)
			if (tr->action == (enum ev_action)a)
				n++;
		ck_assert_msg(n > 0, "action %s has no transition",
		              ev_action_name((enum ev_action)a));
	}
}
END_TEST

int main(void)
{
	Suite *s = suite_create("model");
	TCase *tc = tcase_create("model");
	tcase_add_test(tc, tables_match_the_model_document);
	tcase_add_test(tc, status_names);
	tcase_add_test(tc, table_and_dimension_lookup);
	tcase_add_test(tc, transition_table);
	tcase_add_test(tc, operator_actions);
	suite_add_tcase(s, tc);
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? 0 : 1;
}
