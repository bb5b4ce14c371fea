#!/bin/bash
# run.sh: the parsers' fuzz targets (tests/fuzz/fuzz_*.c, docs/hacking.md "Fuzzing"): each seed
# corpus replayed under the sanitizers of BUILD_DIR, then a libFuzzer smoke run of each target
# (SVC_FUZZ_SECONDS, 30 by default, two targets at a time) in a clang tree beside it; prints
# "ok - NAME" / "not ok - NAME" per check.
# usage: tests/fuzz/run.sh BUILD_DIR   (absolute path of a configured build tree: build-test/)
#        SVC_FUZZ_TARGETS="http wsd" SVC_FUZZ_SECONDS=600 tests/fuzz/run.sh BUILD_DIR   (long runs)
set -u
BUILD_DIR=${1:?usage: run.sh BUILD_DIR}
HERE=$(cd "$(dirname "$0")" && pwd)
TOP=$(cd "$HERE/../.." && pwd)
FUZZ_DIR=${SVC_FUZZ_DIR:-$(dirname "$BUILD_DIR")/build-fuzz}
SECONDS_EACH=${SVC_FUZZ_SECONDS:-30}
# the same list as tests/fuzz/fuzz.mk (fuzz_yjs runs in tests/yjs/run.sh)
TARGETS=${SVC_FUZZ_TARGETS:-http jwt sse plan direct_save wsd integ domain app_decl gitio app_fetch build_log}
LOG=$(mktemp -d "${TMPDIR:-/tmp}/fuzz-run.XXXXXX")
failed=0
trap 'rm -rf "$LOG"' EXIT

result() { # NAME STATUS
	if [ "$2" -eq 0 ]; then echo "ok - $1"; else echo "not ok - $1"; failed=1; fi
}

# 1. every request-body field table of the API is in the router target
st=0
for b in $(grep -ho 'extern const struct svc_body svc_api_[a-z0-9_]*' "$TOP"/lib/api/*.h | awk '{print $NF}'); do
	grep -q "&$b\b" "$HERE/fuzz_http.c" || { echo "# $b is not in tests/fuzz/fuzz_http.c" >&2; st=1; }
done
result "fuzz_http covers every route body table" $st

# 2. corpus replay with BUILD_DIR's compiler and sanitizers
replays=""
for t in $TARGETS; do replays="$replays tests/fuzz/$t-replay"; done
# shellcheck disable=SC2086
if ! make -C "$BUILD_DIR" -s $replays >"$LOG/make" 2>&1; then
	sed 's/^/# /' "$LOG/make" | tail -40 >&2
	result "fuzz replay drivers build" 1
	exit 1
fi
for t in $TARGETS; do
	"$BUILD_DIR/tests/fuzz/$t-replay" "$HERE/corpus/$t" >"$LOG/replay-$t" 2>&1
	st=$?
	[ $st -ne 0 ] && sed 's/^/# /' "$LOG/replay-$t" | head -40 >&2
	n=$(sed -n 's/^replay: \([0-9]*\) inputs/\1/p' "$LOG/replay-$t")
	[ "${n:-0}" -gt 0 ] || st=1
	result "fuzz corpus replay $t (${n:-0} inputs)" $st
done

# 3. libFuzzer smoke runs, in a clang tree of their own (configured once, then incremental)
if ! command -v clang >/dev/null 2>&1 || ! echo 'int LLVMFuzzerTestOneInput(const char *d, unsigned long n) { return 0; }' |
	clang -x c -fsanitize=fuzzer - -o "$LOG/probe" >/dev/null 2>&1; then
	echo "# clang or libclang-rt-14-dev missing: libFuzzer smoke runs skipped, corpora replayed only" >&2
	exit $failed
fi
mkdir -p "$FUZZ_DIR"
if [ ! -f "$FUZZ_DIR/Makefile" ] || [ "$TOP/configure" -nt "$FUZZ_DIR/config.status" ]; then
	(cd "$FUZZ_DIR" && "$TOP/configure" -q CC=clang \
		CFLAGS='-g -O1 -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer' \
		LDFLAGS='-fsanitize=address,undefined') >"$LOG/configure" 2>&1 ||
		{ sed 's/^/# /' "$LOG/configure" | tail -20 >&2; result "fuzz tree configures (clang)" 1; exit 1; }
fi
bins=""
for t in $TARGETS; do bins="$bins tests/fuzz/fuzz-$t"; done
# shellcheck disable=SC2086
if ! make -C "$FUZZ_DIR" -s -j"$(nproc 2>/dev/null || echo 2)" $bins >"$LOG/make-fuzz" 2>&1; then
	sed 's/^/# /' "$LOG/make-fuzz" | tail -40 >&2
	result "fuzz targets build (clang, libFuzzer)" 1
	exit 1
fi

# run_one NAME: SECONDS_EACH seconds of libFuzzer on a copy of the seed corpus; leaves $LOG/fuzz-NAME
run_one() {
	local t=$1
	mkdir -p "$LOG/corpus-$t"
	cp "$HERE/corpus/$t"/* "$LOG/corpus-$t/"
	(cd "$LOG" && ASAN_OPTIONS=detect_leaks=1 "$FUZZ_DIR/tests/fuzz/fuzz-$t" -max_total_time="$SECONDS_EACH" \
		-rss_limit_mb=2048 -timeout=10 -max_len=65536 -print_final_stats=1 -artifact_prefix="$LOG/$t-" \
		"corpus-$t" >"fuzz-$t" 2>&1)
	echo $? >"$LOG/status-$t"
}

set -- $TARGETS
while [ $# -gt 0 ]; do
	run_one "$1" &
	if [ $# -gt 1 ]; then run_one "$2" & fi
	wait
	for t in "$1" ${2:+"$2"}; do
		st=$(cat "$LOG/status-$t")
		if [ "$st" -ne 0 ]; then
			grep -v '^#[0-9]' "$LOG/fuzz-$t" | tail -60 | sed 's/^/# /' >&2
			for a in "$LOG/$t-"*; do
				[ -f "$a" ] && { mkdir -p "$TOP/var-test/fuzz"; cp "$a" "$TOP/var-test/fuzz/"; echo "# input kept: var-test/fuzz/${a##*/}" >&2; }
			done
		fi
		execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$LOG/fuzz-$t")
		cov=$(grep -o 'cov: [0-9]*' "$LOG/fuzz-$t" | tail -1)
		result "fuzz smoke $t (libFuzzer ${SECONDS_EACH}s, ${execs:-0} executions, ${cov:-cov: ?})" "$st"
	done
	shift
	[ $# -gt 0 ] && shift
done
exit $failed
