/* evtop — `evtop doctor`: connects as the configured account and checks what evtop and the
 * model document expect of the server, the account and both tables; core/doctor.c holds the
 * expected schema and the judgement, this file gathers the facts (bounded reads of
 * information_schema and the session, and PREPAREd-only probes) and prints the findings.
 * Doctor never changes anything: every fix it prints is for a person to run.
 * Exit 0: all good; 1: warnings; 2: evtop cannot work with this database (or usage). */
#include <config.h>

#include "cli/cli.h"
#include "cli/options.h"
#include "cli/session.h"
#include "core/doctor.h"
#include "core/i18n.h"
#include "core/zone.h"
#include "core/guard.h"
#include "core/text.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static void usage(FILE *out)
{
	/* TRANSLATORS: keep OK/INFO/WARN/FAIL: the findings' levels stay as they are. */
	fputs(_("Usage: evtop doctor [OPTION]...\n"
	        "Check the server, the account and both event tables against what evtop and the\n"
	        "model document expect: each table exists with every column (type, nullability),\n"
	        "every index of the model (by columns; names may differ) and a utf8mb4 collation;\n"
	        "the account may SELECT (watch), UPDATE the action columns and INSERT into\n"
	        "evtop_audit (compensate), and read the replica lag; the server's flavour and\n"
	        "version, the statement time limit, @@read_only, and the time zone (the newest\n"
	        "rows' update_time/create_time against NOW() in the configured zone). It\n"
	        "recommends the indexes that make evtop's own queries index-only, with a size\n"
	        "estimate. Each finding says what it breaks or slows down in evtop and the\n"
	        "statement that would fix it; doctor never runs one.\n"
	        "Output: --format table (default; OK/INFO/WARN/FAIL lines by group) or json.\n"
	        "Exit status: 0 all good (INFO lines, the recommendations among them, do not\n"
	        "count), 1 warnings, 2 evtop cannot work with this database (a table or column\n"
	        "missing, no SELECT, cannot connect) or a usage error.\n"),
	      out);
	fputs("\n", out);
	ev_opts_usage(out);
}

static bool is_denied(int code)
{
	return code == 1142 || code == 1143; /* table / column access denied */
}

/* Run a query; on error the report gets an INFO line naming what could not be read. */
static struct ev_rowset *run(struct ev_session *s, struct ev_query *q, struct ev_error *err)
{
	struct ev_rowset *rs = NULL;
	int rc = ev_conn_run(s->conn, q, &rs, err);
	ev_query_free(&q);
	return rc == 0 ? rs : NULL;
}

static char *cell_dup(const struct ev_rowset *rs, size_t row, size_t col)
{
	const struct ev_cell *c = ev_rowset_cell(rs, row, col);
	return c->s ? ev_xstrdup(c->s) : NULL;
}

/* --- the facts ---------------------------------------------------------------------------- */

struct server_vars {
	char *time_zone, *system_tz, *now, *database;
};

static void read_server(struct ev_session *s, struct ev_doc_server *srv, struct server_vars *sv,
                        struct ev_doc_report *rep)
{
	struct ev_error err = {0};
	const struct ev_server_version *v = ev_conn_server(s->conn);

	memset(srv, 0, sizeof(*srv));
	srv->version = *v;
	srv->info = ev_conn_server_info(s->conn);
	srv->host_info = ev_conn_host_info(s->conn);
	srv->user = ev_conn_user(s->conn);
	srv->want_limit_ms = s->o->cfg.statement_timeout_ms;
	srv->configured_zone = s->o->src->time_zone;
	struct ev_rowset *rs = run(s, ev_doctor_query_server(v->flavour), &err);
	if (rs == NULL || rs->nrows < 1) {
		ev_doc_add(rep, EV_DOC_WARN, "server", "variables", NULL, NULL, NULL,
		           _("cannot read the session's variables: %s"), err.msg);
		ev_rowset_free(&rs);
		return;
	}
	const char *c0 = ev_rowset_cell(rs, 0, 0)->s;
	srv->have_vars = true;
	srv->limit_ms = c0 ? atof(c0) : 0;
	srv->lock_wait_s = ev_rowset_cell(rs, 0, 1)->s ? atoll(ev_rowset_cell(rs, 0, 1)->s) : 0;
	for (size_t i = 2; i <= 4; i++) {
		const char *x = ev_rowset_cell(rs, 0, i)->s;
		bool on = x != NULL && strcmp(x, "0") != 0;
		if (i == 2)
			srv->read_only = on;
		else if (i == 3)
			srv->innodb_read_only = on;
		else
			srv->super_read_only = on;
	}
	sv->time_zone = cell_dup(rs, 0, 5);
	sv->system_tz = cell_dup(rs, 0, 6);
	srv->utc_offset_s = ev_rowset_cell(rs, 0, 7)->s ? atoll(ev_rowset_cell(rs, 0, 7)->s) : 0;
	sv->now = cell_dup(rs, 0, 8);
	sv->database = cell_dup(rs, 0, 9);
	srv->time_zone = sv->time_zone ? sv->time_zone : "?";
	srv->system_time_zone = sv->system_tz;
	srv->database = sv->database;
	ev_rowset_free(&rs);
}

