/* evtop — the translated interface (GNU gettext; po/README says what is marked and what never
 * is). _("…") translates a string where it is used; N_("…") marks one kept in a table, to be
 * translated where it is drawn; P_("context", "…") gives a context where one English word has
 * two translations (the two tables' state names). Without NLS (--disable-nls) each is the
 * English string itself. */
#ifndef EV_CORE_I18N_H
#define EV_CORE_I18N_H

#include <config.h>

#include <stdbool.h>

#if ENABLE_NLS
#include <libintl.h>
#define _(s) gettext(s)
#else
#define _(s) ((const char *)(s))
#endif
#define N_(s) s
/* The context and the message in one key, as gettext's msgctxt stores them. */
#define P_(ctx, s) ev_i18n_pgettext(ctx "\004" s, s)

/* The translation of the key "ctx\004msg", or msg when there is none. */
const char *ev_i18n_pgettext(const char *key, const char *msg) __attribute__((format_arg(2)));

/* Take the language from the environment: LC_CTYPE (a UTF-8 one, else C.UTF-8, since widths
 * come from wcwidth) and LC_MESSAGES only; LC_NUMERIC, LC_COLLATE, LC_TIME and the rest stay
 * "C", so numbers, sort orders and times never change with the language. The catalogues come
 * from localedir, or from $EVTOP_LOCALEDIR when it is set (a build tree's tests). */
void ev_i18n_init(const char *localedir);

/* English from here on, whatever the locale: for output that programs parse (--format json
 * and csv, evtop check's plugin line, the metrics). Call it before any thread starts. */
void ev_i18n_off(void);

/* Whether the messages are translated (the interface is not English). */
bool ev_i18n_active(void);

#endif
