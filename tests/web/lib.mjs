// lib.mjs: what the browser tests share: Debian's chromium through playwright-core, the stack's
// URLs, screenshots under the test logs, and API calls for setting up data.
import { chromium } from 'playwright-core';
import { afterEach } from 'node:test';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';

export const APP = (process.env.SVC_APP_URL || 'http://127.0.0.1:18080').replace(/\/$/, '');
export const BASE = (process.env.SVC_BASE_URL || APP + '/api').replace(/\/$/, '');
export const SHOTS = join(process.env.SVC_TEST_LOGS || 'var-test/logs', 'web');
export const DESKTOP = { width: 1280, height: 800 };
export const PHONE = { width: 390, height: 844 };

// The flags every run uses (docs/web.md "Tests"). Playwright adds --headless and its own
// fresh --user-data-dir (a new temporary profile per launch) and --remote-debugging-pipe.
const FLAGS = ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];

/** launch(): a headless Debian chromium (SVC_CHROMIUM, default /usr/bin/chromium) with a fresh profile. */
export function launch() {
	return chromium.launch({ executablePath: process.env.SVC_CHROMIUM || '/usr/bin/chromium', headless: true, args: FLAGS, timeout: 60000 });
}

// Content-Security-Policy violations on app_url's pages (docs/web.md "Content-Security-Policy"):
// every context newPage() makes reports them here, from a securitypolicyviolation listener in
// every frame of app_url's origin and from Chromium's console; after each test of any file
// (the afterEach below) a violation fails that test. Preview and published-site frames are
// other origins with policies of their own and are not counted.
const cspViolations = [];
const APP_ORIGIN = new URL(APP).origin;

/** cspTake(): the violations seen since the last call (and forgets them). */
export function cspTake() {
	return cspViolations.splice(0, cspViolations.length);
}

afterEach(() => {
	const seen = cspTake();
	if (seen.length) throw new Error(`Content-Security-Policy violation on app_url:\n${seen.join('\n')}`);
});

/** watchCsp(context, origin): reports context's CSP violations on `origin` (app_url's) into cspViolations. */
export async function watchCsp(context, origin = APP_ORIGIN) {
	await context.exposeBinding('__svcCspViolation', ({ frame }, text) => {
		if (frame.url().startsWith(origin + '/')) cspViolations.push(`${frame.url()}: ${text}`);
	});
	await context.addInitScript(() => {
		document.addEventListener('securitypolicyviolation', (e) => {
			window.__svcCspViolation(`${e.effectiveDirective} blocked ${e.blockedURI || '(inline)'} at ${e.sourceFile || '?'}:${e.lineNumber}`);
		});
	});
	context.on('console', (msg) => {
		const at = (msg.location() && msg.location().url) || '';
		if (/Content.Security.Policy/i.test(msg.text()) && at.startsWith(origin + '/'))
			cspViolations.push(`console ${at}: ${msg.text()}`);
	});
}

/** newPage(browser, viewport): a page in a new context (its own cookies) on app_url, its CSP violations watched. */
export async function newPage(browser, viewport = DESKTOP) {
	const context = await browser.newContext({ viewport, baseURL: APP, locale: 'en-US', timezoneId: 'UTC' });
	context.setDefaultTimeout(20000);
	await watchCsp(context);
	const page = await context.newPage();
	page.on('pageerror', (e) => console.log(`page error: ${e.message}`));
	return page;
}

/** shot(page, name): saves the page as <logs>/web/<name>-<width>x<height>.png. */
export async function shot(page, name) {
	mkdirSync(SHOTS, { recursive: true });
	const v = page.viewportSize();
	await page.screenshot({ path: join(SHOTS, `${name}-${v.width}x${v.height}.png`) });
}

/**
 * shotBoth(page, name, at): the screenshot at 1280x800 and at 390x844, back to the size it had;
 * `at` (optional, a locator) is scrolled into view at each size first.
 */
export async function shotBoth(page, name, at) {
	const v = page.viewportSize();
	for (const size of [DESKTOP, PHONE]) {
		await page.setViewportSize(size);
		if (at) await at.scrollIntoViewIfNeeded();
		await page.waitForTimeout(150);
		await shot(page, name);
	}
	await page.setViewportSize(v);
}

/** email(tag): a new address for a test user. */
export const email = (tag) => `web-${tag}-${randomBytes(4).toString('hex')}@example.test`;
export const PASSWORD = 'correct horse battery';

