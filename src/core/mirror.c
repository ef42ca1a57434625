/* evtop — the backlog mirror (see mirror.h).
 *
 * The rows live in one array sorted by id (found by binary search; a refresh's new rows are
 * gathered apart, sorted and merged in once), 44 bytes each: times as seconds from
 * 2000-01-01 in 32 bits (a time outside 1932-2068 is kept exactly in a side list: only the
 * ages need it, comparisons with NOW() keep their order when clamped), group values as
 * 16-bit indexes into a table of interned names per dimension. Two rows are one group when
 * the server's collation says so: names are interned by WEIGHT_STRING(), as GROUP BY would
 * group them. */
#include <config.h>

#include "core/mirror.h"

#include "core/flow.h"
#include "core/i18n.h"

#include "core/util.h"

#include <errno.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define T_NULL    INT32_MIN
#define T_LOW     (INT32_MIN + 1)
#define T_HIGH    INT32_MAX
#define MAX_DIMS  5
#define MAX_NAMES 65535

enum {
	F_SEEN = 1,      /* in a range read this refresh */
	F_WANT = 2,      /* to read by primary key this refresh */
	F_DELETED = 4,   /* deleted = 1: mirrored (it is in the index) but never counted */
	F_VERSIONED = 8, /* version > 0 */
	F_KNOWN = 16,    /* read by primary key at least once */
	F_BIG = 32,      /* create_time or update_time outside the 32-bit range: see bigs */
	F_GONE = 64,     /* the key read says it left the backlog */
	F_LEFT = 128,    /* not in its range this refresh: read by key for where it went */
	F_FAILIN = 256,  /* entered status 3 this refresh (the flows) */
	F_DELLEFT = 512, /* left the backlog deleted, outright or soft (the flows) */
	F_VERIFY = 1024, /* in this refresh's rolling share: its key read compares */
};

/* A status range verified by its digest (statuses 0 and 3; see ev_mirror_digest_due). */
struct digest {
	bool primed;       /* read whole at a refresh since the mirror started anew */
	bool off;          /* the server's digest of the rows it sent was not the mirror's: the
	                      digest cannot be reproduced here (ev_mirror_reread_done) */
	bool carried;      /* this refresh: carried, to be verified by digest after the key reads */
	bool checked;      /* ... and verified (the digests agreed, or the range was read again) */
	uint64_t count, x; /* the server's digest this refresh */
	bool locks;        /* the outbox's processing range, by its lock index (lock_until) */
	/* A range that changes as fast as it is read (a backlog draining: rows claimed and done
	 * between two refreshes) has digests that differ every time, each then a read more:
	 * after one differs, the next `rest` times it would be verified it is read whole,
	 * `backoff` doubling (2 to 32) while they go on differing, gone once one agrees. */
	unsigned rest, backoff;
};

struct entry {
	uint32_t id_lo, id_hi;
	int32_t nrt; /* next_retry_time */
	int32_t t1;  /* outbox: lock_until; message: last_handle_time */
	int32_t ct;  /* create_time */
	int32_t ut;  /* update_time */
	int32_t rc, mrc;
	uint16_t grp[MAX_DIMS]; /* 0 = SQL NULL */
	uint8_t status;
	uint16_t flags;
};

struct big {
	uint64_t id;
	int64_t ct, ut;
};

struct name {
	char *display; /* the first spelling seen */
	char *key;     /* WEIGHT_STRING() */
	size_t keylen;
};

struct names {
	size_t n; /* names[1..n]; index 0 is SQL NULL */
	size_t cap;
	struct name *v;
	uint32_t *slots; /* open addressing: name index, 0 = empty */
	size_t nslots;
	size_t bytes; /* the strings */
};

/* Every spelling of a group value met (in the key reads, or asked of the server for the window
 * counts' groups), with its collation key: the window counts' GROUP BY spells a group as it
 * likes, and the mirror's backlog for it must land on that row (ev_mirror_adopt_spellings). */
struct spell {
	char *s;
	size_t len;
	char *key;
	size_t keylen;
};

struct spells {
	size_t n; /* v[1..n] */
	size_t cap;
	struct spell *v;
	uint32_t *slots; /* open addressing on the spelling: index into v, 0 = empty */
	size_t nslots;
	size_t bytes;
};

#define MAX_SPELLS (4 * MAX_NAMES)

struct ev_mirror {
	enum ev_table_kind table;
	const struct ev_table_def *def;
	struct entry *e;
	size_t n, cap;
	struct entry *fresh; /* this refresh's new rows, unsorted */
	size_t nfresh, fresh_cap;
	uint64_t *want;
	size_t nwant, want_cap;
	uint64_t *verify; /* this refresh's rolling share */
	size_t nverify, verify_cap;
	/* The share's rows whose checksum differed: the server's checksum, to compare with the
	 * mirror's once they are read whole (ev_mirror_share_settle). */
	struct share_miss {
		uint64_t id;
		uint32_t crc;
	} * miss;
	size_t nmiss, miss_cap;
	bool share_plain;  /* the share compares values (its checksums cannot be reproduced) */
	uint64_t *touched; /* rows evtop wrote, read by key at the next refresh */
	size_t ntouched, touched_cap;
	struct big *bigs; /* sorted by id */
	size_t nbigs, bigs_cap;
	struct names names[MAX_DIMS];
	struct spells spells[MAX_DIMS];
	size_t cursor;  /* the rolling re-verification's next position */
	size_t counted; /* rows counted in the process-wide total */
	bool over_cap;
	struct ev_mirror_stats st;
	bool checked;
	double last_check; /* monotonic seconds */
	long long drift;   /* rows found off by every full check together */
	/* The flows (core/flow.h): the refresh's server time, the created counts read for it. */
	struct ev_flow *flow;
	int rate_s; /* the rates' span (0: EV_MIRROR_RATE_S) */
	int64_t now;
	/* The last full check that ran to its end: the snapshot's server time then. */
	int64_t checked_at;
	bool checked_ok;
	bool have_now;
	char now_text[32]; /* the same, as the server wrote it */
	int64_t cut;       /* created counted up to here (server seconds) */
	bool have_cut;
	int64_t next_cut; /* this refresh's cut, once the created counts are read */
	bool created_known;
	struct ev_flow_in *created[2]; /* per group of dims 0 and 1, this refresh */
	size_t ncreated[2];
	long long created_total;
	unsigned refreshes;
	int64_t failed_read_at; /* server time the failed range was last read */
	bool failed_carried;    /* this refresh did not read it */
	size_t nfailed;         /* rows of status 3 */
	size_t npending;        /* rows of status 0 */
	size_t nprocessing;     /* rows of status 1 */
	struct digest dg[4];    /* by status: 0 and 3 */
	uint64_t pend_max[2];   /* the highest pending id after the last refresh and the one
	                           before: the pending arrivals are read above the older */
	bool pend_known[2];
	bool correcting; /* ev_mirror_want_all: the end to come is not a refresh */
};

static atomic_size_t g_cap = EV_MIRROR_CAP_DEFAULT;
static atomic_size_t g_used;

void ev_mirror_set_cap(size_t rows)
{
	atomic_store(&g_cap, rows ? rows : EV_MIRROR_CAP_DEFAULT);
}

size_t ev_mirror_cap(void)
{
	return atomic_load(&g_cap);
}

static void account(struct ev_mirror *m)
{
	if (m->n >= m->counted)
		atomic_fetch_add(&g_used, m->n - m->counted);
	else
		atomic_fetch_sub(&g_used, m->counted - m->n);
	m->counted = m->n;
}

size_t ev_mirror_room(const struct ev_mirror *m)
{
	size_t cap = atomic_load(&g_cap), used = atomic_load(&g_used);
	size_t others = used > m->counted ? used - m->counted : 0;
	return cap > others ? cap - others : 0;
}

static uint64_t id_of(const struct entry *e)
{
	return (uint64_t)e->id_hi << 32 | e->id_lo;
}

static void set_id(struct entry *e, uint64_t id)
{
	e->id_lo = (uint32_t)id;
	e->id_hi = (uint32_t)(id >> 32);
}

struct ev_mirror *ev_mirror_new(enum ev_table_kind table)
{
	struct ev_mirror *m = ev_xcalloc(1, sizeof(*m));
	m->table = table;
	m->def = ev_model_table(table);
	return m;
}

static void names_clear(struct names *nm)
{
	for (size_t i = 1; i <= nm->n; i++) {
		free(nm->v[i].display);
		free(nm->v[i].key);
	}
	free(nm->v);
	free(nm->slots);
	memset(nm, 0, sizeof(*nm));
}

static void spells_clear(struct spells *sp)
{
	for (size_t i = 1; i <= sp->n; i++) {
		free(sp->v[i].s);
		free(sp->v[i].key);
	}
	free(sp->v);
	free(sp->slots);
	memset(sp, 0, sizeof(*sp));
}

void ev_mirror_reset(struct ev_mirror *m)
{
	free(m->e);
	free(m->fresh);
	free(m->want);
	free(m->verify);
	free(m->miss);
	m->miss = NULL;
	m->nmiss = m->miss_cap = 0;
	free(m->bigs);
	free(m->touched);
	m->e = m->fresh = NULL;
	m->want = m->touched = NULL;
	m->ntouched = m->touched_cap = 0;
	m->bigs = NULL;
	m->n = m->cap = m->nfresh = m->fresh_cap = m->nwant = m->want_cap = 0;
	m->nbigs = m->bigs_cap = 0;
	for (int k = 0; k < MAX_DIMS; k++) {
		names_clear(&m->names[k]);
		spells_clear(&m->spells[k]);
	}
	m->cursor = 0;
	/* The flows compare a backlog with the one before: a mirror read anew starts them anew. */
	if (m->flow != NULL)
		ev_flow_reset(m->flow);
	m->have_cut = false;
	for (int k = 0; k < 2; k++) {
		free(m->created[k]);
		m->created[k] = NULL;
		m->ncreated[k] = 0;
	}
	m->created_total = 0;
	m->refreshes = 0;
	m->nfailed = m->npending = m->nprocessing = 0;
	for (int k = 0; k < 4; k++) {
		bool off = m->dg[k].off;
		memset(&m->dg[k], 0, sizeof(m->dg[k]));
		m->dg[k].off = off;
	}
	m->pend_known[0] = m->pend_known[1] = false;
	account(m);
}

