// settings.jsx: /settings/account and /settings/workspace/:wid (one chunk of their own, loaded
// by main.jsx through <Lazy>): the settings layout with its navigation (Account, each workspace,
// New workspace). The pages are account.jsx and workspace.jsx; what they
// share is in parts.jsx.
import { useState } from 'preact/hooks';
import { createWorkspace } from '../../lib/api.js';
import { me, loadMe } from '../../lib/session.js';
import { useStore } from '../../lib/store.js';
import { Link, navigate } from '../../lib/router.js';
import { NameDialog, useId } from '../../ui/index.js';
import { AccountSettings } from './account.jsx';
import { WorkspaceSettings } from './workspace.jsx';

/** SettingsPage: the layout; `section` is "account" or "workspace" (then `wid` names it). */
export function SettingsPage({ section, wid }) {
	const user = useStore(me);
	const [creating, setCreating] = useState(false);
	const wsHead = useId('nav');
	const workspaces = user.workspaces && user.workspaces.length ? user.workspaces : [user.workspace];
	return (
		<div class="settings">
			<nav class="settings-nav" aria-label="Settings">
				<ul class="folders">
					<li>
						<Link href="/settings/account" aria-current={section === 'account' ? 'page' : undefined}>
							Account
						</Link>
					</li>
				</ul>
				<p class="nav-head" id={wsHead}>
					Workspaces
				</p>
				<ul class="folders" aria-labelledby={wsHead}>
					{workspaces.map((w) => (
						<li key={w.id}>
							<Link href={`/settings/workspace/${encodeURIComponent(w.id)}`} title={w.name} aria-current={section === 'workspace' && wid === w.id ? 'page' : undefined}>
								{w.name}
							</Link>
						</li>
					))}
				</ul>
				<button type="button" class="ghost" onClick={() => setCreating(true)}>
					New workspace
				</button>
			</nav>
			<main class="settings-main">
				{section === 'account' ? <AccountSettings /> : <WorkspaceSettings wid={wid} key={wid} onNewWorkspace={() => setCreating(true)} />}
			</main>
			{creating && (
				<NameDialog
					title="New workspace"
					label="Workspace name"
					action="Create workspace"
					onClose={() => setCreating(false)}
					onSave={async (name) => {
						const w = await createWorkspace(name);
						await loadMe(true);
						setCreating(false);
						navigate(`/settings/workspace/${encodeURIComponent(w.id)}`);
					}}
				/>
			)}
		</div>
	);
}
