/* evtop — a refresh of the backlog mirror (see mirror.h). */
#include <config.h>

#include "db/mirror.h"

#include "db/fetch.h"

#include "core/i18n.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double mono_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void add_note(struct ev_dash *d, const char *what)
{
	char *n = ev_xasprintf("%s%s%s", d->notes ? d->notes : "", d->notes ? "; " : "", what);
	free(d->notes);
	d->notes = n;
}

/* Read the rows of ids by primary key, in batches: whole, or (verify) the share's compare. */
static int read_ids(struct ev_conn *c, struct ev_mirror *m, const struct ev_dash_req *req,
                    const uint64_t *ids, size_t n, bool verify, struct ev_error *err)
{
	/* The ids belong to m and stay put while its rows are read (pk_row and verify_row
	 * never add ids). */
	for (size_t i = 0; i < n; i += EV_MIRROR_PK_BATCH) {
		size_t k = n - i < EV_MIRROR_PK_BATCH ? n - i : EV_MIRROR_PK_BATCH;
		struct ev_query *q = verify ? ev_mirror_query_verify(m, req, ids + i, k)
		                            : ev_mirror_query_pk(req, ids + i, k);
		struct ev_rowset *rs = NULL;
		int rc = ev_conn_run(c, q, &rs, err);
		ev_query_free(&q);
		if (rc < 0)
			return -1;
		for (size_t r = 0; r < rs->nrows; r++) {
			if (verify)
				ev_mirror_verify_row(m, rs, r);
			else
				ev_mirror_pk_row(m, rs, r);
		}
		ev_rowset_free(&rs);
	}
	return 0;
}

static int read_keys(struct ev_conn *c, struct ev_mirror *m, const struct ev_dash_req *req,
                     const uint64_t *ids, size_t n, struct ev_error *err)
{
	return read_ids(c, m, req, ids, n, false, err);
}

/* The collation keys of d's group spellings the mirror has not met (core/mirror.h), then its
 * groups spelled as d spells them. Best effort: a failed read leaves those groups apart. */
static void adopt_spellings(struct ev_conn *c, struct ev_mirror *m, const struct ev_dash_req *req,
                            const struct ev_dash *d)
{
	const char **sp = NULL;
	size_t n = ev_mirror_unmet_spellings(m, d, &sp);
	for (size_t i = 0; i < n; i += 100) {
		size_t k = n - i < 100 ? n - i : 100;
		struct ev_query *q = ev_mirror_query_keys(m, req, sp + i, k);
		struct ev_rowset *rs = NULL;
		struct ev_error err = {0};
		if (q != NULL && ev_conn_run(c, q, &rs, &err) == 0)
			for (size_t r = 0; r < rs->nrows; r++)
				ev_mirror_key_row(m, req->dimension, rs, r);
		ev_rowset_free(&rs);
		ev_query_free(&q);
		if (err.code != 0)
			break;
	}
	free(sp);
	ev_mirror_adopt_spellings(m, d);
}

/* The full counts of the backlog (totals only, read in the same snapshot) against the
 * mirror: the rows off, summed over the figures compared; -1 when they could not be read. */
static long long full_check(struct ev_conn *c, const struct ev_mirror *m,
                            const struct ev_dash_req *req, struct ev_error *err)
{
	struct ev_dash_req tot = *req;
	tot.dimension = NULL;
	tot.skip = 1u << EV_DQ_WINDOW;
	struct ev_dash *full = ev_dash_new(&tot);
	for (int w = EV_DQ_PENDING; w <= EV_DQ_FAILED; w++) {
		struct ev_query *q = ev_dash_query(&tot, (enum ev_dash_query)w, err);
		struct ev_rowset *rs = NULL;
		if (q == NULL || ev_conn_run(c, q, &rs, err) < 0) {
			ev_query_free(&q);
			ev_dash_free(&full);
			return -1;
		}
		ev_dash_add(full, (enum ev_dash_query)w, rs);
		ev_rowset_free(&rs);
		ev_query_free(&q);
	}
	full->skipped = 0;
	ev_dash_finish(full);
	struct ev_mirror_totals t;
	ev_mirror_totals(m, &t);
	const struct ev_figure *f = full->total.f;
	long long off = 0;
	const struct {
		enum ev_dash_figure fig;
		long long have;
	} cmp[] = {
	        {EV_DASH_PENDING, t.pending},     {EV_DASH_PROCESSING, t.processing},
	        {EV_DASH_FAILED, t.failed},       {EV_DASH_FAILED_NORETRY, t.noretry},
	        {EV_DASH_EXHAUSTED, t.exhausted},
	};
	for (size_t i = 0; i < sizeof(cmp) / sizeof(cmp[0]); i++) {
		/* A capped count is a lower bound: nothing to compare it with. */
		if (f[cmp[i].fig].capped)
			continue;
		long long d = f[cmp[i].fig].value - cmp[i].have;
		off += d < 0 ? -d : d;
	}
	ev_dash_free(&full);
	return off;
}

