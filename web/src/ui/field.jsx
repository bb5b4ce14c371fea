// field.jsx: labelled form fields, error notes and the loading line.
import { useId } from './hooks.js';

/** Field: a labelled input (or textarea/select via `as`), with an error note tied to it. */
export function Field({ label, error, as = 'input', children, hint, ...props }) {
	const id = useId('f');
	const Tag = as;
	const describedBy = [error ? id + '-err' : null, hint ? id + '-hint' : null].filter(Boolean).join(' ') || undefined;
	return (
		<div class="field">
			<label for={id}>{label}</label>
			<Tag id={id} aria-invalid={error ? 'true' : undefined} aria-describedby={describedBy} {...props}>
				{children}
			</Tag>
			{hint && (
				<p class="hint" id={id + '-hint'}>
					{hint}
				</p>
			)}
			{error && (
				<p class="error-note" id={id + '-err'}>
					{error}
				</p>
			)}
		</div>
	);
}

/** ErrorNote: an error message announced to screen readers (role alert). */
export function ErrorNote({ error }) {
	if (!error) return null;
	return (
		<p class="error-note" role="alert">
			{typeof error === 'string' ? error : error.message}
		</p>
	);
}

/** Loading: a polite status line ("Loading…"). */
export function Loading({ label = 'Loading…' }) {
	return (
		<p class="loading" role="status">
			{label}
		</p>
	);
}
