#!/usr/bin/env bash
# lint.sh: the functions STYLE.md bans outside their one wrapper, checked over the C sources.
# Prints one "ok - ..." / "not ok - ..." line per rule; exits 1 when a rule is broken.
set -u
cd "$(dirname "${BASH_SOURCE[0]}")/.."
status=0
files=$(git ls-files 'lib/*.c' 'lib/**/*.c' 'cgi-bin/*.c' 'tools/*.c' 'wsd/*.c' 2>/dev/null | sort -u)

rule() { # name, extended regex, files to exclude (regex)
	local name=$1 re=$2 excl=${3:-^$} hits
	hits=$(for f in $files; do [[ $f =~ $excl ]] && continue; grep -nHE "$re" "$f"; done | grep -vE '^[^:]+:[0-9]+:\s*(/\*|\*|//)')
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
rule "no strtol family outside its wrappers" '(^|[^a-z_])(strtol|strtoul|strtoll|strtoull)\s*\(' '^lib/(util|config)\.c$|^lib/yjs/encoding\.c$'
rule "no system/popen" '(^|[^a-z_])(system|popen)\s*\('
rule "no mysql_query/mysql_real_query outside lib/db.c" 'mysql_(real_)?query\s*\(' '^lib/db\.c$'
rule "no FCGX_FPrintF (its format parser is partial)" 'FCGX_V?FPrintF\s*\('
exit $status