static void server_vars_free(struct server_vars *sv)
{
	free(sv->time_zone);
	free(sv->system_tz);
	free(sv->now);
	free(sv->database);
}

/* Prepare q only; returns 0 allowed, 1 denied (*msg set, malloc'd), -1 another error (*msg). */
static int probe(struct ev_session *s, struct ev_query *q, char **msg)
{
	struct ev_error err = {0};
	int rc = ev_conn_prepare_check(s->conn, q, &err);
	ev_query_free(&q);
	*msg = NULL;
	if (rc == 0)
		return 0;
	*msg = ev_xstrdup(err.msg);
	return is_denied(err.code) ? 1 : -1;
}

/* MariaDB: the JSON columns are LONGTEXT with CHECK (json_valid(`col`)). */
static void mark_json_checks(struct ev_session *s, struct ev_doc_table_facts *tf)
{
	struct ev_error err = {0};
	struct ev_rowset *rs = run(s, ev_doctor_query_create_table(tf->name), &err);
	if (rs == NULL || rs->nrows < 1 || rs->ncols < 2) {
		ev_rowset_free(&rs);
		return;
	}
	const char *p = ev_rowset_cell(rs, 0, 1)->s;
	while (p != NULL && (p = strstr(p, "json_valid(`")) != NULL) {
		p += strlen("json_valid(`");
		const char *e = strchr(p, '`');
		if (e == NULL)
			break;
		for (size_t i = 0; i < tf->ncols; i++)
			if (strlen(tf->cols[i].name) == (size_t)(e - p) &&
			    strncasecmp(tf->cols[i].name, p, (size_t)(e - p)) == 0)
				tf->cols[i].json_check = true;
		p = e;
	}
	ev_rowset_free(&rs);
}

/* Everything doctor reads about one table. Returns -1 when its schema could not be read. */
static int read_table(struct ev_session *s, enum ev_table_kind t, const char *name,
                      struct ev_doc_table_facts *tf, struct ev_doc_report *rep)
{
	struct ev_error err = {0};
	const char *group = ev_model_table(t)->key;
	struct ev_rowset *rs;

	memset(tf, 0, sizeof(*tf));
	tf->name = name;
	tf->rows = -1;
	if (ev_conn_table_info(s->conn, name, &tf->info, &err) < 0) {
		ev_doc_add(rep, EV_DOC_WARN, group, "table", name, NULL, NULL,
		           _("cannot read the schema of %s: %s"), name, err.msg);
		return -1;
	}
	rs = run(s, ev_doctor_query_table(name), &err);
	if (rs == NULL) {
		ev_doc_add(rep, EV_DOC_WARN, group, "table", name, NULL, NULL,
		           _("cannot read information_schema.TABLES for %s: %s"), name, err.msg);
		return -1;
	}
	tf->exists = rs->nrows > 0;
	if (tf->exists) {
		tf->engine = cell_dup(rs, 0, 0);
		tf->collation = cell_dup(rs, 0, 1);
		const char *rows = ev_rowset_cell(rs, 0, 2)->s;
		tf->rows = rows ? atoll(rows) : -1;
	}
	ev_rowset_free(&rs);
	if (!tf->exists) {
		/* Missing, or invisible to an account without any privilege on it: ask the server.
		 */
		char *msg = NULL;
		if (probe(s, ev_doctor_query_select_probe(name, NULL), &msg) == 1)
			tf->select_denied = msg;
		else
			free(msg);
		return 0;
	}

