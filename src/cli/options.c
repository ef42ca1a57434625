/* evtop — shared command-line options (see options.h). */
#include <config.h>

#include "cli/options.h"

#include "core/guard.h"
#include "core/i18n.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>

enum {
	OPT_CONFIG = 256,
	OPT_SOURCE,
	OPT_DEFAULTS_FILE,
	OPT_NO_DEFAULTS,
	OPT_DEFAULTS_GROUP,
	OPT_OUTBOX_TABLE,
	OPT_MESSAGE_TABLE,
	OPT_TIME_ZONE,
	OPT_LOG_SQL,
	OPT_SSL,
	OPT_SSL_CA,
	OPT_SSL_CAPATH,
	OPT_SSL_CERT,
	OPT_SSL_KEY,
	OPT_SSL_CIPHER,
	OPT_SSL_VERIFY,
	OPT_TABLE,
	OPT_FORMAT,
	OPT_LIMIT,
	OPT_AFTER,
	OPT_FILTER,
	OPT_BY,
	OPT_SCRIPT,
	OPT_SCREEN,
	OPT_MONO,
	OPT_NO_MIRROR,
	OPT_READ_ONLY,
	OPT_WINDOW,
	OPT_WARNING,
	OPT_CRITICAL,
	OPT_STUCK,
	OPT_HIGH_RETRY,
	OPT_SEARCH_CAP,
	OPT_STATEMENT_TIMEOUT,
	OPT_CONNECT_TIMEOUT,
	OPT_F_EVENT_TYPE,
	OPT_F_TOPIC,
	OPT_F_BIZ_TYPE,
	OPT_F_BIZ_ID,
	OPT_F_EVENT_NO,
	OPT_F_TRACE_ID,
	OPT_F_SOURCE,
	OPT_F_LOCKED_BY,
	OPT_F_CHANNEL,
	OPT_F_REASON,
	OPT_F_SINCE,
	OPT_F_UNTIL,
	/* the actions (retry, cancel, recover) */
	OPT_NOW,
	OPT_DELAY,
	OPT_DRY_RUN,
	OPT_YES,
	OPT_INCLUDE_PROTECTED,
	OPT_OPERATOR,
	OPT_ENABLE_MESSAGE_RECOVER,
	OPT_PRIMARY,
	OPT_CLOCK_OK,
	OPT_UNMASK,
	OPT_LISTEN,
	OPT_TEXTFILE,
	OPT_ONCE,
	OPT_INTERVAL,
	OPT_TLS_CERT,
	OPT_TLS_KEY,
	OPT_BASIC_AUTH_FILE,
	OPT_OLDER_THAN,
	OPT_STATUS,
	OPT_TO,
	OPT_TO_FILE,
	OPT_PURGE,
	OPT_INCLUDE_DELETED,
	OPT_CREATE_ARCHIVE_TABLE,
	OPT_FORCE,
	OPT_BATCH,
	OPT_RATE,
	OPT_PAUSE,
	OPT_MAX_LAG,
	OPT_FROM_START,
	OPT_AUDIT_ACTION,
	OPT_AUDIT_RESULT,
};

