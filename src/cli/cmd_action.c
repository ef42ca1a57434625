/* evtop — `evtop retry|cancel|recover EVENT_NO...`: the operator's guarded actions on single
 * events, for scripts and runbooks (PRODUCT.md section 2). Each event_no is looked up (in
 * both tables unless --table: an event_no found in both is ambiguous and refused), the guard
 * builds the exact UPDATE or says why not, and then: --dry-run prints it; on a terminal
 * without --yes the row, the change and the statement are shown and "Apply? [y/N]" asked;
 * without a terminal and without --yes nothing is done. */
#include <config.h>

#include "cli/cli.h"
#include "cli/fanout.h"
#include "cli/cmd_bulk.h"
#include "cli/options.h"
#include "cli/session.h"
#include "core/auditlog.h"
#include "core/guard.h"
#include "core/i18n.h"
#include "core/text.h"
#include "db/action.h"
#include "db/conn.h"

#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

enum verb {
	VERB_RETRY,
	VERB_CANCEL,
	VERB_RECOVER,
};

static const char *const verb_name[] = {"retry", "cancel", "recover"};

int ev_bulk_cli_action(const char *command)
{
	/* retry --list takes the same lists whether it schedules or retries --now */
	static const enum ev_action action[] = {EV_ACTION_RETRY_SCHEDULE, EV_ACTION_CANCEL,
	                                        EV_ACTION_RECOVER};
	for (size_t v = 0; v < sizeof(verb_name) / sizeof(verb_name[0]); v++)
		if (strcmp(verb_name[v], command) == 0)
			return (int)action[v];
	return -1;
}

static void usage_common(FILE *out)
{
	fputs("\n", out);
	fputs(_("Action options:\n"
	        "      --table=outbox|message  the table (an event_no is unique per table only;\n"
	        "                             one found in both tables needs --table)\n"
	        "      --reason=TEXT          the operator's reason: after the model's text in\n"
	        "                             fail_reason (cancel, recover), and in the audit\n"
	        "      --dry-run              print the exact statement and what would change\n"
	        "      --yes                  apply without asking (needed without a terminal)\n"
	        "      --include-protected    act on protected types too (PAY, REFUND, ...)\n"
	        "      --operator=ID          operator or ticket id for the audit\n"
	        "      --read-only            refuse every write\n"
	        "      --enable-message-recover  allow recover on the message table\n"
	        "      --clock-ok             write although a time zone mismatch is suspected\n"
	        "                             (the newest rows dated ahead of NOW() or a whole\n"
	        "                             or half hour behind it): the zone is right\n"
	        "Every write is audited to $XDG_STATE_HOME/evtop/audit.jsonl (else\n"
	        "~/.local/state/evtop/audit.jsonl) and, when it exists, the evtop_audit table.\n"
	        "Exit status: 0 all applied, 1 any skipped, failed or refused, 2 usage, 3 cannot\n"
	        "connect. See doc/actions.md.\n"),
	      out);
	ev_bulk_cli_usage(out);
	fputc('\n', out);
	ev_opts_usage(out);
}

#define MAX_EVENT_NOS 1000 /* event_nos one run takes */

static void usage_retry(FILE *out)
{
	fputs(_("Usage: evtop retry EVENT_NO... [--now | --delay=DUR] [OPTION]...\n"
	        "   or: evtop retry --list=KIND --table=T [FILTER]... [--now | --delay=DUR]\n"
	        "                   [--rate=N] [--batch-size=N] [--pause=DUR] [OPTION]...\n"
	        "Retry failed events. By default through the applications' own retry path: the\n"
	        "event stays failed and next_retry_time = NOW() + --delay (default 0), so the\n"
	        "retry scanner picks it up. --now makes it pending again at once (3 -> 0).\n"
	        "An exhausted event (retry_count >= max_retry_count) gets exactly one more\n"
	        "attempt.\n"),
	      out);
	usage_common(out);
}

static void usage_cancel(FILE *out)
{
	fputs(_("Usage: evtop cancel EVENT_NO... --reason=TEXT [OPTION]...\n"
	        "   or: evtop cancel --list=KIND --table=T [FILTER]... --reason=TEXT [OPTION]...\n"
	        "Cancel pending or failed events (-> 4). fail_reason becomes the model's text,\n"
	        "then \"：\" and TEXT, cut to 1000 characters.\n"),
	      out);
	usage_common(out);
}

