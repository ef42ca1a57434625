/* The dashboard against the model document's own counting SQL, on the seeded data with the
 * server's clock pinned: every figure of every group, for every dimension of both tables;
 * deleted rows never counted; stuck within processing; the failed buckets adding up; the cap
 * reported as a lower bound; the plans of the dashboard's queries. */
#include <config.h>

#include "core/config.h"
#include "core/dashboard.h"
#include "db/conn.h"
#include "db/fetch.h"
#include "testdb.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NOW    "2026-06-01 12:00:00"
#define WINDOW (30 * 86400)

static MYSQL *db;
static struct ev_config cfg;
static struct ev_conn *conn;
static struct ev_table_info info[EV_TABLE_COUNT];

static void setup(void)
{
	struct ev_error err = {0};
	ev_db_init();
	db = tdb_connect();
	tdb_exec(db, "SET timestamp = UNIX_TIMESTAMP('" NOW "')");
	if (tdb_int(db, "SELECT COUNT(*) FROM biz_outbox_event") == 0) {
		char *seed = tdb_srcpath("tests/data/seed.sql");
		tdb_source(db, seed);
		free(seed);
	}
	ev_config_init(&cfg);
	free(cfg.sources[0].defaults_file);
	cfg.sources[0].defaults_file = tdb_pinned_defaults(NOW);
	conn = ev_conn_new(&cfg.sources[0], &cfg);
	ck_assert_msg(ev_conn_connect(conn, &err) == 0, "%s", err.msg);
	for (int t = 0; t < EV_TABLE_COUNT; t++)
		ck_assert_int_eq(
		        ev_conn_table_info(conn, ev_model_table(t)->default_name, &info[t], &err),
		        0);
}

static void teardown(void)
{
	for (int t = 0; t < EV_TABLE_COUNT; t++)
		ev_table_info_clear(&info[t]);
	ev_conn_free(&conn);
	ev_config_free(&cfg);
	mysql_close(db);
}

/* The reference for one figure: the model document's way of counting (its 统计事件处理状态
 * query: COUNT(*) ... WHERE deleted = 0 ... GROUP BY), per group, with no LIMIT. */
static const char *reference_sql(enum ev_dash_figure f, const struct ev_table_def *t, char *buf,
                                 size_t size)
{
	const char *st = t->status_col;
	const char *stuck = t->has_lock ? "lock_until <= NOW()"
	                                : "last_handle_time <= NOW() - INTERVAL 600 SECOND";
	switch (f) {
	case EV_DASH_PENDING:
		snprintf(buf, size, "COUNT(*) FROM %s WHERE deleted = 0 AND %s = 0",
		         t->default_name, st);
		break;
	case EV_DASH_PROCESSING:
		snprintf(buf, size, "COUNT(*) FROM %s WHERE deleted = 0 AND %s = 1",
		         t->default_name, st);
		break;
	case EV_DASH_STUCK:
		snprintf(buf, size, "COUNT(*) FROM %s WHERE deleted = 0 AND %s = 1 AND %s",
		         t->default_name, st, stuck);
		break;
	case EV_DASH_FAILED:
		snprintf(buf, size, "COUNT(*) FROM %s WHERE deleted = 0 AND %s = 3",
		         t->default_name, st);
		break;
	case EV_DASH_FAILED_DUE:
		/* The model document's 查询到期可重试消息 condition. */
		snprintf(buf, size,
		         "COUNT(*) FROM %s WHERE deleted = 0 AND %s = 3 AND retry_count < "
		         "max_retry_count AND next_retry_time <= NOW()",
		         t->default_name, st);
		break;
	case EV_DASH_FAILED_WAITING:
		snprintf(buf, size,
		         "COUNT(*) FROM %s WHERE deleted = 0 AND %s = 3 AND retry_count < "
		         "max_retry_count AND next_retry_time > NOW()",
		         t->default_name, st);
		break;
	case EV_DASH_FAILED_NORETRY:
		snprintf(buf, size,
		         "COUNT(*) FROM %s WHERE deleted = 0 AND %s = 3 AND retry_count < "
		         "max_retry_count AND next_retry_time IS NULL",
		         t->default_name, st);
		break;
	case EV_DASH_EXHAUSTED:
		snprintf(buf, size,
		         "COUNT(*) FROM %s WHERE deleted = 0 AND %s = 3 AND retry_count >= "
		         "max_retry_count",
		         t->default_name, st);
		break;
	case EV_DASH_CREATED:
		snprintf(
		        buf, size,
		        "COUNT(*) FROM %s WHERE deleted = 0 AND create_time >= NOW() - INTERVAL %d "
		        "SECOND",
		        t->default_name, WINDOW);
		break;
	case EV_DASH_SUCCESS:
	case EV_DASH_CANCELLED:
		snprintf(
		        buf, size,
		        "COUNT(*) FROM %s WHERE deleted = 0 AND %s = %d AND create_time >= NOW() - "
		        "INTERVAL %d SECOND",
		        t->default_name, st, f == EV_DASH_SUCCESS ? 2 : 4, WINDOW);
		break;
	case EV_DASH_OLDEST_PENDING_AGE:
		snprintf(buf, size,
		         "IFNULL(TIMESTAMPDIFF(SECOND, MIN(create_time), NOW()), -1) FROM %s WHERE "
		         "deleted = 0 AND %s = 0",
		         t->default_name, st);
		break;
	case EV_DASH_LONGEST_RETRY_WAIT:
		snprintf(buf, size,
		         "IFNULL(TIMESTAMPDIFF(SECOND, MIN(update_time), NOW()), -1) FROM %s WHERE "
		         "deleted = 0 AND %s = 0 AND version > 0",
		         t->default_name, st);
		break;
	case EV_DASH_NFIGURES:
		break;
	}
	return buf;
}

