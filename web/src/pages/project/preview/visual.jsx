// visual.jsx: the Preview panel (the sandboxed frame on the project's preview origin), its bridge
// to the preview's script, and visual editing: Edit visually, the inspector, Save through
// POST /direct-save/:projectId and Undo (docs/web.md "Preview", "Visual editing").
import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { getPreview, directSave, listVersions, checkoutVersion, ApiError } from '../../../lib/api.js';
import { ErrorNote, Field, Loading } from '../../../ui/index.js';
import { pointAt } from '../chat/pointed.js';
import { previewMessage, toFrame, frameSandbox, frameTarget, element, rectOf, pageFile, fieldsOf, valuesOf, patchesOf, saveError, threadsOf } from './visual-bridge.js';
import { useDesignComments, Pins, CommentsPanel } from './comments.jsx';

/** trackOf(page, c): the selectors whose boxes the script reports on `page`: the selected element, the open threads' anchors, the comment being written. */
function trackOf(page, c) {
	const out = new Set();
	if (c.selected && c.selected.el && c.selected.page === page) out.add(c.selected.el.selector);
	for (const t of c.threads) if (t.root.status !== 'resolved' && (t.root.pagePath || '/') === page) out.add(t.root.selector || 'html');
	if (c.draft && c.draft.page === page && c.draft.selector) out.add(c.draft.selector);
	return [...out];
}

/** samePage(url, path): the preview URL with the path of the page the frame showed; the URL itself when that path would leave its origin. */
function samePage(url, path) {
	try {
		const u = new URL(path, url);
		return u.origin === new URL(url).origin ? u.href : url;
	} catch (e) {
		return url;
	}
}

/**
 * Preview: the working tree in a sandboxed iframe on the project's preview origin
 * (http://<token>.preview.<SVC_DOMAIN>:<port>/, from GET /projects/:id/preview). The URL is
 * fetched again shortly before it expires and whenever files changed (tick), which also
 * reloads the frame (not for a dev server's preview: its page takes changes in by HMR). The frame never gets app_url's origin or cookies: the token in the
 * host name is its only authority. It runs with its own origin (allow-same-origin, frameSandbox()), so the app's
 * backend under /_svc/ works in it; a URL on app_url's origin is never framed.
 * The preview's script (lib/api/preview_script.js) reports clicks and element boxes by
 * postMessage; this draws the outlines over the frame and shows the inspector.
 * onChanged(): files changed here (a visual edit, its undo); writer: the user may change the
 * project (Edit visually is offered).
 */
/** The frame's mode for the app's: Select element (point) picks like Edit visually (select). */
const frameMode = (m) => (m === 'point' ? 'select' : m);