static void usage_recover(FILE *out)
{
	fputs(_("Usage: evtop recover EVENT_NO... [--reason=TEXT] [OPTION]...\n"
	        "   or: evtop recover --list=stuck --table=T [FILTER]... [OPTION]...\n"
	        "Recover stuck events (processing -> failed, retry_count + 1, next retry in 1\n"
	        "minute): in the outbox when lock_until <= NOW(); in the message table only with\n"
	        "--enable-message-recover (or recover_message = true), when last_handle_time is\n"
	        "older than the stuck threshold (--stuck-threshold, default 10m).\n"),
	      out);
	usage_common(out);
}

/* A result line: "refused  outbox E1 ...", the word in 9 cells. */
#define OUTCOME_COLS 9
/* A field of a shown row: "  change:    ...", the label in 11 cells. */
#define FIELD_COLS     11
#define say_field(...) ev_cli_say_at(stdout, "  ", __VA_ARGS__)

/* TRANSLATORS: the first word of an action's result line (at most 8 cells); the lines line
 * up after it. */
#define REFUSED P_("outcome", "refused")
/* TRANSLATORS: the first word of an action's result line (at most 8 cells): the operator
 * answered no. */
#define DECLINED P_("outcome", "declined")

/* The word of a result line for a result. */
static const char *outcome_word(enum ev_action_result r)
{
	switch (r) {
	case EV_RESULT_APPLIED:
		/* TRANSLATORS: a result line's first word (at most 8 cells). */
		return P_("outcome", "applied");
	case EV_RESULT_SKIPPED:
		/* TRANSLATORS: a result line's first word (at most 8 cells). */
		return P_("outcome", "skipped");
	case EV_RESULT_FAILED:
		/* TRANSLATORS: a result line's first word (at most 8 cells). */
		return P_("outcome", "failed");
	case EV_RESULT_REFUSED:
		return REFUSED;
	}
	return ev_action_result_name(r);
}

/* --reason is the fail_reason filter for the list commands; here it is the operator's reason,
 * free text of any length (cut to 1000 characters later). Take it out of argv before the
 * shared options see it. Returns the reason (borrowed from argv), or NULL; -1 in *bad when
 * --reason has no value. */
static const char *take_reason(int *argc, char **argv, bool *bad)
{
	const char *reason = NULL;
	int out = 1;

	*bad = false;
	for (int i = 1; i < *argc; i++) {
		if (strcmp(argv[i], "--") == 0) {
			while (i < *argc)
				argv[out++] = argv[i++];
			break;
		}
		if (strncmp(argv[i], "--reason=", 9) == 0) {
			reason = argv[i] + 9;
			continue;
		}
		if (strcmp(argv[i], "--reason") == 0) {
			if (i + 1 >= *argc) {
				*bad = true;
				break;
			}
			reason = argv[++i];
			continue;
		}
		argv[out++] = argv[i];
		if (argv[i][0] == '-' && ev_opts_takes_value(argv[i]) && i + 1 < *argc)
			argv[out++] = argv[++i];
	}
	*argc = out;
	argv[out] = NULL;
	return reason;
}

static bool filter_given(const struct ev_filter *f)
{
	return !ev_filter_empty(f);
}

/* A line from stdin without its newline; NULL at end of input. */
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

static bool ask_yes(const char *question)
{
	fputs(question, stdout);
	fflush(stdout);
	char *answer = read_line();
	bool yes = answer != NULL && (strcmp(answer, "y") == 0 || strcmp(answer, "Y") == 0 ||
	                              strcasecmp(answer, "yes") == 0);
	if (answer == NULL)
		putchar('\n');
	free(answer);
	return yes;
}

struct run {
	struct ev_opts *o;
	struct ev_session s;
	enum ev_action action;
	const char *reason;
	bool interactive;
	bool usable[EV_TABLE_COUNT];
	bool access_checked[EV_TABLE_COUNT];
	struct ev_access access[EV_TABLE_COUNT];
	struct ev_audit_log log;
	struct ev_audit_ident ident;
	struct ev_audit_who who;
	int applied, not_applied;
};

/* Find event_no in the tables. Returns the number of tables it is in (0, 1, 2) and fills
 * row/kind for the first; -1 on a database error (said). */
static int find_event(struct run *r, const char *event_no, struct ev_guard_row *row,
                      enum ev_table_kind *kind, unsigned long long *other_id)
{
	enum ev_table_kind kinds[EV_TABLE_COUNT];
	int n = ev_session_tables(r->o, kinds), hits = 0;
	struct ev_error err = {0};

