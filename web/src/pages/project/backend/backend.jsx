// backend.jsx: the project page's Backend tab (docs/web.md "The Backend tab"; docs/api.md "The apps' backend: for
// builders"): the test/live switch, the quotas as meters, each declared collection as a paged table whose scalar
// cells workspace admins edit (saved per cell, a refusal shown on its cell), the end users (disable, enable, delete),
// the project's secrets (set, replace, delete; a value is never shown), the export, "Empty test data", and what to write in svc.data.json when nothing is declared. Its own chunk: the
// project page loads it with import() when the tab is first shown.
import { useRef, useState } from 'preact/hooks';
import {
	backendExportUrl,
	deleteBackendUser,
	emptyBackendTest,
	getBackend,
	listBackendRecords,
	deleteSecret,
	listBackendUsers,
	listSecrets,
	setBackendUserDisabled,
	setSecret,
	updateBackendRecord,
} from '../../../lib/api.js';
import { when } from '../../../lib/format.js';
import { ConfirmDialog, ErrorNote, Field, Loading, useAsync, useId } from '../../../ui/index.js';

const SCALAR = { string: 'text', text: 'text', number: 'number', boolean: 'checkbox', datetime: 'text' };
const PAGE = 20;
const EXAMPLE = `{
  "collections": {
    "todos": {
      "fields": {
        "title": {"type": "string", "required": true, "max": 200},
        "done": {"type": "boolean"}
      },
      "indexes": ["done"]
    }
  }
}`;

/** Backend: the tab for project `project`; `admin` (a workspace admin or owner) may change records and end users. */
export function Backend({ project, admin, writer }) {
	const [env, setEnv] = useState('test');
	const [tick, setTick] = useState(0);
	const summary = useAsync(() => getBackend(project.id), [project.id, tick]);
	const [emptying, setEmptying] = useState(false);
	const [status, setStatus] = useState('');
	const reload = () => setTick((t) => t + 1);
	if (summary.error) return <ErrorNote error={summary.error} />;
	if (!summary.data) return <Loading label="Loading the backend…" />;
	const b = summary.data;
	return (
		<div class="backend">
			<div class="backend-bar">
				<fieldset class="env-switch">
					<legend>Environment</legend>
					{[
						['test', 'Test (the preview)'],
						['live', 'Live (the published site)'],
					].map(([k, label]) => (
						<label key={k}>
							<input type="radio" name={'env-' + project.id} value={k} checked={env === k} onChange={() => setEnv(k)} /> {label}
						</label>
					))}
				</fieldset>
				<a class="button secondary" href={backendExportUrl(project.id, env)} download={`backend-${env}.json`}>
					Download export
				</a>
				{writer && env === 'test' && (
					<button type="button" class="danger" onClick={() => setEmptying(true)}>
						Empty test data
					</button>
				)}
			</div>
			<p role="status" class="status-line">
				{status}
			</p>
			<Quotas usage={b.usage[env]} quotas={b.quotas} />
			{b.collections.length === 0 ? (
				<div class="empty backend-empty">
					<p>
						No collections are declared. Declare them in <code>svc.data.json</code> at the project's root (ask the agent, or
						add the file in Files), for example:
					</p>
					<pre>{EXAMPLE}</pre>
					<p>
						The app then reads and writes them with <code>import {'{'} data {'}'} from "/_svc/client.js"</code>.
					</p>
				</div>
			) : (
				b.collections.map((c) => <Collection key={env + c.name + tick} project={project} env={env} collection={c} admin={admin} />)
			)}
			<Users key={env + tick} project={project} env={env} admin={admin} onChanged={reload} />
			<Secrets project={project} admin={admin} />
			{emptying && (
				<ConfirmDialog
					title="Empty the test data?"
					text="Every record, end user and session of the test environment (the preview's) is deleted. The live data stays."
					action="Empty test data"
					danger
					onClose={() => setEmptying(false)}
					onConfirm={async () => {
						await emptyBackendTest(project.id);
						setEmptying(false);
						setStatus('The test data was emptied.');
						reload();
					}}
				/>
			)}
		</div>
	);
}

