/* evtop — bulk actions, the pure part (see bulk.h). */
#include <config.h>

#include "core/bulk.h"
#include "core/auditlog.h"
#include "core/config.h"
#include "core/i18n.h"
#include "core/text.h"

#include <jansson.h>
#include <math.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_DELAY_S (30LL * 86400) /* the guard's limit on a scheduled retry's delay */

/* --- settings ------------------------------------------------------------------------------- */

void ev_bulk_settings_default(struct ev_bulk_settings *s)
{
	memset(s, 0, sizeof(*s));
	s->batch_size = EV_BULK_BATCH_DEFAULT;
	s->batch_ms = EV_BULK_BATCH_MS_DEFAULT;
	s->pause_ms = EV_BULK_PAUSE_MS_DEFAULT;
	s->rate = EV_BULK_RATE_DEFAULT;
}

int ev_bulk_settings_check(const struct ev_bulk_settings *s, struct ev_error *err)
{
	if (s->batch_size < 1 || s->batch_size > EV_BULK_BATCH_MAX)
		return ev_error_set(err, EV_ERR_USAGE, _("the batch size must be 1 .. %d, not %d"),
		                    EV_BULK_BATCH_MAX, s->batch_size);
	if (s->batch_ms < 1 || s->batch_ms > 60000)
		return ev_error_set(err, EV_ERR_USAGE,
		                    _("a batch's time bound must be 1 ms .. 60 s, not %d ms"),
		                    s->batch_ms);
	if (s->pause_ms < 0 || s->pause_ms > 600000)
		return ev_error_set(
		        err, EV_ERR_USAGE,
		        _("the pause between batches must be 0 .. 10 minutes, not %d ms"),
		        s->pause_ms);
	if (!(s->rate >= 0 && s->rate <= EV_BULK_RATE_MAX))
		return ev_error_set(err, EV_ERR_USAGE,
		                    _("the rate must be 0 .. %d events per second"),
		                    EV_BULK_RATE_MAX);
	if (!(s->pace >= 0 && s->pace <= EV_BULK_RATE_MAX))
		return ev_error_set(err, EV_ERR_USAGE,
		                    _("the pace must be 0 .. %d events per second"),
		                    EV_BULK_RATE_MAX);
	if (s->delay_s < 0 || s->delay_s > MAX_DELAY_S)
		return ev_error_set(err, EV_ERR_USAGE,
		                    _("a retry delay must be 0 .. 30 days, not %d s"), s->delay_s);
	return 0;
}

long long ev_bulk_spread_offset(const struct ev_bulk_settings *s, size_t i)
{
	if (s->rate <= 0)
		return s->delay_s;
	/* floor(i / rate), exact for integral rates (a double holds any size_t we count). */
	return s->delay_s + (long long)floor((double)i / s->rate + 1e-9);
}

int ev_bulk_batch_rows(const struct ev_bulk_settings *s)
{
	int n = s->batch_size;
	if (s->pace > 0) {
		double tenth = floor(s->pace / 10);
		if (tenth < 1)
			tenth = 1;
		if (tenth < n)
			n = (int)tenth;
	}
	return n < 1 ? 1 : n;
}

long long ev_bulk_wait_ms(const struct ev_bulk_settings *s, size_t written, long long elapsed_ms)
{
	long long wait = s->pause_ms;
	if (s->pace > 0) {
		long long due = (long long)ceil((double)written * 1000.0 / s->pace);
		if (due - elapsed_ms > wait)
			wait = due - elapsed_ms;
	}
	return wait < 0 ? 0 : wait;
}

double ev_bulk_eta_s(size_t done, size_t total, double elapsed_s)
{
	if (done >= total)
		return 0;
	if (done == 0 || elapsed_s <= 0)
		return -1;
	return (double)(total - done) * elapsed_s / (double)done;
}

bool ev_bulk_list_fits(enum ev_action a, enum ev_list_kind k)
{
	bool failed = k == EV_LIST_FAILED || k == EV_LIST_FAILED_DUE ||
	              k == EV_LIST_FAILED_WAITING || k == EV_LIST_FAILED_NORETRY ||
	              k == EV_LIST_FAILED_EXHAUSTED || k == EV_LIST_HIGH_RETRY;
	switch (a) {
	case EV_ACTION_RETRY_NOW:
	case EV_ACTION_RETRY_SCHEDULE:
		return failed;
	case EV_ACTION_CANCEL:
		return failed || k == EV_LIST_PENDING;
	case EV_ACTION_RECOVER:
		return k == EV_LIST_STUCK;
	default:
		return false;
	}
}

