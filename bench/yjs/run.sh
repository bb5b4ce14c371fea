#!/bin/sh
# run.sh: lib/yjs vs yjs benchmark on the automerge-paper trace; prints one JSON line per run (3 runs each).
# usage: bench/yjs/run.sh   (needs node and tests/yjs/node_modules, i.e. `npm ci` in tests/yjs)
set -eu
HERE=$(cd "$(dirname "$0")" && pwd)
TOP=$(cd "$HERE/../.." && pwd)
TMP=$(mktemp -d "${TMPDIR:-/tmp}/yjs-bench.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
node "$HERE/prepare.mjs" "$HERE/data/automerge-paper.json.gz" "$TMP/edits.txt" >&2
gcc -std=c11 -D_GNU_SOURCE -O2 -I"$TOP/lib" -o "$TMP/bench_core" "$HERE/bench_core.c" "$TOP"/lib/yjs/*.c "$TOP/lib/err.c" -lm
for i in 1 2 3; do "$TMP/bench_core" "$TMP/edits.txt" 1 2>"$TMP/core.bin"; done
# ESM resolves packages next to the script: run a copy beside the pinned node_modules
ln -s "$TOP/tests/yjs/node_modules" "$TMP/node_modules"
cp "$HERE/bench_yjs.mjs" "$TMP/"
for i in 1 2 3; do node "$TMP/bench_yjs.mjs" "$HERE/data/automerge-paper.json.gz" "$TMP/yjs.bin"; done
if cmp -s "$TMP/core.bin" "$TMP/yjs.bin"; then echo '{"encoded_state":"identical"}'; else echo '{"encoded_state":"DIFFERENT"}'; fi
