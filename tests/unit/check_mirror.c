/* core/mirror: the backlog mirror fed by synthetic reads. A table is simulated in memory (every
 * column the figures need); each refresh feeds the mirror what the server's index-only range
 * reads and key reads would return, and the mirror's figures are compared with the same
 * figures counted from the simulated table directly, as the model document's SQL counts them.
 * Also: times as the server compares them, rows entering, changing and leaving, what no index
 * carries (seen through the rolling share only), the cap, the memory per row. */
#include <config.h>

#include "core/mirror.h"
#include "core/util.h"

#include <check.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define NOW "2026-06-01 12:00:00"

/* --- a simulated outbox -------------------------------------------------------------------- */

struct row {
	unsigned long long id;
	int status, deleted, version, rc, mrc;
	char nrt[24], ct[24], ut[24], lock[24];
	const char *type;  /* event_type */
	const char *topic; /* NULL allowed */
};

struct table {
	struct row *r;
	size_t n, cap;
};

static const char *const types[] = {"ORDER_CREATED", "ORDER_PAID", "订单取消", "REFUND"};
static const char *const topics[] = {"order", "pay", NULL};

static unsigned rnd_state = 12345;
static unsigned rnd(unsigned n)
{
	rnd_state = rnd_state * 1103515245u + 12345u;
	return (rnd_state >> 8) % n;
}

static void rand_time(char *buf, int around_now)
{
	/* Near NOW, on both sides of it and on it (where <= and < part), or up to a day before. */
	static const int near[] = {-3600, -601, -600, -599, -61, -1, 0, 0, 1, 59, 3600};
	int s = around_now ? near[rnd(sizeof(near) / sizeof(near[0]))] : -(int)rnd(86400);
	time_t when = 1780315200 + s; /* 2026-06-01 12:00:00 UTC */
	struct tm tm;
	gmtime_r(&when, &tm);
	strftime(buf, 24, "%Y-%m-%d %H:%M:%S", &tm);
}

static void rand_row(struct row *x, unsigned long long id)
{
	memset(x, 0, sizeof(*x));
	x->id = id;
	static const int st[] = {0, 1, 3, 3, 2, 4};
	x->status = st[rnd(6)];
	x->deleted = rnd(20) == 0;
	x->version = (int)rnd(3);
	x->rc = (int)rnd(6);
	x->mrc = 5;
	if (rnd(4))
		rand_time(x->nrt, 1);
	rand_time(x->ct, 0);
	rand_time(x->ut, 0);
	if (rnd(5))
		rand_time(x->lock, 1);
	x->type = types[rnd(4)];
	x->topic = topics[rnd(3)];
}

static struct row *add(struct table *t, unsigned long long id)
{
	if (t->n == t->cap) {
		t->cap = t->cap ? t->cap * 2 : 256;
		t->r = realloc(t->r, t->cap * sizeof(*t->r));
	}
	struct row *x = &t->r[t->n++];
	rand_row(x, id);
	return x;
}

/* n random rows, ids 1..n; returns the next id. */
static unsigned long long fill(struct table *t, int n)
{
	unsigned long long next = 1;
	for (int i = 0; i < n; i++)
		add(t, next++);
	return next;
}

static const char *nul(const char *s)
{
	return s && s[0] ? s : NULL;
}

static struct row *by_id(struct table *t, unsigned long long id)
{
	for (size_t i = 0; i < t->n; i++)
		if (t->r[i].id == id)
			return &t->r[i];
	return NULL;
}

/* The table simulated: the outbox (lock_until, five dimensions) or the message table
 * (last_handle_time and the stuck threshold, three). */
static struct ev_dash_req req = {
        .table = EV_TABLE_OUTBOX,
        .dimension = "event_type",
        .window_s = 3600,
        .stuck_threshold_s = 600,
};

/* The key read's rowset for the wanted ids, in ev_mirror_query_pk's column order. */
/* The key read's rows (keys: each group value with its collation key) or the share's
 * compare (values alone). */
static struct ev_rowset *read_rows(struct table *t, const uint64_t *ids, size_t n, bool keys)
{
	static const char *const names[] = {
	        "id",  "status", "deleted", "version", "retry_count", "max_retry_count",
	        "nrt", "ct",     "ut",      "t1",      "d1",          "w1",
	        "d2",  "w2",     "d3",      "w3",      "d4",          "w4",
	        "d5",  "w5"};
	bool outbox = req.table == EV_TABLE_OUTBOX;
	size_t ndims = outbox ? 5 : 3;
	size_t ncols = 10 + (keys ? 2 : 1) * ndims;
	enum ev_ctype ty[20];
	for (int i = 0; i < 20; i++)
		ty[i] = EV_CT_TEXT;
	struct ev_rowset *rs = ev_rowset_new(ncols, names, ty);
	for (size_t k = 0; k < n; k++) {
		struct row *x = by_id(t, ids[k]);
		if (x == NULL)
			continue;
		struct ev_cell *c = ev_rowset_add_row(rs);
		char buf[6][32];
		snprintf(buf[0], 32, "%llu", x->id);
		snprintf(buf[1], 32, "%d", x->status);
		snprintf(buf[2], 32, "%d", x->deleted);
		snprintf(buf[3], 32, "%d", x->version);
		snprintf(buf[4], 32, "%d", x->rc);
		snprintf(buf[5], 32, "%d", x->mrc);
		for (int i = 0; i < 6; i++)
			ev_cell_set(&c[i], buf[i], strlen(buf[i]));
		const char *tm[4] = {nul(x->nrt), nul(x->ct), nul(x->ut), nul(x->lock)};
		for (int i = 0; i < 4; i++)
			ev_cell_set(&c[6 + i], tm[i], tm[i] ? strlen(tm[i]) : 0);
		/* The collation key: case-folded, as a case-insensitive collation compares. */
		/* The dimensions' columns in the model's order. */
		const char *ob[5] = {x->type, x->topic, "order-service", "ORDER", "MQ"};
		const char *msg[3] = {x->type, "order-service", "ORDER"};
		const char *const *vals = outbox ? ob : msg;
		for (int i = 0; i < (outbox ? 5 : 3); i++) {
			if (!keys) {
				ev_cell_set(&c[10 + i], vals[i], vals[i] ? strlen(vals[i]) : 0);
				continue;
			}
			ev_cell_set(&c[10 + 2 * i], vals[i], vals[i] ? strlen(vals[i]) : 0);
			char key[64] = "";
			for (size_t j = 0; vals[i] && vals[i][j] && j < 63; j++)
				key[j] = (char)(vals[i][j] >= 'a' && vals[i][j] <= 'z'
				                        ? vals[i][j] - 32
				                        : vals[i][j]);
			key[vals[i] ? strlen(vals[i]) : 0] = '\0';
			ev_cell_set(&c[11 + 2 * i], vals[i] ? key : NULL,
			            vals[i] ? strlen(key) : 0);
		}
	}
	return rs;
}

