/* evtop — allocation that never returns NULL, the one fatal path, runtime errors. */
#ifndef EV_CORE_UTIL_H
#define EV_CORE_UTIL_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A runtime error (database, config, input) for a person to act on. Caller-owned: every
 * function that can fail takes one, so no message lives in static or global storage. */
struct ev_error {
	int code; /* 0 = no error; otherwise a server errno or an EV_ERR_* value */
	char msg[512];
};

enum {
	EV_ERR_GENERIC = 1,
	EV_ERR_USAGE = 2,
	EV_ERR_CONFIG = 3,
	EV_ERR_CONNECT = 4,
	EV_ERR_SCHEMA = 5,
	EV_ERR_TIMEOUT = 6,
	EV_ERR_NOT_FOUND = 7,
};

/* Fill err (if not NULL) with code and a printf-style message; returns -1 for `return
 * ev_error_set(...)`. */
int ev_error_set(struct ev_error *err, int code, const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));
/* Clear err. */
void ev_error_clear(struct ev_error *err);

/* Hook run by ev_fatal before it prints and exits: the console installs one that restores
 * the terminal. Any thread may call ev_fatal; the hook runs at most once. */
void ev_fatal_set_hook(void (*hook)(void));
/* Print "evtop: <message>" to stderr after running the hook, and exit(2). */
void ev_fatal(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

/* Allocators that never return NULL: out of memory ends through ev_fatal. */
void *ev_xmalloc(size_t n);
void *ev_xcalloc(size_t count, size_t size);
void *ev_xrealloc(void *p, size_t n);
char *ev_xstrdup(const char *s);
char *ev_xstrndup(const char *s, size_t n);
char *ev_xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* A decimal unsigned 64-bit number, the whole of s (no sign, no space); false otherwise. */
bool ev_parse_u64(const char *s, uint64_t *out);
char *ev_xvasprintf(const char *fmt, va_list ap) __attribute__((format(printf, 1, 0)));

/* A growable byte buffer, always NUL-terminated. */
struct ev_buf {
	char *data;
	size_t len;
	size_t cap;
};

void ev_buf_init(struct ev_buf *b);
void ev_buf_add(struct ev_buf *b, const char *s, size_t n);
void ev_buf_adds(struct ev_buf *b, const char *s);
void ev_buf_addc(struct ev_buf *b, char c);
void ev_buf_printf(struct ev_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Hand the text to the caller (who frees it) and reset the buffer. */
char *ev_buf_steal(struct ev_buf *b);

/* s[0..n) in base64 (RFC 4648, padded, no line breaks); malloc'd. */
char *ev_base64(const void *s, size_t n);
/* The OSC 52 sequence that sets the terminal's clipboard to text[0..n): ESC ] 52 ; c ;
 * base64 BEL. malloc'd. */
char *ev_osc52(const char *text, size_t n);
void ev_buf_free(struct ev_buf *b);

/* The monotonic clock in milliseconds (durations, never the time of day). */
long long ev_mono_ms(void);

#endif
