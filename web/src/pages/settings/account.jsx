// account.jsx: /settings/account: display name, password, connected sign-in providers,
// the coding assistant's GitHub connection, API tokens, sign out (docs/api.md "Account", "API tokens").
import { useState } from 'preact/hooks';
import { updateMe, listIdentities, changePassword, deleteIdentity, identityLinkUrl, assistantConnectUrl, listTokens, createToken, revokeToken } from '../../lib/api.js';
import { me, loadMe, signOut } from '../../lib/session.js';
import { useStore } from '../../lib/store.js';
import { navigate, query } from '../../lib/router.js';
import { ago, when } from '../../lib/format.js';
import { Dialog, Field, ErrorNote, Loading, ConfirmDialog, useAsync, useTitle, useId } from '../../ui/index.js';
import { Section, Status, useAction, sentence, spoken } from './parts.jsx';

const PROVIDER_NAMES = { github: 'GitHub', google: 'Google' };

// What the OAuth redirects put in ?error= (docs/api.md "OAuth sign-in", "GET /auth/<provider>/link").
const LINK_ERRORS = {
	access_denied: 'You declined at the provider, so nothing was connected.',
	provider_error: 'The provider reported an error. Try again.',
	exchange_failed: 'The provider did not confirm the connection. Try again.',
	profile_failed: 'Your profile could not be read from the provider.',
	identity_taken: 'That account at the provider already signs in to another svc account.',
	already_connected: 'Another account of that provider is connected already; disconnect it first.',
	invalid_state: 'The connection took too long or came from another browser. Try again.',
	session_required: 'Your session had ended. Sign in and connect again.',
	encryption_unavailable: 'This instance cannot store tokens (no encryption key is configured). Ask its operator.',
	server_error: 'svc could not finish the connection. Try again.',
};

const SCOPES = [
	['projects:read', 'Read projects, files, versions, chats and workspaces'],
	['projects:write', 'Create, change and delete projects and folders'],
	['chat', 'Send chat and plan messages'],
	['deploy', 'Publish projects'],
	['admin', 'Manage workspaces, members and AI providers'],
];

export function AccountSettings() {
	const m = useStore(me);
	useTitle('Account settings');
	return (
		<>
			<div class="dash-head">
				<h1 tabIndex={-1}>Account settings</h1>
			</div>
			<Profile m={m} />
			<SignIn m={m} />
			{m.features && m.features.oauth && m.features.oauth.github && <Assistant m={m} />}
			{(!m.features || m.features.apiTokens !== false) && <Tokens />}
			<Section title="Sign out" intro={`You are signed in as ${m.user.email}.`}>
				<button
					type="button"
					class="secondary"
					onClick={async () => {
						await signOut().catch(() => {});
						navigate('/login');
					}}
				>
					Sign out of svc
				</button>
			</Section>
		</>
	);
}

function Profile({ m }) {
	const [name, setName] = useState(m.user.displayName || '');
	const a = useAction();
	async function save(e) {
		e.preventDefault();
		await a.run(async () => {
			const r = await updateMe({ displayName: name.trim() || null });
			me.set((x) => ({ ...x, user: r.user }));
		}, 'Your name is saved.');
	}
	return (
		<Section title="Profile">
			<form onSubmit={save} class="settings-form">
				<Field label="Email" value={m.user.email} readOnly hint="The address you sign in with." />
				<Field label="Display name" autocomplete="name" maxLength={128} value={name} hint="Shown to the people you work with." error={a.error ? sentence(a.error) : null} onInput={(e) => setName(e.currentTarget.value)} />
				<div class="form-end">
					<button type="submit" class="primary" disabled={a.busy}>
						Save name
					</button>
					<Status text={a.status} />
				</div>
			</form>
		</Section>
	);
}

