/* core/doctor: the expected schema agrees with the model (core/model.c), the model document's
 * schema as the tests know it (tests/data/model-schema.txt), sql/grants.sql, the guard's probe
 * and sql/recommended-indexes.sql; the judgement of columns, collations and time zones; what a
 * missing index costs, as evtop's own query table and dashboard say; every statement bounded. */
#include <config.h>

#include "core/doctor.h"
#include "core/guard.h"
#include "core/query.h"

#include <check.h>
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *slurp(const char *rel)
{
	const char *src = getenv("EVTOP_SRCDIR");
	char path[4096];
	snprintf(path, sizeof(path), "%s/%s", src ? src : ".", rel);
	FILE *f = fopen(path, "r");
	ck_assert_msg(f != NULL, "cannot open %s", path);
	size_t cap = 4096, len = 0;
	char *buf = malloc(cap);
	size_t n;
	while ((n = fread(buf + len, 1, cap - len - 1, f)) > 0) {
		len += n;
		if (cap - len < 2) {
			cap *= 2;
			buf = realloc(buf, cap);
		}
	}
	buf[len] = '\0';
	fclose(f);
	return buf;
}

/* The server's indexes as the model document has them (for the impact tests). */
static void model_info(enum ev_table_kind t, struct ev_table_info *ti, const char *skip)
{
	const struct ev_doc_schema *s = ev_doctor_schema(t);
	memset(ti, 0, sizeof(*ti));
	ti->exists = true;
	ti->indexes = calloc(s->nindexes + 8, sizeof(*ti->indexes));
	for (size_t i = 0; i < s->nindexes; i++) {
		if (skip != NULL && strcmp(s->indexes[i].columns, skip) == 0)
			continue;
		ti->indexes[ti->nindexes].name = strdup(s->indexes[i].name);
		ti->indexes[ti->nindexes].columns = strdup(s->indexes[i].columns);
		ti->indexes[ti->nindexes].unique = s->indexes[i].unique;
		ti->nindexes++;
	}
	ti->columns = calloc(1, sizeof(*ti->columns));
}

static void add_index(struct ev_table_info *ti, const char *name, const char *cols)
{
	ti->indexes[ti->nindexes].name = strdup(name);
	ti->indexes[ti->nindexes].columns = strdup(cols);
	ti->nindexes++;
}

START_TEST(schema_matches_model)
{
	for (int t = 0; t < EV_TABLE_COUNT; t++) {
		const struct ev_table_def *m = ev_model_table((enum ev_table_kind)t);
		const struct ev_doc_schema *s = ev_doctor_schema((enum ev_table_kind)t);
		ck_assert_uint_eq(m->ncolumns, s->ncolumns);
		for (size_t i = 0; i < s->ncolumns; i++) {
			ck_assert_str_eq(m->columns[i].name, s->columns[i].name);
			ck_assert_msg(m->columns[i].nullable == s->columns[i].nullable,
			              "%s.%s nullability", m->key, s->columns[i].name);
			/* The retry budget evtop assumes is the column's DEFAULT. */
			if (strcmp(s->columns[i].name, "max_retry_count") == 0)
				ck_assert_int_eq(m->default_max_retry, atoi(s->columns[i].def));
		}
	}
}
END_TEST

/* tests/data/model-schema.txt is the model document's schema the schema tests check sql/
 * against: doctor expects exactly that. */
START_TEST(schema_matches_model_schema_txt)
{
	char *text = slurp("tests/data/model-schema.txt");
	char *save = NULL;
	int table = -1;
	size_t cols = 0, idx = 0;

	for (char *line = strtok_r(text, "\n", &save); line != NULL;
	     line = strtok_r(NULL, "\n", &save)) {
		char kind[16], a[256], b[256], c[256];
		if (line[0] == '#')
			continue;
		int k = sscanf(line, "%15s %255s %255s %255s", kind, a, b, c);
		if (strcmp(kind, "table") == 0) {
			table = ev_model_table_parse(a);
			continue;
		}
		if (table < 0 || k != 4)
			continue; /* evtop_audit */
		const struct ev_doc_schema *s = ev_doctor_schema((enum ev_table_kind)table);
		if (strcmp(kind, "column") == 0) {
			for (char *p = b; *p; p++)
				if (*p == '_')
					*p = ' ';
			bool found = false;
			for (size_t i = 0; i < s->ncolumns; i++)
				if (strcmp(s->columns[i].name, a) == 0) {
					found = true;
					ck_assert_str_eq(s->columns[i].type, b);
					ck_assert(s->columns[i].nullable ==
					          (strcmp(c, "NULL") == 0));
				}
			ck_assert_msg(found, "doctor lacks column %s", a);
			cols++;
		} else if (strcmp(kind, "index") == 0) {
			bool found = false;
			for (size_t i = 0; i < s->nindexes; i++)
				if (strcmp(s->indexes[i].name, a) == 0) {
					found = true;
					ck_assert_str_eq(s->indexes[i].columns, c);
					ck_assert(s->indexes[i].unique ==
					          (strcmp(b, "unique") == 0));
				}
			ck_assert_msg(found, "doctor lacks index %s", a);
			idx++;
		}
	}
	ck_assert_uint_eq(cols, ev_doctor_schema(EV_TABLE_MESSAGE)->ncolumns +
	                                ev_doctor_schema(EV_TABLE_OUTBOX)->ncolumns);
	ck_assert_uint_eq(idx, ev_doctor_schema(EV_TABLE_MESSAGE)->nindexes +
	                               ev_doctor_schema(EV_TABLE_OUTBOX)->nindexes);
	free(text);
}
END_TEST