static long long reference(enum ev_dash_figure f, const struct ev_table_def *t, const char *col,
                           const char *group)
{
	char what[512];
	reference_sql(f, t, what, sizeof(what));
	if (col == NULL)
		return tdb_int(db, "SELECT %s", what);
	if (group == NULL)
		return tdb_int(db, "SELECT %s AND %s IS NULL", what, col);
	char *esc = malloc(strlen(group) * 2 + 1);
	mysql_real_escape_string(db, esc, group, strlen(group));
	long long v = tdb_int(db, "SELECT %s AND %s = '%s'", what, col, esc);
	free(esc);
	return v;
}

static struct ev_dash *fetch(enum ev_table_kind t, const char *dim)
{
	struct ev_dash_req req = {
	        .info = &info[t],
	        .table = t,
	        .table_name = NULL,
	        .dimension = dim,
	        .window_s = WINDOW,
	        .stuck_threshold_s = 600,
	};
	struct ev_dash *d = NULL;
	struct ev_error err = {0};
	ck_assert_msg(ev_dash_fetch(conn, &req, &d, &err) == 0, "%s", err.msg);
	ck_assert_msg(d->notes == NULL, "unexpected notes: %s", d->notes);
	return d;
}

static void compare(enum ev_table_kind t, const char *dim)
{
	const struct ev_table_def *def = ev_model_table(t);
	const char *col = dim ? ev_model_dimension(def, dim)->column : NULL;
	struct ev_dash *d = fetch(t, dim);

	for (int f = 0; f < EV_DASH_NFIGURES; f++) {
		long long want = reference((enum ev_dash_figure)f, def, NULL, NULL);
		ck_assert_msg(d->total.f[f].value == want,
		              "%s by %s: total %s = %lld, reference %lld", def->key,
		              dim ? dim : "-", ev_dash_figure_name(f), d->total.f[f].value, want);
		ck_assert(!d->total.f[f].capped && !d->total.f[f].unknown);
	}
	/* Groups: every group with a backlog or a window count appears, with the reference's
	 * figures; no group appears that has none. */
	long long groups = 0;
	for (size_t r = 0; r < d->nrows; r++) {
		const struct ev_dash_row *row = &d->rows[r];
		for (int f = 0; f < EV_DASH_NFIGURES; f++) {
			long long want = reference((enum ev_dash_figure)f, def, col, row->group);
			ck_assert_msg(row->f[f].value == want,
			              "%s by %s, group %s: %s = %lld, reference %lld", def->key,
			              dim, row->group ? row->group : "NULL", ev_dash_figure_name(f),
			              row->f[f].value, want);
		}
		groups++;
	}
	if (col != NULL) {
		long long want = tdb_int(
		        db,
		        "SELECT COUNT(DISTINCT IFNULL(%s, '\\0NULL')) FROM %s WHERE deleted = 0 "
		        "AND (%s IN (0, 1, 3) OR create_time >= NOW() - INTERVAL %d SECOND)",
		        col, def->default_name, def->status_col, WINDOW);
		ck_assert_msg(groups == want, "%s by %s: %lld groups, reference %lld", def->key,
		              dim, groups, want);
	}
	/* Invariants. */
	const struct ev_figure *x = d->total.f;
	ck_assert_int_le(x[EV_DASH_STUCK].value, x[EV_DASH_PROCESSING].value);
	ck_assert_int_eq(x[EV_DASH_FAILED_DUE].value + x[EV_DASH_FAILED_WAITING].value +
	                         x[EV_DASH_FAILED_NORETRY].value + x[EV_DASH_EXHAUSTED].value,
	                 x[EV_DASH_FAILED].value);
	ev_dash_free(&d);
}

