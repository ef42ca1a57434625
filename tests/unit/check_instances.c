/* core/instances: the verdict on a publisher instance from its figures at a pinned server
 * clock (alive, dead, quiet), the newest claim from lock_until and last_publish_time, the
 * instances from the rows of ev_query_instances, and that query's exact SQL per table. */
#include <config.h>

#include "core/instances.h"
#include "core/query.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* 2026-06-01 12:00:00 UTC, the screen tests' pinned clock. */
#define NOW   1780315200LL
#define LEASE 120

START_TEST(newest_claim_from_lock_and_publish_time)
{
	/* The claim set lock_until = NOW() + lease and last_publish_time = NOW(). */
	ck_assert_int_eq(ev_inst_newest_claim(NOW + LEASE, NOW, LEASE), NOW);
	/* A later last_publish_time than the lock says (a shorter lease than the setting). */
	ck_assert_int_eq(ev_inst_newest_claim(NOW, NOW - 10, LEASE), NOW - 10);
	/* A later lock than the publish time (a longer lease than the setting). */
	ck_assert_int_eq(ev_inst_newest_claim(NOW + 300, NOW - 500, LEASE), NOW + 180);
	/* NULLs: one side alone, or nothing known. */
	ck_assert_int_eq(ev_inst_newest_claim(0, NOW - 7, LEASE), NOW - 7);
	ck_assert_int_eq(ev_inst_newest_claim(NOW + 60, 0, LEASE), NOW - 60);
	ck_assert_int_eq(ev_inst_newest_claim(0, 0, LEASE), 0);
}
END_TEST

START_TEST(verdict_from_the_figures)
{
	/* Claimed a second ago: alive, whatever it holds expired. */
	ck_assert_int_eq(ev_inst_verdict(NOW, 5, 4, NOW - 1, LEASE), EV_INST_ALIVE);
	/* Exactly two leases ago is still recent; one second more is not. */
	ck_assert_int_eq(ev_inst_verdict(NOW, 3, 3, NOW - 2 * LEASE, LEASE), EV_INST_ALIVE);
	ck_assert_int_eq(ev_inst_verdict(NOW, 3, 3, NOW - 2 * LEASE - 1, LEASE), EV_INST_DEAD);
	/* Only expired locks, the last claim long ago: dead. */
	ck_assert_int_eq(ev_inst_verdict(NOW, 12, 12, NOW - 3600, LEASE), EV_INST_DEAD);
	/* No claim known and every lock expired: dead. */
	ck_assert_int_eq(ev_inst_verdict(NOW, 1, 1, 0, LEASE), EV_INST_DEAD);
	/* No recent claim but a lock that is not expired (lock_until NULL): neither. */
	ck_assert_int_eq(ev_inst_verdict(NOW, 2, 1, NOW - 3600, LEASE), EV_INST_QUIET);
	/* The window is two leases of the setting. */
	ck_assert_int_eq(ev_inst_verdict(NOW, 1, 1, NOW - 30, 10), EV_INST_DEAD);
	ck_assert_int_eq(ev_inst_verdict(NOW, 1, 1, NOW - 20, 10), EV_INST_ALIVE);
	ck_assert_str_eq(ev_inst_verdict_name(EV_INST_ALIVE), "alive");
	ck_assert_str_eq(ev_inst_verdict_name(EV_INST_DEAD), "dead");
	ck_assert_str_eq(ev_inst_verdict_name(EV_INST_QUIET), "quiet");
	ck_assert_str_eq(ev_inst_verdict_name(EV_INST_NONE), "");
}
END_TEST

static struct ev_rowset *rows(void)
{
	static const char *const names[] = {"grp",    "locks",      "expired", "oldest",
	                                    "newest", "last_claim", "now"};
	static const enum ev_ctype types[] = {EV_CT_TEXT, EV_CT_INT, EV_CT_INT, EV_CT_INT,
	                                      EV_CT_INT,  EV_CT_INT, EV_CT_INT};
	return ev_rowset_new(7, names, types);
}

