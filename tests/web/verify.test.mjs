// verify.test.mjs: sign-up verified by e-mail in a browser (docs/api.md "POST /auth/signup"), on the
// test stack's no-provider front end, where SVC_SIGNUP_VERIFY is on: /signup says "Check your e-mail",
// the link mailed to the SMTP double opens /verify, which signs in and lands on the dashboard; the
// same link again says it is used up. Controls are found by role and accessible name only.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { launch, email, until, shotBoth, DESKTOP, PASSWORD, watchCsp } from './lib.mjs';

const VAPP = (process.env.SVC_NOPROVIDER_BASE_URL || '').replace(/\/api\/?$/, '');
const SMTP = (process.env.SVC_SMTP_DOUBLE_URL || '').replace(/\/$/, '');

let browser;
let page;
const addr = email('verify');
let link;

before(async () => {
	browser = await launch();
	const context = await browser.newContext({ viewport: DESKTOP, baseURL: VAPP, locale: 'en-US', timezoneId: 'UTC' });
	context.setDefaultTimeout(20000);
	if (VAPP) await watchCsp(context, new URL(VAPP).origin);
	page = await context.newPage();
	page.on('pageerror', (e) => console.log(`page error: ${e.message}`));
});
after(async () => {
	if (browser) await browser.close();
});

const role = (r, name, opts = {}) => page.getByRole(r, { name, ...opts });

test('sign-up on a front that verifies e-mail says Check your e-mail', async () => {
	assert.ok(VAPP && SMTP, 'SVC_NOPROVIDER_BASE_URL and SVC_SMTP_DOUBLE_URL are set (./svc-dev test)');
	await page.goto('/signup');
	await role('textbox', 'Email').fill(addr);
	await page.getByLabel('Password').fill(PASSWORD);
	await role('button', 'Sign up').click();
	await role('heading', 'Check your e-mail').waitFor();
	const status = await page.getByRole('status').textContent();
	assert.match(status, new RegExp(addr.replace(/[.]/g, '\\.')));
	assert.equal(page.url(), VAPP + '/signup', 'no session yet: the page stays');
	await shotBoth(page, 'signup-check-email');
});

test('the mailed link opens /verify, signs in and lands on the dashboard', async () => {
	link = await until(async () => {
		const r = await fetch(SMTP + '/_messages');
		const mine = (await r.json()).filter((m) => (m.to || []).includes(addr));
		const m = mine.length && /(https?:\/\/\S+\/verify\?token=[0-9a-f]{64})/.exec(mine[mine.length - 1].data);
		return m && m[1];
	}, 'the sign-up message', 120000);
	await page.goto(link);
	await page.waitForURL('**/dashboard');
	await role('heading', 'Projects').waitFor();
	const cookies = await page.context().cookies();
	assert.ok(cookies.find((c) => c.name === 'svc_access_token' && c.httpOnly), 'signed in with the HttpOnly cookie');
});

test('the same link again says it is used up', async () => {
	await page.context().clearCookies();
	await page.goto(link);
	await role('heading', 'Confirm your e-mail').waitFor();
	await page.getByRole('alert').filter({ hasText: 'used up or expired' }).waitFor();
	await role('link', 'Sign up again').waitFor();
	await shotBoth(page, 'verify-used-link');
});
