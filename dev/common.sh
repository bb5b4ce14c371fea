# dev/common.sh: svc-dev's shared shell code: packages, builds, processes, MariaDB, settings files
# (sourced by svc-dev; tests/stack.sh uses it for the test stack)
# shellcheck shell=bash

# ---------------------------------------------------------------- packages

# Packages that count as present when this command exists (a nodejs from
# elsewhere, e.g. NodeSource, bundles npm and conflicts with Debian's npm).
SVC_PACKAGE_COMMANDS="npm=npm nodejs=node"

# Prints the packages of $SVC_PACKAGES that are not installed.
missing_packages() {
	local p c
	for p in $SVC_PACKAGES; do
		dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q ' installed$' && continue
		for c in $SVC_PACKAGE_COMMANDS; do
			[ "${c%%=*}" = "$p" ] && command -v "${c#*=}" >/dev/null && continue 2
		done
		echo "$p"
	done
}

# Installs the missing packages without letting any of them start a service.
ensure_packages() {
	command -v dpkg-query >/dev/null || { log "no dpkg-query: not Debian, skipping package check"; return 0; }
	local missing
	missing=$(missing_packages | tr '\n' ' ')
	[ -n "${missing// /}" ] || return 0
	[ "$(id -u)" -eq 0 ] || die "missing Debian packages: $missing(run as root, or apt-get install them)"
	log "installing: $missing"
	local policy=/usr/sbin/policy-rc.d made_policy=0
	if [ ! -e "$policy" ]; then
		# invoke-rc.d and deb-systemd-invoke ask this script; 101 = "action forbidden".
		printf '#!/bin/sh\n# svc-dev: no service starts during package installation\nexit 101\n' >"$policy"
		chmod 755 "$policy"
		made_policy=1
	fi
	local rc=0
	# shellcheck disable=SC2086 # $missing: one word per package
	{
		DEBIAN_FRONTEND=noninteractive apt-get update -q &&
		DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends $missing
	} </dev/null || rc=$?
	[ "$made_policy" -eq 0 ] || rm -f "$policy"
	[ "$rc" -eq 0 ] || die "apt-get failed ($rc)"
	# The packages enable their services for the next boot; svc runs its own.
	if [ -d /run/systemd/system ]; then
		local svc
		for svc in apache2 lighttpd mariadb haproxy; do
			case " $missing " in *" $svc "*) systemctl disable -q "$svc" 2>/dev/null || true ;; esac
		done
	fi
}

# ---------------------------------------------------------------- build

# Regenerates configure when it is missing or older than its inputs.
ensure_configure() {
	local stale=0 f
	[ -x "$ROOT/configure" ] || stale=1
	if [ "$stale" -eq 0 ]; then
		for f in "$ROOT/configure.ac" "$ROOT/Makefile.am" $(find "$ROOT/lib" "$ROOT/cgi-bin" "$ROOT/tools" "$ROOT/wsd" "$ROOT/tests" -name '*.mk' 2>/dev/null); do
			[ "$f" -nt "$ROOT/configure" ] && { stale=1; break; }
		done
	fi
	[ "$stale" -eq 0 ] || (cd "$ROOT" && autoreconf -fi) || die "autoreconf failed"
}

# build_tree DIR [configure args...]: configures DIR (when needed) and runs make.
build_tree() {
	local dir=$1
	shift
	ensure_configure
	mkdir -p "$dir"
	if [ ! -f "$dir/Makefile" ] || [ "$ROOT/configure" -nt "$dir/config.status" ]; then
		log "configuring $dir"
		(cd "$dir" && "$ROOT/configure" -q "$@") || die "configure failed in $dir"
	fi
	log "building $dir"
	make -C "$dir" -j"$(nproc 2>/dev/null || echo 2)" -s || die "build failed in $dir"
}

# ---------------------------------------------------------------- web app

# The web app's bundle (web/dist/, docs/web.md): npm ci when web/package-lock.json changed,
# node web/build.mjs when anything in web/ changed since the bundle was made. The inputs'
# hash is kept in web/dist/.svc-stamp, so a tarball's prebuilt web/dist/ is used as it is
# (make dist; no Node needed). Returns non-zero when npm or the build failed.
web_sources_hash() {
	(cd "$ROOT/web" && find . \( -path ./node_modules -o -path ./dist -o -path ./dist.new -o -path ./dist.old \) -prune \
		-o -type f -print0 | LC_ALL=C sort -z | xargs -0 md5sum | md5sum | cut -d' ' -f1)
}
web_build() {
	local web=$ROOT/web hash lock
	[ -f "$web/package.json" ] || return 0
	hash=$(web_sources_hash)
	if [ -f "$web/dist/index.html" ] && [ "$hash" = "$(cat "$web/dist/.svc-stamp" 2>/dev/null)" ]; then
		return 0
	fi
	command -v npm >/dev/null || { log "npm is missing: cannot build web/ (apt-get install nodejs npm)"; return 1; }
	lock=$(cat "$web/package.json" "$web/package-lock.json" | md5sum | cut -d' ' -f1)
	if [ "$lock" != "$(cat "$web/node_modules/.svc-lock-stamp" 2>/dev/null)" ]; then
		log "npm ci in web/ (packages pinned in web/package-lock.json)"
		(cd "$web" && npm ci --no-audit --no-fund --prefer-offline --loglevel=error) >&2 || { log "npm ci failed in web/"; return 1; }
		echo "$lock" >"$web/node_modules/.svc-lock-stamp"
	fi
	log "building the web app into web/dist/"
	(cd "$web" && node build.mjs) >&2 || { log "the web build failed"; return 1; }
	echo "$hash" >"$web/dist/.svc-stamp"
}

