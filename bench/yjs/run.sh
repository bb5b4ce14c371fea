#!/bin/sh
# run.sh: lib/yjs vs yjs benchmark on the automerge-paper trace; one JSON line per run, then the medians per phase.
# usage: bench/yjs/run.sh [RUNS]   (default 5 runs each; needs node and tests/yjs/node_modules, i.e. `npm ci` in tests/yjs)
set -eu
RUNS=${1:-5}
HERE=$(cd "$(dirname "$0")" && pwd)
TOP=$(cd "$HERE/../.." && pwd)
TMP=$(mktemp -d "${TMPDIR:-/tmp}/yjs-bench.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
node "$HERE/prepare.mjs" "$HERE/data/automerge-paper.json.gz" "$TMP/edits.txt" >&2
gcc -std=c11 -D_GNU_SOURCE -O2 -I"$TOP/lib" -o "$TMP/bench_core" "$HERE/bench_core.c" "$TOP"/lib/yjs/*.c "$TOP/lib/core/err.c" -lzstd -lm
# ESM resolves packages next to the script: run a copy beside the pinned node_modules
ln -s "$TOP/tests/yjs/node_modules" "$TMP/node_modules"
cp "$HERE/bench_yjs.mjs" "$TMP/"
# core and yjs runs alternate, so a change in the machine's load hits both alike
i=0
while [ "$i" -lt "$RUNS" ]; do
	"$TMP/bench_core" "$TMP/edits.txt" 1 2>"$TMP/core.bin" | tee -a "$TMP/runs.jsonl"
	node "$TMP/bench_yjs.mjs" "$HERE/data/automerge-paper.json.gz" "$TMP/yjs.bin" | tee -a "$TMP/runs.jsonl"
	i=$((i + 1))
done
if cmp -s "$TMP/core.bin" "$TMP/yjs.bin"; then same=identical; else same=DIFFERENT; fi
node -e '
const runs = require("fs").readFileSync(process.argv[1], "utf8").trim().split("\n").map(JSON.parse)
const med = a => { const s = a.slice().sort((x, y) => x - y); const m = s.length >> 1; return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2 }
const out = { runs: runs.length / 2, encoded_state: process.argv[2] }
for (const impl of ["core", "yjs"]) {
  const r = runs.filter(x => x.impl === impl)
  for (const k of ["replay_ms", "encode_ms", "decode_ms", "capture_ms", "remote_apply_ms", "rss_after_replay_kb", "peak_rss_kb", "bytes"]) out[impl + "_" + k] = med(r.map(x => x[k]))
}
for (const k of ["replay_ms", "encode_ms", "decode_ms", "remote_apply_ms", "peak_rss_kb"]) out["ratio_" + k] = +(out["core_" + k] / out["yjs_" + k]).toFixed(3)
console.log(JSON.stringify(out))' "$TMP/runs.jsonl" "$same"
