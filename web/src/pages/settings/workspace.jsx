// workspace.jsx: /settings/workspace/:wid: the workspace's name, members and roles
// (invite, change role, remove, transfer ownership, leave), folders, AI provider and credits
// (docs/api.md "Workspaces", "Folders", "Workspace AI provider", "Workspace credits").
import { useState } from 'preact/hooks';
import { getWorkspace, renameWorkspace, leaveWorkspace, listMembers, addMember, setMemberRole, removeMember, transferWorkspace, listFolders, createFolder, renameFolder, deleteFolder, getAiProvider, setAiProvider, getCredits, setCreditLimit } from '../../lib/api.js';
import { me, loadMe } from '../../lib/session.js';
import { useStore } from '../../lib/store.js';
import { navigate } from '../../lib/router.js';
import { usd } from '../../lib/format.js';
import { Field, ErrorNote, Loading, ConfirmDialog, NameDialog, useAsync, useTitle } from '../../ui/index.js';
import { Section, Status, useAction, sentence, spoken } from './parts.jsx';
import { Budget, AgentInstructions, AllSpend } from './budget.jsx';

const ROLE_NAMES = { member: 'Member', admin: 'Admin', owner: 'Owner' };
const RANK = { member: 1, admin: 2, owner: 3 };
const LAST_OWNER = 'A workspace keeps at least one owner: make another member owner first.';

export function WorkspaceSettings({ wid, onNewWorkspace }) {
	const m = useStore(me);
	const ws = useAsync(() => getWorkspace(wid), [wid]);
	useTitle(ws.data ? `${ws.data.name} settings` : 'Workspace settings');
	if (ws.error) {
		const text = sentence(ws.error, {
			403: 'You are not a member of this workspace, so you cannot see its settings.',
			404: 'There is no such workspace.',
		});
		return (
			<>
				<div class="dash-head">
					<h1 tabIndex={-1}>Workspace settings</h1>
				</div>
				<ErrorNote error={text} />
			</>
		);
	}
	if (!ws.data) return <Loading />;
	const w = ws.data;
	const platform = !!m.user.isPlatformAdmin;
	const rank = platform ? RANK.owner : RANK[w.role] || 0;
	const self = { id: m.user.id, rank, role: w.role, platform };
	return (
		<>
			<div class="dash-head">
				<h1 tabIndex={-1}>{w.name}</h1>
			</div>
			<p class="hint page-sub">
				{w.kind === 'personal' ? 'Personal workspace' : 'Team workspace'} · {w.role ? `your role: ${ROLE_NAMES[w.role].toLowerCase()}` : 'you are a platform admin here'}
			</p>
			<General w={w} me={self} onRenamed={(n) => ws.setData(n)} />
			<Members w={w} me={self} onNewWorkspace={onNewWorkspace} onRoleChanged={() => ws.reload()} />
			<Folders w={w} />
			{RANK[w.role] >= RANK.admin && <Provider w={w} />}
			<Credits w={w} platform={platform} />
			<Budget w={w} />
			<AgentInstructions w={w} />
			{platform && <AllSpend />}
			{w.kind === 'team' && w.role && <Leave w={w} />}
		</>
	);
}

function General({ w, me: self, onRenamed }) {
	const [name, setName] = useState(w.name);
	const a = useAction();
	async function rename(e) {
		e.preventDefault();
		await a.run(async () => {
			const r = await renameWorkspace(w.id, name.trim());
			onRenamed(r);
			await loadMe(true);
		}, 'The workspace is renamed.');
	}
	return (
		<Section title="Name">
			{self.rank >= RANK.admin ? (
				<form onSubmit={rename} class="settings-form">
					<Field
						label="Workspace name"
						required
						maxLength={128}
						value={name}
						error={a.error ? sentence(a.error, { 403: 'Only admins and owners rename a workspace.' }) : null}
						onInput={(e) => setName(e.currentTarget.value)}
					/>
					<div class="form-end">
						<button type="submit" class="primary" disabled={a.busy || !name.trim() || name.trim() === w.name}>
							Rename
						</button>
						<Status text={a.status} />
					</div>
				</form>
			) : (
				<p>
					{w.name} <span class="row-sub">(admins and owners can rename it)</span>
				</p>
			)}
		</Section>
	);
}

