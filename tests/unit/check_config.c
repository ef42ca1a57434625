/* core/config: the config file's settings, its errors (with line numbers), loading, and the
 * value parsers shared with the command-line flags. */
#include <config.h>

#include "core/config.h"
#include "core/model.h"

#include <check.h>
#include <limits.h>
#include <pwd.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Parse `text` into a fresh config and expect it to fail with exactly `want`. */
static void expect_error(const char *text, const char *want)
{
	struct ev_config cfg;
	struct ev_error err = {0};
	int rc;

	ev_config_init(&cfg);
	rc = ev_config_parse(&cfg, text, "t.conf", &err);
	ev_config_free(&cfg);
	ck_assert_msg(rc == -1, "accepted: %.200s", text);
	ck_assert_int_eq(err.code, EV_ERR_CONFIG);
	ck_assert_str_eq(err.msg, want);
}

/* Parse `text` into cfg (already initialised) and expect success. */
static void parse_ok(struct ev_config *cfg, const char *text)
{
	struct ev_error err = {0};

	ck_assert_msg(ev_config_parse(cfg, text, "t.conf", &err) == 0, "rejected: %s", err.msg);
	ck_assert_int_eq(err.code, 0);
}

static size_t strv_len(char **v)
{
	size_t n = 0;

	while (v != NULL && v[n] != NULL)
		n++;
	return n;
}

static void assert_source_defaults(const struct ev_source *s)
{
	ck_assert_str_eq(s->defaults_group, "evtop");
	ck_assert_str_eq(s->outbox_table, "biz_outbox_event");
	ck_assert_str_eq(s->message_table, "biz_message_event");
	ck_assert_ptr_null(s->defaults_file);
	ck_assert_ptr_null(s->host);
	ck_assert_uint_eq(s->port, 0);
	ck_assert_ptr_null(s->socket);
	ck_assert_ptr_null(s->user);
	ck_assert_ptr_null(s->database);
	ck_assert_ptr_null(s->time_zone);
	ck_assert(!s->ssl);
	ck_assert(!s->ssl_verify);
	ck_assert_ptr_null(s->ssl_ca);
	ck_assert_ptr_null(s->ssl_capath);
	ck_assert_ptr_null(s->ssl_cert);
	ck_assert_ptr_null(s->ssl_key);
	ck_assert_ptr_null(s->ssl_cipher);
}

/* ---- defaults and settings ------------------------------------------------------------- */

START_TEST(init_sets_defaults)
{
	struct ev_config cfg;

	ev_config_init(&cfg);
	ck_assert_int_eq(cfg.refresh_ms, 2000);
	ck_assert_int_eq(cfg.budget_permille, 10);
	ck_assert_int_eq(cfg.stuck_threshold_s, 600);
	ck_assert_int_eq(cfg.window_s, 3600);
	ck_assert_int_eq(cfg.statement_timeout_ms, 5000);
	ck_assert_int_eq(cfg.connect_timeout_s, 3);
	ck_assert_int_eq(cfg.read_timeout_s, 15);
	ck_assert_int_eq(cfg.write_timeout_s, 5);
	ck_assert_int_eq(cfg.high_retry_min, 3);
	ck_assert_int_eq(cfg.page_size, 100);
	ck_assert(!cfg.read_only);
	ck_assert(!cfg.recover_message);
	ck_assert_ptr_null(cfg.operator_id);
	ck_assert_ptr_null(cfg.theme);
	ck_assert_ptr_null(cfg.export_dir);
	ck_assert_uint_eq(strv_len(cfg.protected_types), 4);
	ck_assert_str_eq(cfg.protected_types[0], "PAY");
	ck_assert_str_eq(cfg.protected_types[1], "REFUND");
	ck_assert_str_eq(cfg.protected_types[2], "STOCK");
	ck_assert_str_eq(cfg.protected_types[3], "INVENTORY");
	ck_assert_int_eq(cfg.nsources, 1);
	ck_assert_str_eq(cfg.sources[0].name, "default");
	assert_source_defaults(&cfg.sources[0]);
	ck_assert_ptr_eq(ev_config_source(&cfg, "default"), &cfg.sources[0]);
	ev_config_free(&cfg);
	ck_assert_ptr_null(cfg.sources);
	ck_assert_int_eq(cfg.nsources, 0);
	ck_assert_ptr_null(cfg.protected_types);
	ev_config_free(&cfg); /* a second free is harmless */
}
END_TEST

START_TEST(empty_text_changes_nothing)
{
	struct ev_config cfg;

	ev_config_init(&cfg);
	parse_ok(&cfg, "");
	parse_ok(&cfg, "\n\n   \t\n# only comments\n; and these\n   # indented\n");
	ck_assert_int_eq(cfg.refresh_ms, 2000);
	ck_assert_int_eq(cfg.nsources, 1);
	ck_assert_str_eq(cfg.sources[0].name, "default");
	ev_config_free(&cfg);
}
END_TEST

START_TEST(every_global_setting)
{
	struct ev_config cfg;

	ev_config_init(&cfg);
	parse_ok(&cfg, "# evtop\n"
	               "[evtop]                       # global settings\n"
	               "refresh = 500ms\n"
	               "budget = 2.5%\n"
	               "stuck_threshold = 15m\n"
	               "window = 2h\n"
	               "statement_timeout = 3s\n"
	               "connect_timeout = 4s\n"
	               "read_timeout = 1m\n"
	               "write_timeout = 7\n"
	               "high_retry = 5\n"
	               "page_size = 250\n"
	               "read_only = yes\n"
	               "recover_message = ON\n"
	               "operator = INC-1234\n"
	               "theme = mono\n"
	               "protected_types = pay, Refund,GIFT\n");
	ck_assert_int_eq(cfg.refresh_ms, 500);
	ck_assert_int_eq(cfg.budget_permille, 25);
	ck_assert_int_eq(cfg.stuck_threshold_s, 900);
	ck_assert_int_eq(cfg.window_s, 7200);
	ck_assert_int_eq(cfg.statement_timeout_ms, 3000);
	ck_assert_int_eq(cfg.connect_timeout_s, 4);
	ck_assert_int_eq(cfg.read_timeout_s, 60);
	ck_assert_int_eq(cfg.write_timeout_s, 7);
	ck_assert_int_eq(cfg.high_retry_min, 5);
	ck_assert_int_eq(cfg.page_size, 250);
	ck_assert(cfg.read_only);
	ck_assert(cfg.recover_message);
	ck_assert_str_eq(cfg.operator_id, "INC-1234");
	ck_assert_str_eq(cfg.theme, "mono");
	ck_assert_uint_eq(strv_len(cfg.protected_types), 3);
	ck_assert_str_eq(cfg.protected_types[0], "PAY");
	ck_assert_str_eq(cfg.protected_types[1], "REFUND");
	ck_assert_str_eq(cfg.protected_types[2], "GIFT");
	/* No [source] section: the implicit default source stays. */
	ck_assert_int_eq(cfg.nsources, 1);
	ck_assert_str_eq(cfg.sources[0].name, "default");
	/* Later settings win, and the booleans go back. */
	parse_ok(&cfg, "read_only = false\nrecover_message = 0\ntheme = default\nrefresh = 3\n"
	               "refresh = 4s\nexport_dir = /srv/ops/evtop exports\n");
	ck_assert(!cfg.read_only);
	ck_assert(!cfg.recover_message);
	ck_assert_str_eq(cfg.theme, "default");
	ck_assert_str_eq(cfg.export_dir, "/srv/ops/evtop exports");
	ck_assert_int_eq(cfg.refresh_ms, 4000);
	ev_config_free(&cfg);
}
END_TEST

