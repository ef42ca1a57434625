/* evtop — `evtop doctor`: the model document's schema as data and the judgement (see
 * doctor.h); the statements it reads the server with are in doctor_sql.c. What a missing
 * index costs is not written down here: it is found by asking evtop's own query table and
 * dashboard builders which index they would pick with and without it, so doctor cannot drift
 * from what evtop runs. */
#include <config.h>

#include "core/doctor.h"
#include "core/columns.h"
#include "core/dashboard.h"
#include "core/i18n.h"
#include "core/query.h"
#include "core/text.h"
#include "core/zone.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* --- the expected schema (the model document, seeds/000) ------------------------------------- */

#define N(a) (sizeof(a) / sizeof((a)[0]))

#define COL(name, kind, type, nullable, def, role, comment) {name, type, nullable, def, comment},
static const struct ev_doc_column message_columns[] = {EV_MESSAGE_COLUMNS(COL)};
static const struct ev_doc_column outbox_columns[] = {EV_OUTBOX_COLUMNS(COL)};
#undef COL

static const struct ev_doc_index message_indexes[] = {
        {"PRIMARY", "id", true, N_("every write is by primary key")},
        {"uk_event_no", "event_no", true,
         N_("idempotent inserts: the same event is never written twice")},
        {"idx_status_retry_time", "event_status,next_retry_time,retry_count", false,
         N_("the scanners' pending and due-retry scans")},
        {"idx_biz_type_biz_id", "biz_type,biz_id", false, N_("every event of one business object")},
        {"idx_event_type_create_time", "event_type,create_time", false,
         N_("counts per event_type over a time range")},
        {"idx_trace_id", "trace_id", false, N_("lookups by trace_id")},
        {"idx_create_time", "create_time", false,
         N_("archiving, cleanup and paging by creation time")},
};

static const struct ev_doc_index outbox_indexes[] = {
        {"PRIMARY", "id", true, N_("every write is by primary key")},
        {"uk_event_no", "event_no", true,
         N_("idempotent inserts: the same event is never written twice")},
        {"idx_status_retry_time", "publish_status,next_retry_time,retry_count", false,
         N_("the publishers' pending and due-retry scans")},
        {"idx_status_lock_until", "publish_status,lock_until", false,
         N_("finding publishes whose lock expired (the lock-timeout recovery job)")},
        {"idx_aggregate", "aggregate_type,aggregate_id", false, N_("every event of one aggregate")},
        {"idx_event_type_create_time", "event_type,create_time", false,
         N_("counts per event_type over a time range")},
        {"idx_topic_create_time", "topic,create_time", false,
         N_("backlog and failures per topic over a time range")},
        {"idx_trace_id", "trace_id", false, N_("lookups by trace_id")},
        {"idx_create_time", "create_time", false,
         N_("archiving, cleanup and paging by creation time")},
};

/* sql/recommended-indexes.sql; the gains are PRODUCT.md section 5's, measured on 1M rows. */
#define REC_TYPE                                                                                   \
	N_("the dashboard's backlog counts per event_type, read from the index alone (measured "   \
	   "on 1M rows: ~100 -> ~17 ms)")
#define REC_UPDATE                                                                                 \
	N_("the high-retry list, read in index order without a sort (measured on 1M rows: ~45 "    \
	   "-> ~1 ms)")

static const struct ev_doc_recommended message_recommended[] = {
        {"idx_evtop_status_type", "event_status,event_type,deleted", REC_TYPE},
        {"idx_evtop_status_update", "event_status,update_time", REC_UPDATE},
        {"idx_evtop_status_handle", "event_status,last_handle_time",
         N_("the message table's stuck and processing lists, read in index order without a "
            "sort (measured on 1M rows: ~10 -> ~0.7 ms)")},
};

static const struct ev_doc_recommended outbox_recommended[] = {
        {"idx_evtop_status_type", "publish_status,event_type,deleted", REC_TYPE},
        {"idx_evtop_status_update", "publish_status,update_time", REC_UPDATE},
        {"idx_evtop_status_topic", "publish_status,topic",
         N_("the dashboard's backlog counts per topic (d in the console, --by topic), read "
            "from the index alone")},
};

/* What the operator actions write (PRODUCT.md section 2; sql/grants.sql): the columns whose
 * role in core/columns.h is SHOWN_WRITTEN. */
#define WRITTEN(name, kind, type, nullable, def, role, comment) EV_COLUMN_IF_WRITTEN_##role(name)
static const char *const message_action_columns[] = {EV_MESSAGE_COLUMNS(WRITTEN)};
static const char *const outbox_action_columns[] = {EV_OUTBOX_COLUMNS(WRITTEN)};
#undef WRITTEN

static const struct ev_doc_schema schemas[EV_TABLE_COUNT] = {
        [EV_TABLE_MESSAGE] = {EV_TABLE_MESSAGE, "业务消息事件表", message_columns,
                              N(message_columns), message_indexes, N(message_indexes),
                              message_recommended, N(message_recommended), message_action_columns,
                              N(message_action_columns)},
        [EV_TABLE_OUTBOX] = {EV_TABLE_OUTBOX, "业务Outbox事件表", outbox_columns, N(outbox_columns),
                             outbox_indexes, N(outbox_indexes), outbox_recommended,
                             N(outbox_recommended), outbox_action_columns,
                             N(outbox_action_columns)},
};

const struct ev_doc_schema *ev_doctor_schema(enum ev_table_kind t)
{
	return (unsigned)t < EV_TABLE_COUNT ? &schemas[t] : NULL;
}

char *ev_doctor_column_ddl(const struct ev_doc_column *c)
{
	if (c->def != NULL)
		return ev_xasprintf("%s %sDEFAULT %s", c->type, c->nullable ? "" : "NOT NULL ",
		                    c->def);
	return ev_xasprintf("%s %s", c->type, c->nullable ? "DEFAULT NULL" : "NOT NULL");
}

const char *ev_doctor_collation(enum ev_flavour f)
{
	return f == EV_FLAVOUR_MARIADB ? "utf8mb4_unicode_ci" : "utf8mb4_0900_ai_ci";
}

/* --- findings ------------------------------------------------------------------------------- */

const char *ev_doc_level_name(enum ev_doc_level l)
{
	switch (l) {
	case EV_DOC_OK:
		return "OK";
	case EV_DOC_INFO:
		return "INFO";
	case EV_DOC_WARN:
		return "WARN";
	case EV_DOC_FAIL:
		return "FAIL";
	}
	return "FAIL";
}

static char *dup_or_null(const char *s)
{
	return s ? ev_xstrdup(s) : NULL;
}

void ev_doc_add(struct ev_doc_report *r, enum ev_doc_level level, const char *group,
                const char *check, const char *subject, const char *impact, const char *fix,
                const char *fmt, ...)
{
	va_list ap;

	r->f = ev_xrealloc(r->f, (r->n + 1) * sizeof(*r->f));
	struct ev_doc_finding *f = &r->f[r->n++];
	f->level = level;
	f->group = ev_xstrdup(group);
	f->check = ev_xstrdup(check);
	f->subject = dup_or_null(subject);
	f->impact = dup_or_null(impact);
	f->fix = dup_or_null(fix);
	va_start(ap, fmt);
	f->message = ev_xvasprintf(fmt, ap);
	va_end(ap);
}

size_t ev_doc_count(const struct ev_doc_report *r, enum ev_doc_level level)
{
	size_t n = 0;
	for (size_t i = 0; i < r->n; i++)
		n += r->f[i].level == level;
	return n;
}

int ev_doc_exit_code(const struct ev_doc_report *r)
{
	if (ev_doc_count(r, EV_DOC_FAIL) > 0)
		return 2;
	return ev_doc_count(r, EV_DOC_WARN) > 0 ? 1 : 0;
}

void ev_doc_report_clear(struct ev_doc_report *r)
{
	for (size_t i = 0; i < r->n; i++) {
		struct ev_doc_finding *f = &r->f[i];
		free(f->group);
		free(f->check);
		free(f->subject);
		free(f->message);
		free(f->impact);
		free(f->fix);
	}
	free(r->f);
	memset(r, 0, sizeof(*r));
}

/* --- helpers ------------------------------------------------------------------------------------
 */

/* "a,b,c" -> "(a, b, c)". malloc'd. */
/* "a,b" as "(a, b)" for a message, or "(`a`, `b`)" for a statement (quoted). */
static char *cols_list(const char *cols, bool quoted)
{
	struct ev_buf b;
	ev_buf_init(&b);
	ev_buf_addc(&b, '(');
	for (const char *s = cols; *s;) {
		size_t n = strcspn(s, ",");
		char *one = ev_xstrndup(s, n);
		char *q = quoted ? ev_query_quote_ident(one) : NULL;
		ev_buf_adds(&b, q ? q : one);
		free(q);
		free(one);
		s += n;
		if (*s == ',') {
			ev_buf_adds(&b, ", ");
			s++;
		}
	}
	ev_buf_addc(&b, ')');
	return ev_buf_steal(&b);
}

