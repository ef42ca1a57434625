/* core/bulk: the settings and their ranges, the retry schedule spread at a rate, the batch
 * size and the pace, the snapshot (a row seen twice is kept once), the plan (pending,
 * protected, refused; the offsets; the statement of the first row; the run-level refusals),
 * each row's guarded UPDATE, the tally, the rows-by-id query, and the audit lines. */
#include <config.h>

#include "core/bulk.h"
#include "core/guard.h"

#include <check.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define S(x) ((char *)(x))

static char *tokens[] = {S("PAY"), S("REFUND"), S("STOCK"), S("INVENTORY"), NULL};

static struct ev_guard_row row(unsigned long long id, int status, const char *type,
                               long long version)
{
	struct ev_guard_row r = {
	        .id = id,
	        .event_no = S("OB"),
	        .status = status,
	        .retry_count = 1,
	        .max_retry_count = 5,
	        .next_retry_time = S("2026-06-01 11:00:00"),
	        .version = version,
	        .event_type = S(type),
	        .biz_type = S("ORDER"),
	        .fail_reason = S("mq timeout"),
	        .update_time = S("2026-06-01 11:00:00"),
	};
	return r;
}

static struct ev_bulk_spec spec(enum ev_table_kind t, enum ev_action a)
{
	struct ev_bulk_spec sp = {
	        .table = t,
	        .action = a,
	        .stuck_threshold_s = 600,
	        .recover_message = true,
	        .protected_types = tokens,
	        .target = "list failed",
	};
	ev_bulk_settings_default(&sp.set);
	return sp;
}

START_TEST(settings_defaults_and_ranges)
{
	struct ev_bulk_settings s;
	struct ev_error err = {0};

	ev_bulk_settings_default(&s);
	ck_assert_int_eq(s.batch_size, 100);
	ck_assert_int_eq(s.batch_ms, 100);
	ck_assert_int_eq(s.pause_ms, 100);
	ck_assert(s.rate == 10.0);
	ck_assert(s.pace == 0);
	ck_assert_int_eq(s.delay_s, 0);
	ck_assert_int_eq(ev_bulk_settings_check(&s, &err), 0);

	struct ev_bulk_settings bad = s;
	bad.batch_size = 0;
	ck_assert_int_eq(ev_bulk_settings_check(&bad, &err), -1);
	ck_assert_int_eq(err.code, EV_ERR_USAGE);
	ck_assert_msg(strstr(err.msg, "batch size must be 1 .. 1000") != NULL, "%s", err.msg);
	bad = s;
	bad.batch_size = 1001;
	ck_assert_int_eq(ev_bulk_settings_check(&bad, &err), -1);
	bad = s;
	bad.pause_ms = -1;
	ck_assert_int_eq(ev_bulk_settings_check(&bad, &err), -1);
	bad = s;
	bad.rate = -1;
	ck_assert_int_eq(ev_bulk_settings_check(&bad, &err), -1);
	bad = s;
	bad.rate = NAN;
	ck_assert_int_eq(ev_bulk_settings_check(&bad, &err), -1);
	bad = s;
	bad.pace = 100001;
	ck_assert_int_eq(ev_bulk_settings_check(&bad, &err), -1);
	bad = s;
	bad.delay_s = 30 * 86400 + 1;
	ck_assert_int_eq(ev_bulk_settings_check(&bad, &err), -1);
	bad = s;
	bad.batch_ms = 0;
	ck_assert_int_eq(ev_bulk_settings_check(&bad, &err), -1);
}
END_TEST