static void add(struct ev_rowset *rs, const char *grp, long long locks, long long expired,
                long long oldest, long long newest, long long last_claim)
{
	struct ev_cell *c = ev_rowset_add_row(rs);
	char buf[6][32];
	long long v[6] = {locks, expired, oldest, newest, last_claim, NOW};
	ev_cell_set(&c[0], grp, grp ? strlen(grp) : 0);
	for (int i = 0; i < 6; i++) {
		snprintf(buf[i], sizeof(buf[i]), "%lld", v[i]);
		if (v[i] == 0 && i >= 2 && i <= 4)
			ev_cell_set(&c[i + 1], NULL, 0);
		else
			ev_cell_set(&c[i + 1], buf[i], strlen(buf[i]));
	}
}

START_TEST(instances_from_rows)
{
	struct ev_rowset *rs = rows();
	/* publisher-01 claimed 5 s ago and holds one stuck row of an hour ago too. */
	add(rs, "publisher-01", 2, 1, NOW - 3600, NOW + LEASE - 5, NOW - 5);
	/* publisher-02 died 10 minutes ago holding 3 locks. */
	add(rs, "publisher-02", 3, 3, NOW - 480, NOW - 480, NOW - 600);
	/* A row processing without an owner, no times at all. */
	add(rs, NULL, 1, 0, 0, 0, 0);
	struct ev_instances *in = ev_instances_from_rows(rs, EV_TABLE_OUTBOX, LEASE);
	ck_assert_uint_eq(in->n, 3);
	ck_assert_int_eq(in->now, NOW);
	ck_assert_int_eq(in->rows, 6);
	ck_assert(!in->capped);
	const struct ev_instance *p1 = ev_instances_find(in, "publisher-01");
	const struct ev_instance *p2 = ev_instances_find(in, "publisher-02");
	ck_assert_ptr_nonnull(p1);
	ck_assert_ptr_nonnull(p2);
	ck_assert_int_eq(p1->verdict, EV_INST_ALIVE);
	ck_assert_int_eq(p1->newest_claim, NOW - 5);
	ck_assert_int_eq(p1->oldest, NOW - 3600);
	ck_assert_int_eq(p2->verdict, EV_INST_DEAD);
	ck_assert_int_eq(p2->newest_claim, NOW - 600);
	ck_assert_int_eq(p2->locks, 3);
	ck_assert_int_eq(p2->expired, 3);
	const struct ev_instance *none = ev_instances_find(in, NULL);
	ck_assert_ptr_nonnull(none);
	ck_assert_int_eq(none->verdict, EV_INST_QUIET);
	ck_assert_uint_eq(in->alive, 1);
	ck_assert_uint_eq(in->dead, 1);
	ck_assert_ptr_null(ev_instances_find(in, "publisher-03"));
	ev_instances_free(&in);
	ck_assert_ptr_null(in);

	/* The message table: no verdict, its newest is the latest last_handle_time. */
	in = ev_instances_from_rows(rs, EV_TABLE_MESSAGE, LEASE);
	ck_assert_int_eq(in->v[0].verdict, EV_INST_NONE);
	ck_assert_int_eq(in->v[0].newest_claim, NOW + LEASE - 5);
	ck_assert_uint_eq(in->alive + in->dead, 0);
	ev_instances_free(&in);

	/* Nothing processing: no instance. */
	ev_rowset_truncate(rs, 0);
	in = ev_instances_from_rows(rs, EV_TABLE_OUTBOX, LEASE);
	ck_assert_uint_eq(in->n, 0);
	ev_instances_free(&in);
	ev_rowset_free(&rs);
}
END_TEST

