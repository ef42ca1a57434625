/* evtop — styled, wrapping text lines as a view (see textview.h). */
#include <config.h>

#include "ui/textview.h"
#include "core/text.h"

#include <stdlib.h>
#include <string.h>

struct text_view *text_view_new(const struct view_ops *ops)
{
	struct text_view *t = ev_xcalloc(1, sizeof(*t));
	t->base.ops = ops;
	return t;
}

void text_view_add(struct text_view *t, int style, const char *text)
{
	t->lines = ev_xrealloc(t->lines, (size_t)(t->n + 1) * sizeof(*t->lines));
	t->styles = ev_xrealloc(t->styles, (size_t)(t->n + 1) * sizeof(*t->styles));
	t->lines[t->n] = ev_xstrdup(text);
	t->styles[t->n] = style;
	t->n++;
}

void text_view_draw(struct app *a, struct view *v, int top, int height, int cols)
{
	struct text_view *t = (struct text_view *)v;
	(void)a;
	int y = top;
	for (int i = 0; i < t->n && y < top + height; i++) {
		/* Long lines (a statement) wrap rather than hide their end. */
		char *safe = ev_text_sanitize(t->lines[i], strlen(t->lines[i]));
		const char *p = safe;
		do {
			/* Whole characters: a wide one at the edge starts the next line, and so
			 * does the character before a closing mark that would begin it. */
			size_t cut = ev_text_wrap_cut(p, cols);
			if (cut == 0) { /* narrower than its first character: that goes alone */
				int lead = 0;
				cut = ev_text_skip_cols(p, 1, &lead);
			}
			char *part = ev_xstrndup(p, cut);
			draw_text_pad(y++, 0, cols, t->styles[i], part);
			free(part);
			p += cut;
		} while (*p && y < top + height);
		free(safe);
	}
}

void text_view_free(struct view *v)
{
	struct text_view *t = (struct text_view *)v;
	for (int i = 0; i < t->n; i++)
		free(t->lines[i]);
	free(t->lines);
	free(t->styles);
	free(t);
}

void text_view_no_result(struct app *a, struct view *v, struct ev_job *job)
{
	(void)a;
	(void)v;
	(void)job;
}