static const struct option long_opts[] = {
        {"help", no_argument, NULL, '?'},
        {"host", required_argument, NULL, 'h'},
        {"port", required_argument, NULL, 'P'},
        {"socket", required_argument, NULL, 'S'},
        {"user", required_argument, NULL, 'u'},
        {"password", optional_argument, NULL, 'p'},
        {"database", required_argument, NULL, 'D'},
        {"config", required_argument, NULL, OPT_CONFIG},
        {"source", required_argument, NULL, OPT_SOURCE},
        {"primary", no_argument, NULL, OPT_PRIMARY},
        {"defaults-file", required_argument, NULL, OPT_DEFAULTS_FILE},
        {"no-defaults", no_argument, NULL, OPT_NO_DEFAULTS},
        {"defaults-group-suffix", required_argument, NULL, OPT_DEFAULTS_GROUP},
        {"outbox-table", required_argument, NULL, OPT_OUTBOX_TABLE},
        {"message-table", required_argument, NULL, OPT_MESSAGE_TABLE},
        {"time-zone", required_argument, NULL, OPT_TIME_ZONE},
        {"log-sql", required_argument, NULL, OPT_LOG_SQL},
        {"ssl", no_argument, NULL, OPT_SSL},
        {"ssl-ca", required_argument, NULL, OPT_SSL_CA},
        {"ssl-capath", required_argument, NULL, OPT_SSL_CAPATH},
        {"ssl-cert", required_argument, NULL, OPT_SSL_CERT},
        {"ssl-key", required_argument, NULL, OPT_SSL_KEY},
        {"ssl-cipher", required_argument, NULL, OPT_SSL_CIPHER},
        {"ssl-verify-server-cert", no_argument, NULL, OPT_SSL_VERIFY},
        {"table", required_argument, NULL, OPT_TABLE},
        {"format", required_argument, NULL, OPT_FORMAT},
        {"limit", required_argument, NULL, OPT_LIMIT},
        {"after", required_argument, NULL, OPT_AFTER},
        {"filter", required_argument, NULL, OPT_FILTER},
        {"by", required_argument, NULL, OPT_BY},
        {"script", required_argument, NULL, OPT_SCRIPT},
        {"screen", required_argument, NULL, OPT_SCREEN},
        {"mono", no_argument, NULL, OPT_MONO},
        {"no-mirror", no_argument, NULL, OPT_NO_MIRROR},
        {"read-only", no_argument, NULL, OPT_READ_ONLY},
        {"window", required_argument, NULL, OPT_WINDOW},
        {"warning", required_argument, NULL, OPT_WARNING},
        {"critical", required_argument, NULL, OPT_CRITICAL},
        {"stuck-threshold", required_argument, NULL, OPT_STUCK},
        {"high-retry", required_argument, NULL, OPT_HIGH_RETRY},
        {"search-cap", required_argument, NULL, OPT_SEARCH_CAP},
        {"statement-timeout", required_argument, NULL, OPT_STATEMENT_TIMEOUT},
        {"connect-timeout", required_argument, NULL, OPT_CONNECT_TIMEOUT},
        {"event-type", required_argument, NULL, OPT_F_EVENT_TYPE},
        {"topic", required_argument, NULL, OPT_F_TOPIC},
        {"biz-type", required_argument, NULL, OPT_F_BIZ_TYPE},
        {"aggregate-type", required_argument, NULL, OPT_F_BIZ_TYPE},
        {"biz-id", required_argument, NULL, OPT_F_BIZ_ID},
        {"aggregate-id", required_argument, NULL, OPT_F_BIZ_ID},
        {"event-no", required_argument, NULL, OPT_F_EVENT_NO},
        {"trace-id", required_argument, NULL, OPT_F_TRACE_ID},
        {"event-source", required_argument, NULL, OPT_F_SOURCE},
        {"locked-by", required_argument, NULL, OPT_F_LOCKED_BY},
        {"channel", required_argument, NULL, OPT_F_CHANNEL},
        {"reason", required_argument, NULL, OPT_F_REASON},
        {"since", required_argument, NULL, OPT_F_SINCE},
        {"until", required_argument, NULL, OPT_F_UNTIL},
        {"now", no_argument, NULL, OPT_NOW},
        {"delay", required_argument, NULL, OPT_DELAY},
        {"dry-run", no_argument, NULL, OPT_DRY_RUN},
        {"yes", no_argument, NULL, OPT_YES},
        {"include-protected", no_argument, NULL, OPT_INCLUDE_PROTECTED},
        {"operator", required_argument, NULL, OPT_OPERATOR},
        {"enable-message-recover", no_argument, NULL, OPT_ENABLE_MESSAGE_RECOVER},
        {"clock-ok", no_argument, NULL, OPT_CLOCK_OK},
        {"unmask", required_argument, NULL, OPT_UNMASK},
        {"listen", required_argument, NULL, OPT_LISTEN},
        {"textfile", required_argument, NULL, OPT_TEXTFILE},
        {"once", no_argument, NULL, OPT_ONCE},
        {"interval", required_argument, NULL, OPT_INTERVAL},
        {"tls-cert", required_argument, NULL, OPT_TLS_CERT},
        {"tls-key", required_argument, NULL, OPT_TLS_KEY},
        {"basic-auth-file", required_argument, NULL, OPT_BASIC_AUTH_FILE},
        {"older-than", required_argument, NULL, OPT_OLDER_THAN},
        {"status", required_argument, NULL, OPT_STATUS},
        {"to", required_argument, NULL, OPT_TO},
        {"to-file", required_argument, NULL, OPT_TO_FILE},
        {"purge", no_argument, NULL, OPT_PURGE},
        {"include-deleted", no_argument, NULL, OPT_INCLUDE_DELETED},
        {"create-archive-table", no_argument, NULL, OPT_CREATE_ARCHIVE_TABLE},
        {"force", no_argument, NULL, OPT_FORCE},
        {"batch", required_argument, NULL, OPT_BATCH},
        {"rate", required_argument, NULL, OPT_RATE},
        {"pause", required_argument, NULL, OPT_PAUSE},
        {"max-lag", required_argument, NULL, OPT_MAX_LAG},
        {"from-start", no_argument, NULL, OPT_FROM_START},
        {"action", required_argument, NULL, OPT_AUDIT_ACTION},
        {"result", required_argument, NULL, OPT_AUDIT_RESULT},
        {NULL, 0, NULL, 0},
};

/* The options whose value names a file or a directory (the shell completes paths there). */
static const char *const file_valued[] = {
        "socket",  "config", "defaults-file", "log-sql",  "ssl-ca",  "ssl-capath",      "ssl-cert",
        "ssl-key", "script", "textfile",      "tls-cert", "tls-key", "basic-auth-file", "to-file",
};

const char *ev_opts_long_option(size_t i, bool *value, bool *file, char *short_name)
{
	const size_t n = sizeof(long_opts) / sizeof(long_opts[0]) - 1;
	if (i >= n)
		return NULL;
	const struct option *o = &long_opts[i];
	*value = o->has_arg == required_argument;
	*file = false;
	for (size_t k = 0; k < sizeof(file_valued) / sizeof(file_valued[0]); k++)
		*file = *file || strcmp(file_valued[k], o->name) == 0;
	/* getopt's '?' is --help's code, not a short option */
	*short_name = o->val > ' ' && o->val < 127 && o->val != '?' ? (char)o->val : 0;
	return o->name;
}

bool ev_opts_takes_value(const char *arg)
{
	if (arg[0] != '-')
		return false;
	if (arg[1] != '-')
		return arg[2] == '\0' && strchr("hPSuD", arg[1]) != NULL && arg[1] != '\0';
	if (strchr(arg, '=') != NULL)
		return false;
	for (const struct option *o = long_opts; o->name != NULL; o++)
		if (strcmp(arg + 2, o->name) == 0)
			return o->has_arg == required_argument;
	return false;
}

