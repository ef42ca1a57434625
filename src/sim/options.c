/* evtop-sim — its command line (options.h). */
#include <config.h>

#include "sim/options.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static long long wall_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* --- options -------------------------------------------------------------------------------- */

static void usage(FILE *out)
{
	fprintf(out,
	        "Usage: evtop-sim [OPTION]...\n"
	        "Simulate the applications that own biz_outbox_event and biz_message_event:\n"
	        "producers insert events; publishers and consumers claim, publish and mark them\n"
	        "with the model document's guarded SQL; some fail, some crash holding their lock,\n"
	        "and a downstream outage now and then makes everything fail for a while.\n"
	        "\n"
	        "Connection (as the mysql client; the [client] and [evtop] option groups):\n"
	        "      --defaults-file=FILE  read only this option file\n"
	        "  -h, --host=HOST           -P, --port=PORT         -S, --socket=PATH\n"
	        "  -u, --user=USER           -p, --password=PASSWORD -D, --database=NAME\n"
	        "      --outbox-table=NAME   --message-table=NAME    --time-zone=TZ\n"
	        "\n"
	        "The world:\n"
	        "      --rate=N              events per second into each table (default 10; 0 = "
	        "none)\n"
	        "      --instances=N         publishers publisher-01.. and consumers consumer-01.. "
	        "(2)\n"
	        "      --fail-rate=F         fraction of attempts that fail (0.05)\n"
	        "      --crash-rate=F        fraction of claims abandoned holding the lock (0.01)\n"
	        "      --outage-every=DUR    a downstream outage every DUR (off)\n"
	        "      --outage-for=DUR      ... lasting DUR: every attempt fails meanwhile\n"
	        "      --time-scale=F        divide the retry back-off (1 min, 5 min, 30 min, 2 "
	        "h)\n"
	        "                            by F, so a demo moves quickly (1)\n"
	        "      --lock-time=DUR       lock_until = NOW() + DUR on a claim (2m)\n"
	        "      --recover-every=DUR   period of the lock-timeout and auto-cancel jobs "
	        "(30s)\n"
	        "      --poll=DUR            an idle instance's scan interval (200ms)\n"
	        "      --kill=NAME[,NAME]    these instances (publisher-02, consumer-01, ...) "
	        "stop\n"
	        "                            for good: at their first claim after --kill-after\n"
	        "                            they claim that scan's candidates and die holding\n"
	        "                            the locks, which expire; they never claim again\n"
	        "                            (repeatable)\n"
	        "      --kill-after=DUR      when --kill takes effect, from the start (0)\n"
	        "      --batch=N             candidates per scan (20)\n"
	        "      --seed=N              seed of every random choice (default: from the "
	        "clock)\n"
	        "      --duration=DUR        stop after DUR (default: at SIGINT or SIGTERM)\n"
	        "      --history=DUR         first seed DUR of history, every state\n"
	        "      --history-events=N    events per table in that history (20000)\n"
	        "      --history-only        seed the history and exit\n"
	        "      --format=table|json   the summary printed at the end (table)\n"
	        "      --help, --version\n"
	        "DUR is a number with a unit: 500ms, 30s, 2m, 1h, 3d.\n");
}

enum {
	OPT_DEFAULTS_FILE = 256,
	OPT_OUTBOX_TABLE,
	OPT_MESSAGE_TABLE,
	OPT_TIME_ZONE,
	OPT_RATE,
	OPT_INSTANCES,
	OPT_FAIL_RATE,
	OPT_CRASH_RATE,
	OPT_OUTAGE_EVERY,
	OPT_OUTAGE_FOR,
	OPT_TIME_SCALE,
	OPT_LOCK_TIME,
	OPT_RECOVER_EVERY,
	OPT_POLL,
	OPT_BATCH,
	OPT_SEED,
	OPT_DURATION,
	OPT_HISTORY,
	OPT_HISTORY_EVENTS,
	OPT_HISTORY_ONLY,
	OPT_FORMAT,
	OPT_KILL,
	OPT_KILL_AFTER,
	OPT_HELP,
	OPT_VERSION,
};

