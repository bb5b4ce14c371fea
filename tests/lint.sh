#!/usr/bin/env bash
# lint.sh: the functions docs/hacking.md bans outside their one wrapper, checked over the C sources.
# Prints one "ok - ..." / "not ok - ..." line per rule; exits 1 when a rule is broken.
set -u
cd "$(dirname "${BASH_SOURCE[0]}")/.."
status=0
files=$(git ls-files 'lib/*.c' 'lib/**/*.c' 'cgi-bin/*.c' 'tools/*.c' 'wsd/*.c' 'devd/*.c' 2>/dev/null | sort -u)

rule() { # name, extended regex, files to exclude (regex)
	local name=$1 re=$2 excl=${3:-^$} hits f
	local -a sel=()
	for f in $files; do [[ $f =~ $excl ]] || sel+=("$f"); done
	# one grep over all the files: a grep per file took most of a minute on a busy machine
	hits=$(grep -nHE "$re" "${sel[@]}" | grep -vE '^[^:]+:[0-9]+:\s*(/\*|\*|//)')
	if [ -n "$hits" ]; then
		echo "not ok - lint: $name"
		echo "$hits" | sed 's/^/    /'
		status=1
	else
		echo "ok - lint: $name"
	fi
}

rule "no strcpy/strcat/sprintf/vsprintf/gets" '(^|[^a-z_])(strcpy|strcat|sprintf|vsprintf|gets)\s*\('
rule "no sscanf/strtok/atoi/atol" '(^|[^a-z_])(sscanf|strtok|atoi|atol|atoll)\s*\('
rule "no strtol family outside its wrappers" '(^|[^a-z_])(strtol|strtoul|strtoll|strtoull)\s*\(' '^lib/core/(util|config)\.c$|^lib/yjs/encoding\.c$'
rule "no system/popen" '(^|[^a-z_])(system|popen)\s*\('
rule "no mysql_query/mysql_real_query outside lib/db/db.c" 'mysql_(real_)?query\s*\(' '^lib/db/db\.c$'
rule "no FCGX_FPrintF (its format parser is partial)" 'FCGX_V?FPrintF\s*\('
# Arrays grow through SVC_ARRAY_GROW (overflow-checked; the one realloc); lib/yjs keeps its own buffers.
rule "no realloc outside lib/core/util.c and lib/yjs/" '(^|[^a-z_])realloc(array)?\s*\(' '^lib/core/util\.c$|^lib/yjs/'
# JSON is built with json-c (or joined with svc_buf from parts that are JSON already), never by
# formatting values into a JSON template: a printf-family call whose format holds '{"' or '":', or
# any format text with a conversion right after a key ("\"count\":%zu", "\"id\":\"%s\"", which
# also catches the continued lines of a multi-line format).
rule "no JSON built with printf/snprintf/svc_buf_addf" '(printf|svc_buf_addf)\s*\(.*(\{\\"|\\":)|\\":(\\")?%'
# The subsystem folders of lib/ are layered (docs/hacking.md): a file may include headers of its own
# folder and of the folders below it, never of one above. wsd/ is a client of lib/ like cgi-bin/,
# but links no handler: it may not include lib/api.
layer_check() {
	local order="core db auth integ project http app agent api" f dir inc incdir allowed bad="" l
	# every quoted include of every file, read with one grep ("file:#include "x/y.h"")
	while IFS=: read -r f inc; do
		inc=${inc#\#include \"}; inc=${inc%%\"*}
		case $inc in ../*) continue ;; esac
		incdir=${inc%%/*}
		[ "$incdir" = "$inc" ] && continue           # same-folder include without a prefix
		dir=${f#lib/}; dir=${dir%%/*}
		case $f in
		wsd/*) allowed="core db auth integ http project app agent yjs" ;;
		devd/*) allowed="core db auth integ project devd" ;;
		lib/yjs/*) allowed="core yjs" ;;
		*) allowed=""; for l in $order; do allowed="$allowed $l"; [ "$l" = "$dir" ] && break; done ;;
		esac
		[[ " $allowed " == *" $incdir "* ]] || bad="$bad
    $f includes $inc"
	done < <(git ls-files -z 'lib/*/*.c' 'lib/*/*.h' 'wsd/*.c' 'wsd/*.h' 'devd/*.c' 'devd/*.h' | xargs -0 grep -H '^#include "')
	if [ -n "$bad" ]; then
		echo "not ok - lint: no include reaches up a layer of lib/$bad"
		status=1
	else
		echo "ok - lint: no include reaches up a layer of lib/"
	fi
}
layer_check

# Rows are read by the column names each statement declares beside its SQL (SVC_COLS in
# lib/db/db_stmts*.h), never by a counted index.
rule "no svc_rows_get with a literal column number (name it with SVC_COLS)" 'svc_rows_get\s*\([^,]+,[^,]+,\s*[0-9]+\s*\)'
# Every source file is named in a Makefile fragment, or make dist leaves it out of the tarball
# (a header only #included builds in the checkout and fails in make distcheck and the package).
dist_check() {
	local f bad=""
	while IFS= read -r -d '' f; do
		grep -qF "$f" Makefile.am lib/*/*.mk cgi-bin/*.mk tools/*.mk wsd/*.mk devd/*.mk tests/fuzz/*.mk || bad="$bad
    $f"
	done < <(git ls-files -z 'lib/*.c' 'lib/*.h' 'lib/*.js' 'cgi-bin/*.c' 'tools/*.c' 'tools/*.h' 'wsd/*.c' 'wsd/*.h' 'devd/*.c' 'devd/*.h' 'tests/unit/*.c' 'tests/unit/*.h')
	if [ -n "$bad" ]; then
		echo "not ok - lint: every source is named in a Makefile fragment (make dist)$bad"
		status=1
	else
		echo "ok - lint: every source is named in a Makefile fragment (make dist)"
	fi
}
dist_check
# MariaDB Galera (issue 19, docs/scaling-code.md) replicates neither named locks nor table locks.
galera_check() {
	local hits
	hits=$(git ls-files -z 'lib/*' 'cgi-bin/*' 'tools/*' 'wsd/*' 'schema/*.sql' | xargs -0 grep -nHiE 'GET_LOCK|RELEASE_LOCK|LOCK TABLES' | grep -v '^tests/')
	if [ -n "$hits" ]; then
		echo "not ok - lint: no GET_LOCK, RELEASE_LOCK or LOCK TABLES (Galera)"
		echo "$hits" | sed 's/^/    /'
		status=1
	else
		echo "ok - lint: no GET_LOCK, RELEASE_LOCK or LOCK TABLES (Galera)"
	fi
}
galera_check

# Every transaction runs in svc_db_tx() (lib/db/db.h), which runs it again after a Galera
# certification failure (1213); an open-coded svc_db_begin() would answer 503 instead (issue 19).
tx_check() {
	local hits
	hits=$(git ls-files -z 'lib/*' 'cgi-bin/*' 'tools/*' 'wsd/*' | xargs -0 grep -nH 'svc_db_begin(' | grep -v '^lib/db/db\.[ch]:')
	if [ -n "$hits" ]; then
		echo "not ok - lint: transactions run in svc_db_tx(), not svc_db_begin()"
		echo "$hits" | sed 's/^/    /'
		status=1
	else
		echo "ok - lint: transactions run in svc_db_tx(), not svc_db_begin()"
	fi
}
tx_check
# Every libcurl handle comes from svc_outbound_handle() (lib/core/outbound.h): the shared timeouts and
# user agent, the SSRF guard, the one write callback with its body cap (issue 26). Tests included.
files=$(git ls-files '*.c' 2>/dev/null | sort -u) rule "curl_easy_init only in lib/core/outbound.c" \
	'(^|[^a-z_])curl_easy_init\s*\(' '^lib/core/outbound\.c$'

# No circle of files in a folder (issue 26): file A uses a function of B and B, directly or through
# others, one of A. Read from the built objects: each file's undefined symbols against the functions
# (nm type T) the folder's other files define; the files of each circle are printed. The build
# directory: SVC_LINT_BUILD (./svc-dev test sets it), else build-test/ or build/, the first that holds
# the folder's objects (automake names them after the target: wsd/svc_wsd-room.o for wsd/room.c).
# The folders checked: svc-wsd and lib/project (issue 26 made both free of circles).
cycle_dirs="wsd lib/project"
cycle_check() {
	local b build dir o f circles bad="" checked=""
	local -a objs
	for dir in $cycle_dirs; do
		objs=()
		for b in "${SVC_LINT_BUILD:-}" build-test build; do
			[ -n "$b" ] || continue
			build=$b
			for o in "$b/$dir"/*.o; do [ -e "$o" ] && objs+=("$o"); done
			[ ${#objs[@]} -eq 0 ] || break
		done
		if [ ${#objs[@]} -eq 0 ]; then
			echo "# skip - lint: no circle of files in $dir/ (no objects built; set SVC_LINT_BUILD)"
			continue
		fi
		checked="$checked $dir/"
		# "file D symbol" for each function a file defines, "file U symbol" for each symbol it uses;
		# then which file uses which, its closure, and the files that reach each other
		circles=$(for o in "${objs[@]}"; do
			f=${o##*/}; f=${f%.o}; f=${f#*-}
			[ -e "$dir/$f.c" ] || continue # an object left by a file since removed
			nm -g "$o" | awk -v f="$f" '$1 == "U" { print f, "U", $2 } $2 == "T" { print f, "D", $3 }'
		done | awk '
			{ file[$1] = 1 }
			$2 == "D" { def[$3] = $1; next }
			{ nu++; ufile[nu] = $1; usym[nu] = $3 }
			END {
				for (i = 1; i <= nu; i++) { d = def[usym[i]]; if (d != "" && d != ufile[i]) r[ufile[i], d] = 1 }
				for (k in file) for (i in file) if (r[i, k]) for (j in file) if (r[k, j]) r[i, j] = 1
				for (i in file) {
					if (done[i]) continue
					line = ""
					for (j in file) if (j == i || (r[i, j] && r[j, i])) { done[j] = 1; line = line " " j }
					if (r[i, i]) print substr(line, 2)
				}
			}' | while read -r line; do printf '%s\n' $line | sort | tr '\n' ' '; echo; done | sort)
		while IFS= read -r f; do
			[ -n "$f" ] && bad="$bad
    $dir/: ${f% } ($(wc -w <<<"$f") files)"
		done <<<"$circles"
	done
	if [ -n "$bad" ]; then
		echo "not ok - lint: no circle of files that use each other's functions in$checked$bad"
		status=1
	elif [ -n "$checked" ]; then
		echo "ok - lint: no circle of files that use each other's functions in$checked"
	fi
}
cycle_check
# No function of lib/ over 120 lines (issue 26): a long function is a list of steps waiting for names.
# A function's body runs from its "{" alone at the start of a line to the "}" that closes it there.
fn_length_check() {
	local long
	long=$(git ls-files 'lib/*.c' 'lib/**/*.c' | sort -u | xargs awk '
		FNR == 1 { start = 0 }
		prev ~ /^[a-z_].*\(/ && $0 !~ /^\{$/ { name = prev }
		/^\{$/ { start = FNR; fn = name }
		/^\}$/ && start { if (FNR - start - 1 > 120) printf "    %s: %d lines: %s\n", FILENAME, FNR - start - 1, substr(fn, 1, 80); start = 0 }
		{ prev = $0 }')
	if [ -n "$long" ]; then
		echo "not ok - lint: no function of lib/ over 120 lines"
		echo "$long"
		status=1
	else
		echo "ok - lint: no function of lib/ over 120 lines"
	fi
}
fn_length_check
exit $status
