#!/usr/bin/env bash
# run.sh: issue 27's preview figures on a stack of its own (./svc-dev up in var-bench-preview/, lighttpd,
# -O2 -g), started empty so that its first React project meets a cold npm cache; bench/preview/measure.mjs
# drives the API and Debian's Chromium; then the stack stops. Figures: bench/README.md "Preview of a React project".
#
# usage: bench/preview/run.sh [--port P] [--var DIR] [--keep] [PHASE...]
#   PHASE       static (a project without package.json: save → preview), react (first preview of a new React
#               project with a cold and a warm npm cache, then save → preview through the dev server, or the
#               build-on-save preview where no dev server runs), editor (signed in to the web app, src/App.tsx
#               typed over in the code editor: last key → preview DOM), publish (warm dependencies), devservers
#               (memory of one running dev server and of the host with 8, the time to start one); default all
#   --port P    the stack's port (default 20410; svc-wsd on P+1, svc-devd on P+2)
#   --var DIR   its state directory (default var-bench-preview/, removed first: a cold npm cache)
#   --keep      leave the stack up (stop it: SVC_DEV_VAR=DIR ./svc-dev down)
# Env: SAVES, SAVES_BUILD, PUBLISHES, DEVSERVERS (see measure.mjs); every SVC_* setting goes to the stack
# (SVC_BUILD_MEMORY_MB=1048576 lifts the address-space limit of a build where builds still run under
# RLIMIT_AS). Results: DIR/bench/results-<time>.json, the "# ..." lines also on stdout.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
PORT=20410 VAR=$ROOT/var-bench-preview KEEP=0 PHASES=()
while [ $# -gt 0 ]; do
	case $1 in
	--port) PORT=$2; shift 2 ;;
	--var) VAR=$(realpath -m "$2"); shift 2 ;;
	--keep) KEEP=1; shift ;;
	-h | --help) sed -n '2,18p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	static | react | editor | publish | devservers) PHASES+=("$1"); shift ;;
	*) echo "run.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
	esac
done
export SVC_DEV_VAR=$VAR
log() { printf 'bench/preview: %s\n' "$*" >&2; }
stop_all() { [ "$KEEP" = 1 ] || "$ROOT/svc-dev" down >/dev/null 2>&1 || true; }
trap stop_all EXIT

# A fresh state directory: no npm cache, no node_modules store, no projects (the cold first preview).
"$ROOT/svc-dev" down >/dev/null 2>&1 || true
rm -rf "$VAR"
log "starting ./svc-dev up in $VAR on port $PORT"
SVC_HTTP_PORT=$PORT SVC_WS_PORT=$((PORT + 1)) SVC_DEVD_PORT=$((PORT + 2)) SVC_SIGNUP_VERIFY=off "$ROOT/svc-dev" up >"$VAR.up.log" 2>&1 ||
	{ tail -n 30 "$VAR.up.log" >&2; log "./svc-dev up failed"; exit 1; }
mkdir -p "$VAR/bench" && mv "$VAR.up.log" "$VAR/bench/up.log"

# playwright-core as the browser tests pin it (tests/web/package-lock.json)
if [ ! -d "$ROOT/tests/web/node_modules/playwright-core" ]; then
	(cd "$ROOT/tests/web" && npm ci --no-audit --no-fund >/dev/null) || { log "npm ci in tests/web failed"; exit 1; }
fi
out=$VAR/bench/results-$(date -u +%Y%m%dT%H%M%SZ).json
log "measuring (load average $(cut -d' ' -f1-3 /proc/loadavg))"
SVC_CONFIG=$VAR/svc.conf node "$ROOT/bench/preview/measure.mjs" "http://127.0.0.1:$PORT/api" "${PHASES[@]}" | tee "$out.log" | grep --line-buffered '^#' || true
tail -n 1 "$out.log" >"$out"
log "load average afterwards $(cut -d' ' -f1-3 /proc/loadavg); results in $out"
grep -q '"error"' "$out" && { log "failed: $(cat "$out")"; exit 1; }
exit 0
