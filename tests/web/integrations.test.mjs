// integrations.test.mjs: the Integrations page (pages/integrations/integrations.jsx) in a browser: a platform admin
// searches the catalogue, makes an integration available and on by default, saves its API key (the
// form never shows it back), reads the audit log and xray; a user then sees it enabled and configured,
// connects an OAuth integration through the OAuth double's integration provider for their workspace, makes
// it read-only there (a workspace admin's choice) and disconnects it; the admin limits the platform key to
// one workspace and back.
// Screenshots at both sizes. Controls are found by role and accessible name only.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { writeFileSync, unlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { launch, newPage, signIn, signUpApi, api, shotBoth } from './lib.mjs';

const DOUBLE = (process.env.SVC_OAUTH_DOUBLE_URL || '').replace(/\/$/, '');
const run = (args) =>
	promisify(execFile)(process.env.SVC_ADMIN_TOOL, args, {
		env: { PATH: process.env.PATH, SVC_CONFIG: process.env.SVC_TEST_CONFIG, ASAN_OPTIONS: 'detect_leaks=0' },
	});

let browser;
let admin;
let user;

before(async () => {
	browser = await launch();
	[admin, user] = await Promise.all([signUpApi('integ-admin'), signUpApi('integ-user')]);
	assert.ok(process.env.SVC_ADMIN_TOOL && process.env.SVC_TEST_CONFIG && DOUBLE, 'run through ./svc-dev test');
	await run(['grant-platform-admin', admin.email]);
	const f = join(tmpdir(), `integ-web-${process.pid}.json`);
	writeFileSync(
		f,
		JSON.stringify([
			{
				id: 'svc-web-oauth',
				displayName: 'Web OAuth double',
				description: 'the OAuth double of the web test',
				authTypes: ['oauth2'],
				oauth2: { authUrl: `${DOUBLE}/integ/authorize`, tokenUrl: `${DOUBLE}/integ/token`, scope: ['read'] },
				categories: ['DEVELOPER_TOOLS'],
			},
		]),
	);
	await run(['import-catalog', f]);
	unlinkSync(f);
	await fetch(`${DOUBLE}/_integ_clients`, { method: 'POST', body: JSON.stringify({ 'web-client': { secret: 'web-client-secret', expires_in: 3600 } }) });
});
after(async () => {
	if (browser) await browser.close();
});

test('a platform admin makes an integration available and stores its key', async () => {
	const page = await newPage(browser);
	await signIn(page, admin.email, '/integrations');
	await page.getByRole('heading', { name: 'Integrations', level: 1 }).waitFor();
	await page.getByRole('searchbox', { name: 'Search integrations' }).fill('acumbamail');
	const list = page.getByRole('list', { name: 'Integrations' });
	const row = list.getByRole('listitem').filter({ hasText: 'Acumbamail' });
	await row.waitFor();
	const avail = row.getByRole('button', { name: /^(Make available|Withdraw) Acumbamail$/ });
	if ((await avail.textContent()) === 'Make available') await avail.click();
	await row.getByRole('button', { name: 'Withdraw Acumbamail' }).waitFor();
	const def = row.getByRole('button', { name: /by default: Acumbamail$/ });
	if ((await def.textContent()) === 'On by default') await def.click();
	await row.getByText('Enabled', { exact: true }).waitFor();

	await row.getByRole('button', { name: 'Credentials of Acumbamail' }).click();
	const dlg = page.getByRole('dialog', { name: 'Credentials of Acumbamail' });
	await dlg.getByLabel('API key').fill('web-secret-key-123456');
	await dlg.getByRole('button', { name: 'Save credential' }).click();
	await dlg.getByText(/^Stored: API key/).waitFor();
	assert.equal(await dlg.getByLabel('API key').inputValue(), '');
	assert.equal(await page.getByText('web-secret-key-123456').count(), 0);
	// where the key may be used (issue 25): only the user's workspace, then every workspace again
	await dlg.getByRole('checkbox', { name: 'Only in these workspaces' }).check();
	await dlg.getByLabel('Workspace IDs (one per line)').fill(user.workspaceId);
	await dlg.getByRole('button', { name: 'Save workspaces' }).click();
	await dlg.getByText(`Used in: ${user.workspaceId}`).waitFor();
	let cr = await api('GET', '/integrations/admin/credentials/acumbamail', { token: admin.token });
	assert.deepEqual(cr.json.workspaceIds, [user.workspaceId]);
	await shotBoth(page, 'integrations-credential', dlg);
	await dlg.getByRole('checkbox', { name: 'Only in these workspaces' }).uncheck();
	await dlg.getByRole('button', { name: 'Save workspaces' }).click();
	await dlg.getByText('Used in: every workspace').waitFor();
	cr = await api('GET', '/integrations/admin/credentials/acumbamail', { token: admin.token });
	assert.equal(cr.json.workspaceIds, null);
	await dlg.getByRole('button', { name: 'Close' }).first().click();
	await row.getByText('Configured', { exact: true }).waitFor();

	// the OAuth integration of the double: available, on, with an OAuth app
	await page.getByRole('searchbox', { name: 'Search integrations' }).fill('Web OAuth double');
	const orow = list.getByRole('listitem').filter({ hasText: 'Web OAuth double' });
	await orow.getByRole('button', { name: 'Make available Web OAuth double' }).click();
	await orow.getByRole('button', { name: 'On by default: Web OAuth double' }).click();
	await orow.getByRole('button', { name: 'Credentials of Web OAuth double' }).click();
	const odlg = page.getByRole('dialog', { name: 'Credentials of Web OAuth double' });
	await odlg.getByRole('textbox', { name: 'Client ID' }).fill('web-client');
	await odlg.getByLabel('Client secret').fill('web-client-secret');
	await odlg.getByRole('button', { name: 'Save OAuth app' }).click();
	await odlg.getByRole('status').filter({ hasText: 'client ID ending in ient' }).waitFor();
	await odlg.getByRole('list', { name: 'OAuth apps' }).getByText('ient').waitFor();
	assert.equal(await odlg.getByText('web-client-secret').count(), 0);
	await odlg.getByRole('button', { name: 'Close' }).first().click();

	await page.getByRole('tab', { name: 'Audit log' }).click();
	const audit = page.getByRole('table', { name: 'Audit log' });
	await audit.getByRole('cell', { name: 'integrations.platform_credentials.upsert' }).first().waitFor();
	await audit.getByRole('cell', { name: 'integrations.oauth_app.upsert' }).first().waitFor();
	await shotBoth(page, 'integrations-audit');
	await page.getByRole('tab', { name: 'xray' }).click();
	await page.getByRole('table', { name: 'Calls per integration' }).waitFor();
});