const char *ev_bulk_state_name(enum ev_bulk_state s)
{
	switch (s) {
	case EV_BULK_PENDING:
		return "pending";
	case EV_BULK_PROTECTED:
		return "protected";
	case EV_BULK_REFUSED:
		return "refused";
	case EV_BULK_APPLIED:
		return "applied";
	case EV_BULK_SKIPPED:
		return "skipped";
	case EV_BULK_FAILED:
		return "failed";
	}
	return "failed";
}

/* --- the snapshot ----------------------------------------------------------------------------- */

static char *dup_or_null(const char *s)
{
	return s ? ev_xstrdup(s) : NULL;
}

struct ev_bulk_snapshot *ev_bulk_snapshot_new(const struct ev_bulk_spec *spec)
{
	struct ev_bulk_snapshot *s = ev_xcalloc(1, sizeof(*s));
	size_t n = 0;

	s->table = spec->table;
	s->table_name = ev_xstrdup(spec->table_name ? spec->table_name
	                                            : ev_model_table(spec->table)->default_name);
	s->action = spec->action;
	s->reason = dup_or_null(spec->reason);
	s->stuck_threshold_s = spec->stuck_threshold_s;
	s->recover_message = spec->recover_message;
	while (spec->protected_types != NULL && spec->protected_types[n] != NULL)
		n++;
	s->protected_types = ev_xcalloc(n + 1, sizeof(*s->protected_types));
	for (size_t i = 0; i < n; i++)
		s->protected_types[i] = ev_xstrdup(spec->protected_types[i]);
	s->set = spec->set;
	s->target = dup_or_null(spec->target);
	return s;
}

static size_t slot_of(unsigned long long id, size_t nslots)
{
	uint64_t h = (uint64_t)id * 0x9E3779B97F4A7C15ULL;
	return (size_t)(h >> 17) & (nslots - 1);
}

/* Where id's index is (or goes) in the table of slots; slots hold index + 1, 0 = empty. */
static size_t *slot_find(struct ev_bulk_snapshot *s, unsigned long long id)
{
	size_t i = slot_of(id, s->nslots);
	while (s->slots[i] != 0 && s->items[s->slots[i] - 1].row.id != id)
		i = (i + 1) & (s->nslots - 1);
	return &s->slots[i];
}

static void slots_grow(struct ev_bulk_snapshot *s)
{
	size_t n = s->nslots ? s->nslots * 2 : 256;
	free(s->slots);
	s->slots = ev_xcalloc(n, sizeof(*s->slots));
	s->nslots = n;
	for (size_t k = 0; k < s->n; k++)
		*slot_find(s, s->items[k].row.id) = k + 1;
}

/* A copy of the row without what neither the write nor its explanation needs (the bulk of a
 * row's size). */
static void copy_row(struct ev_guard_row *dst, const struct ev_guard_row *src)
{
	ev_guard_row_copy(dst, src);
	free(dst->fail_reason);
	free(dst->update_time);
	free(dst->db_now);
	dst->fail_reason = dst->update_time = dst->db_now = NULL;
}

void ev_bulk_snapshot_add(struct ev_bulk_snapshot *s, const struct ev_guard_row *row)
{
	if ((s->n + 1) * 2 > s->nslots)
		slots_grow(s);
	size_t *slot = slot_find(s, row->id);
	if (*slot != 0) {
		struct ev_bulk_item *old = &s->items[*slot - 1];
		if (row->version > old->row.version) {
			ev_guard_row_clear(&old->row);
			copy_row(&old->row, row);
		}
		return;
	}
	if (s->n == s->cap) {
		s->cap = s->cap ? s->cap * 2 : 64;
		s->items = ev_xrealloc(s->items, s->cap * sizeof(*s->items));
	}
	struct ev_bulk_item *it = &s->items[s->n];
	memset(it, 0, sizeof(*it));
	copy_row(&it->row, row);
	*slot = ++s->n;
}