/* The snapshot's clock: every figure compares with this NOW(). */
static int read_clock(struct ev_conn *c, char *now, size_t now_size, struct ev_error *err)
{
	struct ev_rowset *rs = NULL;
	struct ev_query *q = ev_mirror_query_clock();
	int rc = ev_conn_run(c, q, &rs, err);
	ev_query_free(&q);
	if (rc < 0)
		return -1;
	snprintf(now, now_size, "%s",
	         rs->nrows > 0 && ev_rowset_cell(rs, 0, 0)->s ? ev_rowset_cell(rs, 0, 0)->s : "");
	ev_rowset_free(&rs);
	return 0;
}

/* Rows of a range read into m (status 1 through the lock index: locks). */
static void feed_range(struct ev_mirror *m, int status, bool locks, const struct ev_rowset *rs)
{
	for (size_t r = 0; r < rs->nrows; r++) {
		const char *id = ev_rowset_cell(rs, r, 0)->s;
		if (locks)
			ev_mirror_lock_row(m, id, ev_rowset_cell(rs, r, 1)->s);
		else
			ev_mirror_range_row(m, status, id, ev_rowset_cell(rs, r, 1)->s,
			                    ev_rowset_cell(rs, r, 2)->s);
	}
}

/* Whether the outbox's processing rows are read through its lock index. */
static bool has_locks(const struct ev_dash_req *req)
{
	struct ev_query *q = ev_mirror_query_lock(req, 1);
	bool yes = q != NULL;
	ev_query_free(&q);
	return yes;
}

/* The backlog did not fit: the snapshot is committed and m emptied. */
static int overflow(struct ev_conn *c, struct ev_mirror *m, struct ev_error *err)
{
	ev_conn_exec(c, "COMMIT", err);
	ev_mirror_overflow(m);
	return 1;
}

/* The backlog's ranges by status, room rows at most in all (the failed range carried over
 * from the last refresh unless all_ranges; a range its digest verifies carried too, the
 * pending range's arrivals read). Returns 0, 1 when they do not fit (the snapshot is then
 * committed and m empty), -1 with err. */
static int read_ranges(struct ev_conn *c, struct ev_mirror *m, const struct ev_dash_req *req,
                       size_t room, bool all_ranges, struct ev_error *err)
{
	static const int statuses[] = {0, 1, 3};
	struct ev_rowset *rs = NULL;
	size_t got = 0;

	for (size_t i = 0; i < sizeof(statuses) / sizeof(statuses[0]); i++) {
		int status = statuses[i];
		if (status == 3 && !all_ranges) {
			ev_mirror_carry_range(m, 3);
			continue;
		}
		struct ev_query *q = NULL;
		/* The outbox's processing rows come with their lock_until from its lock index;
		 * without it, from the status index (lock_until then by key). */
		bool locks = status == 1 && has_locks(req);
		if (ev_mirror_digest_due(m, status)) {
			ev_mirror_carry_to_verify(m, status, locks);
			if (status != 0)
				continue;
			q = ev_mirror_query_arrivals(m, req, room - got + 1, err);
		} else if (locks) {
			q = ev_mirror_query_lock(req, room - got + 1);
		}
		if (q == NULL)
			q = ev_mirror_query_range(req, status, room - got + 1, err);
		if (q == NULL || ev_conn_run(c, q, &rs, err) < 0) {
			ev_query_free(&q);
			return -1;
		}
		ev_query_free(&q);
		got += rs->nrows;
		if (got > room) {
			ev_rowset_free(&rs);
			return overflow(c, m, err);
		}
		feed_range(m, status, locks, rs);
		ev_rowset_free(&rs);
	}
	return 0;
}

