/* evtop-sim — the simulated business: orders that are created, paid, deducted from stock,
 * shipped, sometimes refunded or cancelled; each step is one outbox event and one message
 * event with the model document's fields (snowflake-like ids, event_no, topics, JSON
 * payloads with amounts and some Chinese text). Also the seeded random numbers and the
 * history generator that plays an event's life under the applications' protocol. Pure C:
 * no database here (the SQL is built by core/simsql, run by db/conn). */
#ifndef EV_SIM_WORLD_H
#define EV_SIM_WORLD_H

#include "core/simsql.h"

#include <stdbool.h>
#include <stdint.h>

/* A small, seeded generator (splitmix64): the same seed gives the same sequence. */
struct sim_rng {
	uint64_t s;
};

void sim_rng_seed(struct sim_rng *r, uint64_t seed);
uint64_t sim_rng_next(struct sim_rng *r);
/* Uniform in [0, 1). */
double sim_rng_unit(struct sim_rng *r);
/* Uniform in [0, n) (n > 0). */
int sim_rng_below(struct sim_rng *r, int n);

/* Snowflake-like ids: milliseconds since 2020-01-01 (41 bits), a worker id (10 bits), a
 * sequence (12 bits); strictly increasing for one generator. */
struct sim_snowflake {
	unsigned worker;
	long long last_ms;
	unsigned seq;
};

void sim_snowflake_init(struct sim_snowflake *sf, unsigned worker);
/* The next id at wall time ms (Unix ms). */
unsigned long long sim_snowflake_next(struct sim_snowflake *sf, long long ms);

/* The kinds of event, with their fixed fields. */
struct sim_kind {
	const char *event_type;
	const char *biz_type; /* biz_type / aggregate_type */
	const char *source;   /* event_source */
	const char *topic;
	const char *routing_key;
	const char *channel; /* publish_channel */
	bool critical;       /* payment, refund, stock: never cancelled automatically */
};

/* Is this event type one the applications never cancel automatically (PAY_, REFUND_,
 * STOCK_)? */
bool sim_type_critical(const char *event_type);

/* One step of an order's life: an outbox row and a message row. */
struct sim_step {
	const struct sim_kind *kind;
	unsigned long long outbox_id, message_id;
	char aggregate_id[24]; /* the aggregate's numeric id */
	char biz_no[40];       /* ORDER..., PAY..., STK..., RF... */
	char outbox_no[96];
	char message_no[64];
	char trace_id[48];
	char outbox_payload[1024];
	char message_payload[1024];
	char headers[128];
	/* For ORDER_CANCELLED: the outbox id of the order's ORDER_CREATED event, which the
	 * application then cancels if it is not published yet (取消不再需要发布的事件). */
	unsigned long long cancel_outbox_id;
};

#define SIM_ACTIVE_ORDERS 64

struct sim_order {
	unsigned long long id;
	unsigned long long created_outbox_id;
	char no[32];
	int next; /* the next step (an index into the flow) */
	int user_id;
	int sku;
	int qty;
	int pay_channel;
};

struct sim_world {
	struct sim_rng rng;
	struct sim_snowflake sf;
	struct sim_order active[SIM_ACTIVE_ORDERS];
	int nactive;
};

void sim_world_init(struct sim_world *w, uint64_t seed, unsigned worker);
/* The next step of some order (a new one or one in progress) at wall time ms. */
void sim_world_next(struct sim_world *w, long long ms, struct sim_step *out);
/* The step as the two rows to insert (pointing into s). */
void sim_step_rows(const struct sim_step *s, struct ev_sim_row *outbox, struct ev_sim_row *message);

/* --- history ------------------------------------------------------------------------------- */

struct sim_outage {
	long long start_s, end_s; /* offsets from now, negative */
};

struct sim_history_cfg {
	double fail_rate;
	double crash_rate;
	int lock_s;          /* lock_until = claim + lock_s */
	int recover_every_s; /* the lock-timeout and auto-cancel jobs' period */
	int instances;       /* publisher-01.. consumer-01.. */
	const struct sim_outage *outages;
	int noutages;
};

/* Play the life of row r (created create_s seconds before now, create_s <= 0) under the
 * protocol: claims after a short lag, failures with the back-off (unscaled: 1 min, 5 min,
 * 30 min, 2 h), crashes holding the lock, the lock-timeout job, auto-cancel of exhausted
 * non-critical messages, the business cancelling unpublished order events. Fills r's state
 * fields; reason strings are static, locked_by is written into lock_buf (>= 32 bytes). */
void sim_history_play(struct sim_rng *rng, enum ev_table_kind t, const struct sim_history_cfg *cfg,
                      long long create_s, struct ev_sim_row *r, char *lock_buf);

/* Set r to a row an instance claimed at claim_s and then died holding: processing, and on the
 * outbox locked_by = instance (borrowed) and lock_until = claim_s + lock_s. */
void sim_history_crashed(enum ev_table_kind t, long long claim_s, int lock_s, const char *instance,
                         struct ev_sim_row *r);

/* Failure reasons (static strings, some from the model document). */
const char *sim_fail_reason(struct sim_rng *rng, enum ev_table_kind t, bool outage);

#define SIM_REASON_LOCK_TIMEOUT "发布器锁定超时，等待重新发布"
#define SIM_REASON_EXHAUSTED    "超过最大重试次数，自动取消处理"
#define SIM_REASON_CLOSED       "业务已关闭，取消事件发布"

#endif
