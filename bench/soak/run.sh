#!/usr/bin/env bash
# run.sh: the soak: a stack of its own (./svc-dev up in var-soak/ with the provider double as its model),
# then bench/soak/soak.py's mixed load for N minutes (reads, writes, sign-ins, chat streams,
# collaborative edits), a report of throughput, latency, errors and RSS; then the stack stops.
# Two soaks run side by side with their own --port and --var (e.g. one per web server).
#
# usage: bench/soak/run.sh [--minutes N | --seconds N] [--server lighttpd|apache] [--port P] [--var DIR]
#                          [--keep] [--reuse]
#   --minutes N   how long the load runs (default 10); --seconds for short runs while developing
#   --server S    the web server in front: lighttpd (default) or apache (Apache 2.4 and the responders'
#                 --listen pools, SVC_DEV_SERVER=apache ./svc-dev up)
#   --port P      the stack's web server port (default 28280); svc-wsd listens on P+1
#   --var DIR     the stack's state directory (default var-soak/; a second one runs beside it)
#   --keep        leave the stack up afterwards (stop it: SVC_DEV_VAR=$PWD/var-soak ./svc-dev down)
#   --reuse       keep var-soak/'s database and projects from an earlier run (default: start empty)
# The knobs of the load (threads, streams, rooms, rates) are SOAK_* variables, see soak.py and
# bench/README.md ("Soak"). Results: var-soak/soak/soak-<time>.{md,json}, the .md also on stdout.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
SECS=600 PORT=${SOAK_PORT:-28280} KEEP=0 REUSE=0 SERVER=lighttpd VAR=$ROOT/var-soak
while [ $# -gt 0 ]; do
	case $1 in
	--minutes) SECS=$(($2 * 60)); shift 2 ;;
	--seconds) SECS=$2; shift 2 ;;
	--port) PORT=$2; shift 2 ;;
	--server) SERVER=$2; shift 2 ;;
	--var) VAR=$(realpath -m "$2"); shift 2 ;;
	--keep) KEEP=1; shift ;;
	--reuse) REUSE=1; shift ;;
	-h | --help) sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "run.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
	esac
done
case $SERVER in lighttpd | apache) ;; *) echo "run.sh: --server is lighttpd or apache" >&2; exit 2 ;; esac
export SVC_DEV_VAR=$VAR
log() { printf 'soak: %s\n' "$*" >&2; }

stop_all() {
	if [ "$KEEP" = 0 ]; then
		"$ROOT/svc-dev" down >/dev/null 2>&1 || true
	fi
	if [ -s "$VAR/run/provider-double.pid" ] && [ "$KEEP" = 0 ]; then
		kill "$(cat "$VAR/run/provider-double.pid")" 2>/dev/null || true
		rm -f "$VAR/run/provider-double.pid"
	fi
}

if [ "$REUSE" = 0 ] && [ -d "$VAR" ]; then
	"$ROOT/svc-dev" down >/dev/null 2>&1 || true
	[ ! -s "$VAR/run/provider-double.pid" ] || kill "$(cat "$VAR/run/provider-double.pid")" 2>/dev/null || true
	rm -rf "$VAR"
fi
mkdir -p "$VAR/run" "$VAR/logs"
trap stop_all EXIT

# The model: tests/fixtures/provider_double.py on 127.0.0.7 (its "hello" answer, and an edit_file
# for "add a footer"), allowed as an outward address like on the test stack.
if ! { [ -s "$VAR/run/provider-double.pid" ] && kill -0 "$(cat "$VAR/run/provider-double.pid")" 2>/dev/null; }; then
	rm -f "$VAR/run/provider-double.port"
	setsid python3 "$ROOT/tests/fixtures/provider_double.py" --host 127.0.0.7 --port 0 \
		--port-file "$VAR/run/provider-double.port" </dev/null >"$VAR/logs/provider-double.log" 2>&1 &
	echo $! >"$VAR/run/provider-double.pid"
	for _ in $(seq 100); do [ -s "$VAR/run/provider-double.port" ] && break; sleep 0.1; done
	[ -s "$VAR/run/provider-double.port" ] || { cat "$VAR/logs/provider-double.log" >&2; log "the provider double did not start"; exit 1; }
fi
DOUBLE="http://127.0.0.7:$(tr -d ' \n' <"$VAR/run/provider-double.port")"

# The stack: ./svc-dev up's build (build/, -O2 -g) and processes, in var-soak/. Its settings come
# from this environment (svc-dev hands SVC_* through): loopback is exempt from rate limits (as in
# 'up'), X-Forwarded-For is believed from loopback so the sign-ins can come from other addresses
# and meet the login limit, the workspaces' credit does not run out during a long run, the one
# user who types in every room may open more rooms and sockets than svc-wsd's defaults (16, 32), and
# svc-auth has 4 processes under either server (Apache's pools have 4 each): with lighttpd's default 2,
# sign-ins (an Argon2id hash each) queued past wrk's 10 s on the loaded shared machine.
log "starting the stack in $VAR ($SERVER on port $PORT)"
SVC_DEV_SERVER=$SERVER SVC_AUTH_PROCS=4 SVC_HTTP_PORT=$PORT SVC_WS_PORT=$((PORT + 1)) \
	SVC_AI_BASE_URL="$DOUBLE/v1" SVC_AI_MODEL=double SVC_AI_API_KEY=soak-key SVC_AI_PROTOCOL=openai \
	SVC_AI_PRICES=double=1:2 SVC_OUTBOUND_ALLOW_NETS=127.0.0.7/32 SVC_DEFAULT_CREDIT_USD=1000000 \
	SVC_TRUSTED_PROXIES=127.0.0.1,::1 SVC_WSD_MAX_ROOMS_PER_USER=1000 SVC_WSD_MAX_CONNECTIONS_PER_USER=10000 \
	"$ROOT/svc-dev" up >"$VAR/logs/up.log" 2>&1 || { tail -n 30 "$VAR/logs/up.log" >&2; log "./svc-dev up failed"; exit 1; }

command -v wrk >/dev/null || { log "wrk is missing: apt-get install wrk (./svc-dev up installs it when run as root)"; exit 1; }
log "load for $SECS s"
python3 "$ROOT/bench/soak/soak.py" --base "http://127.0.0.1:$PORT" --var "$VAR" --build "$ROOT/build" \
	--seconds "$SECS" --out "$VAR/soak"
