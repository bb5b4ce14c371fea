// git.test.mjs: Git in and out in the web app (docs/git.md): the project's Git panel (the clone URL, a
// copyable git clone command, where to make a token, the remote form and its refusals), Download ZIP in
// Versions (the ZIP of that version), Import in the New project dialog (a ZIP file; a Git URL the
// outbound guard refuses), and the mirror against the forge double (tests/fixtures/git_remote.py):
// Push now, Pull from remote, and svc's main to a new branch when the two have diverged.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { launch, newPage, signIn, signUpApi, api, shotBoth, APP } from './lib.mjs';

let browser;
let owner;
let projectId;

before(async () => {
	browser = await launch();
	owner = await signUpApi('git');
	const p = await api('POST', `/workspaces/${owner.workspaceId}/projects`, { token: owner.token, body: { name: 'Git page', template: 'blank' } });
	assert.equal(p.status, 201);
	projectId = p.json.id;
	const w = await api('PUT', `/projects/${projectId}/files/extra.txt`, { token: owner.token, body: { content: 'second\n' } });
	assert.ok(w.status === 200 || w.status === 201);
});
after(async () => {
	if (browser) await browser.close();
});

test('the Git panel shows the clone URL and command, the token link, and refuses an internal remote', async () => {
	const page = await newPage(browser);
	await signIn(page, owner.email, `/projects/${projectId}`);
	await page.getByRole('button', { name: 'Git', exact: true }).click();
	const dialog = page.getByRole('dialog', { name: 'Git' });
	const url = `${APP}/api/git/${projectId}.git`;
	assert.equal(await dialog.getByLabel('Clone URL').inputValue(), url);
	assert.match(await dialog.innerText(), new RegExp(`git clone ${url.replace(/[.]/g, '\\.')}`));
	await dialog.getByRole('button', { name: 'Copy git clone command' }).click();
	await dialog.getByRole('status').filter({ hasText: /Copied|copy it/ }).waitFor();
	const link = dialog.getByRole('link', { name: 'Create a token with the git scopes' });
	assert.equal(await link.getAttribute('href'), '/settings/account');
	// the mirror: no remote yet, so the form; a loopback URL is refused on its field
	await dialog.getByLabel('Remote URL').fill('https://127.0.0.1/x.git');
	await dialog.getByLabel('Token', { exact: true }).fill('secret-token');
	await dialog.getByRole('button', { name: 'Save remote' }).click();
	await dialog.getByText(/internal address/).waitFor();
	const r = await api('GET', `/projects/${projectId}/git/remote`, { token: owner.token });
	assert.equal(r.json.remote, null);
	await shotBoth(page, 'git-panel');
	await page.context().close();
});

test('Download ZIP in Versions gives that version as a ZIP', async () => {
	const page = await newPage(browser);
	await signIn(page, owner.email, `/projects/${projectId}`);
	await page.getByRole('tab', { name: 'Versions' }).click();
	const vs = (await api('GET', `/projects/${projectId}/versions`, { token: owner.token })).json.items;
	const oldest = vs[vs.length - 1].sha;
	const a = page.getByRole('link', { name: `Download ZIP of version ${oldest.slice(0, 7)}` });
	await a.waitFor();
	const href = await a.getAttribute('href');
	assert.equal(href, `/api/projects/${projectId}/export.zip?sha=${oldest}`);
	const res = await page.request.get(APP + href);
	assert.equal(res.status(), 200);
	assert.equal(res.headers()['content-type'], 'application/zip');
	assert.match(res.headers()['content-disposition'], new RegExp(`-${oldest.slice(0, 7)}\\.zip"$`));
	const body = await res.body();
	assert.equal(body.subarray(0, 2).toString(), 'PK');
	await page.context().close();
});

test('New project imports a ZIP file, and refuses a loopback Git URL', async () => {
	const dir = mkdtempSync(join(tmpdir(), 'svc-web-zip-'));
	const zip = join(dir, 'site.zip');
	execFileSync('python3', ['-c', 'import sys, zipfile\nz = zipfile.ZipFile(sys.argv[1], "w")\nz.writestr("site/index.html", "<h1>zipped</h1>\\n")\nz.close()', zip]);
	const page = await newPage(browser);
	await signIn(page, owner.email, '/dashboard');
	await page.getByRole('button', { name: 'New project' }).click();
	let dialog = page.getByRole('dialog', { name: 'New project' });
	await dialog.getByLabel('Project name').fill('From a ZIP');
	await dialog.getByLabel('Start from').selectOption('zip');
	await dialog.getByLabel('ZIP file').setInputFiles(zip);
	await dialog.getByRole('button', { name: 'Import project' }).click();
	await page.getByRole('heading', { name: 'From a ZIP', level: 1 }).waitFor();
	const id = page.url().split('/projects/')[1];
	const f = await api('GET', `/projects/${id}/files/index.html`, { token: owner.token });
	assert.equal(f.status, 200);
	assert.match(f.json.raw, /zipped/);

	await page.goto(APP + '/dashboard');
	await page.getByRole('button', { name: 'New project' }).click();
	dialog = page.getByRole('dialog', { name: 'New project' });
	await dialog.getByLabel('Project name').fill('From loopback');
	await dialog.getByLabel('Start from').selectOption('git');
	await dialog.getByLabel('Git URL').fill('https://127.0.0.1/repo.git');
	await shotBoth(page, 'git-import');
	await dialog.getByRole('button', { name: 'Import project' }).click();
	await dialog.getByText(/internal address/).waitFor();
	writeFileSync(join(dir, 'done'), '');
	await page.context().close();
});