static char *cols_pretty(const char *cols)
{
	return cols_list(cols, false);
}

static const struct ev_doc_column *schema_column(const struct ev_doc_schema *s, const char *name)
{
	for (size_t i = 0; i < s->ncolumns; i++)
		if (strcmp(s->columns[i].name, name) == 0)
			return &s->columns[i];
	return NULL;
}

static const struct ev_doc_column_fact *fact_column(const struct ev_doc_table_facts *tf,
                                                    const char *name)
{
	for (size_t i = 0; i < tf->ncols; i++)
		if (strcasecmp(tf->cols[i].name, name) == 0)
			return &tf->cols[i];
	return NULL;
}

static bool has_index_named(const struct ev_table_info *ti, const char *name)
{
	for (size_t i = 0; i < ti->nindexes; i++)
		if (strcasecmp(ti->indexes[i].name, name) == 0)
			return true;
	return false;
}

/* The fix for a missing index: its name unless the table already uses it for other columns. */
static char *add_key_stmt(const char *table, const struct ev_table_info *ti, const char *name,
                          const char *cols, bool unique)
{
	char *pretty = cols_list(cols, true);
	char *qt = ev_query_quote_ident(table);
	char *stmt;

	if (strcmp(name, "PRIMARY") == 0) {
		stmt = ev_xasprintf("ALTER TABLE %s ADD PRIMARY KEY %s", qt, pretty);
	} else {
		bool taken = ti != NULL && has_index_named(ti, name);
		char *key = ev_xasprintf("%s%s", name, taken ? "_evtop" : "");
		char *qk = ev_query_quote_ident(key);
		stmt = ev_xasprintf("ALTER TABLE %s ADD %sKEY %s %s", qt, unique ? "UNIQUE " : "",
		                    qk, pretty);
		free(qk);
		free(key);
	}
	free(qt);
	free(pretty);
	return stmt;
}

void ev_doc_table_facts_clear(struct ev_doc_table_facts *tf)
{
	free(tf->select_denied);
	free(tf->engine);
	free(tf->collation);
	ev_table_info_clear(&tf->info);
	for (size_t i = 0; i < tf->ncols; i++) {
		free(tf->cols[i].name);
		free(tf->cols[i].data_type);
		free(tf->cols[i].column_type);
		free(tf->cols[i].charset);
	}
	free(tf->cols);
	memset(tf, 0, sizeof(*tf));
}

/* --- columns ---------------------------------------------------------------------------------- */

static bool is_integer_type(const char *dt)
{
	static const char *const ints[] = {"tinyint", "smallint", "mediumint",
	                                   "int",     "integer",  "bigint"};
	for (size_t i = 0; i < N(ints); i++)
		if (strcasecmp(dt, ints[i]) == 0)
			return true;
	return false;
}

static bool is_text_type(const char *dt)
{
	static const char *const texts[] = {"varchar", "char",       "tinytext",
	                                    "text",    "mediumtext", "longtext"};
	for (size_t i = 0; i < N(texts); i++)
		if (strcasecmp(dt, texts[i]) == 0)
			return true;
	return false;
}

static enum ev_doc_level worse(enum ev_doc_level a, enum ev_doc_level b)
{
	return a > b ? a : b;
}

enum ev_doc_level ev_doctor_judge_column(const struct ev_doc_column *want,
                                         const struct ev_doc_column_fact *have, char *why,
                                         size_t size)
{
	const char *dt = have->data_type ? have->data_type : "";
	const char *ct = have->column_type ? have->column_type : dt;
	enum ev_doc_level lvl = EV_DOC_OK;
	struct ev_buf b;

	ev_buf_init(&b);
	if (strcmp(want->type, "BIGINT UNSIGNED") == 0) {
		if (strcasecmp(dt, "bigint") == 0 && strstr(ct, "unsigned") != NULL) {
			/* as the model */
		} else if (is_integer_type(dt)) {
			lvl = EV_DOC_WARN;
			ev_buf_printf(&b,
			              _("%s, the model says BIGINT UNSIGNED (ids past %s cannot be "
			                "stored)"),
			              /* TRANSLATORS: in "ids past %s cannot be stored": the range
			                 of the column's integer type. */
			              ct, strcasecmp(dt, "bigint") == 0 ? "2^63" : _("its range"));
		} else {
			lvl = EV_DOC_FAIL;
			ev_buf_printf(&b, _("%s, the model says BIGINT UNSIGNED"), ct);
		}
	} else if (strcmp(want->type, "INT") == 0 || strcmp(want->type, "TINYINT") == 0) {
		if (strcasecmp(dt, want->type) == 0) {
			/* as the model */
		} else if (is_integer_type(dt)) {
			lvl = EV_DOC_WARN;
			ev_buf_printf(&b, _("%s, the model says %s (an integer all the same)"), ct,
			              want->type);
		} else {
			lvl = EV_DOC_FAIL;
			ev_buf_printf(&b, _("%s, the model says %s"), ct, want->type);
		}
	} else if (strcmp(want->type, "DATETIME") == 0) {
		if (strcasecmp(dt, "datetime") == 0) {
			/* DATETIME(n): fractional seconds compare and page the same way */
		} else if (strcasecmp(dt, "timestamp") == 0) {
			lvl = EV_DOC_WARN;
			ev_buf_printf(&b,
			              _("%s, the model says DATETIME (a TIMESTAMP is stored in UTC "
			                "and converted to the session zone; it ends in 2038)"),
			              ct);
		} else {
			lvl = EV_DOC_FAIL;
			ev_buf_printf(&b, _("%s, the model says DATETIME"), ct);
		}
	} else if (strcmp(want->type, "JSON") == 0) {
		if (strcasecmp(dt, "json") == 0 ||
		    (strcasecmp(dt, "longtext") == 0 && have->json_check)) {
			/* MySQL's JSON, or MariaDB's alias: LONGTEXT with CHECK (json_valid(col))
			 */
		} else if (is_text_type(dt)) {
			lvl = EV_DOC_WARN;
			ev_buf_printf(
			        &b,
			        _("%s without a json_valid check, the model says JSON (the "
			          "server does not validate it; evtop shows invalid JSON raw)"),
			        ct);
		} else {
			lvl = EV_DOC_FAIL;
			ev_buf_printf(&b, _("%s, the model says JSON"), ct);
		}
	} else if (strncmp(want->type, "VARCHAR(", 8) == 0) {
		long long len = atoll(want->type + 8);
		if (strcasecmp(dt, "varchar") == 0 && have->char_len == len) {
			/* as the model */
		} else if (strcasecmp(dt, "varchar") == 0 || is_text_type(dt)) {
			lvl = EV_DOC_WARN;
			if (have->char_len > 0 && have->char_len < len)
				ev_buf_printf(
				        &b,
				        _("%s, the model says %s (shorter: longer values cannot be "
				          "stored, and evtop's filters accept the model's length)"),
				        ct, want->type);
			else
				ev_buf_printf(&b, _("%s, the model says %s"), ct, want->type);
		} else {
			lvl = EV_DOC_FAIL;
			ev_buf_printf(&b, _("%s, the model says %s"), ct, want->type);
		}
		if (have->charset != NULL && strncasecmp(have->charset, "utf8mb4", 7) != 0) {
			lvl = EV_DOC_FAIL;
			ev_buf_printf(&b,
			              _("%scharacter set %s, not utf8mb4 (emoji and some CJK "
			                "characters cannot be stored)"),
			              b.len ? "; " : "", have->charset);
		}
	}

	if (want->nullable != have->nullable) {
		lvl = worse(lvl, EV_DOC_WARN);
		ev_buf_printf(&b, _("%s%s, the model says %s"), b.len ? "; " : "",
		              /* TRANSLATORS: a column's nullability, beside NOT NULL (SQL, kept as
		                 it is). */
		              have->nullable ? _("NULL allowed") : "NOT NULL",
		              want->nullable ? _("NULL allowed") : "NOT NULL");
	}
	/* Cut (when it must be) at a character's start: the text may be translated. */
	const char *text = b.data ? b.data : "";
	snprintf(why, size, "%.*s", (int)ev_utf8_prefix(text, size - 1), text);
	ev_buf_free(&b);
	return lvl;
}

/* What a wrong column breaks, by its type. */
static const char *column_impact(const struct ev_doc_column *c, const struct ev_doc_column_fact *f)
{
	if (!c->nullable || f->nullable)
		goto by_type;
	/* NOT NULL where the model allows NULL: the columns the actions set to NULL. */
	if (strcmp(c->name, "next_retry_time") == 0)
		return _("retry now sets next_retry_time = NULL: that write would fail");
	if (strcmp(c->name, "locked_by") == 0 || strcmp(c->name, "lock_until") == 0)
		return _("cancel and recover set locked_by and lock_until to NULL: those writes "
		         "would fail");
by_type:
	if (strcmp(c->type, "DATETIME") == 0)
		return _("evtop compares it with the server's NOW(): stuck, due retries, ages and "
		         "windows");
	if (strcmp(c->type, "JSON") == 0)
		return _("the detail pane and --format json embed it as stored JSON");
	if (strcmp(c->type, "BIGINT UNSIGNED") == 0)
		return _("every write and re-read is by id");
	if (strcmp(c->type, "INT") == 0 || strcmp(c->type, "TINYINT") == 0)
		return _("evtop compares it as a number (statuses, retry_count < max_retry_count, "
		         "version guards)");
	return _("evtop filters and shows it as text");
}