/** Quotas: what the environment holds against SVC_APP_MAX_* as meters (a count alone when there is no limit); files and
 * their bytes once the summary has them (appfiles). */
function Quotas({ usage, quotas }) {
	const rows = [
		['records', 'Records'],
		['bytes', 'Bytes of records'],
		['users', 'End users'],
		['files', 'Files'],
		['fileBytes', 'Bytes of files'],
	].filter(([k]) => usage && usage[k] !== undefined);
	return (
		<ul class="quotas" aria-label="Quotas">
			{rows.map(([k, label]) => (
				<QuotaRow key={k} label={label} value={usage[k]} max={quotas[k]} />
			))}
		</ul>
	);
}

function QuotaRow({ label, value, max }) {
	const id = useId('q');
	return (
		<li>
			<span id={id}>{label}</span>{' '}
			{max > 0 && <meter aria-labelledby={id} min={0} max={max} value={value} low={max * 0.7} high={max * 0.9} optimum={0} />}{' '}
			<span>{max > 0 ? `${value} of ${max}` : `${value} (no limit)`}</span>
		</li>
	);
}

/** Collection: one collection's records, a page at a time (Next, Previous), with editable scalar cells for admins. */
function Collection({ project, env, collection, admin }) {
	const [cursors, setCursors] = useState([null]); // the cursor of each page shown so far
	const page = useAsync(
		() => listBackendRecords(project.id, env, collection.name, { limit: PAGE, cursor: cursors[cursors.length - 1] || undefined }),
		[project.id, env, collection.name, cursors.length],
	);
	const fields = Object.entries(collection.fields);
	const n = collection.records[env];
	return (
		<section class="collection" aria-labelledby={'coll-' + collection.name}>
			<h3 id={'coll-' + collection.name}>
				{collection.name} <span class="count">{n === 1 ? '1 record' : `${n} records`}</span>
			</h3>
			{page.error && <ErrorNote error={page.error} />}
			{!page.data && !page.error && <Loading label={`Loading ${collection.name}…`} />}
			{page.data && page.data.items.length === 0 && <p class="empty">No records in {env === 'test' ? 'the test environment' : 'the live environment'} yet.</p>}
			{page.data && page.data.items.length > 0 && (
				<div class="table-scroll" tabIndex={0} aria-label={`Records of ${collection.name}, scrollable`}>
					<table class="records">
						<caption class="sr-only">Records of {collection.name}</caption>
						<thead>
							<tr>
								<th scope="col">id</th>
								{fields.map(([f, t]) => (
									<th scope="col" key={f}>
										{f} <span class="type">{t}</span>
									</th>
								))}
								<th scope="col">owner</th>
								<th scope="col">created</th>
							</tr>
						</thead>
						<tbody>
							{page.data.items.map((r) => (
								<tr key={r.id}>
									<th scope="row">
										<code title={r.id}>{r.id.slice(0, 8)}</code>
									</th>
									{fields.map(([f, t]) => (
										<td key={f}>
											<Cell project={project} env={env} collection={collection.name} record={r} field={f} type={t} editable={admin && !!SCALAR[t]} />
										</td>
									))}
									<td>
										<code title={r.owner || ''}>{r.owner ? r.owner.slice(0, 8) : '—'}</code>
									</td>
									<td>
										<time dateTime={r.createdAt}>{when(r.createdAt)}</time>
									</td>
								</tr>
							))}
						</tbody>
					</table>
				</div>
			)}
			{page.data && (cursors.length > 1 || page.data.nextCursor) && (
				<div class="pager">
					<button type="button" class="ghost" disabled={cursors.length < 2} onClick={() => setCursors(cursors.slice(0, -1))} aria-label={`Previous page of ${collection.name}`}>
						Previous
					</button>
					<span>Page {cursors.length}</span>
					<button type="button" class="ghost" disabled={!page.data.nextCursor} onClick={() => setCursors([...cursors, page.data.nextCursor])} aria-label={`Next page of ${collection.name}`}>
						Next
					</button>
				</div>
			)}
		</section>
	);
}

