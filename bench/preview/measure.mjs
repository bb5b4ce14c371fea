// measure.mjs: the figures of issue 27 against a running stack (bench/preview/run.sh starts one): a saved change
// seen in the preview page by Chromium (from the save's response to the DOM showing it), the first preview of a new
// React project (cold, then warm npm cache), publishing with warm dependencies, and what dev servers cost.
// usage: node bench/preview/measure.mjs BASE_URL [PHASE...]   (PHASE: static react publish devservers; default all)
// Env: SAVES (20: saves per project kind; build-on-save previews take SAVES_BUILD, 5), PUBLISHES (3),
//      DEVSERVERS (8), SVC_CHROMIUM (/usr/bin/chromium), SVC_CONFIG (the stack's settings file: svc-devd's address and
//      the internal secret its status is signed with; without it the dev servers are not measured). Prints "# ..." lines as it goes and one JSON object
//      of every figure last.
import { createRequire } from 'node:module';
import { readFileSync } from 'node:fs';
import { randomBytes, createHash, createHmac } from 'node:crypto';
import { execFileSync } from 'node:child_process';

const require = createRequire(new URL('../../tests/web/package.json', import.meta.url));
const { chromium } = require('playwright-core');

const BASE = (process.argv[2] || 'http://127.0.0.1:20410/api').replace(/\/$/, '');
const PHASES = process.argv.slice(3).length ? process.argv.slice(3) : ['static', 'react', 'editor', 'publish', 'devservers'];
const APP = BASE.replace(/\/api$/, '');
const EDITS = Number(process.env.EDITS || 10);
const SAVES = Number(process.env.SAVES || 20);
const SAVES_BUILD = Number(process.env.SAVES_BUILD || 5);
const PUBLISHES = Number(process.env.PUBLISHES || 3);
const DEVSERVERS = Number(process.env.DEVSERVERS || 8);
const HEAD = 'Start building'; // what templates/react's src/App.tsx shows
const out = { when: new Date().toISOString(), base: BASE, cpus: 2 };
const say = (s) => console.log(`# ${s}`);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

let token;
let wid;

async function api(method, path, body, timeoutMs = 600000) {
	const headers = { Accept: 'application/json' };
	if (token) headers.Authorization = `Bearer ${token}`;
	if (body !== undefined) headers['Content-Type'] = 'application/json';
	const r = await fetch(BASE + path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body), signal: AbortSignal.timeout(timeoutMs) });
	const text = await r.text();
	let json = null;
	try {
		json = text ? JSON.parse(text) : null;
	} catch {
		json = { raw: text };
	}
	return { status: r.status, json };
}

function must(r, status, what) {
	if (r.status !== status) throw new Error(`${what}: ${r.status} ${JSON.stringify(r.json).slice(0, 500)}`);
	return r.json;
}

/** pct(list, p): the p-th percentile (nearest rank) of list, in its unit. */
function pct(list, p) {
	const s = [...list].sort((a, b) => a - b);
	return s.length ? s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)] : null;
}
const summary = (list) => ({ n: list.length, p50: pct(list, 50), p95: pct(list, 95), min: Math.min(...list), max: Math.max(...list) });

async function project(template, name) {
	const t0 = performance.now();
	const p = must(await api('POST', `/workspaces/${wid}/projects`, { name, template }), 201, `create ${template}`);
	return { ...p, createdMs: performance.now() - t0, createdAt: t0 };
}
const previewUrl = async (pid) => must(await api('GET', `/projects/${pid}/preview`), 200, 'preview').url;
/** readFile(pid, path): the file's text (the API answers its raw bytes). */
async function readFile(pid, path) {
	const r = await fetch(`${BASE}/projects/${pid}/files/${path}`, { headers: { Authorization: `Bearer ${token}` } });
	if (r.status !== 200) throw new Error(`read ${path}: ${r.status}`);
	return r.text();
}
/** save(pid, path, content): PUT the file; resolves performance.now() at the response. */
async function save(pid, path, content) {
	must(await api('PUT', `/projects/${pid}/files/${path}`, { content, overwrite: true }), 200, `save ${path}`);
	return performance.now();
}