START_TEST(capped_read_is_a_lower_bound)
{
	struct ev_rowset *rs = rows();
	add(rs, "publisher-01", EV_INSTANCES_CAP - 1, 0, NOW, NOW + LEASE, NOW);
	add(rs, "publisher-02", 1, 1, NOW - 600, NOW - 600, NOW - 700);
	struct ev_instances *in = ev_instances_from_rows(rs, EV_TABLE_OUTBOX, LEASE);
	ck_assert(in->capped);
	ev_instances_free(&in);
	ev_rowset_free(&rs);
}
END_TEST

START_TEST(query_per_table)
{
	struct ev_error err = {0};
	struct ev_filter f = {0};
	ck_assert_int_eq(ev_filter_set(&f, "event_type", "PAY_SUCCESS", &err), 0);
	struct ev_list_req r = {.table = EV_TABLE_OUTBOX,
	                        .kind = EV_LIST_FAILED,
	                        .limit = 5,
	                        .stuck_threshold_s = 600,
	                        .filter = &f};
	struct ev_query *q = ev_query_instances(&r, &err);
	ck_assert_msg(q != NULL, "%s", err.msg);
	ck_assert_str_eq(
	        q->sql, "/* evtop:list.instances */ SELECT grp, COUNT(*), SUM(lock_until <= "
	                "NOW()), UNIX_TIMESTAMP(MIN(lock_until)), UNIX_TIMESTAMP(MAX(lock_until)), "
	                "UNIX_TIMESTAMP(MAX(last_publish_time)), UNIX_TIMESTAMP() FROM (SELECT "
	                "locked_by AS grp, lock_until, last_publish_time FROM `biz_outbox_event` "
	                "WHERE deleted = 0 AND publish_status = 1 AND event_type = ? LIMIT ?) AS "
	                "capped GROUP BY grp ORDER BY grp LIMIT 200");
	ck_assert_uint_eq(q->nparams, 2);
	ck_assert_str_eq(q->params[0].s, "PAY_SUCCESS");
	ck_assert_int_eq(q->params[1].i, EV_INSTANCES_CAP);
	ck_assert_uint_eq(q->ncols, 7);
	ev_query_free(&q);

	r.table = EV_TABLE_MESSAGE;
	r.filter = NULL;
	q = ev_query_instances(&r, &err);
	ck_assert_msg(q != NULL, "%s", err.msg);
	ck_assert_str_eq(q->sql,
	                 "/* evtop:list.instances */ SELECT grp, COUNT(*), SUM(last_handle_time <= "
	                 "NOW() - INTERVAL ? SECOND), UNIX_TIMESTAMP(MIN(last_handle_time)), "
	                 "UNIX_TIMESTAMP(MAX(last_handle_time)), NULL, UNIX_TIMESTAMP() FROM "
	                 "(SELECT event_source AS grp, last_handle_time FROM `biz_message_event` "
	                 "WHERE deleted = 0 AND event_status = 1 LIMIT ?) AS capped GROUP BY grp "
	                 "ORDER BY grp LIMIT 200");
	ck_assert_uint_eq(q->nparams, 2);
	ck_assert_int_eq(q->params[0].i, 600);
	ck_assert_int_eq(q->params[1].i, EV_INSTANCES_CAP);
	ev_query_free(&q);

	/* Payload terms search a list's pages; the instances count rows whole. */
	ck_assert_int_eq(ev_filter_parse(&f, "payload.orderId=1", &err), 0);
	r.filter = &f;
	ck_assert_ptr_null(ev_query_instances(&r, &err));
	ev_filter_free(&f);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("instances");
	TCase *tc = tcase_create("instances");
	tcase_add_test(tc, newest_claim_from_lock_and_publish_time);
	tcase_add_test(tc, verdict_from_the_figures);
	tcase_add_test(tc, instances_from_rows);
	tcase_add_test(tc, capped_read_is_a_lower_bound);
	tcase_add_test(tc, query_per_table);
	suite_add_tcase(s, tc);
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? 0 : 1;
}
