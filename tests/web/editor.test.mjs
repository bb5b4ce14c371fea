// editor.test.mjs: the collaborative code editor against the real stack (svc-wsd through lighttpd):
// two members in two browser contexts edit one file (latency: the median of five edits shows in
// the other editor within a second; convergence after concurrent typing at one place; the other's
// named cursor), the agent's write shows in the open editor, a viewer of a public project cannot
// type, typing offline survives the reconnect, and New file / Rename / Delete in the tree.
// Screenshots: project-editor and project-editor-offline at both sizes.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { launch, newPage, signIn, signUpApi, api, shotBoth } from './lib.mjs';

let browser;
let owner;
let member;
let outsider;
let projectId;
let publicId;
let collaboration;
let a; // owner's page
let b; // member's page
const figures = {};

before(async () => {
	browser = await launch();
	owner = await signUpApi('ed-owner');
	member = await signUpApi('ed-member');
	outsider = await signUpApi('ed-viewer');
	const ws = await api('POST', '/workspaces', { token: owner.token, body: { name: 'Editor team' } });
	assert.equal(ws.status, 201);
	assert.equal((await api('POST', `/workspaces/${ws.json.id}/members`, { token: owner.token, body: { email: member.email } })).status, 201);
	const p = await api('POST', `/workspaces/${ws.json.id}/projects`, { token: owner.token, body: { name: 'Shared code', template: 'todo-app' } });
	assert.equal(p.status, 201);
	projectId = p.json.id;
	const q = await api('POST', `/workspaces/${ws.json.id}/projects`, { token: owner.token, body: { name: 'Open code', template: 'todo-app', visibility: 'public' } });
	assert.equal(q.status, 201);
	publicId = q.json.id;
	collaboration = (await api('GET', '/auth/me', { token: owner.token })).json.features.collaboration;
});
after(async () => {
	if (browser) await browser.close();
	if (Object.keys(figures).length) console.log(`editor figures: ${JSON.stringify(figures)}`);
});

const editor = (page) => page.getByRole('textbox', { name: 'Code editor' });
const fileRegion = (page, path) => page.getByRole('region', { name: `Contents of ${path}` });

/** text(page): the whole text in the page's code editor (from its state: CodeMirror draws only the lines in view). */
function text(page) {
	return editor(page).evaluate((el) => el.cmTile.root.view.state.doc.toString());
}

async function until(fn, what, ms = 10000) {
	const t0 = Date.now();
	for (;;) {
		const v = await fn();
		if (v) return Date.now() - t0;
		if (Date.now() - t0 > ms) throw new Error(`timed out after ${ms} ms: ${what}`);
		await new Promise((r) => setTimeout(r, 25));
	}
}

/** openFile(page, path): the project's Files tab with `path` open in the editor. */
async function openFile(page, path, id = projectId) {
	if (!new URL(page.url()).pathname.endsWith(id)) await page.goto(`/projects/${id}`);
	await page.getByRole('tab', { name: 'Files' }).click();
	await page.getByRole('tree', { name: 'Files' }).getByRole('treeitem', { name: path, exact: true }).click();
	await editor(page).waitFor({ timeout: 30000 });
	await fileRegion(page, path).getByRole('status').filter({ hasText: 'Connected' }).waitFor({ timeout: 30000 });
}

/** apiText(path): the file as the API serves it (the disk). */
async function apiText(path, id = projectId) {
	const r = await fetch(`${process.env.SVC_BASE_URL || 'http://127.0.0.1:18080/api'}/projects/${id}/files/${path}`, { headers: { Authorization: `Bearer ${owner.token}` } });
	return r.status === 200 ? r.text() : null;
}

test('two members open one file: typing in one shows in the other within a second', async (t) => {
	if (!collaboration) return t.skip('this instance reports features.collaboration false');
	a = await newPage(browser);
	b = await newPage(browser);
	await signIn(a, owner.email, `/projects/${projectId}`);
	await signIn(b, member.email, `/projects/${projectId}`);
	await openFile(a, 'index.html');
	await openFile(b, 'index.html');
	const lats = [];
	for (const word of ['delta', 'echo', 'alpha', 'bravo', 'charlie']) {
		await editor(a).click();
		await a.keyboard.press('Control+Home');
		const mark = `<!-- ${word} from A -->`;
		// B watches its editor's document every animation frame, from before A types
		const el = await editor(b).elementHandle();
		const seen = b.waitForFunction(([e, m]) => e.cmTile.root.view.state.doc.toString().includes(m), [el, mark], { polling: 'raf', timeout: 5000 });
		const t0 = Date.now();
		await a.keyboard.insertText(mark + '\n');
		await seen;
		lats.push(Date.now() - t0);
	}
	figures.syncLatencyMs = lats;
	// the median of five, as for the dashboard's budget: one sample can meet a busy moment of a
	// machine that runs other test stacks too
	const median = [...lats].sort((x, y) => x - y)[2];
	console.log(`typing → the other editor: ${lats.join(', ')} ms (median ${median} ms)`);
	assert.ok(median < 1000, `latencies ${lats.join(', ')} ms`);
});