	rs = run(s, ev_doctor_query_columns(name), &err);
	if (rs == NULL) {
		ev_doc_add(rep, EV_DOC_WARN, group, "columns", name, NULL, NULL,
		           _("cannot read the columns of %s: %s"), name, err.msg);
		return -1;
	}
	tf->ncols = rs->nrows;
	tf->cols = ev_xcalloc(rs->nrows ? rs->nrows : 1, sizeof(*tf->cols));
	for (size_t r = 0; r < rs->nrows; r++) {
		struct ev_doc_column_fact *c = &tf->cols[r];
		c->name = cell_dup(rs, r, 0);
		c->data_type = cell_dup(rs, r, 1);
		c->column_type = cell_dup(rs, r, 2);
		const char *nul = ev_rowset_cell(rs, r, 3)->s;
		c->nullable = nul != NULL && strcasecmp(nul, "YES") == 0;
		const char *len = ev_rowset_cell(rs, r, 4)->s;
		c->char_len = len ? atoll(len) : 0;
		c->charset = cell_dup(rs, r, 5);
		if (c->name == NULL)
			c->name = ev_xstrdup("");
	}
	ev_rowset_free(&rs);
	if (ev_conn_server(s->conn)->flavour == EV_FLAVOUR_MARIADB)
		mark_json_checks(s, tf);

	/* SELECT of the model's columns the table has: column grants count. */
	const struct ev_doc_schema *sc = ev_doctor_schema(t);
	const char **cols = ev_xcalloc(sc->ncolumns + 1, sizeof(*cols));
	size_t n = 0;
	for (size_t i = 0; i < sc->ncolumns; i++)
		for (size_t j = 0; j < tf->ncols; j++)
			if (strcasecmp(tf->cols[j].name, sc->columns[i].name) == 0) {
				cols[n++] = sc->columns[i].name;
				break;
			}
	char *msg = NULL;
	if (probe(s, ev_doctor_query_select_probe(name, cols), &msg) == 1)
		tf->select_denied = msg;
	else
		free(msg);
	free(cols);
	return 0;
}

static bool column_is_time(const struct ev_doc_table_facts *tf, const char *name)
{
	for (size_t i = 0; i < tf->ncols; i++)
		if (strcasecmp(tf->cols[i].name, name) == 0)
			return strcasecmp(tf->cols[i].data_type, "datetime") == 0 ||
			       strcasecmp(tf->cols[i].data_type, "timestamp") == 0;
	return false;
}

static void check_recent(struct ev_session *s, enum ev_table_kind t,
                         const struct ev_doc_table_facts *tf, const struct ev_doc_server *srv,
                         struct ev_doc_report *rep)
{
	struct ev_doc_recent rc = {0};
	struct ev_error err = {0};
	struct ev_rowset *rs = NULL;
	const char *index = ev_index_find(&tf->info, "create_time");
	struct ev_zone_newest zn = {0};

	rc.utc_offset = srv->utc_offset_s;
	rc.zone = srv->time_zone;
	if (!column_is_time(tf, "create_time")) {
		rc.why_not = _("create_time is missing or not a DATETIME");
	} else if (index == NULL && ev_index_find(&tf->info, "id") == NULL) {
		rc.why_not = _("no index on create_time nor on id to read the newest row by");
	} else {
		/* The same query and judgement as the writes' check (core/zone.h). */
		rs = run(s, ev_zone_query_newest(tf->name, index), &err);
		if (rs == NULL) {
			rc.why_not = err.msg;
		} else if (ev_zone_from_rowset(rs, &zn, &err) < 0) {
			rc.why_not = err.msg;
		} else {
			rc.checked = true;
			rc.rows = zn.found ? 1 : 0;
			rc.ahead_s = zn.ahead_s;
			rc.newest = zn.create_time;
			rc.now = zn.now;
			rc.event_no = zn.event_no;
			rc.id = zn.id;
		}
	}
	ev_doctor_check_zone(rep, t, tf->name, &rc);
	ev_zone_newest_clear(&zn);
	ev_rowset_free(&rs);
}