START_TEST(every_figure_equals_the_reference)
{
	static const char *const dims[] = {NULL,       "event_type", "source",
	                                   "biz_type", "topic",      "channel"};
	for (int t = 0; t < EV_TABLE_COUNT; t++)
		for (size_t i = 0; i < sizeof(dims) / sizeof(dims[0]); i++)
			if (dims[i] == NULL ||
			    ev_model_dimension(ev_model_table(t), dims[i]) != NULL)
				compare((enum ev_table_kind)t, dims[i]);
}
END_TEST

START_TEST(the_seed_has_what_the_figures_need)
{
	/* The comparison above proves nothing on empty buckets: make sure each is populated. */
	for (int t = 0; t < EV_TABLE_COUNT; t++) {
		struct ev_dash *d = fetch((enum ev_table_kind)t, NULL);
		for (int f = 0; f < EV_DASH_NFIGURES; f++)
			ck_assert_msg(d->total.f[f].value > 0, "%s: %s is %lld in the seed",
			              ev_model_table(t)->key, ev_dash_figure_name(f),
			              d->total.f[f].value);
		ev_dash_free(&d);
	}
}
END_TEST

START_TEST(plans_use_the_forced_index)
{
	for (int t = 0; t < EV_TABLE_COUNT; t++) {
		tdb_exec(db, "ANALYZE TABLE %s", ev_model_table(t)->default_name);
		for (int w = 0; w < EV_DQ_COUNT; w++) {
			struct ev_dash_req req = {.info = &info[t],
			                          .table = t,
			                          .dimension = "event_type",
			                          .window_s = WINDOW,
			                          .stuck_threshold_s = 600};
			struct ev_error err = {0};
			struct ev_query *q = ev_dash_query(&req, (enum ev_dash_query)w, &err);
			ck_assert_msg(q != NULL, "%s", err.msg);
			char *sql = ev_query_render(q);
			char *explain = malloc(strlen(sql) + 16);
			sprintf(explain, "EXPLAIN %s", sql);
			ck_assert_int_eq(mysql_query(db, explain), 0);
			MYSQL_RES *r = mysql_store_result(db);
			MYSQL_ROW row;
			int base = 0;
			unsigned nf = mysql_num_fields(r);
			MYSQL_FIELD *fields = mysql_fetch_fields(r);
			int ci_table = -1, ci_type = -1, ci_key = -1;
			for (unsigned i = 0; i < nf; i++) {
				if (strcmp(fields[i].name, "table") == 0)
					ci_table = (int)i;
				if (strcmp(fields[i].name, "type") == 0)
					ci_type = (int)i;
				if (strcmp(fields[i].name, "key") == 0)
					ci_key = (int)i;
			}
			while ((row = mysql_fetch_row(r)) != NULL) {
				if (row[ci_table] == NULL ||
				    strcmp(row[ci_table], ev_model_table(t)->default_name) != 0)
					continue; /* the derived table's own row */
				base++;
				ck_assert_msg(row[ci_key] != NULL, "%s: no index used:\n%s",
				              q->name, sql);
				ck_assert_msg(strcmp(row[ci_type], "ALL") != 0,
				              "%s: a table scan:\n%s", q->name, sql);
				ck_assert_msg(strstr(sql, row[ci_key]) != NULL,
				              "%s: uses %s, not the forced index:\n%s", q->name,
				              row[ci_key], sql);
			}
			ck_assert_int_eq(base, 1);
			mysql_free_result(r);
			free(explain);
			free(sql);
			ev_query_free(&q);
		}
	}
}
END_TEST

