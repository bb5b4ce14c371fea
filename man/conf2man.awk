# conf2man.awk: svc.conf(5) from docs/configuration.md, so that the man page lists every setting the
# documentation does: "### Section" becomes a subsection, each "| `NAME` | default | meaning |" row
# a tagged paragraph, other prose a paragraph. Markdown code spans lose their backticks; links keep
# their text. usage: awk -f conf2man.awk -v version=X docs/configuration.md >svc.conf.5
function roff(s) {
	gsub(/\\/, "\\e", s)
	gsub(/`/, "", s)
	gsub(/\*\*/, "", s)
	while (match(s, /\[[^]]*\]\([^)]*\)/)) {
		link = substr(s, RSTART, RLENGTH)
		sub(/\]\(.*/, "", link)
		s = substr(s, 1, RSTART - 1) substr(link, 2) substr(s, RSTART + RLENGTH)
	}
	sub(/^[.']/, "\\\\\\&&", s)
	return s
}
function trim(s) { sub(/^[ \t]+/, "", s); sub(/[ \t]+$/, "", s); return s }
BEGIN {
	print ".\\\" svc.conf.5: made by man/conf2man.awk from docs/configuration.md; edit that file"
	printf ".TH SVC.CONF 5 \"\" \"svc %s\" \"File formats\"\n", version
	print ".SH NAME"
	print "svc.conf \\- settings of the svc programs"
	print ".SH SYNOPSIS"
	print "/etc/svc/svc.conf, or the file named by SVC_CONFIG"
	print ".SH DESCRIPTION"
	state = "head"
}
/^## Settings/ { state = "settings"; print ".SH SETTINGS"; next }
/^## / && state == "settings" { state = "done" }
state == "done" { next }
/^# / { next }
/^```/ { inpre = !inpre; print (inpre ? ".nf" : ".fi"); next }
inpre { print roff($0); next }
/^### / && state == "settings" { sub(/^### /, ""); printf ".SS \"%s\"\n", roff($0); next }
/^\|[-| ]+\|$/ { next }
/^\| name \|/ || /^\| *name *\|/ { next }
/^\| / {
	n = split($0, c, /[ ]\|[ ]/)
	name = trim(c[1]); sub(/^\| */, "", name)
	def = trim(c[2])
	text = ""
	for (i = 3; i <= n; i++) text = text (i > 3 ? " | " : "") c[i]
	sub(/ *\|$/, "", text)
	print ".TP"
	printf ".B %s\n", roff(name)
	if (def != "" && def != "none")
		printf "(default: %s) ", roff(def)
	print roff(trim(text))
	next
}
/^$/ { if (!blank) print ".PP"; blank = 1; next }
{ blank = 0; print roff($0) }
END {
	print ".SH FILES"
	print ".TP"
	print ".B /etc/svc/svc.conf"
	print "the settings (the Debian package's conffile)"
	print ".TP"
	print ".B /etc/svc/secrets.conf"
	print "the generated secrets (SVC_SECRETS_FILE), mode 0640 root:svc"
	print ".SH SEE ALSO"
	print ".BR svc-admin (1),"
	print ".BR svc-migrate (1),"
	print ".BR svc-worker (1),"
	print ".BR svc-wsd (1)"
}