/* The next line of `*p` (without its newline), advancing `*p`; NULL at the end. */
static char *next_line(char **p)
{
	if (**p == '\0')
		return NULL;
	char *line = *p, *nl = strchr(line, '\n');
	if (nl != NULL) {
		*nl = '\0';
		*p = nl + 1;
	} else {
		*p = line + strlen(line);
	}
	return line;
}

/* core/columns.h is the one place the columns are written: the DDL of both flavours is, line
 * for line, what it and doctor's schema say (type, NOT NULL, DEFAULT, COMMENT, the indexes in
 * order, the table's collation and comment). */
START_TEST(schema_matches_ddl_files)
{
	static const struct {
		const char *file;
		enum ev_flavour flavour;
	} ddl[] = {{"sql/mysql8/schema.sql", EV_FLAVOUR_MYSQL},
	           {"sql/mariadb/schema.sql", EV_FLAVOUR_MARIADB}};

	for (size_t d = 0; d < sizeof(ddl) / sizeof(ddl[0]); d++) {
		char *file = slurp(ddl[d].file);
		for (int t = 0; t < EV_TABLE_COUNT; t++) {
			char *text = strdup(file); /* next_line cuts it into lines */
			const struct ev_table_def *m = ev_model_table((enum ev_table_kind)t);
			const struct ev_doc_schema *s = ev_doctor_schema((enum ev_table_kind)t);
			char want[2048];

			snprintf(want, sizeof(want), "CREATE TABLE %s (\n", m->default_name);
			char *p = strstr(text, want);
			ck_assert_msg(p != NULL, "%s: no %s", ddl[d].file, want);
			p += strlen(want);
			for (size_t i = 0; i < s->ncolumns; i++) {
				char *line = next_line(&p),
				     *def = ev_doctor_column_ddl(&s->columns[i]);
				snprintf(want, sizeof(want), "    %s %s COMMENT '%s',",
				         s->columns[i].name, def, s->columns[i].comment);
				free(def);
				ck_assert_msg(line != NULL && strcmp(line, want) == 0,
				              "%s, %s: the DDL says\n%s\ncore/columns.h says\n%s",
				              ddl[d].file, m->default_name, line ? line : "(end)",
				              want);
			}
			char *line = next_line(&p);
			ck_assert_msg(line != NULL && strcmp(line, "    PRIMARY KEY (id)") == 0,
			              "%s", line ? line : "(end)");
			snprintf(want, sizeof(want),
			         ") ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=%s COMMENT='%s';",
			         ev_doctor_collation(ddl[d].flavour), s->comment);
			line = next_line(&p);
			ck_assert_msg(line != NULL && strcmp(line, want) == 0, "%s: %s",
			              ddl[d].file, line ? line : "(end)");

			/* ALTER TABLE t ADD [UNIQUE] KEY name (a, b), ... ; */
			snprintf(want, sizeof(want), "ALTER TABLE %s\n", m->default_name);
			p = strstr(p, want);
			ck_assert_msg(p != NULL, "%s: no %s", ddl[d].file, want);
			p += strlen(want);
			size_t n = 0;
			for (size_t i = 0; i < s->nindexes; i++) {
				const struct ev_doc_index *x = &s->indexes[i];
				if (strcmp(x->name, "PRIMARY") == 0)
					continue;
				char cols[256];
				size_t k = 0;
				for (const char *c = x->columns; *c && k + 3 < sizeof(cols); c++) {
					cols[k++] = *c;
					if (*c == ',')
						cols[k++] = ' ';
				}
				cols[k] = '\0';
				n++;
				snprintf(want, sizeof(want), "    ADD %sKEY %s (%s)%s",
				         x->unique ? "UNIQUE " : "", x->name, cols,
				         n + 1 == s->nindexes ? ";" : ",");
				line = next_line(&p);
				ck_assert_msg(line != NULL && strcmp(line, want) == 0,
				              "%s, %s: the DDL says\n%s\ndoctor says\n%s",
				              ddl[d].file, m->default_name, line ? line : "(end)",
				              want);
			}
			ck_assert_uint_eq(n + 1, s->nindexes);
			free(text);
		}
		free(file);
	}
}
END_TEST

/* The columns of a SET clause (up to WHERE), commas inside parentheses skipped. */
static size_t set_columns(const char *sql, char out[][64], size_t max)
{
	const char *p = strstr(sql, " SET ");
	const char *end = strstr(sql, " WHERE ");
	size_t n = 0;
	int depth = 0;
	bool want = true;

	ck_assert(p != NULL && end != NULL);
	for (p += 5; p < end; p++) {
		if (want && isalpha((unsigned char)*p)) {
			size_t k = 0;
			while (p < end && (isalnum((unsigned char)*p) || *p == '_') && k < 63)
				out[n][k++] = *p++;
			out[n][k] = '\0';
			if (n < max)
				n++;
			want = false;
		}
		if (*p == '(')
			depth++;
		else if (*p == ')')
			depth--;
		else if (*p == ',' && depth == 0)
			want = true;
	}
	return n;
}

