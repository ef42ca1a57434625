/* core/files: the policy of the files evtop opens itself (pure, every branch with the stat
 * results given, owners other than the test's own included), and the opening of them: a
 * symbolic link, a FIFO, a file of the wrong mode refused and left as it was. */
#include <config.h>

#include "core/files.h"

#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int policy(enum ev_file_kind kind, mode_t mode, uid_t owner, uid_t euid,
                  struct ev_error *err)
{
	ev_error_clear(err);
	return ev_file_policy(kind, mode, owner, euid, true, "the file", "/p", err);
}

START_TEST(policy_private)
{
	struct ev_error err = {0};

	ck_assert_int_eq(policy(EV_FILE_PRIVATE, S_IFREG | 0600, 1000, 1000, &err), 0);
	ck_assert_int_eq(policy(EV_FILE_PRIVATE, S_IFREG | 0400, 1000, 1000, &err), 0);
	ck_assert_int_eq(policy(EV_FILE_PRIVATE, S_IFREG | 0600, 0, 0, &err), 0);
	/* Any bit for the group or others: refused, saying how to fix it. */
	ck_assert_int_eq(policy(EV_FILE_PRIVATE, S_IFREG | 0644, 1000, 1000, &err), -1);
	ck_assert_str_eq(err.msg, "the file /p may be read or written by others (mode 0644), and "
	                          "evtop keeps the files it writes private to you; fix it with: "
	                          "chmod 600 /p");
	ck_assert_int_eq(policy(EV_FILE_PRIVATE, S_IFREG | 0640, 1000, 1000, &err), -1);
	ck_assert_int_eq(policy(EV_FILE_PRIVATE, S_IFREG | 0601, 1000, 1000, &err), -1);
	/* ... unless the file is about to be made 0600 (a replaced export). */
	ck_assert_int_eq(
	        ev_file_policy(EV_FILE_PRIVATE, S_IFREG | 0644, 1000, 1000, false, "x", "/p", &err),
	        0);
	/* Someone else's file, root's too, even for root. */
	ck_assert_int_eq(policy(EV_FILE_PRIVATE, S_IFREG | 0600, 0, 1000, &err), -1);
	ck_assert_str_eq(err.msg, "the file /p belongs to uid 0, not to you (uid 1000): evtop "
	                          "writes only files of your own");
	ck_assert_int_eq(policy(EV_FILE_PRIVATE, S_IFREG | 0600, 1000, 0, &err), -1);
	ck_assert_int_eq(
	        ev_file_policy(EV_FILE_PRIVATE, S_IFREG | 0644, 1001, 1000, false, "x", "/p", &err),
	        -1);
}
END_TEST

START_TEST(policy_config)
{
	struct ev_error err = {0};

	ck_assert_int_eq(policy(EV_FILE_CONFIG, S_IFREG | 0600, 1000, 1000, &err), 0);
	ck_assert_int_eq(policy(EV_FILE_CONFIG, S_IFREG | 0644, 1000, 1000, &err), 0);
	/* A root-owned 0644 file, as a package installs in /etc: fine for anyone. */
	ck_assert_int_eq(policy(EV_FILE_CONFIG, S_IFREG | 0644, 0, 1000, &err), 0);
	ck_assert_int_eq(policy(EV_FILE_CONFIG, S_IFREG | 0444, 0, 0, &err), 0);
	/* Another user's: refused. */
	ck_assert_int_eq(policy(EV_FILE_CONFIG, S_IFREG | 0644, 1001, 1000, &err), -1);
	ck_assert_int_eq(err.code, EV_ERR_CONFIG);
	ck_assert_str_eq(err.msg, "the file /p belongs to uid 1001, neither to you (uid 1000) nor "
	                          "to root, and whoever owns a config decides where evtop "
	                          "connects and what it writes");
	ck_assert_int_eq(policy(EV_FILE_CONFIG, S_IFREG | 0600, 1000, 0, &err), -1);
	/* Writable by the group or by others: refused, root's too. */
	ck_assert_int_eq(policy(EV_FILE_CONFIG, S_IFREG | 0664, 1000, 1000, &err), -1);
	ck_assert_str_eq(err.msg, "the file /p may be written by its group (mode 0664), and "
	                          "whoever can change a config decides where evtop connects and "
	                          "what it writes; fix it with: chmod go-w /p");
	ck_assert_int_eq(policy(EV_FILE_CONFIG, S_IFREG | 0646, 0, 1000, &err), -1);
	ck_assert_ptr_nonnull(strstr(err.msg, "may be written by anyone (mode 0646)"));
	ck_assert_int_eq(policy(EV_FILE_CONFIG, S_IFREG | 0620, 0, 0, &err), -1);
}
END_TEST

