/* evtop — `evtop retry|cancel|recover --list KIND --table T [filters]`: a bulk action on every
 * row of a list (see cmd_bulk.h). The count takes a snapshot of (id, version) through the
 * list's own keyset-paginated query; --dry-run shows the count, the protected rows, the
 * statement and the change and writes nothing; on a terminal without --yes the same is shown
 * and asked; then the batches run with progress on stderr (when it is a terminal), Ctrl-C
 * stops after the current batch, and the tally ends it. */
#include <config.h>

#include "cli/cmd_bulk.h"
#include "cli/cli.h"
#include "core/bulk.h"
#include "core/config.h"
#include "core/i18n.h"
#include "core/text.h"
#include "db/bulk.h"

#include <jansson.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

/* --- options ---------------------------------------------------------------------------------- */

void ev_bulk_cli_usage(FILE *out)
{
	fputs("\n", out);
	fputs(_("Bulk (every row of a list instead of EVENT_NOs):\n"
	        "      --list=KIND            act on every row of this list (see evtop list):\n"
	        "                             retry: failed, failed-due, failed-waiting,\n"
	        "                             failed-noretry, failed-exhausted, high-retry;\n"
	        "                             cancel: those and pending; recover: stuck.\n"
	        "                             Needs --table; takes the filters of evtop list\n"
	        "                             (--event-type, --filter '...', ...; fail_reason\n"
	        "                             only as --filter 'reason~TEXT' here)\n"
	        "      --batch-size=N         rows per transaction (default 100, at most 1000)\n"
	        "      --rate=N               events per second: retry schedules next_retry_time\n"
	        "                             at most N due per second (default 10); retry --now\n"
	        "                             writes at most N per second (default 10); cancel "
	        "and\n"
	        "                             recover are paced only when it is given\n"
	        "      --pause=DUR            pause between batches (default 100ms)\n"
	        "      --max-rows=N           read at most N rows (default 100000)\n"
	        "      --format=table|json    the plan (--dry-run) and the tally\n"
	        "Exit status of a bulk run: 0 it went to its end and no row failed (rows skipped\n"
	        "because they changed meanwhile, and protected rows, are counted, not errors);\n"
	        "1 a row failed, a batch stayed in doubt, it stopped, or it was refused or\n"
	        "declined; 2 usage; 3 cannot connect.\n"),
	      out);
}

static int bad_value(struct ev_error *err, const char *opt, const char *want, const char *v)
{
	/* TRANSLATORS: a bulk option's bad value: the option, what it takes, the value given. */
	return ev_error_set(err, EV_ERR_USAGE, _("%s: expected %s, got '%.40s'"), opt, want, v);
}

static int set_bulk_opt(struct ev_bulk_cli *b, const char *name, const char *v,
                        struct ev_error *err)
{
	long long n;

	b->any = true;
	if (strcmp(name, "list") == 0) {
		free(b->list);
		b->list = ev_xstrdup(v);
		return 0;
	}
	if (strcmp(name, "batch-size") == 0) {
		if (ev_parse_int(v, 1, EV_BULK_BATCH_MAX, &n) < 0)
			/* TRANSLATORS: what --batch-size takes, in "expected %s". */
			return bad_value(err, "--batch-size", _("1 .. 1000"), v);
		b->batch = n;
		return 0;
	}
	if (strcmp(name, "rate") == 0) {
		char *end;
		double r = strtod(v, &end);
		if (end == v || *end != '\0' || !(r > 0) || r > EV_BULK_RATE_MAX)
			return bad_value(err, "--rate",
			                 _("events per second, above 0 and at most 100000"), v);
		b->rate = r;
		return 0;
	}
	if (strcmp(name, "pause") == 0) {
		if (ev_parse_duration_ms(v, &n) < 0 || n < 0 || n > 600000)
			return bad_value(err, "--pause", _("a duration up to 10m (0, 500ms, 2s)"),
			                 v);
		b->pause_ms = n;
		return 0;
	}
	if (ev_parse_int(v, 1, EV_BULK_MAX_ROWS_MAX, &n) < 0)
		/* TRANSLATORS: what --max-rows takes, in "expected %s". */
		return bad_value(err, "--max-rows", _("1 .. 1000000"), v);
	b->max_rows = n;
	return 0;
}

/* The bulk options, each taking a value (--rate and --pause are archive's too). */
static const char *const names[] = {"list", "batch-size", "rate", "pause", "max-rows"};