START_TEST(settings_before_a_section_are_global)
{
	struct ev_config cfg;

	ev_config_init(&cfg);
	parse_ok(&cfg, "page_size = 7\n[source a]\nhost = h\n[evtop]\npage_size = 8\n"
	               "[evtop]\nhigh_retry = 9\n");
	ck_assert_int_eq(cfg.page_size, 8);
	ck_assert_int_eq(cfg.high_retry_min, 9);
	ck_assert_int_eq(cfg.nsources, 1);
	ck_assert_str_eq(cfg.sources[0].host, "h");
	ev_config_free(&cfg);
}
END_TEST

START_TEST(every_source_setting)
{
	struct ev_config cfg;
	struct ev_source *s;

	ev_config_init(&cfg);
	parse_ok(&cfg, "[source db1.main-2]\n"
	               "defaults_file = /etc/evtop/my.cnf\n"
	               "defaults_group = evtop-db1\n"
	               "host = db1.example\n"
	               "port = 3307\n"
	               "socket = /run/mysqld/mysqld.sock\n"
	               "user = evtop_watch\n"
	               "database = events\n"
	               "outbox_table = my_outbox$1\n"
	               "message_table = my_message\n"
	               "time_zone = +08:00\n"
	               "ssl = true\n"
	               "ssl_verify = true\n"
	               "ssl_ca = /etc/ssl/ca.pem\n"
	               "ssl_capath = /etc/ssl/certs\n"
	               "ssl_cert = /etc/ssl/client.pem\n"
	               "ssl_key = /etc/ssl/client.key\n"
	               "ssl_cipher = ECDHE-RSA-AES128-GCM-SHA256:ECDHE-RSA-AES256-GCM-SHA384\n");
	/* The first [source] replaces the implicit "default" one. */
	ck_assert_int_eq(cfg.nsources, 1);
	ck_assert_ptr_null(ev_config_source(&cfg, "default"));
	s = ev_config_source(&cfg, "db1.main-2");
	ck_assert_ptr_nonnull(s);
	ck_assert_str_eq(s->name, "db1.main-2");
	ck_assert_str_eq(s->defaults_file, "/etc/evtop/my.cnf");
	ck_assert_str_eq(s->defaults_group, "evtop-db1");
	ck_assert_str_eq(s->host, "db1.example");
	ck_assert_uint_eq(s->port, 3307);
	ck_assert_str_eq(s->socket, "/run/mysqld/mysqld.sock");
	ck_assert_str_eq(s->user, "evtop_watch");
	ck_assert_str_eq(s->database, "events");
	ck_assert_str_eq(s->outbox_table, "my_outbox$1");
	ck_assert_str_eq(s->message_table, "my_message");
	ck_assert_int_eq(ev_source_table_kind(s, "my_outbox$1"), EV_TABLE_OUTBOX);
	ck_assert_int_eq(ev_source_table_kind(s, "my_message"), EV_TABLE_MESSAGE);
	ck_assert_int_eq(ev_source_table_kind(s, "biz_outbox_event"), -1);
	ck_assert_int_eq(ev_source_table_kind(s, NULL), -1);
	ck_assert_str_eq(s->time_zone, "+08:00");
	ck_assert(s->ssl);
	ck_assert(s->ssl_verify);
	ck_assert_str_eq(s->ssl_ca, "/etc/ssl/ca.pem");
	ck_assert_str_eq(s->ssl_capath, "/etc/ssl/certs");
	ck_assert_str_eq(s->ssl_cert, "/etc/ssl/client.pem");
	ck_assert_str_eq(s->ssl_key, "/etc/ssl/client.key");
	ck_assert_str_eq(s->ssl_cipher, "ECDHE-RSA-AES128-GCM-SHA256:ECDHE-RSA-AES256-GCM-SHA384");
	ev_config_free(&cfg);
}
END_TEST

START_TEST(multiple_sources)
{
	struct ev_config cfg;

	ev_config_init(&cfg);
	parse_ok(&cfg, "[evtop]\nrefresh = 5s\n"
	               "[source shard_1]\nhost = s1\nport = 1\n"
	               "[source shard_2]\nhost = s2\nport = 65535\ntime_zone = Asia/Shanghai\n"
	               "[source orders]\nsocket = /tmp/o.sock\n");
	ck_assert_int_eq(cfg.refresh_ms, 5000);
	ck_assert_int_eq(cfg.nsources, 3);
	ck_assert_str_eq(cfg.sources[0].name, "shard_1");
	ck_assert_str_eq(cfg.sources[1].name, "shard_2");
	ck_assert_str_eq(cfg.sources[2].name, "orders");
	ck_assert_str_eq(cfg.sources[0].host, "s1");
	ck_assert_uint_eq(cfg.sources[0].port, 1);
	ck_assert_str_eq(cfg.sources[1].host, "s2");
	ck_assert_uint_eq(cfg.sources[1].port, 65535);
	ck_assert_str_eq(cfg.sources[1].time_zone, "Asia/Shanghai");
	ck_assert_ptr_null(cfg.sources[0].time_zone);
	/* Each new source starts from the defaults. */
	ck_assert_str_eq(cfg.sources[2].socket, "/tmp/o.sock");
	ck_assert_ptr_null(cfg.sources[2].host);
	ck_assert_str_eq(cfg.sources[2].outbox_table, "biz_outbox_event");
	ck_assert_str_eq(cfg.sources[2].message_table, "biz_message_event");
	ck_assert_str_eq(cfg.sources[2].defaults_group, "evtop");
	ck_assert_ptr_eq(ev_config_source(&cfg, "shard_2"), &cfg.sources[1]);
	ck_assert_ptr_null(ev_config_source(&cfg, "shard_3"));
	ck_assert_ptr_null(ev_config_source(&cfg, "default"));
	ev_config_free(&cfg);
}
END_TEST

START_TEST(a_source_named_default_is_allowed)
{
	struct ev_config cfg;

	ev_config_init(&cfg);
	parse_ok(&cfg, "[source default]\nhost = d\n[source other]\n");
	ck_assert_int_eq(cfg.nsources, 2);
	ck_assert_str_eq(ev_config_source(&cfg, "default")->host, "d");
	assert_source_defaults(ev_config_source(&cfg, "other"));
	ev_config_free(&cfg);
}
END_TEST

START_TEST(each_text_replaces_the_sources_once)
{
	struct ev_config cfg;

	/* Within a text, the first [source] replaces what cfg held and later ones add to it; a
	 * text without [source] sections leaves the sources alone. */
	ev_config_init(&cfg);
	parse_ok(&cfg, "[source a]\n[source b]\n");
	parse_ok(&cfg, "refresh = 3s\n");
	ck_assert_int_eq(cfg.nsources, 2);
	parse_ok(&cfg, "[source c]\n[source a]\nhost = h\n");
	ck_assert_int_eq(cfg.nsources, 2);
	ck_assert_str_eq(cfg.sources[0].name, "c");
	ck_assert_str_eq(cfg.sources[1].name, "a");
	ck_assert_str_eq(cfg.sources[1].host, "h");
	ev_config_free(&cfg);
}
END_TEST

