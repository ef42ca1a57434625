/* evtop — bulk actions from the keyboard: on the marked rows, or on every row of the list
 * (its kind and filter; a switches a run on marked rows to all that match, and back). Counted first
 * into a snapshot of (id, version) on the write connection (db/bulk), shown with its counts,
 * protected rows and statement, default No; the confirmation offers the CLI's choices (a retry
 * scheduled and spread at a rate — the default — or now, paced at a rate; the delay, the batch
 * size, the pause), each a key that re-plans the run shown; then applied in batches with a progress
 * bar, x stopping it after the current batch and X pausing it there (and resuming it), the console
 * answering keys meanwhile; at the end the tally and the rows that did not apply, as they are now,
 * and the marks of the rows it applied cleared. */
#include <config.h>

#include "core/bulk.h"
#include "core/guard.h"
#include "core/i18n.h"
#include "core/style.h"
#include "db/bulk.h"
#include "ui/app.h"
#include "ui/textview.h"
#include "ui/write.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What the worker reports while it applies, read by the UI thread. */
static struct {
	pthread_mutex_t lock;
	struct ev_bulk_progress p;
	atomic_bool stop;
	atomic_bool hold; /* X: pause after the current batch (until X again) */
	bool running;
} shared = {.lock = PTHREAD_MUTEX_INITIALIZER};

/* The run being prepared (UI thread). */
static struct {
	char target[600];
	unsigned long long *ids; /* the rows the run counts (none: the list's) */
	size_t n_ids;
	/* A run on marked rows that may take the list's rows instead (a): the marks and their
	 * text kept while it does, the list's text and count. */
	bool can_all, all;
	unsigned long long *marked;
	size_t n_marked;
	char marked_what[600], all_what[600], match[32];
	enum ev_list_kind kind;
	struct ev_filter filter;
	struct ev_bulk_snapshot *snap;
	/* The run's settings, as the CLI's options: a retry's mode is its action (scheduled or
	 * now); rate 0 = not given (retry: EV_BULK_RATE_DEFAULT; cancel, recover: no pace). */
	double rate;
	int delay_s, batch_size, pause_ms;
	bool asked_now; /* the key was "retry now": the confirmation says the default differs */
} B;

static void bulk_clear(void)
{
	free(B.ids);
	free(B.marked);
	ev_filter_free(&B.filter);
	ev_bulk_snapshot_free(&B.snap);
	memset(&B, 0, sizeof(B));
}

/* The settings of the run being prepared, as the CLI makes them (cmd_bulk.c settings_for): a
 * scheduled retry spreads next_retry_time at the rate; a retry now writes at most the rate per
 * second; cancel and recover are paced only when a rate was given. */
static void ui_bulk_settings(struct ev_bulk_settings *set)
{
	struct ui_write *w = ui_write_current();
	ev_bulk_settings_default(set);
	set->batch_size = B.batch_size;
	set->pause_ms = B.pause_ms;
	set->rate = 0;
	set->pace = 0;
	switch (w->action) {
	case EV_ACTION_RETRY_SCHEDULE:
		set->rate = B.rate > 0 ? B.rate : EV_BULK_RATE_DEFAULT;
		set->delay_s = B.delay_s;
		break;
	case EV_ACTION_RETRY_NOW:
		set->pace = B.rate > 0 ? B.rate : EV_BULK_RATE_DEFAULT;
		break;
	default:
		set->pace = B.rate > 0 ? B.rate : 0;
		break;
	}
}

static bool is_retry(enum ev_action act)
{
	return act == EV_ACTION_RETRY_SCHEDULE || act == EV_ACTION_RETRY_NOW;
}

static void spec_fill(struct app *a, struct ev_bulk_spec *spec)
{
	struct ui_write *w = ui_write_current();
	memset(spec, 0, sizeof(*spec));
	spec->table = w->table;
	spec->table_name = app_table_name(a, w->site, w->table);
	spec->action = w->action;
	spec->reason = w->reason;
	spec->stuck_threshold_s = a->cfg->stuck_threshold_s;
	spec->recover_message = a->cfg->recover_message;
	spec->protected_types = a->cfg->protected_types;
	ui_bulk_settings(&spec->set);
	spec->target = B.target;
}

/* --- counting, on the list worker ---------------------------------------------------------- */

struct count_arg {
	struct ev_bulk_spec spec;
	char *table_name, *reason, *target;
	unsigned long long *ids;
	size_t n_ids;
	enum ev_list_kind kind;
	struct ev_filter filter;
	struct ev_table_info info;
	int high_retry_min;
	int window_s;
	long long search_cap;
};

struct count_result {
	struct ev_bulk_snapshot *snap;
};

static void free_count_arg(void *p)
{
	struct count_arg *c = p;
	free(c->table_name);
	free(c->reason);
	free(c->target);
	free(c->ids);
	ev_filter_free(&c->filter);
	ev_table_info_clear(&c->info);
	free(c);
}

static void free_count_result(void *p)
{
	struct count_result *r = p;
	ev_bulk_snapshot_free(&r->snap);
	free(r);
}

