/* evtop — the terminal: curses setup and teardown (a real tty, or a virtual terminal for
 * scripted runs), semantic styles mapped to colours per theme, and the fatal path that
 * restores the terminal. The only module besides the views that includes curses. */
#ifndef EV_UI_TERM_H
#define EV_UI_TERM_H

#include "core/style.h"

#include <stdbool.h>
#include <stddef.h>

/* Start curses. With `virtual_term`, render into a terminal of that type on /dev/null
 * (scripted runs and tests: no tty needed) sized cols x rows. `mono` forces monochrome (also
 * when NO_COLOR is set or the terminal has no colours). Returns -1 if the terminal cannot be
 * set up (TERM unknown or dumb), with a message in msg. */
int ev_term_start(const char *virtual_term, int cols, int rows, bool mono, char *msg,
                  size_t msgsize);
/* Restore the terminal (idempotent, async-signal tolerant enough for the fatal path). */
void ev_term_stop(void);
/* The curses attribute of a style. */
int ev_term_attr(enum ev_style s);
/* Resize the virtual terminal (scripted), or pick up the real terminal's new size; either way
 * the next update repaints the whole screen. */
void ev_term_resize(int cols, int rows);
bool ev_term_is_virtual(void);
/* Bytes for the terminal itself (an OSC 52 copy), written on standard output past curses,
 * which moves no cursor for them. Returns -1 when they cannot be written. */
int ev_term_send(const char *s, size_t n);

#endif