const char *ev_bulk_cli_option(size_t i)
{
	return i < sizeof(names) / sizeof(names[0]) ? names[i] : NULL;
}

int ev_bulk_cli_take(int *argc, char **argv, struct ev_bulk_cli *b, struct ev_error *err)
{
	int out = 1;

	memset(b, 0, sizeof(*b));
	b->rate = -1;
	b->pause_ms = -1;
	for (int i = 1; i < *argc; i++) {
		const char *a = argv[i];
		bool taken = false;
		if (strcmp(a, "--") == 0) {
			while (i < *argc)
				argv[out++] = argv[i++];
			break;
		}
		for (size_t k = 0; k < sizeof(names) / sizeof(names[0]) && !taken; k++) {
			size_t len = strlen(names[k]);
			if (strncmp(a, "--", 2) != 0 || strncmp(a + 2, names[k], len) != 0)
				continue;
			if (a[2 + len] == '=') {
				if (set_bulk_opt(b, names[k], a + 3 + len, err) < 0)
					return -1;
				taken = true;
			} else if (a[2 + len] == '\0') {
				if (i + 1 >= *argc)
					return ev_error_set(err, EV_ERR_USAGE,
					                    _("%s needs a value"), a);
				if (set_bulk_opt(b, names[k], argv[++i], err) < 0)
					return -1;
				taken = true;
			}
		}
		if (taken)
			continue;
		argv[out++] = argv[i];
		/* An option's value is never taken for one of ours. */
		if (a[0] == '-' && (ev_opts_takes_value(a) || strcmp(a, "--reason") == 0) &&
		    i + 1 < *argc)
			argv[out++] = argv[++i];
	}
	*argc = out;
	argv[out] = NULL;
	return 0;
}

void ev_bulk_cli_free(struct ev_bulk_cli *b)
{
	free(b->list);
	memset(b, 0, sizeof(*b));
}

/* The lists an action takes, for its error message. */
static char *fitting_lists(enum ev_action a)
{
	struct ev_buf buf;
	ev_buf_init(&buf);
	for (int k = 0; k < EV_LIST_COUNT; k++)
		if (ev_bulk_list_fits(a, (enum ev_list_kind)k))
			ev_buf_printf(&buf, "%s%s", buf.len ? ", " : "",
			              ev_list_name((enum ev_list_kind)k));
	return ev_buf_steal(&buf);
}

int ev_bulk_cli_check(const struct ev_bulk_cli *b, const struct ev_opts *o, enum ev_action action,
                      const char *verb)
{
	if (b->list == NULL) {
		ev_say_error(
		        _("--batch-size, --rate, --pause and --max-rows are for a bulk %s: add "
		          "--list KIND"),
		        verb);
		return EV_EXIT_USAGE;
	}
	int kind = ev_list_parse(b->list);
	char *lists = fitting_lists(action);
	int rc = 0;
	if (kind < 0 || !ev_bulk_list_fits(action, (enum ev_list_kind)kind)) {
		ev_say_error(_("--list: %s acts on the lists %s, not '%.40s'"), verb, lists,
		             b->list);
		rc = EV_EXIT_USAGE;
	} else if (o->nargs > 0) {
		ev_say_error(_("%s takes EVENT_NOs or --list, not both"), verb);
		rc = EV_EXIT_USAGE;
	} else if (o->table < 0) {
		ev_say_error(
		        _("a bulk %s works on one table: add --table outbox or --table message"),
		        verb);
		rc = EV_EXIT_USAGE;
	} else if (o->after != NULL) {
		ev_say_error(_("--after is for evtop list; a bulk %s reads the whole list"), verb);
		rc = EV_EXIT_USAGE;
	} else if (o->format == EV_FMT_CSV) {
		ev_say_error(_("a bulk %s reports as table or json, not csv"), verb);
		rc = EV_EXIT_USAGE;
	}
	free(lists);
	return rc;
}

/* --- output ----------------------------------------------------------------------------------- */

/* A field of the plan: "  counted:    ...", the label in 12 cells. */
#define PLAN_COLS      12
#define say_field(...) ev_cli_say_at(stdout, "  ", __VA_ARGS__)

/* "3 events", "1 batch": the counts the plan and the question name. malloc'd. */
static char *n_events(size_t n)
{
	/* TRANSLATORS: a count of events ("3 events"), in longer sentences. */
	return ev_xasprintf(n == 1 ? _("%zu event") : _("%zu events"), n);
}

