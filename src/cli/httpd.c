/* evtop — the HTTP side of `evtop metrics` (see httpd.h). */
#include <config.h>

#include "cli/httpd.h"

#include "core/files.h"
#include "core/text.h"

#include <crypt.h>
#include <errno.h>
#include <microhttpd.h>
#include <netdb.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* --- basic auth ------------------------------------------------------------------------- */

struct ev_auth {
	size_t n;
	char **user, **hash;
};

void ev_auth_free(struct ev_auth **ap)
{
	struct ev_auth *a = *ap;
	if (a == NULL)
		return;
	for (size_t i = 0; i < a->n; i++) {
		free(a->user[i]);
		explicit_bzero(a->hash[i], strlen(a->hash[i]));
		free(a->hash[i]);
	}
	free(a->user);
	free(a->hash);
	free(a);
	*ap = NULL;
}

/* A hash crypt_r can check, of a method that is not broken: yescrypt, bcrypt, SHA-512 or
 * SHA-256 crypt. */
static bool usable_hash(const char *h)
{
	static const char *const ok[] = {"$y$", "$gy$", "$7$", "$2b$", "$2y$", "$6$", "$5$"};
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++)
		if (strncmp(h, ok[i], strlen(ok[i])) == 0)
			return true;
	return false;
}

struct ev_auth *ev_auth_load(const char *path, struct ev_error *err)
{
	FILE *f = ev_file_stream("the basic-auth file", path, EV_FILE_CONFIG, EV_FILE_READ, err);
	if (f == NULL)
		return NULL;
	struct ev_auth *a = ev_xcalloc(1, sizeof(*a));
	char line[1024];
	int lineno = 0;
	while (fgets(line, sizeof(line), f) != NULL) {
		lineno++;
		size_t len = strlen(line);
		while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r' ||
		                   line[len - 1] == ' ' || line[len - 1] == '\t'))
			line[--len] = '\0';
		const char *p = line;
		while (*p == ' ' || *p == '\t')
			p++;
		if (*p == '\0' || *p == '#')
			continue;
		const char *colon = strchr(p, ':');
		if (colon == NULL || colon == p || !usable_hash(colon + 1)) {
			ev_error_set(err, EV_ERR_USAGE,
			             "%.200s:%d: expected user:HASH, HASH a crypt(3) hash made by "
			             "mkpasswd -m yescrypt (or bcrypt, $2b$)",
			             path, lineno);
			explicit_bzero(line, sizeof(line));
			fclose(f);
			ev_auth_free(&a);
			return NULL;
		}
		a->user = ev_xrealloc(a->user, (a->n + 1) * sizeof(*a->user));
		a->hash = ev_xrealloc(a->hash, (a->n + 1) * sizeof(*a->hash));
		a->user[a->n] = ev_xstrndup(p, (size_t)(colon - p));
		a->hash[a->n] = ev_xstrdup(colon + 1);
		a->n++;
	}
	explicit_bzero(line, sizeof(line));
	fclose(f);
	if (a->n == 0) {
		ev_error_set(err, EV_ERR_USAGE, "%.200s: no user:HASH line", path);
		ev_auth_free(&a);
		return NULL;
	}
	return a;
}

/* Equal, in a time that depends on the lengths only. */
static bool same_secret(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	unsigned char d = la != lb;
	for (size_t i = 0; i < la; i++)
		d |= (unsigned char)(a[i] ^ b[i % (lb ? lb : 1)]);
	return d == 0;
}

bool ev_auth_check(const struct ev_auth *a, const char *user, const char *password)
{
	if (a == NULL || user == NULL || password == NULL)
		return false;
	bool ok = false;
	struct crypt_data *cd = ev_xcalloc(1, sizeof(*cd));
	for (size_t i = 0; i < a->n; i++) {
		if (!same_secret(a->user[i], user))
			continue;
		const char *h = crypt_r(password, a->hash[i], cd);
		if (h != NULL && h[0] != '*' && same_secret(h, a->hash[i]))
			ok = true;
	}
	explicit_bzero(cd, sizeof(*cd));
	free(cd);
	return ok;
}

/* --- the server --------------------------------------------------------------------------- */

struct ev_httpd {
	struct MHD_Daemon *d;
	pthread_mutex_t lock;
	char *text;
	size_t len;
	struct ev_auth *auth;
	char *cert, *key;
};

