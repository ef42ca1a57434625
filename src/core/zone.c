/* evtop — the time zone judgement (see zone.h). */
#include <config.h>

#include "core/zone.h"
#include "core/dashboard.h"
#include "core/i18n.h"
#include "core/text.h"
#include "core/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct ev_query *ev_zone_query_newest(const char *table_name, const char *index)
{
	static const char *const names[] = {"id",  "event_no", "create_time",
	                                    "now", "ahead_s",  "utc_offset_s"};
	struct ev_query *q = ev_xcalloc(1, sizeof(*q));
	size_t n = sizeof(names) / sizeof(names[0]);

	q->name = "zone.newest";
	q->sql = ev_xasprintf("/* evtop:zone.newest */ SELECT id, event_no, create_time, NOW(), "
	                      "TIMESTAMPDIFF(SECOND, NOW(), create_time), "
	                      "TIMESTAMPDIFF(SECOND, UTC_TIMESTAMP(), NOW()) FROM `%s` "
	                      "FORCE INDEX (`%s`) ORDER BY %s DESC LIMIT 1",
	                      table_name, index ? index : "PRIMARY", index ? "create_time" : "id");
	q->ncols = n;
	q->col_names = ev_xcalloc(n, sizeof(*q->col_names));
	q->col_types = ev_xcalloc(n, sizeof(*q->col_types));
	for (size_t i = 0; i < n; i++) {
		q->col_names[i] = names[i];
		q->col_types[i] = EV_CT_TEXT;
	}
	q->limit = 1;
	q->keep = true;
	return q;
}

enum ev_zone_dir ev_zone_judge(long long ahead_s, long long *shift_s)
{
	*shift_s = 0;
	if (ahead_s > EV_ZONE_AHEAD_MIN) {
		if (ahead_s > EV_ZONE_MAX)
			return EV_ZONE_OK;
		/* The newest row is a little older than the zones' difference: round up. */
		*shift_s = (ahead_s + 899) / 900 * 900;
		return EV_ZONE_AHEAD;
	}
	long long back = -ahead_s;
	if (back < EV_ZONE_BEHIND_MIN || back > EV_ZONE_MAX)
		return EV_ZONE_OK;
	/* Every distance of an hour or more is within 15 min of a whole or half hour, and a
	 * quiet table looks the same as a mismatch: raise the alarm (one confirmation) rather
	 * than miss one (double processing). The offset named is the half hour below, the rest
	 * being the newest row's own age, or the one just above when an application's clock is
	 * a little fast. */
	long long past = back % 1800; /* how far above a whole or half hour */
	*shift_s = past >= 1800 - EV_ZONE_SKEW ? -(back - past + 1800) : -(back - past);
	return EV_ZONE_BEHIND;
}

static char *dup_cell(const struct ev_rowset *rs, const char *col)
{
	const char *s = ev_rowset_get(rs, 0, col);
	return s ? ev_xstrdup(s) : NULL;
}

static int num_cell(const struct ev_rowset *rs, const char *col, long long *out,
                    struct ev_error *err)
{
	if (ev_rowset_col(rs, col) < 0)
		return ev_error_set(err, EV_ERR_GENERIC, _("zone.newest: no column %s"), col);
	const char *s = ev_rowset_get(rs, 0, col);
	char *end = NULL;
	*out = s ? strtoll(s, &end, 10) : 0;
	if (s != NULL && (end == s || *end != '\0'))
		return ev_error_set(err, EV_ERR_GENERIC, _("zone.newest: %s is not a number"), col);
	return 0;
}

