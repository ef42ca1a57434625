/* evtop — the HTTP side of `evtop metrics`: libmicrohttpd serving the last exposition on
 * GET /metrics (a small page on /, 404 elsewhere), over TLS when given a certificate, behind
 * basic auth when given a file of crypt(3) hashes. The text is replaced after each refresh;
 * a scrape only copies it. */
#ifndef EV_CLI_HTTPD_H
#define EV_CLI_HTTPD_H

#include "core/util.h"

#include <stdbool.h>
#include <stddef.h>

struct ev_httpd;

struct ev_httpd_opts {
	const char *listen;   /* ADDR:PORT, [ADDR]:PORT or PORT (loopback) */
	const char *tls_cert; /* PEM files, or NULL */
	const char *tls_key;
	const char *basic_auth_file; /* user:hash lines, or NULL */
};

/* Start serving (a thread of libmicrohttpd's own). NULL with err (EV_ERR_USAGE) when the
 * address, the files or the port say no. *where gets "http(s)://ADDR:PORT" (malloc'd). */
struct ev_httpd *ev_httpd_start(const struct ev_httpd_opts *o, char **where, struct ev_error *err);
/* The text served on /metrics from now on (copied). */
void ev_httpd_set(struct ev_httpd *h, const char *text, size_t len);
void ev_httpd_stop(struct ev_httpd **h);

/* The users of a basic-auth file ("user:HASH" lines, # comments), for the tests too. */
struct ev_auth;
struct ev_auth *ev_auth_load(const char *path, struct ev_error *err);
/* Whether user and password match one line (crypt_r, compared in constant time). */
bool ev_auth_check(const struct ev_auth *a, const char *user, const char *password);
void ev_auth_free(struct ev_auth **a);

/* Parse ADDR:PORT; false with err when it is not one. host gets the address (no brackets). */
bool ev_httpd_parse_listen(const char *s, char *host, size_t size, char *port, size_t psize,
                           struct ev_error *err);

#endif