/** The value of a field as its input shows it. */
function shown(v, type) {
	if (v === undefined || v === null) return '';
	if (type === 'json' || typeof v === 'object') return JSON.stringify(v);
	return String(v);
}

/** The value an input's text stands for: "" removes the field (null), numbers parsed. */
function parsed(text, type) {
	if (text === '') return null;
	if (type === 'number') return Number(text);
	return text;
}

/** Cell: one field of one record; for admins an input saved when it changes (Enter or leaving it), its error under it. */
function Cell({ project, env, collection, record, field, type, editable }) {
	const [value, setValue] = useState(record[field]);
	const [text, setText] = useState(shown(record[field], type));
	const [error, setError] = useState(null);
	const [saving, setSaving] = useState(false);
	const id = useId('cell');
	const label = `${field} of record ${record.id.slice(0, 8)}`;
	if (!editable) return <span class="cell-value">{shown(value, type)}</span>;
	const save = async (next) => {
		const before = value;
		if (next === (before === undefined ? null : before)) return;
		setSaving(true);
		if (type === 'boolean') setValue(next); // a checkbox shows its new state at once, and goes back if refused
		try {
			const r = await updateBackendRecord(project.id, env, collection, record.id, { [field]: next });
			setValue(r[field]);
			setText(shown(r[field], type));
			setError(null);
		} catch (err) {
			if (type === 'boolean') setValue(before);
			setError(err.message);
		} finally {
			setSaving(false);
		}
	};
	const common = { id, 'aria-label': label, 'aria-invalid': error ? 'true' : undefined, 'aria-describedby': error ? id + '-err' : undefined, disabled: saving };
	return (
		<div class={'cell' + (error ? ' invalid' : '')}>
			{type === 'boolean' ? (
				<input type="checkbox" {...common} checked={value === true} onChange={(e) => save(e.currentTarget.checked)} />
			) : (
				<input
					type={SCALAR[type]}
					{...common}
					value={text}
					step={type === 'number' ? 'any' : undefined}
					onInput={(e) => setText(e.currentTarget.value)}
					onKeyDown={(e) => {
						if (e.key === 'Enter') save(parsed(text, type));
						if (e.key === 'Escape') {
							setText(shown(value, type));
							setError(null);
						}
					}}
					onBlur={() => save(parsed(text, type))}
				/>
			)}
			{error && (
				<p class="error-note" id={id + '-err'} role="alert">
					{error}
				</p>
			)}
		</div>
	);
}

/** Users: the environment's end users; admins disable, enable and delete them (with a confirmation). */
function Users({ project, env, admin, onChanged }) {
	const list = useAsync(() => listBackendUsers(project.id, env).then((r) => r.items), [project.id, env]);
	const [deleting, setDeleting] = useState(null);
	const [error, setError] = useState(null);
	return (
		<section class="end-users" aria-labelledby="end-users-h">
			<h3 id="end-users-h">End users</h3>
			<ErrorNote error={list.error || error} />
			{!list.data && !list.error && <Loading label="Loading end users…" />}
			{list.data && list.data.length === 0 && <p class="empty">Nobody has signed up on {env === 'test' ? 'the preview' : 'the published site'} yet.</p>}
			{list.data && list.data.length > 0 && (
				<ul class="user-list" aria-label="End users">
					{list.data.map((u) => (
						<li key={u.id} class={u.disabled ? 'disabled' : ''}>
							<span class="email">{u.email}</span> <span class="badge">{u.disabled ? 'Disabled' : 'Active'}</span>{' '}
							<time dateTime={u.createdAt}>since {when(u.createdAt)}</time>
							{admin && (
								<span class="user-actions">
									<button
										type="button"
										class="secondary"
										aria-label={u.disabled ? `Enable ${u.email}` : `Disable ${u.email}`}
										onClick={async () => {
											try {
												const r = await setBackendUserDisabled(project.id, env, u.id, !u.disabled);
												list.setData((l) => l.map((x) => (x.id === u.id ? r : x)));
												setError(null);
											} catch (err) {
												setError(err);
											}
										}}
									>
										{u.disabled ? 'Enable' : 'Disable'}
									</button>
									<button type="button" class="danger" aria-label={`Delete ${u.email}`} onClick={() => setDeleting(u)}>
										Delete
									</button>
								</span>
							)}
						</li>
					))}
				</ul>
			)}
			{deleting && (
				<ConfirmDialog
					title={`Delete ${deleting.email}?`}
					text="The end user, their sessions and every record they own are deleted. This cannot be undone."
					action="Delete end user"
					danger
					onClose={() => setDeleting(null)}
					onConfirm={async () => {
						await deleteBackendUser(project.id, env, deleting.id);
						setDeleting(null);
						onChanged();
					}}
				/>
			)}
		</section>
	);
}

