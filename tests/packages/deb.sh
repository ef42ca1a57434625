#!/bin/sh
# The Debian package, built and used as an operator would (issue 24): `make deb` in the build
# tree BUILD (the first argument, or $EVTOP_BUILD), lintian on the .deb and the .dsc, then
# `apt-get install ./evtop_*.deb` on this machine, the installed evtop run (--version, the
# manual in English and Chinese, the Chinese catalogue, a read-only dashboard against the
# harness's server), and `apt-get purge` checked to remove every file it installed.
# It installs a package, so it is not part of `make check`: scripts/test runs it through
# tests/harness/run-test (which starts the server) as root. Not as root: skipped, or a
# failure where CI=true or EVTOP_REQUIRE_DB=1.
set -u
. "$(dirname "$0")/../lib/tap.sh"
build=$(cd "${1:-${EVTOP_BUILD:-.}}" && pwd) || exit 99
cnf=${EVTOP_TEST_DEFAULTS_FILE:?run through tests/harness/run-test}

if [ "$(id -u)" -ne 0 ]; then
	if [ "${CI:-}" = true ] || [ "${EVTOP_REQUIRE_DB:-}" = 1 ]; then
		echo "deb.sh: installing the package needs root"
		exit 99
	fi
	echo "deb.sh: not root: skipping"
	exit 77
fi
if dpkg-query -W -f='${Status}' evtop 2>/dev/null | grep -q 'installed'; then
	echo "deb.sh: an evtop package is installed on this machine already; not touching it"
	exit 99
fi
version=$(sed -n 's/^PACKAGE_VERSION = //p' "$build/Makefile")
client=${MARIADB_CLIENT:-$(command -v mariadb || command -v mysql)}
tree_before=$(cd "$EVTOP_SRCDIR" && git status --porcelain 2>/dev/null)

out=$(mktemp -d "${TMPDIR:-/tmp}/evdeb.XXXXXX") || exit 99
installed=no
cleanup() {
	[ $installed = yes ] && apt-get purge -y -q evtop >/dev/null 2>&1
	rm -rf "$out"
}
trap cleanup EXIT

# --- the build ---------------------------------------------------------------------------
if make -C "$build" deb DEB_OUTDIR="$out/pkg" >"$out/build.log" 2>&1; then
	ok "make deb builds the source and binary packages"
else
	not_ok "make deb builds the source and binary packages"
	tail -n 60 "$out/build.log"
	tap_done
	exit 1
fi
deb=$(ls "$out"/pkg/evtop_"$version"-*_*.deb 2>/dev/null | head -n 1)
check "the .deb is evtop_${version}-N_ARCH.deb" test -f "$deb"
check "the .dsc, the orig tarball and the .changes are there" sh -c \
	"ls '$out'/pkg/evtop_$version-*.dsc '$out'/pkg/evtop_$version.orig.tar.gz '$out'/pkg/evtop_$version-*.changes >/dev/null"
grep -q '^/usr/bin/make check-unit' "$out/build.log" && grep -q '^# FAIL: *0$' "$out/build.log"
check "dh_auto_test ran make check-unit, and it passed" test $? -eq 0
tree_after=$(cd "$EVTOP_SRCDIR" && git status --porcelain 2>/dev/null)
check "the build left nothing in the source tree (git status unchanged)" \
	test "$tree_before" = "$tree_after"

if lintian --fail-on error,warning "$out"/pkg/evtop_*.changes >"$out/lintian.log" 2>&1; then
	ok "lintian: no error and no warning on the .deb and the .dsc"
else
	not_ok "lintian: no error and no warning on the .deb and the .dsc"
	cat "$out/lintian.log"
fi

depends=$(dpkg-deb -f "$deb" Depends)
for lib in libncursesw6 libmariadb3 libjansson4 libmicrohttpd12 libcrypt1; do
	case ", $depends" in
	*", $lib "* | *", $lib,"*) ok "Depends names $lib (from shlibs)" ;;
	*) not_ok "Depends names $lib (from shlibs): $depends" ;;
	esac
