/* evtop — the console's exports (event_nos, a row, a payload, a statement): a name without a
 * leading / goes into the export folder (export_dir, default the state directory's exports/,
 * created 0700); the file is created 0600 with O_EXCL|O_NOFOLLOW; an existing regular file is
 * replaced only after the operator says y; a symbolic link or anything else is never
 * replaced. Every result names the full path. */
#include <config.h>

#include "core/files.h"
#include "core/i18n.h"
#include "core/style.h"
#include "ui/app.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

/* The export waiting for the operator's y/N (the prompt is modal: one at a time). */
static struct {
	bool active;
	char *path;
	ui_export_fn fn;
	void *ctx;
	void (*free_ctx)(void *);
} X;

static void pending_clear(void)
{
	if (X.free_ctx != NULL && X.ctx != NULL)
		X.free_ctx(X.ctx);
	free(X.path);
	memset(&X, 0, sizeof(X));
}

/* Hand the open file to the writer (which owns ctx and the stream from here). */
static void hand_over(struct app *a, int fd, const char *path, ui_export_fn fn, void *ctx,
                      void (*free_ctx)(void *))
{
	FILE *f = fdopen(fd, "w");
	if (f == NULL) {
		close(fd);
		app_message(a, EV_STYLE_ERROR, _("export: cannot write %s"), path);
		if (free_ctx != NULL && ctx != NULL)
			free_ctx(ctx);
		return;
	}
	fn(a, f, path, ctx);
}

static void replace_done(struct app *a, const char *text)
{
	if (!X.active)
		return;
	if (strcasecmp(text, "y") != 0 && strcasecmp(text, "yes") != 0) {
		app_message(a, EV_STYLE_NORMAL, _("not replaced: %s (nothing written)"), X.path);
		pending_clear();
		return;
	}
	struct ev_error err = {0};
	/* TRANSLATORS: what a file is, in "cannot open %s %s: …" (the path follows). */
	int fd = ev_file_open_safe(_("the file"), X.path, EV_FILE_PRIVATE, EV_FILE_REPLACE, &err);
	if (fd < 0) {
		app_message(a, EV_STYLE_ERROR, _("export: %s (nothing written)"), err.msg);
		pending_clear();
		return;
	}
	char *path = X.path;
	ui_export_fn fn = X.fn;
	void *ctx = X.ctx;
	void (*free_ctx)(void *) = X.free_ctx;
	memset(&X, 0, sizeof(X));
	hand_over(a, fd, path, fn, ctx, free_ctx);
	free(path);
}

void ui_export(struct app *a, const char *name, ui_export_fn fn, void *ctx,
               void (*free_ctx)(void *))
{
	struct ev_error err = {0};

	pending_clear();
	if (name == NULL || name[0] == '\0') {
		app_message(a, EV_STYLE_ERROR, "%s",
		            _("export: no file name given (nothing written)"));
		if (free_ctx != NULL && ctx != NULL)
			free_ctx(ctx);
		return;
	}
	char *path = ev_file_export_path(a->cfg->export_dir, name);
	if (path == NULL) {
		app_message(a, EV_STYLE_ERROR, "%s",
		            _("export: no export folder (no home directory or XDG_STATE_HOME): set "
		              "export_dir in the config or give a path starting with /"));
		if (free_ctx != NULL && ctx != NULL)
			free_ctx(ctx);
		return;
	}
	/* The export folder (and folders named under it) is made as needed; a path of the
	 * operator's own must exist. */
	/* TRANSLATORS: what a folder and a file are, in "cannot create %s %s: …". */
	int fd = name[0] == '/' || ev_file_make_parents(path, _("the export folder"), &err) == 0
	                 ? ev_file_open_safe(_("the file"), path, EV_FILE_PRIVATE, EV_FILE_CREATE,
	                                     &err)
	                 : -1;
	if (fd == EV_FILE_EXISTS) {
		X.active = true;
		X.path = path;
		X.fn = fn;
		X.ctx = ctx;
		X.free_ctx = free_ctx;
		char label[sizeof(a->prompt_label)];
		/* TRANSLATORS: a prompt; y (or yes) replaces the file, in every language. */
		snprintf(label, sizeof(label), _("%s exists: replace it? (y/N) "), path);
		app_prompt(a, label, "", replace_done);
		return;
	}
	if (fd < 0) {
		app_message(a, EV_STYLE_ERROR, _("export: %s (nothing written)"), err.msg);
		if (free_ctx != NULL && ctx != NULL)
			free_ctx(ctx);
		free(path);
		return;
	}
	hand_over(a, fd, path, fn, ctx, free_ctx);
	free(path);
}