START_TEST(spread_offsets_at_a_rate)
{
	struct ev_bulk_settings s;
	ev_bulk_settings_default(&s);

	/* 10 per second: ten rows per second of offset. */
	for (size_t i = 0; i < 10; i++)
		ck_assert_int_eq(ev_bulk_spread_offset(&s, i), 0);
	ck_assert_int_eq(ev_bulk_spread_offset(&s, 10), 1);
	ck_assert_int_eq(ev_bulk_spread_offset(&s, 99), 9);
	ck_assert_int_eq(ev_bulk_spread_offset(&s, 100), 10);
	/* The count per second of offset never exceeds the rate, for any rate. */
	static const double rates[] = {1, 3, 7, 10, 0.5, 0.3, 2.5, 1000};
	for (size_t r = 0; r < sizeof(rates) / sizeof(rates[0]); r++) {
		s.rate = rates[r];
		long long last = -1;
		size_t in_second = 0;
		for (size_t i = 0; i < 5000; i++) {
			long long off = ev_bulk_spread_offset(&s, i);
			ck_assert_int_ge(off, last);
			if (off != last) {
				in_second = 0;
				last = off;
			}
			in_second++;
			ck_assert_msg((double)in_second <= ceil(rates[r]),
			              "rate %g: %zu rows at offset %lld", rates[r], in_second, off);
		}
		/* ... and the span is what the rate says: n / rate seconds. */
		ck_assert_int_eq(ev_bulk_spread_offset(&s, 4999),
		                 (long long)floor(4999 / rates[r]));
	}
	/* Half a row per second: one every two seconds. */
	s.rate = 0.5;
	ck_assert_int_eq(ev_bulk_spread_offset(&s, 0), 0);
	ck_assert_int_eq(ev_bulk_spread_offset(&s, 1), 2);
	ck_assert_int_eq(ev_bulk_spread_offset(&s, 2), 4);
	/* A base delay shifts all; rate 0 puts all at the delay. */
	s.rate = 10;
	s.delay_s = 120;
	ck_assert_int_eq(ev_bulk_spread_offset(&s, 0), 120);
	ck_assert_int_eq(ev_bulk_spread_offset(&s, 25), 122);
	s.rate = 0;
	ck_assert_int_eq(ev_bulk_spread_offset(&s, 100000), 120);
	/* Large counts stay exact. */
	s.delay_s = 0;
	s.rate = 7;
	ck_assert_int_eq(ev_bulk_spread_offset(&s, 1000000), 142857);
}
END_TEST

START_TEST(batches_and_pace)
{
	struct ev_bulk_settings s;
	ev_bulk_settings_default(&s);

	ck_assert_int_eq(ev_bulk_batch_rows(&s), 100);
	s.batch_size = 7;
	ck_assert_int_eq(ev_bulk_batch_rows(&s), 7);
	/* Paced: at most a tenth of a second's worth, at least one. */
	s.batch_size = 100;
	s.pace = 10;
	ck_assert_int_eq(ev_bulk_batch_rows(&s), 1);
	s.pace = 250;
	ck_assert_int_eq(ev_bulk_batch_rows(&s), 25);
	s.pace = 5000;
	ck_assert_int_eq(ev_bulk_batch_rows(&s), 100);
	s.pace = 0.5;
	ck_assert_int_eq(ev_bulk_batch_rows(&s), 1);

	/* The wait before the next batch: the pause, or what keeps to the pace. */
	s.pace = 0;
	s.pause_ms = 100;
	ck_assert_int_eq(ev_bulk_wait_ms(&s, 500, 0), 100);
	s.pace = 10;
	ck_assert_int_eq(ev_bulk_wait_ms(&s, 5, 0), 500);
	ck_assert_int_eq(ev_bulk_wait_ms(&s, 5, 450), 100);
	ck_assert_int_eq(ev_bulk_wait_ms(&s, 5, 350), 150);
	s.pause_ms = 0;
	ck_assert_int_eq(ev_bulk_wait_ms(&s, 5, 9000), 0);
	/* A paced run of n rows takes n / pace seconds, batch after batch. */
	s.pace = 250;
	long long t = 0;
	size_t written = 0;
	while (written < 1000) {
		written += (size_t)ev_bulk_batch_rows(&s);
		t += ev_bulk_wait_ms(&s, written, t);
	}
	ck_assert_int_eq(t, 4000);

	ck_assert(ev_bulk_eta_s(0, 100, 0) == -1);
	ck_assert(ev_bulk_eta_s(25, 100, 5) == 15);
	ck_assert(ev_bulk_eta_s(100, 100, 5) == 0);
}
END_TEST