static int count_job(struct ev_conn *c, struct ev_job *job, struct ev_error *err)
{
	struct count_arg *x = job->arg;
	struct count_result *r = ev_xcalloc(1, sizeof(*r));
	job->result = r;
	job->free_result = free_count_result;
	x->spec.table_name = x->table_name;
	x->spec.reason = x->reason;
	x->spec.target = x->target;
	struct ev_bulk_target tg = {
	        .ids = x->ids,
	        .n_ids = x->n_ids,
	        .list = x->kind,
	        .filter = &x->filter,
	        .info = &x->info,
	        .high_retry_min = x->high_retry_min,
	        .window_s = x->window_s,
	        .search_cap = x->search_cap,
	};
	return ev_bulk_count(c, &x->spec, &tg, false, &r->snap, err);
}

static int count_tag = -2; /* jobs of no view: never superseded by a view's refresh */

static void count_done(void *ctx, struct ev_job *job);
static void apply_done(void *ctx, struct ev_job *job);

/* The reason and the operator are known: count the rows, on the write connection. */
static void start_count(struct app *a)
{
	struct ui_write *w = ui_write_current();
	struct count_arg *x = ev_xcalloc(1, sizeof(*x));
	spec_fill(a, &x->spec);
	x->table_name = ev_xstrdup(app_table_name(a, w->site, w->table));
	x->reason = ev_xstrdup(w->reason);
	x->target = ev_xstrdup(B.target);
	if (B.n_ids > 0) {
		x->ids = ev_xcalloc(B.n_ids, sizeof(*x->ids));
		memcpy(x->ids, B.ids, B.n_ids * sizeof(*x->ids));
		x->n_ids = B.n_ids;
	}
	x->kind = B.kind;
	ev_filter_copy(&x->filter, &B.filter);
	ev_table_info_copy(&x->info, &app_site_at(a, w->site)->info[w->table]);
	x->high_retry_min = a->cfg->high_retry_min;
	x->window_s = a->cfg->window_s;
	x->search_cap = a->cfg->search_cap;
	app_message(a, EV_STYLE_WARNING, "%s", _("counting the rows… (reads only)"));
	ui_write_submit(a, count_tag, count_job, x, free_count_arg, count_done);
}

static bool bulk_yes(struct app *a);
static bool bulk_key(struct app *a, enum ev_ui_action act);

/* The first row's statement, as the confirmation shows it (each row binds its own). */
static char *bulk_statement(void)
{
	return B.snap && B.snap->example ? ev_xstrdup(B.snap->example) : NULL;
}

static const struct ui_write_ops bulk_ops = {
        .go = start_count,
        .yes = bulk_yes,
        .key = bulk_key,
        .clear = bulk_clear,
        .statement = bulk_statement,
};

static unsigned long long *ids_copy(const unsigned long long *ids, size_t n)
{
	unsigned long long *c = ev_xcalloc(n + 1, sizeof(*c));
	memcpy(c, ids, n * sizeof(*ids));
	return c;
}

void ui_bulk_start(struct app *a, struct view *origin, int site, enum ev_ui_action act,
                   enum ev_table_kind t, const struct ui_bulk_rows *rows)
{
	if (!ui_write_open(a, &bulk_ops, origin, site, act, t))
		return;
	struct ui_write *w = ui_write_current();
	/* Many rows are retried through the applications' own retry path, spread, unless the
	 * operator chooses "now" in the confirmation (PRODUCT.md section 2). */
	B.asked_now = w->action == EV_ACTION_RETRY_NOW;
	if (B.asked_now)
		w->action = EV_ACTION_RETRY_SCHEDULE;
	B.batch_size = EV_BULK_BATCH_DEFAULT;
	B.pause_ms = EV_BULK_PAUSE_MS_DEFAULT;
	B.kind = rows->kind;
	if (rows->filter != NULL)
		ev_filter_copy(&B.filter, rows->filter);
	if (rows->n_ids > 0) {
		B.ids = ids_copy(rows->ids, rows->n_ids);
		B.n_ids = rows->n_ids;
		B.can_all = rows->all_what != NULL;
		snprintf(B.marked_what, sizeof(B.marked_what), "%s", rows->what);
		snprintf(B.all_what, sizeof(B.all_what), "%s",
		         rows->all_what ? rows->all_what : "");
		snprintf(B.match, sizeof(B.match), "%s", rows->match ? rows->match : "");
	} else if (!ev_bulk_list_fits(w->action, rows->kind)) {
		/* TRANSLATORS: an action, then a list's name as the CLI writes it ("failed"). */
		app_message(a, EV_STYLE_WARNING, _("%s does not apply to the rows of a %s list"),
		            ui_write_action_label(w->action), ev_list_name(rows->kind));
		ui_write_end();
		return;
	}
	snprintf(B.target, sizeof(B.target), "%s", rows->what);
	ui_write_ask(a);
}

/* --- the confirmation ------------------------------------------------------------------------ */

static struct view *confirm_new(struct app *a);

static void protected_done(struct app *a, const char *text)
{
	struct ev_error err = {0};
	char want[32];
	snprintf(want, sizeof(want), "%zu", B.snap->n_protected);
	bool include = strcmp(text, want) == 0;
	if (text[0] != '\0' && !include) {
		app_message(a, EV_STYLE_WARNING,
		            _("the count typed does not match: protected rows skipped"));
	}
	if (ev_bulk_plan(B.snap, include, &err) < 0) {
		/* TRANSLATORS: the plan refused the run; %s says why. */
		app_message(a, EV_STYLE_ERROR, _("refused: %s"), err.msg);
		ui_write_end();
		return;
	}
	app_push(a, confirm_new(a));
}