bool ev_httpd_parse_listen(const char *s, char *host, size_t size, char *port, size_t psize,
                           struct ev_error *err)
{
	const char *p;
	size_t hl;
	if (s[0] == '[') {
		const char *close = strchr(s, ']');
		if (close == NULL || close[1] != ':')
			goto bad;
		hl = (size_t)(close - s - 1);
		s++;
		p = close + 2;
	} else if ((p = strrchr(s, ':')) != NULL) {
		if (strchr(s, ':') != p)
			goto bad; /* an IPv6 address without brackets */
		hl = (size_t)(p - s);
		p++;
	} else {
		hl = 0;
		p = s;
	}
	if (hl >= size || strlen(p) >= psize || *p == '\0')
		goto bad;
	for (const char *q = p; *q; q++)
		if (*q < '0' || *q > '9')
			goto bad;
	long v = strtol(p, NULL, 10);
	if (v < 1 || v > 65535)
		goto bad;
	if (hl == 0)
		snprintf(host, size, "127.0.0.1");
	else
		snprintf(host, size, "%.*s", (int)hl, s);
	snprintf(port, psize, "%s", p);
	return true;
bad:
	ev_error_set(err, EV_ERR_USAGE,
	             "--listen: expected ADDR:PORT like 127.0.0.1:9787 or [::1]:9787, got '%.60s'",
	             s);
	return false;
}

static const char page[] =
        "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>evtop metrics</title>"
        "</head>\n<body><h1>evtop metrics</h1>\n<p>The backlog of the event tables for "
        "Prometheus: <a href=\"/metrics\">/metrics</a>.</p>\n</body></html>\n";

static enum MHD_Result reply(struct MHD_Connection *c, unsigned code, const char *type,
                             const char *body, size_t len, bool copy)
{
	struct MHD_Response *r = MHD_create_response_from_buffer(
	        len, (void *)body, copy ? MHD_RESPMEM_MUST_COPY : MHD_RESPMEM_MUST_FREE);
	if (r == NULL)
		return MHD_NO;
	MHD_add_response_header(r, "Content-Type", type);
	MHD_add_response_header(r, "Cache-Control", "no-store");
	enum MHD_Result rc = MHD_queue_response(c, code, r);
	MHD_destroy_response(r);
	return rc;
}

static enum MHD_Result handle(void *cls, struct MHD_Connection *c, const char *url,
                              const char *method, const char *version, const char *upload,
                              size_t *upload_size, void **state)
{
	struct ev_httpd *h = cls;
	(void)version;
	(void)upload;
	/* The first call of a request only announces it (headers read). */
	if (*state == NULL) {
		*state = (void *)1;
		return MHD_YES;
	}
	if (*upload_size != 0) {
		*upload_size = 0; /* a body is not read */
		return MHD_YES;
	}
	if (h->auth != NULL) {
		char *pass = NULL;
		char *user = MHD_basic_auth_get_username_password(c, &pass);
		bool ok = ev_auth_check(h->auth, user, pass);
		if (pass != NULL) {
			explicit_bzero(pass, strlen(pass));
			MHD_free(pass);
		}
		if (user != NULL)
			MHD_free(user);
		if (!ok) {
			static const char no[] = "401 unauthorized\n";
			struct MHD_Response *r = MHD_create_response_from_buffer(
			        sizeof(no) - 1, (void *)no, MHD_RESPMEM_PERSISTENT);
			if (r == NULL)
				return MHD_NO;
			MHD_add_response_header(r, "Content-Type", "text/plain; charset=utf-8");
			enum MHD_Result rc = MHD_queue_basic_auth_fail_response(c, "evtop", r);
			MHD_destroy_response(r);
			return rc;
		}
	}
	if (strcmp(method, "GET") != 0 && strcmp(method, "HEAD") != 0) {
		static const char no[] = "405 method not allowed: GET only\n";
		return reply(c, MHD_HTTP_METHOD_NOT_ALLOWED, "text/plain; charset=utf-8", no,
		             sizeof(no) - 1, true);
	}
	if (strcmp(url, "/metrics") == 0) {
		pthread_mutex_lock(&h->lock);
		char *copy = ev_xmalloc(h->len + 1);
		memcpy(copy, h->text ? h->text : "", h->len);
		size_t len = h->len;
		pthread_mutex_unlock(&h->lock);
		return reply(c, MHD_HTTP_OK, "text/plain; version=0.0.4; charset=utf-8", copy, len,
		             false);
	}
	if (strcmp(url, "/") == 0)
		return reply(c, MHD_HTTP_OK, "text/html; charset=utf-8", page, sizeof(page) - 1,
		             true);
	static const char nf[] = "404 not found: try /metrics\n";
	return reply(c, MHD_HTTP_NOT_FOUND, "text/plain; charset=utf-8", nf, sizeof(nf) - 1, true);
}