static struct ev_rowset *key_rows(struct table *t, const uint64_t *ids, size_t n)
{
	return read_rows(t, ids, n, true);
}

/* CRC-32 as the server's CRC32() computes it, bit by bit. */
static unsigned long crc32_bits(const char *p)
{
	unsigned long c = 0xFFFFFFFFul;
	for (; *p; p++) {
		c ^= (unsigned char)*p;
		for (int k = 0; k < 8; k++)
			c = (c >> 1) ^ (0xEDB88320ul & (0ul - (c & 1)));
	}
	return c ^ 0xFFFFFFFFul;
}

/* The share's read as the server returns it: id and the checksum of the row's CONCAT_WS, or
 * (once the mirror compares values) the values. */
static struct ev_rowset *share_rows(struct ev_mirror *m, struct table *t, const uint64_t *ids,
                                    size_t n)
{
	if (ev_mirror_share_plain(m))
		return read_rows(t, ids, n, false);
	static const char *const names[] = {"id", "crc"};
	enum ev_ctype ty[2] = {EV_CT_TEXT, EV_CT_TEXT};
	struct ev_rowset *rs = ev_rowset_new(2, names, ty);
	bool outbox = req.table == EV_TABLE_OUTBOX;
	for (size_t k = 0; k < n; k++) {
		struct row *x = by_id(t, ids[k]);
		if (x == NULL)
			continue;
		char text[512], id[32], crc[32];
		int len = snprintf(text, sizeof(text), "%d|%d|%d|%d|%d|%s|%s|%s|%s|%s", x->status,
		                   x->deleted != 0, x->version > 0, x->rc, x->mrc,
		                   x->nrt[0] ? x->nrt : "-", x->ct, x->ut,
		                   x->lock[0] ? x->lock : "-", x->type);
		if (outbox)
			snprintf(text + len, sizeof(text) - (size_t)len,
			         "|%s|order-service|ORDER|MQ", x->topic ? x->topic : "-");
		else
			snprintf(text + len, sizeof(text) - (size_t)len, "|order-service|ORDER");
		snprintf(id, sizeof(id), "%llu", x->id);
		snprintf(crc, sizeof(crc), "%lu", crc32_bits(text));
		struct ev_cell *c = ev_rowset_add_row(rs);
		ev_cell_set(&c[0], id, strlen(id));
		ev_cell_set(&c[1], crc, strlen(crc));
	}
	return rs;
}

/* One refresh as db/mirror.c makes it, from the simulated table (tiered: the failed range
 * read only when ev_mirror_read_failed says so). */
static bool tiered;
/* The large ranges verified by digest (ev_mirror_digest_due), as db/mirror.c does. */
static bool digesting;

/* Range `status` of the table as its read returns it: every row, or (arrivals) the pending
 * rows the model inserts above the mirror's watermark. */
static void feed_status(struct ev_mirror *m, struct table *t, int status, bool arrivals)
{
	char id[32], rc[16];
	for (size_t i = 0; i < t->n; i++) {
		const struct row *x = &t->r[i];
		if (x->status != status)
			continue;
		if (arrivals && (x->nrt[0] || x->rc != 0 || x->id <= ev_mirror_arrivals_above(m)))
			continue;
		snprintf(id, sizeof(id), "%llu", x->id);
		snprintf(rc, sizeof(rc), "%d", x->rc);
		if (x->status == 1 && req.table == EV_TABLE_OUTBOX)
			ck_assert_int_eq(ev_mirror_lock_row(m, id, nul(x->lock)), 0);
		else
			ck_assert_int_eq(ev_mirror_range_row(m, x->status, id, nul(x->nrt), rc), 0);
	}
}

/* A row's part of the digest as the server's SQL computes it (core/mirror.c's DIGEST_SQL), from
 * the row's own text: next_retry_time + 0 is its digits. */
static unsigned long long sql_row_digest(const struct row *r)
{
	/* The outbox's processing range: lock_until, no retry_count (DIGEST_LOCK_SQL). */
	bool locks = r->status == 1 && req.table == EV_TABLE_OUTBOX;
	const char *t = locks ? r->lock : r->nrt;
	unsigned long long n = 1;
	if (t[0]) {
		n = 0;
		for (const char *p = t; *p; p++)
			if (*p >= '0' && *p <= '9')
				n = n * 10 + (unsigned long long)(*p - '0');
	}
	unsigned long long rc = (unsigned long long)((long long)(locks ? 0 : r->rc) + 2147483648LL);
	return (r->id % 4294967291ull) * ((r->id ^ (n << 8) ^ rc) % 4294967279ull);
}

/* The server's digest of range `status`: its count, and the XOR of its rows' digests. */
static void server_digest(struct table *t, int status, char count[32], char x[32])
{
	unsigned long long c = 0, v = 0;
	for (size_t i = 0; i < t->n; i++) {
		const struct row *r = &t->r[i];
		if (r->status != status)
			continue;
		c++;
		v ^= sql_row_digest(r);
		/* The mirror's own digest of the row agrees wherever it keeps the time as it is. */
		if (status != 1 && strncmp(r->nrt, "2099", 4) != 0) {
			char rc[16];
			snprintf(rc, sizeof(rc), "%d", r->rc);
			ck_assert_uint_eq(ev_mirror_row_digest(r->id, nul(r->nrt), rc),
			                  sql_row_digest(r));
		}
	}
	snprintf(count, 32, "%llu", c);
	snprintf(x, 32, "%llu", v);
}

static struct ev_rowset *key_rows(struct table *t, const uint64_t *ids, size_t n);

