/* evtop bench — a data generator for the two event tables: N rows of one table as a TSV that
 * LOAD DATA reads (NULL as \N, no tabs, newlines or backslashes inside values), in primary-key
 * order (ids grow with create_time), with the skew of an event table in production:
 *
 *   status     ~97% success, ~0.5% pending, ~0.2% processing (half of them stuck), ~1.5%
 *              failed spread over retry counts (due / waiting / no retry time / exhausted),
 *              ~0.8% cancelled; or a fixed backlog (--backlog N: pending + processing +
 *              failed = N in the same proportions; or each count set alone), so that table
 *              size and backlog vary apart;
 *   event_type 40 types, Zipf-like (rank k has weight 1/k); 12 topics; 6 sources; 3 channels;
 *   time       create_time over the 30 days before --now; the backlog is recent (pending in
 *              the last hours, failed in the last days), as it is on a live system;
 *   payload    200-800 bytes of JSON; 0.1% of the rows soft-deleted (deleted = 1).
 *
 * Built by bench/load with the system compiler (not part of the autotools build):
 *   cc -O2 -o gen bench/gen.c
 *   gen --table outbox|message --rows N [--backlog N | --pending N --processing N --failed N
 *       --cancelled N] [--stuck-fraction F] [--now 'YYYY-MM-DD hh:mm:ss'] [--seed S]
 *       [--id-base B]
 * Times are the local wall clock, as the applications write them (the server's SYSTEM zone).
 * "Not stuck" processing rows hold their lock 6 hours past --now (outbox) or were handled in
 * the last minute (message: they turn stuck when the 10-minute threshold passes), so that a
 * benchmark run an hour later still sees about half of them stuck in the outbox. */
#define _GNU_SOURCE
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define NTYPES 40
#define DAYS   30

/* event_type, biz/aggregate type, topic index, source index, channel */
static const struct type {
	const char *name, *biz;
	int topic, source;
	const char *channel;
} types[NTYPES] = {
        {"ORDER_CREATED", "ORDER", 0, 0, "MQ"},
        {"ORDER_PAID", "ORDER", 0, 0, "MQ"},
        {"PAY_SUCCESS", "PAYMENT", 1, 1, "MQ"},
        {"STOCK_DEDUCTED", "STOCK", 2, 2, "MQ"},
        {"ORDER_SHIPPED", "ORDER", 4, 3, "EVENT_BUS"},
        {"USER_LOGIN", "USER", 5, 4, "MQ"},
        {"COUPON_USED", "COUPON", 6, 4, "MQ"},
        {"POINTS_EARNED", "POINTS", 7, 4, "MQ"},
        {"ORDER_CANCELLED", "ORDER", 0, 0, "MQ"},
        {"NOTIFY_SMS_SENT", "NOTIFY", 9, 5, "HTTP"},
        {"REFUND_FINISHED", "REFUND", 3, 1, "HTTP"},
        {"INVOICE_ISSUED", "INVOICE", 8, 5, "MQ"},
        {"ORDER_DELIVERED", "ORDER", 4, 3, "EVENT_BUS"},
        {"PAY_CREATED", "PAYMENT", 1, 1, "MQ"},
        {"STOCK_RELEASED", "STOCK", 2, 2, "MQ"},
        {"USER_REGISTERED", "USER", 5, 4, "MQ"},
        {"SETTLE_DAILY", "SETTLE", 10, 1, "MQ"},
        {"RISK_CHECKED", "RISK", 11, 1, "MQ"},
        {"NOTIFY_MAIL_SENT", "NOTIFY", 9, 5, "MQ"},
        {"COUPON_ISSUED", "COUPON", 6, 4, "MQ"},
        {"POINTS_USED", "POINTS", 7, 4, "MQ"},
        {"LOGISTICS_UPDATED", "LOGISTICS", 4, 3, "EVENT_BUS"},
        {"ORDER_CLOSED", "ORDER", 0, 0, "MQ"},
        {"REFUND_APPLIED", "REFUND", 3, 1, "MQ"},
        {"INVENTORY_SYNCED", "INVENTORY", 2, 2, "MQ"},
        {"USER_UPDATED", "USER", 5, 4, "MQ"},
        {"PAY_CLOSED", "PAYMENT", 1, 1, "MQ"},
        {"INVOICE_CANCELLED", "INVOICE", 8, 5, "HTTP"},
        {"SETTLE_MONTHLY", "SETTLE", 10, 1, "MQ"},
        {"RISK_ALERTED", "RISK", 11, 1, "HTTP"},
        {"COUPON_EXPIRED", "COUPON", 6, 4, "MQ"},
        {"POINTS_EXPIRED", "POINTS", 7, 4, "MQ"},
        {"NOTIFY_PUSH_SENT", "NOTIFY", 9, 5, "HTTP"},
        {"STOCK_CHECKED", "STOCK", 2, 2, "MQ"},
        {"ORDER_REVIEWED", "ORDER", 0, 0, "EVENT_BUS"},
        {"LOGISTICS_SIGNED", "LOGISTICS", 4, 3, "EVENT_BUS"},
        {"REFUND_REJECTED", "REFUND", 3, 1, "MQ"},
        {"USER_DEACTIVATED", "USER", 5, 4, "MQ"},
        {"INVENTORY_ADJUSTED", "INVENTORY", 2, 2, "MQ"},
        {"SETTLE_REVERSED", "SETTLE", 10, 1, "HTTP"},
};