/* A whole file, NUL-terminated (the PEM files). */
static char *slurp(const char *what, const char *path, struct ev_error *err)
{
	FILE *f = fopen(path, "rb");
	if (f == NULL) {
		ev_error_set(err, EV_ERR_USAGE, "%s %.200s: %s", what, path, strerror(errno));
		return NULL;
	}
	struct ev_buf b;
	ev_buf_init(&b);
	char chunk[4096];
	size_t n;
	while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0 && b.len < (1u << 20))
		ev_buf_add(&b, chunk, n);
	fclose(f);
	explicit_bzero(chunk, sizeof(chunk));
	if (b.len == 0) {
		ev_buf_free(&b);
		ev_error_set(err, EV_ERR_USAGE, "%s %.200s: empty", what, path);
		return NULL;
	}
	return ev_buf_steal(&b);
}

static void free_secret(char **s)
{
	if (*s != NULL) {
		explicit_bzero(*s, strlen(*s));
		free(*s);
		*s = NULL;
	}
}

void ev_httpd_stop(struct ev_httpd **hp)
{
	struct ev_httpd *h = *hp;
	if (h == NULL)
		return;
	if (h->d != NULL)
		MHD_stop_daemon(h->d);
	pthread_mutex_destroy(&h->lock);
	free(h->text);
	ev_auth_free(&h->auth);
	free_secret(&h->cert);
	free_secret(&h->key);
	free(h);
	*hp = NULL;
}

struct ev_httpd *ev_httpd_start(const struct ev_httpd_opts *o, char **where, struct ev_error *err)
{
	char host[256], port[16];
	if (!ev_httpd_parse_listen(o->listen, host, sizeof(host), port, sizeof(port), err))
		return NULL;
	if ((o->tls_cert == NULL) != (o->tls_key == NULL)) {
		ev_error_set(err, EV_ERR_USAGE, "--tls-cert and --tls-key go together");
		return NULL;
	}
	struct addrinfo hints, *ai = NULL;
	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
	int gai = getaddrinfo(host, port, &hints, &ai);
	if (gai != 0 || ai == NULL) {
		ev_error_set(err, EV_ERR_USAGE, "--listen %.200s: %s", o->listen,
		             gai_strerror(gai));
		return NULL;
	}
	struct ev_httpd *h = ev_xcalloc(1, sizeof(*h));
	pthread_mutex_init(&h->lock, NULL);
	if (o->basic_auth_file != NULL && (h->auth = ev_auth_load(o->basic_auth_file, err)) == NULL)
		goto fail;
	if (o->tls_cert != NULL) {
		if ((h->cert = slurp("--tls-cert", o->tls_cert, err)) == NULL ||
		    (h->key = slurp("--tls-key", o->tls_key, err)) == NULL)
			goto fail;
	}
	unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ERROR_LOG;
	if (ai->ai_family == AF_INET6)
		flags |= MHD_USE_IPv6;
	if (h->cert != NULL)
		flags |= MHD_USE_TLS;
	struct MHD_OptionItem opts[] = {
	        {MHD_OPTION_SOCK_ADDR, 0, ai->ai_addr},
	        {MHD_OPTION_CONNECTION_TIMEOUT, 10, NULL},
	        {MHD_OPTION_CONNECTION_LIMIT, 64, NULL},
	        {h->cert ? MHD_OPTION_HTTPS_MEM_CERT : MHD_OPTION_END, 0, h->cert},
	        {h->cert ? MHD_OPTION_HTTPS_MEM_KEY : MHD_OPTION_END, 0, h->key},
	        {MHD_OPTION_END, 0, NULL},
	};
	h->d = MHD_start_daemon(flags, (uint16_t)atoi(port), NULL, NULL, handle, h,
	                        MHD_OPTION_ARRAY, opts, MHD_OPTION_END);
	if (h->d == NULL) {
		ev_error_set(err, EV_ERR_USAGE,
		             "cannot listen on %.200s (the port in use, the address not this "
		             "host's, or the TLS files not a certificate and its key)",
		             o->listen);
		goto fail;
	}
	bool v6 = ai->ai_family == AF_INET6;
	freeaddrinfo(ai);
	*where = v6 ? ev_xasprintf("%s://[%s]:%s", h->cert ? "https" : "http", host, port)
	            : ev_xasprintf("%s://%s:%s", h->cert ? "https" : "http", host, port);
	return h;
fail:
	freeaddrinfo(ai);
	ev_httpd_stop(&h);
	return NULL;
}

void ev_httpd_set(struct ev_httpd *h, const char *text, size_t len)
{
	char *copy = ev_xmalloc(len + 1);
	memcpy(copy, text, len);
	copy[len] = '\0';
	pthread_mutex_lock(&h->lock);
	free(h->text);
	h->text = copy;
	h->len = len;
	pthread_mutex_unlock(&h->lock);
}