/* --- collation ---------------------------------------------------------------------------------
 */

enum ev_doc_level ev_doctor_judge_collation(const char *collation)
{
	static const char *const good[] = {"utf8mb4_0900_ai_ci", "utf8mb4_unicode_ci",
	                                   "utf8mb4_uca1400_ai_ci", "utf8mb4_unicode_520_ci"};
	if (collation == NULL || strncasecmp(collation, "utf8mb4_", 8) != 0)
		return EV_DOC_FAIL;
	for (size_t i = 0; i < N(good); i++)
		if (strcasecmp(collation, good[i]) == 0)
			return EV_DOC_OK;
	return EV_DOC_WARN;
}

/* --- impact: ask the query table and the dashboard ----------------------------------------- */

#define CANDIDATE "evtop-doctor-candidate"

static const char *def_pick(const struct ev_query_def *d, const struct ev_table_info *ti)
{
	for (int i = 0; i < 3 && d->index[i] != NULL; i++) {
		const char *name = ev_index_find(ti, d->index[i]);
		if (name != NULL)
			return name;
	}
	return NULL;
}

/* The index a statement forces (FORCE INDEX (`name`)); "" when it forces none. malloc'd. */
static char *forced_index(const char *sql)
{
	const char *p = strstr(sql, "FORCE INDEX (`");
	if (p == NULL)
		return ev_xstrdup("");
	p += strlen("FORCE INDEX (`");
	const char *e = strchr(p, '`');
	return e ? ev_xstrndup(p, (size_t)(e - p)) : ev_xstrdup("");
}

/* The dashboard query's index, or NULL when it would not run (n/a). malloc'd. */
static char *dash_pick(enum ev_table_kind t, const char *table_name, const struct ev_table_info *ti,
                       enum ev_dash_query which, const char *dim)
{
	struct ev_dash_req req = {
	        .info = ti,
	        .table = t,
	        .table_name = table_name,
	        .dimension = dim,
	        .window_s = 3600,
	        .stuck_threshold_s = 600,
	};
	struct ev_error err = {0};
	struct ev_query *q = ev_dash_query(&req, which, &err);
	if (q == NULL)
		return NULL;
	char *name = forced_index(q->sql);
	ev_query_free(&q);
	return name;
}

/* "list.failed_due" -> "the failed-due list"; "show.by_no" -> ... */
static char *def_label(const char *name)
{
	if (strcmp(name, "show.by_no") == 0)
		return ev_xstrdup(
		        _("show by event_no (evtop show, the console's :show, the actions' "
		          "lookups)"));
	if (strcmp(name, "show.by_id") == 0)
		return ev_xstrdup(_("the re-read of an event by id (the detail pane, after every "
		                    "write)"));
	if (strncmp(name, "list.", 5) == 0) {
		char *kind = ev_xstrdup(name + 5);
		for (char *p = kind; *p; p++)
			if (*p == '_')
				*p = '-';
		/* TRANSLATORS: a list of evtop's by its name ("the failed-due list"). */
		char *label = ev_xasprintf(_("the %s list"), kind);
		free(kind);
		return label;
	}
	return ev_xstrdup(name);
}

/* The figures a dashboard query counts, as the losses name them. */
static const char *dash_figure(enum ev_dash_query q)
{
	switch (q) {
	/* TRANSLATORS: the figures of the dashboard an index serves, in "the dashboard's
	 * pending and failed counts". */
	case EV_DQ_PENDING:
		return P_("doctor figure", "pending");
	case EV_DQ_PROCESSING:
		/* TRANSLATORS: a dashboard figure, in "the dashboard's %s counts". */
		return P_("doctor figure", "processing/stuck");
	case EV_DQ_FAILED:
		/* TRANSLATORS: a dashboard figure, in "the dashboard's %s counts". */
		return P_("doctor figure", "failed");
	case EV_DQ_WINDOW:
		/* TRANSLATORS: a dashboard figure, in "the dashboard's %s counts". */
		return P_("doctor figure", "created/success/cancelled");
	default:
		return "?";
	}
}

static bool same_str(const char *a, const char *b)
{
	return (a == NULL && b == NULL) || (a != NULL && b != NULL && strcmp(a, b) == 0);
}

/* "a, b" from the list so far and one more item (translated: "a、b"). */
static void join(struct ev_buf *b, size_t *n, const char *s)
{
	if (*n > 0) {
		/* TRANSLATORS: a list so far and its next item ("a, b, c"). */
		char *more = ev_xasprintf(P_("list", "%s, %s"), b->data, s);
		b->len = 0;
		ev_buf_adds(b, more);
		free(more);
	} else {
		ev_buf_adds(b, s);
	}
	(*n)++;
}

/* What evtop would lose without the candidate index, in three lists: the queries that would
 * not run, those that would scan, those that would use a slower index. */
struct losses {
	struct ev_buf na, scans, slower;
	size_t nna, nscan, nslow;
};

/* The queries of the query table (lists and show) that the candidate serves: which of them
 * lose it, and how, given the indexes the server has. */
static void query_losses(struct losses *l, enum ev_table_kind t, const struct ev_table_info *have,
                         const struct ev_table_info *plus)
{
	for (const struct ev_query_def *d = ev_query_defs; d->name != NULL; d++) {
		if (d->table != t)
			continue;
		const char *with = def_pick(d, plus);
		if (with == NULL || strcmp(with, CANDIDATE) != 0)
			continue;
		const char *without = def_pick(d, have);
		char *label = def_label(d->name);
		if (without == NULL && strncmp(d->name, "show.", 5) == 0) {
			join(&l->scans, &l->nscan, label);
		} else if (without == NULL) {
			join(&l->na, &l->nna, label);
		} else {
			/* TRANSLATORS: a query, and the slower index it would use instead. */
			char *s = ev_xasprintf(_("%s (through `%s`)"), label, without);
			join(&l->slower, &l->nslow, s);
			free(s);
		}
		free(label);
	}
}

/* The dashboard's losses, per figure: mode 1 n/a, 2 slower (fallback: the index it would use
 * instead), 0 none; mask: the groupings (bits over dims) that lose that way. */
struct dash_losses {
	const char *dims[8]; /* NULL first: totals only */
	size_t ndims;
	unsigned mode[EV_DQ_COUNT], mask[EV_DQ_COUNT];
	char *fallback[EV_DQ_COUNT];
};

/* Every dashboard figure for every grouping it offers (and totals only): how it loses the
 * candidate; n/a outranks slower. */
static void dash_find_losses(struct dash_losses *dl, enum ev_table_kind t, const char *table_name,
                             const struct ev_table_info *have, const struct ev_table_info *plus)
{
	const struct ev_table_def *td = ev_model_table(t);

	dl->ndims = 1;
	for (size_t i = 0; i < td->ndimensions && dl->ndims < N(dl->dims); i++)
		dl->dims[dl->ndims++] = td->dimensions[i].key;
	for (int w = 0; w < EV_DQ_COUNT; w++) {
		for (size_t i = 0; i < dl->ndims; i++) {
			char *with =
			        dash_pick(t, table_name, plus, (enum ev_dash_query)w, dl->dims[i]);
			bool uses = with != NULL && strcmp(with, CANDIDATE) == 0;
			free(with);
			if (!uses)
				continue;
			char *without =
			        dash_pick(t, table_name, have, (enum ev_dash_query)w, dl->dims[i]);
			unsigned m = without == NULL ? 1 : 2;
			if (dl->mode[w] == 0 || m < dl->mode[w]) {
				/* n/a outranks slower: report the worse, with its groupings */
				if (m < dl->mode[w])
					dl->mask[w] = 0;
				dl->mode[w] = m;
				free(dl->fallback[w]);
				dl->fallback[w] = without ? ev_xstrdup(without) : NULL;
			}
			if (m == dl->mode[w])
				dl->mask[w] |= 1u << i;
			free(without);
		}
	}
}

/* The dashboard's losses as phrases in l: one for the figures that lose the same way over the
 * same groupings ("the dashboard's pending and failed counts by topic"). */