done
dpkg-deb -c "$deb" | awk '{print $6}' | sed 's|^\./|/|' >"$out/contents"
for f in /usr/bin/evtop /usr/share/man/man1/evtop.1.gz /usr/share/man/zh_CN/man1/evtop.1.gz \
	/usr/share/evtop/sql/schema.sql /usr/share/evtop/sql/audit.sql /usr/share/evtop/sql/grants.sql \
	/usr/share/evtop/sql/recommended-indexes.sql /usr/share/locale/zh_CN/LC_MESSAGES/evtop.mo \
	/usr/share/doc/evtop/copyright /usr/share/doc/evtop/evtop.conf.example \
	/usr/share/doc/evtop/metrics.cnf.example /usr/share/doc/evtop/runbook.md.gz \
	/usr/share/doc/evtop/zh_CN/runbook.md.gz /lib/systemd/system/evtop-metrics.service \
	/usr/share/bash-completion/completions/evtop /usr/share/zsh/vendor-completions/_evtop; do
	check "the package holds $f" grep -qx "$f" "$out/contents"
done
check "nothing under /usr/local or the build tree" sh -c "! grep -E '^/usr/local|$build' '$out/contents'"

# --- installed by apt, used, purged --------------------------------------------------------
if (cd "$out/pkg" && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
	"./$(basename "$deb")") >"$out/install.log" 2>&1; then
	installed=yes
	ok "apt-get install ./$(basename "$deb")"
else
	not_ok "apt-get install ./$(basename "$deb")"
	tail -n 30 "$out/install.log"
	tap_done
	exit 1
fi
check "/usr/bin/evtop is the package's" sh -c "dpkg -S /usr/bin/evtop | grep -q '^evtop:'"
v=$(/usr/bin/evtop --version 2>&1)
check "evtop --version names $version" sh -c "echo '$v' | grep -qx 'evtop $version'"
check "evtop --version names the client library and the servers" sh -c \
	"echo '$v' | grep -q '^client library: ' && echo '$v' | grep -q '^servers: MySQL 8.0+'"