START_TEST(policy_file_types)
{
	struct ev_error err = {0};
	static const struct {
		mode_t type;
		const char *name;
	} types[] = {{S_IFIFO, "a FIFO"},
	             {S_IFDIR, "a directory"},
	             {S_IFCHR, "a character device"},
	             {S_IFBLK, "a block device"},
	             {S_IFSOCK, "a socket"},
	             {S_IFLNK, "a symbolic link"}};

	for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
		for (int k = 0; k < 2; k++) {
			enum ev_file_kind kind = k ? EV_FILE_CONFIG : EV_FILE_PRIVATE;
			ck_assert_int_eq(policy(kind, types[i].type | 0600, 1000, 1000, &err), -1);
			char want[128];
			snprintf(want, sizeof(want), "the file /p is %s, not a regular file",
			         types[i].name);
			ck_assert_msg(strncmp(err.msg, want, strlen(want)) == 0, "%s", err.msg);
		}
	}
	ck_assert_int_eq(policy(EV_FILE_PRIVATE, S_IFLNK | 0777, 1000, 1000, &err), -1);
	ck_assert_str_eq(err.msg, "the file /p is a symbolic link, not a regular file; evtop never "
	                          "opens its own files through a link: name the file itself");
}
END_TEST

static char *tmpdir;

static char *in_tmp(const char *name)
{
	char *p = NULL;
	ck_assert_int_ne(asprintf(&p, "%s/%s", tmpdir, name), -1);
	return p;
}

static void make_tmpdir(void)
{
	char tmpl[] = "/tmp/evtop-files-XXXXXX";
	ck_assert_ptr_nonnull(mkdtemp(tmpl));
	tmpdir = strdup(tmpl);
}

static void put(const char *path, const char *text, mode_t mode)
{
	FILE *f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	fclose(f);
	ck_assert_int_eq(chmod(path, mode), 0);
}