static const char *const topics[12] = {
        "order.event",     "pay.event",    "stock.event",  "refund.event",
        "logistics.event", "user.event",   "coupon.event", "points.event",
        "invoice.event",   "notify.event", "settle.event", "risk.event",
};

static const char *const sources[6] = {
        "order-service",     "payment-service", "inventory-service",
        "logistics-service", "user-service",    "notify-service",
};

static const char *const reasons[] = {
        "发送MQ消息超时",
        "MQ Broker 繁忙（SYSTEM_BUSY），请稍后重试",
        "网络抖动：connection reset by peer",
        "调用下游库存服务超时",
        "下游CRM服务返回 HTTP 500",
        "风控服务限流，请稍后重试",
        "Deadlock found when trying to get lock; try restarting transaction",
        "downstream timeout after 3000 ms",
        "HTTP 503 Service Unavailable from notify gateway",
        "消息体校验失败：缺少字段 orderNo",
};
#define NREASONS (sizeof(reasons) / sizeof(reasons[0]))

static const char *const words[] = {
        "无线蓝牙耳机", "不锈钢保温杯", "机械键盘", "纯棉T恤", "智能手表", "有机绿茶礼盒",
        "alpha",        "bravo",        "charlie",  "delta",   "echo",     "foxtrot",
};
#define NWORDS (sizeof(words) / sizeof(words[0]))

/* xoshiro256** — fast, seeded, the same stream on every machine. */
static uint64_t rs[4];
static uint64_t rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}
static uint64_t rnd(void)
{
	uint64_t r = rotl(rs[1] * 5, 7) * 9, t = rs[1] << 17;
	rs[2] ^= rs[0];
	rs[3] ^= rs[1];
	rs[1] ^= rs[2];
	rs[0] ^= rs[3];
	rs[2] ^= t;
	rs[3] = rotl(rs[3], 45);
	return r;
}
static void seed(uint64_t s)
{
	for (int i = 0; i < 4; i++) {
		s += 0x9e3779b97f4a7c15ULL;
		uint64_t z = s;
		z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
		z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
		rs[i] = z ^ (z >> 31);
	}
}
static double unif(void)
{
	return (double)(rnd() >> 11) / 9007199254740992.0;
}
static long long range(long long lo, long long hi) /* [lo, hi] */
{
	return lo + (long long)(rnd() % (uint64_t)(hi - lo + 1));
}

enum { ST_PENDING, ST_PROCESSING, ST_SUCCESS, ST_FAILED, ST_CANCELLED };

static double zipf_cdf[NTYPES];

