/* evtop — a view of styled text lines that wrap at the screen's width (confirmations, tallies,
 * results): the shared part; each user supplies its own actions. */
#ifndef EV_UI_TEXTVIEW_H
#define EV_UI_TEXTVIEW_H

#include "ui/app.h"

struct text_view {
	struct view base; /* first: a text_view is a view */
	char **lines;
	int *styles;
	int n;
};

/* A new text view with these ops (their draw and free may be text_view_draw/_free). */
struct text_view *text_view_new(const struct view_ops *ops);
/* Append a line (copied; sanitised when drawn). */
void text_view_add(struct text_view *t, int style, const char *text);
void text_view_draw(struct app *a, struct view *v, int top, int height, int cols);
void text_view_free(struct view *v);
/* A result hook that ignores results (text views run no queries). */
void text_view_no_result(struct app *a, struct view *v, struct ev_job *job);

#endif
