#!/bin/bash
# The layers include one way (docs/architecture.md): cli -> cuse ->
# emulator -> topologies -> fabric -> lib. A file that includes a header
# of a layer above its own fails this test, naming the line.
. "$(dirname "$0")/lib.sh"
SRC="$(cd "$(dirname "$0")/../.." && pwd)"
ORDER="lib fabric topologies emulator cuse cli"

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
		done < <(grep -n '^#include "[a-z]*/' "$f")
	done
done
[ "$checked" -gt 50 ] && pass "read $checked sources" || fail "only $checked sources found"
[ -z "$bad" ] && pass "no layer includes one above it" || fail "includes against the layers:$bad"
finish