START_TEST(lists_each_action_takes)
{
	ck_assert(ev_bulk_list_fits(EV_ACTION_RETRY_SCHEDULE, EV_LIST_FAILED_DUE));
	ck_assert(ev_bulk_list_fits(EV_ACTION_RETRY_NOW, EV_LIST_FAILED_EXHAUSTED));
	ck_assert(ev_bulk_list_fits(EV_ACTION_RETRY_SCHEDULE, EV_LIST_HIGH_RETRY));
	ck_assert(!ev_bulk_list_fits(EV_ACTION_RETRY_SCHEDULE, EV_LIST_PENDING));
	ck_assert(!ev_bulk_list_fits(EV_ACTION_RETRY_SCHEDULE, EV_LIST_STUCK));
	ck_assert(ev_bulk_list_fits(EV_ACTION_CANCEL, EV_LIST_PENDING));
	ck_assert(ev_bulk_list_fits(EV_ACTION_CANCEL, EV_LIST_FAILED));
	ck_assert(!ev_bulk_list_fits(EV_ACTION_CANCEL, EV_LIST_CANCELLED));
	ck_assert(!ev_bulk_list_fits(EV_ACTION_CANCEL, EV_LIST_PROCESSING));
	ck_assert(ev_bulk_list_fits(EV_ACTION_RECOVER, EV_LIST_STUCK));
	ck_assert(!ev_bulk_list_fits(EV_ACTION_RECOVER, EV_LIST_PROCESSING));
	ck_assert(!ev_bulk_list_fits(EV_ACTION_CLAIM, EV_LIST_PENDING));
	ck_assert(!ev_bulk_list_fits(EV_ACTION_CANCEL, EV_LIST_TRAIL));
}
END_TEST

START_TEST(snapshot_keeps_a_row_once)
{
	struct ev_bulk_spec sp = spec(EV_TABLE_OUTBOX, EV_ACTION_CANCEL);
	struct ev_bulk_snapshot *s = ev_bulk_snapshot_new(&sp);
	struct ev_guard_row r;

	ck_assert_str_eq(s->table_name, "biz_outbox_event");
	for (unsigned long long id = 1; id <= 3; id++) {
		r = row(id, 3, "ORDER_CREATED", 1);
		ev_bulk_snapshot_add(s, &r);
	}
	/* Seen again by a later page after it moved: the newer version, at its first place. */
	r = row(2, 3, "ORDER_CREATED", 4);
	ev_bulk_snapshot_add(s, &r);
	r = row(3, 3, "ORDER_CREATED", 0);
	ev_bulk_snapshot_add(s, &r);
	ck_assert_uint_eq(s->n, 3);
	ck_assert_uint_eq(s->items[0].row.id, 1);
	ck_assert_uint_eq(s->items[1].row.id, 2);
	ck_assert_int_eq(s->items[1].row.version, 4);
	ck_assert_int_eq(s->items[2].row.version, 1);
	/* What is not needed is not kept. */
	ck_assert_ptr_null(s->items[0].row.fail_reason);
	ck_assert_ptr_null(s->items[0].row.update_time);
	ck_assert_str_eq(s->items[0].row.event_type, "ORDER_CREATED");
	/* Many rows, some twice, in an order that is not the ids'. */
	for (unsigned long long k = 0; k < 20000; k++) {
		r = row(1000000 - k * 7, 3, "ORDER_CREATED", 1);
		ev_bulk_snapshot_add(s, &r);
	}
	for (unsigned long long k = 0; k < 20000; k += 3) {
		r = row(1000000 - k * 7, 3, "ORDER_CREATED", 2);
		ev_bulk_snapshot_add(s, &r);
	}
	ck_assert_uint_eq(s->n, 20003);
	for (size_t i = 3; i < s->n; i++) {
		unsigned long long k = i - 3;
		ck_assert_uint_eq(s->items[i].row.id, 1000000 - k * 7);
		ck_assert_int_eq(s->items[i].row.version, k % 3 == 0 ? 2 : 1);
	}
	ev_bulk_snapshot_free(&s);
	ck_assert_ptr_null(s);
}
END_TEST

