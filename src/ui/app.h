/* evtop — the console's shared state and the view interface (internal to src/ui). The UI
 * thread owns all of it; workers only ever see jobs. */
#ifndef EV_UI_APP_H
#define EV_UI_APP_H

#include "core/dashboard.h"
#include "core/query.h"
#include "core/auditlog.h"
#include "core/rowmask.h"
#include "db/worker.h"
#include "ui/console.h"
#include "ui/keys.h"

#include <stdbool.h>
#include <stdio.h>

struct app;
struct view;

/* A view that opens one above it in the stack's order (console, dashboard, group, list,
 * detail, trace) asks for it by what it shows, and the console builds it: the view files
 * call no constructor above them, so they form a DAG under app.c (tests/layering.sh). */
enum view_open {
	OPEN_GROUP,  /* the breakdown of a list (kind, filter, filter_text) by column */
	OPEN_TRAIL,  /* every event of one business object (type, id) */
	OPEN_DETAIL, /* one event (event_no; row_id, 0 when not known) */
	OPEN_CHART,  /* throughput over time of the table (total) or of one group */
};
struct view_request {
	enum view_open what;
	enum ev_table_kind table;
	enum ev_list_kind kind;
	const struct ev_filter *filter;
	const char *filter_text, *column;
	const char *type, *id;
	const char *event_no;
	unsigned long long row_id;
	bool total; /* OPEN_CHART: the table's, else group's (NULL: SQL NULL) */
	const char *group;
};

struct view_ops {
	const char *name;
	enum ev_ui_context ctx;
	/* Draw into rows [top, top + height) of the screen. */
	void (*draw)(struct app *a, struct view *v, int top, int height, int cols);
	/* Handle an action; return true if handled. */
	bool (*action)(struct app *a, struct view *v, enum ev_ui_action act);
	/* A job of this view came back (current generation only). */
	void (*result)(struct app *a, struct view *v, struct ev_job *job);
	/* A bulk action on every row of the view's list (":all retry"), or NULL. */
	void (*bulk_all)(struct app *a, struct view *v, enum ev_ui_action act);
	/* Rows marked in the view (for the status line's count), or NULL. */
	int (*nmarked)(struct view *v);
	/* A bulk action applied these rows of source site (an index of a->sources): their marks
	 * go. NULL: the view marks nothing. */
	void (*unmark)(struct app *a, struct view *v, int site, const unsigned long long *ids,
	               size_t n);
	/* Whether a write action applies to the row under the cursor (hint bar); NULL: never. */
	bool (*allows)(struct app *a, struct view *v, enum ev_ui_action act);
	/* Load the view (when pushed) and, with on_timer, again when the refresh timer fires. */
	void (*load)(struct app *a, struct view *v);
	bool on_timer;
	void (*free)(struct view *v);
};

/* A view's source: SITE_INHERIT takes the one of the view it is pushed over; a list merged
 * from every source is SITE_ALL; source i is i + 1. */
enum { SITE_ALL = -1, SITE_INHERIT = 0 };

struct view {
	const struct view_ops *ops;
	int site;          /* the source it reads and writes (above) */
	int tag;           /* unique per view, for the workers */
	unsigned long gen; /* bumped when the view asks anew: older results are dropped */
	int loading;       /* jobs in flight */
	long long load_started;
	double last_load_ms; /* server time charged to its last job: the refresh budget counts it */
};

enum conn_state {
	CONN_CONNECTING,
	CONN_OK,
	CONN_LOST,
};

#define MAX_VIEWS 8

/* What the console holds per source: a connection for its lists and details on its read
 * endpoint, one for guarded updates on its primary, and what is known of its tables. One
 * source's are started when it is watched; with every source at once, each source's when a
 * view first needs them. */
struct site {
	struct ev_worker *wlist;
	struct ev_worker *wwrite;
	struct ev_table_info info[EV_TABLE_COUNT];
	bool have_info;
	char not_writable[EV_TABLE_COUNT][1024]; /* why a table is read-only for this account */
	long long lag_s; /* with every source at once, its replica's lag (-1: unknown) */
};

