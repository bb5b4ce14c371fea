// flow.test.mjs: the main job in a browser, as a person does it: sign up → dashboard → a project
// from todo-app → a chat turn with the provider double (streamed) → the file and the preview
// change → versions with the diff → restore → publish → the published site; then sign out and
// in, an expired access token, trash and restore, and a preview script that tries the API.
// Controls are found by role and accessible name only.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { launch, newPage, shotBoth as shot, email, PASSWORD, APP, api, hasEndpoint, fileText, waitForFileText } from './lib.mjs';

let browser;
let page;
const me = { email: email('flow') };
const NAME = 'Todo web flow';
let projectUrl;
let projectId;
let token; // the session's access token, for checking what the API offers

/** needs(t, method, path): fails t, saying so, when the server does not know the route. */
async function needs(t, method, path) {
	assert.ok(await hasEndpoint(method, path, token), `${method} ${path} is not on this server`);
	return false;
}

before(async () => {
	browser = await launch();
	page = await newPage(browser);
});
after(async () => {
	if (browser) await browser.close();
});

const role = (r, name, opts = {}) => page.getByRole(r, { name, ...opts });

test('/ sends a visitor to /login, which offers sign-in', async () => {
	await page.goto('/');
	await page.waitForURL('**/login');
	await role('heading', 'Sign in').waitFor();
	await role('textbox', 'Email').waitFor();
	await page.getByLabel('Password').waitFor();
	await role('button', 'Sign in', { exact: true }).waitFor();
	await shot(page, 'login');
});

test('sign up lands on the dashboard; no token in web storage', async () => {
	await role('link', 'Create an account').click();
	await page.waitForURL('**/signup');
	await role('textbox', 'Email').fill(me.email);
	await page.getByLabel('Password').fill(PASSWORD);
	await shot(page, 'signup');
	await role('button', 'Sign up').click();
	await page.waitForURL('**/dashboard');
	await role('heading', 'Projects').waitFor();
	const storage = await page.evaluate(() => JSON.stringify({ ...localStorage }) + JSON.stringify({ ...sessionStorage }) + document.cookie);
	assert.doesNotMatch(storage, /eyJ|token/i, 'tokens live only in HttpOnly cookies');
	const cookies = await page.context().cookies();
	const access = cookies.find((c) => c.name === 'svc_access_token');
	assert.ok(access && access.httpOnly, 'the access cookie is HttpOnly');
});

test('New project from the todo-app template opens the project page', async () => {
	await role('button', 'New project').click();
	const dialog = role('dialog', 'New project');
	await dialog.waitFor();
	await dialog.getByRole('textbox', { name: 'Project name' }).fill(NAME);
	await dialog.getByRole('combobox', { name: 'Template' }).selectOption('todo-app');
	await shot(page, 'new-project');
	await dialog.getByRole('button', { name: 'Create project' }).click();
	await page.waitForURL('**/projects/*');
	projectUrl = new URL(page.url()).pathname;
	await role('heading', NAME).waitFor();
	await role('textbox', 'Message').waitFor();
	projectId = projectUrl.split('/').pop();
	token = (await page.context().cookies()).find((c) => c.name === 'svc_access_token').value;
});

test('a chat turn streams: text, the tool line, usage; the file changes', async () => {
	const box = role('textbox', 'Message');
	await box.fill('add a footer');
	// The turn can end before a poll would see Stop, so the page itself notes
	// whether a Stop button was ever shown while it ran.
	await page.evaluate(() => {
		window.__sawStop = false;
		const look = () => {
			for (const b of document.querySelectorAll('button')) if (b.textContent.trim() === 'Stop') window.__sawStop = true;
		};
		window.__stopWatch = new MutationObserver(look);
		window.__stopWatch.observe(document.body, { childList: true, subtree: true });
	});
	await box.press('Enter');
	await page.getByText('Added a footer to index.html.').waitFor({ timeout: 60000 });
	assert.equal(await page.evaluate(() => (window.__stopWatch.disconnect(), window.__sawStop)), true, 'Stop was shown while the turn ran');
	await page.getByText('edit_file').first().waitFor();
	await page.getByText(/tokens in ·/).first().waitFor();
	await role('button', 'Send').waitFor();
	await shot(page, 'project-chat');
	await role('tab', 'Files').click();
	await role('treeitem', 'index.html').click();
	await waitForFileText(page, 'index.html', 'Made with svc');
	await shot(page, 'project-files');
});