START_TEST(plan_pending_protected_refused_and_offsets)
{
	struct ev_bulk_spec sp = spec(EV_TABLE_OUTBOX, EV_ACTION_RETRY_SCHEDULE);
	struct ev_error err = {0};
	struct ev_guard_row r;

	sp.set.rate = 2;
	sp.set.delay_s = 60;
	struct ev_bulk_snapshot *s = ev_bulk_snapshot_new(&sp);
	r = row(10, 3, "ORDER_CREATED", 5); /* pending, offset 60 */
	ev_bulk_snapshot_add(s, &r);
	r = row(11, 3, "PAY_SUCCESS", 5); /* protected */
	ev_bulk_snapshot_add(s, &r);
	r = row(12, 0, "ORDER_CREATED", 5); /* refused: pending, not failed */
	ev_bulk_snapshot_add(s, &r);
	r = row(13, 3, "ORDER_CREATED", 5); /* pending, offset 60 */
	r.retry_count = 5;                  /* exhausted: one more attempt */
	ev_bulk_snapshot_add(s, &r);
	r = row(14, 3, "ORDER_CREATED", 5); /* refused: deleted */
	r.deleted = 1;
	ev_bulk_snapshot_add(s, &r);
	r = row(15, 3, "REFUND_DONE", 5); /* protected */
	ev_bulk_snapshot_add(s, &r);
	r = row(16, 3, "ORDER_PAID", 5); /* pending, offset 61 */
	ev_bulk_snapshot_add(s, &r);

	ck_assert_int_eq(ev_bulk_plan(s, false, &err), 0);
	ck_assert_uint_eq(s->n_pending, 3);
	ck_assert_uint_eq(s->n_protected, 2);
	ck_assert_uint_eq(s->n_refused, 2);
	ck_assert_uint_eq(s->n_exhausted, 1);
	ck_assert_str_eq(s->protected_summary, "PAY 1, REFUND 1");
	static const enum ev_bulk_state want[] = {
	        EV_BULK_PENDING, EV_BULK_PROTECTED, EV_BULK_REFUSED, EV_BULK_PENDING,
	        EV_BULK_REFUSED, EV_BULK_PROTECTED, EV_BULK_PENDING};
	for (size_t i = 0; i < 7; i++)
		ck_assert_msg(s->items[i].state == want[i], "row %zu: %s", i,
		              ev_bulk_state_name(s->items[i].state));
	ck_assert_int_eq(s->items[0].delay_s, 60);
	ck_assert_int_eq(s->items[3].delay_s, 60);
	ck_assert_int_eq(s->items[6].delay_s, 61);
	ck_assert_int_eq(s->spread_last_s, 61);
	ck_assert_msg(strstr(s->items[2].msg, "it is pending (0, 待发布)") != NULL, "%s",
	              s->items[2].msg);
	ck_assert_msg(strstr(s->items[4].msg, "it is deleted") != NULL, "%s", s->items[4].msg);
	ck_assert_uint_eq(s->batches_planned, 1);
	/* The statement is the guard's, for the first row; the example fills it in. */
	ck_assert_str_eq(s->statement,
	                 "/* evtop:action.retry_schedule */ UPDATE `biz_outbox_event` SET "
	                 "next_retry_time = NOW() + INTERVAL ? SECOND, max_retry_count = "
	                 "GREATEST(max_retry_count, retry_count + 1), version = version + 1, "
	                 "update_time = NOW() WHERE id = ? AND deleted = 0 AND version = ? AND "
	                 "publish_status = 3");
	ck_assert_str_eq(s->example,
	                 "/* evtop:action.retry_schedule */ UPDATE `biz_outbox_event` SET "
	                 "next_retry_time = NOW() + INTERVAL 60 SECOND, max_retry_count = "
	                 "GREATEST(max_retry_count, retry_count + 1), version = version + 1, "
	                 "update_time = NOW() WHERE id = 10 AND deleted = 0 AND version = 5 AND "
	                 "publish_status = 3");
	ck_assert_msg(strstr(s->notice, "1 exhausted event") != NULL, "%s", s->notice);

	/* Each row's UPDATE binds its own offset, id and the version counted. */
	struct ev_guard g;
	ck_assert_int_eq(ev_bulk_item_guard(s, &s->items[6], &g, &err), 0);
	ck_assert_uint_eq(g.update->nparams, 3);
	ck_assert_int_eq(g.update->params[0].i, 61);
	ck_assert_uint_eq(g.update->params[1].u, 16);
	ck_assert_int_eq(g.update->params[2].i, 5);
	ev_guard_clear(&g);

	/* The operator typed the count: the protected rows join, in their places. */
	ck_assert_int_eq(ev_bulk_plan(s, true, &err), 0);
	ck_assert_uint_eq(s->n_pending, 5);
	ck_assert_uint_eq(s->n_protected, 0);
	ck_assert_str_eq(s->protected_summary, "PAY 1, REFUND 1");
	ck_assert_int_eq(s->items[0].delay_s, 60);
	ck_assert_int_eq(s->items[1].delay_s, 60);
	ck_assert_int_eq(s->items[3].delay_s, 61);
	ck_assert_int_eq(s->items[5].delay_s, 61);
	ck_assert_int_eq(s->items[6].delay_s, 62);
	ck_assert_int_eq(ev_bulk_item_guard(s, &s->items[1], &g, &err), 0);
	ck_assert_str_eq(g.protected_token, "PAY");
	ev_guard_clear(&g);

	struct ev_bulk_tally t = {0};
	ev_bulk_tally_count(s, &t);
	ck_assert_uint_eq(t.counted, 7);
	ck_assert_uint_eq(t.not_attempted, 5);
	ck_assert_uint_eq(t.refused, 2);
	ev_bulk_snapshot_free(&s);
}
END_TEST

