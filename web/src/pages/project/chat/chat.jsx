// chat.jsx: the project page's chat: chat switcher, mode, the timeline (paged upward), the live
// turn streamed from POST /chat/:projectId/messages (or /plan), Stop, images, plans.
import { useEffect, useRef, useState } from 'preact/hooks';
import { listChats, createChat, listChatMessages, sendChatMessage, sendPlanMessage, runPlan as startPlanRun, stopChat, ApiError, getVersionDiff, revertVersion } from '../../../lib/api.js';
import { readEventStream } from '../../../lib/sse.js';
import { renderMarkdown } from '../../../lib/markdown.js';
import { usd, when } from '../../../lib/format.js';
import { ErrorNote, Field } from '../../../ui/index.js';
import { useStore } from '../../../lib/store.js';
import { pointed } from './pointed.js';

// [mode, option label, what it does]: the label stays short so the select shows it whole at
// 390 px; what the mode does is the hint under the bar, which the select is described by.
const MODES = [
	['build', 'Build', 'The agent changes files.'],
	['plan', 'Plan', 'The agent proposes steps; Run plan carries them out.'],
	['chat', 'Chat', 'Questions and answers; no files change.'],
];
const MAX_IMAGES = 10;
const MAX_IMAGE_BYTES = 5 * 1024 * 1024;

/** errorText(code, message): what an error event or answer means, for people. */
export function errorText(code, message) {
	switch (code) {
		case 'no_provider':
			return 'No AI model is set up for this workspace yet. A workspace admin can add one, or the operator can set the instance default (SVC_AI_* settings).';
		case 'model_unavailable':
			return `The AI model is not available right now${message ? ` (${message})` : ''}. Try again in a moment.`;
		case 'credit_exhausted':
			// a spending cap names itself (docs/api.md "Spending caps and instructions")
			if (message && message.startsWith('Refused:')) return `${message} A workspace admin can change the caps under Budget in the workspace’s settings.`;
			return 'This workspace has used all of its AI credit. A platform admin can raise its limit.';
		case 'conflict':
			return 'This chat is already answering a message. Wait for it to finish, or press Stop.';
		case 'rate_limited':
			return 'Too many requests. Wait a moment and try again.';
		case 'network':
			return 'The connection to svc was lost before the answer was complete.';
		case 'payload_too_large':
			return 'The message or its images are too large (5 MB an image, 8 MB in all).';
		default:
			return message || 'Something went wrong. What was answered so far is kept; try again.';
	}
}

/** toolTarget(args): the path or pattern a tool call works on, for its one-line summary. */
function toolTarget(args) {
	if (!args || typeof args !== 'object') return '';
	return args.path || args.pattern || args.query || args.dir || '';
}

/**
 * buildTurns(events): the timeline grouped into turns, each
 * {id, user, blocks: [{kind: text|thinking|tool|note|plan|error, …}], usage, end}.
 * Consecutive deltas join; the final assistant.message only counts when no delta came.
 */
