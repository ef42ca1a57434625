/* The schema in sql/ holds every table, column (type, nullability) and index of the model
 * document, checked through information_schema on the server the harness loaded it into. */
#include <config.h>

#include "testdb.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct expect {
	char kind[256];
	char table[256];
	char name[256];
	char a[256]; /* column: type; index: unique|key */
	char b[256]; /* column: NULL|NOTNULL; index: columns */
};

static struct expect *load(size_t *count)
{
	const char *override = getenv("EVTOP_MODEL_SCHEMA");
	char *path = override ? strdup(override) : tdb_srcpath("tests/data/model-schema.txt");
	FILE *f = fopen(path, "r");
	ck_assert_msg(f != NULL, "cannot open %s", path);
	struct expect *v = NULL;
	size_t n = 0;
	char line[512], table[256] = "";
	while (fgets(line, sizeof(line), f) != NULL) {
		char kind[16], w1[256], w2[256], w3[256];
		if (line[0] == '#' || line[0] == '\n')
			continue;
		int k = sscanf(line, "%15s %255s %255s %255s", kind, w1, w2, w3);
		if (strcmp(kind, "table") == 0 && k == 2) {
			snprintf(table, sizeof(table), "%s", w1);
			continue;
		}
		ck_assert_msg(k == 4, "bad line in %s: %s", path, line);
		v = realloc(v, (n + 1) * sizeof(*v));
		snprintf(v[n].kind, sizeof(v[n].kind), "%s", kind);
		snprintf(v[n].table, sizeof(v[n].table), "%s", table);
		snprintf(v[n].name, sizeof(v[n].name), "%s", w1);
		snprintf(v[n].a, sizeof(v[n].a), "%s", w2);
		snprintf(v[n].b, sizeof(v[n].b), "%s", w3);
		n++;
	}
	fclose(f);
	free(path);
	*count = n;
	return v;
}

START_TEST(tables_exist)
{
	MYSQL *db = tdb_connect();
	size_t n;
	struct expect *v = load(&n);
	for (size_t i = 0; i < n; i++) {
		long long c = tdb_int(db,
		                      "SELECT COUNT(*) FROM information_schema.TABLES WHERE "
		                      "TABLE_SCHEMA = DATABASE() AND TABLE_NAME = '%s' AND "
		                      "TABLE_COLLATION LIKE 'utf8mb4%%' AND ENGINE = 'InnoDB'",
		                      v[i].table);
		ck_assert_msg(c == 1, "table %s missing (or not InnoDB/utf8mb4)", v[i].table);
	}
	free(v);
	mysql_close(db);
}
END_TEST

/* Does the server's column match the model document's type? MariaDB stores JSON as LONGTEXT
 * with a JSON_VALID check constraint. */