static char *n_batches(unsigned n)
{
	/* TRANSLATORS: a count of batches ("2 batches"), in longer sentences. */
	return ev_xasprintf(n == 1 ? _("%u batch") : _("%u batches"), n);
}

/* The first word of a result line of a row that was not applied (at most 8 cells). */
static const char *state_word(enum ev_bulk_state st)
{
	switch (st) {
	case EV_BULK_SKIPPED:
		/* TRANSLATORS: a result line's first word (at most 8 cells). */
		return P_("outcome", "skipped");
	case EV_BULK_FAILED:
		/* TRANSLATORS: a result line's first word (at most 8 cells). */
		return P_("outcome", "failed");
	case EV_BULK_REFUSED:
		/* TRANSLATORS: a result line's first word (at most 8 cells). */
		return P_("outcome", "refused");
	default:
		return ev_bulk_state_name(st);
	}
}

/* "list failed-due, event_type=PAY_SUCCESS reason~timeout". */
static char *describe_target(const char *list, const struct ev_filter *f)
{
	const struct {
		const char *key;
		const char *v;
	} terms[] = {
	        {"event_type=", f->event_type}, {"topic=", f->topic},
	        {"biz_type=", f->biz_type},     {"biz_id=", f->biz_id},
	        {"event_no=", f->event_no},     {"trace_id=", f->trace_id},
	        {"source=", f->source},         {"locked_by=", f->locked_by},
	        {"channel=", f->channel},       {"reason~", f->fail_reason},
	        {"since=", f->since},           {"until=", f->until},
	};
	struct ev_buf b;
	bool first = true;

	ev_buf_init(&b);
	ev_buf_printf(&b, "list %s", list);
	for (size_t i = 0; i < sizeof(terms) / sizeof(terms[0]); i++) {
		if (terms[i].v == NULL)
			continue;
		ev_buf_printf(&b, "%s%s\"%s\"", first ? ", " : " ", terms[i].key, terms[i].v);
		first = false;
	}
	return ev_buf_steal(&b);
}

/* --dry-run's verdict on the rows to act on: each row's own guarded WHERE (built as the run
 * builds it, core's g->match) counted by primary key on the server, so that the dry run says
 * what the run would do now. At most DRY_CHECK_MAX rows are asked, one statement each. */
#define DRY_CHECK_MAX 1000
struct dry {
	bool done;
	size_t checked, would, wouldnt;
	char error[512];
};

static void dry_match(const struct ev_bulk_cli_ctx *c, const struct ev_bulk_snapshot *s,
                      struct dry *d)
{
	memset(d, 0, sizeof(*d));
	d->done = true;
	for (size_t i = 0; i < s->n && d->checked < DRY_CHECK_MAX; i++) {
		const struct ev_bulk_item *it = &s->items[i];
		if (it->state != EV_BULK_PENDING)
			continue;
		struct ev_guard g;
		struct ev_error err = {0};
		struct ev_rowset *rs = NULL;
		if (ev_bulk_item_guard(s, it, &g, &err) < 0) {
			d->wouldnt++;
			d->checked++;
			continue;
		}
		int rc = ev_conn_run(c->s->conn, g.match, &rs, &err);
		ev_guard_clear(&g);
		if (rc < 0) {
			snprintf(d->error, sizeof(d->error), "%s", err.msg);
			return;
		}
		const char *n = rs->nrows > 0 ? ev_rowset_cell(rs, 0, 0)->s : NULL;
		if (n != NULL && strtoll(n, NULL, 10) == 1)
			d->would++;
		else
			d->wouldnt++;
		d->checked++;
		ev_rowset_free(&rs);
	}
}

static void print_dry(const struct ev_bulk_snapshot *s, const struct dry *d)
{
	if (!d->done)
		return;
	/* TRANSLATORS: --dry-run's verdict on a bulk action (the label at most 11 cells). */
	const char *label = _("verdict:");
	if (d->error[0]) {
		say_field(label, PLAN_COLS, _("unknown: the guards could not be evaluated: %s"),
		          d->error);
		return;
	}
	if (d->checked < s->n_pending)
		say_field(label, PLAN_COLS,
		          _("%zu would be applied, %zu would be skipped (each row's guarded WHERE, "
		            "counted on the server now; the first rows only)"),
		          d->would, d->wouldnt);
	else
		say_field(label, PLAN_COLS,
		          _("%zu would be applied, %zu would be skipped (each row's guarded WHERE, "
		            "counted on the server now)"),
		          d->would, d->wouldnt);
}