export function buildTurns(events) {
	const turns = [];
	const byId = new Map();
	for (const e of events) {
		const key = e.turnId || 'none';
		let t = byId.get(key);
		if (!t) {
			t = { id: key, user: null, blocks: [], usage: null, end: null, sawText: false, tools: new Map() };
			byId.set(key, t);
			turns.push(t);
		}
		const last = t.blocks[t.blocks.length - 1];
		switch (e.type) {
			case 'user.message':
				t.user = e;
				break;
			case 'assistant.message_delta':
				t.sawText = true;
				if (last && last.kind === 'text') last.text += e.delta || '';
				else t.blocks.push({ kind: 'text', text: e.delta || '' });
				break;
			case 'assistant.reasoning_delta':
				if (last && last.kind === 'thinking') last.text += e.delta || '';
				else t.blocks.push({ kind: 'thinking', text: e.delta || '' });
				break;
			case 'assistant.message':
				if (!t.sawText && e.text) t.blocks.push({ kind: 'text', text: e.text });
				break;
			case 'tool.call': {
				// a stored event's id is its row's; the call's own id is callId there (docs/api.md)
				const b = { kind: 'tool', id: e.callId || e.id, tool: e.tool, target: toolTarget(e.args), result: null, error: null };
				t.tools.set(b.id, b);
				t.blocks.push(b);
				break;
			}
			case 'tool.result':
			case 'tool.error': {
				let b = t.tools.get(e.callId || e.id);
				if (!b) {
					b = { kind: 'tool', id: e.id, tool: 'tool', target: '', result: null, error: null };
					t.blocks.push(b);
				}
				if (e.type === 'tool.result') b.result = typeof e.result === 'string' ? e.result : JSON.stringify(e.result);
				else b.error = typeof e.error === 'string' ? e.error : JSON.stringify(e.error);
				break;
			}
			case 'session.compaction_start':
				t.blocks.push({ kind: 'note', text: 'Summarising the earlier conversation to make room…' });
				break;
			case 'session.compaction_complete':
				t.blocks.push({ kind: 'note', text: 'Summarised the earlier conversation.' });
				break;
			case 'plan.created':
				if (e.plan) t.blocks.push({ kind: 'plan', plan: e.plan });
				break;
			// issue 29: spending caps and the loop breaker (docs/agent.md)
			case 'session.budget_warning':
				t.warning = e;
				t.blocks.push({ kind: 'note', text: e.message || 'The workspace is close to a spending cap.' });
				break;
			case 'session.budget_stopped':
				t.blocks.push({ kind: 'note', text: e.message || 'The turn stopped at a spending cap.' });
				break;
			case 'session.loop_stopped':
				t.blocks.push({
					kind: 'note',
					text: e.reason === 'repeated_call' ? `Stopped: the agent repeated the same ${e.tool || 'tool'} call ${e.count || 3} times.` : `Stopped: ${e.steps || 'several'} steps in a row changed no file.`,
				});
				break;
			// issue 29: the agent looks at its work (docs/api.md "The preview check")
			case 'check.result':
				t.blocks.push({ kind: 'check', errors: Array.isArray(e.errors) ? e.errors : [], more: e.more || 0, round: e.round || 0, screenshotUrl: e.screenshotUrl || null });
				break;
			case 'session.usage_info':
				t.usage = e;
				break;
			case 'session.task_complete':
				t.end = e;
				break;
			case 'error':
				t.blocks.push({ kind: 'error', code: e.error, text: errorText(e.error, e.message) });
				t.end = t.end || { error: true };
				break;
			default:
				break;
		}
	}
	return turns;
}

function readImage(file) {
	return new Promise((resolve, reject) => {
		const r = new FileReader();
		r.onload = () => resolve({ name: file.name, url: r.result });
		r.onerror = () => reject(r.error);
		r.readAsDataURL(file);
	});
}

let liveSeq = 0;

/** openTurn(events): true when the newest turn of a timeline has begun and not ended (and is under 15 minutes old). */
function openTurn(events) {
	const turns = buildTurns(events);
	const last = turns[turns.length - 1];
	const at = events.length ? Date.parse(events[events.length - 1].createdAt) : NaN;
	return Boolean(last && last.user && !last.end) && !(Date.now() - at > 15 * 60 * 1000);
}