/** Leave: a team workspace's member steps out (the last owner cannot: the API answers 409). */
function Leave({ w }) {
	const [leaving, setLeaving] = useState(false);
	return (
		<Section title="Leave this workspace" intro="You lose access to its projects at once; the projects you made stay here.">
			<button type="button" class="secondary" onClick={() => setLeaving(true)}>
				Leave workspace
			</button>
			{leaving && (
				<ConfirmDialog
					title={`Leave ${w.name}?`}
					text="You lose access to its projects at once. A member can add you again."
					action="Leave workspace"
					danger
					onClose={() => setLeaving(false)}
					onConfirm={async () => {
						await spoken(leaveWorkspace(w.id), { 409: 'You are its only owner: make another member owner first.' });
						await loadMe(true);
						navigate('/settings/account');
					}}
				/>
			)}
		</Section>
	);
}

/** The roles `self` may give: admins give member and admin, owners also owner. */
function givable(self) {
	return self.rank >= RANK.owner ? ['member', 'admin', 'owner'] : ['member', 'admin'];
}

function Members({ w, me: self, onNewWorkspace, onRoleChanged }) {
	const list = useAsync(() => listMembers(w.id).then((r) => r.items), [w.id]);
	const [email, setEmail] = useState('');
	const [sent, setSent] = useState(''); // the address of the last invitation, for its error
	const [role, setRole] = useState('member');
	const [confirm, setConfirm] = useState(null); // {kind: 'remove'|'transfer', m}
	const [status, setStatus] = useState('');
	const [rowError, setRowError] = useState(null);
	const invite = useAction();
	const canInvite = self.rank >= RANK.admin && w.kind === 'team';
	const who = (x) => x.displayName || x.email;

	async function submitInvite(e) {
		e.preventDefault();
		const addr = email.trim();
		setSent(addr);
		const added = await invite.run(() => addMember(w.id, addr, role), (x) => `${who(x)} is now a ${ROLE_NAMES[x.role].toLowerCase()} of ${w.name}.`);
		if (added) {
			list.setData((l) => [...(l || []), added]);
			setEmail('');
		}
	}
	async function changeRole(x, next) {
		setRowError(null);
		setStatus('');
		try {
			const r = await setMemberRole(w.id, x.userId, next);
			list.setData((l) => l.map((y) => (y.userId === r.userId ? r : y)));
			setStatus(`${who(r)} is now ${next === 'admin' ? 'an' : 'a'} ${ROLE_NAMES[next].toLowerCase()}.`);
			if (x.userId === self.id) onRoleChanged();
		} catch (e) {
			setRowError(
				sentence(e, {
					403: 'Only an owner gives or takes the owner role, or changes an owner.',
					409: LAST_OWNER,
				}),
			);
			list.reload();
		}
	}
	const inviteError = invite.error
		? sentence(invite.error, {
				404: `No one has an svc account with ${sent}: ask them to sign up first, then invite them.`,
				400: 'Enter an e-mail address.',
				403: 'Only admins and owners invite people, and only an owner invites an owner.',
				...(invite.error.field === 'email' ? { 409: `${sent} is already a member.` } : {}),
			})
		: null;
	return (
		<Section title="Members">
			{w.kind === 'personal' && (
				<p class="hint">
					A personal workspace is yours alone. To share projects,{' '}
					<button type="button" class="link" onClick={onNewWorkspace}>
						make a team workspace
					</button>{' '}
					and invite people there.
				</p>
			)}
			{w.kind === 'team' && self.rank < RANK.admin && <p class="hint">Only admins and owners invite people or change roles.</p>}
			<Status text={status} />
			<ErrorNote error={rowError} />
			<ErrorNote error={list.error && sentence(list.error)} />
			{!list.data ? (
				!list.error && <Loading />
			) : (
				<ul class="rows" aria-label="Members">
					{list.data.map((x) => {
						const mine = x.userId === self.id;
						const canRole = w.kind === 'team' && self.rank >= RANK.admin && (x.role !== 'owner' || self.rank >= RANK.owner);
						const canRemove = !mine && (self.rank >= RANK.owner || (self.rank >= RANK.admin && x.role === 'member'));
						const canTransfer = !mine && self.rank >= RANK.owner && x.role !== 'owner';
						return (
							<li key={x.userId} class="row">
								<span class="row-main">
									<strong>
										{who(x)}
										{mine && ' (you)'}
									</strong>
									{x.displayName && <span class="row-sub">{x.email}</span>}
								</span>
								{canRole ? (
									<label class="role-pick">
										<span class="sr-only">Role of {x.email}</span>
										<select value={x.role} onChange={(e) => changeRole(x, e.currentTarget.value)}>
											{[...new Set([...givable(self), x.role])].map((r) => (
												<option value={r} key={r}>
													{ROLE_NAMES[r]}
												</option>
											))}
										</select>
									</label>
								) : (
									<span class={'badge role ' + x.role}>{ROLE_NAMES[x.role]}</span>
								)}
								<span class="row-actions">
									{canTransfer && (
										<button type="button" class="secondary" aria-label={`Make ${x.email} the owner`} onClick={() => setConfirm({ kind: 'transfer', m: x })}>
											Make owner
										</button>
									)}
									{canRemove && (
										<button type="button" class="secondary" aria-label={`Remove ${x.email}`} onClick={() => setConfirm({ kind: 'remove', m: x })}>
											Remove
										</button>
									)}
								</span>
							</li>
						);
					})}
				</ul>
			)}
			{canInvite && (
				<form onSubmit={submitInvite} class="settings-form invite">
					<h3>Invite someone</h3>
					<div class="invite-fields">
						<Field label="Email" type="email" autocomplete="off" required value={email} hint="They need an svc account with this address." error={inviteError} onInput={(e) => setEmail(e.currentTarget.value)} />
						<Field label="Role" as="select" value={role} onChange={(e) => setRole(e.currentTarget.value)}>
							{givable(self).map((r) => (
								<option value={r} key={r}>
									{ROLE_NAMES[r]}
								</option>
							))}
						</Field>
					</div>
					<div class="form-end">
						<button type="submit" class="primary" disabled={invite.busy || !email.trim()}>
							Invite
						</button>
						<Status text={invite.status} />
					</div>
				</form>
			)}
			{confirm && confirm.kind === 'remove' && (
				<ConfirmDialog
					title={`Remove ${who(confirm.m)}?`}
					text={`${who(confirm.m)} loses access to ${w.name} and its projects at once. The projects they made stay here.`}
					action="Remove member"
					danger
					onClose={() => setConfirm(null)}
					onConfirm={async () => {
						await spoken(removeMember(w.id, confirm.m.userId), {
							403: 'Admins remove members only; an owner removes admins and owners.',
							409: LAST_OWNER,
						});
						list.setData((l) => l.filter((y) => y.userId !== confirm.m.userId));
						setStatus(`${who(confirm.m)} is no longer a member.`);
						setConfirm(null);
					}}
				/>
			)}
			{confirm && confirm.kind === 'transfer' && (
				<ConfirmDialog
					title="Transfer ownership?"
					text={`${who(confirm.m)} becomes the owner of ${w.name}${self.role ? ' and you become an admin' : ''}. Only an owner can undo this.`}
					action="Transfer ownership"
					danger
					onClose={() => setConfirm(null)}
					onConfirm={async () => {
						const r = await spoken(transferWorkspace(w.id, confirm.m.userId), { 403: 'Only an owner hands ownership over.' });
						list.setData(r.items);
						setStatus(`${who(confirm.m)} is now the owner.`);
						setConfirm(null);
						onRoleChanged();
						loadMe(true).catch(() => {});
					}}
				/>
			)}
		</Section>
	);
}