test('the other\'s cursor is drawn with their name, and People here lists both', async (t) => {
	if (!collaboration) return t.skip('no collaboration');
	await editor(b).click();
	await b.keyboard.press('Control+Home');
	await editor(a).getByText('Web ed-member', { exact: true }).waitFor({ timeout: 10000 });
	await editor(a).click();
	await editor(b).getByText('Web ed-owner', { exact: true }).waitFor({ timeout: 10000 });
	const here = a.getByRole('list', { name: 'People here' });
	await here.getByText('Web ed-owner (you)').waitFor({ state: 'attached' });
	await here.getByText('Web ed-member', { exact: true }).waitFor({ state: 'attached' });
	await shotBoth(a, 'project-editor');
});

test('concurrent typing at the same place converges in both editors and on disk', async (t) => {
	if (!collaboration) return t.skip('no collaboration');
	for (const p of [a, b]) {
		await editor(p).click();
		await p.keyboard.press('Control+Home');
	}
	await Promise.all([a.keyboard.type('AAAA-one-', { delay: 15 }), b.keyboard.type('BBBB-two-', { delay: 15 })]);
	await until(async () => {
		const [x, y] = [await text(a), await text(b)];
		return x === y && x.includes('AAAA-one-') && x.includes('BBBB-two-');
	}, 'both editors hold the same text with both insertions', 10000);
	const both = await text(a);
	const first = both.split('\n')[0];
	// each insertion stays whole (Yjs never interleaves one client's run of characters)
	assert.ok(first === 'AAAA-one-BBBB-two-<!-- charlie from A -->' || first === 'BBBB-two-AAAA-one-<!-- charlie from A -->', first);
	// svc-wsd writes it to disk after the edits settle (SVC_WSD_SAVE_DELAY_MS)
	await until(async () => (await apiText('index.html')) === both, 'the file on disk equals the editors', 20000);
});

test('the agent\'s write appears in the open editor without a reload', async (t) => {
	if (!collaboration) return t.skip('no collaboration');
	await a.getByRole('textbox', { name: 'Message' }).fill('add a footer');
	await a.getByRole('textbox', { name: 'Message' }).press('Enter');
	await a.getByText('Added a footer to index.html.').waitFor({ timeout: 60000 });
	await until(async () => (await text(b)).includes('Made with svc'), 'B\'s editor shows the agent\'s footer', 20000);
	await until(async () => (await text(a)).includes('Made with svc'), 'A\'s editor shows it too', 20000);
	// the earlier collaborative edits survived the agent's edit
	assert.ok((await text(b)).includes('AAAA-one-'));
});

test('typing while offline is kept and reaches the other editor after the reconnect', async (t) => {
	if (!collaboration) return t.skip('no collaboration');
	const st = fileRegion(a, 'index.html').getByRole('status');
	await a.context().setOffline(true);
	await st.filter({ hasText: 'Offline' }).waitFor({ timeout: 10000 });
	await editor(a).click();
	await a.keyboard.press('Control+Home');
	await a.keyboard.insertText('<!-- typed offline -->\n');
	await st.filter({ hasText: 'edits pending' }).waitFor({ timeout: 5000 });
	await shotBoth(a, 'project-editor-offline');
	await new Promise((r) => setTimeout(r, 1500));
	assert.ok(!(await text(b)).includes('typed offline'), 'B must not see it while A is offline');
	await a.context().setOffline(false);
	await st.filter({ hasText: 'Connected' }).waitFor({ timeout: 30000 });
	await until(async () => (await text(b)).includes('<!-- typed offline -->'), 'B sees the offline edit', 10000);
	await until(async () => ((await apiText('index.html')) || '').includes('<!-- typed offline -->'), 'the offline edit reaches the disk', 20000);
});

