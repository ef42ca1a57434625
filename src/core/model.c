/* evtop — the two tables of the model document (seeds/000: biz_message_event and
 * biz_outbox_event) and their state machines, as data. */
#include <config.h>

#include "core/model.h"
#include "core/columns.h"
#include "core/i18n.h"

#include <string.h>
#include <strings.h>

/* The columns, from core/columns.h: the kind evtop reads each as, its nullability, and
 * whether lists show it. */
#define COL(name, kind, type, nullable, def, role, comment)                                        \
	{name, EV_CT_##kind, nullable, EV_COLUMN_ROLE_SHOWN_##role},

static const struct ev_column_def message_columns[] = {EV_MESSAGE_COLUMNS(COL)};
static const struct ev_column_def outbox_columns[] = {EV_OUTBOX_COLUMNS(COL)};
#undef COL

static const struct ev_dimension message_dims[] = {
        {"event_type", "event_type"},
        {"source", "event_source"},
        {"biz_type", "biz_type"},
};

static const struct ev_dimension outbox_dims[] = {
        {"event_type", "event_type"},   {"topic", "topic"},
        {"source", "event_source"},     {"biz_type", "aggregate_type"},
        {"channel", "publish_channel"},
};

#define N(a) (sizeof(a) / sizeof((a)[0]))

static const struct ev_table_def tables[EV_TABLE_COUNT] = {
        [EV_TABLE_MESSAGE] =
                {
                        .kind = EV_TABLE_MESSAGE,
                        .key = "message",
                        .default_name = "biz_message_event",
                        .status_col = "event_status",
                        .type_col = "biz_type",
                        .object_col = "biz_id",
                        .attempt_time_col = "last_handle_time",
                        .done_time_col = "success_time",
                        .has_lock = false,
                        .default_max_retry = 3,
                        .columns = message_columns,
                        .ncolumns = N(message_columns),
                        .dimensions = message_dims,
                        .ndimensions = N(message_dims),
                        .status_en = {"pending", "processing", "succeeded", "failed", "cancelled"},
                        .status_zh = {"待处理", "处理中", "处理成功", "处理失败", "已取消"},
                },
        [EV_TABLE_OUTBOX] =
                {
                        .kind = EV_TABLE_OUTBOX,
                        .key = "outbox",
                        .default_name = "biz_outbox_event",
                        .status_col = "publish_status",
                        .type_col = "aggregate_type",
                        .object_col = "aggregate_id",
                        .attempt_time_col = "last_publish_time",
                        .done_time_col = "published_time",
                        .has_lock = true,
                        .default_max_retry = 5,
                        .columns = outbox_columns,
                        .ncolumns = N(outbox_columns),
                        .dimensions = outbox_dims,
                        .ndimensions = N(outbox_dims),
                        .status_en = {"pending", "publishing", "published", "failed", "cancelled"},
                        .status_zh = {"待发布", "发布中", "发布成功", "发布失败", "已取消"},
                },
};

const struct ev_table_def *ev_model_table(enum ev_table_kind kind)
{
	return (unsigned)kind < EV_TABLE_COUNT ? &tables[kind] : NULL;
}

int ev_model_table_parse(const char *key)
{
	if (strcasecmp(key, "message") == 0 || strcasecmp(key, "msg") == 0 ||
	    strcasecmp(key, "biz_message_event") == 0)
		return EV_TABLE_MESSAGE;
	if (strcasecmp(key, "outbox") == 0 || strcasecmp(key, "ob") == 0 ||
	    strcasecmp(key, "biz_outbox_event") == 0)
		return EV_TABLE_OUTBOX;
	return -1;
}

const struct ev_column_def *ev_model_column(const struct ev_table_def *t, const char *name)
{
	for (size_t i = 0; i < t->ncolumns; i++)
		if (strcmp(t->columns[i].name, name) == 0)
			return &t->columns[i];
	return NULL;
}

const struct ev_dimension *ev_model_dimension(const struct ev_table_def *t, const char *key)
{
	for (size_t i = 0; i < t->ndimensions; i++)
		if (strcmp(t->dimensions[i].key, key) == 0)
			return &t->dimensions[i];
	return NULL;
}

const char *ev_model_dimension_key(size_t i)
{
	for (int t = 0; t < EV_TABLE_COUNT; t++)
		for (size_t d = 0; d < tables[t].ndimensions; d++) {
			const char *key = tables[t].dimensions[d].key;
			bool seen = false;
			for (int u = 0; u < t && !seen; u++)
				seen = ev_model_dimension(&tables[u], key) != NULL;
			if (!seen && i-- == 0)
				return key;
		}
	return NULL;
}

const char *ev_model_status_name(const struct ev_table_def *t, int status, bool zh)
{
	if (status < 0 || status >= EV_ST_COUNT)
		return "unknown";
	return zh ? t->status_zh[status] : t->status_en[status];
}

const char *ev_model_status_label(const struct ev_table_def *t, int status)
{
	/* One context per table: the two tables name their states apart (po/README). */
	if (t->kind == EV_TABLE_OUTBOX) {
		switch (status) {
		case EV_ST_PENDING:
			return P_("outbox", "pending");
		case EV_ST_PROCESSING:
			return P_("outbox", "publishing");
		case EV_ST_SUCCESS:
			return P_("outbox", "published");
		case EV_ST_FAILED:
			return P_("outbox", "failed");
		case EV_ST_CANCELLED:
			return P_("outbox", "cancelled");
		}
	} else {
		switch (status) {
		case EV_ST_PENDING:
			return P_("message", "pending");
		case EV_ST_PROCESSING:
			return P_("message", "processing");
		case EV_ST_SUCCESS:
			return P_("message", "succeeded");
		case EV_ST_FAILED:
			return P_("message", "failed");
		case EV_ST_CANCELLED:
			return P_("message", "cancelled");
		}
	}
	/* TRANSLATORS: a status code outside 0..4 (the state of an event). */
	return P_("status", "unknown");
}

const char *ev_model_table_label(const struct ev_table_def *t)
{
	/* TRANSLATORS: the table's name in titles, before its name in the database:
	 * "outbox (biz_outbox_event)". */
	return t->kind == EV_TABLE_OUTBOX ? P_("table", "outbox") : P_("table", "message");
}

#define BOTH   ((1u << EV_TABLE_MESSAGE) | (1u << EV_TABLE_OUTBOX))
#define OUTBOX (1u << EV_TABLE_OUTBOX)

/* The applications' part is the model document's SQL: claim (0,3 -> 1), mark success (1 -> 2),
 * mark failure (1 -> 3), cancel (0 -> 4, and 3 -> 4 once retries are exhausted), and the
 * outbox's lock-timeout recovery job (1 -> 3). The operator's part is PRODUCT.md section 2. */
const struct ev_transition ev_transitions[] = {
        {EV_ACTION_CLAIM, BOTH, EV_ST_PENDING, EV_ST_PROCESSING},
        {EV_ACTION_CLAIM, BOTH, EV_ST_FAILED, EV_ST_PROCESSING},
        {EV_ACTION_SUCCEED, BOTH, EV_ST_PROCESSING, EV_ST_SUCCESS},
        {EV_ACTION_FAIL, BOTH, EV_ST_PROCESSING, EV_ST_FAILED},
        {EV_ACTION_APP_CANCEL, BOTH, EV_ST_PENDING, EV_ST_CANCELLED},
        {EV_ACTION_APP_CANCEL, BOTH, EV_ST_FAILED, EV_ST_CANCELLED},
        {EV_ACTION_LOCK_TIMEOUT, OUTBOX, EV_ST_PROCESSING, EV_ST_FAILED},
        {EV_ACTION_RETRY_NOW, BOTH, EV_ST_FAILED, EV_ST_PENDING},
        {EV_ACTION_RETRY_SCHEDULE, BOTH, EV_ST_FAILED, EV_ST_FAILED},
        {EV_ACTION_CANCEL, BOTH, EV_ST_PENDING, EV_ST_CANCELLED},
        {EV_ACTION_CANCEL, BOTH, EV_ST_FAILED, EV_ST_CANCELLED},
        {EV_ACTION_RECOVER, BOTH, EV_ST_PROCESSING, EV_ST_FAILED},
        {EV_ACTION_COUNT, 0, -1, -1},
};

static const struct {
	const char *name;
	enum ev_actor actor;
} actions[EV_ACTION_COUNT] = {
#define X(id, name, actor) [EV_ACTION_##id] = {name, actor},
        EV_ACTION_LIST(X)
#undef X
};

const char *ev_action_name(enum ev_action a)
{
	return (unsigned)a < EV_ACTION_COUNT ? actions[a].name : "unknown";
}

enum ev_actor ev_action_actor(enum ev_action a)
{
	return (unsigned)a < EV_ACTION_COUNT ? actions[a].actor : EV_ACTOR_APP;
}

int ev_action_parse(const char *name)
{
	for (int i = 0; i < EV_ACTION_COUNT; i++)
		if (strcmp(actions[i].name, name) == 0)
			return i;
	return -1;
}

bool ev_action_allows(enum ev_action a, enum ev_table_kind t, int from, int to)
{
	for (const struct ev_transition *tr = ev_transitions; tr->from >= 0; tr++)
		if (tr->action == a && (tr->tables & (1u << t)) && tr->from == from && tr->to == to)
			return true;
	return false;
}

bool ev_transition_allowed(enum ev_table_kind t, int from, int to)
{
	for (int a = 0; a < EV_ACTION_COUNT; a++)
		if (ev_action_allows((enum ev_action)a, t, from, to))
			return true;
	return false;
}