static int apply_tag = -3;

struct apply_arg {
	struct ev_bulk_snapshot *snap;
	struct ui_write_who who;
};

static void free_apply_arg(void *p)
{
	struct apply_arg *x = p;
	ev_bulk_snapshot_free(&x->snap);
	ui_write_who_clear(&x->who);
	free(x);
}

static void on_progress(const struct ev_bulk_progress *p, void *arg)
{
	(void)arg;
	pthread_mutex_lock(&shared.lock);
	shared.p = *p;
	pthread_mutex_unlock(&shared.lock);
}

/* The snapshot comes back as the job's result: its items hold each row's outcome. */
static int apply_job(struct ev_conn *c, struct ev_job *job, struct ev_error *err)
{
	struct apply_arg *x = job->arg;
	struct ev_access access;
	struct ev_audit_log log = {.fd = -1};
	struct ev_audit_who who;
	int rc = ui_write_prepare(c, &x->who, x->snap->table, x->snap->table_name, &access, &log,
	                          &who, err);
	if (rc == UI_WRITE_NOT_WRITABLE)
		return ev_error_set(err, EV_ERR_GENERIC,
		                    access.clock_suspect ? _("refused: %s") : _("read-only: %s"),
		                    access.why);
	if (rc != 0)
		return -1;
	struct ev_bulk_ctx ctx = {
	        .conn = c,
	        .access = &access,
	        .log = &log,
	        .who = &who,
	        .progress = on_progress,
	        .stop = &shared.stop,
	        .hold = &shared.hold,
	};
	rc = ev_bulk_apply(&ctx, x->snap, err);
	ev_audit_log_close(&log);
	return rc;
}

/* y: applied in batches, the progress on the status line. Nothing to act on: No. */
static bool bulk_yes(struct app *a)
{
	if (B.snap == NULL || B.snap->n_pending == 0)
		return false;
	struct apply_arg *x = ev_xcalloc(1, sizeof(*x));
	x->snap = B.snap;
	B.snap = NULL;
	ui_write_who_take(a, ui_write_current()->site, &x->who);
	pthread_mutex_lock(&shared.lock);
	memset(&shared.p, 0, sizeof(shared.p));
	shared.p.total = x->snap->n_pending;
	shared.running = true;
	pthread_mutex_unlock(&shared.lock);
	atomic_store(&shared.stop, false);
	atomic_store(&shared.hold, false);
	app_pop(a); /* the confirmation */
	ui_write_submit(a, apply_tag, apply_job, x, free_apply_arg, apply_done);
	return true;
}

/* --- the run's settings, changed from the confirmation ---------------------------------- */

struct settings_copy {
	enum ev_action action;
	double rate;
	int delay_s, batch_size, pause_ms;
};

static void settings_save(struct settings_copy *c)
{
	struct ui_write *w = ui_write_current();
	*c = (struct settings_copy){w->action, B.rate, B.delay_s, B.batch_size, B.pause_ms};
}

static void settings_restore(const struct settings_copy *c)
{
	struct ui_write *w = ui_write_current();
	w->action = c->action;
	B.rate = c->rate;
	B.delay_s = c->delay_s;
	B.batch_size = c->batch_size;
	B.pause_ms = c->pause_ms;
}

/* Plan the snapshot anew with B's settings and show it; when the plan is refused (a spread
 * past the 30-day limit of a retry delay) the settings before are put back, unchanged. */
static void replan(struct app *a, const struct settings_copy *before, const char *what)
{
	struct ui_write *w = ui_write_current();
	struct ev_error err = {0};
	B.snap->action = w->action;
	ui_bulk_settings(&B.snap->set);
	if (ev_bulk_plan(B.snap, B.snap->include_protected, &err) < 0) {
		struct ev_error again = {0};
		settings_restore(before);
		B.snap->action = w->action;
		ui_bulk_settings(&B.snap->set);
		if (ev_bulk_plan(B.snap, B.snap->include_protected, &again) < 0) {
			app_message(a, EV_STYLE_ERROR, _("refused: %s"), again.msg);
			app_pop(a);
			ui_write_end();
			return;
		}
		/* TRANSLATORS: the setting asked ("rate: 5 events per second"), why it is
		 * refused. */
		app_message(a, EV_STYLE_ERROR, _("%s: %s; unchanged"), what, err.msg);
		return;
	}
	if (ui_write_is_confirm(app_top(a)))
		app_pop(a);
	app_push(a, confirm_new(a));
	app_message(a, EV_STYLE_NORMAL, "%s", what);
}

static void rate_done(struct app *a, const char *text)
{
	struct ui_write *w = ui_write_current();
	struct settings_copy before;
	char *end;
	if (B.snap == NULL || text[0] == '\0')
		return;
	double r = strtod(text, &end);
	bool paced_only = !is_retry(w->action); /* cancel, recover: 0 = no pace, as before */
	if (end == text || *end != '\0' || !(paced_only ? r >= 0 : r > 0) || r > EV_BULK_RATE_MAX) {
		app_message(a, EV_STYLE_ERROR,
		            /* TRANSLATORS: %s is "0 (no pace)" or "above 0"; then the most, what
		             * was typed. */
		            _("rate: expected events per second, %s and at most %d, got '%.*s'; "
		              "unchanged"),
		            paced_only ? _("0 (no pace)") : _("above 0"), EV_BULK_RATE_MAX,
		            app_cut(text, 40), text);
		return;
	}
	settings_save(&before);
	B.rate = r;
	char what[256];
	if (r > 0)
		snprintf(what, sizeof(what), _("rate: %g events per second"), r);
	else
		snprintf(what, sizeof(what), "%s", _("rate: no pace"));
	replan(a, &before, what);
}

