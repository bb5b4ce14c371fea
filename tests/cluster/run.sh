#!/usr/bin/env bash
# run.sh: the scale-out tests (issue 19, docs/scaling.md) on the loopback cluster: './svc-dev cluster up' (3 Galera
# nodes, two hosts, two svc-wsd, two svc-worker, HAProxy), tests/e2e/test_main_job.py through HAProxy, then
# test_cluster.py (hosts, concurrent edits, a Galera node killed, workers) and wsd_failover.mjs (an svc-wsd killed);
# 'cluster down' at the end, also on failure or timeout. Prints "ok - NAME" / "not ok - NAME".
# usage: tests/cluster/run.sh BUILD_DIR   (./svc-dev test runs it when SVC_TEST_CLUSTER=1, after the e2e tests,
# with SVC_PROVIDER_URL, the provider double of the test stack, exported)
# SVC_TEST_CLUSTER_VAR (var-test/cluster) and SVC_TEST_CLUSTER_PORT (26500) place the cluster.
set -u
BUILD=${1:?usage: run.sh BUILD_DIR}
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
CVAR=${SVC_TEST_CLUSTER_VAR:-$ROOT/var-test/cluster}
CPORT=${SVC_TEST_CLUSTER_PORT:-26500}
PROVIDER=${SVC_PROVIDER_URL:-}
export PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1

# svc-dev cluster ... in an environment of its own: nothing of the test stack's SVC_* leaks into the
# cluster's settings (write_config hands the caller's SVC_* through), only the model double's.
cluster() {
	env -i PATH="$PATH" HOME="${HOME:-/root}" LANG=C.UTF-8 SVC_CLUSTER_VAR="$CVAR" SVC_CLUSTER_PORT="$CPORT" \
		SVC_CLUSTER_BUILD="$BUILD" \
		${PROVIDER:+SVC_AI_BASE_URL="$PROVIDER/v1"} SVC_AI_MODEL=double SVC_AI_API_KEY=test-key SVC_AI_PROTOCOL=openai \
		SVC_OUTBOUND_ALLOW_NETS=127.0.0.7/32 SVC_AI_IDLE_TIMEOUT=15 "$ROOT/svc-dev" cluster "$@"
}
down() {
	trap - EXIT
	rm -f "$HERE/node_modules"
	cluster down >>"$CVAR.down.log" 2>&1 || echo "# cluster down failed: see $CVAR.down.log"
}
trap down EXIT
trap 'exit 143' TERM INT

if [ -d "$CVAR" ]; then cluster down >/dev/null 2>&1; rm -rf "$CVAR"; fi
mkdir -p "$(dirname "$CVAR")"
t0=$(date +%s%N)
if ! cluster up >"$CVAR.up.log" 2>&1; then
	sed 's/^/# /' "$CVAR.up.log" | tail -n 40
	for f in "$CVAR"/galera/n*/error.log; do [ -f "$f" ] && { echo "# == $f"; tail -n 15 "$f" | sed 's/^/# /'; }; done
	echo "not ok - cluster: ./svc-dev cluster up"
	exit 1
fi
t1=$(date +%s%N)
echo "ok - cluster: ./svc-dev cluster up starts 3 Galera nodes, 2 hosts, 2 svc-wsd, 2 svc-worker, 2 svc-devd, HAProxy ($(((t1 - t0) / 1000000)) ms)"
# shellcheck source=/dev/null
. "$CVAR/cluster.env"
export SVC_CLUSTER_VAR SVC_CLUSTER_PORT SVC_CLUSTER_BUILD SVC_CLUSTER_FRONT SVC_CLUSTER_HOSTS SVC_CLUSTER_NODES SVC_CLUSTER_WSD SVC_CLUSTER_DEVD SVC_CLUSTER_CONFIGS SVC_CLUSTER_RUN \
	SVC_CLUSTER_LOGS SVC_CLUSTER_DATA_DIR
missing=""
for p in galera-1 galera-2 galera-3 lighttpd-a lighttpd-b wsd-1 wsd-2 worker-a worker-b devd-a devd-b haproxy; do
	[ -s "$SVC_CLUSTER_RUN/$p.pid" ] && kill -0 "$(cat "$SVC_CLUSTER_RUN/$p.pid")" 2>/dev/null || missing+=" $p"
done
if [ -z "$missing" ]; then echo "ok - cluster: a live pid file per process in run/"; else echo "not ok - cluster: a live pid file per process in run/ (missing:$missing)"; fi

# 'up' again: nothing restarted, same pids, same URLs
before=$(cat "$SVC_CLUSTER_RUN"/*.pid | md5sum)
if cluster up >"$CVAR.up2.log" 2>&1 && [ "$(cat "$SVC_CLUSTER_RUN"/*.pid | md5sum)" = "$before" ]; then
	echo "ok - cluster: a second 'cluster up' is harmless (same processes)"
else
	tail -n 20 "$CVAR.up2.log" | sed 's/^/# /'
	echo "not ok - cluster: a second 'cluster up' is harmless (same processes)"
fi

# The main job through HAProxy: sign-up, project, agent turn, versions, publish, the site (its Host header
# reaches either host; the sites live on the shared data dir).
front_port=${SVC_CLUSTER_FRONT##*:}
SVC_BASE_URL="$SVC_CLUSTER_FRONT/api" SVC_APP_URL="$SVC_CLUSTER_FRONT" SVC_WS_URL="ws://127.0.0.1:$front_port" \
	SVC_HTTP_PORT=$front_port SVC_DOMAIN=localhost SVC_DATA_DIR="$SVC_CLUSTER_DATA_DIR" SVC_PROVIDER_URL="$PROVIDER" \
	SVC_TEST_PREFIX="cluster: " SVC_TEST_CONFIG="${SVC_CLUSTER_CONFIGS%% *}" \
	python3 "$ROOT/tests/e2e/test_main_job.py"
rc=$?

SVC_ROOT="$ROOT" SVC_PROVIDER_URL="$PROVIDER" python3 "$HERE/test_cluster.py" || rc=1

# svc-wsd killed during collaborative editing (node, the Yjs clients of tests/wsd)
[ -d "$ROOT/tests/wsd/node_modules/y-websocket" ] ||
	(cd "$ROOT/tests/wsd" && npm ci --no-audit --no-fund --prefer-offline) >"$CVAR.npm.log" 2>&1
if [ -d "$ROOT/tests/wsd/node_modules/y-websocket" ]; then
	# (a link only while it runs: make dist would carry it into the tarball)
	ln -sfn ../wsd/node_modules "$HERE/node_modules"
	SVC_ROOT="$ROOT" node "$HERE/wsd_failover.mjs" || rc=1
else
	echo "not ok - cluster: wsd failover (tests/wsd/node_modules missing: tests/wsd/run.sh installs them)"
	rc=1
fi

for f in "$SVC_CLUSTER_LOGS"/asan.*; do
	[ -e "$f" ] || continue
	echo "not ok - cluster: the cluster's processes ran clean under ASan+UBSan"
	sed 's/^/# /' "$SVC_CLUSTER_LOGS"/asan.* | head -n 80
	exit 1
done
echo "ok - cluster: the cluster's processes ran clean under ASan+UBSan"
echo "# figure: tests/cluster ran $(( ($(date +%s%N) - t0) / 1000000000 )) s from 'cluster up' on (before 'cluster down')"
exit $rc
