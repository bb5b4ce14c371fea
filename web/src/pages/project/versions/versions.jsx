// versions.jsx: the project's versions with a diff per version and Restore; the live preview
// (its own origin, docs/web.md "Preview") is in ../preview/visual.jsx, with visual editing.
import { useState } from 'preact/hooks';
import { listVersions, getVersionDiff, checkoutVersion, exportZipUrl } from '../../../lib/api.js';
import { ago, when } from '../../../lib/format.js';
import { ConfirmDialog, ErrorNote, Loading, useAsync } from '../../../ui/index.js';

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
	const d = useAsync(() => getVersionDiff(project.id, sha), [project.id, sha]);
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
	const list = useAsync(() => listVersions(project.id).then((r) => r.items), [project.id, tick]);
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
									<a class="button ghost" href={exportZipUrl(project.id, v.sha)} download aria-label={`Download ZIP of version ${short}`}>
										Download ZIP
									</a>
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
						const r = await checkoutVersion(project.id, restoring.sha);
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