void ev_opts_usage(FILE *out)
{
	/* TRANSLATORS: the shared options' help, one section a message. Keep the option names
	 * (--host=HOST ...) as they are, their descriptions aligned as in the English, and every
	 * line within 80 cells (a Chinese character takes two). */
	fputs(_("Connection (as the mysql client; option files [client] and [evtop] are read):\n"
	        "  -h, --host=HOST            -P, --port=PORT          -S, --socket=PATH\n"
	        "  -u, --user=USER            -D, --database=DB\n"
	        "  -p, --password             prompt for the password (without echo)\n"
	        "      --defaults-file=FILE   read only this option file\n"
	        "      --no-defaults          read no option file\n"
	        "      --ssl, --ssl-ca=FILE, --ssl-capath=DIR, --ssl-cert=FILE, --ssl-key=FILE,\n"
	        "      --ssl-cipher=LIST, --ssl-verify-server-cert\n"
	        "      --time-zone=TZ         session time zone of the applications' DATETIMEs\n"
	        "      --connect-timeout=DUR  --statement-timeout=DUR (server-side limit)\n"
	        "      --config=FILE          evtop's config (default ~/.config/evtop/config)\n"
	        "      --source=NAME[,NAME]   the config's sources to use (default: all of them)\n"
	        "      --primary              read from the primary, not the source's replica\n"
	        "      --outbox-table=NAME    --message-table=NAME\n"
	        "      --log-sql=FILE         record every statement, its parameters and timing\n"),
	      out);
	fputs(_("Output:\n"
	        "      --table=outbox|message --format=table|json|csv  --limit=N  "
	        "--after=CURSOR\n"),
	      out);
	fputs(_("Filters:\n"
	        "      --event-type=T --topic=T --biz-type=T (--aggregate-type) --biz-id=ID\n"
	        "      (--aggregate-id) --event-no=NO --trace-id=ID --event-source=S\n"
	        "      --locked-by=X --channel=C --reason=SUBSTRING --since=TIME --until=TIME\n"
	        "      --filter='key=value reason~text ...'\n"
	        "      --unmask=REASON        payloads and texts in the clear, not masked "
	        "(audited)\n"
	        "      --filter='payload.PATH=VALUE payload~TEXT headers.\"x-k\"=V' (inside the\n"
	        "      list's bounded rows)  --search-cap=N (candidates a page; default 100000)\n"
	        "      --stuck-threshold=DUR (message table; default 10m)  --high-retry=N\n"
	        "      evtop audit: --operator=ID --action=A --result=R --event-no=NO --table=T\n"
	        "      --since=TIME --until=TIME (doc/cli.md)\n"),
	      out);
	fputs(_("Dashboard and check:\n"
	        "      --by=event_type|topic|source|biz_type|channel  --window=DUR (default 1h;\n"
	        "      also the cancelled and recent lists')\n"
	        "      --warning=EXPR --critical=EXPR (doc/check.md)\n"
	        "      --clock-ok             the session's time zone is right although the "
	        "newest\n"
	        "                             rows suggest a mismatch (writes, check; audited)\n"),
	      out);
	fputs(_("Metrics (doc/metrics.md):\n"
	        "      --listen=ADDR:PORT (default 127.0.0.1:9787)  --interval=DUR (default 15s)\n"
	        "      --textfile=FILE  --once  --tls-cert=FILE --tls-key=FILE\n"
	        "      --basic-auth-file=FILE (user:crypt-hash lines)\n"),
	      out);
	fputs(_("Console:\n"
	        "      --read-only            no writes     --mono   no colours (also NO_COLOR)\n"
	        "      --script=FILE --screen=COLSxROWS   a scripted run in a virtual terminal\n"
	        "      --no-mirror            count the backlog every refresh (no backlog "
	        "mirror)\n"),
	      out);
}

static int set_str(char **slot, const char *v)
{
	free(*slot);
	*slot = ev_xstrdup(v);
	return 0;
}

/* A duration flag within [min_ms, max_ms]; a flag that sets a setting of the config file
 * (cfg_key) takes the config's range, so that both say the same. */
static int duration_opt(const char *name, const char *cfg_key, const char *v, long long min_ms,
                        long long max_ms, long long *ms, struct ev_error *err)
{
	if (cfg_key != NULL)
		ev_config_duration_range(cfg_key, &min_ms, &max_ms);
	if (ev_parse_duration_ms(v, ms) < 0)
		return ev_error_set(
		        err, EV_ERR_USAGE,
		        _("--%s: expected a duration like 10m, 30s or 500ms, got '%.40s'"), name,
		        v);
	if (*ms < min_ms || *ms > max_ms) {
		char lo[32], hi[32];
		ev_format_duration_ms(min_ms, lo, sizeof(lo));
		ev_format_duration_ms(max_ms, hi, sizeof(hi));
		return ev_error_set(err, EV_ERR_USAGE,
		                    _("--%s must be between %s and %s, got '%.40s'"), name, lo, hi,
		                    v);
	}
	return 0;
}

