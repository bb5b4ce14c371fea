// build.mjs: bundles src/ with esbuild into dist/: hashed files under dist/assets/ and
// dist/index.html that loads them (docs/web.md). Usage: node build.mjs [--dev] (dev: no minify).
// The new dist/ is written beside the old one and renamed into place, so a running web
// server never serves half a build. Prints each route's gzipped JavaScript.
import * as esbuild from 'esbuild';
import { gzipSync } from 'node:zlib';
import { readFileSync, writeFileSync, rmSync, renameSync, existsSync, mkdirSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const dev = process.argv.includes('--dev');
const tmp = join(here, 'dist.new');
const out = join(here, 'dist');
rmSync(tmp, { recursive: true, force: true });
mkdirSync(join(tmp, 'assets'), { recursive: true });

const result = await esbuild.build({
	absWorkingDir: here,
	entryPoints: { app: 'src/main.jsx' },
	bundle: true,
	splitting: true,
	format: 'esm',
	target: ['chrome111', 'firefox115', 'safari16.4'],
	outdir: join(tmp, 'assets'),
	entryNames: '[name]-[hash]',
	chunkNames: '[name]-[hash]',
	assetNames: '[name]-[hash]',
	publicPath: '/assets/',
	jsx: 'automatic',
	jsxImportSource: 'preact',
	minify: !dev,
	sourcemap: dev ? 'inline' : false,
	legalComments: 'linked',
	metafile: true,
	define: { 'process.env.NODE_ENV': dev ? '"development"' : '"production"' },
	logLevel: 'warning',
});

const outputs = result.metafile.outputs;
const rel = (p) => '/' + relative(tmp, join(here, p)).split('\\').join('/');
const entry = Object.keys(outputs).find((p) => outputs[p].entryPoint === 'src/main.jsx');
const css = outputs[entry].cssBundle;
// The entry's static imports are preloaded, so the browser fetches them with the entry.
const preload = outputs[entry].imports.filter((i) => i.kind === 'import-statement').map((i) => `<link rel="modulepreload" href="${rel(i.path)}">`);
const tags = [
	css && `<link rel="stylesheet" href="${rel(css)}">`,
	...preload,
	`<script type="module" src="${rel(entry)}"></script>`,
]
	.filter(Boolean)
	.join('\n');
const html = readFileSync(join(here, 'index.html'), 'utf8').replace('<!--svc:assets-->', tags);
writeFileSync(join(tmp, 'index.html'), html);

// What each route loads: the entry and its static imports; the project page adds the chunk
// src/pages/project/project.jsx is in, and that chunk's static imports (written to dist/build.json).
function closure(file, seen = new Set()) {
	if (seen.has(file)) return seen;
	seen.add(file);
	for (const imp of outputs[file].imports) if (imp.kind === 'import-statement') closure(imp.path, seen);
	return seen;
}
const gz = (files) => [...files].filter((f) => f.endsWith('.js')).reduce((n, f) => n + gzipSync(readFileSync(join(here, f))).length, 0);
const projectChunk = Object.keys(outputs).find((p) => outputs[p].imports !== undefined && Object.keys(outputs[p].inputs).includes('src/pages/project/project.jsx'));
const base = closure(entry);
const project = closure(projectChunk, new Set(base));
const sizes = { signInAndDashboard: gz(base), projectPage: gz(project) };
writeFileSync(join(tmp, 'build.json'), JSON.stringify({ gzipBytes: sizes }, null, 1) + '\n');

rmSync(out + '.old', { recursive: true, force: true });
if (existsSync(out)) renameSync(out, out + '.old');
renameSync(tmp, out);
rmSync(out + '.old', { recursive: true, force: true });
const kb = (n) => (n / 1024).toFixed(1) + ' kB';
console.log(`web/dist: sign-in and dashboard ${kb(sizes.signInAndDashboard)} gzipped JS, project page ${kb(sizes.projectPage)}`);
