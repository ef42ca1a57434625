/* core/zone: the time zone judgement in both directions and at its edges, the query through
 * the create_time index, the reason the operator reads (row, offset, the --time-zone that fixes
 * it), and the guard's dry-run count built from the UPDATE's own WHERE (#25 item 1). */
#include <config.h>

#include "core/guard.h"
#include "core/zone.h"

#include <check.h>
#include <stdlib.h>
#include <string.h>

#define H 3600LL
#define M 60LL

static enum ev_zone_dir judge(long long ahead_s, long long *shift)
{
	return ev_zone_judge(ahead_s, shift);
}

START_TEST(behind)
{
	long long shift = 1;
	/* Less than an hour behind: the applications' own pace, no alarm. */
	ck_assert_int_eq(judge(-59 * M, &shift), EV_ZONE_OK);
	ck_assert_int_eq(shift, 0);
	ck_assert_int_eq(judge(-(59 * M + 59), &shift), EV_ZONE_OK);
	ck_assert_int_eq(judge(0, &shift), EV_ZONE_OK);
	ck_assert_int_eq(judge(-299, &shift), EV_ZONE_OK);
	/* A whole hour and more. */
	ck_assert_int_eq(judge(-1 * H, &shift), EV_ZONE_BEHIND);
	ck_assert_int_eq(shift, -1 * H);
	ck_assert_int_eq(judge(-8 * H, &shift), EV_ZONE_BEHIND);
	ck_assert_int_eq(shift, -8 * H);
	/* The newest row is a few minutes old: still the same zone. */
	ck_assert_int_eq(judge(-(8 * H + 7 * M), &shift), EV_ZONE_BEHIND);
	ck_assert_int_eq(shift, -8 * H);
	ck_assert_int_eq(judge(-(8 * H + 15 * M), &shift), EV_ZONE_BEHIND);
	ck_assert_int_eq(shift, -8 * H);
	/* 20 min past a whole hour: a mismatch whose newest row is 20 min old looks the same,
	 * and a missed mismatch costs more than a needless confirmation. */
	ck_assert_int_eq(judge(-(8 * H + 20 * M), &shift), EV_ZONE_BEHIND);
	ck_assert_int_eq(shift, -8 * H);
	ck_assert_int_eq(judge(-(8 * H + 15 * M + 1), &shift), EV_ZONE_BEHIND);
	ck_assert_int_eq(shift, -8 * H);
	ck_assert_int_eq(judge(-(3 * H + 5 * M), &shift), EV_ZONE_BEHIND);
	ck_assert_int_eq(shift, -3 * H);
	/* Half hours (India, +05:30). */
	ck_assert_int_eq(judge(-(5 * H + 30 * M), &shift), EV_ZONE_BEHIND);
	ck_assert_int_eq(shift, -(5 * H + 30 * M));
	/* An application's clock a little fast: just under the hour. */
	ck_assert_int_eq(judge(-(8 * H - 90), &shift), EV_ZONE_BEHIND);
	ck_assert_int_eq(shift, -8 * H);
	ck_assert_int_eq(judge(-(8 * H - 3 * M), &shift), EV_ZONE_BEHIND);
	ck_assert_int_eq(shift, -(7 * H + 30 * M));
	/* No zone is further apart than 14 h (plus the row's age). */
	ck_assert_int_eq(judge(-(14 * H + 15 * M), &shift), EV_ZONE_BEHIND);
	ck_assert_int_eq(shift, -14 * H);
	ck_assert_int_eq(judge(-(14 * H + 15 * M + 1), &shift), EV_ZONE_OK);
	ck_assert_int_eq(judge(-15 * H, &shift), EV_ZONE_OK);
	ck_assert_int_eq(judge(-3 * 86400, &shift), EV_ZONE_OK);
}
END_TEST

START_TEST(ahead_of_now)
{
	long long shift = 1;
	ck_assert_int_eq(judge(5 * M, &shift), EV_ZONE_OK);
	ck_assert_int_eq(judge(5 * M + 1, &shift), EV_ZONE_AHEAD);
	ck_assert_int_eq(shift, 15 * M);
	ck_assert_int_eq(judge(30 * M, &shift), EV_ZONE_AHEAD);
	ck_assert_int_eq(shift, 30 * M);
	ck_assert_int_eq(judge(3 * H - 5 * M, &shift), EV_ZONE_AHEAD);
	ck_assert_int_eq(shift, 3 * H);
	ck_assert_int_eq(judge(8 * H, &shift), EV_ZONE_AHEAD);
	ck_assert_int_eq(shift, 8 * H);
	ck_assert_int_eq(judge(14 * H + 15 * M, &shift), EV_ZONE_AHEAD);
	/* Days in the future is bad data or a clock, not a zone (doctor warns). */
	ck_assert_int_eq(judge(2 * 86400, &shift), EV_ZONE_OK);
	ck_assert_int_eq(shift, 0);
}
END_TEST

