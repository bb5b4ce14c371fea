// git.jsx: the project's Git panel (docs/git.md), opened from the project page's header: the clone URL
// with a copyable `git clone` command and where to make a token for it; the mirror on a forge with its
// last push, Push now, Pull from remote, and, when the two have diverged, svc's main to a new branch.
import { useState } from 'preact/hooks';
import { gitCloneUrl, getGitRemote, setGitRemote, deleteGitRemote, pushGitRemote, pullGitRemote } from '../../../lib/api.js';
import { Link } from '../../../lib/router.js';
import { ago, when } from '../../../lib/format.js';
import { Dialog, ErrorNote, Field, Loading, useAsync } from '../../../ui/index.js';

/** GitPanel: the "Git" button and its dialog, for project `project`; `writable`: the caller may change it. */
export function GitPanel({ project, writable, onChanged }) {
	const [open, setOpen] = useState(false);
	return (
		<>
			<button type="button" class="ghost" onClick={() => setOpen(true)}>
				Git
			</button>
			{open && <GitDialog project={project} writable={writable} onChanged={onChanged} onClose={() => setOpen(false)} />}
		</>
	);
}

function GitDialog({ project, writable, onChanged, onClose }) {
	return (
		<Dialog title="Git" onClose={onClose} wide>
			<Clone project={project} />
			{writable && <Mirror project={project} onChanged={onChanged} />}
		</Dialog>
	);
}

function Clone({ project }) {
	const url = gitCloneUrl(project.id);
	const cmd = `git clone ${url} ${project.slug}`;
	const [copied, setCopied] = useState('');
	async function copy() {
		try {
			await navigator.clipboard.writeText(cmd);
			setCopied('Copied the git clone command.');
		} catch (e) {
			setCopied('Select the command and copy it.');
		}
	}
	return (
		<section aria-labelledby="git-clone-h">
			<h3 id="git-clone-h">Clone</h3>
			<Field label="Clone URL" readOnly value={url} onFocus={(e) => e.currentTarget.select()} />
			<p>
				<code class="git-cmd">{cmd}</code>{' '}
				<button type="button" class="ghost" onClick={copy}>
					Copy git clone command
				</button>
			</p>
			<p role="status" class="status-line">
				{copied}
			</p>
			<p class="hint">
				Git asks for a password: give an API token with the scope <code>git:read</code> (and <code>git:write</code> to push).{' '}
				<Link href="/settings/account">Create a token with the git scopes</Link>
			</p>
		</section>
	);
}

function LastPush({ last }) {
	if (!last) return <p class="hint">Not pushed yet.</p>;
	return (
		<p class={'git-last ' + (last.ok ? 'ok' : 'failed')}>
			<span class="badge">{last.ok ? 'Pushed' : 'Push failed'}</span>{' '}
			<time dateTime={last.at} title={when(last.at)}>{ago(last.at)}</time>
			{last.message && <> · {last.message}</>}
		</p>
	);
}