static void delay_done(struct app *a, const char *text)
{
	struct settings_copy before;
	long long ms;
	if (B.snap == NULL || text[0] == '\0')
		return;
	if (ev_parse_duration_ms(text, &ms) < 0 || ms < 0 || ms > 7LL * 86400 * 1000 ||
	    ms % 1000 != 0) {
		app_message(
		        a, EV_STYLE_ERROR,
		        _("delay: expected whole seconds from 0 to 7d (30s, 5m, 2h), got '%.*s'; "
		          "unchanged"),
		        app_cut(text, 40), text);
		return;
	}
	settings_save(&before);
	B.delay_s = (int)(ms / 1000);
	char what[256];
	snprintf(what, sizeof(what), _("delay: %d s before the first is due"), B.delay_s);
	replan(a, &before, what);
}

static void batch_done(struct app *a, const char *text)
{
	struct settings_copy before;
	long long n;
	if (B.snap == NULL || text[0] == '\0')
		return;
	if (ev_parse_int(text, 1, EV_BULK_BATCH_MAX, &n) < 0) {
		app_message(a, EV_STYLE_ERROR,
		            _("batch size: expected 1 .. %d rows, got '%.*s'; unchanged"),
		            EV_BULK_BATCH_MAX, app_cut(text, 40), text);
		return;
	}
	settings_save(&before);
	B.batch_size = (int)n;
	char what[256];
	snprintf(what, sizeof(what), _("batch size: %d rows"), B.batch_size);
	replan(a, &before, what);
}

static void pause_done(struct app *a, const char *text)
{
	struct settings_copy before;
	long long ms;
	if (B.snap == NULL || text[0] == '\0')
		return;
	if (ev_parse_duration_ms(text, &ms) < 0 || ms < 0 || ms > 600000) {
		app_message(
		        a, EV_STYLE_ERROR,
		        _("pause: expected a duration from 0 to 10m (0, 500ms, 2s), got '%.*s'; "
		          "unchanged"),
		        app_cut(text, 40), text);
		return;
	}
	settings_save(&before);
	B.pause_ms = (int)ms;
	char what[256];
	snprintf(what, sizeof(what), _("pause: %d ms between batches"), B.pause_ms);
	replan(a, &before, what);
}

/* A key of the confirmation that changes the run: the mode at once, the others by a prompt
 * (its label says the value in force; Enter alone keeps it). */
static void setting_key(struct app *a, enum ev_ui_action act)
{
	struct ui_write *w = ui_write_current();
	char label[512];
	struct settings_copy before;
	switch (act) {
	case EV_UA_BULK_MODE:
		if (!is_retry(w->action)) {
			app_message(
			        a, EV_STYLE_NORMAL,
			        /* TRANSLATORS: %s is the action (cancel, recover). */
			        _("m chooses how a retry runs; %s has one way (r sets its pace)"),
			        ui_write_action_label(w->action));
			return;
		}
		settings_save(&before);
		w->action = w->action == EV_ACTION_RETRY_SCHEDULE ? EV_ACTION_RETRY_NOW
		                                                  : EV_ACTION_RETRY_SCHEDULE;
		replan(a, &before,
		       w->action == EV_ACTION_RETRY_NOW
		               ? _("mode: retry now, paced (m: scheduled again)")
		               : _("mode: scheduled, spread through next_retry_time (the "
		                   "default)"));
		return;
	case EV_UA_BULK_RATE:
		if (w->action == EV_ACTION_RETRY_SCHEDULE)
			snprintf(label, sizeof(label),
			         _("rate: events made due per second (now %g; Enter keeps it): "),
			         B.snap->set.rate);
		else if (B.snap->set.pace > 0)
			snprintf(label, sizeof(label),
			         _("rate: events written per second (now %g; Enter keeps it): "),
			         B.snap->set.pace);
		else
			snprintf(label, sizeof(label), "%s",
			         _("rate: events written per second (now no pace; Enter keeps "
			           "it): "));
		app_prompt(a, label, "", rate_done);
		return;
	case EV_UA_BULK_DELAY:
		if (w->action != EV_ACTION_RETRY_SCHEDULE) {
			/* TRANSLATORS: %s is " (m schedules)" or nothing. */
			app_message(a, EV_STYLE_NORMAL, _("a delay is for a scheduled retry%s"),
			            is_retry(w->action) ? _(" (m schedules)") : "");
			return;
		}
		snprintf(label, sizeof(label),
		         _("delay before the first is due (now %d s; 0 .. 7d; Enter keeps it): "),
		         B.delay_s);
		app_prompt(a, label, "", delay_done);
		return;
	case EV_UA_BULK_BATCH:
		snprintf(label, sizeof(label),
		         _("batch size: rows per transaction (now %d; 1 .. %d; Enter keeps it): "),
		         B.batch_size, EV_BULK_BATCH_MAX);
		app_prompt(a, label, "", batch_done);
		return;
	default:
		snprintf(label, sizeof(label),
		         _("pause between batches (now %d ms; 0 .. 10m; Enter keeps it): "),
		         B.pause_ms);
		app_prompt(a, label, "", pause_done);
		return;
	}
}

