// devserver.test.mjs: a React + TypeScript + Vite + Tailwind project's preview is its dev server (svc-devd,
// docs/operations.md "Dev servers"): the preview shows the app once its dev server runs, and typing in the
// code editor changes the preview without a reload (Vite's HMR through the preview origin's websocket: a
// marker set on the preview's window survives the change). The project is the React template, its files
// written through the API; its dev server installs it from the registry. Screenshot: project-devserver.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { launch, newPage, signIn, signUpApi, api, previewFrame, shot } from './lib.mjs';

const ROOT = new URL('../..', import.meta.url).pathname;
// the React template (templates/react once it is there; bench/preview/react-template before)
const TEMPLATE = [join(ROOT, 'templates/react'), join(ROOT, 'bench/preview/react-template')].find((d) => existsSync(join(d, 'package.json')));

let browser;
let owner;
let projectId;
let collaboration;
const figures = {};

function files(dir) {
	return readdirSync(dir).flatMap((n) => {
		const p = join(dir, n);
		if (n === 'node_modules' || n === 'README.md' || n.startsWith('.')) return [];
		return statSync(p).isDirectory() ? files(p) : [p];
	});
}

before(async () => {
	browser = await launch();
	owner = await signUpApi('devserver');
	const p = await api('POST', `/workspaces/${owner.workspaceId}/projects`, { token: owner.token, body: { name: 'React dev', template: 'blank' } });
	assert.equal(p.status, 201);
	projectId = p.json.id;
	await api('DELETE', `/projects/${projectId}/files/index.html`, { token: owner.token });
	// package.json last: the preview turns into a dev server's when it lands
	const all = files(TEMPLATE).sort((a, b) => (a.endsWith('/package.json') ? 1 : 0) - (b.endsWith('/package.json') ? 1 : 0));
	for (const f of all) {
		const r = await api('PUT', `/projects/${projectId}/files/${relative(TEMPLATE, f)}`, { token: owner.token, body: { content: readFileSync(f, 'utf8'), overwrite: true } });
		assert.ok(r.status === 200 || r.status === 201, `${relative(TEMPLATE, f)}: ${r.status}`);
	}
	collaboration = (await api('GET', '/auth/me', { token: owner.token })).json.features.collaboration;
});
after(async () => {
	if (browser) await browser.close();
	if (Object.keys(figures).length) console.log(`devserver figures: ${JSON.stringify(figures)}`);
});

const editor = (page) => page.getByRole('textbox', { name: 'Code editor' });

/** frameText(page): the preview frame's body text now ('' while it loads or reloads). */
async function frameText(page) {
	try {
		const f = await previewFrame(page);
		return await f.evaluate(() => (document.body ? document.body.innerText : ''));
	} catch (e) {
		return '';
	}
}

async function waitFor(fn, what, ms) {
	const t0 = Date.now();
	for (;;) {
		if (await fn()) return Date.now() - t0;
		if (Date.now() - t0 > ms) throw new Error(`timed out after ${ms} ms: ${what}`);
		await new Promise((r) => setTimeout(r, 50));
	}
}

test('the preview of a React project is its dev server, and typing in the editor changes it without a reload', async (t) => {
	if (!collaboration) return t.skip('this instance reports features.collaboration false');
	const pv = await api('GET', `/projects/${projectId}/preview`, { token: owner.token });
	assert.equal(pv.json.devServer, true, JSON.stringify(pv.json));
	const page = await newPage(browser);
	await signIn(page, owner.email, `/projects/${projectId}`);
	// the first view starts it: "Starting the dev server…" (the page reloads itself), then the app
	figures.firstPreviewMs = await waitFor(async () => (await frameText(page)).includes('Start building'), 'the app in the preview', 330000);
	const frame = await previewFrame(page);
	await frame.evaluate(() => {
		window.__svcMarker = 'kept';
	});
	await shot(page, 'project-devserver');

	await page.getByRole('tab', { name: 'Files' }).click();
	const tree = page.getByRole('tree', { name: 'Files' });
	const app = tree.getByRole('treeitem', { name: 'src/App.tsx', exact: true });
	await tree.getByRole('treeitem', { name: 'src', exact: true }).waitFor({ timeout: 20000 });
	if (!(await app.isVisible())) await tree.getByRole('treeitem', { name: 'src', exact: true }).click();
	await app.click();
	await editor(page).waitFor({ timeout: 30000 });
	await page.getByRole('region', { name: 'Contents of src/App.tsx' }).getByRole('status').filter({ hasText: 'Connected' }).waitFor({ timeout: 30000 });
	// select the heading's text in the editor and type over it
	await editor(page).evaluate((el) => {
		const view = el.cmTile.root.view;
		const at = view.state.doc.toString().indexOf('Start building');
		view.focus();
		view.dispatch({ selection: { anchor: at, head: at + 'Start building'.length } });
	});
	const t0 = Date.now();
	await page.keyboard.type('Hot and reloaded', { delay: 10 });
	await waitFor(async () => {
		const f = page.frames().find((x) => x !== page.mainFrame() && x.url().includes('.preview.'));
		return f && (await f.evaluate(() => document.body.innerText.includes('Hot and reloaded')).catch(() => false));
	}, 'the typed heading in the preview', 30000);
	figures.typedToPreviewMs = Date.now() - t0;
	const after = await previewFrame(page);
	assert.equal(await after.evaluate(() => window.__svcMarker), 'kept', 'the preview page was reloaded instead of updated in place');
	await page.getByRole('tab', { name: 'Preview' }).click();
	assert.ok((await frameText(page)).includes('Hot and reloaded'));
	await page.close();
});
