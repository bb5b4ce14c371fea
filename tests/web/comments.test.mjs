// comments.test.mjs: design comments on the preview (docs/web.md "Design comments") with two
// browser contexts, the workspace's owner and a member: a comment pinned in one appears in the
// other live and after a reload, replies, Resolve and Reopen in both, Delete of one's own (and by
// the owner, an admin, of a member's), none for a member on another's comment, pins that follow
// their element when the page scrolls and reflows, forged frame messages ignored. Controls are
// found by role and accessible name only.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { launch, newPage, signIn, signUpApi, api, shotBoth, DESKTOP, until, previewFrame, postFromElsewhere } from './lib.mjs';

let browser;
let owner;
let member;
let pid;
let collaboration;
let a; // the owner's page
let b; // the member's page

const frame = previewFrame;
const panel = (page) => page.getByRole('complementary', { name: 'Comments' });
const openList = (page) => panel(page).getByRole('list', { name: 'Open comments' });
const resolvedList = (page) => panel(page).getByRole('list', { name: 'Resolved comments' });
/** thread(page, list, text): the thread (list item) of that list whose text has `text`. */
const thread = (list, text) => list.getByRole('listitem').filter({ hasText: text }).first();

/** showComments(page): the Comments panel open (the toggle pressed). */
async function showComments(page) {
	const t = page.getByRole('button', { name: 'Comments', exact: true });
	if ((await t.getAttribute('aria-pressed')) !== 'true') await t.click();
	await panel(page).getByRole('heading', { name: 'Comments' }).waitFor();
}
/** comment(page, role, name, text): Comment mode, a click on that element of the preview, the text posted. */
async function comment(page, role, name, text, position) {
	const mode = page.getByRole('button', { name: 'Comment', exact: true });
	if ((await mode.getAttribute('aria-pressed')) !== 'true') await mode.click();
	await panel(page).getByText('Click the preview where your comment belongs.').waitFor();
	const box = panel(page).getByRole('textbox', { name: 'Comment' });
	const post = panel(page).getByRole('button', { name: 'Post comment' });
	// the preview's script arms Comment mode by a message to the frame; a click that came before it was
	// armed sets no pin (Post comment stays disabled), so the click is made again, as a person would
	for (let i = 0; i < 4; i++) {
		await (await frame(page)).getByRole(role, { name, exact: true }).click({ position });
		await box.fill(text);
		if (await post.isEnabled()) break;
		await page.waitForTimeout(500);
	}
	await post.click();
	await thread(openList(page), text).waitFor();
}

before(async () => {
	browser = await launch();
	owner = await signUpApi('cowner');
	member = await signUpApi('cmember');
	const ws = await api('POST', '/workspaces', { token: owner.token, body: { name: 'Comment team' } });
	assert.equal(ws.status, 201);
	assert.equal((await api('POST', `/workspaces/${ws.json.id}/members`, { token: owner.token, body: { email: member.email } })).status, 201);
	const p = await api('POST', `/workspaces/${ws.json.id}/projects`, { token: owner.token, body: { name: 'Commented page', template: 'todo-app' } });
	assert.equal(p.status, 201);
	pid = p.json.id;
	collaboration = (await api('GET', '/auth/me', { token: owner.token })).json.features.collaboration;
	a = await newPage(browser);
	b = await newPage(browser);
	await signIn(a, owner.email, `/projects/${pid}`);
	await signIn(b, member.email, `/projects/${pid}`);
});
after(async () => {
	if (browser) await browser.close();
});