# ---------------------------------------------------------------- processes

pid_alive() { [ -s "$1" ] && kill -0 "$(cat "$1")" 2>/dev/null; }

# stop_pidfile FILE NAME [SECONDS]: SIGTERM the process in FILE and wait up to SECONDS (10) for it.
stop_pidfile() {
	local file=$1 name=$2 secs=${3:-10} pid i
	pid_alive "$file" || { rm -f "$file"; return 0; }
	pid=$(cat "$file")
	kill -TERM "$pid" 2>/dev/null || true
	for i in $(seq $((secs * 10))); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	if kill -0 "$pid" 2>/dev/null; then
		log "$name ($pid) ignored SIGTERM; killing it"
		kill -KILL "$pid" 2>/dev/null || true
	fi
	rm -f "$file"
}

# unmount_builds DIR: unmounts the build trees (tmpfs "svc-build", svc_sandbox_disk_mount()) that a build or an
# install killed mid-way left mounted under DIR (a stack's data dir), deepest first; nothing outside DIR (other
# stacks' builds run on this machine too). For a stack's teardown, once its processes have stopped.
unmount_builds() {
	local dir mp
	[ -d "$1" ] || return 0
	dir=$(realpath -m "$1")
	while IFS= read -r mp; do
		mp=${mp//\\040/ }
		umount -l "$mp" 2>/dev/null && log "unmounted $mp, left by a build that was killed" ||
			log "cannot unmount $mp"
	done < <(awk -v d="$dir/" '{ i = 7; while ($i != "-") i++
		if ($(i + 1) == "tmpfs" && $(i + 2) == "svc-build" && index($5, d) == 1) print $5 }' /proc/self/mountinfo |
		sort -r)
}