/* The GRANT UPDATE doctor prints: exactly what the guard's probe writes, and sql/grants.sql. */
START_TEST(action_columns_match_probe_and_grants)
{
	char *grants = slurp("sql/grants.sql");
	for (int t = 0; t < EV_TABLE_COUNT; t++) {
		const struct ev_doc_schema *s = ev_doctor_schema((enum ev_table_kind)t);
		struct ev_query *q = ev_guard_query_probe((enum ev_table_kind)t, NULL);
		char cols[32][64];
		size_t n = set_columns(q->sql, cols, 32);
		ck_assert_uint_eq(n, s->naction_columns);
		for (size_t i = 0; i < n; i++) {
			bool found = false;
			for (size_t j = 0; j < s->naction_columns; j++)
				found = found || strcmp(cols[i], s->action_columns[j]) == 0;
			ck_assert_msg(found, "the probe writes %s, doctor's GRANT lacks it",
			              cols[i]);
		}
		ev_query_free(&q);

		/* "GRANT UPDATE (a, b,\n   c)\n    ON events.<table>" in sql/grants.sql */
		const char *table = ev_model_table((enum ev_table_kind)t)->default_name;
		char on[128];
		snprintf(on, sizeof(on), "ON events.%s TO 'evtop_ops'", table);
		const char *g = NULL;
		for (const char *p = grants; (p = strstr(p, "GRANT UPDATE (")) != NULL; p++) {
			const char *close = strchr(p, ')');
			const char *o = strstr(p, on);
			if (close != NULL && o != NULL && strstr(close, "GRANT") > o)
				g = p;
		}
		ck_assert_msg(g != NULL, "no GRANT UPDATE for %s in sql/grants.sql", table);
		char list[1024] = "";
		size_t k = 0;
		for (const char *p = g + strlen("GRANT UPDATE ("); *p && *p != ')'; p++)
			if (!isspace((unsigned char)*p) && k + 1 < sizeof(list))
				list[k++] = *p;
		list[k] = '\0';
		char want[1024] = "";
		for (size_t j = 0; j < s->naction_columns; j++) {
			strcat(want, j ? "," : "");
			strcat(want, s->action_columns[j]);
		}
		ck_assert_str_eq(list, want);
	}
	free(grants);
}
END_TEST

START_TEST(recommended_match_sql_file)
{
	char *text = slurp("sql/recommended-indexes.sql");
	for (int t = 0; t < EV_TABLE_COUNT; t++) {
		const struct ev_doc_schema *s = ev_doctor_schema((enum ev_table_kind)t);
		char head[128];
		snprintf(head, sizeof(head), "ALTER TABLE %s\n",
		         ev_model_table((enum ev_table_kind)t)->default_name);
		const char *p = strstr(text, head);
		ck_assert_msg(p != NULL, "%s", head);
		const char *end = strchr(p, ';');
		size_t n = 0;
		for (const char *k = p; (k = strstr(k, "ADD KEY ")) != NULL && k < end; k++) {
			char name[128], cols[256];
			ck_assert_int_eq(sscanf(k, "ADD KEY %127s (%255[^)])", name, cols), 2);
			ck_assert_uint_lt(n, s->nrecommended);
			ck_assert_str_eq(name, s->recommended[n].name);
			char *pretty = strdup(s->recommended[n].columns);
			char flat[256];
			size_t m = 0;
			for (const char *c = cols; *c; c++)
				if (*c != ' ')
					flat[m++] = *c;
			flat[m] = '\0';
			ck_assert_str_eq(flat, pretty);
			free(pretty);
			n++;
		}
		ck_assert_uint_eq(n, s->nrecommended);
	}
	free(text);
}
END_TEST

START_TEST(column_ddl)
{
	const struct ev_doc_schema *s = ev_doctor_schema(EV_TABLE_OUTBOX);
	char *ddl;
	for (size_t i = 0; i < s->ncolumns; i++) {
		ddl = ev_doctor_column_ddl(&s->columns[i]);
		if (strcmp(s->columns[i].name, "update_time") == 0)
			ck_assert_str_eq(ddl,
			                 "DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP ON UPDATE "
			                 "CURRENT_TIMESTAMP");
		if (strcmp(s->columns[i].name, "topic") == 0)
			ck_assert_str_eq(ddl, "VARCHAR(128) DEFAULT NULL");
		if (strcmp(s->columns[i].name, "max_retry_count") == 0)
			ck_assert_str_eq(ddl, "INT NOT NULL DEFAULT 5");
		if (strcmp(s->columns[i].name, "event_payload") == 0)
			ck_assert_str_eq(ddl, "JSON NOT NULL");
		free(ddl);
	}
}
END_TEST

static enum ev_doc_level judge(const char *want_type, bool want_null, const char *dt,
                               const char *ct, long long len, const char *cs, bool nullable,
                               bool json_check)
{
	struct ev_doc_column want = {"c", want_type, want_null, NULL, NULL};
	struct ev_doc_column_fact have = {(char *)"c", (char *)dt, (char *)ct, (char *)cs,
	                                  len,         nullable,   json_check};
	char why[512];
	return ev_doctor_judge_column(&want, &have, why, sizeof(why));
}