static void dash_phrase_losses(struct losses *l, const struct dash_losses *dl)
{
	bool done[EV_DQ_COUNT] = {false};

	for (int w = 0; w < EV_DQ_COUNT; w++) {
		if (dl->mode[w] == 0 || done[w])
			continue;
		int members[EV_DQ_COUNT], nm = 0;
		for (int v = w; v < EV_DQ_COUNT; v++)
			if (!done[v] && dl->mode[v] == dl->mode[w] && dl->mask[v] == dl->mask[w] &&
			    same_str(dl->fallback[v], dl->fallback[w])) {
				members[nm++] = v;
				done[v] = true;
			}
		struct ev_buf figs, by;
		size_t nf = 0, nb = 0;
		ev_buf_init(&figs);
		ev_buf_init(&by);
		for (int k = 0; k < nm; k++) {
			const char *fig = dash_figure((enum ev_dash_query)members[k]);
			if (k > 0 && k == nm - 1) {
				/* TRANSLATORS: a list and its last item ("a, b and c"). */
				char *last = ev_xasprintf(P_("list", "%s and %s"), figs.data, fig);
				figs.len = 0;
				ev_buf_adds(&figs, last);
				free(last);
				nf++;
			} else {
				join(&figs, &nf, fig);
			}
		}
		unsigned all = (1u << dl->ndims) - 1;
		if (dl->mask[w] != all) {
			for (size_t i = 0; i < dl->ndims; i++)
				if (dl->mask[w] & (1u << i))
					/* TRANSLATORS: a dashboard without groups, among its
					 * groupings
					 * ("by event_type, totals only"). */
					join(&by, &nb,
					     dl->dims[i] ? dl->dims[i] : _("totals only"));
		}
		/* TRANSLATORS: "the dashboard's pending and failed counts" and "... by topic". */
		char *phrase = by.len > 0 ? ev_xasprintf(_("the dashboard's %s counts by %s"),
		                                         figs.data, by.data)
		                          : ev_xasprintf(_("the dashboard's %s counts"), figs.data);
		if (dl->mode[w] == 1) {
			join(&l->na, &l->nna, phrase);
		} else {
			char *through =
			        ev_xasprintf(_("%s (through `%s`)"), phrase, dl->fallback[w]);
			join(&l->slower, &l->nslow, through);
			free(through);
		}
		free(phrase);
		ev_buf_free(&figs);
		ev_buf_free(&by);
	}
}

/* The three lists in one text (malloc'd), or NULL when all are empty; *breaks when a query
 * would not run. Frees the lists. */
static char *losses_text(struct losses *l, bool *breaks)
{
	struct ev_buf out;
	ev_buf_init(&out);
	if (l->nna > 0) {
		ev_buf_printf(&out, _("will not run (n/a: evtop never scans): %s"), l->na.data);
		*breaks = true;
	}
	if (l->nscan > 0)
		ev_buf_printf(&out, _("%sscans the table (LIMIT 2, under the time limit): %s"),
		              out.len ? "; " : "", l->scans.data);
	if (l->nslow > 0)
		ev_buf_printf(&out, _("%sslower, through another index and a bounded sort: %s"),
		              out.len ? "; " : "", l->slower.data);
	ev_buf_free(&l->na);
	ev_buf_free(&l->scans);
	ev_buf_free(&l->slower);
	if (out.len == 0) {
		ev_buf_free(&out);
		return NULL;
	}
	return ev_buf_steal(&out);
}

char *ev_doctor_index_impact(enum ev_table_kind t, const char *table_name,
                             const struct ev_table_info *have, const char *columns, bool *breaks)
{
	struct ev_table_info plus;
	struct losses l = {0};
	struct dash_losses dl = {0};

	*breaks = false;
	ev_table_info_copy(&plus, have);
	plus.indexes = ev_xrealloc(plus.indexes, (plus.nindexes + 1) * sizeof(*plus.indexes));
	plus.indexes[plus.nindexes].name = ev_xstrdup(CANDIDATE);
	plus.indexes[plus.nindexes].columns = ev_xstrdup(columns);
	plus.indexes[plus.nindexes].unique = false;
	plus.nindexes++;
	ev_buf_init(&l.na);
	ev_buf_init(&l.scans);
	ev_buf_init(&l.slower);

	query_losses(&l, t, have, &plus);
	dash_find_losses(&dl, t, table_name, have, &plus);
	dash_phrase_losses(&l, &dl);
	for (int w = 0; w < EV_DQ_COUNT; w++)
		free(dl.fallback[w]);
	ev_table_info_clear(&plus);
	return losses_text(&l, breaks);
}

/* --- size ------------------------------------------------------------------------------------ */

static long long column_bytes(const struct ev_doc_column *c)
{
	if (strncmp(c->type, "VARCHAR(", 8) == 0)
		return atoll(c->type + 8) + 2;
	if (strcmp(c->type, "BIGINT UNSIGNED") == 0)
		return 8;
	if (strcmp(c->type, "INT") == 0)
		return 4;
	if (strcmp(c->type, "TINYINT") == 0)
		return 1;
	if (strcmp(c->type, "DATETIME") == 0)
		return 5;
	return 0;
}

static long long entry_bytes(enum ev_table_kind t, const char *columns)
{
	const struct ev_doc_schema *s = ev_doctor_schema(t);
	long long bytes = 8 + 6; /* the primary key, the record header */
	bool nullable = false;
	char *copy = ev_xstrdup(columns), *save = NULL;

	for (char *c = strtok_r(copy, ",", &save); c != NULL; c = strtok_r(NULL, ",", &save)) {
		const struct ev_doc_column *col = schema_column(s, c);
		if (col != NULL) {
			bytes += column_bytes(col);
			nullable = nullable || col->nullable;
		}
	}
	free(copy);
	return bytes + (nullable ? 1 : 0);
}

long long ev_doctor_index_size(enum ev_table_kind t, const char *columns, long long rows)
{
	if (rows <= 0)
		return 0;
	return rows * entry_bytes(t, columns) * 10 / 7;
}

static void format_bytes(long long n, char *buf, size_t size)
{
	if (n >= 1024LL * 1024 * 1024)
		snprintf(buf, size, "%.1f GiB", (double)n / (1024.0 * 1024 * 1024));
	else if (n >= 1024LL * 1024)
		snprintf(buf, size, "%.1f MiB", (double)n / (1024.0 * 1024));
	else if (n >= 1024)
		snprintf(buf, size, "%.0f KiB", (double)n / 1024.0);
	else
		/* TRANSLATORS: an index's estimated size (also GiB, MiB, KiB, kept as they are). */
		snprintf(buf, size, _("%lld bytes"), n);
}

/* --- the table checks ------------------------------------------------------------------------ */

static char *create_table_stmt(enum ev_table_kind t, enum ev_flavour f, const char *name)
{
	const struct ev_doc_schema *s = ev_doctor_schema(t);
	struct ev_buf b;

	ev_buf_init(&b);
	char *qn = ev_query_quote_ident(name);
	ev_buf_printf(&b, "CREATE TABLE %s (\n", qn);
	free(qn);
	for (size_t i = 0; i < s->ncolumns; i++) {
		char *ddl = ev_doctor_column_ddl(&s->columns[i]);
		char *qc = ev_query_quote_ident(s->columns[i].name);
		ev_buf_printf(&b, "    %s %s,\n", qc, ddl);
		free(qc);
		free(ddl);
	}
	for (size_t i = 0; i < s->nindexes; i++) {
		const struct ev_doc_index *x = &s->indexes[i];
		char *pretty = cols_list(x->columns, true);
		if (strcmp(x->name, "PRIMARY") == 0) {
			ev_buf_printf(&b, "    PRIMARY KEY %s", pretty);
		} else {
			char *qx = ev_query_quote_ident(x->name);
			ev_buf_printf(&b, "    %sKEY %s %s", x->unique ? "UNIQUE " : "", qx,
			              pretty);
			free(qx);
		}
		ev_buf_adds(&b, i + 1 < s->nindexes ? ",\n" : "\n");
		free(pretty);
	}
	ev_buf_printf(&b,
	              ") ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=%s COMMENT='%s' -- the "
	              "model document's DDL, as sql/%s/schema.sql",
	              ev_doctor_collation(f), s->comment,
	              f == EV_FLAVOUR_MARIADB ? "mariadb" : "mysql8");
	return ev_buf_steal(&b);
}

/* "ALTER TABLE `t` ADD COLUMN `c` DDL" (verb ADD or MODIFY), then `tail`. */
static char *alter_column(const char *verb, const char *table, const char *column, const char *ddl,
                          const char *tail)
{
	char *qt = ev_query_quote_ident(table), *qc = ev_query_quote_ident(column);
	char *fix = ev_xasprintf("ALTER TABLE %s %s COLUMN %s %s%s", qt, verb, qc, ddl, tail);
	free(qt);
	free(qc);
	return fix;
}

