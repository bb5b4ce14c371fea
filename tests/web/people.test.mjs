// people.test.mjs: the project page's "People here" lists only who svc-wsd confirms (issue 25,
// item 7). A viewer of a public project opens a socket of their own beside the page and sends
// awareness states in an absent person's name, in their own id with another name, and a removal
// of the owner's state: each page still shows the two accounts there, under their own names.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { launch, newPage, signIn, signUpApi, api } from './lib.mjs';

let browser;
let owner;
let absent;
let viewer;
let projectId;
let collaboration;

const userId = async (u) => {
	const me = (await api('GET', '/auth/me', { token: u.token })).json;
	return (me.user && me.user.id) || me.id;
};

before(async () => {
	browser = await launch();
	owner = await signUpApi('owner');
	absent = await signUpApi('absent');
	viewer = await signUpApi('viewer');
	const p = await api('POST', `/workspaces/${owner.workspaceId}/projects`, { token: owner.token, body: { name: 'Public page', template: 'todo-app' } });
	assert.equal(p.status, 201);
	projectId = p.json.id;
	assert.equal((await api('PATCH', `/projects/${projectId}`, { token: owner.token, body: { visibility: 'public' } })).status, 200);
	collaboration = (await api('GET', '/auth/me', { token: owner.token })).json.features.collaboration;
	owner.id = await userId(owner);
	absent.id = await userId(absent);
	viewer.id = await userId(viewer);
});
after(async () => {
	if (browser) await browser.close();
});

/** The names the page's people list gives (its screen-reader text), sorted. */
const listed = async (page) => (await page.getByRole('list', { name: 'People here' }).locator('.sr-only').allTextContents()).sort();

test('an awareness state cannot add, rename or hide a person in the people list', async (t) => {
	if (!collaboration) return t.skip('this instance reports features.collaboration false');
	const a = await newPage(browser);
	const v = await newPage(browser);
	await signIn(a, owner.email, `/projects/${projectId}`);
	await signIn(v, viewer.email, `/projects/${projectId}`);
	const here = (page) => page.getByRole('list', { name: 'People here' });
	await here(a).getByText('Web owner (you)').waitFor({ state: 'attached', timeout: 30000 });
	// the viewer's own socket to the room (the session cookie), beside the page's
	const forged = await v.evaluate(
		async ({ pid, ownerId, absentId, viewerId }) => {
			const put = (v, out) => {
				while (v > 0x7f) {
					out.push(0x80 | v % 128);
					v = Math.floor(v / 128);
				}
				out.push(v);
			};
			const update = (entries) => {
				const u = [];
				put(entries.length, u);
				for (const [client, clock, state] of entries) {
					const s = new TextEncoder().encode(JSON.stringify(state));
					put(client, u);
					put(clock, u);
					put(s.length, u);
					u.push(...s);
				}
				const m = [1];
				put(u.length, m);
				return new Uint8Array(m.concat(u));
			};
			const states = new Map(); // client id -> {clock, state}
			const ws = new WebSocket(`${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}/ws/project/${pid}`);
			ws.binaryType = 'arraybuffer';
			ws.onmessage = (ev) => {
				const b = new Uint8Array(ev.data);
				let p = 0;
				const get = () => {
					let v = 0;
					let m = 1;
					for (;;) {
						const x = b[p++];
						v += (x & 0x7f) * m;
						if (x < 0x80) return v;
						m *= 128;
					}
				};
				if (get() !== 1) return;
				get(); // the update's length
				for (let n = get(); n > 0; n--) {
					const client = get();
					const clock = get();
					const len = get();
					states.set(client, { clock, state: JSON.parse(new TextDecoder().decode(b.subarray(p, p + len))) });
					p += len;
				}
			};
			await new Promise((resolve, reject) => {
				ws.onopen = resolve;
				ws.onerror = reject;
			});
			const end = Date.now() + 20000;
			let own;
			while (!(own = [...states].find(([, s]) => s.state && s.state.user && s.state.user.id === ownerId)) && Date.now() < end) await new Promise((r) => setTimeout(r, 50));
			if (!own) return 'the owner\'s awareness state never came';
			ws.send(update([[own[0], own[1].clock + 1, null]])); // hide the owner
			ws.send(update([[4242001, 1, { user: { id: absentId, name: 'Web absent', color: '#000' } }]])); // appear as someone else
			ws.send(update([[4242002, 1, { user: { id: viewerId, name: 'The owner', color: '#000' }, file: 'index.html' }]])); // rename oneself
			window.forger = ws; // stays open
			return 'sent';
		},
		{ pid: projectId, ownerId: owner.id, absentId: absent.id, viewerId: viewer.id },
	);
	assert.equal(forged, 'sent');
	await here(a).getByText('Web viewer', { exact: true }).waitFor({ state: 'attached', timeout: 30000 });
	await a.waitForTimeout(1500); // the forged states had their time to arrive
	assert.deepEqual(await listed(a), ['Web owner (you)', 'Web viewer']);
	assert.deepEqual(await listed(v), ['Web owner', 'Web viewer (you)']);
	// the viewer's own state still tells which file they have open
	assert.equal(await here(a).getByTitle('Web viewer, in index.html').count(), 1);
	await v.context().close();
	await here(a).getByText('Web viewer', { exact: true }).waitFor({ state: 'detached', timeout: 30000 });
	assert.deepEqual(await listed(a), ['Web owner (you)']);
	await a.context().close();
});