START_TEST(judge_columns)
{
	ck_assert_int_eq(judge("DATETIME", true, "datetime", "datetime", 0, NULL, true, false),
	                 EV_DOC_OK);
	ck_assert_int_eq(judge("DATETIME", true, "datetime", "datetime(3)", 0, NULL, true, false),
	                 EV_DOC_OK);
	ck_assert_int_eq(
	        judge("DATETIME", true, "varchar", "varchar(32)", 32, "utf8mb4", true, false),
	        EV_DOC_FAIL);
	ck_assert_int_eq(judge("DATETIME", true, "timestamp", "timestamp", 0, NULL, true, false),
	                 EV_DOC_WARN);
	ck_assert_int_eq(judge("INT", false, "int", "int(11)", 0, NULL, false, false), EV_DOC_OK);
	ck_assert_int_eq(judge("INT", false, "bigint", "bigint(20)", 0, NULL, false, false),
	                 EV_DOC_WARN);
	ck_assert_int_eq(judge("INT", false, "varchar", "varchar(10)", 10, "utf8mb4", false, false),
	                 EV_DOC_FAIL);
	ck_assert_int_eq(judge("BIGINT UNSIGNED", false, "bigint", "bigint(20) unsigned", 0, NULL,
	                       false, false),
	                 EV_DOC_OK);
	ck_assert_int_eq(
	        judge("BIGINT UNSIGNED", false, "bigint", "bigint(20)", 0, NULL, false, false),
	        EV_DOC_WARN);
	ck_assert_int_eq(judge("JSON", false, "json", "json", 0, NULL, false, false), EV_DOC_OK);
	ck_assert_int_eq(judge("JSON", false, "longtext", "longtext", 0, "utf8mb4", false, true),
	                 EV_DOC_OK);
	ck_assert_int_eq(judge("JSON", false, "longtext", "longtext", 0, "utf8mb4", false, false),
	                 EV_DOC_WARN);
	ck_assert_int_eq(judge("JSON", false, "int", "int(11)", 0, NULL, false, false),
	                 EV_DOC_FAIL);
	ck_assert_int_eq(
	        judge("VARCHAR(64)", false, "varchar", "varchar(64)", 64, "utf8mb4", false, false),
	        EV_DOC_OK);
	ck_assert_int_eq(
	        judge("VARCHAR(64)", false, "varchar", "varchar(32)", 32, "utf8mb4", false, false),
	        EV_DOC_WARN);
	ck_assert_int_eq(
	        judge("VARCHAR(64)", false, "varchar", "varchar(64)", 64, "latin1", false, false),
	        EV_DOC_FAIL);
	/* nullability */
	ck_assert_int_eq(
	        judge("VARCHAR(64)", false, "varchar", "varchar(64)", 64, "utf8mb4", true, false),
	        EV_DOC_WARN);
	ck_assert_int_eq(judge("DATETIME", true, "datetime", "datetime", 0, NULL, false, false),
	                 EV_DOC_WARN);
}
END_TEST

START_TEST(judge_collations)
{
	ck_assert_int_eq(ev_doctor_judge_collation("utf8mb4_0900_ai_ci"), EV_DOC_OK);
	ck_assert_int_eq(ev_doctor_judge_collation("utf8mb4_unicode_ci"), EV_DOC_OK);
	ck_assert_int_eq(ev_doctor_judge_collation("utf8mb4_uca1400_ai_ci"), EV_DOC_OK);
	ck_assert_int_eq(ev_doctor_judge_collation("utf8mb4_general_ci"), EV_DOC_WARN);
	ck_assert_int_eq(ev_doctor_judge_collation("utf8mb4_bin"), EV_DOC_WARN);
	ck_assert_int_eq(ev_doctor_judge_collation("utf8mb3_general_ci"), EV_DOC_FAIL);
	ck_assert_int_eq(ev_doctor_judge_collation("latin1_swedish_ci"), EV_DOC_FAIL);
	ck_assert_int_eq(ev_doctor_judge_collation(NULL), EV_DOC_FAIL);
}
END_TEST

START_TEST(zone_mismatch)
{
	long long shift;
	ck_assert(!ev_doctor_zone_mismatch(0, &shift));
	ck_assert(!ev_doctor_zone_mismatch(299, &shift));
	ck_assert(!ev_doctor_zone_mismatch(-299, &shift));
	/* ahead: the future is never right */
	ck_assert(ev_doctor_zone_mismatch(8 * 3600, &shift));
	ck_assert_int_eq(shift, 8 * 3600);
	ck_assert(ev_doctor_zone_mismatch(8 * 3600 - 180, &shift));
	ck_assert_int_eq(shift, 8 * 3600);
	ck_assert(ev_doctor_zone_mismatch(5 * 3600 + 28 * 60, &shift)); /* +05:30 */
	ck_assert_int_eq(shift, 5 * 3600 + 30 * 60);
	ck_assert(!ev_doctor_zone_mismatch(2 * 86400, &shift)); /* days ahead: not a zone */
	/* behind: a whole or half hour, plus up to 15 min (the newest row's age) */
	ck_assert(ev_doctor_zone_mismatch(-8 * 3600, &shift));
	ck_assert_int_eq(shift, -8 * 3600);
	ck_assert(ev_doctor_zone_mismatch(-8 * 3600 - 90, &shift));
	ck_assert_int_eq(shift, -8 * 3600);
	ck_assert(ev_doctor_zone_mismatch(-(5 * 3600 + 30 * 60), &shift));
	ck_assert(ev_doctor_zone_mismatch(-8 * 3600 - 600, &shift)); /* 10 min old: suspect */
	ck_assert_int_eq(shift, -8 * 3600);
	/* 20 min past the hour: a quiet table looks the same; the alarm wins. */
	ck_assert(ev_doctor_zone_mismatch(-8 * 3600 - 20 * 60, &shift));
	ck_assert_int_eq(shift, -8 * 3600);
	ck_assert(!ev_doctor_zone_mismatch(-37 * 60, &shift));
	ck_assert(!ev_doctor_zone_mismatch(-3 * 86400, &shift));
}
END_TEST

