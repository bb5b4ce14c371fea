// budget.jsx: the workspace settings' Budget (the agent's spending caps and what was spent),
// Agent instructions, and every workspace's spend for platform admins (docs/api.md "Spending
// caps and instructions", docs/agent.md "Spending caps").
import { useState } from 'preact/hooks';
import { getBudget, setBudget, setMemberCaps, getAdminBudget, getInstructions, setInstructions } from '../../lib/api.js';
import { usd } from '../../lib/format.js';
import { Field, ErrorNote, Loading, useAsync } from '../../ui/index.js';
import { Section, Status, useAction, sentence } from './parts.jsx';

// [API name, label]
const CAPS = [
	['workspaceDay', 'Workspace, per day'],
	['workspaceMonth', 'Workspace, per month'],
	['memberDay', 'Each member, per day'],
	['projectDay', 'Each project, per day'],
	['tokenDay', 'Each API token, per day'],
	['turn', 'One turn'],
];
const SPENT = [
	['workspaceDay', 'The workspace today'],
	['workspaceMonth', 'The workspace this month'],
	['memberDay', 'You today'],
];

/** the form's rows from the caps as the API gives them: {cap: {limit, warn, block}} as strings and booleans */
function rowsOf(caps) {
	const rows = {};
	for (const [k] of CAPS) {
		const c = caps && caps[k];
		rows[k] = c ? { limit: String(c.limitUsd), warn: String(c.warnPercent), block: c.block } : { limit: '', warn: '80', block: true };
	}
	return rows;
}

/** the cap that holds for the caller: memberDay is their own (d.memberCap) when an admin set one */
const capOf = (d, k) => (k === 'memberDay' ? d.memberCap : d.caps[k]);

/** Budget: the caps and the spend of workspace `w`; admins and owners change the caps. */
export function Budget({ w }) {
	const b = useAsync(() => getBudget(w.id), [w.id]);
	const d = b.data;
	return (
		<Section title="Budget" intro="Caps on what the agent may spend, in US dollars (days and months in UTC). At a cap’s warning level chats show a warning; at a blocking cap no new turn starts and a running one stops.">
			<ErrorNote error={b.error && sentence(b.error)} />
			{!d ? (
				!b.error && <Loading />
			) : (
				<>
					<dl class="credit" aria-label="Spent">
						{SPENT.map(([k, label]) => (
							<div key={k}>
								<dt>{label}</dt>
								<dd>
									{usd(d.spent[k])}
									{capOf(d, k) && <span class="row-sub"> of {usd(capOf(d, k).limitUsd)}</span>}
								</dd>
							</div>
						))}
					</dl>
					{d.warnings.length > 0 && (
						<p class="budget-banner" role="note">
							{d.warnings.map((k) => CAPS.find((c) => c[0] === k)[1]).join(', ')}: at or past the warning level.
						</p>
					)}
					{d.canEdit ? <CapsForm w={w} d={d} onSaved={(nd) => b.setData(nd)} /> : <CapsList d={d} />}
					{d.canEdit && d.members && <MemberCaps w={w} d={d} onSaved={(nd) => b.setData(nd)} />}
				</>
			)}
		</Section>
	);
}

function CapsList({ d }) {
	const set = CAPS.filter(([k]) => capOf(d, k));
	return (
		<>
			{d.memberCap && d.memberCap.own && (
				<p class="hint">
					Your own daily cap in this workspace, set for you by an admin: {usd(d.memberCap.limitUsd)}
					{d.memberCap.block ? '' : ' (warns only)'}.
				</p>
			)}
			{set.length === 0 ? (
				<p class="hint">This workspace sets no spending caps.</p>
			) : (
				<ul aria-label="Spending caps">
					{set.map(([k, label]) => (
						<li key={k}>
							{k === 'memberDay' && capOf(d, k).own ? 'You, per day (set for you)' : label}: {usd(capOf(d, k).limitUsd)}
							{capOf(d, k).block ? '' : ' (warns only)'}
						</li>
					))}
				</ul>
			)}
			<p class="hint">After a turn changes files the agent checks the preview and may fix what it finds {d.fixRounds === null || d.fixRounds === undefined ? d.instanceFixRounds : Math.min(d.fixRounds, d.instanceFixRounds)} times.</p>
			<p class="hint">Workspace admins and owners change the caps.</p>
		</>
	);
}

/** the fix rounds as the form holds them: '' for the instance's */
const roundsOf = (d) => (d.fixRounds === null || d.fixRounds === undefined ? '' : String(d.fixRounds));