static int pick_type(void)
{
	double u = unif();
	int lo = 0, hi = NTYPES - 1;
	while (lo < hi) {
		int mid = (lo + hi) / 2;
		if (zipf_cdf[mid] < u)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static void fmt_time(char *buf, time_t t)
{
	struct tm tm;
	localtime_r(&t, &tm);
	strftime(buf, 20, "%Y-%m-%d %H:%M:%S", &tm);
}

/* Choose k rows among the last `region` rows (of n) that have no status yet. */
static void place(unsigned char *st, long long n, long long region, long long k, int status)
{
	if (region > n)
		region = n;
	for (long long i = 0; i < k; i++) {
		long long idx;
		do
			idx = n - 1 - range(0, region - 1);
		while (st[idx] != ST_SUCCESS);
		st[idx] = (unsigned char)status;
	}
}

/* A JSON payload of 200-800 bytes (no backslash, tab or newline). */
static void payload(char *buf, size_t size, const struct type *ty, unsigned long long id,
                    const char *when)
{
	size_t want = (size_t)range(200, 800), n;
	n = (size_t)snprintf(
	        buf, size,
	        "{\"eventType\": \"%s\", \"bizType\": \"%s\", \"id\": %llu, \"userId\": %lld, "
	        "\"amount\": %lld.%02lld, \"createTime\": \"%s\", \"items\": [",
	        ty->name, ty->biz, id, range(10000, 9999999), range(1, 99999), range(0, 99), when);
	bool first = true;
	while (n + 90 < want && n + 90 < size) {
		n += (size_t)snprintf(buf + n, size - n,
		                      "%s{\"sku\": \"SKU%06lld\", \"name\": \"%s\", \"qty\": %lld}",
		                      first ? "" : ", ", range(1, 999999), words[rnd() % NWORDS],
		                      range(1, 9));
		first = false;
	}
	snprintf(buf + n, size - n, "], \"pad\": \"%.*s\"}",
	         (int)(want > n + 13 ? want - n - 13 : 0),
	         "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
	         "xxxxx");
}

static void usage(void)
{
	fputs("usage: gen --table outbox|message --rows N [--backlog N | --pending N "
	      "--processing N --failed N --cancelled N] [--stuck-fraction F] [--now 'YYYY-MM-DD "
	      "hh:mm:ss'] [--seed S] [--id-base B]\n",
	      stderr);
	exit(2);
}

int main(int argc, char **argv)
{
	const char *table = NULL, *now_s = NULL;
	long long n = -1, backlog = -1, cnt[5] = {-1, -1, -1, -1, -1};
	unsigned long long id_base = 1000000000000ULL, seed_v = 12;
	double stuck_fraction = 0.5;

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (v == NULL)
			usage();
		i++;
		if (strcmp(a, "--table") == 0)
			table = v;
		else if (strcmp(a, "--rows") == 0)
			n = atoll(v);
		else if (strcmp(a, "--backlog") == 0)
			backlog = atoll(v);
		else if (strcmp(a, "--pending") == 0)
			cnt[ST_PENDING] = atoll(v);
		else if (strcmp(a, "--processing") == 0)
			cnt[ST_PROCESSING] = atoll(v);
		else if (strcmp(a, "--failed") == 0)
			cnt[ST_FAILED] = atoll(v);
		else if (strcmp(a, "--cancelled") == 0)
			cnt[ST_CANCELLED] = atoll(v);
		else if (strcmp(a, "--stuck-fraction") == 0)
			stuck_fraction = atof(v);
		else if (strcmp(a, "--now") == 0)
			now_s = v;
		else if (strcmp(a, "--seed") == 0)
			seed_v = strtoull(v, NULL, 10);
		else if (strcmp(a, "--id-base") == 0)
			id_base = strtoull(v, NULL, 10);
		else
			usage();
	}
	if (table == NULL || n <= 0 ||
	    (strcmp(table, "outbox") != 0 && strcmp(table, "message") != 0))
		usage();
	bool outbox = strcmp(table, "outbox") == 0;

	time_t now = time(NULL);
	if (now_s != NULL) {
		struct tm tm;
		memset(&tm, 0, sizeof(tm));
		if (strptime(now_s, "%Y-%m-%d %H:%M:%S", &tm) == NULL)
			usage();
		tm.tm_isdst = -1;
		now = mktime(&tm);
	}
	seed(seed_v * 2 + (outbox ? 1 : 0));

	double sum = 0;
	for (int k = 0; k < NTYPES; k++)
		sum += 1.0 / (k + 1);
	double acc = 0;
	for (int k = 0; k < NTYPES; k++) {
		acc += 1.0 / (k + 1) / sum;
		zipf_cdf[k] = acc;
	}
	zipf_cdf[NTYPES - 1] = 1.0;

	/* The counts: fixed, from a backlog size, or the default proportions. */
	static const double share[5] = {0.005, 0.002, 0, 0.015, 0.008};
	for (int s = 0; s < 5; s++) {
		if (s == ST_SUCCESS || cnt[s] >= 0)
			continue;
		if (backlog >= 0 && s != ST_CANCELLED)
			cnt[s] = llround((double)backlog * share[s] / 0.022);
		else
			cnt[s] = llround((double)n * share[s]);
	}
	if (cnt[0] + cnt[1] + cnt[3] + cnt[4] > n) {
		fputs("gen: the counts exceed --rows\n", stderr);
		return 2;
	}

	unsigned char *st = malloc((size_t)n);
	if (st == NULL) {
		perror("gen");
		return 1;
	}
	memset(st, ST_SUCCESS, (size_t)n);
	/* Rows per hour, to place the backlog in recent time (at least 4x its count, so the
	 * placement stays cheap and the rows spread). */
	long long per_hour = n / (DAYS * 24) + 1;
	long long k;
	k = cnt[ST_PROCESSING];
	place(st, n, per_hour > 4 * k ? per_hour : 4 * k, k, ST_PROCESSING);
	k = cnt[ST_PENDING];
	place(st, n, 3 * per_hour > 4 * k ? 3 * per_hour : 4 * k, k, ST_PENDING);
	k = cnt[ST_FAILED];
	place(st, n, 72 * per_hour > 4 * k ? 72 * per_hour : 4 * k, k, ST_FAILED);
	k = cnt[ST_CANCELLED];
	place(st, n, n, k, ST_CANCELLED);

	const int max_retry = outbox ? 5 : 3;
	const time_t start = now - DAYS * 86400;
	static char out[1 << 16];
	setvbuf(stdout, NULL, _IOFBF, 1 << 20);
	char ct[20], ut[20], nrt[20], lht[20], okt[20], lu[20], pl[1024], trace[40], eno[64];

	for (long long i = 0; i < n; i++) {
		unsigned long long id = id_base + (unsigned long long)i;
		const struct type *ty = &types[pick_type()];
		time_t c = start + (time_t)((double)i * (DAYS * 86400.0) / (double)n);
		if (c >= now)
			c = now - 1;
		int s = st[i];
		int retry = 0, version = 0, deleted = unif() < 0.001;
		time_t upd = c, handled = 0, okat = 0, next = 0;
		bool have_next = false, stuck = false;
		const char *reason = NULL, *locker = NULL;
		char lockbuf[32];
		time_t lock_until = 0;

		switch (s) {
		case ST_SUCCESS:
			retry = unif() < 0.03 ? (int)range(1, 2) : 0;
			version = 2 + 2 * retry;
			handled = okat = c + range(0, 5) + retry * 60;
			upd = okat;
			break;
		case ST_PENDING:
			/* One in five is a retry made pending again (version > 0). */
			if (unif() < 0.2) {
				retry = (int)range(1, max_retry - 1);
				version = 2 * retry;
				upd = c + (now - c) / 2;
				handled = upd - 1;
			}
			break;
		case ST_PROCESSING:
			version = 1 + 2 * (retry = unif() < 0.1 ? 1 : 0);
			stuck = unif() < stuck_fraction;
			if (outbox) {
				snprintf(lockbuf, sizeof(lockbuf), "publisher-%02lld",
				         range(1, 12));
				locker = lockbuf;
				/* Stuck: the publisher died holding the lock; else it holds it. */
				lock_until = stuck ? now - range(60, 7200) : now + 6 * 3600;
				handled = stuck ? lock_until - 300 : now - range(0, 60);
			} else {
				handled = stuck ? now - range(660, 7200) : now - range(0, 60);
			}
			if (handled < c)
				handled = c;
			upd = handled;
			break;
		case ST_FAILED: {
			/* Retry counts spread 1..max; 20% exhausted. */
			bool exhausted = unif() < 0.2;
			retry = exhausted ? max_retry : (int)range(1, max_retry - 1);
			version = 2 * retry;
			handled = c + retry * 60;
			if (handled > now)
				handled = now;
			upd = handled;
			reason = reasons[rnd() % NREASONS];
			double u = unif();
			if (exhausted) {
				have_next = u < 0.5;
				next = handled;
			} else if (u < 0.3) {
				have_next = true; /* due */
				next = now - range(1, 3600);
			} else if (u < 0.9) {
				have_next = true; /* waiting */
				next = now + range(600, 7200);
			}
			break;
		}
		case ST_CANCELLED:
			version = unif() < 0.5 ? 1 : 3;
			upd = c + range(60, 86400);
			if (upd > now)
				upd = now;
			reason = "运营人工取消：重复事件";
			break;
		}
		fmt_time(ct, c);
		fmt_time(ut, upd);
		fmt_time(nrt, next);
		fmt_time(lht, handled);
		fmt_time(okt, okat);
		fmt_time(lu, lock_until);
		payload(pl, sizeof(pl), ty, id, ct);
		snprintf(trace, sizeof(trace), "%016llx%016llx", (unsigned long long)rnd(),
		         (unsigned long long)rnd());
		struct tm tm;
		localtime_r(&c, &tm);
		char day[12];
		strftime(day, sizeof(day), "%Y%m%d", &tm);
		snprintf(eno, sizeof(eno), "%s%s%llu", outbox ? "OB" : "EV", day, id);
		const char *N = "\\N";
		char idbuf[24];
		snprintf(idbuf, sizeof(idbuf), "%llu",
		         100000000ULL + (unsigned long long)range(0, 899999999));
		if (outbox) {
			const char *channel = ty->channel;
			bool no_topic = strcmp(channel, "HTTP") == 0;
			int len = snprintf(
			        out, sizeof(out),
			        "%llu\t%s\t%s\t%s\t%s\t1\t%s\t%s\t%s\t%s\t%s\t{\"tenantId\": "
			        "\"default\", \"source\": "
			        "\"%s\"}\t%d\t%d\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s"
			        "\t%s\t%d\t%d\t%s\t%s\n",
			        id, eno, ty->biz, idbuf, ty->name, sources[ty->source], channel,
			        no_topic ? N : topics[ty->topic], no_topic ? N : ty->name, pl,
			        sources[ty->source], s, retry, max_retry, have_next ? nrt : N,
			        locker ? locker : N, locker ? lu : N, handled ? lht : N,
			        okat ? okt : N, reason ? reason : N, trace, N, version, deleted, ct,
			        ut);
			fwrite(out, 1, (size_t)len, stdout);
		} else {
			int len = snprintf(out, sizeof(out),
			                   "%llu\t%s\t%s\t%s\t%s\t%s\t%s\t%d\t%d\t%d\t%s\t%s\t%s\t%"
			                   "s\t%s\t%s\t%d\t%d"
			                   "\t%s\t%s\n",
			                   id, eno, ty->name, ty->biz, idbuf, sources[ty->source],
			                   pl, s, retry, max_retry, have_next ? nrt : N,
			                   handled ? lht : N, okat ? okt : N, reason ? reason : N,
			                   trace, N, version, deleted, ct, ut);
			fwrite(out, 1, (size_t)len, stdout);
		}
	}
	free(st);
	if (fflush(stdout) != 0) {
		perror("gen: write");
		return 1;
	}
	fprintf(stderr,
	        "gen: %s %lld rows: pending %lld processing %lld failed %lld cancelled %lld\n",
	        table, n, cnt[ST_PENDING], cnt[ST_PROCESSING], cnt[ST_FAILED], cnt[ST_CANCELLED]);
	return 0;
}