/* The config file comes first, so scan for --config/--source before the other options. */
static int preload(struct ev_opts *o, int argc, char **argv, struct ev_error *err)
{
	const char *path = NULL, *source = NULL, *format = NULL;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--") == 0)
			break;
		if (strncmp(argv[i], "--format=", 9) == 0)
			format = argv[i] + 9;
		else if (strcmp(argv[i], "--format") == 0 && i + 1 < argc)
			format = argv[++i];
		else if (strncmp(argv[i], "--config=", 9) == 0)
			path = argv[i] + 9;
		else if (strcmp(argv[i], "--config") == 0 && i + 1 < argc)
			path = argv[++i];
		else if (strncmp(argv[i], "--source=", 9) == 0)
			source = argv[i] + 9;
		else if (strcmp(argv[i], "--source") == 0 && i + 1 < argc)
			source = argv[++i];
		else if (i + 1 < argc && ev_opts_takes_value(argv[i]))
			i++; /* a value, even one that reads like --source */
	}
	/* json and csv are parsed by programs: English from the first error on (the config's,
	 * an option's), not only once the options are parsed. */
	enum ev_format fmt;
	if (format != NULL && ev_format_parse(format, &fmt) == 0 && fmt != EV_FMT_TABLE)
		ev_i18n_off();
	if (path != NULL) {
		if (ev_config_load(&o->cfg, path, true, err) < 0)
			return -1;
	} else {
		char *def = ev_config_default_path();
		int rc = ev_config_load(&o->cfg, def, false, err);
		free(def);
		if (rc < 0)
			return -1;
	}
	o->chosen = ev_xcalloc((size_t)o->cfg.nsources, sizeof(*o->chosen));
	if (source == NULL) {
		for (int i = 0; i < o->cfg.nsources; i++)
			o->chosen[o->nchosen++] = &o->cfg.sources[i];
	} else {
		char *list = ev_xstrdup(source);
		char *save = NULL;
		int rc = 0;
		for (char *name = strtok_r(list, ",", &save); name != NULL && rc == 0;
		     name = strtok_r(NULL, ",", &save)) {
			struct ev_source *src = ev_config_source(&o->cfg, name);
			bool dup = false;
			for (int k = 0; k < o->nchosen && src != NULL; k++)
				dup = dup || o->chosen[k] == src;
			if (src == NULL)
				rc = ev_error_set(err, EV_ERR_USAGE,
				                  _("--source: no source '%.64s' in the config"),
				                  name);
			else if (!dup)
				o->chosen[o->nchosen++] = src;
		}
		free(list);
		if (rc < 0)
			return -1;
		if (o->nchosen == 0)
			return ev_error_set(err, EV_ERR_USAGE, _("--source: no source named"));
	}
	o->src = o->chosen[0];
	return 0;
}

/* The connection flags are collected apart and applied to every chosen source. */
static void apply_overrides(struct ev_source *dst, const struct ev_source *ov)
{
	char *const *from[] = {&ov->host,         &ov->socket,        &ov->user,
	                       &ov->database,     &ov->defaults_file, &ov->defaults_group,
	                       &ov->outbox_table, &ov->message_table, &ov->time_zone,
	                       &ov->ssl_ca,       &ov->ssl_capath,    &ov->ssl_cert,
	                       &ov->ssl_key,      &ov->ssl_cipher};
	char **to[] = {&dst->host,         &dst->socket,        &dst->user,
	               &dst->database,     &dst->defaults_file, &dst->defaults_group,
	               &dst->outbox_table, &dst->message_table, &dst->time_zone,
	               &dst->ssl_ca,       &dst->ssl_capath,    &dst->ssl_cert,
	               &dst->ssl_key,      &dst->ssl_cipher};
	for (size_t i = 0; i < sizeof(to) / sizeof(to[0]); i++)
		if (*from[i] != NULL)
			set_str(to[i], *from[i]);
	if (ov->port != 0)
		dst->port = ov->port;
	dst->no_defaults = dst->no_defaults || ov->no_defaults;
	dst->ssl = dst->ssl || ov->ssl;
	dst->ssl_verify = dst->ssl_verify || ov->ssl_verify;
}

static void overrides_free(struct ev_source *ov)
{
	char **f[] = {&ov->host,         &ov->socket,        &ov->user,
	              &ov->database,     &ov->defaults_file, &ov->defaults_group,
	              &ov->outbox_table, &ov->message_table, &ov->time_zone,
	              &ov->ssl_ca,       &ov->ssl_capath,    &ov->ssl_cert,
	              &ov->ssl_key,      &ov->ssl_cipher};
	for (size_t i = 0; i < sizeof(f) / sizeof(f[0]); i++) {
		free(*f[i]);
		*f[i] = NULL;
	}
}

static int parse_flags(struct ev_opts *o, struct ev_source *s, int argc, char **argv,
                       struct ev_error *err);

int ev_opts_parse(struct ev_opts *o, int argc, char **argv, struct ev_error *err)
{
	memset(o, 0, sizeof(*o));
	ev_config_init(&o->cfg);
	o->table = -1;
	o->format = EV_FMT_TABLE;
	o->older_than_s = -1;
	o->rate = -1;
	o->pause_ms = -1;
	o->max_lag_ms = -1;
	if (preload(o, argc, argv, err) < 0)
		return -1;
	o->limit = o->cfg.page_size;

	struct ev_source ov = {0};
	struct ev_source *s = &ov;
	int rc = parse_flags(o, s, argc, argv, err);
	if (rc == 0 && o->nchosen > 1 && (ov.host != NULL || ov.port != 0 || ov.socket != NULL))
		rc = ev_error_set(err, EV_ERR_USAGE,
		                  _("-h, -P and -S name one server, and the config has %d sources: "
		                    "name one with --source"),
		                  o->nchosen);
	if (rc == 0)
		for (int i = 0; i < o->nchosen; i++)
			apply_overrides(o->chosen[i], &ov);
	overrides_free(&ov);
	/* json and csv are parsed by programs: never translated, not even their error texts. */
	if (o->format != EV_FMT_TABLE)
		ev_i18n_off();
	return rc;
}

