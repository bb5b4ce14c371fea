#!/bin/sh
# run.sh: svc-wsd against real Yjs clients through the running test stack (wsd.test.mjs, awareness.test.mjs); prints "ok - NAME" / "not ok - NAME" per test.
# usage: tests/wsd/run.sh BUILD_DIR   (./svc-dev test calls it with the stack up and SVC_* / SVC_TEST_* exported)
set -u
BUILD_DIR=${1:?usage: run.sh BUILD_DIR}
HERE=$(cd "$(dirname "$0")" && pwd)
LOG=$(mktemp "${TMPDIR:-/tmp}/wsd-npm.XXXXXX")
trap 'rm -f "$LOG"' EXIT

# the pinned packages: npm ci, unless node_modules already holds the locked versions (offline-safe)
st=0
if ! node -e '
const lock = require(process.argv[1]).packages
for (const k of Object.keys(lock)) {
  if (!k) continue
  let have
  try { have = require(process.argv[2] + "/" + k + "/package.json").version } catch (e) { process.exit(1) }
  if (have !== lock[k].version) process.exit(1)
}' "$HERE/package-lock.json" "$HERE" 2>/dev/null; then
	(cd "$HERE" && npm ci --no-audit --no-fund --prefer-offline) >"$LOG" 2>&1 || st=$?
fi
if [ $st -ne 0 ]; then
	sed 's/^/# /' "$LOG"
	echo "not ok - wsd npm ci (yjs, y-websocket, ws pinned in tests/wsd/package-lock.json)"
	exit 1
fi
if [ ! -x "$BUILD_DIR/wsd/svc-wsd" ]; then
	echo "not ok - wsd svc-wsd is built ($BUILD_DIR/wsd/svc-wsd)"
	exit 1
fi
# each file in a node of its own: wsd.test.mjs the protocol, documents, access and limits;
# awareness.test.mjs awareness removals, caps, budget and identity, and the people list; git.test.mjs a push
# over smart HTTP meeting a Yjs client's edits of the same file
for f in wsd.test.mjs awareness.test.mjs git.test.mjs; do
	node "$HERE/$f" "$BUILD_DIR" || st=1
done
exit $st