static void check_columns(struct ev_doc_report *r, const char *group, enum ev_table_kind t,
                          const struct ev_doc_table_facts *tf, bool *usable)
{
	const struct ev_doc_schema *s = ev_doctor_schema(t);
	size_t good = 0;

	for (size_t i = 0; i < s->ncolumns; i++) {
		const struct ev_doc_column *c = &s->columns[i];
		const struct ev_doc_column_fact *f = fact_column(tf, c->name);
		char *ddl = ev_doctor_column_ddl(c);
		if (f == NULL) {
			char *fix = alter_column("ADD", tf->name, c->name, ddl, "");
			ev_doc_add(r, EV_DOC_FAIL, group, "column", c->name,
			           _("evtop refuses the table: its lists, dashboard and show read "
			             "every "
			             "column of the model"),
			           fix, _("column %s is missing (the model: %s %s)"), c->name,
			           c->name, ddl);
			free(fix);
			*usable = false;
		} else {
			char why[1024]; /* translated, up to 3 bytes a character */
			enum ev_doc_level lvl = ev_doctor_judge_column(c, f, why, sizeof(why));
			if (lvl == EV_DOC_OK) {
				good++;
			} else {
				char *fix = alter_column("MODIFY", tf->name, c->name, ddl,
				                         " -- check the existing values first");
				ev_doc_add(r, lvl, group, "column", c->name, column_impact(c, f),
				           fix, _("column %s: %s"), c->name, why);
				free(fix);
			}
		}
		free(ddl);
	}
	if (good > 0)
		ev_doc_add(
		        r, EV_DOC_OK, group, "columns", NULL, NULL, NULL,
		        _("%zu of the model's %zu columns present with its types and nullability"),
		        good, s->ncolumns);
}

/* An index of the server whose columns are exactly cols, preferring a unique one. */
static const struct ev_index_info *index_exact(const struct ev_table_info *ti, const char *cols)
{
	const struct ev_index_info *found = NULL;
	for (size_t i = 0; i < ti->nindexes; i++)
		if (strcasecmp(ti->indexes[i].columns, cols) == 0 &&
		    (found == NULL || (!found->unique && ti->indexes[i].unique)))
			found = &ti->indexes[i];
	return found;
}

static void check_indexes(struct ev_doc_report *r, const char *group, enum ev_table_kind t,
                          const struct ev_doc_table_facts *tf)
{
	const struct ev_doc_schema *s = ev_doctor_schema(t);
	size_t good = 0;
	struct ev_buf renamed;
	size_t nrenamed = 0;

	ev_buf_init(&renamed);
	for (size_t i = 0; i < s->nindexes; i++) {
		const struct ev_doc_index *x = &s->indexes[i];
		const struct ev_index_info *exact = index_exact(&tf->info, x->columns);
		const char *prefix = ev_index_find(&tf->info, x->columns);
		char *pretty = cols_pretty(x->columns);
		bool is_pk = strcmp(x->name, "PRIMARY") == 0;

		if (exact != NULL && (!x->unique || exact->unique)) {
			good++;
			if (strcasecmp(exact->name, x->name) != 0) {
				/* TRANSLATORS: a model's index found under another name. */
				char *s2 = ev_xasprintf(_("%s as `%s`"), x->name, exact->name);
				join(&renamed, &nrenamed, s2);
				free(s2);
			}
		} else if (exact != NULL || (prefix != NULL && x->unique)) {
			/* On the columns, but not unique (or unique over more columns). */
			const char *name = exact ? exact->name : prefix;
			char *fix = add_key_stmt(tf->name, &tf->info, x->name, x->columns, true);
			ev_doc_add(
			        r, EV_DOC_WARN, group, "index", pretty,
			        is_pk ? _("evtop's writes find the row by id all the same")
			              : _("show by event_no stops at two rows and says so; the "
			                  "applications may write an event twice"),
			        fix,
			        _("no unique index on %s (the model's %s): `%s` does not enforce "
			          "it — %s"),
			        pretty, x->name, name, _(x->purpose));
			free(fix);
		} else if (prefix != NULL) {
			good++;
			/* TRANSLATORS: a model's index served by a wider one of the server's. */
			char *s2 = ev_xasprintf(_("%s served by `%s`"), x->name, prefix);
			join(&renamed, &nrenamed, s2);
			free(s2);
		} else {
			bool breaks = false;
			char *impact =
			        ev_doctor_index_impact(t, tf->name, &tf->info, x->columns, &breaks);
			char *fix =
			        add_key_stmt(tf->name, &tf->info, x->name, x->columns, x->unique);
			if (impact == NULL)
				impact = ev_xasprintf(_("no query of evtop's needs it; the "
				                        "applications' do (%s)"),
				                      _(x->purpose));
			if (is_pk) {
				free(impact);
				impact = ev_xstrdup(
				        _("every operator write is a single-row UPDATE by id: "
				          "without the key it would scan and lock the table, "
				          "so evtop must not write here"));
			}
			/* A leading-column prefix (a,b) of the model's (a,b,c) is reported too. */
			const struct ev_index_info *partial = NULL;
			for (size_t j = 0; j < tf->info.nindexes && partial == NULL; j++) {
				const char *c = tf->info.indexes[j].columns;
				size_t n = strlen(c);
				if (strncasecmp(x->columns, c, n) == 0 && x->columns[n] == ',')
					partial = &tf->info.indexes[j];
			}
			if (partial != NULL)
				ev_doc_add(r, is_pk ? EV_DOC_FAIL : EV_DOC_WARN, group, "index",
				           pretty, impact, fix,
				           _("no index on %s (the model's %s; `%s` has only (%s)) "
				             "— %s"),
				           pretty, x->name, partial->name, partial->columns,
				           _(x->purpose));
			else
				ev_doc_add(r, is_pk ? EV_DOC_FAIL : EV_DOC_WARN, group, "index",
				           pretty, impact, fix,
				           _("no index on %s (the model's %s) — %s"), pretty,
				           x->name, _(x->purpose));
			free(impact);
			free(fix);
		}
		free(pretty);
	}
	if (good > 0) {
		if (nrenamed > 0)
			ev_doc_add(r, EV_DOC_OK, group, "indexes", NULL, NULL, NULL,
			           _("%zu of the model's %zu indexes present, by columns (%s)"),
			           good, s->nindexes, renamed.data);
		else
			ev_doc_add(r, EV_DOC_OK, group, "indexes", NULL, NULL, NULL,
			           _("%zu of the model's %zu indexes present, by columns"), good,
			           s->nindexes);
	}
	ev_buf_free(&renamed);
}

static void check_recommended(struct ev_doc_report *r, const char *group, enum ev_table_kind t,
                              const struct ev_doc_table_facts *tf)
{
	const struct ev_doc_schema *s = ev_doctor_schema(t);

	for (size_t i = 0; i < s->nrecommended; i++) {
		const struct ev_doc_recommended *x = &s->recommended[i];
		const char *name = ev_index_find(&tf->info, x->columns);
		char *pretty = cols_pretty(x->columns);
		if (name != NULL) {
			ev_doc_add(r, EV_DOC_OK, group, "recommended", pretty, NULL, NULL,
			           _("recommended index %s present as `%s`: %s"), pretty, name,
			           _(x->speeds_up));
		} else {
			bool breaks = false;
			char *impact =
			        ev_doctor_index_impact(t, tf->name, &tf->info, x->columns, &breaks);
			char *fix = add_key_stmt(tf->name, &tf->info, x->name, x->columns, false);
			char size[128];
			long long per = entry_bytes(t, x->columns);
			if (tf->rows > 0) {
				char b2[32];
				format_bytes(ev_doctor_index_size(t, x->columns, tf->rows), b2,
				             sizeof(b2));
				/* TRANSLATORS: an estimated size ("about 8 KiB"). */
				snprintf(size, sizeof(size), _("about %s"), b2);
			} else {
				snprintf(size, sizeof(size), _("about %lld bytes per row"),
				         per * 10 / 7);
			}
			char *imp = ev_xasprintf(
			        /* TRANSLATORS: what evtop loses without the recommended index. */
			        _("without it, %s"),
			        impact ? impact : _("no query of evtop's would use it today"));
			ev_doc_add(
			        r, EV_DOC_INFO, group, "recommended", pretty, imp, fix,
			        _("recommended index %s: %s; size %s (an estimate: ~%lld rows by "
			          "information_schema x %lld bytes per entry, pages ~70%% full)"),
			        pretty, _(x->speeds_up), size, tf->rows > 0 ? tf->rows : 0, per);
			free(imp);
			free(impact);
			free(fix);
		}
		free(pretty);
	}
}

