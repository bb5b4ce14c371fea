// editor.jsx: the collaborative code editor: CodeMirror 6 bound to one file's Y.Text in the
// room's document (y-codemirror.next), with the others' cursors and selections from awareness.
// Its own chunk, loaded by files.jsx with import() when a text file is opened, so CodeMirror
// stays out of the project page's first load (docs/web.md "The code editor").
import { useEffect, useRef } from 'preact/hooks';
import { EditorState, Compartment } from '@codemirror/state';
import { EditorView, keymap, lineNumbers, highlightActiveLine, highlightActiveLineGutter, drawSelection, highlightSpecialChars } from '@codemirror/view';
import { defaultKeymap, indentWithTab } from '@codemirror/commands';
import { syntaxHighlighting, defaultHighlightStyle, indentOnInput, bracketMatching } from '@codemirror/language';
import * as Y from 'yjs';
import { yCollab, yUndoManagerKeymap } from 'y-codemirror.next';

/**
 * languageFor(path): a promise of the CodeMirror language support for a file by its extension
 * (HTML, CSS, JavaScript/TypeScript with JSX, JSON, Markdown), or of null (plain text). Each
 * language is a chunk of its own, loaded the first time a file of its kind is opened.
 */
export function languageFor(path) {
	const ext = ((path.match(/\.([a-z0-9]+)$/i) || [])[1] || '').toLowerCase();
	const js = (opts) => import('@codemirror/lang-javascript').then((m) => m.javascript(opts));
	switch (ext) {
		case 'html':
		case 'htm':
		case 'svg':
			return import('@codemirror/lang-html').then((m) => m.html());
		case 'css':
			return import('@codemirror/lang-css').then((m) => m.css());
		case 'js':
		case 'mjs':
		case 'cjs':
			return js();
		case 'jsx':
			return js({ jsx: true });
		case 'ts':
		case 'mts':
			return js({ typescript: true });
		case 'tsx':
			return js({ typescript: true, jsx: true });
		case 'json':
			return import('@codemirror/lang-json').then((m) => m.json());
		case 'md':
		case 'markdown':
			return import('@codemirror/lang-markdown').then((m) => m.markdown());
		default:
			return Promise.resolve(null);
	}
}

const theme = EditorView.theme({
	'&': { height: '100%', fontSize: '13px' },
	'.cm-scroller': { fontFamily: 'ui-monospace, SFMono-Regular, Menlo, Consolas, monospace', lineHeight: '1.5' },
	'.cm-content': { padding: '.9rem 0 .5rem' }, // room for a name above the first line
	'.cm-gutters': { background: 'var(--panel, #f6f7f9)', border: 'none', color: '#6b7280' },
	// the others' names stay shown beside their cursors (y-codemirror shows them on hover only)
	'.cm-ySelectionInfo': { opacity: '1', top: '-1.15em', fontSize: '11px', padding: '0 3px', borderRadius: '3px', fontFamily: 'system-ui, sans-serif', fontWeight: '600' },
});

/**
 * CodeEditor({room, path, ytext, readOnly}): the editor of `path`, bound to `ytext` (a Y.Text
 * of room.doc's files map). The room's awareness carries our cursor (y-codemirror's `cursor`)
 * and `file` (the path shown), which the People list reads. readOnly: the document cannot be
 * changed from here (viewers). Undo/redo undo only one's own edits (Y.UndoManager).
 */
export function CodeEditor({ room, path, ytext, readOnly }) {
	const host = useRef(null);
	useEffect(() => {
		const undo = new Y.UndoManager(ytext);
		const language = new Compartment();
		const view = new EditorView({
			parent: host.current,
			state: EditorState.create({
				doc: ytext.toString(),
				extensions: [
					lineNumbers(),
					highlightActiveLineGutter(),
					highlightSpecialChars(),
					drawSelection(),
					indentOnInput(),
					bracketMatching(),
					highlightActiveLine(),
					syntaxHighlighting(defaultHighlightStyle, { fallback: true }),
					keymap.of([...yUndoManagerKeymap, ...defaultKeymap, indentWithTab]),
					language.of([]),
					EditorView.lineWrapping,
					theme,
					EditorState.readOnly.of(!!readOnly),
					EditorView.contentAttributes.of({ 'aria-label': 'Code editor', ...(readOnly ? { 'aria-readonly': 'true' } : {}) }),
					yCollab(ytext, room.awareness, { undoManager: undo }),
				],
			}),
		});
		let live = true;
		languageFor(path).then(
			(lang) => live && lang && view.dispatch({ effects: language.reconfigure(lang) }),
			() => {}, // plain text when a language chunk does not load
		);
		room.awareness.setLocalStateField('file', path);
		return () => {
			live = false;
			view.destroy();
			undo.destroy();
			if (room.awareness.getLocalState()) {
				room.awareness.setLocalStateField('cursor', null);
				room.awareness.setLocalStateField('file', null);
			}
		};
	}, [room, path, ytext, readOnly]);
	return <div class="cm-host" ref={host} />;
}
