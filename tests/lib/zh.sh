# evtop's tests of the Chinese interface. Source it, then call zh_setup DIR: it compiles
# po/zh_CN.po into DIR/locale (EVTOP_LOCALEDIR) and makes sure the zh_CN.UTF-8 locale exists:
# the system's (scripts/test generates it as root), or one built by localedef into DIR/loc
# (LOCPATH). Without msgfmt or localedef it is a hard error under CI or EVTOP_REQUIRE_DB=1 and
# a skip (77) otherwise. ZH_LANG is the locale to run the console in.
ZH_LANG=zh_CN.UTF-8
zh_need() {
	if [ "${CI:-}" = true ] || [ "${EVTOP_REQUIRE_DB:-}" = 1 ]; then echo "$1"; exit 99; fi
	echo "$1: skipping"
	exit 77
}
zh_setup() {
	zd=$1
	src=${EVTOP_SRCDIR:?}
	command -v msgfmt >/dev/null || zh_need "msgfmt missing (install gettext)"
	mkdir -p "$zd/locale/zh_CN/LC_MESSAGES" || exit 99
	msgfmt --check -o "$zd/locale/zh_CN/LC_MESSAGES/evtop.mo" "$src/po/zh_CN.po" ||
		{ echo "msgfmt refuses po/zh_CN.po"; exit 99; }
	EVTOP_LOCALEDIR=$zd/locale
	export EVTOP_LOCALEDIR
	if ! locale -a 2>/dev/null | grep -qi '^zh_CN\.utf-\{0,1\}8$'; then
		command -v localedef >/dev/null || zh_need "no zh_CN.UTF-8 locale and no localedef (install locales)"
		mkdir -p "$zd/loc" || exit 99
		localedef -i zh_CN -f UTF-8 "$zd/loc/zh_CN.UTF-8" >/dev/null 2>&1 ||
			zh_need "localedef cannot build zh_CN.UTF-8 (install locales)"
		LOCPATH=$zd/loc
		export LOCPATH
	fi
}