static const struct option long_opts[] = {
        {"defaults-file", required_argument, NULL, OPT_DEFAULTS_FILE},
        {"host", required_argument, NULL, 'h'},
        {"port", required_argument, NULL, 'P'},
        {"socket", required_argument, NULL, 'S'},
        {"user", required_argument, NULL, 'u'},
        {"password", optional_argument, NULL, 'p'},
        {"database", required_argument, NULL, 'D'},
        {"outbox-table", required_argument, NULL, OPT_OUTBOX_TABLE},
        {"message-table", required_argument, NULL, OPT_MESSAGE_TABLE},
        {"time-zone", required_argument, NULL, OPT_TIME_ZONE},
        {"rate", required_argument, NULL, OPT_RATE},
        {"instances", required_argument, NULL, OPT_INSTANCES},
        {"fail-rate", required_argument, NULL, OPT_FAIL_RATE},
        {"crash-rate", required_argument, NULL, OPT_CRASH_RATE},
        {"outage-every", required_argument, NULL, OPT_OUTAGE_EVERY},
        {"outage-for", required_argument, NULL, OPT_OUTAGE_FOR},
        {"time-scale", required_argument, NULL, OPT_TIME_SCALE},
        {"lock-time", required_argument, NULL, OPT_LOCK_TIME},
        {"recover-every", required_argument, NULL, OPT_RECOVER_EVERY},
        {"poll", required_argument, NULL, OPT_POLL},
        {"batch", required_argument, NULL, OPT_BATCH},
        {"seed", required_argument, NULL, OPT_SEED},
        {"duration", required_argument, NULL, OPT_DURATION},
        {"history", required_argument, NULL, OPT_HISTORY},
        {"history-events", required_argument, NULL, OPT_HISTORY_EVENTS},
        {"history-only", no_argument, NULL, OPT_HISTORY_ONLY},
        {"format", required_argument, NULL, OPT_FORMAT},
        {"kill", required_argument, NULL, OPT_KILL},
        {"kill-after", required_argument, NULL, OPT_KILL_AFTER},
        {"help", no_argument, NULL, OPT_HELP},
        {"version", no_argument, NULL, OPT_VERSION},
        {NULL, 0, NULL, 0},
};

static const char *long_name(int c)
{
	for (const struct option *l = long_opts; l->name != NULL; l++)
		if (l->val == c)
			return l->name;
	return "?";
}

static int parse_fraction(const char *s, double lo, double hi, double *out)
{
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (errno != 0 || end == s || *end != '\0' || !(v >= lo && v <= hi))
		return -1;
	*out = v;
	return 0;
}

static void set_str(char **field, const char *v)
{
	free(*field);
	*field = ev_xstrdup(v);
}

/* A handler's answer besides 0 (taken), 1 (--help or --version: done) and -1 (refused, err
 * set): not an option of its group. */
#define NOT_MINE 2

static void set_defaults(struct sim_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->rate = 10;
	o->instances = 2;
	o->fail_rate = 0.05;
	o->crash_rate = 0.01;
	o->time_scale = 1;
	o->lock_ms = 120000;
	o->recover_ms = 30000;
	o->poll_ms = 200;
	o->batch = 20;
	o->history_events = 20000;
	for (int t = 0; t < EV_TABLE_COUNT; t++)
		o->table[t] = ev_model_table((enum ev_table_kind)t)->default_name;
}

/* The server and the account (into the config's first source), the password, the tables. */
static int connection_option(int c, const char *arg, struct sim_opts *o, struct ev_source *src,
                             char **password, struct ev_error *err)
{
	long long v;

	switch (c) {
	case OPT_DEFAULTS_FILE:
		set_str(&src->defaults_file, arg);
		return 0;
	case 'h':
		set_str(&src->host, arg);
		return 0;
	case 'P':
		if (ev_parse_int(arg, 1, 65535, &v) < 0)
			return ev_error_set(err, EV_ERR_USAGE, "--port: not a port: %s", arg);
		src->port = (unsigned)v;
		return 0;
	case 'S':
		set_str(&src->socket, arg);
		return 0;
	case 'u':
		set_str(&src->user, arg);
		return 0;
	case 'p':
		if (arg == NULL)
			return ev_error_set(err, EV_ERR_USAGE,
			                    "-p: give the password in an option file (the "
			                    "simulator never prompts)");
		free(*password);
		*password = ev_xstrdup(arg);
		return 0;
	case 'D':
		set_str(&src->database, arg);
		return 0;
	case OPT_OUTBOX_TABLE:
	case OPT_MESSAGE_TABLE:
		if (!ev_ident_valid(arg))
			return ev_error_set(err, EV_ERR_USAGE, "not a table name: %s", arg);
		o->table[c == OPT_OUTBOX_TABLE ? EV_TABLE_OUTBOX : EV_TABLE_MESSAGE] = arg;
		return 0;
	case OPT_TIME_ZONE:
		if (!ev_time_zone_valid(arg))
			return ev_error_set(err, EV_ERR_USAGE, "not a time zone: %s", arg);
		set_str(&src->time_zone, arg);
		return 0;
	default:
		return NOT_MINE;
	}
}

