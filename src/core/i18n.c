/* evtop — the translated interface: the locale's two categories and the catalogue. */
#include "core/i18n.h"

#include <langinfo.h>
#include <locale.h>
#include <stdlib.h>
#include <string.h>

const char *ev_i18n_pgettext(const char *key, const char *msg)
{
#if ENABLE_NLS
	const char *t = dcgettext(NULL, key, LC_MESSAGES);
	return t == key ? msg : t;
#else
	(void)key;
	return msg;
#endif
}

void ev_i18n_init(const char *localedir)
{
	setlocale(LC_ALL, "C");
	setlocale(LC_CTYPE, "");
	const char *cs = nl_langinfo(CODESET);
	if (cs == NULL || strcmp(cs, "UTF-8") != 0)
		setlocale(LC_CTYPE, "C.UTF-8");
#if ENABLE_NLS
	setlocale(LC_MESSAGES, "");
	const char *dir = getenv("EVTOP_LOCALEDIR");
	bindtextdomain(PACKAGE, dir != NULL && dir[0] != '\0' ? dir : localedir);
	bind_textdomain_codeset(PACKAGE, "UTF-8");
	textdomain(PACKAGE);
#else
	(void)localedir;
#endif
}

void ev_i18n_off(void)
{
#if ENABLE_NLS
	setlocale(LC_MESSAGES, "C");
#endif
}

bool ev_i18n_active(void)
{
#if ENABLE_NLS
	/* The catalogue's header (the translation of "") exists only when one was found; through
	 * a variable, so that xgettext does not take "" for a message. */
	const char *header_key = "";
	const char *h = gettext(header_key);
	return h != NULL && h[0] != '\0';
#else
	return false;
#endif
}
