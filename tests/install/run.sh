#!/usr/bin/env bash
# tests/install/run.sh: the admin's path, run for real on this machine (issue 18; ./svc-dev test runs it
# when SVC_TEST_INSTALL=1, which .ci/run sets). It:
#   1. makes the tarball (make dist, with the built web app) and builds the Debian package from it
#      (dpkg-buildpackage -us -uc -b), then runs lintian on it (no error allowed);
#   2. starts a MariaDB on the system socket /run/mysqld/mysqld.sock (datadir in a temporary
#      directory) and installs the package with dpkg -i, services kept from starting by policy-rc.d:
#      the postinst creates the user, the secrets, the database and its user, and migrates;
#   3. starts the installed responders, svc-wsd and svc-worker the way the units do (as svc, with
#      the units' command lines) and the system apache2 with the installed configuration on a spare
#      port, and runs tests/e2e/test_main_job.py against it (the model: the suite's provider double);
#   4. svc-admin backup, wipes the database and the data, svc-admin restore, and checks that the
#      same projects and files come back through the API;
#   5. purges the package and checks that nothing is left but the data.
# usage: tests/install/run.sh BUILD_DIR   (BUILD_DIR: a configured build tree: its svc-*.tar.gz, made by
#        make distcheck, or make dist there)
# Prints "ok - NAME" / "not ok - NAME"; exits 1 when a check failed. Needs root and Debian.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
export ROOT=$(cd "$HERE/../.." && pwd)
BUILD=${1:?usage: run.sh BUILD_DIR}
PORT=${SVC_TEST_INSTALL_PORT:-28090}
WS_PORT=$((PORT + 1))
W=$(mktemp -d /tmp/svc-install.XXXXXX)
SOCK=/run/mysqld/mysqld.sock
FAIL=0
STARTED_PIDS=()

ok() { echo "ok - install: $1"; }
nok() { echo "not ok - install: $1"; [ -z "${2:-}" ] || printf '%s\n' "$2" | sed 's/^/    /' | head -n 40; FAIL=1; }
check() { local name=$1; shift; if "$@" >"$W/check.out" 2>&1; then ok "$name"; else nok "$name" "$(cat "$W/check.out")"; fi; }
step() { echo "# $(date +%T) $*"; }

cleanup() {
	set +e
	local p
	for p in "${STARTED_PIDS[@]}"; do kill -TERM -- "-$p" 2>/dev/null || kill -TERM "$p" 2>/dev/null; done
	[ ! -s "$W/apache/apache2.pid" ] || kill -TERM "$(cat "$W/apache/apache2.pid")" 2>/dev/null
	sleep 1
	if dpkg-query -W -f='${Status}' svc 2>/dev/null | grep -q installed; then
		dpkg --purge svc >/dev/null 2>&1
	fi
	[ ! -s "$W/mysql/mariadbd.pid" ] || kill -TERM "$(cat "$W/mysql/mariadbd.pid")" 2>/dev/null
	for _ in $(seq 50); do [ -S "$SOCK" ] || break; sleep 0.2; done
	[ "${MADE_POLICY:-0}" = 0 ] || rm -f /usr/sbin/policy-rc.d
	# what the test made on the system: the data, the user (a test machine starts clean next time)
	rm -rf /var/lib/svc /var/backups/svc-install-test
	getent passwd svc >/dev/null && deluser --quiet --system svc >/dev/null 2>&1
	getent group svc >/dev/null && delgroup --quiet --system svc >/dev/null 2>&1
	rm -rf "$W"
}
trap cleanup EXIT

[ "$(id -u)" = 0 ] || { nok "runs as root (it installs a package)"; exit 1; }
if [ -S "$SOCK" ] && mariadb --socket="$SOCK" -e 'SELECT 1' >/dev/null 2>&1; then
	nok "the machine has no MariaDB of its own on $SOCK (the test starts one there)"
	exit 1
fi
if dpkg-query -W -f='${Status}' svc 2>/dev/null | grep -q installed; then
	nok "svc is not installed already (the test installs and purges it)"
	exit 1
fi

