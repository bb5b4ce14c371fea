// files.jsx: the project's files as a tree (role tree, WAI-ARIA APG "Tree View") with New file,
// Rename and Delete, and the selected file: with a room (features.collaboration), text files
// open in the collaborative editor (editor.jsx, its own chunk); otherwise, and for files the
// live document keeps out (binary, too large), a read-only view from the API.
import * as Y from 'yjs';
import { useEffect, useRef, useState } from 'preact/hooks';
import { listProjectFiles, readFile, saveFile, renameFile, deleteFile } from '../../../lib/api.js';
import { bytes } from '../../../lib/format.js';
import { useStore } from '../../../lib/store.js';
import { useRoom } from '../../../lib/room.js';
import { ConfirmDialog, Dialog, ErrorNote, Field, Loading, useAsync } from '../../../ui/index.js';

/** buildTree(paths): nested {name, path, dir, children[]} sorted directories first, then by name. */
export function buildTree(items) {
	const root = { name: '', path: '', dir: true, children: [] };
	for (const it of items) {
		const parts = it.path.split('/');
		let node = root;
		for (let i = 0; i < parts.length; i++) {
			const path = parts.slice(0, i + 1).join('/');
			const leaf = i === parts.length - 1;
			let child = node.children.find((c) => c.name === parts[i] && c.dir === !leaf);
			if (!child) {
				child = { name: parts[i], path, dir: !leaf, children: [], size: leaf ? it.size : 0 };
				node.children.push(child);
			}
			node = child;
		}
	}
	const sort = (n) => {
		n.children.sort((a, b) => (a.dir !== b.dir ? (a.dir ? -1 : 1) : a.name.localeCompare(b.name)));
		n.children.forEach(sort);
	};
	sort(root);
	return root;
}

const TEXT = /^(text\/|application\/(json|javascript|xml|x-sh)|image\/svg\+xml)/;

/**
 * canWrite(me, project): whether the signed-in user may change the project's files: a member of
 * its workspace (any role may, docs/api.md "Permissions") or a platform admin. Anyone else sees
 * a public project read-only (svc-wsd drops their edits anyway).
 */
export function canWrite(m, p) {
	if (!m || !m.user) return false;
	if (m.user.isPlatformAdmin) return true;
	return (m.workspaces || []).some((w) => w.id === p.workspaceId);
}

