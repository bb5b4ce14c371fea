// app-backend.test.mjs: the apps' backend (/_svc/, issue 28) in the browser through the templates that use it.
// The react-backend template in the editor's preview (its dev server, on the preview origin, framed by the app:
// docs/security.md "The preview frame") and on its published site: two end users in two browser contexts sign up,
// each adds todos and sees only their own (and cannot read the other's by id), signing out hides them, a reload
// keeps the session, and the preview's end users are not the published site's. The todo-app template: signed out
// its list is the browser's (localStorage, kept across a reload), signed in it is the end user's on the server.
// Screenshots: app-backend-react (the published app, signed in) and app-backend-react-signin, at 1280x800 and
// 390x844; app-backend-preview (the editor with the signed-in preview).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { launch, newPage, signIn, signUpApi, api, previewFrame, shot, shotBoth, until } from './lib.mjs';

let browser;
let owner;
let react; // {id, site}: the react-backend project and its published site's URL
let todo; // the same for todo-app

const endUser = (tag) => ({ email: `${tag}-${randomBytes(4).toString('hex')}@example.test`, password: `pw-${randomBytes(6).toString('hex')}` });

async function project(name, template) {
	const p = await api('POST', `/workspaces/${owner.workspaceId}/projects`, { token: owner.token, body: { name, template } });
	assert.equal(p.status, 201, JSON.stringify(p.json));
	const d = await api('POST', `/deploy/${p.json.id}`, { token: owner.token });
	assert.equal(d.status, 200, `publishing ${template}: ${JSON.stringify(d.json)}`);
	return { id: p.json.id, site: d.json.url };
}

before(async () => {
	browser = await launch();
	owner = await signUpApi('appbackend');
	react = await project('Backend todos', 'react-backend');
	todo = await project('Todo backend', 'todo-app');
});
after(async () => {
	if (browser) await browser.close();
});

// ---- the react-backend app, wherever it runs (a page or the preview's frame) ----

/** signUp(app, u): the app's Create an account form; waits until it shows the signed-in user. */
async function signUp(app, u) {
	await app.getByRole('button', { name: 'Create an account' }).click();
	await app.getByLabel('Email').fill(u.email);
	await app.getByLabel('Password').fill(u.password);
	await app.getByRole('button', { name: 'Sign up', exact: true }).click();
	await app.getByText(u.email).waitFor();
	await app.getByRole('button', { name: 'Sign out' }).waitFor();
}

async function signInApp(app, u) {
	await app.getByLabel('Email').fill(u.email);
	await app.getByLabel('Password').fill(u.password);
	await app.getByRole('button', { name: 'Sign in', exact: true }).click();
}

async function addTodo(app, title) {
	await app.getByRole('textbox', { name: 'New todo' }).fill(title);
	await app.getByRole('button', { name: 'Add', exact: true }).click();
	await app.getByRole('list', { name: 'Todos' }).getByText(title, { exact: true }).waitFor();
}

/** titles(app): the todos the app shows, in order. */
async function titles(app) {
	const list = app.getByRole('list', { name: 'Todos' });
	if (!(await list.count())) return [];
	return (await list.getByRole('listitem').allInnerTexts()).map((t) => t.replace(/\s*Delete\s*$/, '').trim());
}

/** fromPage(app, path): what the app's own origin answers a GET of path, with its cookie: {status, body}. */
function fromPage(app, path) {
	return app.evaluate(async (p) => {
		const r = await fetch(p, { credentials: 'same-origin' });
		return { status: r.status, body: await r.text() };
	}, path);
}

/** mine(app): the signed-in end user's todos as the server lists them to the page. */
async function mine(app) {
	const r = await fromPage(app, '/_svc/data/todos?limit=100');
	assert.equal(r.status, 200, r.body);
	return JSON.parse(r.body).items;
}

