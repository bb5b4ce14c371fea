// visual.test.mjs: web/src/pages/project/preview/visual-bridge.js: which messages the app believes, page → file,
// the patches of an inspector's edits and how a refused one is told.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { previewMessage, toFrame, frameSandbox, frameTarget, element, pageFile, parseStyle, valuesOf, patchesOf, saveError, pinAt, applyComment, threadsOf } from '../../../web/src/pages/project/preview/visual-bridge.js';

const URL_ = 'http://abc.preview.localhost:8080/';
const frame = { name: 'the frame' };
const ok = { svc: 'svc-preview', v: 1, type: 'select', page: '/' };

test('a message counts only from the frame window, with an opaque or the preview origin, in the script shape', () => {
	assert.deepEqual(previewMessage({ source: frame, origin: 'null', data: ok }, frame, URL_), ok);
	assert.deepEqual(previewMessage({ source: frame, origin: 'http://abc.preview.localhost:8080', data: ok }, frame, URL_), ok);
	assert.equal(previewMessage({ source: { other: 1 }, origin: 'null', data: ok }, frame, URL_), null, 'another window');
	assert.equal(previewMessage({ source: null, origin: 'null', data: ok }, frame, URL_), null);
	assert.equal(previewMessage({ source: frame, origin: 'http://evil.example', data: ok }, frame, URL_), null, 'another origin');
	assert.equal(previewMessage({ source: frame, origin: 'http://127.0.0.1:8080', data: ok }, frame, URL_), null, 'the app origin');
	assert.equal(previewMessage({ source: frame, origin: 'null', data: { ...ok, svc: 'x' } }, frame, URL_), null);
	assert.equal(previewMessage({ source: frame, origin: 'null', data: { ...ok, v: 2 } }, frame, URL_), null);
	assert.equal(previewMessage({ source: frame, origin: 'null', data: { ...ok, type: 'eval' } }, frame, URL_), null);
	assert.equal(previewMessage({ source: frame, origin: 'null', data: 'svc-preview' }, frame, URL_), null);
	assert.equal(previewMessage({ source: frame, origin: 'null', data: ok }, null, URL_), null, 'no frame');
	assert.equal(previewMessage({ source: frame, origin: 'null', data: ok }, frame, 'not a url'), null);
	assert.deepEqual(toFrame('mode', { mode: 'select' }), { mode: 'select', svc: 'svc-preview', v: 1, type: 'mode' });
});

test('the preview is framed with its own origin, never on the app\'s; messages go to its origin only', () => {
	const app = 'http://127.0.0.1:8080';
	const sb = frameSandbox(URL_, app);
	assert.deepEqual(sb.split(' ').sort(), ['allow-forms', 'allow-modals', 'allow-popups', 'allow-same-origin', 'allow-scripts']);
	assert.ok(!/top-navigation|downloads|allow-storage-access/.test(sb), sb);
	assert.equal(frameSandbox('http://127.0.0.1:8080/some/page', app), null, 'the app\'s own origin is never framed with its scripts');
	assert.equal(frameSandbox('HTTP://127.0.0.1:8080/', app), null, 'the origin is compared normalised');
	assert.equal(frameSandbox('javascript:alert(1)', app), null);
	assert.equal(frameSandbox('data:text/html,x', app), null);
	assert.equal(frameSandbox('not a url', app), null);
	assert.ok(frameSandbox('https://abc.preview.example.net/', 'https://svc.example.com'));
	assert.equal(frameTarget(URL_ + 'page.html?x=1'), 'http://abc.preview.localhost:8080');
	assert.equal(frameTarget('nope'), null);
});

test('element() keeps only well-formed fields', () => {
	assert.equal(element(null), null);
	assert.equal(element({ selector: '' }), null);
	assert.equal(element({ selector: 'x'.repeat(1001) }), null);
	const e = element({ selector: '#t', tag: 'H1', text: 5, className: 'a', rect: [1, 2, 3, 'x'], computed: { color: 'red', evil: 'x' } });
	assert.equal(e.tag, 'h1');
	assert.equal(e.text, null);
	assert.equal(e.rect, null);
	assert.equal(e.computed.color, 'red');
	assert.equal(e.computed.evil, undefined);
});

test('pageFile maps preview paths to project files', () => {
	assert.equal(pageFile('/'), 'index.html');
	assert.equal(pageFile('/docs/'), 'docs/index.html');
	assert.equal(pageFile('/about.html'), 'about.html');
	assert.equal(pageFile('/a%20b/c.HTM'), 'a b/c.HTM');
	assert.equal(pageFile('/style.css'), null);
	assert.equal(pageFile('/.git/x.html'), null);
	assert.equal(pageFile('/%E0%A4%A.html'), null);
	assert.equal(pageFile(null), null);
});