/* a: a run on marked rows takes every row that matches the list instead, or the marked rows
 * again; counted anew (the protected rows' question again too), the settings kept. */
static void scope_switch(struct app *a)
{
	struct ui_write *w = ui_write_current();
	if (!B.can_all) {
		app_message(
		        a, EV_STYLE_NORMAL, "%s",
		        B.n_marked == 0 && B.n_ids == 0
		                ? _("a: this run is on every row that matches already")
		                : _("a: the marked rows are of a list of every source: a run on "
		                    "the whole list runs on one source (open its list)"));
		return;
	}
	if (!B.all && !ev_bulk_list_fits(w->action, B.kind)) {
		app_message(a, EV_STYLE_WARNING, _("%s does not apply to the rows of a %s list"),
		            ui_write_action_label(w->action), ev_list_name(B.kind));
		return;
	}
	B.all = !B.all;
	if (B.all) {
		B.marked = B.ids;
		B.n_marked = B.n_ids;
		B.ids = NULL;
		B.n_ids = 0;
	} else {
		B.ids = B.marked;
		B.n_ids = B.n_marked;
		B.marked = NULL;
		B.n_marked = 0;
	}
	snprintf(B.target, sizeof(B.target), "%s", B.all ? B.all_what : B.marked_what);
	ev_bulk_snapshot_free(&B.snap);
	if (ui_write_is_confirm(app_top(a)))
		app_pop(a);
	start_count(a);
}

/* A key of the confirmation that changes the run (a m r d b w). */
static bool bulk_key(struct app *a, enum ev_ui_action act)
{
	if (act == EV_UA_BULK_SCOPE && B.snap != NULL) {
		scope_switch(a);
		return true;
	}
	if (!(ev_ui_action_flags(act) & EV_AF_SETTING) || B.snap == NULL || B.snap->n_pending == 0)
		return false;
	setting_key(a, act);
	return true;
}

/* How the run writes: the mode of a retry, the keys that change it, the batches. */
static void confirm_add_settings(struct text_view *c, const struct ev_bulk_snapshot *s)
{
	struct ui_write *w = ui_write_current();
	const struct ev_bulk_settings *set = &s->set;
	char line[1024];
	if (w->action == EV_ACTION_RETRY_SCHEDULE) {
		snprintf(
		        line, sizeof(line),
		        _("mode: scheduled (the default) — next_retry_time = NOW() + %d .. %lld s, "
		          "%g "
		          "due a second, the applications' retry path · m: now"),
		        set->delay_s, s->spread_last_s, set->rate);
		text_view_add(c, EV_STYLE_NORMAL, line);
		if (B.asked_now)
			text_view_add(
			        c, EV_STYLE_NORMAL,
			        _("  (many events are retried through the schedule unless now is "
			          "chosen: m)"));
		snprintf(
		        line, sizeof(line),
		        _("rate: %g per second (r) · delay: %d s (d) · batch size: %d (b) · pause: "
		          "%d ms (w)"),
		        set->rate, set->delay_s, set->batch_size, set->pause_ms);
	} else if (w->action == EV_ACTION_RETRY_NOW) {
		snprintf(line, sizeof(line),
		         _("mode: now — pending at once, written at most %g per second (about %.0f "
		           "s "
		           "for %zu) · m: scheduled"),
		         set->pace, set->pace > 0 ? (double)s->n_pending / set->pace : 0.0,
		         s->n_pending);
		text_view_add(c, EV_STYLE_WARNING, line);
		snprintf(line, sizeof(line),
		         _("rate: %g per second (r) · batch size: %d (b) · pause: %d ms (w)"),
		         set->pace, set->batch_size, set->pause_ms);
	} else if (set->pace > 0) {
		snprintf(line, sizeof(line),
		         _("rate: at most %g written per second (r) · batch size: %d (b) · pause: "
		           "%d "
		           "ms (w)"),
		         set->pace, set->batch_size, set->pause_ms);
	} else {
		snprintf(line, sizeof(line),
		         _("rate: no pace (r sets one) · batch size: %d (b) · pause: %d ms (w)"),
		         set->batch_size, set->pause_ms);
	}
	text_view_add(c, EV_STYLE_NORMAL, line);
	snprintf(line, sizeof(line),
	         _("batches: %u of at most %d rows, %d ms apart at least, one transaction each, "
	           "with the audit rows"),
	         s->batches_planned, ev_bulk_batch_rows(set), set->pause_ms);
	text_view_add(c, EV_STYLE_NORMAL, line);
}

