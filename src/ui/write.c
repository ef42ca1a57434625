/* evtop — the console's write pipeline, shared by a single write and a bulk one (ui/write.h):
 * opening, the reason and operator prompts, the confirmation's keys, who writes, the checks on
 * the write connection, submitting, and the view that opened the write. */
#include <config.h>

#include "core/guard.h"
#include "core/i18n.h"
#include "core/style.h"
#include "ui/write.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static struct ui_write W;

struct ui_write *ui_write_current(void)
{
	return &W;
}

const char *ui_write_action_label(enum ev_action act)
{
	switch (act) {
	case EV_ACTION_RETRY_NOW:
		/* TRANSLATORS: an operator's action, in the confirmation's question and the
		 * result ("retry_now EV-1 on message?", "applied: retry_now EV-1"): a verb. */
		return P_("action", "retry_now");
	case EV_ACTION_RETRY_SCHEDULE:
		return P_("action", "retry_schedule");
	case EV_ACTION_CANCEL:
		return P_("action", "cancel");
	case EV_ACTION_RECOVER:
		return P_("action", "recover");
	default:
		return ev_action_name(act);
	}
}

void ui_write_end(void)
{
	const struct ui_write_ops *ops = W.ops;
	memset(&W, 0, sizeof(W));
	if (ops != NULL && ops->clear != NULL)
		ops->clear();
}

bool ui_write_open(struct app *a, const struct ui_write_ops *ops, struct view *origin, int site,
                   enum ev_ui_action act, enum ev_table_kind t)
{
	const char *not_writable = app_site_at(a, site)->not_writable[t];
	if (a->cfg->read_only) {
		app_message(a, EV_STYLE_WARNING,
		            /* TRANSLATORS: %s is an action's name ("retry"), as the config and
		             * :commands write it. */
		            _("read-only (--read-only or the config): %s does nothing"),
		            ev_ui_action_name(act));
		return false;
	}
	if (not_writable[0]) {
		/* TRANSLATORS: the table may not be written; %s says why. */
		app_message(a, EV_STYLE_WARNING, _("read-only: %s"), not_writable);
		return false;
	}
	if (app_clock_refuses(a, site, t))
		return false;
	ui_write_end();
	W.active = true;
	W.ops = ops;
	W.action = (enum ev_action)ev_ui_action_core(act);
	W.table = t;
	W.site = site;
	W.origin_tag = origin->tag;
	return true;
}

/* --- the prompts ----------------------------------------------------------------------------- */

static void operator_done(struct app *a, const char *text)
{
	struct ev_error err = {0};
	if (ev_guard_reason_check(text, &err) < 0) {
		/* Into the audit as typed: no control character (C1 included). */
		app_message(a, EV_STYLE_ERROR, _("operator id refused, nothing done: %.*s"),
		            app_cut(err.msg, 200), err.msg);
		ui_write_end();
		return;
	}
	free(a->cfg->operator_id);
	a->cfg->operator_id = ev_xstrdup(text[0] ? text : "-");
	a->operator_asked = true;
	if (W.active)
		W.ops->go(a);
}

static void ask_operator(struct app *a)
{
	if (!a->operator_asked && a->cfg->operator_id == NULL) {
		app_prompt(a, _("operator or ticket id for the audit (Enter: none): "), "",
		           operator_done);
		return;
	}
	W.ops->go(a);
}

static void reason_done(struct app *a, const char *text)
{
	if (!W.active)
		return;
	snprintf(W.reason, sizeof(W.reason), "%s", text);
	if (W.action == EV_ACTION_CANCEL && W.reason[0] == '\0') {
		app_message(a, EV_STYLE_WARNING, _("cancel needs a reason: nothing done"));
		ui_write_end();
		return;
	}
	struct ev_error err = {0};
	if (ev_guard_reason_check(W.reason, &err) < 0) {
		app_message(a, EV_STYLE_ERROR, _("nothing done: %s"), err.msg);
		ui_write_end();
		return;
	}
	ask_operator(a);
}

void ui_write_ask(struct app *a)
{
	if (W.action == EV_ACTION_CANCEL || W.action == EV_ACTION_RECOVER) {
		app_prompt(a,
		           W.action == EV_ACTION_CANCEL ? _("reason for the cancel: ")
		                                        : _("reason for the recover (optional): "),
		           "", reason_done);
		return;
	}
	ask_operator(a);
}