	for (int i = 0; i < n; i++) {
		enum ev_table_kind t = kinds[i];
		if (!r->usable[t])
			continue;
		struct ev_query *q =
		        ev_guard_query_row_by_no(t, ev_opts_table_name(r->o, t), event_no);
		struct ev_rowset *rs = NULL;
		int rc = ev_conn_run(r->s.conn, q, &rs, &err);
		ev_query_free(&q);
		if (rc < 0) {
			ev_session_report(&err);
			return -1;
		}
		if (rs->nrows > 0) {
			if (hits == 0) {
				if (ev_guard_row_from_rowset(rs, 0, t, row, &err) < 0) {
					ev_rowset_free(&rs);
					ev_session_report(&err);
					return -1;
				}
				*kind = t;
			} else {
				const char *id = ev_rowset_get(rs, 0, "id");
				*other_id = id ? strtoull(id, NULL, 10) : 0;
			}
			hits++;
		}
		ev_rowset_free(&rs);
	}
	return hits;
}

/* The row, the change and the statement of an action: dry (--dry-run) or about to be asked. */
static void print_block(const struct run *r, const struct ev_guard *g,
                        const struct ev_guard_row *row, bool dry)
{
	const struct ev_table_def *def = ev_model_table(g->table);
	char *desc = ev_guard_row_describe(g->table, row);
	char *stmt = ev_query_render(g->update);

	/* TRANSLATORS: the head of a shown action: --dry-run's ("would") and a confirmation's
	 * ("about to"); the action's name (retry_now, cancel, ...), the table (outbox, message),
	 * the event_no, then the row's id, event_type and biz_type (or aggregate_type). */
	ev_cli_say(stdout,
	           dry ? _("would %s %s %s (id %llu, event_type %s, %s %s)")
	               : _("about to %s %s %s (id %llu, event_type %s, %s %s)"),
	           ev_action_name(g->action), def->key, row->event_no, row->id,
	           row->event_type ? row->event_type : "?", def->type_col,
	           row->biz_type ? row->biz_type : "?");
	/* TRANSLATORS: the labels of a shown action's fields (at most 10 cells); the fields
	 * line up after them. */
	say_field(_("row:"), FIELD_COLS, "%s", desc);
	/* TRANSLATORS: a field label (at most 10 cells). */
	say_field(_("change:"), FIELD_COLS, "%s", g->change);
	if (g->notice != NULL)
		/* TRANSLATORS: a field label (at most 10 cells). */
		say_field(_("note:"), FIELD_COLS, "%s", g->notice);
	if (g->protected_token != NULL)
		/* TRANSLATORS: a field label (at most 10 cells). */
		say_field(_("protected:"), FIELD_COLS,
		          _("a %s event (confirmed with --include-protected)"), g->protected_token);
	if (r->o->dry_run && r->access_checked[g->table] && !r->access[g->table].writable)
		/* TRANSLATORS: field labels (at most 10 cells). */
		say_field(r->access[g->table].clock_suspect ? _("refused:") : _("read-only:"),
		          FIELD_COLS, "%s", r->access[g->table].why);
	else if (r->access_checked[g->table] && r->access[g->table].clock_suspect)
		/* TRANSLATORS: a field label (at most 10 cells). */
		say_field(_("clock:"), FIELD_COLS, _("suspect, written anyway (--clock-ok): %s"),
		          r->access[g->table].clock_why);
	/* TRANSLATORS: a field label (at most 10 cells). */
	say_field(_("statement:"), FIELD_COLS, "%s;", stmt);
	free(stmt);
	free(desc);
}

static void report_outcome(struct run *r, const struct ev_guard *g, const struct ev_guard_row *row,
                           struct ev_action_outcome *out)
{
	const char *key = ev_model_table(g->table)->key;
	const char *word = outcome_word(out->result);
	char *now = out->have_now ? ev_guard_row_describe(g->table, &out->now) : NULL;

