// budgets.test.mjs: the budgets of docs/web.md, measured in the browser: gzipped JavaScript per
// route (sign-in and dashboard <= 150 kB, project page <= 450 kB, also with the code editor
// open) and the time until the dashboard of a user with 100 projects is interactive (<= 1 s; the figure goes to
// bench/README.md). Also the keyboard path through sign-in and New project, and the phone layout.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { gzipSync } from 'node:zlib';
import { writeFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { launch, newPage, signIn, signUpApi, api, SHOTS, PHONE, APP } from './lib.mjs';

let browser;
let user;
let projectId;
const figures = {};

before(async () => {
	browser = await launch();
	user = await signUpApi('budget');
	// 100 projects, four requests at a time
	const names = Array.from({ length: 100 }, (_, i) => `Budget project ${String(i + 1).padStart(3, '0')}`);
	for (let i = 0; i < names.length; i += 4) {
		const rs = await Promise.all(
			names.slice(i, i + 4).map((name) => api('POST', `/workspaces/${user.workspaceId}/projects`, { token: user.token, body: { name, template: i === 0 ? 'todo-app' : 'blank' } })),
		);
		for (const r of rs) assert.equal(r.status, 201, JSON.stringify(r.json));
		if (!projectId) projectId = rs[0].json.id;
	}
});
after(async () => {
	if (browser) await browser.close();
	mkdirSync(SHOTS, { recursive: true });
	writeFileSync(join(SHOTS, 'budgets.json'), JSON.stringify(figures, null, 1) + '\n');
});

/** jsOf(page, go): gzipped bytes of the app's scripts the page loads while go() runs, with the cache off. */
async function jsOf(page, go) {
	// every byte counts as if the cache were empty (a first visit)
	const cdp = await page.context().newCDPSession(page);
	await cdp.send('Network.enable');
	await cdp.send('Network.setCacheDisabled', { cacheDisabled: true });
	const bodies = [];
	const seen = new Set();
	let last = Date.now();
	page.on('response', (r) => {
		// the app's own scripts (not those of the project running in the preview frame)
		if (r.request().resourceType() === 'script' && r.url().startsWith(APP + '/assets/') && r.status() < 300 && !seen.has(r.url())) {
			seen.add(r.url());
			last = Date.now();
			bodies.push(r.body().then((b) => ({ url: r.url(), gz: gzipSync(b).length }), () => ({ url: r.url(), gz: 0 })));
		}
	});
	await go();
	await page.waitForLoadState('networkidle');
	// and a second without another script: networkidle is reached once per navigation, and chunks
	// loaded later by import() (the editor's language) come after it
	while (Date.now() - last < 1000) await page.waitForTimeout(200);
	const all = await Promise.all(bodies);
	await cdp.send('Network.setCacheDisabled', { cacheDisabled: false });
	await cdp.detach();
	return { bytes: all.reduce((n, x) => n + x.gz, 0), files: all.map((x) => x.url.replace(/^.*\//, '')) };
}

test('sign-in loads at most 150 kB of gzipped JavaScript', async () => {
	const page = await newPage(browser);
	const js = await jsOf(page, async () => {
		await page.goto('/login');
		await page.getByRole('button', { name: 'Sign in', exact: true }).waitFor();
	});
	figures.signInJsGzipBytes = js.bytes;
	console.log(`sign-in: ${js.bytes} bytes of gzipped JS (${js.files.join(', ')})`);
	assert.ok(js.bytes > 0 && js.bytes <= 150000, `${js.bytes} bytes`);
	await page.context().close();
});

test('the dashboard loads at most 150 kB and the project page at most 450 kB of gzipped JavaScript', async () => {
	const page = await newPage(browser);
	await signIn(page, user.email);
	const dash = await jsOf(page, async () => {
		await page.goto('/dashboard');
		await page.getByRole('button', { name: 'New project' }).waitFor();
	});
	const proj = await jsOf(page, async () => {
		await page.goto(`/projects/${projectId}`);
		await page.getByRole('textbox', { name: 'Message' }).waitFor();
	});
	figures.dashboardJsGzipBytes = dash.bytes;
	figures.projectPageJsGzipBytes = proj.bytes;
	console.log(`dashboard: ${dash.bytes} bytes (${dash.files.join(', ')}); project page: ${proj.bytes} bytes (${proj.files.join(', ')})`);
	assert.ok(dash.bytes <= 150000, `dashboard ${dash.bytes} bytes`);
	assert.ok(proj.bytes <= 450000, `project page ${proj.bytes} bytes`);
	assert.ok(proj.files.length > dash.files.length, 'the project page is a chunk of its own');
	// the code editor (CodeMirror, HTML mode) comes in chunks of its own when a file is opened
	const collaboration = (await api('GET', '/auth/me', { token: user.token })).json.features.collaboration;
	if (collaboration) {
		const ed = await jsOf(page, async () => {
			await page.getByRole('tab', { name: 'Files' }).click();
			await page.getByRole('treeitem', { name: 'index.html', exact: true }).click();
			await page.getByRole('textbox', { name: 'Code editor' }).waitFor({ timeout: 30000 });
		});
		figures.projectPageWithEditorJsGzipBytes = proj.bytes + ed.bytes;
		console.log(`the editor's chunks: ${ed.bytes} bytes (${ed.files.join(', ')})`);
		assert.ok(ed.bytes > 0, 'the editor loads when a file is opened, not with the page');
		assert.ok(proj.bytes + ed.bytes <= 450000, `project page with the editor ${proj.bytes + ed.bytes} bytes`);
	}
	await page.context().close();
});

test('the dashboard of a user with 100 projects is interactive within 1 s', async () => {
	const page = await newPage(browser);
	await signIn(page, user.email);
	const runs = [];
	for (let i = 0; i < 5; i++) {
		await page.goto('/dashboard');
		const ms = await page.evaluate(
			() =>
				new Promise((resolve) => {
					const look = () => {
						const m = performance.getEntriesByName('svc:dashboard-interactive')[0];
						if (m) resolve(m.startTime);
						else setTimeout(look, 10);
					};
					look();
				}),
		);
		await page.getByRole('link', { name: 'Budget project 100' }).waitFor();
		runs.push(Math.round(ms));
	}
	// and it really is: the first card and New project answer at once
	await page.getByRole('button', { name: 'New project' }).click();
	await page.getByRole('dialog', { name: 'New project' }).waitFor({ timeout: 1000 });
	await page.keyboard.press('Escape');
	await page.getByRole('button', { name: 'Load more' }).click();
	await page.getByRole('link', { name: 'Budget project 076' }).waitFor();
	const sorted = [...runs].sort((a, b) => a - b);
	const median = sorted[Math.floor(sorted.length / 2)];
	figures.dashboard100InteractiveMs = { median, best: sorted[0], runs };
	console.log(`dashboard with 100 projects: interactive ${median} ms after navigation start (median; runs ${runs.join(', ')} ms)`);
	// The budget is for the typical load, so the median of five must make it (one slow load from
	// a busy neighbour on the machine does not decide); bench/README.md reports the same median.
	assert.ok(median <= 1000, `median of five: ${median} ms (runs ${runs.join(', ')} ms)`);
	await page.context().close();
});

test('keyboard: sign in and open New project without a mouse', async () => {
	const page = await newPage(browser);
	await page.goto('/login');
	await page.getByRole('button', { name: 'Sign in', exact: true }).waitFor();
	const focused = async () => page.evaluate(() => {
		const e = document.activeElement;
		return (e.labels && e.labels[0] && e.labels[0].textContent) || e.getAttribute('aria-label') || e.textContent.trim();
	});
	const reached = [];
	for (let i = 0; i < 6 && !reached.includes('Sign in'); i++) {
		await page.keyboard.press('Tab');
		reached.push(await focused());
	}
	assert.deepEqual(reached.filter((n) => ['Email', 'Password', 'Sign in'].includes(n)), ['Email', 'Password', 'Sign in'], reached.join(' / '));
	await page.getByRole('textbox', { name: 'Email' }).focus();
	await page.keyboard.type(user.email);
	await page.keyboard.press('Tab');
	await page.keyboard.type('correct horse battery');
	await page.keyboard.press('Enter');
	await page.waitForURL('**/dashboard');
	const newButton = page.getByRole('button', { name: 'New project' });
	await newButton.focus();
	await page.keyboard.press('Enter');
	await page.getByRole('dialog', { name: 'New project' }).waitFor();
	assert.equal(await focused(), 'Project name', 'focus starts in the first field');
	await page.keyboard.press('Escape');
	await page.getByRole('dialog').waitFor({ state: 'detached' });
	await page.context().close();
});

test('phone (390x844): the project page is one column of tabs with the chat among them', async () => {
	const page = await newPage(browser, PHONE);
	await signIn(page, user.email);
	await page.goto(`/projects/${projectId}`);
	await page.getByRole('tab', { name: 'Chat' }).click();
	await page.getByRole('textbox', { name: 'Message' }).waitFor();
	assert.deepEqual(await page.getByRole('tablist', { name: 'Project views' }).getByRole('tab').allInnerTexts(), ['Chat', 'Preview', 'Files', 'Versions', 'Deployments', 'Backend']); // Backend: the user is a member
	await page.getByRole('tab', { name: 'Files' }).click();
	await page.getByRole('treeitem', { name: 'index.html' }).click();
	await page.getByRole('region', { name: 'Contents of index.html' }).waitFor();
	const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
	assert.ok(overflow <= 0, `no sideways scrolling (${overflow} px too wide)`);
	await page.context().close();
});