static const struct ev_doc_finding *find(const struct ev_doc_report *r, const char *check)
{
	for (size_t i = 0; i < r->n; i++)
		if (strcmp(r->f[i].check, check) == 0)
			return &r->f[i];
	return NULL;
}

/* Retention: none on a big table, the oldest far past it: WARN with the setting or the archive
 * run that fixes it; otherwise INFO or OK. */
START_TEST(retention_findings)
{
	struct ev_doc_report r = {0};
	struct ev_doc_retention x = {.rows = 20000000,
	                             .checked = true,
	                             .oldest = "2025-01-01 00:00:00",
	                             .oldest_age_s = 400LL * 86400,
	                             .past = -1,
	                             .setting = "retention_outbox"};
	ev_doctor_check_retention(&r, EV_TABLE_OUTBOX, "biz_outbox_event", &x);
	const struct ev_doc_finding *f = find(&r, "retention");
	ck_assert_int_eq(f->level, EV_DOC_WARN);
	ck_assert_str_eq(f->message, "retention: none configured for biz_outbox_event (about "
	                             "20000000 rows, the oldest created 400d00h ago)");
	ck_assert_ptr_nonnull(strstr(f->fix, "set retention_outbox = 30d"));
	ck_assert_ptr_nonnull(f->impact);
	ev_doc_report_clear(&r);

	x.rows = 5000; /* small: told, not warned */
	ev_doctor_check_retention(&r, EV_TABLE_OUTBOX, "biz_outbox_event", &x);
	ck_assert_int_eq(find(&r, "retention")->level, EV_DOC_INFO);
	ev_doc_report_clear(&r);

	x.retention_s = 30 * 86400; /* set, the oldest 400 days: not running */
	x.past = 100001;
	x.past_capped = true;
	ev_doctor_check_retention(&r, EV_TABLE_OUTBOX, "biz_outbox_event", &x);
	f = find(&r, "retention");
	ck_assert_int_eq(f->level, EV_DOC_WARN);
	ck_assert_ptr_nonnull(strstr(f->message, "retention 30d on biz_outbox_event: over 100000 "
	                                         "rows created before it"));
	ck_assert_str_eq(f->fix, "evtop archive --table outbox --older-than 30d --dry-run, then "
	                         "schedule it (doc/archive.md)");
	ev_doc_report_clear(&r);

	x.oldest_age_s = 40LL * 86400; /* within twice the retention: OK */
	x.past = 12;
	x.past_capped = false;
	ev_doctor_check_retention(&r, EV_TABLE_OUTBOX, "biz_outbox_event", &x);
	f = find(&r, "retention");
	ck_assert_int_eq(f->level, EV_DOC_OK);
	ck_assert_ptr_nonnull(strstr(f->message, "12 rows created before it"));
	ev_doc_report_clear(&r);

	x.checked = false;
	x.why_not = "no index on create_time";
	ev_doctor_check_retention(&r, EV_TABLE_OUTBOX, "biz_outbox_event", &x);
	ck_assert_int_eq(find(&r, "retention")->level, EV_DOC_INFO);
	ev_doc_report_clear(&r);
}
END_TEST

START_TEST(zone_findings)
{
	struct ev_doc_report r = {0};
	struct ev_doc_recent rc = {.checked = true,
	                           .rows = 1,
	                           .event_no = "OB-1",
	                           .id = 7,
	                           .ahead_s = 8 * 3600 - 5,
	                           .newest = "2026-05-13 18:00:00",
	                           .now = "2026-05-13 10:00:05",
	                           .utc_offset = 0,
	                           .zone = "+00:00"};
	ev_doctor_check_zone(&r, EV_TABLE_OUTBOX, "biz_outbox_event", &rc);
	const struct ev_doc_finding *f = find(&r, "time zone");
	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(f->level, EV_DOC_FAIL);
	ck_assert_ptr_nonnull(strstr(f->message, "suspected time zone mismatch"));
	ck_assert_ptr_nonnull(
	        strstr(f->message, "event_no OB-1, id 7, create_time 2026-05-13 18:00:00"));
	ck_assert_ptr_nonnull(strstr(f->fix, "--time-zone=+08:00"));
	ck_assert_int_eq(ev_doc_exit_code(&r), 2);
	ev_doc_report_clear(&r);

	/* read at +08:00 what was written at UTC */
	rc.ahead_s = -8 * 3600;
	rc.utc_offset = 8 * 3600;
	ev_doctor_check_zone(&r, EV_TABLE_MESSAGE, "biz_message_event", &rc);
	ck_assert_ptr_nonnull(strstr(r.f[0].fix, "--time-zone=+00:00"));
	ev_doc_report_clear(&r);

	rc.ahead_s = -12;
	ev_doctor_check_zone(&r, EV_TABLE_MESSAGE, "biz_message_event", &rc);
	ck_assert_int_eq(r.f[0].level, EV_DOC_OK);
	ev_doc_report_clear(&r);

	rc.rows = 0;
	rc.newest = NULL;
	ev_doctor_check_zone(&r, EV_TABLE_MESSAGE, "biz_message_event", &rc);
	ck_assert_int_eq(r.f[0].level, EV_DOC_INFO);
	ck_assert_int_eq(ev_doc_exit_code(&r), 0);
	ev_doc_report_clear(&r);
}
END_TEST

