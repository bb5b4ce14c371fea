// visual.test.mjs: visual editing in the Preview panel (docs/web.md "Visual editing"), as a person
// does it: Edit visually, a click on an element of the preview, the inspector's fields, Save (one
// POST /direct-save), a refused patch shown at its field, Undo; the file compared byte for byte
// with what it was; messages from any window but the preview frame ignored. Controls are found
// by role and accessible name only.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { launch, newPage, signIn, signUpApi, api, shotBoth, BASE, until, previewFrame, postFromElsewhere } from './lib.mjs';

let browser;
let page;
let owner;
let pid;

/** file(path): the project file's text through the API. */
async function file(path) {
	const r = await fetch(`${BASE}/projects/${pid}/files/${path}`, { headers: { Authorization: `Bearer ${owner.token}` } });
	assert.equal(r.status, 200, `GET files/${path}`);
	return r.text();
}
async function versions() {
	const r = await api('GET', `/projects/${pid}/versions`, { token: owner.token });
	assert.equal(r.status, 200);
	return r.json.items;
}
/** frame(): the preview's frame as it is now (a reload makes a new one). */
const frame = () => previewFrame(page);
/** settled(): the preview's frame once no reload replaced it for a second (a change of files reloads it, and
 * the collaboration socket's notice of the same change may reload it once more). */
async function settled() {
	return until(async () => {
		const a = await page.getByTitle('Preview').elementHandle({ timeout: 20000 });
		await new Promise((r) => setTimeout(r, 1000));
		const b = await page.getByTitle('Preview').elementHandle({ timeout: 20000 });
		return (await a.evaluate((x, y) => x === y && x.isConnected, b)) && a.contentFrame();
	}, 'a settled preview frame', 20000);
}
const inspector = () => page.getByRole('complementary', { name: 'Inspector' });
const field = (name) => inspector().getByRole('textbox', { name, exact: true });

/** pick(text role, name): clicks that element of the preview and waits for the inspector to show it. */
async function pick(role, name, wantText) {
	const f = await frame();
	await f.getByRole(role, { name, exact: true }).click();
	if (wantText !== undefined) await until(async () => (await field('Text').inputValue().catch(() => null)) === wantText, `the inspector to show "${wantText}"`);
}

before(async () => {
	browser = await launch();
	owner = await signUpApi('visual');
	const p = await api('POST', `/workspaces/${owner.workspaceId}/projects`, { token: owner.token, body: { name: 'Visual editing', template: 'todo-app' } });
	assert.equal(p.status, 201, JSON.stringify(p.json));
	pid = p.json.id;
	// the provider double writes page.html (a heading, rich text, a link, an image, a list) and logo.svg
	const chats = await api('GET', `/projects/${pid}/chats`, { token: owner.token });
	const r = await fetch(`${BASE}/chat/${pid}/messages`, {
		method: 'POST',
		headers: { Authorization: `Bearer ${owner.token}`, 'Content-Type': 'application/json', Accept: 'text/event-stream' },
		body: JSON.stringify({ chatId: chats.json.items[0].id, text: 'visual test page' }),
	});
	const events = await r.text();
	assert.match(events, /session\.task_complete/, events.slice(0, 500));
	page = await newPage(browser);
	await signIn(page, owner.email, `/projects/${pid}`);
});
after(async () => {
	if (browser) await browser.close();
});

test('Edit visually: a click on the heading selects it and the inspector shows its fields', async () => {
	const toggle = page.getByRole('button', { name: 'Edit visually' });
	await toggle.click();
	assert.equal(await toggle.getAttribute('aria-pressed'), 'true');
	await inspector().getByText('Click an element in the preview to edit it.').waitFor();
	await pick('heading', 'Todos', 'Todos');
	await inspector().getByText('#app-title').waitFor();
	assert.equal(await field('Class').inputValue(), '');
	for (const name of ['Colour', 'Background', 'Font size', 'Margin', 'Padding']) await field(name).waitFor();
	for (const name of ['Font weight', 'Text alignment']) await inspector().getByRole('combobox', { name }).waitFor();
	assert.equal(await inspector().getByRole('textbox', { name: 'Link' }).count(), 0, 'a heading has no Link field');
	assert.equal(await page.getByRole('button', { name: 'Save' }).isDisabled(), true, 'nothing to save yet');
	await shotBoth(page, 'visual-inspector');
});

test('Save: the heading\'s text and colour change in the file at those bytes only, a version appears, the preview shows it', async () => {
	const before = await file('index.html');
	const n = (await versions()).length;
	await field('Text').fill('My todos');
	await field('Colour').fill('#c80000');
	await page.getByRole('button', { name: 'Save' }).click();
	await inspector().getByRole('status').getByText(/Saved to index\.html as a new version/).waitFor();
	const after = await file('index.html');
	const want = before.replace('<h1 id="app-title">Todos</h1>', '<h1 style="color: #c80000" id="app-title">My todos</h1>');
	assert.notEqual(want, before, 'the template has the heading this test edits');
	assert.equal(after, want, 'only the heading\'s text and a style attribute changed');
	const list = await versions();
	assert.equal(list.length, n + 1);
	assert.equal(list[0].message, 'Visual edit: index.html');
	// the preview reloads, shows the new heading, and the same element is selected again (a look that meets the
	// frame while it reloads, "Frame was detached", is only a look too early)
	await until(async () => {
		try {
			const f = await frame();
			const h = f.getByRole('heading', { name: 'My todos' });
			return (await h.count()) === 1 && (await h.evaluate((e) => getComputedStyle(e).color)) === 'rgb(200, 0, 0)';
		} catch (e) {
			if (!/detached|destroyed|navigat/i.test(String(e && e.message))) throw e;
			return false;
		}
	}, 'the preview to show the edit');
	await until(async () => (await field('Text').inputValue().catch(() => null)) === 'My todos', 'the inspector to show the saved text');
	assert.equal(await field('Colour').inputValue(), '#c80000');
	await page.getByRole('tab', { name: 'Versions' }).click();
	await page.getByRole('list', { name: 'Versions' }).getByText('Visual edit: index.html').first().waitFor();
	await page.getByRole('tab', { name: 'Preview' }).click();
});