static void read_by_key(struct ev_mirror *m, struct table *t, const uint64_t *ids, size_t n)
{
	struct ev_rowset *rs = key_rows(t, ids, n);
	for (size_t r = 0; r < rs->nrows; r++)
		ev_mirror_pk_row(m, rs, r);
	ev_rowset_free(&rs);
}

static void verify_ranges(struct ev_mirror *m, struct table *t)
{
	static const int statuses[] = {0, 1, 3};
	for (int k = 0; k < 3; k++) {
		int s = statuses[k];
		if (!ev_mirror_verify_pending(m, s))
			continue;
		char count[32], x[32];
		server_digest(t, s, count, x);
		if (ev_mirror_digest_check(m, s, count, x))
			continue;
		ev_mirror_reread_begin(m, s);
		feed_status(m, t, s, false);
		bool distrust;
		const uint64_t *ids;
		size_t n = ev_mirror_reread_done(m, s, &distrust, &ids);
		read_by_key(m, t, ids, n);
	}
}

static void refresh(struct ev_mirror *m, struct table *t, size_t share, struct ev_mirror_stats *st)
{
	static const int statuses[] = {0, 1, 3};
	bool all = !tiered || ev_mirror_read_failed(m);
	ev_mirror_clock(m, NOW);
	ev_mirror_begin(m);
	if (!all)
		ev_mirror_carry_range(m, 3);
	/* The status ranges; the outbox's processing rows with lock_until, from its lock
	 * index. */
	for (int s = 0; s < (all ? 3 : 2); s++) {
		if (digesting && ev_mirror_digest_due(m, statuses[s])) {
			ev_mirror_carry_to_verify(m, statuses[s],
			                          statuses[s] == 1 && req.table == EV_TABLE_OUTBOX);
			if (statuses[s] == 0)
				feed_status(m, t, 0, true);
			continue;
		}
		feed_status(m, t, statuses[s], false);
	}
	const uint64_t *ids;
	size_t n = ev_mirror_ranges_done(m, share, &ids);
	struct ev_rowset *rs = key_rows(t, ids, n);
	for (size_t r = 0; r < rs->nrows; r++)
		ev_mirror_pk_row(m, rs, r);
	ev_rowset_free(&rs);
	/* The share: its rows compared, the changed ones read whole. */
	n = ev_mirror_share_ids(m, &ids);
	rs = share_rows(m, t, ids, n);
	for (size_t r = 0; r < rs->nrows; r++)
		ev_mirror_verify_row(m, rs, r);
	ev_rowset_free(&rs);
	n = ev_mirror_verify_done(m, &ids);
	read_by_key(m, t, ids, n);
	ev_mirror_share_settle(m);
	verify_ranges(m, t);
	ev_mirror_end(m, st);
}

static long long diff_s(const char *a, const char *b)
{
	return ev_datetime_diff(a, b);
}

/* The figures counted from the table, as the model document's SQL counts them. */
static void expect(struct table *t, const char *type, long long f[EV_DASH_NFIGURES])
{
	for (int i = 0; i < EV_DASH_NFIGURES; i++)
		f[i] = 0;
	f[EV_DASH_OLDEST_PENDING_AGE] = f[EV_DASH_LONGEST_RETRY_WAIT] = -1;
	for (size_t i = 0; i < t->n; i++) {
		const struct row *x = &t->r[i];
		if (x->deleted || (type && strcasecmp(type, x->type) != 0))
			continue;
		if (x->status == 0) {
			f[EV_DASH_PENDING]++;
			long long age = diff_s(x->ct, NOW);
			if (age > f[EV_DASH_OLDEST_PENDING_AGE])
				f[EV_DASH_OLDEST_PENDING_AGE] = age;
			if (x->version > 0) {
				age = diff_s(x->ut, NOW);
				if (age > f[EV_DASH_LONGEST_RETRY_WAIT])
					f[EV_DASH_LONGEST_RETRY_WAIT] = age;
			}
		} else if (x->status == 1) {
			f[EV_DASH_PROCESSING]++;
			/* The outbox: lock_until <= NOW(); the message table: last_handle_time <=
			 * NOW() - INTERVAL 600 SECOND. */
			if (x->lock[0] &&
			    (req.table == EV_TABLE_OUTBOX ? strcmp(x->lock, NOW) <= 0
			                                  : diff_s(x->lock, NOW) >= 600))
				f[EV_DASH_STUCK]++;
		} else if (x->status == 3) {
			f[EV_DASH_FAILED]++;
			if (x->rc >= x->mrc)
				f[EV_DASH_EXHAUSTED]++;
			else if (!x->nrt[0])
				f[EV_DASH_FAILED_NORETRY]++;
			else if (strcmp(x->nrt, NOW) <= 0)
				f[EV_DASH_FAILED_DUE]++;
			else
				f[EV_DASH_FAILED_WAITING]++;
		}
	}
}

static const enum ev_dash_figure backlog_figs[] = {EV_DASH_PENDING,
                                                   EV_DASH_PROCESSING,
                                                   EV_DASH_STUCK,
                                                   EV_DASH_FAILED,
                                                   EV_DASH_FAILED_DUE,
                                                   EV_DASH_FAILED_WAITING,
                                                   EV_DASH_FAILED_NORETRY,
                                                   EV_DASH_EXHAUSTED,
                                                   EV_DASH_OLDEST_PENDING_AGE,
                                                   EV_DASH_LONGEST_RETRY_WAIT};

static void compare(struct ev_mirror *m, struct table *t, int round)
{
	struct ev_dash *d = ev_dash_new(&req);
	ev_mirror_fill(m, &req, NOW, d);
	ev_dash_finish(d);
	long long want[EV_DASH_NFIGURES];
	expect(t, NULL, want);
	for (size_t k = 0; k < sizeof(backlog_figs) / sizeof(backlog_figs[0]); k++) {
		enum ev_dash_figure f = backlog_figs[k];
		ck_assert_msg(d->total.f[f].value == want[f],
		              "round %d: total %s = %lld, want %lld", round, ev_dash_figure_name(f),
		              d->total.f[f].value, want[f]);
	}
	for (size_t g = 0; g < sizeof(types) / sizeof(types[0]); g++) {
		expect(t, types[g], want);
		const struct ev_dash_row *row = ev_dash_find(d, types[g]);
		for (size_t k = 0; k < sizeof(backlog_figs) / sizeof(backlog_figs[0]); k++) {
			enum ev_dash_figure f = backlog_figs[k];
			long long got = row ? row->f[f].value
			                : (f == EV_DASH_OLDEST_PENDING_AGE ||
			                   f == EV_DASH_LONGEST_RETRY_WAIT)
			                        ? -1
			                        : 0;
			ck_assert_msg(got == want[f], "round %d: %s %s = %lld, want %lld", round,
			              types[g], ev_dash_figure_name(f), got, want[f]);
		}
	}
	ev_dash_free(&d);
}