/* By primary key: the rows the ranges found new or moved, and the rolling share. */
static int read_by_key(struct ev_conn *c, struct ev_mirror *m, const struct ev_dash_req *req,
                       const struct ev_mirror_opts *o, struct ev_error *err)
{
	const uint64_t *ids;
	size_t n = ev_mirror_ranges_done(
	        m,
	        ev_mirror_share(m, o->interval_s,
	                        o->reverify_s ? o->reverify_s : EV_MIRROR_REVERIFY_S),
	        &ids);
	if (read_keys(c, m, req, ids, n, err) < 0)
		return -1;
	/* The rolling share: compared without its group columns, read whole if it changed. */
	n = ev_mirror_share_ids(m, &ids);
	if (read_ids(c, m, req, ids, n, true, err) < 0)
		return -1;
	n = ev_mirror_verify_done(m, &ids);
	if (read_keys(c, m, req, ids, n, err) < 0)
		return -1;
	if (ev_mirror_share_settle(m)) {
		char note[200];
		snprintf(note, sizeof(note),
		         "mirror: %s: the server's checksums of rows are not evtop's: the rolling "
		         "share compares values",
		         req->table_name ? req->table_name
		                         : ev_model_table(req->table)->default_name);
		ev_conn_log_note(c, note);
	}
	return 0;
}

/* The ranges carried to be verified (ev_mirror_digest_due): their digests, after the key
 * reads; a range whose digest differs is read again whole in the snapshot, and the rows that
 * entered, changed or left it read by key. Returns 0, 1 when it does not fit, -1 with err. */
static int verify_ranges(struct ev_conn *c, struct ev_mirror *m, const struct ev_dash_req *req,
                         struct ev_error *err)
{
	/* Pending first: the rows claimed from it are then where the processing digest counts
	 * them; processing before failed, for the rows that failed. */
	static const int statuses[] = {0, 1, 3};
	const char *tn =
	        req->table_name ? req->table_name : ev_model_table(req->table)->default_name;

	for (size_t i = 0; i < sizeof(statuses) / sizeof(statuses[0]); i++) {
		int status = statuses[i];
		if (!ev_mirror_verify_pending(m, status))
			continue;
		struct ev_rowset *rs = NULL;
		struct ev_error qerr = {0};
		bool locks = status == 1 && has_locks(req);
		struct ev_query *q = locks ? ev_mirror_query_lock_digest(req)
		                           : ev_mirror_query_digest(req, status, &qerr);
		int rc = q ? ev_conn_run(c, q, &rs, &qerr) : -1;
		ev_query_free(&q);
		char note[800];
		if (rc < 0) {
			/* A lost connection or a time limit ends the refresh; a digest this server
			 * refuses leaves digests for the full reads. */
			if (qerr.code == EV_ERR_CONNECT || qerr.code == EV_ERR_TIMEOUT) {
				*err = qerr;
				return -1;
			}
			ev_mirror_digest_failed(m, status);
			snprintf(note, sizeof(note),
			         "mirror: %s: status %d: the range digest failed (%s): ranges read "
			         "whole",
			         tn, status, qerr.msg);
			ev_conn_log_note(c, note);
		} else {
			bool same = rs->nrows == 1 &&
			            ev_mirror_digest_check(m, status, ev_rowset_cell(rs, 0, 0)->s,
			                                   ev_rowset_cell(rs, 0, 1)->s);
			ev_rowset_free(&rs);
			if (same)
				continue;
			snprintf(note, sizeof(note),
			         "mirror: %s: status %d: the range digest differs: read whole", tn,
			         status);
			ev_conn_log_note(c, note);
		}
		size_t room = ev_mirror_room(m);
		q = locks ? ev_mirror_query_lock(req, room + 1)
		          : ev_mirror_query_range(req, status, room + 1, err);
		if (q == NULL || ev_conn_run(c, q, &rs, err) < 0) {
			ev_query_free(&q);
			return -1;
		}
		ev_query_free(&q);
		if (rs->nrows > room) {
			ev_rowset_free(&rs);
			return overflow(c, m, err);
		}
		ev_mirror_reread_begin(m, status);
		feed_range(m, status, locks, rs);
		ev_rowset_free(&rs);
		bool distrust = false;
		const uint64_t *ids;
		size_t n = ev_mirror_reread_done(m, status, &distrust, &ids);
		if (distrust) {
			snprintf(
			        note, sizeof(note),
			        "mirror: %s: status %d: the server's digest of the rows it sent is "
			        "not evtop's: ranges read whole",
			        tn, status);
			ev_conn_log_note(c, note);
		}
		if (read_keys(c, m, req, ids, n, err) < 0)
			return -1;
	}
	return 0;
}