test('New file, Rename and Delete in the tree; the other member\'s tree follows', async (t) => {
	if (!collaboration) return t.skip('no collaboration');
	const tools = a.getByRole('toolbar', { name: 'File actions' });
	// New file, by keyboard
	await tools.getByRole('button', { name: 'New file' }).focus();
	await a.keyboard.press('Enter');
	const dlg = a.getByRole('dialog', { name: 'New file' });
	await dlg.getByRole('textbox', { name: 'File path' }).fill('notes/todo.md');
	await a.keyboard.press('Enter');
	await dlg.waitFor({ state: 'detached' });
	await a.getByRole('treeitem', { name: 'notes/todo.md', exact: true }).waitFor();
	await editor(a).waitFor();
	await fileRegion(a, 'notes/todo.md').waitFor({ timeout: 20000 });
	await editor(a).click();
	await a.keyboard.insertText('# Todo\n\n- write tests\n');
	await b.getByRole('tree', { name: 'Files' }).getByRole('treeitem', { name: 'notes', exact: true }).waitFor({ timeout: 20000 });
	// an existing path: the dialog says so
	await tools.getByRole('button', { name: 'New file' }).click();
	await dlg.getByRole('textbox', { name: 'File path' }).fill('index.html');
	await dlg.getByRole('button', { name: 'Create file' }).click();
	await dlg.getByText('A file with this path already exists.').waitFor();
	await dlg.getByRole('button', { name: 'Cancel' }).click();
	// Rename (F2 on the tree item), after the typed text is saved
	await a.getByRole('treeitem', { name: 'notes/todo.md', exact: true }).focus();
	await a.keyboard.press('F2');
	const ren = a.getByRole('dialog', { name: 'Rename notes/todo.md' });
	await ren.getByRole('textbox', { name: 'New path' }).fill('notes/done.md');
	await ren.getByRole('button', { name: 'Rename' }).click();
	await ren.waitFor({ state: 'detached', timeout: 30000 });
	await a.getByRole('treeitem', { name: 'notes/done.md', exact: true }).waitFor();
	assert.equal(await a.getByRole('treeitem', { name: 'notes/todo.md', exact: true }).count(), 0);
	await until(async () => (await apiText('notes/done.md')) === '# Todo\n\n- write tests\n', 'the renamed file kept what was typed', 10000);
	await fileRegion(a, 'notes/done.md').waitFor({ timeout: 20000 });
	await until(async () => (await text(a)).includes('- write tests'), 'the editor shows the renamed file', 20000);
	// Delete asks first
	await a.getByRole('toolbar', { name: 'File actions' }).getByRole('button', { name: 'Delete' }).click();
	const del = a.getByRole('dialog', { name: 'Delete notes/done.md?' });
	await del.getByRole('button', { name: 'Cancel' }).click();
	await a.getByRole('treeitem', { name: 'notes/done.md', exact: true }).waitFor();
	await a.getByRole('toolbar', { name: 'File actions' }).getByRole('button', { name: 'Delete' }).click();
	await del.getByRole('button', { name: 'Delete file' }).click();
	await a.getByRole('treeitem', { name: 'notes/done.md', exact: true }).waitFor({ state: 'detached' });
	assert.equal(await apiText('notes/done.md'), null);
	const vs = (await api('GET', `/projects/${projectId}/versions`, { token: owner.token })).json.items.map((v) => v.message);
	for (const m of ['Create notes/todo.md', 'Rename notes/todo.md to notes/done.md', 'Delete notes/done.md']) assert.ok(vs.includes(m), `${m} in ${vs.slice(0, 8).join(' | ')}`);
	await b.getByRole('tree', { name: 'Files' }).getByRole('treeitem', { name: 'notes', exact: true }).waitFor({ state: 'detached', timeout: 20000 });
	await a.context().close();
	await b.context().close();
});

test('a viewer of a public project gets a read-only editor and cannot type', async (t) => {
	if (!collaboration) return t.skip('no collaboration');
	const v = await newPage(browser);
	await signIn(v, outsider.email, `/projects/${publicId}`);
	await openFile(v, 'index.html', publicId);
	await fileRegion(v, 'index.html').getByText('read-only').waitFor();
	assert.equal(await editor(v).getAttribute('aria-readonly'), 'true');
	assert.equal(await v.getByRole('toolbar', { name: 'File actions' }).count(), 0);
	const before = await text(v);
	await editor(v).click();
	await v.keyboard.press('Control+Home');
	await v.keyboard.type('viewer was here');
	await v.keyboard.press('Enter');
	await new Promise((r) => setTimeout(r, 500));
	assert.equal(await text(v), before);
	assert.ok(!((await apiText('index.html', publicId)) || '').includes('viewer was here'));
	await v.context().close();
});
