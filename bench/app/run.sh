#!/usr/bin/env bash
# run.sh: the apps' backend (svc-app, issue 28) against a PHP-FPM + mysqli script doing the same work
# (bench/app/php/app.php), each behind the same lighttpd with the same number of processes, on one
# MariaDB holding 1,000,000 records of 10,000 end users: an owner's page of 20 records, a create, and a
# sign-in, loaded by wrk in interleaved rounds; prints requests per second and p99 latency.
#
# usage: bench/app/run.sh [--seconds S] [--rounds N] [--conns C] [--procs P] [--records N] [--port PORT] [--var DIR]
#   --seconds S   length of one wrk run (default 10); --rounds N  rounds (default 3)
#   --conns C     wrk's connections (default 4); --procs P  processes of each backend (default 2)
#   --records N   records in the table (default 1000000, of 10000 owners)
#   --port PORT   ./svc-dev up's port (default 28580); the backends listen on PORT+10 (svc) and PORT+11 (php)
#   --var DIR     state (default var-bench-app/)
#   --check       set everything up, check that both answer, and stop (no load)
# PocketBase has no Debian package; PHP-FPM is the peer (apt-get install php-fpm php-mysql). Loopback is
# exempt from the rate limits here (the PHP peer has none), and the quotas are off.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
SECS=10 ROUNDS=3 CONNS=4 PROCS=2 PORT=28580 VAR=$ROOT/var-bench-app CHECK=0 RECORDS=1000000 OWNERS=10000
while [ $# -gt 0 ]; do
	case $1 in
	--seconds) SECS=$2; shift 2 ;;
	--rounds) ROUNDS=$2; shift 2 ;;
	--conns) CONNS=$2; shift 2 ;;
	--procs) PROCS=$2; shift 2 ;;
	--records) RECORDS=$2; shift 2 ;;
	--port) PORT=$2; shift 2 ;;
	--var) VAR=$(realpath -m "$2"); shift 2 ;;
	--check) CHECK=1; shift ;;
	-h | --help) sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "run.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
	esac
done
export SVC_DEV_VAR=$VAR
B=$VAR/bench
mkdir -p "$B"
log() { printf 'bench/app: %s\n' "$*" >&2; }
stop_all() {
	local f
	for f in "$B/lighttpd.pid" "$B/php-fpm.pid"; do
		[ -s "$f" ] && kill "$(cat "$f")" 2>/dev/null || true
		rm -f "$f"
	done
	"$ROOT/svc-dev" down >/dev/null 2>&1 || true
}
trap stop_all EXIT

# 1. The stack that owns the database: ./svc-dev up (build/, -O2 -g).
log "starting ./svc-dev up in $VAR on port $PORT"
SVC_HTTP_PORT=$PORT SVC_WS_PORT=$((PORT + 1)) SVC_RATE_LIMIT_EXEMPT=127.0.0.1,::1 SVC_APP_MAX_RECORDS=0 SVC_APP_MAX_BYTES=0 \
	SVC_APP_MAX_USERS=0 "$ROOT/svc-dev" up >"$B/up.log" 2>&1 || { tail -n 30 "$B/up.log" >&2; log "./svc-dev up failed"; exit 1; }
CONF=$VAR/svc.conf
conf() { sed -n "s/^$1=//p" "$CONF" | tail -n 1; }
SQL=(mariadb --socket="$(conf SVC_DB_SOCKET)" -u "$(conf SVC_DB_USER)" "$(conf SVC_DB_NAME)")

# 2. A published project that declares todos {title, done}, and one end user signed up on its site (their hash is
#    every seeded user's: the password "bench-password").
read -r PID SLUG < <(python3 - "http://127.0.0.1:$PORT" <<'EOF'
import json, sys, urllib.request, uuid
app = sys.argv[1]
def call(method, url, body, headers=None):
    h = {"Content-Type": "application/json"}
    h.update(headers or {})
    r = urllib.request.urlopen(urllib.request.Request(url, json.dumps(body).encode(), h, method=method), timeout=300)
    return json.loads(r.read() or b"null")
s = call("POST", app + "/api/auth/signup", {"email": "bench-%s@example.test" % uuid.uuid4().hex[:12], "password": "bench-password"})
auth = {"Authorization": "Bearer " + s["accessToken"]}
p = call("POST", app + "/api/workspaces/%s/projects" % s["workspace"]["id"], {"name": "appbench", "template": "blank"}, auth)
decl = {"collections": {"todos": {"fields": {"title": {"type": "string", "required": True, "max": 200}, "done": {"type": "boolean"}}}}}
call("PUT", app + "/api/projects/%s/files/svc.data.json" % p["id"], {"content": json.dumps(decl), "overwrite": True}, auth)
call("POST", app + "/api/deploy/%s" % p["id"], {}, auth)
port = app.rsplit(":", 1)[1]
call("POST", app + "/_svc/auth/signup", {"email": "seed@bench.test", "password": "bench-password"},
     {"Host": "%s.localhost:%s" % (p["slug"], port), "X-Svc-Client": "1"})
print(p["id"], p["slug"])
EOF
)
log "project $PID ($SLUG): seeding $OWNERS end users with a session each and $RECORDS records"
"${SQL[@]}" <<EOF
SET @p = '$PID', @h = (SELECT password_hash FROM app_users WHERE project_id = '$PID' AND email = 'seed@bench.test');
INSERT INTO app_users (id, project_id, env, email, password_hash, created_at)
  SELECT CONCAT(LEFT(@p, 8), '-0000-4000-8000-', LPAD(seq, 12, '0')), @p, 'live', CONCAT('u', seq, '@bench.test'), @h, UTC_TIMESTAMP(3)
  FROM seq_1_to_$OWNERS;