int ev_zone_from_rowset(const struct ev_rowset *rs, struct ev_zone_newest *n, struct ev_error *err)
{
	long long id = 0;

	memset(n, 0, sizeof(*n));
	if (rs->nrows == 0)
		return 0;
	if (num_cell(rs, "id", &id, err) < 0 || num_cell(rs, "ahead_s", &n->ahead_s, err) < 0 ||
	    num_cell(rs, "utc_offset_s", &n->utc_offset_s, err) < 0)
		return -1;
	const char *ids = ev_rowset_get(rs, 0, "id");
	n->id = ids ? strtoull(ids, NULL, 10) : 0;
	n->event_no = dup_cell(rs, "event_no");
	n->create_time = dup_cell(rs, "create_time");
	n->now = dup_cell(rs, "now");
	n->found = true;
	/* No create_time (a NULL in a NOT NULL column: bad data) tells nothing. */
	if (n->create_time != NULL && ev_rowset_get(rs, 0, "ahead_s") != NULL)
		n->dir = ev_zone_judge(n->ahead_s, &n->shift_s);
	return 0;
}

void ev_zone_newest_clear(struct ev_zone_newest *n)
{
	free(n->event_no);
	free(n->create_time);
	free(n->now);
	memset(n, 0, sizeof(*n));
}

void ev_zone_format_offset(long long s, char *buf, size_t size)
{
	long long a = s < 0 ? -s : s;
	snprintf(buf, size, "%c%02lld:%02lld", s < 0 ? '-' : '+', a / 3600, (a % 3600) / 60);
}

char *ev_zone_summary(const struct ev_zone_newest *n)
{
	if (!n->found || n->dir == EV_ZONE_OK)
		return NULL;
	char dist[32], apps[48];
	long long d = n->ahead_s < 0 ? -n->ahead_s : n->ahead_s;
	ev_format_duration(d, dist, sizeof(dist));
	ev_zone_format_offset(n->utc_offset_s + n->shift_s, apps, sizeof(apps));
	const char *no = n->event_no ? n->event_no : "NULL";
	char *safe = ev_text_sanitize(no, strlen(no));
	char *s =
	        ev_xasprintf(n->dir == EV_ZONE_AHEAD
	                             ? _("newest row %s (%s) is %s ahead of NOW(); --time-zone=%s?")
	                             : _("newest row %s (%s) is %s behind NOW(); --time-zone=%s?"),
	                     safe, n->create_time ? n->create_time : "?", dist, apps);
	free(safe);
	return s;
}

char *ev_zone_reason(const char *table_name, const struct ev_zone_newest *n)
{
	if (!n->found || n->dir == EV_ZONE_OK)
		return NULL;
	char dist[32], session[48], apps[48];
	long long d = n->ahead_s < 0 ? -n->ahead_s : n->ahead_s;
	ev_format_duration(d, dist, sizeof(dist));
	ev_zone_format_offset(n->utc_offset_s, session, sizeof(session));
	ev_zone_format_offset(n->utc_offset_s + n->shift_s, apps, sizeof(apps));
	const char *no = n->event_no ? n->event_no : "NULL";
	char *safe = ev_text_sanitize(no, strlen(no));
	char *why = ev_xasprintf(
	        n->dir == EV_ZONE_AHEAD
	                ? _("time zone mismatch suspected on %s: its newest row (event_no %s, id "
	                    "%llu, create_time %s) is %s ahead of NOW() (%s, session zone UTC%s); "
	                    "the applications seem to write UTC%s time: --time-zone=%s (time_zone "
	                    "in the config's source) would fix it; --clock-ok if the zone is right "
	                    "and the table only quiet")
	                : _("time zone mismatch suspected on %s: its newest row (event_no %s, id "
	                    "%llu, create_time %s) is %s behind NOW() (%s, session zone UTC%s); "
	                    "the applications seem to write UTC%s time: --time-zone=%s (time_zone "
	                    "in the config's source) would fix it; --clock-ok if the zone is right "
	                    "and the table only quiet"),
	        table_name, safe, n->id, n->create_time ? n->create_time : "?", dist,
	        n->now ? n->now : "?", session, apps, apps);
	free(safe);
	return why;
}