static void plan_clear(struct ev_bulk_snapshot *s)
{
	free(s->protected_summary);
	free(s->statement);
	free(s->example);
	free(s->change);
	free(s->notice);
	s->protected_summary = s->statement = s->example = s->change = s->notice = NULL;
	s->n_pending = s->n_protected = s->n_refused = s->n_exhausted = 0;
	s->spread_last_s = 0;
	s->batches_planned = 0;
}

void ev_bulk_snapshot_free(struct ev_bulk_snapshot **sp)
{
	struct ev_bulk_snapshot *s = *sp;
	if (s == NULL)
		return;
	for (size_t i = 0; i < s->n; i++) {
		ev_guard_row_clear(&s->items[i].row);
		free(s->items[i].msg);
		free(s->items[i].now);
	}
	free(s->items);
	free(s->slots);
	plan_clear(s);
	free(s->table_name);
	free(s->reason);
	ev_strv_free(&s->protected_types);
	free(s->target);
	free(s);
	*sp = NULL;
}

/* --- the plan --------------------------------------------------------------------------------- */

static void guard_req(const struct ev_bulk_snapshot *s, const struct ev_guard_row *row,
                      long long delay_s, bool confirmed, struct ev_guard_req *req)
{
	memset(req, 0, sizeof(*req));
	req->table = s->table;
	req->table_name = s->table_name;
	req->action = s->action;
	req->row = row;
	req->reason = s->reason;
	req->schedule_delay_s = (int)delay_s;
	req->stuck_threshold_s = s->stuck_threshold_s;
	req->recover_message = s->recover_message;
	req->protected_types = s->protected_types;
	req->confirmed_protected = confirmed;
}

int ev_bulk_item_guard(const struct ev_bulk_snapshot *s, const struct ev_bulk_item *it,
                       struct ev_guard *g, struct ev_error *err)
{
	struct ev_guard_req req;
	guard_req(s, &it->row, it->delay_s, it->protected_type && s->include_protected, &req);
	return ev_guard_build(&req, g, err);
}

/* The refusals that hold for every row alike: the run is refused, not each row. */
static int check_run(const struct ev_bulk_snapshot *s, struct ev_error *err)
{
	const struct ev_table_def *def = ev_model_table(s->table);

	if (def == NULL || !ev_ident_valid(s->table_name))
		return ev_error_set(err, EV_GUARD_REFUSED_BAD_REQUEST, _("not a table: %.64s"),
		                    s->table_name);
	if (s->action != EV_ACTION_RETRY_NOW && s->action != EV_ACTION_RETRY_SCHEDULE &&
	    s->action != EV_ACTION_CANCEL && s->action != EV_ACTION_RECOVER)
		return ev_error_set(err, EV_GUARD_REFUSED_BAD_REQUEST,
		                    _("%s is the applications' transition, not an operator action"),
		                    ev_action_name(s->action));
	if (ev_bulk_settings_check(&s->set, err) < 0)
		return -1;
	if (s->action == EV_ACTION_RECOVER && s->table == EV_TABLE_MESSAGE && !s->recover_message)
		return ev_error_set(err, EV_GUARD_REFUSED_RECOVER_OFF,
		                    _("recover on the message table is not enabled. The message "
		                      "table has no lock "
		                      "owner: a consumer that is only slow would still finish an "
		                      "event after evtop "
		                      "recovered it, and it would be handled twice. Enable it with "
		                      "--enable-message-recover or recover_message = true"));
	if (s->action == EV_ACTION_RECOVER && s->table == EV_TABLE_MESSAGE &&
	    s->stuck_threshold_s <= 0)
		return ev_error_set(err, EV_GUARD_REFUSED_BAD_REQUEST,
		                    _("recover on the message table needs a stuck threshold > 0"));
	if (s->action == EV_ACTION_CANCEL && (s->reason == NULL || s->reason[0] == '\0'))
		return ev_error_set(
		        err, EV_GUARD_REFUSED_REASON,
		        _("cancel needs a reason: it is written into fail_reason after the "
		          "model's text"));
	if (ev_guard_reason_check(s->reason, err) < 0)
		return -1;
	return 0;
}

