#!/bin/sh
# run.sh: the web app's tests: node --test of its pure parts (tests/web/unit/), then the browser
# tests (tests/web/*.test.mjs: playwright-core driving Debian's chromium) against the running
# test stack. Prints "ok - NAME" / "not ok - NAME" per test (reporter.mjs).
# usage: tests/web/run.sh   (./svc-dev test calls it with the stack up, SVC_* exported and
#                            SVC_TEST_LOGS set; the screenshots go to $SVC_TEST_LOGS/web/)
#        SVC_WEB_TESTS="domains editor" limits the browser tests to those files (while iterating)
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
LOG=$(mktemp "${TMPDIR:-/tmp}/web-npm.XXXXXX")
trap 'rm -f "$LOG"' EXIT

# the pinned playwright-core: npm ci when package-lock.json changed since the last one
lock=$(md5sum <"$HERE/package-lock.json" | cut -d' ' -f1)
if [ "$lock" != "$(cat "$HERE/node_modules/.svc-lock-stamp" 2>/dev/null)" ]; then
	if ! (cd "$HERE" && npm ci --no-audit --no-fund --prefer-offline) >"$LOG" 2>&1; then
		sed 's/^/# /' "$LOG"
		echo "not ok - web npm ci (playwright-core pinned in tests/web/package-lock.json)"
		exit 1
	fi
	echo "$lock" >"$HERE/node_modules/.svc-lock-stamp"
fi
if [ ! -f "$ROOT/web/node_modules/markdown-it/package.json" ] || [ ! -f "$ROOT/web/dist/index.html" ]; then
	echo "not ok - web the app is built (web/node_modules, web/dist: ./svc-dev builds them)"
	exit 1
fi

rc=0
node --test --test-concurrency=1 --test-reporter="$HERE/reporter.mjs" "$HERE"/unit/*.test.mjs || rc=1
if [ -n "${SVC_APP_URL:-}" ] && [ "$(curl -s -o /dev/null -w '%{http_code}' "$SVC_APP_URL/login")" != 200 ]; then
	echo "not ok - web $SVC_APP_URL/login is the app (the web server answers index.html for client-side routes)"
	rc=1
elif [ -n "${SVC_APP_URL:-}" ]; then
	files=
	for f in "$HERE"/*.test.mjs; do
		name=$(basename "$f" .test.mjs)
		case " ${SVC_WEB_TESTS:-$name} " in *" $name "*) files="$files $f" ;; esac
	done
	# shellcheck disable=SC2086 # the file names have no spaces
	node --test --test-concurrency=1 --test-timeout=600000 --test-reporter="$HERE/reporter.mjs" $files || rc=1
else
	echo "# SVC_APP_URL is not set: browser tests skipped (run them through ./svc-dev test)"
fi
exit $rc
