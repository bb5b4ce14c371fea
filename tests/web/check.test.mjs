// check.test.mjs: the agent's preview check in the chat (issue 29): one line per check in the turn,
// "Checked the preview: 1 error" expandable to its errors and the screenshot, then the fix round's
// clean check, live and after a reload. Controls and lists are found by role and accessible name.
// The Budget's fix rounds field. Screenshots: chat-check-failed, chat-check-clean (1280x800 and 390x844),
// workspace-fix-rounds.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { launch, newPage, signIn, signUpApi, api, shot, until, PHONE } from './lib.mjs';

let browser;
let page;
let me;
let pid;

const role = (r, name, opts = {}) => page.getByRole(r, { name, ...opts });

before(async () => {
	browser = await launch();
	page = await newPage(browser);
	me = await signUpApi('check');
	const r = await api('POST', `/workspaces/${me.workspaceId}/projects`, { token: me.token, body: { name: 'Check page', template: 'blank' } });
	assert.equal(r.status, 201, JSON.stringify(r.json));
	pid = r.json.id;
	await signIn(page, me.email);
});
after(async () => {
	if (browser) await browser.close();
});

/** The check lines of the chat as [{summary, errors, shot}] (the <details> expanded as needed). */
async function checkLines() {
	const lines = page.locator('details.preview-check');
	const out = [];
	for (let i = 0; i < (await lines.count()); i++) {
		const d = lines.nth(i);
		const summary = (await d.locator('summary').innerText()).trim();
		if (!(await d.evaluate((el) => el.open))) await d.locator('summary').click();
		const list = d.getByRole('list', { name: 'Errors the preview showed' });
		const errors = (await list.count()) ? await list.innerText() : '';
		const img = d.getByRole('img', { name: 'The preview as the check saw it' });
		await img.waitFor({ timeout: 10000 });
		await until(async () => img.evaluate((el) => el.complete && el.naturalWidth > 0), 'the screenshot loads');
		out.push({ summary, errors, shot: await img.evaluate((el) => [el.naturalWidth, el.naturalHeight]) });
	}
	return out;
}

function assertLines(lines, when) {
	assert.equal(lines.length, 2, `two checks ${when}: the turn's own and the fix round's`);
	assert.equal(lines[0].summary, 'Checked the preview: 1 error', when);
	assert.match(lines[0].errors, /exception/, when);
	assert.match(lines[0].errors, /\/app\.js:3/, when);
	assert.match(lines[0].errors, /null/, when);
	assert.equal(lines[1].summary, 'Checked the preview after fix round 1: no errors', when);
	assert.equal(lines[1].errors, '', when);
	assert.deepEqual(lines[0].shot, [1280, 800], `the screenshot is the page at 1280x800 ${when}`);
}

test('a check shows as one line in the turn, with its errors and screenshot, live and after a reload', async () => {
	await page.goto(`/projects/${pid}`);
	const box = role('textbox', 'Message');
	await box.fill('write a throwing page');
	await box.press('Enter');
	await page.getByText('Checked the preview: 1 error').waitFor({ timeout: 90000 });
	await page.getByText('Fixed app.js.').waitFor({ timeout: 90000 });
	await page.getByText('Checked the preview after fix round 1: no errors').waitFor({ timeout: 90000 });
	await role('button', 'Send').waitFor({ timeout: 60000 });
	assertLines(await checkLines(), 'live');
	await page.reload();
	await page.getByText('Checked the preview after fix round 1: no errors').waitFor({ timeout: 30000 });
	const lines = await checkLines();
	assertLines(lines, 'after a reload');
	await shots('chat-check-failed', 0);
	await shots('chat-check-clean', 1);
});

/** shots(name, i): the i-th check line, opened, at 1280x800 here and at 390x844 in a phone's page (where the chat is a tab). */
async function shots(name, i) {
	const line = page.locator('details.preview-check').nth(i);
	await line.scrollIntoViewIfNeeded();
	await page.waitForTimeout(150);
	await shot(page, name);
	const phone = await newPage(browser, PHONE);
	await signIn(phone, me.email);
	await phone.goto(`/projects/${pid}`);
	await phone.getByRole('tab', { name: 'Chat' }).click();
	const pl = phone.locator('details.preview-check').nth(i);
	await pl.waitFor({ timeout: 30000 });
	await pl.locator('summary').click();
	await pl.getByRole('img', { name: 'The preview as the check saw it' }).waitFor();
	await pl.scrollIntoViewIfNeeded();
	await phone.waitForTimeout(300);
	await shot(phone, name);
	await phone.context().close();
}

test('the check line is a disclosure with its summary as its name', async () => {
	const first = page.locator('details.preview-check').first();
	assert.equal(await first.locator('summary').count(), 1);
	await first.locator('summary').click();
	const open = await first.evaluate((el) => el.open);
	await first.locator('summary').click();
	assert.notEqual(await first.evaluate((el) => el.open), open, 'the summary opens and closes the line');
});

test('workspace settings: Budget sets the fix rounds after the preview check', async () => {
	await page.goto(`/settings/workspace/${me.workspaceId}`);
	const budget = page.getByRole('region', { name: 'Budget' });
	await budget.waitFor();
	const rounds = budget.getByRole('spinbutton', { name: 'Fix rounds after the preview check' });
	assert.equal(await rounds.inputValue(), '', 'empty: the instance’s');
	await rounds.fill('1');
	await budget.getByRole('button', { name: 'Save caps' }).click();
	await budget.getByText('The caps are saved.').waitFor();
	let b = await api('GET', `/workspaces/${me.workspaceId}/budget`, { token: me.token });
	assert.equal(b.json.fixRounds, 1);
	await rounds.scrollIntoViewIfNeeded();
	await shot(page, 'workspace-fix-rounds');
	await rounds.fill('');
	await budget.getByRole('button', { name: 'Save caps' }).click();
	await until(async () => (await api('GET', `/workspaces/${me.workspaceId}/budget`, { token: me.token })).json.fixRounds === null, 'back to the instance’s');
	b = await api('GET', `/workspaces/${me.workspaceId}/budget`, { token: me.token });
	assert.equal(b.json.fixRounds, null);
});