/* --- the confirmation ------------------------------------------------------------------------ */

static bool confirm_action(struct app *a, struct view *v, enum ev_ui_action act)
{
	(void)v;
	if (act == EV_UA_HELP)
		return false;
	if (act == EV_UA_COPY) {
		/* The confirmation stays: copying decides nothing. */
		char *sql = W.active && W.ops->statement ? W.ops->statement() : NULL;
		if (sql != NULL)
			/* TRANSLATORS: what is copied, in "copied %s (N bytes) to the clipboard".
			 */
			app_copy(a, _("the statement"), sql, strlen(sql));
		else
			app_message(a, EV_STYLE_NORMAL, _("copy: no statement to copy"));
		free(sql);
		return true;
	}
	if (W.active && act == EV_UA_YES && W.ops->yes(a))
		return true;
	if (W.active && act != EV_UA_YES && W.ops->key != NULL && W.ops->key(a, act))
		return true;
	/* Anything else is No. */
	app_pop(a);
	app_message(a, EV_STYLE_NORMAL, "%s", _("not applied"));
	ui_write_end();
	return true;
}

static const struct view_ops confirm_ops = {
        .name = "confirm",
        .ctx = EV_CTX_CONFIRM,
        .draw = text_view_draw,
        .action = confirm_action,
        .result = text_view_no_result,
        .free = text_view_free,
};

struct text_view *ui_write_confirm_new(void)
{
	return text_view_new(&confirm_ops);
}

bool ui_write_is_confirm(const struct view *v)
{
	return v != NULL && v->ops == &confirm_ops;
}

/* --- applying -------------------------------------------------------------------------------- */

static char *dup0(const char *s)
{
	return s ? ev_xstrdup(s) : NULL;
}

void ui_write_who_take(struct app *a, int site, struct ui_write_who *w)
{
	w->source = dup0(a->sources[site]->name);
	w->os_user = dup0(a->ident.os_user);
	w->sudo_user = dup0(a->ident.sudo_user);
	w->ssh = dup0(a->ident.ssh_connection);
	/* "-": the operator said there is none. */
	w->operator_id = a->cfg->operator_id && strcmp(a->cfg->operator_id, "-") != 0
	                         ? ev_xstrdup(a->cfg->operator_id)
	                         : NULL;
	w->log_path = dup0(a->audit_path);
	w->clock_ok = a->clock_ok;
}

void ui_write_who_clear(struct ui_write_who *w)
{
	free(w->source);
	free(w->os_user);
	free(w->sudo_user);
	free(w->ssh);
	free(w->operator_id);
	free(w->log_path);
	memset(w, 0, sizeof(*w));
}

int ui_write_prepare(struct ev_conn *c, const struct ui_write_who *w, enum ev_table_kind t,
                     const char *table_name, struct ev_access *access, struct ev_audit_log *log,
                     struct ev_audit_who *who, struct ev_error *err)
{
	if (ev_action_check_access_clock(c, t, table_name, w->clock_ok, access, err) < 0)
		return -1;
	if (!access->writable)
		return UI_WRITE_NOT_WRITABLE;
	if (ev_audit_log_open(log, w->log_path, err) < 0)
		return UI_WRITE_NO_AUDIT;
	*who = (struct ev_audit_who){
	        .source = w->source,
	        .os_user = w->os_user,
	        .sudo_user = w->sudo_user,
	        .ssh_connection = w->ssh,
	        .operator_id = w->operator_id,
	        .db_user = NULL,
	};
	return 0;
}

void ui_write_submit(struct app *a, int tag, ev_job_fn fn, void *arg, void (*free_arg)(void *),
                     void (*done)(void *app, struct ev_job *job))
{
	ev_worker_submit(app_site_at(a, W.site)->wwrite, app_job(tag, fn, arg, free_arg, done));
	a->applying = true;
}

struct view *ui_write_origin(struct app *a)
{
	for (int i = 0; i < a->nviews; i++)
		if (W.active && a->views[i]->tag == W.origin_tag)
			return a->views[i];
	return NULL;
}

void ui_write_reload_origin(struct app *a)
{
	struct view *v = ui_write_origin(a);
	if (v != NULL && v->ops->load)
		v->ops->load(a, v);
}
