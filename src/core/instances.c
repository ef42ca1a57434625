/* evtop — publisher instances from the outbox's processing rows (instances.h). */
#include <config.h>

#include "core/instances.h"
#include "core/i18n.h"
#include "core/query.h"
#include "core/util.h"

#include <stdlib.h>
#include <string.h>

const char *ev_inst_verdict_name(enum ev_inst_verdict v)
{
	switch (v) {
	case EV_INST_ALIVE:
		/* TRANSLATORS: a publisher instance's verdicts (alive, dead, quiet), in a column
		 * of 6 cells. */
		return P_("instance", "alive");
	case EV_INST_DEAD:
		return P_("instance", "dead");
	case EV_INST_QUIET:
		return P_("instance", "quiet");
	default:
		return "";
	}
}

long long ev_inst_newest_claim(long long max_lock_until, long long max_last_publish, int lease_s)
{
	long long from_lock = max_lock_until > 0 ? max_lock_until - lease_s : 0;
	return from_lock > max_last_publish ? from_lock : max_last_publish;
}

enum ev_inst_verdict ev_inst_verdict(long long now, long long locks, long long expired,
                                     long long newest_claim, int lease_s)
{
	if (newest_claim > 0 && now - newest_claim <= (long long)EV_INST_ALIVE_LEASES * lease_s)
		return EV_INST_ALIVE;
	/* Not claiming lately: dead if nothing it holds is still within its lock. */
	return expired >= locks ? EV_INST_DEAD : EV_INST_QUIET;
}

/* A cell as a whole number; 0 for NULL or no such column. */
static long long cell_ll(const struct ev_rowset *rs, size_t row, const char *col)
{
	const char *s = ev_rowset_get(rs, row, col);
	return s != NULL && *s != '\0' ? strtoll(s, NULL, 10) : 0;
}

struct ev_instances *ev_instances_from_rows(const struct ev_rowset *rs, enum ev_table_kind t,
                                            int lease_s)
{
	struct ev_instances *in = ev_xcalloc(1, sizeof(*in));
	in->table = t;
	if (rs == NULL || rs->nrows == 0)
		return in;
	in->v = ev_xcalloc(rs->nrows, sizeof(*in->v));
	for (size_t i = 0; i < rs->nrows; i++) {
		struct ev_instance *x = &in->v[in->n++];
		const char *name = ev_rowset_get(rs, i, "grp");
		x->name = name != NULL ? ev_xstrdup(name) : NULL;
		x->locks = cell_ll(rs, i, "locks");
		x->expired = cell_ll(rs, i, "expired");
		x->oldest = cell_ll(rs, i, "oldest");
		in->now = cell_ll(rs, i, "now");
		in->rows += x->locks;
		if (t == EV_TABLE_OUTBOX) {
			x->newest_claim = ev_inst_newest_claim(
			        cell_ll(rs, i, "newest"), cell_ll(rs, i, "last_claim"), lease_s);
			x->verdict = ev_inst_verdict(in->now, x->locks, x->expired, x->newest_claim,
			                             lease_s);
			in->alive += x->verdict == EV_INST_ALIVE;
			in->dead += x->verdict == EV_INST_DEAD;
		} else {
			x->newest_claim = cell_ll(rs, i, "newest");
			x->verdict = EV_INST_NONE;
		}
	}
	in->capped = in->rows >= EV_INSTANCES_CAP;
	return in;
}

void ev_instances_free(struct ev_instances **in)
{
	if (in == NULL || *in == NULL)
		return;
	for (size_t i = 0; i < (*in)->n; i++)
		free((*in)->v[i].name);
	free((*in)->v);
	free(*in);
	*in = NULL;
}

const struct ev_instance *ev_instances_find(const struct ev_instances *in, const char *name)
{
	for (size_t i = 0; i < in->n; i++) {
		const char *x = in->v[i].name;
		if ((x == NULL && name == NULL) ||
		    (x != NULL && name != NULL && strcmp(x, name) == 0))
			return &in->v[i];
	}
	return NULL;
}
