/* evtop — its own configuration: ~/.config/evtop/config (or --config FILE). An INI-style
 * file, documented in doc/config.md; parsed and validated with FILE:LINE in every error.
 * Command-line flags override it (the caller applies them after loading). */
#ifndef EV_CORE_CONFIG_H
#define EV_CORE_CONFIG_H

#include "core/mask.h"
#include "core/util.h"

#include <stdbool.h>

/* One database (a server, shard or service). Strings are malloc'd; NULL = not set. */
struct ev_source {
	char *name;           /* [source NAME]; "default" for the implicit one */
	char *defaults_file;  /* option file to read (MYSQL_READ_DEFAULT_FILE) */
	char *defaults_group; /* option-file group besides [client]; default "evtop" */
	bool no_defaults;     /* read no option file at all (--no-defaults) */
	char *host;
	unsigned port; /* 0 = default */
	char *socket;
	char *user;
	char *database;
	char *outbox_table;  /* default "biz_outbox_event" */
	char *message_table; /* default "biz_message_event" */
	char *time_zone;     /* session time_zone, e.g. "+08:00", "SYSTEM", "Asia/Shanghai" */
	/* TLS: off unless a setting asks for it; ssl_verify checks the server certificate. */
	bool ssl;
	bool ssl_verify;
	char *ssl_ca;
	char *ssl_capath;
	char *ssl_cert;
	char *ssl_key;
	char *ssl_cipher;
	/* The read endpoint (a replica) for the dashboards and lists; the settings above are then
	 * the write endpoint (the primary), where guarded updates and their re-reads go. Unset:
	 * everything on the one server. The read endpoint shares user, database, tables, TLS and
	 * time zone with the primary; read_defaults_group can give it an option-file group of
	 * its own (its own user and password). */
	char *read_host;
	unsigned read_port; /* 0 = the primary's port */
	char *read_socket;
	char *read_defaults_group;
	/* The tables this source has: bit (1 << ev_table_kind); default both. */
	unsigned tables;
	/* Personal data in payloads and texts masked on screen and in outputs (the config's
	 * [mask] rules); default true; `mask = off` for a source. */
	bool mask;
};

/* A key binding of the [keys] section: "bind = [VIEW] KEY ACTION" (ACTION "none" unbinds).
 * Checked by the console (the names of views, keys and actions are its own); `where` is
 * "FILE:LINE" for its messages. */
struct ev_keybind {
	char *view; /* NULL: every view ("global") */
	char *key;
	char *action;
	char *where;
};

struct ev_config {
	int refresh_ms;           /* default 2000; 100 .. 3600000 */
	int budget_permille;      /* server time budget in 1/1000 of one core; default 10 (1%) */
	int stuck_threshold_s;    /* message table: processing longer than this is stuck; 600 */
	int lease_s;              /* outbox: the publishers' lock duration (a claim); 120 */
	int window_s;             /* time window for success/cancelled counts; 3600 */
	int statement_timeout_ms; /* server-side statement time limit; default 5000 */
	int connect_timeout_s;    /* default 3 */
	int read_timeout_s;       /* default 15 */
	int write_timeout_s;      /* default 5 */
	int high_retry_min;       /* high-retry list: retry_count >= N; default 3 */
	int page_size;            /* rows per list page; default 100; 1 .. 1000 */
	int search_cap;           /* payload terms: candidates examined a page; 100000 */
	int lag_warning_s;        /* replica lag shown as a warning from here; default 10 */
	bool mirror;              /* the console's backlog mirror (core/mirror.h); default true */
	int mirror_rows;          /* rows mirrored over every table and source; default 1M */
	int mirror_reverify_s;    /* every mirrored row read again within this; default 300 */
	int mirror_check_s;       /* the full counts compared this often; default 600 */
	int mirror_settle_s;      /* rows created this recently counted in the rates later; 30 */
	int metrics_interval_s;   /* evtop metrics: the figures refreshed this often; 15 */
	int metrics_label_cap;    /* evtop metrics: values per label, source and table; 200 */
	bool metrics_topic;       /* evtop metrics: the outbox by topic too; default true */
	/* The console's copy keys (C, J) write to the terminal's clipboard with OSC 52; off:
	 * they copy nothing and say so. At most clipboard_max bytes of text a copy. */
	bool clipboard;    /* default true */
	int clipboard_max; /* default 65536; 16 .. 1048576 */
	/* Cells a terminal gives an East Asian Ambiguous character (core/ambiguous): 1, or 2
	 * for many Chinese terminals (Xshell, SecureCRT); the console lays out by it. */
	int ambiguous_width; /* default 1; 1 .. 2 */
	/* evtop archive's retention per table (seconds; 0: none configured): doctor and the
	 * console's header say how many rows are past it (doc/archive.md). */
	int retention_s[2];      /* [EV_TABLE_MESSAGE], [EV_TABLE_OUTBOX] */
	bool read_only;          /* default false */
	bool recover_message;    /* allow "recover stuck" on the message table; default false */
	char *operator_id;       /* operator or ticket id for the audit; NULL = ask */
	char *theme;             /* "default", "mono"; NULL = default */
	char *export_dir;        /* where the console's exports go; NULL = the state dir's */
	char **protected_types;  /* NULL-terminated; default PAY, REFUND, STOCK, INVENTORY */
	struct ev_mask mask;     /* [mask]: what is masked (core/mask.h); the defaults */
	struct ev_keybind *keys; /* [keys]: in file order, a later one winning */
	int nkeys;
	int nsources;
	struct ev_source *sources; /* at least one after ev_config_init */
};