/** The password form and the connected providers: both are ways to sign in, and one must stay. */
function SignIn({ m }) {
	const ids = useAsync(() => listIdentities(), []);
	return (
		<>
			<Password hasPassword={ids.data ? ids.data.hasPassword : true} onSet={() => ids.reload()} />
			<Providers m={m} ids={ids} />
		</>
	);
}

function Password({ hasPassword, onSet }) {
	const [cur, setCur] = useState('');
	const [next, setNext] = useState('');
	const [again, setAgain] = useState('');
	const [mismatch, setMismatch] = useState(false);
	const a = useAction();
	async function save(e) {
		e.preventDefault();
		if (next !== again) {
			setMismatch(true);
			return;
		}
		setMismatch(false);
		const r = await a.run(
			() => changePassword(hasPassword ? { currentPassword: cur, newPassword: next } : { newPassword: next }),
			hasPassword ? 'Your password is changed. Other browsers and devices are signed out within 15 minutes.' : 'Your password is set.',
		);
		if (r) {
			setCur('');
			setNext('');
			setAgain('');
			if (!hasPassword) onSet();
		}
	}
	const err = a.error;
	const curErr = err && (err.status === 403 || err.field === 'currentPassword') ? 'This is not your current password.' : null;
	const nextErr = err && err.field === 'newPassword' ? 'Use 8 to 1024 characters.' : null;
	return (
		<Section title="Password" intro={hasPassword ? null : 'Your account has no password yet: you sign in through a provider. Set one to sign in with your e-mail address too.'}>
			<form onSubmit={save} class="settings-form">
				{hasPassword && <Field label="Current password" type="password" autocomplete="current-password" required value={cur} error={curErr} onInput={(e) => setCur(e.currentTarget.value)} />}
				<Field label="New password" type="password" autocomplete="new-password" required minLength={8} maxLength={1024} value={next} error={nextErr} hint="At least 8 characters." onInput={(e) => setNext(e.currentTarget.value)} />
				<Field label="Repeat the new password" type="password" autocomplete="new-password" required value={again} error={mismatch ? 'The two new passwords are not the same.' : null} onInput={(e) => setAgain(e.currentTarget.value)} />
				{err && !curErr && !nextErr && <ErrorNote error={sentence(err)} />}
				<div class="form-end">
					<button type="submit" class="primary" disabled={a.busy}>
						{hasPassword ? 'Change password' : 'Set password'}
					</button>
					<Status text={a.status} />
				</div>
			</form>
		</Section>
	);
}

/**
 * startFlow(url): a top-level navigation to an OAuth start of the API (it needs the session
 * cookie, which may have expired: /auth/me refreshes it first).
 */
async function startFlow(url) {
	await loadMe(true).catch(() => {});
	window.location.assign(url);
}