/* What a bulk action is to do: dry (--dry-run), or about to be asked. */
static void print_plan(const struct ev_bulk_cli_ctx *c, const struct ev_bulk_snapshot *s, bool dry)
{
	const struct ev_bulk_settings *set = &s->set;
	char *default_path = c->log == NULL ? ev_audit_log_default_path() : NULL;
	const char *path = c->log != NULL && c->log->path != NULL ? c->log->path
	                   : default_path != NULL
	                           ? default_path
	                           /* TRANSLATORS: in place of the audit file's path. */
	                           : _("the audit file");

	/* TRANSLATORS: the head of a bulk action's plan: --dry-run's ("would") and a
	 * confirmation's ("about to"): the action's name (retry_now, cancel, ...), the table's
	 * name, the list and its filters ("list failed-due, event_type=\"X\""). */
	ev_cli_say(stdout, dry ? _("would %s on %s: %s") : _("about to %s on %s: %s"),
	           ev_action_name(s->action), s->table_name, s->target);
	/* TRANSLATORS: the labels of a bulk action's plan (at most 11 cells); the fields line
	 * up after them. */
	char *counted =
	        ev_xasprintf(s->n == 1 ? _("%zu event (a snapshot of their id and version)")
	                               : _("%zu events (a snapshot of their id and version)"),
	                     s->n);
	/* TRANSLATORS: a field label (at most 11 cells). */
	say_field(_("counted:"), PLAN_COLS, "%s%s", counted,
	          s->truncated ? _("; more matched: only these are acted on (--max-rows)") : "");
	free(counted);
	char *prot = ev_bulk_protected_text(s);
	if (s->n_protected > 0)
		/* TRANSLATORS: a field label (at most 11 cells). */
		say_field(_("protected:"), PLAN_COLS, _("%s; --include-protected acts on them too"),
		          prot);
	else
		/* TRANSLATORS: a field label (at most 11 cells). */
		say_field(_("protected:"), PLAN_COLS, "%s", prot);
	free(prot);
	if (s->n_refused > 0)
		/* TRANSLATORS: a field label (at most 11 cells). */
		say_field(_("refused:"), PLAN_COLS, _("%zu (the guard refuses them: see below)"),
		          s->n_refused);
	char *events = n_events(s->n_pending), *batches = n_batches(s->batches_planned);
	/* TRANSLATORS: "3 events, in 1 batch of at most 100, 100 ms apart". */
	say_field(_("to act on:"), PLAN_COLS, _("%s, in %s of at most %d, %d ms apart"), events,
	          batches, ev_bulk_batch_rows(set), set->pause_ms);
	free(events);
	free(batches);
	if (set->pace > 0)
		/* TRANSLATORS: a field label (at most 11 cells). */
		say_field(_("pace:"), PLAN_COLS, _("at most %g events written per second"),
		          set->pace);
	if (s->action == EV_ACTION_RETRY_SCHEDULE && s->n_pending > 0) {
		if (set->rate > 0)
			/* TRANSLATORS: a field label (at most 11 cells). */
			say_field(_("schedule:"), PLAN_COLS,
			          _("next_retry_time = NOW() + %d .. %lld s, at most %g events due "
			            "per second, through the applications' own retry path"),
			          set->delay_s, s->spread_last_s, set->rate);
		else
			/* TRANSLATORS: a field label (at most 11 cells). */
			say_field(_("schedule:"), PLAN_COLS, _("next_retry_time = NOW() + %d s"),
			          set->delay_s);
	}
	if (s->change != NULL)
		/* TRANSLATORS: a field label (at most 11 cells). */
		say_field(_("change:"), PLAN_COLS, _("%s (the first event)"), s->change);
	if (s->notice != NULL)
		/* TRANSLATORS: a field label (at most 11 cells). */
		say_field(_("note:"), PLAN_COLS, "%s", s->notice);
	if (c->o->dry_run && c->access_checked && !c->access->writable)
		/* TRANSLATORS: field labels (at most 11 cells). */
		say_field(c->access->clock_suspect ? _("refused:") : _("read-only:"), PLAN_COLS,
		          "%s", c->access->why);
	else if (c->access_checked && c->access->clock_suspect)
		/* TRANSLATORS: a field label (at most 11 cells). */
		say_field(_("clock:"), PLAN_COLS, _("suspect, written anyway (--clock-ok): %s"),
		          c->access->clock_why);
	if (s->statement != NULL) {
		/* TRANSLATORS: a field label (at most 11 cells). */
		say_field(_("statement:"), PLAN_COLS,
		          _("%s; (one per event: its id and the version counted)"), s->statement);
		/* TRANSLATORS: a field label (at most 11 cells). */
		say_field(_("first:"), PLAN_COLS, "%s;", s->example);
		/* TRANSLATORS: a field label (at most 11 cells). */
		say_field(_("audit:"), PLAN_COLS,
		          _("each change's evtop_audit row in its transaction (when the table "
		            "exists); an intent line per batch and a result line per event in %s"),
		          path);
	}
	for (size_t i = 0; i < s->n; i++)
		if (s->items[i].state == EV_BULK_REFUSED)
			say_field(state_word(EV_BULK_REFUSED), PLAN_COLS, "%s id=%llu: %s",
			          s->items[i].row.event_no ? s->items[i].row.event_no : "?",
			          s->items[i].row.id, s->items[i].msg ? s->items[i].msg : "");
	free(default_path);
}