START_TEST(ssl_files_imply_ssl)
{
	static const char *const texts[] = {
	        "[source a]\nssl_verify = true\n",
	        "[source a]\nssl_ca = /ca.pem\n",
	        "[source a]\nssl_capath = /certs\n",
	        "[source a]\nssl_cert = /c.pem\n",
	        "[source a]\nssl_key = /k.pem\n",
	        "[source a]\nssl_cipher = AES128-SHA\n",
	        "[source a]\nssl = false\nssl_ca = /ca.pem\n",
	};

	for (size_t i = 0; i < sizeof(texts) / sizeof(texts[0]); i++) {
		struct ev_config cfg;

		ev_config_init(&cfg);
		parse_ok(&cfg, texts[i]);
		ck_assert_msg(cfg.sources[0].ssl, "ssl not implied by: %s", texts[i]);
		ev_config_free(&cfg);
	}
	/* ssl alone encrypts without verifying; ssl_verify stays as written. */
	struct ev_config cfg;
	ev_config_init(&cfg);
	parse_ok(&cfg, "[source a]\nssl = on\n[source b]\nssl_verify = false\n");
	ck_assert(cfg.sources[0].ssl);
	ck_assert(!cfg.sources[0].ssl_verify);
	ck_assert(!cfg.sources[1].ssl);
	ev_config_free(&cfg);
}
END_TEST

START_TEST(quoting_and_comments)
{
	struct ev_config cfg;

	ev_config_init(&cfg);
	parse_ok(&cfg, "\xEF\xBB\xBF# a byte-order mark first, CRLF line ends\r\n"
	               "operator = \"INC #1; see wiki\"   # the quotes keep '#' and ';'\r\n"
	               "[source a]   ; a comment after a header\r\n"
	               "  host   =   db1.example   # trailing comment\r\n"
	               "user = a#b;c\n"
	               "database=\"  spaced  \"\n"
	               "socket = \"/tmp/a \\\"q\\\" b\\\\c\\d\" ; comment\n"
	               "ssl_ca = /path/with spaces/ca.pem\n"
	               "ssl_key = x\t; tab before the comment\n"
	               "defaults_file = \"/a/\xE4\xBD\xA0\xE5\xA5\xBD.cnf\"\n"
	               "\t[evtop]\t\n"
	               "theme=default\n");
	ck_assert_str_eq(cfg.operator_id, "INC #1; see wiki");
	ck_assert_str_eq(cfg.sources[0].name, "a");
	ck_assert_str_eq(cfg.sources[0].host, "db1.example");
	ck_assert_str_eq(cfg.sources[0].user, "a#b;c");
	ck_assert_str_eq(cfg.sources[0].database, "  spaced  ");
	ck_assert_str_eq(cfg.sources[0].socket, "/tmp/a \"q\" b\\c\\d");
	ck_assert_str_eq(cfg.sources[0].ssl_ca, "/path/with spaces/ca.pem");
	ck_assert_str_eq(cfg.sources[0].ssl_key, "x");
	ck_assert_str_eq(cfg.sources[0].defaults_file, "/a/\xE4\xBD\xA0\xE5\xA5\xBD.cnf");
	ck_assert_str_eq(cfg.theme, "default");
	ev_config_free(&cfg);
}
END_TEST

/* Every setting with a range: the bounds are accepted and stored, one step beyond is not. */
static const struct {
	const char *key;
	size_t offset; /* of an int in struct ev_config */
	const char *low, *below;
	int low_value;
	const char *high, *above;
	int high_value;
	const char *range;
} bounds[] = {
        {"refresh", offsetof(struct ev_config, refresh_ms), "100ms", "99ms", 100, "1h", "3600001ms",
         3600000, "(100ms .. 1h)"},
        {"budget", offsetof(struct ev_config, budget_permille), "0.1%", "0.0%", 1, "100%", "100.1%",
         1000, NULL},
        {"stuck_threshold", offsetof(struct ev_config, stuck_threshold_s), "1s", "999ms", 1, "7d",
         "604801", 604800, "(1s .. 7d)"},
        {"window", offsetof(struct ev_config, window_s), "1m", "59s", 60, "30d", "2592001s",
         2592000, "(1m .. 30d)"},
        {"statement_timeout", offsetof(struct ev_config, statement_timeout_ms), "100ms", "99ms",
         100, "10m", "601s", 600000, "(100ms .. 10m)"},
        {"connect_timeout", offsetof(struct ev_config, connect_timeout_s), "1", "0", 1, "60s",
         "61s", 60, "(1s .. 1m)"},
        {"read_timeout", offsetof(struct ev_config, read_timeout_s), "1s", "0s", 1, "10m", "601",
         600, "(1s .. 10m)"},
        {"write_timeout", offsetof(struct ev_config, write_timeout_s), "1000ms", "0ms", 1, "600s",
         "10m1s", 600, "(1s .. 10m)"},
        {"high_retry", offsetof(struct ev_config, high_retry_min), "1", "0", 1, "1000000",
         "1000001", 1000000, "(1 .. 1000000)"},
        {"page_size", offsetof(struct ev_config, page_size), "1", "0", 1, "1000", "1001", 1000,
         "(1 .. 1000)"},
};

static void expect_bound_error(const char *key, const char *value, const char *range)
{
	char text[128], want[256];

	snprintf(text, sizeof(text), "\n%s = %s\n", key, value);
	if (range != NULL)
		snprintf(want, sizeof(want), "t.conf:2: %s: %s is out of range %s", key, value,
		         range);
	else if (strcmp(key, "budget") == 0)
		snprintf(want, sizeof(want),
		         "t.conf:2: budget: expected a percentage of one core from 0.1%% to 100%% "
		         "(at most one decimal), got '%s'",
		         value);
	else
		snprintf(want, sizeof(want),
		         "t.conf:2: %s: expected a duration like 2s or 500ms, got '%s'", key,
		         value);
	expect_error(text, want);
}

START_TEST(range_bounds)
{
	struct ev_config cfg;
	char text[128];
	const int *field;

	ev_config_init(&cfg);
	field = (const int *)(const void *)((const char *)&cfg + bounds[_i].offset);
	snprintf(text, sizeof(text), "%s = %s\n", bounds[_i].key, bounds[_i].low);
	parse_ok(&cfg, text);
	ck_assert_int_eq(*field, bounds[_i].low_value);
	snprintf(text, sizeof(text), "%s = %s\n", bounds[_i].key, bounds[_i].high);
	parse_ok(&cfg, text);
	ck_assert_int_eq(*field, bounds[_i].high_value);
	ev_config_free(&cfg);
	expect_bound_error(bounds[_i].key, bounds[_i].below, bounds[_i].range);
	/* "10m1s" is not a duration at all; the others are plain out-of-range values. */
	expect_bound_error(bounds[_i].key, bounds[_i].above,
	                   strcmp(bounds[_i].above, "10m1s") == 0 ? NULL : bounds[_i].range);
}
END_TEST

START_TEST(port_bounds)
{
	expect_error("[source a]\nport = 0\n", "t.conf:2: port: 0 is out of range (1 .. 65535)");
	expect_error("[source a]\nport = 65536\n",
	             "t.conf:2: port: 65536 is out of range (1 .. 65535)");
	expect_error("[source a]\nport = 33o6\n",
	             "t.conf:2: port: expected a whole number, got '33o6'");
}
END_TEST

START_TEST(protected_types_replace_the_defaults)
{
	struct ev_config cfg;

	ev_config_init(&cfg);
	parse_ok(&cfg, "protected_types = gift\nprotected_types = coupon, GIFT, coupon\n");
	ck_assert_uint_eq(strv_len(cfg.protected_types), 2);
	ck_assert_str_eq(cfg.protected_types[0], "COUPON");
	ck_assert_str_eq(cfg.protected_types[1], "GIFT");
	ev_config_free(&cfg);
}
END_TEST

/* ---- errors, with their exact line numbers ------------------------------------------------- */

