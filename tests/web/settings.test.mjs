// settings.test.mjs: the settings pages in a browser, as two (and three) people of one team
// workspace do it, each in a browser context of their own: the header's Settings link (by
// keyboard), a new team workspace, Invite by e-mail (the invitee sees its project), a role
// change that takes effect in the invitee's browser, removing a member (access ends), transfer
// of ownership, folders, the AI provider (the key only as its last four), credits (the limit
// form only for platform admins), API tokens (shown once, copied, listed, revoked → 401), the
// display name in the header, a password change, connecting and disconnecting GitHub through
// the OAuth double, and where the assistant's GitHub flow lands. Screenshots at both sizes.
// Controls are found by role and accessible name only.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { launch, newPage, signIn, signUpApi, api, shotBoth, PASSWORD } from './lib.mjs';

const DOUBLE = (process.env.SVC_OAUTH_DOUBLE_URL || '').replace(/\/$/, '');
const TEAM = 'Settings team';
const PROJECT = 'Team landing page';

let browser;
let owner; // signs up, makes the team workspace, invites
let invitee; // invited: member, then admin, then owner
let third; // invited by the invitee, then removed
let ownerPage;
let inviteePage;
let thirdPage;
let wid;

before(async () => {
	browser = await launch();
	[owner, invitee, third] = await Promise.all([signUpApi('set-owner'), signUpApi('set-invitee'), signUpApi('set-third')]);
	ownerPage = await newPage(browser);
	inviteePage = await newPage(browser);
	thirdPage = await newPage(browser);
});
after(async () => {
	if (browser) await browser.close();
});

const by = (page) => (r, name, opts = {}) => page.getByRole(r, { name, ...opts });
const wsUrl = () => `/settings/workspace/${wid}`;

/** section(page, title): the settings section (a region) named by its heading. */
const section = (page, title) => page.getByRole('region', { name: title, exact: true });
/** said(scope, role, text): waits for a status line or an alert in scope that says text. */
const said = (scope, role, text) => scope.getByRole(role).filter({ hasText: text }).first().waitFor();

test('the header links to Settings, and the keyboard reaches it', async () => {
	const p = ownerPage;
	const role = by(p);
	await signIn(p, owner.email);
	const reached = [];
	for (let i = 0; i < 8; i++) {
		await p.keyboard.press('Tab');
		const name = await p.evaluate(() => document.activeElement && document.activeElement.textContent.trim());
		reached.push(name);
		if (name === 'Settings') break;
	}
	assert.equal(reached[reached.length - 1], 'Settings', `Tab went through: ${reached.join(' / ')}`);
	await p.keyboard.press('Enter');
	await p.waitForURL('**/settings/account');
	await role('heading', 'Account settings', { level: 1 }).waitFor();
	await role('link', 'Account').waitFor();
	await shotBoth(p, 'settings-account');
});

test('/settings goes to the account page, keeping what the assistant flow says', async () => {
	const p = ownerPage;
	await p.goto('/settings?assistant=connected');
	await p.waitForURL('**/settings/account?assistant=connected');
	await said(section(p, 'Coding assistant'), 'status', 'GitHub is connected for the assistant.');
	await p.goto('/settings?error=access_denied');
	await p.waitForURL(/\/settings\/account\?error=access_denied&flow=assistant$/);
	await said(section(p, 'Coding assistant'), 'alert', 'You declined at the provider');
});