/** kindOf(page): 'dev' when a dev server serves the page (Vite's client is in it), else 'build' (the build-on-save preview) or 'static'. */
async function kindOf(page) {
	return page.evaluate(() => (document.querySelector('script[src^="/@vite/client"], script[type="module"][src^="/src/"]') ? 'dev' : document.querySelector('script[src^="/assets/"]') ? 'build' : 'static'));
}

/** waitText(page, text, ms): resolves once the page's DOM holds text (a MutationObserver in the page); rejects after ms. */
function waitText(page, text, ms) {
	return page.evaluate(
		([t, limit]) =>
			new Promise((resolve, reject) => {
				const has = () => document.body && document.body.innerText.includes(t);
				if (has()) return resolve(true);
				const mo = new MutationObserver(() => has() && (mo.disconnect(), clearTimeout(timer), resolve(true)));
				mo.observe(document, { childList: true, subtree: true, characterData: true });
				const timer = setTimeout(() => (mo.disconnect(), reject(new Error('not yet'))), limit);
			}),
		[text, ms],
	);
}

/**
 * seen(page, text, reload, deadlineMs): performance.now() (node's clock) when the page's DOM holds text. With
 * reload (a preview that does not change by itself: files as they are, or the build-on-save preview) the page
 * is loaded again at once and then every 250 ms, as the app reloads its frame after a change; without, the
 * DOM is watched (a dev server's hot module replacement).
 */
async function seen(page, text, reload, deadlineMs) {
	const end = performance.now() + deadlineMs;
	const has = () => page.evaluate((t) => Boolean(document.body && document.body.innerText.includes(t)), text).catch(() => false);
	if (!reload) {
		await waitText(page, text, deadlineMs).catch((e) => {
			throw new Error(`the preview did not show ${JSON.stringify(text)} within ${deadlineMs} ms without a reload (${e.message})`);
		});
		return performance.now();
	}
	while (performance.now() < end) {
		await page.reload({ waitUntil: 'domcontentloaded' }).catch(() => {});
		if (await has()) return performance.now();
		await sleep(250);
	}
	throw new Error(`the preview did not show ${JSON.stringify(text)} within ${deadlineMs} ms: ${(await page.evaluate(() => document.body && document.body.innerText).catch(() => '')).slice(0, 300)}`);
}

/**
 * firstPreview(page, pid, t0): ms from t0 (the create's start) until the preview page shows the React app, and
 * its kind. While svc answers "Building the preview" (or nothing yet) the page is loaded again every 500 ms;
 * a page that is the app gets 30 s to run its scripts and render, then it is loaded again (up to 600 s in all).
 */
async function firstPreview(page, pid, t0) {
	const url = await previewUrl(pid);
	const end = performance.now() + 600000;
	const text = () => page.evaluate(() => (document.body ? document.body.innerText : '')).catch(() => '');
	for (;;) {
		const r = await page.goto(url, { waitUntil: 'domcontentloaded', timeout: 300000 }).catch(() => null);
		const body = await text();
		if (/The build failed/.test(body)) throw new Error(`the preview build failed: ${body.slice(0, 600)}`);
		// the app's page: its scripts get 30 s to render (a dev server's first page waits for Vite's
		// dependency pre-bundling, and Vite may reload it once), else the page is loaded again
		if (r && r.status() === 200 && !/Building the preview/.test(body) && (await waitText(page, HEAD, 30000).catch(() => false)))
			return { ms: performance.now() - t0, kind: await kindOf(page), url };
		if (performance.now() > end) throw new Error(`no preview within 600 s: ${(await text()).slice(0, 300)}`);
		await sleep(500);
	}
}

/** saves(page, pid, path, base, mark, n, reload): n saves of `path` (base with HEAD → a marker), each timed to the DOM. */
async function saves(page, pid, path, base, n, reload, times = []) {
	for (let i = 0; i < n; i++) {
		const marker = `Saved change ${i} ${randomBytes(3).toString('hex')}`;
		const t = await save(pid, path, base.replace(HEAD, marker));
		times.push(Math.round((await seen(page, marker, reload, reload ? 600000 : 60000)) - t));
		await sleep(300);
	}
	return times;
}