export function Chat({ project, onFilesChanged }) {
	const pid = project.id;
	const [chats, setChats] = useState([]);
	const [chatId, setChatId] = useState(null);
	const [mode, setMode] = useState('build');
	const [events, setEvents] = useState(null);
	const [older, setOlder] = useState(null);
	const [text, setText] = useState('');
	const [images, setImages] = useState([]);
	const element = useStore(pointed); // the element pointed at in the preview (Select element), for the next message
	const [running, setRunning] = useState(null); // {chatId}
	const [error, setError] = useState(null);
	const [status, setStatus] = useState('');
	const logRef = useRef(null);
	const atBottom = useRef(true);
	const fileRef = useRef(null);
	const current = useRef(null);
	const fresh = useRef(null); // a chat made for the message being sent: nothing to load
	current.current = chatId;
	const chat = chats.find((c) => c.id === chatId);

	async function loadChats(select) {
		const r = await listChats(pid);
		setChats(r.items);
		if (select) setChatId(select);
		else setChatId((id) => id || (r.items[0] && r.items[0].id));
		return r.items;
	}
	useEffect(() => {
		loadChats().catch(setError);
	}, [pid]);
	useEffect(() => {
		if (chat) setMode(chat.mode);
	}, [chatId, chat && chat.mode]);
	useEffect(() => {
		if (!chatId) return undefined;
		if (fresh.current === chatId) {
			fresh.current = null;
			return undefined;
		}
		let live = true;
		setEvents(null);
		setOlder(null);
		atBottom.current = true;
		listChatMessages(pid, { chatId, limit: 50 }).then(
			(r) => {
				if (!live) return;
				setEvents(r.items);
				setOlder(r.nextCursor);
			},
			(e) => live && setError(e),
		);
		return () => (live = false);
	}, [chatId]);
	useEffect(() => {
		const el = logRef.current;
		if (el && atBottom.current) el.scrollTop = el.scrollHeight;
	}, [events]);
	// A turn this page did not start (a new project's first prompt, which svc-worker runs; another
	// tab's): while the newest turn has no end, read the timeline again every second, for as long
	// as its last event is younger than the worker's 15-minute lease.
	const elsewhere = !running && events ? openTurn(events) : false;
	useEffect(() => {
		if (!elsewhere || !chatId) return undefined;
		const id = chatId;
		const t = setTimeout(() => {
			listChatMessages(pid, { chatId: id, limit: 50 }).then(
				(r) => {
					if (current.current !== id) return;
					setEvents(r.items);
					setOlder(r.nextCursor);
					if (!openTurn(r.items) && r.items.some((e) => e.type === 'session.task_complete' && e.filesChanged)) onFilesChanged();
				},
				() => {},
			);
		}, 1000);
		return () => clearTimeout(t);
	}, [elsewhere, events, chatId]);

	async function loadOlder() {
		const el = logRef.current;
		const before = el ? el.scrollHeight - el.scrollTop : 0;
		const r = await listChatMessages(pid, { chatId, limit: 50, before: older });
		atBottom.current = false;
		setEvents((l) => [...r.items, ...(l || [])]);
		setOlder(r.nextCursor);
		requestAnimationFrame(() => el && (el.scrollTop = el.scrollHeight - before));
	}

	/** stream(targetChat, open, userEvent): runs one turn (open() starts it: the API's stream) and shows it as it arrives. */
	async function stream(targetChat, open, userEvent) {
		const turnId = `live-${++liveSeq}`;
		const push = (e) => {
			if (current.current === targetChat) setEvents((l) => [...(l || []), { ...e, turnId }]);
		};
		atBottom.current = true;
		if (userEvent) push(userEvent);
		setRunning({ chatId: targetChat });
		setStatus('The agent is working…');
		let ended = false;
		try {
			const r = await open();
			await readEventStream(r.body, (e) => {
				if (e.type === 'session.task_complete' || e.type === 'error') ended = true;
				if (e.type === 'session.task_complete' && e.filesChanged) onFilesChanged();
				push(e);
			});
			if (!ended) push({ type: 'error', error: 'network' });
		} catch (e) {
			if (e instanceof ApiError) push({ type: 'error', error: e.code, message: e.message });
			else push({ type: 'error', error: 'network' });
		}
		setRunning(null);
		setStatus('The agent finished.');
		loadChats().catch(() => {});
	}

	async function send() {
		const t = text.trim();
		if (!t || running || elsewhere) return;
		setError(null);
		let target = chatId;
		try {
			if (mode !== 'plan' && chat && chat.mode !== mode) {
				const c = await createChat(pid, mode);
				fresh.current = c.id;
				await loadChats(c.id);
				target = c.id;
				current.current = c.id;
				setEvents([]);
				setStatus(`Started a new chat in ${mode} mode.`);
			}
		} catch (e) {
			setError(e);
			return;
		}
		const attachments = images.map((i) => ({ type: 'image', url: i.url }));
		if (element) attachments.push(element);
		setText('');
		setImages([]);
		pointed.set(null);
		const body = { chatId: target, text: t, attachments: attachments.length ? attachments : null };
		const open = mode === 'plan' ? () => sendPlanMessage(pid, body) : () => sendChatMessage(pid, body);
		await stream(target, open, { type: 'user.message', text: t, attachments });
	}

	async function runPlan() {
		if (running) return;
		await stream(chatId, () => startPlanRun(pid, chatId), { type: 'user.message', text: 'Carry out the plan.', attachments: [] });
	}

	async function stop() {
		if (!running) return;
		try {
			await stopChat(pid, running.chatId);
			setStatus('Stopping…');
		} catch (e) {
			setError(e);
		}
	}

	async function newChat() {
		try {
			const c = await createChat(pid, mode === 'plan' ? 'plan' : mode);
			await loadChats(c.id);
			setStatus('Started a new chat.');
		} catch (e) {
			setError(e);
		}
	}

	async function attach(files) {
		const list = [...files].filter((f) => /^image\/(png|jpeg|webp|gif)$/.test(f.type));
		if (list.some((f) => f.size > MAX_IMAGE_BYTES)) setError(new Error('An image may be 5 MB at most.'));
		const ok = list.filter((f) => f.size <= MAX_IMAGE_BYTES).slice(0, MAX_IMAGES - images.length);
		const read = await Promise.all(ok.map(readImage));
		setImages((l) => [...l, ...read]);
	}

	const turns = events ? buildTurns(events) : [];
	let lastPlan = null;
	for (const t of turns) for (const b of t.blocks) if (b.kind === 'plan') lastPlan = b;
	const modes = chat && !MODES.some(([m]) => m === chat.mode) ? [...MODES, [chat.mode, `${chat.mode} (custom)`, '']] : MODES;
	const modeDoes = (modes.find(([m]) => m === mode) || [])[2] || '';
	const switching = chat && mode !== 'plan' && chat.mode !== mode;

	return (
		<div class="chat">
			<div class="chat-bar">
				<Field label="Chat" as="select" value={chatId || ''} onChange={(e) => setChatId(e.currentTarget.value)}>
					{chats.map((c) => (
						<option value={c.id} key={c.id}>
							{c.title} ({c.mode})
						</option>
					))}
				</Field>
				<Field label="Mode" as="select" value={mode} aria-describedby="chat-mode-hint" onChange={(e) => setMode(e.currentTarget.value)}>
					{modes.map(([m, label]) => (
						<option value={m} key={m}>
							{label}
						</option>
					))}
				</Field>
				<button type="button" class="secondary" onClick={newChat}>
					New chat
				</button>
			</div>
			<p class="hint" id="chat-mode-hint">
				{modeDoes}
				{switching && ` Sending starts a new chat in ${mode} mode.`}
			</p>
			<ErrorNote error={error} />
			<div class="log" ref={logRef} tabIndex={0} aria-label="Conversation" role="region" onScroll={(e) => {
				const el = e.currentTarget;
				atBottom.current = el.scrollHeight - el.scrollTop - el.clientHeight < 40;
			}}>
				{older && (
					<button type="button" class="ghost more" onClick={() => loadOlder().catch(setError)}>
						Load earlier messages
					</button>
				)}
				{events === null ? (
					<p class="loading">Loading the conversation…</p>
				) : turns.length === 0 ? (
					<p class="empty">Ask the agent for a change: "add a footer", "make the buttons blue"…</p>
				) : (
					<ol class="turns">
						{turns.map((t) => (
							<Turn t={t} key={t.id} plan={lastPlan} canRun={!running && chat && chat.mode === 'plan'} onRun={runPlan} pid={pid} onFilesChanged={onFilesChanged} />
						))}
					</ol>
				)}
				{((running && running.chatId === chatId) || elsewhere) && (
					<p class="working" aria-hidden="true">
						<span class="dot" /> Working…
					</p>
				)}
			</div>
			<p class="sr-only" role="status">
				{status}
			</p>
			{turns.length > 0 && turns[turns.length - 1].warning && (
				<p class="budget-banner" role="note" aria-label="Spending">
					{turns[turns.length - 1].warning.message}
				</p>
			)}
			<form
				class="composer"
				onSubmit={(e) => {
					e.preventDefault();
					send();
				}}
			>
				{element && (
					<p class="element-chip">
						<span>Element: <code>{element.selector}</code></span>{' '}
						<button type="button" class="icon" aria-label="Remove the element" onClick={() => pointed.set(null)}>
							×
						</button>
					</p>
				)}
				{images.length > 0 && (
					<ul class="attachments" aria-label="Attached images">
						{images.map((im, i) => (
							<li key={i}>
								<img src={im.url} alt={im.name} />
								<button type="button" class="icon" aria-label={`Remove ${im.name}`} onClick={() => setImages((l) => l.filter((_, j) => j !== i))}>
									×
								</button>
							</li>
						))}
					</ul>
				)}
				<Field
					label="Message"
					as="textarea"
					rows={3}
					value={text}
					placeholder="Describe a change. Enter sends, Shift+Enter starts a new line."
					onInput={(e) => setText(e.currentTarget.value)}
					onKeyDown={(e) => {
						if (e.key === 'Enter' && !e.shiftKey && !e.isComposing) {
							e.preventDefault();
							send();
						}
					}}
				/>
				<div class="composer-actions">
					<input ref={fileRef} type="file" accept="image/png,image/jpeg,image/webp,image/gif" multiple hidden onChange={(e) => {
						attach(e.currentTarget.files).catch(setError);
						e.currentTarget.value = '';
					}} />
					<button type="button" class="ghost" onClick={() => fileRef.current.click()} disabled={images.length >= MAX_IMAGES}>
						Attach image
					</button>
					{running ? (
						<button type="button" class="danger" onClick={stop}>
							Stop
						</button>
					) : (
						<button type="submit" class="primary" disabled={!text.trim() || elsewhere}>
							Send
						</button>
					)}
				</div>
			</form>
		</div>
	);
}

