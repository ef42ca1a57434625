#!/bin/sh
# The Chinese catalogue is complete: the messages of today's sources (xgettext with
# po/Makevars' own options over po/POTFILES.in, as `make -C po update-po` runs it), merged into
# po/zh_CN.po, must be all translated, none fuzzy (msgfmt --check alone exits 0 on untranslated
# messages: its --statistics line is read). And the state names the catalogue gives each table
# are the model document's (src/core/model.c's status_zh). Needs no database.
set -u
src=${EVTOP_SRCDIR:?}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/evtpo.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT
. "$src/tests/lib/tap.sh"
. "$src/tests/lib/zh.sh"
for p in xgettext msgmerge msgfmt gettext; do
	command -v $p >/dev/null || zh_need "$p missing (install gettext)"
done

# XGETTEXT_OPTIONS of po/Makevars, its continuation lines joined.
opts=$(sed -n '/^XGETTEXT_OPTIONS *=/,/[^\\]$/p' "$src/po/Makevars" | sed -e 's/^XGETTEXT_OPTIONS *= *//' -e 's/\\$//' | tr '\n' ' ')
# shellcheck disable=SC2086
(cd "$src" && xgettext $opts --package-name=evtop -f po/POTFILES.in -o "$tmp/evtop.pot") 2>"$tmp/xgettext.err"
rc=$?
grep -v 'msgid-bugs-address' "$tmp/xgettext.err" | grep . && rc=1
[ -s "$tmp/evtop.pot" ] || rc=1
check "xgettext reads po/POTFILES.in" [ $rc -eq 0 ]
total=$(grep -c '^msgid ' "$tmp/evtop.pot")
total=$((total - 1))
check "the sources have messages to translate ($total)" [ "$total" -gt 0 ]

msgmerge --quiet --no-wrap -o "$tmp/zh_CN.po" "$src/po/zh_CN.po" "$tmp/evtop.pot" 2>"$tmp/merge.err"
check "msgmerge merges po/zh_CN.po with them" [ $? -eq 0 ]
stats=$(msgfmt --check --statistics -o "$tmp/zh_CN.mo" "$tmp/zh_CN.po" 2>&1)
rc=$?
echo "# msgfmt: $stats"
check "msgfmt --check accepts the merged catalogue" [ $rc -eq 0 ]
translated=$(echo "$stats" | sed -n 's/^\([0-9]*\) translated message.*/\1/p')
check "every message is translated ($translated of $total)" [ "${translated:-0}" -eq "$total" ]
case $rc:$stats in 0:*fuzzy* | 0:*untranslated* | [!0]*) not_ok "no message is fuzzy or untranslated" ;; *) ok "no message is fuzzy or untranslated" ;; esac
if [ "${translated:-0}" -ne "$total" ]; then
	echo "# untranslated or fuzzy:"
	msgattrib --untranslated --only-fuzzy --no-wrap "$tmp/zh_CN.po" 2>/dev/null | grep '^msgid' | head -n 20 | sed 's/^/#   /'
	msgattrib --untranslated --no-obsolete --no-wrap "$tmp/zh_CN.po" 2>/dev/null | grep '^msgid' | head -n 20 | sed 's/^/#   /'
fi

# The state names, per table, through the compiled catalogue and gettext(1) in zh_CN.
zh_setup "$tmp/zh"
# model.c's status_en and status_zh lines, the message table's first, then the outbox's.
names() { grep "\.$1 = {" "$src/src/core/model.c" | sed -n "$2p" | sed 's/.*{\(.*\)}.*/\1/' | tr -d '",'; }
row=1
for table in message outbox; do
	zh=$(names status_zh $row)
	set -- $(names status_en $row)
	row=$((row + 1))
	for z in $zh; do
		got=$(LC_ALL=$ZH_LANG LANGUAGE= TEXTDOMAINDIR=$EVTOP_LOCALEDIR gettext -d evtop -c "$table" "$1")
		check "the $table table's '$1' is $z ($got)" [ "$got" = "$z" ]
		shift
	done
done
tap_done
