/* evtop — the files evtop opens itself (the audit file, --log-sql, exports, the config file):
 * opened without blocking on a FIFO, checked with fstat against a policy, refused with a
 * message that says how to fix the file. The option files are the client library's own. */
#ifndef EV_CORE_FILES_H
#define EV_CORE_FILES_H

#include "core/util.h"

#include <stdbool.h>
#include <stdio.h>
#include <sys/types.h>

/* What a file is for, and so what it must be. */
enum ev_file_kind {
	/* The audit file, --log-sql, exports: written by evtop and holding what operators did
	 * and the statements' parameters. A regular file of the user's (the effective uid), mode
	 * 0600 (created so); never opened through a symbolic link. */
	EV_FILE_PRIVATE,
	/* A config file, read: a regular file of the user's or root's that neither its group
	 * nor others may write (a root-owned 0644 file in /etc, as packages install, is fine).
	 * A symbolic link is followed (a config linked from a dotfiles folder): the file it
	 * reaches is the one checked. */
	EV_FILE_CONFIG,
};

/* How a file is opened. */
enum ev_file_how {
	EV_FILE_READ,    /* read an existing file */
	EV_FILE_APPEND,  /* append, created 0600 if missing */
	EV_FILE_CREATE,  /* a new file, created 0600; an existing one is EV_FILE_EXISTS */
	EV_FILE_REPLACE, /* an existing regular file of the user's emptied and made 0600, or a
	                    new one created (only after the operator said yes) */
};

#define EV_FILE_EXISTS (-2) /* ev_file_open_safe: EV_FILE_CREATE found a regular file there */

/* Whether a file of this type and mode (st_mode), owned by `owner`, may be used as `kind`
 * by a process of effective uid `euid`: 0, or -1 with err saying why and how to fix it, in
 * words that begin with `what` and path ("the config file /etc/evtop/config may be ...").
 * `check_mode` false skips the PRIVATE mode rule (a file about to be made 0600). Pure: no system
 * call. */
int ev_file_policy(enum ev_file_kind kind, mode_t mode, uid_t owner, uid_t euid, bool check_mode,
                   const char *what, const char *path, struct ev_error *err);

/* Open path for `how` as `kind`: O_NOFOLLOW (PRIVATE), O_NONBLOCK so that a FIFO never
 * hangs the open (cleared again for the regular file that passed), O_CLOEXEC, O_NOCTTY;
 * then fstat and ev_file_policy. Returns the descriptor, EV_FILE_EXISTS (see above, err not
 * set), or -1 with err set and errno as the failing call left it (ENOENT: missing). A
 * refused file is closed and left as it was. */
int ev_file_open_safe(const char *what, const char *path, enum ev_file_kind kind,
                      enum ev_file_how how, struct ev_error *err);

/* ev_file_open_safe as a stdio stream ("r", "a" or "w" after how); NULL with err set (an
 * existing file for EV_FILE_CREATE is an error here). */
FILE *ev_file_stream(const char *what, const char *path, enum ev_file_kind kind,
                     enum ev_file_how how, struct ev_error *err);

/* Create the missing directories of path's parent (mode 0700), like mkdir -p; `what` names
 * them in the error ("the audit directory"). Returns -1 with err set. */
int ev_file_make_parents(const char *path, const char *what, struct ev_error *err);

/* The default folder of exports: the state directory's exports/ ($XDG_STATE_HOME/evtop/
 * exports, else ~/.local/state/evtop/exports, beside the audit file). malloc'd, or NULL when
 * no home directory is known. Main thread (getpwuid). */
char *ev_file_export_dir_default(void);
/* Where an export named `name` goes: name itself when it is an absolute path, else in dir
 * (NULL: ev_file_export_dir_default). malloc'd, or NULL when there is no folder. */
char *ev_file_export_path(const char *dir, const char *name);

#endif