static struct view *confirm_new(struct app *a)
{
	struct ui_write *w = ui_write_current();
	struct text_view *c = ui_write_confirm_new();
	const struct ev_bulk_snapshot *s = B.snap;
	const struct ev_table_def *def = ev_model_table(w->table);
	char line[2048];
	/* TRANSLATORS: the bulk confirmation's question: the action, how many events, the
	 * table and its name in the database. */
	snprintf(line, sizeof(line), _("%s on %zu events of %s (%s)?"),
	         ui_write_action_label(w->action), s->n_pending, ev_model_table_label(def),
	         app_table_name(a, w->site, w->table));
	text_view_add(c, EV_STYLE_TITLE, line);
	text_view_add(c, EV_STYLE_NORMAL, "");
	/* TRANSLATORS: the rows counted, what was counted ("3 marked rows"), then a note or
	 * nothing. */
	snprintf(line, sizeof(line), _("counted: %zu (%s)%s"), s->n, B.target,
	         s->truncated ? _(" — more matched than one run reads; run it again for the rest")
	                      : "");
	text_view_add(c, EV_STYLE_NORMAL, line);
	if (B.can_all && B.all)
		/* TRANSLATORS: %s is the marked rows ("3 marked rows"). */
		snprintf(line, sizeof(line), _("a: only the %s instead"), B.marked_what);
	else if (B.can_all)
		/* TRANSLATORS: the list's count ("1234", "≥100000") and a space, or nothing;
		 * then what the list is ("list failed, event_type=X"). */
		snprintf(line, sizeof(line), _("a: all %s%sthat match instead (%s)"), B.match,
		         B.match[0] ? " " : "", B.all_what);
	if (B.can_all)
		text_view_add(c, EV_STYLE_NORMAL, line);
	char *prot = ev_bulk_protected_text(s);
	snprintf(line, sizeof(line),
	         _("to act on: %zu · protected: %s · refused by the guard: %zu"), s->n_pending,
	         prot, s->n_refused);
	free(prot);
	text_view_add(c, EV_STYLE_NORMAL, line);
	if (s->change) {
		snprintf(line, sizeof(line), _("change (first row): %s"), s->change);
		text_view_add(c, EV_STYLE_NORMAL, line);
	}
	if (s->notice) {
		snprintf(line, sizeof(line), _("note: %s"), s->notice);
		text_view_add(c, EV_STYLE_WARNING, line);
	}
	if (s->n_pending > 0)
		confirm_add_settings(c, s);
	text_view_add(c, EV_STYLE_NORMAL, "");
	text_view_add(c, EV_STYLE_HEADER,
	              _("each row's statement (the first shown; each binds its own id and "
	                "version):"));
	text_view_add(c, EV_STYLE_NORMAL, s->example ? s->example : _("(nothing to do)"));
	text_view_add(c, EV_STYLE_NORMAL, "");
	snprintf(
	        line, sizeof(line),
	        /* TRANSLATORS: %s is "a " (a key) or nothing, before the keys m r d b w. */
	        _("Apply? y applies (then x stops, X pauses); %sm r d b w change the run; C copies "
	          "the statement; any other key: No"),
	        B.can_all ? "a " : "");
	text_view_add(c, EV_STYLE_TITLE,
	              s->n_pending ? line
	              : B.can_all  ? _("Nothing to do: a changes the rows; any other key goes back")
	                           : _("Nothing to do: any key goes back"));
	return &c->base;
}

/* --- results ---------------------------------------------------------------------------------- */

/* The rows that did not apply, those that need a look first: failed (with why, an IN DOUBT
 * among them), skipped (changed meanwhile), then those the run did not reach, then those it
 * left alone. */
/* A row's state after a run, as a person reads it (ev_bulk_state_name's, translated); a row
 * still pending was not attempted: the run stopped first. */
static const char *item_state_label(enum ev_bulk_state st)
{
	switch (st) {
	case EV_BULK_PENDING:
		/* TRANSLATORS: a row's state in the bulk results' column (13 cells). */
		return P_("bulk", "not attempted");
	case EV_BULK_PROTECTED:
		return P_("bulk", "protected");
	case EV_BULK_REFUSED:
		return P_("bulk", "refused");
	case EV_BULK_APPLIED:
		return P_("bulk", "applied");
	case EV_BULK_SKIPPED:
		return P_("bulk", "skipped");
	case EV_BULK_FAILED:
		break;
	}
	return P_("bulk", "failed");
}

static void results_add_items(struct text_view *c, const struct ev_bulk_snapshot *s)
{
	static const enum ev_bulk_state order[] = {EV_BULK_FAILED, EV_BULK_SKIPPED, EV_BULK_PENDING,
	                                           EV_BULK_PROTECTED, EV_BULK_REFUSED};
	size_t shown = 0;
	for (size_t k = 0; k < sizeof(order) / sizeof(order[0]); k++) {
		for (size_t i = 0; i < s->n && shown < 500; i++) {
			const struct ev_bulk_item *it = &s->items[i];
			if (it->state != order[k])
				continue;
			/* The columns padded by cells: "%-24.64s %-13s %.400s" by bytes would
			 * misalign a wide character and could split one. */
			const char *msg = it->msg ? it->msg : "", *now = it->now ? it->now : "";
			struct ev_buf line;
			ev_buf_init(&line);
			app_buf_pad(&line, it->row.event_no ? it->row.event_no : "", 24, 64);
			ev_buf_addc(&line, ' ');
			app_buf_pad(&line, item_state_label(it->state), 13, 256);
			ev_buf_printf(&line, " %.*s%s%.*s", app_cut(msg, 400), msg,
			              /* TRANSLATORS: the bulk results: why a row did not apply,
			               * " — now " and the row as it is now. */
			              it->now ? _(" — now ") : "", app_cut(now, 400), now);
			text_view_add(c,
			              it->state == EV_BULK_SKIPPED || it->state == EV_BULK_FAILED
			                      ? EV_STYLE_WARNING
			                      : EV_STYLE_NORMAL,
			              line.data);
			ev_buf_free(&line);
			shown++;
		}
	}
}