START_TEST(skipped_window_counts_are_carried_over)
{
	/* The console re-reads the window counts only every few refreshes: a dashboard built
	 * with them skipped and carried from an earlier one equals a full one. */
	for (int t = 0; t < EV_TABLE_COUNT; t++) {
		struct ev_dash *full = fetch((enum ev_table_kind)t, "event_type");
		struct ev_dash_req req = {.info = &info[t],
		                          .table = (enum ev_table_kind)t,
		                          .dimension = "event_type",
		                          .window_s = WINDOW,
		                          .stuck_threshold_s = 600,
		                          .skip = 1u << EV_DQ_WINDOW};
		struct ev_dash *part = NULL;
		struct ev_error err = {0};
		ck_assert_int_eq(ev_dash_fetch(conn, &req, &part, &err), 0);
		ck_assert_uint_eq(part->skipped, 1u << EV_DQ_WINDOW);
		ev_dash_carry(part, full);
		ev_dash_finish(part);
		ck_assert_uint_eq(part->nrows, full->nrows);
		for (int f = 0; f < EV_DASH_NFIGURES; f++) {
			ck_assert_int_eq(part->total.f[f].value, full->total.f[f].value);
			for (size_t r = 0; r < full->nrows; r++) {
				const struct ev_dash_row *x =
				        ev_dash_find(part, full->rows[r].group);
				ck_assert_ptr_nonnull(x);
				ck_assert_int_eq(x->f[f].value, full->rows[r].f[f].value);
			}
		}
		/* Without an earlier one, the skipped figures are simply absent (zero). */
		struct ev_dash *alone = NULL;
		ck_assert_int_eq(ev_dash_fetch(conn, &req, &alone, &err), 0);
		ev_dash_finish(alone);
		ck_assert_int_eq(alone->total.f[EV_DASH_CREATED].value, 0);
		ck_assert_int_gt(full->total.f[EV_DASH_CREATED].value, 0);
		ev_dash_free(&alone);
		ev_dash_free(&part);
		ev_dash_free(&full);
	}
}
END_TEST

START_TEST(a_capped_count_is_a_lower_bound)
{
	tdb_exec(db,
	         "INSERT INTO biz_outbox_event (id, event_no, aggregate_type, aggregate_id, "
	         "event_type, event_source, publish_channel, event_payload, publish_status, "
	         "create_time, update_time) SELECT 5000000 + seq, CONCAT('CAP-', seq), 'ORDER', "
	         "seq, 'BULK_TYPE', 'bulk', 'MQ', '{}', 0, NOW() - INTERVAL 2 DAY, NOW() - "
	         "INTERVAL 2 DAY FROM seq_1_to_100050");
	struct ev_dash *d = fetch(EV_TABLE_OUTBOX, "event_type");
	const struct ev_figure *p = &d->total.f[EV_DASH_PENDING];
	ck_assert(p->capped);
	ck_assert_int_eq(p->value, EV_DASH_CAP);
	char buf[32];
	ck_assert_str_eq(ev_figure_format(p, buf, sizeof(buf)), "≥100000");
	/* The other queries were not capped. */
	ck_assert(!d->total.f[EV_DASH_FAILED].capped);
	ck_assert_int_eq(d->total.f[EV_DASH_FAILED].value,
	                 reference(EV_DASH_FAILED, ev_model_table(EV_TABLE_OUTBOX), NULL, NULL));
	ev_dash_free(&d);
}
END_TEST

START_TEST(a_missing_index_is_na_not_a_scan)
{
	tdb_exec(db, "ALTER TABLE biz_message_event DROP INDEX idx_create_time");
	ev_table_info_clear(&info[EV_TABLE_MESSAGE]);
	struct ev_error err = {0};
	ck_assert_int_eq(
	        ev_conn_table_info(conn, "biz_message_event", &info[EV_TABLE_MESSAGE], &err), 0);
	struct ev_dash_req req = {.info = &info[EV_TABLE_MESSAGE],
	                          .table = EV_TABLE_MESSAGE,
	                          .window_s = WINDOW,
	                          .stuck_threshold_s = 600};
	struct ev_dash *d = NULL;
	ck_assert_int_eq(ev_dash_fetch(conn, &req, &d, &err), 0);
	ck_assert(d->total.f[EV_DASH_CREATED].unknown);
	ck_assert(d->total.f[EV_DASH_SUCCESS].unknown);
	ck_assert(!d->total.f[EV_DASH_PENDING].unknown);
	ck_assert_ptr_nonnull(strstr(d->notes, "n/a — needs an index on (create_time)"));
	char buf[32];
	ck_assert_str_eq(ev_figure_format(&d->total.f[EV_DASH_CREATED], buf, sizeof(buf)), "?");
	ev_dash_free(&d);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("dashboard");
	TCase *tc = tcase_create("dashboard");
	tcase_set_timeout(tc, 120);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, the_seed_has_what_the_figures_need);
	tcase_add_test(tc, every_figure_equals_the_reference);
	tcase_add_test(tc, plans_use_the_forced_index);
	tcase_add_test(tc, skipped_window_counts_are_carried_over);
	tcase_add_test(tc, a_capped_count_is_a_lower_bound);
	tcase_add_test(tc, a_missing_index_is_na_not_a_scan);
	suite_add_tcase(s, tc);
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? 0 : 1;
}