/* "PAY 12, REFUND 3": the protected rows by token, in the tokens' order. */
static char *protected_summary(const struct ev_bulk_snapshot *s)
{
	struct ev_buf b;
	size_t ntok = 0;

	while (s->protected_types[ntok] != NULL)
		ntok++;
	if (ntok == 0)
		return NULL;
	size_t *count = ev_xcalloc(ntok, sizeof(*count));
	for (size_t i = 0; i < s->n; i++) {
		const struct ev_bulk_item *it = &s->items[i];
		if (!it->protected_type || it->state == EV_BULK_REFUSED)
			continue;
		const char *tok = ev_guard_protected_token(it->row.event_type, it->row.biz_type,
		                                           s->protected_types);
		for (size_t k = 0; k < ntok; k++)
			if (tok == s->protected_types[k])
				count[k]++;
	}
	ev_buf_init(&b);
	for (size_t k = 0; k < ntok; k++)
		if (count[k] > 0)
			ev_buf_printf(&b, "%s%s %zu", b.len ? ", " : "", s->protected_types[k],
			              count[k]);
	free(count);
	if (b.len == 0) {
		ev_buf_free(&b);
		return NULL;
	}
	return ev_buf_steal(&b);
}

int ev_bulk_plan(struct ev_bulk_snapshot *s, bool include_protected, struct ev_error *err)
{
	struct ev_error e = {0};
	const struct ev_bulk_item *first = NULL;

	plan_clear(s);
	s->include_protected = include_protected;
	if (check_run(s, err) < 0)
		return -1;
	for (size_t i = 0; i < s->n; i++) {
		struct ev_bulk_item *it = &s->items[i];
		struct ev_guard_req req;
		struct ev_guard g;

		free(it->msg);
		it->msg = NULL;
		it->delay_s = 0;
		it->protected_type = ev_guard_protected_token(it->row.event_type, it->row.biz_type,
		                                              s->protected_types) != NULL;
		guard_req(s, &it->row, s->set.delay_s, true, &req);
		if (ev_guard_build(&req, &g, &e) < 0) {
			it->state = EV_BULK_REFUSED;
			it->msg = ev_xstrdup(e.msg);
			s->n_refused++;
			continue;
		}
		ev_guard_clear(&g);
		if (it->protected_type && !include_protected) {
			it->state = EV_BULK_PROTECTED;
			s->n_protected++;
			continue;
		}
		it->state = EV_BULK_PENDING;
		if (s->action == EV_ACTION_RETRY_SCHEDULE) {
			it->delay_s = ev_bulk_spread_offset(&s->set, s->n_pending);
			if (it->delay_s > MAX_DELAY_S)
				return ev_error_set(
				        err, EV_ERR_USAGE,
				        _("at %g events per second the schedule would "
				          "reach %lld s past "
				          "the 30-day limit of a retry delay: raise the "
				          "rate or act on "
				          "fewer events"),
				        s->set.rate, it->delay_s);
			s->spread_last_s = it->delay_s;
		}
		if ((s->action == EV_ACTION_RETRY_NOW || s->action == EV_ACTION_RETRY_SCHEDULE) &&
		    it->row.retry_count >= it->row.max_retry_count)
			s->n_exhausted++;
		if (first == NULL)
			first = it;
		s->n_pending++;
	}
	s->protected_summary = protected_summary(s);
	int per = ev_bulk_batch_rows(&s->set);
	s->batches_planned = (unsigned)((s->n_pending + (size_t)per - 1) / (size_t)per);
	if (first != NULL) {
		struct ev_guard g;
		if (ev_bulk_item_guard(s, first, &g, err) < 0)
			return -1;
		s->statement = ev_xstrdup(g.update->sql);
		s->example = ev_query_render(g.update);
		s->change = ev_xstrdup(g.change);
		ev_guard_clear(&g);
	}
	if (s->n_exhausted > 0)
		s->notice =
		        ev_xasprintf(s->n_exhausted == 1 ? _("%zu exhausted event (retry_count >= "
		                                             "max_retry_count): the retry "
		                                             "grants exactly one more attempt "
		                                             "(max_retry_count = retry_count + "
		                                             "1)")
		                                         : _("%zu exhausted events (retry_count >= "
		                                             "max_retry_count): the retry "
		                                             "grants exactly one more attempt "
		                                             "(max_retry_count = retry_count + "
		                                             "1)"),
		                     s->n_exhausted);
	else if (s->action == EV_ACTION_RECOVER && s->table == EV_TABLE_MESSAGE && s->n_pending > 0)
		s->notice = ev_xasprintf(
		        _("risk: the message table has no lock owner: a consumer that is only slow "
		          "(last_handle_time older than %d s) will still finish its event, and it "
		          "will "
		          "be handled twice"),
		        s->stuck_threshold_s);
	return 0;
}