/* The protected rows in words: a count is never followed by what contradicts it. */
START_TEST(protected_text_says_what_the_count_is)
{
	struct ev_bulk_spec sp = spec(EV_TABLE_OUTBOX, EV_ACTION_RETRY_SCHEDULE);
	struct ev_error err = {0};
	struct ev_guard_row r;
	struct ev_bulk_snapshot *s = ev_bulk_snapshot_new(&sp);
	r = row(10, 3, "ORDER_CREATED", 5);
	ev_bulk_snapshot_add(s, &r);
	ck_assert_int_eq(ev_bulk_plan(s, false, &err), 0);
	char *t = ev_bulk_protected_text(s);
	ck_assert_str_eq(t, "0");
	free(t);
	r = row(11, 3, "PAY_SUCCESS", 5);
	ev_bulk_snapshot_add(s, &r);
	r = row(12, 3, "PAY_FAILED", 5);
	ev_bulk_snapshot_add(s, &r);
	r = row(13, 3, "REFUND_DONE", 5);
	ev_bulk_snapshot_add(s, &r);
	ck_assert_int_eq(ev_bulk_plan(s, false, &err), 0);
	t = ev_bulk_protected_text(s);
	ck_assert_str_eq(t, "3 (PAY 2, REFUND 1), left alone");
	free(t);
	ck_assert_int_eq(ev_bulk_plan(s, true, &err), 0);
	ck_assert_uint_eq(s->n_protected, 0);
	t = ev_bulk_protected_text(s);
	ck_assert_str_eq(t, "3 (PAY 2, REFUND 1), all included");
	free(t);
	ev_bulk_snapshot_free(&s);
}
END_TEST