static const struct {
	const char *text;
	const char *msg;
} errors[] = {
        {"[foo]\n",
         "t.conf:1: unknown section [foo]; expected [evtop], [keys], [mask] or [source NAME]"},
        {"\n[sources a]\n", "t.conf:2: unknown section [sources a]; expected [evtop], [keys], "
                            "[mask] or [source NAME]"},
        {"[evtop x]\n",
         "t.conf:1: unknown section [evtop x]; expected [evtop], [keys], [mask] or [source NAME]"},
        {"[evtop]\nrefresh = 2s\nfoo = 1\n", "t.conf:3: unknown key 'foo' in [evtop]"},
        {"[keys]\nbind = x\n",
         "t.conf:2: bind: expected '[VIEW] KEY ACTION' (e.g. 'bind = list x cancel'), got 1 "
         "word"},
        {"[keys]\nbind = a b c d\n",
         "t.conf:2: bind: expected '[VIEW] KEY ACTION' (e.g. 'bind = list x cancel'), got 4 "
         "words"},
        {"[keys]\nrefresh = 2s\n",
         "t.conf:2: unknown key 'refresh' in [keys]; expected 'bind = [VIEW] KEY ACTION'"},
        {"bind = list x cancel\n",
         "t.conf:1: unknown key 'bind' in [evtop]; key bindings belong in [keys]"},
        {"[source db1]\nfoo = 1\n", "t.conf:2: unknown key 'foo' in [source db1]"},
        {"host = db1\n",
         "t.conf:1: unknown key 'host' in [evtop]; it belongs in a [source NAME] section"},
        {"[evtop]\n[source a]\n[evtop]\nhost = x\n",
         "t.conf:4: unknown key 'host' in [evtop]; it belongs in a [source NAME] section"},
        {"[source a]\nrefresh = 2s\n",
         "t.conf:2: unknown key 'refresh' in [source a]; it belongs in [evtop]"},
        {"Refresh = 2s\n", "t.conf:1: unknown key 'Refresh' in [evtop]"},
        {"\n\nrefresh 2s\n", "t.conf:3: missing '=': expected 'key = value' or a [section]"},
        {"= 2s\n", "t.conf:1: missing the key before '='"},
        {"refresh =\n", "t.conf:1: refresh: no value given; expected a duration like 2s or 500ms"},
        {"refresh =   # nothing\n",
         "t.conf:1: refresh: no value given; expected a duration like 2s or 500ms"},
        {"refresh = \"\"\n",
         "t.conf:1: refresh: no value given; expected a duration like 2s or 500ms"},
        {"[source a]\nhost = ;x\n", "t.conf:2: host: no value given; expected a value"},
        {"# c\nrefresh = fast\n",
         "t.conf:2: refresh: expected a duration like 2s or 500ms, got 'fast'"},
        {"refresh = 1.5s\n", "t.conf:1: refresh: expected a duration like 2s or 500ms, got '1.5s'"},
        {"refresh = 2 s\n", "t.conf:1: refresh: expected a duration like 2s or 500ms, got '2 s'"},
        {"refresh = -2s\n", "t.conf:1: refresh: expected a duration like 2s or 500ms, got '-2s'"},
        {"refresh = 99999999999999999999ms\n",
         "t.conf:1: refresh: expected a duration like 2s or 500ms, got '99999999999999999999ms'"},
        {"stuck_threshold = 1500ms\n",
         "t.conf:1: stuck_threshold: expected whole seconds, got '1500ms'"},
        {"budget = 1\n",
         "t.conf:1: budget: expected a percentage of one core from 0.1% to 100% (at "
         "most one decimal), got '1'"},
        {"budget = 0.25%\n",
         "t.conf:1: budget: expected a percentage of one core from 0.1% to 100% "
         "(at most one decimal), got '0.25%'"},
        {"page_size = ten\n", "t.conf:1: page_size: expected a whole number, got 'ten'"},
        {"page_size = -5\n", "t.conf:1: page_size: expected a whole number, got '-5'"},
        {"high_retry = 99999999999999999999\n",
         "t.conf:1: high_retry: expected a whole number, got '99999999999999999999'"},
        {"read_only = maybe\n",
         "t.conf:1: read_only: expected true or false (or yes/no, on/off, 1/0), got 'maybe'"},
        {"[source a]\nssl = 2\n",
         "t.conf:2: ssl: expected true or false (or yes/no, on/off, 1/0), got '2'"},
        {"[source a]\nssl_verify = sure\n",
         "t.conf:2: ssl_verify: expected true or false (or yes/no, on/off, 1/0), got 'sure'"},
        {"recover_message = \n",
         "t.conf:1: recover_message: no value given; expected true or false"},
        {"[source a]\noutbox_table = x;DROP\n", "t.conf:2: outbox_table: expected a table name of "
                                                "up to 64 letters, digits, '_' or '$', got "
                                                "'x;DROP'"},
        {"[source a]\nmessage_table = 123\n",
         "t.conf:2: message_table: expected a table name of up to 64 letters, digits, '_' or '$', "
         "got '123'"},
        {"[source a]\ntime_zone = +25:00\n",
         "t.conf:2: time_zone: expected a time zone like +08:00, SYSTEM or Asia/Shanghai, got "
         "'+25:00'"},
        {"[source a]\ntime_zone = \"'; x\"\n", "t.conf:2: time_zone: expected a time zone like "
                                               "+08:00, SYSTEM or Asia/Shanghai, got ''; x'"},
        {"theme = dark\n", "t.conf:1: theme: expected default or mono, got 'dark'"},
        {"theme = Mono\n", "t.conf:1: theme: expected default or mono, got 'Mono'"},
        {"export_dir = exports\n", "t.conf:1: export_dir: expected an absolute directory path "
                                   "(starting with /), got 'exports'"},
        {"export_dir = ~/x\n", "t.conf:1: export_dir: expected an absolute directory path "
                               "(starting with /), got '~/x'"},
        {"protected_types = PAY,,REFUND\n", "t.conf:1: protected_types: expected a comma-separated "
                                            "list of words of letters and digits, "
                                            "like PAY, REFUND, got 'PAY,,REFUND'"},
        {"protected_types = STOCK_IN\n", "t.conf:1: protected_types: expected a comma-separated "
                                         "list of words of letters and digits, "
                                         "like PAY, REFUND, got 'STOCK_IN'"},
        {"[source a]\ndefaults_group = \"a b\"\n",
         "t.conf:2: defaults_group: expected an option-file group name of letters, digits, '_', "
         "'.' "
         "or '-', got 'a b'"},
        {"[source a]\nhost = x\n\n[source b]\n[source a]\n",
         "t.conf:5: duplicate [source a] (first defined on line 1)"},
        {"[source]\n", "t.conf:1: a source section needs a name: [source NAME]"},
        {"[ source   ]\n", "t.conf:1: a source section needs a name: [source NAME]"},
        {"[source a b]\n",
         "t.conf:1: source name 'a b': expected 1 to 64 letters, digits, '_', '.' or '-'"},
        {"[source a/b]\n",
         "t.conf:1: source name 'a/b': expected 1 to 64 letters, digits, '_', '.' or '-'"},
        {"[source "
         "a1234567890123456789012345678901234567890123456789012345678901234]\n",
         "t.conf:1: source name "
         "'a12345678901234567890123456789012345678901234567890123456789...': expected 1 to 64 "
         "letters, digits, '_', '.' or '-'"},
        {"[evtop\n", "t.conf:1: a section header needs a closing ']'"},
        {"[evtop] x\n", "t.conf:1: unexpected text after ']'"},
        {"password = x\n", "t.conf:1: password: passwords belong in an option file (defaults_file) "
                           "or at the prompt (-p), never in evtop's config"},
        {"[source a]\nuser = u\npassword = \"s3cret\"\n",
         "t.conf:3: password: passwords belong in an option file (defaults_file) or at the prompt "
         "(-p), never in evtop's config"},
        {"[source a]\n  PASSWORD=x\n",
         "t.conf:2: password: passwords belong in an option file (defaults_file) or at the prompt "
         "(-p), never in evtop's config"},
        {"\npassword\n",
         "t.conf:2: password: passwords belong in an option file (defaults_file) or "
         "at the prompt (-p), never in evtop's config"},
        {"passwords = x\n", "t.conf:1: unknown key 'passwords' in [evtop]"},
        {"operator = \"abc\n", "t.conf:1: operator: the quoted value has no closing '\"'"},
        {"operator = \"a\\\"\n", "t.conf:1: operator: the quoted value has no closing '\"'"},
        {"operator = \"abc\" def\n", "t.conf:1: operator: unexpected text after the closing '\"'"},
        {"# ok\noperator = \xFF\n", "t.conf:2: invalid UTF-8 (byte 0xFF); the file must be UTF-8"},
        {"operator = \xC0\xAF\n", "t.conf:1: invalid UTF-8 (byte 0xC0); the file must be UTF-8"},
        {"operator = \xED\xA0\x80\n",
         "t.conf:1: invalid UTF-8 (byte 0xED); the file must be UTF-8"},
        {"operator = \xF4\x90\x80\x80\n",
         "t.conf:1: invalid UTF-8 (byte 0xF4); the file must be UTF-8"},
        {"\n\noperator = \xE4\xB8", "t.conf:3: invalid UTF-8 (byte 0xE4); the file must be UTF-8"},
        {"# \xE4\xB8\n", "t.conf:1: invalid UTF-8 (byte 0xE4); the file must be UTF-8"},
        {"operator = a\x1B[31m\n", "t.conf:1: control character (byte 0x1B) in the file"},
        {"operator = a\rb\n", "t.conf:1: control character (byte 0x0D) in the file"},
        {"operator = a\x7F\n", "t.conf:1: control character (byte 0x7F) in the file"},
        {"operator = a\xC2\x9B"
         "31m\n",
         "t.conf:1: control character (U+009B) in the file"},
        {"refresh = 2s\r\n\r\nbad\r\n",
         "t.conf:3: missing '=': expected 'key = value' or a [section]"},
        {"\n\n[x]",
         "t.conf:3: unknown section [x]; expected [evtop], [keys], [mask] or [source NAME]"},
        {"theme = "
         "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\n",
         "t.conf:1: theme: expected default or mono, got "
         "'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx...'"},
};

