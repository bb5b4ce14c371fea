// integrations.jsx: the Integrations page (docs/web.md "Integrations"): the catalogue of one workspace (chosen
// at the top) with search and a category filter; for everyone, connecting and disconnecting their own
// accounts (OAuth) for that workspace; for its admins, whether the agent may write through an integration
// there; for platform admins, availability and the default, the OAuth app and platform credential forms
// (which never show a secret) with the workspaces the credential may be used in, the audit log and xray.
// docs/api.md "Integrations".
import { useEffect, useState } from 'preact/hooks';
import {
	listIntegrations,
	getIntegration,
	integrationConnectUrl,
	disconnectIntegration,
	setWorkspaceIntegration,
	setIntegrationsBulk,
	listOAuthApps,
	createOAuthApp,
	deleteOAuthApp,
	getCredential,
	saveCredential,
	deleteCredential,
	setCredentialWorkspaces,
	listIntegrationAudit,
	getXrayStats,
	getXrayActive,
	getXrayStuck,
} from '../../lib/api.js';
import { ago, when } from '../../lib/format.js';
import { useStore } from '../../lib/store.js';
import { me } from '../../lib/session.js';
import { ConfirmDialog, Dialog, ErrorNote, Field, Loading, useTitle } from '../../ui/index.js';

/* An image app_url may load under its Content-Security-Policy (img-src 'self' data: blob:). */
function ownImage(url) {
	return !!url && ((url.startsWith('/') && !url.startsWith('//')) || url.startsWith('data:image/'));
}

const AUTH_NAMES = { oauth2: 'OAuth', secret_text: 'API key', basic_auth: 'User and password', custom_auth: 'Custom', none: 'No sign-in' };
const CALLBACK_ERRORS = {
	invalid_state: 'The sign-in expired or was started in another browser. Try again.',
	wrong_user: 'Another account is signed in here. Sign in as the account that started and try again.',
	access_denied: 'The provider did not allow the connection.',
	not_configured: 'The integration is no longer configured. Ask an admin.',
	exchange_failed: 'The provider refused the sign-in. Try again.',
};
const PAGE = 30;

/** attempt(setError, fn, ...then): clears the error, awaits fn(), then calls each of `then` with its result; a failure goes to setError. */
async function attempt(setError, fn, ...then) {
	setError(null);
	try {
		const r = await fn();
		then.forEach((f) => f(r));
	} catch (e) {
		setError(e);
	}
}

export function IntegrationsPage() {
	useTitle('Integrations');
	const user = useStore(me);
	const admin = !!(user && user.user.isPlatformAdmin);
	const [tab, setTab] = useState('catalogue');
	const q = new URLSearchParams(location.search);
	const connected = q.get('connected');
	const failed = q.get('error');
	return (
		<main class="page integrations">
			<h1>Integrations</h1>
			{connected && <ConnectedNotice id={connected} />}
			{failed && (
				<p role="alert" class="error">
					{CALLBACK_ERRORS[failed] || 'The connection failed.'}
				</p>
			)}
			{admin && (
				<div role="tablist" aria-label="Integration sections" class="tabs">
					{[
						['catalogue', 'Catalogue'],
						['audit', 'Audit log'],
						['xray', 'xray'],
					].map(([k, label]) => (
						<button key={k} type="button" role="tab" aria-selected={tab === k} onClick={() => setTab(k)}>
							{label}
						</button>
					))}
				</div>
			)}
			{tab === 'catalogue' && <Catalogue admin={admin} user={user} />}
			{tab === 'audit' && admin && <Audit />}
			{tab === 'xray' && admin && <Xray />}
		</main>
	);
}

/** ConnectedNotice: "Connected <display name>." after the OAuth callback (the id until the name is read, or if it cannot be). */
function ConnectedNotice({ id }) {
	const [name, setName] = useState(null);
	useEffect(() => {
		getIntegration(id).then(
			(it) => setName(it && it.displayName ? it.displayName : id),
			() => setName(id),
		);
	}, [id]);
	return (
		<p role="status" class="notice">
			{name === null ? 'Connected.' : `Connected ${name}.`}
		</p>
	);
}

/** The caller's workspaces as /auth/me lists them (the personal one first). */
function workspacesOf(user) {
	return user && user.workspaces && user.workspaces.length ? user.workspaces : user && user.workspace ? [user.workspace] : [];
}

