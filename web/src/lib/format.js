// format.js: dates, sizes and money as people read them.

/** ago(iso, now): "just now", "5 minutes ago", "3 days ago", or the date for older times. */
export function ago(iso, now = Date.now()) {
	if (!iso) return '';
	const t = Date.parse(iso);
	if (Number.isNaN(t)) return '';
	const s = Math.round((now - t) / 1000);
	if (s < 45) return 'just now';
	const m = Math.round(s / 60);
	if (m < 60) return m === 1 ? '1 minute ago' : `${m} minutes ago`;
	const h = Math.round(m / 60);
	if (h < 24) return h === 1 ? '1 hour ago' : `${h} hours ago`;
	const d = Math.round(h / 24);
	if (d < 30) return d === 1 ? 'yesterday' : `${d} days ago`;
	df = df || new Intl.DateTimeFormat(undefined, { dateStyle: 'medium' });
	return df.format(t);
}

// One formatter for all: toLocaleString() builds a new one per call, which costs about a
// millisecond each (the dashboard formats two dates per card).
let dtf = null;
let df = null;

/** when(iso): the full local date and time (for title attributes and <time>). */
export function when(iso) {
	const t = Date.parse(iso);
	if (Number.isNaN(t)) return '';
	dtf = dtf || new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' });
	return dtf.format(t);
}

/** usd(n): "$0.0123" (four decimals under a dollar, else two). */
export function usd(n) {
	const v = Number(n) || 0;
	return '$' + (v < 1 ? v.toFixed(4) : v.toFixed(2));
}

/** bytes(n): "812 B", "4.1 kB", "2.3 MB". */
export function bytes(n) {
	if (n < 1000) return `${n} B`;
	if (n < 1e6) return `${(n / 1000).toFixed(1)} kB`;
	return `${(n / 1e6).toFixed(1)} MB`;
}