	if (out->result == EV_RESULT_APPLIED) {
		r->applied++;
		/* TRANSLATORS: after "applied": the table, the event_no, its id, the action, then
		 * the row as it is now (or "(not re-read)") and what the database said. */
		ev_cli_say_at(stdout, "", word, OUTCOME_COLS, _("%s %s id=%llu %s: now %s%s%s"),
		              key, row->event_no, row->id, ev_action_name(g->action),
		              /* TRANSLATORS: in place of the row as it is now. */
		              now ? now : _("(not re-read)"), out->msg[0] ? "; " : "", out->msg);
	} else {
		r->not_applied++;
		/* TRANSLATORS: a result line after its first word: the table, the event_no, its id,
		 * the action, why it was not applied, then "; now " and the row as it is now. */
		ev_cli_say_at(stdout, "", word, OUTCOME_COLS, _("%s %s id=%llu %s: %s%s%s"), key,
		              row->event_no, row->id, ev_action_name(g->action), out->msg,
		              now ? _("; now ") : "", now ? now : "");
	}
	if (out->audit_line_failed) {
		r->not_applied++;
		ev_say_error(_("the audit line for %s was not written: %s"), row->event_no,
		             out->audit_msg);
	}
	free(now);
}

static void apply_one(struct run *r, const struct ev_guard *g, const struct ev_guard_row *row)
{
	struct ev_action_ctx ctx = {
	        .conn = r->s.conn, .access = &r->access[g->table], .log = &r->log, .who = &r->who};
	struct ev_action_outcome out;
	ev_action_apply(&ctx, g, row, &out);
	report_outcome(r, g, row, &out);
	ev_action_outcome_clear(&out);
}

/* What the real run would do, asked of the server: the refusal it would meet (read-only, a
 * suspected zone mismatch), else the UPDATE's own WHERE counted by primary key with the
 * server's NOW() (g->match), so that --dry-run and the write cannot disagree. */
static void dry_verdict(struct run *r, const struct ev_guard *g, const struct ev_guard_row *row)
{
	const struct ev_access *a = &r->access[g->table];
	struct ev_error err = {0};
	struct ev_rowset *rs = NULL;

	if (r->access_checked[g->table] && !a->writable) {
		/* TRANSLATORS: --dry-run's verdict on an action (the label at most 10 cells). */
		say_field(_("verdict:"), FIELD_COLS, "%s",
		          a->clock_suspect ? _("would be refused (clock)")
		                           : _("would be refused (read-only)"));
		r->not_applied++;
		return;
	}
	if (ev_conn_run(r->s.conn, g->match, &rs, &err) < 0) {
		say_field(_("verdict:"), FIELD_COLS,
		          _("unknown: the guard could not be evaluated: %s"), err.msg);
		r->not_applied++;
		return;
	}
	const char *n = rs->nrows > 0 ? ev_rowset_cell(rs, 0, 0)->s : NULL;
	bool match = n != NULL && strtoll(n, NULL, 10) == 1;
	ev_rowset_free(&rs);
	if (match) {
		say_field(_("verdict:"), FIELD_COLS, "%s",
		          _("would be applied (its WHERE matches the row now)"));
		r->applied++;
		return;
	}
	/* The row as it is now explains why the guard does not hold. */
	struct ev_guard_row now = {0};
	bool have_now = false;
	struct ev_query *q = ev_guard_query_row(g->table, g->table_name, row->id);
	if (ev_conn_run(r->s.conn, q, &rs, &err) == 0) {
		have_now = rs->nrows == 1 &&
		           ev_guard_row_from_rowset(rs, 0, g->table, &now, &err) == 0;
		ev_rowset_free(&rs);
	}
	ev_query_free(&q);
	char *why = ev_guard_explain_skip(g, row, have_now ? &now : NULL);
	say_field(_("verdict:"), FIELD_COLS,
	          _("would be skipped: its WHERE matches no row now: %s"), why);
	free(why);
	ev_guard_row_clear(&now);
	r->not_applied++;
}