test('Undo visual edit restores the version before it', async () => {
	const list = await versions();
	const before = await api('GET', `/projects/${pid}/versions/${list[1].sha}/diff`, { token: owner.token });
	assert.equal(before.status, 200);
	await page.getByRole('button', { name: 'Undo visual edit' }).click();
	await inspector().getByRole('status').getByText(/Undone/).waitFor();
	const now = await versions();
	assert.equal(now.length, list.length + 1);
	assert.match(now[0].message, /^Restore version /);
	const html = await file('index.html');
	assert.match(html, /<h1 id="app-title">Todos<\/h1>/, 'the heading is back as it was');
	assert.equal(await page.getByRole('button', { name: 'Undo visual edit' }).count(), 0);
	await until(async () => (await (await frame()).getByRole('heading', { name: 'Todos' }).count()) === 1, 'the preview to show the old heading');
});

test('a forbidden edit (a javascript: link) is refused: the patch index and its field are shown, the file is untouched', async () => {
	const f = await settled();
	await f.goto(new URL('page.html', f.url()).href);
	await pick('link', 'Example link', 'Example link');
	assert.equal(await field('Link').inputValue(), 'https://example.com/');
	const before = await file('page.html');
	const n = (await versions()).length;
	await field('Text').fill('Another link');
	await field('Link').fill('javascript:alert(1)');
	await page.getByRole('button', { name: 'Save' }).click();
	const alert = inspector().getByRole('alert').filter({ hasText: 'Change 2 of 2 (Link) was refused' });
	await alert.waitFor();
	assert.match(await alert.textContent(), /javascript:/);
	assert.equal(await field('Link').getAttribute('aria-invalid'), 'true');
	assert.equal(await file('page.html'), before, 'nothing was written');
	assert.equal((await versions()).length, n, 'no version');
	await shotBoth(page, 'visual-refused');
	await page.getByRole('button', { name: 'Discard changes' }).click();
	assert.equal(await field('Link').inputValue(), 'https://example.com/');
});

test('elements without an id get an :nth-of-type path; text with entities, images and rich text', async () => {
	const before = await file('page.html');
	await (await settled()).getByText('Two', { exact: true }).click();
	await until(async () => (await field('Text').inputValue().catch(() => null)) === 'Two', 'the list item');
	await inspector().getByText('body > main:nth-of-type(1) > ul:nth-of-type(1) > li:nth-of-type(2)').waitFor();
	await field('Text').fill('Two & a half');
	await field('Font size').fill('20px');
	await page.getByRole('button', { name: 'Save' }).click();
	let want = before.replace('<li>Two</li>', '<li style="font-size: 20px">Two &amp; a half</li>');
	await until(async () => (await file('page.html')) === want, 'the list item saved');

	// the preview reloads on the same page, with the same element selected
	let f = await settled();
	assert.match(f.url(), /\/page\.html$/);
	await until(async () => (await field('Text').inputValue().catch(() => null)) === 'Two & a half', 'the list item selected again');
	await f.getByRole('img', { name: 'Logo' }).click();
	await until(async () => (await field('Image').inputValue().catch(() => null)) === 'logo.svg', 'the image fields');
	assert.equal(await field('Alt text').inputValue(), 'Logo');
	assert.equal(await field('Text').count(), 0, 'an image has no text');
	await field('Alt text').fill('The "logo"');
	await page.getByRole('button', { name: 'Save' }).click();
	want = want.replace('alt="Logo"', 'alt="The &quot;logo&quot;"');
	await until(async () => (await file('page.html')) === want, 'the alt text saved');

	f = await settled();
	await f.getByRole('heading', { name: 'Visual & page' }).click();
	await until(async () => (await field('Text').inputValue().catch(() => null)) === 'Visual & page', 'the heading');
	assert.equal(await field('Class').inputValue(), 'title');
	// a paragraph that holds an <em>: its text is not a field (it would drop the element)
	await f.getByText('Some rich text.').click();
	await inspector().getByText('it holds other elements').waitFor();
	assert.equal(await field('Text').count(), 0);
});

test('it works after a reload of the preview', async () => {
	const old = await frame();
	await page.getByRole('button', { name: 'Reload preview' }).click();
	await until(async () => (await frame()) !== old, 'a new frame');
	await (await settled()).getByRole('heading', { name: 'Visual & page' }).click();
	await until(async () => (await field('Text').inputValue().catch(() => null)) === 'Visual & page', 'the heading');
});

test('messages from another window or origin are ignored', async () => {
	await pick('heading', 'Visual & page', 'Visual & page');
	const fake = { svc: 'svc-preview', v: 1, type: 'select', page: '/page.html', el: { selector: '#fake', tag: 'h1', text: 'FAKE', computed: {} } };
	await postFromElsewhere(page, fake);
	assert.equal(await field('Text').inputValue(), 'Visual & page', 'the inspector did not take them');
	// a message from the preview frame is taken (its own page's scripts could send it too: it is data, never markup)
	await (await frame()).evaluate((msg) => parent.postMessage(msg, '*'), { ...fake, el: { ...fake.el, text: '<img src=x onerror=alert(1)>' } });
	await until(async () => (await field('Text').inputValue()) === '<img src=x onerror=alert(1)>', 'the frame\'s message');
	assert.equal(await page.getByRole('img', { name: 'x' }).count(), 0);
});