/* What every option's handler is given: the options, the connection flags (collected apart,
 * applied to every chosen source afterwards), and whether the command is `evtop archive`. */
struct flag_ctx {
	struct ev_opts *o;
	struct ev_source *s;
	bool archive;
};

/* A handler's answer besides 0 (taken) and -1 (refused, err set): not an option of its
 * group, for the next group to take. */
#define NOT_MINE 1

static void password_flag(struct ev_opts *o, char *arg)
{
	if (arg == NULL) {
		o->prompt_password = true;
		return;
	}
	fprintf(stderr, "evtop: %s\n",
	        _("warning: a password on the command line is visible to other users; use -p "
	          "alone to be prompted, or an option file"));
	set_str(&o->password, arg);
	/* Hide it from ps where the platform lets us. */
	memset(arg, 'x', strlen(arg));
}

/* The server, the account, the option files, evtop's config and sources, --log-sql. */
static int connection_flag(const struct flag_ctx *fc, int c, char *arg, struct ev_error *err)
{
	struct ev_opts *o = fc->o;
	struct ev_source *s = fc->s;
	long long v;

	switch (c) {
	case 'h':
		return set_str(&s->host, arg);
	case 'P':
		if (ev_parse_int(arg, 1, 65535, &v) < 0)
			return ev_error_set(err, EV_ERR_USAGE,
			                    _("--port: expected 1..65535, got '%.20s'"), arg);
		s->port = (unsigned)v;
		return 0;
	case 'S':
		return set_str(&s->socket, arg);
	case 'u':
		return set_str(&s->user, arg);
	case 'p':
		password_flag(o, arg);
		return 0;
	case 'D':
		return set_str(&s->database, arg);
	case OPT_CONFIG:
	case OPT_SOURCE:
		return 0; /* handled by preload */
	case OPT_PRIMARY:
		o->primary = true;
		return 0;
	case OPT_DEFAULTS_FILE:
		return set_str(&s->defaults_file, arg);
	case OPT_NO_DEFAULTS:
		s->no_defaults = true;
		return 0;
	case OPT_DEFAULTS_GROUP:
		return set_str(&s->defaults_group, arg);
	case OPT_LOG_SQL:
		return set_str(&o->log_sql, arg);
	default:
		return NOT_MINE;
	}
}

/* How the session runs: TLS, the time zone, the time limits, the tables' names. */
static int session_flag(const struct flag_ctx *fc, int c, char *arg, struct ev_error *err)
{
	struct ev_opts *o = fc->o;
	struct ev_source *s = fc->s;
	long long v;

	switch (c) {
	case OPT_SSL:
		s->ssl = true;
		return 0;
	case OPT_SSL_CA:
		return set_str(&s->ssl_ca, arg);
	case OPT_SSL_CAPATH:
		return set_str(&s->ssl_capath, arg);
	case OPT_SSL_CERT:
		return set_str(&s->ssl_cert, arg);
	case OPT_SSL_KEY:
		return set_str(&s->ssl_key, arg);
	case OPT_SSL_CIPHER:
		return set_str(&s->ssl_cipher, arg);
	case OPT_SSL_VERIFY:
		s->ssl = true;
		s->ssl_verify = true;
		return 0;
	case OPT_TIME_ZONE:
		if (!ev_time_zone_valid(arg))
			return ev_error_set(
			        err, EV_ERR_USAGE,
			        _("--time-zone: expected +08:00, SYSTEM or a zone name, "
			          "got '%.40s'"),
			        arg);
		return set_str(&s->time_zone, arg);
	case OPT_STATEMENT_TIMEOUT:
		if (duration_opt("statement-timeout", "statement_timeout", arg, 100, 600000, &v,
		                 err) < 0)
			return -1;
		o->cfg.statement_timeout_ms = (int)v;
		return 0;
	case OPT_CONNECT_TIMEOUT:
		if (duration_opt("connect-timeout", "connect_timeout", arg, 1000, 60000, &v, err) <
		    0)
			return -1;
		o->cfg.connect_timeout_s = (int)(v / 1000);
		return 0;
	case OPT_OUTBOX_TABLE:
	case OPT_MESSAGE_TABLE:
		if (!ev_ident_valid(arg))
			return ev_error_set(
			        err, EV_ERR_USAGE,
			        _("--%s: '%.64s' is not a table name (letters, digits, "
			          "_ and $, at most 64)"),
			        c == OPT_OUTBOX_TABLE ? "outbox-table" : "message-table", arg);
		return set_str(c == OPT_OUTBOX_TABLE ? &s->outbox_table : &s->message_table, arg);
	default:
		return NOT_MINE;
	}
}

/* Which table, in which format, how many rows, from where on. */
static int output_flag(const struct flag_ctx *fc, int c, char *arg, struct ev_error *err)
{
	struct ev_opts *o = fc->o;
	long long v;

	switch (c) {
	case OPT_TABLE:
		o->table = ev_model_table_parse(arg);
		if (o->table < 0)
			return ev_error_set(err, EV_ERR_USAGE,
			                    _("--table: expected outbox or message, got '%.40s'"),
			                    arg);
		return 0;
	case OPT_FORMAT:
		if (ev_format_parse(arg, &o->format) < 0)
			return ev_error_set(err, EV_ERR_USAGE,
			                    _("--format: expected table, json or csv, got '%.40s'"),
			                    arg);
		return 0;
	case OPT_LIMIT:
		if (ev_parse_int(arg, 1, EV_PAGE_MAX, &v) < 0)
			return ev_error_set(err, EV_ERR_USAGE,
			                    _("--limit: expected 1..%d, got '%.20s'"), EV_PAGE_MAX,
			                    arg);
		o->limit = (int)v;
		return 0;
	case OPT_AFTER:
		return set_str(&o->after, arg);
	default:
		return NOT_MINE;
	}
}

