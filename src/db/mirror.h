/* evtop — the backlog mirror's reads (core/mirror.h): one refresh of a table's mirror inside
 * one consistent snapshot, and the dashboard made from it. */
#ifndef EV_DB_MIRROR_H
#define EV_DB_MIRROR_H

#include "core/dashboard.h"
#include "core/mirror.h"
#include "db/conn.h"

struct ev_mirror_opts {
	double interval_s; /* the refresh interval: sizes the rolling re-verification */
	int reverify_s;    /* every row read again by key within this (0: the default) */
	int check_s;       /* the full counts compared this often (0: the default) */
	int settle_s;      /* rows created this recently are counted later (0: the default) */
};

/* A dashboard as ev_dash_fetch makes it, its backlog figures from m, refreshed on c: the
 * window counts (unless req->skip has them) and the clock check by ev_dash_fetch; the status
 * ranges read index-only, the rows that entered or changed (and a rolling share) by primary
 * key, all in one START TRANSACTION WITH CONSISTENT SNAPSHOT, READ ONLY; the full counts
 * compared when due (a difference is counted and corrected at once). The result is
 * unfinished when req->skip skipped the window counts (the caller carries them over, then
 * finishes), finished otherwise. A backlog past the mirror's cap, or a table without the
 * status index, falls back to the capped counts and says so in the notes. Returns -1 as
 * ev_dash_fetch does (the mirror is then forgotten, read anew next time). */
int ev_mirror_fetch(struct ev_conn *c, struct ev_mirror *m, const struct ev_dash_req *req,
                    const struct ev_mirror_opts *o, struct ev_dash **out, struct ev_error *err);

#endif