test('a new team workspace; Invite by e-mail; the invitee sees its project on the dashboard', async () => {
	const p = ownerPage;
	const role = by(p);
	await p.goto('/settings/account');
	await role('button', 'New workspace').click();
	const dialog = role('dialog', 'New workspace');
	await dialog.getByRole('textbox', { name: 'Workspace name' }).fill(TEAM);
	await dialog.getByRole('button', { name: 'Create workspace' }).click();
	await p.waitForURL('**/settings/workspace/*');
	wid = new URL(p.url()).pathname.split('/').pop();
	await role('heading', TEAM, { level: 1 }).waitFor();
	await role('navigation', 'Settings').getByRole('link', { name: TEAM }).waitFor();
	await shotBoth(p, 'settings-workspace');
	const made = await api('POST', `/workspaces/${wid}/projects`, { token: owner.token, body: { name: PROJECT, template: 'blank' } });
	assert.equal(made.status, 201, JSON.stringify(made.json));

	const members = section(p, 'Members');
	// errors are sentences: an address without an account, then the invitee twice
	await members.getByRole('textbox', { name: 'Email' }).fill('nobody-here@example.test');
	await members.getByRole('button', { name: 'Invite', exact: true }).click();
	await members.getByText('No one has an svc account with nobody-here@example.test').waitFor();
	await members.getByRole('textbox', { name: 'Email' }).fill(invitee.email);
	await members.getByRole('button', { name: 'Invite', exact: true }).click();
	await said(members, 'status', `Web set-invitee is now a member of ${TEAM}.`);
	await members.getByRole('list', { name: 'Members' }).getByText('Web set-invitee').waitFor();
	await members.getByRole('textbox', { name: 'Email' }).fill(invitee.email);
	await members.getByRole('button', { name: 'Invite', exact: true }).click();
	await members.getByText(`${invitee.email} is already a member.`).waitFor();
	await members.getByRole('textbox', { name: 'Email' }).fill('');
	await shotBoth(p, 'settings-workspace-members', members);

	// the invitee, in a browser of their own
	const q = inviteePage;
	await signIn(q, invitee.email);
	await q.getByRole('combobox', { name: 'Workspace' }).selectOption({ label: TEAM });
	await q.getByRole('link', { name: PROJECT }).waitFor();
});

test('a role change takes effect: a member cannot invite, an admin can', async () => {
	const q = inviteePage;
	await q.getByRole('link', { name: 'Workspace settings' }).click();
	await q.waitForURL(`**${wsUrl()}`);
	await q.getByRole('heading', { name: TEAM, level: 1 }).waitFor();
	const qm = section(q, 'Members');
	await qm.getByText('Only admins and owners invite people or change roles.').waitFor();
	assert.equal(await qm.getByRole('button', { name: 'Invite', exact: true }).count(), 0, 'a member has no Invite');
	assert.equal(await q.getByRole('region', { name: 'AI provider' }).count(), 0, 'a member does not see the AI provider');

	const om = section(ownerPage, 'Members');
	await om.getByRole('combobox', { name: `Role of ${invitee.email}` }).selectOption('admin');
	await said(om, 'status', 'Web set-invitee is now an admin.');

	await q.reload();
	await qm.getByRole('button', { name: 'Invite', exact: true }).waitFor();
	await qm.getByRole('textbox', { name: 'Email' }).fill(third.email);
	await qm.getByRole('button', { name: 'Invite', exact: true }).click();
	await said(qm, 'status', `Web set-third is now a member of ${TEAM}.`);
	// an admin may not touch the owner
	assert.equal(await qm.getByRole('button', { name: `Remove ${owner.email}` }).count(), 0);
	assert.equal(await qm.getByRole('combobox', { name: `Role of ${owner.email}` }).count(), 0);
});

test('removing a member ends their access at once', async () => {
	const t = thirdPage;
	await signIn(t, third.email);
	await t.getByRole('combobox', { name: 'Workspace' }).selectOption({ label: TEAM });
	await t.getByRole('link', { name: PROJECT }).waitFor();
	const projectUrl = await t.getByRole('link', { name: PROJECT }).getAttribute('href');

	const om = section(ownerPage, 'Members');
	await ownerPage.reload();
	await om.getByRole('button', { name: `Remove ${third.email}` }).click();
	const dialog = ownerPage.getByRole('dialog', { name: 'Remove Web set-third?' });
	await dialog.getByRole('button', { name: 'Remove member' }).click();
	await said(om, 'status', 'Web set-third is no longer a member.');
	assert.equal(await om.getByRole('list', { name: 'Members' }).getByText('Web set-third').count(), 0);

	await t.goto(wsUrl());
	await said(t, 'alert', 'You are not a member of this workspace');
	const r = await api('GET', `/workspaces/${wid}/members`, { token: third.token });
	assert.equal(r.status, 403);
	await t.goto(projectUrl);
	await t.getByRole('heading', { name: 'You cannot see this project' }).waitFor();
	await t.goto('/dashboard');
	await t.getByRole('button', { name: 'New project' }).waitFor();
	assert.ok(!(await t.getByRole('combobox', { name: 'Workspace' }).innerText()).includes(TEAM), 'the workspace left the switcher');
});