function Turn({ t, plan, canRun, onRun, pid, onFilesChanged }) {
	return (
		<li class="turn">
			{t.user && (
				<div class="msg user">
					<p class="who">You</p>
					<p class="text">{t.user.text}</p>
					{t.user.attachments && t.user.attachments.length > 0 && (
						<div class="thumbs">
							{t.user.attachments.map((a, i) =>
								a.type === 'element' ? (
									<span class="element-chip" key={i}>
										Element: <code>{a.selector}</code>
									</span>
								) : (
									<img src={a.url} alt={`Attached image ${i + 1}`} key={i} />
								),
							)}
						</div>
					)}
					{t.user.createdAt && <time dateTime={t.user.createdAt}>{when(t.user.createdAt)}</time>}
				</div>
			)}
			{(t.blocks.length > 0 || t.usage || t.end) && (
				<div class="msg agent">
					<p class="who">Agent</p>
					{t.blocks.map((b, i) => (
						<Block b={b} key={i} canRun={canRun && b === plan} onRun={onRun} />
					))}
					{t.end && t.end.stopped && <p class="note">Stopped.</p>}
					{t.end && t.end.filesChanged && (
						<p class="note">
							Changed files{t.end.commit ? ` (version ${String(t.end.commit).slice(0, 7)})` : ''}.
						</p>
					)}
					{t.end && t.end.filesChanged && t.end.commit && <TurnChanges pid={pid} commit={t.end.commit} onChanged={onFilesChanged} />}
					{t.usage && (
						<p class="usage">
							{t.usage.inputTokens} tokens in · {t.usage.outputTokens} out · {usd(t.usage.cost)}
						</p>
					)}
				</div>
			)}
		</li>
	);
}