/** The forge double on 127.0.0.10 (git.example.com in the test stack's DNS) with a certificate of the test CA. */
function startForge() {
	const dir = mkdtempSync(join(tmpdir(), 'svc-web-forge-'));
	const ca = process.env.SVC_TEST_TLS_CA;
	const run = (cmd, args, opts = {}) => execFileSync(cmd, args, { stdio: 'pipe', ...opts });
	writeFileSync(join(dir, 'ext.cnf'), 'subjectAltName=DNS:git.example.com\n');
	run('openssl', ['req', '-newkey', 'rsa:2048', '-nodes', '-subj', '/CN=git.example.com', '-keyout', join(dir, 'k.pem'), '-out', join(dir, 'r.csr')]);
	run('openssl', ['x509', '-req', '-in', join(dir, 'r.csr'), '-CA', ca, '-CAkey', join(dirname(ca), 'ca.key'), '-CAcreateserial', '-CAserial', join(dir, 'ca.srl'), '-days', '2', '-extfile', join(dir, 'ext.cnf'), '-out', join(dir, 'c.pem')]);
	const env = { ...process.env, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null', GIT_AUTHOR_NAME: 'Forge', GIT_AUTHOR_EMAIL: 'forge@example.com', GIT_COMMITTER_NAME: 'Forge', GIT_COMMITTER_EMAIL: 'forge@example.com' };
	const git = (...args) => run('git', args, { env }).toString().trim();
	const root = join(dir, 'repos');
	git('init', '-q', '--bare', '-b', 'main', join(root, 'mirror.git'));
	const password = 'forge-' + Math.random().toString(16).slice(2);
	const proc = spawn('python3', [join(import.meta.dirname, '..', 'fixtures', 'git_remote.py'), '--root', root, '--cert', join(dir, 'c.pem'), '--key', join(dir, 'k.pem'), '--password', password, '--log', join(dir, 'log'), '--port-file', join(dir, 'port')], { stdio: 'ignore' });
	return {
		dir,
		git,
		password,
		proc,
		bare: join(root, 'mirror.git'),
		async url() {
			for (let i = 0; i < 100 && !existsSync(join(dir, 'port')); i++) await new Promise((r) => setTimeout(r, 100));
			return `https://git.example.com:${readFileSync(join(dir, 'port'), 'utf8')}/mirror.git`;
		},
		/** a commit on the forge's main with file `name` */
		commit(name) {
			const work = join(dir, 'work-' + name);
			git('clone', '-q', join(root, 'mirror.git'), work);
			writeFileSync(join(work, name), 'made on the forge\n');
			git('-C', work, 'add', '-A');
			git('-C', work, 'commit', '-q', '-m', 'forge: ' + name);
			git('-C', work, 'push', '-q', 'origin', 'HEAD:main');
			return git('--git-dir', join(root, 'mirror.git'), 'rev-parse', 'main');
		},
		stop() {
			proc.kill();
			rmSync(dir, { recursive: true, force: true });
		},
	};
}

test('the mirror: Push now, Pull from remote, and a new branch when the two have diverged', async () => {
	const forge = startForge();
	try {
		const url = await forge.url();
		const r = await api('PUT', `/projects/${projectId}/git/remote`, { token: owner.token, body: { url, username: 'forge', token: forge.password } });
		assert.equal(r.status, 200);
		const page = await newPage(browser);
		await signIn(page, owner.email, `/projects/${projectId}`);
		await page.getByRole('button', { name: 'Git', exact: true }).click();
		const dialog = page.getByRole('dialog', { name: 'Git' });
		await dialog.getByRole('button', { name: 'Push now' }).click();
		await dialog.getByRole('status').filter({ hasText: /^pushed / }).waitFor();
		await dialog.getByText('Pushed', { exact: true }).waitFor();
		const head = (await api('GET', `/projects/${projectId}/versions`, { token: owner.token })).json.items[0].sha;
		assert.equal(forge.git('--git-dir', forge.bare, 'rev-parse', 'main'), head);
		// a commit on the forge comes in by Pull from remote
		const theirs = forge.commit('from-forge.txt');
		await dialog.getByRole('button', { name: 'Pull from remote' }).click();
		await dialog.getByRole('status').filter({ hasText: `Pulled: main is now at ${theirs.slice(0, 12)}.` }).waitFor();
		// both sides move on: the pull is refused with both heads, and svc's main goes to a new branch
		forge.commit('forge-only.txt');
		const w = await api('PUT', `/projects/${projectId}/files/svc-only.txt`, { token: owner.token, body: { content: 'svc\n' } });
		assert.ok(w.status === 200 || w.status === 201);
		await dialog.getByRole('button', { name: 'Pull from remote' }).click();
		const form = dialog.getByRole('form', { name: 'The two have diverged' });
		await form.getByRole('alert').filter({ hasText: /have diverged/ }).waitFor();
		await shotBoth(page, 'git-diverged');
		await form.getByRole('button', { name: "Push svc's main as a new branch" }).click();
		await dialog.getByRole('status').filter({ hasText: /pushed to the branch svc-main/ }).waitFor();
		const ours = (await api('GET', `/projects/${projectId}/versions`, { token: owner.token })).json.items[0].sha;
		assert.equal(forge.git('--git-dir', forge.bare, 'rev-parse', 'svc-main'), ours);
		await page.context().close();
	} finally {
		forge.stop();
	}
});