test('Shift+Enter is a new line, Enter sends', async () => {
	const box = role('textbox', 'Message');
	await box.fill('hello');
	await box.press('Shift+Enter');
	await box.type('there');
	assert.equal(await box.inputValue(), 'hello\nthere');
	await box.fill('');
});

test('the preview shows the working tree with the change, sandboxed on its own origin', async (t) => {
	if (await needs(t, 'GET', `/projects/${projectId}/preview`)) return;
	await role('tab', 'Preview').click();
	const frameEl = await page.getByTitle('Preview').elementHandle({ timeout: 20000 });
	// its own origin (allow-same-origin: docs/security.md "The preview frame"), and nothing more than these
	assert.deepEqual((await frameEl.getAttribute('sandbox')).split(' ').sort(), ['allow-forms', 'allow-modals', 'allow-popups', 'allow-same-origin', 'allow-scripts']);
	const src = await frameEl.getAttribute('src');
	assert.match(src, /^http:\/\/[^/]+\.preview\.[^/]+\//, 'served from <token>.preview.<SVC_DOMAIN>');
	assert.notEqual(new URL(src).origin, new URL(APP).origin);
	const frame = await frameEl.contentFrame();
	await frame.getByText('Made with svc').waitFor({ timeout: 20000 });
	await shot(page, 'project-preview');
});

test('a script in the preview cannot read the API with the viewer\'s session', async (t) => {
	if (await needs(t, 'GET', `/projects/${projectId}/preview`)) return;
	const frame = await (await page.getByTitle('Preview').elementHandle()).contentFrame();
	const got = await frame.evaluate(async (app) => {
		const out = {};
		for (const [k, url] of [['app', app + '/api/auth/me'], ['own', '/api/auth/me']]) {
			try {
				const r = await fetch(url, { credentials: 'include' });
				out[k] = { status: r.status, body: (await r.text()).slice(0, 300) };
			} catch (e) {
				out[k] = { error: String(e) };
			}
		}
		try {
			out.cookie = document.cookie; // the preview's own cookies only: svc's are host-only cookies of app_url's host
		} catch (e) {
			out.cookie = 'blocked';
		}
		try {
			out.frameElement = window.frameElement === null ? 'null' : 'reachable'; // null across origins: no way to lift the sandbox
		} catch (e) {
			out.frameElement = 'blocked';
		}
		try {
			out.parent = String(window.parent.document.cookie);
		} catch (e) {
			out.parent = 'blocked';
		}
		out.origin = self.origin;
		return out;
	}, APP);
	const src = await page.getByTitle('Preview').getAttribute('src');
	assert.equal(got.origin, new URL(src).origin, 'the preview runs with its own origin');
	assert.notEqual(got.origin, new URL(APP).origin, 'never the app\'s');
	assert.notEqual(got.frameElement, 'reachable', 'the frame cannot reach its element in the app');
	assert.ok(got.app.error || got.app.status === 401, `app_url's API refuses it: ${JSON.stringify(got.app)}`);
	assert.ok(!got.app.body || !got.app.body.includes(me.email));
	assert.ok(got.own.error || !got.own.body.includes(me.email), `its own origin serves no API: ${JSON.stringify(got.own)}`);
	assert.ok(!/svc_access_token|svc_refresh_token/.test(got.cookie), got.cookie);
	assert.equal(got.parent, 'blocked');
});

test('Versions lists the agent\'s commit and its diff', async (t) => {
	await role('tab', 'Versions').click();
	const list = role('list', 'Versions');
	await list.getByText('Agent: add a footer').waitFor();
	await shot(page, 'project-versions');
	const head = (await api('GET', `/projects/${projectId}/versions`, { token })).json.items[0].sha;
	if (await needs(t, 'GET', `/projects/${projectId}/versions/${head}/diff`)) return;
	await list.getByRole('button', { name: /^Changes in version/ }).first().click();
	const diff = role('region', 'Changes in index.html');
	await diff.waitFor();
	assert.match(await diff.innerText(), /\+<footer class="site-footer">Made with svc<\/footer>/);
	await shot(page, 'project-versions-diff');
});

test('Restore asks first, then brings an older version back as a new one', async () => {
	const list = role('list', 'Versions');
	const buttons = list.getByRole('button', { name: /^Restore version/ });
	await buttons.last().click(); // the template's version
	const dialog = role('dialog', 'Restore this version?');
	await dialog.waitFor();
	await dialog.getByRole('button', { name: 'Restore', exact: true }).click();
	await page.getByText(/^Restored version/).waitFor();
	await list.getByText(/^Restore version/).first().waitFor();
	await role('tab', 'Files').click();
	await role('treeitem', 'index.html').click();
	await role('region', 'Contents of index.html').waitFor();
	for (let t0 = Date.now(); /Made with svc/.test(await fileText(page, 'index.html')) && Date.now() - t0 < 20000; ) await page.waitForTimeout(50);
	assert.doesNotMatch(await fileText(page, 'index.html'), /Made with svc/);
	// and the agent's version back again, to publish it
	await role('tab', 'Versions').click();
	const agent = list.getByRole('listitem').filter({ hasText: 'Agent: add a footer' });
	await agent.getByRole('button', { name: /^Restore version/ }).click();
	await role('dialog', 'Restore this version?').getByRole('button', { name: 'Restore', exact: true }).click();
	await page.getByText(/^Restored version/).waitFor();
	await role('tab', 'Files').click();
	await waitForFileText(page, 'index.html', 'Made with svc');
});

test('Publish shows progress, then a link to the published site, which has the change', async () => {
	await role('button', 'Publish').click();
	const link = role('link', 'Open published site');
	await link.waitFor({ timeout: 30000 });
	const href = await link.getAttribute('href');
	assert.match(href, /^http:\/\/[a-z0-9-]+\.localhost:\d+\/$/);
	await page.getByText(/^Published/).first().waitFor();
	const site = await page.context().newPage();
	await site.goto(href);
	await site.getByText('Made with svc').waitFor();
	await site.close();
});

test('plan mode shows the plan as steps, and Run plan carries it out', async () => {
	await role('combobox', 'Mode').selectOption('plan');
	const box = role('textbox', 'Message');
	await box.fill('plan please');
	await role('button', 'Send').click();
	const plan = role('heading', 'Plan');
	await plan.waitFor({ timeout: 60000 });
	await page.getByText('Style the footer', { exact: true }).waitFor();
	await role('button', 'Run plan').click();
	await page.getByText('Plan carried out.').waitFor({ timeout: 60000 });
	await role('button', 'Send').waitFor();
});

test('reasoning folds under Thinking; Stop ends a running turn', async () => {
	const box = role('textbox', 'Message');
	await box.fill('think');
	await box.press('Enter');
	const thinking = page.getByText('Thinking', { exact: true }).last();
	await thinking.waitFor({ timeout: 60000 });
	await role('button', 'Send').waitFor({ timeout: 60000 });
	assert.equal(await page.getByText('Let me think.', { exact: false }).last().isVisible(), false, 'folded');
	await thinking.click();
	await page.getByText(/Let me think\./).last().waitFor();
	await box.fill('very slow');
	await box.press('Enter');
	await page.getByText(/tick 1 /).last().waitFor({ timeout: 60000 });
	await role('button', 'Stop').click();
	await page.getByText('Stopped.').last().waitFor({ timeout: 30000 });
	await role('button', 'Send').waitFor();
});

test('when the API cannot be reached a banner says so, and goes away by itself when it answers', async () => {
	await role('tab', 'Preview').click();
	await page.route('**/api/**', (r) => r.abort('connectionrefused'));
	const banner = role('alert').filter({ has: role('button', 'Retry now') });
	try {
		await role('button', 'Reload preview').click();
		await banner.getByText(/server cannot be reached/).waitFor();
	} finally {
		await page.unroute('**/api/**');
	}
	await banner.waitFor({ state: 'detached', timeout: 20000 });
});

test('sign out, sign in again: the project is still there', async () => {
	await role('link', '← Projects').click();
	await role('link', NAME).waitFor();
	await role('button', 'Sign out').click();
	await page.waitForURL('**/login');
	await page.goto('/dashboard');
	await page.waitForURL(/\/login\?next=%2Fdashboard/);
	await role('textbox', 'Email').fill(me.email);
	await page.getByLabel('Password').fill(PASSWORD);
	await role('button', 'Sign in', { exact: true }).click();
	await page.waitForURL('**/dashboard');
	await role('link', NAME).waitFor();
	await shot(page, 'dashboard');
});

test('an expired access token is refreshed once and the page keeps working', async () => {
	const ctx = page.context();
	const refreshed = [];
	page.on('request', (r) => r.url().endsWith('/api/auth/refresh') && refreshed.push(r.method()));
	// What the browser holds once the 15-minute token expired: no access cookie at all, or one
	// the API refuses (an expired or stale token). Both must end in one refresh and a retry.
	const cookies = await ctx.cookies();
	const access = cookies.find((c) => c.name === 'svc_access_token');
	await ctx.clearCookies({ name: 'svc_access_token' });
	await page.goto(projectUrl);
	await role('heading', NAME).waitFor();
	assert.ok(refreshed.length >= 1, 'POST /api/auth/refresh was called');
	const parts = access.value.split('.');
	const claims = JSON.parse(Buffer.from(parts[1], 'base64url').toString());
	claims.exp = Math.floor(Date.now() / 1000) - 60;
	const expired = [parts[0], Buffer.from(JSON.stringify(claims)).toString('base64url'), parts[2]].join('.');
	// leave the project page first: a refresh of its own still in flight could set a fresh cookie over the
	// expired one below (CI saw no refresh once), and leaving cancels what has not answered yet
	await page.goto('about:blank');
	await page.waitForTimeout(1000);
	await ctx.addCookies([{ ...access, value: expired }]);
	refreshed.length = 0;
	await page.goto('/dashboard');
	await role('link', NAME).waitFor();
	assert.ok(refreshed.length >= 1, 'a refused token leads to a refresh too');
	// when the refresh token is gone as well, the app asks to sign in, keeping where the user was
	await ctx.clearCookies();
	await page.goto(projectUrl);
	await page.waitForURL((u) => u.pathname === '/login' && u.searchParams.get('next') === projectUrl);
	await role('textbox', 'Email').fill(me.email);
	await page.getByLabel('Password').fill(PASSWORD);
	await role('button', 'Sign in', { exact: true }).click();
	await page.waitForURL((u) => u.pathname === projectUrl);
	await role('heading', NAME).waitFor();
});

test('delete goes to the Trash, Restore brings it back', async (t) => {
	await page.goto('/dashboard');
	token = (await page.context().cookies()).find((c) => c.name === 'svc_access_token').value;
	await role('button', `Actions for ${NAME}`).click();
	await role('button', 'Delete').click();
	const dialog = role('dialog', `Delete ${NAME}?`);
	await dialog.getByRole('button', { name: 'Delete project' }).click();
	await page.getByText(`${NAME} is in the Trash.`).waitFor();
	assert.equal(await role('link', NAME).count(), 0);
	const listed = await api('GET', '/projects?deleted=true', { token });
	assert.ok((listed.json.items || []).some((p) => p.id === projectId && p.deletedAt), 'GET /projects?deleted=true lists it with deletedAt');
	await role('link', 'Trash').click();
	await page.waitForURL('**/trash');
	await role('heading', 'Trash').waitFor();
	await shot(page, 'trash');
	await role('button', `Restore ${NAME}`).click();
	await page.getByText(`${NAME} is back in your projects.`).waitFor();
	await role('link', 'All projects').click();
	await role('link', NAME).waitFor();
});

test('unknown pages and other people\'s projects get readable error pages', async () => {
	await page.goto('/no/such/page');
	await role('heading', 'Page not found').waitFor();
	await shot(page, 'not-found');
	const other = await api('POST', '/auth/signup', { body: { email: email('other'), password: PASSWORD } });
	const p = await api('POST', `/workspaces/${other.json.workspace.id}/projects`, { token: other.json.accessToken, body: { name: 'Not yours' } });
	await page.goto(`/projects/${p.json.id}`);
	await role('heading', /cannot see this project|Project not found/).waitFor();
	await page.goto('/projects/00000000-0000-4000-8000-000000000000');
	await role('heading', 'Project not found').waitFor();
});