/* Change the table as the applications and operators would: new rows, status moves with
 * their index columns, rows leaving (success, cancel, deleted outright). */
static void churn(struct table *t, unsigned long long *next_id, int changes)
{
	for (int k = 0; k < changes; k++) {
		unsigned what = rnd(10);
		if (what < 3 || t->n == 0) {
			add(t, (*next_id)++);
			continue;
		}
		struct row *x = &t->r[rnd((unsigned)t->n)];
		if (what == 3) { /* deleted outright */
			*x = t->r[--t->n];
		} else if (what < 7) { /* a move with new index columns */
			static const int st[] = {0, 1, 2, 3, 4};
			x->status = st[rnd(5)];
			x->rc++;
			x->version++;
			rand_time(x->ut, 0);
			if (rnd(2))
				rand_time(x->nrt, 1);
			else
				x->nrt[0] = '\0';
		} else if (what == 7) { /* a lock taken again */
			rand_time(x->lock, 1);
		} else if (what == 8) { /* 3 -> 1 -> 3 with the same index columns */
			if (x->status == 3) {
				x->version += 2;
				rand_time(x->ut, 0);
			}
		} else {
			x->type = types[rnd(4)];
		}
	}
}

START_TEST(exact_under_change_with_a_full_share)
{
	req.table = _i ? EV_TABLE_MESSAGE : EV_TABLE_OUTBOX;
	struct table t = {0};
	unsigned long long next = fill(&t, 400);
	struct ev_mirror *m = ev_mirror_new(req.table);
	struct ev_mirror_stats st;
	for (int round = 0; round < 300; round++) {
		/* Every row read again each time: what no index carries is seen at once. */
		refresh(m, &t, SIZE_MAX, &st);
		compare(m, &t, round);
		churn(&t, &next, 25);
		if (round % 7 == 0 && t.n > 0) { /* a soft delete, max_retry_count alone */
			t.r[rnd((unsigned)t.n)].deleted ^= 1;
			t.r[rnd((unsigned)t.n)].mrc = (int)rnd(8);
		}
	}
	/* The share compared checksums all along: every value was reproduced. */
	ck_assert(!ev_mirror_share_plain(m));
	ev_mirror_free(&m);
	free(t.r);
}
END_TEST

START_TEST(index_changes_are_seen_without_a_share)
{
	req.table = _i ? EV_TABLE_MESSAGE : EV_TABLE_OUTBOX;
	struct table t = {0};
	unsigned long long next = 1;
	for (int i = 0; i < 300; i++)
		add(&t, next++);
	struct ev_mirror *m = ev_mirror_new(req.table);
	struct ev_mirror_stats st;
	ck_assert_int_eq(ev_mirror_table(m), req.table);
	refresh(m, &t, 0, &st);
	size_t backlog = 0;
	for (size_t i = 0; i < t.n; i++)
		backlog += t.r[i].status == 0 || t.r[i].status == 1 || t.r[i].status == 3;
	ck_assert_uint_eq(st.entered, backlog);
	ck_assert_uint_eq(st.pk_reads, backlog);
	ck_assert_uint_eq(ev_mirror_rows(m), backlog);
	compare(m, &t, 0);
	/* Nothing changed: nothing read by key. */
	refresh(m, &t, 0, &st);
	ck_assert_uint_eq(st.entered + st.changed + st.left + st.pk_reads, 0);
	for (int round = 1; round < 200; round++) {
		/* Only changes an index carries (and new rows, rows gone): exact every time. */
		for (int k = 0; k < 20; k++) {
			unsigned what = rnd(4);
			if (what == 0) {
				add(&t, next++);
				continue;
			}
			struct row *x = &t.r[rnd((unsigned)t.n)];
			if (what == 1) {
				*x = t.r[--t.n];
			} else if (what == 2) {
				x->status = (int)rnd(5);
				x->rc++;
				rand_time(x->ut, 0);
				x->version++;
			} else if (x->status == 1 && req.table == EV_TABLE_OUTBOX) {
				/* lock_until is in an index; last_handle_time is not (it moves with
				 * the status only). */
				rand_time(x->lock, 1);
			} else if (rnd(2)) {
				/* Only next_retry_time moves (or only retry_count): an index
				 * change. */
				rand_time(x->nrt, 1);
			} else {
				x->rc += 1 - 2 * (int)rnd(2);
			}
		}
		refresh(m, &t, 0, &st);
		compare(m, &t, round);
	}
	/* A soft delete is in no index: unseen without the share, seen with it. */
	struct row *victim = NULL;
	for (size_t i = 0; i < t.n && victim == NULL; i++)
		if (t.r[i].status == 3 && !t.r[i].deleted)
			victim = &t.r[i];
	ck_assert_ptr_nonnull(victim);
	victim->deleted = 1;
	refresh(m, &t, 0, &st);
	struct ev_mirror_totals tot;
	ev_mirror_totals(m, &tot);
	long long want[EV_DASH_NFIGURES];
	expect(&t, NULL, want);
	ck_assert_int_eq(tot.failed, want[EV_DASH_FAILED] + 1);
	/* The rolling share reads every row within rows / share refreshes. */
	size_t share = ev_mirror_share(m, 2.0, 60); /* a 2 s refresh, every row within 60 s */
	ck_assert_uint_eq(share, (ev_mirror_rows(m) * 2 + 59) / 60);
	size_t refreshes = (ev_mirror_rows(m) + share - 1) / share;
	for (size_t i = 0; i < refreshes; i++)
		refresh(m, &t, share, &st);
	compare(m, &t, -1);
	ev_mirror_free(&m);
	free(t.r);
}
END_TEST