/* [keys]: each bind line kept in order with its file and line, the key's case as written. */
START_TEST(key_bindings)
{
	struct ev_config cfg;
	ev_config_init(&cfg);
	parse_ok(&cfg, "refresh = 2s\n[keys]\n# mine\nbind = list x cancel\nbind =   F9  retry\n"
	               "bind = dashboard R none\n[evtop]\nwindow = 1h\n");
	ck_assert_int_eq(cfg.nkeys, 3);
	ck_assert_str_eq(cfg.keys[0].view, "list");
	ck_assert_str_eq(cfg.keys[0].key, "x");
	ck_assert_str_eq(cfg.keys[0].action, "cancel");
	ck_assert_str_eq(cfg.keys[0].where, "t.conf:4");
	ck_assert_ptr_null(cfg.keys[1].view);
	ck_assert_str_eq(cfg.keys[1].key, "F9");
	ck_assert_str_eq(cfg.keys[1].action, "retry");
	ck_assert_str_eq(cfg.keys[2].view, "dashboard");
	ck_assert_str_eq(cfg.keys[2].key, "R");
	ck_assert_str_eq(cfg.keys[2].where, "t.conf:6");
	ck_assert_int_eq(cfg.window_s, 3600);
	ev_config_free(&cfg);
	ck_assert_int_eq(cfg.nkeys, 0);
}
END_TEST

/* [mask]: the key rules replaced or added to, the identifiers, the patterns and their style;
 * a source's mask = off; errors with their line. */
START_TEST(mask_section)
{
	struct ev_config cfg;
	ev_config_init(&cfg);
	ck_assert_uint_gt(cfg.mask.nkeys, 10);
	ck_assert_uint_eq(cfg.mask.patterns, EV_MASK_P_ALL);
	ck_assert(cfg.sources[0].mask);
	parse_ok(&cfg, "[mask]\nkeys = phone password:all 手机号:keep\nkey = contactTel all\n"
	               "identifiers = *id orderSn\npatterns = mobile, email\nstyle = all\n"
	               "[source test]\nmask = off\n[source prod]\n");
	ck_assert_uint_eq(cfg.mask.nkeys, 4);
	ck_assert_str_eq(cfg.mask.keys[0].glob, "phone");
	ck_assert_int_eq(cfg.mask.keys[0].style, EV_MASK_KEEP);
	ck_assert_int_eq(cfg.mask.keys[1].style, EV_MASK_ALL);
	ck_assert_str_eq(cfg.mask.keys[2].glob, "手机号");
	ck_assert_str_eq(cfg.mask.keys[3].glob, "contactTel");
	ck_assert_int_eq(cfg.mask.keys[3].style, EV_MASK_ALL);
	ck_assert_uint_eq(cfg.mask.nident, 2);
	ck_assert_str_eq(cfg.mask.ident[1], "orderSn");
	ck_assert_uint_eq(cfg.mask.patterns, EV_MASK_P_MOBILE | EV_MASK_P_EMAIL);
	ck_assert_int_eq(cfg.mask.pattern_style, EV_MASK_ALL);
	ck_assert_int_eq(cfg.nsources, 2);
	ck_assert(!cfg.sources[0].mask);
	ck_assert(cfg.sources[1].mask);
	ev_config_free(&cfg);
	ev_config_init(&cfg);
	parse_ok(&cfg, "[mask]\npatterns = none\n");
	ck_assert_uint_eq(cfg.mask.patterns, 0);
	ev_config_free(&cfg);
	expect_error("[mask]\npatterns = phone\n",
	             "t.conf:2: patterns: unknown pattern 'phone' (mobile, idcard, bankcard, email "
	             "or none)");
	expect_error("[mask]\nstyle = some\n", "t.conf:2: style: keep or all");
	expect_error("[mask]\nkeys = phone:half\n",
	             "t.conf:2: keys: 'half': a style is keep or all");
	expect_error("[mask]\nkey = a b c\n", "t.conf:2: key: expected 'GLOB [keep|all]'");
	expect_error("[mask]\nshow = yes\n",
	             "t.conf:2: unknown key 'show' in [mask]; expected keys, key, identifiers, "
	             "patterns or style");
	expect_error(
	        "mask = off\n",
	        "t.conf:1: unknown key 'mask' in [evtop]; it belongs in a [source NAME] section");
}
END_TEST

START_TEST(error_case)
{
	expect_error(errors[_i].text, errors[_i].msg);
}
END_TEST

START_TEST(line_length_limit)
{
	char *text = malloc(4096 + 64);
	struct ev_config cfg;

	/* Exactly 4096 bytes (not counting the line end) is fine, also with CRLF. */
	memset(text, '#', 4096);
	strcpy(text + 4096, "\r\nrefresh = 3s\n");
	ev_config_init(&cfg);
	parse_ok(&cfg, text);
	ck_assert_int_eq(cfg.refresh_ms, 3000);
	ev_config_free(&cfg);
	/* One more byte is not. */
	strcpy(text, "refresh = 1s\n");
	memset(text + 13, '#', 4097);
	strcpy(text + 13 + 4097, "\n");
	expect_error(text, "t.conf:2: line too long (more than 4096 bytes)");
	free(text);
}
END_TEST