void ev_doctor_check_table(struct ev_doc_report *r, enum ev_table_kind t, enum ev_flavour f,
                           const struct ev_doc_table_facts *tf)
{
	const struct ev_table_def *td = ev_model_table(t);
	const char *group = td->key;
	bool usable = true;

	if (!tf->exists) {
		if (tf->select_denied != NULL) {
			ev_doc_add(r, EV_DOC_FAIL, group, "table", tf->name,
			           _("evtop shows this table as absent: its dashboard, lists and "
			             "actions are unavailable"),
			           NULL,
			           _("table %s is not visible to this account (no privilege on it, "
			             "or it "
			             "does not exist): %s"),
			           tf->name, tf->select_denied);
			return;
		}
		char *fix = create_table_stmt(t, f, tf->name);
		ev_doc_add(
		        r, EV_DOC_FAIL, group, "table", tf->name,
		        _("evtop shows this table as absent: its dashboard, lists and actions are "
		          "unavailable (the other table still works)"),
		        fix, _("table %s (the %s table) does not exist in this database"), tf->name,
		        td->key);
		free(fix);
		return;
	}
	ev_doc_add(r, EV_DOC_OK, group, "table", tf->name, NULL, NULL,
	           _("table %s exists (%s, ~%lld rows by information_schema, an estimate)"),
	           /* TRANSLATORS: in place of the table's storage engine (InnoDB). */
	           tf->name, tf->engine ? tf->engine : _("engine unknown"),
	           tf->rows > 0 ? tf->rows : 0);
	if (tf->engine != NULL && strcasecmp(tf->engine, "InnoDB") != 0)
		ev_doc_add(
		        r, EV_DOC_WARN, group, "engine", tf->name,
		        _("the guarded updates rely on row locks and transactions, the counts on "
		          "InnoDB's index reads"),
		        NULL, _("table %s uses %s, the model says InnoDB"), tf->name, tf->engine);
	check_columns(r, group, t, tf, &usable);
	check_indexes(r, group, t, tf);

	enum ev_doc_level cl = ev_doctor_judge_collation(tf->collation);
	char *qt = ev_query_quote_ident(tf->name);
	char *fix = ev_xasprintf("ALTER TABLE %s CONVERT TO CHARACTER SET utf8mb4 COLLATE %s "
	                         "-- rebuilds the table: plan it",
	                         qt, ev_doctor_collation(f));
	free(qt);
	if (cl == EV_DOC_OK)
		ev_doc_add(
		        r, EV_DOC_OK, group, "collation", tf->collation, NULL, NULL,
		        strcasecmp(tf->collation, "utf8mb4_0900_ai_ci") == 0
		                ? _("collation %s (the model's)")
		                : _("collation %s (equivalent to the model's utf8mb4_0900_ai_ci)"),
		        tf->collation);
	else if (cl == EV_DOC_WARN)
		ev_doc_add(r, EV_DOC_WARN, group, "collation", tf->collation,
		           _("filters and groups by event_type, topic or fail_reason compare "
		             "differently from the applications' expectations (case, accents)"),
		           fix,
		           _("collation %s: utf8mb4, but not the model's utf8mb4_0900_ai_ci nor "
		             "an equivalent"),
		           tf->collation);
	else
		ev_doc_add(r, EV_DOC_FAIL, group, "collation",
		           tf->collation ? tf->collation : "unknown",
		           _("payloads, reasons and ids with emoji or CJK characters cannot be "
		             "stored or are mangled; evtop speaks utf8mb4"),
		           fix, _("collation %s is not utf8mb4 (the model: utf8mb4_0900_ai_ci)"),
		           tf->collation ? tf->collation : "unknown");
	free(fix);
	check_recommended(r, group, t, tf);
}

/* --- the server ------------------------------------------------------------------------------ */

static void format_offset(long long s, char *buf, size_t size)
{
	long long a = s < 0 ? -s : s;
	snprintf(buf, size, "%c%02lld:%02lld", s < 0 ? '-' : '+', a / 3600, (a % 3600) / 60);
}

void ev_doctor_check_server(struct ev_doc_report *r, const struct ev_doc_server *s)
{
	const struct ev_server_version *v = &s->version;
	const char *fl = ev_flavour_name(v->flavour);

	int supported = ev_server_supported(v);
	const struct ev_server_floor *floor = ev_server_floor_of(v->flavour);

	if (supported == 0)
		ev_doc_add(
		        r, EV_DOC_WARN, "server", "version", s->info,
		        v->flavour == EV_FLAVOUR_MYSQL
		                ? _("evtop targets MySQL 8.0+ (the model document's JSON, "
		                    "max_execution_time)")
		                : _("evtop is tested on MariaDB 10.11; REPLICA MONITOR needs "
		                    "10.5.9+"),
		        /* TRANSLATORS: the server's flavour and version, its version string, then
		         * the oldest release of that flavour evtop supports ("MariaDB 10.6"). */
		        NULL, _("%s %d.%d.%d (%s): older than %s %d.%d"), fl, v->major, v->minor,
		        v->patch, s->info, fl, floor->major, floor->minor);
	else if (supported < 0)
		ev_doc_add(r, EV_DOC_WARN, "server", "version", s->info,
		           _("TiDB is not among the servers evtop is tested on"), NULL, "%s (%s)",
		           fl, s->info);
	else
		ev_doc_add(r, EV_DOC_OK, "server", "version", s->info, NULL, NULL,
		           _("%s %d.%d.%d (%s) via %s, account %s, database %s"), fl, v->major,
		           v->minor, v->patch, s->info, s->host_info, s->user,
		           /* TRANSLATORS: in place of the database's name when none is selected. */
		           s->database ? s->database : _("(none)"));
	if (s->have_vars && s->database == NULL)
		ev_doc_add(r, EV_DOC_FAIL, "server", "database", NULL, _("evtop finds no table"),
		           NULL, _("no database selected (-D, or database= in the option file)"));
	if (!s->have_vars)
		return;

	const char *var =
	        v->flavour == EV_FLAVOUR_MARIADB ? "max_statement_time" : "max_execution_time";
	char *fix = ev_xasprintf(_("statement_timeout = %dms in evtop's config, or "
	                           "--statement-timeout=%dms"),
	                         s->want_limit_ms, s->want_limit_ms);
	if (s->limit_ms <= 0)
		ev_doc_add(r, EV_DOC_WARN, "server", "time limit", var,
		           _("a query of evtop's could run as long as the server lets it"), fix,
		           _("no statement time limit in effect on evtop's session (%s = 0)"), var);
	else if ((long long)(s->limit_ms + 0.5) != s->want_limit_ms)
		ev_doc_add(r, EV_DOC_WARN, "server", "time limit", var, NULL, fix,
		           _("statement time limit %s = %.0f ms, evtop sets %d ms"), var,
		           s->limit_ms, s->want_limit_ms);
	else
		ev_doc_add(r, EV_DOC_OK, "server", "time limit", var, NULL, NULL,
		           _("statement time limit %s = %.0f ms on evtop's sessions "
		             "(statement_timeout)"
		             "%s; innodb_lock_wait_timeout = %lld s"),
		           var, s->limit_ms,
		           v->flavour == EV_FLAVOUR_MARIADB
		                   ? ""
		                   : _(" — SELECTs only: evtop's writes are single-row UPDATEs by "
		                       "primary key"),
		           s->lock_wait_s);
	free(fix);

	if (s->read_only || s->innodb_read_only || s->super_read_only)
		ev_doc_add(
		        r, EV_DOC_WARN, "server", "read_only", NULL,
		        _("evtop watches here but every write is refused (a replica, or a primary "
		          "being switched over)"),
		        _("point the source's write endpoint at the primary"),
		        _("the server is read-only (%s = 1)"),
		        s->read_only          ? "@@read_only"
		        : s->innodb_read_only ? "@@innodb_read_only"
		                              : "@@super_read_only");
	else
		ev_doc_add(r, EV_DOC_OK, "server", "read_only", NULL, NULL, NULL,
		           _("the server accepts writes (@@read_only = 0)"));

	char off[32];
	format_offset(s->utc_offset_s, off, sizeof(off));
	if (s->configured_zone != NULL && s->system_time_zone != NULL)
		ev_doc_add(
		        r, EV_DOC_OK, "server", "session zone", s->time_zone, NULL, NULL,
		        _("session time_zone = %s (UTC%s now), from --time-zone / time_zone in the "
		          "config; the server's system zone is %s (a hint only: applications set "
		          "their own session zone); the tables' check of their newest rows "
		          "follows"),
		        s->time_zone, off, s->system_time_zone);
	else if (s->configured_zone != NULL)
		ev_doc_add(
		        r, EV_DOC_OK, "server", "session zone", s->time_zone, NULL, NULL,
		        _("session time_zone = %s (UTC%s now), from --time-zone / time_zone in the "
		          "config; the tables' check of their newest rows follows"),
		        s->time_zone, off);
	else if (s->system_time_zone != NULL)
		ev_doc_add(r, EV_DOC_INFO, "server", "session zone", s->time_zone,
		           _("evtop compares the applications' DATETIMEs with NOW() in this zone"),
		           _("time_zone = <the applications' zone, e.g. +08:00> in the config's "
		             "[source], or --time-zone"),
		           _("no time_zone configured: the session uses the server's default %s, "
		             "system zone %s (UTC%s now)"),
		           s->time_zone, s->system_time_zone, off);
	else
		ev_doc_add(r, EV_DOC_INFO, "server", "session zone", s->time_zone,
		           _("evtop compares the applications' DATETIMEs with NOW() in this zone"),
		           _("time_zone = <the applications' zone, e.g. +08:00> in the config's "
		             "[source], or --time-zone"),
		           _("no time_zone configured: the session uses the server's default %s "
		             "(UTC%s now)"),
		           s->time_zone, off);
}

/* --- time zone -------------------------------------------------------------------------------- */

