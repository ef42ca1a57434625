/* evtop — the guarded actions from the keyboard on the row under the cursor: retry, schedule,
 * cancel, recover, through the console's write pipeline (ui/write.h). What is a single
 * write's own: the row as read, the guard built by core (or refused with the reason), the
 * event_no typed for a protected type, a confirmation showing what will change and the exact
 * statement (e writes it to a file), applied by db/action (transaction, audit row, audit
 * file), and the result as the database says it, the row highlighted. */
#include <config.h>

#include "core/auditlog.h"
#include "core/guard.h"
#include "core/i18n.h"
#include "core/style.h"
#include "db/action.h"
#include "ui/app.h"
#include "ui/textview.h"
#include "ui/write.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What a single write adds to the write being prepared (ui/write.h): the row as read, the
 * protected type's confirmation, the guard built. */
static struct {
	struct ev_guard_row seen;
	bool confirmed_protected;
	struct ev_guard g;
} P;

static int target_status(enum ev_action a, int from)
{
	switch (a) {
	case EV_ACTION_RETRY_NOW:
		return EV_ST_PENDING;
	case EV_ACTION_RETRY_SCHEDULE:
		return EV_ST_FAILED;
	case EV_ACTION_CANCEL:
		return EV_ST_CANCELLED;
	case EV_ACTION_RECOVER:
		return EV_ST_FAILED;
	default:
		return from;
	}
}

bool ui_action_allowed(enum ev_ui_action act, enum ev_table_kind t, int status)
{
	int core = ev_ui_action_core(act);
	if (core < 0)
		return false;
	enum ev_action a = (enum ev_action)core;
	return ev_action_allows(a, t, status, target_status(a, status));
}

static void single_clear(void)
{
	ev_guard_clear(&P.g);
	ev_guard_row_clear(&P.seen);
	memset(&P, 0, sizeof(P));
}

static void build_and_confirm(struct app *a);

static void protected_done(struct app *a, const char *text)
{
	if (!ui_write_current()->active)
		return;
	if (strcmp(text, P.seen.event_no ? P.seen.event_no : "") != 0) {
		app_message(a, EV_STYLE_WARNING,
		            _("the event_no typed does not match: nothing done"));
		ui_write_end();
		return;
	}
	P.confirmed_protected = true;
	build_and_confirm(a);
}

static struct view *confirm_new(struct app *a);

/* The reason and the operator are known: the guard, or the protected type's question. */
static void build_and_confirm(struct app *a)
{
	const struct ui_write *w = ui_write_current();
	struct ev_error err = {0};
	struct ev_guard_req req = {
	        .table = w->table,
	        .table_name = app_table_name(a, w->site, w->table),
	        .action = w->action,
	        .row = &P.seen,
	        .reason = w->reason,
	        .schedule_delay_s = 0,
	        .stuck_threshold_s = a->cfg->stuck_threshold_s,
	        .recover_message = a->cfg->recover_message,
	        .protected_types = a->cfg->protected_types,
	        .confirmed_protected = P.confirmed_protected,
	};
	ev_guard_clear(&P.g);
	if (ev_guard_build(&req, &P.g, &err) < 0) {
		if (err.code == EV_GUARD_REFUSED_PROTECTED && !P.confirmed_protected) {
			/* The event_no whole, last before the typing: a narrow screen shows the
			 * end of the prompt (the line is sanitised when drawn). */
			const char *token = ev_guard_protected_token(
			        P.seen.event_type, P.seen.biz_type, a->cfg->protected_types);
			char label[512];
			const char *tok = token ? token : "?";
			const char *no = P.seen.event_no ? P.seen.event_no : "?";
			snprintf(label, sizeof(label),
			         /* TRANSLATORS: a prompt; the protected type's token, then the
			          * event_no to type (last: a narrow screen shows the prompt's
			          * end). */
			         _("a protected type (%.*s): to go on, type its event_no, %.*s: "),
			         app_cut(tok, 40), tok, app_cut(no, 64), no);
			app_prompt(a, label, "", protected_done);
			return;
		}
		/* TRANSLATORS: the guard refused the write; %s says why. */
		app_message(a, EV_STYLE_ERROR, _("refused: %s"), err.msg);
		ui_write_end();
		return;
	}
	app_push(a, confirm_new(a));
}

