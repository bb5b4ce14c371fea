// csp.test.mjs: app_url's Content-Security-Policy is in force (docs/web.md "Content-Security-Policy"):
// an injected inline script and a script from another origin do not run, and the harness of
// lib.mjs sees the violation (every other browser test fails on one); the pages load without any.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { launch, newPage, signIn, signUpApi, api, cspTake, until, APP } from './lib.mjs';

let browser;
let page;

before(async () => {
	browser = await launch();
	page = await newPage(browser);
});
after(async () => {
	if (browser) await browser.close();
});

test('app_url answers with a Content-Security-Policy that allows only its own scripts', async () => {
	const r = await fetch(APP + '/login');
	const csp = r.headers.get('content-security-policy') || '';
	assert.match(csp, /(^|;)\s*script-src 'self'\s*(;|$)/, csp);
	for (const d of ["object-src 'none'", "base-uri 'none'", "frame-ancestors 'none'", "img-src 'self' data: blob:"])
		assert.ok(csp.includes(d), `${d} in ${csp}`);
	assert.doesNotMatch(csp, /(script-src|default-src)[^;]*unsafe/, csp);
});

test('an inline script put into the page does not run, and the violation is reported', async () => {
	await page.goto('/login');
	await page.getByRole('heading', { name: 'Sign in' }).waitFor();
	const ran = await page.evaluate(async () => {
		window.__svcInjected = false;
		const d = document.createElement('div');
		// what a Markdown renderer that let HTML through would do
		d.innerHTML = '<img src="x:" onerror="window.__svcInjected = true">';
		document.body.appendChild(d);
		const s = document.createElement('script');
		s.textContent = 'window.__svcInjected = true';
		document.body.appendChild(s);
		await new Promise((res) => setTimeout(res, 300));
		return window.__svcInjected;
	});
	assert.equal(ran, false, 'the injected inline script ran: no Content-Security-Policy in force');
	const seen = await until(() => { const v = cspTake(); return v.length ? v : null; }, 'the CSP violation report', 5000);
	assert.ok(seen.some((v) => /script-src/.test(v)), seen.join('\n'));
});

test('a script from another origin does not load', async () => {
	await page.goto('/login');
	const loaded = await page.evaluate(() => new Promise((res) => {
		const s = document.createElement('script');
		s.src = 'http://127.0.0.2:9/evil.js';
		s.onload = () => res('loaded');
		s.onerror = () => res('refused');
		document.head.appendChild(s);
	}));
	assert.equal(loaded, 'refused');
	const seen = await until(() => { const v = cspTake(); return v.length ? v : null; }, 'the CSP violation report', 5000);
	assert.ok(seen.some((v) => /script-src/.test(v) && /127\.0\.0\.2/.test(v)), seen.join('\n'));
});

test('the dashboard and a project page (its preview frame, its collaboration socket) load without a violation', async () => {
	const who = await signUpApi('csp');
	const p = await api('POST', `/workspaces/${who.workspaceId}/projects`, { token: who.token, body: { name: 'CSP check', template: 'todo-app' } });
	assert.equal(p.status, 201);
	await signIn(page, who.email);
	await page.waitForLoadState('networkidle');
	await page.goto(`/projects/${p.json.id}`);
	await until(() => page.frames().some((f) => /\.preview\./.test(f.url())), 'the preview frame', 20000);
	await page.waitForTimeout(1500);
	// the afterEach of lib.mjs fails this test on any violation seen while it ran
});
