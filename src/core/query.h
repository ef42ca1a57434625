/* evtop — every query evtop runs, as SQL text plus bound parameters, and the query table that
 * says which index each one needs, its sort key, whether a bounded sort is acceptable, and its
 * cap. Nothing here talks to a server: src/db prepares and runs what this builds. */
#ifndef EV_CORE_QUERY_H
#define EV_CORE_QUERY_H

#include "core/cursor.h"
#include "core/filter.h"
#include "core/model.h"
#include "core/rowset.h"
#include "core/util.h"

#include <stdbool.h>
#include <stdint.h>

enum ev_param_type {
	EV_P_INT,  /* signed 64-bit */
	EV_P_UINT, /* unsigned 64-bit (ids) */
	EV_P_TEXT, /* a string (also DATETIME values, 'YYYY-MM-DD hh:mm:ss') */
};

struct ev_param {
	enum ev_param_type type;
	long long i;
	unsigned long long u;
	char *s; /* malloc'd, for EV_P_TEXT */
};

/* A statement ready to prepare: SQL with '?' placeholders and its parameters in order. */
struct ev_query {
	const char *name; /* the query table's name, e.g. "list.failed_due" */
	char *sql;
	size_t nparams;
	size_t params_cap; /* allocated */
	struct ev_param *params;
	/* Result columns and their types, for the rowset (in select order). */
	size_t ncols;
	const char **col_names;
	enum ev_ctype *col_types;
	/* For keyset paging: the sort key column (NULL if the query is not paged) and order;
	 * sort_mid a second key column (NOT NULL, an integer) before id, where the index has
	 * one there (the failed lists: next_retry_time, retry_count, id), else NULL. */
	const char *sort_col;
	const char *sort_mid;
	bool sort_desc;
	bool sort_nullable;
	int limit; /* rows asked for; the builder asks one more to know if a next page exists */
	/* Run again and again with the same text (only the parameters change): the connection
	 * keeps it prepared. */
	bool keep;
	/* A payload search (a list with payload terms): its rows carry three more columns, the
	 * candidate's position, the candidates' count and whether it matched, that
	 * ev_list_search_fold folds away; search_cap candidates at most a page. */
	bool search;
	long long search_cap;
};

void ev_query_add_int(struct ev_query *q, long long v);
void ev_query_add_uint(struct ev_query *q, unsigned long long v);
void ev_query_add_text(struct ev_query *q, const char *s);
/* Free the query and NULL the pointer. */
void ev_query_free(struct ev_query **q);
/* The SQL with every '?' replaced by its parameter as a literal (strings quoted and escaped),
 * for --log-sql, --dry-run and the confirmation dialog. malloc'd. */
char *ev_query_render(const struct ev_query *q);

/* --- the lists --------------------------------------------------------------------- */

#define EV_LIST_KIND_LIST(X)                                                                       \
	X(FAILED, "failed", N_("failed (every bucket)"))                                           \
	X(FAILED_DUE, "failed-due", N_("failed, retries left, next_retry_time <= NOW()"))          \
	X(FAILED_WAITING, "failed-waiting", N_("failed, retries left, next_retry_time > NOW()"))   \
	X(FAILED_NORETRY, "failed-noretry", N_("failed, retries left, no next_retry_time"))        \
	X(FAILED_EXHAUSTED, "failed-exhausted", N_("failed, retry_count >= max_retry_count"))      \
	X(STUCK, "stuck", N_("processing past its lock (outbox) or the stuck threshold"))          \
	X(PROCESSING, "processing", N_("processing (stuck included)"))                             \
	X(PENDING, "pending", N_("pending, oldest first"))                                         \
	X(HIGH_RETRY, "high-retry", N_("failed with retry_count >= N, latest update first"))       \
	X(CANCELLED, "cancelled", N_("cancelled, created in the window, newest first"))            \
	X(RECENT, "recent", N_("every event created in the window, any status, newest first"))     \
	X(TRAIL, "trail", N_("every event of one business object, in creation order"))             \
	X(TRACE, "trace", N_("every event of one trace_id, in creation order"))

enum ev_list_kind {
#define X(id, name, help) EV_LIST_##id,
	EV_LIST_KIND_LIST(X)
#undef X
	        EV_LIST_COUNT,
};

const char *ev_list_name(enum ev_list_kind k);
const char *ev_list_help(enum ev_list_kind k);
/* List kind by name (also "oldest-pending" for pending), or -1. */
int ev_list_parse(const char *name);

/* What the server has: a table's indexes (by columns), read once per connection by src/db. */
struct ev_index_info {
	char *name;
	char *columns; /* "col1,col2,..." in index order */
	bool unique;
};

struct ev_table_info {
	bool exists;
	size_t nindexes;
	struct ev_index_info *indexes;
	size_t ncolumns;
	char **columns; /* the table's column names */
};

/* The name of the first index (in the server's order) whose leading columns are exactly
 * `columns` ("a,b"), or NULL. */