START_TEST(plan_refuses_whole_runs)
{
	struct ev_error err = {0};
	struct ev_guard_row r = row(1, 3, "ORDER_CREATED", 1);

	/* Cancel without a reason. */
	struct ev_bulk_spec sp = spec(EV_TABLE_OUTBOX, EV_ACTION_CANCEL);
	struct ev_bulk_snapshot *s = ev_bulk_snapshot_new(&sp);
	ev_bulk_snapshot_add(s, &r);
	ck_assert_int_eq(ev_bulk_plan(s, false, &err), -1);
	ck_assert_int_eq(err.code, EV_GUARD_REFUSED_REASON);
	ev_bulk_snapshot_free(&s);

	/* Recover on the message table, not enabled (even with no rows). */
	sp = spec(EV_TABLE_MESSAGE, EV_ACTION_RECOVER);
	sp.recover_message = false;
	s = ev_bulk_snapshot_new(&sp);
	ck_assert_int_eq(ev_bulk_plan(s, false, &err), -1);
	ck_assert_int_eq(err.code, EV_GUARD_REFUSED_RECOVER_OFF);
	ev_bulk_snapshot_free(&s);

	/* A spread past the 30-day limit of a retry delay. */
	sp = spec(EV_TABLE_MESSAGE, EV_ACTION_RETRY_SCHEDULE);
	sp.set.rate = 0.001;
	s = ev_bulk_snapshot_new(&sp);
	for (unsigned long long id = 1; id <= 3000; id++) {
		r = row(id, 3, "ORDER_CREATED", 1);
		ev_bulk_snapshot_add(s, &r);
	}
	ck_assert_int_eq(ev_bulk_plan(s, false, &err), -1);
	ck_assert_msg(strstr(err.msg, "30-day limit") != NULL, "%s", err.msg);
	ev_bulk_snapshot_free(&s);

	/* Cancel with a reason: the fail_reason of every row is the model's text and it. */
	sp = spec(EV_TABLE_MESSAGE, EV_ACTION_CANCEL);
	sp.reason = "客户取消";
	s = ev_bulk_snapshot_new(&sp);
	r = row(9, 0, "ORDER_CREATED", 2);
	ev_bulk_snapshot_add(s, &r);
	ck_assert_int_eq(ev_bulk_plan(s, false, &err), 0);
	ck_assert_str_eq(
	        s->example,
	        "/* evtop:action.cancel */ UPDATE `biz_message_event` SET event_status = "
	        "4, fail_reason = '业务已关闭，取消事件处理：客户取消', version = version "
	        "+ 1, update_time = NOW() WHERE id = 9 AND deleted = 0 AND version = 2 AND "
	        "event_status IN (0, 3)");
	ck_assert_uint_eq(s->batches_planned, 1);
	ev_bulk_snapshot_free(&s);

	/* An empty snapshot plans nothing, without a statement. */
	sp = spec(EV_TABLE_OUTBOX, EV_ACTION_RECOVER);
	s = ev_bulk_snapshot_new(&sp);
	ck_assert_int_eq(ev_bulk_plan(s, false, &err), 0);
	ck_assert_uint_eq(s->n_pending, 0);
	ck_assert_ptr_null(s->statement);
	ck_assert_uint_eq(s->batches_planned, 0);
	ev_bulk_snapshot_free(&s);
}
END_TEST

START_TEST(tally_counts_every_row_once)
{
	struct ev_bulk_spec sp = spec(EV_TABLE_OUTBOX, EV_ACTION_RETRY_NOW);
	struct ev_bulk_snapshot *s = ev_bulk_snapshot_new(&sp);
	static const enum ev_bulk_state states[] = {
	        EV_BULK_APPLIED, EV_BULK_APPLIED, EV_BULK_SKIPPED,   EV_BULK_FAILED,
	        EV_BULK_PENDING, EV_BULK_REFUSED, EV_BULK_PROTECTED, EV_BULK_APPLIED};
	for (unsigned long long id = 1; id <= 8; id++) {
		struct ev_guard_row r = row(id, 3, "ORDER_CREATED", 1);
		ev_bulk_snapshot_add(s, &r);
		s->items[id - 1].state = states[id - 1];
	}
	struct ev_bulk_tally t = {.batches = 3, .in_doubt = 1};
	ev_bulk_tally_count(s, &t);
	ck_assert_uint_eq(t.counted, 8);
	ck_assert_uint_eq(t.applied, 3);
	ck_assert_uint_eq(t.skipped, 1);
	ck_assert_uint_eq(t.failed, 1);
	ck_assert_uint_eq(t.not_attempted, 1);
	ck_assert_uint_eq(t.refused, 1);
	ck_assert_uint_eq(t.protected_n, 1);
	ck_assert_uint_eq(t.applied + t.skipped + t.failed + t.not_attempted + t.refused +
	                          t.protected_n,
	                  t.counted);
	ck_assert_uint_eq(t.batches, 3);
	ck_assert_uint_eq(t.in_doubt, 1);
	char *d = ev_bulk_tally_describe(&t);
	ck_assert_str_eq(d, "applied 3, skipped 1 (changed meanwhile), failed 1; 1 protected and 1 "
	                    "refused not touched; 1 not attempted");
	free(d);
	ck_assert_str_eq(ev_bulk_state_name(EV_BULK_SKIPPED), "skipped");
	ev_bulk_snapshot_free(&s);
}
END_TEST