function Catalogue({ admin, user }) {
	const workspaces = workspacesOf(user);
	const [wid, setWid] = useState(workspaces.length ? workspaces[0].id : '');
	const ws = workspaces.find((w) => w.id === wid);
	const wsAdmin = !!ws && (ws.role === 'admin' || ws.role === 'owner');
	const [query, setQuery] = useState('');
	const [category, setCategory] = useState('');
	const [items, setItems] = useState(null);
	const [next, setNext] = useState(null);
	const [total, setTotal] = useState(0);
	const [error, setError] = useState(null);
	const [manage, setManage] = useState(null);

	async function load(cursor) {
		setError(null);
		try {
			const r = await listIntegrations({ limit: PAGE, q: query.trim(), category, cursor, workspaceId: wid });
			setItems((old) => (cursor && old ? old.concat(r.items) : r.items));
			setNext(r.nextCursor);
			setTotal(r.total);
		} catch (e) {
			setError(e);
		}
	}
	useEffect(() => {
		const t = setTimeout(() => load(null), 250);
		return () => clearTimeout(t);
	}, [query, category, wid]);
	const replace = (it) => setItems((old) => old.map((x) => (x.id === it.id ? it : x)));

	return (
		<section aria-label="Catalogue">
			<div class="integ-filters">
				{workspaces.length > 1 && (
					<Field label="Workspace" as="select" value={wid} onChange={(e) => setWid(e.currentTarget.value)}>
						{workspaces.map((w) => (
							<option key={w.id} value={w.id}>
								{w.name}
							</option>
						))}
					</Field>
				)}
				<Field label="Search integrations" type="search" value={query} onInput={(e) => setQuery(e.currentTarget.value)} />
				<Field label="Category" as="select" value={category} onChange={(e) => setCategory(e.currentTarget.value)}>
					<option value="">All</option>
					{['ARTIFICIAL_INTELLIGENCE', 'COMMUNICATION', 'CONTENT_AND_FILES', 'DEVELOPER_TOOLS', 'MARKETING', 'PRODUCTIVITY', 'SALES_AND_CRM'].map((c) => (
						<option key={c} value={c}>
							{c.toLowerCase().replace(/_/g, ' ')}
						</option>
					))}
				</Field>
			</div>
			<ErrorNote error={error} />
			{!items ? (
				<Loading />
			) : (
				<>
					<p class="hint" role="status">
						{total} integration{total === 1 ? '' : 's'}
					</p>
					<ul class="integ-list" aria-label="Integrations">
						{items.map((it) => (
							<Row key={it.id} it={it} admin={admin} wid={wid} wsName={ws ? ws.name : ''} wsAdmin={wsAdmin} onChanged={replace} onManage={() => setManage(it)} />
						))}
					</ul>
					{next && (
						<button type="button" class="ghost" onClick={() => load(next)}>
							Show more
						</button>
					)}
				</>
			)}
			{manage && (
				<Manage
					it={manage}
					onClose={() => setManage(null)}
					workspaces={workspaces}
					onChanged={async () => replace(await getIntegration(manage.id, wid))}
				/>
			)}
		</section>
	);
}

const WRITE_CHOICES = [
	['default', 'Default (read-only with the platform key)'],
	['read', 'Read-only (GET and HEAD)'],
	['write', 'Read and write'],
];