const char *ev_index_find(const struct ev_table_info *ti, const char *columns);
/* A deep copy of src into dst (for handing to another thread). */
void ev_table_info_copy(struct ev_table_info *dst, const struct ev_table_info *src);
/* Free what ti holds (not ti itself). */
void ev_table_info_clear(struct ev_table_info *ti);

struct ev_list_req {
	const struct ev_table_info *info; /* the server's indexes; NULL = use no index hint */
	enum ev_table_kind table;
	const char *table_name; /* the real table name (validated identifier) */
	enum ev_list_kind kind;
	const struct ev_filter *filter; /* may be NULL */
	struct ev_cursor after;         /* start after this row (unset = first page) */
	int limit;                      /* rows per page, 1 .. EV_PAGE_MAX */
	int stuck_threshold_s;          /* message table: stuck threshold */
	int high_retry_min;             /* high-retry: retry_count >= N */
	int window_s;                   /* cancelled, recent: created in the last window_s s */
	long long search_cap;           /* payload terms: candidates examined a page (0: 100000) */
	const char *object_type;        /* trail: biz_type / aggregate_type */
	const char *object_id;          /* trail: biz_id / aggregate_id */
	const char *trace_id;           /* trace */
	bool reverse;                   /* the list's order reversed (the index serves both) */
};

#define EV_PAGE_MAX 1000
/* Payload terms: candidates examined a page (search_cap, --search-cap). */
#define EV_SEARCH_CAP_DEFAULT 100000LL
#define EV_SEARCH_CAP_MIN     100LL
#define EV_SEARCH_CAP_MAX     10000000LL

/* Build the query for one page of a list. The query asks for limit + 1 rows so the caller
 * knows whether a next page exists. Returns NULL with err set for a bad request. */
struct ev_query *ev_query_list(const struct ev_list_req *req, struct ev_error *err);

/* A payload search's page as the server returned it (its matches, and its last candidate
 * whether it matched or not) folded in place into its matches alone, at most limit + 1 as any
 * list page. *examined: the candidates the list's bounded rows gave (at most the cap). When
 * the cap was reached before the page filled, *stop is set to the last candidate examined:
 * the list goes on from there (its next page). A query without payload terms: nothing done,
 * *examined 0, *stop unset. */
void ev_list_search_fold(const struct ev_query *q, struct ev_rowset **rs,
                         unsigned long long *examined, struct ev_cursor *stop);

/* One page of a list read, in the list's order: at most q->limit rows are kept in *rs (a
 * payload search folded first); more and next say where the next page starts. */
struct ev_list_page {
	bool more;
	struct ev_cursor next;
	bool search;                 /* payload terms: the figures below */
	unsigned long long examined; /* candidates examined */
	bool stopped;                /* the cap was reached before the page filled */
};
void ev_list_take_page(const struct ev_query *q, struct ev_rowset **rs, struct ev_list_page *pg);
/* What a payload search says of its page: "3 matches in 48,213 rows examined" or "stopped at
 * 100,000 rows examined: narrow the window, or the next page goes on". malloc'd; NULL for a list
 * without payload terms. */
char *ev_list_search_note(const struct ev_list_page *pg, size_t matches);

/* A breakdown of a list's rows by one column: failures by fail_reason, processing and stuck
 * events by locked_by (which publisher died holding what). Reads the list's rows through its
 * index (at most EV_DASH-like cap of 100000, then "at least"), groups them, and returns
 * (value, count, oldest create_time) most frequent first, at most 200 groups. `column` is
 * "fail_reason" or "locked_by" (outbox). req->after and req->limit are ignored. */
struct ev_query *ev_query_group(const struct ev_list_req *req, const char *column,
                                struct ev_error *err);

/* How many rows a list has (its kind and filter), for its title: the list's own query (its
 * index, guard conditions and filters) reads at most `cap` rows and counts them — a count equal
 * to the cap is a lower bound. One column, "count". Payload terms are refused (a search counts
 * its pages as it reads them). req->after, limit and reverse are ignored. */
#define EV_LIST_COUNT_CAP 100000
struct ev_query *ev_query_count(const struct ev_list_req *req, long long cap, struct ev_error *err);

/* The processing rows by owner, for the instances view (core/instances.h): on the outbox by
 * locked_by — locks, expired (lock_until <= NOW()), the earliest and the latest lock_until,
 * the latest last_publish_time — on the message table, which has no owner, by event_source —
 * rows, stuck (req->stuck_threshold_s), the earliest and the latest last_handle_time — times
 * as Unix seconds, and the server's NOW(), by name, at most 200. Reads the processing list's
 * rows through its index (outbox: idx_status_lock_until) with req->filter, at most
 * EV_INSTANCES_CAP of them, and groups what it read. req->kind, after and limit are ignored.
 * Columns: grp, locks, expired, oldest, newest, last_claim (NULL on the message table), now. */
#define EV_INSTANCES_CAP 100001
struct ev_query *ev_query_instances(const struct ev_list_req *req, struct ev_error *err);

/* A trail (type, id: biz_type/biz_id or aggregate_type/aggregate_id) or a trace (trace_id; id
 * NULL) in an archive table (evtop archive; its look-up indexes serve both), in creation
 * order, at most limit rows (+1: more): the lists' columns. */