# A minimal image may tell dpkg to leave manuals and catalogues out (path-exclude in
# /etc/dpkg/dpkg.cfg.d): then they are read from the package file instead, and the test says so.
dpkg-deb -x "$deb" "$out/x"
excluded() {
	[ ! -e "$1" ] && grep -hs '^path-exclude' /etc/dpkg/dpkg.cfg.d/* >/dev/null
}
manual() { # manual PAGE-PATH [man options]: the installed page, or the package's if excluded
	page=$1
	shift
	if excluded "$page"; then
		man "$@" -P cat -l "$out/x$page"
	else
		man "$@" -P cat evtop
	fi
}
how=""
excluded /usr/share/man/man1/evtop.1.gz && how=" (dpkg excludes manuals here: the package's file)"
manual /usr/share/man/man1/evtop.1.gz >"$out/man.txt" 2>"$out/man.err"
check "man evtop shows the installed manual$how" grep -q 'evtop' "$out/man.txt"
check "its FILES name the installed SQL" grep -q '/usr/share/evtop/sql/' "$out/man.txt"
LANG=zh_CN.UTF-8 manual /usr/share/man/zh_CN/man1/evtop.1.gz -L zh_CN >"$out/man-zh.txt" 2>&1
check "man -L zh_CN evtop shows the Chinese manual$how" grep -q '名称' "$out/man-zh.txt"
mo=/usr/share/locale/zh_CN/LC_MESSAGES/evtop.mo
if excluded $mo; then
	how=" (dpkg excludes catalogues here: the package's file)"
	LANG=zh_CN.UTF-8 LANGUAGE= EVTOP_LOCALEDIR="$out/x/usr/share/locale" /usr/bin/evtop --help \
		>"$out/help-zh.txt" 2>&1
else
	how=""
	LANG=zh_CN.UTF-8 LANGUAGE= /usr/bin/evtop --help >"$out/help-zh.txt" 2>&1
fi
check "the installed catalogue speaks Chinese (LANG=zh_CN.UTF-8 evtop --help)$how" \
	grep -q '用法' "$out/help-zh.txt"
# The installed completion, loaded the way bash-completion loads it on the first <TAB>.
words=$(bash -c '. /usr/share/bash-completion/bash_completion
	__load_completion evtop || exit 1
	complete -p evtop >/dev/null || exit 1
	COMP_WORDS=(evtop list ""); COMP_CWORD=2; COMP_LINE="evtop list "; COMP_POINT=${#COMP_LINE}
	$(complete -p evtop | sed -n "s/.*-F \([^ ]*\) .*/\1/p") evtop "" list
	printf "%s\n" "${COMPREPLY[@]}"' 2>&1 | sort | tr '\n' ' ')
want=$(/usr/bin/evtop --completion-words kinds list | sort | tr '\n' ' ')
check "bash completes 'evtop list <TAB>' from the installed files ($words)" \
	test -n "$want" -a "$words" = "$want"
check "zsh finds _evtop in its default fpath" \
	zsh -f -c 'for d in $fpath; do [ -f $d/_evtop ] && exit 0; done; exit 1'
sql -e "INSERT INTO biz_outbox_event (id, event_no, aggregate_type, aggregate_id, event_type,
	event_source, publish_channel, topic, event_payload, publish_status, retry_count,
	max_retry_count, next_retry_time)
	VALUES (1, 'DEB-1', 'ORDER', 'o1', 'ORDER_CREATED', 'order-svc', 'MQ', 'order', '{}', 3, 1, 5, NOW())"
sum_before=$(sql -e "CHECKSUM TABLE biz_outbox_event, biz_message_event" | awk '{print $2}' | tr '\n' ' ')
/usr/bin/evtop --defaults-file="$cnf" --read-only dashboard --format json >"$out/dash.json" 2>"$out/dash.err"
rc=$?
check "the installed evtop's read-only dashboard runs against the server (exit 0)" test $rc -eq 0
if jq -e '[.. | objects | select(has("failed")) | .failed] | add >= 1' "$out/dash.json" >/dev/null; then
	ok "its JSON counts the failed outbox row"
else
	not_ok "its JSON counts the failed outbox row"
	cat "$out/dash.json" "$out/dash.err"
fi
sum_after=$(sql -e "CHECKSUM TABLE biz_outbox_event, biz_message_event" | awk '{print $2}' | tr '\n' ' ')
check "the dashboard wrote nothing" test "$sum_before" = "$sum_after"
check "the metrics unit is installed, not enabled" sh -c \
	"test -f /lib/systemd/system/evtop-metrics.service && ! ls /etc/systemd/system/*.wants/evtop-metrics.service 2>/dev/null | grep -q ."

dpkg -L evtop >"$out/files"
if DEBIAN_FRONTEND=noninteractive apt-get purge -y -q evtop >"$out/purge.log" 2>&1; then
	installed=no
	ok "apt-get purge evtop"
else
	not_ok "apt-get purge evtop"
	tail -n 20 "$out/purge.log"
fi
check "dpkg knows evtop no more" sh -c "! dpkg-query -W -f='\${Status}' evtop 2>/dev/null | grep -q installed"
left=""
while IFS= read -r f; do
	[ -d "$f" ] && continue
	{ [ -e "$f" ] || [ -L "$f" ]; } && left="$left $f"
done <"$out/files"
check "every file the package installed is gone (dpkg -L)${left:+:$left}" test -z "$left"
check "/usr/share/evtop is gone" test ! -e /usr/share/evtop
tap_done
