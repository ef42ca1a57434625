/* evtop — the plain driver that replays a fuzz target's kept corpus (every input found
 * interesting and every input that once crashed) in the normal build, so `make check` runs
 * them with the ordinary compiler and, in CI, under ASan/UBSan and valgrind.
 *
 *   replay_NAME [FILE|DIR]...   replay those; with no argument, the kept corpus
 *                               $EVTOP_SRCDIR/tests/fuzz/corpus/NAME
 *
 * Each input runs in a child process, so one failure is reported with its file name and the
 * others still run. Ends with "N passed, N failed". */
#include <config.h>

#include "fuzz.h"

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef FUZZ_NAME
#error "build with -DFUZZ_NAME=\"target\""
#endif

static int passed, failed;

static unsigned char *read_all(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (f == NULL)
		return NULL;
	size_t cap = 4096, n = 0;
	unsigned char *buf = malloc(cap);
	size_t got;
	while (buf != NULL && (got = fread(buf + n, 1, cap - n, f)) > 0) {
		n += got;
		if (n == cap) {
			unsigned char *bigger = realloc(buf, cap * 2);
			if (bigger == NULL) {
				free(buf);
				buf = NULL;
				break;
			}
			buf = bigger;
			cap *= 2;
		}
	}
	fclose(f);
	*len = n;
	return buf;
}

static void run_one(const char *path)
{
	size_t len = 0;
	unsigned char *data = read_all(path, &len);
	if (data == NULL) {
		failed++;
		printf("not ok %d - %s: cannot read: %s\n", passed + failed, path, strerror(errno));
		return;
	}
	fflush(stdout);
	fflush(stderr);
	pid_t pid = fork();
	if (pid == 0) {
		/* The target gets a buffer of exactly the input's size, as under libFuzzer, so
		 * ASan catches a read one past the end. */
		unsigned char *exact = malloc(len ? len : 1);
		if (exact == NULL)
			_exit(3);
		memcpy(exact, data, len);
		LLVMFuzzerTestOneInput(exact, len);
		free(exact);
		free(data);
		_exit(0);
	}
	free(data);
	int status = 0;
	if (pid < 0 || waitpid(pid, &status, 0) < 0) {
		failed++;
		printf("not ok %d - %s: cannot run: %s\n", passed + failed, path, strerror(errno));
		return;
	}
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
		passed++;
		printf("ok %d - %s (%zu bytes)\n", passed + failed, path, len);
	} else {
		failed++;
		if (WIFSIGNALED(status))
			printf("not ok %d - %s: killed by signal %d\n", passed + failed, path,
			       WTERMSIG(status));
		else
			printf("not ok %d - %s: exit status %d\n", passed + failed, path,
			       WEXITSTATUS(status));
	}
}

static int by_name(const struct dirent **a, const struct dirent **b)
{
	return strcmp((*a)->d_name, (*b)->d_name);
}

static void run_path(const char *path)
{
	struct stat st;
	if (stat(path, &st) < 0) {
		failed++;
		printf("not ok %d - %s: %s\n", passed + failed, path, strerror(errno));
		return;
	}
	if (!S_ISDIR(st.st_mode)) {
		run_one(path);
		return;
	}
	struct dirent **names;
	int n = scandir(path, &names, NULL, by_name);
	if (n < 0) {
		failed++;
		printf("not ok %d - %s: %s\n", passed + failed, path, strerror(errno));
		return;
	}
	for (int i = 0; i < n; i++) {
		if (names[i]->d_name[0] != '.') {
			size_t sz = strlen(path) + strlen(names[i]->d_name) + 2;
			char *file = malloc(sz);
			if (file != NULL) {
				snprintf(file, sz, "%s/%s", path, names[i]->d_name);
				run_one(file);
				free(file);
			}
		}
		free(names[i]);
	}
	free(names);
}

int main(int argc, char **argv)
{
	LLVMFuzzerInitialize(&argc, &argv);
	/* The empty input, always. */
	fflush(stdout);
	LLVMFuzzerTestOneInput((const uint8_t *)"", 0);
	passed++;
	printf("ok 1 - the empty input\n");
	if (argc > 1) {
		for (int i = 1; i < argc; i++)
			run_path(argv[i]);
	} else {
		const char *src = getenv("EVTOP_SRCDIR");
		char dir[4096];
		snprintf(dir, sizeof(dir), "%s/tests/fuzz/corpus/%s", src ? src : ".", FUZZ_NAME);
		run_path(dir);
	}
	printf("%d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}