START_TEST(want_all_corrects_what_was_missed)
{
	req.table = EV_TABLE_OUTBOX;
	struct table t = {0};
	unsigned long long next = 1;
	for (int i = 0; i < 200; i++)
		add(&t, next++);
	struct ev_mirror *m = ev_mirror_new(EV_TABLE_OUTBOX);
	struct ev_mirror_stats st;
	refresh(m, &t, 0, &st);
	for (size_t i = 0; i < t.n; i++)
		if (t.r[i].status == 3)
			t.r[i].mrc = 0; /* all exhausted, behind the mirror's back */
	refresh(m, &t, 0, &st);
	struct ev_mirror_totals tot;
	ev_mirror_totals(m, &tot);
	long long want[EV_DASH_NFIGURES];
	expect(&t, NULL, want);
	ck_assert_int_ne(tot.exhausted, want[EV_DASH_EXHAUSTED]);
	/* The drift correction: every row read by key in the same refresh. */
	ev_mirror_begin(m);
	const uint64_t *ids;
	size_t n = ev_mirror_want_all(m, &ids);
	ck_assert_uint_eq(n, ev_mirror_rows(m));
	struct ev_rowset *rs = key_rows(&t, ids, n);
	for (size_t r = 0; r < rs->nrows; r++)
		ev_mirror_pk_row(m, rs, r);
	ev_rowset_free(&rs);
	ev_mirror_end(m, &st);
	compare(m, &t, 0);
	ev_mirror_free(&m);
	free(t.r);
}
END_TEST

START_TEST(groups_merge_as_the_collation_does)
{
	req.table = EV_TABLE_OUTBOX;
	/* 'order_paid' and 'ORDER_PAID' are one group under a case-insensitive collation: the
	 * key read's WEIGHT_STRING() is what the mirror groups by, the first spelling shown. */
	struct table t = {0};
	struct row *a = add(&t, 1), *b = add(&t, 2);
	a->status = b->status = 0;
	a->deleted = b->deleted = 0;
	a->type = "ORDER_PAID";
	b->type = "order_paid";
	struct ev_mirror *m = ev_mirror_new(EV_TABLE_OUTBOX);
	struct ev_mirror_stats st;
	refresh(m, &t, 0, &st);
	struct ev_dash *d = ev_dash_new(&req);
	ev_mirror_fill(m, &req, NOW, d);
	ev_dash_finish(d);
	ck_assert_uint_eq(d->nrows, 1);
	ck_assert_str_eq(d->rows[0].group, "ORDER_PAID");
	ck_assert_int_eq(d->rows[0].f[EV_DASH_PENDING].value, 2);
	ev_dash_free(&d);
	/* By a dimension whose value is NULL (topic): one NULL group. */
	a->topic = b->topic = NULL;
	refresh(m, &t, SIZE_MAX, &st);
	struct ev_dash_req by_topic = req;
	by_topic.dimension = "topic";
	d = ev_dash_new(&by_topic);
	ev_mirror_fill(m, &by_topic, NOW, d);
	ev_dash_finish(d);
	ck_assert_uint_eq(d->nrows, 1);
	ck_assert_ptr_null(d->rows[0].group);
	ev_dash_free(&d);
	/* 'order_paid' is checksummed by the server as spelt, by the mirror as its group's first
	 * spelling: the share cannot reproduce it, and compares values from then on, exact. */
	ck_assert(ev_mirror_share_plain(m));
	b->deleted = 1;
	refresh(m, &t, SIZE_MAX, &st);
	compare(m, &t, 0);
	ev_mirror_free(&m);
	free(t.r);
}
END_TEST

START_TEST(times_compare_as_the_server_does)
{
	int64_t a, b;
	ck_assert(ev_mirror_parse_time("2000-01-01 00:00:00", &a));
	ck_assert_int_eq(a, 0);
	ck_assert(ev_mirror_parse_time("2026-06-01 12:00:00", &a));
	ck_assert(ev_mirror_parse_time("2026-06-01 12:00:00.000", &b));
	ck_assert_int_eq(a, b);
	/* A fraction is later than the whole second: 12:00:00.5 <= NOW() = 12:00:00 is false. */
	ck_assert(ev_mirror_parse_time("2026-06-01 12:00:00.5", &b));
	ck_assert_int_eq(b, a + 1);
	ck_assert(ev_mirror_parse_time("2028-02-29 00:00:00", &a));
	ck_assert(ev_mirror_parse_time("2028-03-01 00:00:00", &b));
	ck_assert_int_eq(b - a, 86400);
	/* Far dates and the zero date keep their order. */
	ck_assert(ev_mirror_parse_time("0000-00-00 00:00:00", &a));
	ck_assert(ev_mirror_parse_time("1000-01-01 00:00:00", &b));
	ck_assert_int_lt(a, b);
	ck_assert(ev_mirror_parse_time("9999-12-31 23:59:59", &a));
	ck_assert_int_gt(a, (int64_t)INT32_MAX);
	ck_assert(!ev_mirror_parse_time("yesterday", &a));
	ck_assert(!ev_mirror_parse_time(NULL, &a));
	ck_assert(!ev_mirror_parse_time("2026-06-01", &a));
}
END_TEST