# ---- 1. the tarball and the package
# the tarball of make distcheck (./svc-dev test runs it first), else make dist
tarball=$(ls "$BUILD"/svc-*.tar.gz 2>/dev/null | head -n 1)
if [ -z "$tarball" ]; then
	step "make dist"
	if ! make -C "$BUILD" -s dist >"$W/dist.log" 2>&1; then
		nok "make dist" "$(tail -n 30 "$W/dist.log")"
		exit 1
	fi
	tarball=$(ls "$BUILD"/svc-*.tar.gz | head -n 1)
fi
ok "the tarball ($(du -h "$tarball" | cut -f1))"
check "the tarball carries the built web app" tar -tzf "$tarball" "$(basename "$tarball" .tar.gz)/web/dist/index.html"
mkdir -p "$W/src"
tar -xzf "$tarball" -C "$W/src"
src=$(ls -d "$W"/src/svc-*)
rm -f "$tarball"
step "dpkg-buildpackage"
if ! (cd "$src" && DEB_BUILD_OPTIONS="nocheck parallel=$(nproc)" dpkg-buildpackage -us -uc -b) >"$W/build.log" 2>&1; then
	nok "dpkg-buildpackage -us -uc -b" "$(tail -n 40 "$W/build.log")"
	exit 1
fi
deb=$(ls "$W"/src/svc_*.deb | head -n 1)
ok "dpkg-buildpackage -us -uc -b ($(du -h "$deb" | cut -f1))"
step "lintian"
lintian --fail-on error --suppress-tags-from-file /dev/null "$deb" >"$W/lintian.log" 2>&1
lrc=$?
grep '^W:' "$W/lintian.log" | sed 's/^/# lintian: /'
if [ "$lrc" = 0 ] && ! grep -q '^E:' "$W/lintian.log"; then ok "lintian reports no error"; else nok "lintian reports no error" "$(grep '^E:' "$W/lintian.log")"; fi
check "the package declares runtime dependencies, no -dev package" \
	sh -c "dpkg-deb -f '$deb' Depends | grep -q libmariadb3 && ! dpkg-deb -f '$deb' Depends | grep -q -- '-dev'"

# ---- 2. MariaDB on the system socket, then dpkg -i
step "MariaDB on $SOCK"
mkdir -p "$W/mysql" /run/mysqld
mariadb-install-db --no-defaults --datadir="$W/mysql/data" --user=root --skip-test-db >"$W/mysql/install.log" 2>&1 ||
	{ nok "mariadb-install-db" "$(cat "$W/mysql/install.log")"; exit 1; }
mkdir -p "$W/mysql/tmp"
setsid mariadbd --no-defaults --datadir="$W/mysql/data" --socket="$SOCK" --pid-file="$W/mysql/mariadbd.pid" \
	--skip-networking --log-error="$W/mysql/error.log" --tmpdir="$W/mysql/tmp" --innodb-buffer-pool-size=32M \
	--user=root </dev/null >/dev/null 2>&1 &
for _ in $(seq 150); do mariadb --socket="$SOCK" -e 'SELECT 1' >/dev/null 2>&1 && break; sleep 0.2; done
mariadb --socket="$SOCK" -e 'SELECT 1' >/dev/null 2>&1 || { nok "MariaDB started" "$(tail "$W/mysql/error.log")"; exit 1; }

if [ ! -e /usr/sbin/policy-rc.d ]; then
	printf '#!/bin/sh\n# tests/install: no service starts during the test\nexit 101\n' >/usr/sbin/policy-rc.d
	chmod 755 /usr/sbin/policy-rc.d
	MADE_POLICY=1
fi
step "dpkg -i"
if DEBIAN_FRONTEND=noninteractive dpkg -i "$deb" >"$W/dpkg.log" 2>&1; then ok "dpkg -i"; else nok "dpkg -i" "$(tail -n 30 "$W/dpkg.log")"; exit 1; fi
sed 's/^/# dpkg: /' "$W/dpkg.log" | grep -i 'svc\|migrat' | head -n 20
check "the programs are in bindir and libexecdir" \
	test -x /usr/bin/svc-admin -a -x /usr/bin/svc-migrate -a -x /usr/bin/svc-worker -a -x /usr/bin/svc-wsd -a -x /usr/libexec/svc/svc-auth.fcgi
