#!/bin/sh
# run.sh: svc-wsd against the reference @y/websocket-server 0.1.1 in the same run: R rooms x C clients, edits at rising rates.
# usage: bench/wsd/run.sh BASE_URL SVC_CONFIG SVC_WSD_BINARY
#   BASE_URL        the API of a running stack (./svc-dev up), e.g. http://127.0.0.1:8080/api
#   SVC_CONFIG      that stack's settings file (var/svc.conf): the bench starts its own svc-wsd with it
#   SVC_WSD_BINARY  an optimised build (build/wsd/svc-wsd from ./svc-dev up, not the sanitizer build)
# Env: ROOMS (20), CLIENTS (5), RATES ("5 20 50 100" edits/s per client), SECONDS (10), DOC_BYTES (1000000),
#      WSD_PORT (28191), REF_PORT (28190). Both servers are started fresh for every rate (RSS per room is
#      measured from a clean process). Prints one JSON line per server and rate.
set -u
BASE=$1 CONF=$2 BIN=$3
HERE=$(cd "$(dirname "$0")" && pwd)
ROOMS=${ROOMS:-20} CLIENTS=${CLIENTS:-5} RATES=${RATES:-"5 20 50 100"} SECS=${SECONDS:-10} DOC=${DOC_BYTES:-1000000}
WSD_PORT=${WSD_PORT:-28191} REF_PORT=${REF_PORT:-28190}
cd "$HERE"
[ -d node_modules/@y/websocket-server ] || npm ci --no-audit --no-fund >/dev/null || exit 1
ids=$(mktemp)
pid=
trap 'rm -f "$ids"; [ -z "$pid" ] || kill "$pid" 2>/dev/null' EXIT

wait_port() {
	i=0
	while [ $i -lt 100 ]; do
		curl -s -o /dev/null --max-time 1 "http://127.0.0.1:$1/" && return 0
		sleep 0.1
		i=$((i + 1))
	done
	echo "server on port $1 did not start" >&2
	exit 1
}

for rate in $RATES; do
	token=$(node setup-projects.mjs "$BASE" "$ROOMS" "$ids") || exit 1
	# svc-wsd: its own instance, limits raised for one user with many sockets
	SVC_CONFIG=$CONF SVC_WS_PORT=$WSD_PORT SVC_WSD_MAX_CONNECTIONS_PER_USER=100000 SVC_WSD_MAX_ROOMS_PER_USER=100000 \
		SVC_WSD_MAX_MESSAGE=4194304 "$BIN" >/dev/null 2>&1 &
	pid=$!
	wait_port "$WSD_PORT"
	out=$(node drive.mjs --url "ws://127.0.0.1:$WSD_PORT/project" --token "$token" --room-ids "$ids" --rooms "$ROOMS" \
		--clients "$CLIENTS" --rate "$rate" --seconds "$SECS" --doc-bytes "$DOC" --server-pid "$pid" --json)
	echo "{\"server\":\"svc-wsd\",${out#\{}"
	kill "$pid"
	wait "$pid" 2>/dev/null
	node ref-server.mjs "$REF_PORT" >/dev/null 2>&1 &
	pid=$!
	wait_port "$REF_PORT"
	out=$(node drive.mjs --url "ws://127.0.0.1:$REF_PORT/project" --room-ids "$ids" --rooms "$ROOMS" --clients "$CLIENTS" \
		--rate "$rate" --seconds "$SECS" --doc-bytes "$DOC" --server-pid "$pid" --json)
	echo "{\"server\":\"@y/websocket-server 0.1.1\",${out#\{}"
	kill "$pid"
	wait "$pid" 2>/dev/null
	pid=
done