char *ev_bulk_protected_text(const struct ev_bulk_snapshot *s)
{
	size_t included = 0;
	for (size_t i = 0; i < s->n; i++)
		if (s->items[i].protected_type && s->items[i].state == EV_BULK_PENDING)
			included++;
	const char *types = s->protected_summary ? s->protected_summary : "";
	if (s->n_protected > 0 && included > 0)
		return ev_xasprintf(_("%zu (%s): %zu left alone, %zu included"),
		                    s->n_protected + included, types, s->n_protected, included);
	if (s->n_protected > 0)
		return ev_xasprintf(_("%zu (%s), left alone"), s->n_protected, types);
	if (included > 0)
		return ev_xasprintf(_("%zu (%s), all included"), included, types);
	return ev_xstrdup("0");
}

/* --- the tally -------------------------------------------------------------------------------- */

void ev_bulk_tally_count(const struct ev_bulk_snapshot *s, struct ev_bulk_tally *t)
{
	t->counted = s->n;
	t->protected_n = t->refused = t->applied = t->skipped = t->failed = t->not_attempted = 0;
	for (size_t i = 0; i < s->n; i++) {
		switch (s->items[i].state) {
		case EV_BULK_PENDING:
			t->not_attempted++;
			break;
		case EV_BULK_PROTECTED:
			t->protected_n++;
			break;
		case EV_BULK_REFUSED:
			t->refused++;
			break;
		case EV_BULK_APPLIED:
			t->applied++;
			break;
		case EV_BULK_SKIPPED:
			t->skipped++;
			break;
		case EV_BULK_FAILED:
			t->failed++;
			break;
		}
	}
}

char *ev_bulk_tally_describe(const struct ev_bulk_tally *t)
{
	return ev_xasprintf(_("applied %zu, skipped %zu (changed meanwhile), failed %zu; %zu "
	                      "protected and %zu refused not touched; %zu not attempted"),
	                    t->applied, t->skipped, t->failed, t->protected_n, t->refused,
	                    t->not_attempted);
}

/* --- the rows by id ------------------------------------------------------------------------- */

struct ev_query *ev_bulk_query_rows(enum ev_table_kind t, const char *table_name,
                                    const unsigned long long *ids, size_t n)
{
	/* The guard's own read-back of a row, with the id list for its "id = ?". */
	struct ev_query *q = ev_guard_query_row(t, table_name, 0);
	static const char tail[] = "id = ?";
	static const char tag[] = "/* evtop:action.row */";
	size_t len = strlen(q->sql);
	struct ev_buf b;

	if (n < 1 || n > EV_PAGE_MAX || len < sizeof(tail) ||
	    strcmp(q->sql + len - (sizeof(tail) - 1), tail) != 0 ||
	    strncmp(q->sql, tag, sizeof(tag) - 1) != 0)
		ev_fatal("ev_bulk_query_rows: %zu ids, or an unexpected row query", n);
	ev_buf_init(&b);
	ev_buf_adds(&b, "/* evtop:bulk.rows */");
	ev_buf_add(&b, q->sql + sizeof(tag) - 1, len - (sizeof(tag) - 1) - (sizeof(tail) - 1));
	ev_buf_adds(&b, "id IN (");
	for (size_t i = 0; i < n; i++)
		ev_buf_adds(&b, i ? ", ?" : "?");
	ev_buf_printf(&b, ") ORDER BY id LIMIT %zu", n);
	free(q->sql);
	q->sql = ev_buf_steal(&b);
	q->name = "bulk.rows";
	/* Its one parameter is the first id. */
	if (q->nparams != 1 || q->params[0].type != EV_P_UINT)
		ev_fatal("ev_bulk_query_rows: an unexpected row query");
	q->params[0].u = ids[0];
	for (size_t i = 1; i < n; i++)
		ev_query_add_uint(q, ids[i]);
	q->limit = (int)n;
	return q;
}

