#include <config.h>

#include "ui/uiinfo.h"

#include <curses.h>

const char *ev_ui_curses_info(void)
{
	return curses_version();
}