static bool single_yes(struct app *a);
static bool single_key(struct app *a, enum ev_ui_action act);

/* The guarded statement, rendered as the confirmation shows it. */
static char *single_statement(void)
{
	return P.g.update ? ev_query_render(P.g.update) : NULL;
}

static const struct ui_write_ops single_ops = {
        .go = build_and_confirm,
        .yes = single_yes,
        .key = single_key,
        .clear = single_clear,
        .statement = single_statement,
};

void ui_action_start(struct app *a, struct view *origin, int site, enum ev_ui_action act,
                     enum ev_table_kind t, const struct ev_rowset *rs, size_t row)
{
	struct ev_guard_row seen = {0};
	struct ev_error err = {0};
	if (!ui_write_open(a, &single_ops, origin, site, act, t))
		return;
	if (ev_guard_row_from_rowset(rs, row, t, &seen, &err) < 0) {
		app_message(a, EV_STYLE_ERROR, "%s", err.msg);
		ev_guard_row_clear(&seen);
		ui_write_end();
		return;
	}
	P.seen = seen;
	ui_write_ask(a);
}

/* --- applying, on the source's write connection -------------------------------------------- */

struct apply_arg {
	struct ev_guard g;
	struct ev_guard_row seen;
	struct ui_write_who who;
};

struct apply_result {
	struct ev_action_outcome out;
	enum ev_action_result result;
	bool not_writable;
	bool clock; /* refused for a suspected time zone mismatch (not cached: :clock-ok lifts it)
	             */
	char why[1024];
	unsigned long long id;
};

static void free_apply_arg(void *p)
{
	struct apply_arg *x = p;
	ev_guard_clear(&x->g);
	ev_guard_row_clear(&x->seen);
	ui_write_who_clear(&x->who);
	free(x);
}

static void free_apply_result(void *p)
{
	struct apply_result *r = p;
	ev_action_outcome_clear(&r->out);
	free(r);
}

static int apply_job(struct ev_conn *c, struct ev_job *job, struct ev_error *err)
{
	struct apply_arg *x = job->arg;
	struct apply_result *r = ev_xcalloc(1, sizeof(*r));
	struct ev_access access;
	struct ev_audit_log log = {.fd = -1};
	struct ev_audit_who who;
	job->result = r;
	job->free_result = free_apply_result;
	r->id = x->seen.id;
	int rc =
	        ui_write_prepare(c, &x->who, x->g.table, x->g.table_name, &access, &log, &who, err);
	if (rc < 0)
		return -1;
	if (rc == UI_WRITE_NOT_WRITABLE) {
		r->not_writable = true;
		r->clock = access.clock_suspect;
		snprintf(r->why, sizeof(r->why), "%s", access.why);
		r->result = EV_RESULT_REFUSED;
		return 0;
	}
	if (rc == UI_WRITE_NO_AUDIT) {
		r->result = EV_RESULT_REFUSED;
		snprintf(r->why, sizeof(r->why), _("the audit file cannot be written: %.*s"),
		         app_cut(err->msg, 400), err->msg);
		return 0;
	}
	struct ev_action_ctx ctx = {.conn = c, .access = &access, .log = &log, .who = &who};
	r->result = ev_action_apply(&ctx, &x->g, &x->seen, &r->out);
	ev_audit_log_close(&log);
	return 0;
}

static void apply_done(void *ctx, struct ev_job *job);