/* What a missing index costs comes from the query table and the dashboard builders. */
START_TEST(impact_from_query_table)
{
	struct ev_table_info ti;
	bool breaks;
	char *s;

	model_info(EV_TABLE_OUTBOX, &ti, "publish_status,lock_until");
	s = ev_doctor_index_impact(EV_TABLE_OUTBOX, "biz_outbox_event", &ti,
	                           "publish_status,lock_until", &breaks);
	ck_assert_ptr_nonnull(s);
	ck_assert(breaks);
	ck_assert_str_eq(s, "will not run (n/a: evtop never scans): the stuck list, the processing "
	                    "list");
	free(s);
	ev_table_info_clear(&ti);

	/* A recommended index: what would switch to it. */
	model_info(EV_TABLE_OUTBOX, &ti, NULL);
	s = ev_doctor_index_impact(EV_TABLE_OUTBOX, "biz_outbox_event", &ti,
	                           "publish_status,update_time", &breaks);
	ck_assert(!breaks);
	ck_assert_str_eq(s, "slower, through another index and a bounded sort: the high-retry list "
	                    "(through `idx_status_retry_time`)");
	free(s);
	s = ev_doctor_index_impact(EV_TABLE_OUTBOX, "biz_outbox_event", &ti, "publish_status,topic",
	                           &breaks);
	ck_assert_ptr_nonnull(strstr(s,
	                             "the dashboard's pending, processing/stuck and failed counts "
	                             "by topic (through `idx_status_retry_time`)"));
	free(s);
	/* No query of evtop's uses the model's (topic, create_time). */
	s = ev_doctor_index_impact(EV_TABLE_OUTBOX, "biz_outbox_event", &ti, "topic,create_time",
	                           &breaks);
	ck_assert_ptr_null(s);
	ev_table_info_clear(&ti);

	/* The message table's stuck list prefers (event_status, last_handle_time). */
	model_info(EV_TABLE_MESSAGE, &ti, "event_status,next_retry_time,retry_count");
	add_index(&ti, "idx_evtop_status_handle", "event_status,last_handle_time");
	s = ev_doctor_index_impact(EV_TABLE_MESSAGE, "biz_message_event", &ti,
	                           "event_status,next_retry_time,retry_count", &breaks);
	/* Without the status index the failed and pending lists are n/a, but not the stuck list,
	 * which the recommended index still serves. */
	ck_assert(breaks);
	ck_assert_ptr_nonnull(strstr(s, "the pending list"));
	ck_assert_ptr_null(strstr(s, "the stuck list"));
	free(s);
	ev_table_info_clear(&ti);

	/* The unique event_no: show scans. */
	model_info(EV_TABLE_MESSAGE, &ti, "event_no");
	s = ev_doctor_index_impact(EV_TABLE_MESSAGE, "biz_message_event", &ti, "event_no", &breaks);
	ck_assert(!breaks);
	ck_assert_ptr_nonnull(strstr(s, "scans the table"));
	free(s);
	ev_table_info_clear(&ti);
}
END_TEST

START_TEST(index_size)
{
	/* publish_status 1 + update_time 5 + the primary key 8 + the header 6, pages 70% full */
	ck_assert_int_eq(
	        ev_doctor_index_size(EV_TABLE_OUTBOX, "publish_status,update_time", 1000000),
	        1000000LL * 20 * 10 / 7);
	/* + VARCHAR(64) as 66 bytes, and a null byte for the nullable... none here */
	ck_assert_int_eq(
	        ev_doctor_index_size(EV_TABLE_MESSAGE, "event_status,event_type,deleted", 7),
	        7LL * (1 + 66 + 1 + 8 + 6) * 10 / 7);
	ck_assert_int_eq(ev_doctor_index_size(EV_TABLE_OUTBOX, "publish_status,topic", 0), 0);
}
END_TEST

START_TEST(exit_codes)
{
	struct ev_doc_report r = {0};
	ck_assert_int_eq(ev_doc_exit_code(&r), 0);
	ev_doc_add(&r, EV_DOC_OK, "server", "x", NULL, NULL, NULL, "ok");
	ev_doc_add(&r, EV_DOC_INFO, "outbox", "recommended", NULL, NULL, NULL, "a tip");
	ck_assert_int_eq(ev_doc_exit_code(&r), 0);
	ev_doc_add(&r, EV_DOC_WARN, "outbox", "index", NULL, NULL, NULL, "%d", 1);
	ck_assert_int_eq(ev_doc_exit_code(&r), 1);
	ev_doc_add(&r, EV_DOC_FAIL, "outbox", "column", NULL, NULL, NULL, "missing");
	ck_assert_int_eq(ev_doc_exit_code(&r), 2);
	ck_assert_uint_eq(ev_doc_count(&r, EV_DOC_WARN), 1);
	ev_doc_report_clear(&r);
	ck_assert_uint_eq(r.n, 0);
}
END_TEST

START_TEST(grantee)
{
	char *g = ev_doctor_grantee("evtop_ops@%");
	ck_assert_str_eq(g, "'evtop_ops'@'%'");
	free(g);
	g = ev_doctor_grantee("o'x@10.0.0.%");
	ck_assert_str_eq(g, "'o''x'@'10.0.0.%'");
	free(g);
	g = ev_doctor_grantee("a@b@localhost");
	ck_assert_str_eq(g, "'a@b'@'localhost'");
	free(g);
}
END_TEST

/* Every identifier in a printed statement is quoted, a backtick in it doubled: a database
 * named ev`x gives GRANTs that run when pasted. */