void ev_mirror_free(struct ev_mirror **mp)
{
	struct ev_mirror *m = *mp;
	if (m == NULL)
		return;
	ev_mirror_reset(m);
	ev_flow_free(&m->flow);
	free(m);
	*mp = NULL;
}

enum ev_table_kind ev_mirror_table(const struct ev_mirror *m)
{
	return m->table;
}

bool ev_mirror_check_due(struct ev_mirror *m, double now_s, int check_s)
{
	if (m->checked && now_s - m->last_check < (check_s > 0 ? check_s : EV_MIRROR_CHECK_S))
		return false;
	m->checked = true;
	m->last_check = now_s;
	return true;
}

double ev_mirror_check_age(const struct ev_mirror *m, double now_s)
{
	return m->checked ? now_s - m->last_check : -1;
}

void ev_mirror_drift(struct ev_mirror *m, long long rows)
{
	m->drift += rows;
}

void ev_mirror_checked(struct ev_mirror *m)
{
	m->checked_at = m->now;
	m->checked_ok = true;
}

long long ev_mirror_checked_ago(const struct ev_mirror *m)
{
	return m->checked_ok && m->now >= m->checked_at ? (long long)(m->now - m->checked_at) : -1;
}

long long ev_mirror_drift_total(const struct ev_mirror *m)
{
	return m->drift;
}

size_t ev_mirror_rows(const struct ev_mirror *m)
{
	return m->n;
}

bool ev_mirror_is_over_cap(const struct ev_mirror *m)
{
	return m->over_cap;
}

size_t ev_mirror_bytes(const struct ev_mirror *m)
{
	size_t b = sizeof(*m) + m->cap * sizeof(struct entry) +
	           m->fresh_cap * sizeof(struct entry) + m->want_cap * sizeof(uint64_t) +
	           m->bigs_cap * sizeof(struct big);
	for (int k = 0; k < MAX_DIMS; k++) {
		const struct names *nm = &m->names[k];
		b += nm->cap * sizeof(struct name) + nm->nslots * sizeof(uint32_t) + nm->bytes;
		const struct spells *sp = &m->spells[k];
		b += sp->cap * sizeof(struct spell) + sp->nslots * sizeof(uint32_t) + sp->bytes;
	}
	return b;
}

/* --- times -------------------------------------------------------------------------------- */

/* Days from 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's days_from_civil). */
static int64_t days_from_civil(int64_t y, unsigned mo, unsigned d)
{
	y -= mo <= 2;
	int64_t era = (y >= 0 ? y : y - 399) / 400;
	unsigned yoe = (unsigned)(y - era * 400);
	unsigned doy = (153 * (mo + (mo > 2 ? -3 : 9)) + 2) / 5 + d - 1;
	unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + (int64_t)doe - 719468;
}

static bool digits(const char *s, int n, int *out)
{
	int v = 0;
	for (int i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return false;
		v = v * 10 + (s[i] - '0');
	}
	*out = v;
	return true;
}

bool ev_mirror_parse_time(const char *s, int64_t *out)
{
	int y, mo, d, h, mi, se;
	if (s == NULL || strlen(s) < 19 || !digits(s, 4, &y) || s[4] != '-' ||
	    !digits(s + 5, 2, &mo) || s[7] != '-' || !digits(s + 8, 2, &d) || s[10] != ' ' ||
	    !digits(s + 11, 2, &h) || s[13] != ':' || !digits(s + 14, 2, &mi) || s[16] != ':' ||
	    !digits(s + 17, 2, &se))
		return false;
	/* A zero date (0000-00-00) or a zero month or day sorts before every real date, as the
	 * server compares them: as day 1 of month 1, less a day for each zero. */
	int64_t days = days_from_civil(y, mo ? (unsigned)mo : 1, d ? (unsigned)d : 1) -
	               (mo == 0) * 31 - (d == 0);
	int64_t secs = days * 86400 + h * 3600 + mi * 60 + se - 946684800;
	/* A fraction makes it later than the whole second: for `x <= NOW()` (NOW() has none),
	 * x counts as the next second. */
	if (s[19] == '.')
		for (const char *p = s + 20; *p >= '0' && *p <= '9'; p++)
			if (*p != '0') {
				secs++;
				break;
			}
	*out = secs;
	return true;
}

/* The 32-bit form: T_NULL for NULL (or what does not parse), clamped to the range. *big is
 * set when it was clamped. */
static int32_t time32(const char *s, int64_t *exact, bool *big)
{
	int64_t v;
	if (!ev_mirror_parse_time(s, &v)) {
		*exact = 0;
		return T_NULL;
	}
	*exact = v;
	if (v < T_LOW || v > T_HIGH) {
		*big = true;
		return v < T_LOW ? T_LOW : T_HIGH;
	}
	return (int32_t)v;
}

static bool parse_u64(const char *s, uint64_t *out)
{
	return ev_parse_u64(s, out);
}

static int32_t int32_of(const char *s)
{
	if (s == NULL)
		return 0;
	long long v = strtoll(s, NULL, 10);
	return v < INT32_MIN ? INT32_MIN : v > INT32_MAX ? INT32_MAX : (int32_t)v;
}

/* --- lookup -------------------------------------------------------------------------------- */