static bool single_yes(struct app *a)
{
	const struct ui_write *w = ui_write_current();
	struct apply_arg *x = ev_xcalloc(1, sizeof(*x));
	x->g = P.g; /* the guard moves to the job */
	memset(&P.g, 0, sizeof(P.g));
	ev_guard_row_copy(&x->seen, &P.seen);
	ui_write_who_take(a, w->site, &x->who);
	app_pop(a); /* the confirmation */
	app_message(a, EV_STYLE_WARNING, "%s", _("applying…"));
	ui_write_submit(a, -1, apply_job, x, free_apply_arg, apply_done);
	return true;
}

/* A write's result as a person reads it (ev_action_result_name's, translated). */
static const char *result_label(enum ev_action_result r)
{
	switch (r) {
	case EV_RESULT_APPLIED:
		/* TRANSLATORS: a write's result, before why: "failed: …", "refused: …". */
		return P_("result", "applied");
	case EV_RESULT_SKIPPED:
		return P_("result", "skipped");
	case EV_RESULT_REFUSED:
		return P_("result", "refused");
	case EV_RESULT_FAILED:
		break;
	}
	return P_("result", "failed");
}

/* apply_job finished: say what the database did. */
static void apply_done(void *ctx, struct ev_job *job)
{
	struct app *a = ctx;
	struct apply_result *r = job->result;
	const struct ui_write *w = ui_write_current();
	a->applying = false;
	enum ev_table_kind t = w->table;
	if (job->rc < 0 || r == NULL) {
		app_message(a, EV_STYLE_ERROR, _("failed: %s (the row was not changed)"),
		            job->err.msg);
	} else if (r->not_writable && r->clock) {
		app_message(a, EV_STYLE_WARNING, _("refused: %s"), r->why);
	} else if (r->not_writable) {
		struct site *st = app_site_at(a, w->site);
		snprintf(st->not_writable[t], sizeof(st->not_writable[t]), "%s", r->why);
		/* TRANSLATORS: the table may not be written; %s says why. */
		app_message(a, EV_STYLE_WARNING, _("read-only: %s"), r->why);
	} else if (r->result == EV_RESULT_APPLIED) {
		/* TRANSLATORS: the action, the event_no, the row's version before and after. */
		app_message(a, EV_STYLE_CHANGED, _("applied: %s %s (version %lld → %lld)"),
		            ui_write_action_label(w->action), P.seen.event_no, P.seen.version,
		            r->out.have_now ? r->out.now.version : P.seen.version + 1);
		a->highlight_id = r->id;
	} else if (r->result == EV_RESULT_SKIPPED) {
		char *now = r->out.have_now ? ev_guard_row_describe(t, &r->out.now) : NULL;
		app_message(a, EV_STYLE_WARNING,
		            /* TRANSLATORS: %s is the row as it is now, or "gone". */
		            _("skipped: the row changed since it was read — now %s"),
		            now ? now : _("gone"));
		free(now);
		a->highlight_id = r->id;
	} else {
		/* TRANSLATORS: a write's result ("failed", "refused"), then why. */
		app_message(a, EV_STYLE_ERROR, _("%s: %s"), result_label(r->result),
		            r->out.msg[0] ? r->out.msg : r->why);
	}
	if (job->rc == 0 && r != NULL &&
	    (r->result == EV_RESULT_APPLIED || r->result == EV_RESULT_SKIPPED))
		app_wrote(a, w->site, t, &r->id, 1);
	/* The row as it is now, in the view that showed it (if it is still open). */
	struct view *origin = ui_write_origin(a);
	ui_write_end();
	if (origin != NULL && origin->ops->load)
		origin->ops->load(a, origin);
}

/* --- the confirmation ------------------------------------------------------------------------ */

