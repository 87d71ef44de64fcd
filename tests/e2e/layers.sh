#!/bin/bash
# The layers include one way (README "Layout"): cli -> ns -> socket -> dev ->
# ctl -> kernel -> topologies -> fabric -> lib -> abi, and the device
# files need nothing of the control plane. A file that includes a header
# of a layer above its own (or dev/ one of ctl/) fails this test, naming
# the line. The verbs provider and the preloaded library, loaded into
# other programs, include only abi/ (what they and the daemon say to each
# other) and themselves. And the map stays true: every `dir/file.c:name` the README and
# docs/ point at is defined in that file.
. "$(dirname "$0")/lib.sh"
SRC="$(cd "$(dirname "$0")/../.." && pwd)"
ORDER="abi lib fabric topologies kernel ctl dev socket ns cli"

rank() { local i=0 l; for l in $ORDER; do [ "$l" = "$1" ] && { echo $i; return; }; i=$((i + 1)); done; echo -1; }
bad=""
checked=0
for dir in $ORDER; do
	mine=$(rank "$dir")
	for f in "$SRC/$dir"/*.[ch]; do
		checked=$((checked + 1))
		while IFS=: read -r line inc; do
			inc=${inc#\#include \"}
			inc=${inc%%/*}
			theirs=$(rank "$inc")
			[ "$theirs" -gt "$mine" ] && bad="$bad ${f#"$SRC"/}:$line($inc)"
			[ "$dir" = dev ] && [ "$inc" = ctl ] && bad="$bad ${f#"$SRC"/}:$line($inc)"
		done < <(grep -n '^#include "[a-z]*/' "$f")
	done
done
vbad=""
for f in "$SRC"/verbs/*.[ch]; do
	[ -e "$f" ] || continue
	while IFS=: read -r line inc; do
		inc=${inc#\#include \"}
		case "${inc%%/*}" in abi | verbs) ;; *) vbad="$vbad ${f#"$SRC"/}:$line" ;; esac
	done < <(grep -n '^#include "[a-z]*/' "$f")
done
[ -z "$vbad" ] && pass "the provider includes only abi/ and verbs/" || fail "provider includes:$vbad"
# The fast path's library, loaded into every program: abi/ and its own.
pbad=""
for f in "$SRC"/preload/*.[ch]; do
	while IFS=: read -r line inc; do
		inc=${inc#\#include \"}
		case "${inc%%/*}" in abi | preload) ;; *) pbad="$pbad ${f#"$SRC"/}:$line" ;; esac
	done < <(grep -n '^#include "[a-z]*/' "$f")
done
[ -e "$SRC/preload/wrap.c" ] && [ -z "$pbad" ] && pass "the preloaded library includes only abi/ and preload/" ||
	fail "preload includes:${pbad:- no preload/wrap.c}"
# A function's definition (its name starts a line whose declaration
# reaches a '{' before any ';': not a prototype), a table or a macro.
defined() {
	awk -v name="$2" '
		!open && ($0 ~ "^#define " name "([^A-Za-z_0-9]|$)") { found = 1; exit }
		!open && ($0 ~ "^([A-Za-z].*[ *])?" name "(\\(|\\[\\] =)") { open = 1 }
		open && /\{/ { found = 1; exit }
		open && /;/ { open = 0 }
		END { exit !found }' "$1" 2>/dev/null
}
refs=0
stale=""
while IFS=: read -r file name; do
	refs=$((refs + 1))
	defined "$SRC/$file" "$name" || stale="$stale $file:$name"
done < <(grep -ohE '[a-z_]+/[a-z_0-9]+\.[ch]:[A-Za-z_0-9]+' "$SRC/README.md" "$SRC"/docs/*.md | sort -u)
[ "$refs" -gt 20 ] && [ -z "$stale" ] && pass "the $refs file:name references in README and docs/ are there" ||
	fail "docs point at what is not there (of $refs):${stale:- too few references found}"
# Every product source is on the map: the README's Layout names it (a
# header x.h beside its x.c is that file's interface, named with it).
layout=$(sed -n '/^Dependencies point one way/,/^| `examples\/`/p' "$SRC/README.md")
unnamed=""
named=0
# (From the tree, not git: distcheck's copy has none.)
for f in $(cd "$SRC" && ls $(for d in $ORDER verbs preload; do echo "$d/*.c $d/*.h $d/*.in"; done) 2>/dev/null); do
	named=$((named + 1))
	base=${f##*/}
	case $base in *.h) [ -e "$SRC/${f%.h}.c" ] && base=${base%.h}.c ;; esac
	grep -qF "\`$base\`" <<<"$layout" || unnamed="$unnamed $f"
done
[ "$named" -gt 100 ] && [ -z "$unnamed" ] && pass "the README's Layout names all $named sources" ||
	fail "the README's Layout does not name:${unnamed:- (only $named sources found)}"
# The model keeps its state in its objects (a fabric, its nodes, a host,
# struct uverbs_net), never in statics: two fabrics in one process stay
# apart (tests/unit/test_direct.c). Any data declared static and not
# const in fabric/ or kernel/, at file or function scope, fails here.
statics=""
for f in "$SRC"/fabric/*.[ch] "$SRC"/kernel/*.[ch]; do
	while IFS=: read -r line decl; do
		statics="$statics ${f#"$SRC"/}:$line"
	done < <(awk '/^[ \t]*static / && !/const/ {
			p = index($0, "("); e = index($0, "="); s = index($0, ";")
			if (!p || (e && e < p) || (s && s < p)) print FNR ":" $0 }' "$f")
done
[ -z "$statics" ] && pass "no mutable static data in the model (fabric/, kernel/)" ||
	fail "mutable statics in the model:$statics"
[ "$checked" -gt 50 ] && pass "read $checked sources" || fail "only $checked sources found"
[ -z "$bad" ] && pass "no layer includes one above it" || fail "includes against the layers:$bad"
finish
