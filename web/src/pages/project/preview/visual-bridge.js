// visual-bridge.js: the pure parts of visual editing and design comments (no DOM, unit-tested in
// tests/web/unit/visual.test.mjs): which messages from the preview frame the app believes, which
// file a page of the preview is, and the patches of an inspector's edits (docs/web.md "Visual
// editing").

/** The tag of every message between the app and the preview's script (lib/api/preview_script.js). */
export const TAG = 'svc-preview';

const TYPES = new Set(['ready', 'select', 'point', 'hover', 'rects']);

/**
 * previewMessage(ev, frameWindow, previewUrl): the data of a message event when it comes from the
 * preview frame's script, else null. The frame is sandboxed without allow-same-origin, so its
 * origin is opaque and ev.origin is "null" for every page it shows (the preview's and any other);
 * what tells the preview apart is ev.source, which must be the frame's window (another window,
 * another frame, the app itself never is). ev.origin must be "null" or the preview URL's own
 * origin (the frame without its sandbox), and the data must have the script's shape. Even then it
 * is only data of the project's own page (its scripts share the frame): shown as text, never run.
 */
export function previewMessage(ev, frameWindow, previewUrl) {
	if (!ev || !frameWindow || ev.source !== frameWindow) return null;
	let origin = null;
	try {
		origin = new URL(previewUrl).origin;
	} catch (e) {
		return null;
	}
	if (ev.origin !== 'null' && ev.origin !== origin) return null;
	const d = ev.data;
	if (!d || typeof d !== 'object' || d.svc !== TAG || d.v !== 1 || !TYPES.has(d.type)) return null;
	return d;
}

/**
 * frameSandbox(previewUrl, appOrigin): the preview iframe's sandbox attribute, or null when the preview must not
 * be framed. The preview is on an origin of its own (<token>.preview.<SVC_DOMAIN>, never app_url's), so it gets
 * allow-same-origin: its scripts run with that origin, not the app's (a frame of another origin cannot reach its
 * parent's DOM, so it cannot lift its own sandbox either), and its calls to the app's backend under /_svc/ carry
 * that Origin and its cookie (docs/security.md "The preview frame"). Everything else stays sandboxed: no top
 * navigation, no downloads. A preview URL that is not http(s) or whose origin is appOrigin is never framed.
 */
export function frameSandbox(previewUrl, appOrigin) {
	let u;
	try {
		u = new URL(previewUrl);
	} catch (e) {
		return null;
	}
	if ((u.protocol !== 'http:' && u.protocol !== 'https:') || u.origin === appOrigin) return null;
	return 'allow-scripts allow-forms allow-popups allow-modals allow-same-origin';
}

/** frameTarget(previewUrl): the origin the app's messages to the frame are for (a page the preview navigated to elsewhere gets none); null for a malformed URL. */
export function frameTarget(previewUrl) {
	try {
		return new URL(previewUrl).origin;
	} catch (e) {
		return null;
	}
}

/** toFrame(type, fields): a message of the app for the preview's script. */
export function toFrame(type, fields = {}) {
	return { ...fields, svc: TAG, v: 1, type };
}

const str = (v, max = 100000) => (typeof v === 'string' ? v.slice(0, max) : null);

/** rectOf(v): [x, y, width, height] of finite numbers, or null. */
export function rectOf(v) {
	if (!Array.isArray(v) || v.length !== 4 || !v.every((n) => typeof n === 'number' && Number.isFinite(n))) return null;
	return v;
}

const STYLE_KEYS = ['color', 'background', 'font-size', 'font-weight', 'margin', 'padding', 'text-align'];

/** element(v): the script's description of an element, every field checked and clipped; null when malformed. */
export function element(v) {
	if (!v || typeof v !== 'object' || typeof v.selector !== 'string' || !v.selector || v.selector.length > 1000) return null;
	const computed = {};
	for (const k of STYLE_KEYS) computed[k] = str(v.computed && v.computed[k], 200) || '';
	return {
		selector: v.selector,
		tag: (str(v.tag, 64) || '').toLowerCase(),
		id: str(v.id, 200),
		text: str(v.text),
		className: str(v.className, 2000),
		href: str(v.href, 4000),
		src: str(v.src, 4000),
		alt: str(v.alt, 2000),
		style: str(v.style, 10000),
		computed,
		rect: rectOf(v.rect),
	};
}