static char *slurp(const char *path)
{
	static char buf[256];
	FILE *f = fopen(path, "r");
	ck_assert_ptr_nonnull(f);
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

START_TEST(open_private)
{
	struct ev_error err = {0};
	struct stat st;

	make_tmpdir();
	char *target = in_tmp("target"), *link = in_tmp("link"), *fifo = in_tmp("fifo");
	char *fresh = in_tmp("fresh"), *open644 = in_tmp("open644");
	put(target, "precious\n", 0600);
	ck_assert_int_eq(symlink(target, link), 0);
	ck_assert_int_eq(mkfifo(fifo, 0600), 0);
	put(open644, "x\n", 0644);

	/* A symbolic link is never written through, for any way of opening. */
	for (int how = EV_FILE_READ; how <= EV_FILE_REPLACE; how++) {
		ev_error_clear(&err);
		ck_assert_int_eq(ev_file_open_safe("the export", link, EV_FILE_PRIVATE,
		                                   (enum ev_file_how)how, &err),
		                 -1);
		ck_assert_msg(strstr(err.msg, "is a symbolic link, not a regular file") != NULL,
		              "%d: %s", how, err.msg);
	}
	ck_assert_str_eq(slurp(target), "precious\n");
	ck_assert_int_eq(lstat(link, &st), 0);
	ck_assert(S_ISLNK(st.st_mode));

	/* A FIFO, with no one at the other end: refused at once, for reading and writing. */
	for (int how = EV_FILE_READ; how <= EV_FILE_REPLACE; how++) {
		ev_error_clear(&err);
		ck_assert_int_eq(ev_file_open_safe("the audit file", fifo, EV_FILE_PRIVATE,
		                                   (enum ev_file_how)how, &err),
		                 -1);
		ck_assert_msg(strstr(err.msg, "is a FIFO, not a regular file") != NULL, "%d: %s",
		              how, err.msg);
	}
	ev_error_clear(&err);
	ck_assert_int_eq(
	        ev_file_open_safe("the config file", fifo, EV_FILE_CONFIG, EV_FILE_READ, &err), -1);
	ck_assert_ptr_nonnull(strstr(err.msg, "is a FIFO"));

	/* Appending: created 0600 whatever the umask, a file open to others refused as is. */
	mode_t old = umask(0);
	int fd = ev_file_open_safe("the audit file", fresh, EV_FILE_PRIVATE, EV_FILE_APPEND, &err);
	umask(old);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(fstat(fd, &st), 0);
	ck_assert_int_eq(st.st_mode & 07777, 0600);
	ck_assert_int_eq(fcntl(fd, F_GETFL) & O_NONBLOCK, 0);
	ck_assert_int_eq(write(fd, "a\n", 2), 2);
	close(fd);
	ck_assert_int_eq(
	        ev_file_open_safe("the audit file", open644, EV_FILE_PRIVATE, EV_FILE_APPEND, &err),
	        -1);
	ck_assert_ptr_nonnull(strstr(err.msg, "(mode 0644)"));
	ck_assert_ptr_nonnull(strstr(err.msg, "chmod 600"));
	ck_assert_int_eq(stat(open644, &st), 0);
	ck_assert_int_eq(st.st_mode & 07777, 0644);
	ck_assert_str_eq(slurp(open644), "x\n");

	/* Creating: an existing regular file is reported, untouched; replacing empties it and
	 * makes it 0600. */
	ck_assert_int_eq(
	        ev_file_open_safe("the export", open644, EV_FILE_PRIVATE, EV_FILE_CREATE, &err),
	        EV_FILE_EXISTS);
	ck_assert_str_eq(slurp(open644), "x\n");
	fd = ev_file_open_safe("the export", open644, EV_FILE_PRIVATE, EV_FILE_REPLACE, &err);
	ck_assert_int_ge(fd, 0);
	close(fd);
	ck_assert_int_eq(stat(open644, &st), 0);
	ck_assert_int_eq(st.st_mode & 07777, 0600);
	ck_assert_int_eq(st.st_size, 0);
	/* A missing file: ENOENT for the caller to judge. */
	char *none = in_tmp("none");
	ck_assert_int_eq(
	        ev_file_open_safe("the config file", none, EV_FILE_CONFIG, EV_FILE_READ, &err), -1);
	ck_assert_int_eq(errno, ENOENT);
	/* A config may be reached through a link: the file it reaches is the one judged. */
	fd = ev_file_open_safe("the config file", link, EV_FILE_CONFIG, EV_FILE_READ, &err);
	ck_assert_int_ge(fd, 0);
	close(fd);
	ck_assert_int_eq(chmod(target, 0620), 0);
	ck_assert_int_eq(
	        ev_file_open_safe("the config file", link, EV_FILE_CONFIG, EV_FILE_READ, &err), -1);
	ck_assert_ptr_nonnull(strstr(err.msg, "may be written by its group"));

	unlink(target);
	unlink(link);
	unlink(fifo);
	unlink(fresh);
	unlink(open644);
	rmdir(tmpdir);
	free(target);
	free(link);
	free(fifo);
	free(fresh);
	free(open644);
	free(none);
	free(tmpdir);
}
END_TEST

START_TEST(export_paths)
{
	setenv("XDG_STATE_HOME", "/st", 1);
	char *d = ev_file_export_dir_default();
	ck_assert_str_eq(d, "/st/evtop/exports");
	free(d);
	char *p = ev_file_export_path(NULL, "a.txt");
	ck_assert_str_eq(p, "/st/evtop/exports/a.txt");
	free(p);
	p = ev_file_export_path("/x/", "a.txt");
	ck_assert_str_eq(p, "/x/a.txt");
	free(p);
	p = ev_file_export_path("/x", "sub/a.txt");
	ck_assert_str_eq(p, "/x/sub/a.txt");
	free(p);
	p = ev_file_export_path("/x", "/abs/a.txt");
	ck_assert_str_eq(p, "/abs/a.txt");
	free(p);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("files");
	TCase *tc = tcase_create("files");
	tcase_add_test(tc, policy_private);
	tcase_add_test(tc, policy_config);
	tcase_add_test(tc, policy_file_types);
	tcase_add_test(tc, open_private);
	tcase_add_test(tc, export_paths);
	suite_add_tcase(s, tc);
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? 0 : 1;
}