static void check_retention(struct ev_session *s, const struct ev_opts *o, enum ev_table_kind t,
                            const struct ev_doc_table_facts *tf, struct ev_doc_report *rep)
{
	struct ev_doc_retention x = {.rows = tf->rows, .past = -1};
	struct ev_error err = {0};
	const char *index = ev_index_find(&tf->info, "create_time");
	char *oldest = NULL;

	x.retention_s = o->cfg.retention_s[t];
	x.setting = t == EV_TABLE_OUTBOX ? "retention_outbox" : "retention_message";
	if (!column_is_time(tf, "create_time")) {
		x.why_not = _("create_time is missing or not a DATETIME");
	} else if (index == NULL) {
		x.why_not = _("no index on create_time to read the oldest row through");
	} else {
		struct ev_rowset *rs = run(s, ev_doctor_query_oldest(tf->name, index), &err);
		if (rs == NULL) {
			x.why_not = err.msg;
		} else {
			x.checked = true;
			if (rs->nrows > 0 && ev_rowset_cell(rs, 0, 0)->s != NULL) {
				oldest = ev_xstrdup(ev_rowset_cell(rs, 0, 0)->s);
				x.oldest = oldest;
				const char *a = ev_rowset_cell(rs, 0, 1)->s;
				x.oldest_age_s = a ? atoll(a) : 0;
			}
			ev_rowset_free(&rs);
		}
		if (x.checked && x.retention_s > 0 && x.oldest != NULL) {
			rs = run(s, ev_doctor_query_past(tf->name, index, x.retention_s), &err);
			if (rs != NULL && rs->nrows > 0 && ev_rowset_cell(rs, 0, 0)->s != NULL) {
				x.past = atoll(ev_rowset_cell(rs, 0, 0)->s);
				x.past_capped = x.past > EV_DOC_PAST_CAP;
			}
			ev_rowset_free(&rs);
		}
	}
	ev_doctor_check_retention(rep, t, tf->name, &x);
	free(oldest);
}

static void check_privileges(struct ev_session *s, enum ev_table_kind t,
                             const struct ev_doc_table_facts *tf, const struct ev_doc_server *srv,
                             struct ev_doc_report *rep)
{
	struct ev_doc_access a = {0};
	char *msg = NULL;

	a.table_name = tf->name;
	a.database = srv->database;
	a.user = srv->user;
	a.flavour = srv->version.flavour;
	a.select_denied = tf->select_denied;
	int rc = probe(s, ev_guard_query_probe(t, tf->name), &msg);
	a.update_checked = rc >= 0;
	if (rc == 1)
		a.update_denied = msg;
	else if (rc < 0)
		a.update_error = msg;
	ev_doctor_check_access(rep, t, &a);
	free(msg);
}

static void check_audit(struct ev_session *s, const struct ev_doc_server *srv,
                        struct ev_doc_report *rep)
{
	struct ev_doc_access a = {0};
	struct ev_error err = {0};
	char *msg = NULL;

	a.database = srv->database;
	a.user = srv->user;
	a.flavour = srv->version.flavour;
	a.audit = -1;
	struct ev_rowset *rs = run(s, ev_doctor_query_audit_exists(), &err);
	if (rs != NULL && rs->nrows > 0 && ev_rowset_cell(rs, 0, 0)->s != NULL)
		a.audit = atoll(ev_rowset_cell(rs, 0, 0)->s) > 0 ? 1 : 0;
	ev_rowset_free(&rs);
	if (a.audit == 1) {
		int rc = probe(s, ev_doctor_query_audit_probe(), &msg);
		if (rc == 1)
			a.audit_denied = msg;
		else if (rc < 0)
			a.audit_error = msg;
	}
	ev_doctor_check_audit(rep, &a);
	free(msg);
	msg = NULL;
	a.access_log = -1;
	rs = run(s, ev_doctor_query_access_log_exists(), &err);
	if (rs != NULL && rs->nrows > 0 && ev_rowset_cell(rs, 0, 0)->s != NULL)
		a.access_log = atoll(ev_rowset_cell(rs, 0, 0)->s) > 0 ? 1 : 0;
	ev_rowset_free(&rs);
	if (a.access_log == 1) {
		int rc = probe(s, ev_doctor_query_access_log_probe(), &msg);
		if (rc == 1)
			a.access_log_denied = msg;
		else if (rc < 0)
			a.access_log_error = msg;
	}
	ev_doctor_check_access_log(rep, &a);
	free(msg);
}

