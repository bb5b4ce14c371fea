#!/usr/bin/env bash
# run.sh: GET /api/projects/:id side by side in one run: svc (this checkout's build/), svc at an
# earlier commit, the same-work floor (bench/http/floor.c) and a PHP-FPM + mysqli peer
# (bench/http/php/project.php), each behind the same lighttpd with the same number of processes,
# on one MariaDB, loaded by wrk in interleaved rounds; prints requests per second and the ratios.
#
# usage: bench/http/run.sh [--before REV] [--seconds S] [--rounds N] [--conns C] [--procs P] [--port PORT] [--var DIR]
#   --before REV  the commit to compare with (default e46012a): built once into DIR/before/ (-O2 -g)
#   --seconds S   length of one wrk run (default 10); --rounds N  rounds of the four (default 5)
#   --conns C     wrk's keep-alive connections (default 4); --procs P  processes of each backend (default 2)
#   --port PORT   ./svc-dev up's port (default 28480); the four backends listen on PORT+10..PORT+13 (lighttpd's own: PORT+14)
#   --var DIR     state (default var-bench-http/): ./svc-dev up's stack, the builds, lighttpd, php-fpm
#   --check       set everything up, check that each backend answers 200, and stop (no load)
# The rate limit is on (loopback is not exempt, SVC_RATE_LIMIT_GLOBAL far above the load) and the
# session check too, as in production. The PHP peer runs only when php-fpm and php-mysql are
# installed (apt-get install php-fpm php-mysql). Results: DIR/results-<time>.txt, also on stdout.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BEFORE=e46012a SECS=10 ROUNDS=5 CONNS=4 PROCS=2 PORT=28480 VAR=$ROOT/var-bench-http CHECK=0
while [ $# -gt 0 ]; do
	case $1 in
	--before) BEFORE=$2; shift 2 ;;
	--seconds) SECS=$2; shift 2 ;;
	--rounds) ROUNDS=$2; shift 2 ;;
	--conns) CONNS=$2; shift 2 ;;
	--procs) PROCS=$2; shift 2 ;;
	--port) PORT=$2; shift 2 ;;
	--var) VAR=$(realpath -m "$2"); shift 2 ;;
	--check) CHECK=1; shift ;;
	-h | --help) sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "run.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
	esac
done
export SVC_DEV_VAR=$VAR
B=$VAR/bench
mkdir -p "$B"
log() { printf 'bench/http: %s\n' "$*" >&2; }

stop_all() {
	local f
	for f in "$B/lighttpd.pid" "$B/php-fpm.pid"; do
		[ -s "$f" ] && kill "$(cat "$f")" 2>/dev/null || true
		rm -f "$f"
	done
	"$ROOT/svc-dev" down >/dev/null 2>&1 || true
}
trap stop_all EXIT

# 1. The stack that owns the database: ./svc-dev up (build/, -O2 -g) with the rate limit counting loopback.
log "starting ./svc-dev up in $VAR on port $PORT"
SVC_HTTP_PORT=$PORT SVC_WS_PORT=$((PORT + 1)) SVC_RATE_LIMIT_EXEMPT=192.0.2.1 \
	SVC_RATE_LIMIT_GLOBAL=1000000000/1m "$ROOT/svc-dev" up >"$B/up.log" 2>&1 ||
	{ tail -n 30 "$B/up.log" >&2; log "./svc-dev up failed"; exit 1; }
CONF=$VAR/svc.conf
conf() { sed -n "s/^$1=//p" "$CONF" | tail -n 1; }

# 2. The earlier commit, built apart (its tree from git archive).
if [ ! -x "$B/before/build/cgi-bin/svc-projects.fcgi" ]; then
	log "building $BEFORE into $B/before"
	rm -rf "$B/before"
	mkdir -p "$B/before/src"
	git -C "$ROOT" archive "$BEFORE" | tar -x -C "$B/before/src"
	(cd "$B/before/src" && autoreconf -fi >/dev/null 2>&1)
	mkdir -p "$B/before/build"
	(cd "$B/before/build" && "$B/before/src/configure" -q CFLAGS='-O2 -g' >/dev/null &&
		make -j2 -s cgi-bin/svc-projects.fcgi >/dev/null) || { log "cannot build $BEFORE"; exit 1; }