function Row({ it, admin, wid, wsName, wsAdmin, onChanged, onManage }) {
	const [busy, setBusy] = useState(false);
	const [error, setError] = useState(null);
	const [confirm, setConfirm] = useState(false);
	async function act(fn) {
		setBusy(true);
		setError(null);
		try {
			await fn();
			onChanged(await getIntegration(it.id, wid));
		} catch (e) {
			setError(e);
		}
		setBusy(false);
	}
	const bulk = (which, on) => act(() => setIntegrationsBulk(which, [it.id], on));
	const oauth = it.authTypes.includes('oauth2');
	const writes = it.readOnly === true ? 'read' : it.readOnly === false ? 'write' : 'default';
	const setWrites = (v) =>
		act(() => setWorkspaceIntegration(wid, it.id, { enabled: it.enabled, readOnly: v === 'read' ? true : v === 'write' ? false : null }));
	return (
		<li class="integ">
			<div class="integ-head">
				{/* the catalogue's logos live on other hosts: app_url's CSP (img-src 'self') loads none of them,
				    and a visitor's address is never sent to a third party; such an entry shows its initial */}
				{ownImage(it.logoUrl) ? (
					<img src={it.logoUrl} alt="" width="28" height="28" loading="lazy" onError={(e) => (e.currentTarget.style.visibility = 'hidden')} />
				) : (
					<span class="integ-logo" aria-hidden="true">{(it.displayName || it.id || '?').charAt(0).toUpperCase()}</span>
				)}
				<strong>{it.displayName}</strong>
				<span class={'badge ' + (it.enabled ? 'on' : '')}>{it.enabled ? 'Enabled' : it.platformEnabled ? 'Available' : 'Off'}</span>
				{it.configured && <span class="badge">Configured</span>}
				{it.connected && <span class="badge on">Connected</span>}
			</div>
			{it.description && <p class="integ-desc">{it.description}</p>}
			<p class="hint">{it.authTypes.map((a) => AUTH_NAMES[a] || a).join(', ')}</p>
			<div class="actions">
				{oauth && it.enabled && !it.connected && it.configured && (
					<a class="button" href={integrationConnectUrl(it.id, wid)} aria-label={`Connect ${it.displayName}`} title={wsName ? `For ${wsName}` : undefined}>
						Connect
					</a>
				)}
				{it.connected && (
					<button type="button" class="ghost" aria-label={`Disconnect ${it.displayName}`} disabled={busy} onClick={() => setConfirm(true)}>
						Disconnect
					</button>
				)}
				{wsAdmin && it.enabled && (
					<Field label={`Agent access to ${it.displayName}`} as="select" value={writes} disabled={busy} onChange={(e) => setWrites(e.currentTarget.value)}>
						{WRITE_CHOICES.map(([k, label]) => (
							<option key={k} value={k}>
								{label}
							</option>
						))}
					</Field>
				)}
				{admin && (
					<>
						<button type="button" class="ghost" aria-label={`${it.platformEnabled ? 'Withdraw' : 'Make available'} ${it.displayName}`} disabled={busy} onClick={() => bulk('platform-enabled', !it.platformEnabled)}>
							{it.platformEnabled ? 'Withdraw' : 'Make available'}
						</button>
						<button type="button" class="ghost" aria-label={`${it.defaultEnabled ? 'Off by default' : 'On by default'}: ${it.displayName}`} disabled={busy} onClick={() => bulk('enabled', !it.defaultEnabled)}>
							{it.defaultEnabled ? 'Off by default' : 'On by default'}
						</button>
						<button type="button" class="ghost" aria-label={`Credentials of ${it.displayName}`} onClick={onManage}>
							Credentials
						</button>
					</>
				)}
			</div>
			<ErrorNote error={error} />
			{confirm && (
				<ConfirmDialog
					title={`Disconnect ${it.displayName}?`}
					text={`The agent stops using your account for it in ${wsName || 'this workspace'}.`}
					action="Disconnect"
					danger
					onClose={() => setConfirm(false)}
					onConfirm={async () => {
						setConfirm(false);
						await act(() => disconnectIntegration(it.id, wid));
					}}
				/>
			)}
		</li>
	);
}

/** Manage: the admin's dialog of one integration's OAuth apps and platform credential; secrets are write-only. */
function Manage({ it, workspaces, onClose, onChanged }) {
	const oauth = it.authTypes.includes('oauth2');
	const types = it.authTypes.filter((a) => a === 'secret_text' || a === 'basic_auth' || a === 'custom_auth');
	return (
		<Dialog title={`Credentials of ${it.displayName}`} onClose={onClose} wide>
			{oauth && <OAuthApps it={it} onChanged={onChanged} />}
			{types.length > 0 && <Credential it={it} types={types} workspaces={workspaces} onChanged={onChanged} />}
			{!oauth && types.length === 0 && <p class="hint">This integration needs no credential.</p>}
		</Dialog>
	);
}