test('a comment pinned in one context appears in the other at once and after a reload', async (t) => {
	if (!collaboration) return t.skip('this instance reports features.collaboration false');
	await showComments(b);
	await comment(a, 'heading', 'Todos', 'Make the title bigger', { x: 20, y: 10 });
	await a.getByRole('button', { name: 'Comment 1', exact: true }).waitFor();
	const th = thread(openList(b), 'Make the title bigger');
	await th.waitFor();
	assert.match(await th.textContent(), /Web cowner/);
	assert.match(await th.textContent(), /on \//);
	await b.getByRole('button', { name: 'Comment 1', exact: true }).waitFor();
	const list = await api('GET', `/projects/${pid}/design-comments`, { token: member.token });
	assert.equal(list.json.items.length, 1);
	assert.equal(list.json.items[0].selector, '#app-title');
	assert.equal(list.json.items[0].pagePath, '/');
	await b.reload();
	await showComments(b);
	await thread(openList(b), 'Make the title bigger').waitFor();
	await b.getByRole('button', { name: 'Comment 1', exact: true }).waitFor();
	await shotBoth(a, 'comments');
});

test('reply, Resolve and Reopen show in both', async (t) => {
	if (!collaboration) return t.skip('no collaboration');
	const mine = thread(openList(b), 'Make the title bigger');
	await mine.getByRole('textbox', { name: 'Reply' }).fill('Agreed, 3rem');
	await mine.getByRole('button', { name: 'Post reply' }).click();
	await thread(openList(a), 'Make the title bigger').getByText('Agreed, 3rem').waitFor();
	await thread(openList(a), 'Make the title bigger').getByRole('button', { name: 'Resolve' }).click();
	for (const p of [a, b]) {
		await thread(resolvedList(p), 'Make the title bigger').waitFor();
		await p.getByRole('button', { name: 'Comment 1', exact: true }).waitFor({ state: 'detached' });
	}
	await shotBoth(b, 'comments-resolved');
	await thread(resolvedList(b), 'Make the title bigger').getByRole('button', { name: 'Reopen' }).click();
	for (const p of [a, b]) await thread(openList(p), 'Make the title bigger').waitFor();
	const list = await api('GET', `/projects/${pid}/design-comments`, { token: owner.token });
	assert.equal(list.json.items.length, 2);
	assert.equal(list.json.items.find((c) => c.content === 'Make the title bigger').status, 'open');
});

test('Delete: one\'s own, not another member\'s; the owner (an admin) deletes any', async (t) => {
	if (!collaboration) return t.skip('no collaboration');
	const owners = thread(openList(b), 'Make the title bigger');
	assert.equal(await owners.getByRole('button', { name: 'Delete comment' }).count(), 0, 'a member cannot delete the owner\'s comment');
	// the member deletes their own reply
	await owners.getByRole('button', { name: 'Delete reply' }).click();
	await b.getByRole('dialog', { name: 'Delete this reply?' }).getByRole('button', { name: 'Delete' }).click();
	await until(async () => (await thread(openList(a), 'Make the title bigger').getByText('Agreed, 3rem').count()) === 0, 'the reply gone for the owner');
	// a member's comment: the owner may delete it
	await comment(b, 'heading', 'Todos', 'Member note', { x: 60, y: 20 });
	await thread(openList(a), 'Member note').waitFor();
	await thread(openList(a), 'Member note').getByRole('button', { name: 'Delete comment' }).click();
	await a.getByRole('dialog', { name: 'Delete this comment?' }).getByRole('button', { name: 'Delete' }).click();
	await until(async () => (await thread(openList(b), 'Member note').count()) === 0, 'the note gone for the member');
	const list = await api('GET', `/projects/${pid}/design-comments`, { token: owner.token });
	assert.deepEqual(list.json.items.map((c) => c.content), ['Make the title bigger']);
});

/** pinPoint(page, n): where pin n points (its lower left corner, see styles.css .pin), in page pixels. */
async function pinPoint(page, n) {
	const pin = page.getByRole('button', { name: `Comment ${n}`, exact: true });
	if ((await pin.count()) !== 1) return null;
	const box = await pin.boundingBox();
	return box && [box.x + 3, box.y + box.height];
}
/** anchorPoint(page, role, name, c): the point of comment c inside its element, in page pixels. */
async function anchorPoint(page, role, name, c) {
	const box = await (await frame(page)).getByRole(role, { name, exact: true }).boundingBox();
	return box && [box.x + (box.width * c.xPercent) / 100, box.y + (box.height * c.yPercent) / 100];
}
/** pinned(page, n, role, name, c): whether pin n points at comment c's point (4 px), else what both were. */
async function pinned(page, n, role, name, c) {
	const p = await pinPoint(page, n);
	const q = await anchorPoint(page, role, name, c);
	pinned.last = { pin: p, anchor: q };
	return !!(p && q && Math.abs(p[0] - q[0]) < 4 && Math.abs(p[1] - q[1]) < 4);
}

test('pins follow their element when the page scrolls and reflows', async (t) => {
	if (!collaboration) return t.skip('no collaboration');
	await comment(a, 'button', 'Add', 'The button needs more contrast', { x: 8, y: 8 });
	const c = (await api('GET', `/projects/${pid}/design-comments`, { token: owner.token })).json.items.find((x) => x.content.startsWith('The button'));
	const n = 2;
	await until(() => pinned(a, n, 'button', 'Add', c), 'the pin on the button').catch((e) => assert.fail(`${e.message}: ${JSON.stringify(pinned.last)} ${JSON.stringify(c)}`));
	// the frame scrolls: the pin moves with the button
	await (await frame(a)).evaluate(() => {
		document.body.style.minHeight = '3000px';
		window.scrollBy(0, 60);
	});
	await until(() => pinned(a, n, 'button', 'Add', c), 'the pin after a scroll').catch((e) => assert.fail(`${e.message}: ${JSON.stringify(pinned.last)}`));
	// the page reflows at another width: the button moves and so does the pin
	await a.setViewportSize({ width: 1000, height: 800 });
	await until(() => pinned(a, n, 'button', 'Add', c), 'the pin after a reflow').catch((e) => assert.fail(`${e.message}: ${JSON.stringify(pinned.last)}`));
	await a.setViewportSize(DESKTOP);
	// the other member sees it at the same place in their own frame
	await until(() => pinned(b, n, 'button', 'Add', c), 'the pin for the member').catch((e) => assert.fail(`${e.message}: ${JSON.stringify(pinned.last)}`));
});

test('a point message from another window is ignored', async (t) => {
	if (!collaboration) return t.skip('no collaboration');
	await a.getByRole('button', { name: 'Comment', exact: true }).waitFor();
	if ((await a.getByRole('button', { name: 'Comment', exact: true }).getAttribute('aria-pressed')) !== 'true') await a.getByRole('button', { name: 'Comment', exact: true }).click();
	await postFromElsewhere(a, { svc: 'svc-preview', v: 1, type: 'point', page: '/', selector: 'body', xPercent: 5, yPercent: 5 });
	assert.equal(await panel(a).getByRole('textbox', { name: 'Comment' }).count(), 0, 'no comment box opened');
});