struct ev_query *ev_query_archived_list(enum ev_table_kind t, const char *archive_name,
                                        enum ev_list_kind kind, const char *a1, const char *a2,
                                        int limit);
/* The rows of an event_no in an archive table (evtop archive, doc/archive.md: event_no is not
 * unique there), newest id first, at most 10; the same columns as ev_query_show_by_no. */
struct ev_query *ev_query_show_archived(enum ev_table_kind t, const char *archive_name,
                                        const char *event_no);
/* The detail of one event by event_no (deleted rows included: the caller shows a badge). */
struct ev_query *ev_query_show_by_no(enum ev_table_kind t, const char *table_name,
                                     const char *event_no);
/* The detail of one event by id. */
struct ev_query *ev_query_show_by_id(enum ev_table_kind t, const char *table_name,
                                     unsigned long long id);

/* --- the server and the session ---------------------------------------------------------- */

enum ev_flavour {
	EV_FLAVOUR_MYSQL,
	EV_FLAVOUR_MARIADB,
	EV_FLAVOUR_TIDB,
};

struct ev_server_version {
	enum ev_flavour flavour;
	int major, minor, patch;
};

/* Parse mysql_get_server_info()'s text ("10.11.19-MariaDB-0+deb12u1", "5.5.5-10.6.4-MariaDB",
 * "8.0.36", "8.0.11-TiDB-v7.5.0"). Returns -1 if no version number is found. */
int ev_server_version_parse(const char *info, struct ev_server_version *v);
const char *ev_flavour_name(enum ev_flavour f);

/* The servers evtop supports, the oldest release of each flavour: evtop doctor warns below
 * it, evtop --version names them. TiDB has none (not among the servers evtop is tested on). */
struct ev_server_floor {
	enum ev_flavour flavour;
	int major, minor;
};
extern const struct ev_server_floor ev_server_floors[];
extern const int ev_server_nfloors;
#define EV_SERVER_TESTED "MariaDB 10.11"

/* The floor of a flavour, NULL when it has none. */
const struct ev_server_floor *ev_server_floor_of(enum ev_flavour flavour);
/* 1 if v is at or past its flavour's floor, 0 if older, -1 if the flavour has none. */
int ev_server_supported(const struct ev_server_version *v);

/* The statements that set up a session on every (re)connect: time zone (when set; validated
 * by the config), the server-side statement time limit in the flavour's own variable (MySQL
 * max_execution_time in ms; MariaDB max_statement_time in s), and the lock wait timeouts.
 * Returns a NULL-terminated array of malloc'd SQL texts; free with ev_strv_free. */
char **ev_query_session_setup(enum ev_flavour f, int statement_timeout_ms, const char *time_zone);

/* A table's indexes as (name, "col,col", non_unique), and its column names, from
 * information_schema for the current database. One text parameter: the table name. */
struct ev_query *ev_query_table_indexes(const char *table_name);
struct ev_query *ev_query_table_columns(const char *table_name);
/* The account the server authenticated (CURRENT_USER()): for the audit and the status line. */
struct ev_query *ev_query_current_user(void);
/* The statement that cancels the statement running on connection `thread_id` (sent from a
 * second connection); malloc'd. */
char *ev_sql_kill_query(unsigned long thread_id);

/* The server's clock: NOW() in the session zone, and the same instant as a Unix time. */
struct ev_query *ev_query_server_clock(void);

/* --- the query table ---------------------------------------------------------------- */

struct ev_query_def {
	const char *name; /* "list.failed_due", "show.by_no", ... */
	enum ev_table_kind table;
	/* The index it needs, by its leading columns, whatever its name: candidates in order of
	 * preference (an index evtop doctor recommends first, then the model document's). The
	 * first the server has is forced; with none, the query is not run ("n/a — needs an
	 * index on (...)") rather than scanning the table. */
	const char *index[3];
	const char *sort;  /* the ORDER BY, e.g. "lock_until,id" */
	bool sort_allowed; /* a bounded filesort is acceptable here: within one status range,
	                      one business object or one trace_id */
	int cap;           /* most rows one run may return */
};

/* How a list query q of table t orders its rows, for a person: "next_retry_time, retry_count,
 * id ↑, idx_status_retry_time's own order (o reverses it)", or for a bounded sort "update_time
 * ↓, sorted by the server among the rows idx_status_retry_time finds". info: the server's
 * indexes (NULL: the index is not named). */
void ev_query_order_text(const struct ev_query *q, enum ev_table_kind t,
                         const struct ev_table_info *info, char *buf, size_t size);

/* The query table, ended by an entry with name NULL. */
extern const struct ev_query_def ev_query_defs[];
/* The entry for a query name and table, or NULL. */
const struct ev_query_def *ev_query_def_find(const char *name, enum ev_table_kind t);

/* name as a quoted identifier for SQL a person pastes or evtop runs: in backticks, each
 * backtick in it doubled (`ev``x`). malloc'd. */
char *ev_query_quote_ident(const char *name);

#endif