START_TEST(error_leaves_earlier_settings)
{
	struct ev_config cfg;
	struct ev_error err = {0};

	/* cfg may be partly updated, and must still free cleanly (valgrind checks this). */
	ev_config_init(&cfg);
	ck_assert_int_eq(ev_config_parse(&cfg,
	                                 "refresh = 7s\n[source a]\nhost = h\n[source b]\nbogus\n"
	                                 "page_size = 9\n",
	                                 "t.conf", &err),
	                 -1);
	ck_assert_str_eq(err.msg, "t.conf:5: missing '=': expected 'key = value' or a [section]");
	ck_assert_int_eq(cfg.refresh_ms, 7000);
	ck_assert_int_eq(cfg.page_size, 100);
	ck_assert_int_eq(cfg.nsources, 2);
	ev_config_free(&cfg);
}
END_TEST

/* ---- loading files --------------------------------------------------------------------------- */

static char tmpdir[64];

static void make_tmpdir(void)
{
	strcpy(tmpdir, "/tmp/check_config.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(tmpdir));
}

static char *write_file(const char *name, const char *data, size_t len)
{
	char *path = ev_xasprintf("%s/%s", tmpdir, name);
	FILE *f = fopen(path, "w");

	ck_assert_ptr_nonnull(f);
	ck_assert_uint_eq(fwrite(data, 1, len, f), len);
	ck_assert_int_eq(fclose(f), 0);
	return path;
}

START_TEST(load_reads_a_file)
{
	struct ev_config cfg;
	struct ev_error err = {0};
	const char text[] = "[evtop]\nrefresh = 9s\n[source x]\nport = 3308\n";
	char *path;

	make_tmpdir();
	path = write_file("config", text, sizeof(text) - 1);
	ev_config_init(&cfg);
	ck_assert_int_eq(ev_config_load(&cfg, path, true, &err), 0);
	ck_assert_int_eq(cfg.refresh_ms, 9000);
	ck_assert_uint_eq(ev_config_source(&cfg, "x")->port, 3308);
	ev_config_free(&cfg);
	unlink(path);
	free(path);
	rmdir(tmpdir);
}
END_TEST

/* The example the packages install (doc/evtop.conf.example) loads as it is. */
START_TEST(example_file_loads)
{
	struct ev_config cfg;
	struct ev_error err = {0};
	const char *srcdir = getenv("EVTOP_SRCDIR");
	char *path = ev_xasprintf("%s/doc/evtop.conf.example", srcdir ? srcdir : ".");

	ev_config_init(&cfg);
	ck_assert_msg(ev_config_load(&cfg, path, true, &err) == 0, "%s", err.msg);
	ck_assert_int_eq(cfg.refresh_ms, 2000);
	ck_assert_int_eq(cfg.window_s, 3600);
	ck_assert_str_eq(ev_config_source(&cfg, "orders")->host, "db1.example");
	ck_assert_str_eq(ev_config_source(&cfg, "stock")->outbox_table, "stock_outbox_event");
	ck_assert_str_eq(ev_config_source(&cfg, "stock")->socket, "/run/mysqld/mysqld.sock");
	ev_config_free(&cfg);
	free(path);
}
END_TEST

START_TEST(load_names_the_file_in_errors)
{
	struct ev_config cfg;
	struct ev_error err = {0};
	const char text[] = "[evtop]\n\nrefresh = soon\n";
	char *path, *want;

	make_tmpdir();
	path = write_file("config", text, sizeof(text) - 1);
	want = ev_xasprintf("%s:3: refresh: expected a duration like 2s or 500ms, got 'soon'",
	                    path);
	ev_config_init(&cfg);
	ck_assert_int_eq(ev_config_load(&cfg, path, true, &err), -1);
	ck_assert_int_eq(err.code, EV_ERR_CONFIG);
	ck_assert_str_eq(err.msg, want);
	ev_config_free(&cfg);
	unlink(path);
	free(path);
	free(want);
	rmdir(tmpdir);
}
END_TEST

START_TEST(load_missing_file)
{
	struct ev_config cfg;
	struct ev_error err = {0};

	ev_config_init(&cfg);
	ck_assert_int_eq(ev_config_load(&cfg, "/nonexistent/evtop/config", true, &err), -1);
	ck_assert_int_eq(err.code, EV_ERR_CONFIG);
	ck_assert_str_eq(err.msg,
	                 "cannot read /nonexistent/evtop/config: No such file or directory");
	ev_error_clear(&err);
	ck_assert_int_eq(ev_config_load(&cfg, "/nonexistent/evtop/config", false, &err), 0);
	ck_assert_int_eq(err.code, 0);
	/* No default path at all (no home directory) is a missing optional file too. */
	ck_assert_int_eq(ev_config_load(&cfg, NULL, false, &err), 0);
	ck_assert_int_eq(err.code, 0);
	ck_assert_int_eq(cfg.refresh_ms, 2000);
	ck_assert_int_eq(cfg.nsources, 1);
	ev_config_free(&cfg);
}
END_TEST

START_TEST(load_a_directory_fails_even_if_optional)
{
	struct ev_config cfg;
	struct ev_error err = {0};
	char *want;

	make_tmpdir();
	want = ev_xasprintf("the config file %s is a directory, not a regular file", tmpdir);
	ev_config_init(&cfg);
	ck_assert_int_eq(ev_config_load(&cfg, tmpdir, false, &err), -1);
	ck_assert_str_eq(err.msg, want);
	ev_config_free(&cfg);
	free(want);
	rmdir(tmpdir);
}
END_TEST

START_TEST(load_finds_nul_bytes)
{
	struct ev_config cfg;
	struct ev_error err = {0};
	const char text[] = "[evtop]\nrefresh = 2s\noperator = a\0b\n";
	char *path, *want;

	make_tmpdir();
	path = write_file("config", text, sizeof(text) - 1);
	want = ev_xasprintf("%s:3: NUL byte in the file (is it a text file?)", path);
	ev_config_init(&cfg);
	ck_assert_int_eq(ev_config_load(&cfg, path, true, &err), -1);
	ck_assert_str_eq(err.msg, want);
	ev_config_free(&cfg);
	unlink(path);
	free(path);
	free(want);
	rmdir(tmpdir);
}
END_TEST

START_TEST(load_size_limit)
{
	const size_t mb = 1024 * 1024;
	struct ev_config cfg;
	struct ev_error err = {0};
	char *data = malloc(mb + 1), *path, *want;

	/* Exactly 1 MB of comment lines is read; one byte more is refused. */
	for (size_t i = 0; i < mb; i++)
		data[i] = i % 64 == 63 ? '\n' : '#';
	make_tmpdir();
	path = write_file("config", data, mb);
	ev_config_init(&cfg);
	ck_assert_int_eq(ev_config_load(&cfg, path, true, &err), 0);
	free(path);
	data[mb] = '\n';
	path = write_file("config", data, mb + 1);
	want = ev_xasprintf("cannot read %s: larger than 1 MB, which is too big for a config file "
	                    "(is it the right file?)",
	                    path);
	ck_assert_int_eq(ev_config_load(&cfg, path, true, &err), -1);
	ck_assert_int_eq(err.code, EV_ERR_CONFIG);
	ck_assert_str_eq(err.msg, want);
	ev_config_free(&cfg);
	unlink(path);
	free(path);
	free(want);
	free(data);
	rmdir(tmpdir);
}
END_TEST

/* Set or unset an environment variable; returns a copy of the old value to restore. */
static char *swap_env(const char *name, const char *value)
{
	const char *old = getenv(name);
	char *copy = old != NULL ? ev_xstrdup(old) : NULL;

	if (value != NULL)
		setenv(name, value, 1);
	else
		unsetenv(name);
	return copy;
}

static void restore_env(const char *name, char *old)
{
	if (old != NULL)
		setenv(name, old, 1);
	else
		unsetenv(name);
	free(old);
}

static void expect_default_path(const char *want)
{
	char *path = ev_config_default_path();

	ck_assert_ptr_nonnull(path);
	ck_assert_str_eq(path, want);
	free(path);
}

START_TEST(default_path)
{
	char *xdg = swap_env("XDG_CONFIG_HOME", "/xdg/conf");
	char *home = swap_env("HOME", "/home/op");
	struct passwd *pw = getpwuid(getuid());

	expect_default_path("/xdg/conf/evtop/config");
	/* The XDG spec: an empty or relative XDG_CONFIG_HOME is ignored. */
	setenv("XDG_CONFIG_HOME", "", 1);
	expect_default_path("/home/op/.config/evtop/config");
	setenv("XDG_CONFIG_HOME", "rel/conf", 1);
	expect_default_path("/home/op/.config/evtop/config");
	unsetenv("XDG_CONFIG_HOME");
	expect_default_path("/home/op/.config/evtop/config");
	/* Without HOME, the password database. */
	unsetenv("HOME");
	if (pw != NULL && pw->pw_dir[0] != '\0') {
		char *want = ev_xasprintf("%s/.config/evtop/config", pw->pw_dir);

		expect_default_path(want);
		free(want);
	}
	restore_env("XDG_CONFIG_HOME", xdg);
	restore_env("HOME", home);
}
END_TEST

/* ---- value parsers -----------------------------------------------------------------------------
 */

START_TEST(parse_duration)
{
	static const struct {
		const char *s;
		long long ms;
	} good[] = {
	        {"0", 0},
	        {"2", 2000},
	        {"500ms", 500},
	        {"2s", 2000},
	        {"10m", 600000},
	        {"1h", 3600000},
	        {"1d", 86400000},
	        {"007s", 7000},
	        {"0ms", 0},
	        {"30d", 2592000000LL},
	        {"9223372036854775807ms", LLONG_MAX},
	};
	static const char *const bad[] = {
	        "",
	        "s",
	        "ms",
	        "1.5s",
	        "-1s",
	        "+1s",
	        " 1s",
	        "1s ",
	        "1 s",
	        "1S",
	        "1MS",
	        "1sec",
	        "1w",
	        "1ms2",
	        "1m30s",
	        "0x10",
	        "9223372036854775808ms",
	        "9223372036854775807s",
	        "99999999999999999999",
	};
	long long ms;

	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		ms = -1;
		ck_assert_msg(ev_parse_duration_ms(good[i].s, &ms) == 0, "rejected %s", good[i].s);
		ck_assert_int_eq(ms, good[i].ms);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		ms = 42;
		ck_assert_msg(ev_parse_duration_ms(bad[i], &ms) == -1, "accepted '%s'", bad[i]);
		ck_assert_int_eq(ms, 42);
	}
	ck_assert_int_eq(ev_parse_duration_ms(NULL, &ms), -1);
}
END_TEST

