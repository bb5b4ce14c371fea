# dev/demo.sh: './svc-dev demo': the main job against the stack 'up' started, with curl (sourced by svc-dev)
# shellcheck shell=bash

# jget EXPR: evaluates a Python expression over the last JSON answer (j).
jget() {
	printf '%s' "$DEMO_BODY" | python3 -c '
import json, sys
try:
    j = json.load(sys.stdin)
    v = eval(sys.argv[1])
except Exception:
    sys.exit(1)
print("" if v is None else v)' "$1"
}

# demo_req METHOD PATH [JSON]: one API call with curl, shown with its answer.
demo_req() {
	local method=$1 path=$2 body=${3:-} out
	local -a args=(-sS -X "$method" -H "Accept: application/json" -w '\n%{http_code}')
	[ -z "${DEMO_TOKEN:-}" ] || args+=(-H "Authorization: Bearer $DEMO_TOKEN")
	if [ -n "$body" ]; then
		args+=(-H "Content-Type: application/json" --data-binary "$body")
	elif [ "$method" != GET ]; then
		args+=(-H "Content-Length: 0")   # lighttpd answers 411 to a POST without one
	fi
	printf "\n$B> %s %s$N\n" "$method" "$SVC_BASE_URL$path"
	[ -z "$body" ] || printf '> %s\n' "$body"
	out=$(curl "${args[@]}" "$SVC_BASE_URL$path") || { echo "(curl failed)"; DEMO_STATUS=000; DEMO_BODY=; return 0; }
	DEMO_STATUS=${out##*$'\n'}
	DEMO_BODY=${out%$'\n'*}
	printf '< %s\n' "$DEMO_STATUS"
	printf '%s' "$DEMO_BODY" | python3 -c '
import json, sys
raw = sys.stdin.read()
try:
    text = json.dumps(json.loads(raw), indent=2)
except ValueError:
    text = raw
lines = text.splitlines()
for l in lines[:40]:
    print("< " + (l if len(l) <= 160 else l[:157] + "..."))
if len(lines) > 40:
    print("< ... (%d more lines)" % (len(lines) - 40))'
}

demo_expect() {
	case " $* " in *" $DEMO_STATUS "*) return 0 ;; esac
	die "expected HTTP $*, got $DEMO_STATUS; stopping the demo"
}

cmd_demo() {
	[ -f "$UP_VAR/svc-dev.env" ] || die "no stack: run ./$PROG up first"
	pid_alive "$UP_VAR/run/lighttpd.pid" || die "lighttpd is not running: run ./$PROG up"
	set -a
	# shellcheck source=/dev/null
	. "$UP_VAR/svc-dev.env"
	set +a
	local email password pid slug chat url B='' N=''
	if [ -t 1 ]; then B=$'\033[1m' N=$'\033[0m'; fi
	email="demo-$(openssl rand -hex 4)@example.test"
	password="demo-$(openssl rand -hex 8)"
	DEMO_TOKEN=

	echo "== 1. sign up"
	demo_req POST /auth/signup "{\"email\":\"$email\",\"password\":\"$password\",\"displayName\":\"Demo\"}"
	demo_expect 200 201
	DEMO_TOKEN=$(jget 'j["accessToken"]')
	local wid
	wid=$(jget '(j.get("workspace") or {}).get("id")') || wid=
	if [ -z "$wid" ]; then
		demo_req GET /auth/me
		wid=$(jget '(j.get("workspace") or {}).get("id")')
	fi

	echo
	echo "== 2. create a project from the todo-app template"
	demo_req POST "/workspaces/$wid/projects" '{"name":"Demo todos","template":"todo-app"}'
	demo_expect 201
	pid=$(jget 'j["id"]')
	slug=$(jget 'j["slug"]')
	demo_req GET "/projects/$pid/chats"
	demo_expect 200
	chat=$(jget '(j if isinstance(j, list) else j["items"])[0]["id"]')

	echo
	echo "== 3. ask the agent for a change (server-sent events as they arrive)"
	local msg='{"chatId":"'"$chat"'","text":"add a footer that says Made with svc"}'
	printf "\n$B> POST %s$N\n> %s\n" "$SVC_BASE_URL/chat/$pid/messages" "$msg"
	curl -sS -N -X POST -H "Authorization: Bearer $DEMO_TOKEN" -H "Accept: text/event-stream" \
		-H "Content-Type: application/json" --data-binary "$msg" --max-time 600 \
		"$SVC_BASE_URL/chat/$pid/messages" | while IFS= read -r line; do
		if [ -n "$line" ]; then printf '< %s\n' "${line:0:200}"; fi
	done || true
	if [ -z "$(conf_get "$UP_VAR/svc.conf" SVC_AI_BASE_URL)" ]; then
		echo "(no provider configured, so the stream ended with no_provider; see README, 'Pointing svc at a model')"
	fi

	echo
	echo "== 4. version history"
	demo_req GET "/projects/$pid/versions"
	demo_expect 200
	demo_req GET "/projects/$pid/files/index.html"

	echo
	echo "== 5. publish"
	demo_req POST "/deploy/$pid"
	demo_expect 200 201
	url=$(jget 'j["url"]')

	echo
	echo "== 6. the published site"
	printf "\n$B> GET %s$N  (Host: %s.%s:%s, sent to 127.0.0.1)\n" "$url" "$slug" "$SVC_DOMAIN" "$SVC_HTTP_PORT"
	local page
	page=$(curl -sS -i -H "Host: $slug.$SVC_DOMAIN:$SVC_HTTP_PORT" "http://127.0.0.1:$SVC_HTTP_PORT/") || true
	printf '%s\n' "$page" | head -n 16 | sed 's/^/< /'
	echo "< ..."
	if printf '%s' "$page" | grep -qi '<footer'; then
		printf '%s\n' "$page" | grep -i -A1 '<footer' | sed 's/^/< /'
		echo "(the agent's footer is live)"
	fi
	echo
	echo "Open $url in a browser (*.localhost resolves to 127.0.0.1)."
}