/* What was created since the last refresh, for the rates by completion time. Best effort:
 * -1 (with err) only when the connection was lost. */
static int read_created(struct ev_conn *c, struct ev_mirror *m, const struct ev_dash_req *req,
                        const struct ev_mirror_opts *o, struct ev_error *err)
{
	struct ev_query *q =
	        ev_mirror_query_created(m, req, o->settle_s ? o->settle_s : EV_MIRROR_SETTLE_S);
	if (q == NULL)
		return 0;

	struct ev_rowset *rs = NULL;
	struct ev_error cerr = {0};
	int rc = ev_conn_run(c, q, &rs, &cerr);
	ev_query_free(&q);
	if (rc < 0 && cerr.code == EV_ERR_CONNECT) {
		*err = cerr;
		return -1;
	}
	for (size_t r = 0; rc == 0 && r < rs->nrows; r++)
		ev_mirror_created_row(m, rs, r);
	ev_mirror_created_done(m, rc == 0);
	ev_rowset_free(&rs);
	return 0;
}

/* The full counts against the mirror: the drift in the SQL log, and in *drift corrected at
 * once (every row read again by key, in the same snapshot; its reads added to st). -1 with err
 * when the connection was lost or the correction failed. */
static int check_full(struct ev_conn *c, struct ev_mirror *m, const struct ev_dash_req *req,
                      long long *drift, struct ev_mirror_stats *st, struct ev_error *err)
{
	struct ev_error cerr = {0};
	long long off = full_check(c, m, req, &cerr);
	if (off < 0 && cerr.code == EV_ERR_CONNECT) {
		*err = cerr;
		return -1;
	}
	if (off >= 0) {
		ev_mirror_checked(m);
		char note[200];
		snprintf(note, sizeof(note),
		         "mirror check: %s: %zu rows mirrored, mirror drift %lld%s",
		         req->table_name ? req->table_name
		                         : ev_model_table(req->table)->default_name,
		         ev_mirror_rows(m), off, off > 0 ? " (corrected)" : "");
		ev_conn_log_note(c, note);
	}
	if (off > 0) {
		*drift = off;
		ev_mirror_drift(m, off);
		struct ev_mirror_stats again;
		const uint64_t *ids;
		ev_mirror_begin(m);
		size_t n = ev_mirror_want_all(m, &ids);
		if (read_keys(c, m, req, ids, n, err) < 0)
			return -1;
		ev_mirror_end(m, &again);
		st->pk_reads += again.pk_reads;
		st->left += again.left;
		st->rows = again.rows;
	}
	return 0;
}

/* One refresh of m inside a snapshot. Returns 0, 1 when the backlog does not fit under the
 * cap (m is then empty), -1 with err. */
static int refresh(struct ev_conn *c, struct ev_mirror *m, const struct ev_dash_req *req,
                   const struct ev_mirror_opts *o, char *now, size_t now_size, long long *drift,
                   struct ev_mirror_stats *st, struct ev_error *err)
{
	size_t room = ev_mirror_room(m);