function memAvailableMb() {
	const m = /MemAvailable:\s+(\d+) kB/.exec(readFileSync('/proc/meminfo', 'utf8'));
	return m ? Math.round(Number(m[1]) / 1024) : null;
}

/** setting(name): a value of the stack's settings file (SVC_CONFIG, run.sh sets it), or undefined. */
function setting(name) {
	if (!process.env.SVC_CONFIG) return undefined;
	const m = new RegExp(`^${name}=(.*)$`, 'm').exec(readFileSync(process.env.SVC_CONFIG, 'utf8'));
	return m ? m[1] : undefined;
}

/** pssMb(pid): the proportional set size of pid and its descendants, in MiB (/proc). */
function pssMb(pid) {
	let ps;
	try {
		ps = execFileSync('ps', ['-eo', 'pid=,ppid='], { encoding: 'utf8' });
	} catch {
		return null;
	}
	const rows = ps.trim().split('\n').map((l) => l.trim().split(/\s+/).map(Number));
	const kids = (p) => rows.filter((r) => r[1] === p).flatMap((r) => [r[0], ...kids(r[0])]);
	const pss = (p) => {
		try {
			const m = /^Pss:\s+(\d+) kB/m.exec(readFileSync(`/proc/${p}/smaps_rollup`, 'utf8'));
			return m ? Number(m[1]) / 1024 : 0;
		} catch {
			return 0;
		}
	};
	return Math.round([pid, ...kids(pid)].reduce((a, p) => a + pss(p), 0));
}

/**
 * devServers(): [{projectId, state, pid, memoryMb (its cgroup's), pssMb (its processes')}] of the dev servers of
 * this stack's svc-devd (its signed GET /internal/status, docs/conventions.md "Internal calls"), or null without
 * SVC_CONFIG. Only this stack's: on a shared machine other stacks' dev servers run too.
 */
async function devServers() {
	const secret = setting('INTERNAL_SECRET');
	if (!secret) return null;
	const url = `http://${setting('SVC_DEVD_HOST') || '127.0.0.1'}:${setting('SVC_DEVD_PORT') || 8082}/internal/status`;
	const ts = String(Math.floor(Date.now() / 1000));
	const nonce = randomBytes(16).toString('hex');
	const msg = `GET\n/internal/status\n${ts}\n${nonce}\n${createHash('sha256').update('').digest('hex')}`;
	const sig = createHmac('sha256', secret).update(msg).digest('hex');
	const r = await fetch(url, { headers: { 'X-Svc-Timestamp': ts, 'X-Svc-Nonce': nonce, 'X-Svc-Signature': `v2=${sig}` } });
	if (r.status !== 200) throw new Error(`svc-devd's status: ${r.status}`);
	return (await r.json()).servers.map((s) => ({ projectId: s.projectId, state: s.state, pid: s.pid, memoryMb: Math.round(s.memoryBytes / 1048576), pssMb: s.pid ? pssMb(s.pid) : null }));
}

/**
 * editorEdits(browser, pid, email, n): a person's edit in the web app: signed in on the project page, src/App.tsx
 * open in the code editor (the collaborative one: svc-wsd writes the file after its settle delay,
 * SVC_WSD_SAVE_DELAY_MS), the heading selected and typed over n times; each time from the last key to the
 * preview frame's DOM showing the new heading (ms), and whether the preview kept its page (HMR, no reload).
 */
