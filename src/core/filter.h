/* evtop — list filters: exact matches on indexed or short columns, a substring of fail_reason,
 * a create_time range and terms inside the payload or headers, parsed from `key=value` text
 * (core/filter.c). The list builders in core/query.c turn them into SQL. */
#ifndef EV_CORE_FILTER_H
#define EV_CORE_FILTER_H

#include "core/model.h"
#include "core/util.h"

#include <stdbool.h>

/* A term inside event_payload or event_headers (the outbox's): PATH=VALUE compares the value
 * at a JSON path, as text (199.00 matches "199.00", not "199"); ~TEXT a substring of the
 * stored text. The server evaluates it, only inside the list's index-bounded rows. */
#define EV_FILTER_JSON_MAX 4
struct ev_jterm {
	bool headers;   /* event_headers (outbox only), else event_payload */
	bool substring; /* ~TEXT, else PATH=VALUE */
	char *key;      /* as written: "payload.items[0].skuId", "payload" */
	char *path;     /* the server's JSON path, $."items"[0]."skuId" (NULL for ~TEXT) */
	char *value;
};

/* Filters (PRODUCT.md section 1.2). Exact matches on indexed or short columns, a substring of
 * fail_reason, a create_time range, and terms inside the payload. All strings malloc'd; NULL =
 * not set. */
struct ev_filter {
	char *event_type;
	char *topic;    /* outbox only */
	char *biz_type; /* biz_type / aggregate_type */
	char *biz_id;   /* biz_id / aggregate_id */
	char *event_no;
	char *trace_id;
	char *source;      /* event_source */
	char *locked_by;   /* outbox only */
	char *channel;     /* publish_channel, outbox only */
	char *fail_reason; /* substring */
	char *since;       /* create_time >= since ('YYYY-MM-DD[ hh:mm[:ss]]') */
	char *until;       /* create_time < until */
	int njson;
	struct ev_jterm json[EV_FILTER_JSON_MAX];
};

/* Accept 'YYYY-MM-DD', 'YYYY-MM-DD hh:mm', 'YYYY-MM-DD hh:mm:ss' (also with 'T'); normalise to
 * 'YYYY-MM-DD hh:mm:ss' in out[21] (filters' since/until, cursors' times). */
bool ev_datetime_normalize(const char *s, char out[21]);
/* Set one filter by key: event_type, topic, biz_type (aggregate_type), biz_id (aggregate_id),
 * event_no, trace_id, source (event_source), locked_by, channel (publish_channel),
 * fail_reason (reason), since, until. Validates the value (length, datetime form). */
int ev_filter_set(struct ev_filter *f, const char *key, const char *value, struct ev_error *err);
/* Add a payload term: key "payload.PATH" or "headers.PATH" with op '=', or "payload" /
 * "headers" with op '~'. PATH: keys separated by '.', array positions as [N], a key with
 * '.', '[', '"', '=', '~', a space or any other character quoted: headers."x-tenant". */
int ev_filter_add_json(struct ev_filter *f, const char *key, char op, const char *value,
                       struct ev_error *err);
/* Parse a filter expression: space-separated key=value terms (key~value for fail_reason,
 * payload and headers), values optionally in double quotes, e.g.
 * `event_type=PAY_SUCCESS reason~"timed out" payload.orderId=O1`. */
int ev_filter_parse(struct ev_filter *f, const char *expr, struct ev_error *err);
/* Does the filter use a column this table lacks? Returns the offending key or NULL. */
const char *ev_filter_unsupported(const struct ev_filter *f, enum ev_table_kind t);
/* No filter set at all. */
bool ev_filter_empty(const struct ev_filter *f);
/* A deep copy of src into dst. */
void ev_filter_copy(struct ev_filter *dst, const struct ev_filter *src);
/* The payload terms as the user writes them, "payload.orderId=O1 payload~\"a b\"" (malloc'd),
 * or NULL without any. */
char *ev_filter_json_text(const struct ev_filter *f);
void ev_filter_free(struct ev_filter *f);

#endif