INSERT INTO app_sessions (token_sha256, user_id, project_id, env, created_at, expires_at)
  SELECT SHA2(CONCAT('svca_', LEFT(@p, 8), LPAD(seq, 56, '0')), 256), CONCAT(LEFT(@p, 8), '-0000-4000-8000-', LPAD(seq, 12, '0')), @p, 'live',
         UTC_TIMESTAMP(3), UTC_TIMESTAMP(3) + INTERVAL 30 DAY
  FROM seq_1_to_$OWNERS;
INSERT INTO app_records (project_id, env, collection, id, owner, fields, created_at, updated_at)
  SELECT @p, 'live', 'todos', CONCAT(LEFT(@p, 8), '-1000-4000-8000-', LPAD(seq, 12, '0')),
         CONCAT(LEFT(@p, 8), '-0000-4000-8000-', LPAD(seq MOD $OWNERS + 1, 12, '0')),
         CONCAT('{"title":"todo ', seq, '","done":false}'), UTC_TIMESTAMP(3) - INTERVAL seq SECOND, UTC_TIMESTAMP(3)
  FROM seq_1_to_$RECORDS;
EOF

# 3. PHP-FPM, when installed.
FPM=$(ls /usr/sbin/php-fpm* 2>/dev/null | head -n 1 || true)
PHP=0
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
env[SVC_DB_SOCKET] = $(conf SVC_DB_SOCKET)
env[SVC_DB_USER] = $(conf SVC_DB_USER)
env[SVC_DB_NAME] = $(conf SVC_DB_NAME)
env[BENCH_PROJECT] = $PID
php_admin_value[opcache.enable] = 1
php_admin_value[opcache.validate_timestamps] = 0
EOF
	"$FPM" -R -y "$B/php-fpm.conf"
	PHP=1
else
	log "no php-fpm with mysqli: the PHP peer is left out (apt-get install php-fpm php-mysql)"
fi

# 4. One lighttpd, one port per backend, the same process count for each.
cat >"$B/lighttpd.conf" <<EOF
server.modules = ( "mod_fastcgi", "mod_rewrite" )
server.port = $((PORT + 12))
server.bind = "127.0.0.1"
server.document-root = "$ROOT/bench/app/php"
server.pid-file = "$B/lighttpd.pid"
server.errorlog = "$B/lighttpd.log"
server.max-keep-alive-requests = 100000
\$SERVER["socket"] == "127.0.0.1:$((PORT + 10))" {
	fastcgi.server = ( "/_svc/" => (( "bin-path" => "$ROOT/build/cgi-bin/svc-app.fcgi", "socket" => "$B/svc-app.sock",
		"max-procs" => $PROCS, "check-local" => "disable", "bin-environment" => ( "SVC_CONFIG" => "$CONF" ) )) )
}
\$SERVER["socket"] == "127.0.0.1:$((PORT + 11))" {
	url.rewrite-once = ( "^/_svc(/[^?]*)" => "/app.php\$1" )
	fastcgi.server = ( ".php" => (( "socket" => "$B/php.sock", "check-local" => "enable" )) )
}
EOF
lighttpd -f "$B/lighttpd.conf"
HOST="$SLUG.localhost:$PORT"
NAMES=(svc)
[ "$PHP" = 1 ] && NAMES+=(php)
TOK=${PID:0:8}  # the seeded sessions' tokens: svca_<first 8 of the project id><56 digits of the user's number>
COOKIE="svc_app_session=svca_$TOK$(printf '%056d' 42)"
for i in "${!NAMES[@]}"; do
	code=$(curl -s -o "$B/check-${NAMES[$i]}.json" -w '%{http_code}' -H "Host: $HOST" -H "Cookie: $COOKIE" \
		"http://127.0.0.1:$((PORT + 10 + i))/_svc/data/todos?limit=20")
	n=$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["items"]))' "$B/check-${NAMES[$i]}.json" 2>/dev/null || echo 0)
	want=$((RECORDS / OWNERS < 20 ? RECORDS / OWNERS : 20))
	[ "$code" = 200 ] && [ "$n" = "$want" ] || { log "${NAMES[$i]} answered $code: $(head -c 300 "$B/check-${NAMES[$i]}.json")"; exit 1; }
	code=$(curl -s -o "$B/check-create-${NAMES[$i]}.json" -w '%{http_code}' -H "Host: $HOST" -H "Cookie: $COOKIE" \
		-H 'Content-Type: application/json' -H 'X-Svc-Client: 1' -d '{"title":"check","done":false}' \
		"http://127.0.0.1:$((PORT + 10 + i))/_svc/data/todos")
	[ "$code" = 201 ] || { log "${NAMES[$i]} create answered $code: $(head -c 300 "$B/check-create-${NAMES[$i]}.json")"; exit 1; }
	code=$(curl -s -o /dev/null -w '%{http_code}' -H "Host: $HOST" -H 'Content-Type: application/json' -H 'X-Svc-Client: 1' \
		-d '{"email":"u7@bench.test","password":"bench-password"}' "http://127.0.0.1:$((PORT + 10 + i))/_svc/auth/login")
	[ "$code" = 200 ] || { log "${NAMES[$i]} login answered $code"; exit 1; }
	log "${NAMES[$i]}: list 200 with $n records, create 201, login 200"