async function editorEdits(browser, pid, email, n) {
	const page = await (await browser.newContext({ viewport: { width: 1280, height: 800 }, baseURL: APP })).newPage();
	await page.goto(`/login?next=${encodeURIComponent(`/projects/${pid}`)}`);
	await page.getByRole('textbox', { name: 'Email' }).fill(email);
	await page.getByLabel('Password').fill('correct horse battery');
	await page.getByRole('button', { name: 'Sign in', exact: true }).click();
	await page.waitForURL((u) => u.pathname === `/projects/${pid}`);
	const previewText = async () => {
		const f = page.frames().find((x) => x !== page.mainFrame() && x.url().includes('.preview.'));
		return f ? f.evaluate(() => (document.body ? document.body.innerText : '')).catch(() => '') : '';
	};
	for (const t0 = performance.now(); !(await previewText()).includes(HEAD); await sleep(100))
		if (performance.now() - t0 > 300000) throw new Error('editor: the app did not show in the preview within 300 s');
	const marked = page.frames().find((x) => x !== page.mainFrame() && x.url().includes('.preview.'));
	await marked.evaluate(() => { window.__benchMarker = 'kept'; });
	await page.getByRole('tab', { name: 'Files' }).click();
	const tree = page.getByRole('tree', { name: 'Files' });
	const src = tree.getByRole('treeitem', { name: 'src', exact: true });
	const app = tree.getByRole('treeitem', { name: 'src/App.tsx', exact: true });
	await src.waitFor({ timeout: 20000 });
	if (!(await app.isVisible())) await src.click();
	await app.click();
	const editor = page.getByRole('textbox', { name: 'Code editor' });
	await editor.waitFor({ timeout: 30000 });
	await page.getByRole('region', { name: 'Contents of src/App.tsx' }).getByRole('status').filter({ hasText: 'Connected' }).waitFor({ timeout: 30000 });
	const times = [];
	let shown = HEAD;
	for (let i = 0; i < n; i++) {
		const next = `Edited in the editor ${i}`;
		await editor.evaluate((el, from) => {
			const view = el.cmTile.root.view;
			const at = view.state.doc.toString().indexOf(from);
			view.focus();
			view.dispatch({ selection: { anchor: at, head: at + from.length } });
		}, shown);
		await page.keyboard.type(next, { delay: 10 });
		const t0 = performance.now();
		while (!(await previewText()).includes(next)) {
			if (performance.now() - t0 > 60000) throw new Error(`editor: edit ${i} did not reach the preview within 60 s`);
			await sleep(20);
		}
		times.push(Math.round(performance.now() - t0));
		shown = next;
	}
	const kept = await marked.evaluate(() => window.__benchMarker).catch(() => null);
	await editor.evaluate((el, from) => {
		const view = el.cmTile.root.view;
		const at = view.state.doc.toString().indexOf(from);
		view.dispatch({ changes: { from: at, to: at + from.length, insert: 'Start building' } });
	}, shown);
	await page.context().close();
	return { times, reloaded: kept !== 'kept' };
}

