// deployments.jsx: the project's deployments (docs/api.md "Deployments"): each publish with its state,
// when, who, its version and why it failed, its build log, and Restore for an earlier kept site.
import { useState } from 'preact/hooks';
import { listDeployments, restoreDeployment } from '../../../lib/api.js';
import { ago, when } from '../../../lib/format.js';
import { ConfirmDialog, ErrorNote, Loading, useAsync } from '../../../ui/index.js';

const STATE = { building: 'Building', live: 'Live', failed: 'Failed', superseded: 'Earlier' };

/** Deployments: the list, newest first; `tick` reloads it (a publish), onRestored(publishedAt) after a restore. */
export function Deployments({ project, tick, writer, onRestored }) {
	const list = useAsync(() => listDeployments(project.id).then((r) => r.items), [project.id, tick]);
	const [log, setLog] = useState(null);
	const [restoring, setRestoring] = useState(null);
	const [status, setStatus] = useState('');
	if (list.error) return <ErrorNote error={list.error} />;
	if (!list.data) return <Loading label="Loading deployments…" />;
	if (!list.data.length) return <p class="empty">Not published yet. Publish puts the site online; each publish is listed here.</p>;
	return (
		<div class="deployments">
			<p role="status" class="status-line">
				{status}
			</p>
			<ol class="deployment-list" aria-label="Deployments">
				{list.data.map((d) => {
					const short = d.id.slice(0, 8);
					const at = d.finishedAt || d.startedAt;
					return (
						<li key={d.id} class={'deployment ' + d.status}>
							<div class="deployment-head">
								<p class="deployment-title">
									<span class={'badge dep-' + d.status}>{STATE[d.status] || d.status}</span>{' '}
									<time dateTime={at} title={when(at)}>{ago(at)}</time>
									{d.createdBy && <> · {d.createdBy.name}</>}
									{d.commitSha && (
										<>
											{' '}
											· <code>{d.commitSha.slice(0, 7)}</code>
										</>
									)}
								</p>
								{d.error && <p class="deployment-error">{d.error}</p>}
								<div class="deployment-actions">
									{d.logExcerpt && (
										<button type="button" class="ghost" aria-expanded={log === d.id ? 'true' : 'false'} aria-label={`Build log of deployment ${short}`} onClick={() => setLog(log === d.id ? null : d.id)}>
											{log === d.id ? 'Hide log' : 'Show log'}
										</button>
									)}
									{writer && d.restorable && d.status !== 'live' && (
										<button type="button" class="secondary" aria-label={`Restore deployment ${short}`} onClick={() => setRestoring(d)}>
											Restore
										</button>
									)}
								</div>
							</div>
							{log === d.id && (
								<pre class="build-log" tabIndex={0} aria-label={`Build log of deployment ${short}`}>
									{d.logExcerpt}
								</pre>
							)}
						</li>
					);
				})}
			</ol>
			{restoring && (
				<ConfirmDialog
					title="Restore this deployment?"
					text={`The published site goes back to the deployment of ${when(restoring.finishedAt || restoring.startedAt)}, without a build. The project's files do not change.`}
					action="Restore"
					onClose={() => setRestoring(null)}
					onConfirm={async () => {
						const r = await restoreDeployment(project.id, restoring.id);
						setRestoring(null);
						setStatus(`Deployment ${restoring.id.slice(0, 8)} is live again.`);
						list.reload();
						onRestored(r.publishedAt);
					}}
				/>
			)}
		</div>
	);
}