done
[ "$CHECK" = 0 ] || exit 0

# 5. The rounds: each request from a random one of the 10,000 end users.
cat >"$B/list.lua" <<EOF
request = function()
  return wrk.format("GET", "/_svc/data/todos?limit=20", { ["Host"] = "$HOST",
    ["Cookie"] = string.format("svc_app_session=svca_$TOK%056d", math.random(1, $OWNERS)) })
end
EOF
cat >"$B/create.lua" <<EOF
request = function()
  return wrk.format("POST", "/_svc/data/todos", { ["Host"] = "$HOST", ["Content-Type"] = "application/json",
    ["X-Svc-Client"] = "1", ["Cookie"] = string.format("svc_app_session=svca_$TOK%056d", math.random(1, $OWNERS)) },
    '{"title":"new todo","done":false}')
end
EOF
cat >"$B/login.lua" <<EOF
request = function()
  return wrk.format("POST", "/_svc/auth/login", { ["Host"] = "$HOST", ["Content-Type"] = "application/json",
    ["X-Svc-Client"] = "1" }, string.format('{"email":"u%d@bench.test","password":"bench-password"}', math.random(1, $OWNERS)))
end
EOF
OUT=$VAR/results-$(date -u +%Y%m%dT%H%M%SZ).txt
{
	echo "# bench/app/run.sh $(date -u +%FT%TZ): wrk -c$CONNS -d${SECS}s x $ROUNDS rounds, $PROCS processes each, $RECORDS records of $OWNERS owners"
	echo "# svc at $(git -C "$ROOT" rev-parse --short HEAD); load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
} | tee "$OUT"
for r in $(seq "$ROUNDS"); do
	for what in list create login; do
		for k in "${!NAMES[@]}"; do
			i=$(((k + r - 1) % ${#NAMES[@]}))
			res=$(wrk -t1 -c"$CONNS" -d"${SECS}s" --latency -s "$B/$what.lua" "http://127.0.0.1:$((PORT + 10 + i))" | awk '
				/Non-2xx/ { bad = 1 } /^Requests\/sec/ { rps = $2 } /^ +99%/ { p99 = $2 } END { print (bad ? "bad" : rps), p99 }')
			echo "round $r $what ${NAMES[$i]} $res load $(cut -d' ' -f1 /proc/loadavg)" | tee -a "$OUT"
		done
	done
done
python3 - "$OUT" <<'EOF' | tee -a "$OUT"
import statistics, sys
runs = {}
for line in open(sys.argv[1]):
    f = line.split()
    if f and f[0] == "round" and f[4] != "bad":
        runs.setdefault((f[2], f[3]), []).append((float(f[4]), f[5]))
for (what, name), v in sorted(runs.items()):
    print("%-6s %-4s median %8.1f req/s, p99 of the rounds %s" % (what, name, statistics.median(x[0] for x in v),
                                                              " ".join(x[1] for x in v)))
for what in ("list", "create", "login"):
    if (what, "svc") in runs and (what, "php") in runs:
        a = statistics.median(x[0] for x in runs[(what, "svc")])
        b = statistics.median(x[0] for x in runs[(what, "php")])
        print("%s: svc / php = %.2f" % (what, a / b))
print("# load average at the end: %s" % open("/proc/loadavg").read().split()[:3])
EOF