static bool results_action(struct app *a, struct view *v, enum ev_ui_action act)
{
	(void)v;
	if (act == EV_UA_QUIT || act == EV_UA_BACK || act == EV_UA_OPEN) {
		app_pop(a);
		return true;
	}
	return false;
}

static const struct view_ops results_ops = {
        .name = "bulk-results",
        .ctx = EV_CTX_HELP,
        .draw = text_view_draw,
        .action = results_action,
        .result = text_view_no_result,
        .free = text_view_free,
};

/* The marks of the rows the run applied go; those it did not apply (skipped, failed, not
 * attempted, protected, refused) stay marked, for another look. False when the run was not on
 * marked rows; else *unmarked and *left say how many went and stay. */
/* The rows the run wrote (applied, or skipped: changed meanwhile), for the dashboard. */
static void tell_dashboard(struct app *a, const struct ev_bulk_snapshot *s)
{
	struct ui_write *w = ui_write_current();
	unsigned long long *ids = ev_xcalloc(s->n + 1, sizeof(*ids));
	size_t n = 0;
	for (size_t i = 0; i < s->n; i++)
		if (s->items[i].state == EV_BULK_APPLIED || s->items[i].state == EV_BULK_SKIPPED)
			ids[n++] = s->items[i].row.id;
	app_wrote(a, w->site, s->table, ids, n);
	free(ids);
}

static bool unmark_applied(struct app *a, const struct ev_bulk_snapshot *s, size_t *unmarked,
                           int *left)
{
	struct ui_write *w = ui_write_current();
	if (B.n_ids == 0 && B.n_marked == 0)
		return false;
	struct view *origin = ui_write_origin(a);
	if (origin == NULL || origin->ops->unmark == NULL || origin->ops->nmarked == NULL)
		return false;
	unsigned long long *ids = ev_xcalloc(s->n + 1, sizeof(*ids));
	size_t n = 0;
	for (size_t i = 0; i < s->n; i++)
		if (s->items[i].state == EV_BULK_APPLIED)
			ids[n++] = s->items[i].row.id;
	origin->ops->unmark(a, origin, w->site, ids, n);
	free(ids);
	*unmarked = n;
	*left = origin->ops->nmarked(origin);
	return true;
}

/* count_job finished: the protected rows' question, or the confirmation. */
static void count_done(void *ctx, struct ev_job *job)
{
	struct app *a = ctx;
	struct count_result *r = job->result;
	a->applying = false;
	if (job->rc < 0 || r == NULL || r->snap == NULL) {
		app_message(a, EV_STYLE_ERROR, _("counting failed: %s (nothing written)"),
		            job->err.msg);
		ui_write_end();
		return;
	}
	B.snap = r->snap;
	r->snap = NULL;
	if (B.snap->n_protected > 0) {
		char label[1024];
		snprintf(label, sizeof(label),
		         /* TRANSLATORS: a prompt: how many rows are of a protected type, the
		          * types, and the count to type to include them. */
		         _("%zu protected (%s): type %zu to include them, Enter to leave them: "),
		         B.snap->n_protected,
		         B.snap->protected_summary ? B.snap->protected_summary : "",
		         B.snap->n_protected);
		app_prompt(a, label, "", protected_done);
		return;
	}
	app_push(a, confirm_new(a));
}

/* apply_job finished: the tally, the marks, and the rows that did not apply. */
static void apply_done(void *ctx, struct ev_job *job)
{
	struct ui_write *w = ui_write_current();
	struct app *a = ctx;
	struct apply_arg *x = job->arg;
	a->applying = false;
	pthread_mutex_lock(&shared.lock);
	shared.running = false;
	pthread_mutex_unlock(&shared.lock);
	if (job->rc < 0) {
		app_message(a, EV_STYLE_ERROR, _("not started: %s (nothing written)"),
		            job->err.msg);
	} else {
		tell_dashboard(a, x->snap);
		char *tally = ev_bulk_tally_describe(&x->snap->tally);
		char marks[256] = "";
		size_t unmarked = 0;
		int left = 0;
		if (unmark_applied(a, x->snap, &unmarked, &left) && left > 0)
			snprintf(marks, sizeof(marks), _("; %zu unmarked, %d still marked"),
			         unmarked, left);
		else if (unmarked > 0)
			snprintf(marks, sizeof(marks), _("; %zu unmarked"), unmarked);
		app_message(a,
		            x->snap->tally.skipped || x->snap->tally.failed ? EV_STYLE_WARNING
		                                                            : EV_STYLE_CHANGED,
		            /* TRANSLATORS: the end of a bulk run: "stopped: " or "done: ", the
		             * tally, the marks. */
		            "%s%s%s", x->snap->tally.stopped ? _("stopped: ") : _("done: "), tally,
		            marks);
		/* The rows that did not apply, as they are now. */
		struct text_view *c = text_view_new(&results_ops);
		char line[2048];
		char paused[128] = "";
		pthread_mutex_lock(&shared.lock);
		double paused_s = shared.p.paused_s;
		pthread_mutex_unlock(&shared.lock);
		if (paused_s >= 0.5)
			snprintf(paused, sizeof(paused), _("; paused %.0f s"), paused_s);
		snprintf(line, sizeof(line),
		         /* TRANSLATORS: the bulk results' title: the action, what it ran on, the
		          * tally, the batches, "; paused N s" or nothing. */
		         x->snap->tally.batches == 1 ? _("%s on %s: %s; %u batch%s")
		                                     : _("%s on %s: %s; %u batches%s"),
		         ui_write_action_label(x->snap->action),
		         x->snap->target ? x->snap->target : "", tally, x->snap->tally.batches,
		         paused);
		text_view_add(c, EV_STYLE_TITLE, line);
		if (left > 0) {
			snprintf(line, sizeof(line),
			         _("marks: the %zu rows applied are unmarked; the %d not applied "
			           "are "
			           "still "
			           "marked in the list"),
			         unmarked, left);
			text_view_add(c, EV_STYLE_WARNING, line);
		} else if (unmarked > 0) {
			snprintf(line, sizeof(line), _("marks: the %zu rows applied are unmarked"),
			         unmarked);
			text_view_add(c, EV_STYLE_NORMAL, line);
		}
		if (x->snap->error[0]) {
			snprintf(line, sizeof(line), _("stopped because: %s"), x->snap->error);
			text_view_add(c, EV_STYLE_ERROR, line);
		}
		text_view_add(c, EV_STYLE_NORMAL, "");
		text_view_add(c, EV_STYLE_HEADER,
		              _("rows not applied (applied rows are not listed); q goes back"));
		results_add_items(c, x->snap);
		free(tally);
		app_push(a, &c->base);
	}
	for (int i = 0; i < a->nviews; i++)
		if (a->views[i]->tag == w->origin_tag && a->views[i]->ops->load)
			a->views[i]->ops->load(a, a->views[i]);
	bulk_clear();
}