START_TEST(query_reads_the_index)
{
	struct ev_query *q = ev_zone_query_newest("biz_outbox_event", "idx_create_time");
	ck_assert_str_eq(q->sql, "/* evtop:zone.newest */ SELECT id, event_no, create_time, NOW(), "
	                         "TIMESTAMPDIFF(SECOND, NOW(), create_time), "
	                         "TIMESTAMPDIFF(SECOND, UTC_TIMESTAMP(), NOW()) FROM "
	                         "`biz_outbox_event` FORCE INDEX (`idx_create_time`) ORDER BY "
	                         "create_time DESC LIMIT 1");
	ck_assert_ptr_null(strstr(q->sql, "update_time"));
	ev_query_free(&q);
	q = ev_zone_query_newest("t", NULL);
	ck_assert_ptr_nonnull(strstr(q->sql, "FORCE INDEX (`PRIMARY`) ORDER BY id DESC LIMIT 1"));
	ev_query_free(&q);
}
END_TEST

static struct ev_rowset *newest_rs(const char *id, const char *no, const char *ct, const char *now,
                                   const char *ahead_s, const char *off)
{
	static const char *const names[] = {"id",  "event_no", "create_time",
	                                    "now", "ahead_s",  "utc_offset_s"};
	static const enum ev_ctype types[] = {EV_CT_TEXT, EV_CT_TEXT, EV_CT_TEXT,
	                                      EV_CT_TEXT, EV_CT_TEXT, EV_CT_TEXT};
	const char *v[] = {id, no, ct, now, ahead_s, off};
	struct ev_rowset *rs = ev_rowset_new(6, names, types);
	struct ev_cell *row = ev_rowset_add_row(rs);
	for (int i = 0; i < 6; i++)
		ev_cell_set(&row[i], v[i], v[i] ? strlen(v[i]) : 0);
	return rs;
}

START_TEST(reason_names_row_offset_and_fix)
{
	struct ev_error err = {0};
	struct ev_zone_newest n;
	/* Written in UTC, read at +08:00: 8 h behind. A hostile event_no is sanitised. */
	struct ev_rowset *rs = newest_rs("17", "OB-\x1b[2J-9", "2026-06-01 04:00:00",
	                                 "2026-06-01 12:00:00", "-28800", "28800");
	ck_assert_int_eq(ev_zone_from_rowset(rs, &n, &err), 0);
	ck_assert_int_eq(n.dir, EV_ZONE_BEHIND);
	ck_assert_int_eq(n.shift_s, -8 * H);
	char *why = ev_zone_reason("biz_outbox_event", &n);
	ck_assert_ptr_nonnull(why);
	ck_assert_msg(strstr(why, "biz_outbox_event") != NULL, "%s", why);
	ck_assert_msg(strstr(why, "id 17, create_time 2026-06-01 04:00:00") != NULL, "%s", why);
	ck_assert_msg(strstr(why, "is 8h00m behind NOW() (2026-06-01 12:00:00") != NULL, "%s", why);
	ck_assert_msg(strstr(why, "session zone UTC+08:00") != NULL, "%s", why);
	ck_assert_msg(strstr(why, "--time-zone=+00:00") != NULL, "%s", why);
	ck_assert_msg(strstr(why, "--clock-ok") != NULL, "%s", why);
	ck_assert_msg(strchr(why, '\x1b') == NULL, "%s", why);
	free(why);
	ev_zone_newest_clear(&n);
	ev_rowset_free(&rs);

	/* Written at +03:00, read in UTC: ahead. */
	rs = newest_rs("90", "OB-TZ", "2026-06-01 14:55:00", "2026-06-01 12:00:00", "10500", "0");
	ck_assert_int_eq(ev_zone_from_rowset(rs, &n, &err), 0);
	ck_assert_int_eq(n.dir, EV_ZONE_AHEAD);
	why = ev_zone_reason("biz_outbox_event", &n);
	ck_assert_msg(strstr(why, "event_no OB-TZ, id 90") != NULL, "%s", why);
	ck_assert_msg(strstr(why, "2h55m ahead of NOW()") != NULL, "%s", why);
	ck_assert_msg(strstr(why, "--time-zone=+03:00") != NULL, "%s", why);
	free(why);
	ev_zone_newest_clear(&n);
	ev_rowset_free(&rs);

	/* 20 minutes old: no reason. */
	rs = newest_rs("1", "A", "2026-06-01 11:40:00", "2026-06-01 12:00:00", "-1200", "0");
	ck_assert_int_eq(ev_zone_from_rowset(rs, &n, &err), 0);
	ck_assert_int_eq(n.dir, EV_ZONE_OK);
	ck_assert_ptr_null(ev_zone_reason("t", &n));
	ev_zone_newest_clear(&n);
	ev_rowset_free(&rs);

	/* An empty table tells nothing. */
	static const char *const names[] = {"id"};
	static const enum ev_ctype types[] = {EV_CT_TEXT};
	rs = ev_rowset_new(1, names, types);
	ck_assert_int_eq(ev_zone_from_rowset(rs, &n, &err), 0);
	ck_assert(!n.found);
	ck_assert_ptr_null(ev_zone_reason("t", &n));
	ev_rowset_free(&rs);
}
END_TEST