static void write_statement(struct app *a, FILE *f, const char *path, void *ctx)
{
	const struct ui_write *w = ui_write_current();
	char *sql = P.g.update ? ev_query_render(P.g.update) : NULL;
	(void)ctx;
	if (sql == NULL) {
		fclose(f);
		app_message(a, EV_STYLE_ERROR, _("cannot write %s"), path);
		return;
	}
	fprintf(f, "-- evtop: %s %s on %s (not applied by this file)\n%s;\n",
	        ev_action_name(w->action), P.seen.event_no ? P.seen.event_no : "",
	        app_table_name(a, w->site, w->table), sql);
	free(sql);
	if (fclose(f) != 0)
		app_message(a, EV_STYLE_ERROR, _("cannot write %s"), path);
	else
		app_message(a, EV_STYLE_NORMAL,
		            _("wrote the statement to %s (y applies, any key: No)"), path);
}

static void export_statement_done(struct app *a, const char *name)
{
	ui_export(a, name, write_statement, NULL, NULL);
}

static bool single_key(struct app *a, enum ev_ui_action act)
{
	if (act != EV_UA_EXPORT)
		return false;
	app_prompt(a, _("write the statement to FILE: "), "evtop-statement.sql",
	           export_statement_done);
	return true;
}

static struct view *confirm_new(struct app *a)
{
	const struct ui_write *w = ui_write_current();
	struct text_view *c = ui_write_confirm_new();
	const struct ev_table_def *def = ev_model_table(w->table);
	char line[2048];
	char where[192] = "";
	const char *src = app_source_name(a, w->site);
	if (a->nsources > 1)
		/* TRANSLATORS: after the table in the confirmation's question; %.*s the source. */
		snprintf(where, sizeof(where), _(" of source %.*s"), app_cut(src, 64), src);
	/* TRANSLATORS: the confirmation's question: the action, the event_no, the table and
	 * its name in the database, " of source S" or nothing. */
	snprintf(line, sizeof(line), _("%s %s on %s (%s)%s?"), ui_write_action_label(w->action),
	         P.seen.event_no ? P.seen.event_no : "?", ev_model_table_label(def),
	         app_table_name(a, w->site, w->table), where);
	text_view_add(c, EV_STYLE_TITLE, line);
	text_view_add(c, EV_STYLE_NORMAL, "");
	/* TRANSLATORS: the status code and name before and after. */
	snprintf(line, sizeof(line), _("status: %d %s → %d %s"), P.g.from_status,
	         ev_model_status_label(def, P.g.from_status), P.g.to_status,
	         ev_model_status_label(def, P.g.to_status));
	text_view_add(c, EV_STYLE_NORMAL, line);
	char *now = ev_guard_row_describe(w->table, &P.seen);
	/* TRANSLATORS: the row as it was read (its status, version, retries…). */
	snprintf(line, sizeof(line), _("as read: %s"), now);
	free(now);
	text_view_add(c, EV_STYLE_NORMAL, line);
	/* TRANSLATORS: what the statement changes (columns and values). */
	snprintf(line, sizeof(line), _("change: %s"), P.g.change ? P.g.change : "");
	text_view_add(c, EV_STYLE_NORMAL, line);
	if (P.g.notice) {
		snprintf(line, sizeof(line), _("note: %s"), P.g.notice);
		text_view_add(c, EV_STYLE_WARNING, line);
	}
	if (P.g.protected_token) {
		snprintf(line, sizeof(line), _("protected type (%s): confirmed by its event_no"),
		         P.g.protected_token);
		text_view_add(c, EV_STYLE_WARNING, line);
	}
	text_view_add(c, EV_STYLE_NORMAL, "");
	text_view_add(c, EV_STYLE_HEADER,
	              _("the statement, one row by primary key, guarded by the row as read:"));
	char *sql = ev_query_render(P.g.update);
	text_view_add(c, EV_STYLE_NORMAL, sql);
	free(sql);
	text_view_add(c, EV_STYLE_NORMAL, "");
	text_view_add(
	        c, EV_STYLE_TITLE,
	        _("Apply? y applies; e writes the statement to a file, C copies it; any other "
	          "key: No"));
	return &c->base;
}