/* --event-type and the other one-column filters; archive's --until HH:MM is the end of a
 * maintenance window instead. */
static int column_filter_flag(const struct flag_ctx *fc, int c, char *arg, struct ev_error *err)
{
	static const char *const keys[] = {"event_type", "topic",       "biz_type", "biz_id",
	                                   "event_no",   "trace_id",    "source",   "locked_by",
	                                   "channel",    "fail_reason", "since",    "until"};
	struct ev_opts *o = fc->o;

	if (c < OPT_F_EVENT_TYPE || c > OPT_F_UNTIL)
		return NOT_MINE;
	if (c == OPT_F_UNTIL && fc->archive && strlen(arg) == 5 && arg[2] == ':')
		return set_str(&o->until_clock, arg);
	if (ev_filter_set(&o->filter, keys[c - OPT_F_EVENT_TYPE], arg, err) < 0)
		return -1;
	return 0;
}

/* --unmask=REASON: the reason is audited, so it follows the rules of a reason. */
static int unmask_flag(struct ev_opts *o, const char *arg, struct ev_error *err)
{
	struct ev_error why = {0};
	if (arg[0] == '\0')
		return ev_error_set(err, EV_ERR_USAGE,
		                    _("--unmask=REASON: give the reason the data is needed "
		                      "in the clear (it is audited)"));
	if (ev_guard_reason_check(arg, &why) < 0)
		return ev_error_set(err, EV_ERR_USAGE, _("--unmask=REASON: %s"), why.msg);
	return set_str(&o->unmask, arg);
}

/* The rows a list reads: --filter, a payload search's cap, what counts as stuck or a high
 * retry count, and --unmask. */
static int filter_flag(const struct flag_ctx *fc, int c, char *arg, struct ev_error *err)
{
	struct ev_opts *o = fc->o;
	long long v;

	switch (c) {
	case OPT_FILTER:
		if (ev_filter_parse(&o->filter, arg, err) < 0)
			return -1;
		return 0;
	case OPT_SEARCH_CAP:
		if (ev_parse_int(arg, EV_SEARCH_CAP_MIN, EV_SEARCH_CAP_MAX, &v) < 0)
			return ev_error_set(err, EV_ERR_USAGE,
			                    _("--search-cap: expected %lld..%lld, got '%.20s'"),
			                    EV_SEARCH_CAP_MIN, EV_SEARCH_CAP_MAX, arg);
		o->cfg.search_cap = (int)v;
		return 0;
	case OPT_STUCK:
		if (duration_opt("stuck-threshold", "stuck_threshold", arg, 1000,
		                 7LL * 86400 * 1000, &v, err) < 0)
			return -1;
		o->cfg.stuck_threshold_s = (int)(v / 1000);
		return 0;
	case OPT_HIGH_RETRY:
		if (ev_parse_int(arg, 1, 1000000, &v) < 0)
			return ev_error_set(err, EV_ERR_USAGE,
			                    _("--high-retry: expected 1..1000000, got '%.20s'"),
			                    arg);
		o->cfg.high_retry_min = (int)v;
		return 0;
	case OPT_UNMASK:
		return unmask_flag(o, arg, err);
	default:
		return column_filter_flag(fc, c, arg, err);
	}
}

/* The dashboard's groups and window, check's expressions, --clock-ok. */
static int dashboard_flag(const struct flag_ctx *fc, int c, char *arg, struct ev_error *err)
{
	struct ev_opts *o = fc->o;
	long long v;

	switch (c) {
	case OPT_BY:
		return set_str(&o->by, arg);
	case OPT_WINDOW:
		if (duration_opt("window", "window", arg, 60000, 30LL * 86400 * 1000, &v, err) < 0)
			return -1;
		o->cfg.window_s = (int)(v / 1000);
		return 0;
	case OPT_WARNING:
		return set_str(&o->warning, arg);
	case OPT_CRITICAL:
		return set_str(&o->critical, arg);
	case OPT_CLOCK_OK:
		o->clock_ok = true;
		return 0;
	default:
		return NOT_MINE;
	}
}

/* evtop metrics: where it serves or writes, how often, TLS and basic auth. */
static int metrics_flag(const struct flag_ctx *fc, int c, char *arg, struct ev_error *err)
{
	struct ev_opts *o = fc->o;
	long long v;

	switch (c) {
	case OPT_LISTEN:
		return set_str(&o->listen, arg);
	case OPT_TEXTFILE:
		return set_str(&o->textfile, arg);
	case OPT_ONCE:
		o->once = true;
		return 0;
	case OPT_INTERVAL:
		if (duration_opt("interval", "metrics_interval", arg, 1000, 3600000, &v, err) < 0)
			return -1;
		o->cfg.metrics_interval_s = (int)(v / 1000);
		return 0;
	case OPT_TLS_CERT:
		return set_str(&o->tls_cert, arg);
	case OPT_TLS_KEY:
		return set_str(&o->tls_key, arg);
	case OPT_BASIC_AUTH_FILE:
		return set_str(&o->basic_auth_file, arg);
	default:
		return NOT_MINE;
	}
}