function Providers({ m, ids }) {
	const configured = Object.keys((m.features && m.features.oauth) || {}).filter((p) => m.features.oauth[p]);
	const items = (ids.data && ids.data.items) || [];
	const names = [...new Set([...configured, ...items.map((i) => i.provider)])];
	const [removing, setRemoving] = useState(null);
	const [status, setStatus] = useState('');
	const connected = query('connected');
	const fromLink = query('error') && query('flow') !== 'assistant' ? query('error') : null;
	const ways = items.length + (ids.data && ids.data.hasPassword ? 1 : 0);
	if (!names.length && !ids.error) return null;
	return (
		<Section title="Sign-in providers" intro="Accounts at other services that sign you in to svc.">
			{connected && PROVIDER_NAMES[connected] && !status && <Status text={`${PROVIDER_NAMES[connected]} is connected: it signs you in from now on.`} />}
			{status && <Status text={status} />}
			{fromLink && <ErrorNote error={LINK_ERRORS[fromLink] || 'The connection did not work. Try again.'} />}
			<ErrorNote error={ids.error && sentence(ids.error)} />
			{!ids.data && !ids.error ? (
				<Loading />
			) : (
				<ul class="rows" aria-label="Sign-in providers">
					{names.map((p) => {
						const id = items.find((i) => i.provider === p);
						const label = PROVIDER_NAMES[p] || p;
						return (
							<li key={p} class="row">
								<span class="row-main">
									<strong>{label}</strong>
									<span class="row-sub">{id ? `Connected${id.email ? ` as ${id.email}` : ''}` : 'Not connected'}</span>
								</span>
								{id ? (
									ways > 1 ? (
										<button type="button" class="secondary" onClick={() => setRemoving(id)}>
											Disconnect {label}
										</button>
									) : (
										<span class="row-sub">Your only way to sign in: set a password to disconnect it.</span>
									)
								) : (
									configured.includes(p) && (
										<a
											class="button secondary"
											href={identityLinkUrl(p)}
											onClick={(e) => {
												e.preventDefault();
												startFlow(e.currentTarget.href);
											}}
										>
											Connect {label}
										</a>
									)
								)}
							</li>
						);
					})}
				</ul>
			)}
			{removing && (
				<ConfirmDialog
					title={`Disconnect ${removing.name}?`}
					text={`Your ${removing.name} account will no longer sign you in to svc. You can connect it again later.`}
					action={`Disconnect ${removing.name}`}
					danger
					onClose={() => setRemoving(null)}
					onConfirm={async () => {
						await spoken(deleteIdentity(removing.provider), { 409: `${removing.name} is your only way to sign in: set a password first.` });
						setStatus(`${removing.name} is disconnected.`);
						setRemoving(null);
						if (connected) navigate('/settings/account', { replace: true, keepScroll: true });
						ids.reload();
					}}
				/>
			)}
		</Section>
	);
}

function Assistant({ m }) {
	const as = m.assistant || { connected: false };
	const done = query('assistant') === 'connected';
	const err = query('flow') === 'assistant' ? query('error') : null;
	return (
		<Section title="Coding assistant" intro="Your own GitHub connection, which the agent uses on your behalf for what needs GitHub.">
			{done && <Status text="GitHub is connected for the assistant." />}
			{err && <ErrorNote error={LINK_ERRORS[err] || 'The connection did not work. Try again.'} />}
			<p>
				{as.connected ? (
					<>
						Connected{as.login ? ` as ${as.login}` : ''}
						{as.updatedAt && (
							<>
								{' '}
								<time dateTime={as.updatedAt} title={when(as.updatedAt)}>
									{ago(as.updatedAt)}
								</time>
							</>
						)}
						.
					</>
				) : (
					'Not connected.'
				)}
			</p>
			<a
				class="button secondary"
				href={assistantConnectUrl()}
				onClick={(e) => {
					e.preventDefault();
					startFlow(e.currentTarget.href);
				}}
			>
				{as.connected ? 'Connect GitHub again' : 'Connect GitHub for the assistant'}
			</a>
		</Section>
	);
}

