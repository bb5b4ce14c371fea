#!/usr/bin/env bash
# bench/cluster/run.sh [SECONDS] [CONNECTIONS]: throughput of the loopback cluster (./svc-dev cluster up) through
# HAProxy (both hosts) against one host alone, on the same machine, with wrk: a request that only reaches a
# responder (GET /api/auth/providers) and one that reads the session from Galera (GET /api/auth/me).
# Prints one line per run and a Markdown table (bench/README.md, docs/scaling.md "Measured").
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
SECS=${1:-10}
CONNS=${2:-16}
ENVF=${SVC_CLUSTER_VAR:-$ROOT/var-cluster}/cluster.env
[ -f "$ENVF" ] || { echo "no $ENVF: run ./svc-dev cluster up first" >&2; exit 1; }
command -v wrk >/dev/null || { echo "wrk is missing (apt-get install wrk)" >&2; exit 1; }
# shellcheck source=/dev/null
. "$ENVF"
HOST_A=${SVC_CLUSTER_HOSTS%% *}

email="bench-$(openssl rand -hex 4)@example.test"
token=$(curl -sf -X POST -H 'Content-Type: application/json' \
	--data "{\"email\":\"$email\",\"password\":\"pw-$(openssl rand -hex 8)\",\"displayName\":\"Bench\"}" \
	"$SVC_CLUSTER_FRONT/api/auth/signup" | python3 -c 'import json,sys; print(json.load(sys.stdin)["accessToken"])')

# run NAME URL [HEADER]: wrk for SECS seconds; prints "NAME rps p50 p99 errors"
run() {
	local name=$1 url=$2 out rps p50 p99 errs
	shift 2
	out=$(wrk -t2 -c"$CONNS" -d"${SECS}s" --latency "$@" "$url")
	rps=$(awk '/^Requests\/sec:/ {printf "%.0f", $2}' <<<"$out")
	p50=$(awk '$1 == "50%" {print $2}' <<<"$out")
	p99=$(awk '$1 == "99%" {print $2}' <<<"$out")
	errs=$(awk '/Non-2xx or 3xx responses:/ {print $5} /Socket errors:/ {print "socket:" $0}' <<<"$out" | tr '\n' ' ')
	echo "$name $rps $p50 $p99 ${errs:-0}"
}

echo "# $(date -u +%FT%TZ), ${SECS}s per run, $CONNS connections, wrk -t2, load average $(cut -d' ' -f1-3 /proc/loadavg)"
rows=()
for ep in providers me; do
	for where in front host-a; do
		url=$SVC_CLUSTER_FRONT
		[ "$where" = front ] || url=$HOST_A
		if [ "$ep" = providers ]; then
			line=$(run "$where/$ep" "$url/api/auth/providers")
		else
			line=$(run "$where/$ep" "$url/api/auth/me" -H "Authorization: Bearer $token")
		fi
		echo "$line"
		rows+=("$line")
	done
done
echo
echo "| request | through | req/s | p50 | p99 | non-2xx |"
echo "| --- | --- | --: | --: | --: | --: |"
for line in "${rows[@]}"; do
	read -r name rps p50 p99 errs <<<"$line"
	where=${name%%/*}
	ep=${name#*/}
	[ "$ep" = providers ] && ep='GET /api/auth/providers' || ep='GET /api/auth/me'
	[ "$where" = front ] && where='HAProxy, both hosts' || where='host a alone'
	echo "| $ep | $where | $rps | $p50 | $p99 | $errs |"
done