fi

# 3. The floor.
cc -O2 -g -o "$B/floor" "$ROOT/bench/http/floor.c" $(mariadb_config --cflags --libs) \
	$(pkg-config --cflags --libs json-c) -lfcgi -ljwt

# 4. PHP-FPM, when installed.
FPM=$(ls /usr/sbin/php-fpm* 2>/dev/null | head -n 1 || true)
if [ -n "$FPM" ] && php -m 2>/dev/null | grep -x mysqli >/dev/null; then
	cat >"$B/php-fpm.conf" <<EOF
[global]
pid = $B/php-fpm.pid
error_log = $B/php-fpm.log
daemonize = yes
[bench]
listen = $B/php.sock
pm = static
pm.max_children = $PROCS
clear_env = yes
env[JWT_SECRET] = $(conf JWT_SECRET)
env[JWT_ISSUER] = $(conf JWT_ISSUER)
env[SVC_DB_SOCKET] = $(conf SVC_DB_SOCKET)
env[SVC_DB_USER] = $(conf SVC_DB_USER)
env[SVC_DB_NAME] = $(conf SVC_DB_NAME)
php_admin_value[opcache.enable] = 1
php_admin_value[opcache.validate_timestamps] = 0
EOF
	"$FPM" -R -y "$B/php-fpm.conf"
	PHP=1
else
	log "no php-fpm with mysqli: the PHP peer is left out (apt-get install php-fpm php-mysql)"
	PHP=0
fi

# 5. One lighttpd, one port per backend, the same process count for each.
env_of() {
	printf '"SVC_CONFIG" => "%s", "JWT_SECRET" => "%s", "JWT_ISSUER" => "%s", "SVC_DB_SOCKET" => "%s", "SVC_DB_USER" => "%s", "SVC_DB_NAME" => "%s"' \
		"$CONF" "$(conf JWT_SECRET)" "$(conf JWT_ISSUER)" "$(conf SVC_DB_SOCKET)" "$(conf SVC_DB_USER)" "$(conf SVC_DB_NAME)"
}
backend() { # name port bin
	cat <<EOF
\$SERVER["socket"] == "127.0.0.1:$2" {
	fastcgi.server = ( "/api/" => (( "bin-path" => "$3", "socket" => "$B/$1.sock", "max-procs" => $PROCS,
		"check-local" => "disable", "bin-environment" => ( $(env_of) ) )) )
}
EOF
}
{
	cat <<EOF
server.modules = ( "mod_fastcgi", "mod_rewrite" )
server.port = $((PORT + 14))
server.bind = "127.0.0.1"
server.document-root = "$ROOT/bench/http/php"
server.pid-file = "$B/lighttpd.pid"
server.errorlog = "$B/lighttpd.log"
server.max-keep-alive-requests = 100000
EOF
	backend after $((PORT + 10)) "$ROOT/build/cgi-bin/svc-projects.fcgi"
	backend before $((PORT + 11)) "$B/before/build/cgi-bin/svc-projects.fcgi"
	backend floor $((PORT + 12)) "$B/floor"
	if [ "$PHP" = 1 ]; then
		cat <<EOF
\$SERVER["socket"] == "127.0.0.1:$((PORT + 13))" {
	url.rewrite-once = ( "^/api/projects/([^/?]+)$" => "/project.php/\$1" )
	fastcgi.server = ( ".php" => (( "socket" => "$B/php.sock", "check-local" => "enable" )) )
}
EOF
	fi
} >"$B/lighttpd.conf"
lighttpd -f "$B/lighttpd.conf"