START_TEST(far_times_keep_exact_ages)
{
	req.table = EV_TABLE_OUTBOX;
	/* A pending row created in the year 1000 (outside the rows' 32-bit times): its age is
	 * exact; a next_retry_time in 9999 is waiting. */
	struct table t = {0};
	struct row *x = add(&t, 18446744073709551615ull);
	x->status = 0;
	x->deleted = 0;
	x->version = 1;
	snprintf(x->ct, sizeof(x->ct), "1000-01-01 00:00:00");
	snprintf(x->ut, sizeof(x->ut), "1000-01-02 00:00:00");
	struct row *y = add(&t, 7);
	y->status = 3;
	y->deleted = 0;
	y->rc = 0;
	y->mrc = 5;
	snprintf(y->nrt, sizeof(y->nrt), "9999-12-31 23:59:59");
	struct ev_mirror *m = ev_mirror_new(EV_TABLE_OUTBOX);
	struct ev_mirror_stats st;
	refresh(m, &t, 0, &st);
	struct ev_dash *d = ev_dash_new(&req);
	ev_mirror_fill(m, &req, NOW, d);
	ev_dash_finish(d);
	int64_t now, then;
	ev_mirror_parse_time(NOW, &now);
	ev_mirror_parse_time("1000-01-01 00:00:00", &then);
	ck_assert_int_eq(d->total.f[EV_DASH_OLDEST_PENDING_AGE].value, now - then);
	ck_assert_int_eq(d->total.f[EV_DASH_LONGEST_RETRY_WAIT].value, now - then - 86400);
	ck_assert_int_eq(d->total.f[EV_DASH_FAILED_WAITING].value, 1);
	ck_assert_int_eq(d->total.f[EV_DASH_FAILED_DUE].value, 0);
	ev_dash_free(&d);
	/* Ids that do not parse are refused. */
	ev_mirror_begin(m);
	ck_assert_int_eq(ev_mirror_range_row(m, 0, "-1", NULL, "0"), -1);
	ck_assert_int_eq(ev_mirror_range_row(m, 0, "18446744073709551616", NULL, "0"), -1);
	ck_assert_int_eq(ev_mirror_range_row(m, 0, NULL, NULL, "0"), -1);
	ck_assert_int_eq(ev_mirror_lock_row(m, "x", "2026-06-01 12:00:00"), -1);
	ev_mirror_free(&m);
	free(t.r);
}
END_TEST

START_TEST(the_failed_range_is_carried)
{
	/* 6,000 failed rows (the range is then read every fifth refresh): a row that leaves
	 * processing for failed in between is counted at once (its key read says where it went);
	 * a failed row cancelled directly is counted until the next read of the range. */
	req.table = EV_TABLE_OUTBOX;
	tiered = true;
	struct table t = {0};
	for (int i = 0; i < 6000; i++) {
		struct row *x = add(&t, (unsigned long long)i + 1);
		x->status = 3;
		x->deleted = 0;
	}
	for (int i = 0; i < 50; i++) {
		struct row *x = add(&t, 10000ull + (unsigned long long)i);
		x->status = 1;
		x->deleted = 0;
	}
	struct ev_mirror *m = ev_mirror_new(req.table);
	struct ev_mirror_stats st;
	refresh(m, &t, 0, &st); /* the first reads every range */
	compare(m, &t, 0);
	ck_assert(!ev_mirror_read_failed(m));
	/* 1 -> 3 (the failure UPDATE) while the range is carried: exact. */
	struct row *p = by_id(&t, 10000);
	p->status = 3;
	p->rc++;
	rand_time(p->nrt, 1);
	refresh(m, &t, 0, &st);
	compare(m, &t, 1);
	/* 3 -> 4 directly: still failed in the mirror until the range is read again. */
	by_id(&t, 1)->status = 4;
	refresh(m, &t, 0, &st);
	struct ev_mirror_totals tot;
	ev_mirror_totals(m, &tot);
	long long want[EV_DASH_NFIGURES];
	expect(&t, NULL, want);
	ck_assert_int_eq(tot.failed, want[EV_DASH_FAILED] + 1);
	int more = 0;
	while (!ev_mirror_read_failed(m)) {
		refresh(m, &t, 0, &st);
		more++;
	}
	ck_assert_int_le(more, EV_MIRROR_FAILED_EVERY);
	refresh(m, &t, 0, &st); /* this one reads it */
	compare(m, &t, 2);
	/* 3 -> 4 by evtop's own write: the row is touched, and the next refresh, though it
	 * carries the range, counts it where it went (an id not mirrored is nothing to read). */
	ck_assert(!ev_mirror_read_failed(m));
	by_id(&t, 2)->status = 4;
	ev_mirror_touch(m, 2);
	ev_mirror_touch(m, 999999); /* not mirrored: nothing to read */
	refresh(m, &t, 0, &st);
	ck_assert_uint_eq(st.left, 1);
	compare(m, &t, 3);
	/* Read once: the next refresh reads nothing by key. */
	refresh(m, &t, 0, &st);
	ck_assert_uint_eq(st.entered + st.changed + st.left + st.pk_reads, 0);
	ev_mirror_free(&m);
	free(t.r);
	tiered = false;
}
END_TEST

/* The large ranges verified by digest: exact at every refresh however the table changes (a
 * range whose digest differs is read again, and backs off), the steady state read by digest
 * alone; a time the mirror keeps clamped makes the server's digest one it cannot reproduce:
 * that range is read whole from then on, still exact. */
START_TEST(ranges_verified_by_digest)
{
	req.table = EV_TABLE_OUTBOX;
	tiered = digesting = true;
	ev_mirror_set_digest_min(1);
	struct table t = {0};
	unsigned long long next = fill(&t, 400);
	struct ev_mirror *m = ev_mirror_new(req.table);
	struct ev_mirror_stats st;
	size_t digests = 0, rereads = 0;
	for (int round = 0; round < 150; round++) {
		/* Changes in bursts, and stretches where only new rows come (the arrivals). */
		if (round % 20 < 8)
			churn(&t, &next, 1 + (int)rnd(20));
		else if (round % 3 == 0)
			for (int k = 0; k < 3; k++) {
				struct row *x = add(&t, next++);
				x->status = 0;
				x->nrt[0] = '\0';
				x->rc = 0;
			}
		/* The whole share: what no index carries (a group changed in place) is seen. */
		refresh(m, &t, t.n, &st);
		compare(m, &t, round);
		digests += st.digests;
		rereads += st.rereads;
	}
	ck_assert_uint_gt(digests, 50);
	ck_assert_uint_gt(rereads, 5);
	/* A failed row waiting until 2099 (the mirror keeps it as 2068): read whole, exact. */
	struct row *far = add(&t, next++);
	far->status = 3;
	far->rc = 1;
	far->mrc = 5;
	snprintf(far->nrt, sizeof(far->nrt), "2099-01-01 00:00:00");
	for (int round = 0; round < 3 * EV_MIRROR_FAILED_EVERY; round++) {
		refresh(m, &t, t.n, &st);
		compare(m, &t, 200 + round);
	}
	ck_assert(!ev_mirror_digest_due(m, 3));
	ev_mirror_free(&m);
	free(t.r);
	tiered = digesting = false;
	ev_mirror_set_digest_min(0);
}
END_TEST