function OAuthApps({ it, onChanged }) {
	const [apps, setApps] = useState(null);
	const [clientId, setClientId] = useState('');
	const [secret, setSecret] = useState('');
	const [error, setError] = useState(null);
	const [saved, setSaved] = useState(null);
	const load = () => listOAuthApps(it.id).then((r) => setApps(r.items), setError);
	useEffect(() => {
		load();
	}, [it.id]);
	async function submit(e) {
		e.preventDefault();
		await attempt(
			setError,
			() => createOAuthApp({ integrationId: it.id, clientId: clientId.trim(), clientSecret: secret, scope: 'global' }),
			() => setSecret(''),
			() => setClientId(''),
			setSaved,
			load,
			onChanged,
		);
	}
	return (
		<section aria-label="OAuth app">
			<h2>OAuth app</h2>
			{apps && apps.length > 0 && (
				<ul aria-label="OAuth apps" class="plain">
					{apps.map((a) => (
						<li key={a.id}>
							{a.scope === 'global' ? 'Every workspace' : `Workspace ${a.workspaceId}`}: client ID ending in <code>{a.clientIdHint}</code>, updated{' '}
							<time dateTime={a.updatedAt} title={when(a.updatedAt)}>{ago(a.updatedAt)}</time>{' '}
							<button
								type="button"
								class="ghost danger"
								aria-label={`Delete the OAuth app ending in ${a.clientIdHint}`}
								onClick={() => attempt(setError, () => deleteOAuthApp(a.id), load, onChanged)}
							>
								Delete
							</button>
						</li>
					))}
				</ul>
			)}
			{apps && apps.length === 0 && <p class="hint">No OAuth app yet.</p>}
			<form onSubmit={submit}>
				<Field label="Client ID" value={clientId} onInput={(e) => setClientId(e.currentTarget.value)} required autocomplete="off" />
				<Field label="Client secret" type="password" value={secret} onInput={(e) => setSecret(e.currentTarget.value)} required autocomplete="new-password" />
				<button type="submit">Save OAuth app</button>
			</form>
			{saved && (
				<p role="status" class="notice">
					Saved: client ID ending in {saved.clientIdHint}.
				</p>
			)}
			<ErrorNote error={error} />
		</section>
	);
}

/** Where the platform credential may be used: every workspace, or the ids listed (one per line); saved without the secret. */
function CredentialWorkspaces({ it, stored, workspaces, onSaved }) {
	const [only, setOnly] = useState(Array.isArray(stored.workspaceIds));
	const [ids, setIds] = useState((stored.workspaceIds || []).join('\n'));
	const [error, setError] = useState(null);
	const name = (id) => (workspaces.find((w) => w.id === id) || {}).name;
	async function save(e) {
		e.preventDefault();
		const list = ids.split(/[\s,]+/).filter(Boolean);
		await attempt(setError, () => setCredentialWorkspaces(it.id, only ? list : null), onSaved);
	}
	return (
		<form onSubmit={save} aria-label="Where the platform credential is used">
			<p>
				Used in:{' '}
				{Array.isArray(stored.workspaceIds)
					? stored.workspaceIds.length
						? stored.workspaceIds.map((id) => name(id) || id).join(', ')
						: 'no workspace'
					: 'every workspace'}
			</p>
			<label class="check">
				<input type="checkbox" checked={only} onChange={(e) => setOnly(e.currentTarget.checked)} /> Only in these workspaces
			</label>
			{only && <Field label="Workspace IDs (one per line)" as="textarea" value={ids} onInput={(e) => setIds(e.currentTarget.value)} />}
			<button type="submit">Save workspaces</button>
			<ErrorNote error={error} />
		</form>
	);
}

function Credential({ it, types, workspaces, onChanged }) {
	const [type, setType] = useState(types[0]);
	const [stored, setStored] = useState(undefined);
	const [a, setA] = useState('');
	const [b, setB] = useState('');
	const [error, setError] = useState(null);
	const load = () =>
		getCredential(it.id).then(setStored, (e) => (e.status === 404 ? setStored(null) : setError(e)));
	useEffect(() => {
		load();
	}, [it.id]);
	async function submit(e) {
		e.preventDefault();
		setError(null);
		let value = a;
		if (type === 'basic_auth') value = { username: a, password: b };
		if (type === 'custom_auth') {
			try {
				value = JSON.parse(a);
			} catch {
				setError(new Error('The fields must be a JSON object of strings.'));
				return;
			}
		}
		await attempt(
			setError,
			() => saveCredential({ integrationId: it.id, authType: type, value }),
			() => setA(''),
			() => setB(''),
			load,
			onChanged,
		);
	}
	return (
		<section aria-label="Platform credential">
			<h2>Platform credential</h2>
			{stored === undefined ? (
				<Loading />
			) : stored ? (
				<p>
					Stored: {AUTH_NAMES[stored.authType]}, updated <time dateTime={stored.updatedAt}>{ago(stored.updatedAt)}</time>.{' '}
					<button
						type="button"
						class="ghost danger"
						onClick={() => attempt(setError, () => deleteCredential(it.id), load, onChanged)}
					>
						Delete credential
					</button>
				</p>
			) : (
				<p class="hint">No platform credential.</p>
			)}
			{stored && <CredentialWorkspaces key={stored.updatedAt} it={it} stored={stored} workspaces={workspaces} onSaved={() => (load(), onChanged())} />}
			<form onSubmit={submit}>
				{types.length > 1 && (
					<Field label="Kind" as="select" value={type} onChange={(e) => setType(e.currentTarget.value)}>
						{types.map((t) => (
							<option key={t} value={t}>
								{AUTH_NAMES[t]}
							</option>
						))}
					</Field>
				)}
				{type === 'secret_text' && <Field label="API key" type="password" value={a} onInput={(e) => setA(e.currentTarget.value)} required autocomplete="new-password" />}
				{type === 'basic_auth' && (
					<>
						<Field label="Username" value={a} onInput={(e) => setA(e.currentTarget.value)} required autocomplete="off" />
						<Field label="Password" type="password" value={b} onInput={(e) => setB(e.currentTarget.value)} required autocomplete="new-password" />
					</>
				)}
				{type === 'custom_auth' && <Field label="Fields (JSON object)" as="textarea" value={a} onInput={(e) => setA(e.currentTarget.value)} required />}
				<button type="submit">Save credential</button>
			</form>
			<ErrorNote error={error} />
		</section>
	);
}

