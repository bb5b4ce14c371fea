// versions.jsx: the project's live preview (its own origin, docs/web.md "Preview") and its
// versions with a diff per version and Restore.
import { useEffect, useRef, useState } from 'preact/hooks';
import { get, post, enc, ApiError } from '../lib/api.js';
import { ago, when } from '../lib/format.js';
import { ConfirmDialog, ErrorNote, Loading, useAsync } from '../ui.jsx';

/**
 * Preview: the working tree in a sandboxed iframe on the project's preview origin
 * (http://<token>.preview.<SVC_DOMAIN>:<port>/, from GET /projects/:id/preview). The URL is
 * fetched again shortly before it expires and whenever files changed (tick), which also
 * reloads the frame. The frame never gets app_url's origin or cookies: the token in the
 * host name is its only authority, and sandbox leaves out allow-same-origin.
 */
export function Preview({ project, tick, onUrl }) {
	const [state, setState] = useState({ url: null, expiresAt: null, error: null });
	const [n, setN] = useState(0); // the frame's key: a new value reloads it
	const timer = useRef(0);
	async function load() {
		clearTimeout(timer.current);
		try {
			const r = await get(`/projects/${enc(project.id)}/preview`);
			setState({ url: r.url, expiresAt: r.expiresAt, error: null });
			setN((x) => x + 1);
			onUrl(r.url);
			const left = Date.parse(r.expiresAt) - Date.now();
			if (left > 0) timer.current = setTimeout(load, Math.max(5000, left - 30000));
		} catch (e) {
			setState((s) => ({ ...s, error: e }));
		}
	}
	useEffect(() => {
		load();
		return () => clearTimeout(timer.current);
	}, [project.id, tick]);
	const missing = state.error instanceof ApiError && (state.error.status === 404 || state.error.status === 405);
	return (
		<div class="preview">
			<div class="preview-bar">
				<button type="button" class="ghost" onClick={load}>
					Reload preview
				</button>
				{state.url && (
					<a href={state.url} target="_blank" rel="noopener noreferrer">
						Open preview in a new tab
					</a>
				)}
			</div>
			{missing ? (
				<p class="empty">The preview is not available on this server.</p>
			) : state.error ? (
				<ErrorNote error={state.error} />
			) : !state.url ? (
				<Loading label="Starting the preview…" />
			) : (
				<iframe
					key={n}
					title="Preview"
					src={state.url}
					sandbox="allow-scripts allow-forms allow-popups allow-modals"
					referrerpolicy="no-referrer"
					class="preview-frame"
				/>
			)}
		</div>
	);
}

/** DiffText: a unified diff with added, removed and hunk lines marked (also in text, by their sign). */
function DiffText({ text }) {
	const lines = String(text || '').split('\n');
	if (lines[lines.length - 1] === '') lines.pop();
	return (
		<pre class="diff" tabIndex={0}>
			{lines.map((l, i) => {
				const c = l.startsWith('@@') ? 'hunk' : l.startsWith('+') && !l.startsWith('+++') ? 'add' : l.startsWith('-') && !l.startsWith('---') ? 'del' : '';
				return (
					<span class={c} key={i}>
						{l}
						{'\n'}
					</span>
				);
			})}
		</pre>
	);
}

const STATUS = { added: 'added', modified: 'changed', deleted: 'deleted', renamed: 'renamed' };

function Diff({ project, sha }) {
	const d = useAsync(() => get(`/projects/${enc(project.id)}/versions/${enc(sha)}/diff`), [project.id, sha]);
	if (d.error) return <ErrorNote error={d.error.status === 404 ? 'The changes of this version cannot be shown.' : d.error} />;
	if (!d.data) return <Loading label="Loading the changes…" />;
	if (!d.data.files.length) return <p class="empty">No file changed in this version.</p>;
	return (
		<div class="diffs">
			{d.data.files.map((f) => (
				<section key={f.path} aria-label={`Changes in ${f.path}`}>
					<h4>
						{f.path} <span class="badge">{STATUS[f.status] || f.status}</span>
					</h4>
					<DiffText text={f.diff} />
				</section>
			))}
		</div>
	);
}

export function Versions({ project, tick, onRestored }) {
	const list = useAsync(() => get(`/projects/${enc(project.id)}/versions`).then((r) => r.items), [project.id, tick]);
	const [shown, setShown] = useState(null);
	const [restoring, setRestoring] = useState(null);
	const [status, setStatus] = useState('');
	if (list.error) return <ErrorNote error={list.error} />;
	if (!list.data) return <Loading label="Loading versions…" />;
	return (
		<div class="versions">
			<p role="status" class="status-line">
				{status}
			</p>
			<ol class="version-list" aria-label="Versions">
				{list.data.map((v, i) => {
					const short = v.sha.slice(0, 7);
					return (
						<li key={v.sha} class="version">
							<div class="version-head">
								<p class="version-msg">{v.message}</p>
								<p class="version-meta">
									{v.author} · <time dateTime={v.createdAt} title={when(v.createdAt)}>{ago(v.createdAt)}</time> · <code>{short}</code>
									{i === 0 && <span class="badge">current</span>}
								</p>
								<div class="version-actions">
									<button type="button" class="ghost" aria-expanded={shown === v.sha ? 'true' : 'false'} aria-label={`Changes in version ${short}`} onClick={() => setShown(shown === v.sha ? null : v.sha)}>
										{shown === v.sha ? 'Hide changes' : 'Show changes'}
									</button>
									{i > 0 && (
										<button type="button" class="secondary" aria-label={`Restore version ${short}`} onClick={() => setRestoring(v)}>
											Restore
										</button>
									)}
								</div>
							</div>
							{shown === v.sha && <Diff project={project} sha={v.sha} />}
						</li>
					);
				})}
			</ol>
			{restoring && (
				<ConfirmDialog
					title="Restore this version?"
					text={`The files go back to how they were in “${restoring.message}” (${restoring.sha.slice(0, 7)}). This is saved as a new version, so nothing is lost.`}
					action="Restore"
					onClose={() => setRestoring(null)}
					onConfirm={async () => {
						const r = await post(`/projects/${enc(project.id)}/versions/${enc(restoring.sha)}/checkout`);
						setRestoring(null);
						setStatus(`Restored version ${restoring.sha.slice(0, 7)} as ${String(r.sha).slice(0, 7)}.`);
						list.reload();
						onRestored();
					}}
				/>
			)}
		</div>
	);
}