# 6. A user and a project (through the up stack), then the rounds.
read -r TOKEN PID < <(python3 - "http://127.0.0.1:$PORT/api" <<'EOF'
import json, sys, urllib.request, uuid
base = sys.argv[1]
def call(path, body, token=None):
    h = {"Content-Type": "application/json"}
    if token:
        h["Authorization"] = "Bearer " + token
    r = urllib.request.urlopen(urllib.request.Request(base + path, json.dumps(body).encode(), h))
    return json.loads(r.read())
s = call("/auth/signup", {"email": "bench-%s@example.test" % uuid.uuid4().hex[:12], "password": "bench-password"})
p = call("/workspaces/%s/projects" % s["workspace"]["id"], {"name": "bench", "template": "blank"}, s["accessToken"])
print(s["accessToken"], p["id"])
EOF
)
NAMES=(after before floor)
[ "$PHP" = 1 ] && NAMES+=(php)
for i in "${!NAMES[@]}"; do
	code=$(curl -s -o "$B/check-${NAMES[$i]}.json" -w '%{http_code}' -H "Authorization: Bearer $TOKEN" \
		"http://127.0.0.1:$((PORT + 10 + i))/api/projects/$PID")
	[ "$code" = 200 ] || { log "${NAMES[$i]} answered $code: $(head -c 300 "$B/check-${NAMES[$i]}.json")"; exit 1; }
	log "${NAMES[$i]}: 200 $(head -c 120 "$B/check-${NAMES[$i]}.json")"
done
[ "$CHECK" = 0 ] || exit 0
OUT=$VAR/results-$(date -u +%Y%m%dT%H%M%SZ).txt
{
	echo "# bench/http/run.sh $(date -u +%FT%TZ): GET /api/projects/:id, wrk -c$CONNS -d${SECS}s x $ROUNDS rounds, $PROCS processes each"
	echo "# svc at $(git -C "$ROOT" rev-parse --short HEAD) (after) and $BEFORE (before); load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
} | tee "$OUT"
for r in $(seq "$ROUNDS"); do
	# each round starts with the next backend, so none always runs first (or beside the same neighbour)
	for k in "${!NAMES[@]}"; do
		i=$(((k + r - 1) % ${#NAMES[@]}))
		rps=$(wrk -t1 -c"$CONNS" -d"${SECS}s" -H "Authorization: Bearer $TOKEN" \
			"http://127.0.0.1:$((PORT + 10 + i))/api/projects/$PID" | awk '
			/Non-2xx/ { bad = 1 } /^Requests\/sec/ { rps = $2 } END { print (bad ? "bad" : rps) }')
		echo "round $r ${NAMES[$i]} $rps load $(cut -d' ' -f1 /proc/loadavg)" | tee -a "$OUT"
	done
done
python3 - "$OUT" <<'EOF' | tee -a "$OUT"
import statistics, sys
runs = {}
for line in open(sys.argv[1]):
    f = line.split()
    if f and f[0] == "round" and f[3] != "bad":
        runs.setdefault(f[2], []).append(float(f[3]))
med = {k: statistics.median(v) for k, v in runs.items()}
for k, v in med.items():
    print("%-7s median %8.1f req/s  (min %.1f, max %.1f)" % (k, v, min(runs[k]), max(runs[k])))
for a in ("after", "before"):
    for b in ("floor", "php"):
        if a in med and b in med:
            print("%s / %s = %.2f" % (a, b, med[a] / med[b]))
# per round too: the ratio of neighbours is steadier than the ratio of medians on a loaded machine
for a in ("after", "before"):
    for b in ("floor", "php"):
        if a in runs and b in runs and len(runs[a]) == len(runs[b]):
            rs = sorted(x / y for x, y in zip(runs[a], runs[b]))
            print("%s / %s per round: %s (median %.2f)" % (a, b, " ".join("%.2f" % x for x in rs), statistics.median(rs)))
print("# load average at the end: %s" % open("/proc/loadavg").read().split()[:3])
EOF