/* The world's durations: the outages, the lock, the jobs' period, the poll, the run, the
 * history. */
static int duration_option(int c, const char *arg, struct sim_opts *o, struct ev_error *err)
{
	long long *slot, ms;

	switch (c) {
	case OPT_OUTAGE_EVERY:
		slot = &o->outage_every_ms;
		break;
	case OPT_OUTAGE_FOR:
		slot = &o->outage_for_ms;
		break;
	case OPT_LOCK_TIME:
		slot = &o->lock_ms;
		break;
	case OPT_RECOVER_EVERY:
		slot = &o->recover_ms;
		break;
	case OPT_POLL:
		slot = &o->poll_ms;
		break;
	case OPT_DURATION:
		slot = &o->duration_ms;
		break;
	case OPT_HISTORY:
		slot = &o->history_ms;
		break;
	case OPT_KILL_AFTER:
		slot = &o->kill_after_ms;
		break;
	default:
		return NOT_MINE;
	}
	if (ev_parse_duration_ms(arg, &ms) < 0 || ms < 0)
		return ev_error_set(err, EV_ERR_USAGE,
		                    "--%s: not a duration (500ms, 30s, 2m, 1h, 3d): %s",
		                    long_name(c), arg);
	if ((c == OPT_LOCK_TIME && ms < 1000) ||
	    ((c == OPT_RECOVER_EVERY || c == OPT_POLL) && ms < 10))
		return ev_error_set(err, EV_ERR_USAGE, "--%s: too short: %s", long_name(c), arg);
	*slot = ms;
	return 0;
}

/* The world's rates, sizes and seed. */
static int world_option(int c, const char *arg, struct sim_opts *o, bool *seed_set,
                        struct ev_error *err)
{
	long long v;

	switch (c) {
	case OPT_RATE:
		if (parse_fraction(arg, 0, 100000, &o->rate) < 0)
			return ev_error_set(err, EV_ERR_USAGE,
			                    "--rate: events per second, 0 to 100000: %s", arg);
		return 0;
	case OPT_INSTANCES:
		if (ev_parse_int(arg, 1, MAX_INSTANCES, &v) < 0)
			return ev_error_set(err, EV_ERR_USAGE, "--instances: 1 to %d: %s",
			                    MAX_INSTANCES, arg);
		o->instances = (int)v;
		return 0;
	case OPT_FAIL_RATE:
	case OPT_CRASH_RATE:
		if (parse_fraction(arg, 0, 1, c == OPT_FAIL_RATE ? &o->fail_rate : &o->crash_rate) <
		    0)
			return ev_error_set(err, EV_ERR_USAGE, "--%s: a fraction from 0 to 1: %s",
			                    c == OPT_FAIL_RATE ? "fail-rate" : "crash-rate", arg);
		return 0;
	case OPT_TIME_SCALE:
		if (parse_fraction(arg, 1, 1000000, &o->time_scale) < 0)
			return ev_error_set(err, EV_ERR_USAGE,
			                    "--time-scale: a factor from 1 to 1000000: %s", arg);
		return 0;
	case OPT_BATCH:
		if (ev_parse_int(arg, 1, 1000, &v) < 0)
			return ev_error_set(err, EV_ERR_USAGE, "--batch: 1 to 1000: %s", arg);
		o->batch = (int)v;
		return 0;
	case OPT_HISTORY_EVENTS:
		if (ev_parse_int(arg, 0, 10000000, &v) < 0)
			return ev_error_set(err, EV_ERR_USAGE,
			                    "--history-events: 0 to 10000000: %s", arg);
		o->history_events = v;
		return 0;
	case OPT_SEED:
		if (ev_parse_int(arg, 0, 0x7fffffffffffffffLL, &v) < 0)
			return ev_error_set(err, EV_ERR_USAGE, "--seed: a non-negative integer: %s",
			                    arg);
		o->seed = (unsigned long long)v;
		*seed_set = true;
		return 0;
	default:
		return duration_option(c, arg, o, err);
	}
}

bool sim_opts_killed(const struct sim_opts *o, const char *name)
{
	for (int i = 0; i < o->nkilled; i++)
		if (strcmp(o->killed[i], name) == 0)
			return true;
	return false;
}