export function Preview({ project, tick, onUrl, onChanged = () => {}, writer = false }) {
	const [state, setState] = useState({ url: null, expiresAt: null, error: null });
	const [n, setN] = useState(0); // the frame's key: a new value reloads it
	const [mode, setMode] = useState('off'); // what a click in the frame does: off, select, comment
	const [showComments, setShowComments] = useState(false); // the Comments panel without Comment mode
	const [draft, setDraft] = useState(null); // {page, selector, xPercent, yPercent, rect}: a comment being written
	const [focus, setFocus] = useState(null); // the thread a pin opened
	const comments = useDesignComments(project);
	const threads = useMemo(() => threadsOf(comments.comments), [comments.comments]);
	const [frame, setFrame] = useState({ ready: false, page: null }); // the script answered; the page it is on
	const [selected, setSelected] = useState(null); // {el, page, rev}: the element in the inspector
	const [hover, setHover] = useState(null);
	const [rects, setRects] = useState(new Map()); // selector -> rect, of the tracked elements
	const [lastEdit, setLastEdit] = useState(null); // {sha, file}: the visual edit Undo takes back
	const timer = useRef(0);
	const frameEl = useRef(null);
	const cur = useRef({}); // the values the message handler reads
	const answered = useRef(false); // a "ready" since the frame's last load event
	const shown = useRef('/'); // the path of the page the frame shows
	const rev = useRef(0);
	cur.current = { url: state.url, mode, selected, threads, draft, page: frame.page };
	const track = trackOf(frame.page, cur.current);

	/** load(keep): the preview URL again, and the frame reloaded; keep (a change of files, Reload preview) stays on the URL the frame has while it has more than a minute to live, so the page keeps its origin and with it an app's signed-in end user (docs/security.md "The preview frame"). */
	async function load(keep = false) {
		clearTimeout(timer.current);
		try {
			const r = await getPreview(project.id);
			const u = keep && state.url && Date.parse(state.expiresAt) - Date.now() > 60000 ? { url: state.url, expiresAt: state.expiresAt } : r;
			// a reload stays on the page the frame shows (its path; the origin is the URL's)
			setState({ url: u.url, src: samePage(u.url, shown.current), expiresAt: u.expiresAt, devServer: !!r.devServer, error: null });
			setN((x) => x + 1);
			onUrl(u.url);
			const left = Date.parse(u.expiresAt) - Date.now();
			if (left > 0) timer.current = setTimeout(load, Math.max(5000, left - 30000));
		} catch (e) {
			setState((s) => ({ ...s, error: e }));
		}
	}
	useEffect(() => {
		load();
		return () => clearTimeout(timer.current);
	}, [project.id]);
	useEffect(() => {
		// a dev server's page takes a change in by itself (HMR, docs/api.md "Preview of a package.json
		// project"): reloading the frame would lose the page's state; its URL is still renewed on time
		if (tick && !(state.devServer && state.url)) load(true);
	}, [tick]);
	useEffect(() => {
		shown.current = '/';
	}, [project.id]);

	/** send(type, fields): a message to the preview's script, for the preview's origin only (the URL the frame shows now: cur, not a stale closure's state); what goes is a mode or selectors, nothing secret. */
	function send(type, fields) {
		const w = frameEl.current && frameEl.current.contentWindow;
		const to = frameTarget(cur.current.url);
		if (w && to) w.postMessage(toFrame(type, fields), to);
	}

	useEffect(() => {
		function onMessage(ev) {
			const c = cur.current;
			const d = previewMessage(ev, frameEl.current && frameEl.current.contentWindow, c.url);
			if (!d) return;
			const page = typeof d.page === 'string' ? d.page.slice(0, 2048) : null;
			if (d.type === 'ready') {
				answered.current = true;
				if (page) shown.current = page;
				setFrame({ ready: true, page });
				setHover(null);
				send('mode', { mode: frameMode(c.mode) });
				send('track', { selectors: trackOf(page, c) });
				if (c.selected && c.selected.el && c.selected.page === page) send('pick', { selector: c.selected.el.selector });
			} else if (d.type === 'select') {
				if (c.mode === 'point' && !d.picked) {
					// Select element (issue 29): the element goes to the chat's next message
					pointAt(d.el, page);
					setMode('off');
					return;
				}
				if (c.mode !== 'select' && !d.picked) return;
				const el = element(d.el);
				if (d.picked && !el) setSelected((s) => (s ? { ...s, gone: true } : s));
				else setSelected(el ? { el, page, rev: ++rev.current } : { el: null, page, rev: ++rev.current });
			} else if (d.type === 'point') {
				if (c.mode !== 'comment' || typeof d.selector !== 'string' || !d.selector || d.selector.length > 1000) return;
				const pct = (v) => (typeof v === 'number' && v >= 0 && v <= 100 ? v : 0);
				setDraft({ page: page || '/', selector: d.selector, xPercent: pct(d.xPercent), yPercent: pct(d.yPercent), rect: rectOf(d.rect) });
			} else if (d.type === 'hover') {
				setHover(rectOf(d.rect));
			} else if (d.type === 'rects') {
				const m = new Map();
				if (Array.isArray(d.rects)) for (const r of d.rects) if (Array.isArray(r) && typeof r[0] === 'string') m.set(r[0], rectOf(r[1]));
				setRects(m);
				setHover(rectOf(d.hover));
			}
		}
		window.addEventListener('message', onMessage);
		return () => window.removeEventListener('message', onMessage);
	}, []);

	useEffect(() => send('mode', { mode: frameMode(mode) }), [mode]);
	const trackKey = track.join('\n');
	useEffect(() => send('track', { selectors: track }), [trackKey]);

	function frameLoaded() {
		if (!answered.current) {
			setFrame({ ready: false, page: null });
			setHover(null);
		}
		answered.current = false;
	}
	function toggleMode(m) {
		setMode((old) => (old === m ? 'off' : m));
		setHover(null);
		setDraft(null);
	}
	function openThread(id) {
		setShowComments(true);
		if (mode === 'select') setMode('off');
		setFocus(id);
	}
	function saved(r) {
		if (r && r.changed && r.sha) setLastEdit({ sha: r.sha, file: r.filePath });
		onChanged();
	}

	const missing = state.error instanceof ApiError && (state.error.status === 404 || state.error.status === 405);
	const sandbox = state.url ? frameSandbox(state.url, window.location.origin) : null;
	const inspecting = mode === 'select';
	const commenting = mode === 'comment';
	const side = inspecting ? 'inspector' : commenting || showComments ? 'comments' : null;
	const open = threads.filter((t) => t.root.status !== 'resolved').length;
	const selRect = selected && selected.el && selected.page === frame.page ? rects.get(selected.el.selector) || null : null;
	return (
		<div class="preview">
			<div class="preview-bar">
				<button type="button" class="ghost" onClick={() => load(true)}>
					Reload preview
				</button>
				{state.url && (
					<a href={state.url} target="_blank" rel="noopener noreferrer">
						Open preview in a new tab
					</a>
				)}
				<span class="preview-modes">
					{writer && (
						<button type="button" class="secondary" aria-pressed={inspecting ? 'true' : 'false'} onClick={() => toggleMode('select')}>
							Edit visually
						</button>
					)}
					{writer && (
						<button type="button" class="secondary" aria-pressed={mode === 'point' ? 'true' : 'false'} onClick={() => toggleMode('point')}>
							Select element
						</button>
					)}
					{writer && (
						<button type="button" class="secondary" aria-pressed={commenting ? 'true' : 'false'} onClick={() => toggleMode('comment')}>
							Comment
						</button>
					)}
					<button type="button" class="secondary" aria-pressed={side === 'comments' ? 'true' : 'false'} onClick={() => (side === 'comments' ? (setShowComments(false), setMode('off')) : openThread(null))}>
						Comments
						{open > 0 && (
							<span class="count" aria-hidden="true">
								{open}
							</span>
						)}
					</button>
				</span>
			</div>
			{missing ? (
				<p class="empty">The preview is not available on this server.</p>
			) : state.error ? (
				<ErrorNote error={state.error} />
			) : !state.url ? (
				<Loading label="Starting the preview…" />
			) : !sandbox ? (
				<p class="empty">This server's preview address is the app's own origin, where a project's page must never run: ask the operator to set SVC_DOMAIN.</p>
			) : (
				<div class={side ? 'preview-body with-side' : 'preview-body'}>
					<div class="preview-stage">
						<iframe
							key={n}
							ref={frameEl}
							title="Preview"
							src={state.src}
							sandbox={sandbox}
							referrerpolicy="no-referrer"
							class="preview-frame"
							onLoad={frameLoaded}
						/>
						<div class="preview-overlay" aria-hidden="true">
							{mode !== 'off' && hover && <Box rect={hover} kind="hover" />}
							{inspecting && selRect && <Box rect={selRect} kind="selected" />}
						</div>
						{frame.ready && <Pins threads={threads} page={frame.page} rects={rects} draft={commenting ? draft : null} onOpen={openThread} />}
					</div>
					{side === 'comments' && (
						<aside class="preview-side" aria-label="Comments">
							<CommentsPanel project={project} state={comments} threads={threads} draft={commenting ? draft : null} commenting={commenting} writer={writer} focus={focus} onDraftDone={() => setDraft(null)} />
						</aside>
					)}
					{inspecting && (
						<aside class="preview-side" aria-label="Inspector">
							<Inspector project={project} frame={frame} selected={selected && selected.page === frame.page ? selected : null} lastEdit={lastEdit} onSaved={saved} onUndone={() => { setLastEdit(null); onChanged(); }} />
						</aside>
					)}
				</div>
			)}
		</div>
	);
}

