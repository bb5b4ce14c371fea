// agent-turns.test.mjs: issue 29 in the browser: the reloaded timeline shows each tool call with
// its result on one line, as the live stream does; a turn's files with +/− counts, its diff and
// Revert this turn; the spending banner at 80 % of a cap and the refusal at the cap; the
// workspace settings' Budget and Agent instructions; the project's Instructions (AGENTS.md); Select
// element in the preview, whose element reaches the model with the next message.
// Controls are found by role and accessible name only.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { launch, newPage, signIn, signUpApi, api, shot, until, previewFrame } from './lib.mjs';

const DOUBLE = (process.env.SVC_PROVIDER_URL || '').replace(/\/$/, '');

let browser;
let page;
let me;
let pid;

const role = (r, name, opts = {}) => page.getByRole(r, { name, ...opts });

before(async () => {
	browser = await launch();
	page = await newPage(browser);
	me = await signUpApi('turns');
	const r = await api('POST', `/workspaces/${me.workspaceId}/projects`, { token: me.token, body: { name: 'Turns page', template: 'blank' } });
	assert.equal(r.status, 201, JSON.stringify(r.json));
	pid = r.json.id;
	await signIn(page, me.email);
});
after(async () => {
	if (browser) await browser.close();
});

async function sendMessage(text, done) {
	const box = role('textbox', 'Message');
	await box.fill(text);
	await box.press('Enter');
	await page.getByText(done).last().waitFor({ timeout: 60000 });
	await role('button', 'Send').waitFor({ timeout: 60000 });
}

test('a tool call and its result are one line, live and after a reload', async () => {
	await page.goto(`/projects/${pid}`);
	await sendMessage('write a file', 'Wrote notes/hello.txt.');
	const live = page.locator('.tool');
	await until(async () => (await live.count()) === 1 && /wrote notes\/hello\.txt/.test(await live.first().innerText()), 'the live tool line');
	await page.reload();
	await page.getByText('Wrote notes/hello.txt.').waitFor();
	const lines = page.locator('.tool');
	assert.equal(await lines.count(), 1, 'one line for the one tool call after the reload');
	const text = await lines.first().innerText();
	assert.match(text, /write_file/);
	assert.match(text, /notes\/hello\.txt/);
	assert.match(text, /wrote notes\/hello\.txt \(21 bytes\)/);
	await shot(page, 'turn-reloaded');
});

test('a turn shows its files with +/− counts and its diff; Revert this turn takes it back', async () => {
	const files = role('list', 'Files this turn changed');
	await files.waitFor();
	assert.match(await files.innerText(), /notes\/hello\.txt\s*\+1/);
	await page.getByText('Show the changes').click();
	await page.getByText('+hello from the agent').waitFor();
	await role('button', 'Revert this turn').click();
	await page.getByText(/^Reverted: the new version is/).waitFor();
	const r = await api('GET', `/projects/${pid}/files/notes/hello.txt`, { token: me.token });
	assert.equal(r.status, 404, 'the file the turn wrote is gone');
	await shot(page, 'turn-reverted');
});

