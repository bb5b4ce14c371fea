# tests/stack.sh: the test stack of ./svc-dev test in var-test/ (MariaDB, the doubles of tests/fixtures/, dnsmasq,
# two lighttpd, Apache with the responders' pools, svc-worker, svc-wsd) with the settings of tests/stack.env:
# stack_reset, stack_prepare (MariaDB and the settings: the unit suites run then), stack_serve (the servers, then
# var-test/test.env for the runners), stack_cleanup (sourced by svc-dev after dev/*.sh and tests/runner.sh)
# shellcheck shell=bash

# shellcheck source=tests/stack.env
. "$ROOT/tests/stack.env"

# test_port PORT VARNAME: sets TEST_PORT to PORT when it is free, else to a
# free port, unless VARNAME was set by the caller (then it is an error).
# (No command substitution: a die in a subshell would not stop svc-dev.)
test_port() {
	TEST_PORT=$1
	port_in_use "$1" || return 0
	[ -z "${!2:-}" ] || die "port $1 ($2) is taken"
	TEST_PORT=$(free_port)
	log "port $1 is taken; using $TEST_PORT instead (set $2 to choose)"
}

# stack_cleanup: stops every process of the test stack (once).
TEST_CLEANUP_DONE=0
stack_cleanup() {
	[ "$TEST_CLEANUP_DONE" -eq 0 ] || return 0
	TEST_CLEANUP_DONE=1
	set +e
	local v=$TEST_VAR
	[ ! -s "$v/apache/apache2.pid" ] || { run_clean /usr/sbin/apache2 -f "$v/apache/httpd.conf" -k stop >/dev/null 2>&1; sleep 0.5; stop_pidfile "$v/apache/apache2.pid" apache2; }
	responders_stop "$T_SHARE/run-apache"
	stop_pidfile "$v/run/lighttpd.pid" lighttpd
	stop_pidfile "$v/run-noprovider/lighttpd.pid" lighttpd-noprovider
	stop_pidfile "$v/run/provider-double.pid" provider-double
	stop_pidfile "$v/run/oauth-double.pid" oauth-double
	stop_pidfile "$v/run/smtp-double.pid" smtp-double
	stop_pidfile "$v/run/dns-double.pid" dns-double
	stop_pidfile "$v/run/dnsmasq.pid" dnsmasq
	stop_pidfile "$v/run/tls-endpoint.pid" tls-endpoint
	stop_pidfile "$v/run/svc-worker.pid" svc-worker
	stop_pidfile "$v/run/svc-wsd.pid" svc-wsd
	stop_pidfile "$v/run/svc-devd.pid" svc-devd
	# a cluster of tests/cluster left by a killed run
	[ ! -f "$v/cluster/cluster.env" ] || SVC_CLUSTER_VAR=$v/cluster "$ROOT/$PROG" cluster down >/dev/null 2>&1
	unmount_builds "$v" # the tmpfs of a build killed with its process (else var-test cannot be removed)
	db_stop "$v/mariadb"
	if [ -n "${T_SHARE_TMP:-}" ] && [ -d "$T_SHARE_TMP" ]; then rm -rf "$T_SHARE_TMP"; fi
}