static struct entry *find(struct ev_mirror *m, uint64_t id)
{
	size_t lo = 0, hi = m->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		uint64_t v = id_of(&m->e[mid]);
		if (v == id)
			return &m->e[mid];
		if (v < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

static int entry_cmp(const void *a, const void *b)
{
	uint64_t x = id_of(a), y = id_of(b);
	return x < y ? -1 : x > y;
}

/* Room for n entries in an array grown by a quarter: the rows are most of the memory. */
static void reserve(struct entry **v, size_t *cap, size_t n)
{
	if (n <= *cap)
		return;
	size_t c = *cap + *cap / 4;
	if (c < n)
		c = n;
	if (c < 64)
		c = 64;
	*v = ev_xrealloc(*v, c * sizeof(**v));
	*cap = c;
}

/* The fresh rows into the sorted array (a fresh id already there replaces it). */
static void merge_fresh(struct ev_mirror *m)
{
	if (m->nfresh == 0)
		return;
	qsort(m->fresh, m->nfresh, sizeof(*m->fresh), entry_cmp);
	reserve(&m->e, &m->cap, m->n + m->nfresh);
	/* From the back: i over the old rows, j over the fresh ones, k the place. */
	size_t i = m->n, j = m->nfresh, k = m->n + m->nfresh;
	while (j > 0) {
		if (i > 0 && id_of(&m->e[i - 1]) > id_of(&m->fresh[j - 1]))
			m->e[--k] = m->e[--i];
		else
			m->e[--k] = m->fresh[--j];
	}
	m->n += m->nfresh;
	m->nfresh = 0;
	/* Two rows of one id (read twice: only outside a snapshot): keep the later one. */
	size_t w = 0;
	for (size_t r = 0; r < m->n; r++) {
		if (w > 0 && id_of(&m->e[w - 1]) == id_of(&m->e[r])) {
			m->e[w - 1] = m->e[r];
			continue;
		}
		m->e[w++] = m->e[r];
	}
	m->n = w;
}

/* --- a refresh ------------------------------------------------------------------------------ */

void ev_mirror_begin(struct ev_mirror *m)
{
	for (size_t i = 0; i < m->n; i++)
		m->e[i].flags &= (uint16_t) ~(F_SEEN | F_WANT | F_GONE | F_LEFT | F_FAILIN |
		                              F_DELLEFT | F_VERIFY);
	m->nfresh = 0;
	m->nwant = 0;
	m->nmiss = 0;
	memset(&m->st, 0, sizeof(m->st));
	m->created_known = false;
	m->created_total = 0;
	for (int k = 0; k < 2; k++) {
		free(m->created[k]);
		m->created[k] = NULL;
		m->ncreated[k] = 0;
	}
	m->failed_carried = false;
}

/* Row id seen in range `status`: a row new to the backlog, or come from another status, is
 * read by key (F_WANT); *was is its status before (-1: new). The entry, valid until the
 * next row. */
static struct entry *member(struct ev_mirror *m, int status, uint64_t id, int *was)
{
	m->st.range_rows++;
	struct entry *e = find(m, id);
	if (e != NULL) {
		*was = e->status;
		if (e->status != status) {
			if (status == 3)
				e->flags |= F_FAILIN;
			e->status = (uint8_t)status;
			e->flags |= F_WANT;
			m->st.changed++;
		}
		e->flags |= F_SEEN;
		return e;
	}
	*was = -1;
	reserve(&m->fresh, &m->fresh_cap, m->nfresh + 1);
	e = &m->fresh[m->nfresh++];
	memset(e, 0, sizeof(*e));
	set_id(e, id);
	e->status = (uint8_t)status;
	e->nrt = e->t1 = e->ct = e->ut = T_NULL;
	e->flags = F_SEEN | F_WANT | (status == 3 ? F_FAILIN : 0);
	m->st.entered++;
	return e;
}

int ev_mirror_range_row(struct ev_mirror *m, int status, const char *id_s, const char *next_retry,
                        const char *retry_count)
{
	uint64_t id;
	if (!parse_u64(id_s, &id))
		return -1;
	int64_t exact;
	bool big = false;
	int32_t nrt = time32(next_retry, &exact, &big);
	int32_t rc = int32_of(retry_count);
	int was;
	struct entry *e = member(m, status, id, &was);
	if (was < 0 || e->nrt != nrt || e->rc != rc) {
		/* The retry columns changed in place: read by key (a status change already is). */
		if (was == status) {
			e->flags |= F_WANT;
			m->st.changed++;
		}
		e->nrt = nrt;
		e->rc = rc;
	}
	return 0;
}

int ev_mirror_lock_row(struct ev_mirror *m, const char *id_s, const char *lock_until)
{
	uint64_t id;
	if (!parse_u64(id_s, &id))
		return -1;
	int was;
	struct entry *e = member(m, 1, id, &was);
	int64_t exact;
	bool big = false;
	int32_t t = time32(lock_until, &exact, &big);
	if (e->t1 != t) {
		e->t1 = t;
		/* Taken again (by whom: locked_by is read by key). */
		if (!(e->flags & F_WANT) && (e->flags & F_KNOWN)) {
			e->flags |= F_WANT;
			m->st.changed++;
		}
	}
	return 0;
}

static void ids_add(uint64_t **v, size_t *n, size_t *cap, uint64_t id)
{
	if (*n == *cap) {
		*cap = *cap ? *cap * 2 : 256;
		*v = ev_xrealloc(*v, *cap * sizeof(**v));
	}
	(*v)[(*n)++] = id;
}

static void want_add(struct ev_mirror *m, uint64_t id)
{
	ids_add(&m->want, &m->nwant, &m->want_cap, id);
}

size_t ev_mirror_ranges_done(struct ev_mirror *m, size_t share, const uint64_t **ids)
{
	merge_fresh(m);
	/* What was not seen left its range: read by key for where it went (success, cancelled,
	 * deleted, or failed while the failed range is carried). */
	for (size_t r = 0; r < m->n; r++)
		if (!(m->e[r].flags & F_SEEN))
			m->e[r].flags |= F_LEFT | F_WANT;
	/* The rows evtop wrote since the last refresh: where they went, whatever their range
	 * said (a failed row cancelled while the failed range is carried). */
	for (size_t k = 0; k < m->ntouched; k++) {
		struct entry *e = find(m, m->touched[k]);
		if (e != NULL)
			e->flags |= F_WANT;
	}
	m->ntouched = 0;
	m->nwant = 0;
	for (size_t r = 0; r < m->n; r++)
		if (m->e[r].flags & F_WANT)
			want_add(m, id_of(&m->e[r]));
	/* The rolling share: the next rows from the cursor, round the array. */
	if (share > m->n)
		share = m->n;
	if (m->cursor >= m->n)
		m->cursor = 0;
	m->nverify = 0;
	for (size_t k = 0; k < share; k++) {
		struct entry *e = &m->e[m->cursor];
		m->cursor = (m->cursor + 1) % m->n;
		if (e->flags & (F_WANT | F_LEFT) || !(e->flags & F_KNOWN))
			continue;
		e->flags |= F_VERIFY;
		ids_add(&m->verify, &m->nverify, &m->verify_cap, id_of(e));
		m->st.reverified++;
	}
	*ids = m->want;
	return m->nwant;
}

size_t ev_mirror_share_ids(const struct ev_mirror *m, const uint64_t **ids)
{
	*ids = m->verify;
	return m->nverify;
}

void ev_mirror_touch(struct ev_mirror *m, uint64_t id)
{
	if (m->ntouched == m->touched_cap) {
		m->touched_cap = m->touched_cap ? m->touched_cap * 2 : 16;
		m->touched = ev_xrealloc(m->touched, m->touched_cap * sizeof(*m->touched));
	}
	m->touched[m->ntouched++] = id;
}

size_t ev_mirror_want_all(struct ev_mirror *m, const uint64_t **ids)
{
	/* A correction within a refresh: its end is not a refresh of its own for the flows. */
	m->correcting = true;
	m->nwant = 0;
	for (size_t r = 0; r < m->n; r++) {
		m->e[r].flags |= F_WANT;
		want_add(m, id_of(&m->e[r]));
	}
	*ids = m->want;
	return m->nwant;
}

size_t ev_mirror_share(const struct ev_mirror *m, double interval_s, int reverify_s)
{
	if (m->n == 0 || reverify_s <= 0)
		return 0;
	double s = (double)m->n * (interval_s > 0 ? interval_s : 1) / reverify_s;
	size_t share = (size_t)s + ((double)(size_t)s < s);
	return share < 1 ? 1 : share;
}

/* --- the key reads -------------------------------------------------------------------------- */

static size_t name_hash(const char *k, size_t len)
{
	uint64_t h = 14695981039346656037ull;
	for (size_t i = 0; i < len; i++) {
		h ^= (unsigned char)k[i];
		h *= 1099511628211ull;
	}
	return (size_t)(h ^ (h >> 29));
}

static uint32_t *name_slot(struct names *nm, const char *key, size_t len)
{
	size_t mask = nm->nslots - 1;
	for (size_t i = name_hash(key, len) & mask;; i = (i + 1) & mask) {
		uint32_t s = nm->slots[i];
		if (s == 0 || (nm->v[s].keylen == len && memcmp(nm->v[s].key, key, len) == 0))
			return &nm->slots[i];
	}
}

static void names_rehash(struct names *nm, size_t nslots)
{
	free(nm->slots);
	nm->nslots = nslots;
	nm->slots = ev_xcalloc(nslots, sizeof(*nm->slots));
	for (size_t i = 1; i <= nm->n; i++)
		*name_slot(nm, nm->v[i].key, nm->v[i].keylen) = (uint32_t)i;
}

/* The index of a group value (its collation key, and its text); 0 for NULL. Past MAX_NAMES
 * names, a new one shares the last. */
static uint16_t intern(struct names *nm, const struct ev_cell *value, const struct ev_cell *key)
{
	if (value == NULL || value->s == NULL)
		return 0;
	const char *k = key && key->s ? key->s : value->s;
	size_t klen = key && key->s ? key->len : value->len;
	if (nm->nslots == 0)
		names_rehash(nm, 64);
	uint32_t *slot = name_slot(nm, k, klen);
	if (*slot != 0)
		return (uint16_t)*slot;
	if (nm->n >= MAX_NAMES)
		return MAX_NAMES;
	if (nm->n + 2 > nm->cap) {
		nm->cap = nm->cap ? nm->cap * 2 : 16;
		nm->v = ev_xrealloc(nm->v, nm->cap * sizeof(*nm->v));
	}
	size_t i = ++nm->n;
	nm->v[i].display = ev_xstrndup(value->s, value->len);
	nm->v[i].key = ev_xmalloc(klen ? klen : 1);
	memcpy(nm->v[i].key, k, klen);
	nm->v[i].keylen = klen;
	nm->bytes += value->len + 1 + (klen ? klen : 1);
	*slot = (uint32_t)i;
	if (nm->n * 2 > nm->nslots)
		names_rehash(nm, nm->nslots * 2);
	return (uint16_t)i;
}

static uint32_t *spell_slot(struct spells *sp, const char *s, size_t len)
{
	size_t mask = sp->nslots - 1;
	for (size_t i = name_hash(s, len) & mask;; i = (i + 1) & mask) {
		uint32_t x = sp->slots[i];
		if (x == 0 || (sp->v[x].len == len && memcmp(sp->v[x].s, s, len) == 0))
			return &sp->slots[i];
	}
}

static const struct spell *spell_find(const struct spells *sp, const char *s, size_t len)
{
	if (sp->nslots == 0)
		return NULL;
	uint32_t x = *spell_slot((struct spells *)sp, s, len);
	return x ? &sp->v[x] : NULL;
}

static void spells_rehash(struct spells *sp, size_t nslots)
{
	free(sp->slots);
	sp->nslots = nslots;
	sp->slots = ev_xcalloc(nslots, sizeof(*sp->slots));
	for (size_t i = 1; i <= sp->n; i++)
		*spell_slot(sp, sp->v[i].s, sp->v[i].len) = (uint32_t)i;
}

/* Record that spelling s has collation key `key` (the first one recorded stands). */
static void spell_add(struct spells *sp, const char *s, size_t len, const char *key, size_t keylen)
{
	if (sp->nslots == 0)
		spells_rehash(sp, 64);
	uint32_t *slot = spell_slot(sp, s, len);
	if (*slot != 0 || sp->n >= MAX_SPELLS)
		return;
	if (sp->n + 2 > sp->cap) {
		sp->cap = sp->cap ? sp->cap * 2 : 16;
		sp->v = ev_xrealloc(sp->v, sp->cap * sizeof(*sp->v));
	}
	size_t i = ++sp->n;
	sp->v[i].s = ev_xstrndup(s, len);
	sp->v[i].len = len;
	sp->v[i].key = ev_xmalloc(keylen ? keylen : 1);
	memcpy(sp->v[i].key, key, keylen);
	sp->v[i].keylen = keylen;
	sp->bytes += len + 1 + (keylen ? keylen : 1);
	*slot = (uint32_t)i;
	if (sp->n * 2 > sp->nslots)
		spells_rehash(sp, sp->nslots * 2);
}

static void big_set(struct ev_mirror *m, uint64_t id, int64_t ct, int64_t ut)
{
	size_t lo = 0, hi = m->nbigs;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (m->bigs[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < m->nbigs && m->bigs[lo].id == id) {
		m->bigs[lo].ct = ct;
		m->bigs[lo].ut = ut;
		return;
	}
	if (m->nbigs == m->bigs_cap) {
		m->bigs_cap = m->bigs_cap ? m->bigs_cap * 2 : 8;
		m->bigs = ev_xrealloc(m->bigs, m->bigs_cap * sizeof(*m->bigs));
	}
	memmove(&m->bigs[lo + 1], &m->bigs[lo], (m->nbigs - lo) * sizeof(*m->bigs));
	m->bigs[lo] = (struct big){id, ct, ut};
	m->nbigs++;
}

static const struct big *big_get(const struct ev_mirror *m, uint64_t id)
{
	size_t lo = 0, hi = m->nbigs;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (m->bigs[mid].id == id)
			return &m->bigs[mid];
		if (m->bigs[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

/* The collation key of the expression x (x appears four times). */
#define KEY_OF(x) "WEIGHT_STRING(IF(RTRIM(" x ") = " x ", RTRIM(" x "), " x "))"

/* The key read's columns: these, then per dimension its value and its collation key
 * (KEY_OF). */
enum {
	PK_ID,
	PK_STATUS,
	PK_DELETED,
	PK_VERSION,
	PK_RC,
	PK_MRC,
	PK_NRT,
	PK_CT,
	PK_UT,
	PK_T1,
	PK_DIMS,
};

/* The length a primary-key read's list of n ids is padded to (at most half as long again). */
static size_t pk_list_len(size_t n)
{
	static const size_t lens[] = {4, 8, 16, 32, 64, 128, 192, 256, 384, EV_MIRROR_PK_BATCH};
	for (size_t i = 0; i < sizeof(lens) / sizeof(lens[0]); i++)
		if (n <= lens[i])
			return lens[i];
	return n;
}

/* A read of ids[0..n) by primary key: the key read, with each dimension's value and its
 * collation key, or the rolling share's compare (dims false), with the values alone: the
 * collation keys (WEIGHT_STRING) are half the server's time of a key read. */
static struct ev_query *key_query(const struct ev_dash_req *req, const uint64_t *ids, size_t n,
                                  bool dims, bool crc)
{
	const struct ev_table_def *t = ev_model_table(req->table);
	struct ev_buf b;
	ev_buf_init(&b);
	if (crc) {
		/* One checksum a row of what the share compares, as share_crc writes it. */
		ev_buf_printf(
		        &b,
		        "/* evtop:dash.mirror.verify */ SELECT id, CRC32(CONCAT_WS('|', %s, "
		        "IFNULL(deleted, 0) <> 0, IFNULL(version, 0) > 0, IFNULL(retry_count, "
		        "0), IFNULL(max_retry_count, 0), IFNULL(next_retry_time, '-'), "
		        "IFNULL(create_time, '-'), IFNULL(update_time, '-'), IFNULL(%s, '-')",
		        t->status_col, t->has_lock ? "lock_until" : "last_handle_time");
		for (size_t k = 0; k < t->ndimensions; k++)
			ev_buf_printf(&b, ", IFNULL(%s, '-')", t->dimensions[k].column);
		ev_buf_adds(&b, "))");
	} else {
		ev_buf_printf(&b,
		              "/* evtop:%s */ SELECT id, %s, deleted, version, retry_count, "
		              "max_retry_count, next_retry_time, create_time, update_time, %s",
		              dims ? "dash.mirror.rows" : "dash.mirror.verify", t->status_col,
		              t->has_lock ? "lock_until" : "last_handle_time");
		/* The collation key of a group value: what GROUP BY groups by. Trailing spaces
		 * count only where the collation says so (a PAD SPACE collation, as every MariaDB
		 * utf8mb4 one but the _nopad_ ones, compares 'a' and 'a ' equal; WEIGHT_STRING
		 * keeps the spaces). */
		for (size_t k = 0; k < t->ndimensions; k++) {
			const char *c = t->dimensions[k].column;
			if (dims)
				ev_buf_printf(&b, ", %s, " KEY_OF("%s"), c, c, c, c, c);
			else
				ev_buf_printf(&b, ", %s", c);
		}
	}
	ev_buf_printf(&b, " FROM `%s` WHERE ", req->table_name ? req->table_name : t->default_name);
	/* Two lists: ids below 2^63 and ids from 2^63 up. One IN list of three or more values
	 * that mixes both is no range on the primary key for MariaDB (10.11: a full index scan);
	 * each list alone, and their OR, is. */
	struct ev_query *q = ev_xcalloc(1, sizeof(*q));
	for (int big = 0, lists = 0; big <= 1; big++) {
		size_t k = 0;
		uint64_t last = 0;
		for (size_t i = 0; i < n; i++) {
			if ((ids[i] >> 63) != (uint64_t)big)
				continue;
			ev_buf_adds(&b, k == 0 ? (lists ? " OR id IN (?" : "id IN (?") : ",?");
			ev_query_add_uint(q, ids[i]);
			last = ids[i];
			k++;
		}
		if (k == 0)
			continue;
		/* The list padded (its last id again) to one of a few lengths: the same texts
		 * refresh after refresh, kept prepared (q->keep). */
		for (size_t want = pk_list_len(k); k < want; k++) {
			ev_buf_adds(&b, ",?");
			ev_query_add_uint(q, last);
		}
		ev_buf_adds(&b, ")");
		lists++;
	}
	if (n == 0)
		ev_buf_adds(&b, "FALSE");
	q->name = dims ? "dash.mirror.rows" : "dash.mirror.verify";
	q->sql = ev_buf_steal(&b);
	q->keep = true;
	q->limit = (int)n;
	return q;
}

struct ev_query *ev_mirror_query_pk(const struct ev_dash_req *req, const uint64_t *ids, size_t n)
{
	return key_query(req, ids, n, true, false);
}

struct ev_query *ev_mirror_query_verify(const struct ev_mirror *m, const struct ev_dash_req *req,
                                        const uint64_t *ids, size_t n)
{
	return key_query(req, ids, n, false, !m->share_plain);
}

void ev_mirror_pk_row(struct ev_mirror *m, const struct ev_rowset *rs, size_t row)
{
	if (rs->ncols < PK_DIMS + 2 * m->def->ndimensions)
		return;
	uint64_t id;
	if (!parse_u64(ev_rowset_cell(rs, row, PK_ID)->s, &id))
		return;
	struct entry *e = find(m, id);
	if (e == NULL)
		return;
	const char *st = ev_rowset_cell(rs, row, PK_STATUS)->s;
	int status = st ? atoi(st) : -1;
	const char *del = ev_rowset_cell(rs, row, PK_DELETED)->s;
	bool deleted = del != NULL && strtoll(del, NULL, 10) != 0;
	if (status != 0 && status != 1 && status != 3) {
		e->flags |= F_GONE;
		if (deleted)
			e->flags |= F_DELLEFT;
		return;
	}
	/* Still in the backlog: a row that left its range for the failed one (carried this
	 * refresh), or one the share or a change brought. */
	if ((e->flags & F_LEFT) && status == 3 && e->status != 3)
		e->flags |= F_FAILIN;
	int64_t ct64 = 0, ut64 = 0, x;
	bool big = false;
	e->status = (uint8_t)status;
	e->rc = int32_of(ev_rowset_cell(rs, row, PK_RC)->s);
	e->mrc = int32_of(ev_rowset_cell(rs, row, PK_MRC)->s);
	e->nrt = time32(ev_rowset_cell(rs, row, PK_NRT)->s, &x, &big);
	big = false;
	e->ct = time32(ev_rowset_cell(rs, row, PK_CT)->s, &ct64, &big);
	e->ut = time32(ev_rowset_cell(rs, row, PK_UT)->s, &ut64, &big);
	bool t1big = false;
	e->t1 = time32(ev_rowset_cell(rs, row, PK_T1)->s, &x, &t1big);
	const char *ver = ev_rowset_cell(rs, row, PK_VERSION)->s;
	uint16_t keep = e->flags & (F_SEEN | F_FAILIN);
	e->flags = keep | F_KNOWN;
	if (deleted)
		e->flags |= F_DELETED;
	if (ver != NULL && strtoll(ver, NULL, 10) > 0)
		e->flags |= F_VERSIONED;
	if (big) {
		e->flags |= F_BIG;
		big_set(m, id, ct64, ut64);
	}
	for (size_t k = 0; k < m->def->ndimensions && k < MAX_DIMS; k++) {
		const struct ev_cell *v = ev_rowset_cell(rs, row, PK_DIMS + 2 * k);
		const struct ev_cell *key = ev_rowset_cell(rs, row, PK_DIMS + 2 * k + 1);
		e->grp[k] = intern(&m->names[k], v, key);
		if (v->s != NULL && key->s != NULL &&
		    spell_find(&m->spells[k], v->s, v->len) == NULL)
			spell_add(&m->spells[k], v->s, v->len, key->s, key->len);
	}
	m->st.pk_reads++;
}

/* Whether time text s reads as t (a time outside the 32-bit range never does: read whole). */
static bool same_time(const char *s, int32_t t)
{
	int64_t x;
	bool big = false;
	int32_t v = time32(s, &x, &big);
	return !big && v == t;
}

/* Whether group value v (a cell of the share's read) is entry group g of dimension k: by
 * the collation key of its spelling, when the spelling is known. */
static bool same_group(const struct ev_mirror *m, size_t k, uint16_t g, const struct ev_cell *v)
{
	if (v->s == NULL)
		return g == 0;
	if (g == 0 || g > m->names[k].n)
		return false;
	const struct spell *sp = spell_find(&m->spells[k], v->s, v->len);
	const struct name *nm = &m->names[k].v[g];
	return sp != NULL && sp->keylen == nm->keylen && memcmp(sp->key, nm->key, nm->keylen) == 0;
}

/* CRC-32 (IEEE 802.3, as zlib's and the server's CRC32()). */
static uint32_t crc32_of(const char *p, size_t n)
{
	static uint32_t table[256];
	static atomic_bool ready;
	if (!atomic_load(&ready)) {
		for (uint32_t i = 0; i < 256; i++) {
			uint32_t c = i;
			for (int k = 0; k < 8; k++)
				c = c & 1 ? 0xEDB88320u ^ (c >> 1) : c >> 1;
			table[i] = c;
		}
		atomic_store(&ready, true);
	}
	uint32_t c = 0xFFFFFFFFu;
	for (size_t i = 0; i < n; i++)
		c = table[(c ^ (unsigned char)p[i]) & 0xFF] ^ (c >> 8);
	return c ^ 0xFFFFFFFFu;
}

static void format_time(int64_t secs, char *buf, size_t size);

static void time_text(struct ev_buf *b, int64_t t, bool null)
{
	char buf[32];
	if (null) {
		ev_buf_adds(b, "|-");
		return;
	}
	format_time(t, buf, sizeof(buf));
	ev_buf_printf(b, "|%s", buf);
}

/* The share's checksum of entry e, as key_query's CRC32(CONCAT_WS(...)) computes it from the
 * row: the values as the server writes them, each group by its first spelling met. */
static uint32_t share_crc(const struct ev_mirror *m, const struct entry *e)
{
	struct ev_buf b;
	ev_buf_init(&b);
	ev_buf_printf(&b, "%d|%d|%d|%d|%d", e->status, !!(e->flags & F_DELETED),
	              !!(e->flags & F_VERSIONED), e->rc, e->mrc);
	const struct big *bg = (e->flags & F_BIG) ? big_get(m, id_of(e)) : NULL;
	time_text(&b, e->nrt, e->nrt == T_NULL);
	time_text(&b, bg ? bg->ct : e->ct, e->ct == T_NULL);
	time_text(&b, bg ? bg->ut : e->ut, e->ut == T_NULL);
	time_text(&b, e->t1, e->t1 == T_NULL);
	for (size_t k = 0; k < m->def->ndimensions && k < MAX_DIMS; k++) {
		uint16_t g = e->grp[k];
		ev_buf_printf(&b, "|%s",
		              g == 0 || g > m->names[k].n ? "-" : m->names[k].v[g].display);
	}
	uint32_t c = crc32_of(b.data ? b.data : "", b.len);
	ev_buf_free(&b);
	return c;
}

void ev_mirror_verify_row(struct ev_mirror *m, const struct ev_rowset *rs, size_t row)
{
	if (!m->share_plain) {
		uint64_t id, crc;
		if (rs->ncols < 2 || !parse_u64(ev_rowset_cell(rs, row, 0)->s, &id) ||
		    !parse_u64(ev_rowset_cell(rs, row, 1)->s, &crc))
			return;
		struct entry *e = find(m, id);
		if (e == NULL || !(e->flags & F_VERIFY) || (e->flags & F_WANT))
			return;
		if (share_crc(m, e) != (uint32_t)crc) {
			e->flags |= F_WANT;
			if (m->nmiss == m->miss_cap) {
				m->miss_cap = m->miss_cap ? m->miss_cap * 2 : 64;
				m->miss = ev_xrealloc(m->miss, m->miss_cap * sizeof(*m->miss));
			}
			m->miss[m->nmiss++] = (struct share_miss){id, (uint32_t)crc};
		}
		return;
	}
	if (rs->ncols < PK_DIMS + m->def->ndimensions)
		return;
	uint64_t id;
	if (!parse_u64(ev_rowset_cell(rs, row, PK_ID)->s, &id))
		return;
	struct entry *e = find(m, id);
	if (e == NULL || !(e->flags & F_VERIFY) || (e->flags & F_WANT))
		return;
	const char *st = ev_rowset_cell(rs, row, PK_STATUS)->s;
	const char *del = ev_rowset_cell(rs, row, PK_DELETED)->s;
	const char *ver = ev_rowset_cell(rs, row, PK_VERSION)->s;
	bool deleted = del != NULL && strtoll(del, NULL, 10) != 0;
	bool versioned = ver != NULL && strtoll(ver, NULL, 10) > 0;
	bool same = st != NULL && atoi(st) == e->status && deleted == !!(e->flags & F_DELETED) &&
	            versioned == !!(e->flags & F_VERSIONED) && !(e->flags & F_BIG) &&
	            int32_of(ev_rowset_cell(rs, row, PK_RC)->s) == e->rc &&
	            int32_of(ev_rowset_cell(rs, row, PK_MRC)->s) == e->mrc &&
	            same_time(ev_rowset_cell(rs, row, PK_NRT)->s, e->nrt) &&
	            same_time(ev_rowset_cell(rs, row, PK_CT)->s, e->ct) &&
	            same_time(ev_rowset_cell(rs, row, PK_UT)->s, e->ut) &&
	            same_time(ev_rowset_cell(rs, row, PK_T1)->s, e->t1);
	for (size_t k = 0; same && k < m->def->ndimensions && k < MAX_DIMS; k++)
		same = same_group(m, k, e->grp[k], ev_rowset_cell(rs, row, PK_DIMS + k));
	if (!same)
		e->flags |= F_WANT;
}

bool ev_mirror_share_plain(const struct ev_mirror *m)
{
	return m->share_plain;
}

bool ev_mirror_share_settle(struct ev_mirror *m)
{
	/* Read whole, a row the checksum said had changed now has the server's checksum, unless
	 * the server writes a value otherwise (a time with a fraction of a second or outside the
	 * mirror's range, a group spelt otherwise than its first spelling): the share then
	 * compares values from now on. */
	bool plain = false;
	for (size_t k = 0; k < m->nmiss && !plain; k++) {
		const struct entry *e = find(m, m->miss[k].id);
		if (e != NULL && (e->flags & F_KNOWN) && !(e->flags & (F_GONE | F_WANT)) &&
		    share_crc(m, e) != m->miss[k].crc)
			plain = true;
	}
	m->nmiss = 0;
	if (plain && !m->share_plain) {
		m->share_plain = true;
		return true;
	}
	return false;
}

size_t ev_mirror_verify_done(struct ev_mirror *m, const uint64_t **ids)
{
	m->nwant = 0;
	for (size_t k = 0; k < m->nverify; k++) {
		struct entry *e = find(m, m->verify[k]);
		if (e != NULL && (e->flags & F_WANT) && (e->flags & F_VERIFY)) {
			want_add(m, m->verify[k]);
			m->st.changed++;
		}
	}
	*ids = m->want;
	return m->nwant;
}

/* The dimensions the flows are kept for: event_type (0), and topic (1) on the outbox. */
static int flow_dims(const struct ev_mirror *m)
{
	return m->def->has_lock ? 2 : 1;
}

static void flow_add(struct ev_flow_in **v, size_t *n, size_t g, const struct ev_flow_in *x)
{
	if (g >= *n) {
		size_t nn = g + 16;
		*v = ev_xrealloc(*v, nn * sizeof(**v));
		memset(*v + *n, 0, (nn - *n) * sizeof(**v));
		*n = nn;
	}
	(*v)[g].backlog += x->backlog;
	(*v)[g].deleted_left += x->deleted_left;
	(*v)[g].failed_in += x->failed_in;
	(*v)[g].created += x->created;
}

void ev_mirror_end(struct ev_mirror *m, struct ev_mirror_stats *st)
{
	merge_fresh(m);
	struct ev_flow_in total = {0}, *groups[2] = {NULL, NULL};
	size_t ngroups[2] = {0, 0};
	int nd = flow_dims(m);
	/* A row still wanted was not found by its key (deleted outright; a row new to a range:
	 * only outside a snapshot), or its key read says it left: not in the backlog. */
	size_t w = 0;
	for (size_t r = 0; r < m->n; r++) {
		struct entry *e = &m->e[r];
		struct ev_flow_in x = {0};
		bool unread = !(e->flags & F_GONE) && (e->flags & F_WANT) &&
		              (!(e->flags & F_KNOWN) || (e->flags & F_LEFT));
		if ((e->flags & F_GONE) || unread) {
			m->st.left++;
			if (unread || (e->flags & F_DELLEFT)) {
				x.deleted_left = 1;
				total.deleted_left++;
				for (int k = 0; k < nd; k++)
					flow_add(&groups[k], &ngroups[k], e->grp[k], &x);
			}
			if (r < m->cursor && m->cursor > 0)
				m->cursor--;
			continue;
		}
		e->flags &= (uint16_t)~F_WANT;
		x.backlog = 1;
		x.failed_in = (e->flags & F_FAILIN) != 0;
		total.backlog++;
		total.failed_in += x.failed_in;
		for (int k = 0; k < nd; k++)
			flow_add(&groups[k], &ngroups[k], e->grp[k], &x);
		m->e[w++] = *e;
	}
	m->n = w;
	if (m->cursor >= m->n)
		m->cursor = 0;
	/* The flows of this refresh: the created counts read for it, per group. */
	total.created = m->created_total;
	for (int k = 0; k < nd; k++)
		for (size_t g = 0; g < m->ncreated[k]; g++) {
			struct ev_flow_in c = {0};
			c.created = m->created[k][g].created;
			if (c.created != 0)
				flow_add(&groups[k], &ngroups[k], g, &c);
		}
	if (m->have_now && !m->correcting) {
		if (m->flow == NULL)
			m->flow = ev_flow_new();
		const struct ev_flow_in *gv[EV_FLOW_DIMS] = {groups[0], groups[1]};
		ev_flow_push(m->flow, m->now, &total, gv, ngroups, m->created_known);
	}
	free(groups[0]);
	free(groups[1]);
	bool correcting = m->correcting;
	if (!correcting)
		m->refreshes++;
	m->correcting = false;
	if (!m->failed_carried && m->have_now)
		m->failed_read_at = m->now;
	m->nfailed = m->npending = m->nprocessing = 0;
	uint64_t pmax = 0;
	for (size_t r = 0; r < m->n; r++) {
		m->nfailed += m->e[r].status == 3;
		m->nprocessing += m->e[r].status == 1;
		if (m->e[r].status == 0) {
			m->npending++;
			if (id_of(&m->e[r]) > pmax)
				pmax = id_of(&m->e[r]);
		}
	}
	/* A range read whole, or verified, is the base its later digests compare with. */
	for (int k = 0; k < 4; k++) {
		struct digest *g = &m->dg[k];
		if (!g->carried || g->checked)
			g->primed = true;
		g->carried = g->checked = false;
	}
	if (!correcting) {
		m->pend_max[1] = m->pend_max[0];
		m->pend_known[1] = m->pend_known[0];
		m->pend_max[0] = pmax;
		m->pend_known[0] = true;
	}
	/* Give back what a backlog that shrank a lot no longer needs. */
	if (m->cap > 1024 && m->n < m->cap / 4) {
		m->cap = m->n + m->n / 4 + 64;
		m->e = ev_xrealloc(m->e, m->cap * sizeof(*m->e));
	}
	/* The refresh's own lists go: their room is a refresh's, not the mirror's. */
	if (m->fresh_cap > 1024) {
		free(m->fresh);
		m->fresh = NULL;
		m->fresh_cap = 0;
	}
	if (m->want_cap > 1024) {
		free(m->want);
		m->want = NULL;
		m->want_cap = m->nwant = 0;
	}
	account(m);
	m->over_cap = false;
	m->st.rows = m->n;
	if (st != NULL)
		*st = m->st;
}

struct ev_query *ev_mirror_query_clock(void)
{
	struct ev_query *q = ev_xcalloc(1, sizeof(*q));
	q->name = "dash.mirror.clock";
	q->sql = ev_xstrdup("/* evtop:dash.mirror.clock */ SELECT NOW()");
	q->limit = 1;
	q->keep = true;
	return q;
}

void ev_mirror_clock(struct ev_mirror *m, const char *now)
{
	m->have_now = ev_mirror_parse_time(now, &m->now);
	snprintf(m->now_text, sizeof(m->now_text), "%s", now ? now : "");
}

const char *ev_mirror_now(const struct ev_mirror *m)
{
	return m->now_text;
}

bool ev_mirror_read_failed(const struct ev_mirror *m)
{
	return m->n == 0 || m->nfailed < EV_MIRROR_FAILED_SMALL ||
	       m->refreshes % EV_MIRROR_FAILED_EVERY == 0;
}

void ev_mirror_carry_range(struct ev_mirror *m, int status)
{
	for (size_t i = 0; i < m->n; i++)
		if (m->e[i].status == status)
			m->e[i].flags |= F_SEEN;
	if (status == 3)
		m->failed_carried = true;
}

long long ev_mirror_failed_age(const struct ev_mirror *m)
{
	return m->have_now && m->refreshes > 0 ? m->now - m->failed_read_at : -1;
}

struct civil {
	int64_t y;
	unsigned mo, d;
	int h, mi, se;
};

/* The civil time of seconds since 2000-01-01 (Howard Hinnant's civil_from_days). */
static struct civil civil_of(int64_t secs)
{
	int64_t z = secs + 946684800;
	int64_t days = z >= 0 ? z / 86400 : (z - 86399) / 86400;
	int64_t sod = z - days * 86400;
	days += 719468;
	int64_t era = (days >= 0 ? days : days - 146096) / 146097;
	unsigned doe = (unsigned)(days - era * 146097);
	unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
	int64_t y = (int64_t)yoe + era * 400;
	unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
	unsigned mp = (5 * doy + 2) / 153;
	unsigned d = doy - (153 * mp + 2) / 5 + 1;
	unsigned mo = mp < 10 ? mp + 3 : mp - 9;
	y += mo <= 2;
	return (struct civil){.y = y,
	                      .mo = mo,
	                      .d = d,
	                      .h = (int)(sod / 3600),
	                      .mi = (int)(sod / 60 % 60),
	                      .se = (int)(sod % 60)};
}

/* 'YYYY-MM-DD hh:mm:ss' of seconds since 2000-01-01. */
static void format_time(int64_t secs, char *buf, size_t size)
{
	struct civil c = civil_of(secs);
	if (c.y < 0 || c.y > 9999) {
		snprintf(buf, size, "%s", c.y < 0 ? "0000-01-01 00:00:00" : "9999-12-31 23:59:59");
		return;
	}
	snprintf(buf, size, "%04d-%02u-%02u %02d:%02d:%02d", (int)c.y, c.mo % 13, c.d % 32,
	         c.h % 24, c.mi % 60, c.se % 60);
}

/* --- the range digests ---------------------------------------------------------------------- */

static atomic_size_t g_digest_min = EV_MIRROR_DIGEST_MIN;

void ev_mirror_set_digest_min(size_t rows)
{
	atomic_store(&g_digest_min, rows ? rows : EV_MIRROR_DIGEST_MIN);
}

/* A row's part of its range's digest, as DIGEST_SQL computes it on the server: next_retry_time
 * as DATETIME + 0 gives it (YYYYMMDDhhmmss, 1 for NULL), retry_count offset to be >= 0, both
 * mixed with the id, times the id modulo another prime, so that rows that swap values, or a
 * row and its id changing together, do not cancel out in the XOR. The factors are below 2^32:
 * the product fits in 64 bits unsigned. */
#define DIGEST_P1 4294967291u
#define DIGEST_P2 4294967279u
#define DIGEST_OF(t, rc)                                                                           \
	"COUNT(*), BIT_XOR((id MOD 4294967291) * ((id ^ (IFNULL(" t " + 0, 1) << 8) ^ (" rc        \
	" + 2147483648)) MOD 4294967279))"
#define DIGEST_SQL DIGEST_OF("next_retry_time", "IFNULL(retry_count, 0)")
/* The outbox's processing range through its lock index: lock_until in place of
 * next_retry_time, no retry_count. */
#define DIGEST_LOCK_SQL DIGEST_OF("lock_until", "0")

static uint64_t row_digest(uint64_t id, int32_t nrt, int32_t rc)
{
	uint64_t n = 1;
	if (nrt != T_NULL) {
		struct civil c = civil_of(nrt);
		n = (((((uint64_t)c.y * 100 + c.mo) * 100 + c.d) * 100 + (uint64_t)c.h) * 100 +
		     (uint64_t)c.mi) *
		            100 +
		    (uint64_t)c.se;
	}
	uint64_t r = (uint64_t)((int64_t)rc + 2147483648LL);
	return (id % DIGEST_P1) * ((id ^ (n << 8) ^ r) % DIGEST_P2);
}

uint64_t ev_mirror_row_digest(uint64_t id, const char *next_retry, const char *retry_count)
{
	int64_t exact;
	bool big = false;
	return row_digest(id, time32(next_retry, &exact, &big), int32_of(retry_count));
}

/* The digest of the rows of `status` the mirror holds: with F_SEEN only (what a range read
 * just sent), or every row still in the range after the key reads. */
static void digest_of(const struct ev_mirror *m, int status, bool seen, uint64_t *count,
                      uint64_t *x)
{
	*count = *x = 0;
	for (size_t i = 0; i < m->n; i++) {
		const struct entry *e = &m->e[i];
		if (e->status != status || (e->flags & F_GONE))
			continue;
		if (seen ? !(e->flags & F_SEEN) : (e->flags & F_WANT) && (e->flags & F_LEFT))
			continue;
		(*count)++;
		*x ^= status == 1 && m->dg[1].locks ? row_digest(id_of(e), e->t1, 0)
		                                    : row_digest(id_of(e), e->nrt, e->rc);
	}
}

bool ev_mirror_digest_due(struct ev_mirror *m, int status)
{
	if (status != 0 && status != 1 && status != 3)
		return false;
	struct digest *g = &m->dg[status];
	size_t n = status == 0 ? m->npending : status == 1 ? m->nprocessing : m->nfailed;
	if (!g->primed || g->off || n < atomic_load(&g_digest_min))
		return false;
	if (g->rest > 0) {
		g->rest--;
		return false;
	}
	return true;
}

void ev_mirror_carry_to_verify(struct ev_mirror *m, int status, bool locks)
{
	ev_mirror_carry_range(m, status);
	m->dg[status].locks = locks;
	m->dg[status].carried = true;
	m->dg[status].checked = false;
}

bool ev_mirror_verify_pending(const struct ev_mirror *m, int status)
{
	return status >= 0 && status <= 3 && status != 2 && m->dg[status].carried &&
	       !m->dg[status].checked;
}

uint64_t ev_mirror_arrivals_above(const struct ev_mirror *m)
{
	return m->pend_known[1] ? m->pend_max[1] : 0;
}

bool ev_mirror_digest_check(struct ev_mirror *m, int status, const char *count, const char *x)
{
	struct digest *g = &m->dg[status];
	uint64_t sc = 0, sx = 0, mc, mx;
	if (!ev_parse_u64(count, &sc) || (x != NULL && !ev_parse_u64(x, &sx))) {
		g->off = true;
		return false;
	}
	g->count = sc;
	g->x = sx;
	digest_of(m, status, false, &mc, &mx);
	if (mc != sc || mx != sx)
		return false;
	g->backoff = 0;
	g->checked = true;
	if (status == 3)
		m->failed_carried = false;
	m->st.digests++;
	return true;
}

void ev_mirror_digest_failed(struct ev_mirror *m, int status)
{
	m->dg[status].off = true;
}

void ev_mirror_reread_begin(struct ev_mirror *m, int status)
{
	for (size_t i = 0; i < m->n; i++)
		if (m->e[i].status == status)
			m->e[i].flags &= (uint16_t)~F_SEEN;
	m->nfresh = 0;
}

size_t ev_mirror_reread_done(struct ev_mirror *m, int status, bool *distrust, const uint64_t **ids)
{
	merge_fresh(m);
	struct digest *g = &m->dg[status];
	uint64_t c, x;
	digest_of(m, status, true, &c, &x);
	/* The rows the server just sent are the rows its digest was of (one snapshot): another
	 * digest of them here is a digest this server computes otherwise (a time with a fraction
	 * of a second, a value outside the mirror's range). The range is read whole from now on. */
	*distrust = (c != g->count || x != g->x) && !g->off;
	if (c != g->count || x != g->x)
		g->off = true;
	m->nwant = 0;
	for (size_t r = 0; r < m->n; r++) {
		struct entry *e = &m->e[r];
		if (e->status != status || (e->flags & F_GONE))
			continue;
		if (!(e->flags & F_SEEN))
			e->flags |= F_LEFT | F_WANT;
		if (e->flags & F_WANT)
			want_add(m, id_of(e));
	}
	g->checked = true;
	g->backoff = g->backoff ? (g->backoff < 32 ? g->backoff * 2 : 32) : 2;
	g->rest = g->backoff;
	if (status == 3)
		m->failed_carried = false;
	m->st.rereads++;
	*ids = m->want;
	return m->nwant;
}

struct ev_query *ev_mirror_query_created(struct ev_mirror *m, const struct ev_dash_req *req,
                                         int settle_s)
{
	const struct ev_table_def *t = m->def;
	if (!m->have_now)
		return NULL;
	int64_t hi = m->now - (settle_s >= 0 ? settle_s : EV_MIRROR_SETTLE_S);
	if (!m->have_cut) {
		/* The first refresh: the flows start from here. */
		m->cut = hi;
		m->have_cut = true;
		return NULL;
	}
	if (hi <= m->cut) {
		/* The clock did not move (or went back): nothing created since. */
		m->created_known = hi == m->cut;
		return NULL;
	}
	const char *index = req->info ? ev_index_find(req->info, "create_time") : NULL;
	if (req->info != NULL && index == NULL)
		return NULL;
	char lo_s[32], hi_s[32];
	format_time(m->cut, lo_s, sizeof(lo_s));
	format_time(hi, hi_s, sizeof(hi_s));
	struct ev_buf b;
	ev_buf_init(&b);
	ev_buf_adds(&b, "/* evtop:dash.mirror.created */ SELECT event_type, " KEY_OF("event_type"));
	if (t->has_lock)
		ev_buf_adds(&b, ", topic, " KEY_OF("topic"));
	ev_buf_printf(&b, ", COUNT(*) FROM `%s`",
	              req->table_name ? req->table_name : t->default_name);
	if (index != NULL)
		ev_buf_printf(&b, " FORCE INDEX (`%s`)", index);
	ev_buf_printf(&b, " WHERE create_time > ? AND create_time <= ? GROUP BY event_type%s",
	              t->has_lock ? ", topic" : "");
	struct ev_query *q = ev_xcalloc(1, sizeof(*q));
	q->name = "dash.mirror.created";
	q->sql = ev_buf_steal(&b);
	ev_query_add_text(q, lo_s);
	ev_query_add_text(q, hi_s);
	q->limit = 100000;
	q->keep = true;
	m->next_cut = hi;
	return q;
}

void ev_mirror_created_row(struct ev_mirror *m, const struct ev_rowset *rs, size_t row)
{
	int nd = flow_dims(m);
	if (rs->ncols < (size_t)(2 * nd + 1))
		return;
	const char *n = ev_rowset_cell(rs, row, (size_t)(2 * nd))->s;
	long long count = n ? strtoll(n, NULL, 10) : 0;
	struct ev_flow_in c = {0};
	c.created = count;
	m->created_total += count;
	for (int k = 0; k < nd; k++) {
		uint16_t g = intern(&m->names[k], ev_rowset_cell(rs, row, (size_t)(2 * k)),
		                    ev_rowset_cell(rs, row, (size_t)(2 * k + 1)));
		flow_add(&m->created[k], &m->ncreated[k], g, &c);
	}
}

void ev_mirror_created_done(struct ev_mirror *m, bool ok)
{
	if (!ok) {
		m->created_total = 0;
		for (int k = 0; k < 2; k++)
			m->ncreated[k] = 0;
		return;
	}
	m->cut = m->next_cut;
	m->created_known = true;
}

void ev_mirror_overflow(struct ev_mirror *m)
{
	ev_mirror_reset(m);
	m->over_cap = true;
}

/* --- the figures ---------------------------------------------------------------------------- */

struct acc {
	long long pending, processing, stuck, failed, due, waiting, noretry, exhausted;
	int64_t oldest_ct; /* INT64_MAX: none */
	int64_t oldest_ut;
};

/* Row e into x's figures; the clock's (stuck, due, the ages) only when have_now. */
static void acc_add(const struct ev_mirror *m, struct acc *x, const struct entry *e, bool have_now,
                    int64_t now, int64_t stuck_before)
{
	const struct ev_table_def *t = m->def;
	switch (e->status) {
	case 0: {
		x->pending++;
		const struct big *b = (e->flags & F_BIG) ? big_get(m, id_of(e)) : NULL;
		int64_t ct = b ? b->ct : e->ct, ut = b ? b->ut : e->ut;
		if (e->ct != T_NULL && ct < x->oldest_ct)
			x->oldest_ct = ct;
		if ((e->flags & F_VERSIONED) && e->ut != T_NULL && ut < x->oldest_ut)
			x->oldest_ut = ut;
		break;
	}
	case 1:
		x->processing++;
		if (e->t1 != T_NULL && have_now &&
		    (t->has_lock ? e->t1 <= now : e->t1 <= stuck_before))
			x->stuck++;
		break;
	case 3:
		x->failed++;
		if (e->rc >= e->mrc)
			x->exhausted++;
		else if (e->nrt == T_NULL)
			x->noretry++;
		else if (have_now && e->nrt <= now)
			x->due++;
		else
			x->waiting++;
		break;
	default:
		break;
	}
}

void ev_mirror_set_rate_span(struct ev_mirror *m, int seconds)
{
	m->rate_s = seconds;
}

void ev_mirror_fill(const struct ev_mirror *m, const struct ev_dash_req *req, const char *now_s,
                    struct ev_dash *d)
{
	const struct ev_table_def *t = m->def;
	int dim = -1;
	for (size_t k = 0; req->dimension && k < t->ndimensions; k++)
		if (strcmp(t->dimensions[k].key, req->dimension) == 0)
			dim = (int)k;
	const struct names *nm = dim >= 0 ? &m->names[dim] : NULL;
	size_t ngroups = nm ? nm->n + 1 : 1;
	struct acc *a = ev_xcalloc(ngroups, sizeof(*a));
	for (size_t g = 0; g < ngroups; g++)
		a[g].oldest_ct = a[g].oldest_ut = INT64_MAX;
	int64_t now = 0;
	bool have_now = ev_mirror_parse_time(now_s, &now);
	int64_t stuck_before = now - (req->stuck_threshold_s > 0 ? req->stuck_threshold_s : 0);

	for (size_t i = 0; i < m->n; i++) {
		const struct entry *e = &m->e[i];
		if ((e->flags & F_DELETED) || !(e->flags & F_KNOWN))
			continue;
		acc_add(m, &a[dim >= 0 ? e->grp[dim] : 0], e, have_now, now, stuck_before);
	}
	for (size_t g = 0; g < ngroups; g++) {
		const struct acc *x = &a[g];
		if (x->pending + x->processing + x->failed == 0)
			continue;
		struct ev_dash_row *r = ev_dash_row(d, nm && g > 0 ? nm->v[g].display : NULL);
		r->f[EV_DASH_PENDING].value = x->pending;
		r->f[EV_DASH_PROCESSING].value = x->processing;
		r->f[EV_DASH_STUCK].value = x->stuck;
		r->f[EV_DASH_FAILED].value = x->failed;
		r->f[EV_DASH_FAILED_DUE].value = x->due;
		r->f[EV_DASH_FAILED_WAITING].value = x->waiting;
		r->f[EV_DASH_FAILED_NORETRY].value = x->noretry;
		r->f[EV_DASH_EXHAUSTED].value = x->exhausted;
		r->f[EV_DASH_OLDEST_PENDING_AGE].value =
		        x->oldest_ct == INT64_MAX || !have_now ? -1 : now - x->oldest_ct;
		r->f[EV_DASH_LONGEST_RETRY_WAIT].value =
		        x->oldest_ut == INT64_MAX || !have_now ? -1 : now - x->oldest_ut;
	}
	free(a);
	/* The rates by completion time (core/flow.h): the totals, and the groups of the dimensions
	 * the flows are kept for; the other dimensions' groups have none ("—"). */
	if (m->flow != NULL) {
		int rate_s = m->rate_s > 0 ? m->rate_s : EV_MIRROR_RATE_S;
		d->flow_on = true;
		ev_flow_rates(m->flow, -1, 0, rate_s, &d->total.flow);
		if (dim >= 0 && dim < flow_dims(m)) {
			for (size_t g = 0; g < ngroups; g++) {
				struct ev_flow_rates fr;
				ev_flow_rates(m->flow, dim, g, rate_s, &fr);
				const char *name = nm && g > 0 ? nm->v[g].display : NULL;
				struct ev_dash_row *r = NULL;
				if (fr.known && (fr.created_per_min > 0 ||
				                 fr.finished_per_min > 0 || fr.failed_per_min > 0))
					r = ev_dash_row(d, name);
				else if (name != NULL)
					r = (struct ev_dash_row *)ev_dash_find(d, name);
				else
					for (size_t i = 0; i < d->nrows && r == NULL; i++)
						if (d->rows[i].group == NULL)
							r = &d->rows[i];
				if (r != NULL)
					r->flow = fr;
			}
		}
	}
	/* The backlog's figures are this refresh's own: nothing to carry over. */
	d->skipped &= ~((1u << EV_DQ_PENDING) | (1u << EV_DQ_PROCESSING) | (1u << EV_DQ_FAILED));
}

/* --- the window counts' spellings ---------------------------------------------------------- */

static int dim_index(const struct ev_table_def *t, const char *dimension)
{
	for (size_t k = 0; dimension && k < t->ndimensions && k < MAX_DIMS; k++)
		if (strcmp(t->dimensions[k].key, dimension) == 0)
			return (int)k;
	return -1;
}

size_t ev_mirror_unmet_spellings(const struct ev_mirror *m, const struct ev_dash *d,
                                 const char ***out)
{
	*out = NULL;
	int dim = dim_index(m->def, d->dimension);
	if (dim < 0 || m->n == 0)
		return 0;
	const struct spells *sp = &m->spells[dim];
	size_t n = 0;
	for (size_t r = 0; r < d->nrows; r++) {
		const char *g = d->rows[r].group;
		if (g == NULL || spell_find(sp, g, strlen(g)) != NULL)
			continue;
		if (*out == NULL)
			*out = ev_xcalloc(d->nrows, sizeof(**out));
		(*out)[n++] = g;
	}
	return n;
}

struct ev_query *ev_mirror_query_keys(const struct ev_mirror *m, const struct ev_dash_req *req,
                                      const char *const *spellings, size_t n)
{
	const struct ev_table_def *t = ev_model_table(req->table);
	int dim = dim_index(t, req->dimension);
	if (dim < 0 || m->n == 0 || n == 0)
		return NULL;
	/* A literal takes the column's collation in IF(FALSE, column, ?); the column is read
	 * from one row the mirror holds, by primary key. */
	const char *c = t->dimensions[dim].column;
	const char *tn = req->table_name ? req->table_name : t->default_name;
	unsigned long long id = (unsigned long long)id_of(&m->e[0]);
	struct ev_query *q = ev_xcalloc(1, sizeof(*q));
	struct ev_buf b;
	ev_buf_init(&b);
	q->name = "dash.mirror.keys";
	ev_buf_adds(&b, "/* evtop:dash.mirror.keys */ SELECT v, " KEY_OF("v") " FROM (");
	for (size_t i = 0; i < n; i++) {
		ev_buf_printf(&b, "%sSELECT IF(FALSE, %s, ?) AS v FROM `%s` WHERE id = %llu",
		              i ? " UNION ALL " : "", c, tn, id);
		ev_query_add_text(q, spellings[i]);
	}
	ev_buf_adds(&b, ") spellings");
	q->sql = ev_buf_steal(&b);
	q->limit = (int)n;
	return q;
}

void ev_mirror_key_row(struct ev_mirror *m, const char *dimension, const struct ev_rowset *rs,
                       size_t row)
{
	int dim = dim_index(m->def, dimension);
	if (dim < 0 || rs->ncols < 2)
		return;
	const struct ev_cell *v = ev_rowset_cell(rs, row, 0), *key = ev_rowset_cell(rs, row, 1);
	if (v->s != NULL && key->s != NULL)
		spell_add(&m->spells[dim], v->s, v->len, key->s, key->len);
}

void ev_mirror_adopt_spellings(struct ev_mirror *m, const struct ev_dash *d)
{
	int dim = dim_index(m->def, d->dimension);
	if (dim < 0)
		return;
	struct names *nm = &m->names[dim];
	const struct spells *sp = &m->spells[dim];
	if (nm->nslots == 0)
		return;
	for (size_t r = 0; r < d->nrows; r++) {
		const char *g = d->rows[r].group;
		const struct spell *x = g ? spell_find(sp, g, strlen(g)) : NULL;
		if (x == NULL)
			continue;
		uint32_t i = *name_slot(nm, x->key, x->keylen);
		if (i == 0 || strcmp(nm->v[i].display, g) == 0)
			continue;
		nm->bytes += strlen(g);
		nm->bytes -= strlen(nm->v[i].display);
		free(nm->v[i].display);
		nm->v[i].display = ev_xstrdup(g);
	}
}

void ev_mirror_totals(const struct ev_mirror *m, struct ev_mirror_totals *tt)
{
	/* As the dashboard's figures count them (acc_add), without the clock. */
	struct acc x = {.oldest_ct = INT64_MAX, .oldest_ut = INT64_MAX};
	for (size_t i = 0; i < m->n; i++) {
		const struct entry *e = &m->e[i];
		if (!(e->flags & F_DELETED) && (e->flags & F_KNOWN))
			acc_add(m, &x, e, false, 0, 0);
	}
	*tt = (struct ev_mirror_totals){.pending = x.pending,
	                                .processing = x.processing,
	                                .failed = x.failed,
	                                .noretry = x.noretry,
	                                .exhausted = x.exhausted};
}

/* --- the range reads ------------------------------------------------------------------------ */

/* A read of status range `status` through the status index (found by its columns, whatever
 * its name): "SELECT what FROM t FORCE INDEX (i) WHERE status = ?" and `and`, the status its
 * first parameter; with a limit, " LIMIT ?" too (the caller adds that parameter last), else
 * one row (an aggregate). */
static struct ev_query *range_read(const struct ev_dash_req *req, const char *name,
                                   const char *what, int status, const char *and, size_t limit,
                                   struct ev_error *err)
{
	const struct ev_table_def *t = ev_model_table(req->table);
	char cols[96];
	const char *index = NULL;
	snprintf(cols, sizeof(cols), "%s,next_retry_time", t->status_col);
	if (req->info != NULL) {
		index = ev_index_find(req->info, cols);
		if (index == NULL) {
			ev_error_set(err, EV_ERR_SCHEMA,
			             _("the backlog mirror needs an index on (%s)"), cols);
			return NULL;
		}
	}
	struct ev_query *q = ev_xcalloc(1, sizeof(*q));
	struct ev_buf b;
	ev_buf_init(&b);
	q->name = name;
	ev_buf_printf(&b, "/* evtop:%s */ SELECT %s FROM `%s`", name, what,
	              req->table_name ? req->table_name : t->default_name);
	if (index != NULL)
		ev_buf_printf(&b, " FORCE INDEX (`%s`)", index);
	ev_buf_printf(&b, " WHERE %s = ?%s", t->status_col, and);
	ev_query_add_int(q, status);
	if (limit > 0)
		ev_buf_adds(&b, " LIMIT ?");
	q->limit = limit == 0 ? 1 : limit > INT_MAX ? INT_MAX : (int)limit;
	q->sql = ev_buf_steal(&b);
	q->keep = true;
	return q;
}

static long long limit_param(size_t limit)
{
	return (long long)(limit > (size_t)LLONG_MAX ? LLONG_MAX : limit);
}

struct ev_query *ev_mirror_query_range(const struct ev_dash_req *req, int status, size_t limit,
                                       struct ev_error *err)
{
	limit = limit ? limit : 1;
	struct ev_query *q = range_read(req, "dash.mirror.range",
	                                "id, next_retry_time, retry_count", status, "", limit, err);
	if (q != NULL)
		ev_query_add_int(q, limit_param(limit));
	return q;
}

struct ev_query *ev_mirror_query_digest(const struct ev_dash_req *req, int status,
                                        struct ev_error *err)
{
	return range_read(req, "dash.mirror.digest", DIGEST_SQL, status, "", 0, err);
}

struct ev_query *ev_mirror_query_arrivals(const struct ev_mirror *m, const struct ev_dash_req *req,
                                          size_t limit, struct ev_error *err)
{
	/* New rows come in as the model inserts them (next_retry_time NULL, retry_count 0): one
	 * stretch of the status index, in id order. Above the highest pending id of the refresh
	 * before the last; an insert that commits later than that is found by the digest. */
	struct ev_query *q = range_read(
	        req, "dash.mirror.arrivals", "id, next_retry_time, retry_count", 0,
	        " AND next_retry_time IS NULL AND retry_count = 0 AND id > ?", limit, err);
	if (q != NULL) {
		ev_query_add_uint(q, ev_mirror_arrivals_above(m));
		ev_query_add_int(q, limit_param(limit));
	}
	return q;
}

/* The outbox's processing rows through its lock index: "SELECT what ... WHERE publish_status
 * = 1", with a limit or (0) one row; NULL without the index. */
static struct ev_query *lock_read(const struct ev_dash_req *req, const char *name, const char *what,
                                  size_t limit)
{
	const struct ev_table_def *t = ev_model_table(req->table);
	if (!t->has_lock || req->info == NULL)
		return NULL;
	const char *index = ev_index_find(req->info, "publish_status,lock_until");
	if (index == NULL)
		return NULL;
	struct ev_query *q = ev_xcalloc(1, sizeof(*q));
	q->name = name;
	q->sql = ev_xasprintf("/* evtop:%s */ SELECT %s FROM `%s` FORCE INDEX (`%s`) WHERE "
	                      "publish_status = 1%s",
	                      name, what, req->table_name ? req->table_name : t->default_name,
	                      index, limit ? " LIMIT ?" : "");
	if (limit)
		ev_query_add_int(q, limit_param(limit));
	q->limit = limit == 0 ? 1 : limit > INT_MAX ? INT_MAX : (int)limit;
	q->keep = true;
	return q;
}

struct ev_query *ev_mirror_query_lock_digest(const struct ev_dash_req *req)
{
	return lock_read(req, "dash.mirror.digest", DIGEST_LOCK_SQL, 0);
}

struct ev_query *ev_mirror_query_lock(const struct ev_dash_req *req, size_t limit)
{
	return lock_read(req, "dash.mirror.locks", "id, lock_until", limit ? limit : 1);
}