/* --kill NAME[,NAME...]: each an instance --instances starts (publisher-NN, consumer-NN). */
static int kill_option(const char *arg, struct sim_opts *o, struct ev_error *err)
{
	const char *p = arg;
	for (;;) {
		size_t n = strcspn(p, ",");
		if (n == 0 || n >= sizeof(o->killed[0]))
			return ev_error_set(
			        err, EV_ERR_USAGE,
			        "--kill: an instance name (publisher-01, consumer-02): %s", arg);
		if (o->nkilled == MAX_KILLED)
			return ev_error_set(err, EV_ERR_USAGE, "--kill: at most %d instances",
			                    MAX_KILLED);
		memcpy(o->killed[o->nkilled], p, n);
		o->killed[o->nkilled][n] = '\0';
		o->nkilled++;
		if (p[n] == '\0')
			return 0;
		p += n + 1;
	}
}

/* A --kill name is one of the instances the run starts. */
static int check_killed(const struct sim_opts *o, struct ev_error *err)
{
	for (int i = 0; i < o->nkilled; i++) {
		const char *name = o->killed[i];
		const char *num = NULL;
		if (strncmp(name, "publisher-", 10) == 0)
			num = name + 10;
		else if (strncmp(name, "consumer-", 9) == 0)
			num = name + 9;
		long long k;
		if (num == NULL || strlen(num) != 2 || ev_parse_int(num, 1, o->instances, &k) < 0)
			return ev_error_set(err, EV_ERR_USAGE,
			                    "--kill: no instance %s (publisher-01..%02d, "
			                    "consumer-01..%02d)",
			                    name, o->instances, o->instances);
	}
	return 0;
}

/* What the run does besides the world: seed the history only, the summary's format, --help,
 * --version. */
static int run_option(int c, const char *arg, struct sim_opts *o, struct ev_error *err)
{
	switch (c) {
	case OPT_HISTORY_ONLY:
		o->history_only = true;
		return 0;
	case OPT_KILL:
		return kill_option(arg, o, err);
	case OPT_FORMAT:
		if (strcmp(arg, "json") == 0)
			o->json = true;
		else if (strcmp(arg, "table") == 0)
			o->json = false;
		else
			return ev_error_set(err, EV_ERR_USAGE, "--format: table or json, not %s",
			                    arg);
		return 0;
	case OPT_HELP:
		usage(stdout);
		return 1;
	case OPT_VERSION:
		printf("evtop-sim %s\n", PACKAGE_VERSION);
		return 1;
	default:
		return NOT_MINE;
	}
}

/* The options that go together, once all are read. */
static int check_together(const struct sim_opts *o, struct ev_error *err)
{
	if ((o->outage_every_ms > 0) != (o->outage_for_ms > 0))
		return ev_error_set(err, EV_ERR_USAGE,
		                    "--outage-every and --outage-for go together");
	if (o->outage_every_ms > 0 && o->outage_for_ms >= o->outage_every_ms)
		return ev_error_set(err, EV_ERR_USAGE,
		                    "--outage-for must be shorter than --outage-every");
	if (o->fail_rate + o->crash_rate > 1)
		return ev_error_set(err, EV_ERR_USAGE, "--fail-rate + --crash-rate exceed 1");
	if (o->history_only && o->history_ms == 0)
		return ev_error_set(err, EV_ERR_USAGE, "--history-only needs --history=DUR");
	if (o->kill_after_ms > 0 && o->nkilled == 0)
		return ev_error_set(err, EV_ERR_USAGE, "--kill-after needs --kill=NAME");
	return check_killed(o, err);
}

/* Returns 0, 1 for --help/--version (done), or -1 with err set. */
int sim_parse_options(int argc, char **argv, struct sim_opts *o, struct ev_config *cfg,
                      char **password, struct ev_error *err)
{
	struct ev_source *src = &cfg->sources[0];
	bool seed_set = false;
	int c;

	set_defaults(o);
	opterr = 0;
	while ((c = getopt_long(argc, argv, "h:P:S:u:p::D:", long_opts, NULL)) != -1) {
		int rc = connection_option(c, optarg, o, src, password, err);
		if (rc == NOT_MINE)
			rc = world_option(c, optarg, o, &seed_set, err);
		if (rc == NOT_MINE)
			rc = run_option(c, optarg, o, err);
		if (rc == NOT_MINE)
			return ev_error_set(err, EV_ERR_USAGE, "unknown or incomplete option %s",
			                    argv[optind - 1]);
		if (rc != 0)
			return rc;
	}
	if (optind < argc)
		return ev_error_set(err, EV_ERR_USAGE, "unexpected argument %s", argv[optind]);
	if (check_together(o, err) < 0)
		return -1;
	if (!seed_set)
		o->seed = (unsigned long long)wall_ms() ^ ((unsigned long long)getpid() << 32);
	return 0;
}
