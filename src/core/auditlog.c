/* evtop — the local audit file (see auditlog.h). */
#include <config.h>

#include "core/auditlog.h"

#include "core/files.h"

#include <jansson.h>

#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

static const char *home_dir(void)
{
	const char *home = getenv("HOME");
	if (home != NULL && home[0] == '/')
		return home;
	struct passwd *pw = getpwuid(getuid());
	return pw != NULL && pw->pw_dir != NULL && pw->pw_dir[0] == '/' ? pw->pw_dir : NULL;
}

char *ev_audit_log_default_path(void)
{
	const char *state = getenv("XDG_STATE_HOME");
	/* The XDG spec: a relative value is invalid and must be ignored. */
	if (state != NULL && state[0] == '/')
		return ev_xasprintf("%s/evtop/audit.jsonl", state);
	const char *home = home_dir();
	return home ? ev_xasprintf("%s/.local/state/evtop/audit.jsonl", home) : NULL;
}

int ev_audit_log_open(struct ev_audit_log *log, const char *path, struct ev_error *err)
{
	log->fd = -1;
	log->path = NULL;
	if (path == NULL || path[0] == '\0')
		return ev_error_set(
		        err, EV_ERR_GENERIC,
		        "no place for the audit file: neither XDG_STATE_HOME nor a home "
		        "directory is known");
	if (ev_file_make_parents(path, "the audit directory", err) < 0)
		return -1;
	/* Never through a symbolic link, never a FIFO; the user's own, 0600. */
	int fd = ev_file_open_safe("the audit file", path, EV_FILE_PRIVATE, EV_FILE_APPEND, err);
	if (fd < 0)
		return -1;
	log->fd = fd;
	log->path = ev_xstrdup(path);
	return 0;
}

int ev_audit_log_append(struct ev_audit_log *log, const char *line, struct ev_error *err)
{
	size_t len = strlen(line), off = 0;

	if (log->fd < 0)
		return ev_error_set(err, EV_ERR_GENERIC, "the audit file is not open");
	while (off < len) {
		ssize_t n = write(log->fd, line + off, len - off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return ev_error_set(err, EV_ERR_GENERIC,
			                    "cannot write the audit file %s: %s", log->path,
			                    n < 0 ? strerror(errno) : "short write");
		off += (size_t)n;
	}
	if (fsync(log->fd) < 0)
		return ev_error_set(err, EV_ERR_GENERIC,
		                    "cannot flush the audit file %s to disk: %s", log->path,
		                    strerror(errno));
	return 0;
}

void ev_audit_log_close(struct ev_audit_log *log)
{
	if (log->fd >= 0)
		close(log->fd);
	log->fd = -1;
	free(log->path);
	log->path = NULL;
}

static char *env_dup(const char *name)
{
	const char *v = getenv(name);
	return v != NULL && v[0] != '\0' ? ev_xstrdup(v) : NULL;
}

void ev_audit_ident_fill(struct ev_audit_ident *id)
{
	struct passwd *pw = getpwuid(getuid());

	memset(id, 0, sizeof(*id));
	if (pw != NULL && pw->pw_name != NULL)
		id->os_user = ev_xstrdup(pw->pw_name);
	else if ((id->os_user = env_dup("USER")) == NULL &&
	         (id->os_user = env_dup("LOGNAME")) == NULL)
		id->os_user = ev_xasprintf("uid %lu", (unsigned long)getuid());
	id->sudo_user = env_dup("SUDO_USER");
	id->ssh_connection = env_dup("SSH_CONNECTION");
}

void ev_audit_ident_clear(struct ev_audit_ident *id)
{
	free(id->os_user);
	free(id->sudo_user);
	free(id->ssh_connection);
	memset(id, 0, sizeof(*id));
}

void ev_audit_time_now(char buf[32])
{
	struct timespec ts;
	struct tm tm;

	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	size_t n = strftime(buf, 32, "%Y-%m-%dT%H:%M:%S", &tm);
	unsigned ms = (unsigned)(ts.tv_nsec / 1000000) % 1000;
	buf[n++] = '.';
	buf[n++] = (char)('0' + ms / 100);
	buf[n++] = (char)('0' + ms / 10 % 10);
	buf[n++] = (char)('0' + ms % 10);
	buf[n++] = 'Z';
	buf[n] = '\0';
}

static char *json_str_or_null(json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);
	if (json_is_string(v))
		return ev_xstrdup(json_string_value(v));
	if (json_is_integer(v))
		return ev_xasprintf("%lld", (long long)json_integer_value(v));
	return NULL;
}

long ev_audit_log_read(const char *path, const char *since, struct ev_audit_entry **out,
                       struct ev_error *err)
{
	*out = NULL;
	int fd = ev_file_open_safe("the audit file", path, EV_FILE_PRIVATE, EV_FILE_READ, err);
	if (fd < 0) {
		if (errno != ENOENT)
			return -1;
		ev_error_clear(err);
		return 0;
	}
	FILE *f = fdopen(fd, "r");
	if (f == NULL) {
		close(fd);
		return ev_error_set(err, EV_ERR_GENERIC, "cannot read %s: %s", path,
		                    strerror(errno));
	}
	/* Bounded: the tail of a file that may have grown for years. */
	if (fseek(f, 0, SEEK_END) == 0) {
		long size = ftell(f);
		if (size > 4L * 1024 * 1024) {
			fseek(f, size - 4L * 1024 * 1024, SEEK_SET);
			int ch;
			while ((ch = fgetc(f)) != EOF && ch != '\n')
				;
		} else {
			fseek(f, 0, SEEK_SET);
		}
	}
	long n = 0, cap = 0;
	char *line = NULL;
	size_t lcap = 0;
	ssize_t len;
	while ((len = getline(&line, &lcap, f)) > 0) {
		json_error_t jerr;
		json_t *o = json_loadb(line, (size_t)len, 0, &jerr);
		if (o == NULL)
			continue;
		const char *result = json_string_value(json_object_get(o, "result"));
		const char *time = json_string_value(json_object_get(o, "time"));
		if (result == NULL || strcmp(result, "intent") == 0 || time == NULL ||
		    (since != NULL && strcmp(time, since) < 0)) {
			json_decref(o);
			continue;
		}
		if (n == cap) {
			cap = cap ? cap * 2 : 32;
			*out = ev_xrealloc(*out, (size_t)cap * sizeof(**out));
		}
		struct ev_audit_entry *e = &(*out)[n++];
		e->time = json_str_or_null(o, "time");
		e->action = json_str_or_null(o, "action");
		e->table = json_str_or_null(o, "table");
		e->id = json_str_or_null(o, "id");
		e->event_no = json_str_or_null(o, "event_no");
		e->result = json_str_or_null(o, "result");
		e->reason = json_str_or_null(o, "reason");
		e->error = json_str_or_null(o, "error");
		json_decref(o);
	}
	free(line);
	fclose(f);
	return n;
}

void ev_audit_entries_free(struct ev_audit_entry **entries, long n)
{
	struct ev_audit_entry *e = *entries;
	for (long i = 0; e != NULL && i < n; i++) {
		free(e[i].time);
		free(e[i].action);
		free(e[i].table);
		free(e[i].id);
		free(e[i].event_no);
		free(e[i].result);
		free(e[i].reason);
		free(e[i].error);
	}
	free(e);
	*entries = NULL;
}