START_TEST(rows_by_id_query)
{
	static const unsigned long long ids[] = {7, 18446744073709551615ULL, 3};
	struct ev_query *q = ev_bulk_query_rows(EV_TABLE_OUTBOX, NULL, ids, 3);
	ck_assert_str_eq(q->sql, "/* evtop:bulk.rows */ SELECT id, event_no, event_type, "
	                         "aggregate_type, publish_status, retry_count, max_retry_count, "
	                         "next_retry_time, locked_by, lock_until, fail_reason, version, "
	                         "deleted, update_time, NOW() FROM `biz_outbox_event` WHERE id IN "
	                         "(?, ?, ?) ORDER BY id LIMIT 3");
	ck_assert_str_eq(q->name, "bulk.rows");
	ck_assert_uint_eq(q->nparams, 3);
	ck_assert_int_eq(q->params[1].type, EV_P_UINT);
	ck_assert_uint_eq(q->params[1].u, 18446744073709551615ULL);
	ck_assert_int_eq(q->limit, 3);
	ck_assert_str_eq(q->col_names[q->ncols - 1], "db_now");
	ev_query_free(&q);
	q = ev_bulk_query_rows(EV_TABLE_MESSAGE, "t1", ids, 1);
	ck_assert_msg(strstr(q->sql, "FROM `t1` WHERE id IN (?) ORDER BY id LIMIT 1") != NULL, "%s",
	              q->sql);
	ck_assert_msg(strstr(q->sql, "last_handle_time") != NULL, "%s", q->sql);
	ev_query_free(&q);
}
END_TEST

static json_t *parse(const char *line)
{
	json_error_t e;
	size_t len = strlen(line);
	ck_assert_msg(len > 0 && line[len - 1] == '\n', "no newline: %s", line);
	ck_assert_msg(strchr(line, '\n') == line + len - 1, "more than one line: %s", line);
	json_t *j = json_loads(line, 0, &e);
	ck_assert_msg(j != NULL, "not JSON (%s): %s", e.text, line);
	return j;
}

static const char *jget(json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);
	ck_assert_msg(v != NULL, "no %s", key);
	return json_is_string(v) ? json_string_value(v) : NULL;
}