export function Files({ project, tick, writable, active = true }) {
	const room = useRoom();
	// the open file (and the editor's chunks) only once the Files view has been shown
	const [shown, setShown] = useState(active);
	useEffect(() => {
		if (active) setShown(true);
	}, [active]);
	const list = useAsync(() => listProjectFiles(project.id).then((r) => r.items), [project.id, tick]);
	const [selected, setSelected] = useState(null);
	const [dialog, setDialog] = useState(null); // 'new' | 'rename' | 'delete'
	const [note, setNote] = useState('');
	const [open, setOpen] = useState(() => new Set());
	const [focus, setFocus] = useState(null);
	const treeRef = useRef(null);
	const items = list.data || [];
	useEffect(() => {
		if (!selected && items.length) {
			const first = items.find((i) => i.path === 'index.html') || items[0];
			setSelected(first.path);
		}
	}, [list.data]);
	const tree = buildTree(items);

	// The visible items in order, for arrow-key movement.
	const visible = [];
	const walk = (n, depth, parent) => {
		for (const c of n.children) {
			visible.push({ node: c, depth, parent });
			if (c.dir && open.has(c.path)) walk(c, depth + 1, c);
		}
	};
	walk(tree, 1, null);
	const focusPath = focus && visible.some((v) => v.node.path === focus) ? focus : selected && visible.some((v) => v.node.path === selected) ? selected : visible[0] && visible[0].node.path;

	function toggle(path, to) {
		setOpen((s) => {
			const n = new Set(s);
			if (to === undefined ? n.has(path) : !to) n.delete(path);
			else n.add(path);
			return n;
		});
	}
	function moveTo(path) {
		setFocus(path);
		setTimeout(() => {
			const el = treeRef.current && treeRef.current.querySelector(`[data-path="${CSS.escape(path)}"]`);
			if (el) el.focus();
		}, 0);
	}
	function key(e) {
		const i = visible.findIndex((v) => v.node.path === focusPath);
		if (i < 0) return;
		const v = visible[i];
		const k = e.key;
		if (k === 'ArrowDown' && i + 1 < visible.length) moveTo(visible[i + 1].node.path);
		else if (k === 'ArrowUp' && i > 0) moveTo(visible[i - 1].node.path);
		else if (k === 'Home') moveTo(visible[0].node.path);
		else if (k === 'End') moveTo(visible[visible.length - 1].node.path);
		else if (k === 'ArrowRight' && v.node.dir) {
			if (!open.has(v.node.path)) toggle(v.node.path, true);
			else if (v.node.children[0]) moveTo(v.node.children[0].path);
		} else if (k === 'ArrowLeft') {
			if (v.node.dir && open.has(v.node.path)) toggle(v.node.path, false);
			else if (v.parent) moveTo(v.parent.path);
		} else if (k === 'Enter' || k === ' ') {
			if (v.node.dir) toggle(v.node.path);
			else setSelected(v.node.path);
		} else if (writable && k === 'F2' && !v.node.dir) {
			setSelected(v.node.path);
			setDialog('rename');
		} else if (writable && k === 'Delete' && !v.node.dir) {
			setSelected(v.node.path);
			setDialog('delete');
		} else return;
		e.preventDefault();
	}

	const render = (n, depth) =>
		n.children.map((c) => {
			const isOpen = c.dir && open.has(c.path);
			return (
				<li
					role="treeitem"
					key={c.path}
					data-path={c.path}
					aria-label={c.path}
					aria-level={depth}
					aria-expanded={c.dir ? (isOpen ? 'true' : 'false') : undefined}
					aria-selected={c.dir ? undefined : c.path === selected ? 'true' : 'false'}
					tabIndex={c.path === focusPath ? 0 : -1}
					onClick={(e) => {
						e.stopPropagation();
						setFocus(c.path);
						if (c.dir) toggle(c.path);
						else setSelected(c.path);
					}}
				>
					<span class={'node' + (c.dir ? ' dir' : '') + (c.path === selected ? ' selected' : '')} style={{ paddingLeft: `calc(.75rem + ${depth - 1}rem)` }}>
						{c.dir ? (isOpen ? '▾ ' : '▸ ') : ''}
						{c.name}
					</span>
					{isOpen && <ul role="group">{render(c, depth + 1)}</ul>}
				</li>
			);
		});

	// after a change through the API: the list again, and the file to show
	async function changed(path, message) {
		setDialog(null);
		setNote(message);
		await list.reload();
		setSelected(path);
		if (path) {
			// its folders open, so it shows in the tree
			const parts = path.split('/');
			setOpen((o) => new Set([...o, ...parts.slice(0, -1).map((_, i) => parts.slice(0, i + 1).join('/'))]));
			moveTo(path);
		}
	}
	const sel = selected && items.find((i) => i.path === selected);

	return (
		<div class="files">
			<div class="tree-wrap">
				{writable && (
					<div class="tree-tools" role="toolbar" aria-label="File actions">
						<button type="button" onClick={() => setDialog('new')}>
							New file
						</button>
						<button type="button" onClick={() => setDialog('rename')} disabled={!sel} aria-keyshortcuts="F2">
							Rename
						</button>
						<button type="button" class="danger-text" onClick={() => setDialog('delete')} disabled={!sel} aria-keyshortcuts="Delete">
							Delete
						</button>
					</div>
				)}
				<p class="sr-only" role="status">
					{note}
				</p>
				{list.error ? <ErrorNote error={list.error} /> : !list.data ? <Loading label="Loading files…" /> : (
					<ul role="tree" aria-label="Files" class="tree" ref={treeRef} onKeyDown={key}>
						{render(tree, 1)}
					</ul>
				)}
			</div>
			{selected && shown && (room ? <LiveFile room={room} project={project} path={selected} tick={tick} size={sel && sel.size} /> : <FileView project={project} path={selected} tick={tick} size={sel && sel.size} />)}
			{dialog === 'new' && (
				<PathDialog
					title="New file"
					label="File path"
					action="Create file"
					initial={selected && selected.includes('/') ? selected.replace(/[^/]*$/, '') : ''}
					hint="A path inside the project, such as about.html or css/theme.css."
					onClose={() => setDialog(null)}
					onSubmit={async (path) => {
						const r = await saveFile(project.id, path, '');
						await changed(r.path, `Created ${r.path}.`);
					}}
				/>
			)}
			{dialog === 'rename' && sel && (
				<PathDialog
					title={`Rename ${sel.path}`}
					label="New path"
					action="Rename"
					initial={sel.path}
					onClose={() => setDialog(null)}
					onSubmit={async (path) => {
						// the API renames on disk: edits still only in the live document must be saved first
						if (room && !(await room.whenSaved(15000))) throw new Error('The file is still being saved. Try again in a moment.');
						const r = await renameFile(project.id, sel.path, path);
						await changed(r.path, `Renamed ${r.oldPath} to ${r.path}.`);
					}}
				/>
			)}
			{dialog === 'delete' && sel && (
				<ConfirmDialog
					title={`Delete ${sel.path}?`}
					text="The file is removed from the project. This is saved as a new version, so Versions can bring it back."
					action="Delete file"
					danger
					onClose={() => setDialog(null)}
					onConfirm={async () => {
						await deleteFile(project.id, sel.path);
						const rest = items.filter((i) => i.path !== sel.path);
						await changed(null, `Deleted ${sel.path}.`);
						setSelected((rest.find((i) => i.path === 'index.html') || rest[0] || {}).path || null);
					}}
				/>
			)}
		</div>
	);
}