static void do_event(struct run *r, const char *event_no)
{
	struct ev_guard_row row = {0};
	enum ev_table_kind kind = EV_TABLE_OUTBOX;
	unsigned long long other = 0;
	struct ev_error err = {0};
	struct ev_guard g;

	if (strlen(event_no) > 64 || !ev_guard_utf8_valid(event_no)) {
		ev_cli_say_at(stdout, "", REFUSED, OUTCOME_COLS,
		              _("%s: not an event_no (at most 64 characters)"), event_no);
		r->not_applied++;
		return;
	}
	int hits = find_event(r, event_no, &row, &kind, &other);
	if (hits < 0) {
		r->not_applied++;
		ev_guard_row_clear(&row);
		return;
	}
	if (hits == 0) {
		if (r->o->table >= 0)
			ev_cli_say_at(stdout, "", REFUSED, OUTCOME_COLS,
			              _("%s: no such event in %s"), event_no,
			              ev_model_table((enum ev_table_kind)r->o->table)->key);
		else
			ev_cli_say_at(stdout, "", REFUSED, OUTCOME_COLS,
			              _("%s: no such event in either table"), event_no);
		r->not_applied++;
		return;
	}
	if (hits > 1) {
		ev_cli_say_at(
		        stdout, "", REFUSED, OUTCOME_COLS,
		        _("%s: ambiguous: this event_no is in both tables (%s id %llu, %s id "
		          "%llu); choose one with --table"),
		        event_no, ev_model_table(kind)->key, row.id,
		        ev_model_table(kind == EV_TABLE_OUTBOX ? EV_TABLE_MESSAGE : EV_TABLE_OUTBOX)
		                ->key,
		        other);
		r->not_applied++;
		ev_guard_row_clear(&row);
		return;
	}

	/* Read-only first: no advice (--include-protected, a status) that could not help. */
	if (!r->o->dry_run && !r->access[kind].writable) {
		if (r->access[kind].clock_suspect)
			/* TRANSLATORS: after "refused": the table, the event_no, its id, the
			 * action, why. */
			ev_cli_say_at(stdout, "", REFUSED, OUTCOME_COLS, _("%s %s id=%llu %s: %s"),
			              ev_model_table(kind)->key, event_no, row.id,
			              ev_action_name(r->action), r->access[kind].why);
		else
			ev_cli_say_at(stdout, "", REFUSED, OUTCOME_COLS,
			              _("%s %s id=%llu %s: read-only: %s"),
			              ev_model_table(kind)->key, event_no, row.id,
			              ev_action_name(r->action), r->access[kind].why);
		r->not_applied++;
		ev_guard_row_clear(&row);
		return;
	}
	struct ev_guard_req req = {
	        .table = kind,
	        .table_name = ev_opts_table_name(r->o, kind),
	        .action = r->action,
	        .row = &row,
	        .reason = r->reason,
	        .schedule_delay_s = r->o->delay_s,
	        .stuck_threshold_s = r->o->cfg.stuck_threshold_s,
	        .recover_message = r->o->cfg.recover_message,
	        .protected_types = r->o->cfg.protected_types,
	        .confirmed_protected = r->o->include_protected,
	};
	if (ev_guard_build(&req, &g, &err) < 0) {
		ev_cli_say_at(stdout, "", REFUSED, OUTCOME_COLS, _("%s %s id=%llu %s: %s"),
		              ev_model_table(kind)->key, event_no, row.id,
		              ev_action_name(r->action), err.msg);
		r->not_applied++;
		ev_guard_row_clear(&row);
		return;
	}
	if (r->o->dry_run) {
		print_block(r, &g, &row, true);
		dry_verdict(r, &g, &row);
		goto done;
	}
	if (r->interactive) {
		print_block(r, &g, &row, false);
		/* TRANSLATORS: the answer is read as y or yes (any case); keep [y/N]. */
		if (!ask_yes(_("Apply? [y/N] "))) {
			ev_cli_say_at(stdout, "", DECLINED, OUTCOME_COLS,
			              _("%s %s id=%llu %s: not applied"), ev_model_table(kind)->key,
			              event_no, row.id, ev_action_name(r->action));
			r->not_applied++;
			goto done;
		}
	}
	apply_one(r, &g, &row);
done:
	fflush(stdout);
	ev_guard_clear(&g);
	ev_guard_row_clear(&row);
}

/* --clock-ok lifted a suspected zone mismatch: the audit file records it before any write. */
static int audit_clock_ok(struct run *r, enum ev_table_kind t)
{
	struct ev_error err = {0};
	char now[32];
	ev_audit_time_now(now);
	char *line = ev_audit_clock_ok_line(now, &r->who, ev_opts_table_name(r->o, t), "--clock-ok",
	                                    r->access[t].clock_why);
	int rc = ev_audit_log_append(&r->log, line, &err);
	free(line);
	if (rc < 0)
		ev_say_error(_("refused: %s (every write is audited there first)"), err.msg);
	return rc;
}