static json_t *jstr(const char *s)
{
	if (s == NULL)
		return json_null();
	char *safe = ev_text_sanitize(s, strlen(s));
	json_t *j = json_string(safe);
	free(safe);
	return j ? j : json_null();
}

static void jset(json_t *o, const char *key, json_t *v)
{
	if (v == NULL || json_object_set_new(o, key, v) != 0)
		ev_fatal(_("out of memory (jansson)"));
}

static json_t *plan_json(const struct ev_bulk_cli_ctx *c, const struct ev_bulk_snapshot *s,
                         const struct dry *d)
{
	json_t *o = json_object();
	if (o == NULL)
		ev_fatal(_("out of memory (jansson)"));
	jset(o, "dry_run", json_boolean(c->o->dry_run));
	jset(o, "table", jstr(s->table_name));
	jset(o, "action", jstr(ev_action_name(s->action)));
	jset(o, "target", jstr(s->target));
	jset(o, "counted", json_integer((json_int_t)s->n));
	jset(o, "truncated", json_boolean(s->truncated));
	jset(o, "protected", json_integer((json_int_t)s->n_protected));
	jset(o, "protected_types", jstr(s->protected_summary));
	jset(o, "include_protected", json_boolean(s->include_protected));
	jset(o, "refused", json_integer((json_int_t)s->n_refused));
	jset(o, "to_act_on", json_integer((json_int_t)s->n_pending));
	jset(o, "batches", json_integer(s->batches_planned));
	jset(o, "batch_size", json_integer(ev_bulk_batch_rows(&s->set)));
	jset(o, "pause_ms", json_integer(s->set.pause_ms));
	jset(o, "rate",
	     s->action == EV_ACTION_RETRY_SCHEDULE && s->set.rate > 0 ? json_real(s->set.rate)
	                                                              : json_null());
	jset(o, "pace", s->set.pace > 0 ? json_real(s->set.pace) : json_null());
	jset(o, "schedule_last_s",
	     s->action == EV_ACTION_RETRY_SCHEDULE && s->n_pending > 0
	             ? json_integer(s->spread_last_s)
	             : json_null());
	jset(o, "statement", jstr(s->statement));
	jset(o, "first", jstr(s->example));
	jset(o, "change", jstr(s->change));
	jset(o, "note", jstr(s->notice));
	if (c->access_checked && !c->access->writable)
		jset(o, "read_only", jstr(c->access->why));
	if (c->access_checked && c->access->clock_suspect)
		jset(o, "clock_suspect", jstr(c->access->clock_why));
	if (d != NULL && d->done && d->error[0] == '\0') {
		jset(o, "would_apply", json_integer((json_int_t)d->would));
		jset(o, "would_skip", json_integer((json_int_t)d->wouldnt));
		jset(o, "guards_checked", json_integer((json_int_t)d->checked));
	}
	return o;
}

static void print_json(json_t *o)
{
	char *text = json_dumps(o, JSON_INDENT(2));
	json_decref(o);
	if (text == NULL)
		ev_fatal(_("out of memory (json_dumps)"));
	printf("%s\n", text);
	free(text);
}