# stack_reset: a fresh TEST_VAR every run, so that nothing of a previous run can hide a failure (only the
# test dir; a running 'up' lives in var/ and is never touched); a stack left by SVC_TEST_KEEP=1 or by a
# killed run is stopped first. Chooses the ports and where Apache serves from (T_SHARE); starts the tally.
stack_reset() {
	local v=$TEST_VAR
	if [ -d "$v" ]; then
		T_SHARE=$(cat "$v/share-dir" 2>/dev/null || echo "$v")
		T_SHARE_TMP=
		case "$T_SHARE" in /tmp/svc-test.*) T_SHARE_TMP=$T_SHARE ;; esac
		stack_cleanup
		TEST_CLEANUP_DONE=0
		rm -rf "$v"
	fi
	test_port "$STACK_HTTP_PORT" SVC_TEST_HTTP_PORT && STACK_HTTP_PORT=$TEST_PORT
	test_port "$STACK_APACHE_PORT" SVC_TEST_APACHE_PORT && STACK_APACHE_PORT=$TEST_PORT
	test_port "$STACK_NOPROVIDER_PORT" SVC_TEST_NOPROVIDER_PORT && STACK_NOPROVIDER_PORT=$TEST_PORT
	test_port "$STACK_WS_PORT" SVC_TEST_WS_PORT && STACK_WS_PORT=$TEST_PORT
	test_port "$STACK_DEVD_PORT" SVC_TEST_DEVD_PORT && STACK_DEVD_PORT=$TEST_PORT
	mkdir -p "$v/run" "$v/run-noprovider" "$v/logs" "$v/mariadb" "$v/apache"
	export SVC_TEST_TALLY=$v/tally
	: >"$SVC_TEST_TALLY"
	chmod 755 "$v" "$v/run" "$v/run-noprovider"

	# Apache's children run as www-data: what it serves (web/, docs/, the data
	# dir) and the sockets it reaches must be readable by that user. When the
	# checkout is not (say, under /root), they go to a world-readable temp dir.
	T_SHARE=$v
	T_SHARE_TMP=
	STACK_DOCS=$ROOT/docs
	STACK_WEB_SRC=$(web_root "$ROOT/tests/fixtures/web-dist")
	STACK_WEB=$STACK_WEB_SRC
	if ! runuser -u www-data -- test -r "$STACK_WEB_SRC/index.html" 2>/dev/null ||
		! runuser -u www-data -- test -x "$v" 2>/dev/null; then
		T_SHARE_TMP=$(mktemp -d /tmp/svc-test.XXXXXX)
		chmod 755 "$T_SHARE_TMP"
		T_SHARE=$T_SHARE_TMP
		cp -r "$STACK_WEB_SRC" "$T_SHARE/web"
		cp -r "$ROOT/docs" "$T_SHARE/docs"
		STACK_WEB=$T_SHARE/web STACK_DOCS=$T_SHARE/docs
		log "checkout not readable by www-data; Apache serves from $T_SHARE"
	fi
	mkdir -p "$T_SHARE/data" "$T_SHARE/run-apache"
	chmod 755 "$T_SHARE/data" "$T_SHARE/run-apache"
	echo "$T_SHARE" >"$v/share-dir"
}

# stack_double NAME ARGS...: starts tests/fixtures/NAME_double.py with ARGS, which writes its port(s) to
# TEST_VAR/run/NAME-double.port; waits for that file.
stack_double() {
	local v=$TEST_VAR f=$1 p
	shift
	rm -f "$v/run/$f-double.port"
	setsid python3 "$ROOT/tests/fixtures/${f}_double.py" "$@" --port-file "$v/run/$f-double.port" \
		</dev/null >"$v/logs/$f-double.log" 2>&1 &
	echo $! >"$v/run/$f-double.pid"
	for p in $(seq 100); do [ -s "$v/run/$f-double.port" ] && break; sleep 0.1; done
	[ -s "$v/run/$f-double.port" ] || { cat "$v/logs/$f-double.log" >&2; die "the $f double did not start"; }
}

