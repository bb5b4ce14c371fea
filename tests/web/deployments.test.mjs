// deployments.test.mjs: the project page's Deployments tab: each publish listed with its state (Live, Failed,
// Earlier), a failed build's reason and log, and Restore of an earlier deployment (a confirmation, then it is
// live again and the list says so); a viewer of a public project sees the list without Restore.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { launch, newPage, signIn, signUpApi, api, shotBoth, until } from './lib.mjs';

let browser;
let owner;
let projectId;

const put = (path, content) =>
	api('PUT', `/projects/${projectId}/files/${path}`, { token: owner.token, body: { content, overwrite: true } });

before(async () => {
	browser = await launch();
	owner = await signUpApi('deploys');
	const p = await api('POST', `/workspaces/${owner.workspaceId}/projects`, { token: owner.token, body: { name: 'Deployed page', template: 'blank', visibility: 'public' } });
	assert.equal(p.status, 201);
	projectId = p.json.id;
	for (const text of ['first', 'second']) {
		assert.equal((await put('index.html', `<h1>${text}</h1>\n`)).status, 200);
		assert.equal((await api('POST', `/deploy/${projectId}`, { token: owner.token })).status, 200);
	}
	// a build that fails: a package.json whose build exits 2
	await put('package.json', '{"name": "x", "private": true, "scripts": {"build": "node -e \\"console.log(\'oops\'); process.exit(2)\\""}}\n');
	assert.equal((await api('POST', `/deploy/${projectId}`, { token: owner.token })).status, 422);
});
after(async () => {
	if (browser) await browser.close();
});

test('Deployments lists each publish with its state and restores an earlier one', async () => {
	const page = await newPage(browser);
	await signIn(page, owner.email, `/projects/${projectId}`);
	await page.getByRole('tab', { name: 'Deployments' }).click();
	const list = page.getByRole('list', { name: 'Deployments' });
	await list.waitFor();
	const items = list.getByRole('listitem');
	assert.equal(await items.count(), 3);
	assert.match(await items.nth(0).innerText(), /Failed/);
	assert.match(await items.nth(0).innerText(), /npm run build exited with status 2/);
	assert.match(await items.nth(1).innerText(), /Live/);
	assert.match(await items.nth(2).innerText(), /Earlier/);
	await items.nth(0).getByRole('button', { name: /^Build log of deployment/ }).click();
	await page.getByText('oops').first().waitFor();
	await shotBoth(page, 'deployments');
	const deps = (await api('GET', `/projects/${projectId}/deployments`, { token: owner.token })).json.items;
	const earlier = deps[2];
	await items.nth(2).getByRole('button', { name: `Restore deployment ${earlier.id.slice(0, 8)}` }).click();
	const dialog = page.getByRole('dialog', { name: 'Restore this deployment?' });
	await dialog.getByRole('button', { name: 'Restore' }).click();
	await page.getByRole('status').filter({ hasText: `Deployment ${earlier.id.slice(0, 8)} is live again.` }).waitFor();
	await until(async () => /Live/.test(await items.nth(2).innerText()), 'the restored deployment shows as live');
	assert.match(await items.nth(1).innerText(), /Earlier/);
	const now = (await api('GET', `/projects/${projectId}/deployments`, { token: owner.token })).json.items;
	assert.equal(now[2].status, 'live');
	await page.context().close();
});

test('a viewer of a public project sees the deployments without Restore', async () => {
	const viewer = await signUpApi('viewer');
	const page = await newPage(browser);
	await signIn(page, viewer.email, `/projects/${projectId}`);
	await page.getByRole('tab', { name: 'Deployments' }).click();
	await page.getByRole('list', { name: 'Deployments' }).waitFor();
	assert.equal(await page.getByRole('button', { name: /^Restore deployment/ }).count(), 0);
	await page.context().close();
});