function CapsForm({ w, d, onSaved }) {
	const [rows, setRows] = useState(() => rowsOf(d.caps));
	const [rounds, setRounds] = useState(() => roundsOf(d));
	const a = useAction();
	const edit = (k, f, v) => setRows((r) => ({ ...r, [k]: { ...r[k], [f]: v } }));
	async function save(e) {
		e.preventDefault();
		const caps = {};
		for (const [k] of CAPS) {
			const r = rows[k];
			caps[k] = r.limit.trim() === '' ? null : { limitUsd: Number(r.limit), warnPercent: Math.round(Number(r.warn || 0)), block: r.block };
		}
		const fixRounds = rounds.trim() === '' ? null : Math.round(Number(rounds));
		const nd = await a.run(() => setBudget(w.id, caps, { fixRounds }), 'The caps are saved.');
		if (nd) {
			setRows(rowsOf(nd.caps));
			setRounds(roundsOf(nd));
			onSaved(nd);
		}
	}
	const err = a.error && (a.error.field && (a.error.field.startsWith('caps.') || a.error.field === 'fixRounds') ? a.error.message : sentence(a.error, { 403: 'Only workspace admins and owners set the caps.' }));
	return (
		<form class="settings-form" onSubmit={save}>
			<table class="budget-table">
				<thead>
					<tr>
						<th scope="col">Cap</th>
						<th scope="col">Limit in US dollars</th>
						<th scope="col">Warn at %</th>
						<th scope="col">Block</th>
					</tr>
				</thead>
				<tbody>
					{CAPS.map(([k, label]) => (
						<tr key={k}>
							<th scope="row">{label}</th>
							<td>
								<input type="number" min="0" max="99999999" step="any" aria-label={`${label}: limit in US dollars`} placeholder="none" value={rows[k].limit} onInput={(e) => edit(k, 'limit', e.currentTarget.value)} />
							</td>
							<td>
								<input type="number" min="0" max="100" step="1" aria-label={`${label}: warn at percent`} value={rows[k].warn} onInput={(e) => edit(k, 'warn', e.currentTarget.value)} />
							</td>
							<td>
								<input type="checkbox" aria-label={`${label}: block at the limit`} checked={rows[k].block} onChange={(e) => edit(k, 'block', e.currentTarget.checked)} />
							</td>
						</tr>
					))}
				</tbody>
			</table>
			{d.instanceTurnMaxUsd > 0 && <p class="hint">The instance caps every turn at {usd(d.instanceTurnMaxUsd)}.</p>}
			<Field label="Fix rounds after the preview check" type="number" min="0" max={String(d.instanceFixRounds)} step="1" placeholder={`${d.instanceFixRounds} (the instance’s)`} value={rounds} hint={`After a turn changes files the agent checks the preview; this many times it may go on to fix the errors it finds (at most ${d.instanceFixRounds}). Empty: the instance’s.`} onInput={(e) => setRounds(e.currentTarget.value)} />
			<ErrorNote error={err} />
			<div class="form-end">
				<button type="submit" class="primary" disabled={a.busy}>
					Save caps
				</button>
				<Status text={a.status} />
			</div>
			{d.today && (d.today.members.length > 0 || d.today.projects.length > 0) && (
				<p class="hint">
					Today: {d.today.members.length} member{d.today.members.length === 1 ? '' : 's'} and {d.today.projects.length} project{d.today.projects.length === 1 ? '' : 's'} spent; the most by one member {usd(Math.max(0, ...d.today.members.map((m) => m.spentUsd)))}.
				</p>
			)}
		</form>
	);
}

/** the member rows of the form from the API's members: {id: {limit, warn, block}} */
function memberRowsOf(members) {
	const rows = {};
	for (const m of members) rows[m.id] = m.cap ? { limit: String(m.cap.limitUsd), warn: String(m.cap.warnPercent), block: m.cap.block } : { limit: '', warn: '80', block: true };
	return rows;
}