check "the units are installed" test -f /usr/lib/systemd/system/svc-responder@.service -a -f /usr/lib/systemd/system/svc-wsd.service -a -f /usr/lib/systemd/system/svc-worker@.service -a -f /usr/lib/systemd/system/svc-devd.service
check "the units name the installed paths" sh -c "grep -q 'SVC_BINDIR=/usr/libexec/svc' /usr/lib/systemd/system/svc-responder@.service && ! grep -q /usr/local /usr/lib/systemd/system/svc-*.service"
check "svc.conf is a conffile" sh -c "dpkg-query -W -f='\${Conffiles}' svc | grep -q ' /etc/svc/svc.conf '"
check "svc.conf and secrets.conf are 0640 root:svc" sh -c '[ "$(stat -c %a:%U:%G /etc/svc/svc.conf)" = 640:root:svc ] && [ "$(stat -c %a:%U:%G /etc/svc/secrets.conf)" = 640:root:svc ]'
check "the secrets were generated" sh -c "grep -Eq '^JWT_SECRET=[0-9a-f]{64}$' /etc/svc/secrets.conf && grep -Eq '^ENCRYPTION_KEY=[0-9a-f]{64}$' /etc/svc/secrets.conf"
check "the database was created and migrated as svc" \
	sh -c "mariadb --socket=$SOCK -N -e 'SELECT COUNT(*) FROM svc.schema_migrations' | grep -qv '^0$'"
check "the integrations catalogue was imported" \
	sh -c "mariadb --socket=$SOCK -N -e 'SELECT COUNT(*) FROM svc.integrations' | grep -Eq '^[0-9]{3,}$'"
check "the man pages are installed" test -f /usr/share/man/man5/svc.conf.5.gz -a -f /usr/share/man/man1/svc-admin.1.gz
check "Apache's configuration and modules are enabled" test -L /etc/apache2/conf-enabled/svc.conf -a -L /etc/apache2/mods-enabled/proxy_fcgi.load
check "the fail2ban jail is off until enabled" grep -q '^enabled  = false' /etc/fail2ban/jail.d/svc-auth.conf
check "logrotate knows the logs" test -f /etc/logrotate.d/svc
check "the web app is installed" test -f /usr/share/svc/web/dist/index.html

