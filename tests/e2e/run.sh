#!/usr/bin/env bash
# tests/e2e/run.sh: the e2e files against the running test stack: every tests/e2e/test_* through lighttpd, then the
# main job, the streaming, the pool, the agent's stop and cancellation, the preview origin, the web app's serving,
# the deploys and Git in and out (test_git_export, _import, _mirror) again through Apache ("apache: NAME"); one summary line per file (tests/runner.sh), its output
# in var-test/logs/NAME.log. SVC_TEST_ONLY limits the files by name.
# usage: tests/e2e/run.sh   (./svc-dev test runs it once its stack is up; by hand, against the stack
# SVC_TEST_KEEP=1 ./svc-dev test left running: the stack's addresses come from var-test/test.env)
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
# shellcheck source=tests/runner.sh
. "$ROOT/tests/runner.sh"
stack_env_load
tally_begin

for t in "$ROOT"/tests/e2e/test_*.py "$ROOT"/tests/e2e/test_*.sh; do
	[ -e "$t" ] || continue
	name=${t##*/}
	only "$name" || continue
	case "$t" in
	*.py) run_logged "$name" "$SVC_TEST_LOGS/${name%.*}.log" 600 python3 "$t" ;;
	*.sh) run_logged "$name" "$SVC_TEST_LOGS/${name%.*}.log" 600 bash "$t" ;;
	esac
done
apache=$SVC_TEST_APACHE_URL
for t in test_main_job.py test_streaming.py test_pool.py test_agent_stop.py test_preview.py test_web_serving.py test_deploy_site.py test_deploy_atomic.py test_app_backend.py test_app_files.py test_app_backend_builders.py test_app_fetch.py \
	test_git_http.py test_git_export.py test_git_import.py test_git_mirror.py; do
	[ -e "$ROOT/tests/e2e/$t" ] || continue
	only "apache: $t" || continue
	SVC_BASE_URL="$apache/api" SVC_APP_URL="$apache" SVC_WS_URL="ws://${apache#http://}" SVC_HTTP_PORT=${apache##*:} \
		SVC_TEST_PREFIX="apache: " \
		run_logged "apache: $t" "$SVC_TEST_LOGS/apache-${t%.*}.log" 600 python3 "$ROOT/tests/e2e/$t"
done
tally_end
