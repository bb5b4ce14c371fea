// domains.jsx: the project's custom domains (docs/api.md "Custom domains"), opened from the publish
// area of the project page: each domain with its state, the DNS records to set, Verify and Remove;
// a form to add one. The list is reloaded every few seconds while a domain is pending.
import { useEffect, useState } from 'preact/hooks';
import { listDomains, addDomain, verifyDomain, deleteDomain } from '../../../lib/api.js';
import { ago, when } from '../../../lib/format.js';
import { ConfirmDialog, Dialog, ErrorNote, Field, Loading, useAsync } from '../../../ui/index.js';

const STATES = {
	pending_dns: 'Waiting for DNS',
	pending_verification: 'Checking HTTPS',
	active: 'Active',
	error: 'Error',
};

const pending = (d) => d.status === 'pending_dns' || d.status === 'pending_verification';

/**
 * canManageDomains(me, project): whether the signed-in user (GET /auth/me's answer) may manage the
 * project's custom domains: an owner or admin of its workspace, or a platform admin (the API's
 * SVC_ACT_DOMAINS); members do not see the controls.
 */
export function canManageDomains(m, p) {
	if (!m || !m.user || !p) return false;
	if (m.user.isPlatformAdmin) return true;
	return (m.workspaces || []).some((w) => w.id === p.workspaceId && (w.role === 'owner' || w.role === 'admin'));
}

/** Domains: the "Custom domains" button and its dialog, for project `project`. */
export function Domains({ project }) {
	const [open, setOpen] = useState(false);
	return (
		<>
			<button type="button" class="ghost" onClick={() => setOpen(true)}>
				Custom domains
			</button>
			{open && <DomainsDialog project={project} onClose={() => setOpen(false)} />}
		</>
	);
}

function DomainsDialog({ project, onClose }) {
	const list = useAsync(() => listDomains(project.id), [project.id]);
	const items = (list.data && list.data.items) || [];
	// checks asked for by hand run on the server's worker (202): id -> the checkedAt it had then
	const [checking, setChecking] = useState({});
	useEffect(() => {
		const left = {};
		for (const d of items) if (d.id in checking && d.checkedAt === checking[d.id]) left[d.id] = checking[d.id];
		if (Object.keys(left).length !== Object.keys(checking).length) setChecking(left);
	}, [list.data]);
	const anyPending = items.some(pending) || Object.keys(checking).length > 0;
	useEffect(() => {
		if (!anyPending) return undefined;
		const t = setInterval(() => list.reload(), 2000);
		return () => clearInterval(t);
	}, [anyPending]);
	return (
		<Dialog title="Custom domains" onClose={onClose} wide>
			{!project.publishedAt && <p class="hint">Publish the project before adding a custom domain.</p>}
			{list.loading && !list.data ? <Loading /> : <ErrorNote error={list.error} />}
			{items.length > 0 && (
				<ul class="domains" aria-label="Domains">
					{items.map((d) => (
						<DomainRow key={d.id} d={d} checking={d.id in checking} onChanged={() => list.reload()}
							onQueued={() => setChecking((c) => ({ ...c, [d.id]: d.checkedAt }))} />
					))}
				</ul>
			)}
			{list.data && items.length === 0 && <p class="hint">No custom domain yet.</p>}
			<AddDomain project={project} onAdded={() => list.reload()} />
		</Dialog>
	);
}

function DomainRow({ d, checking, onChanged, onQueued }) {
	const [busy, setBusy] = useState(false);
	const [error, setError] = useState(null);
	const [confirm, setConfirm] = useState(false);
	async function verify() {
		setBusy(true);
		setError(null);
		try {
			await verifyDomain(d.id);
			onQueued();
			onChanged();
		} catch (e) {
			setError(e);
		}
		setBusy(false);
	}
	return (
		<li class={'domain ' + d.status}>
			<div class="domain-head">
				<strong>{d.domain}</strong>
				<span class={'badge domain-state ' + d.status}>{STATES[d.status] || d.status}</span>
				{checking && <span class="hint" role="status">checking…</span>}
				{!checking && d.checkedAt && (
					<span class="hint">
						checked <time dateTime={d.checkedAt} title={when(d.checkedAt)}>{ago(d.checkedAt)}</time>
					</span>
				)}
			</div>
			{d.reason && <p class="domain-reason">{d.reason}</p>}
			{d.status !== 'active' && d.dnsRecords && <Records domain={d.domain} records={d.dnsRecords} />}
			<div class="actions">
				<button type="button" class="ghost" aria-label={`Verify ${d.domain}`} disabled={busy || checking} onClick={verify}>
					Verify
				</button>
				<button type="button" class="ghost danger" aria-label={`Remove ${d.domain}`} onClick={() => setConfirm(true)}>
					Remove
				</button>
			</div>
			<ErrorNote error={error} />
			{confirm && (
				<ConfirmDialog
					title={`Remove ${d.domain}?`}
					text="The site stops answering at this name."
					action="Remove"
					danger
					onClose={() => setConfirm(false)}
					onConfirm={async () => {
						await deleteDomain(d.id);
						setConfirm(false);
						onChanged();
					}}
				/>
			)}
		</li>
	);
}

/** hostname(h): `h` with a line-break opportunity after each dot, so a narrow column breaks between labels, not inside one. */
function hostname(h) {
	return h.split('.').flatMap((label, i, all) => (i < all.length - 1 ? [label + '.', <wbr key={i} />] : [label]));
}

/** Records: the DNS records to set for `domain`, one of them. */
function Records({ domain, records }) {
	return (
		<table class="dns-records" aria-label={`DNS records for ${domain}`}>
			<caption>
				{records.some((r) => r.type === 'TXT')
					? 'Set the CNAME or the A record, and the TXT record, at your DNS provider:'
					: 'Set one of these DNS records at your DNS provider:'}
			</caption>
			<thead>
				<tr>
					<th scope="col">Type</th>
					<th scope="col">Name</th>
					<th scope="col">Value</th>
				</tr>
			</thead>
			<tbody>
				{records.map((r) => (
					<tr key={r.type}>
						<td class="type">{r.type}</td>
						<td>{hostname(r.name)}</td>
						<td>
							<code>{hostname(r.value)}</code>
						</td>
					</tr>
				))}
			</tbody>
		</table>
	);
}

function AddDomain({ project, onAdded }) {
	const [name, setName] = useState('');
	const [busy, setBusy] = useState(false);
	const [error, setError] = useState(null);
	async function submit(e) {
		e.preventDefault();
		setBusy(true);
		setError(null);
		try {
			await addDomain(project.id, name.trim());
			setName('');
			onAdded();
		} catch (err) {
			setError(err);
		}
		setBusy(false);
	}
	return (
		<form class="add-domain" onSubmit={submit}>
			<Field label="Domain" value={name} placeholder="myapp.example.com" autocomplete="off" spellcheck={false}
				onInput={(e) => setName(e.currentTarget.value)} hint="One label under your domain: myapp.example.com, not myapp.prod.example.com." />
			<ErrorNote error={error} />
			<div class="actions">
				<button type="submit" class="primary" disabled={busy || !name.trim()}>
					Add domain
				</button>
			</div>
		</form>
	);
}