/** twoUsers(openA, openB, where): two end users in two contexts, each with only their own todos; returns them. */
async function twoUsers(a, b, where) {
	const ua = endUser(`a-${where}`);
	const ub = endUser(`b-${where}`);
	await signUp(a, ua);
	await addTodo(a, `A ${where}: buy milk`);
	await addTodo(a, `A ${where}: call the bank`);
	await signUp(b, ub);
	await addTodo(b, `B ${where}: walk the dog`);
	assert.deepEqual(await titles(b), [`B ${where}: walk the dog`], 'B sees only their own todo');
	assert.deepEqual(await titles(a), [`A ${where}: buy milk`, `A ${where}: call the bank`], 'A sees only theirs');
	// the server, not the page: B's session lists only B's records, and A's record by id is not found
	const aItems = await mine(a);
	assert.deepEqual(aItems.map((t) => t.title).sort(), [`A ${where}: buy milk`, `A ${where}: call the bank`]);
	assert.deepEqual((await mine(b)).map((t) => t.title), [`B ${where}: walk the dog`]);
	assert.equal((await fromPage(b, `/_svc/data/todos/${aItems[0].id}`)).status, 404, 'B cannot get A\'s todo');
	assert.equal((await fromPage(b, `/_svc/data/todos?filter=owner:${aItems[0].owner}`)).body.includes('buy milk'), false);
	// done, then the other still sees theirs unchanged
	await a.getByRole('checkbox', { name: `Done: A ${where}: buy milk` }).click(); // controlled: checked once the server answered
	await until(async () => (await mine(a)).some((t) => t.title === `A ${where}: buy milk` && t.done === true), 'the todo done on the server');
	return { ua, ub };
}

test('react-backend in the editor\'s preview: two end users each see only their own todos; sign-out hides them; a reload keeps the session', async () => {
	const pa = await newPage(browser);
	const pb = await newPage(browser);
	await signIn(pa, owner.email, `/projects/${react.id}`);
	await signIn(pb, owner.email, `/projects/${react.id}`);
	// the preview is the project's dev server (installed on first view); its page is the template's
	const shown = async (p) => {
		try {
			return (await (await previewFrame(p)).getByRole('button', { name: 'Create an account' }).count()) > 0;
		} catch (e) {
			return false; // the frame is (re)loading: "Starting the dev server…" reloads itself
		}
	};
	// a page whose module arrived cut short ("Unexpected end of input", seen once under CI's load; noted for
	// the dev-server relay) never renders: as a person would, press Reload preview after a minute
	for (const p of [pa, pb]) {
		let since = Date.now();
		await until(async () => {
			if (await shown(p)) return true;
			if (Date.now() - since > 60000) {
				since = Date.now();
				await p.getByRole('button', { name: 'Reload preview' }).click({ timeout: 5000 }).catch(() => {});
			}
			return false;
		}, 'the app in the preview', 330000);
	}
	const fa = await previewFrame(pa);
	const fb = await previewFrame(pb);
	const origin = await fa.evaluate(() => self.origin);
	assert.match(origin, /^http:\/\/[a-z2-7]+\.preview\./, 'the preview runs on its own origin');
	const { ua } = await twoUsers(fa, fb, 'preview');
	await shot(pa, 'app-backend-preview');
	// a reload of the frame's page keeps the session (same preview URL, same origin, its partitioned cookie)
	await fa.evaluate(() => location.reload());
	const fa2 = await previewFrame(pa);
	await fa2.getByRole('button', { name: 'Sign out' }).waitFor({ timeout: 60000 });
	await fa2.getByRole('list', { name: 'Todos' }).getByText('A preview: call the bank').waitFor();
	assert.deepEqual(await titles(fa2), ['A preview: buy milk', 'A preview: call the bank']);
	// signing out hides the todos; signing in again brings them back
	await fa2.getByRole('button', { name: 'Sign out' }).click();
	await fa2.getByRole('heading', { name: 'Sign in' }).waitFor();
	assert.deepEqual(await titles(fa2), []);
	assert.equal((await fromPage(fa2, '/_svc/data/todos')).status, 401, 'signed out, the server answers nothing');
	await signInApp(fa2, ua);
	await fa2.getByRole('list', { name: 'Todos' }).getByText('A preview: call the bank').waitFor();
	// the preview's end users are the test environment's: A is unknown on the published site
	const live = await newPage(browser);
	await live.goto(react.site);
	await signInApp(live, ua);
	await live.getByRole('alert').filter({ hasText: 'Wrong e-mail address or password.' }).waitFor();
	for (const p of [pa, pb, live]) await p.context().close();
});