function Tokens() {
	const list = useAsync(() => listTokens().then((r) => r.items), []);
	const [name, setName] = useState('');
	const [scopes, setScopes] = useState(['projects:read']);
	const [created, setCreated] = useState(null);
	const [revoking, setRevoking] = useState(null);
	const [status, setStatus] = useState('');
	const a = useAction();
	const scopeHead = useId('scopes');
	async function create(e) {
		e.preventDefault();
		const t = await a.run(() => createToken({ name: name.trim(), scopes }));
		if (t) {
			const shown = { ...t };
			delete shown.token; // the list never holds the secret
			list.setData((l) => [shown, ...(l || [])]);
			setCreated(t);
			setName('');
		}
	}
	const toggle = (s, on) => setScopes((l) => (on ? [...l.filter((x) => x !== s), s] : l.filter((x) => x !== s)));
	return (
		<Section title="API tokens" intro="For scripts and CI: send one as Authorization: Bearer. A token can do what its scopes allow, and never more than you can.">
			<form onSubmit={create} class="settings-form">
				<Field label="Token name" required maxLength={128} value={name} hint="What it is for, such as “CI deploys”." error={a.error && a.error.field === 'name' ? sentence(a.error) : null} onInput={(e) => setName(e.currentTarget.value)} />
				<fieldset class="scopes" aria-describedby={a.error && a.error.field === 'scopes' ? scopeHead + '-err' : undefined}>
					<legend>Scopes</legend>
					{SCOPES.map(([s, text]) => (
						<label key={s} class="check">
							<input type="checkbox" checked={scopes.includes(s)} onChange={(e) => toggle(s, e.currentTarget.checked)} />
							<span>
								<code>{s}</code> <span class="row-sub">{text}</span>
							</span>
						</label>
					))}
				</fieldset>
				{!scopes.length && (
					<p class="error-note" id={scopeHead + '-err'}>
						Choose at least one scope.
					</p>
				)}
				{a.error && a.error.field !== 'name' && <ErrorNote error={sentence(a.error, { 409: 'You have the most tokens allowed: revoke one first.' })} />}
				<div class="form-end">
					<button type="submit" class="primary" disabled={a.busy || !scopes.length || !name.trim()}>
						Create token
					</button>
				</div>
			</form>
			<Status text={status} />
			<ErrorNote error={list.error && sentence(list.error)} />
			{!list.data ? (
				!list.error && <Loading />
			) : list.data.length === 0 ? (
				<p class="empty">No API tokens yet.</p>
			) : (
				<ul class="rows" aria-label="API tokens">
					{list.data.map((t) => (
						<li key={t.id} class="row">
							<span class="row-main">
								<strong>{t.name}</strong>
								<span class="row-sub">
									<code>{t.prefix}…</code> · {t.scopes.join(', ')}
								</span>
								<span class="row-sub">
									Created <time dateTime={t.createdAt} title={when(t.createdAt)}>{ago(t.createdAt)}</time> ·{' '}
									{t.lastUsedAt ? (
										<>
											last used <time dateTime={t.lastUsedAt} title={when(t.lastUsedAt)}>{ago(t.lastUsedAt)}</time>
										</>
									) : (
										'never used'
									)}
								</span>
							</span>
							<button type="button" class="secondary" aria-label={`Revoke ${t.name}`} onClick={() => setRevoking(t)}>
								Revoke
							</button>
						</li>
					))}
				</ul>
			)}
			{created && <NewToken t={created} onClose={() => setCreated(null)} />}
			{revoking && (
				<ConfirmDialog
					title={`Revoke ${revoking.name}?`}
					text="Scripts that use this token stop working at once. This cannot be undone."
					action="Revoke token"
					danger
					onClose={() => setRevoking(null)}
					onConfirm={async () => {
						try {
							await revokeToken(revoking.id);
						} catch (e) {
							if (e.status !== 404) throw new Error(sentence(e));
						}
						list.setData((l) => l.filter((x) => x.id !== revoking.id));
						setStatus(`${revoking.name} is revoked.`);
						setRevoking(null);
					}}
				/>
			)}
		</Section>
	);
}

/** NewToken: the secret, shown this once, with a copy button. */
function NewToken({ t, onClose }) {
	const [copied, setCopied] = useState('');
	async function copy() {
		try {
			await navigator.clipboard.writeText(t.token);
			setCopied('Copied.');
		} catch (e) {
			setCopied('Copying did not work here: select the token and copy it yourself.');
		}
	}
	return (
		<Dialog title="Your new API token" onClose={onClose} wide>
			<p>
				Copy <strong>{t.name}</strong> now and keep it somewhere safe: svc does not show it again.
			</p>
			<Field label="API token" value={t.token} readOnly class="mono" onFocus={(e) => e.currentTarget.select()} />
			<div class="form-end">
				<button type="button" class="secondary" onClick={copy}>
					Copy
				</button>
				<Status text={copied} />
			</div>
			<div class="actions">
				<button type="button" class="primary" onClick={onClose}>
					Done
				</button>
			</div>
		</Dialog>
	);
}