/* The console: --read-only, --mono, a scripted run, --no-mirror. */
static int console_flag(const struct flag_ctx *fc, int c, char *arg, struct ev_error *err)
{
	struct ev_opts *o = fc->o;
	int c2, r2;
	char x;

	switch (c) {
	case OPT_SCRIPT:
		return set_str(&o->script, arg);
	case OPT_SCREEN:
		if (sscanf(arg, "%d%c%d", &c2, &x, &r2) != 3 || x != 'x' || c2 < 1 || c2 > 1000 ||
		    r2 < 1 || r2 > 1000)
			return ev_error_set(
			        err, EV_ERR_USAGE,
			        _("--screen: expected COLSxROWS like 80x24, got '%.20s'"), arg);
		o->screen_cols = c2;
		o->screen_rows = r2;
		return 0;
	case OPT_MONO:
		o->mono = true;
		return 0;
	case OPT_NO_MIRROR:
		o->cfg.mirror = false;
		return 0;
	case OPT_READ_ONLY:
		o->cfg.read_only = true;
		return 0;
	default:
		return NOT_MINE;
	}
}

/* --operator: it goes into the audit, so it follows the rules of a reason. */
static int operator_flag(struct ev_opts *o, const char *arg, struct ev_error *err)
{
	size_t chars = 0; /* UTF-8 lead bytes: the audit column is VARCHAR(128) */
	struct ev_error ctl = {0};
	for (const char *ch = arg; *ch; ch++)
		chars += ((unsigned char)*ch & 0xC0) != 0x80;
	/* C0, DEL and C1 controls (the 8-bit CSI too), as in reasons. */
	if (chars == 0 || chars > 128 || ev_guard_reason_check(arg, &ctl) < 0)
		return ev_error_set(err, EV_ERR_USAGE,
		                    _("--operator: expected an operator or ticket id of "
		                      "1..128 characters, without control characters"));
	set_str(&o->audit_operator, arg); /* evtop audit: a filter, not who acts */
	return set_str(&o->cfg.operator_id, arg);
}

/* evtop audit's filters that no other command has (--operator is the actions' too). */
static int audit_flag(const struct flag_ctx *fc, int c, char *arg, struct ev_error *err)
{
	struct ev_opts *o = fc->o;
	(void)err;
	if (c == OPT_AUDIT_ACTION)
		return set_str(&o->audit_action, arg);
	if (c == OPT_AUDIT_RESULT)
		return set_str(&o->audit_result, arg);
	return NOT_MINE;
}

/* The actions (retry, cancel, recover, and the bulk ones). */
static int action_flag(const struct flag_ctx *fc, int c, char *arg, struct ev_error *err)
{
	struct ev_opts *o = fc->o;
	long long v;

	switch (c) {
	case OPT_NOW:
		o->retry_now = true;
		return 0;
	case OPT_DELAY:
		if (duration_opt("delay", NULL, arg, 0, 7LL * 86400 * 1000, &v, err) < 0)
			return -1;
		o->delay_s = (int)(v / 1000);
		o->delay_set = true;
		return 0;
	case OPT_DRY_RUN:
		o->dry_run = true;
		return 0;
	case OPT_YES:
		o->yes = true;
		return 0;
	case OPT_INCLUDE_PROTECTED:
		o->include_protected = true;
		return 0;
	case OPT_OPERATOR:
		return operator_flag(o, arg, err);
	case OPT_ENABLE_MESSAGE_RECOVER:
		o->cfg.recover_message = true;
		return 0;
	default:
		return NOT_MINE;
	}
}

/* evtop archive's pace: rows a batch, rows a second, the pause, the replica's lag. */
static int archive_pace_flag(struct ev_opts *o, int c, const char *arg, struct ev_error *err)
{
	long long v;

	switch (c) {
	case OPT_BATCH:
		if (ev_parse_int(arg, 1, 5000, &v) < 0)
			return ev_error_set(err, EV_ERR_USAGE,
			                    _("--batch: expected 1 .. 5000 rows, got '%.40s'"),
			                    arg);
		o->batch = (int)v;
		return 0;
	case OPT_RATE:
		if (ev_parse_int(arg, 0, 1000000, &v) < 0)
			return ev_error_set(err, EV_ERR_USAGE,
			                    _("--rate: expected 0 (no limit) .. 1000000 rows a "
			                      "second, got '%.40s'"),
			                    arg);
		o->rate = (double)v;
		return 0;
	case OPT_PAUSE:
		if (duration_opt("pause", NULL, arg, 0, 3600000, &v, err) < 0)
			return -1;
		o->pause_ms = v;
		return 0;
	case OPT_MAX_LAG:
		if (duration_opt("max-lag", NULL, arg, 1000, 86400000, &v, err) < 0)
			return -1;
		o->max_lag_ms = v;
		return 0;
	default:
		return NOT_MINE;
	}
}