function Folders({ w }) {
	const list = useAsync(() => listFolders(w.id).then((r) => r.items), [w.id]);
	const [name, setName] = useState('');
	const [renaming, setRenaming] = useState(null);
	const [deleting, setDeleting] = useState(null);
	const [status, setStatus] = useState('');
	const a = useAction();
	const sorted = (l) => [...l].sort((x, y) => x.name.localeCompare(y.name));
	const conflict = { 409: 'A folder with this name exists already.', 403: 'Only members of this workspace manage its folders.' };
	async function create(e) {
		e.preventDefault();
		const f = await a.run(() => createFolder(w.id, name.trim()), (x) => `Folder ${x.name} is made.`);
		if (f) {
			list.setData((l) => sorted([...(l || []), f]));
			setName('');
		}
	}
	return (
		<Section title="Folders" intro="Folders sort the projects on the dashboard. Every member may manage them.">
			<Status text={status} />
			<ErrorNote error={list.error && sentence(list.error)} />
			{!list.data ? (
				!list.error && <Loading />
			) : list.data.length === 0 ? (
				<p class="empty">No folders yet.</p>
			) : (
				<ul class="rows" aria-label="Folders">
					{list.data.map((f) => (
						<li key={f.id} class="row">
							<span class="row-main">
								<strong>{f.name}</strong>
							</span>
							<span class="row-actions">
								<button type="button" class="secondary" aria-label={`Rename ${f.name}`} onClick={() => setRenaming(f)}>
									Rename
								</button>
								<button type="button" class="secondary" aria-label={`Delete ${f.name}`} onClick={() => setDeleting(f)}>
									Delete
								</button>
							</span>
						</li>
					))}
				</ul>
			)}
			<form onSubmit={create} class="settings-form inline-form">
				<Field label="New folder name" required maxLength={128} value={name} error={a.error ? sentence(a.error, conflict) : null} onInput={(e) => setName(e.currentTarget.value)} />
				<button type="submit" class="primary" disabled={a.busy || !name.trim()}>
					Create folder
				</button>
			</form>
			<Status text={a.status} />
			{renaming && (
				<NameDialog
					title={`Rename ${renaming.name}`}
					label="Folder name"
					action="Save"
					initial={renaming.name}
					onClose={() => setRenaming(null)}
					onSave={async (n) => {
						const f = await spoken(renameFolder(renaming.id, n), conflict);
						list.setData((l) => sorted(l.map((x) => (x.id === f.id ? f : x))));
						setStatus(`The folder is now called ${f.name}.`);
						setRenaming(null);
					}}
				/>
			)}
			{deleting && (
				<ConfirmDialog
					title={`Delete ${deleting.name}?`}
					text="Its projects move to All projects; none of them is deleted."
					action="Delete folder"
					danger
					onClose={() => setDeleting(null)}
					onConfirm={async () => {
						const r = await spoken(deleteFolder(deleting.id), conflict);
						list.setData((l) => l.filter((x) => x.id !== deleting.id));
						const n = r && r.projectsMoved;
						setStatus(`${deleting.name} is deleted${n ? `; ${n} ${n === 1 ? 'project' : 'projects'} moved to All projects` : ''}.`);
						setDeleting(null);
					}}
				/>
			)}
		</Section>
	);
}

