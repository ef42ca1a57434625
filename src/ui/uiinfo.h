/* evtop — facts about the curses library (no <curses.h> outside src/ui). */
#ifndef EV_UI_UIINFO_H
#define EV_UI_UIINFO_H

/* The curses library's version string, e.g. "ncurses 6.4.20221231". Static storage. */
const char *ev_ui_curses_info(void);

#endif