/* --- the audit lines ---------------------------------------------------------------------- */

void ev_bulk_run_id(char *buf, size_t size)
{
	static atomic_uint serial;
	char now[32];
	ev_audit_time_now(now);
	snprintf(buf, size, "%s-%ld-%u", now, (long)getpid(), atomic_fetch_add(&serial, 1) + 1);
}

/* A JSON string, or null; bytes that are not UTF-8 become '?' (jansson refuses them). */
static json_t *jstr(const char *s)
{
	if (s == NULL)
		return json_null();
	json_t *j = json_string(s);
	if (j != NULL)
		return j;
	char *safe = ev_text_sanitize(s, strlen(s));
	j = json_string(safe);
	free(safe);
	return j ? j : json_null();
}

static void jset(json_t *o, const char *key, json_t *v)
{
	if (v == NULL || json_object_set_new(o, key, v) != 0)
		ev_fatal(_("out of memory (jansson)"));
}

static char *dump_line(json_t *o)
{
	char *text = json_dumps(o, JSON_COMPACT);
	json_decref(o);
	if (text == NULL)
		ev_fatal(_("out of memory (json_dumps)"));
	char *line = ev_xasprintf("%s\n", text);
	free(text);
	return line;
}

char *ev_bulk_intent_line(const char *time, const struct ev_audit_who *who,
                          const struct ev_bulk_snapshot *s, unsigned batch,
                          const struct ev_bulk_item *const *items, size_t n)
{
	json_t *o = json_object(), *rows = json_array();
	char *audit_reason = NULL;
	const char *text = ev_guard_model_text(s->table, s->action);

	if (o == NULL || rows == NULL)
		ev_fatal(_("out of memory (jansson)"));
	/* The reason as each row's record carries it (the guard's audit_reason). */
	if (text != NULL)
		audit_reason = ev_guard_compose_reason(text, s->reason);
	else if (s->reason != NULL && s->reason[0] != '\0' && ev_guard_utf8_valid(s->reason))
		audit_reason = ev_guard_cut_chars(s->reason, EV_GUARD_REASON_MAX);
	jset(o, "time", jstr(time));
	jset(o, "source", jstr(who->source));
	jset(o, "os_user", jstr(who->os_user));
	jset(o, "sudo_user", jstr(who->sudo_user));
	jset(o, "ssh_connection", jstr(who->ssh_connection));
	jset(o, "operator", jstr(who->operator_id));
	jset(o, "db_user", jstr(who->db_user));
	jset(o, "table", jstr(s->table_name));
	jset(o, "action", jstr(ev_action_name(s->action)));
	jset(o, "reason", jstr(audit_reason));
	jset(o, "result", jstr("intent"));
	jset(o, "bulk", jstr(s->run_id));
	jset(o, "batch", json_integer(batch));
	for (size_t i = 0; i < n; i++) {
		const struct ev_guard_row *r = &items[i]->row;
		json_t *row = json_object();
		char id[32];
		if (row == NULL)
			ev_fatal(_("out of memory (jansson)"));
		snprintf(id, sizeof(id), "%llu", r->id);
		jset(row, "id", jstr(id));
		jset(row, "event_no", jstr(r->event_no));
		jset(row, "status", json_integer(r->status));
		jset(row, "version", json_integer(r->version));
		if (s->action == EV_ACTION_RETRY_SCHEDULE)
			jset(row, "delay_s", json_integer(items[i]->delay_s));
		if (json_array_append_new(rows, row) != 0)
			ev_fatal(_("out of memory (jansson)"));
	}
	jset(o, "rows", rows);
	free(audit_reason);
	return dump_line(o);
}

char *ev_bulk_result_line(const struct ev_audit_rec *r, const char *run_id, unsigned batch)
{
	char *line = ev_audit_json_line(r);
	json_error_t e;
	json_t *o = json_loads(line, 0, &e);
	if (o == NULL)
		ev_fatal(_("the audit line is not JSON: %s"), e.text);
	free(line);
	jset(o, "bulk", jstr(run_id));
	jset(o, "batch", json_integer(batch));
	return dump_line(o);
}