/* Connect, check the tables and what may be written; 0, or an exit code. */
static int prepare(struct run *r)
{
	struct ev_error err = {0};
	enum ev_table_kind kinds[EV_TABLE_COUNT];
	int n = ev_session_tables(r->o, kinds), usable = 0;

	if (ev_session_open(&r->s, r->o, &err) < 0) {
		ev_session_report(&err);
		return EV_EXIT_UNKNOWN;
	}
	if (r->o->cfg.read_only)
		ev_conn_set_read_only(r->s.conn, _("--read-only (or read_only in the config)"));
	for (int i = 0; i < n; i++) {
		enum ev_table_kind t = kinds[i];
		if (ev_session_check_table(&r->s, t, &err) < 0) {
			/* Without --table, a table that is not there is not an error: the event
			 * may be in the other. */
			if (r->o->table >= 0 || err.code != EV_ERR_SCHEMA) {
				ev_session_report(&err);
				return EV_EXIT_UNKNOWN;
			}
			continue;
		}
		r->usable[t] = true;
		usable++;
		if (ev_conn_read_only(r->s.conn) != NULL) {
			snprintf(r->access[t].why, sizeof(r->access[t].why), "%s",
			         ev_conn_read_only(r->s.conn));
			r->access_checked[t] = true;
			continue;
		}
		if (ev_action_check_access_clock(r->s.conn, t, ev_opts_table_name(r->o, t),
		                                 r->o->clock_ok, &r->access[t], &err) < 0 &&
		    !r->o->dry_run) {
			ev_session_report(&err);
			return EV_EXIT_UNKNOWN;
		}
		r->access_checked[t] = true;
		if (r->o->clock_ok && r->access[t].clock_suspect && !r->o->dry_run &&
		    audit_clock_ok(r, t) < 0)
			return EV_EXIT_FAILURE;
	}
	if (usable == 0) {
		ev_say_error("%s", _("neither event table exists in this database"));
		return EV_EXIT_UNKNOWN;
	}
	return 0;
}

/* Which of the chosen sources holds the event_nos: looked up on every source's primary. */
struct locate {
	char **event_nos;
	int n;
	bool *found; /* [source][event]: found[i * n + e] */
};

static int locate_one(struct ev_fan_src *fs, void *arg)
{
	struct locate *l = arg;
	int i = (int)(fs - (struct ev_fan_src *)fs->out);
	enum ev_table_kind kinds[EV_TABLE_COUNT];
	int nt = ev_session_tables(&fs->o, kinds);
	for (int e = 0; e < l->n; e++) {
		for (int k = 0; k < nt; k++) {
			enum ev_table_kind t = kinds[k];
			if (!(fs->src->tables & (1u << t)) ||
			    ev_session_check_table(&fs->s, t, &fs->err) < 0)
				continue;
			struct ev_query *q = ev_guard_query_row_by_no(
			        t, ev_opts_table_name(&fs->o, t), l->event_nos[e]);
			struct ev_rowset *rs = NULL;
			if (ev_conn_run(fs->s.conn, q, &rs, &fs->err) == 0 && rs->nrows > 0)
				l->found[i * l->n + e] = true;
			ev_rowset_free(&rs);
			ev_query_free(&q);
		}
	}
	return 0;
}

/* With several sources an event's identity includes its source: find the one source that
 * holds every event_no given, and narrow o to it. Returns 0, or an exit code (said). */