test('transfer of ownership asks first, then the invitee owns the workspace', async () => {
	const p = ownerPage;
	const om = section(p, 'Members');
	await om.getByRole('button', { name: `Make ${invitee.email} the owner` }).click();
	const dialog = p.getByRole('dialog', { name: 'Transfer ownership?' });
	await dialog.getByText('Web set-invitee becomes the owner of Settings team and you become an admin.').waitFor();
	await dialog.getByRole('button', { name: 'Cancel' }).click();
	await dialog.waitFor({ state: 'detached' });
	let r = await api('GET', `/workspaces/${wid}/members`, { token: owner.token });
	assert.deepEqual(r.json.items.map((m) => m.role), ['owner', 'admin'], 'Cancel changed nothing');

	await om.getByRole('button', { name: `Make ${invitee.email} the owner` }).click();
	await dialog.getByRole('button', { name: 'Transfer ownership' }).click();
	await said(om, 'status', 'Web set-invitee is now the owner.');
	r = await api('GET', `/workspaces/${wid}/members`, { token: owner.token });
	const roles = Object.fromEntries(r.json.items.map((m) => [m.email, m.role]));
	assert.deepEqual(roles, { [owner.email]: 'admin', [invitee.email]: 'owner' });
	await p.getByText('your role: admin').waitFor();

	const q = inviteePage;
	await q.reload();
	await section(q, 'Members').getByRole('button', { name: `Make ${owner.email} the owner` }).waitFor();
	await q.getByText('your role: owner').waitFor();
});

test('folders: create, rename, delete (and a taken name is a sentence)', async () => {
	const p = ownerPage;
	const f = section(p, 'Folders');
	await f.getByRole('textbox', { name: 'New folder name' }).fill('Drafts');
	await f.getByRole('button', { name: 'Create folder' }).click();
	await f.getByRole('list', { name: 'Folders' }).getByText('Drafts').waitFor();
	await f.getByRole('textbox', { name: 'New folder name' }).fill('Drafts');
	await f.getByRole('button', { name: 'Create folder' }).click();
	await f.getByText('A folder with this name exists already.').waitFor();
	await f.getByRole('button', { name: 'Rename Drafts' }).click();
	const dialog = p.getByRole('dialog', { name: 'Rename Drafts' });
	await dialog.getByRole('textbox', { name: 'Folder name' }).fill('Old drafts');
	await dialog.getByRole('button', { name: 'Save' }).click();
	await said(f, 'status', 'The folder is now called Old drafts.');
	await f.getByRole('button', { name: 'Delete Old drafts' }).click();
	await p.getByRole('dialog', { name: 'Delete Old drafts?' }).getByRole('button', { name: 'Delete folder' }).click();
	await said(f, 'status', 'Old drafts is deleted.');
	await f.getByText('No folders yet.').waitFor();
});

test('the AI provider form saves, and the key shows only as its last four characters', async () => {
	const p = ownerPage;
	const key = 'sk-web-test-0123456789abcdefwxyz';
	const ai = section(p, 'AI provider');
	await ai.getByRole('textbox', { name: 'Base URL' }).fill('https://models.example/v1');
	await ai.getByRole('textbox', { name: 'Model', exact: true }).fill('web-test-model');
	await ai.getByLabel('API key').fill(key);
	await ai.getByRole('button', { name: 'Save provider' }).click();
	await said(ai, 'status', 'The provider is saved.');
	await ai.getByText('The stored key ends in wxyz.').waitFor();
	await ai.getByText('This workspace uses its own provider.').waitFor();
	assert.equal(await ai.getByLabel('API key').inputValue(), '', 'the key field is write-only');
	assert.ok(!(await p.content()).includes(key.slice(0, -4)), 'the page never holds the key');
	await p.reload();
	await ai.getByText('The stored key ends in wxyz.').waitFor();
	assert.equal(await ai.getByRole('textbox', { name: 'Model', exact: true }).inputValue(), 'web-test-model');
	assert.ok(!(await p.content()).includes(key.slice(0, -4)), 'nor after a reload');
	const r = await api('GET', `/workspaces/${wid}/ai-provider`, { token: owner.token });
	assert.equal(r.json.apiKeyLast4, 'wxyz');
	assert.ok(!JSON.stringify(r.json).includes(key.slice(0, -4)));
	// a bad address is a sentence at its field
	await ai.getByRole('textbox', { name: 'Base URL' }).fill('ftp://models.example/v1');
	await ai.getByRole('button', { name: 'Save provider' }).click();
	await ai.getByText('Enter an http:// or https:// address').waitFor();
	await shotBoth(p, 'settings-workspace-provider', ai);
});

