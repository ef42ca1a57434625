/* evtop — terminal setup, styles, teardown (see term.h). */
#include <config.h>

#include "ui/term.h"
#include "core/i18n.h"

#include <curses.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <term.h>
#include <unistd.h>

static SCREEN *screen;
static FILE *null_out, *null_in;
static bool started, is_virtual;
static int attrs[EV_STYLE_COUNT];

struct style_colour {
	short fg, bg;
	int attr;      /* with colours */
	int mono_attr; /* without */
};

/* The default theme. -1 = the terminal's default colour. */
static const struct style_colour theme[EV_STYLE_COUNT] = {
        [EV_STYLE_NORMAL] = {-1, -1, 0, 0},
        [EV_STYLE_SELECTED] = {COLOR_BLACK, COLOR_CYAN, 0, A_REVERSE},
        [EV_STYLE_HEADER] = {COLOR_BLACK, COLOR_GREEN, 0, A_REVERSE},
        [EV_STYLE_TITLE] = {COLOR_CYAN, -1, A_BOLD, A_BOLD},
        [EV_STYLE_HINT] = {COLOR_BLACK, COLOR_CYAN, 0, A_REVERSE},
        [EV_STYLE_STATUS_LINE] = {COLOR_BLACK, COLOR_WHITE, 0, A_REVERSE},
        [EV_STYLE_STATUS_PENDING] = {COLOR_CYAN, -1, 0, 0},
        [EV_STYLE_STATUS_PROCESSING] = {COLOR_BLUE, -1, A_BOLD, 0},
        [EV_STYLE_STATUS_SUCCESS] = {COLOR_GREEN, -1, 0, 0},
        [EV_STYLE_STATUS_FAILED] = {COLOR_RED, -1, A_BOLD, A_BOLD},
        [EV_STYLE_STATUS_CANCELLED] = {COLOR_MAGENTA, -1, 0, A_DIM},
        [EV_STYLE_STUCK] = {COLOR_YELLOW, -1, A_BOLD, A_BOLD | A_UNDERLINE},
        [EV_STYLE_CHANGED] = {COLOR_BLACK, COLOR_YELLOW, 0, A_STANDOUT},
        [EV_STYLE_STALE] = {COLOR_BLACK, COLOR_YELLOW, 0, A_REVERSE | A_BLINK},
        [EV_STYLE_ERROR] = {COLOR_WHITE, COLOR_RED, A_BOLD, A_REVERSE | A_BOLD},
        [EV_STYLE_WARNING] = {COLOR_YELLOW, -1, A_BOLD, A_BOLD},
        [EV_STYLE_MARKED] = {COLOR_YELLOW, -1, A_BOLD, A_BOLD},
        [EV_STYLE_DELETED] = {COLOR_WHITE, COLOR_RED, 0, A_REVERSE},
        [EV_STYLE_NULL_VALUE] = {COLOR_BLUE, -1, 0, A_DIM},
        [EV_STYLE_MARKER] = {COLOR_YELLOW, -1, A_BOLD, A_BOLD},
        [EV_STYLE_JSON_KEY] = {COLOR_BLUE, -1, A_BOLD, A_BOLD},
        [EV_STYLE_JSON_STRING] = {COLOR_GREEN, -1, 0, 0},
        [EV_STYLE_JSON_NUMBER] = {COLOR_CYAN, -1, 0, 0},
        [EV_STYLE_JSON_LITERAL] = {COLOR_MAGENTA, -1, 0, 0},
        [EV_STYLE_JSON_PUNCT] = {-1, -1, 0, 0},
        [EV_STYLE_JSON_FOLD] = {COLOR_YELLOW, -1, 0, A_UNDERLINE},
        [EV_STYLE_MATCH] = {COLOR_BLACK, COLOR_YELLOW, 0, A_REVERSE},
};

static void setup_styles(bool mono)
{
	if (!mono && has_colors()) {
		start_color();
		use_default_colors();
		for (int s = 0; s < EV_STYLE_COUNT; s++) {
			init_pair((short)(s + 1), theme[s].fg, theme[s].bg);
			attrs[s] = (int)COLOR_PAIR(s + 1) | theme[s].attr;
		}
	} else {
		for (int s = 0; s < EV_STYLE_COUNT; s++)
			attrs[s] = theme[s].mono_attr;
	}
}

int ev_term_start(const char *virtual_term, int cols, int rows, bool mono, char *msg,
                  size_t msgsize)
{
	if (virtual_term != NULL) {
		null_out = fopen("/dev/null", "w");
		null_in = fopen("/dev/null", "r");
		if (null_out == NULL || null_in == NULL) {
			snprintf(msg, msgsize, "%s", _("cannot open /dev/null"));
			return -1;
		}
		screen = newterm(virtual_term, null_out, null_in);
		if (screen == NULL) {
			snprintf(msg, msgsize, _("unknown terminal type %s"), virtual_term);
			return -1;
		}
		is_virtual = true;
		resize_term(rows, cols);
	} else {
		const char *term = getenv("TERM");
		if (term == NULL || term[0] == '\0' || strcmp(term, "dumb") == 0) {
			snprintf(msg, msgsize,
			         _("the console needs a terminal (TERM is %s); the sub-commands "
			           "work "
			           "without one: evtop --help"),
			         /* TRANSLATORS: TERM is not set. */
			         term == NULL || term[0] == '\0' ? _("unset") : term);
			return -1;
		}
		if (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO)) {
			snprintf(msg, msgsize, "%s",
			         _("the console needs a terminal on stdin and stdout; the "
			           "sub-commands "
			           "work without one: evtop --help"));
			return -1;
		}
		screen = newterm(NULL, stdout, stdin);
		if (screen == NULL) {
			snprintf(msg, msgsize, _("cannot use the terminal type %s"), term);
			return -1;
		}
	}
	set_term(screen);
	started = true;
	cbreak();
	noecho();
	nonl();
	keypad(stdscr, TRUE);
	nodelay(stdscr, TRUE);
	set_escdelay(25);
	curs_set(0);
	setup_styles(mono || getenv("NO_COLOR") != NULL);
	return 0;
}

void ev_term_stop(void)
{
	if (!started)
		return;
	started = false;
	curs_set(1);
	endwin();
	if (screen != NULL) {
		delscreen(screen);
		screen = NULL;
	}
	if (null_out)
		fclose(null_out);
	if (null_in)
		fclose(null_in);
	null_out = null_in = NULL;
}

int ev_term_attr(enum ev_style s)
{
	return (unsigned)s < EV_STYLE_COUNT ? attrs[s] : 0;
}

void ev_term_resize(int cols, int rows)
{
	struct winsize ws;
	if (is_virtual)
		resize_term(rows, cols);
	else if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0 && ws.ws_row > 0)
		resize_term(ws.ws_row, ws.ws_col);
	else
		return;
	/* What the terminal shows after a resize is not what curses last wrote (it reflows,
	 * cuts or keeps old lines): the next update repaints every cell. */
	clearok(curscr, TRUE);
}

bool ev_term_is_virtual(void)
{
	return is_virtual;
}

int ev_term_send(const char *s, size_t n)
{
	/* curses has written what it had (doupdate flushes); a scripted run's standard output is
	 * its log, where the sequence is as harmless as on a terminal. */
	if (fwrite(s, 1, n, stdout) != n || fflush(stdout) != 0)
		return -1;
	return 0;
}