bool ui_bulk_progress_line(char *buf, size_t size, int width)
{
	pthread_mutex_lock(&shared.lock);
	struct ev_bulk_progress p = shared.p;
	bool running = shared.running;
	pthread_mutex_unlock(&shared.lock);
	if (!running)
		return false;
	int barw = width > 60 ? 20 : 10;
	int fill = p.total ? (int)((double)p.done / (double)p.total * barw) : 0;
	char bar[128] = "";
	size_t n = 0;
	for (int i = 0; i < barw && n + 4 < sizeof(bar); i++) {
		const char *cell = i < fill ? "█" : "░";
		memcpy(bar + n, cell, strlen(cell));
		n += strlen(cell);
	}
	bar[n] = '\0';
	if (p.rereading) {
		snprintf(buf, size,
		         _("IN DOUBT: batch %u's COMMIT lost its answer; re-reading it once the "
		           "server "
		           "answers · applied %zu skipped %zu failed %zu · x stops waiting"),
		         p.batches, p.applied, p.skipped, p.failed);
		return true;
	}
	bool hold = atomic_load(&shared.hold);
	if (hold || p.paused) {
		/* Between batches: no transaction open; a row changed meanwhile will be skipped. */
		snprintf(
		        buf, size,
		        /* TRANSLATORS: the bulk progress line, paused: the state (below),
		         * done/total, a bar, the counts, how long paused, the keys. */
		        _("%s %zu/%zu %s · applied %zu skipped %zu failed %zu · paused %.0fs · %s"),
		        !hold      ? _("resuming:")
		        : p.paused ? _("PAUSED after a batch (nothing open):")
		                   : _("pausing after this batch:"),
		        p.done, p.total, bar, p.applied, p.skipped, p.failed, p.paused_s,
		        hold ? _("X resumes · x stops") : _("X pauses · x stops"));
		return true;
	}
	char eta[32] = "?";
	if (p.eta_s >= 0)
		snprintf(eta, sizeof(eta), "%.0fs", p.eta_s);
	snprintf(buf, size,
	         /* TRANSLATORS: the bulk progress line: the state, done/total, a bar, the rate,
	          * the time left, the counts, the keys. */
	         _("%s %zu/%zu %s · %.0f/s · %s left · applied %zu skipped %zu failed %zu · x "
	           "stops · "
	           "X pauses"),
	         atomic_load(&shared.stop) ? _("stopping after this batch:") : _("applying"),
	         p.done, p.total, bar, p.rate, eta, p.applied, p.skipped, p.failed);
	return true;
}

void ui_bulk_stop(struct app *a)
{
	if (!shared.running) {
		app_message(a, EV_STYLE_NORMAL, "%s", _("nothing to stop"));
		return;
	}
	atomic_store(&shared.stop, true);
	app_message(a, EV_STYLE_WARNING, "%s", _("stopping after the current batch…"));
}

void ui_bulk_hold(struct app *a)
{
	if (!shared.running) {
		app_message(a, EV_STYLE_NORMAL, "%s",
		            _("nothing to pause: X pauses a bulk action running"));
		return;
	}
	bool hold = !atomic_load(&shared.hold);
	atomic_store(&shared.hold, hold);
	app_message(a, hold ? EV_STYLE_WARNING : EV_STYLE_NORMAL, "%s",
	            hold ? _("pausing after the current batch… (X resumes; rows that change "
	                     "meanwhile are skipped)")
	                 : _("resuming…"));
}

void ui_bulk_quit(void)
{
	atomic_store(&shared.stop, true);
	atomic_store(&shared.hold, false);
}
