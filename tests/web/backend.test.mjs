// backend.test.mjs: the project page's Backend tab against the real stack (issue 28 "For builders"): the empty state
// that tells how to declare a collection; then a declared collection whose records end users add through the
// preview's /_svc/ show in its table; a cell edited and saved, a refused edit shown on its cell; an end user disabled
// (their sign-in then fails) and enabled, another deleted after a confirmation (with their records); a secret set whose
// value is never shown again, replaced and deleted; the test/live switch; "Empty test data"; Next and Previous.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { randomBytes } from 'node:crypto';
import { APP, launch, newPage, signIn, signUpApi, api, shotBoth, until } from './lib.mjs';

let browser;
let owner;
let projectId;
let previewHost;

const DECL = {
	collections: {
		todos: {
			fields: { title: { type: 'string', required: true, max: 20 }, done: { type: 'boolean' }, n: { type: 'number', min: 0, max: 10 } },
			indexes: ['done'],
		},
	},
};

/** site(method, path, body, cookie): one call to the preview's /_svc/ (as an app's page makes it); {status, json, cookie}. */
function site(method, path, body, cookie) {
	const u = new URL(APP);
	const data = body === undefined ? null : JSON.stringify(body);
	const headers = { Host: previewHost, 'X-Svc-Client': '1', Accept: 'application/json' };
	if (data) headers['Content-Type'] = 'application/json';
	if (cookie) headers.Cookie = 'svc_app_session=' + cookie;
	return new Promise((resolve, reject) => {
		const req = http.request({ host: u.hostname, port: u.port, path, method, headers }, (res) => {
			let t = '';
			res.on('data', (c) => (t += c));
			res.on('end', () => {
				const set = (res.headers['set-cookie'] || []).map((c) => /^svc_app_session=([^;]*)/.exec(c)).find(Boolean);
				resolve({ status: res.statusCode, json: t ? JSON.parse(t) : null, cookie: set ? set[1] : cookie });
			});
		});
		req.on('error', reject);
		req.end(data || undefined);
	});
}

/** endUser(tag): an end user signed up on the preview: {email, password, cookie, id}. */
async function endUser(tag) {
	const email = `${tag}-${randomBytes(3).toString('hex')}@example.com`;
	const password = 'pw-' + randomBytes(6).toString('hex');
	const r = await site('POST', '/_svc/auth/signup', { email, password });
	assert.equal(r.status, 201, JSON.stringify(r.json));
	return { email, password, cookie: r.cookie, id: r.json.user.id };
}

const put = (path, content) => api('PUT', `/projects/${projectId}/files/${path}`, { token: owner.token, body: { content, overwrite: true } });

before(async () => {
	browser = await launch();
	owner = await signUpApi('backend');
	const p = await api('POST', `/workspaces/${owner.workspaceId}/projects`, { token: owner.token, body: { name: 'Backend page', template: 'blank' } });
	assert.equal(p.status, 201);
	projectId = p.json.id;
	const pv = await api('GET', `/projects/${projectId}/preview`, { token: owner.token });
	assert.equal(pv.status, 200);
	previewHost = new URL(pv.json.url).host;
});
after(async () => {
	if (browser) await browser.close();
});

async function openBackend(page) {
	await page.getByRole('tab', { name: 'Backend' }).click();
	await page.getByRole('group', { name: 'Environment' }).waitFor();
}