port_in_use() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# free_port: prints a TCP port on 127.0.0.1 that nothing listens on now.
free_port() {
	python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# wait_http URL [SECONDS]: waits until URL answers at all (any status).
wait_http() {
	local url=$1 n=${2:-15} i
	for i in $(seq $((n * 10))); do
		curl -s -o /dev/null --max-time 2 "$url" && return 0
		sleep 0.1
	done
	return 1
}

# The environment every process of the stack gets: nothing inherited but
# PATH, HOME, LANG and the sanitizer options; settings come from SVC_CONFIG.
# run_clean CMD...: runs CMD (a program, not a function) in that environment.
# For a background process use env -i "${CLEAN_ENV[@]}" directly, so $! is its pid.
clean_env() {
	CLEAN_ENV=("PATH=$PATH" "HOME=${HOME:-/root}" "LANG=C.UTF-8")
	[ -z "${STACK_ASAN_OPTIONS:-}" ] || CLEAN_ENV+=("ASAN_OPTIONS=$STACK_ASAN_OPTIONS" "UBSAN_OPTIONS=$STACK_UBSAN_OPTIONS")
}
run_clean() {
	clean_env
	env -i "${CLEAN_ENV[@]}" "$@"
}

# ---------------------------------------------------------------- MariaDB

# db_start DIR: a private mariadbd with its datadir and socket in DIR, no TCP.
db_start() {
	local d=$1 user=() i
	[ "$(id -u)" -ne 0 ] || user=(--user=root)   # mariadbd refuses root without it
	mkdir -p "$d"
	if [ ! -d "$d/data/mysql" ]; then
		log "creating MariaDB datadir in $d/data"
		rm -rf "$d/data"
		# its temporary tables in DIR/tmp too, like mariadbd's below (a soak's setup failed on one
		# removed from the shared /tmp: "Error on delete of '/tmp/#sql-temptable-...'")
		mkdir -p "$d/tmp"
		mariadb-install-db --no-defaults --datadir="$d/data" "${user[@]}" --tmpdir="$d/tmp" \
			--auth-root-authentication-method=normal --skip-test-db >"$d/install.log" 2>&1 ||
			{ cat "$d/install.log" >&2; die "mariadb-install-db failed"; }
	fi
	if ! pid_alive "$d/mariadbd.pid"; then
		log "starting MariaDB ($d/mysqld.sock)"
		# tmpdir: its own, not the shared /tmp (on a shared machine a /tmp cleaner removed an
		# on-disk internal temporary table mid-query: error 6, then 2006; bench/README.md "Soak")
		mkdir -p "$d/tmp"
		setsid mariadbd --no-defaults --datadir="$d/data" --socket="$d/mysqld.sock" \
			--pid-file="$d/mariadbd.pid" --skip-networking --log-error="$d/error.log" --tmpdir="$d/tmp" \
			--innodb-buffer-pool-size=64M --character-set-server=utf8mb4 \
			--collation-server=utf8mb4_unicode_ci "${user[@]}" </dev/null >/dev/null 2>&1 &
		# shellcheck disable=SC2034 # i counts the tries
		for i in $(seq 150); do
			db_sql "$d" 'SELECT 1' >/dev/null 2>&1 && break
			sleep 0.2
		done
		db_sql "$d" 'SELECT 1' >/dev/null 2>&1 || { tail -n 30 "$d/error.log" >&2; die "MariaDB did not start"; }
	fi
	db_sql "$d" "CREATE DATABASE IF NOT EXISTS svc CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci" ||
		die "cannot create the svc database"
}

db_sql() { mariadb --no-defaults --socket="$1/mysqld.sock" -uroot -e "$2"; }

db_stop() {
	local d=$1
	pid_alive "$d/mariadbd.pid" || return 0
	log "stopping MariaDB"
	stop_pidfile "$d/mariadbd.pid" mariadbd
}

# migrate BUILD CONFIG: applies schema/ with the settings in CONFIG.
migrate() {
	local build=$1 conf=$2
	if [ ! -x "$build/tools/svc-migrate" ]; then
		log "warning: $build/tools/svc-migrate not built; schema not applied"
		return 0
	fi
	run_clean SVC_CONFIG="$conf" "$build/tools/svc-migrate" --schema-dir "$ROOT/schema" || die "svc-migrate failed"
	# The integrations catalogue (docs/api.md "Integrations"): idempotent, updates in place.
	if [ -x "$build/tools/svc-admin" ] && [ -f "$ROOT/data/integrations/catalog.json" ]; then
		run_clean SVC_CONFIG="$conf" "$build/tools/svc-admin" import-catalog "$ROOT/data/integrations/catalog.json" \
			>/dev/null || die "svc-admin import-catalog failed"
	fi
}

# ---------------------------------------------------------------- settings

# ensure_secrets FILE: dev secrets, generated once, kept 0600.
ensure_secrets() {
	local f=$1
	if [ ! -s "$f" ]; then
		(umask 077
		 { echo "# dev secrets generated by svc-dev on $(date -u +%FT%TZ); never use them in production"
		   echo "JWT_SECRET=$(openssl rand -hex 32)"
		   echo "INTERNAL_SECRET=$(openssl rand -hex 32)"
		   echo "ENCRYPTION_KEY=$(openssl rand -hex 32)"; } >"$f.tmp" && mv "$f.tmp" "$f")
	fi
	chmod 600 "$f"
}

# Names of settings svc-dev hands through from its own environment.
is_passthrough() {
	case "$1" in
	SVC_CONFIG | SVC_TEST_* | SVC_DEV_* | SVC_CLUSTER_*) return 1 ;;
	SVC_* | JWT_* | *_CLIENT_ID | *_CLIENT_SECRET | *_REDIRECT_URI) return 0 ;;
	esac
	return 1
}

# write_config FILE PASSTHROUGH KEY=VALUE...: writes the settings file: the
# given defaults, the secrets, then (PASSTHROUGH=1) the caller's environment.
write_config() {
	local file=$1 pass=$2 kv k
	shift 2
	declare -A conf=()
	local -a order=()
	for kv in "$@"; do
		k=${kv%%=*}
		[ -n "${conf[$k]+x}" ] || order+=("$k")
		conf[$k]=${kv#*=}
	done
	while IFS= read -r kv; do
		case "$kv" in '#'* | '') continue ;; esac
		k=${kv%%=*}
		[ -n "${conf[$k]+x}" ] || order+=("$k")
		conf[$k]=${kv#*=}
	done <"$SECRETS"
	if [ "$pass" = 1 ]; then
		while IFS= read -r -d '' kv; do
			k=${kv%%=*}
			is_passthrough "$k" || continue
			case "${kv#*=}" in *$'\n'*) die "setting $k contains a newline" ;; esac
			[ -n "${conf[$k]+x}" ] || order+=("$k")
			conf[$k]=${kv#*=}
		done < <(env -0)
	fi
	(umask 077
	 { echo "# svc settings generated by svc-dev; edit the environment or svc-dev, not this file"
	   for k in "${order[@]}"; do printf '%s=%s\n' "$k" "${conf[$k]}"; done; } >"$file.tmp" &&
	 mv "$file.tmp" "$file")
	chmod 600 "$file"
}

# conf_get FILE KEY: prints KEY's value from a settings file.
conf_get() { sed -n "s/^$2=//p" "$1" | tail -n 1; }