/** Secrets: the project's secret names (both environments'); admins set, replace and delete them. A value is only ever
 * typed into a password field that is emptied once saved: the API never returns one. */
function Secrets({ project, admin }) {
	const list = useAsync(() => listSecrets(project.id).then((r) => r.secrets), [project.id]);
	const [name, setName] = useState('');
	const [value, setValue] = useState('');
	const [error, setError] = useState(null);
	const [status, setStatus] = useState('');
	const [busy, setBusy] = useState(false);
	const [deleting, setDeleting] = useState(null);
	const form = useRef(null);
	return (
		<section class="secrets" aria-labelledby="secrets-h">
			<h3 id="secrets-h">Secrets</h3>
			<p class="hint">
				Values the server uses in the calls <code>svc.data.json</code> declares under <code>"fetch"</code> (
				<code>{'{{secrets.NAME}}'}</code>); they never reach the browser and are never shown again.
			</p>
			{list.error && <ErrorNote error={list.error} />}
			{list.data && list.data.length === 0 && <p class="empty">No secrets yet.</p>}
			{list.data && list.data.length > 0 && (
				<ul class="secret-list" aria-label="Secrets">
					{list.data.map((x) => (
						<li key={x.name}>
							<code>{x.name}</code> <span class="muted">set {when(x.updatedAt)}</span>
							{admin && (
								<span class="user-actions">
									<button
										type="button"
										class="secondary"
										aria-label={`Replace ${x.name}`}
										onClick={() => {
											setName(x.name);
											setValue('');
											setTimeout(() => form.current && form.current.querySelector('input[type=password]').focus(), 0);
										}}
									>
										Replace
									</button>
									<button type="button" class="danger" aria-label={`Delete ${x.name}`} onClick={() => setDeleting(x.name)}>
										Delete
									</button>
								</span>
							)}
						</li>
					))}
				</ul>
			)}
			<p role="status" class="status-line">
				{status}
			</p>
			{admin && (
				<form
					class="secret-form"
					ref={form}
					onSubmit={async (e) => {
						e.preventDefault();
						setBusy(true);
						try {
							const n = name.trim();
							await setSecret(project.id, n, value);
							setValue('');
							setName('');
							setError(null);
							setStatus(`Secret ${n} saved.`);
							list.reload();
						} catch (err) {
							setError(err);
						} finally {
							setBusy(false);
						}
					}}
				>
					<Field label="Secret name" value={name} onInput={(e) => setName(e.currentTarget.value)} required autoComplete="off" spellcheck={false} error={error && error.field === 'name' ? error.message : null} />
					<Field label="Secret value" type="password" value={value} onInput={(e) => setValue(e.currentTarget.value)} required autoComplete="new-password" error={error && error.field === 'value' ? error.message : null} />
					{error && error.field !== 'name' && error.field !== 'value' && <ErrorNote error={error} />}
					<button type="submit" class="primary" disabled={busy}>
						Save secret
					</button>
				</form>
			)}
			{deleting && (
				<ConfirmDialog
					title={`Delete the secret ${deleting}?`}
					text="Calls that use it fail until it is set again."
					action="Delete secret"
					danger
					onClose={() => setDeleting(null)}
					onConfirm={async () => {
						await deleteSecret(project.id, deleting);
						setDeleting(null);
						setStatus(`Secret ${deleting} deleted.`);
						list.reload();
					}}
				/>
			)}
		</section>
	);
}