static const char *key_of(const struct ev_bulk_snapshot *s)
{
	return ev_model_table(s->table)->key;
}

/* One line per row that was not applied, then the tally. */
static void print_result(const struct ev_bulk_cli_ctx *c, const struct ev_bulk_snapshot *s)
{
	const struct ev_bulk_tally *t = &s->tally;

	if (c->o->format == EV_FMT_JSON) {
		json_t *o = plan_json(c, s, NULL), *rows = json_array();
		if (rows == NULL)
			ev_fatal(_("out of memory (jansson)"));
		jset(o, "bulk", jstr(s->run_id));
		jset(o, "applied", json_integer((json_int_t)t->applied));
		jset(o, "skipped", json_integer((json_int_t)t->skipped));
		jset(o, "failed", json_integer((json_int_t)t->failed));
		jset(o, "not_attempted", json_integer((json_int_t)t->not_attempted));
		jset(o, "batches_run", json_integer(t->batches));
		jset(o, "in_doubt", json_integer(t->in_doubt));
		jset(o, "stopped", json_boolean(t->stopped));
		jset(o, "error", jstr(s->error[0] ? s->error : NULL));
		jset(o, "seconds", json_real(t->seconds));
		for (size_t i = 0; i < s->n; i++) {
			const struct ev_bulk_item *it = &s->items[i];
			if (it->state != EV_BULK_SKIPPED && it->state != EV_BULK_FAILED)
				continue;
			json_t *r = json_object();
			char id[32];
			snprintf(id, sizeof(id), "%llu", it->row.id);
			jset(r, "id", jstr(id));
			jset(r, "event_no", jstr(it->row.event_no));
			jset(r, "result", jstr(ev_bulk_state_name(it->state)));
			jset(r, "error", jstr(it->msg));
			jset(r, "now", jstr(it->now));
			if (json_array_append_new(rows, r) != 0)
				ev_fatal(_("out of memory (jansson)"));
		}
		jset(o, "rows", rows);
		print_json(o);
		return;
	}
	for (size_t i = 0; i < s->n; i++) {
		const struct ev_bulk_item *it = &s->items[i];
		if (it->state != EV_BULK_SKIPPED && it->state != EV_BULK_FAILED)
			continue;
		/* TRANSLATORS: a result line after its first word: the table, the event_no, its id,
		 * the action, why it was not applied, then "; now " and the row as it is now. */
		ev_cli_say_at(stdout, "", state_word(it->state), 9, _("%s %s id=%llu %s: %s%s%s"),
		              key_of(s), it->row.event_no ? it->row.event_no : "?", it->row.id,
		              ev_action_name(s->action), it->msg ? it->msg : "",
		              it->now ? _("; now ") : "", it->now ? it->now : "");
	}
	char *line = ev_bulk_tally_describe(t);
	/* TRANSLATORS: a bulk run's tally: its id, the action, the table, what happened to the
	 * rows ("3 applied, 0 skipped, ..."), the batches, the seconds, and a lost COMMIT's note.
	 */
	char *tally = ev_xasprintf(
	        t->batches == 1 ? _("bulk %s %s on %s: %s; %u batch in %.1f s")
	                        : _("bulk %s %s on %s: %s; %u batches in %.1f s"),
	        s->run_id, ev_action_name(s->action), s->table_name, line, t->batches, t->seconds);
	if (t->in_doubt)
		/* TRANSLATORS: the tally, then why some rows were read again. */
		ev_cli_say(stdout, _("%s (a COMMIT's answer was lost: re-read, as reported)"),
		           tally);
	else
		ev_cli_say(stdout, "%s", tally);
	free(tally);
	free(line);
	if (s->error[0] != '\0')
		/* TRANSLATORS: a bulk run stopped, and why. */
		ev_cli_say(stdout, _("stopped: %s"), s->error);
	else if (t->stopped)
		ev_cli_say(stdout,
		           _("stopped after batch %u (interrupted): the rest was not attempted"),
		           t->batches);
}

/* --- running ---------------------------------------------------------------------------------- */

static atomic_bool interrupted;

struct progress_state {
	const struct ev_bulk_snapshot *s;
	bool shown;
};

