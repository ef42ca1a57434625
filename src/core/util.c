/* evtop — allocation wrappers, the fatal path and runtime errors. */
#include <config.h>

#include "core/util.h"

#include "core/i18n.h"
#include "core/text.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static void (*fatal_hook)(void);
static atomic_flag fatal_once = ATOMIC_FLAG_INIT;

int ev_error_set(struct ev_error *err, int code, const char *fmt, ...)
{
	va_list ap;

	if (err == NULL)
		return -1;
	err->code = code ? code : EV_ERR_GENERIC;
	va_start(ap, fmt);
	if (vsnprintf(err->msg, sizeof(err->msg), fmt, ap) >= (int)sizeof(err->msg))
		ev_utf8_fix_tail(err->msg); /* cut at the size: never inside a character */
	va_end(ap);
	return -1;
}

void ev_error_clear(struct ev_error *err)
{
	if (err != NULL) {
		err->code = 0;
		err->msg[0] = '\0';
	}
}

void ev_fatal_set_hook(void (*hook)(void))
{
	fatal_hook = hook;
}

void ev_fatal(const char *fmt, ...)
{
	va_list ap;

	if (!atomic_flag_test_and_set(&fatal_once) && fatal_hook != NULL)
		fatal_hook();
	fputs("evtop: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(2);
}

void *ev_xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);

	if (p == NULL)
		ev_fatal(_("out of memory (%zu bytes)"), n);
	return p;
}

void *ev_xcalloc(size_t count, size_t size)
{
	void *p = calloc(count ? count : 1, size ? size : 1);

	if (p == NULL)
		ev_fatal(_("out of memory (%zu x %zu bytes)"), count, size);
	return p;
}

void *ev_xrealloc(void *p, size_t n)
{
	void *q = realloc(p, n ? n : 1);

	if (q == NULL)
		ev_fatal(_("out of memory (%zu bytes)"), n);
	return q;
}

char *ev_xstrdup(const char *s)
{
	return ev_xstrndup(s, strlen(s));
}

char *ev_xstrndup(const char *s, size_t n)
{
	char *p = ev_xmalloc(n + 1);

	memcpy(p, s, n);
	p[n] = '\0';
	return p;
}

char *ev_xvasprintf(const char *fmt, va_list ap)
{
	va_list aq;
	int n;
	char *p;

	va_copy(aq, ap);
	n = vsnprintf(NULL, 0, fmt, aq);
	va_end(aq);
	if (n < 0)
		ev_fatal(_("bad format string: %s"), fmt);
	p = ev_xmalloc((size_t)n + 1);
	vsnprintf(p, (size_t)n + 1, fmt, ap);
	return p;
}

char *ev_xasprintf(const char *fmt, ...)
{
	va_list ap;
	char *p;

	va_start(ap, fmt);
	p = ev_xvasprintf(fmt, ap);
	va_end(ap);
	return p;
}

void ev_buf_init(struct ev_buf *b)
{
	b->data = NULL;
	b->len = 0;
	b->cap = 0;
}

static void buf_reserve(struct ev_buf *b, size_t extra)
{
	size_t need = b->len + extra + 1;

	if (need <= b->cap)
		return;
	size_t cap = b->cap ? b->cap : 64;
	while (cap < need)
		cap *= 2;
	b->data = ev_xrealloc(b->data, cap);
	b->cap = cap;
}

void ev_buf_add(struct ev_buf *b, const char *s, size_t n)
{
	buf_reserve(b, n);
	memcpy(b->data + b->len, s, n);
	b->len += n;
	b->data[b->len] = '\0';
}

void ev_buf_adds(struct ev_buf *b, const char *s)
{
	ev_buf_add(b, s, strlen(s));
}

void ev_buf_addc(struct ev_buf *b, char c)
{
	ev_buf_add(b, &c, 1);
}

void ev_buf_printf(struct ev_buf *b, const char *fmt, ...)
{
	va_list ap;
	char *s;

	va_start(ap, fmt);
	s = ev_xvasprintf(fmt, ap);
	va_end(ap);
	ev_buf_adds(b, s);
	free(s);
}

char *ev_buf_steal(struct ev_buf *b)
{
	char *s = b->data ? b->data : ev_xstrdup("");

	ev_buf_init(b);
	return s;
}

void ev_buf_free(struct ev_buf *b)
{
	free(b->data);
	ev_buf_init(b);
}

bool ev_parse_u64(const char *s, uint64_t *out)
{
	if (s == NULL || *s < '0' || *s > '9')
		return false;
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno != 0 || *end != '\0')
		return false;
	*out = v;
	return true;
}

char *ev_base64(const void *s, size_t n)
{
	static const char abc[] =
	        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	const unsigned char *p = s;
	char *out = ev_xmalloc((n + 2) / 3 * 4 + 1);
	size_t o = 0;
	for (size_t i = 0; i < n; i += 3) {
		unsigned v = (unsigned)p[i] << 16;
		if (i + 1 < n)
			v |= (unsigned)p[i + 1] << 8;
		if (i + 2 < n)
			v |= p[i + 2];
		out[o++] = abc[(v >> 18) & 63];
		out[o++] = abc[(v >> 12) & 63];
		out[o++] = i + 1 < n ? abc[(v >> 6) & 63] : '=';
		out[o++] = i + 2 < n ? abc[v & 63] : '=';
	}
	out[o] = '\0';
	return out;
}

char *ev_osc52(const char *text, size_t n)
{
	char *b64 = ev_base64(text, n);
	char *seq = ev_xasprintf("\033]52;c;%s\a", b64);
	free(b64);
	return seq;
}

long long ev_mono_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}