/** PathDialog: asks for a file path (New file, Rename); shows the API's refusal in the dialog. */
function PathDialog({ title, label, action, initial, hint, onClose, onSubmit }) {
	const [value, setValue] = useState(initial || '');
	const [error, setError] = useState(null);
	const [busy, setBusy] = useState(false);
	const ref = useRef(null);
	useEffect(() => {
		const el = ref.current && ref.current.querySelector('input');
		if (el) {
			el.focus();
			el.setSelectionRange(el.value.length, el.value.length);
		}
	}, []);
	async function submit(e) {
		e.preventDefault();
		const path = value.trim().replace(/^\/+/, '');
		if (!path) return setError('Enter a file path.');
		setBusy(true);
		setError(null);
		try {
			await onSubmit(path);
		} catch (err) {
			setBusy(false);
			setError(err.status === 409 ? 'A file with this path already exists.' : err.status === 400 ? 'This path is not allowed (no “..”, no .git, no backslashes).' : err.message);
		}
	}
	return (
		<Dialog title={title} onClose={onClose}>
			<form onSubmit={submit} ref={ref}>
				<Field label={label} value={value} onInput={(e) => setValue(e.currentTarget.value)} error={error} hint={hint} autocomplete="off" spellcheck={false} required />
				<div class="actions">
					<button type="button" class="ghost" onClick={onClose}>
						Cancel
					</button>
					<button type="submit" class="primary" disabled={busy}>
						{action}
					</button>
				</div>
			</form>
		</Dialog>
	);
}

let editorChunk = null;
/** useEditorChunk(): the editor module (editor.jsx, loaded once with import()), or null while it loads. */
function useEditorChunk() {
	const [mod, setMod] = useState(null);
	const [error, setError] = useState(null);
	useEffect(() => {
		if (!editorChunk) editorChunk = import('./editor.jsx');
		let live = true;
		editorChunk.then(
			(m) => live && setMod(m),
			(e) => {
				editorChunk = null;
				if (live) setError(e);
			},
		);
		return () => {
			live = false;
		};
	}, []);
	return { mod, error };
}

/**
 * useFileText(room, path): the Y.Text of `path` in the room's document once it is synced:
 * {state: 'loading'} until the room has the document, then {state: 'text', ytext}, or
 * {state: 'binary'} for a file the document keeps out (meta.binaryFiles: binary or too
 * large), or {state: 'missing'} (not in the document: a file svc-wsd has not taken in yet;
 * it becomes 'text' when it appears).
 */
