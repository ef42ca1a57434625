/* evtop-sim — the simulated business and the history generator (see world.h). */
#include <config.h>

#include "sim/world.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

/* --- random numbers and ids ------------------------------------------------------------------ */

void sim_rng_seed(struct sim_rng *r, uint64_t seed)
{
	r->s = seed ^ 0x9e3779b97f4a7c15ULL;
}

uint64_t sim_rng_next(struct sim_rng *r)
{
	uint64_t z = (r->s += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

double sim_rng_unit(struct sim_rng *r)
{
	return (double)(sim_rng_next(r) >> 11) / 9007199254740992.0;
}

int sim_rng_below(struct sim_rng *r, int n)
{
	return (int)(sim_rng_next(r) % (uint64_t)n);
}

#define SNOWFLAKE_EPOCH_MS 1577836800000LL /* 2020-01-01T00:00:00Z */

void sim_snowflake_init(struct sim_snowflake *sf, unsigned worker)
{
	sf->worker = worker & 0x3ff;
	sf->last_ms = 0;
	sf->seq = 0;
}

unsigned long long sim_snowflake_next(struct sim_snowflake *sf, long long ms)
{
	ms -= SNOWFLAKE_EPOCH_MS;
	if (ms < 0)
		ms = 0;
	if (ms <= sf->last_ms) {
		/* Same millisecond, or the clock went back: borrow from the future. */
		ms = sf->last_ms;
		if (++sf->seq > 0xfff) {
			sf->seq = 0;
			ms++;
		}
	} else {
		sf->seq = 0;
	}
	sf->last_ms = ms;
	return ((unsigned long long)ms << 22) | ((unsigned long long)sf->worker << 12) | sf->seq;
}

/* --- the business ---------------------------------------------------------------------------- */

enum {
	K_ORDER_CREATED,
	K_ORDER_PAID,
	K_PAY_SUCCESS,
	K_STOCK_DEDUCTED,
	K_ORDER_SHIPPED,
	K_REFUND_FINISHED,
	K_ORDER_CANCELLED,
	K_DONE,
};

static const struct sim_kind kinds[] = {
        [K_ORDER_CREATED] = {"ORDER_CREATED", "ORDER", "order-service", "order.event",
                             "order.created", "MQ", false},
        [K_ORDER_PAID] = {"ORDER_PAID", "ORDER", "order-service", "order.event", "order.paid", "MQ",
                          false},
        [K_PAY_SUCCESS] = {"PAY_SUCCESS", "PAYMENT", "payment-service", "pay.event", "pay.success",
                           "MQ", true},
        [K_STOCK_DEDUCTED] = {"STOCK_DEDUCTED", "STOCK", "inventory-service", "stock.event",
                              "stock.deducted", "MQ", true},
        [K_ORDER_SHIPPED] = {"ORDER_SHIPPED", "ORDER", "logistics-service", "order.event",
                             "order.shipped", "EVENT_BUS", false},
        [K_REFUND_FINISHED] = {"REFUND_FINISHED", "REFUND", "refund-service", "refund.event",
                               "refund.finished", "HTTP", true},
        [K_ORDER_CANCELLED] = {"ORDER_CANCELLED", "ORDER", "order-service", "order.event",
                               "order.cancelled", "MQ", false},
};

bool sim_type_critical(const char *t)
{
	return strncmp(t, "PAY_", 4) == 0 || strncmp(t, "REFUND_", 7) == 0 ||
	       strncmp(t, "STOCK_", 6) == 0;
}

static const struct {
	const char *id;
	const char *name;
	double price;
} skus[] = {
        {"SKU100023", "无线蓝牙耳机", 199.00}, {"SKU200871", "不锈钢保温杯", 59.90},
        {"SKU300145", "机械键盘", 349.50},     {"SKU400092", "纯棉T恤", 79.00},
        {"SKU500310", "智能手表", 1299.00},    {"SKU600007", "有机绿茶礼盒", 168.00},
};

static const char *const receivers[] = {"张三", "李四", "王五", "赵六", "陈小明", "Alice Wang"};
static const char *const cities[] = {"上海市浦东新区", "北京市朝阳区", "杭州市西湖区",
                                     "深圳市南山区", "成都市高新区"};
static const char *const pay_channels[] = {"ALIPAY", "WECHAT_PAY", "UNIONPAY"};
static const struct {
	const char *name, *prefix;
} carriers[] = {{"顺丰速运", "SF"}, {"中通快递", "ZTO"}, {"京东物流", "JD"}};
static const char *const refund_reasons[] = {"商品与描述不符", "七天无理由退货", "商品破损"};
static const char *const warehouses[] = {"华东一号仓", "华北二号仓", "华南中心仓"};

#define N(a) ((int)(sizeof(a) / sizeof((a)[0])))

void sim_world_init(struct sim_world *w, uint64_t seed, unsigned worker)
{
	memset(w, 0, sizeof(*w));
	sim_rng_seed(&w->rng, seed);
	sim_snowflake_init(&w->sf, worker);
}

/* The applications' wall-clock time: "2026-05-13 10:00:00" and "20260513". */
static void wall_text(long long ms, char when[24], char day[12])
{
	time_t t = (time_t)(ms / 1000);
	struct tm tm;
	localtime_r(&t, &tm);
	strftime(when, 24, "%Y-%m-%d %H:%M:%S", &tm);
	strftime(day, 12, "%Y%m%d", &tm);
}

/* What the texts of one step are made of: the order, its amount, the step's aggregate and the
 * applications' wall-clock time. */
struct step_ctx {
	struct sim_rng *r;
	struct sim_order *o;
	struct sim_step *s;
	unsigned long long agg;
	double amount;
	char when[24], day[12];
};

/* A new order (the first, or now and then while there is room) or one in progress: its slot,
 * and the kind of its next step. */
static int pick_order(struct sim_world *w, long long ms, const char *day, int *slot)
{
	struct sim_rng *r = &w->rng;
	struct sim_order *o;

	if (w->nactive == 0 || (w->nactive < SIM_ACTIVE_ORDERS && sim_rng_unit(r) < 0.3)) {
		*slot = w->nactive++;
		o = &w->active[*slot];
		memset(o, 0, sizeof(*o));
		o->id = sim_snowflake_next(&w->sf, ms);
		snprintf(o->no, sizeof(o->no), "ORDER%s%06llu", day, o->id % 1000000);
		o->user_id = 10001 + sim_rng_below(r, 5000);
		o->sku = sim_rng_below(r, N(skus));
		o->qty = 1 + sim_rng_below(r, 3);
		o->pay_channel = sim_rng_below(r, N(pay_channels));
		return K_ORDER_CREATED;
	}
	*slot = sim_rng_below(r, w->nactive);
	o = &w->active[*slot];
	int k = o->next;
	if (k == K_ORDER_PAID && sim_rng_unit(r) < 0.12)
		k = K_ORDER_CANCELLED;
	return k;
}

static void order_created(struct step_ctx *c)
{
	struct sim_rng *r = c->r;
	struct sim_order *o = c->o;
	struct sim_step *s = c->s;
	snprintf(s->biz_no, sizeof(s->biz_no), "%s", o->no);
	snprintf(s->outbox_payload, sizeof(s->outbox_payload),
	         "{\"orderId\": %llu, \"orderNo\": \"%s\", \"userId\": %d, "
	         "\"orderAmount\": %.2f, \"orderStatus\": 0, \"createTime\": \"%s\", "
	         "\"items\": [{\"skuId\": \"%s\", \"skuName\": \"%s\", \"quantity\": %d}], "
	         "\"receiver\": {\"name\": \"%s\", \"city\": \"%s\"}}",
	         o->id, o->no, o->user_id, c->amount, c->when, skus[o->sku].id, skus[o->sku].name,
	         o->qty, receivers[sim_rng_below(r, N(receivers))],
	         cities[sim_rng_below(r, N(cities))]);
	snprintf(s->message_payload, sizeof(s->message_payload),
	         "{\"orderId\": \"%s\", \"userId\": %d, \"orderAmount\": %.2f, "
	         "\"createTime\": \"%s\"}",
	         o->no, o->user_id, c->amount, c->when);
	o->created_outbox_id = s->outbox_id;
	o->next = K_ORDER_PAID;
}

static void order_paid(struct step_ctx *c)
{
	struct sim_order *o = c->o;
	struct sim_step *s = c->s;
	snprintf(s->biz_no, sizeof(s->biz_no), "%s", o->no);
	snprintf(s->outbox_payload, sizeof(s->outbox_payload),
	         "{\"orderId\": %llu, \"orderNo\": \"%s\", \"payAmount\": %.2f, "
	         "\"payChannel\": \"%s\", \"orderStatus\": 1, \"paidTime\": \"%s\"}",
	         o->id, o->no, c->amount, pay_channels[o->pay_channel], c->when);
	snprintf(s->message_payload, sizeof(s->message_payload),
	         "{\"orderId\": \"%s\", \"payAmount\": %.2f, \"paidTime\": \"%s\"}", o->no,
	         c->amount, c->when);
	o->next = K_PAY_SUCCESS;
}

static void pay_success(struct step_ctx *c)
{
	struct sim_order *o = c->o;
	struct sim_step *s = c->s;
	snprintf(s->biz_no, sizeof(s->biz_no), "PAY%s%06llu", c->day, c->agg % 1000000);
	snprintf(s->outbox_payload, sizeof(s->outbox_payload),
	         "{\"payId\": %llu, \"payNo\": \"%s\", \"orderNo\": \"%s\", \"amount\": "
	         "%.2f, "
	         "\"currency\": \"CNY\", \"channel\": \"%s\", \"successTime\": \"%s\"}",
	         c->agg, s->biz_no, o->no, c->amount, pay_channels[o->pay_channel], c->when);
	snprintf(s->message_payload, sizeof(s->message_payload),
	         "{\"payNo\": \"%s\", \"orderNo\": \"%s\", \"amount\": %.2f, \"remark\": "
	         "\"支付成功，通知积分与营销系统\"}",
	         s->biz_no, o->no, c->amount);
	o->next = K_STOCK_DEDUCTED;
}

static void stock_deducted(struct step_ctx *c)
{
	struct sim_rng *r = c->r;
	struct sim_order *o = c->o;
	struct sim_step *s = c->s;
	snprintf(s->biz_no, sizeof(s->biz_no), "STK%s%06llu", c->day, c->agg % 1000000);
	snprintf(s->outbox_payload, sizeof(s->outbox_payload),
	         "{\"flowId\": %llu, \"orderNo\": \"%s\", \"skuId\": \"%s\", \"skuName\": "
	         "\"%s\", \"quantity\": %d, \"warehouse\": \"%s\"}",
	         c->agg, o->no, skus[o->sku].id, skus[o->sku].name, o->qty,
	         warehouses[sim_rng_below(r, N(warehouses))]);
	snprintf(s->message_payload, sizeof(s->message_payload),
	         "{\"flowNo\": \"%s\", \"skuId\": \"%s\", \"quantity\": %d}", s->biz_no,
	         skus[o->sku].id, o->qty);
	o->next = K_ORDER_SHIPPED;
}

static void order_shipped(struct step_ctx *c)
{
	struct sim_rng *r = c->r;
	struct sim_order *o = c->o;
	struct sim_step *s = c->s;
	int k = sim_rng_below(r, N(carriers));
	snprintf(s->biz_no, sizeof(s->biz_no), "%s", o->no);
	snprintf(s->outbox_payload, sizeof(s->outbox_payload),
	         "{\"orderId\": %llu, \"orderNo\": \"%s\", \"logisticsCompany\": \"%s\", "
	         "\"trackingNo\": \"%s%010llu\", \"shipTime\": \"%s\"}",
	         o->id, o->no, carriers[k].name, carriers[k].prefix,
	         (unsigned long long)(sim_rng_next(r) % 10000000000ULL), c->when);
	snprintf(s->message_payload, sizeof(s->message_payload),
	         "{\"orderId\": \"%s\", \"logisticsCompany\": \"%s\"}", o->no, carriers[k].name);
	o->next = sim_rng_unit(r) < 0.1 ? K_REFUND_FINISHED : K_DONE;
}

static void refund_finished(struct step_ctx *c)
{
	struct sim_rng *r = c->r;
	struct sim_order *o = c->o;
	struct sim_step *s = c->s;
	double part = c->amount / (1 + sim_rng_below(r, 2));
	snprintf(s->biz_no, sizeof(s->biz_no), "RF%s%06llu", c->day, c->agg % 1000000);
	snprintf(s->outbox_payload, sizeof(s->outbox_payload),
	         "{\"refundId\": %llu, \"refundNo\": \"%s\", \"orderNo\": \"%s\", "
	         "\"refundAmount\": %.2f, \"reason\": \"%s\", \"finishTime\": \"%s\"}",
	         c->agg, s->biz_no, o->no, part,
	         refund_reasons[sim_rng_below(r, N(refund_reasons))], c->when);
	snprintf(s->message_payload, sizeof(s->message_payload),
	         "{\"refundNo\": \"%s\", \"orderNo\": \"%s\", \"refundAmount\": %.2f}", s->biz_no,
	         o->no, part);
	o->next = K_DONE;
}

static void order_cancelled(struct step_ctx *c)
{
	struct sim_order *o = c->o;
	struct sim_step *s = c->s;
	snprintf(s->biz_no, sizeof(s->biz_no), "%s", o->no);
	snprintf(s->outbox_payload, sizeof(s->outbox_payload),
	         "{\"orderId\": %llu, \"orderNo\": \"%s\", \"orderStatus\": 9, "
	         "\"cancelReason\": \"用户主动取消\", \"cancelTime\": \"%s\"}",
	         o->id, o->no, c->when);
	snprintf(s->message_payload, sizeof(s->message_payload),
	         "{\"orderId\": \"%s\", \"cancelReason\": \"用户主动取消\"}", o->no);
	s->cancel_outbox_id = o->created_outbox_id;
	o->next = K_DONE;
}

/* The step's business number and payloads, and the order's next step. */
static void step_texts(struct step_ctx *c, int k)
{
	switch (k) {
	case K_ORDER_CREATED:
		order_created(c);
		break;
	case K_ORDER_PAID:
		order_paid(c);
		break;
	case K_PAY_SUCCESS:
		pay_success(c);
		break;
	case K_STOCK_DEDUCTED:
		stock_deducted(c);
		break;
	case K_ORDER_SHIPPED:
		order_shipped(c);
		break;
	case K_REFUND_FINISHED:
		refund_finished(c);
		break;
	case K_ORDER_CANCELLED:
	default:
		order_cancelled(c);
		break;
	}
}

void sim_world_next(struct sim_world *w, long long ms, struct sim_step *s)
{
	struct step_ctx c = {.r = &w->rng, .s = s};
	int k, slot;

	memset(s, 0, sizeof(*s));
	wall_text(ms, c.when, c.day);
	k = pick_order(w, ms, c.day, &slot);
	c.o = &w->active[slot];

	s->kind = &kinds[k];
	s->outbox_id = sim_snowflake_next(&w->sf, ms);
	s->message_id = sim_snowflake_next(&w->sf, ms);
	c.amount = skus[c.o->sku].price * c.o->qty;
	c.agg = c.o->id;
	switch (k) {
	case K_PAY_SUCCESS:
	case K_STOCK_DEDUCTED:
	case K_REFUND_FINISHED:
		/* Their own aggregate: the payment, the stock flow, the refund. */
		c.agg = sim_snowflake_next(&w->sf, ms);
		break;
	default:
		break;
	}
	snprintf(s->aggregate_id, sizeof(s->aggregate_id), "%llu", c.agg);
	snprintf(s->trace_id, sizeof(s->trace_id), "trace-%016llx",
	         (unsigned long long)sim_rng_next(c.r));
	snprintf(s->headers, sizeof(s->headers), "{\"tenantId\": \"default\", \"source\": \"%s\"}",
	         s->kind->source);
	step_texts(&c, k);
	snprintf(s->outbox_no, sizeof(s->outbox_no), "OUTBOX_%s_%s", s->kind->event_type,
	         s->aggregate_id);
	snprintf(s->message_no, sizeof(s->message_no), "EVT%s%llu", c.day, s->message_id);
	if (c.o->next == K_DONE)
		w->active[slot] = w->active[--w->nactive];
}

void sim_step_rows(const struct sim_step *s, struct ev_sim_row *ob, struct ev_sim_row *msg)
{
	memset(ob, 0, sizeof(*ob));
	memset(msg, 0, sizeof(*msg));
	ob->id = s->outbox_id;
	ob->event_no = s->outbox_no;
	ob->event_type = s->kind->event_type;
	ob->biz_type = s->kind->biz_type;
	ob->biz_id = s->aggregate_id;
	ob->source = s->kind->source;
	ob->channel = s->kind->channel;
	ob->topic = s->kind->topic;
	ob->routing_key = s->kind->routing_key;
	ob->payload = s->outbox_payload;
	ob->headers = s->headers;
	ob->trace_id = s->trace_id;
	ob->max_retry_count = ev_model_table(EV_TABLE_OUTBOX)->default_max_retry;

	msg->id = s->message_id;
	msg->event_no = s->message_no;
	msg->event_type = s->kind->event_type;
	msg->biz_type = s->kind->biz_type;
	msg->biz_id = s->biz_no;
	msg->source = s->kind->source;
	msg->payload = s->message_payload;
	msg->trace_id = s->trace_id;
	msg->max_retry_count = ev_model_table(EV_TABLE_MESSAGE)->default_max_retry;
}

/* --- failure reasons ------------------------------------------------------------------------- */

const char *sim_fail_reason(struct sim_rng *rng, enum ev_table_kind t, bool outage)
{
	static const char *const outbox[] = {
	        "发送MQ消息超时",
	        "MQ Broker 繁忙（SYSTEM_BUSY），请稍后重试",
	        "网络抖动：connection reset by peer",
	};
	static const char *const message[] = {
	        "调用下游库存服务超时",
	        "下游CRM服务返回 HTTP 500",
	        "风控服务限流，请稍后重试",
	};
	if (outage)
		return t == EV_TABLE_OUTBOX ? "发送MQ消息超时：MQ集群不可用"
		                            : "调用下游服务超时：下游服务不可用";
	return t == EV_TABLE_OUTBOX ? outbox[sim_rng_below(rng, N(outbox))]
	                            : message[sim_rng_below(rng, N(message))];
}

/* --- history --------------------------------------------------------------------------------- */

static bool in_outage(const struct sim_history_cfg *cfg, long long t)
{
	for (int i = 0; i < cfg->noutages; i++)
		if (t >= cfg->outages[i].start_s && t < cfg->outages[i].end_s)
			return true;
	return false;
}

void sim_history_play(struct sim_rng *rng, enum ev_table_kind t, const struct sim_history_cfg *cfg,
                      long long create_s, struct ev_sim_row *r, char *lock_buf)
{
	bool outbox = t == EV_TABLE_OUTBOX;
	long long at = create_s + 1 + sim_rng_below(rng, 3); /* the scan's lag */
	int instance = 1 + sim_rng_below(rng, cfg->instances > 0 ? cfg->instances : 1);

	r->status = EV_ST_PENDING;
	r->retry_count = 0;
	r->version = 0;
	r->locked_by = NULL;
	r->fail_reason = NULL;
	r->create_s = r->update_s = create_s;
	r->has_next_retry = r->has_lock_until = r->has_attempt = r->has_done = false;

	while (at <= 0) {
		double x = sim_rng_unit(rng);
		r->version++;
		r->has_attempt = true;
		r->attempt_s = r->update_s = at;
		/* Consumers crash less often than publishers here: nothing in the model
		 * recovers the message table, so its crashes would pile up over days. */
		if (x < (outbox ? cfg->crash_rate : cfg->crash_rate / 5)) {
			/* The instance died holding the event. */
			r->status = EV_ST_PROCESSING;
			if (!outbox)
				return;
			long long until = at + cfg->lock_s;
			long long job = until + sim_rng_below(rng, cfg->recover_every_s + 1);
			if (job > 0) {
				snprintf(lock_buf, 32, "publisher-%02d", instance);
				r->locked_by = lock_buf;
				r->has_lock_until = true;
				r->lock_until_s = until;
				return;
			}
			/* 恢复锁定超时事件. */
			r->status = EV_ST_FAILED;
			r->retry_count++;
			r->has_next_retry = true;
			r->next_retry_s = job + 60;
			r->fail_reason = SIM_REASON_LOCK_TIMEOUT;
			r->update_s = job;
		} else if (x < cfg->crash_rate + cfg->fail_rate || in_outage(cfg, at)) {
			r->status = EV_ST_FAILED;
			r->has_next_retry = true;
			r->next_retry_s = at + ev_simsql_backoff_s(r->retry_count, 1);
			r->retry_count++;
			r->fail_reason = sim_fail_reason(rng, t, in_outage(cfg, at));
		} else {
			r->status = EV_ST_SUCCESS;
			r->has_done = true;
			r->done_s = r->update_s = at;
			r->fail_reason = NULL;
			return;
		}
		if (r->retry_count >= r->max_retry_count)
			break;
		if (outbox && !sim_type_critical(r->event_type) && sim_rng_unit(rng) < 0.05) {
			/* The order was closed while its event waited for a retry:
			 * 取消不再需要发布的事件. */
			long long when = r->update_s + sim_rng_below(rng, 60);
			if (when <= 0) {
				r->status = EV_ST_CANCELLED;
				r->fail_reason = SIM_REASON_CLOSED;
				r->update_s = when;
				return;
			}
		}
		at = r->next_retry_s + sim_rng_below(rng, 3);
	}
	if (r->status != EV_ST_FAILED)
		return;
	if (!outbox && r->retry_count >= r->max_retry_count && !sim_type_critical(r->event_type)) {
		/* 超过最大重试次数后停止重试: the compensation job cancels it at its next run. */
		long long job = r->update_s + sim_rng_below(rng, cfg->recover_every_s + 1);
		if (job <= 0) {
			r->status = EV_ST_CANCELLED;
			r->fail_reason = SIM_REASON_EXHAUSTED;
			r->update_s = job;
		}
	} else if (outbox && !sim_type_critical(r->event_type) && sim_rng_unit(rng) < 0.3) {
		/* The order was closed while its event waited: 取消不再需要发布的事件. */
		long long when = r->update_s + sim_rng_below(rng, 600);
		if (when <= 0) {
			r->status = EV_ST_CANCELLED;
			r->fail_reason = SIM_REASON_CLOSED;
			r->update_s = when;
		}
	}
}

void sim_history_crashed(enum ev_table_kind t, long long claim_s, int lock_s, const char *instance,
                         struct ev_sim_row *r)
{
	r->status = EV_ST_PROCESSING;
	r->retry_count = 0;
	r->version = 1;
	r->fail_reason = NULL;
	r->has_next_retry = r->has_done = false;
	r->has_attempt = true;
	r->attempt_s = r->update_s = claim_s;
	r->locked_by = NULL;
	r->has_lock_until = false;
	if (t == EV_TABLE_OUTBOX) {
		r->locked_by = instance;
		r->has_lock_until = true;
		r->lock_until_s = claim_s + lock_s;
	}
}