test('a user connects and disconnects their account; admin controls are not shown', async () => {
	const page = await newPage(browser);
	await signIn(page, user.email, '/integrations');
	assert.equal(await page.getByRole('tab', { name: 'Audit log' }).count(), 0);
	await page.getByRole('searchbox', { name: 'Search integrations' }).fill('Web OAuth double');
	const row = page.getByRole('list', { name: 'Integrations' }).getByRole('listitem').filter({ hasText: 'Web OAuth double' });
	await row.waitFor();
	assert.equal(await row.getByRole('button', { name: /Credentials of/ }).count(), 0);
	const connect = row.getByRole('link', { name: 'Connect Web OAuth double' });
	const href = await connect.getAttribute('href');
	// the double's authorize page answers at once (as its default account); the connection is for the workspace shown
	assert.ok(href.endsWith(`/api/integrations/svc-web-oauth/connect?workspaceId=${user.workspaceId}`), href);
	await connect.click();
	await page.waitForURL((u) => u.pathname === '/integrations' && u.searchParams.get('connected') === 'svc-web-oauth');
	await page.getByRole('status').filter({ hasText: 'Connected Web OAuth double.' }).waitFor();
	await page.getByRole('searchbox', { name: 'Search integrations' }).fill('Web OAuth double');
	await row.getByText('Connected', { exact: true }).waitFor();
	// the user owns their workspace: they choose whether the agent may write through it there
	await row.getByRole('combobox', { name: 'Agent access to Web OAuth double' }).selectOption('read');
	let ro = null;
	for (let i = 0; i < 50 && ro !== true; i++) {
		if (i) await new Promise((r) => setTimeout(r, 100));
		ro = (await api('GET', `/integrations/svc-web-oauth?workspaceId=${user.workspaceId}`, { token: user.token })).json.readOnly;
	}
	assert.equal(ro, true);
	await shotBoth(page, 'integrations-user');
	await row.getByRole('button', { name: 'Disconnect Web OAuth double' }).click();
	await page.getByRole('dialog', { name: 'Disconnect Web OAuth double?' }).getByRole('button', { name: 'Disconnect' }).click();
	await row.getByRole('link', { name: 'Connect Web OAuth double' }).waitFor();
	const r = await api('GET', '/integrations/svc-web-oauth/connection', { token: user.token });
	assert.equal(r.status, 404);
});