test('react-backend published: two end users in two browsers, each with their own todos; sign-out hides them; a reload keeps the session', async () => {
	const a = await newPage(browser);
	const b = await newPage(browser);
	for (const p of [a, b]) {
		await p.goto(react.site);
		await p.getByRole('heading', { name: 'Sign in' }).waitFor();
	}
	await shotBoth(a, 'app-backend-react-signin');
	const { ub } = await twoUsers(a, b, 'live');
	await shotBoth(a, 'app-backend-react');
	await b.reload();
	await b.getByRole('button', { name: 'Sign out' }).waitFor();
	await b.getByRole('list', { name: 'Todos' }).getByText('B live: walk the dog').waitFor();
	assert.deepEqual(await titles(b), ['B live: walk the dog'], 'the reload kept B signed in, with B\'s todos');
	const cookies = await b.context().cookies(new URL('/_svc/', react.site).href); // its Path is /_svc/
	const sess = cookies.find((c) => c.name === 'svc_app_session');
	assert.ok(sess && sess.httpOnly && sess.sameSite === 'Lax' && sess.path === '/_svc/', JSON.stringify(cookies));
	assert.equal(await b.evaluate(() => document.cookie.includes('svc_app_session')), false, 'the page\'s script never reads it');
	await b.getByRole('button', { name: 'Delete B live: walk the dog' }).click();
	await until(async () => (await titles(b)).length === 0, 'the todo deleted');
	await b.getByRole('button', { name: 'Sign out' }).click();
	await b.getByRole('heading', { name: 'Sign in' }).waitFor();
	assert.deepEqual(await titles(b), []);
	await b.reload();
	await b.getByRole('heading', { name: 'Sign in' }).waitFor();
	// a wrong password is refused and said so
	await signInApp(b, { email: ub.email, password: 'not the password' });
	await b.getByRole('alert').filter({ hasText: 'Wrong e-mail address or password.' }).waitFor();
	for (const p of [a, b]) await p.context().close();
});

/** settled(page): the preview's Frame once its page has stayed loaded for 1.5 s (the project page may reload it as it opens). */
async function settled(page) {
	return until(async () => {
		try {
			const f = await previewFrame(page);
			const mark = await f.evaluate(() => document.readyState === 'complete' && (window.__settled = Math.random()));
			if (!mark) return null;
			await page.waitForTimeout(1500);
			return (await f.evaluate(() => window.__settled)) === mark ? f : null;
		} catch (e) {
			return null; // detached by a reload
		}
	}, 'the preview settled', 60000);
}

// ---- todo-app: local signed out, the server's signed in ----

const todoTitles = async (page) => (await page.locator('#todo-list .title').allInnerTexts()).map((t) => t.trim());

async function todoAdd(page, title) {
	await page.getByRole('textbox', { name: 'What needs to be done?' }).fill(title);
	await page.getByRole('button', { name: 'Add', exact: true }).click();
	await page.locator('#todo-list .title', { hasText: title }).waitFor();
}