START_TEST(audit_lines)
{
	struct ev_bulk_spec sp = spec(EV_TABLE_OUTBOX, EV_ACTION_RETRY_SCHEDULE);
	struct ev_error err = {0};
	struct ev_audit_who who = {.source = "default",
	                           .os_user = "ops",
	                           .operator_id = "INC-7",
	                           .db_user = "evtop@%"};
	sp.reason = "MQ is back";
	sp.set.rate = 1;
	struct ev_bulk_snapshot *s = ev_bulk_snapshot_new(&sp);
	for (unsigned long long id = 1; id <= 3; id++) {
		struct ev_guard_row r = row(id, 3, "ORDER_CREATED", (long long)id);
		ev_bulk_snapshot_add(s, &r);
	}
	ck_assert_int_eq(ev_bulk_plan(s, false, &err), 0);
	ev_bulk_run_id(s->run_id, sizeof(s->run_id));
	char other[48];
	ev_bulk_run_id(other, sizeof(other));
	ck_assert_str_ne(s->run_id, other);

	const struct ev_bulk_item *items[] = {&s->items[0], &s->items[1], &s->items[2]};
	char *line = ev_bulk_intent_line("2026-06-01T04:00:00.000Z", &who, s, 2, items, 3);
	json_t *j = parse(line);
	ck_assert_str_eq(jget(j, "result"), "intent");
	ck_assert_str_eq(jget(j, "bulk"), s->run_id);
	ck_assert_int_eq(json_integer_value(json_object_get(j, "batch")), 2);
	ck_assert_str_eq(jget(j, "action"), "retry_schedule");
	ck_assert_str_eq(jget(j, "table"), "biz_outbox_event");
	ck_assert_str_eq(jget(j, "reason"), "MQ is back");
	ck_assert_str_eq(jget(j, "operator"), "INC-7");
	ck_assert_str_eq(jget(j, "db_user"), "evtop@%");
	ck_assert(json_is_null(json_object_get(j, "sudo_user")));
	json_t *rows = json_object_get(j, "rows");
	ck_assert_uint_eq(json_array_size(rows), 3);
	json_t *r2 = json_array_get(rows, 2);
	ck_assert_str_eq(jget(r2, "id"), "3");
	ck_assert_int_eq(json_integer_value(json_object_get(r2, "version")), 3);
	ck_assert_int_eq(json_integer_value(json_object_get(r2, "status")), 3);
	ck_assert_int_eq(json_integer_value(json_object_get(r2, "delay_s")), 2);
	json_decref(j);
	free(line);

	/* The result line is the single action's record, with the run and the batch. */
	struct ev_guard g;
	ck_assert_int_eq(ev_bulk_item_guard(s, &s->items[1], &g, &err), 0);
	struct ev_audit_rec rec = {.time = "2026-06-01T04:00:00.100Z",
	                           .who = &who,
	                           .g = &g,
	                           .before = &s->items[1].row,
	                           .result = EV_AUDIT_SKIPPED,
	                           .error = "the row changed"};
	line = ev_bulk_result_line(&rec, s->run_id, 2);
	char *single = ev_audit_json_line(&rec);
	ck_assert_int_eq(strncmp(line, single, strlen(single) - 2), 0);
	j = parse(line);
	ck_assert_str_eq(jget(j, "result"), "skipped");
	ck_assert_str_eq(jget(j, "error"), "the row changed");
	ck_assert_str_eq(jget(j, "id"), "2");
	ck_assert_str_eq(jget(j, "bulk"), s->run_id);
	ck_assert_int_eq(json_integer_value(json_object_get(j, "batch")), 2);
	ck_assert_int_eq(
	        json_integer_value(json_object_get(json_object_get(j, "before"), "version")), 2);
	json_decref(j);
	free(line);
	free(single);
	ev_guard_clear(&g);

	/* Cancel: the reason in the intent line is the fail_reason each row's record has. */
	sp = spec(EV_TABLE_OUTBOX, EV_ACTION_CANCEL);
	sp.reason = "closed";
	struct ev_bulk_snapshot *c = ev_bulk_snapshot_new(&sp);
	struct ev_guard_row r = row(5, 0, "ORDER_CREATED", 1);
	ev_bulk_snapshot_add(c, &r);
	ck_assert_int_eq(ev_bulk_plan(c, false, &err), 0);
	const struct ev_bulk_item *one[] = {&c->items[0]};
	line = ev_bulk_intent_line("t", &who, c, 1, one, 1);
	j = parse(line);
	ck_assert_str_eq(jget(j, "reason"), "业务已关闭，取消事件发布：closed");
	ck_assert_ptr_null(
	        json_object_get(json_array_get(json_object_get(j, "rows"), 0), "delay_s"));
	json_decref(j);
	free(line);
	ev_bulk_snapshot_free(&c);
	ev_bulk_snapshot_free(&s);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("bulk");
	TCase *tc = tcase_create("bulk");
	tcase_add_test(tc, settings_defaults_and_ranges);
	tcase_add_test(tc, spread_offsets_at_a_rate);
	tcase_add_test(tc, batches_and_pace);
	tcase_add_test(tc, lists_each_action_takes);
	tcase_add_test(tc, snapshot_keeps_a_row_once);
	tcase_add_test(tc, plan_pending_protected_refused_and_offsets);
	tcase_add_test(tc, protected_text_says_what_the_count_is);
	tcase_add_test(tc, plan_refuses_whole_runs);
	tcase_add_test(tc, tally_counts_every_row_once);
	tcase_add_test(tc, rows_by_id_query);
	tcase_add_test(tc, audit_lines);
	suite_add_tcase(s, tc);
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? 0 : 1;
}