static int pick_source(struct ev_opts *o, bool bulk)
{
	struct ev_error err = {0};
	struct ev_fan f;

	if (o->nchosen <= 1)
		return 0;
	if (bulk) {
		ev_say_error(_("a bulk action works on one source at a time: name it with --source "
		               "(the config has %d)"),
		             o->nchosen);
		return EV_EXIT_USAGE;
	}
	if (ev_fan_open(&f, o, true, &err) < 0) {
		ev_session_report(&err);
		ev_fan_close(&f);
		return EV_EXIT_UNKNOWN;
	}
	struct locate l = {.event_nos = o->args, .n = o->nargs};
	l.found = ev_xcalloc((size_t)(f.n * l.n), sizeof(*l.found));
	for (int i = 0; i < f.n; i++)
		f.v[i].out = f.v; /* the base, for the source's index */
	ev_fan_run(&f, locate_one, &l);
	int rc = 0, where = -1;
	for (int i = 0; i < f.n && rc == 0; i++) {
		if (!f.v[i].up) {
			ev_error_set(
			        &err, f.v[i].err.code,
			        _("refused: source %s does not answer (%.300s), and an "
			          "event_no given may be there: name the source with --source"),
			        f.v[i].src->name, f.v[i].err.msg);
			ev_session_report(&err);
			rc = EV_EXIT_UNKNOWN;
		}
	}
	for (int e = 0; e < l.n && rc == 0; e++) {
		int first = -1;
		for (int i = 0; i < f.n && rc == 0; i++) {
			if (!l.found[i * l.n + e])
				continue;
			if (first >= 0) {
				ev_error_set(
				        &err, EV_ERR_USAGE,
				        _("refused: event %.64s is on source %s and on source %s: "
				          "name one with --source"),
				        o->args[e], f.v[first].src->name, f.v[i].src->name);
				ev_session_report(&err);
				rc = EV_EXIT_USAGE;
			}
			first = i;
		}
		if (rc == 0 && first >= 0 && where >= 0 && first != where) {
			ev_error_set(
			        &err, EV_ERR_USAGE,
			        _("refused: the events given are on several sources (%s and %s): "
			          "one source per run, named with --source"),
			        f.v[where].src->name, f.v[first].src->name);
			ev_session_report(&err);
			rc = EV_EXIT_USAGE;
		}
		if (first >= 0)
			where = first;
	}
	if (rc == 0 && where >= 0) {
		ev_say_error(l.n == 1 ? _("source %s holds the event given; acting there")
		                      : _("source %s holds the events given; acting there"),
		             o->chosen[where]->name);
		o->src = o->chosen[where];
		o->chosen[0] = o->src;
		o->nchosen = 1;
	}
	free(l.found);
	ev_fan_close(&f);
	return rc;
}

/* The request held to what each verb takes, before anything is read or written; then the one
 * source it is on. Returns 0, or an exit code (said). */
static int check_request(struct run *r, enum verb verb, bool bad, const struct ev_bulk_cli *bulk,
                         struct ev_error *err)
{
	struct ev_opts *o = r->o;
	int rc;

	if (o->nargs > MAX_EVENT_NOS) {
		ev_say_error(_("at most %d event_nos at once (%d given); for more, act on a list "
		               "with --list KIND and its filters (--filter, --event-type, ...), or "
		               "feed a file of event_nos through xargs -n %d"),
		             MAX_EVENT_NOS, o->nargs, MAX_EVENT_NOS);
		return EV_EXIT_USAGE;
	}
	if (bad) {
		ev_say_error("%s", _("--reason needs a value"));
		return EV_EXIT_USAGE;
	}
	/* Before anything is read or written: an ESC, a newline or a tab in fail_reason would
	 * reach every terminal and log that shows the row. */
	if (ev_guard_reason_check(r->reason, err) < 0) {
		ev_say_error(_("--reason: %s; nothing was written"), err->msg);
		return EV_EXIT_USAGE;
	}
	if (filter_given(&o->filter) && bulk->list == NULL) {
		ev_say_error(_("%s acts on the event_nos given; filters are taken only with --list "
		               "KIND (a bulk action)"),
		             verb_name[verb]);
		return EV_EXIT_USAGE;
	}
	if (verb != VERB_RETRY && (o->retry_now || o->delay_set)) {
		ev_say_error("%s", _("--now and --delay are for retry"));
		return EV_EXIT_USAGE;
	}
	if (o->retry_now && o->delay_set) {
		ev_say_error("%s", _("--now retries at once; --delay schedules: choose one"));
		return EV_EXIT_USAGE;
	}
	if (verb == VERB_CANCEL && (r->reason == NULL || r->reason[0] == '\0')) {
		ev_say_error("%s",
		             _("cancel needs --reason TEXT (it is written into fail_reason)"));
		return EV_EXIT_USAGE;
	}
	r->action = verb == VERB_CANCEL    ? EV_ACTION_CANCEL
	            : verb == VERB_RECOVER ? EV_ACTION_RECOVER
	            : o->retry_now         ? EV_ACTION_RETRY_NOW
	                                   : EV_ACTION_RETRY_SCHEDULE;
	if (bulk->any && (rc = ev_bulk_cli_check(bulk, o, r->action, verb_name[verb])) != 0)
		return rc;
	return pick_source(o, bulk->list != NULL);
}

/* Whether a write may happen at all: not read-only, a terminal to confirm on (or --yes), the
 * operator asked for, the audit file open. Returns 0, or EV_EXIT_FAILURE (said). */