static void check_replica(struct ev_session *s, const struct ev_doc_server *srv,
                          struct ev_doc_report *rep)
{
	struct ev_error err = {0};
	struct ev_rowset *rs = run(s, ev_doctor_query_replica(&srv->version), &err);
	if (rs == NULL) {
		ev_doctor_check_replica(rep, srv,
		                        err.code == 1227 ? 1227 : (err.code ? err.code : 1),
		                        err.msg, 0, NULL);
		return;
	}
	const char *lag = NULL;
	if (rs->nrows > 0) {
		int c = ev_rowset_col(rs, "Seconds_Behind_Master");
		if (c < 0)
			c = ev_rowset_col(rs, "Seconds_Behind_Source");
		if (c >= 0)
			lag = ev_rowset_cell(rs, 0, (size_t)c)->s;
	}
	ev_doctor_check_replica(rep, srv, 0, NULL, rs->nrows, lag);
	ev_rowset_free(&rs);
}

/* --- output --------------------------------------------------------------------------------- */

static const char *const group_order[] = {"server", "privileges", "outbox", "message"};
#define NGROUPS (sizeof(group_order) / sizeof(group_order[0]))

static void print_lines(FILE *out, const char *label, const char *text)
{
	char *safe = ev_text_sanitize_multiline(text, strlen(text));
	const char *p = safe;
	bool first = true;
	while (*p) {
		const char *nl = strchr(p, '\n');
		size_t n = nl ? (size_t)(nl - p) : strlen(p);
		/* The label in 8 cells (it may be translated), the lines after it. */
		int w = first ? ev_text_width(label) : 0;
		fprintf(out, "      %s%*s%.*s\n", first ? label : "", w < 8 ? 8 - w : 1, "", (int)n,
		        p);
		first = false;
		p += n + (nl ? 1 : 0);
	}
	free(safe);
}

static const char *group_title(const struct ev_opts *o, const char *group, char *buf, size_t n)
{
	int t = ev_model_table_parse(group);
	if (t >= 0)
		/* TRANSLATORS: a table's group title: "outbox (biz_outbox_event)". */
		snprintf(buf, n, _("%s (%s)"),
		         ev_model_table_label(ev_model_table((enum ev_table_kind)t)),
		         ev_opts_table_name(o, (enum ev_table_kind)t));
	else if (strcmp(group, "server") == 0)
		/* TRANSLATORS: doctor's group titles: the server's findings, the account's. */
		snprintf(buf, n, "%s", P_("doctor group", "server"));
	else if (strcmp(group, "privileges") == 0)
		/* TRANSLATORS: doctor's group title: what the account may do. */
		snprintf(buf, n, "%s", P_("doctor group", "privileges"));
	else
		snprintf(buf, n, "%s", group);
	return buf;
}

static void write_text(FILE *out, const struct ev_opts *o, const struct ev_doc_report *rep)
{
	char title[160];

	for (size_t g = 0; g <= NGROUPS; g++) {
		bool head = false;
		for (size_t i = 0; i < rep->n; i++) {
			const struct ev_doc_finding *f = &rep->f[i];
			bool known = false;
			for (size_t k = 0; k < NGROUPS; k++)
				known = known || strcmp(f->group, group_order[k]) == 0;
			if (g < NGROUPS ? strcmp(f->group, group_order[g]) != 0 : known)
				continue;
			if (!head) {
				fprintf(out, "%s\n",
				        group_title(o, g < NGROUPS ? group_order[g] : f->group,
				                    title, sizeof(title)));
				head = true;
			}
			char *msg = ev_text_sanitize(f->message, strlen(f->message));
			fprintf(out, "  %-4s  %s\n", ev_doc_level_name(f->level), msg);
			free(msg);
			/* TRANSLATORS: the labels under a finding (at most 7 cells). */
			if (f->impact != NULL)
				/* TRANSLATORS: a label under a finding (at most 7 cells): what it
				 * breaks. */
				print_lines(out, _("impact:"), f->impact);
			if (f->fix != NULL)
				/* TRANSLATORS: a label under a finding (at most 7 cells): the
				 * statement that fixes it. */
				print_lines(out, _("fix:"), f->fix);
		}
	}
	int code = ev_doc_exit_code(rep);
	fputc('\n', out);
	/* TRANSLATORS: doctor's last line; keep OK, INFO, WARN and FAIL (scripts count them). */
	fprintf(out, _("%zu OK, %zu INFO, %zu WARN, %zu FAIL: %s (exit %d)\n"),
	        ev_doc_count(rep, EV_DOC_OK), ev_doc_count(rep, EV_DOC_INFO),
	        ev_doc_count(rep, EV_DOC_WARN), ev_doc_count(rep, EV_DOC_FAIL),
	        /* TRANSLATORS: doctor's verdict, after the counts. */
	        code == 0   ? _("all good")
	        : code == 1 ? _("evtop works, with the warnings above")
	                    : _("evtop cannot work with this database as it is"),
	        code);
}