struct app {
	const struct ev_console_args *args;
	struct ev_config *cfg;
	struct ev_source *src;      /* the source watched (its primary's settings) */
	struct ev_source **sources; /* every source the console may switch to */
	int nsources;
	int cur_source;             /* src's index in sources */
	struct ev_source *read_src; /* src's read endpoint (owned) while reading there, or NULL */
	bool read_primary;          /* read from the primary even where a replica is set */
	long long lag_s;            /* the read endpoint's lag: seconds, or -1 while unknown */
	char lag_note[320];         /* why it is unknown */
	struct ev_worker *wdash;    /* dashboards: a slow one never blocks lists (their own) */
	struct site *sites;         /* per source, as sources */
	/* Every source at once (the dashboard by source): a connection per source on its read
	 * endpoint, used by the dashboard's job only. */
	bool all_mode;
	struct ev_conn **all_conns;
	struct ev_source **all_endpoints; /* owned read-endpoint settings, or NULL */
	int switch_to; /* a switch asked for: 1 every source, i + 2 source i; 0 none */
	bool quit;
	bool dirty;
	/* Time: real monotonic ms, or the virtual clock of a scripted run. */
	bool scripted;
	long long vclock;
	/* The server. */
	char server[160];
	char server_now[32]; /* the server's NOW() at the last refresh */
	long long server_offset_s;
	bool have_offset;
	enum conn_state state;
	char last_error[512];
	char stale_since[32]; /* server time of the last good refresh, when stale */
	/* Tables. */
	char table_note[EV_TABLE_COUNT][320];
	/* Refresh and budget. */
	int refresh_ms;
	int effective_ms;
	bool paused;
	long long next_refresh;
	double last_refresh_ms;  /* wall time of the last dashboard refresh (shown) */
	double last_cost_ms;     /* server time charged to it (core/refresh): the budget's */
	double budget_share;     /* server time / interval of the last refresh */
	bool have_ok;            /* a refresh has succeeded on this source */
	long long last_ok_at;    /* app_now() of the last good refresh: how old the data is */
	long long server_now_at; /* app_now() when server_now was read */
	char drawn_status[1024]; /* the status line as last drawn (its clock moves) */
	/* Views. */
	struct view *views[MAX_VIEWS];
	int nviews;
	int next_tag;
	/* The message line. */
	char msg[1024]; /* room for a translated message (3 bytes a character) */
	int msg_style;
	/* A prompt on the message line. */
	bool prompting;
	char prompt_label[640]; /* room for a full path ("… exists: replace it?") or a whole
	                         * event_no (64) and its type, translated */
	char prompt_text[512];
	size_t prompt_len;
	void (*on_prompt)(struct app *a, const char *text);
	int marked;
	/* Writes. */
	struct ev_audit_ident ident; /* the OS user, SUDO_USER, SSH_CONNECTION */
	char *audit_path;            /* the local audit file */
	bool operator_asked;         /* asked once per session */
	bool applying;
	char session_start[32]; /* the audit file's time of this session's start */
	/* A time zone mismatch suspected on a table at the last refresh (core/zone.h): its
	 * clock-dependent figures are marked and writes refused, unless the operator said the
	 * zone is right (--clock-ok, :clock-ok: audited), which lets writes through. */
	bool clock_suspect[EV_TABLE_COUNT];
	char clock_summary[EV_TABLE_COUNT][512]; /* the dashboard's words for it, or "" */
	bool clock_ok;
	bool clock_ok_audited; /* --clock-ok's audit line is written (once, when first needed) */
	unsigned long long highlight_id; /* the row an action just touched */
	/* The rows evtop wrote on the watched source since the dashboard's last refresh started,
	 * per table: its next refresh reads them by key (core/mirror.h, ev_mirror_touch). */
	unsigned long long *wrote[EV_TABLE_COUNT];
	size_t nwrote[EV_TABLE_COUNT], wrote_cap[EV_TABLE_COUNT];
	/* Builds a view another view asks for (app_open); set by the console. */
	struct view *(*open)(struct app *a, const struct view_request *r);
};

long long app_now(const struct app *a);
void app_message(struct app *a, int style, const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));
/* How many bytes of s, at most max, end where a character ends (core's ev_utf8_prefix, as an
 * int): the precision for "%.*s" where a string is cut by bytes. */
int app_cut(const char *s, int max);
/* Append s to b, cut at max_bytes (never inside a character) and padded with spaces to at
 * least cols cells: "%-COLS.MAXs" by display cells (s is sanitised first). */
void app_buf_pad(struct ev_buf *b, const char *s, int cols, int max_bytes);
void app_push(struct app *a, struct view *v);
void app_pop(struct app *a);
struct view *app_top(struct app *a);
/* Submit a job for a view on a worker: bumps nothing; the caller bumps v->gen when the old
 * results must be dropped. */
void app_submit(struct app *a, struct ev_worker *w, struct view *v, struct ev_job *job);
/* A job whose finished result goes to done(a, job) — always, superseded or cancelled too —
 * instead of to the view `tag` names: a write's outcome, a count, an export, a fact of the
 * status line. `tag` is what supersedes it (-1: nothing). */
struct ev_job *app_job(int tag, ev_job_fn fn, void *arg, void (*free_arg)(void *),
                       void (*done)(void *app, struct ev_job *job));
