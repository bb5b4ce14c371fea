// domains.test.mjs: a project's custom domains in the browser (pages/project/settings/domains.jsx): the owner of a
// workspace on the pro plan opens Custom domains from the project page, is refused a name two labels
// under its registrable domain, adds web.example.org (the test stack's dnsmasq points it at the HTTPS
// front), sees the DNS records to set, watches it become Active, verifies it and removes it.
// Screenshots at both sizes. Controls are found by role and accessible name only.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { launch, newPage, signIn, signUpApi, api, shotBoth } from './lib.mjs';

let browser;
let owner;
let pid;

before(async () => {
	browser = await launch();
	owner = await signUpApi('dom-owner');
	assert.ok(process.env.SVC_ADMIN_TOOL && process.env.SVC_TEST_CONFIG, 'SVC_ADMIN_TOOL and SVC_TEST_CONFIG (./svc-dev test sets them)');
	await promisify(execFile)(process.env.SVC_ADMIN_TOOL, ['set-plan', owner.workspaceId, 'pro'], {
		env: { PATH: process.env.PATH, SVC_CONFIG: process.env.SVC_TEST_CONFIG, ASAN_OPTIONS: 'detect_leaks=0' },
	});
	const r = await api('POST', `/workspaces/${owner.workspaceId}/projects`, { token: owner.token, body: { name: 'Domain site', template: 'blank' } });
	assert.equal(r.status, 201);
	pid = r.json.id;
	assert.equal((await api('POST', `/deploy/${pid}`, { token: owner.token })).status, 200);
});
after(async () => {
	if (browser) await browser.close();
});

test('the owner adds, verifies and removes a custom domain', async () => {
	const page = await newPage(browser);
	await signIn(page, owner.email, `/projects/${pid}`);
	await page.getByRole('button', { name: 'Custom domains' }).click();
	const dlg = page.getByRole('dialog', { name: 'Custom domains' });
	await dlg.getByText('No custom domain yet.').waitFor();

	await dlg.getByRole('textbox', { name: 'Domain' }).fill('web.prod.example.org');
	await dlg.getByRole('button', { name: 'Add domain' }).click();
	await dlg.getByRole('alert').filter({ hasText: 'only one label is allowed under example.org' }).waitFor();

	await dlg.getByRole('textbox', { name: 'Domain' }).fill('Web.Example.org');
	await dlg.getByRole('button', { name: 'Add domain' }).click();
	const list = dlg.getByRole('list', { name: 'Domains' });
	await list.getByRole('listitem').filter({ hasText: 'web.example.org' }).waitFor();
	assert.equal(await dlg.getByRole('textbox', { name: 'Domain' }).inputValue(), '');
	const records = dlg.getByRole('table', { name: 'DNS records for web.example.org' });
	await records.getByRole('cell', { name: 'sites.example.net' }).waitFor();
	await records.getByRole('cell', { name: 'CNAME' }).waitFor();
	await shotBoth(page, 'domains-pending', dlg);

	// svc-worker checks it (DNS, then HTTPS through the front); Verify runs the checks at once. On a
	// loaded machine a check can time out and the worker retries with backoff: up to a minute.
	await dlg.getByRole('button', { name: 'Verify web.example.org' }).click();
	await list.getByText('Active', { exact: true }).waitFor({ timeout: 60000 });
	assert.equal(await dlg.getByRole('table', { name: 'DNS records for web.example.org' }).count(), 0);
	await shotBoth(page, 'domains-active', dlg);

	await dlg.getByRole('button', { name: 'Remove web.example.org' }).click();
	const confirm = page.getByRole('dialog', { name: 'Remove web.example.org?' });
	await confirm.getByRole('button', { name: 'Remove' }).click();
	await dlg.getByText('No custom domain yet.').waitFor();
	const after = await api('GET', `/domains/project/${pid}`, { token: owner.token });
	assert.deepEqual(after.json.items, []);
	await dlg.getByRole('button', { name: 'Close' }).first().click();
	await page.getByRole('button', { name: 'Custom domains' }).waitFor();
});

// Issue 25, item 13: only the workspace's owners and admins (who alone may use them) see the custom-domain
// controls; a member who may edit the project does not.
test('a workspace member sees no custom-domain controls; an admin does', async () => {
	const member = await signUpApi('dom-member');
	const admin = await signUpApi('dom-admin');
	const ws = await api('POST', '/workspaces', { token: owner.token, body: { name: 'Domains team' } });
	assert.equal(ws.status, 201);
	for (const [who, role] of [[member, 'member'], [admin, 'admin']]) {
		const r = await api('POST', `/workspaces/${ws.json.id}/members`, { token: owner.token, body: { email: who.email, role } });
		assert.equal(r.status, 201);
	}
	const p = await api('POST', `/workspaces/${ws.json.id}/projects`, { token: owner.token, body: { name: 'Team site', template: 'blank' } });
	assert.equal(p.status, 201);
	const page = await newPage(browser);
	await signIn(page, member.email, `/projects/${p.json.id}`);
	await page.getByRole('button', { name: 'Publish' }).first().waitFor();
	assert.equal(await page.getByRole('button', { name: 'Custom domains' }).count(), 0);
	const page2 = await newPage(browser);
	await signIn(page2, admin.email, `/projects/${p.json.id}`);
	await page2.getByRole('button', { name: 'Custom domains' }).waitFor();
});
