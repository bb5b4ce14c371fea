#!/bin/sh
# run.sh: lib/yjs conformance checks against yjs (node) and the fuzz smoke run; prints "ok - NAME" / "not ok - NAME" per test.
# usage: tests/yjs/run.sh BUILD_DIR   (BUILD_DIR: absolute path of a configured build tree, e.g. the sanitizer build)
set -u
BUILD_DIR=${1:?usage: run.sh BUILD_DIR}
HERE=$(cd "$(dirname "$0")" && pwd)
TOP=$(cd "$HERE/../.." && pwd)
LOG=$(mktemp -d "${TMPDIR:-/tmp}/yjs-run.XXXXXX")
FUZZ_SECONDS=${YJS_FUZZ_SECONDS:-30}
failed=0
trap 'rm -rf "$LOG"' EXIT

result() { # NAME STATUS
	if [ "$2" -eq 0 ]; then echo "ok - $1"; else echo "not ok - $1"; failed=1; fi
}

# 1. the pinned yjs: npm ci, unless node_modules already holds the locked version (offline-safe)
want=$(node -e 'console.log(require(process.argv[1]).packages["node_modules/yjs"].version)' "$HERE/package-lock.json" 2>/dev/null)
have=$(node -e 'console.log(require(process.argv[1]).version)' "$HERE/node_modules/yjs/package.json" 2>/dev/null)
if [ -n "$want" ] && [ "$want" = "$have" ]; then
	st=0
else
	(cd "$HERE" && npm ci --no-audit --no-fund --prefer-offline) >"$LOG/npm" 2>&1
	st=$?
	[ $st -ne 0 ] && sed 's/^/# /' "$LOG/npm" >&2
fi
result "yjs npm ci (yjs $want)" $st
[ $st -ne 0 ] && exit 1

# 2. helpers from the build tree
if [ ! -x "$BUILD_DIR/tests/yjs/yjs-driver" ] || [ ! -x "$BUILD_DIR/tests/fuzz/yjs-replay" ]; then
	make -C "$BUILD_DIR" tests/yjs/yjs-driver tests/fuzz/yjs-replay >"$LOG/make" 2>&1 || sed 's/^/# /' "$LOG/make" >&2
fi

# 3. the five conformance checks of issue 3, each with two seeds, then: local edits in text
#    formatted by remote clients (format), every content kind and the Xml types re-encoded
#    byte for byte (content), an update listing one client twice (twice)
#    Each check runs twice: as is, and with every string of the driver's document packed
#    (SVC_YJS_PACK=1: zstd-compressed before every command), which must not change a byte.
for pack in 0 1; do
	for check in roundtrip convergence local diff bytes format content twice; do
		st=0
		for seed in 1 2; do
			SVC_YJS_PACK=$pack node "$HERE/conformance.mjs" "$BUILD_DIR/tests/yjs/yjs-driver" "$check" "$seed" \
				>"$LOG/$check" 2>&1 || st=1
			grep -q "^ok - " "$LOG/$check" || st=1
			[ $st -ne 0 ] && { sed 's/^/# /' "$LOG/$check" | head -20 >&2; break; }
		done
		[ $pack = 1 ] && check="$check (packed strings)"
		result "yjs conformance $check" $st
	done
done

# 4. corpus replay (gcc build, ASan/UBSan flags of BUILD_DIR)
"$BUILD_DIR/tests/fuzz/yjs-replay" "$TOP/tests/fuzz/corpus/yjs" >"$LOG/replay" 2>&1
st=$?
[ $st -ne 0 ] && sed 's/^/# /' "$LOG/replay" | head -30 >&2
result "yjs fuzz corpus replay" $st

# 5. libFuzzer smoke run where clang and its fuzzer runtime exist
if command -v clang >/dev/null 2>&1 &&
   clang -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined -D_GNU_SOURCE \
	-I"$TOP/lib" "$TOP/tests/fuzz/fuzz_yjs.c" "$TOP"/lib/yjs/*.c "$TOP/lib/core/err.c" -lzstd -lm \
	-o "$LOG/fuzz_yjs" >"$LOG/clang" 2>&1; then
	mkdir -p "$LOG/corpus"
	cp "$TOP"/tests/fuzz/corpus/yjs/* "$LOG/corpus/"
	(cd "$LOG" && ./fuzz_yjs -max_total_time="$FUZZ_SECONDS" -rss_limit_mb=2048 -timeout=10 \
		-print_final_stats=1 corpus) >"$LOG/fuzz" 2>&1
	st=$?
	[ $st -ne 0 ] && tail -40 "$LOG/fuzz" | sed 's/^/# /' >&2
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$LOG/fuzz")
	result "yjs fuzz smoke (libFuzzer ${FUZZ_SECONDS}s, ${execs:-0} executions)" $st
else
	echo "# clang or libclang-rt-14-dev missing: libFuzzer smoke run skipped, corpus replayed only" >&2
fi
exit $failed