START_TEST(parse_percent)
{
	static const struct {
		const char *s;
		int permille;
	} good[] = {{"1%", 10},       {"0.5%", 5}, {"2.5%", 25}, {"100%", 1000},
	            {"100.0%", 1000}, {"0.1%", 1}, {"1.0%", 10}, {"007%", 70}};
	static const char *const bad[] = {
	        "",
	        "%",
	        "0%",
	        "0.0%",
	        "100.1%",
	        "101%",
	        "1",
	        "1.%",
	        ".5%",
	        "0.05%",
	        "1.25%",
	        "-1%",
	        "+1%",
	        "1 %",
	        "1%%",
	        " 1%",
	        "1%x",
	        "1,5%",
	        "99999999999999999999%",
	};
	int permille;

	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		permille = -1;
		ck_assert_msg(ev_parse_percent_permille(good[i].s, &permille) == 0, "rejected %s",
		              good[i].s);
		ck_assert_int_eq(permille, good[i].permille);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		permille = 42;
		ck_assert_msg(ev_parse_percent_permille(bad[i], &permille) == -1, "accepted '%s'",
		              bad[i]);
		ck_assert_int_eq(permille, 42);
	}
	ck_assert_int_eq(ev_parse_percent_permille(NULL, &permille), -1);
}
END_TEST

START_TEST(parse_bool)
{
	static const char *const yes[] = {"true", "TRUE", "True", "yes", "Yes", "on", "ON", "1"};
	static const char *const no[] = {"false", "FALSE", "no", "NO", "off", "Off", "0"};
	static const char *const bad[] = {"",  "2",     "truee", "tru", "y",      "n",
	                                  "t", " true", "true ", "00",  "enabled"};
	bool b;

	for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++) {
		b = false;
		ck_assert_int_eq(ev_parse_bool(yes[i], &b), 0);
		ck_assert_msg(b, "%s is not true", yes[i]);
	}
	for (size_t i = 0; i < sizeof(no) / sizeof(no[0]); i++) {
		b = true;
		ck_assert_int_eq(ev_parse_bool(no[i], &b), 0);
		ck_assert_msg(!b, "%s is not false", no[i]);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		b = true;
		ck_assert_msg(ev_parse_bool(bad[i], &b) == -1, "accepted '%s'", bad[i]);
		ck_assert(b);
	}
	ck_assert_int_eq(ev_parse_bool(NULL, &b), -1);
}
END_TEST

START_TEST(parse_int)
{
	long long n = -1;

	ck_assert_int_eq(ev_parse_int("0", 0, 10, &n), 0);
	ck_assert_int_eq(n, 0);
	ck_assert_int_eq(ev_parse_int("10", 0, 10, &n), 0);
	ck_assert_int_eq(n, 10);
	ck_assert_int_eq(ev_parse_int("0042", 0, 100, &n), 0);
	ck_assert_int_eq(n, 42);
	ck_assert_int_eq(ev_parse_int("9223372036854775807", 0, LLONG_MAX, &n), 0);
	ck_assert_int_eq(n, LLONG_MAX);
	n = 7;
	ck_assert_int_eq(ev_parse_int("11", 0, 10, &n), -1);
	ck_assert_int_eq(ev_parse_int("5", 6, 10, &n), -1);
	ck_assert_int_eq(ev_parse_int("-1", -5, 10, &n), -1);
	ck_assert_int_eq(ev_parse_int("+1", 0, 10, &n), -1);
	ck_assert_int_eq(ev_parse_int("1a", 0, 10, &n), -1);
	ck_assert_int_eq(ev_parse_int("1.0", 0, 10, &n), -1);
	ck_assert_int_eq(ev_parse_int("", 0, 10, &n), -1);
	ck_assert_int_eq(ev_parse_int(" 1", 0, 10, &n), -1);
	ck_assert_int_eq(ev_parse_int("1 ", 0, 10, &n), -1);
	ck_assert_int_eq(ev_parse_int("0x1", 0, 10, &n), -1);
	ck_assert_int_eq(ev_parse_int("9223372036854775808", 0, LLONG_MAX, &n), -1);
	ck_assert_int_eq(ev_parse_int("99999999999999999999999", 0, LLONG_MAX, &n), -1);
	ck_assert_int_eq(ev_parse_int(NULL, 0, 10, &n), -1);
	ck_assert_int_eq(n, 7);
}
END_TEST

