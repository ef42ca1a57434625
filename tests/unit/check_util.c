/* core/util: errors, allocation, the byte buffer. */
#include <config.h>

#include "core/util.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

START_TEST(error_set_and_clear)
{
	struct ev_error err = {0};
	ck_assert_int_eq(ev_error_set(&err, EV_ERR_CONFIG, "line %d: %s", 7, "bad"), -1);
	ck_assert_int_eq(err.code, EV_ERR_CONFIG);
	ck_assert_str_eq(err.msg, "line 7: bad");
	ev_error_clear(&err);
	ck_assert_int_eq(err.code, 0);
	ck_assert_str_eq(err.msg, "");
	/* A zero code still means "an error". */
	ev_error_set(&err, 0, "x");
	ck_assert_int_eq(err.code, EV_ERR_GENERIC);
	/* A NULL error is allowed and ignored. */
	ck_assert_int_eq(ev_error_set(NULL, 1, "y"), -1);
}
END_TEST

START_TEST(error_truncates_long_message)
{
	struct ev_error err;
	char big[2000];
	memset(big, 'a', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	ev_error_set(&err, 1, "%s", big);
	ck_assert_uint_eq(strlen(err.msg), sizeof(err.msg) - 1);
}
END_TEST

START_TEST(buf_grows_and_steals)
{
	struct ev_buf b;
	ev_buf_init(&b);
	for (int i = 0; i < 1000; i++)
		ev_buf_printf(&b, "%d,", i % 10);
	ck_assert_uint_eq(b.len, 2000);
	ev_buf_addc(&b, 'x');
	ev_buf_add(&b, "yz", 1);
	char *s = ev_buf_steal(&b);
	ck_assert_uint_eq(strlen(s), 2002);
	ck_assert_str_eq(s + 1998, "9,xy");
	ck_assert_ptr_null(b.data);
	free(s);
	s = ev_buf_steal(&b);
	ck_assert_str_eq(s, "");
	free(s);
}
END_TEST

START_TEST(xasprintf_and_strndup)
{
	char *s = ev_xasprintf("%s-%05d", "ev", 42);
	ck_assert_str_eq(s, "ev-00042");
	free(s);
	s = ev_xstrndup("abcdef", 3);
	ck_assert_str_eq(s, "abc");
	free(s);
}
END_TEST

static void hook(void)
{
	/* The fatal path must run the terminal-restoring hook before it says anything. */
	fputs("hook\n", stderr);
}

/* ev_fatal in a child whose stderr is a pipe: it exits 2, and its stderr shows the hook ran
 * first, then the message. */
START_TEST(fatal_runs_hook_and_exits_2)
{
	int fd[2];
	ck_assert_int_eq(pipe(fd), 0);
	pid_t pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		dup2(fd[1], STDERR_FILENO);
		close(fd[0]);
		close(fd[1]);
		ev_fatal_set_hook(hook);
		ev_fatal("boom %d", 1);
		_exit(99); /* not reached */
	}
	close(fd[1]);
	char out[256] = "";
	size_t n = 0;
	ssize_t r;
	while (n < sizeof(out) - 1 && (r = read(fd[0], out + n, sizeof(out) - 1 - n)) > 0)
		n += (size_t)r;
	out[n] = '\0';
	close(fd[0]);
	int status = 0;
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert(WIFEXITED(status));
	ck_assert_int_eq(WEXITSTATUS(status), 2);
	ck_assert_str_eq(out, "hook\nevtop: boom 1\n");
}
END_TEST

/* RFC 4648's test vectors, and the OSC 52 sequence around them. */
START_TEST(base64_and_osc52)
{
	static const char *const in[] = {"", "f", "fo", "foo", "foob", "fooba", "foobar"};
	static const char *const out[] = {"",         "Zg==",     "Zm8=",    "Zm9v",
	                                  "Zm9vYg==", "Zm9vYmE=", "Zm9vYmFy"};
	for (size_t i = 0; i < sizeof(in) / sizeof(in[0]); i++) {
		char *b = ev_base64(in[i], strlen(in[i]));
		ck_assert_str_eq(b, out[i]);
		free(b);
	}
	/* Bytes past 127 and a NUL inside: every byte encoded. */
	char *b = ev_base64("\xff\x00\xe4\xb8\xad", 5);
	ck_assert_str_eq(b, "/wDkuK0=");
	free(b);
	char *seq = ev_osc52("OB-1", 4);
	ck_assert_str_eq(seq, "\033]52;c;T0ItMQ==\a");
	free(seq);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("util");
	TCase *tc = tcase_create("util");
	tcase_add_test(tc, error_set_and_clear);
	tcase_add_test(tc, error_truncates_long_message);
	tcase_add_test(tc, buf_grows_and_steals);
	tcase_add_test(tc, xasprintf_and_strndup);
	tcase_add_test(tc, fatal_runs_hook_and_exits_2);
	tcase_add_test(tc, base64_and_osc52);
	suite_add_tcase(s, tc);
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? 0 : 1;
}
