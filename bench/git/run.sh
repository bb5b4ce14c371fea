#!/usr/bin/env bash
# run.sh: a clone of a project with 1,000 commits through svc (/api/git/<id>.git: svc-git's checks, then
# git-http-backend, streamed through lighttpd) next to a plain `git clone` of the very same repository
# on the same disk through `git http-backend` as a CGI of a bare lighttpd (no svc, no credential), in
# interleaved rounds; prints the median, fastest and slowest seconds of each and their ratio.
#
# usage: bench/git/run.sh [--commits N] [--big MIB] [--rounds N] [--port PORT] [--var DIR] [--stack]
#   --commits N  commits of the project (default 1000; each changes two of 50 files, one of them growing)
#   --big MIB    then one more commit of MIB MiB of random (incompressible) files, 4 MiB each (default 0)
#   --rounds N   clones of each, alternating (default 7)
#   --port PORT  ./svc-dev up's port (default 20620); the plain lighttpd listens on PORT+10
#   --var DIR    state (default var-bench-git/): ./svc-dev up's stack (build/, -O2 -g), the clones
#   --stack      use the stack of the environment instead (SVC_BASE_URL, SVC_DATA_DIR: `set -a; . var-test/test.env`)
# Results: DIR/results-<time>.txt, also on stdout.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
COMMITS=1000 BIG=0 ROUNDS=7 PORT=20620 VAR=$ROOT/var-bench-git STACK=0
while [ $# -gt 0 ]; do
	case $1 in
	--commits) COMMITS=$2; shift 2 ;;
	--big) BIG=$2; shift 2 ;;
	--rounds) ROUNDS=$2; shift 2 ;;
	--port) PORT=$2; shift 2 ;;
	--var) VAR=$(realpath -m "$2"); shift 2 ;;
	--stack) STACK=1; shift ;;
	-h | --help) sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "run.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
	esac
done
B=$VAR/bench
rm -rf "$B"
mkdir -p "$B/home" "$B/empty"
log() { printf 'bench/git: %s\n' "$*" >&2; }
export HOME=$B/home GIT_CONFIG_NOSYSTEM=1 GIT_TERMINAL_PROMPT=0 LC_ALL=C
export GIT_AUTHOR_NAME="Bench" GIT_AUTHOR_EMAIL=bench@example.test GIT_COMMITTER_NAME="Bench" GIT_COMMITTER_EMAIL=bench@example.test

stop_all() {
	[ -s "$B/lighttpd.pid" ] && kill "$(cat "$B/lighttpd.pid")" 2>/dev/null || true
	[ "$STACK" = 1 ] || SVC_DEV_VAR=$VAR "$ROOT/svc-dev" down >/dev/null 2>&1 || true
}
trap stop_all EXIT

if [ "$STACK" = 0 ]; then
	log "starting ./svc-dev up in $VAR on port $PORT"
	SVC_DEV_VAR=$VAR SVC_HTTP_PORT=$PORT SVC_WS_PORT=$((PORT + 1)) "$ROOT/svc-dev" up >"$B/up.log" 2>&1 ||
		{ tail -n 30 "$B/up.log" >&2; log "./svc-dev up failed"; exit 1; }
	SVC_BASE_URL=http://127.0.0.1:$PORT/api
	SVC_DATA_DIR=$(sed -n 's/^SVC_DATA_DIR=//p' "$VAR/svc.conf" | tail -n 1)
fi
: "${SVC_BASE_URL:?}" "${SVC_DATA_DIR:?}"