/* evtop archive (doc/archive.md): what moves where, and its pace. */
static int archive_flag(const struct flag_ctx *fc, int c, char *arg, struct ev_error *err)
{
	struct ev_opts *o = fc->o;
	long long v;

	switch (c) {
	case OPT_OLDER_THAN:
		if (duration_opt("older-than", NULL, arg, 60000, 100LL * 365 * 86400000, &v, err) <
		    0)
			return -1;
		o->older_than_s = v / 1000;
		return 0;
	case OPT_STATUS:
		return set_str(&o->archive_status, arg);
	case OPT_TO:
		if (!ev_ident_valid(arg))
			return ev_error_set(err, EV_ERR_USAGE,
			                    _("--to: '%.64s' is not a table name (letters, digits, "
			                      "_ and $, at most 64)"),
			                    arg);
		return set_str(&o->archive_to, arg);
	case OPT_TO_FILE:
		return set_str(&o->archive_file, arg);
	case OPT_PURGE:
		o->purge = true;
		return 0;
	case OPT_INCLUDE_DELETED:
		o->include_deleted = true;
		return 0;
	case OPT_CREATE_ARCHIVE_TABLE:
		o->create_archive_table = true;
		return 0;
	case OPT_FORCE:
		o->force = true;
		return 0;
	case OPT_FROM_START:
		o->from_start = true;
		return 0;
	default:
		return archive_pace_flag(o, c, arg, err);
	}
}

typedef int flag_handler(const struct flag_ctx *fc, int c, char *arg, struct ev_error *err);

/* The option groups, in the order of the usage text; each takes its own options only. */
static flag_handler *const flag_groups[] = {
        connection_flag, session_flag, output_flag, filter_flag,  dashboard_flag,
        metrics_flag,    console_flag, action_flag, archive_flag, audit_flag,
};

/* getopt's '?': --help, or an option it does not know or that lacks its value. */
static int unknown_flag(struct ev_opts *o, char **argv, struct ev_error *err)
{
	if (optopt == 0 && strcmp(argv[optind - 1], "--help") == 0) {
		o->help = true;
		return 0;
	}
	if (optopt != 0 && optopt < 256)
		return ev_error_set(err, EV_ERR_USAGE, _("unknown or incomplete option '-%c'"),
		                    optopt);
	return ev_error_set(err, EV_ERR_USAGE, _("unknown or incomplete option '%.60s'"),
	                    argv[optind - 1]);
}

static int parse_flags(struct ev_opts *o, struct ev_source *s, int argc, char **argv,
                       struct ev_error *err)
{
	const struct flag_ctx fc = {o, s, argc > 0 && strcmp(argv[0], "archive") == 0};
	int c;

	optind = 0; /* reset getopt, also for a second parse in one process */
	opterr = 0;
	while ((c = getopt_long(argc, argv, "h:P:S:u:p::D:", long_opts, NULL)) != -1) {
		if (c == '?') {
			if (unknown_flag(o, argv, err) < 0)
				return -1;
			continue;
		}
		int rc = NOT_MINE;
		for (size_t g = 0;
		     rc == NOT_MINE && g < sizeof(flag_groups) / sizeof(flag_groups[0]); g++)
			rc = flag_groups[g](&fc, c, optarg, err);
		if (rc == NOT_MINE)
			return ev_error_set(err, EV_ERR_USAGE, _("unknown option"));
		if (rc < 0)
			return -1;
	}
	o->nargs = argc - optind;
	o->args = argv + optind;
	if (o->prompt_password && !o->help && ev_opts_prompt_password(o, err) < 0)
		return -1;
	return 0;
}

int ev_opts_prompt_password(struct ev_opts *o, struct ev_error *err)
{
	int fd = open("/dev/tty", O_RDWR | O_NOCTTY | O_CLOEXEC);
	struct termios old, quiet;
	char buf[512];
	size_t n = 0;

	if (fd < 0)
		return ev_error_set(
		        err, EV_ERR_USAGE,
		        _("-p: no terminal to ask for the password on; put it in an option "
		          "file ([client] password=...) and use --defaults-file"));
	const char *prompt = _("Enter password: ");
	if (write(fd, prompt, strlen(prompt)) < 0) {
		close(fd);
		return ev_error_set(err, EV_ERR_USAGE, _("-p: cannot write to the terminal"));
	}
	bool restore = tcgetattr(fd, &old) == 0;
	if (restore) {
		quiet = old;
		quiet.c_lflag &= ~(tcflag_t)(ECHO | ECHONL);
		tcsetattr(fd, TCSAFLUSH, &quiet);
	}
	for (;;) {
		char ch;
		ssize_t r = read(fd, &ch, 1);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0 || ch == '\n' || ch == '\r')
			break;
		if (n + 1 < sizeof(buf))
			buf[n++] = ch;
	}
	buf[n] = '\0';
	if (restore)
		tcsetattr(fd, TCSAFLUSH, &old);
	if (write(fd, "\n", 1) < 0) {
		/* nothing to do: the prompt line stays open */
	}
	close(fd);
	set_str(&o->password, buf);
	memset(buf, 0, sizeof(buf));
	return 0;
}

void ev_opts_free(struct ev_opts *o)
{
	if (o->password != NULL) {
		memset(o->password, 0, strlen(o->password));
		free(o->password);
	}
	free(o->log_sql);
	free(o->by);
	free(o->script);
	free(o->warning);
	free(o->critical);
	free(o->unmask);
	free(o->listen);
	free(o->textfile);
	free(o->tls_cert);
	free(o->tls_key);
	free(o->basic_auth_file);
	free(o->archive_status);
	free(o->archive_to);
	free(o->archive_file);
	free(o->until_clock);
	free(o->after);
	free(o->audit_operator);
	free(o->audit_action);
	free(o->audit_result);
	free(o->chosen);
	ev_filter_free(&o->filter);
	ev_config_free(&o->cfg);
	memset(o, 0, sizeof(*o));
}

const char *ev_opts_table_name(const struct ev_opts *o, enum ev_table_kind t)
{
	const char *name = t == EV_TABLE_OUTBOX ? o->src->outbox_table : o->src->message_table;
	return name ? name : ev_model_table(t)->default_name;
}
