// app-files.test.mjs: client.js's files (docs/app-backend.md "Files") in a real browser, on a project's preview
// opened in a tab of its own: an end user signs up, files.upload() of a File keeps its type, files.url() shows
// the image in an <img> (served inline under the file's sandbox policy), a fetch of it gives the bytes back,
// files.delete() removes it; another browser's end user gets 404 for it.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { launch, newPage, signUpApi, api } from './lib.mjs';

// a 1x1 PNG
const PNG = '89504e470d0a1a0a0000000d4948445200000001000000010806000000' +
	'1f15c4890000000d49444154789c6360000002000154a24f5d0000000049454e44ae426082';

let browser;
let preview;

before(async () => {
	browser = await launch();
	const u = await signUpApi('appfiles');
	const p = await api('POST', `/workspaces/${u.workspaceId}/projects`, { token: u.token, body: { name: 'Files', template: 'blank' } });
	assert.equal(p.status, 201, JSON.stringify(p.json));
	const f = await api('PUT', `/projects/${p.json.id}/files/svc.data.json`,
		{ token: u.token, body: { content: JSON.stringify({ files: {} }), overwrite: true } });
	assert.ok([200, 201].includes(f.status), JSON.stringify(f.json));
	const r = await api('GET', `/projects/${p.json.id}/preview`, { token: u.token });
	assert.equal(r.status, 200, JSON.stringify(r.json));
	preview = r.json.url;
});
after(async () => {
	if (browser) await browser.close();
});

/** A page on the preview's origin with an end user of its own signed up through client.js. */
async function endUser(tag) {
	const page = await newPage(browser);
	await page.goto(preview);
	await page.evaluate(async (tag) => {
		const { auth } = await import('/_svc/client.js');
		await auth.signUp(`${tag}-${Math.random().toString(16).slice(2)}@example.test`, 'pw-of-an-end-user');
	}, tag);
	return page;
}

test('files.upload, files.url, files.delete through client.js in the browser', async () => {
	const a = await endUser('a');
	const got = await a.evaluate(async (hex) => {
		const { files } = await import('/_svc/client.js');
		const bytes = new Uint8Array(hex.match(/../g).map((h) => parseInt(h, 16)));
		const up = await files.upload(new File([bytes], 'dot.png', { type: 'image/png' }));
		const img = document.createElement('img');
		const shown = await new Promise((res) => {
			img.onload = () => res(img.naturalWidth);
			img.onerror = () => res(-1);
			img.src = files.url(up.id);
			document.body.appendChild(img);
		});
		const r = await fetch(files.url(up.id));
		const back = new Uint8Array(await r.arrayBuffer());
		return { up, shown, type: r.headers.get('content-type'), same: back.length === bytes.length && back.every((b, i) => b === bytes[i]) };
	}, PNG);
	assert.match(got.up.id, /^[0-9a-f-]{36}$/);
	assert.equal(got.up.url, `/_svc/files/${got.up.id}`);
	assert.equal(got.shown, 1, 'the uploaded PNG shows in an <img>');
	assert.equal(got.type, 'image/png');
	assert.ok(got.same, 'the bytes come back as uploaded');

	const b = await endUser('b');
	const other = await b.evaluate(async (id) => (await fetch(`/_svc/files/${id}`)).status, got.up.id);
	assert.equal(other, 404, "another end user gets 404 for A's file");

	const gone = await a.evaluate(async (id) => {
		const { files } = await import('/_svc/client.js');
		await files.delete(id);
		let code = null;
		try {
			await files.delete(id);
		} catch (e) {
			code = `${e.status} ${e.code}`;
		}
		return { get: (await fetch(files.url(id))).status, again: code };
	}, got.up.id);
	assert.deepEqual(gone, { get: 404, again: '404 not_found' });
	await a.context().close();
	await b.context().close();
});