export function useFileText(room, path) {
	const [r, setR] = useState({ state: 'loading' });
	useEffect(() => {
		const files = room.doc.getMap('files');
		const meta = room.doc.getMap('meta');
		const look = () => {
			if (!room.status.get().synced) return setR({ state: 'loading' });
			const t = files.get(path);
			if (t instanceof Y.Text) return setR((o) => (o.ytext === t ? o : { state: 'text', ytext: t }));
			const bin = meta.get('binaryFiles');
			const list = Array.isArray(bin) ? bin : bin && typeof bin.toArray === 'function' ? bin.toArray() : [];
			setR({ state: list.some((b) => (typeof b === 'string' ? b : b && b.path) === path) ? 'binary' : 'missing' });
		};
		look();
		files.observe(look);
		meta.observe(look);
		const unsub = room.status.subscribe(look);
		return () => {
			files.unobserve(look);
			meta.unobserve(look);
			unsub();
		};
	}, [room, path]);
	return r;
}

/** connectionText(status): the room's state as a short sentence (role status), for the editor's header. */
export function connectionText(st) {
	if (st.state === 'connected') return st.pending ? 'Saving…' : 'Connected';
	if (st.state === 'connecting') return 'Connecting…';
	const pending = st.pending ? ' — edits pending' : '';
	if (st.state === 'reconnecting') return 'Reconnecting…' + pending;
	return (st.reason && st.reason !== 'network' ? `Offline (${st.reason})` : 'Offline') + pending;
}

/**
 * LiveFile: the selected file with a room: a text file of the document in the collaborative
 * editor (read-only for viewers), a file the document keeps out in the read-only view with a
 * note, and the connection state in the header.
 */
function LiveFile({ room, project, path, tick, size }) {
	const f = useFileText(room, path);
	const st = useStore(room.status);
	const chunk = useEditorChunk();
	const [waited, setWaited] = useState(false);
	useEffect(() => {
		setWaited(false);
		const t = setTimeout(() => setWaited(true), 4000);
		return () => clearTimeout(t);
	}, [path]);
	const why =
		f.state === 'binary'
			? 'This file is binary or too large for the live editor: it is shown read-only.'
			: waited && f.state === 'missing'
				? 'This file is not in the live document yet: it is shown read-only.'
				: waited && f.state === 'loading'
					? `The live editor is not connected (${connectionText(st).toLowerCase()}): the file is shown read-only until it is.`
					: null;
	if (why)
		return (
			<FileView project={project} path={path} tick={tick} size={size}>
				<p class="note">{why}</p>
			</FileView>
		);
	return (
		<section class="file-view editor-view" aria-label={`Contents of ${path}`}>
			<h3>
				<span class="path">{path}</span> {size !== undefined && <span class="size">{bytes(size)}</span>} {room.readOnly && <span class="ro">read-only</span>}
				<span role="status" class={'conn ' + st.state + (st.pending ? ' pending' : '')}>
					{connectionText(st)}
				</span>
			</h3>
			{chunk.error ? <ErrorNote error="The editor did not load. Reload the page to try again." /> : f.state !== 'text' || !chunk.mod ? <Loading label="Opening the file…" /> : (
				<chunk.mod.CodeEditor room={room} path={path} ytext={f.ytext} readOnly={room.readOnly} key={path} />
			)}
		</section>
	);
}

/** FileView: the file as the API serves it, read-only (text, an image, or a note). */
function FileView({ project, path, tick, size, children }) {
	const file = useAsync(async () => {
		const r = await readFile(project.id, path);
		const type = (r.headers.get('Content-Type') || '').split(';')[0];
		if (TEXT.test(type) || /\.(txt|md|js|mjs|css|html?|json|svg|ts|jsx|tsx)$/i.test(path)) return { type, text: await r.text() };
		if (type.startsWith('image/')) return { type, url: URL.createObjectURL(await r.blob()) };
		return { type };
	}, [project.id, path, tick]);
	useEffect(() => () => file.data && file.data.url && URL.revokeObjectURL(file.data.url), [file.data]);
	const f = file.data;
	return (
		<section class="file-view" aria-label={`Contents of ${path}`}>
			<h3>
				<span class="path">{path}</span> {size !== undefined && <span class="size">{bytes(size)}</span>} <span class="ro">read-only</span>
			</h3>
			{children}
			{file.error ? <ErrorNote error={file.error} /> : !f ? <Loading /> : f.text !== undefined ? (
				<pre class="code" tabIndex={0}>
					<code>{f.text}</code>
				</pre>
			) : f.url ? (
				<img class="file-image" src={f.url} alt={path} />
			) : (
				<p>This file cannot be shown here ({f.type || 'binary'}).</p>
			)}
		</section>
	);
}