/** Box: an outline over the frame at rect [x, y, w, h] (the frame's viewport pixels). */
function Box({ rect, kind }) {
	return <div class={'hl hl-' + kind} style={{ left: rect[0] + 'px', top: rect[1] + 'px', width: rect[2] + 'px', height: rect[3] + 'px' }} />;
}

const WEIGHTS = ['', 'normal', 'bold', '100', '200', '300', '400', '500', '600', '700', '800', '900'];
const ALIGNS = ['', 'left', 'center', 'right', 'justify', 'start', 'end'];
/** optionsOf(list, value): the choices of a select, with the file's own value when it is not one of them. */
const optionsOf = (list, value) => (list.includes(value) ? list : list.concat([value]));

/**
 * Inspector: the selected element's text, class, link, image and style, as labelled fields; Save
 * sends the changed ones as one POST /direct-save/:projectId; a refused patch (422, patchIndex) is
 * shown at its field. Undo restores the version before the last visual edit.
 */
function Inspector({ project, frame, selected, lastEdit, onSaved, onUndone }) {
	const el = selected && selected.el;
	const file = frame.ready ? pageFile(frame.page) : null;
	const [before, setBefore] = useState({});
	const [values, setValues] = useState({});
	const [busy, setBusy] = useState(false);
	const [error, setError] = useState(null); // {key, text}
	const [status, setStatus] = useState('');
	useEffect(() => {
		const v = el ? valuesOf(el) : {};
		setBefore(v);
		setValues(v);
		setError(null);
	}, [selected && selected.rev]);

	const { patches, fields } = el ? patchesOf(el, before, values) : { patches: [], fields: [] };
	async function save(e) {
		e.preventDefault();
		if (!patches.length || !file) return;
		setBusy(true);
		setError(null);
		setStatus('');
		try {
			const r = await directSave(project.id, file, patches);
			setStatus(r.changed ? `Saved to ${r.filePath} as a new version (${String(r.sha).slice(0, 7)}).` : 'Nothing changed: the file already says this.');
			onSaved(r);
		} catch (err) {
			setError(saveError(err, fields));
		} finally {
			setBusy(false);
		}
	}
	async function undo() {
		setBusy(true);
		setError(null);
		try {
			const list = (await listVersions(project.id)).items || [];
			if (!list.length || list[0].sha !== lastEdit.sha) throw new Error('The project changed after this visual edit, so it cannot be undone here; restore a version in Versions instead.');
			if (list.length < 2) throw new Error('There is no version before this edit.');
			const r = await checkoutVersion(project.id, list[1].sha);
			setStatus(`Undone: the files are back as they were in ${list[1].sha.slice(0, 7)} (saved as ${String(r.sha).slice(0, 7)}).`);
			onUndone();
		} catch (err) {
			setError({ key: null, text: err.message });
		} finally {
			setBusy(false);
		}
	}

	const set = (k) => (e) => setValues((v) => ({ ...v, [k]: e.currentTarget.value }));
	const note = (k) => (error && error.key === k ? 'Refused: see above.' : undefined);
	return (
		<div class="inspector">
			<h2>Inspector</h2>
			{!frame.ready ? (
				<p class="hint">This page does not answer to visual editing: it is not an HTML page of the project, or its Content-Security-Policy blocks svc's preview script.</p>
			) : !el ? (
				<p class="hint">{selected ? 'That element cannot be edited here (it is too deeply nested).' : 'Click an element in the preview to edit it.'}</p>
			) : (
				<form onSubmit={save}>
					<p class="el-name">
						<code>&lt;{el.tag}&gt;</code> <code class="sel">{el.selector}</code>
					</p>
					{selected.gone && <p class="error-note">This element is no longer on the page.</p>}
					<ErrorNote error={error && error.text} />
					{!file && <p class="hint">This page is not an HTML file of the project, so it cannot be saved from here.</p>}
					{fieldsOf(el).map((f) =>
						f.key === 'text' ? (
							<Field key={f.key} label={f.label} as="textarea" rows={3} value={values[f.key] || ''} onInput={set(f.key)} error={note(f.key)} />
						) : f.key === 'fontWeight' || f.key === 'textAlign' ? (
							<Field key={f.key} label={f.label} as="select" value={values[f.key] || ''} onChange={set(f.key)} error={note(f.key)} hint={`Now: ${el.computed[f.style]}`}>
								{optionsOf(f.key === 'fontWeight' ? WEIGHTS : ALIGNS, values[f.key] || '').map((o) => (
									<option key={o} value={o}>
										{o || 'Not set'}
									</option>
								))}
							</Field>
						) : (
							<Field key={f.key} label={f.label} value={values[f.key] || ''} onInput={set(f.key)} error={note(f.key)} placeholder={f.style ? el.computed[f.style] : undefined} spellcheck={false} autocomplete="off" />
						),
					)}
					{el.text === null && <p class="hint">Its text is not editable here: it holds other elements (select one of them) or is not text.</p>}
					<div class="actions">
						<button type="button" class="ghost" disabled={busy || !patches.length} onClick={() => setValues(before)}>
							Discard changes
						</button>
						<button type="submit" class="primary" disabled={busy || !patches.length || !file}>
							Save
						</button>
					</div>
				</form>
			)}
			{!el && <ErrorNote error={error && error.text} />}
			{lastEdit && (
				<div class="undo">
					<button type="button" class="secondary" disabled={busy} onClick={undo}>
						Undo visual edit
					</button>
				</div>
			)}
			<p role="status" class="status-line">
				{status}
			</p>
		</div>
	);
}