START_TEST(flows_from_the_refreshes)
{
	/* The flows: rows created (the created read), the backlog, rows deleted outright. */
	req.table = EV_TABLE_MESSAGE;
	struct table t = {0};
	for (int i = 0; i < 100; i++) {
		struct row *x = add(&t, (unsigned long long)i + 1);
		x->status = 0;
		x->deleted = 0;
		x->type = "ORDER_PAID";
	}
	struct ev_mirror *m = ev_mirror_new(req.table);
	struct ev_mirror_stats st;
	const char *times[] = {"2026-06-01 12:00:00", "2026-06-01 12:00:02"};
	/* Refresh 1: the flows start (no created read yet). */
	ev_mirror_clock(m, times[0]);
	ck_assert_ptr_null(ev_mirror_query_created(m, &req, 2));
	refresh(m, &t, 0, &st);
	/* 30 of the 100 finish, 10 new ones are created, 5 more are deleted outright. */
	for (int i = 0; i < 30; i++)
		t.r[i].status = 2;
	memmove(&t.r[30], &t.r[35], (t.n - 35) * sizeof(t.r[0]));
	t.n -= 5;
	for (int i = 0; i < 10; i++) {
		struct row *x = add(&t, 1000ull + (unsigned long long)i);
		x->status = 0;
		x->deleted = 0;
		x->type = "ORDER_PAID";
	}
	char id[32], rc[16];
	ev_mirror_clock(m, times[1]);
	ev_mirror_begin(m);
	for (size_t i = 0; i < t.n; i++) {
		if (t.r[i].status != 0)
			continue;
		snprintf(id, sizeof(id), "%llu", t.r[i].id);
		snprintf(rc, sizeof(rc), "%d", t.r[i].rc);
		ev_mirror_range_row(m, 0, id, nul(t.r[i].nrt), rc);
	}
	const uint64_t *ids;
	size_t n = ev_mirror_ranges_done(m, 0, &ids);
	struct ev_rowset *rs = key_rows(&t, ids, n);
	for (size_t r = 0; r < rs->nrows; r++)
		ev_mirror_pk_row(m, rs, r);
	ev_rowset_free(&rs);
	struct ev_query *q = ev_mirror_query_created(m, &req, 2);
	ck_assert_ptr_nonnull(q);
	ck_assert_ptr_nonnull(strstr(q->sql, "create_time > ? AND create_time <= ?"));
	ck_assert_uint_eq(q->nparams, 2);
	ev_query_free(&q);
	static const char *const cn[] = {"event_type", "k", "n"};
	enum ev_ctype ct[] = {EV_CT_TEXT, EV_CT_TEXT, EV_CT_INT};
	rs = ev_rowset_new(3, cn, ct);
	struct ev_cell *c = ev_rowset_add_row(rs);
	ev_cell_set(&c[0], "ORDER_PAID", 10);
	ev_cell_set(&c[1], "ORDER_PAID", 10);
	ev_cell_set(&c[2], "10", 2);
	ev_mirror_created_row(m, rs, 0);
	ev_rowset_free(&rs);
	ev_mirror_created_done(m, true);
	ev_mirror_end(m, &st);
	ck_assert_uint_eq(st.left, 35);
	struct ev_dash *d = ev_dash_new(&req);
	ev_mirror_fill(m, &req, times[1], d);
	ev_dash_finish(d);
	ck_assert(d->flow_on);
	ck_assert(d->total.flow.known);
	/* created 10 - (75 - 100) - 5 deleted = 30 finished in 2 s: 900 a minute. */
	ck_assert_msg(d->total.flow.finished_per_min > 899.9 &&
	                      d->total.flow.finished_per_min < 900.1,
	              "%f (created %f, span %f, clamped %lld)", d->total.flow.finished_per_min,
	              d->total.flow.created_per_min, d->total.flow.span_s, d->total.flow.clamped);
	ck_assert(d->total.flow.created_per_min > 299.9 && d->total.flow.created_per_min < 300.1);
	const struct ev_dash_row *row = ev_dash_find(d, "ORDER_PAID");
	ck_assert_ptr_nonnull(row);
	ck_assert(row->flow.known);
	ck_assert(row->flow.finished_per_min > 899.9 && row->flow.finished_per_min < 900.1);
	ev_dash_free(&d);
	/* By a dimension without flows (source): the groups have none, the totals do. */
	struct ev_dash_req by_source = req;
	by_source.dimension = "source";
	d = ev_dash_new(&by_source);
	ev_mirror_fill(m, &by_source, times[1], d);
	ev_dash_finish(d);
	ck_assert(d->total.flow.known);
	ck_assert_uint_ge(d->nrows, 1);
	ck_assert(!d->rows[0].flow.known);
	ev_dash_free(&d);
	ev_mirror_free(&m);
	free(t.r);
}
END_TEST

START_TEST(an_empty_backlog_has_empty_figures)
{
	/* No backlog row at all (a drained table, the full check of an empty one): no group, every
	 * count 0, no age; finishing a dashboard without rows sorts nothing. */
	req.table = EV_TABLE_OUTBOX;
	struct table t = {0};
	struct ev_mirror *m = ev_mirror_new(req.table);
	struct ev_mirror_stats st;
	refresh(m, &t, 0, &st);
	ck_assert_uint_eq(ev_mirror_rows(m), 0);
	struct ev_dash *d = ev_dash_new(&req);
	ev_mirror_fill(m, &req, NOW, d);
	ev_dash_finish(d);
	ck_assert_uint_eq(d->nrows, 0);
	ck_assert_int_eq(d->total.f[EV_DASH_PENDING].value, 0);
	ck_assert_int_eq(d->total.f[EV_DASH_OLDEST_PENDING_AGE].value, -1);
	ev_dash_free(&d);
	ev_mirror_free(&m);
}
END_TEST