/* --dry-run counts the rows the UPDATE's exact WHERE matches: the same text, the same
 * parameters after the SET's. */
START_TEST(match_is_the_update_where)
{
	char no[] = "OB-LOCKED", lock[] = "2026-06-01 12:05:00", type[] = "ORDER_CREATED",
	     biz[] = "ORDER", handled[] = "2026-06-01 11:40:00";
	struct ev_guard_row row = {.id = 5,
	                           .event_no = no,
	                           .status = 1,
	                           .version = 3,
	                           .lock_until = lock,
	                           .event_type = type,
	                           .biz_type = biz};
	struct ev_guard_req req = {.table = EV_TABLE_OUTBOX,
	                           .action = EV_ACTION_RECOVER,
	                           .row = &row,
	                           .stuck_threshold_s = 600};
	struct ev_guard g;
	struct ev_error err = {0};
	ck_assert_int_eq(ev_guard_build(&req, &g, &err), 0);
	const char *where = strstr(g.update->sql, " WHERE ");
	ck_assert_ptr_nonnull(where);
	char *want = malloc(strlen(where) + 100);
	strcpy(want, "/* evtop:action.match */ SELECT COUNT(*) FROM `biz_outbox_event`");
	strcat(want, where);
	ck_assert_str_eq(g.match->sql, want);
	free(want);
	char *m = ev_query_render(g.match);
	ck_assert_str_eq(m, "/* evtop:action.match */ SELECT COUNT(*) FROM `biz_outbox_event` "
	                    "WHERE id = 5 AND deleted = 0 AND version = 3 AND publish_status = 1 "
	                    "AND lock_until <= NOW()");
	free(m);
	ev_guard_clear(&g);

	/* The message table's recover binds the threshold in the WHERE. */
	row.last_handle_time = handled;
	row.lock_until = NULL;
	req.table = EV_TABLE_MESSAGE;
	req.recover_message = true;
	ck_assert_int_eq(ev_guard_build(&req, &g, &err), 0);
	m = ev_query_render(g.match);
	ck_assert_str_eq(m, "/* evtop:action.match */ SELECT COUNT(*) FROM `biz_message_event` "
	                    "WHERE id = 5 AND deleted = 0 AND version = 3 AND event_status = 1 "
	                    "AND last_handle_time <= NOW() - INTERVAL 600 SECOND");
	free(m);
	ev_guard_clear(&g);
}
END_TEST

START_TEST(clock_ok_audit_line)
{
	struct ev_audit_who who = {.source = "prod", .os_user = "ops", .operator_id = "INC-7"};
	char *line = ev_audit_clock_ok_line("2026-06-01T12:00:00.000Z", &who, "biz_outbox_event",
	                                    "the table is quiet tonight", "time zone mismatch");
	ck_assert_msg(strstr(line, "\"action\":\"clock-ok\"") != NULL, "%s", line);
	ck_assert_msg(strstr(line, "\"reason\":\"the table is quiet tonight\"") != NULL, "%s",
	              line);
	ck_assert_msg(strstr(line, "\"operator\":\"INC-7\"") != NULL, "%s", line);
	ck_assert_msg(strstr(line, "\"clock_suspect\":\"time zone mismatch\"") != NULL, "%s", line);
	ck_assert_msg(strstr(line, "\"result\":\"allowed\"") != NULL, "%s", line);
	ck_assert(line[strlen(line) - 1] == '\n');
	free(line);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("zone");
	TCase *tc = tcase_create("zone");
	tcase_add_test(tc, behind);
	tcase_add_test(tc, ahead_of_now);
	tcase_add_test(tc, query_reads_the_index);
	tcase_add_test(tc, reason_names_row_offset_and_fix);
	tcase_add_test(tc, match_is_the_update_where);
	tcase_add_test(tc, clock_ok_audit_line);
	suite_add_tcase(s, tc);
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? 0 : 1;
}