/* An audit entry's details as "name: value" lines (lists joined, null as "none"), not raw JSON. */
function Details({ details }) {
	const keys = Object.keys(details || {});
	if (!keys.length) return null;
	const show = (v) => (v === null ? 'none' : Array.isArray(v) ? v.join(', ') : String(v));
	return (
		<ul class="plain audit-details">
			{keys.map((k) => (
				<li key={k}>
					<span class="key">{k}:</span> {show(details[k])}
				</li>
			))}
		</ul>
	);
}

function Audit() {
	const [entries, setEntries] = useState(null);
	const [error, setError] = useState(null);
	useEffect(() => {
		listIntegrationAudit(100).then((r) => setEntries(r.entries), setError);
	}, []);
	if (error) return <ErrorNote error={error} />;
	if (!entries) return <Loading />;
	return (
		<table class="integ-table audit-table" aria-label="Audit log">
			<thead>
				<tr>
					<th scope="col">When</th>
					<th scope="col">Action</th>
					<th scope="col">Integration</th>
					<th scope="col">Details</th>
				</tr>
			</thead>
			<tbody>
				{entries.map((e) => (
					<tr key={e.id}>
						<td>
							<time dateTime={e.at} title={when(e.at)}>{ago(e.at)}</time>
						</td>
						<td>{e.action}</td>
						<td>{e.resourceId}</td>
						<td>
							<Details details={e.details} />
						</td>
					</tr>
				))}
			</tbody>
		</table>
	);
}

function Xray() {
	const [data, setData] = useState(null);
	const [error, setError] = useState(null);
	useEffect(() => {
		Promise.all([getXrayStats(), getXrayActive(), getXrayStuck()]).then(([s, a, k]) => setData({ s, a, k }), setError);
	}, []);
	if (error) return <ErrorNote error={error} />;
	if (!data) return <Loading />;
	const ms = (v) => (v == null ? '–' : `${v} ms`);
	return (
		<>
			<table class="integ-table" aria-label="Calls per integration">
				<thead>
					<tr>
						<th scope="col">Integration</th>
						<th scope="col">Calls (hour)</th>
						<th scope="col">Errors (hour)</th>
						<th scope="col">p50 / p95 (hour)</th>
						<th scope="col">Calls (day)</th>
						<th scope="col">p50 / p95 (day)</th>
					</tr>
				</thead>
				<tbody>
					{data.s.items.map((x) => (
						<tr key={x.integrationId}>
							<td>{x.integrationId}</td>
							<td>{x.lastHour.calls}</td>
							<td>{x.lastHour.errors}</td>
							<td>
								{ms(x.lastHour.p50Ms)} / {ms(x.lastHour.p95Ms)}
							</td>
							<td>{x.lastDay.calls}</td>
							<td>
								{ms(x.lastDay.p50Ms)} / {ms(x.lastDay.p95Ms)}
							</td>
						</tr>
					))}
				</tbody>
			</table>
			{data.s.items.length === 0 && <p class="hint">No integration calls in the last day.</p>}
			<h2>In flight</h2>
			<p class="hint">
				{data.a.items.length} running, {data.k.items.length} stuck (over {data.k.thresholdSeconds} s)
			</p>
		</>
	);
}
