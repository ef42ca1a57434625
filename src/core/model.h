/* evtop — the model document's two tables as data: columns, statuses, grouping dimensions,
 * and every allowed status transition (the applications' and the operator's). */
#ifndef EV_CORE_MODEL_H
#define EV_CORE_MODEL_H

#include "core/rowset.h"

#include <stdbool.h>
#include <stddef.h>

enum ev_table_kind {
	EV_TABLE_MESSAGE,
	EV_TABLE_OUTBOX,
	EV_TABLE_COUNT,
};

/* Status codes, shared by event_status and publish_status. */
enum ev_status {
	EV_ST_PENDING = 0,
	EV_ST_PROCESSING = 1,
	EV_ST_SUCCESS = 2,
	EV_ST_FAILED = 3,
	EV_ST_CANCELLED = 4,
	EV_ST_COUNT,
};

struct ev_column_def {
	const char *name;
	enum ev_ctype type;
	bool nullable;
	bool in_list; /* shown in lists (everything but the payload and headers) */
};

/* A grouping dimension of the dashboard. */
struct ev_dimension {
	const char *key;    /* "event_type", "topic", "source", "biz_type", "channel" */
	const char *column; /* the column it groups by in this table */
};

struct ev_table_def {
	enum ev_table_kind kind;
	const char *key;              /* "message" / "outbox" (for --table) */
	const char *default_name;     /* biz_message_event / biz_outbox_event */
	const char *status_col;       /* event_status / publish_status */
	const char *type_col;         /* biz_type / aggregate_type */
	const char *object_col;       /* biz_id / aggregate_id */
	const char *attempt_time_col; /* last_handle_time / last_publish_time */
	const char *done_time_col;    /* success_time / published_time */
	bool has_lock;                /* locked_by / lock_until (the outbox) */
	int default_max_retry;        /* 3 / 5 */
	const struct ev_column_def *columns;
	size_t ncolumns;
	const struct ev_dimension *dimensions;
	size_t ndimensions;
	const char *status_en[EV_ST_COUNT];
	const char *status_zh[EV_ST_COUNT];
};

/* The definition of a table kind. */
const struct ev_table_def *ev_model_table(enum ev_table_kind kind);
/* Table kind by key ("message", "outbox", also "msg"/"ob"); -1 if unknown. */
int ev_model_table_parse(const char *key);
/* Column definition by name, or NULL. */
const struct ev_column_def *ev_model_column(const struct ev_table_def *t, const char *name);
/* Dimension by key in this table, or NULL (topic and channel exist in the outbox only). */
const struct ev_dimension *ev_model_dimension(const struct ev_table_def *t, const char *key);
/* The i-th key of the dimensions of either table (each once), NULL past the last: what the
 * dashboard's --by takes, for its check and for shell completion. */
const char *ev_model_dimension_key(size_t i);
/* Status label; "unknown" outside 0..4. zh = the model document's Chinese label. Never
 * translated: the audit records and the guards' text use it. */
const char *ev_model_status_name(const struct ev_table_def *t, int status, bool zh);
/* The status as a person reads it, in the interface's language: the English name, or its
 * translation (the table's own: the message table's "pending" is 待处理, the outbox's 待发布,
 * as status_zh). "unknown" (translated) outside 0..4. */
const char *ev_model_status_label(const struct ev_table_def *t, int status);
/* The table as a person reads it, in the interface's language: its key ("outbox",
 * "message") or its translation. */
const char *ev_model_table_label(const struct ev_table_def *t);

/* Who makes a transition. */
enum ev_actor {
	EV_ACTOR_APP,      /* the applications that own the tables (the model document's SQL) */
	EV_ACTOR_OPERATOR, /* evtop's guarded operator actions (PRODUCT.md section 2) */
};

#define EV_ACTION_LIST(X)                                                                          \
	X(CLAIM, "claim", EV_ACTOR_APP)                                                            \
	X(SUCCEED, "succeed", EV_ACTOR_APP)                                                        \
	X(FAIL, "fail", EV_ACTOR_APP)                                                              \
	X(APP_CANCEL, "app_cancel", EV_ACTOR_APP)                                                  \
	X(LOCK_TIMEOUT, "lock_timeout", EV_ACTOR_APP)                                              \
	X(RETRY_NOW, "retry_now", EV_ACTOR_OPERATOR)                                               \
	X(RETRY_SCHEDULE, "retry_schedule", EV_ACTOR_OPERATOR)                                     \
	X(CANCEL, "cancel", EV_ACTOR_OPERATOR)                                                     \
	X(RECOVER, "recover", EV_ACTOR_OPERATOR)

enum ev_action {
#define X(id, name, actor) EV_ACTION_##id,
	EV_ACTION_LIST(X)
#undef X
	        EV_ACTION_COUNT,
};

struct ev_transition {
	enum ev_action action;
	unsigned tables; /* bit (1 << ev_table_kind) per table */
	int from;
	int to;
};

/* The whole transition table, ended by an entry with from == -1. */
extern const struct ev_transition ev_transitions[];

const char *ev_action_name(enum ev_action a);
enum ev_actor ev_action_actor(enum ev_action a);
/* Action by name, or -1. */
int ev_action_parse(const char *name);
/* Is from -> to a transition of the model (for this table, by anyone)? Setting a row to the
 * status it has (a rescheduled retry: 3 -> 3) counts only when an action lists it. */
bool ev_transition_allowed(enum ev_table_kind t, int from, int to);
/* Is from -> to made by this action on this table? */
bool ev_action_allows(enum ev_action a, enum ev_table_kind t, int from, int to);

#endif