static int may_write(struct run *r, enum verb verb, struct ev_error *err)
{
	struct ev_opts *o = r->o;

	if (o->cfg.read_only && !o->dry_run) {
		ev_say_error(_("refused: read-only (--read-only or read_only in the config): %s "
		               "writes nothing"),
		             verb_name[verb]);
		return EV_EXIT_FAILURE;
	}
	if (!o->dry_run && !o->yes && !isatty(STDIN_FILENO)) {
		ev_say_error("%s",
		             _("refused: no terminal to confirm on; add --yes to apply without "
		               "asking, or --dry-run to see the statements"));
		return EV_EXIT_FAILURE;
	}
	r->interactive = !o->dry_run && !o->yes;
	if (r->interactive && o->cfg.operator_id == NULL) {
		fputs(_("Operator or ticket id for the audit (Enter for none): "), stdout);
		fflush(stdout);
		char *id = read_line();
		if (id != NULL && id[0] != '\0')
			o->cfg.operator_id = id;
		else
			free(id);
	}
	if (!o->dry_run) {
		char *path = ev_audit_log_default_path();
		int orc = ev_audit_log_open(&r->log, path, err);
		free(path);
		if (orc < 0) {
			ev_say_error(_("refused: %s (every write is audited there first)"),
			             err->msg);
			return EV_EXIT_FAILURE;
		}
	}
	return 0;
}

/* Connect and act: on a list's rows (--list, the bulk action), or on each event_no given. */
static int act(struct run *r, const struct ev_bulk_cli *bulk)
{
	struct ev_opts *o = r->o;

	ev_audit_ident_fill(&r->ident);
	r->who = (struct ev_audit_who){
	        .source = o->src->name ? o->src->name : "default",
	        .os_user = r->ident.os_user,
	        .sudo_user = r->ident.sudo_user,
	        .ssh_connection = r->ident.ssh_connection,
	        .operator_id = o->cfg.operator_id,
	};
	int rc = prepare(r);
	if (rc == 0 && bulk->list != NULL) {
		enum ev_table_kind t = (enum ev_table_kind)o->table;
		struct ev_bulk_cli_ctx bc = {
		        .o = o,
		        .s = &r->s,
		        .access = &r->access[t],
		        .access_checked = r->access_checked[t],
		        .log = o->dry_run ? NULL : &r->log,
		        .who = &r->who,
		        .action = r->action,
		        .reason = r->reason,
		        .interactive = r->interactive,
		};
		rc = ev_bulk_cli_run(&bc, bulk);
	} else if (rc == 0) {
		for (int i = 0; i < o->nargs; i++)
			do_event(r, o->args[i]);
		if (o->dry_run)
			printf(_("dry-run: nothing was written (%d would be applied, %d would "
			         "not)\n"),
			       r->applied, r->not_applied);
		rc = r->not_applied == 0 ? EV_EXIT_OK : EV_EXIT_FAILURE;
	}
	ev_session_close(&r->s);
	return rc;
}

static int run_action(enum verb verb, int argc, char **argv, void (*usage)(FILE *))
{
	struct run r;
	struct ev_opts o;
	struct ev_bulk_cli bulk;
	struct ev_error err = {0};
	bool bad = false;
	int rc;

	memset(&r, 0, sizeof(r));
	r.log.fd = -1;
	/* The bulk options first: their values are never event_nos. */
	if (ev_bulk_cli_take(&argc, argv, &bulk, &err) < 0) {
		ev_session_report(&err);
		ev_bulk_cli_free(&bulk);
		return EV_EXIT_USAGE;
	}
	r.reason = take_reason(&argc, argv, &bad);
	rc = ev_session_parse(&o, argc, argv, usage, bad || bulk.list != NULL ? 0 : 1, INT_MAX);
	if (rc >= 0) {
		ev_opts_free(&o);
		ev_bulk_cli_free(&bulk);
		return rc;
	}
	r.o = &o;
	rc = check_request(&r, verb, bad, &bulk, &err);
	if (rc == 0)
		rc = may_write(&r, verb, &err);
	if (rc == 0)
		rc = act(&r, &bulk);
	ev_audit_log_close(&r.log);
	ev_audit_ident_clear(&r.ident);
	ev_opts_free(&o);
	ev_bulk_cli_free(&bulk);
	return rc;
}

int ev_cmd_retry(int argc, char **argv)
{
	return run_action(VERB_RETRY, argc, argv, usage_retry);
}

int ev_cmd_cancel(int argc, char **argv)
{
	return run_action(VERB_CANCEL, argc, argv, usage_cancel);
}

int ev_cmd_recover(int argc, char **argv)
{
	return run_action(VERB_RECOVER, argc, argv, usage_recover);
}
