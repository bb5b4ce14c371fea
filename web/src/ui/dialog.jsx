// dialog.jsx: the shared dialogs: Dialog (the modal every dialog is), ConfirmDialog (a question
// and one action), NameDialog (one text field: rename, new folder, new workspace).
import { useEffect, useRef, useState } from 'preact/hooks';
import { useId } from './hooks.js';
import { Field, ErrorNote } from './field.jsx';

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

/** NameDialog: one text field and a button (rename, new folder). */
export function NameDialog({ title, label, action, initial = '', onClose, onSave }) {
	const [v, setV] = useState(initial);
	const [error, setError] = useState(null);
	const [busy, setBusy] = useState(false);
	return (
		<Dialog title={title} onClose={onClose}>
			<form
				onSubmit={async (e) => {
					e.preventDefault();
					setBusy(true);
					try {
						await onSave(v.trim());
					} catch (err) {
						setError(err.message);
						setBusy(false);
					}
				}}
			>
				<Field label={label} value={v} required maxLength={128} autoFocus error={error} onInput={(e) => setV(e.currentTarget.value)} />
				<div class="actions">
					<button type="button" class="ghost" onClick={onClose}>Cancel</button>
					<button type="submit" class="primary" disabled={busy || !v.trim()}>
						{action}
					</button>
				</div>
			</form>
		</Dialog>
	);
}