# stack_prepare: MariaDB with the schema, the doubles (a model provider, OAuth, SMTP, a silent
# nameserver), dnsmasq and the test CA, and the settings of the three front ends.
stack_prepare() {
	local v=$TEST_VAR build=$TEST_BUILD
	echo "== stack"
	SECRETS=$v/secrets.env
	ensure_secrets "$SECRETS"
	STACK_ASAN_OPTIONS="detect_leaks=0:log_path=$v/logs/asan"
	STACK_UBSAN_OPTIONS="print_stacktrace=1:log_path=$v/logs/asan"
	db_start "$v/mariadb"

	STACK_DOUBLE_URL=""
	if [ -f "$ROOT/tests/fixtures/provider_double.py" ]; then
		# On a loopback address of its own, which only SVC_OUTBOUND_ALLOW_NETS lets a workspace's
		# provider reach (tests/e2e/test_ssrf.py: 127.0.0.1 and the rest stay refused).
		stack_double provider --host 127.0.0.7 --port 0
		STACK_DOUBLE_URL="http://127.0.0.7:$(tr -d ' \n' <"$v/run/provider-double.port")"
	else
		log "warning: tests/fixtures/provider_double.py missing; chat tests will fail"
	fi
	# The OAuth providers (GitHub-like, Google-like) and the SMTP server of the sign-in tests; the
	# nameserver that never answers (tests/e2e/test_domains_security.py, behind dnsmasq below).
	stack_double oauth
	stack_double smtp
	stack_double dns
	STACK_OAUTH_URL="http://127.0.0.1:$(tr -d ' \n' <"$v/run/oauth-double.port")"
	read -r STACK_SMTP_PORT STACK_SMTP_HTTP <"$v/run/smtp-double.port"

	# Custom domains (tests/e2e/test_domains.py): dnsmasq on loopback is the resolver
	# (SVC_DNS_SERVER) with the test's names; a test CA made here signs the certificate of the
	# HTTPS front (tests/fixtures/tls_endpoint.py, started once lighttpd is up) that the HTTPS
	# check goes through (SVC_DOMAIN_CHECK_CA, SVC_DOMAIN_HTTPS_PORT).
	local tls=$v/tls
	STACK_TLS=$tls
	STACK_DNS_PORT=$(free_port)
	setsid dnsmasq --no-daemon --port="$STACK_DNS_PORT" --listen-address=127.0.0.1 --bind-interfaces --no-resolv \
		--no-hosts --log-facility=- --pid-file= "${STACK_DNS_RECORDS[@]}" \
		"--server=/hang1.example.org/hang2.example.org/127.0.0.1#$(tr -d ' \n' <"$v/run/dns-double.port")" \
		</dev/null >"$v/logs/dnsmasq.log" 2>&1 &
	echo $! >"$v/run/dnsmasq.pid"
	mkdir -p "$tls"
	{
		openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=svc test CA" \
			-keyout "$tls/ca.key" -out "$tls/ca.pem" &&
		openssl req -newkey rsa:2048 -nodes -subj "/CN=svc test sites" -keyout "$tls/site.key" -out "$tls/site.csr" &&
		printf 'subjectAltName=%s\n' "$STACK_CERT_NAMES" >"$tls/ext.cnf" &&
		openssl x509 -req -in "$tls/site.csr" -CA "$tls/ca.pem" -CAkey "$tls/ca.key" -CAcreateserial -days 2 \
			-extfile "$tls/ext.cnf" -out "$tls/site.pem"
	} >"$v/logs/test-ca.log" 2>&1 || { cat "$v/logs/test-ca.log" >&2; die "cannot make the test CA"; }
	STACK_TLS_PORT=$(free_port)
	cat >"$v/run/reload-sites.sh" <<EOS
#!/bin/sh
# SVC_SITES_RELOAD_CMD of the test stack: lighttpd and Apache reread the custom domains' includes, gracefully
[ -s "$v/run/lighttpd.pid" ] && kill -USR1 "\$(cat "$v/run/lighttpd.pid")"
[ -s "$v/apache/apache2.pid" ] && /usr/sbin/apache2 -f "$v/apache/httpd.conf" -k graceful
exit 0
EOS
	chmod 755 "$v/run/reload-sites.sh"

	# One settings file per front end: same database, data and secrets; each
	# knows its own public URLs; the no-provider one has no SVC_AI_*.
	stack_settings
	# Sign-up verification (SVC_SIGNUP_VERIFY, default auto = on with SMTP): off on the main fronts, where
	# the tests sign up hundreds of accounts; the no-provider front keeps the default, so a sign-up there
	# is 202 and its mailed link makes the account (tests/e2e/test_auth_verify.py).
	# shellcheck disable=SC2046 # front_urls prints words without spaces
	write_config "$v/svc.conf" 0 "${STACK_COMMON[@]}" $(front_urls "$STACK_HTTP_PORT") "${STACK_AI[@]}" \
		"${STACK_OAUTH[@]}" SVC_SIGNUP_VERIFY=off
	# shellcheck disable=SC2046
	write_config "$v/svc-apache.conf" 0 "${STACK_COMMON[@]}" $(front_urls "$STACK_APACHE_PORT") "${STACK_AI[@]}" \
		"${STACK_OAUTH[@]}" SVC_SIGNUP_VERIFY=off
	# The no-provider front end offers no collaboration either (no SVC_WS_URL or SVC_WS_PORT, so
	# /auth/me says features.collaboration false there); the API still reaches this svc-wsd.
	local kv
	local -a bare=("SVC_WSD_INTERNAL_URL=http://127.0.0.1:$STACK_WS_PORT")
	for kv in "${STACK_COMMON[@]}" $(front_urls "$STACK_NOPROVIDER_PORT"); do
		case $kv in SVC_WS_URL=* | SVC_WS_PORT=*) ;; *) bare+=("$kv") ;; esac
	done
	write_config "$v/svc-noprovider.conf" 0 "${bare[@]}"
	migrate "$build" "$v/svc.conf"
	sites_init "$build" "$v/svc.conf" "$T_SHARE/data"
}

# front_urls PORT: a front end's public URLs on 127.0.0.1:PORT, as settings.
front_urls() {
	echo "SVC_BASE_URL=http://127.0.0.1:$1/api" "SVC_APP_URL=http://127.0.0.1:$1" \
		"SVC_WS_URL=ws://127.0.0.1:$1" "SVC_HTTP_PORT=$1" "SVC_CORS_ORIGINS=http://127.0.0.1:$1"
}

