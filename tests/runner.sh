# tests/runner.sh: what ./svc-dev test and the runners of tests/ share: the tally of "ok - NAME" / "not ok - NAME"
# lines (one summary line per runner, then the total), SVC_TEST_ONLY, and the running test stack's environment
# (sourced by svc-dev, tests/unit/run.sh and tests/e2e/run.sh)
# shellcheck shell=bash

# SVC_TEST_TALLY names the file each counted runner appends "PASSED FAILED LOG" to, so that runners in child
# processes add to ./svc-dev test's total (var-test/tally). A runner started by hand keeps one of its own
# (tally_begin) and ends with the total line (tally_end).
TALLY_OWN=0

# tally_add PASSED FAILED LOG NAME: counts one runner (LOG: its output) and prints its summary line.
tally_add() {
	printf '%d %d %s\n' "$1" "$2" "$3" >>"$SVC_TEST_TALLY"
	printf '%-44s %3d passed, %d failed\n' "$4" "$1" "$2"
}

# count_log LOG RC NAME: adds LOG's ok/not ok lines; a runner that exited
# non-zero without reporting a failure counts as one failure.
count_log() {
	local logf=$1 rc=$2 name=$3 ok nok
	ok=$(grep -c '^ok - ' "$logf" || true)
	nok=$(grep -c '^not ok - ' "$logf" || true)
	if [ "$rc" -ne 0 ] && [ "$nok" -eq 0 ]; then
		echo "not ok - $name exited with status $rc" >>"$logf"
		nok=1
	fi
	if [ "$rc" -eq 0 ] && [ "$ok" -eq 0 ] && [ "$nok" -eq 0 ]; then
		echo "not ok - $name reported no results" >>"$logf"
		nok=1
	fi
	tally_add "$ok" "$nok" "$logf" "$name"
}

# only NAME: SVC_TEST_ONLY (an extended regular expression) limits the e2e files and the
# tests/web, tests/yjs, tests/wsd, tests/cluster directories to the names it matches (unit, lint always run).
only() {
	[ -z "${SVC_TEST_ONLY:-}" ] || [[ $1 =~ $SVC_TEST_ONLY ]]
}

# run_logged NAME LOG TIMEOUT CMD...: runs a test runner, output into LOG.
run_logged() {
	local name=$1 logf=$2 secs=$3 rc=0
	shift 3
	timeout -k 10 "$secs" "$@" >"$logf" 2>&1 </dev/null || rc=$?
	[ "$rc" -ne 124 ] || echo "(killed after ${secs}s)" >>"$logf"
	count_log "$logf" "$rc" "$name"
}

# tally_read: sets T_PASS, T_FAIL and T_FAILED_LOGS (the logs of runners with a failure) from SVC_TEST_TALLY.
tally_read() {
	local p f l
	T_PASS=0 T_FAIL=0 T_FAILED_LOGS=()
	if [ -z "${SVC_TEST_TALLY:-}" ] || [ ! -f "$SVC_TEST_TALLY" ]; then return 0; fi
	while read -r p f l; do
		T_PASS=$((T_PASS + p))
		T_FAIL=$((T_FAIL + f))
		[ "$f" -eq 0 ] || T_FAILED_LOGS+=("$l")
	done <"$SVC_TEST_TALLY"
}

# tally_begin: a runner started by hand (no SVC_TEST_TALLY) counts into a file of its own.
tally_begin() {
	[ -z "${SVC_TEST_TALLY:-}" ] || return 0
	SVC_TEST_TALLY=$(mktemp "${TMPDIR:-/tmp}/svc-tally.XXXXXX")
	TALLY_OWN=1
}

# tally_end: after tally_begin by hand, prints "N passed, N failed" and returns 1 when a test failed;
# under ./svc-dev test (which prints the total) it returns 0.
tally_end() {
	[ "$TALLY_OWN" = 1 ] || return 0
	tally_read
	rm -f "$SVC_TEST_TALLY"
	echo "$T_PASS passed, $T_FAIL failed"
	[ "$T_FAIL" -eq 0 ]
}

# stack_env_load: exports the running test stack's addresses (var-test/test.env, which tests/stack.sh writes
# once the stack is up); fails when there is none.
stack_env_load() {
	local f=$ROOT/var-test/test.env
	[ -f "$f" ] || { echo "no $f: start the test stack first (SVC_TEST_KEEP=1 ./svc-dev test)" >&2; return 1; }
	set -a
	# shellcheck source=/dev/null
	. "$f"
	set +a
}