bool ev_doctor_zone_mismatch(long long ahead_s, long long *shift_s)
{
	/* The judgement the writes, the dashboard and check use: one rule everywhere. */
	return ev_zone_judge(ahead_s, shift_s) != EV_ZONE_OK;
}

/* A setting's duration as it is written: 30d, 12h, 90m, 45s. */
static void setting_duration(long long s, char *out, size_t n)
{
	if (s % 86400 == 0)
		snprintf(out, n, "%lldd", s / 86400);
	else if (s % 3600 == 0)
		snprintf(out, n, "%lldh", s / 3600);
	else if (s % 60 == 0)
		snprintf(out, n, "%lldm", s / 60);
	else
		snprintf(out, n, "%llds", s);
}

void ev_doctor_check_retention(struct ev_doc_report *r, enum ev_table_kind t,
                               const char *table_name, const struct ev_doc_retention *x)
{
	const char *group = ev_model_table(t)->key;
	char age[32] = "", ret[32] = "", size[128] = "";

	if (x->rows >= 0)
		/* TRANSLATORS: a table's estimated size, in a retention finding. */
		snprintf(size, sizeof(size), _("about %lld rows"), x->rows);
	else
		snprintf(size, sizeof(size), "%s", _("its size unknown"));
	if (!x->checked) {
		ev_doc_add(r, EV_DOC_INFO, group, "retention", table_name, NULL, NULL,
		           _("retention not checked on %s: %s"), table_name,
		           x->why_not ? x->why_not : _("the oldest row could not be read"));
		return;
	}
	if (x->oldest != NULL)
		ev_format_duration(x->oldest_age_s, age, sizeof(age));
	if (x->retention_s <= 0) {
		char *fix =
		        ev_xasprintf(_("set %s = 30d (or your retention) in the config, and run "
		                       "evtop archive --table %s --older-than 30d from cron "
		                       "(doc/archive.md)"),
		                     x->setting, group);
		bool big = x->rows > EV_DOC_RETENTION_BIG;
		ev_doc_add(r, big ? EV_DOC_WARN : EV_DOC_INFO, group, "retention", table_name,
		           big ? _("finished history grows without bound: every status scan and "
		                   "index gets slower, and the disk fills")
		               : NULL,
		           fix, _("retention: none configured for %s (%s%s%s%s)"), table_name, size,
		           x->oldest ? _(", the oldest created ") : "", x->oldest ? age : "",
		           /* TRANSLATORS: "(about 67 rows, the oldest created 2d03h ago)" or "(...,
		              empty)". */
		           x->oldest ? _(" ago") : _(", empty"));
		free(fix);
		return;
	}
	setting_duration(x->retention_s, ret, sizeof(ret));
	char past[128];
	if (x->past < 0)
		snprintf(past, sizeof(past), "%s", _("rows past it not counted"));
	else if (x->past_capped)
		snprintf(past, sizeof(past), _("over %lld rows created before it"),
		         (long long)EV_DOC_PAST_CAP);
	else
		snprintf(past, sizeof(past),
		         x->past == 1 ? _("%lld row created before it")
		                      : _("%lld rows created before it"),
		         x->past);
	if (x->oldest != NULL && x->oldest_age_s > 2LL * x->retention_s) {
		char *fix =
		        ev_xasprintf(_("evtop archive --table %s --older-than %s --dry-run, then "
		                       "schedule it (doc/archive.md)"),
		                     group, ret);
		ev_doc_add(r, EV_DOC_WARN, group, "retention", table_name,
		           _("evtop archive is not running, or not keeping up"), fix,
		           _("retention %s on %s: %s, the oldest created %s ago (%s)"), ret,
		           table_name, past, age, size);
		free(fix);
		return;
	}
	ev_doc_add(r, EV_DOC_OK, group, "retention", table_name, NULL, NULL,
	           _("retention %s on %s: %s%s%s%s (%s)"), ret, table_name, past,
	           x->oldest ? _(", the oldest created ") : "", x->oldest ? age : "",
	           /* TRANSLATORS: "(about 67 rows, the oldest created 2d03h ago)" or "(...,
	              empty)". */
	           x->oldest ? _(" ago") : _(", empty"), size);
}

void ev_doctor_check_zone(struct ev_doc_report *r, enum ev_table_kind t, const char *table_name,
                          const struct ev_doc_recent *rc)
{
	const char *group = ev_model_table(t)->key;
	char dur[32];
	long long shift = 0;

	if (!rc->checked) {
		ev_doc_add(r, EV_DOC_INFO, group, "time zone", table_name, NULL, NULL,
		           _("time zone not checked on %s: %s"), table_name,
		           rc->why_not ? rc->why_not : _("the recent rows could not be read"));
		return;
	}
	if (rc->rows == 0 || rc->newest == NULL) {
		ev_doc_add(r, EV_DOC_INFO, group, "time zone", table_name, NULL, NULL,
		           _("time zone not checked on %s: the table has no rows"), table_name);
		return;
	}
	long long a = rc->ahead_s < 0 ? -rc->ahead_s : rc->ahead_s;
	ev_format_duration(a, dur, sizeof(dur));
	if (ev_doctor_zone_mismatch(rc->ahead_s, &shift)) {
		char zone[32], now_off[32], shift_dur[32];
		ev_format_duration(shift < 0 ? -shift : shift, shift_dur, sizeof(shift_dur));
		format_offset(rc->utc_offset + shift, zone, sizeof(zone));
		format_offset(rc->utc_offset, now_off, sizeof(now_off));
		char *fix =
		        ev_xasprintf(_("--time-zone=%s (time_zone = %s in the config's source), "
		                       "if the applications write %s wall-clock time; --clock-ok "
		                       "on a write if the zone is right and the table only quiet"),
		                     zone, zone, zone);
		char *no = ev_text_sanitize(rc->event_no ? rc->event_no : "NULL",
		                            strlen(rc->event_no ? rc->event_no : "NULL"));
		ev_doc_add(
		        r, EV_DOC_FAIL, group, "time zone", table_name,
		        _("every comparison with NOW() is off by that much: processing rows look "
		          "stuck (or none do), due retries and ages are wrong; evtop refuses "
		          "writes, "
		          "marks those figures suspect and check answers UNKNOWN until the zone is "
		          "right"),
		        fix,
		        _("suspected time zone mismatch: the newest row of %s (event_no %s, id "
		          "%llu, "
		          "create_time %s, read through its create_time index) is %s %s NOW() (%s) "
		          "in the session zone %s (UTC%s): a zone offset of about %s"),
		        table_name, no, rc->id, rc->newest, dur,
		        /* TRANSLATORS: the newest row "is 2h00m ahead of NOW()" / "behind NOW()".
		         */
		        rc->ahead_s > 0 ? P_("time zone", "ahead of") : P_("time zone", "behind"),
		        rc->now, rc->zone ? rc->zone : "?", now_off, shift_dur);
		free(no);
		free(fix);
		return;
	}
	if (rc->ahead_s > 300) {
		ev_doc_add(
		        r, EV_DOC_WARN, group, "time zone", table_name,
		        _("ages and due times of those rows are wrong"), NULL,
		        _("rows of %s are dated %s in the future (%s; NOW() %s): an application's "
		          "clock, or bad data"),
		        table_name, dur, rc->newest, rc->now);
		return;
	}
	if (rc->ahead_s >= -300)
		ev_doc_add(r, EV_DOC_OK, group, "time zone", table_name, NULL, NULL,
		           _("time zone: the newest write in %s (%s) is %s from NOW() (%s) in the "
		             "session zone %s: consistent"),
		           table_name, rc->newest, dur, rc->now, rc->zone ? rc->zone : "?");
	else
		ev_doc_add(
		        r, EV_DOC_OK, group, "time zone", table_name, NULL, NULL,
		        _("time zone: the newest write in %s (%s) is %s old, not near a whole or "
		          "half "
		          "hour: no sign of a zone mismatch (a quiet table cannot prove more)"),
		        table_name, rc->newest, dur);
}

/* --- privileges ------------------------------------------------------------------------------ */

char *ev_doctor_grantee(const char *current_user)
{
	const char *at = current_user ? strrchr(current_user, '@') : NULL;
	struct ev_buf b;

	ev_buf_init(&b);
	ev_buf_addc(&b, '\'');
	size_t ulen = at ? (size_t)(at - current_user) : (current_user ? strlen(current_user) : 0);
	for (size_t i = 0; i < ulen; i++) {
		if (current_user[i] == '\'')
			ev_buf_addc(&b, '\'');
		ev_buf_addc(&b, current_user[i]);
	}
	ev_buf_adds(&b, "'@'");
	for (const char *h = at ? at + 1 : "%"; *h; h++) {
		if (*h == '\'')
			ev_buf_addc(&b, '\'');
		ev_buf_addc(&b, *h);
	}
	ev_buf_addc(&b, '\'');
	return ev_buf_steal(&b);
}