const PROVIDER_FIELDS = {
	baseUrl: 'Enter an http:// or https:// address, the one /chat/completions (or /messages) is added to.',
	model: 'Use the model’s name as the provider spells it: no spaces or commas.',
	apiKey: 'A key holds only visible characters, without spaces.',
	allowedModels: 'List model names separated by commas.',
};
const PROVIDER_REASONS = /internal address|needs the API key again/;

function Provider({ w }) {
	const cur = useAsync(() => getAiProvider(w.id), [w.id]);
	if (cur.error) return <Section title="AI provider"><ErrorNote error={sentence(cur.error)} /></Section>;
	if (!cur.data) return <Section title="AI provider"><Loading /></Section>;
	return <ProviderForm w={w} p={cur.data} onSaved={(p) => cur.setData(p)} />;
}

function ProviderForm({ w, p, onSaved }) {
	const own = p.source === 'workspace';
	const [protocol, setProtocol] = useState(own ? p.protocol : 'openai');
	const [baseUrl, setBaseUrl] = useState(own ? p.baseUrl : '');
	const [model, setModel] = useState(own ? p.model : '');
	const [key, setKey] = useState('');
	const [removeKey, setRemoveKey] = useState(false);
	const [allowed, setAllowed] = useState(own ? (p.allowedModels || []).join(', ') : '');
	const [toolMode, setToolMode] = useState(own && p.toolMode ? p.toolMode : 'native');
	const a = useAction();
	async function save(e) {
		e.preventDefault();
		const body = { protocol, baseUrl: baseUrl.trim(), model: model.trim(), allowedModels: allowed.split(',').map((s) => s.trim()).filter(Boolean), toolMode };
		if (key) body.apiKey = key;
		else if (removeKey) body.apiKey = null;
		const r = await a.run(() => setAiProvider(w.id, body), 'The provider is saved.');
		if (r) {
			setKey('');
			setRemoveKey(false);
			onSaved(r);
		}
	}
	// the server's own sentence where the field is right but the reason is not the usual one
	const fe = (f) => (a.error && a.error.field === f ? (PROVIDER_REASONS.test(a.error.message || '') ? a.error.message.replace(/: send apiKey.*$/, ': enter it, or remove the stored key.') : PROVIDER_FIELDS[f] || sentence(a.error)) : null);
	const keyHint = own && p.hasApiKey ? (p.apiKeyLast4 ? `A key ending in ${p.apiKeyLast4} is stored. Leave this empty to keep it (a new base URL needs it again).` : 'A key is stored. Leave this empty to keep it (a new base URL needs it again).') : 'No key is stored. Local servers (Ollama, llama.cpp) may need none.';
	return (
		<Section title="AI provider">
			<p>
				{p.source === 'workspace'
					? 'This workspace uses its own provider.'
					: p.source === 'instance'
						? `This workspace uses the instance’s provider (${p.model}). Save one here to use your own.`
						: 'No provider is set up: chats cannot run until one is saved here.'}
			</p>
			{own && p.hasApiKey && p.apiKeyLast4 && (
				<p class="key-shown">
					The stored key ends in <code>{p.apiKeyLast4}</code>.
				</p>
			)}
			<form onSubmit={save} class="settings-form" autocomplete="off">
				<Field label="Protocol" as="select" value={protocol} onChange={(e) => setProtocol(e.currentTarget.value)}>
					<option value="openai">OpenAI-compatible (Chat Completions)</option>
					<option value="anthropic">Anthropic (Messages)</option>
				</Field>
				<Field label="Base URL" type="url" required maxLength={2000} placeholder="https://api.openai.com/v1" value={baseUrl} error={fe('baseUrl')} onInput={(e) => setBaseUrl(e.currentTarget.value)} />
				<Field label="Model" required maxLength={200} placeholder="gpt-4o-mini" value={model} error={fe('model')} onInput={(e) => setModel(e.currentTarget.value)} />
				<Field label="API key" type="password" autocomplete="new-password" maxLength={4096} value={key} hint={keyHint} error={fe('apiKey')} disabled={removeKey} onInput={(e) => setKey(e.currentTarget.value)} />
				{own && p.hasApiKey && (
					<label class="check">
						<input type="checkbox" checked={removeKey} onChange={(e) => setRemoveKey(e.currentTarget.checked)} /> Remove the stored key
					</label>
				)}
				<Field label="Tools" as="select" value={toolMode} hint="Text: for a model without tool calls; the tools are taught as markup in its prompt." onChange={(e) => setToolMode(e.currentTarget.value)}>
					<option value="native">Native tool calls</option>
					<option value="text">Markup in the text</option>
				</Field>
				<Field label="Allowed models" value={allowed} hint="Optional: model names, separated by commas, that a chat may pick. Empty: any." error={fe('allowedModels')} onInput={(e) => setAllowed(e.currentTarget.value)} />
				{a.error && !a.error.field && <ErrorNote error={sentence(a.error, { 503: 'Keys cannot be stored: this instance has no encryption key (ENCRYPTION_KEY). Ask its operator.', 403: 'Only admins and owners manage the AI provider.' })} />}
				<div class="form-end">
					<button type="submit" class="primary" disabled={a.busy}>
						Save provider
					</button>
					<Status text={a.status} />
				</div>
			</form>
		</Section>
	);
}