/* Fill cfg with the defaults and one source named "default" (no host etc.: the option files
 * decide). */
void ev_config_init(struct ev_config *cfg);
/* Free everything cfg holds (cfg itself is the caller's). */
void ev_config_free(struct ev_config *cfg);

/* Parse the text of a config file into cfg (which holds defaults or earlier settings).
 * `filename` is used in messages only. On error returns -1 and err->msg reads
 * "FILE:LINE: what is wrong" (err->code EV_ERR_CONFIG); cfg may then be partly updated. */
int ev_config_parse(struct ev_config *cfg, const char *text, const char *filename,
                    struct ev_error *err);
/* Read and parse a file. With `must_exist` false a missing file is not an error, and a NULL
 * path (ev_config_default_path found no home) counts as a missing file. */
int ev_config_load(struct ev_config *cfg, const char *path, bool must_exist, struct ev_error *err);
/* The default path: $XDG_CONFIG_HOME/evtop/config or ~/.config/evtop/config; malloc'd, or
 * NULL when no home directory is known. Main thread (it may call getpwuid). */
char *ev_config_default_path(void);

/* The source named `name`, or NULL. */
struct ev_source *ev_config_source(struct ev_config *cfg, const char *name);
/* Which of s's tables is called name (its configured name or the model's default): an
 * ev_table_kind, or -1 for neither (or name NULL). */
int ev_source_table_kind(const struct ev_source *s, const char *name);
/* Whether src has a read endpoint of its own. */
bool ev_source_has_replica(const struct ev_source *src);
/* A copy of src connecting to its read endpoint (host, port, socket, option-file group
 * replaced where the read_* settings give them); free with ev_source_free. */
struct ev_source *ev_source_read_endpoint(const struct ev_source *src);
/* A deep copy of src; free with ev_source_free. */
struct ev_source *ev_source_dup(const struct ev_source *src);
void ev_source_free(struct ev_source **src);

/* --- value parsers, shared with the command-line flags ------------------------------- */

/* A duration: an integer with a unit, "500ms", "2s", "10m", "1h", "1d"; a bare integer means
 * seconds. Returns 0 and the value in milliseconds, or -1. */
int ev_parse_duration_ms(const char *s, long long *ms);
/* The allowed range of a duration setting of the config file (its key: "window",
 * "stuck_threshold"), in milliseconds, for the command-line flags that set it too. Returns 0,
 * or -1 for a key that is no duration. */
int ev_config_duration_range(const char *key, long long *min_ms, long long *max_ms);
/* A duration as the config writes it: "2s" rather than "2000ms", the largest unit that
 * divides it ("1m", "30d", "100ms"). */
void ev_format_duration_ms(long long ms, char *out, size_t size);
/* A percentage of one core: "1%", "0.5%", "2.5%" -> permille (10, 5, 25); 0 < p <= 100%. */
int ev_parse_percent_permille(const char *s, int *permille);
/* "true/false/yes/no/on/off/1/0" (case-insensitive). */
int ev_parse_bool(const char *s, bool *out);
/* A non-negative decimal integer within [min, max]. */
int ev_parse_int(const char *s, long long min, long long max, long long *out);
/* A table name: 1..64 characters of [A-Za-z0-9_$], not all digits. */
bool ev_ident_valid(const char *s);
/* A time zone for SET time_zone: "SYSTEM", "+hh:mm"/"-hh:mm" (offset within +-14:00), or
 * a named zone of [A-Za-z0-9_+/-] up to 64 characters. */
bool ev_time_zone_valid(const char *s);
/* Split a comma-separated list of protected-type tokens ("PAY, REFUND") into a
 * NULL-terminated array of upper-cased tokens; each token [A-Za-z0-9]+. Returns -1 on a bad
 * token. */
int ev_parse_token_list(const char *s, char ***out);
/* Free a NULL-terminated string array and NULL the pointer. */
void ev_strv_free(char ***v);

#endif