/**
 * TurnChanges: under a turn that changed files, its files with +/− line counts, the unified diff
 * (expandable) and Revert this turn (a new version taking back only this one; docs/api.md
 * "POST /projects/:id/versions/:sha/revert").
 */
function TurnChanges({ pid, commit, onChanged }) {
	const [diff, setDiff] = useState(null);
	const [busy, setBusy] = useState(false);
	const [note, setNote] = useState('');
	const [error, setError] = useState(null);
	useEffect(() => {
		let live = true;
		getVersionDiff(pid, commit).then((d) => live && setDiff(d), (e) => live && setError(e.message));
		return () => (live = false);
	}, [pid, commit]);
	async function revert() {
		setBusy(true);
		setError(null);
		setNote('');
		try {
			const r = await revertVersion(pid, commit);
			setNote(`Reverted: the new version is ${String(r.sha).slice(0, 7)}.`);
			if (onChanged) onChanged();
		} catch (e) {
			setError(e.message);
		} finally {
			setBusy(false);
		}
	}
	const files = (diff && diff.files) || [];
	return (
		<div class="turn-diff">
			{files.length > 0 && (
				<ul aria-label="Files this turn changed">
					{files.map((f) => (
						<li key={f.path}>
							<code>{f.path}</code> {f.additions !== null && f.additions !== undefined ? <span class="plus">+{f.additions}</span> : null}{' '}
							{f.deletions !== null && f.deletions !== undefined ? <span class="minus">−{f.deletions}</span> : null}
							{f.binary ? ' (binary)' : ''}
						</li>
					))}
				</ul>
			)}
			{files.some((f) => f.diff) && (
				<details>
					<summary>Show the changes</summary>
					<pre>{files.map((f) => f.diff || '').join('')}</pre>
				</details>
			)}
			<button type="button" class="secondary" disabled={busy} onClick={revert}>
				Revert this turn
			</button>
			<p role="status" class="status-line">
				{note}
			</p>
			{error && (
				<p class="chat-error" role="alert">
					{error}
				</p>
			)}
		</div>
	);
}