static void check_column(MYSQL *db, const struct expect *e)
{
	char q[1024];
	snprintf(q, sizeof(q),
	         "SELECT DATA_TYPE, COLUMN_TYPE, IFNULL(CHARACTER_MAXIMUM_LENGTH, 0), IS_NULLABLE "
	         "FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = DATABASE() AND "
	         "TABLE_NAME = '%s' AND COLUMN_NAME = '%s'",
	         e->table, e->name);
	ck_assert_int_eq(mysql_query(db, q), 0);
	MYSQL_RES *r = mysql_store_result(db);
	MYSQL_ROW row = mysql_fetch_row(r);
	ck_assert_msg(row != NULL, "column %s.%s missing", e->table, e->name);
	const char *dtype = row[0], *ctype = row[1];
	long len = atol(row[2]);
	int nullable = strcmp(row[3], "YES") == 0;

	char want[256];
	long want_len = 0;
	snprintf(want, sizeof(want), "%s", e->a);
	char *paren = strchr(want, '(');
	if (paren != NULL) {
		want_len = atol(paren + 1);
		*paren = '\0';
	}
	size_t wl = strlen(want);
	if (wl > 9 && strcmp(want + wl - 9, "_UNSIGNED") == 0) {
		char base[64];
		size_t i;
		for (i = 0; i < wl - 9 && i < sizeof(base) - 1; i++)
			base[i] = (char)(want[i] >= 'A' && want[i] <= 'Z' ? want[i] + 32 : want[i]);
		base[i] = '\0';
		ck_assert_msg(strcmp(dtype, base) == 0 && strstr(ctype, "unsigned") != NULL,
		              "%s.%s is %s, model says %s", e->table, e->name, ctype, e->a);
	} else if (strcmp(want, "JSON") == 0) {
		if (strcmp(dtype, "json") != 0) {
			ck_assert_msg(strcmp(dtype, "longtext") == 0,
			              "%s.%s is %s, model says JSON", e->table, e->name, ctype);
			long long checks = tdb_int(
			        db,
			        "SELECT COUNT(*) FROM information_schema.CHECK_CONSTRAINTS WHERE "
			        "CONSTRAINT_SCHEMA = DATABASE() AND TABLE_NAME = '%s' AND "
			        "CHECK_CLAUSE LIKE 'json_valid(`%s`)'",
			        e->table, e->name);
			ck_assert_msg(checks == 1, "%s.%s is LONGTEXT without a JSON_VALID check",
			              e->table, e->name);
		}
	} else {
		char lower[64];
		size_t i;
		for (i = 0; want[i] && i < sizeof(lower) - 1; i++)
			lower[i] =
			        (char)(want[i] >= 'A' && want[i] <= 'Z' ? want[i] + 32 : want[i]);
		lower[i] = '\0';
		ck_assert_msg(strcmp(dtype, lower) == 0, "%s.%s is %s, model says %s", e->table,
		              e->name, ctype, e->a);
		if (want_len)
			ck_assert_msg(len == want_len, "%s.%s is %s, model says %s", e->table,
			              e->name, ctype, e->a);
	}
	ck_assert_msg(nullable == (strcmp(e->b, "NULL") == 0),
	              "%s.%s: nullability differs from the model (%s)", e->table, e->name, e->b);
	mysql_free_result(r);
}

START_TEST(columns_match)
{
	MYSQL *db = tdb_connect();
	size_t n, seen = 0;
	struct expect *v = load(&n);
	for (size_t i = 0; i < n; i++)
		if (strcmp(v[i].kind, "column") == 0) {
			check_column(db, &v[i]);
			seen++;
		}
	ck_assert_uint_ge(seen, 47);
	free(v);
	mysql_close(db);
}
END_TEST

/* An index is found by its columns in order and its uniqueness, whatever its name. */
START_TEST(indexes_match)
{
	MYSQL *db = tdb_connect();
	size_t n, seen = 0;
	struct expect *v = load(&n);
	for (size_t i = 0; i < n; i++) {
		if (strcmp(v[i].kind, "index") != 0)
			continue;
		seen++;
		char q[1024];
		snprintf(q, sizeof(q),
		         "SELECT INDEX_NAME, MIN(NON_UNIQUE), "
		         "GROUP_CONCAT(COLUMN_NAME ORDER BY SEQ_IN_INDEX SEPARATOR ',') "
		         "FROM information_schema.STATISTICS WHERE TABLE_SCHEMA = DATABASE() "
		         "AND TABLE_NAME = '%s' GROUP BY INDEX_NAME",
		         v[i].table);
		ck_assert_int_eq(mysql_query(db, q), 0);
		MYSQL_RES *r = mysql_store_result(db);
		MYSQL_ROW row;
		int found = 0;
		int want_unique = strcmp(v[i].a, "unique") == 0;
		while ((row = mysql_fetch_row(r)) != NULL)
			if (strcmp(row[2], v[i].b) == 0 &&
			    (!want_unique || strcmp(row[1], "0") == 0))
				found = 1;
		mysql_free_result(r);
		ck_assert_msg(found, "%s: no %s index on (%s) — the model's %s is missing",
		              v[i].table, v[i].a, v[i].b, v[i].name);
	}
	ck_assert_uint_ge(seen, 16);
	free(v);
	mysql_close(db);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("schema");
	TCase *tc = tcase_create("model");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, tables_exist);
	tcase_add_test(tc, columns_match);
	tcase_add_test(tc, indexes_match);
	suite_add_tcase(s, tc);
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? 0 : 1;
}
