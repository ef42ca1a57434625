/* evtop — the local audit file: one JSON line per operator write (see core/guard.h for the
 * record), appended to $XDG_STATE_HOME/evtop/audit.jsonl (else ~/.local/state/evtop/
 * audit.jsonl), created 0600 in directories created 0700, opened O_APPEND, and every line
 * written and fsync'ed before the action it records is reported done. */
#ifndef EV_CORE_AUDITLOG_H
#define EV_CORE_AUDITLOG_H

#include "core/guard.h"
#include "core/util.h"

struct ev_audit_log {
	int fd; /* -1 when closed */
	char *path;
};

/* The file's path: $XDG_STATE_HOME/evtop/audit.jsonl when that is an absolute path, else
 * $HOME (or the password database's home)/.local/state/evtop/audit.jsonl. malloc'd, or NULL
 * when no home directory is known. Main thread (getpwuid). */
char *ev_audit_log_default_path(void);
/* Create the missing directories of path (0700) and open the file for appending (created
 * 0600) through ev_file_open_safe: a symbolic link, a FIFO or anything but a regular file
 * of the user's with mode 0600 is refused. Returns -1 with err saying why and how to fix it
 * (the action must then be refused). */
int ev_audit_log_open(struct ev_audit_log *log, const char *path, struct ev_error *err);
/* Append one line (it ends with '\n') with a single write, then fsync. Returns -1 with err
 * set if the line is not safely on disk. */
int ev_audit_log_append(struct ev_audit_log *log, const char *line, struct ev_error *err);
void ev_audit_log_close(struct ev_audit_log *log);

/* The session's identity for the audit (strings malloc'd, freed by ev_audit_ident_clear). */
struct ev_audit_ident {
	char *os_user;
	char *sudo_user;
	char *ssh_connection;
};

/* The OS user (password database, else $USER/$LOGNAME, else "uid N"), SUDO_USER and
 * SSH_CONNECTION from the environment. Main thread. */
void ev_audit_ident_fill(struct ev_audit_ident *id);
void ev_audit_ident_clear(struct ev_audit_ident *id);
/* The local clock as ISO 8601 UTC with milliseconds: "2026-06-01T12:00:00.123Z". */
void ev_audit_time_now(char buf[32]);

/* One result line of the audit file, as the actions view shows it (strings malloc'd). */
struct ev_audit_entry {
	char *time, *action, *table, *id, *event_no, *result, *reason, *error;
};

/* The result lines (not the intent lines) written at or after `since` (an ISO time as
 * ev_audit_time_now writes it; NULL: all), read from the last 4 MB of the file at most, in
 * file order. A missing file is no entries; one ev_audit_log_open would refuse is an error.
 * Returns the count (-1 with err if unreadable);
 * free with ev_audit_entries_free. */
long ev_audit_log_read(const char *path, const char *since, struct ev_audit_entry **out,
                       struct ev_error *err);
void ev_audit_entries_free(struct ev_audit_entry **entries, long n);

#endif