test('credits: everyone sees the spend; only a platform admin gets the limit form', async () => {
	const c = section(ownerPage, 'Credits and spend');
	await c.getByText('Spent').waitFor();
	await c.getByRole('progressbar', { name: 'Credit used' }).waitFor();
	await c.getByText('Only a platform admin changes the limit.').waitFor();
	assert.equal(await c.getByRole('spinbutton', { name: 'Credit limit in US dollars' }).count(), 0);

	assert.ok(process.env.SVC_ADMIN_TOOL && process.env.SVC_TEST_CONFIG, 'SVC_ADMIN_TOOL and SVC_TEST_CONFIG (./svc-dev test sets them)');
	const admin = await signUpApi('set-padmin');
	await promisify(execFile)(process.env.SVC_ADMIN_TOOL, ['grant-platform-admin', admin.email], {
		env: { PATH: process.env.PATH, SVC_CONFIG: process.env.SVC_TEST_CONFIG, ASAN_OPTIONS: 'detect_leaks=0' },
	});
	const a = await newPage(browser);
	await signIn(a, admin.email, wsUrl());
	await a.getByText('you are a platform admin here').waitFor();
	const ac = section(a, 'Credits and spend');
	await ac.getByRole('spinbutton', { name: 'Credit limit in US dollars' }).fill('25');
	await ac.getByRole('button', { name: 'Save limit' }).click();
	await said(ac, 'status', 'The limit is saved.');
	await ac.getByText('$25.00').first().waitFor();
	await ac.getByRole('button', { name: 'Use the instance default' }).click();
	await said(ac, 'status', 'The limit is the instance default again.');
	await shotBoth(a, 'settings-workspace-credits', ac);
	await a.context().close();
});

test('API tokens: made with scopes, shown once with Copy, listed, revoked (then 401)', async () => {
	const p = ownerPage;
	await p.context().grantPermissions(['clipboard-read', 'clipboard-write']);
	await p.goto('/settings/account');
	const s = section(p, 'API tokens');
	await s.getByRole('textbox', { name: 'Token name' }).fill('CI deploys');
	await s.getByRole('checkbox', { name: /^deploy/ }).check();
	await s.getByRole('button', { name: 'Create token' }).click();
	const dialog = p.getByRole('dialog', { name: 'Your new API token' });
	const box = dialog.getByRole('textbox', { name: 'API token' });
	const token = await box.inputValue();
	assert.match(token, /^svc_pat_[A-Za-z0-9_-]{40}$/);
	await dialog.getByRole('button', { name: 'Copy', exact: true }).click();
	await said(dialog, 'status', 'Copied.');
	assert.equal(await p.evaluate(() => navigator.clipboard.readText()), token);
	await shotBoth(p, 'settings-token-created');
	await dialog.getByRole('button', { name: 'Done' }).click();
	await dialog.waitFor({ state: 'detached' });
	const list = s.getByRole('list', { name: 'API tokens' });
	await list.getByText('CI deploys').waitFor();
	await list.getByText('projects:read, deploy').waitFor();
	assert.ok(!(await p.content()).includes(token), 'shown once: the page no longer holds it');
	await p.reload();
	await list.getByText('CI deploys').waitFor();
	assert.ok(!(await p.content()).includes(token.slice(12)), 'the list never shows it');
	assert.equal((await api('GET', '/auth/me', { token })).status, 200, 'the token works');
	await shotBoth(p, 'settings-account-tokens', s);
	await s.getByRole('button', { name: 'Revoke CI deploys' }).click();
	await p.getByRole('dialog', { name: 'Revoke CI deploys?' }).getByRole('button', { name: 'Revoke token' }).click();
	await said(s, 'status', 'CI deploys is revoked.');
	await s.getByText('No API tokens yet.').waitFor();
	assert.equal((await api('GET', '/auth/me', { token })).status, 401, 'a revoked token gets 401');
});

test('a new display name shows in the header', async () => {
	const p = ownerPage;
	const profile = section(p, 'Profile');
	await profile.getByRole('textbox', { name: 'Display name' }).fill('Ada Settings');
	await profile.getByRole('button', { name: 'Save name' }).click();
	await said(profile, 'status', 'Your name is saved.');
	await p.getByRole('navigation', { name: 'Account' }).getByText('Ada Settings').waitFor();
	await p.reload();
	await p.getByRole('navigation', { name: 'Account' }).getByText('Ada Settings').waitFor();
});