START_TEST(the_last_check_is_dated_by_the_server)
{
	/* No check yet: no age. A check in one refresh's snapshot; two refreshes later, by the
	 * server's clock, it is 95 s old; the drift the checks found adds up. */
	struct ev_mirror *m = ev_mirror_new(EV_TABLE_OUTBOX);
	ev_mirror_clock(m, "2026-06-01 12:00:00");
	ck_assert_int_eq(ev_mirror_checked_ago(m), -1);
	ev_mirror_checked(m);
	ck_assert_int_eq(ev_mirror_checked_ago(m), 0);
	ev_mirror_drift(m, 3);
	ev_mirror_clock(m, "2026-06-01 12:00:45");
	ev_mirror_clock(m, "2026-06-01 12:01:35");
	ck_assert_int_eq(ev_mirror_checked_ago(m), 95);
	ev_mirror_drift(m, 2);
	ck_assert_int_eq(ev_mirror_drift_total(m), 5);
	ev_mirror_checked(m);
	ck_assert_int_eq(ev_mirror_checked_ago(m), 0);
	ev_mirror_free(&m);
}
END_TEST

START_TEST(key_reads_keep_to_a_few_texts)
{
	/* A key read's ids are parameters, each list padded with its last id to one of a few
	 * lengths: reads of 3 and of 4 ids share one text (kept prepared), ids from 2^63 up go
	 * in a list of their own (one list mixing both is no range for MariaDB). */
	req.table = EV_TABLE_OUTBOX;
	uint64_t three[] = {5, 9, 7}, four[] = {1, 2, 3, 4};
	struct ev_query *a = ev_mirror_query_pk(&req, three, 3);
	struct ev_query *b = ev_mirror_query_pk(&req, four, 4);
	ck_assert(a->keep && b->keep);
	ck_assert_str_eq(a->sql, b->sql);
	ck_assert_uint_eq(a->nparams, 4);
	ck_assert_uint_eq(a->params[2].u, 7);
	ck_assert_uint_eq(a->params[3].u, 7);
	ck_assert_ptr_nonnull(strstr(a->sql, "id IN (?,?,?,?)"));
	ev_query_free(&a);
	ev_query_free(&b);

	uint64_t ids[130];
	for (size_t i = 0; i < 130; i++)
		ids[i] = 1000 + i;
	ids[129] = 18446744073709551615ull;
	a = ev_mirror_query_pk(&req, ids, 130);
	ck_assert_uint_eq(a->nparams, 192 + 4);
	ck_assert_ptr_nonnull(strstr(a->sql, ") OR id IN (?,?,?,?)"));
	ck_assert_uint_eq(a->params[192].u, 18446744073709551615ull);
	ck_assert_uint_eq(a->params[191].u, 1128);
	ev_query_free(&a);
}
END_TEST

START_TEST(the_cap_is_shared)
{
	req.table = EV_TABLE_OUTBOX;
	ev_mirror_set_cap(1000);
	struct ev_mirror *a = ev_mirror_new(EV_TABLE_OUTBOX), *b = ev_mirror_new(EV_TABLE_MESSAGE);
	ck_assert_uint_eq(ev_mirror_room(a), 1000);
	struct table t = {0};
	for (int i = 0; i < 600; i++)
		add(&t, (unsigned long long)i + 1)->status = 0;
	struct ev_mirror_stats st;
	refresh(a, &t, 0, &st);
	ck_assert_uint_eq(ev_mirror_rows(a), 600);
	ck_assert_uint_eq(ev_mirror_room(a), 1000);
	ck_assert_uint_eq(ev_mirror_room(b), 400);
	ev_mirror_overflow(a);
	ck_assert(ev_mirror_is_over_cap(a));
	ck_assert_uint_eq(ev_mirror_rows(a), 0);
	ck_assert_uint_eq(ev_mirror_room(b), 1000);
	ev_mirror_free(&a);
	ev_mirror_free(&b);
	ev_mirror_set_cap(0);
	ck_assert_uint_eq(ev_mirror_cap(), EV_MIRROR_CAP_DEFAULT);
	free(t.r);
}
END_TEST

START_TEST(memory_per_row)
{
	req.table = EV_TABLE_OUTBOX;
	/* 110,000 backlog rows of 40 event types: at most 64 bytes a row, everything counted (the
	 * rows, the lookup, the interned names), by the mirror's own count and by the heap's. */
	enum { N = 110000 };
	struct table t = {0};
	char names[40][24];
	for (int i = 0; i < 40; i++)
		snprintf(names[i], sizeof(names[i]), "EVENT_TYPE_%02d", i);
	for (int i = 0; i < N; i++) {
		struct row *x = add(&t, 1000000ull + (unsigned long long)i * 3);
		x->status = i % 3 == 0 ? 0 : i % 3 == 1 ? 1 : 3;
		x->type = names[i % 40];
	}
	struct mallinfo2 before = mallinfo2();
	struct ev_mirror *m = ev_mirror_new(EV_TABLE_OUTBOX);
	struct ev_mirror_stats st;
	refresh(m, &t, 0, &st);
	struct mallinfo2 after = mallinfo2();
	ck_assert_uint_eq(ev_mirror_rows(m), N);
	double own = (double)ev_mirror_bytes(m) / N;
	double heap = (double)(after.uordblks + after.hblkhd - before.uordblks - before.hblkhd) / N;
	printf("mirror: %.1f bytes a row (own count), %.1f (heap)\n", own, heap);
	ck_assert_msg(own <= 64.0, "%.1f bytes a row", own);
	ck_assert_msg(heap <= 64.0, "%.1f bytes a row on the heap", heap);
	ev_mirror_free(&m);
	free(t.r);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("mirror");
	TCase *tc = tcase_create("mirror");
	tcase_set_timeout(tc, 120);
	tcase_add_loop_test(tc, exact_under_change_with_a_full_share, 0, 2);
	tcase_add_loop_test(tc, index_changes_are_seen_without_a_share, 0, 2);
	tcase_add_test(tc, want_all_corrects_what_was_missed);
	tcase_add_test(tc, groups_merge_as_the_collation_does);
	tcase_add_test(tc, times_compare_as_the_server_does);
	tcase_add_test(tc, far_times_keep_exact_ages);
	tcase_add_test(tc, the_failed_range_is_carried);
	tcase_add_test(tc, ranges_verified_by_digest);
	tcase_add_test(tc, flows_from_the_refreshes);
	tcase_add_test(tc, an_empty_backlog_has_empty_figures);
	tcase_add_test(tc, the_last_check_is_dated_by_the_server);
	tcase_add_test(tc, key_reads_keep_to_a_few_texts);
	tcase_add_test(tc, the_cap_is_shared);
	tcase_add_test(tc, memory_per_row);
	suite_add_tcase(s, tc);
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? 0 : 1;
}