function Credits({ w, platform }) {
	const c = useAsync(() => getCredits(w.id), [w.id]);
	const [limit, setLimit] = useState('');
	const a = useAction();
	async function save(value) {
		const r = await a.run(() => setCreditLimit(w.id, value), value === null ? 'The limit is the instance default again.' : 'The limit is saved.');
		if (r) {
			c.setData(r);
			setLimit('');
		}
	}
	const d = c.data;
	return (
		<Section title="Credits and spend" intro="What the agent’s turns in this workspace have cost, against its limit. At the limit, chats stop.">
			<ErrorNote error={c.error && sentence(c.error)} />
			{!d ? (
				!c.error && <Loading />
			) : (
				<>
					<dl class="credit">
						<div>
							<dt>Spent</dt>
							<dd>{usd(d.spentUsd)}</dd>
						</div>
						<div>
							<dt>Limit</dt>
							<dd>
								{usd(d.limitUsd)}
								{d.defaultLimit && <span class="row-sub"> (instance default)</span>}
							</dd>
						</div>
						<div>
							<dt>Left</dt>
							<dd>{usd(d.remainingUsd)}</dd>
						</div>
					</dl>
					<progress class="credit-bar" aria-label="Credit used" max={d.limitUsd > 0 ? d.limitUsd : 1} value={Math.min(d.spentUsd, d.limitUsd > 0 ? d.limitUsd : 1)} />
					{d.exhausted && <p class="error-note">The credit is used up: chats in this workspace stop until a platform admin raises the limit.</p>}
					{!platform && <p class="hint">Only a platform admin changes the limit.</p>}
				</>
			)}
			{platform && d && (
				<form
					class="settings-form inline-form"
					onSubmit={(e) => {
						e.preventDefault();
						save(Number(limit));
					}}
				>
					<Field label="Credit limit in US dollars" type="number" min="0" max="99999999" step="0.01" required value={limit} error={a.error ? sentence(a.error, { 400: 'Enter a number from 0 to 99,999,999.' }) : null} onInput={(e) => setLimit(e.currentTarget.value)} />
					<button type="submit" class="primary" disabled={a.busy || limit === ''}>
						Save limit
					</button>
					{!d.defaultLimit && (
						<button type="button" class="secondary" disabled={a.busy} onClick={() => save(null)}>
							Use the instance default
						</button>
					)}
				</form>
			)}
			{platform && <Status text={a.status} />}
		</Section>
	);
}