static void show_progress(const struct ev_bulk_progress *p, void *arg)
{
	struct progress_state *ps = arg;
	char eta[32] = "?";
	int width = 20, fill = p->total ? (int)(p->done * (size_t)width / p->total) : width;

	if (p->eta_s >= 0)
		snprintf(eta, sizeof(eta), "%.0fs", p->eta_s);
	fprintf(stderr, "\r[%.*s%.*s] ", fill, "####################", width - fill,
	        "                    ");
	/* TRANSLATORS: a bulk run's progress after its bar: rows done of all, then how many were
	 * applied, skipped and failed, the rate, the time left. */
	fprintf(stderr, _("%zu/%zu applied %zu skipped %zu failed %zu  %.0f/s  eta %s  "), p->done,
	        p->total, p->applied, p->skipped, p->failed, p->rate, eta);
	if (p->finished)
		fputc('\n', stderr);
	fflush(stderr);
	ps->shown = true;
}

static char *read_line(void)
{
	char *line = NULL;
	size_t cap = 0;
	ssize_t n = getline(&line, &cap, stdin);
	if (n < 0) {
		free(line);
		return NULL;
	}
	while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r'))
		line[--n] = '\0';
	return line;
}

static char *ask(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static char *ask(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	fflush(stdout);
	char *answer = read_line();
	if (answer == NULL)
		putchar('\n');
	return answer;
}

static void settings_for(const struct ev_bulk_cli_ctx *c, const struct ev_bulk_cli *b,
                         struct ev_bulk_settings *set)
{
	ev_bulk_settings_default(set);
	if (b->batch > 0)
		set->batch_size = (int)b->batch;
	if (b->pause_ms >= 0)
		set->pause_ms = (int)b->pause_ms;
	set->rate = 0;
	set->pace = 0;
	switch (c->action) {
	case EV_ACTION_RETRY_SCHEDULE:
		set->rate = b->rate > 0 ? b->rate : EV_BULK_RATE_DEFAULT;
		set->delay_s = c->o->delay_s;
		break;
	case EV_ACTION_RETRY_NOW:
		set->pace = b->rate > 0 ? b->rate : EV_BULK_RATE_DEFAULT;
		break;
	default:
		set->pace = b->rate > 0 ? b->rate : 0;
		break;
	}
}

static int exit_for(const struct ev_error *err)
{
	if (err->code == EV_ERR_CONNECT)
		return EV_EXIT_UNKNOWN;
	if (err->code == EV_ERR_USAGE)
		return EV_EXIT_USAGE;
	return EV_EXIT_FAILURE;
}

/* Ask for the protected rows (by typing their count) and for the go-ahead. */
static bool confirm(const struct ev_bulk_cli_ctx *c, struct ev_bulk_snapshot *s)
{
	struct ev_error err = {0};

	if (s->n_protected > 0 && !s->include_protected) {
		size_t n = s->n_protected;
		/* TRANSLATORS: the operator types the number to include the protected rows. */
		char *answer =
		        ask(n == 1 ? _("%zu event is of protected types (%s) will be left "
		                       "untouched. To act on them too, type %zu; Enter leaves "
		                       "them: ")
		                   : _("%zu events are of protected types (%s) will be left "
		                       "untouched. To act on them too, type %zu; Enter leaves "
		                       "them: "),
		            n, s->protected_summary, n);
		char want[32];
		snprintf(want, sizeof(want), "%zu", n);
		if (answer != NULL && strcmp(answer, want) == 0) {
			if (ev_bulk_plan(s, true, &err) < 0) {
				free(answer);
				ev_cli_say(stderr, "evtop: %s", err.msg);
				return false;
			}
			/* TRANSLATORS: a field label (at most 11 cells). */
			say_field(_("protected:"), PLAN_COLS,
			          _("included: now %zu events to act on"), s->n_pending);
		}
		free(answer);
	}
	if (s->n_pending == 0)
		return false;
	char *events = n_events(s->n_pending), *batches = n_batches(s->batches_planned);
	/* TRANSLATORS: the action's name, "3 events", "1 batch". The answer is read as y or yes
	 * (any case): keep [y/N]. */
	char *answer =
	        ask(_("Apply %s to %s in %s? [y/N] "), ev_action_name(s->action), events, batches);
	free(events);
	free(batches);
	bool yes = answer != NULL && (strcmp(answer, "y") == 0 || strcmp(answer, "Y") == 0 ||
	                              strcasecmp(answer, "yes") == 0);
	free(answer);
	(void)c;
	return yes;
}

int ev_bulk_cli_run(const struct ev_bulk_cli_ctx *c, const struct ev_bulk_cli *b)
{
	struct ev_opts *o = c->o;
	enum ev_table_kind t = (enum ev_table_kind)o->table;
	struct ev_error err = {0};
	struct ev_bulk_snapshot *s = NULL;
	char *target = describe_target(b->list, &o->filter);
	int rc = EV_EXIT_FAILURE;

	struct ev_bulk_spec spec = {
	        .table = t,
	        .table_name = ev_opts_table_name(o, t),
	        .action = c->action,
	        .reason = c->reason,
	        .stuck_threshold_s = o->cfg.stuck_threshold_s,
	        .recover_message = o->cfg.recover_message,
	        .protected_types = o->cfg.protected_types,
	        .target = target,
	};
	settings_for(c, b, &spec.set);
	struct ev_bulk_target tg = {
	        .list = (enum ev_list_kind)ev_list_parse(b->list),
	        .filter = &o->filter,
	        .info = c->s->have_info[t] ? &c->s->info[t] : NULL,
	        .high_retry_min = o->cfg.high_retry_min,
	        .window_s = o->cfg.window_s,
	        .search_cap = o->cfg.search_cap,
	        .max_rows = (size_t)b->max_rows,
	};
	if (ev_bulk_count(c->s->conn, &spec, &tg, o->include_protected, &s, &err) < 0) {
		if (err.code >= EV_GUARD_REFUSED_STATUS)
			ev_say_error(_("refused: %s"), err.msg);
		else
			ev_say_error("%s", err.msg);
		rc = exit_for(&err);
		goto out;
	}
	bool writable = c->access_checked && c->access->writable;

	if (o->dry_run) {
		struct dry d = {0};
		if (writable)
			dry_match(c, s, &d);
		if (o->format == EV_FMT_JSON) {
			print_json(plan_json(c, s, &d));
		} else {
			print_plan(c, s, true);
			print_dry(s, &d);
			if (!writable)
				ev_cli_say(stdout, "%s",
				           _("dry-run: nothing was written; the real run would be "
				             "refused "
				             "(0 "
				             "would be applied)"));
			else
				ev_cli_say(stdout, "%s", _("dry-run: nothing was written"));
		}
		rc = writable ? EV_EXIT_OK : EV_EXIT_FAILURE;
		goto out;
	}
	if (!writable) {
		const char *why =
		        c->access_checked ? c->access->why : _("the write access was not checked");
		if (c->access_checked && c->access->clock_suspect)
			ev_say_error(_("refused: %s"), why);
		else
			ev_say_error(_("refused: read-only: %s"), why);
		goto out;
	}
	if (c->interactive) {
		print_plan(c, s, false);
		/* Nothing to do and nothing to include: the tally says so, without a question. */
		if ((s->n_pending > 0 || s->n_protected > 0) && !confirm(c, s)) {
			ev_cli_say(stdout, "%s", _("declined: nothing was written"));
			goto out;
		}
	}

	struct progress_state ps = {.s = s};
	struct ev_stop_watch watch;
	/* A second Ctrl-C ends it at once. Without the watch an interrupt would end evtop in the
	 * middle of a batch: refused before anything is written. */
	if (ev_stop_watch_start(&watch, &interrupted, true) < 0) {
		ev_say_error(
		        "%s",
		        _("cannot watch for Ctrl-C (no thread could be started); nothing written"));
		goto out;
	}
	struct ev_bulk_ctx ctx = {
	        .conn = c->s->conn,
	        .access = c->access,
	        .log = c->log,
	        .who = c->who,
	        .progress = isatty(STDERR_FILENO) ? show_progress : NULL,
	        .progress_arg = &ps,
	        .stop = &interrupted,
	};
	int arc = ev_bulk_apply(&ctx, s, &err);
	ev_stop_watch_end(&watch);
	if (arc < 0) {
		ev_cli_say(stderr, "evtop: %s", err.msg);
		goto out;
	}
	print_result(c, s);
	const struct ev_bulk_tally *tl = &s->tally;
	rc = tl->failed == 0 && !tl->stopped && !tl->unresolved && s->error[0] == '\0'
	             ? EV_EXIT_OK
	             : EV_EXIT_FAILURE;
out:
	fflush(stdout);
	ev_bulk_snapshot_free(&s);
	free(target);
	return rc;
}