START_TEST(ident_valid)
{
	char s64[65], s65[66];

	memset(s64, 'a', 64);
	s64[64] = '\0';
	memset(s65, 'a', 65);
	s65[65] = '\0';
	ck_assert(ev_ident_valid("biz_outbox_event"));
	ck_assert(ev_ident_valid("a"));
	ck_assert(ev_ident_valid("_"));
	ck_assert(ev_ident_valid("A$1"));
	ck_assert(ev_ident_valid("1a"));
	ck_assert(ev_ident_valid("evt2024"));
	ck_assert(ev_ident_valid(s64));
	ck_assert(!ev_ident_valid(s65));
	ck_assert(!ev_ident_valid("a b"));
	ck_assert(!ev_ident_valid("x;DROP"));
	ck_assert(!ev_ident_valid(""));
	ck_assert(!ev_ident_valid("123"));
	ck_assert(!ev_ident_valid("0"));
	ck_assert(!ev_ident_valid("a-b"));
	ck_assert(!ev_ident_valid("db.table"));
	ck_assert(!ev_ident_valid("`t`"));
	ck_assert(!ev_ident_valid("t'"));
	ck_assert(!ev_ident_valid("\xC3\xA9v"));
	ck_assert(!ev_ident_valid(NULL));
}
END_TEST

START_TEST(time_zone_valid)
{
	char name64[65], name65[66];

	memset(name64, 'Z', 64);
	name64[64] = '\0';
	memset(name65, 'Z', 65);
	name65[65] = '\0';
	ck_assert(ev_time_zone_valid("+08:00"));
	ck_assert(ev_time_zone_valid("-05:30"));
	ck_assert(ev_time_zone_valid("+00:00"));
	ck_assert(ev_time_zone_valid("+14:00"));
	ck_assert(ev_time_zone_valid("-14:00"));
	ck_assert(ev_time_zone_valid("SYSTEM"));
	ck_assert(ev_time_zone_valid("system"));
	ck_assert(ev_time_zone_valid("Asia/Shanghai"));
	ck_assert(ev_time_zone_valid("UTC"));
	ck_assert(ev_time_zone_valid("Etc/GMT+8"));
	ck_assert(ev_time_zone_valid("Etc/GMT-14"));
	ck_assert(ev_time_zone_valid("America/Argentina/Buenos_Aires"));
	ck_assert(ev_time_zone_valid("America/Port-au-Prince"));
	ck_assert(ev_time_zone_valid(name64));
	ck_assert(!ev_time_zone_valid(name65));
	ck_assert(!ev_time_zone_valid("+25:00"));
	ck_assert(!ev_time_zone_valid("+14:01"));
	ck_assert(!ev_time_zone_valid("-15:00"));
	ck_assert(!ev_time_zone_valid("+08:60"));
	ck_assert(!ev_time_zone_valid("+8:00"));
	ck_assert(!ev_time_zone_valid("08:00"));
	ck_assert(!ev_time_zone_valid("+0800"));
	ck_assert(!ev_time_zone_valid("+08:00:00"));
	ck_assert(!ev_time_zone_valid("+08:0a"));
	ck_assert(!ev_time_zone_valid("'; x"));
	ck_assert(!ev_time_zone_valid(""));
	ck_assert(!ev_time_zone_valid("1UTC"));
	ck_assert(!ev_time_zone_valid("/etc/localtime"));
	ck_assert(!ev_time_zone_valid("../x"));
	ck_assert(!ev_time_zone_valid("Asia/Shang hai"));
	ck_assert(!ev_time_zone_valid("UTC'"));
	ck_assert(!ev_time_zone_valid(NULL));
}
END_TEST

START_TEST(token_list)
{
	static const char *const bad[] = {
	        "",           " ",        "PAY,",  ",PAY",     "PAY,,REFUND", "PAY REFUND",
	        "PAY;REFUND", "STOCK_IN", "PAY-1", "\xC3\xA9", "PAY, ,X"};
	static char *sentinel[] = {NULL};
	char **v = NULL, **keep = sentinel;

	ck_assert_int_eq(ev_parse_token_list("PAY, REFUND", &v), 0);
	ck_assert_uint_eq(strv_len(v), 2);
	ck_assert_str_eq(v[0], "PAY");
	ck_assert_str_eq(v[1], "REFUND");
	ev_strv_free(&v);
	ck_assert_ptr_null(v);
	ck_assert_int_eq(ev_parse_token_list("  pay1 ,\tRe2fund,x  ", &v), 0);
	ck_assert_uint_eq(strv_len(v), 3);
	ck_assert_str_eq(v[0], "PAY1");
	ck_assert_str_eq(v[1], "RE2FUND");
	ck_assert_str_eq(v[2], "X");
	ev_strv_free(&v);
	ck_assert_int_eq(ev_parse_token_list("Pay,PAY,pay,STOCK,stock", &v), 0);
	ck_assert_uint_eq(strv_len(v), 2);
	ck_assert_str_eq(v[0], "PAY");
	ck_assert_str_eq(v[1], "STOCK");
	ev_strv_free(&v);
	ck_assert_int_eq(ev_parse_token_list("a,b,c,d,e,f,g,h,i,j", &v), 0);
	ck_assert_uint_eq(strv_len(v), 10);
	ck_assert_str_eq(v[9], "J");
	ev_strv_free(&v);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		v = keep;
		ck_assert_msg(ev_parse_token_list(bad[i], &v) == -1, "accepted '%s'", bad[i]);
		ck_assert_ptr_eq(v, keep);
	}
	ck_assert_int_eq(ev_parse_token_list(NULL, &v), -1);
	v = NULL;
	ev_strv_free(&v);
	ev_strv_free(NULL);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("config");
	TCase *tc = tcase_create("config");
	tcase_add_test(tc, init_sets_defaults);
	tcase_add_test(tc, empty_text_changes_nothing);
	tcase_add_test(tc, every_global_setting);
	tcase_add_test(tc, settings_before_a_section_are_global);
	tcase_add_test(tc, every_source_setting);
	tcase_add_test(tc, multiple_sources);
	tcase_add_test(tc, a_source_named_default_is_allowed);
	tcase_add_test(tc, each_text_replaces_the_sources_once);
	tcase_add_test(tc, ssl_files_imply_ssl);
	tcase_add_test(tc, quoting_and_comments);
	tcase_add_loop_test(tc, range_bounds, 0, (int)(sizeof(bounds) / sizeof(bounds[0])));
	tcase_add_test(tc, port_bounds);
	tcase_add_test(tc, protected_types_replace_the_defaults);
	tcase_add_loop_test(tc, error_case, 0, (int)(sizeof(errors) / sizeof(errors[0])));
	tcase_add_test(tc, line_length_limit);
	tcase_add_test(tc, error_leaves_earlier_settings);
	tcase_add_test(tc, load_reads_a_file);
	tcase_add_test(tc, load_names_the_file_in_errors);
	tcase_add_test(tc, load_missing_file);
	tcase_add_test(tc, load_a_directory_fails_even_if_optional);
	tcase_add_test(tc, load_finds_nul_bytes);
	tcase_add_test(tc, load_size_limit);
	tcase_add_test(tc, default_path);
	tcase_add_test(tc, parse_duration);
	tcase_add_test(tc, parse_percent);
	tcase_add_test(tc, parse_bool);
	tcase_add_test(tc, parse_int);
	tcase_add_test(tc, ident_valid);
	tcase_add_test(tc, time_zone_valid);
	tcase_add_test(tc, token_list);
	tcase_add_test(tc, key_bindings);
	tcase_add_test(tc, mask_section);
	tcase_add_test(tc, example_file_loads);
	suite_add_tcase(s, tc);
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? 0 : 1;
}
