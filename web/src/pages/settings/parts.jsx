// parts.jsx: what the settings pages share: titled sections, the status line, one
// request at a time per form, and API errors as sentences.
import { useState } from 'preact/hooks';
import { useId } from '../../ui/index.js';

/** Section: a titled part of a settings page (a region named by its heading). */
export function Section({ title, children, intro }) {
	const id = useId('sec');
	return (
		<section class="settings-section" aria-labelledby={id}>
			<h2 id={id}>{title}</h2>
			{intro && <p class="hint">{intro}</p>}
			{children}
		</section>
	);
}

/** Status: a polite status line (what just worked). */
export function Status({ text }) {
	return (
		<p role="status" class="status-line">
			{text}
		</p>
	);
}

/**
 * useAction(): runs one request at a time for a form: {busy, error, status, run(fn, done)}.
 * run() clears the notes, awaits fn(), then shows done (a string, or a function of fn's
 * result) as the status; a failure becomes `error` (the ApiError, for sentence()).
 */
export function useAction() {
	const [busy, setBusy] = useState(false);
	const [error, setError] = useState(null);
	const [status, setStatus] = useState('');
	async function run(fn, done) {
		setBusy(true);
		setError(null);
		setStatus('');
		try {
			const r = await fn();
			setStatus(typeof done === 'function' ? done(r) : done || '');
			return r;
		} catch (e) {
			setError(e);
			return undefined;
		} finally {
			setBusy(false);
		}
	}
	return { busy, error, status, run, setError, setStatus };
}

/**
 * sentence(err, what): an API error as a sentence for a person. `what` maps an error code or
 * an HTTP status ("403", "409", "conflict") to the sentence that fits the action; otherwise the
 * API's own message, which is a sentence too.
 */
export function sentence(err, what = {}) {
	if (!err) return null;
	if (err.status === 429) {
		const s = err.body && err.body.message && /(\d+) seconds/.exec(err.body.message);
		const mins = s ? Math.ceil(Number(s[1]) / 60) : 1;
		return `Too many tries. Wait ${mins === 1 ? 'a minute' : `${mins} minutes`} and try again.`;
	}
	return what[err.code] || what[String(err.status)] || err.message;
}

/**
 * spoken(promise, what): the promise's value; a failure becomes an Error whose message is
 * sentence(err, what), which ConfirmDialog and NameDialog show as they are.
 */
export async function spoken(promise, what) {
	try {
		return await promise;
	} catch (e) {
		throw new Error(sentence(e, what));
	}
}
