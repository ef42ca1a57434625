/* evtop — the write pipeline of the console, one for a single write (ui/actions.c: the row
 * under the cursor) and a bulk one (ui/bulk.c: marked rows, a whole list). Both go the same
 * way: opened (refused where the source cannot be written) → the reason the action writes →
 * the operator id, once a session → the caller's own step (build the guard, count the rows) →
 * a confirmation, default No → applied on the source's write connection (access checked
 * there again, the clock too; the audit file open) → the result, and the view that opened
 * the write loaded again. One write is prepared at a time: its state lives here. */
#ifndef EV_UI_WRITE_H
#define EV_UI_WRITE_H

#include "core/model.h"
#include "db/action.h"
#include "ui/app.h"
#include "ui/textview.h"

#include <stdbool.h>

/* What a kind of write does at its own steps. */
struct ui_write_ops {
	/* The reason and the operator id are known: build and confirm, or count. */
	void (*go)(struct app *a);
	/* y in the confirmation: true when the write was submitted; false when there is
	 * nothing to apply (then it is No). */
	bool (*yes)(struct app *a);
	/* Another key of the confirmation (writing the statement, a setting of the run): true
	 * when taken; NULL or false: No. */
	bool (*key)(struct app *a, enum ev_ui_action act);
	/* The write ends (No, refused, its result shown): the caller's own state cleared. */
	void (*clear)(void);
	/* The statement the confirmation shows, for C to copy (malloc'd), or NULL. */
	char *(*statement)(void);
};

/* The write being prepared. */
struct ui_write {
	bool active;
	const struct ui_write_ops *ops;
	enum ev_action action;
	enum ev_table_kind table;
	int site;       /* the rows' source: the write goes to its primary */
	int origin_tag; /* the view that opened it, loaded again at the end */
	char reason[1024];
};

/* A database action as a person reads it, in the interface's language ("retry_now" in
 * English, as the audit records name it). */
const char *ui_write_action_label(enum ev_action act);

/* The write being prepared (active false when none). */
struct ui_write *ui_write_current(void);
/* Open a write of act on table t of source site from view origin. Refused (false, said on
 * the message line, nothing set) when the console is read-only, the table is known not
 * writable, or a time zone mismatch is suspected there. The dispatcher has already refused
 * a write read-only or while another one applies; this is the source's own word. */
bool ui_write_open(struct app *a, const struct ui_write_ops *ops, struct view *origin, int site,
                   enum ev_ui_action act, enum ev_table_kind t);
/* Ask what the write needs — a reason for cancel (required) and recover (optional), then the
 * operator or ticket id once a session — and go on with ops->go. A refused answer ends the
 * write, said. */
void ui_write_ask(struct app *a);
/* End the write: ops->clear, the state reset. */
void ui_write_end(void);

/* The confirmation: a text view whose y is ops->yes, whose other keys ops->key may take, and
 * whose any other key is No ("not applied", the write ended). */
struct text_view *ui_write_confirm_new(void);
bool ui_write_is_confirm(const struct view *v);

/* Who writes, copied for the write worker (the audit's who; the operator's clock-ok). */
struct ui_write_who {
	char *source, *os_user, *sudo_user, *ssh, *operator_id, *log_path;
	bool clock_ok;
};
void ui_write_who_take(struct app *a, int site, struct ui_write_who *w);
void ui_write_who_clear(struct ui_write_who *w);

/* On the write worker, before anything is written: the table's access checked (the clock
 * too), then the audit file opened and *who filled from w. Returns -1 with err set when the
 * check could not run, UI_WRITE_NOT_WRITABLE when the table may not be written
 * (access->why says why; access->clock_suspect for a suspected time zone),
 * UI_WRITE_NO_AUDIT when the audit file cannot be written (err says why), else 0: go on,
 * and close *log after. */
enum { UI_WRITE_NOT_WRITABLE = 1, UI_WRITE_NO_AUDIT = 2 };
int ui_write_prepare(struct ev_conn *c, const struct ui_write_who *w, enum ev_table_kind t,
                     const char *table_name, struct ev_access *access, struct ev_audit_log *log,
                     struct ev_audit_who *who, struct ev_error *err);
/* Submit the job that applies the write to its source's write connection: a tag of no view,
 * so no refresh or Esc of a view may supersede (KILL) a write; the console is applying until
 * done runs. */
void ui_write_submit(struct app *a, int tag, ev_job_fn fn, void *arg, void (*free_arg)(void *),
                     void (*done)(void *app, struct ev_job *job));
/* The view that opened the write, if it is still open; loaded again. */
struct view *ui_write_origin(struct app *a);
void ui_write_reload_origin(struct app *a);

#endif