/**
 * pageFile(pathname): the project file a page of the preview is (its location.pathname):
 * "/" → "index.html", "/docs/" → "docs/index.html", "/a%20b.html" → "a b.html"; null for a path
 * that is no HTML file of the project (direct save edits .html and .htm).
 */
export function pageFile(pathname) {
	if (typeof pathname !== 'string' || !pathname.startsWith('/')) return null;
	let p = pathname.slice(1);
	if (p === '' || p.endsWith('/')) p += 'index.html';
	try {
		p = p
			.split('/')
			.map((s) => decodeURIComponent(s))
			.join('/');
	} catch (e) {
		return null;
	}
	if (!/\.html?$/i.test(p) || p.split('/').some((s) => s === '' || s.startsWith('.'))) return null;
	return p;
}

/** parseStyle(text): the declarations of a style attribute, {property (lower case): value}; the last one wins. */
export function parseStyle(text) {
	const out = {};
	if (!text) return out;
	let depth = 0;
	let quote = '';
	let start = 0;
	const decl = (s) => {
		const i = s.indexOf(':');
		if (i < 0) return;
		const k = s.slice(0, i).trim().toLowerCase();
		if (k) out[k] = s.slice(i + 1).trim();
	};
	for (let i = 0; i < text.length; i++) {
		const c = text[i];
		if (quote) {
			if (c === quote) quote = '';
		} else if (c === '"' || c === "'") quote = c;
		else if (c === '(') depth++;
		else if (c === ')') depth--;
		else if (c === ';' && depth <= 0) {
			decl(text.slice(start, i));
			start = i + 1;
		}
	}
	decl(text.slice(start));
	return out;
}

/**
 * The inspector's fields: key, label (what a person and the tests see), the direct-save property,
 * and which elements have it. Style fields write one declaration of the style attribute.
 */
export const FIELDS = [
	{ key: 'text', label: 'Text', property: 'text', when: (el) => el.text !== null },
	{ key: 'className', label: 'Class', property: 'class', when: () => true },
	{ key: 'href', label: 'Link', property: 'href', when: (el) => el.tag === 'a' || el.tag === 'area' || el.href !== null },
	{ key: 'src', label: 'Image', property: 'src', when: (el) => el.tag === 'img' },
	{ key: 'alt', label: 'Alt text', property: 'alt', when: (el) => el.tag === 'img' },
	{ key: 'color', label: 'Colour', property: 'style.color', style: 'color' },
	{ key: 'background', label: 'Background', property: 'style.background', style: 'background' },
	{ key: 'fontSize', label: 'Font size', property: 'style.font-size', style: 'font-size' },
	{ key: 'fontWeight', label: 'Font weight', property: 'style.font-weight', style: 'font-weight' },
	{ key: 'margin', label: 'Margin', property: 'style.margin', style: 'margin' },
	{ key: 'padding', label: 'Padding', property: 'style.padding', style: 'padding' },
	{ key: 'textAlign', label: 'Text alignment', property: 'style.text-align', style: 'text-align' },
];

/** fieldsOf(el): the fields the inspector shows for element el. */
export function fieldsOf(el) {
	return FIELDS.filter((f) => f.style || f.when(el));
}

/** valuesOf(el): the fields' values as the file has them (style ones from its style attribute). */
export function valuesOf(el) {
	const st = parseStyle(el.style);
	const v = {};
	for (const f of fieldsOf(el)) {
		if (f.style) v[f.key] = st[f.style] || '';
		else if (f.key === 'className') v[f.key] = el.className || '';
		else v[f.key] = el[f.key] || '';
	}
	return v;
}

/**
 * patchesOf(el, before, after): the direct-save patches for the fields whose value changed, in the
 * order of FIELDS: [{selector, property, value}], and beside them (same index) the field of each.
 */