async function main() {
	const email = `bench-preview-${randomBytes(4).toString('hex')}@example.test`;
	const s = must(await api('POST', '/auth/signup', { email, password: 'correct horse battery', displayName: 'Bench preview' }), 201, 'signup');
	token = s.accessToken;
	wid = s.workspace.id;
	out.memAvailableAtStartMb = memAvailableMb();
	const browser = await chromium.launch({ executablePath: process.env.SVC_CHROMIUM || '/usr/bin/chromium', headless: true, args: ['--no-sandbox', '--disable-gpu', '--no-first-run'] });
	const page = await (await browser.newContext({ viewport: { width: 1280, height: 800 } })).newPage();
	try {
		if (PHASES.includes('static')) {
			const p = await project('blank', 'Bench static');
			const base = (await readFile(p.id, 'index.html')).replace(/<body([^>]*)>/, `<body$1>\n<p>${HEAD}</p>`);
			await save(p.id, 'index.html', base);
			await page.goto(await previewUrl(p.id));
			const times = await saves(page, p.id, 'index.html', base, SAVES, true);
			out.staticSave = summary(times);
			say(`no package.json: save → preview DOM (reloaded at the save's response): p50 ${out.staticSave.p50} ms, p95 ${out.staticSave.p95} ms (${times.join(' ')})`);
		}
		let warm = null;
		if (PHASES.includes('react') || PHASES.includes('editor') || PHASES.includes('publish') || PHASES.includes('devservers')) {
			// the first React project of a fresh stack meets a cold npm cache; the second a warm one
			const cold = await project('react', 'Bench React cold');
			const fc = await firstPreview(page, cold.id, cold.createdAt);
			out.firstPreviewColdMs = Math.round(fc.ms);
			out.previewKind = fc.kind;
			say(`first preview of a new React project, cold npm cache: ${(fc.ms / 1000).toFixed(1)} s (${fc.kind})`);
			warm = await project('react', 'Bench React warm');
			const fw = await firstPreview(page, warm.id, warm.createdAt);
			out.firstPreviewWarmMs = Math.round(fw.ms);
			say(`first preview of a new React project, warm npm cache: ${(fw.ms / 1000).toFixed(1)} s (${fw.kind})`);
			if (PHASES.includes('react')) {
				const app = await readFile(warm.id, 'src/App.tsx');
				const reload = fw.kind !== 'dev';
				out.reactSaveTimes = [];
				const times = await saves(page, warm.id, 'src/App.tsx', app, reload ? SAVES_BUILD : SAVES, reload, out.reactSaveTimes);
				out.reactSave = { kind: fw.kind, ...summary(times) };
				say(`React (${fw.kind === 'dev' ? 'dev server, no reload' : 'build on save, reloaded every 250 ms'}): save → preview DOM p50 ${out.reactSave.p50} ms, p95 ${out.reactSave.p95} ms (${times.join(' ')})`);
				await save(warm.id, 'src/App.tsx', app);
			}
		}
		if (PHASES.includes('editor') && warm) {
			const e = await editorEdits(browser, warm.id, email, EDITS);
			out.editorEdit = { reloaded: e.reloaded, ...summary(e.times) };
			say(`React, typed in the web app's code editor: last key → preview DOM p50 ${out.editorEdit.p50} ms, p95 ${out.editorEdit.p95} ms (${e.times.join(' ')}); the preview ${e.reloaded ? 'was reloaded' : 'kept its page (HMR)'}`);
		}
		if (PHASES.includes('publish') && warm) {
			const app = await readFile(warm.id, 'src/App.tsx');
			const times = [];
			for (let i = 0; i < PUBLISHES; i++) {
				await save(warm.id, 'src/App.tsx', app.replace(HEAD, `Published ${i}`));
				const t0 = performance.now();
				const r = await api('POST', `/deploy/${warm.id}`);
				if (r.status !== 200) throw new Error(`publish: ${r.status} ${JSON.stringify(r.json).slice(0, 800)}`);
				times.push(Math.round(performance.now() - t0));
			}
			out.publishWarm = summary(times);
			say(`publish with warm dependencies: ${times.map((t) => (t / 1000).toFixed(1) + ' s').join(', ')}`);
		}
		if (PHASES.includes('devservers') && warm) {
			const before = out.previewKind === 'dev' ? await devServers() : null;
			if (!before) {
				say(out.previewKind !== 'dev' ? 'no dev server serves the preview on this stack: dev-server memory and start time not measured' : 'no SVC_CONFIG (the stack\'s settings): dev servers not measured');
			} else {
				const starts = [];
				for (let i = before.filter((d) => d.state === 'running').length; i < DEVSERVERS; i++) {
					const p = await project('react', `Bench dev server ${i}`);
					const pg = await (await browser.newContext()).newPage();
					// start = from the first look at a warm project's preview to the app on screen
					const f = await firstPreview(pg, p.id, performance.now());
					starts.push(Math.round(f.ms));
				}
				await sleep(5000);
				const running = (await devServers()).filter((d) => d.state === 'running');
				out.devServers = { running: running.length, memoryMb: running.map((d) => d.memoryMb), pssMb: running.map((d) => d.pssMb), start: summary(starts) };
				out.memAvailableWithDevServersMb = memAvailableMb();
				say(`${running.length} dev servers running: memory (cgroup) each ${out.devServers.memoryMb.join(', ')} MB, PSS ${out.devServers.pssMb.join(', ')} MB; host MemAvailable ${out.memAvailableAtStartMb} → ${out.memAvailableWithDevServersMb} MB; start of one (warm): p50 ${out.devServers.start.p50} ms (${starts.join(' ')})`);
			}
		}
	} finally {
		await browser.close();
	}
	console.log(JSON.stringify(out));
}

main().catch((e) => {
	console.error(`measure.mjs: ${e.message}`);
	console.log(JSON.stringify({ ...out, error: e.message }));
	process.exit(1);
});