test('password change: the old password no longer signs in, the new one does', async () => {
	const p = thirdPage;
	const NEW = 'a new password for third';
	await p.goto('/settings/account');
	const pw = section(p, 'Password');
	await pw.getByLabel('Current password').fill('not the password');
	await pw.getByLabel('New password', { exact: true }).fill(NEW);
	await pw.getByLabel('Repeat the new password').fill(NEW + 'x');
	await pw.getByRole('button', { name: 'Change password' }).click();
	await pw.getByText('The two new passwords are not the same.').waitFor();
	await pw.getByLabel('Repeat the new password').fill(NEW);
	await pw.getByRole('button', { name: 'Change password' }).click();
	await pw.getByText('This is not your current password.').waitFor();
	await pw.getByLabel('Current password').fill(PASSWORD);
	await pw.getByRole('button', { name: 'Change password' }).click();
	await said(pw, 'status', 'Your password is changed.');
	assert.equal(await pw.getByLabel('Current password').inputValue(), '');
	await shotBoth(p, 'settings-account-password', pw);
	await p.getByRole('navigation', { name: 'Account' }).getByRole('button', { name: 'Sign out', exact: true }).click();
	await p.waitForURL('**/login');
	await p.getByRole('textbox', { name: 'Email' }).fill(third.email);
	await p.getByLabel('Password').fill(PASSWORD);
	await p.getByRole('button', { name: 'Sign in', exact: true }).click();
	await p.getByText('That e-mail and password do not match an account.').waitFor();
	await p.getByLabel('Password').fill(NEW);
	await p.getByRole('button', { name: 'Sign in', exact: true }).click();
	await p.waitForURL('**/dashboard');
});

test('sign-in providers: connect GitHub (through the OAuth double), then disconnect it', async () => {
	assert.ok(DOUBLE, 'SVC_OAUTH_DOUBLE_URL (./svc-dev test sets it)');
	const key = `web-gh-${Date.now()}`;
	const ghEmail = `${key}@example.test`;
	const r = await fetch(DOUBLE + '/_profiles', {
		method: 'POST',
		headers: { 'Content-Type': 'application/json' },
		body: JSON.stringify({ [key]: { id: Date.now(), login: key, name: 'Web Octo', emails: [{ email: ghEmail, verified: true, primary: true }] } }),
	});
	assert.equal(r.status, 200);
	const p = inviteePage;
	await p.goto('/settings/account');
	const s = section(p, 'Sign-in providers');
	await s.getByText('Not connected').first().waitFor();
	await s.getByRole('link', { name: 'Connect GitHub' }).click();
	// the double has no login page: it wants the account that "signs in" named in its URL
	await p.waitForURL(`${DOUBLE}/github/login/oauth/authorize?**`);
	await p.goto(`${p.url()}&login=${encodeURIComponent(key)}`);
	await p.waitForURL('**/settings/account?connected=github');
	await said(s, 'status', 'GitHub is connected');
	await s.getByText(`Connected as ${ghEmail}`).waitFor();
	await shotBoth(p, 'settings-account-providers', s);
	await s.getByRole('button', { name: 'Disconnect GitHub' }).click();
	await p.getByRole('dialog', { name: 'Disconnect GitHub?' }).getByRole('button', { name: 'Disconnect GitHub' }).click();
	await said(s, 'status', 'GitHub is disconnected.');
	const ids = await api('GET', '/auth/identities', { token: invitee.token });
	assert.deepEqual(ids.json.items, []);
});

test('leaving a workspace: an admin may; its only owner is told why not', async () => {
	const q = inviteePage;
	await q.goto(wsUrl());
	await q.getByRole('button', { name: 'Leave workspace' }).click();
	await q.getByRole('dialog', { name: `Leave ${TEAM}?` }).getByRole('button', { name: 'Leave workspace' }).click();
	await said(q.getByRole('dialog', { name: `Leave ${TEAM}?` }), 'alert', 'You are its only owner: make another member owner first.');
	await q.keyboard.press('Escape');

	const p = ownerPage;
	await p.goto(wsUrl());
	await p.getByRole('button', { name: 'Leave workspace' }).click();
	await p.getByRole('dialog', { name: `Leave ${TEAM}?` }).getByRole('button', { name: 'Leave workspace' }).click();
	await p.waitForURL('**/settings/account');
	await p.getByRole('heading', { name: 'Account settings', level: 1 }).waitFor();
	assert.equal(await p.getByRole('navigation', { name: 'Settings' }).getByRole('link', { name: TEAM }).count(), 0);
	const r = await api('GET', `/workspaces/${wid}`, { token: owner.token });
	assert.equal(r.status, 403);
});