test('a spending cap warns at 80 % with a banner, then refuses at the cap', async () => {
	// a cap the next "spend 800 tokens" (0.0008 USD) takes to 85 %, whatever the earlier turns spent
	const spent = (await api('GET', `/workspaces/${me.workspaceId}/budget`, { token: me.token })).json.spent.workspaceDay;
	const limitUsd = Math.round(((spent + 0.0008) / 0.85) * 1e6) / 1e6;
	const r = await api('PUT', `/workspaces/${me.workspaceId}/budget`, { token: me.token, body: { caps: { workspaceDay: { limitUsd } } } });
	assert.equal(r.status, 200, JSON.stringify(r.json));
	await sendMessage('please spend 800 tokens', 'Spent.');
	const banner = role('note', 'Spending');
	await banner.waitFor();
	assert.match(await banner.innerText(), /daily cap/);
	await shot(page, 'budget-banner');
	await sendMessage('please spend 800 tokens', 'Spent.');
	const box = role('textbox', 'Message');
	await box.fill('hello');
	await box.press('Enter');
	await page.getByText(/Refused: the workspace's daily cap/).waitFor({ timeout: 60000 });
	await api('PUT', `/workspaces/${me.workspaceId}/budget`, { token: me.token, body: { caps: { workspaceDay: null } } });
});

test('workspace settings: Budget sets caps, Agent instructions are saved', async () => {
	await page.goto(`/settings/workspace/${me.workspaceId}`);
	const budget = role('region', 'Budget');
	await budget.waitFor();
	await budget.getByRole('spinbutton', { name: 'Each project, per day: limit in US dollars' }).fill('2.5');
	await budget.getByRole('spinbutton', { name: 'Each project, per day: warn at percent' }).fill('50');
	await budget.getByRole('button', { name: 'Save caps' }).click();
	await budget.getByText('The caps are saved.').waitFor();
	const b = await api('GET', `/workspaces/${me.workspaceId}/budget`, { token: me.token });
	assert.deepEqual({ limit: b.json.caps.projectDay.limitUsd, warn: b.json.caps.projectDay.warnPercent, block: b.json.caps.projectDay.block }, { limit: 2.5, warn: 50, block: true });
	const ins = role('region', 'Agent instructions');
	await ins.getByRole('textbox', { name: 'Instructions' }).fill('Write British English.');
	await ins.getByRole('button', { name: 'Save instructions' }).click();
	await ins.getByText('The instructions are saved.').waitFor();
	const i = await api('GET', `/workspaces/${me.workspaceId}/instructions`, { token: me.token });
	assert.equal(i.json.text, 'Write British English.');
	await shot(page, 'workspace-budget');
});

test('the project Instructions panel edits AGENTS.md as a new version', async () => {
	await page.goto(`/projects/${pid}`);
	await role('button', 'Instructions').click();
	const dialog = role('dialog', 'Instructions');
	await dialog.waitFor();
	await dialog.getByRole('textbox', { name: 'AGENTS.md' }).fill('# Rules\nKeep pages small.\n');
	await dialog.getByRole('button', { name: 'Save instructions' }).click();
	await dialog.getByText('AGENTS.md is saved as a new version.').waitFor();
	const r = await api('GET', `/projects/${pid}/files/AGENTS.md`, { token: me.token });
	assert.equal(r.status, 200);
	assert.equal(r.json.raw, '# Rules\nKeep pages small.\n');
	await dialog.getByRole('textbox', { name: 'AGENTS.md' }).fill('# Rules\nKeep pages very small.\n');
	await dialog.getByRole('button', { name: 'Save instructions' }).click();
	await until(async () => (await api('GET', `/projects/${pid}/files/AGENTS.md`, { token: me.token })).json.raw === '# Rules\nKeep pages very small.\n', 'the second save');
	await shot(page, 'project-instructions');
});

test('Select element: a click in the preview attaches the element, which reaches the model', async () => {
	await page.goto(`/projects/${pid}`);
	const toggle = role('button', 'Select element');
	await toggle.click();
	assert.equal(await toggle.getAttribute('aria-pressed'), 'true');
	// the preview may reload under the click (a build of the last test's AGENTS.md save lands) or
	// arm Select mode a moment after the click; as a person would, click again on the frame as it is now
	const chip = page.getByText('Element:');
	for (let i = 0; i < 4 && !(await chip.count()); i++) {
		const f = await previewFrame(page);
		await f.getByRole('heading', { name: 'My new app' }).click({ timeout: 5000 }).catch(() => {});
		await chip.waitFor({ timeout: 2000 }).catch(() => {});
		if (!(await chip.count()) && (await toggle.getAttribute('aria-pressed')) !== 'true') await toggle.click();
	}
	await chip.waitFor();
	assert.equal(await toggle.getAttribute('aria-pressed'), 'false', 'one click, then the mode is off');
	await shot(page, 'element-chip');
	if (DOUBLE) await fetch(DOUBLE + '/_reset', { method: 'POST' });
	await sendMessage('make this heading red', 'Hello from the provider double.');
	if (DOUBLE) {
		const reqs = await (await fetch(DOUBLE + '/_requests')).json();
		const body = JSON.stringify(reqs[reqs.length - 1].body);
		assert.match(body, /pointed at this element/);
		assert.match(body, /My new app/);
		assert.match(body, /<h1/);
	}
	assert.equal(await page.getByRole('button', { name: 'Remove the element' }).count(), 0, 'the chip goes with the message');
});