	if (ev_conn_exec(c,
	                 "/* evtop:dash.mirror.snapshot */ START TRANSACTION WITH CONSISTENT "
	                 "SNAPSHOT, READ ONLY",
	                 err) < 0)
		return -1;
	if (read_clock(c, now, now_size, err) < 0)
		goto fail;
	ev_mirror_clock(m, now);
	/* The failed range, the largest, is read every fifth refresh once it is large. */
	bool all_ranges = ev_mirror_read_failed(m);
	ev_mirror_begin(m);
	int rc = read_ranges(c, m, req, room, all_ranges, err);
	if (rc < 0)
		goto fail;
	if (rc == 1)
		return 1;
	if (read_by_key(c, m, req, o, err) < 0)
		goto fail;
	rc = verify_ranges(c, m, req, err);
	if (rc < 0)
		goto fail;
	if (rc == 1)
		return 1;
	if (read_created(c, m, req, o, err) < 0)
		goto fail;
	ev_mirror_end(m, st);
	*drift = 0;
	/* The full counts compare with a mirror that read every range this time. */
	if (all_ranges && ev_mirror_check_due(m, mono_s(), o->check_s) &&
	    check_full(c, m, req, drift, st, err) < 0)
		goto fail;
	if (ev_conn_exec(c, "/* evtop:dash.mirror.commit */ COMMIT", err) < 0)
		goto fail;
	return 0;
fail:
	if (ev_conn_is_connected(c)) {
		struct ev_error rerr = {0};
		ev_conn_exec(c, "ROLLBACK", &rerr);
	}
	/* Read half-way: what the mirror holds is no longer known to be right. */
	ev_mirror_reset(m);
	return -1;
}

int ev_mirror_fetch(struct ev_conn *c, struct ev_mirror *m, const struct ev_dash_req *req,
                    const struct ev_mirror_opts *o, struct ev_dash **out, struct ev_error *err)
{
	const unsigned backlog =
	        (1u << EV_DQ_PENDING) | (1u << EV_DQ_PROCESSING) | (1u << EV_DQ_FAILED);
	struct ev_error qerr = {0};

	*out = NULL;
	/* Without the status index the mirror cannot read the ranges: the capped counts. */
	struct ev_query *probe = ev_mirror_query_range(req, 0, 1, &qerr);
	if (probe == NULL)
		return ev_dash_fetch(c, req, out, err);
	ev_query_free(&probe);

	struct ev_dash_req sub = *req;
	sub.skip = req->skip | backlog;
	struct ev_dash *d = NULL;
	if (ev_dash_fetch(c, &sub, &d, err) < 0)
		return -1;
	double t0 = mono_s();
	char now[32] = "";
	long long drift = 0;
	struct ev_mirror_stats st;
	memset(&st, 0, sizeof(st));
	int rc = refresh(c, m, req, o, now, sizeof(now), &drift, &st, &qerr);
	if (rc < 0) {
		if (qerr.code != EV_ERR_TIMEOUT) {
			*err = qerr;
			ev_dash_free(&d);
			return -1;
		}
		for (int w = EV_DQ_PENDING; w <= EV_DQ_FAILED; w++)
			ev_dash_unknown(d, (enum ev_dash_query)w, _("timeout"));
		d->skipped &= ~backlog;
	} else if (rc == 1) {
		/* Past the cap: today's capped counts, said so. */
		ev_dash_free(&d);
		if (ev_dash_fetch(c, req, &d, err) < 0)
			return -1;
		char note[160];
		snprintf(note, sizeof(note),
		         _("mirror: the backlog passes its cap of %zu rows (capped counts)"),
		         ev_mirror_cap());
		add_note(d, note);
		*out = d;
		return 0;
	} else {
		if (req->dimension != NULL)
			adopt_spellings(c, m, req, d);
		ev_mirror_fill(m, req, now, d);
		d->mirror.on = true;
		d->mirror.rows = (long long)st.rows;
		d->mirror.entered = (long long)st.entered;
		d->mirror.changed = (long long)st.changed;
		d->mirror.left = (long long)st.left;
		/* Rows read by primary key: whole, or compared (the rolling share; a row found
		 * changed is then read whole too, and counts twice). */
		d->mirror.pk_reads = (long long)(st.pk_reads + st.reverified);
		d->mirror.range_rows = (long long)st.range_rows;
		d->mirror.digests = (long long)(st.digests + st.rereads);
		d->mirror.rereads = (long long)st.rereads;
		d->mirror.drift = drift;
		d->mirror.drift_total = ev_mirror_drift_total(m);
		d->mirror.checked_ago_s = ev_mirror_checked_ago(m);
		d->mirror.check_age_s = ev_mirror_check_age(m, mono_s());
		d->mirror.failed_age_s = ev_mirror_failed_age(m);
	}
	d->server_ms += (mono_s() - t0) * 1e3;
	if (d->skipped == 0)
		ev_dash_finish(d);
	*out = d;
	return 0;
}
