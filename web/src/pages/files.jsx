// files.jsx: the project's files as a tree (role tree, WAI-ARIA APG "Tree View") and a read-only
// view of the selected file (part 2 makes it the collaborative editor).
import { useEffect, useRef, useState } from 'preact/hooks';
import { get, request, enc } from '../lib/api.js';
import { bytes } from '../lib/format.js';
import { ErrorNote, Loading, useAsync } from '../ui.jsx';

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

/** filePath(path): the API path of a project file, each segment percent-encoded. */
const fileUrl = (pid, path) => `/projects/${enc(pid)}/files/${path.split('/').map(enc).join('/')}`;

export function Files({ project, tick }) {
	const list = useAsync(() => get(`/projects/${enc(project.id)}/files`).then((r) => r.items), [project.id, tick]);
	const [selected, setSelected] = useState(null);
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

	return (
		<div class="files">
			<div class="tree-wrap">
				{list.error ? <ErrorNote error={list.error} /> : !list.data ? <Loading label="Loading files…" /> : (
					<ul role="tree" aria-label="Files" class="tree" ref={treeRef} onKeyDown={key}>
						{render(tree, 1)}
					</ul>
				)}
			</div>
			{selected && <FileView project={project} path={selected} tick={tick} size={(items.find((i) => i.path === selected) || {}).size} />}
		</div>
	);
}

function FileView({ project, path, tick, size }) {
	const file = useAsync(async () => {
		const r = await request(fileUrl(project.id, path), { raw: true, accept: '*/*' });
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
				{path} {size !== undefined && <span class="size">{bytes(size)}</span>} <span class="ro">read-only</span>
			</h3>
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