START_TEST(statements_quote_identifiers)
{
	struct ev_doc_report r = {0};
	struct ev_doc_access a = {
	        .table_name = "biz_outbox_event",
	        .database = "ev`x",
	        .user = "ops@%",
	        .select_denied = "denied",
	        .update_checked = true,
	        .update_denied = "denied",
	        .audit = 1,
	        .audit_denied = "denied",
	        .flavour = EV_FLAVOUR_MARIADB,
	};
	ev_doctor_check_access(&r, EV_TABLE_OUTBOX, &a);
	ev_doctor_check_audit(&r, &a);
	const struct ev_doc_finding *f = find(&r, "select");
	ck_assert_str_eq(f->fix, "GRANT SELECT ON `ev``x`.`biz_outbox_event` TO 'ops'@'%'");
	f = find(&r, "update");
	ck_assert_str_eq(f->fix, "GRANT UPDATE (`publish_status`, `retry_count`, "
	                         "`max_retry_count`, `next_retry_time`, `locked_by`, "
	                         "`lock_until`, `fail_reason`, `version`, `update_time`) ON "
	                         "`ev``x`.`biz_outbox_event` TO 'ops'@'%'");
	f = find(&r, "audit");
	ck_assert_str_eq(f->fix, "GRANT SELECT, INSERT ON `ev``x`.`evtop_audit` TO 'ops'@'%'");
	ev_doc_report_clear(&r);

	char *q = ev_query_quote_ident("a`b``c");
	ck_assert_str_eq(q, "`a``b````c`");
	free(q);
	q = ev_query_quote_ident("");
	ck_assert_str_eq(q, "``");
	free(q);
	q = ev_query_quote_ident("订单");
	ck_assert_str_eq(q, "`订单`");
	free(q);
}
END_TEST

/* Every statement doctor reads with is bounded, named, and never a write it executes. */
START_TEST(queries_bounded)
{
	struct ev_server_version v = {EV_FLAVOUR_MARIADB, 10, 11, 6};
	struct ev_query *qs[] = {
	        ev_doctor_query_server(EV_FLAVOUR_MARIADB),
	        ev_doctor_query_server(EV_FLAVOUR_MYSQL),
	        ev_doctor_query_table("t"),
	        ev_doctor_query_columns("t"),
	        ev_doctor_query_audit_exists(),
	};
	for (size_t i = 0; i < sizeof(qs) / sizeof(qs[0]); i++) {
		ck_assert_msg(strstr(qs[i]->sql, " LIMIT ") != NULL, "%s", qs[i]->sql);
		ck_assert_msg(strncmp(qs[i]->sql, "/* evtop:doctor.", 16) == 0, "%s", qs[i]->sql);
		ev_query_free(&qs[i]);
	}
	struct ev_query *q = ev_doctor_query_server(EV_FLAVOUR_MARIADB);
	ck_assert_ptr_nonnull(strstr(q->sql, "max_statement_time"));
	ev_query_free(&q);
	q = ev_doctor_query_server(EV_FLAVOUR_MYSQL);
	ck_assert_ptr_nonnull(strstr(q->sql, "max_execution_time"));
	ck_assert_ptr_nonnull(strstr(q->sql, "super_read_only"));
	ev_query_free(&q);
	q = ev_doctor_query_replica(&v);
	ck_assert_str_eq(q->sql, "/* evtop:doctor.replica */ SHOW REPLICA STATUS");
	ev_query_free(&q);
	v.minor = 4;
	q = ev_doctor_query_replica(&v);
	ck_assert_str_eq(q->sql, "/* evtop:doctor.replica */ SHOW SLAVE STATUS");
	ev_query_free(&q);
	/* The probes are only prepared: they could not change a row if they ran. */
	const char *cols[] = {"id", "event_no", NULL};
	q = ev_doctor_query_select_probe("t", cols);
	ck_assert_str_eq(q->sql, "/* evtop:doctor.select_probe */ SELECT `id`, `event_no` FROM `t` "
	                         "WHERE 1 = 0 LIMIT 0");
	ev_query_free(&q);
	q = ev_doctor_query_audit_probe();
	ck_assert_ptr_nonnull(strstr(q->sql, "WHERE 1 = 0"));
	ev_query_free(&q);
}
END_TEST

/* A table checked against itself: the model's schema as a server would report it. */
/* The server's version against the floors --version names (ev_server_floors): older is a WARN
 * that names the floor, TiDB a WARN of its own, a supported one OK. */
START_TEST(server_version_floors)
{
	static const struct {
		const char *info;
		enum ev_doc_level level;
		const char *message;
	} cases[] = {
	        {"10.5.23-MariaDB", EV_DOC_WARN,
	         "MariaDB 10.5.23 (10.5.23-MariaDB): older than MariaDB 10.6"},
	        {"5.7.44-log", EV_DOC_WARN, "MySQL 5.7.44 (5.7.44-log): older than MySQL 8.0"},
	        {"8.0.11-TiDB-v7.5.0", EV_DOC_WARN, "TiDB (8.0.11-TiDB-v7.5.0)"},
	        {"10.6.0-MariaDB", EV_DOC_OK, NULL},
	        {"8.0.36", EV_DOC_OK, NULL},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct ev_doc_server s = {.info = cases[i].info,
		                          .host_info = "Localhost via UNIX socket",
		                          .user = "evtop@localhost",
		                          .database = "orders"};
		struct ev_doc_report r = {0};
		ck_assert_int_eq(ev_server_version_parse(cases[i].info, &s.version), 0);
		ev_doctor_check_server(&r, &s);
		ck_assert_uint_eq(r.n, 1);
		ck_assert_msg(r.f[0].level == cases[i].level, "%s: level %d", cases[i].info,
		              (int)r.f[0].level);
		ck_assert_str_eq(r.f[0].check, "version");
		if (cases[i].message != NULL)
			ck_assert_str_eq(r.f[0].message, cases[i].message);
		ev_doc_report_clear(&r);
	}
}
END_TEST

