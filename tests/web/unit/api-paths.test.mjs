// api-paths.test.mjs: every API path of the web app is in web/src/lib/api.js, one exported function
// per endpoint (docs/web.md "Where a new screen goes"): no other file under web/src holds an API
// URL literal, calls fetch(), or reaches for a generic request helper.
//
// Each file is compiled with esbuild first (JSX becomes calls, comments go), then searched for a
// string or template literal that starts with "/<segment>" where <segment> is /api or the first
// segment of a path in lib/api.js (/auth, /projects, /chat, …). A literal that is exactly one of
// the app's own routes (the match('…') patterns of main.jsx, "/projects/:id" as
// `/projects/${…}`) is a link, not an API call, and passes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../../web/', import.meta.url));
const SRC = join(ROOT, 'src');
const API_FILE = join(SRC, 'lib', 'api.js');
const esbuild = createRequire(join(ROOT, 'package.json'))('esbuild');

function sources(dir) {
	const out = [];
	for (const name of readdirSync(dir).sort()) {
		const p = join(dir, name);
		if (statSync(p).isDirectory()) out.push(...sources(p));
		else if (/\.(js|jsx|mjs)$/.test(name)) out.push(p);
	}
	return out;
}

/** code(file): the file as JavaScript without comments (JSX compiled, formatting esbuild's). */
function code(file) {
	return esbuild.transformSync(readFileSync(file, 'utf8'), { loader: file.endsWith('.jsx') ? 'jsx' : 'js', jsx: 'transform', minify: false, legalComments: 'none' }).code;
}

// a string or template literal that starts with "/word": its quote and its text up to the closing
// quote (a template's ${…} kept as written)
const LITERAL = /(["'`])(\/[a-z][a-z0-9_-]*)((?:\\.|\$\{[^}]*\}|(?!\1)[^\\\n])*)\1/g;

/** The first segments of the API paths lib/api.js uses, and "api". */
function apiSegments() {
	const segs = new Set(['api']);
	for (const m of code(API_FILE).matchAll(LITERAL)) segs.add(m[2].slice(1));
	return segs;
}

/**
 * The app's own routes (main.jsx's match('…') patterns): a predicate true for a literal that is
 * one of them, as a pattern ("/projects/:id") or filled in (`/projects/${…}`).
 */
function appRoute() {
	const main = readFileSync(join(SRC, 'main.jsx'), 'utf8');
	const patterns = [...main.matchAll(/match\('([^']+)'/g)].map(([, p]) => p);
	const filled = patterns.map((pattern) => {
		const re = pattern
			.split('/')
			.map((s) => (s.startsWith(':') ? '\\$\\{[^}]*\\}' : s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
			.join('/');
		return new RegExp(`^${re}$`);
	});
	return (text) => patterns.includes(text) || filled.some((r) => r.test(text));
}

/** offenders(): [{file, line, text}] for every API path outside lib/api.js. */
function offenders() {
	const segs = apiSegments();
	const isRoute = appRoute();
	const found = [];
	for (const file of sources(SRC)) {
		if (file === API_FILE) continue;
		const js = code(file);
		// the line in the source (esbuild's output has other lines): the next one holding the
		// literal's text up to its first ${…}
		const raw = readFileSync(file, 'utf8').split('\n');
		const after = {};
		const lineOf = (needle) => {
			const i = raw.findIndex((l, n) => n >= (after[needle] || 0) && l.includes(needle));
			if (i >= 0) after[needle] = i + 1;
			return i + 1;
		};
		const add = (text, needle) => found.push({ file: relative(ROOT, file), line: lineOf(needle), text });
		for (const m of js.matchAll(LITERAL)) {
			const [, , head, rest] = m;
			const text = head + rest;
			if (!segs.has(head.slice(1))) continue;
			if (isRoute(text)) continue;
			add(text, text.split('${')[0]);
		}
		for (const m of js.matchAll(/\$\{API\}\/[^`]*/g)) add(m[0], '${API}');
		for (const m of js.matchAll(/(?<![\w.$])fetch\(/g)) add(m[0], 'fetch(');
	}
	return found;
}

test('no API path outside web/src/lib/api.js (one function per endpoint there)', () => {
	const list = offenders();
	assert.deepEqual(
		list.map((o) => `${o.file}:${o.line}: ${o.text}`),
		[],
		`${list.length} API path(s) or fetch() outside lib/api.js: add a function per endpoint to lib/api.js and call it`,
	);
});

test('lib/api.js exports endpoint functions, not a generic request helper', () => {
	const js = code(API_FILE);
	for (const name of ['request', 'get', 'post', 'put', 'patch', 'del', 'API'])
		assert.doesNotMatch(js, new RegExp(`export\\s+(async\\s+)?(function|const|let)\\s+${name}\\b`), `lib/api.js exports ${name}`);
});

test('the check sees an API path when there is one', () => {
	const segs = apiSegments();
	assert.ok(segs.has('projects') && segs.has('auth') && segs.has('chat'), [...segs].join(' '));
	const isRoute = appRoute();
	assert.ok(isRoute('/projects/${enc(p.id)}') && isRoute('/projects/:id') && isRoute('/integrations'), 'the routes are routes');
	assert.ok(!isRoute('/projects/${enc(p.id)}/files') && !isRoute('/projects'), 'a path below or above one is not');
	const js = code(join(SRC, 'lib', 'api.js'));
	assert.ok([...js.matchAll(LITERAL)].length > 50, 'lib/api.js holds the paths');
});