# stack_serve: the servers: lighttpd with and without a provider, svc-worker, svc-wsd, the HTTPS front of
# custom domains, Apache with its responder pools; then writes TEST_VAR/test.env.
stack_serve() {
	local v=$TEST_VAR build=$TEST_BUILD p
	# shellcheck disable=SC2034 # the L_* are write_lighttpd's parameters and the A_* write_apache's (dev/servers.sh)
	L_RUN=$v/run L_LOGS=$v/logs L_BUILD=$build L_WEB=$STACK_WEB_SRC L_DOCS=$ROOT/docs L_DATA=$T_SHARE/data
	# shellcheck disable=SC2034,SC2153 # CHAT_PROCS: svc-dev's (SVC_CHAT_PROCS)
	L_DOMAIN=localhost L_WS_PORT=$STACK_WS_PORT L_AUTH_PROCS=2 L_PROJECTS_PROCS=4 L_CHAT_PROCS=$CHAT_PROCS
	# shellcheck disable=SC2034
	L_PORT=$STACK_HTTP_PORT L_CONFIG=$v/svc.conf
	write_lighttpd "$v/lighttpd.conf"
	lighttpd_start "$v/lighttpd.conf" "$v/run/lighttpd.pid" lighttpd
	# shellcheck disable=SC2034
	L_PORT=$STACK_NOPROVIDER_PORT L_CONFIG=$v/svc-noprovider.conf L_RUN=$v/run-noprovider L_CHAT_PROCS=2 L_PROJECTS_PROCS=1 L_AUTH_PROCS=1
	L_TAG=noprovider write_lighttpd "$v/lighttpd-noprovider.conf"
	lighttpd_start "$v/lighttpd-noprovider.conf" "$v/run-noprovider/lighttpd.pid" lighttpd-noprovider
	worker_start "$build" "$v/svc.conf" "$v/run/svc-worker.pid" "$v/logs/svc-worker.log"
	wsd_start "$build" "$v/svc.conf" "$v/run/svc-wsd.pid" "$v/logs/svc-wsd.log"
	devd_start "$build" "$v/svc.conf" "$v/run/svc-devd.pid" "$v/logs/svc-devd.log"
	rm -f "$v/run/tls-endpoint.port"
	setsid python3 "$ROOT/tests/fixtures/tls_endpoint.py" --host 127.0.0.9 --cert "$STACK_TLS/site.pem" --key "$STACK_TLS/site.key" \
		--upstream "$STACK_HTTP_PORT" --port "$STACK_TLS_PORT" --port-file "$v/run/tls-endpoint.port" \
		</dev/null >"$v/logs/tls-endpoint.log" 2>&1 &
	echo $! >"$v/run/tls-endpoint.pid"
	# shellcheck disable=SC2034 # p counts the tries
	for p in $(seq 100); do [ -s "$v/run/tls-endpoint.port" ] && break; sleep 0.1; done
	[ -s "$v/run/tls-endpoint.port" ] || { cat "$v/logs/tls-endpoint.log" >&2; die "the TLS endpoint did not start"; }

	responders_start "$build" "$T_SHARE/run-apache" "$v/logs" "$v/svc-apache.conf" 2 apache
	# shellcheck disable=SC2034
	A_DIR=$v/apache A_PORT=$STACK_APACHE_PORT A_DOMAIN=localhost A_RUN=$T_SHARE/run-apache A_WEB=$STACK_WEB A_DOCS=$STACK_DOCS
	# shellcheck disable=SC2034
	A_DATA=$T_SHARE/data A_WS_PORT=$STACK_WS_PORT A_LOGS=$v/logs A_DEVD_PORT=$STACK_DEVD_PORT
	write_apache "$v/apache/httpd.conf"
	apache_start "$v/apache/httpd.conf" "$v/apache"
	wait_http "http://127.0.0.1:$STACK_HTTP_PORT/" || die "lighttpd does not answer on $STACK_HTTP_PORT"
	wait_http "http://127.0.0.1:$STACK_APACHE_PORT/" || die "Apache does not answer on $STACK_APACHE_PORT"
	wait_http "http://127.0.0.1:$STACK_NOPROVIDER_PORT/" || die "lighttpd-noprovider does not answer on $STACK_NOPROVIDER_PORT"
	stack_write_env
}