/** checkSummary(b): the one line of a preview check: "Checked the preview: no errors", or how many. */
export function checkSummary(b) {
	const n = b.errors.length + (b.more || 0);
	const when = b.round ? ` after fix round ${b.round}` : '';
	return `Checked the preview${when}: ${n === 0 ? 'no errors' : n === 1 ? '1 error' : `${n} errors`}`;
}

/** CheckLine({b}): a check.result as one expandable line: its errors (where, what) and the screenshot. */
function CheckLine({ b }) {
	const failed = b.errors.length + (b.more || 0) > 0;
	return (
		<details class={'preview-check' + (failed ? ' failed' : ' ok')}>
			<summary>{checkSummary(b)}</summary>
			{failed && (
				<ul aria-label="Errors the preview showed">
					{b.errors.map((e, i) => (
						<li key={i}>
							<span class="check-kind">{e.kind}</span> {e.source && <code>{e.source + (e.line ? `:${e.line}` : '')}</code>} {e.message}
						</li>
					))}
					{b.more > 0 && <li>and {b.more} more</li>}
				</ul>
			)}
			{b.screenshotUrl && <img class="check-shot" src={b.screenshotUrl} alt="The preview as the check saw it" loading="lazy" />}
		</details>
	);
}

function Block({ b, canRun, onRun }) {
	switch (b.kind) {
		case 'check':
			return <CheckLine b={b} />;
		case 'text':
			return <div class="md" dangerouslySetInnerHTML={{ __html: renderMarkdown(b.text) }} />;
		case 'thinking':
			return (
				<details class="thinking">
					<summary>Thinking</summary>
					<p>{b.text}</p>
				</details>
			);
		case 'tool':
			return (
				<div class={'tool' + (b.error ? ' failed' : '')}>
					<span class="tool-name">{b.tool}</span> {b.target && <code>{b.target}</code>}{' '}
					{b.error ? <span class="tool-out">failed: {b.error}</span> : b.result !== null ? <span class="tool-out">{b.result.length > 160 ? b.result.slice(0, 160) + '…' : b.result}</span> : <span class="tool-out">…</span>}
				</div>
			);
		case 'note':
			return <p class="note">{b.text}</p>;
		case 'error':
			return (
				<p class="chat-error" role="alert">
					{b.text}
				</p>
			);
		case 'plan':
			return (
				<div class="plan">
					<h3>Plan</h3>
					<ol>
						{b.plan.steps.map((s, i) => (
							<li key={i}>
								<strong>{s.title}</strong> <span class={'risk ' + s.risk}>{s.risk} risk</span>
								{s.description && <p>{s.description}</p>}
								{s.files && s.files.length > 0 && <p class="files">Files: {s.files.join(', ')}</p>}
							</li>
						))}
					</ol>
					{canRun && (
						<button type="button" class="primary" onClick={onRun}>
							Run plan
						</button>
					)}
				</div>
			);
		default:
			return null;
	}
}