function Mirror({ project, onChanged }) {
	const remote = useAsync(() => getGitRemote(project.id), [project.id]);
	const r = remote.data && remote.data.remote;
	const [busy, setBusy] = useState(false);
	const [error, setError] = useState(null);
	const [status, setStatus] = useState('');
	const [diverged, setDiverged] = useState(null);
	const [editing, setEditing] = useState(false);
	async function act(fn, done) {
		setBusy(true);
		setError(null);
		setStatus('');
		try {
			const out = await fn();
			if (done) setStatus(done(out));
			remote.reload();
		} catch (e) {
			if (e.status === 409 && e.message.includes('diverged')) setDiverged(e.message);
			else setError(e);
		}
		setBusy(false);
	}
	if (remote.loading && !remote.data) return <Loading label="Loading the remote…" />;
	return (
		<section aria-labelledby="git-mirror-h">
			<h3 id="git-mirror-h">Mirror to a forge</h3>
			<p class="hint">svc pushes main to the remote after every new version (GitHub, GitLab, Gitea or any Git server over HTTPS).</p>
			<ErrorNote error={remote.error} />
			{r && !editing && (
				<div class="git-remote">
					<p>
						<code>{r.url}</code> · branch <code>{r.branch}</code>
						{r.username && <> · as {r.username}</>}
					</p>
					<LastPush last={r.lastPush} />
					<div class="actions">
						<button type="button" class="secondary" disabled={busy} onClick={() => act(() => pushGitRemote(project.id), (o) => o.message || 'Pushed.')}>
							Push now
						</button>
						<button
							type="button"
							class="secondary"
							disabled={busy}
							onClick={() =>
								act(
									() => pullGitRemote(project.id),
									(o) => {
										if (o.result === 'fast-forward') onChanged && onChanged();
										return o.result === 'fast-forward' ? `Pulled: main is now at ${o.sha.slice(0, 12)}.` : 'Already up to date.';
									},
								)
							}
						>
							Pull from remote
						</button>
						<button type="button" class="ghost" onClick={() => setEditing(true)}>
							Change remote
						</button>
						<button type="button" class="ghost danger" disabled={busy} onClick={() => act(() => deleteGitRemote(project.id), () => 'The remote was removed.')}>
							Remove remote
						</button>
					</div>
				</div>
			)}
			{diverged && <Diverged project={project} message={diverged} onDone={(m) => { setDiverged(null); setStatus(m); }} />}
			<p role="status" class="status-line">
				{status}
			</p>
			<ErrorNote error={error} />
			{(!r || editing) && remote.data && (
				<RemoteForm project={project} remote={r} onSaved={() => { setEditing(false); remote.reload(); setStatus('The remote was saved.'); }} onCancel={r ? () => setEditing(false) : null} />
			)}
		</section>
	);
}

function Diverged({ project, message, onDone }) {
	const [branch, setBranch] = useState('svc-main');
	const [error, setError] = useState(null);
	const [busy, setBusy] = useState(false);
	async function push(e) {
		e.preventDefault();
		setBusy(true);
		setError(null);
		try {
			await pushGitRemote(project.id, branch.trim());
			onDone(`svc's main was pushed to the branch ${branch.trim()} of the remote: merge it there, then pull again.`);
		} catch (err) {
			setError(err);
		}
		setBusy(false);
	}
	return (
		<form class="git-diverged" onSubmit={push} aria-label="The two have diverged">
			<p role="alert">{message}</p>
			<Field label="New branch on the remote" required value={branch} onInput={(e) => setBranch(e.currentTarget.value)} />
			<ErrorNote error={error} />
			<button type="submit" class="primary" disabled={busy || !branch.trim()}>
				Push svc's main as a new branch
			</button>
		</form>
	);
}

function RemoteForm({ project, remote, onSaved, onCancel }) {
	const [url, setUrl] = useState(remote ? remote.url : '');
	const [username, setUsername] = useState(remote ? remote.username || '' : '');
	const [token, setToken] = useState('');
	const [branch, setBranch] = useState(remote ? remote.branch : 'main');
	const [error, setError] = useState(null);
	const [busy, setBusy] = useState(false);
	async function save(e) {
		e.preventDefault();
		setBusy(true);
		setError(null);
		try {
			await setGitRemote(project.id, { url: url.trim(), username: username.trim() || null, token, branch: branch.trim() || null });
			onSaved();
		} catch (err) {
			setError(err);
		}
		setBusy(false);
	}
	const fe = (f) => (error && error.field === f ? error.message : null);
	return (
		<form onSubmit={save} aria-label="Remote">
			<Field label="Remote URL" type="url" required placeholder="https://github.com/you/app.git" value={url} error={fe('url')} onInput={(e) => setUrl(e.currentTarget.value)} />
			<Field label="User name" autoComplete="off" value={username} hint="Optional for GitHub." onInput={(e) => setUsername(e.currentTarget.value)} />
			<Field label="Token" type="password" required autoComplete="new-password" value={token} error={fe('token')} hint="A token of the forge that may push to the repository; it is kept sealed and never shown again." onInput={(e) => setToken(e.currentTarget.value)} />
			<Field label="Branch" value={branch} error={fe('branch')} onInput={(e) => setBranch(e.currentTarget.value)} />
			{error && !['url', 'token', 'branch'].includes(error.field) && <ErrorNote error={error} />}
			<div class="actions">
				{onCancel && (
					<button type="button" class="ghost" onClick={onCancel}>
						Cancel
					</button>
				)}
				<button type="submit" class="primary" disabled={busy || !url.trim() || !token}>
					Save remote
				</button>
			</div>
		</form>
	);
}