export function patchesOf(el, before, after) {
	const patches = [];
	const fields = [];
	for (const f of fieldsOf(el)) {
		const a = after[f.key];
		if (a === undefined || a === before[f.key]) continue;
		patches.push({ selector: el.selector, property: f.property, value: f.style ? a.trim() : a });
		fields.push(f);
	}
	return { patches, fields };
}

/**
 * saveError(err, fields): what a refused save says, as {key, text}: for a 422 with patchIndex,
 * which change failed and why ("Change 2 of 2 (Link) was refused: …"), and the field's key;
 * otherwise the error's message and no key.
 */
export function saveError(err, fields) {
	const body = err && err.body;
	const i = body && Number.isInteger(body.patchIndex) ? body.patchIndex : -1;
	if (err && err.status === 422 && i >= 0 && i < fields.length) {
		const why = String(body.message || '').replace(/^patch \d+:\s*/, '');
		return { key: fields[i].key, text: `Change ${i + 1} of ${fields.length} (${fields[i].label}) was refused: ${why}` };
	}
	return { key: null, text: (err && err.message) || 'The change was not saved.' };
}

/** pinAt(rect, xPercent, yPercent): where a comment's pin goes: [x, y] in the frame's viewport, or null. */
export function pinAt(rect, x, y) {
	const r = rectOf(rect);
	if (!r) return null;
	return [r[0] + (r[2] * x) / 100, r[1] + (r[3] * y) / 100];
}

// ------------------------------------------------------------------ design comments

/**
 * applyComment(map, msg): the project's comments (Map id -> comment as GET
 * /projects/:id/design-comments has them) after one of svc-wsd's type-100 messages
 * (docs/collaboration.md "Design comments"): added (a new comment, or one already known: its
 * status stays), resolved, unresolved, deleted. Returns a new Map, or the same one when the
 * message changes nothing or is not one of these.
 */
export function applyComment(map, msg) {
	if (!msg || typeof msg !== 'object') return map;
	if (msg.type === 'design-comment:added') {
		const c = msg.comment;
		if (!c || typeof c.id !== 'string' || typeof c.content !== 'string') return map;
		const old = map.get(c.id);
		const next = new Map(map);
		next.set(c.id, old ? { ...old, ...c, status: old.status, resolvedBy: old.resolvedBy, resolvedAt: old.resolvedAt } : { ...c, status: 'open', resolvedBy: null, resolvedAt: null });
		return next;
	}
	const id = msg.commentId;
	if (typeof id !== 'string' || !map.has(id)) return map;
	const next = new Map(map);
	if (msg.type === 'design-comment:resolved') next.set(id, { ...map.get(id), status: 'resolved', resolvedBy: msg.resolvedBy || null, resolvedAt: msg.resolvedAt || null });
	else if (msg.type === 'design-comment:unresolved') next.set(id, { ...map.get(id), status: 'open', resolvedBy: null, resolvedAt: null });
	else if (msg.type === 'design-comment:deleted') next.delete(id);
	else return map;
	return next;
}

const byTime = (a, b) => String(a.createdAt).localeCompare(String(b.createdAt)) || String(a.id).localeCompare(String(b.id));

/**
 * threadsOf(map): the comments as threads, oldest first: [{root, replies (oldest first), n}], n
 * the thread's number (1 for the oldest, as its pin shows). A reply belongs to the thread of its
 * top parent (a reply to a reply too); a reply whose parent was deleted is not shown (deleting a
 * comment takes its replies with it).
 */
export function threadsOf(map) {
	const all = [...map.values()].sort(byTime);
	const threads = new Map();
	for (const c of all) if (!c.parentId) threads.set(c.id, { root: c, replies: [], n: threads.size + 1 });
	for (const c of all) {
		if (!c.parentId) continue;
		let top = c;
		for (let i = 0; i < 32 && top && top.parentId; i++) top = map.get(top.parentId);
		const t = top && threads.get(top.id);
		if (t) t.replies.push(c);
	}
	return [...threads.values()];
}
