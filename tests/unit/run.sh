#!/usr/bin/env bash
# tests/unit/run.sh: the unit suites (svc-unit, CUnit) built and run with leak detection on, against the test
# stack's MariaDB (the db suite prepares every statement against the freshly migrated schema); one summary
# line "unit (svc-unit)" (tests/runner.sh), the output in var-test/logs/unit.log.
# usage: tests/unit/run.sh [BUILD_DIR]   (build-test/; ./svc-dev test runs it once MariaDB is up; by hand,
# against the stack SVC_TEST_KEEP=1 ./svc-dev test left running. SVC_TEST_CONFIG and SVC_TEST_LOGS: var-test's)
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
BUILD=${1:-$ROOT/build-test}
CONF=${SVC_TEST_CONFIG:-$ROOT/var-test/svc.conf}
LOGS=${SVC_TEST_LOGS:-$ROOT/var-test/logs}
# shellcheck source=tests/runner.sh
. "$ROOT/tests/runner.sh"
tally_begin

ulog=$LOGS/unit.log rc=0
if make -C "$BUILD" -s tests/unit/svc-unit >"$ulog" 2>&1; then
	SVC_CONFIG="$CONF" SVC_TEST_REQUIRE_DB=1 timeout -k 10 600 "$BUILD/tests/unit/svc-unit" >"$ulog" 2>&1 </dev/null || rc=$?
else
	{ echo "the unit runner did not build:"; cat "$ulog"; } >"$ulog.tmp"
	mv "$ulog.tmp" "$ulog"
	rc=1
fi
if grep -q '^unit: [0-9]* passed, [0-9]* failed' "$ulog"; then
	up=$(sed -n 's/^unit: \([0-9]*\) passed, \([0-9]*\) failed.*/\1/p' "$ulog" | tail -n 1)
	uf=$(sed -n 's/^unit: \([0-9]*\) passed, \([0-9]*\) failed.*/\2/p' "$ulog" | tail -n 1)
	if [ "$rc" -ne 0 ] && [ "$uf" -eq 0 ]; then uf=1; echo "svc-unit exited $rc" >>"$ulog"; fi
else
	up=0 uf=1
	echo "svc-unit crashed or printed no summary (exit $rc)" >>"$ulog"
fi
tally_add "$up" "$uf" "$ulog" "unit (svc-unit)"
tally_end
