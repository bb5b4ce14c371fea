#!/bin/sh
# bench/preview/deps.sh: what reusing node_modules saves (bench/README.md "Dependencies"). As root, after
# ./svc-dev test has built build-test/: a fresh data directory, the React template built twice (the second
# installs nothing), then a second project with the same lockfile (another package.json name) built with
# the network off (installs from the shared cache). Settings from the environment, as svc's programs take them.
set -e
cd "$(dirname "$0")/../.."
B=build-test
T=${1:-templates/react}
[ -d "$T" ] || T=bench/preview/react-template
T=$(realpath "$T")
L=$(make -s -C $B -f Makefile -f - print <<'MK' 2>/dev/null
print: ; @echo $(SVC_LIBS)
MK
)
gcc -O1 -g -fsanitize=address,undefined -Ilib -I$B/lib -I$B bench/preview/deps_build.c $(echo "$L" | sed "s#lib/libsvc.a#$B/lib/libsvc.a#") -o $B/deps_build
D=$(mktemp -d /tmp/svc-bench-deps-XXXXXX); chmod 0711 "$D"; mkdir -m 0711 "$D/builds"
P2=$(mktemp -d /tmp/svc-bench-deps-p2-XXXXXX); trap 'rm -rf "$D" "$P2"' EXIT
cp -r "$T"/. "$P2"; sed -i 's/"name": "[^"]*"/"name": "bench-second"/' "$P2/package.json"
: "${JWT_SECRET:=$(head -c32 /dev/urandom | od -An -tx1 | tr -d ' \n')}" "${INTERNAL_SECRET:=$JWT_SECRET}"
: "${ENCRYPTION_KEY:=$(head -c32 /dev/urandom | od -An -tx1 | tr -d ' \n')}"
export JWT_SECRET INTERNAL_SECRET ENCRYPTION_KEY SVC_DATA_DIR="$D" ASAN_OPTIONS=detect_leaks=0
run() { echo "## $1 (load $(cut -d' ' -f1 /proc/loadavg))"; shift; "$@" | grep -E '^\$|added [0-9]+ packages|installed in|reused|npm cache|^== '; }
run "first build, cold cache" $B/deps_build "$D" "$T"
run "second build, nothing changed" $B/deps_build "$D" "$T"
run "another project, same lockfile, no network" env SVC_BUILD_NETWORK=0 $B/deps_build "$D" "$P2"
du -sh "$D/npm/modules"/* "$D/npm/cache" 2>/dev/null