test('todo-app keeps its list in the browser signed out and on the server signed in', async () => {
	const page = await newPage(browser);
	await page.goto(todo.site);
	await page.getByText('Saved in this browser.').waitFor();
	await page.getByText('Sign in to keep your todos on the server').waitFor();
	await todoAdd(page, 'local: water the plants');
	await page.reload();
	await page.locator('#todo-list .title', { hasText: 'local: water the plants' }).waitFor();
	assert.match(await page.evaluate(() => localStorage.getItem('svc-todo-app:v1')), /water the plants/);
	// sign up: the list is now the end user's on the server (empty), the local one stays in the browser
	const u = endUser('todo');
	await page.getByText('Sign in to keep your todos on the server').click();
	await page.getByLabel('Email').fill(u.email);
	await page.getByLabel('Password').fill(u.password);
	await page.getByRole('button', { name: 'Create account' }).click();
	await page.getByText(`Signed in as ${u.email}`).waitFor();
	await page.locator('#todo-list:not([aria-busy])').waitFor({ state: 'attached' }); // the server's list is in (an empty list has no height)
	assert.deepEqual(await todoTitles(page), [], 'the new end user\'s list on the server is empty');
	await todoAdd(page, 'server: renew the passport');
	await todoAdd(page, 'server: book the dentist');
	await page.locator('.todo', { hasText: 'server: book the dentist' }).locator('.toggle').click();
	await until(async () => {
		const r = await fromPage(page, '/_svc/data/todos?limit=100');
		const items = r.status === 200 ? JSON.parse(r.body).items : [];
		return items.length === 2 && items.find((t) => t.title === 'server: book the dentist')?.completed === true;
	}, 'both todos on the server, one completed');
	assert.doesNotMatch(await page.evaluate(() => localStorage.getItem('svc-todo-app:v1')), /passport/, 'nothing of the server list in localStorage');
	await shotBoth(page, 'app-backend-todo-app');
	// another browser, the same end user: the same server list
	const other = await newPage(browser);
	await other.goto(todo.site);
	await other.getByText('Sign in to keep your todos on the server').click();
	await other.getByLabel('Email').fill(u.email);
	await other.getByLabel('Password').fill(u.password);
	await other.getByRole('button', { name: 'Sign in', exact: true }).click();
	await other.getByText(`Signed in as ${u.email}`).waitFor();
	await until(async () => (await todoTitles(other)).join('|') === 'server: renew the passport|server: book the dentist', 'the server list in another browser');
	// clear completed deletes on the server too
	await other.getByRole('button', { name: 'Clear completed' }).click();
	await until(async () => (await mine(other)).length === 1, 'the completed todo deleted on the server');
	// reload keeps the session; sign out brings the browser's own list back
	await page.reload();
	await page.getByText(`Signed in as ${u.email}`).waitFor();
	await until(async () => (await todoTitles(page)).join('|') === 'server: renew the passport', 'the server list after a reload');
	await page.getByRole('button', { name: 'Sign out' }).click();
	await page.getByText('Saved in this browser.').waitFor();
	await until(async () => (await todoTitles(page)).join('|') === 'local: water the plants', 'the local list back');
	for (const p of [page, other]) await p.context().close();
});

test('todo-app in the editor\'s preview: signed in, a change of files and Reload preview keep the frame\'s origin and its end user', async () => {
	const page = await newPage(browser);
	await signIn(page, owner.email, `/projects/${todo.id}`);
	let f = await settled(page);
	await f.getByText('Sign in to keep your todos on the server').click();
	const u = endUser('todo-preview');
	await f.getByLabel('Email').fill(u.email);
	await f.getByLabel('Password').fill(u.password);
	await f.getByRole('button', { name: 'Create account' }).click();
	await f.getByText(`Signed in as ${u.email}`).waitFor();
	await todoAdd(f, 'preview: on the server');
	const src = await page.getByTitle('Preview').getAttribute('src');
	// past the next whole minute, GET /projects/:id/preview gives another URL (its expiry is rounded up to the
	// minute): the frame must stay on the one it has
	await page.waitForTimeout(61000 - (Date.now() % 60000));
	const fresh = (await api('GET', `/projects/${todo.id}/preview`, { token: owner.token })).json.url;
	assert.notEqual(new URL(fresh).origin, new URL(src).origin, 'a new preview URL now');
	for (const how of ['a change of files', 'Reload preview']) {
		await f.evaluate(() => (window.__before = 1));
		if (how === 'Reload preview') await page.getByRole('button', { name: 'Reload preview' }).click();
		else assert.equal((await api('PUT', `/projects/${todo.id}/files/notes.txt`, { token: owner.token, body: { content: `${Date.now()}\n`, overwrite: true } })).status < 300, true);
		await until(async () => {
			try {
				f = await previewFrame(page);
				return (await f.evaluate(() => !window.__before && document.readyState === 'complete')) ? f : null;
			} catch (e) {
				return null;
			}
		}, `the frame reloaded after ${how}`, 30000);
		assert.equal(new URL(await page.getByTitle('Preview').getAttribute('src')).origin, new URL(src).origin, `${how}: the same origin`);
		await f.getByText(`Signed in as ${u.email}`).waitFor();
		await f.locator('#todo-list .title', { hasText: 'preview: on the server' }).waitFor();
	}
	await page.context().close();
});