test('the Backend tab: empty state, records, cells, end users, secrets, test and live', async () => {
	const page = await newPage(browser);
	await signIn(page, owner.email, `/projects/${projectId}`);
	await openBackend(page);
	await page.getByText('No collections are declared.').waitFor();
	assert.match(await page.locator('.backend-empty pre').innerText(), /"collections"/);
	await shotBoth(page, 'backend-empty');

	// a declared collection, records added by two end users through the preview's /_svc/
	assert.ok([200, 201].includes((await put('svc.data.json', JSON.stringify(DECL, null, 2))).status));
	const a = await endUser('a');
	const b = await endUser('b');
	const made = [];
	for (const [u, title] of [
		[a, 'Buy milk'],
		[a, 'Walk the dog'],
		[b, 'B task'],
	]) {
		const r = await site('POST', '/_svc/data/todos', { title, done: false }, u.cookie);
		assert.equal(r.status, 201, JSON.stringify(r.json));
		made.push(r.json);
	}
	await page.getByRole('tab', { name: 'Files' }).click();
	await openBackend(page);
	const table = page.getByRole('table', { name: 'Records of todos' });
	await table.waitFor();
	const cell = (rec, field) => page.getByRole('textbox', { name: `${field} of record ${rec.id.slice(0, 8)}` });
	for (const rec of made) assert.equal(await cell(rec, 'title').inputValue(), rec.title);
	assert.equal(await page.getByRole('meter', { name: 'Records', exact: true }).getAttribute('value'), '3');

	// a cell edited and saved (Enter), then read back through the site as its owner
	await cell(made[0], 'title').fill('Buy oat milk');
	await cell(made[0], 'title').press('Enter');
	await until(async () => (await site('GET', `/_svc/data/todos/${made[0].id}`, undefined, a.cookie)).json.title === 'Buy oat milk', 'the edited cell saved');
	await page.getByRole('checkbox', { name: `done of record ${made[1].id.slice(0, 8)}` }).check();
	await until(async () => (await site('GET', `/_svc/data/todos/${made[1].id}`, undefined, a.cookie)).json.done === true, 'the checkbox saved');
	// a refused edit: its message on the cell, the record unchanged
	await cell(made[2], 'title').fill('x'.repeat(25));
	await cell(made[2], 'title').press('Enter');
	await until(async () => (await cell(made[2], 'title').getAttribute('aria-invalid')) === 'true', 'the refusal on the cell');
	assert.match(await page.locator('.cell.invalid .error-note').innerText(), /title/);
	assert.equal((await site('GET', `/_svc/data/todos/${made[2].id}`, undefined, b.cookie)).json.title, 'B task');
	await shotBoth(page, 'backend', table);
	await cell(made[2], 'title').press('Escape');

	// end users: B disabled (their session ends, sign-in fails), enabled again; A deleted with their records
	const users = page.getByRole('list', { name: 'End users' });
	await users.getByRole('button', { name: `Disable ${b.email}` }).click();
	await users.getByRole('button', { name: `Enable ${b.email}` }).waitFor();
	assert.equal((await site('GET', '/_svc/auth/me', undefined, b.cookie)).status, 401);
	assert.equal((await site('POST', '/_svc/auth/login', { email: b.email, password: b.password })).status, 401);
	await users.getByRole('button', { name: `Enable ${b.email}` }).click();
	await users.getByRole('button', { name: `Disable ${b.email}` }).waitFor();
	assert.equal((await site('POST', '/_svc/auth/login', { email: b.email, password: b.password })).status, 200);
	await users.getByRole('button', { name: `Delete ${a.email}` }).click();
	const dialog = page.getByRole('dialog', { name: `Delete ${a.email}?` });
	await dialog.getByRole('button', { name: 'Delete end user' }).click();
	await until(async () => (await page.getByRole('button', { name: `Delete ${a.email}` }).count()) === 0, 'the deleted end user gone from the list');
	await until(async () => (await cell(made[0], 'title').count()) === 0, "the deleted end user's records gone from the table");
	const rows = (await api('GET', `/projects/${projectId}/backend/test/data/todos`, { token: owner.token })).json.items;
	assert.deepEqual(rows.map((r) => r.id), [made[2].id]);

	// secrets: the value typed once, never shown again; replaced; deleted
	const hasSecrets = (await api('GET', `/projects/${projectId}/secrets`, { token: owner.token })).status === 200;
	if (hasSecrets) {
		const value = 'sk-' + randomBytes(12).toString('hex');
		await page.getByLabel('Secret name').fill('WEATHER_KEY');
		await page.getByLabel('Secret value').fill(value);
		assert.equal(await page.getByLabel('Secret value').getAttribute('type'), 'password');
		await page.getByRole('button', { name: 'Save secret' }).click();
		const secrets = page.getByRole('list', { name: 'Secrets' });
		await secrets.getByText('WEATHER_KEY', { exact: true }).waitFor();
		assert.equal(await page.getByLabel('Secret value').inputValue(), '');
		assert.ok(!(await page.content()).includes(value), 'the value is nowhere in the page');
		await page.getByRole('tab', { name: 'Files' }).click();
		await openBackend(page);
		await page.getByRole('list', { name: 'Secrets' }).getByText('WEATHER_KEY', { exact: true }).waitFor();
		assert.ok(!(await page.content()).includes(value), 'nor after a reload of the tab');
		await page.getByRole('button', { name: 'Replace WEATHER_KEY' }).click();
		assert.equal(await page.getByLabel('Secret name').inputValue(), 'WEATHER_KEY');
		await page.getByLabel('Secret value').fill('sk-' + randomBytes(12).toString('hex'));
		await page.getByRole('button', { name: 'Save secret' }).click();
		await page.getByRole('status').filter({ hasText: 'Secret WEATHER_KEY saved.' }).waitFor();
		await shotBoth(page, 'backend-secrets', page.getByRole('region', { name: 'Secrets' }));
		await page.getByRole('button', { name: 'Delete WEATHER_KEY' }).click();
		await page.getByRole('dialog', { name: 'Delete the secret WEATHER_KEY?' }).getByRole('button', { name: 'Delete secret' }).click();
		await page.getByText('No secrets yet.').waitFor();
	}

	// live: its own (empty) data; Empty test data is only offered on test
	await page.getByRole('radio', { name: 'Live (the published site)' }).check();
	await page.getByText('No records in the live environment yet.').waitFor();
	assert.equal(await page.getByRole('button', { name: 'Empty test data' }).count(), 0);
	await page.getByRole('radio', { name: 'Test (the preview)' }).check();
	await table.waitFor();
	await page.getByRole('button', { name: 'Empty test data' }).click();
	await page.getByRole('dialog', { name: 'Empty the test data?' }).getByRole('button', { name: 'Empty test data' }).click();
	await page.getByRole('status').filter({ hasText: 'The test data was emptied.' }).waitFor();
	await page.getByText('No records in the test environment yet.').waitFor();
	assert.equal((await site('GET', '/_svc/auth/me', undefined, b.cookie)).status, 401);

	// paged: 21 records are a page of 20 and one more (Next, Previous)
	const c = await endUser('c');
	for (let i = 0; i < 21; i++) assert.equal((await site('POST', '/_svc/data/todos', { title: `t${i}` }, c.cookie)).status, 201);
	await page.getByRole('tab', { name: 'Files' }).click();
	await openBackend(page);
	await table.waitFor();
	assert.equal(await table.getByRole('row').count(), 21); // the header and 20
	await page.getByRole('button', { name: 'Next page of todos' }).click();
	await until(async () => (await table.getByRole('row').count()) === 2, 'the second page');
	assert.equal(await table.getByRole('textbox', { name: /^title of record/ }).inputValue(), 't20');
	assert.ok(await page.getByRole('button', { name: 'Next page of todos' }).isDisabled());
	await page.getByRole('button', { name: 'Previous page of todos' }).click();
	await until(async () => (await table.getByRole('row').count()) === 21, 'the first page again');
	await page.context().close();
});

test('a viewer of a public project has no Backend tab', async () => {
	assert.equal((await api('PATCH', `/projects/${projectId}`, { token: owner.token, body: { visibility: 'public' } })).status, 200);
	const viewer = await signUpApi('bviewer');
	const page = await newPage(browser);
	await signIn(page, viewer.email, `/projects/${projectId}`);
	await page.getByRole('tab', { name: 'Files' }).waitFor();
	assert.equal(await page.getByRole('tab', { name: 'Backend' }).count(), 0);
	await page.context().close();
});