/* The index of the source a view reads and writes (SITE_ALL: the watched one), and its
 * connections, started if they are not yet. */
int app_site_index(const struct app *a, const struct view *v);
struct site *app_site(struct app *a, const struct view *v);
struct site *app_site_at(struct app *a, int index);
/* The name of source i ("default" for an unnamed one), and the index of a name or -1. */
const char *app_source_name(const struct app *a, int index);
int app_source_by_name(const struct app *a, const char *name);
/* The view r asks for (not pushed), or NULL when the console cannot build it. */
struct view *app_open(struct app *a, const struct view_request *r);
/* A job's result that is a rowset, freed (a job's free_result). */
void app_free_rowset(void *rowset);
/* Drop and cancel a view's jobs in flight (Esc, leaving the view). */
void app_cancel(struct app *a, struct view *v);
/* Cancel the jobs of every worker, the writes' too when asked. */
void app_cancel_all(struct app *a, bool writes);
/* The view on the stack with this tag, or NULL. */
struct view *app_view_by_tag(struct app *a, int tag);
/* The watched source's workers (with every source at once, the dashboard's), and stopping
 * every source's, forgetting what was learnt of their tables. */
int app_start_workers(struct app *a, struct ev_error *err);
void app_stop_workers(struct app *a);
/* The local audit file's line for an event shown in the clear in the console (U in the detail
 * pane): before it is shown. -1 with err when it cannot be written (then it is not shown). */
int app_unmask_audit(struct app *a, int site, const char *table_name, const char *event_no,
                     const char *reason, struct ev_error *err);
void app_prompt(struct app *a, const char *label, const char *initial,
                void (*done)(struct app *a, const char *text));
/* Source site's name of table t. */
const char *app_table_name(const struct app *a, int site, enum ev_table_kind t);

/* Drawing: text from the database goes through core/text before it reaches curses. */
void draw_text(int y, int x, int maxw, int style, const char *s);      /* sanitised, fitted */
void draw_text_pad(int y, int x, int width, int style, const char *s); /* padded to width */
void draw_text_right(int y, int x, int width, int style, const char *s);
void draw_fill(int y, int x, int width, int style);

/* The views. */
struct view *view_dash_new(struct app *a);
/* Entry i of the dashboard's legend (its columns' headers and what they count, then the
 * trend), for the help screen; -1 past the last. */
int ui_dash_legend(int i, const char **head, const char **help);
/* The masking rules for what source site reads (doc/privacy.md), or NULL when the source has
 * `mask = off`. The pointer stays valid for the whole session (jobs keep it). */
const struct ev_mask *ui_mask_for(const struct app *a, int site);
/* The table the dashboard (view v) has in focus. */
enum ev_table_kind ui_dash_focus(const struct view *v);
struct view *view_list_new(struct app *a, enum ev_table_kind t, enum ev_list_kind kind,
                           const char *filter_key, const char *filter_value);
struct view *view_help_new(struct app *a);
/* A list merged from every source, a cursor per source (site SITE_ALL). */
struct view *view_list_new_merged(struct app *a, enum ev_table_kind t, enum ev_list_kind kind,
                                  const struct ev_filter *filter, const char *filter_text);
/* An export: `write` gets the new file (created 0600, never through a link) open for writing,
 * its full path and ctx, and owns both the stream (it closes it) and ctx from then on. `name`
 * without a leading / goes into the export folder (export_dir, else the state directory's
 * exports/). An existing regular file is replaced only after a y to "replace it? (y/N)";
 * anything else there is refused. On refusal or error the message line says why and ctx is
 * freed with free_ctx (NULL: nothing to free); nothing is written. */
typedef void (*ui_export_fn)(struct app *a, FILE *f, const char *path, void *ctx);
void ui_export(struct app *a, const char *name, ui_export_fn write, void *ctx,
               void (*free_ctx)(void *));
/* The breakdown of a list by fail_reason or locked_by; Enter opens the list of one group. */
struct view *view_group_new(struct app *a, enum ev_table_kind t, enum ev_list_kind kind,
                            const struct ev_filter *filter, const char *filter_text,
                            const char *column);
/* The outbox's publisher instances by locked_by (the message table's processing rows by
 * event_source): Enter opens one's locks, R recovers its stuck ones (ui/view_instances.c). */
struct view *view_instances_new(struct app *a, enum ev_table_kind t);
/* A list with a whole filter (from the group view). */
struct view *view_list_new_filtered(struct app *a, enum ev_table_kind t, enum ev_list_kind kind,
                                    const struct ev_filter *filter, const char *filter_text);
