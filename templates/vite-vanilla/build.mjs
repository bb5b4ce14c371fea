// build.mjs: the build of this template, `npm run build`: what `vite build` does for it, in plain Node
// (no dependencies, so it builds offline): dist/index.html with the files of src/ under
// dist/assets/ with a content hash in their names, and public/ copied as it is.
// Swap in Vite with `npm install --save-dev vite` and "build": "vite build" where the
// host lets builds reach the npm registry; the published site is dist/ either way.
import { createHash } from 'node:crypto'
import { cpSync, existsSync, mkdirSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { extname, join } from 'node:path'

const out = 'dist'
rmSync(out, { recursive: true, force: true })
mkdirSync(join(out, 'assets'), { recursive: true })

const hashed = new Map() // "main.js" -> "main-1a2b3c4d.js"
const sources = readdirSync('src').filter((f) => statSync(join('src', f)).isFile())
const nameOf = (f, text) => {
  const ext = extname(f)
  return f.slice(0, -ext.length) + '-' + createHash('sha256').update(text).digest('hex').slice(0, 8) + ext
}
// CSS and the modules nothing imports first, then the modules that import them, by rewriting imports.
const rewrite = (text) =>
  text.replace(/(from\s+|import\s+)(['"])\.\/([\w.-]+)\2/g, (m, kw, q, f) => (hashed.has(f) ? kw + q + './' + hashed.get(f) + q : m))
for (let pass = 0; pass < sources.length + 1; pass++) {
  for (const f of sources) {
    if (hashed.has(f)) continue
    const text = readFileSync(join('src', f), 'utf8')
    const deps = [...text.matchAll(/(?:from\s+|import\s+)['"]\.\/([\w.-]+)['"]/g)].map((m) => m[1])
    if (deps.some((d) => sources.includes(d) && !hashed.has(d))) continue
    const body = rewrite(text)
    hashed.set(f, nameOf(f, body))
    writeFileSync(join(out, 'assets', hashed.get(f)), body)
  }
}

let html = readFileSync('index.html', 'utf8')
html = html.replace(/(["'])\/src\/([\w.-]+)\1/g, (m, q, f) => (hashed.has(f) ? q + '/assets/' + hashed.get(f) + q : m))
writeFileSync(join(out, 'index.html'), html)
if (existsSync('public')) cpSync('public', out, { recursive: true })

const size = (p) => (statSync(p).size / 1000).toFixed(2) + ' kB'
console.log('build.mjs: the site is in dist/')
console.log('dist/index.html'.padEnd(40) + size(join(out, 'index.html')))
for (const f of hashed.values()) console.log(('dist/assets/' + f).padEnd(40) + size(join(out, 'assets', f)))