static json_t *jstr(const char *s)
{
	if (s == NULL)
		return json_null();
	char *safe = ev_text_sanitize_multiline(s, strlen(s));
	json_t *j = json_string(safe);
	free(safe);
	return j ? j : json_null();
}

static int write_json(FILE *out, const struct ev_opts *o, const struct ev_doc_report *rep,
                      const struct ev_doc_server *srv, bool connected)
{
	static const char *const status[] = {"OK", "WARN", "FAIL"};
	int code = ev_doc_exit_code(rep);
	json_t *root = json_object();

	json_object_set_new(root, "status", json_string(status[code]));
	json_object_set_new(root, "exit", json_integer(code));
	json_t *server = json_object();
	if (connected) {
		json_object_set_new(server, "flavour",
		                    json_string(ev_flavour_name(srv->version.flavour)));
		json_object_set_new(server, "version", jstr(srv->info));
		json_object_set_new(server, "user", jstr(srv->user));
		json_object_set_new(server, "database", jstr(srv->database));
		json_object_set_new(server, "time_zone",
		                    jstr(srv->have_vars ? srv->time_zone : NULL));
	}
	json_object_set_new(root, "server", server);
	json_t *tables = json_object();
	for (int t = 0; t < EV_TABLE_COUNT; t++)
		json_object_set_new(tables, ev_model_table((enum ev_table_kind)t)->key,
		                    jstr(ev_opts_table_name(o, (enum ev_table_kind)t)));
	json_object_set_new(root, "tables", tables);
	json_t *counts = json_object();
	for (int l = EV_DOC_OK; l <= EV_DOC_FAIL; l++) {
		char key[8];
		const char *name = ev_doc_level_name((enum ev_doc_level)l);
		size_t i;
		for (i = 0; name[i] && i + 1 < sizeof(key); i++)
			key[i] = (char)(name[i] | 0x20);
		key[i] = '\0';
		json_object_set_new(
		        counts, key,
		        json_integer((json_int_t)ev_doc_count(rep, (enum ev_doc_level)l)));
	}
	json_object_set_new(root, "counts", counts);
	json_t *list = json_array();
	for (size_t g = 0; g <= NGROUPS; g++) {
		for (size_t i = 0; i < rep->n; i++) {
			const struct ev_doc_finding *f = &rep->f[i];
			bool known = false;
			for (size_t k = 0; k < NGROUPS; k++)
				known = known || strcmp(f->group, group_order[k]) == 0;
			if (g < NGROUPS ? strcmp(f->group, group_order[g]) != 0 : known)
				continue;
			json_t *j = json_object();
			json_object_set_new(j, "level", json_string(ev_doc_level_name(f->level)));
			json_object_set_new(j, "group", jstr(f->group));
			json_object_set_new(j, "check", jstr(f->check));
			json_object_set_new(j, "subject", jstr(f->subject));
			json_object_set_new(j, "message", jstr(f->message));
			json_object_set_new(j, "impact", jstr(f->impact));
			json_object_set_new(j, "fix", jstr(f->fix));
			json_array_append_new(list, j);
		}
	}
	json_object_set_new(root, "findings", list);
	int rc = json_dumpf(root, out, JSON_PRESERVE_ORDER | JSON_INDENT(1));
	fputc('\n', out);
	json_decref(root);
	return rc;
}

/* --- the command ---------------------------------------------------------------------------- */

