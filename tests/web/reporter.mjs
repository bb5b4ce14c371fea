// reporter.mjs: a node --test reporter printing svc-dev's lines: "ok - FILE: NAME" or
// "not ok - FILE: NAME" with the error as "# " lines (svc-dev test counts them).
import { basename } from 'node:path';

export default async function* reporter(source) {
	for await (const ev of source) {
		const d = ev.data || {};
		const name = String(d.name).replace(/\s+/g, ' ');
		const where = d.file ? basename(d.file).replace(/\.test\.mjs$/, '') + ': ' : '';
		if (ev.type === 'test:pass') {
			if (d.details && d.details.type === 'suite') continue;
			// a skipped test is neither passed nor failed: svc-dev counts only "ok -" and "not ok -"
			if (d.skip) yield `# skip - ${where}${name}: ${d.skip === true ? 'skipped' : d.skip}\n`;
			else yield `ok - ${where}${name} (${Math.round(d.details.duration_ms)} ms)\n`;
		} else if (ev.type === 'test:fail') {
			if (d.details && d.details.type === 'suite') continue;
			const err = d.details && d.details.error;
			const cause = err && err.cause ? err.cause : err;
			const text = String((cause && (cause.stack || cause.message)) || err || 'failed');
			yield `not ok - ${where}${name}\n` + text.split('\n').map((l) => `# ${l}`).join('\n') + '\n';
		} else if (ev.type === 'test:diagnostic') {
			yield `# ${d.message}\n`;
		} else if (ev.type === 'test:stderr' || ev.type === 'test:stdout') {
			yield String(d.message).split('\n').filter(Boolean).map((l) => `# ${l}`).join('\n') + '\n';
		}
	}
}