/* The detail of an event found by event_no in both tables (the outbox's first). */
struct view *view_detail_new_by_no(struct app *a, const char *event_no);
/* Every event of one business object (Enter opens one). */
struct view *view_list_new_trail(struct app *a, enum ev_table_kind t, const char *type,
                                 const char *id);
/* Every event of one trace_id in both tables, merged in creation order. */
struct view *view_trace_new(struct app *a, const char *trace_id);
/* Copy text[0..n) (what: "the event_no", "the row as JSON", "the statement") to the
 * operator's own clipboard with OSC 52 — over SSH too; in tmux with set-clipboard on — and
 * say so; refused, said, when the config's clipboard is off or the text is larger than
 * clipboard_max. */
void app_copy(struct app *a, const char *what, const char *text, size_t n);
/* Up, Down, Top, Bottom on a view's cursor over n rows (stopping at the first and the last
 * row); false for any other action. */
bool app_move_sel(enum ev_ui_action act, int *sel, int n);
/* The guarded actions (ui/actions.c). */
void ui_action_start(struct app *a, struct view *origin, int site, enum ev_ui_action act,
                     enum ev_table_kind t, const struct ev_rowset *rs, size_t row);
/* Whether an action applies to a row of this status (for the hint bar). */
bool ui_action_allowed(enum ev_ui_action act, enum ev_table_kind t, int status);
/* The rows of a bulk action (ui/bulk.c): ids (the marked rows), or none: every row of the list
 * (its kind and filter). With ids, all_what offers the list's rows instead (a in the
 * confirmation; NULL: not offered), and match is the list's count as its title says it ("1234",
 * "≥100000"; NULL: not known). */
struct ui_bulk_rows {
	const unsigned long long *ids;
	size_t n_ids;
	enum ev_list_kind kind;
	const struct ev_filter *filter;
	const char *what; /* "3 marked rows", "list failed, event_type=X" */
	const char *all_what;
	const char *match;
};
void ui_bulk_start(struct app *a, struct view *origin, int site, enum ev_ui_action act,
                   enum ev_table_kind t, const struct ui_bulk_rows *rows);
/* The progress line while a bulk action runs (false when none runs). */
bool ui_bulk_progress_line(char *buf, size_t size, int width);
void ui_bulk_stop(struct app *a);
/* Pause the bulk action running after its current batch, or resume it (X). */
void ui_bulk_hold(struct app *a);
/* The console ends: a bulk action running stops (a paused one at once). */
void ui_bulk_quit(void);
/* A write on table t of source site while the dashboard suspects a time zone mismatch and
 * the operator has not said the zone is right: said on the message line, true (refused).
 * The write endpoint checks again when it applies (ev_action_check_access_clock). */
bool app_clock_refuses(struct app *a, int site, enum ev_table_kind t);
/* evtop wrote rows ids[0..n) of table t on source site (applied, or skipped because they had
 * changed): the dashboard's next refresh reads them by key, so its figures show where they
 * went even when it does not read their range (core/mirror.h, ev_mirror_touch). */
void app_wrote(struct app *a, int site, enum ev_table_kind t, const unsigned long long *ids,
               size_t n);
/* Append the clock-ok audit line (the operator's reason, the suspect tables and why the
 * dashboard suspects them, NULL or "" if it said nothing) to the local audit file. Returns -1
 * with err set when it cannot be written. */
int app_clock_ok_audit(struct app *a, const char *reason, const char *why, struct ev_error *err);
/* The dashboard's reasons for a suspected time zone mismatch, appended to out ("; "
 * between); nothing when v is not the dashboard or nothing is suspected. */
void ui_dash_clock_why(struct view *v, struct ev_buf *out);
/* The dashboard's throughput over the session (core/chart.h) of table t: the table's
 * (total) or a group's of dimension *dim; NULL when v is not the dashboard or nothing was
 * sampled. */
struct ev_chart_series;
const struct ev_chart_series *ui_dash_chart(const struct view *v, enum ev_table_kind t, bool total,
                                            const char *group, const char **dim);
/* The chart view: created, finished and failed per minute and the backlog of table t over
 * the session, the table's or (total false) one group's of the dashboard's dimension. */
struct view *view_chart_new(struct app *a, enum ev_table_kind t, bool total, const char *group);
/* This session's actions, from the local audit file. */
struct view *view_actions_new(struct app *a);
/* Who did what: the watched source's evtop_audit, every operator's writes, newest first,
 * filtered (filter may be NULL; filter_text as the operator wrote it). Enter opens an event. */
struct ev_audit_filter;
struct view *view_audit_new(struct app *a, const struct ev_audit_filter *filter,
                            const char *filter_text);
struct view *view_detail_new(struct app *a, enum ev_table_kind t, const char *event_no,
                             unsigned long long id);

#endif