/* The checks on one server: o->src's. Returns the exit code of its report. */
static int doctor_one(struct ev_opts *o)
{
	struct ev_error err = {0};
	struct ev_session s;
	struct ev_doc_report rep = {0};
	struct ev_doc_server srv = {0};
	struct server_vars sv = {0};
	bool connected = false;

	if (ev_session_open(&s, o, &err) < 0) {
		ev_doc_add(&rep, EV_DOC_FAIL, "server", "connect", NULL,
		           _("evtop cannot work without a connection"),
		           _("check -h/-P/-S/-u/-p/-D, or the option files' [client] and [evtop] "
		             "groups (--defaults-file)"),
		           _("cannot connect: %s"), err.msg);
	} else {
		connected = true;
		read_server(&s, &srv, &sv, &rep);
		ev_doctor_check_server(&rep, &srv);

		enum ev_table_kind kinds[EV_TABLE_COUNT];
		int n = ev_session_tables(o, kinds);
		struct ev_doc_table_facts tf[EV_TABLE_COUNT];
		bool have[EV_TABLE_COUNT] = {false};
		memset(tf, 0, sizeof(tf));
		for (int i = 0; i < n; i++) {
			enum ev_table_kind t = kinds[i];
			if (!(o->src->tables & (1u << t)))
				continue; /* the config says this source has no such table */
			have[t] = read_table(&s, t, ev_opts_table_name(o, t), &tf[t], &rep) == 0;
			if (!have[t])
				continue;
			ev_doctor_check_table(&rep, t, srv.version.flavour, &tf[t]);
			if (tf[t].exists && tf[t].select_denied == NULL) {
				check_recent(&s, t, &tf[t], &srv, &rep);
				check_retention(&s, o, t, &tf[t], &rep);
			}
		}
		for (int i = 0; i < n; i++) {
			enum ev_table_kind t = kinds[i];
			if (have[t] && (tf[t].exists || tf[t].select_denied != NULL))
				check_privileges(&s, t, &tf[t], &srv, &rep);
		}
		check_audit(&s, &srv, &rep);
		check_replica(&s, &srv, &rep);
		for (int t = 0; t < EV_TABLE_COUNT; t++)
			ev_doc_table_facts_clear(&tf[t]);
	}

	if (o->format == EV_FMT_JSON)
		write_json(stdout, o, &rep, &srv, connected);
	else
		write_text(stdout, o, &rep);
	int rc = ev_doc_exit_code(&rep);
	ev_doc_report_clear(&rep);
	server_vars_free(&sv);
	ev_session_close(&s);
	return rc;
}

int ev_cmd_doctor(int argc, char **argv)
{
	struct ev_opts o;
	int rc = ev_session_parse(&o, argc, argv, usage, 0, 0);

	if (rc >= 0) {
		ev_opts_free(&o);
		return rc;
	}
	if (o.format == EV_FMT_CSV) {
		ev_say_error("%s", _("doctor: --format table or json"));
		ev_opts_free(&o);
		return EV_EXIT_USAGE;
	}
	/* Each source's primary, and its read endpoint where it has one: one report each. */
	int runs = 0;
	for (int i = 0; i < o.nchosen; i++)
		runs += 1 + (ev_source_has_replica(o.chosen[i]) && !o.primary);
	if (runs == 1) {
		rc = doctor_one(&o);
		ev_opts_free(&o);
		return rc;
	}
	bool first = true;
	rc = 0;
	if (o.format == EV_FMT_JSON)
		fputs("[\n", stdout);
	for (int i = 0; i < o.nchosen; i++) {
		struct ev_source *src = o.chosen[i];
		for (int read = 0; read < 2; read++) {
			if (read && (!ev_source_has_replica(src) || o.primary))
				continue;
			struct ev_source *endpoint = read ? ev_source_read_endpoint(src) : NULL;
			struct ev_opts one = o; /* shallow: the copy frees nothing */
			one.src = endpoint ? endpoint : src;
			/* TRANSLATORS: which endpoint of a source doctor checks. */
			const char *what = read ? _("read endpoint") : P_("endpoint", "primary");
			if (o.format == EV_FMT_JSON) {
				printf("%s{\"source\":", first ? "" : ",\n");
				ev_session_json_string(stdout, src->name);
				printf(",\"endpoint\":\"%s\",\"report\":",
				       read ? "read" : "primary");
			} else {
				char *name = ev_text_sanitize(src->name, strlen(src->name));
				if (!first)
					putchar('\n');
				printf(_("== source %s (%s)\n"), name, what);
				free(name);
			}
			fflush(stdout);
			int one_rc = doctor_one(&one);
			if (o.format == EV_FMT_JSON)
				fputs("}", stdout);
			if (one_rc > rc)
				rc = one_rc;
			ev_source_free(&endpoint);
			first = false;
		}
	}
	if (o.format == EV_FMT_JSON)
		fputs("\n]\n", stdout);
	ev_opts_free(&o);
	return rc;
}