test('parseStyle reads declarations, quotes and brackets included', () => {
	assert.deepEqual(parseStyle('color: red; Background: url("a;b.png") ;font-size:2em;'), { color: 'red', background: 'url("a;b.png")', 'font-size': '2em' });
	assert.deepEqual(parseStyle(null), {});
	assert.deepEqual(parseStyle('color: red; color: blue'), { color: 'blue' });
});

test('patchesOf sends only changed fields, in field order; saveError names the refused one', () => {
	const el = element({ selector: 'main > a:nth-of-type(1)', tag: 'a', text: 'Go', className: 'x', href: '/a', style: 'color: red' });
	const before = valuesOf(el);
	assert.equal(before.color, 'red');
	assert.equal(before.text, 'Go');
	assert.equal(before.src, undefined, 'no image fields for a link');
	const { patches, fields } = patchesOf(el, before, { ...before, href: 'javascript:alert(1)', text: 'Went', color: ' blue ' });
	assert.deepEqual(patches, [
		{ selector: 'main > a:nth-of-type(1)', property: 'text', value: 'Went' },
		{ selector: 'main > a:nth-of-type(1)', property: 'href', value: 'javascript:alert(1)' },
		{ selector: 'main > a:nth-of-type(1)', property: 'style.color', value: 'blue' },
	]);
	const e = { status: 422, message: 'x', body: { error: 'validation_failed', message: 'patch 1: javascript:, vbscript: and data:text/html values are not allowed', patchIndex: 1 } };
	assert.deepEqual(saveError(e, fields), { key: 'href', text: 'Change 2 of 3 (Link) was refused: javascript:, vbscript: and data:text/html values are not allowed' });
	assert.deepEqual(saveError({ status: 500, message: 'boom' }, fields), { key: null, text: 'boom' });
	assert.equal(patchesOf(el, before, before).patches.length, 0);
});

test('pinAt places a point inside a box', () => {
	assert.deepEqual(pinAt([10, 20, 200, 100], 50, 25), [110, 45]);
	assert.equal(pinAt(null, 1, 1), null);
});

const C = (id, createdAt, parentId = null) => ({ id, content: 'c ' + id, user: { id: 'u', name: 'Ann' }, xPercent: 1, yPercent: 2, selector: 'h1', pagePath: '/', parentId, createdAt, updatedAt: createdAt });

test('applyComment folds svc-wsd\'s messages into the list', () => {
	let m = new Map([['a', { ...C('a', '2026-01-01T00:00:00.000Z'), status: 'resolved', resolvedBy: { id: 'u' }, resolvedAt: 'x' }]]);
	const same = applyComment(m, { type: 'design-comment:added', comment: C('a', '2026-01-01T00:00:00.000Z') });
	assert.equal(same.get('a').status, 'resolved', 'a known comment keeps its status (a join resends open ones)');
	m = applyComment(m, { type: 'design-comment:added', comment: C('b', '2026-01-02T00:00:00.000Z') });
	assert.equal(m.get('b').status, 'open');
	m = applyComment(m, { type: 'design-comment:unresolved', commentId: 'a' });
	assert.equal(m.get('a').status, 'open');
	assert.equal(m.get('a').resolvedBy, null);
	m = applyComment(m, { type: 'design-comment:resolved', commentId: 'b', resolvedBy: { id: 'v', name: 'Bo' }, resolvedAt: 't' });
	assert.equal(m.get('b').status, 'resolved');
	m = applyComment(m, { type: 'design-comment:deleted', commentId: 'a' });
	assert.equal(m.has('a'), false);
	assert.equal(applyComment(m, { type: 'design-comment:deleted', commentId: 'zz' }), m, 'unknown id: unchanged');
	assert.equal(applyComment(m, { type: 'other' }), m);
	assert.equal(applyComment(m, { type: 'design-comment:added', comment: { id: 5 } }), m);
	assert.equal(applyComment(m, null), m);
});

test('threadsOf groups replies under their top comment and numbers threads by age', () => {
	const m = new Map();
	for (const c of [C('r2', '2026-01-03T00:00:00.000Z'), C('r1', '2026-01-01T00:00:00.000Z'), C('x', '2026-01-02T00:00:00.000Z', 'r1'), C('y', '2026-01-04T00:00:00.000Z', 'x'), C('orphan', '2026-01-05T00:00:00.000Z', 'gone')]) m.set(c.id, c);
	const t = threadsOf(m);
	assert.deepEqual(t.map((x) => [x.root.id, x.n, x.replies.map((r) => r.id)]), [['r1', 1, ['x', 'y']], ['r2', 2, []]]);
});