# 1. A user, a blank project and a git:write token, through the API.
api() { curl -sS -X "$1" -H 'Content-Type: application/json' ${3:+-H "Authorization: Bearer $3"} ${4:+-d "$4"} "$SVC_BASE_URL$2"; }
json() { python3 -c 'import json,sys; d=json.load(sys.stdin); print(eval(sys.argv[1], {"d": d}))' "$1"; }
email=bench-git-$RANDOM$RANDOM@example.test
signup=$(api POST /auth/signup "" "{\"email\":\"$email\",\"password\":\"pw-bench-git-1234\",\"displayName\":\"Bench\"}")
token=$(printf '%s' "$signup" | json 'd["accessToken"]')
wid=$(api GET /auth/me "$token" | json '(d.get("workspace") or (d.get("workspaces") or [{}])[0]).get("id") or d.get("workspaceId")')
pid=$(api POST "/workspaces/$wid/projects" "$token" '{"name":"bench git","template":"blank"}' | json 'd["id"]')
pat=$(api POST /auth/tokens "$token" '{"name":"bench","scopes":["git:write"]}' | json 'd["token"]')
u=${SVC_BASE_URL#http://}
SVC_URL="http://git:$pat@$u/git/$pid.git"

# 2. COMMITS commits made locally with git fast-import, pushed to svc in one push.
log "making $COMMITS commits and pushing them to project $pid"
git clone -q "$SVC_URL" "$B/src"
python3 - "$COMMITS" >"$B/import.txt" <<'EOF'
import sys
n = int(sys.argv[1])
out = sys.stdout
mark = 0
for i in range(n):
    mark += 1
    files = {"src/file%02d.js" % (i % 50): "// file %d, change %d\n" % (i % 50, i) + "export const v%d = %d;\n" % (i, i) * 20,
             "CHANGELOG.md": "".join("- change %d\n" % k for k in range(i + 1))}
    msg = "change %d\n" % i
    out.write("commit refs/heads/main\nmark :%d\ncommitter Bench <bench@example.test> %d +0000\n" % (mark, 1700000000 + i))
    out.write("data %d\n%s" % (len(msg), msg))
    if i == 0:
        out.write("from refs/heads/main^0\n")
    for path, text in files.items():
        b = text.encode()
        out.write("M 100644 inline %s\ndata %d\n" % (path, len(b)))
        out.write(text)
    out.write("\n")
EOF
(cd "$B/src" && git fast-import --quiet <"$B/import.txt" && git reset -q --hard main && git push -q origin main)
if [ "$BIG" -gt 0 ]; then
	log "adding $BIG MiB of random files and pushing them"
	mkdir -p "$B/src/big"
	for i in $(seq 0 4 $((BIG - 1))); do head -c $((4 << 20)) /dev/urandom >"$B/src/big/blob$i.bin"; done
	(cd "$B/src" && git add big && git commit -q -m "$BIG MiB of random files" && git push -q origin main)
fi
count=$(git -C "$B/src" rev-list --count main)
size=$(du -sk "$SVC_DATA_DIR/projects/$pid/.git" | cut -f1)
log "the project has $count commits, its .git $size KiB"

# 3. The same repository through git http-backend as a CGI of a bare lighttpd (git-http-backend(1)'s recipe).
PLAIN_PORT=$((PORT + 10))
cat >"$B/lighttpd.conf" <<EOF
server.bind = "127.0.0.1"
server.port = $PLAIN_PORT
server.document-root = "$B/empty"
server.pid-file = "$B/lighttpd.pid"
server.errorlog = "$B/lighttpd-error.log"
server.modules = ( "mod_alias", "mod_setenv", "mod_cgi" )
server.stream-response-body = 2
alias.url = ( "/git" => "/usr/lib/git-core/git-http-backend" )
\$HTTP["url"] =~ "^/git" {
	cgi.assign = ( "" => "" )
	setenv.set-environment = ( "GIT_PROJECT_ROOT" => "$SVC_DATA_DIR/projects", "GIT_HTTP_EXPORT_ALL" => "1" )
}
EOF
lighttpd -f "$B/lighttpd.conf"
PLAIN_URL="http://127.0.0.1:$PLAIN_PORT/git/$pid"
for _ in $(seq 50); do curl -sf -o /dev/null "$PLAIN_URL/info/refs?service=git-upload-pack" && break; sleep 0.1; done

# 4. Interleaved rounds: one clone through svc, one plain, ROUNDS times (a first clone of each warms the caches).
clone_secs() {
	local url=$1 dir=$2 t0 t1
	rm -rf "$dir"
	t0=$(date +%s.%N)
	git clone -q "$url" "$dir"
	t1=$(date +%s.%N)
	[ "$(git -C "$dir" rev-list --count HEAD)" = "$count" ] || { log "clone of $url is incomplete"; exit 1; }
	python3 -c "print('%.3f' % ($t1 - $t0))"
}
clone_secs "$SVC_URL" "$B/warm-svc" >/dev/null
clone_secs "$PLAIN_URL" "$B/warm-plain" >/dev/null
svc=() plain=()
for r in $(seq "$ROUNDS"); do
	svc+=("$(clone_secs "$SVC_URL" "$B/c-svc")")
	plain+=("$(clone_secs "$PLAIN_URL" "$B/c-plain")")
	log "round $r: svc ${svc[-1]} s, plain ${plain[-1]} s"
done
# the most any svc-git process of this stack's lighttpd ever held (VmHWM), to see that a clone is streamed
hwm=0
lpid=$(cat "$VAR/run/lighttpd.pid" 2>/dev/null || true)
for p in $(pgrep -P "${lpid:-0}" -f 'svc-git\.fcgi' 2>/dev/null || true); do
	k=$(sed -n 's/^VmHWM:[[:space:]]*\([0-9]*\) kB/\1/p' "/proc/$p/status" 2>/dev/null || echo 0)
	[ "${k:-0}" -gt "$hwm" ] && hwm=$k
done
out=$VAR/results-$(date -u +%Y%m%dT%H%M%SZ).txt
python3 - "$count" "$size" "${svc[*]}" "${plain[*]}" "$hwm" <<'EOF' | tee "$out"
import statistics, sys
count, size = sys.argv[1], sys.argv[2]
s = [float(x) for x in sys.argv[3].split()]
p = [float(x) for x in sys.argv[4].split()]
print("clone of %s commits (.git %s KiB), %d rounds" % (count, size, len(s)))
print("svc (/api/git, lighttpd, svc-git)       median %.3f s  min %.3f  max %.3f" % (statistics.median(s), min(s), max(s)))
print("plain git http-backend (lighttpd CGI)   median %.3f s  min %.3f  max %.3f" % (statistics.median(p), min(p), max(p)))
print("svc / plain: %.2f" % (statistics.median(s) / statistics.median(p)))
if int(sys.argv[5]):
    print("largest resident size of an svc-git process (VmHWM): %s KiB" % sys.argv[5])
EOF