void ev_doctor_check_access(struct ev_doc_report *r, enum ev_table_kind t,
                            const struct ev_doc_access *a)
{
	const struct ev_doc_schema *s = ev_doctor_schema(t);
	char *who = ev_doctor_grantee(a->user);
	/* Without a database, a placeholder a person replaces. */
	char *db = ev_query_quote_ident(a->database ? a->database : "DB");
	char *qt = ev_query_quote_ident(a->table_name);

	if (a->select_denied != NULL) {
		char *fix = ev_xasprintf("GRANT SELECT ON %s.%s TO %s", db, qt, who);
		ev_doc_add(
		        r, EV_DOC_FAIL, "privileges", "select", a->table_name,
		        _("evtop cannot read the table: no dashboard, list, show or check for it"),
		        fix, _("watch: the account %s may not SELECT from %s: %s"), a->user,
		        a->table_name, a->select_denied);
		free(fix);
	} else {
		ev_doc_add(r, EV_DOC_OK, "privileges", "select", a->table_name, NULL, NULL,
		           _("watch: SELECT on %s"), a->table_name);
	}

	struct ev_buf cols;
	ev_buf_init(&cols);
	struct ev_buf qcols;
	ev_buf_init(&qcols);
	for (size_t i = 0; i < s->naction_columns; i++) {
		char *qc = ev_query_quote_ident(s->action_columns[i]);
		ev_buf_printf(&cols, "%s%s", i ? ", " : "", s->action_columns[i]);
		ev_buf_printf(&qcols, "%s%s", i ? ", " : "", qc);
		free(qc);
	}
	if (!a->update_checked) {
		ev_doc_add(r, EV_DOC_INFO, "privileges", "update", a->table_name, NULL, NULL,
		           _("compensate: not checked on %s: %s"), a->table_name,
		           a->update_error ? a->update_error
		                           : _("the probe could not be prepared"));
	} else if (a->update_denied != NULL) {
		char *fix =
		        ev_xasprintf("GRANT UPDATE (%s) ON %s.%s TO %s", qcols.data, db, qt, who);
		ev_doc_add(
		        r, EV_DOC_WARN, "privileges", "update", a->table_name,
		        _("evtop stays read-only on this table: retry, cancel and recover are "
		          "refused (fine for a watching account)"),
		        fix,
		        _("compensate: the account %s may not UPDATE the columns the actions write "
		          "on %s: %s"),
		        a->user, a->table_name, a->update_denied);
		free(fix);
	} else {
		ev_doc_add(r, EV_DOC_OK, "privileges", "update", a->table_name, NULL, NULL,
		           _("compensate: UPDATE on the action columns of %s (%s)"), a->table_name,
		           cols.data);
	}
	ev_buf_free(&cols);
	ev_buf_free(&qcols);
	free(qt);
	free(db);
	free(who);
}

void ev_doctor_check_access_log(struct ev_doc_report *r, const struct ev_doc_access *a)
{
	char *who = ev_doctor_grantee(a->user);
	char *db = ev_query_quote_ident(a->database ? a->database : "DB");
	char *grant = ev_xasprintf("GRANT INSERT ON %s.`evtop_access_log` TO %s", db, who);

	if (a->access_log < 0) {
		ev_doc_add(r, EV_DOC_INFO, "privileges", "access-log", "evtop_access_log", NULL,
		           NULL, _("access log: could not tell whether evtop_access_log exists"));
	} else if (a->access_log == 0) {
		char *fix = ev_xasprintf(_("create it with sql/%s/audit.sql (CREATE TABLE "
		                           "evtop_access_log ...), then %s"),
		                         a->flavour == EV_FLAVOUR_MARIADB ? "mariadb" : "mysql8",
		                         grant);
		ev_doc_add(
		        r, EV_DOC_INFO, "privileges", "access-log", "evtop_access_log",
		        _("data shown in the clear (--unmask, U) is recorded in the local audit "
		          "file "
		          "only"),
		        fix,
		        _("access log: no evtop_access_log table visible to the account %s (there "
		          "is none, or it has no privilege on it)"),
		        a->user);
		free(fix);
	} else if (a->access_log_error != NULL) {
		ev_doc_add(r, EV_DOC_INFO, "privileges", "access-log", "evtop_access_log", NULL,
		           NULL,
		           _("access log: could not check the INSERT into evtop_access_log: %s "
		             "(does it "
		             "match sql/*/audit.sql?)"),
		           a->access_log_error);
	} else if (a->access_log_denied != NULL) {
		ev_doc_add(
		        r, EV_DOC_INFO, "privileges", "access-log", "evtop_access_log",
		        _("data shown in the clear (--unmask, U) is recorded in the local audit "
		          "file "
		          "only"),
		        grant,
		        _("access log: evtop_access_log exists but the account %s may not INSERT "
		          "into it: %s"),
		        a->user, a->access_log_denied);
	} else {
		ev_doc_add(r, EV_DOC_OK, "privileges", "access-log", "evtop_access_log", NULL, NULL,
		           _("access log: INSERT into evtop_access_log"));
	}
	free(grant);
	free(db);
	free(who);
}

void ev_doctor_check_audit(struct ev_doc_report *r, const struct ev_doc_access *a)
{
	char *who = ev_doctor_grantee(a->user);
	char *db = ev_query_quote_ident(a->database ? a->database : "DB");

	if (a->audit < 0) {
		ev_doc_add(r, EV_DOC_INFO, "privileges", "audit", "evtop_audit", NULL, NULL,
		           _("audit: could not tell whether evtop_audit exists"));
	} else if (a->audit == 0) {
		char *fix = ev_xasprintf(
		        _("create it with sql/%s/audit.sql (CREATE TABLE evtop_audit "
		          "...), then GRANT SELECT, INSERT ON %s.`evtop_audit` TO %s"),
		        a->flavour == EV_FLAVOUR_MARIADB ? "mariadb" : "mysql8", db, who);
		ev_doc_add(r, EV_DOC_INFO, "privileges", "audit", "evtop_audit",
		           _("operator actions are recorded in the local audit file only"), fix,
		           _("audit: no evtop_audit table in this database"));
		free(fix);
	} else if (a->audit_error != NULL) {
		ev_doc_add(
		        r, EV_DOC_INFO, "privileges", "audit", "evtop_audit", NULL, NULL,
		        _("audit: could not check the INSERT into evtop_audit: %s (does it match "
		          "sql/*/audit.sql?)"),
		        a->audit_error);
	} else if (a->audit_denied != NULL) {
		char *fix = ev_xasprintf("GRANT SELECT, INSERT ON %s.`evtop_audit` TO %s", db, who);
		ev_doc_add(r, EV_DOC_WARN, "privileges", "audit", "evtop_audit",
		           _("every action is refused: no change without its audit row"), fix,
		           _("audit: evtop_audit exists but the account %s may not INSERT into it: "
		             "%s"),
		           a->user, a->audit_denied);
		free(fix);
	} else {
		ev_doc_add(r, EV_DOC_OK, "privileges", "audit", "evtop_audit", NULL, NULL,
		           _("audit: INSERT into evtop_audit"));
	}
	free(db);
	free(who);
}

void ev_doctor_check_replica(struct ev_doc_report *r, const struct ev_doc_server *s, int err_code,
                             const char *err_msg, size_t nrows, const char *lag)
{
	if (err_code == 1227) {
		char *who = ev_doctor_grantee(s->user);
		char *fix = ev_xasprintf("GRANT %s ON *.* TO %s",
		                         s->version.flavour == EV_FLAVOUR_MARIADB
		                                 ? "REPLICA MONITOR"
		                                 : "REPLICATION CLIENT",
		                         who);
		ev_doc_add(r, EV_DOC_WARN, "privileges", "replica lag", NULL,
		           _("on a replica, evtop cannot say how stale its figures are"), fix,
		           _("replica lag not readable: the account %s lacks REPLICA MONITOR "
		             "(MariaDB) / REPLICATION CLIENT (MySQL) or SUPER"),
		           s->user);
		free(fix);
		free(who);
	} else if (err_code != 0) {
		ev_doc_add(r, EV_DOC_INFO, "privileges", "replica lag", NULL, NULL, NULL,
		           /* TRANSLATORS: in place of the server's words when it gave none. */
		           _("replica lag: could not tell: %s"), err_msg ? err_msg : _("error"));
	} else if (nrows == 0) {
		ev_doc_add(r, EV_DOC_OK, "privileges", "replica lag", NULL, NULL, NULL,
		           _("replica lag readable (this server is not a replica)"));
	} else if (lag == NULL) {
		ev_doc_add(
		        r, EV_DOC_WARN, "privileges", "replica lag", NULL,
		        _("the figures read here stop at the moment replication stopped"),
		        _("point the source's read endpoint at a running replica or the primary"),
		        _("this server is a replica whose replication is not running "
		          "(Seconds_Behind_Master is NULL)"));
	} else {
		ev_doc_add(
		        r, EV_DOC_OK, "privileges", "replica lag", NULL, NULL, NULL,
		        _("replica lag readable: this server is a replica, %s s behind its primary "
		          "(the figures read here are that old; writes go to the primary)"),
		        lag);
	}
}
