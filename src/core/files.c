/* evtop — the files evtop opens itself (see files.h). */
#include <config.h>

#include "core/files.h"

#include "core/auditlog.h"
#include "core/i18n.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *type_name(mode_t mode)
{
	if (S_ISDIR(mode))
		return _("a directory");
	if (S_ISFIFO(mode))
		return _("a FIFO");
	if (S_ISLNK(mode))
		return _("a symbolic link");
	if (S_ISSOCK(mode))
		return _("a socket");
	if (S_ISCHR(mode))
		return _("a character device");
	if (S_ISBLK(mode))
		return _("a block device");
	return _("not a regular file");
}

/* "the audit file X is a symbolic link, not a regular file; ...". */
static int not_regular(const char *what, const char *path, mode_t mode, struct ev_error *err,
                       int code)
{
	return ev_error_set(
	        err, code, _("%s %s is %s, not a regular file%s"), what, path, type_name(mode),
	        S_ISLNK(mode) ? _("; evtop never opens its own files through a link: name "
	                          "the file itself")
	                      : "");
}

int ev_file_policy(enum ev_file_kind kind, mode_t mode, uid_t owner, uid_t euid, bool check_mode,
                   const char *what, const char *path, struct ev_error *err)
{
	int code = kind == EV_FILE_CONFIG ? EV_ERR_CONFIG : EV_ERR_GENERIC;
	unsigned perm = (unsigned)(mode & 07777);

	if (!S_ISREG(mode))
		return not_regular(what, path, mode, err, code);
	if (kind == EV_FILE_CONFIG) {
		if (owner != euid && owner != 0)
			return ev_error_set(
			        err, code,
			        _("%s %s belongs to uid %lu, neither to you (uid %lu) nor to "
			          "root, and whoever owns a config decides where evtop "
			          "connects and what it writes"),
			        what, path, (unsigned long)owner, (unsigned long)euid);
		if ((perm & 022) != 0)
			return ev_error_set(
			        err, code,
			        _("%s %s may be written by %s (mode %04o), and whoever can "
			          "change a config decides where evtop connects and what it "
			          "writes; fix it with: chmod go-w %s"),
			        what, path, (perm & 002) ? _("anyone") : _("its group"), perm,
			        path);
		return 0;
	}
	if (owner != euid)
		return ev_error_set(
		        err, code,
		        _("%s %s belongs to uid %lu, not to you (uid %lu): evtop writes "
		          "only files of your own"),
		        what, path, (unsigned long)owner, (unsigned long)euid);
	if (check_mode && (perm & 077) != 0)
		return ev_error_set(
		        err, code,
		        _("%s %s may be read or written by others (mode %04o), and evtop "
		          "keeps the files it writes private to you; fix it with: chmod "
		          "600 %s"),
		        what, path, perm, path);
	return 0;
}

/* Why open(2) failed, in words that name the file's type when that is the reason. */
static int open_failed(const char *what, const char *path, int saved, struct ev_error *err,
                       int code)
{
	struct stat st;
	if ((saved == ELOOP || saved == EMLINK || saved == ENXIO || saved == EISDIR ||
	     saved == EEXIST) &&
	    lstat(path, &st) == 0 && !S_ISREG(st.st_mode))
		not_regular(what, path, st.st_mode, err, code);
	else
		ev_error_set(err, code, _("cannot open %s %s: %s"), what, path, strerror(saved));
	errno = saved;
	return -1;
}

int ev_file_open_safe(const char *what, const char *path, enum ev_file_kind kind,
                      enum ev_file_how how, struct ev_error *err)
{
	int code = kind == EV_FILE_CONFIG ? EV_ERR_CONFIG : EV_ERR_GENERIC;
	int flags = O_NONBLOCK | O_CLOEXEC | O_NOCTTY;
	struct stat st;