START_TEST(table_as_the_model)
{
	struct ev_doc_table_facts tf = {0};
	const struct ev_doc_schema *s = ev_doctor_schema(EV_TABLE_MESSAGE);
	struct ev_doc_report r = {0};

	tf.name = "biz_message_event";
	tf.exists = true;
	tf.engine = strdup("InnoDB");
	tf.collation = strdup("utf8mb4_unicode_ci");
	tf.rows = 1000;
	model_info(EV_TABLE_MESSAGE, &tf.info, NULL);
	tf.ncols = s->ncolumns;
	tf.cols = calloc(s->ncolumns, sizeof(*tf.cols));
	for (size_t i = 0; i < s->ncolumns; i++) {
		const char *ty = s->columns[i].type;
		struct ev_doc_column_fact *c = &tf.cols[i];
		c->name = strdup(s->columns[i].name);
		c->nullable = s->columns[i].nullable;
		if (strncmp(ty, "VARCHAR(", 8) == 0) {
			c->data_type = strdup("varchar");
			c->column_type = strdup("varchar(x)");
			c->char_len = atoll(ty + 8);
			c->charset = strdup("utf8mb4");
		} else if (strcmp(ty, "JSON") == 0) {
			c->data_type = strdup("longtext");
			c->column_type = strdup("longtext");
			c->charset = strdup("utf8mb4");
			c->json_check = true;
		} else if (strcmp(ty, "BIGINT UNSIGNED") == 0) {
			c->data_type = strdup("bigint");
			c->column_type = strdup("bigint(20) unsigned");
		} else {
			c->data_type = strdup(ty);
			for (char *p = c->data_type; *p; p++)
				*p = (char)tolower((unsigned char)*p);
			c->column_type = strdup(c->data_type);
		}
	}
	ev_doctor_check_table(&r, EV_TABLE_MESSAGE, EV_FLAVOUR_MARIADB, &tf);
	ck_assert_int_eq(ev_doc_exit_code(&r), 0);
	ck_assert_uint_eq(ev_doc_count(&r, EV_DOC_INFO), s->nrecommended);
	ev_doc_report_clear(&r);

	/* Drop a column: FAIL with its ADD COLUMN. */
	free(tf.cols[15].name);
	tf.cols[15].name = strdup("remark_gone");
	ev_doctor_check_table(&r, EV_TABLE_MESSAGE, EV_FLAVOUR_MARIADB, &tf);
	const struct ev_doc_finding *f = find(&r, "column");
	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(f->level, EV_DOC_FAIL);
	ck_assert_str_eq(
	        f->fix,
	        "ALTER TABLE `biz_message_event` ADD COLUMN `remark` VARCHAR(500) DEFAULT NULL");
	ev_doc_report_clear(&r);

	/* A missing table: its CREATE TABLE in the flavour's collation. */
	tf.exists = false;
	ev_doctor_check_table(&r, EV_TABLE_MESSAGE, EV_FLAVOUR_MYSQL, &tf);
	f = find(&r, "table");
	ck_assert_int_eq(f->level, EV_DOC_FAIL);
	ck_assert_ptr_nonnull(strstr(f->fix, "CREATE TABLE `biz_message_event` (\n"));
	ck_assert_ptr_nonnull(strstr(f->fix, "COLLATE=utf8mb4_0900_ai_ci"));
	ck_assert_ptr_nonnull(strstr(f->fix, "KEY `idx_status_retry_time` (`event_status`, "
	                                     "`next_retry_time`, `retry_count`)"));
	ck_assert_ptr_nonnull(strstr(f->fix, "\n    `event_no` VARCHAR(64) NOT NULL,\n"));
	ev_doc_report_clear(&r);
	tf.name = NULL;
	ev_doc_table_facts_clear(&tf);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("doctor");
	TCase *tc = tcase_create("doctor");
	tcase_add_test(tc, schema_matches_model);
	tcase_add_test(tc, schema_matches_model_schema_txt);
	tcase_add_test(tc, schema_matches_ddl_files);
	tcase_add_test(tc, action_columns_match_probe_and_grants);
	tcase_add_test(tc, retention_findings);
	tcase_add_test(tc, recommended_match_sql_file);
	tcase_add_test(tc, column_ddl);
	tcase_add_test(tc, judge_columns);
	tcase_add_test(tc, judge_collations);
	tcase_add_test(tc, zone_mismatch);
	tcase_add_test(tc, zone_findings);
	tcase_add_test(tc, impact_from_query_table);
	tcase_add_test(tc, index_size);
	tcase_add_test(tc, exit_codes);
	tcase_add_test(tc, grantee);
	tcase_add_test(tc, statements_quote_identifiers);
	tcase_add_test(tc, queries_bounded);
	tcase_add_test(tc, table_as_the_model);
	tcase_add_test(tc, server_version_floors);
	suite_add_tcase(s, tc);
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? 0 : 1;
}
