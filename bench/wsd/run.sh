#!/bin/sh
# run.sh: svc-wsd against the reference @y/websocket-server 0.1.1 (and a trivial broadcast server, the driver's own limit) in one run: R rooms x C clients, edits at rising rates.
# usage: bench/wsd/run.sh BASE_URL SVC_CONFIG BUILD_DIR > results.jsonl; node bench/wsd/table.mjs < results.jsonl
#   BASE_URL    the API of a running stack (./svc-dev up), e.g. http://127.0.0.1:8080/api
#   SVC_CONFIG  that stack's settings file (var/svc.conf): the bench starts its own svc-wsd with it
#   BUILD_DIR   an optimised build holding wsd/svc-wsd and bench/wsd/wsd-drive (e.g. build/ of ./svc-dev up)
# Env: ROOMS (20), CLIENTS (5), RATES ("2000 5000 10000 20000 30000" updates/s offered in all),
#      RUNS (1: how many times the whole sweep runs), SETTLE_MS (6000: from the loaded documents
#      to the RSS reading; svc-wsd compresses cold text after two passes of about a second), SECONDS (10), DOC_BYTES (1000000), DOC_FILE (the document's text; default: see below), SERVERS ("echo svc-wsd ref"), WSD_PORT (28191),
#      REF_PORT (28190), ECHO_PORT (28192), WORKER_PID (the stack's svc-worker, e.g.
#      $(cat var/run/svc-worker.pid): paused while svc-wsd is measured, see below). Every server is started fresh for every rate (RSS per
#      room is measured from a clean process). Prints one JSON line per server and rate.
set -u
BASE=$1 CONF=$2 BUILD=$3
HERE=$(cd "$(dirname "$0")" && pwd)
ROOMS=${ROOMS:-20} CLIENTS=${CLIENTS:-5} RATES=${RATES:-"2000 5000 10000 20000 30000"} SECS=${SECONDS:-10}
DOC=${DOC_BYTES:-1000000} SERVERS=${SERVERS:-"echo svc-wsd ref"}
WSD_PORT=${WSD_PORT:-28191} REF_PORT=${REF_PORT:-28190} ECHO_PORT=${ECHO_PORT:-28192}
DRIVE=$BUILD/bench/wsd/wsd-drive
cd "$HERE"
[ -d node_modules/@y/websocket-server ] || npm ci --no-audit --no-fund >/dev/null || exit 1
[ -x "$DRIVE" ] || { echo "$DRIVE is not built (make bench/wsd/wsd-drive)" >&2; exit 1; }
ids=$(mktemp) corpus=$(mktemp)
pid=
trap 'rm -f "$ids" "$corpus"; [ -z "$pid" ] || kill "$pid" 2>/dev/null; [ -z "${WORKER_PID:-}" ] || kill -CONT "$WORKER_PID"' EXIT
# The stack's svc-worker renders thumbnails with headless Chromium (for the bench's new projects and
# after collaborative edits): up to two cores that neither the reference nor the driver has any part
# in. With WORKER_PID it is paused (SIGSTOP) for the whole run, once the Chromium it started is done;
# its jobs wait in MariaDB and run when it resumes at the end.
if [ -n "${WORKER_PID:-}" ]; then
	kill -STOP "$WORKER_PID" || exit 1
	i=0
	while pgrep -x chromium >/dev/null && [ $i -lt 600 ]; do sleep 0.1; i=$((i + 1)); done
fi
# The document: real source text, not a repeated phrase (svc-wsd keeps cold text compressed, and
# repeated text would compress unrealistically well): the ASCII-only JavaScript files of the pinned
# node_modules (no dist/ bundles, no .min.js; ASCII so that node stores them as one-byte strings
# too), in path order, cut at DOC_BYTES. Or DOC_FILE, when set.
if [ -n "${DOC_FILE:-}" ]; then
	cp "$DOC_FILE" "$corpus"
else
	find node_modules -name '*.js' -type f -not -name '*.min.js' -not -path '*/dist/*' | LC_ALL=C sort |
		while read -r f; do LC_ALL=C grep -q -P '[^\x01-\x7f]' "$f" || cat "$f"; done | head -c "$DOC" >"$corpus"
fi

wait_port() {
	i=0
	while [ $i -lt 100 ]; do
		# listening is enough (exit 7: connection refused); what it answers to HTTP does not matter
		curl -s -o /dev/null --max-time 1 "http://127.0.0.1:$1/"
		[ $? -eq 7 ] || return 0
		sleep 0.1
		i=$((i + 1))
	done
	echo "server on port $1 did not start" >&2
	exit 1
}

run=0
while [ $run -lt "${RUNS:-1}" ]; do
run=$((run + 1))
for rate in $RATES; do
	per=$(awk "BEGIN { print $rate / ($ROOMS * $CLIENTS) }")
	for server in $SERVERS; do
		token=
		case $server in
		svc-wsd)
			# fresh projects (and documents) for every run; limits raised for one user with many sockets
			token=$(node setup-projects.mjs "$BASE" "$ROOMS" "$ids") || exit 1
			SVC_CONFIG=$CONF SVC_WS_PORT=$WSD_PORT SVC_WSD_MAX_CONNECTIONS_PER_USER=100000 SVC_WSD_MAX_ROOMS_PER_USER=100000 \
				SVC_WSD_MAX_MESSAGE=4194304 "$BUILD/wsd/svc-wsd" >/dev/null 2>&1 &
			pid=$! port=$WSD_PORT name=svc-wsd ;;
		ref)
			node ref-server.mjs "$REF_PORT" >/dev/null 2>&1 &
			pid=$! port=$REF_PORT name="@y/websocket-server 0.1.1" ;;
		echo)
			"$DRIVE" --echo-server "$ECHO_PORT" >/dev/null 2>&1 &
			pid=$! port=$ECHO_PORT name="broadcast (no document)" ;;
		esac
		wait_port "$port"
		if [ -n "$token" ]; then
			out=$("$DRIVE" --port "$port" --token "$token" --room-ids "$ids" --rooms "$ROOMS" --clients "$CLIENTS" \
				--rate "$per" --seconds "$SECS" --doc-bytes "$DOC" --doc-file "$corpus" --server-pid "$pid" --settle-ms "${SETTLE_MS:-6000}")
		else
			out=$("$DRIVE" --port "$port" --rooms "$ROOMS" --clients "$CLIENTS" \
				--rate "$per" --seconds "$SECS" --doc-bytes "$DOC" --doc-file "$corpus" --server-pid "$pid" --settle-ms "${SETTLE_MS:-6000}")
		fi
		echo "{\"server\":\"$name\",\"run\":$run,\"load\":\"$(cut -d' ' -f1 /proc/loadavg)\",${out#\{}"
		kill "$pid"
		wait "$pid" 2>/dev/null
		pid=
	done
done
done
