// ui.jsx: the small shared pieces of every screen: dialogs, labelled fields, error notes.
import { useEffect, useRef, useState, useCallback } from 'preact/hooks';

let uid = 0;
/** useId(prefix): an id stable for the component's life (labels, aria-describedby). */
export function useId(prefix = 'id') {
	const r = useRef(null);
	if (r.current === null) r.current = `${prefix}-${++uid}`;
	return r.current;
}

/**
 * Dialog: a modal <dialog> (focus trapped by the browser, Escape closes) named by its title.
 * onClose is called on Escape, on the close button and when the dialog is closed otherwise.
 */
export function Dialog({ title, onClose, children, wide }) {
	const ref = useRef(null);
	const id = useId('dlg');
	useEffect(() => {
		const d = ref.current;
		const opener = document.activeElement;
		if (d && !d.open) d.showModal();
		return () => {
			if (d && d.open) d.close();
			if (opener && opener.isConnected && opener.focus) opener.focus();
		};
	}, []);
	return (
		<dialog
			ref={ref}
			class={wide ? 'dialog wide' : 'dialog'}
			aria-labelledby={id}
			onCancel={(e) => {
				e.preventDefault();
				onClose();
			}}
		>
			<div class="dialog-head">
				<h2 id={id}>{title}</h2>
				<button type="button" class="icon" aria-label="Close" onClick={onClose}>
					×
				</button>
			</div>
			{children}
		</dialog>
	);
}

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

/**
 * useAsync(fn, deps): runs fn() (a promise) when deps change; returns
 * {data, error, loading, reload, setData}. A result that arrives after deps changed is dropped.
 */
export function useAsync(fn, deps) {
	const [state, setState] = useState({ data: undefined, error: null, loading: true });
	const gen = useRef(0);
	const run = useCallback(() => {
		const g = ++gen.current;
		setState((s) => ({ ...s, loading: true, error: null }));
		return Promise.resolve()
			.then(fn)
			.then(
				(data) => g === gen.current && setState({ data, error: null, loading: false }),
				(error) => g === gen.current && setState((s) => ({ ...s, error, loading: false })),
			);
	}, deps);
	useEffect(() => {
		run();
	}, [run]);
	return { ...state, reload: run, setData: (d) => setState((s) => ({ ...s, data: typeof d === 'function' ? d(s.data) : d })) };
}

/** Spinner: a polite status line ("Loading…"). */
export function Loading({ label = 'Loading…' }) {
	return (
		<p class="loading" role="status">
			{label}
		</p>
	);
}

/** useTitle(title): sets document.title to "title · svc". */
export function useTitle(title) {
	useEffect(() => {
		document.title = title ? `${title} · svc` : 'svc';
	}, [title]);
}

/** ConfirmDialog: a question, Cancel and one action button. */
export function ConfirmDialog({ title, text, action, danger, onClose, onConfirm }) {
	const [error, setError] = useState(null);
	const [busy, setBusy] = useState(false);
	return (
		<Dialog title={title} onClose={onClose}>
			<p>{text}</p>
			<ErrorNote error={error} />
			<div class="actions">
				<button type="button" class="ghost" onClick={onClose}>Cancel</button>
				<button
					type="button"
					class={danger ? 'danger' : 'primary'}
					disabled={busy}
					onClick={async () => {
						setBusy(true);
						try {
							await onConfirm();
						} catch (err) {
							setError(err.message);
							setBusy(false);
						}
					}}
				>
					{action}
				</button>
			</div>
		</Dialog>
	);
}