# ---- 3. the installed stack: what the admin does (svc.conf, a2ensite), then the units' command lines
step "configure and start"
cat >>/etc/svc/svc.conf <<EOF
# tests/install
SVC_APP_URL=http://127.0.0.1:$PORT
SVC_BASE_URL=http://127.0.0.1:$PORT/api
SVC_WS_URL=ws://127.0.0.1:$PORT
SVC_WS_PORT=$WS_PORT
SVC_DOMAIN=localhost
SVC_RATE_LIMIT_EXEMPT=127.0.0.1,::1
SVC_AI_BASE_URL=${SVC_PROVIDER_URL:-http://127.0.0.1:9}/v1
SVC_AI_MODEL=double
SVC_AI_API_KEY=test-key
SVC_OUTBOUND_ALLOW_NETS=127.0.0.1/32
EOF
a2ensite -q svc >/dev/null
start_as_svc() { # NAME COMMAND...: as the units do (User=svc, SupplementaryGroups=www-data)
	local name=$1
	shift
	setsid runuser -u svc -g svc -G www-data -- env -i PATH=/usr/bin:/bin SVC_CONFIG=/etc/svc/svc.conf "$@" \
		</dev/null >>"$W/$name.log" 2>&1 &
	STARTED_PIDS+=($!)
}
mkdir -p /run/svc && chown svc:svc /run/svc && chmod 755 /run/svc
for r in svc-auth svc-projects svc-chat svc-internal svc-preview svc-app svc-git; do
	start_as_svc "$r" "/usr/libexec/svc/$r.fcgi" --listen "/run/svc/$r.sock" --procs 2 --socket-group www-data
done
start_as_svc svc-wsd /usr/bin/svc-wsd
start_as_svc svc-worker /usr/bin/svc-worker
mkdir -p "$W/apache"
cat >"$W/apache/httpd.conf" <<EOF
# the system apache2 with the installed configuration: the modules the package enabled, its
# conf-enabled/svc.conf, the site the admin enabled; only the port and names differ
ServerRoot /etc/apache2
IncludeOptional /etc/apache2/mods-enabled/*.load
IncludeOptional /etc/apache2/mods-enabled/*.conf
Include /etc/apache2/conf-enabled/svc.conf
Define SVC_HTTP_PORT $PORT
Define SVC_LISTEN 127.0.0.1:$PORT
Define SVC_SERVER_NAME 127.0.0.1
Define SVC_DOMAIN localhost
Define SVC_DOMAIN_RE localhost
Define SVC_WS_PORT $WS_PORT
Define SVC_LOG_DIR $W/apache
PidFile $W/apache/apache2.pid
DefaultRuntimeDir $W/apache
Mutex file:$W/apache default
User www-data
Group www-data
ErrorLog $W/apache/error.log
LogFormat "%h %l %u %t \"%r\" %>s %b" common
ServerName 127.0.0.1
Include /etc/apache2/sites-enabled/svc.conf
EOF
if apache2 -t -f "$W/apache/httpd.conf" >"$W/apache/t.log" 2>&1 && apache2 -f "$W/apache/httpd.conf" -k start >>"$W/apache/t.log" 2>&1; then
	ok "the system apache2 starts with the installed configuration"
else
	nok "the system apache2 starts with the installed configuration" "$(cat "$W/apache/t.log")"
fi
for _ in $(seq 100); do
	[ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$PORT/api/auth/me")" = 401 ] && break
	sleep 0.2
done
check "the API answers through Apache" sh -c "[ \"\$(curl -s -o /dev/null -w '%{http_code}' http://127.0.0.1:$PORT/api/auth/me)\" = 401 ]"
check "the web app answers through Apache" sh -c "curl -sf http://127.0.0.1:$PORT/login | grep -qi '<!doctype html>'"

export SVC_BASE_URL="http://127.0.0.1:$PORT/api" SVC_APP_URL="http://127.0.0.1:$PORT" SVC_WS_URL="ws://127.0.0.1:$PORT" \
	SVC_HTTP_PORT=$PORT SVC_DATA_DIR=/var/lib/svc SVC_DOMAIN=localhost SVC_TEST_PREFIX="install: "
unset SVC_TEST_CONFIG SVC_ADMIN_TOOL SVC_NOPROVIDER_BASE_URL
step "test_main_job.py against the installed stack"
python3 "$ROOT/tests/e2e/test_main_job.py" >"$W/main_job.log" 2>&1
mrc=$?
grep -E '^(ok|not ok)' "$W/main_job.log" | sed 's/^ok - /ok - /'
[ "$mrc" = 0 ] || { nok "test_main_job.py passes against the installed package" "$(grep -v '^ok' "$W/main_job.log" | tail -n 30)"; }
grep -q '^not ok' "$W/main_job.log" && FAIL=1
# issue 25 item 11: after test_main_job's build and publish (served through Apache as www-data above),
# no other local account reads the data: the areas' modes, the served ones of www-data's group
check "the data's areas have their modes after a build and a publish" sh -c '
	[ "$(stat -c %a /var/lib/svc)" = 711 ] && [ "$(stat -c %a /var/lib/svc/projects)" = 700 ] &&
	[ "$(stat -c %a /var/lib/svc/builds)" = 711 ] && [ "$(stat -c %a /var/lib/svc/thumbnails)" = 700 ] &&
	[ "$(stat -c %a /var/lib/svc/previews)" = 700 ] &&
	for d in deployments published sites; do
		[ "$(stat -c %a:%U:%G /var/lib/svc/$d)" = 2750:svc:www-data ] || exit 1
	done'
check "nothing under /var/lib/svc is open to other accounts" sh -c '
	! find /var/lib/svc -mindepth 1 ! -type l ! -path /var/lib/svc/builds -perm /o=rwx | grep .'
check "the served areas are 2750 and 0640 of www-data" sh -c '
	! find /var/lib/svc/deployments /var/lib/svc/published /var/lib/svc/sites ! -type l \( ! -group www-data -o -type d ! -perm 2750 -o -type f -perm /g+w,o=rwx \) | grep .'
check "a published deployment is there" sh -c 'find /var/lib/svc/deployments -mindepth 2 -maxdepth 2 -type d | grep -q .'

# ---- 4. backup, wipe, restore
step "backup, wipe, restore"
python3 - "$W/state.json" <<'EOF' || nok "a project made for the backup"
import json, os, sys
sys.path.insert(0, os.path.join(os.environ["ROOT"], "tests", "e2e"))
from svclib import api, create_project, signup
a = signup(tag="install")
p = create_project(a, template="blank", name="Kept across restore")
pid = p.body["id"]
r = api("PUT", "/projects/%s/files/kept.txt" % pid, {"content": "survives\n", "overwrite": True}, token=a.token)
assert r.status in (200, 201), r
json.dump({"email": a.email, "password": a.password, "pid": pid}, open(sys.argv[1], "w"))
EOF
install -d -o svc -g svc -m 0700 /var/backups/svc-install-test
check "svc-admin backup as svc" runuser -u svc -- env SVC_CONFIG=/etc/svc/svc.conf svc-admin backup /var/backups/svc-install-test/b1
for p in "${STARTED_PIDS[@]}"; do kill -TERM -- "-$p" 2>/dev/null; done
STARTED_PIDS=()
sleep 1
mariadb --socket="$SOCK" -e 'DROP DATABASE svc; CREATE DATABASE svc CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci'
find /var/lib/svc -mindepth 2 -maxdepth 2 -exec rm -rf {} +
check "svc-migrate on the wiped instance" runuser -u svc -- env SVC_CONFIG=/etc/svc/svc.conf svc-migrate
check "svc-admin restore as svc" runuser -u svc -- env SVC_CONFIG=/etc/svc/svc.conf svc-admin restore /var/backups/svc-install-test/b1
for r in svc-auth svc-projects svc-chat svc-internal svc-preview svc-app svc-git; do
	start_as_svc "$r" "/usr/libexec/svc/$r.fcgi" --listen "/run/svc/$r.sock" --procs 2 --socket-group www-data
done
for _ in $(seq 100); do
	[ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$PORT/api/auth/me")" = 401 ] && break
	sleep 0.2
done
check "the same user, project and file after the restore" python3 - "$W/state.json" <<'EOF'
import json, os, sys
sys.path.insert(0, os.path.join(os.environ["ROOT"], "tests", "e2e"))
from svclib import api
s = json.load(open(sys.argv[1]))
r = api("POST", "/auth/login", {"email": s["email"], "password": s["password"]})
assert r.status == 200, r
token = r.body["accessToken"] if isinstance(r.body, dict) and r.body.get("accessToken") else None
assert token, r.body
p = api("GET", "/projects/%s" % s["pid"], token=token)
assert p.status == 200 and p.body["name"] == "Kept across restore", p
f = api("GET", "/projects/%s/files/kept.txt" % s["pid"], token=token)
assert f.status == 200 and "survives" in json.dumps(f.body), f
EOF

# ---- 5. purge: nothing left but the data
step "purge"
for p in "${STARTED_PIDS[@]}"; do kill -TERM -- "-$p" 2>/dev/null; done
STARTED_PIDS=()
kill -TERM "$(cat "$W/apache/apache2.pid")" 2>/dev/null
sleep 1
if dpkg --purge svc >"$W/purge.log" 2>&1; then ok "dpkg --purge"; else nok "dpkg --purge" "$(cat "$W/purge.log")"; fi
check "nothing of the package is left" sh -c '! ls -d /etc/svc /usr/libexec/svc /usr/share/svc /usr/share/doc/svc /usr/bin/svc-admin /usr/bin/svc-wsd /usr/lib/systemd/system/svc-wsd.service /etc/apache2/conf-available/svc.conf /etc/apache2/conf-enabled/svc.conf /etc/apache2/sites-available/svc.conf /etc/apache2/sites-enabled/svc.conf /etc/fail2ban/jail.d/svc-auth.conf /etc/logrotate.d/svc /var/log/svc 2>/dev/null | grep .'
check "the data is kept" test -d /var/lib/svc/projects
check "the database is kept" sh -c "mariadb --socket=$SOCK -N -e 'SELECT COUNT(*) FROM svc.users' | grep -qv '^0$'"
exit $FAIL