# stack_write_env: TEST_VAR/test.env, the environment of the runners (tests/runner.sh stack_env_load): the
# addresses of the stack's front ends and doubles (tests/e2e/svclib.py reads them), its settings file and
# tools, the logs; tests/wsd restarts svc-wsd (kill -9) the way wsd_start runs it.
stack_write_env() {
	local v=$TEST_VAR port=$STACK_HTTP_PORT aport=$STACK_APACHE_PORT kv
	local -a env=("SVC_BASE_URL=http://127.0.0.1:$port/api" "SVC_APP_URL=http://127.0.0.1:$port"
		"SVC_WS_URL=ws://127.0.0.1:$port" "SVC_HTTP_PORT=$port" SVC_DOMAIN=localhost
		"SVC_DATA_DIR=$T_SHARE/data" "SVC_PROVIDER_URL=$STACK_DOUBLE_URL"
		"SVC_NOPROVIDER_BASE_URL=http://127.0.0.1:$STACK_NOPROVIDER_PORT/api" SVC_TEST_PREFIX=''
		"SVC_ADMIN_TOOL=$TEST_BUILD/tools/svc-admin" "SVC_TEST_CONFIG=$v/svc.conf"
		"SVC_TEST_APACHE_URL=http://127.0.0.1:$aport" "SVC_TEST_TLS_PORT=$STACK_TLS_PORT"
		"SVC_TEST_DNS_PORT=$STACK_DNS_PORT" "SVC_TEST_TLS_CA=$STACK_TLS/ca.pem"
		"SVC_OAUTH_DOUBLE_URL=$STACK_OAUTH_URL" "SVC_SMTP_DOUBLE_URL=http://127.0.0.1:$STACK_SMTP_HTTP"
		"SVC_TEST_AUTH_LOG=$v/logs/auth.log" "SVC_TEST_FAIL2BAN_DIR=$ROOT/httpd-conf/fail2ban"
		PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 "SVC_TEST_LOGS=$v/logs"
		"SVC_TEST_WSD_PIDFILE=$v/run/svc-wsd.pid" "SVC_TEST_WSD_LOG=$v/logs/svc-wsd.log"
		"SVC_TEST_DEVD_URL=http://127.0.0.1:$STACK_DEVD_PORT" "SVC_TEST_DEVD_LOG=$v/logs/svc-devd.log"
		"SVC_TEST_APACHE_WS_URL=ws://127.0.0.1:$aport" "SVC_TEST_APACHE_BASE_URL=http://127.0.0.1:$aport/api"
		"SVC_TEST_ASAN_OPTIONS=$STACK_ASAN_OPTIONS" "SVC_TEST_UBSAN_OPTIONS=$STACK_UBSAN_OPTIONS")
	{
		echo "# written by ./svc-dev test once its stack was up: what the runners of tests/ export (tests/runner.sh)"
		for kv in "${env[@]}"; do printf '%s=%q\n' "${kv%%=*}" "${kv#*=}"; done
	} >"$v/test.env.tmp" && mv "$v/test.env.tmp" "$v/test.env"
}

# stack_sanitizers: one result: the stack's responders did not trip a sanitizer.
stack_sanitizers() {
	local v=$TEST_VAR slog=$TEST_VAR/logs/sanitizers.log
	if ls "$v"/logs/asan.* >/dev/null 2>&1; then
		{ echo "not ok - stack responders ran clean under ASan+UBSan"; cat "$v"/logs/asan.*; } >"$slog"
	else
		echo "ok - stack responders ran clean under ASan+UBSan" >"$slog"
	fi
	count_log "$slog" 0 "sanitizers"
}

# stack_failure_context: the logs of the runners that failed, then the end of the servers' logs.
stack_failure_context() {
	local v=$TEST_VAR f
	for f in "${T_FAILED_LOGS[@]}"; do
		echo
		echo "==== $f"
		cat "$f"
	done
	for f in "$v/logs/lighttpd-error.log" "$v/logs/lighttpd-noprovider-error.log" "$v/logs/apache-error.log" \
		"$v/logs/responders.log" "$v/logs/responders-noprovider.log" "$v/logs/svc-worker.log" "$v/logs/svc-wsd.log" "$v/logs/svc-devd.log" "$v"/logs/svc-*.apache.log "$v"/logs/asan.* "$v"/logs/provider-double.log \
		"$v"/logs/oauth-double.log "$v"/logs/smtp-double.log "$v"/logs/dns-double.log "$v"/logs/dnsmasq.log "$v"/logs/tls-endpoint.log; do
		[ -s "$f" ] || continue
		echo
		echo "==== $f (last 60 lines)"
		tail -n 60 "$f"
	done
}
