/* evtop — keyset cursors: a list's position encoded for --after, rows of several sources
 * compared and merged in a list's order, and group breakdowns summed over sources
 * (core/cursor.c). */
#ifndef EV_CORE_CURSOR_H
#define EV_CORE_CURSOR_H

#include "core/rowset.h"
#include "core/util.h"

#include <stdbool.h>

struct ev_query;

/* A position in a list: the sort key's value (NULL for SQL NULL), the second key's (has_mid)
 * and the id of the last row seen. Encoded for --after as "v1:<id>:<value>" or "v1:<id>:~"
 * for NULL; with a second key "v2:<id>:<mid>:<value>". */
struct ev_cursor {
	bool set;
	bool value_null;
	char value[32];
	bool has_mid;
	long long mid;
	unsigned long long id;
};

int ev_cursor_decode(const char *s, struct ev_cursor *c, struct ev_error *err);
/* Encode a cursor; returns a malloc'd string. */
char *ev_cursor_encode(const struct ev_cursor *c);
/* The cursor after row `row` of a result of q. */
void ev_cursor_from_row(const struct ev_query *q, const struct ev_rowset *rs, size_t row,
                        struct ev_cursor *c);

/* Order two rows of results of the same list query (from different sources) as the query
 * orders them: by its sort column (NULLs first ascending, last descending), then id. */
int ev_list_row_cmp(const struct ev_query *q, const struct ev_rowset *a, size_t ra,
                    const struct ev_rowset *b, size_t rb);

/* A position in a list merged from several sources: one cursor per source, named by it.
 * Encoded for --after as "m1,NAME=v1:<id>:<value>,NAME=-,NAME=." where "-" is a source not
 * read yet and "." one whose rows are all shown. */
enum ev_mcursor_state { EV_MC_START, EV_MC_AT, EV_MC_DONE };
struct ev_mcursor {
	char name[65];
	enum ev_mcursor_state state;
	struct ev_cursor c;
};
char *ev_mcursor_encode(const struct ev_mcursor *v, int n);
/* Merge the breakdowns of one list read on n sources (results of ev_query_group: the group, its
 * count, its oldest create_time; parts[i] NULL for a source not read) into one: a row per
 * group, counts summed, the oldest kept, by count descending then group (NULL first), at
 * most 200 rows. NULL when no source was read. */
struct ev_rowset *ev_group_merge(struct ev_rowset *const *parts, int n);

/* The column that names a merged row's source, first (no table has a column of that name). */
#define EV_SOURCE_COL "@source"
/* An empty rowset of shape's columns with EV_SOURCE_COL first, and a row of rs added to it. */
struct ev_rowset *ev_rowset_with_source(const struct ev_rowset *shape);
void ev_rowset_add_sourced(struct ev_rowset *m, const struct ev_rowset *rs, size_t r,
                           const char *source);
/* Merge n sources' pages of one list (rs[i]: up to limit + 1 rows of q[i] after mc[i], or NULL
 * when source i was not read or did not answer) into one page of up to limit rows in the
 * list's order, each named by its source; advance mc[i] past the rows source i gave (DONE
 * when it has no more). stop (NULL, or one per source): a payload search that stopped at its
 * cap (ev_list_search_fold) — no row past stop[i] is taken from any source while source i
 * has not been read past it, and source i goes on from there. NULL when no source was read;
 * *more: a next page exists. */
struct ev_rowset *ev_list_merge(struct ev_query *const *q, struct ev_rowset *const *rs,
                                const char *const *names, int n, int limit,
                                const struct ev_cursor *stop, struct ev_mcursor *mc, bool *more);
/* Decode into a malloc'd array *v of *n entries. */
int ev_mcursor_decode(const char *s, struct ev_mcursor **v, int *n, struct ev_error *err);

#endif
