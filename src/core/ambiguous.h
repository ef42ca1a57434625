/* evtop — East Asian Ambiguous characters (·, …, →, ≥, ─, the charts' bars, Greek and
 * Cyrillic letters …): one cell for the C library and most terminals, two for many Chinese
 * ones (Xshell, SecureCRT). The setting ambiguous_width = 2 says the terminal is of the second
 * kind: the layout then counts them as two cells, and draws the common ones as a stand-in
 * both sides agree on (ASCII, or a Wide character), so that nothing curses puts on the screen
 * is wider on the terminal than curses thinks. */
#ifndef EV_CORE_AMBIGUOUS_H
#define EV_CORE_AMBIGUOUS_H

#include <stdbool.h>
#include <stdint.h>

/* 1 (the default) or 2; anything else is 1. Set once, before any thread starts. */
void ev_ambiguous_set_width(int cells);
int ev_ambiguous_width(void);

/* Whether cp is East Asian Ambiguous (not a combining mark). */
bool ev_ambiguous_is(uint32_t cp);

/* The stand-in drawn for cp under width 2 and its cells, or NULL when there is none (the
 * character is drawn as it is, counted two cells). */
const char *ev_ambiguous_standin(uint32_t cp, int *cells);

#endif