/** api(method, path, {token, body}): one API call from node; resolves {status, json}. */
export async function api(method, path, { token, body } = {}) {
	const headers = { Accept: 'application/json' };
	if (token) headers.Authorization = `Bearer ${token}`;
	if (body !== undefined) headers['Content-Type'] = 'application/json';
	else if (method !== 'GET') headers['Content-Length'] = '0';
	// A custom-domain change makes svc-worker reload lighttpd (SVC_SITES_RELOAD_CMD), which refuses
	// connections for a second or more under load; a refused connection sent nothing, so it is tried again
	// (10 s at most), and so is one on a kept-alive socket the old lighttpd closed before it read the request
	// (undici's "other side closed": the restart drops idle connections).
	let r;
	for (let tries = 0; ; tries++) {
		try {
			r = await fetch(BASE + path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
			break;
		} catch (e) {
			const code = e?.cause?.code;
			if (!(code === 'ECONNREFUSED' || (code === 'UND_ERR_SOCKET' && /other side closed/.test(e.cause.message))) || tries >= 100) {
				e.message += ` (${method} ${path}: ${code}: ${e?.cause?.message})`;
				throw e;
			}
			await new Promise((resolve) => setTimeout(resolve, 100));
		}
	}
	const t = await r.text();
	let json = null;
	try {
		json = t ? JSON.parse(t) : null;
	} catch (e) {
		json = { raw: t };
	}
	return { status: r.status, json };
}

/** signUpApi(tag): a user made through the API; resolves {email, token, workspaceId}. */
export async function signUpApi(tag) {
	const e = email(tag);
	const r = await api('POST', '/auth/signup', { body: { email: e, password: PASSWORD, displayName: `Web ${tag}` } });
	if (r.status !== 201) throw new Error(`signup: ${r.status} ${JSON.stringify(r.json)}`);
	return { email: e, token: r.json.accessToken, workspaceId: r.json.workspace.id };
}

/** signIn(page, email): signs in through /login and waits for the dashboard. */
export async function signIn(page, e, next) {
	await page.goto(next ? `/login?next=${encodeURIComponent(next)}` : '/login');
	await page.getByRole('textbox', { name: 'Email' }).fill(e);
	await page.getByLabel('Password').fill(PASSWORD);
	await page.getByRole('button', { name: 'Sign in', exact: true }).click();
	await page.waitForURL(next ? (u) => u.pathname === next.split('?')[0] : '**/dashboard');
}

/** hasEndpoint(method, path, token): false when the router does not know the route (404 "Not found."). */
export async function hasEndpoint(method, path, token) {
	const r = await api(method, path, { token });
	return !(r.status === 404 && r.json && r.json.message === 'Not found.');
}

/** until(fn, what, ms): polls fn() every 100 ms until it resolves truthy and resolves that; fails after ms (15 s). */
export async function until(fn, what, ms = 15000) {
	const end = Date.now() + ms;
	let last;
	while (Date.now() < end) {
		last = await fn();
		if (last) return last;
		await new Promise((r) => setTimeout(r, 100));
	}
	throw new Error(`timed out waiting for ${what} (last: ${JSON.stringify(last)})`);
}

/** previewFrame(page): the Frame of the project page's preview as it is now (a reload makes a new one). */
export function previewFrame(page) {
	return until(async () => (await page.getByTitle('Preview').elementHandle({ timeout: 20000 })).contentFrame(), 'the preview frame');
}

/**
 * postFromElsewhere(page, msg): msg posted to the app's window as a forger would: from the app's own
 * window, and from a sandboxed frame of another (opaque, "null") origin that is not the preview;
 * the frame (title "Other frame") is removed after a second, when the app must have ignored both.
 */
export async function postFromElsewhere(page, msg) {
	await page.evaluate((m) => {
		window.postMessage(m, '*');
		const other = document.createElement('iframe');
		other.setAttribute('sandbox', 'allow-scripts');
		other.title = 'Other frame';
		other.srcdoc = `<script>parent.postMessage(${JSON.stringify(m)}, '*')<\/script>`;
		document.body.appendChild(other);
	}, msg);
	await page.waitForTimeout(1000);
	await page.getByTitle('Other frame').evaluate((e) => e.remove());
}

/**
 * fileText(page, path): the whole text of `path` as the Files view shows it: from the code
 * editor's state when it is open in the editor (CodeMirror renders only the lines in view),
 * else the read-only view's text; '' while neither is there yet (never waits). The region and
 * the editor are found by role and name.
 */
export async function fileText(page, path) {
	const region = page.getByRole('region', { name: `Contents of ${path}` });
	const ed = region.getByRole('textbox', { name: 'Code editor' });
	if (await ed.count()) return ed.evaluate((el) => (el.cmTile && el.cmTile.root && el.cmTile.root.view ? el.cmTile.root.view.state.doc.toString() : el.textContent));
	const code = region.getByRole('code');
	return (await code.count()) ? code.first().textContent() : ''; // '' while the file is opening
}

/** waitForFileText(page, path, text, ms): until fileText(page, path) contains `text`; the milliseconds it took. */
export async function waitForFileText(page, path, text, ms = 20000) {
	const t0 = Date.now();
	for (;;) {
		if ((await fileText(page, path).catch(() => '')).includes(text)) return Date.now() - t0;
		if (Date.now() - t0 > ms) throw new Error(`${path} did not show ${JSON.stringify(text)} within ${ms} ms`);
		await page.waitForTimeout(25);
	}
}