/** MemberCaps: every member with their spend today and their own daily cap (empty: the workspace's per-member cap holds), for admins and owners. */
function MemberCaps({ w, d, onSaved }) {
	const [rows, setRows] = useState(() => memberRowsOf(d.members));
	const a = useAction();
	const edit = (id, f, v) => setRows((r) => ({ ...r, [id]: { ...r[id], [f]: v } }));
	const def = d.caps.memberDay;
	async function save(e) {
		e.preventDefault();
		const members = {};
		for (const m of d.members) {
			const r = rows[m.id];
			const cap = r.limit.trim() === '' ? null : { limitUsd: Number(r.limit), warnPercent: Math.round(Number(r.warn || 0)), block: r.block };
			// only the rows that changed, so one save does not rewrite every member's cap
			if (JSON.stringify(cap) !== JSON.stringify(m.cap ? { limitUsd: m.cap.limitUsd, warnPercent: m.cap.warnPercent, block: m.cap.block } : null)) members[m.id] = cap;
		}
		if (Object.keys(members).length === 0) return;
		const nd = await a.run(() => setMemberCaps(w.id, members), 'The members’ caps are saved.');
		if (nd) {
			setRows(memberRowsOf(nd.members));
			onSaved(nd);
		}
	}
	const err = a.error && (a.error.field && a.error.field.startsWith('members') ? a.error.message : sentence(a.error, { 403: 'Only workspace admins and owners set the caps.' }));
	return (
		<form class="settings-form" onSubmit={save}>
			<table class="budget-table" aria-label="Members’ spend and caps">
				<thead>
					<tr>
						<th scope="col">Member</th>
						<th scope="col">Spent today</th>
						<th scope="col">Own daily cap in US dollars</th>
						<th scope="col">Warn at %</th>
						<th scope="col">Block</th>
					</tr>
				</thead>
				<tbody>
					{d.members.map((m) => {
						const who = m.name || m.email;
						return (
							<tr key={m.id}>
								<th scope="row">
									{who}
									<span class="row-sub"> {m.role}</span>
								</th>
								<td>{usd(m.spentUsd)}</td>
								<td>
									<input type="number" min="0" max="99999999" step="any" aria-label={`${who}: own daily cap in US dollars`} placeholder={def ? `${usd(def.limitUsd)} (workspace)` : 'none'} value={rows[m.id].limit} onInput={(e) => edit(m.id, 'limit', e.currentTarget.value)} />
								</td>
								<td>
									<input type="number" min="0" max="100" step="1" aria-label={`${who}: warn at percent`} value={rows[m.id].warn} onInput={(e) => edit(m.id, 'warn', e.currentTarget.value)} />
								</td>
								<td>
									<input type="checkbox" aria-label={`${who}: block at the cap`} checked={rows[m.id].block} onChange={(e) => edit(m.id, 'block', e.currentTarget.checked)} />
								</td>
							</tr>
						);
					})}
				</tbody>
			</table>
			<p class="hint">A member’s own cap takes the place of “Each member, per day” for them, higher or lower; empty: the workspace’s holds.</p>
			<ErrorNote error={err} />
			<div class="form-end">
				<button type="submit" class="primary" disabled={a.busy}>
					Save members’ caps
				</button>
				<Status text={a.status} />
			</div>
		</form>
	);
}

/** AgentInstructions: the workspace's instructions to the agent, put into every turn's system prompt. */
export function AgentInstructions({ w }) {
	const cur = useAsync(() => getInstructions(w.id), [w.id]);
	const [text, setText] = useState(null);
	const a = useAction();
	const d = cur.data;
	const value = text !== null ? text : d ? d.text : '';
	async function save(e) {
		e.preventDefault();
		const nd = await a.run(() => setInstructions(w.id, value), value ? 'The instructions are saved.' : 'The instructions are removed.');
		if (nd) {
			cur.setData(nd);
			setText(null);
		}
	}
	const size = new TextEncoder().encode(value).length;
	return (
		<Section title="Agent instructions" intro="What the agent should always know or do in this workspace’s projects. It reads these first in every turn, then the project’s AGENTS.md.">
			<ErrorNote error={cur.error && sentence(cur.error)} />
			{!d ? (
				!cur.error && <Loading />
			) : (
				<form class="settings-form" onSubmit={save}>
					<Field label="Instructions" as="textarea" rows={6} value={value} readOnly={!d.canEdit} hint={`${size} of ${d.maxBytes} bytes${d.canEdit ? '' : ' · workspace admins and owners change them'}`} error={a.error ? sentence(a.error, { 400: `At most ${d.maxBytes} bytes.` }) : null} onInput={(e) => setText(e.currentTarget.value)} />
					{d.canEdit && (
						<div class="form-end">
							<button type="submit" class="primary" disabled={a.busy || size > d.maxBytes}>
								Save instructions
							</button>
							<Status text={a.status} />
						</div>
					)}
				</form>
			)}
		</Section>
	);
}

/** AllSpend: every workspace's spend today and this month, for platform admins. */
export function AllSpend() {
	const r = useAsync(() => getAdminBudget(), []);
	const items = (r.data && r.data.items) || [];
	return (
		<Section title="Every workspace’s spend" intro="Platform admins see what the agent spent in each workspace.">
			<ErrorNote error={r.error && sentence(r.error)} />
			{!r.data ? (
				!r.error && <Loading />
			) : (
				<table class="budget-table" aria-label="Spend per workspace">
					<thead>
						<tr>
							<th scope="col">Workspace</th>
							<th scope="col">Today</th>
							<th scope="col">This month</th>
							<th scope="col">In all / credit</th>
						</tr>
					</thead>
					<tbody>
						{items.slice(0, 50).map((i) => (
							<tr key={i.workspaceId}>
								<th scope="row">{i.name}</th>
								<td>{usd(i.todayUsd)}</td>
								<td>{usd(i.monthUsd)}</td>
								<td>
									{usd(i.totalUsd)} / {usd(i.limitUsd)}
								</td>
							</tr>
						))}
					</tbody>
				</table>
			)}
		</Section>
	);
}