	if (kind == EV_FILE_PRIVATE)
		flags |= O_NOFOLLOW;
	switch (how) {
	case EV_FILE_READ:
		flags |= O_RDONLY;
		break;
	case EV_FILE_APPEND:
		flags |= O_WRONLY | O_APPEND | O_CREAT;
		break;
	case EV_FILE_CREATE:
		flags |= O_WRONLY | O_CREAT | O_EXCL;
		break;
	case EV_FILE_REPLACE:
		flags |= O_WRONLY | O_CREAT;
		break;
	}
	int fd = open(path, flags, 0600);
	if (fd < 0) {
		int saved = errno;
		if (how == EV_FILE_CREATE && saved == EEXIST && lstat(path, &st) == 0 &&
		    S_ISREG(st.st_mode))
			return EV_FILE_EXISTS;
		return open_failed(what, path, saved, err, code);
	}
	if (fstat(fd, &st) < 0) {
		int saved = errno;
		close(fd);
		ev_error_set(err, code, _("cannot open %s %s: %s"), what, path, strerror(saved));
		errno = saved;
		return -1;
	}
	if (ev_file_policy(kind, st.st_mode, st.st_uid, geteuid(), how != EV_FILE_REPLACE, what,
	                   path, err) < 0) {
		close(fd);
		errno = EPERM;
		return -1;
	}
	int fl = fcntl(fd, F_GETFL);
	if (fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) < 0 ||
	    (how == EV_FILE_REPLACE && (ftruncate(fd, 0) < 0 || fchmod(fd, 0600) < 0))) {
		int saved = errno;
		close(fd);
		ev_error_set(err, code, _("cannot open %s %s: %s"), what, path, strerror(saved));
		errno = saved;
		return -1;
	}
	return fd;
}

FILE *ev_file_stream(const char *what, const char *path, enum ev_file_kind kind,
                     enum ev_file_how how, struct ev_error *err)
{
	int fd = ev_file_open_safe(what, path, kind, how, err);
	if (fd == EV_FILE_EXISTS) {
		ev_error_set(err, EV_ERR_GENERIC, _("%s %s exists already: not replaced"), what,
		             path);
		return NULL;
	}
	if (fd < 0)
		return NULL;
	FILE *f = fdopen(fd, how == EV_FILE_READ ? "r" : how == EV_FILE_APPEND ? "a" : "w");
	if (f == NULL) {
		ev_error_set(err, EV_ERR_GENERIC, _("cannot open %s %s: %s"), what, path,
		             strerror(errno));
		close(fd);
	}
	return f;
}

int ev_file_make_parents(const char *path, const char *what, struct ev_error *err)
{
	char *dir = ev_xstrdup(path);
	char *slash = strrchr(dir, '/');
	int rc = 0;

	if (slash == NULL || slash == dir) {
		free(dir);
		return 0;
	}
	*slash = '\0';
	for (char *p = dir + 1;; p++) {
		if (*p != '/' && *p != '\0')
			continue;
		char saved = *p;
		*p = '\0';
		if (mkdir(dir, 0700) < 0 && errno != EEXIST) {
			rc = ev_error_set(err, EV_ERR_GENERIC, _("cannot create %s %s: %s"), what,
			                  dir, strerror(errno));
			break;
		}
		*p = saved;
		if (saved == '\0')
			break;
	}
	free(dir);
	return rc;
}

char *ev_file_export_dir_default(void)
{
	char *audit = ev_audit_log_default_path();
	char *slash = audit ? strrchr(audit, '/') : NULL;
	char *dir = NULL;
	if (slash != NULL) {
		*slash = '\0';
		dir = ev_xasprintf("%s/exports", audit);
	}
	free(audit);
	return dir;
}

char *ev_file_export_path(const char *dir, const char *name)
{
	if (name[0] == '/')
		return ev_xstrdup(name);
	char *def = dir == NULL ? ev_file_export_dir_default() : NULL;
	const char *d = dir ? dir : def;
	char *path = NULL;
	if (d != NULL) {
		size_t n = strlen(d);
		path = ev_xasprintf("%s%s%s", d, n > 0 && d[n - 1] == '/' ? "" : "/", name);
	}
	free(def);
	return path;
}
