// presence.test.mjs: features.collaboration decides whether the project page opens svc-wsd's
// socket (lib/room.js); with it, two members on one project each see the other ("People here"),
// and the other leaving is seen too. Without it (the instance reports false), nothing is shown.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { launch, newPage, signIn, signUpApi, api } from './lib.mjs';

let browser;
let owner;
let member;
let projectId;
let collaboration;

before(async () => {
	browser = await launch();
	owner = await signUpApi('owner');
	member = await signUpApi('member');
	const ws = await api('POST', '/workspaces', { token: owner.token, body: { name: 'Web team' } });
	assert.equal(ws.status, 201);
	assert.equal((await api('POST', `/workspaces/${ws.json.id}/members`, { token: owner.token, body: { email: member.email } })).status, 201);
	const p = await api('POST', `/workspaces/${ws.json.id}/projects`, { token: owner.token, body: { name: 'Shared page', template: 'todo-app' } });
	projectId = p.json.id;
	collaboration = (await api('GET', '/auth/me', { token: owner.token })).json.features.collaboration;
});
after(async () => {
	if (browser) await browser.close();
});

test('two members on one project see each other while both are there', async (t) => {
	if (!collaboration) return t.skip('this instance reports features.collaboration false');
	const a = await newPage(browser);
	const b = await newPage(browser);
	await signIn(a, owner.email, `/projects/${projectId}`);
	await signIn(b, member.email, `/projects/${projectId}`);
	const here = (page) => page.getByRole('list', { name: 'People here' });
	await here(a).getByText('Web owner (you)').waitFor({ state: 'attached', timeout: 30000 });
	await here(a).getByText('Web member', { exact: true }).waitFor({ state: 'attached', timeout: 30000 });
	await here(b).getByText('Web owner', { exact: true }).waitFor({ state: 'attached', timeout: 30000 });
	await b.context().close();
	await here(a).getByText('Web member', { exact: true }).waitFor({ state: 'detached', timeout: 30000 });
	await a.context().close();
});

test('without collaboration the page shows no presence and no socket banner', async (t) => {
	if (collaboration) return t.skip('this instance has collaboration (covered above)');
	const a = await newPage(browser);
	await signIn(a, owner.email, `/projects/${projectId}`);
	await a.getByRole('textbox', { name: 'Message' }).waitFor();
	assert.equal(await a.getByRole('list', { name: 'People here' }).count(), 0);
	assert.equal(await a.getByRole('alert').count(), 0);
	await a.context().close();
});
