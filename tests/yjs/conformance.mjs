// conformance.mjs: the five lib/yjs conformance checks against the real yjs package (issue 3).
// usage: node conformance.mjs DRIVER CHECK [SEED]   CHECK = roundtrip|convergence|local|diff|bytes|format|content|twice
import { spawn } from 'node:child_process'
import { createInterface } from 'node:readline'
import * as Y from 'yjs'

const [driverPath, check, seedArg] = process.argv.slice(2)

// ---- deterministic PRNG (mulberry32) ----
let seed = Number(seedArg || 12345) >>> 0
const rnd = () => {
  seed = (seed + 0x6D2B79F5) >>> 0
  let t = seed
  t = Math.imul(t ^ (t >>> 15), t | 1)
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296
}
const ri = n => Math.floor(rnd() * n)
const pick = a => a[ri(a.length)]
const ALPHABET = ['a', 'b', 'c', 'x', ' ', '\n', 'é', 'e\u0301', '中', '😀', '𝄞', 'ß', '\u0308', '👍🏽']
const rstr = () => { let s = ''; const n = 1 + ri(6); for (let i = 0; i < n; i++) s += pick(ALPHABET); return s }
const KEYS = ['a.txt', 'src/b.js', 'c.md', 'ü/😀.txt']
const jsonValue = () => pick([() => ri(1000), () => -1 - ri(100), () => rnd() * 10, () => 'v' + ri(9), () => true,
  () => null, () => [1, 'x', { k: ri(5) }], () => ({ b: 1, a: [2.5, 'é'], 10: 'n' }), () => 2 ** 40 + ri(9)])()

// ---- the C driver ----
class Driver {
  constructor (path) {
    this.p = spawn(path, [], { stdio: ['pipe', 'pipe', 'inherit'] })
    this.waiters = []
    createInterface({ input: this.p.stdout }).on('line', l => this.waiters.shift()(l))
    this.p.on('exit', (code, sig) => { for (const w of this.waiters.splice(0)) w(`driver exited (${code} ${sig})`) })
  }
  cmd (...args) {
    return new Promise((resolve, reject) => {
      this.waiters.push(l => l.startsWith('ok') ? resolve(l.slice(3)) : reject(new Error(`driver: ${args[0]}: ${l}`)))
      this.p.stdin.write(args.join(' ') + '\n')
    })
  }
  close () { this.p.stdin.end() }
}
const hex = u => Buffer.from(u).toString('hex')
const unhex = h => new Uint8Array(Buffer.from(h, 'hex'))
const hs = s => Buffer.from(s, 'utf8').toString('hex')

// canonical JSON (sorted keys) for content comparison
const canon = v => Array.isArray(v) ? `[${v.map(canon).join(',')}]`
  : (v && typeof v === 'object') ? `{${Object.keys(v).sort().map(k => JSON.stringify(k) + ':' + canon(v[k])).join(',')}}`
    : JSON.stringify(v)
const yjsJSON = d => canon({ files: d.getMap('files').toJSON(), meta: d.getMap('meta').toJSON() })
const yjsSV = d => hex(Y.encodeStateVector(d))

let failures = 0
const fail = msg => { failures++; if (failures <= 5) console.error('# FAIL ' + msg) }

// ---- random yjs sessions ----
const randomClientId = () => pick([() => ri(2 ** 31), () => 2 ** 32 + ri(2 ** 20), () => 2 ** 53 - 1 - ri(1000)])()

function randomEdit (d) {
  const files = d.getMap('files'); const meta = d.getMap('meta')
  const texts = [...files.entries()].filter(([, v]) => v instanceof Y.Text)
  const r = rnd()
  if (r < 0.12 || texts.length === 0) {
    files.set(pick(KEYS), new Y.Text(rstr()))
  } else if (r < 0.55) {
    const [, t] = pick(texts); t.insert(ri(t.length + 1), rstr())
  } else if (r < 0.8) {
    const [, t] = pick(texts); if (t.length > 0) { const i = ri(t.length); t.delete(i, 1 + ri(Math.min(4, t.length - i))) }
  } else if (r < 0.92) {
    meta.set('k' + ri(4), jsonValue())
  } else if (r < 0.96) {
    meta.delete('k' + ri(4))
  } else {
    files.delete(pick(KEYS))
  }
}

// several clients editing concurrently, syncing now and then; returns every update and the docs
function randomSession (nClients, steps) {
  const docs = []; const updates = []; const snapshots = []
  for (let i = 0; i < nClients; i++) {
    const d = new Y.Doc(); d.clientID = randomClientId()
    d.on('update', u => updates.push(u))
    docs.push(d)
  }
  for (let s = 0; s < steps; s++) {
    const d = pick(docs)
    if (rnd() < 0.25) d.transact(() => { randomEdit(d); randomEdit(d) }); else randomEdit(d)
    if (rnd() < 0.2) {
      const a = pick(docs); const b = pick(docs)
      if (a !== b) Y.applyUpdate(b, Y.encodeStateAsUpdate(a, Y.encodeStateVector(b)))
    }
    if (rnd() < 0.05) snapshots.push(Y.encodeStateAsUpdate(pick(docs)))
  }
  return { docs, updates, snapshots }
}

function fullDoc (updates) {
  const d = new Y.Doc(); for (const u of updates) Y.applyUpdate(d, u); return d
}

function shuffled (a) {
  const b = a.slice(); for (let i = b.length - 1; i > 0; i--) { const j = ri(i + 1); [b[i], b[j]] = [b[j], b[i]] } return b
}

// ---- the checks ----
const checks = {
  // 1. documents made by yjs: the core decodes them; its state, applied by yjs, gives identical content and SV
  async roundtrip (drv) {
    for (let n = 0; n < 200; n++) {
      const { updates } = randomSession(1 + ri(4), 10 + ri(60))
      const ref = fullDoc(updates)
      await drv.cmd('new', ri(1000))
      await drv.cmd('apply', hex(Y.encodeStateAsUpdate(ref)))
      const coreJson = canon(JSON.parse(await drv.cmd('json')))
      if (coreJson !== yjsJSON(ref)) fail(`roundtrip ${n}: core content ${coreJson} != yjs ${yjsJSON(ref)}`)
      if (await drv.cmd('sv') !== yjsSV(ref)) fail(`roundtrip ${n}: core state vector differs`)
      const back = new Y.Doc(); Y.applyUpdate(back, unhex(await drv.cmd('encode')))
      if (yjsJSON(back) !== yjsJSON(ref)) fail(`roundtrip ${n}: yjs content of the core's state differs`)
      if (yjsSV(back) !== yjsSV(ref)) fail(`roundtrip ${n}: yjs state vector of the core's state differs`)
    }
  },
  // 2. updates reach yjs and the core in different random orders with duplicates: same content and SV
  async convergence (drv) {
    for (let n = 0; n < 120; n++) {
      const { updates } = randomSession(2 + ri(3), 20 + ri(60))
      const ref = fullDoc(updates)
      const dup = updates.concat(updates.filter(() => rnd() < 0.2))
      await drv.cmd('new', ri(1000))
      for (const u of shuffled(dup)) await drv.cmd('apply', hex(u))
      const other = fullDoc(shuffled(dup))
      const coreJson = canon(JSON.parse(await drv.cmd('json')))
      if (coreJson !== yjsJSON(ref)) fail(`convergence ${n}: core content ${coreJson} != ${yjsJSON(ref)}`)
      if (yjsJSON(other) !== yjsJSON(ref)) fail(`convergence ${n}: yjs itself diverged (test bug)`)
      if (await drv.cmd('sv') !== yjsSV(ref)) fail(`convergence ${n}: core state vector differs`)
      const back = new Y.Doc(); Y.applyUpdate(back, unhex(await drv.cmd('encode')))
      if (yjsJSON(back) !== yjsJSON(ref)) fail(`convergence ${n}: core state applied by yjs differs`)
    }
  },
  // 3. the core's local edits, applied by yjs (with concurrent yjs edits), give identical content
  async local (drv) {
    for (let n = 0; n < 60; n++) {
      const y = new Y.Doc(); y.clientID = randomClientId()
      const toCore = []; const toYjs = []
      y.on('update', (u, origin) => { if (origin !== 'core') toCore.push(u) })
      await drv.cmd('new', randomClientId())
      const coreTexts = new Map()
      for (let s = 0; s < 80; s++) {
        const r = rnd()
        if (r < 0.45) {
          // a core edit, chosen from the core's own view of the document
          const files = JSON.parse(await drv.cmd('json')).files
          const keys = Object.keys(files).filter(k => typeof files[k] === 'string')
          const q = rnd(); let u
          if (q < 0.15 || keys.length === 0) u = await drv.cmd('settext', hs(pick(KEYS)), hs(rstr()))
          else {
            const k = pick(keys); const len = files[k].length
            if (q < 0.55) u = await drv.cmd('insert', hs(k), ri(len + 1), hs(rstr()))
            else if (q < 0.8 && len > 0) { const i = ri(len); u = await drv.cmd('delete', hs(k), i, 1 + ri(Math.min(3, len - i))) }
            else if (q < 0.9) u = await drv.cmd('replace', hs(k), hs(files[k].slice(0, ri(len + 1)) + rstr() + '\n' + files[k].slice(ri(len + 1))))
            else if (q < 0.95) u = await drv.cmd('setjson', hs('meta'), hs('k' + ri(4)), hs(JSON.stringify(jsonValue())))
            else u = await drv.cmd('mapdel', hs('files'), hs(k))
          }
          if (u) toYjs.push(unhex(u))
          coreTexts.set(n, true)
        } else if (r < 0.8) {
          randomEdit(y)
        }
        // deliver some queued updates, in random order
        while (toCore.length && rnd() < 0.5) await drv.cmd('apply', hex(toCore.splice(ri(toCore.length), 1)[0]))
        while (toYjs.length && rnd() < 0.5) Y.applyUpdate(y, toYjs.splice(ri(toYjs.length), 1)[0], 'core')
      }
      for (const u of toCore.splice(0)) await drv.cmd('apply', hex(u))
      for (const u of toYjs.splice(0)) Y.applyUpdate(y, u, 'core')
      const coreJson = canon(JSON.parse(await drv.cmd('json')))
      if (coreJson !== yjsJSON(y)) fail(`local ${n}: core ${coreJson} != yjs ${yjsJSON(y)}`)
      if (await drv.cmd('sv') !== yjsSV(y)) fail(`local ${n}: state vectors differ`)
    }
  },
  // 4. the core's diff for a state vector, applied by yjs at that state, equals yjs's own diff
  async diff (drv) {
    for (let n = 0; n < 120; n++) {
      const { updates, snapshots } = randomSession(2 + ri(3), 20 + ri(50))
      const ref = fullDoc(updates)
      const base = snapshots.length ? pick(snapshots) : (updates.length ? fullUpdate(updates.slice(0, ri(updates.length))) : Y.encodeStateAsUpdate(new Y.Doc()))
      const at = new Y.Doc(); Y.applyUpdate(at, base)
      const sv = Y.encodeStateVector(at)
      await drv.cmd('new', 1)
      await drv.cmd('apply', hex(Y.encodeStateAsUpdate(ref)))
      const coreDiff = unhex(await drv.cmd('encode', hex(sv)))
      const yjsDiff = Y.encodeStateAsUpdate(ref, sv)
      const a = new Y.Doc(); Y.applyUpdate(a, base); Y.applyUpdate(a, coreDiff)
      const b = new Y.Doc(); Y.applyUpdate(b, base); Y.applyUpdate(b, yjsDiff)
      if (yjsJSON(a) !== yjsJSON(b)) fail(`diff ${n}: content differs`)
      if (yjsSV(a) !== yjsSV(b)) fail(`diff ${n}: state vector differs`)
      if (yjsJSON(a) !== yjsJSON(ref)) fail(`diff ${n}: diff did not bring the peer up to date`)
    }
  },
  // 5. the same local edits with the same clientID encode to identical bytes in yjs and the core
  async bytes (drv) {
    for (let n = 0; n < 80; n++) {
      const id = randomClientId()
      const y = new Y.Doc(); y.clientID = id
      const remote = new Y.Doc(); remote.clientID = id + 1 > 2 ** 53 - 1 ? id - 1 : id + 1
      let last = null
      y.on('update', u => { last = u })
      await drv.cmd('new', id)
      const files = y.getMap('files'); const meta = y.getMap('meta')
      for (let s = 0; s < 60; s++) {
        const texts = [...files.entries()].filter(([, v]) => v instanceof Y.Text)
        const r = rnd(); last = null; let coreU = ''
        if (r < 0.1 || texts.length === 0) {
          const k = pick(KEYS); const s0 = rstr()
          files.set(k, new Y.Text(s0)); coreU = await drv.cmd('settext', hs(k), hs(s0))
        } else if (r < 0.5) {
          const [k, t] = pick(texts); const i = ri(t.length + 1); const s0 = rstr()
          t.insert(i, s0); coreU = await drv.cmd('insert', hs(k), i, hs(s0))
        } else if (r < 0.75) {
          const [k, t] = pick(texts)
          if (t.length > 0) { const i = ri(t.length); const c = 1 + ri(Math.min(4, t.length - i)); t.delete(i, c); coreU = await drv.cmd('delete', hs(k), i, c) }
        } else if (r < 0.85) {
          const k = 'k' + ri(3); const v = jsonValue()
          meta.set(k, v); coreU = await drv.cmd('setjson', hs('meta'), hs(k), hs(JSON.stringify(v)))
        } else if (r < 0.9) {
          const [k, t] = pick(texts)
          await drv.cmd('begin')
          y.transact(() => {
            const i = ri(t.length + 1); t.insert(i, 'ab'); drv.cmd('insert', hs(k), i, hs('ab'))
            if (t.length > 2) { const j = ri(t.length - 1); t.delete(j, 1); drv.cmd('delete', hs(k), j, 1) }
          })
          coreU = await drv.cmd('commit')
        } else {
          // a remote edit reaches both
          Y.applyUpdate(remote, Y.encodeStateAsUpdate(y)); randomEdit(remote)
          const u = Y.encodeStateAsUpdate(remote, Y.encodeStateVector(y))
          Y.applyUpdate(y, u); await drv.cmd('apply', hex(u))
          continue
        }
        const yU = last ? hex(last) : ''
        if (yU !== coreU) { fail(`bytes ${n}.${s}: update ${coreU} != yjs ${yU}`); break }
      }
      const a = hex(Y.encodeStateAsUpdate(y)); const b = await drv.cmd('encode')
      if (a !== b) fail(`bytes ${n}: state ${b} != yjs ${a}`)
    }
  }
}

// ---- formatting, other content kinds, a client listed twice ----
const ATTRS = [{ bold: true }, { italic: true }, { color: '#f00' }, { color: '#0f0' }, { bold: null },
  { link: { href: 'https://x.example/' } }, { header: 1 }, { bold: true, italic: true }, { code: [1, 'a'] }]

// a remote client's formatting edit: formatted inserts, format ranges, embeds, deletes
function randomFormatEdit (d, key) {
  const files = d.getMap('files')
  let t = files.get(key)
  if (!(t instanceof Y.Text)) { t = new Y.Text(); files.set(key, t) }
  const r = rnd(); const len = t.length
  if (r < 0.35 || len === 0) t.insert(ri(len + 1), rstr(), pick(ATTRS))
  else if (r < 0.6) { const i = ri(len); t.format(i, 1 + ri(Math.min(6, len - i)), pick(ATTRS)) }
  else if (r < 0.7) t.insertEmbed(ri(len + 1), { image: 'p' + ri(9) + '.png' }, rnd() < 0.5 ? pick(ATTRS) : undefined)
  else if (r < 0.85) t.insert(ri(len + 1), rstr())
  else { const i = ri(len); t.delete(i, 1 + ri(Math.min(4, len - i))) }
}

Object.assign(checks, {
  // 6. svc edits a text that carries formatting from a remote client: the same bytes as yjs
  async format (drv) {
    for (let n = 0; n < 60; n++) {
      const id = randomClientId()
      const y = new Y.Doc(); y.clientID = id
      // two remote clients format concurrently (their formats meet, which makes yjs's
      // cleanupYTextAfterTransaction delete redundant ones when y receives them)
      const remotes = [1, 2].map(k => { const r = new Y.Doc(); r.clientID = id + k > 2 ** 53 - 1 ? id - k : id + k; return r })
      let last = null
      y.on('update', (u, origin) => { if (origin !== 'remote') last = u })
      await drv.cmd('new', id)
      const key = pick(KEYS)
      const sync = async () => {
        const us = []
        for (const remote of remotes) {
          Y.applyUpdate(remote, Y.encodeStateAsUpdate(y, Y.encodeStateVector(remote)))
          for (let k = 1 + ri(4); k > 0; k--) randomFormatEdit(remote, key)
          us.push(Y.encodeStateAsUpdate(remote, Y.encodeStateVector(y)))
        }
        for (const u of shuffled(us)) { Y.applyUpdate(y, u, 'remote'); await drv.cmd('apply', hex(u)) }
      }
      await sync()
      for (let s = 0; s < 40; s++) {
        const t = y.getMap('files').get(key)
        const r = rnd(); last = null; let coreU = ''
        if (r < 0.15) { await sync(); continue }
        if (r < 0.6 || t.length === 0) {
          const i = ri(t.length + 1); const s0 = rstr()
          t.insert(i, s0); coreU = await drv.cmd('insert', hs(key), i, hs(s0))
        } else {
          const i = ri(t.length); const c = 1 + ri(Math.min(5, t.length - i))
          t.delete(i, c); coreU = await drv.cmd('delete', hs(key), i, c)
        }
        const yU = last ? hex(last) : ''
        if (yU !== coreU) { fail(`format ${n}.${s}: update ${coreU} != yjs ${yU}`); break }
        const txt = unhex(await drv.cmd('text', hs(key)))
        if (Buffer.from(txt).toString('utf8') !== t.toString()) { fail(`format ${n}.${s}: text differs`); break }
      }
      const a = hex(Y.encodeStateAsUpdate(y)); const b = await drv.cmd('encode')
      if (a !== b) fail(`format ${n}: state ${b} != yjs ${a}`)
      if (await drv.cmd('sv') !== yjsSV(y)) fail(`format ${n}: state vectors differ`)
    }
  },
  // 7. every content kind and the Xml types: the core re-encodes yjs's state byte for byte,
  //    and prints the Xml types as their toJSON (toString) does
  async content (drv) {
    for (let n = 0; n < 60; n++) {
      const d = new Y.Doc(); d.clientID = randomClientId()
      const files = d.getMap('files'); const meta = d.getMap('meta')
      for (let s = 0; s < 12; s++) {
        const r = rnd()
        if (r < 0.15) meta.set('bin' + ri(3), new Uint8Array([ri(256), 0, 255, ri(256)]))
        else if (r < 0.25) d.getMap('other').set('sub' + ri(3), new Y.Doc({ guid: 'g' + n + '.' + s }))
        else if (r < 0.4) {
          d.transact(tr => {
            const item = new Y.Item(Y.createID(d.clientID, Y.getState(d.store, d.clientID)), null, null, null, null,
              meta, 'json' + ri(3), new Y.ContentJSON([{ a: ri(9), b: [1, 'x'] }, 'é😀', ri(100), null]))
            item.integrate(tr, 0)
          })
        } else if (r < 0.6) {
          let t = files.get('f.txt'); if (!(t instanceof Y.Text)) { t = new Y.Text('hello world'); files.set('f.txt', t) }
          if (rnd() < 0.5) t.format(ri(t.length), 1 + ri(4), pick(ATTRS)); else t.insertEmbed(ri(t.length + 1), { image: 'a.png' }, pick(ATTRS))
        } else {
          let f = files.get('x.xml')
          if (!(f instanceof Y.XmlFragment)) { f = new Y.XmlFragment(); files.set('x.xml', f) }
          const q = rnd()
          if (q < 0.3 || f.length === 0) {
            const el = new Y.XmlElement(pick(['P', 'div', 'Span']))
            f.insert(ri(f.length + 1), [el])
            el.setAttribute(pick(['class', 'id', 'data-x']), pick(['a', 'b c', '"q"']))
            el.insert(0, [new Y.XmlText(rstr())])
          } else if (q < 0.6) {
            const xt = new Y.XmlText(rstr()); f.insert(ri(f.length + 1), [xt])
            if (xt.length) xt.format(0, 1 + ri(xt.length), pick([{ bold: {} }, { a: { href: 'u', title: 't' } }, { em: true }, { s: 'ab' }]))
          } else if (q < 0.8) {
            f.insert(ri(f.length + 1), [new Y.XmlHook('hook')])
          } else if (f.length) f.delete(ri(f.length), 1)
          if (rnd() < 0.3) meta.set('el', new Y.XmlElement('Meta'))
        }
      }
      const want = Y.encodeStateAsUpdate(d)
      await drv.cmd('new', 1)
      await drv.cmd('apply', hex(want))
      const got = await drv.cmd('encode')
      if (got !== hex(want)) fail(`content ${n}: state ${got} != yjs ${hex(want)}`)
      const coreJson = canon(JSON.parse(await drv.cmd('json')))
      if (coreJson !== yjsJSON(d)) fail(`content ${n}: core ${coreJson} != yjs ${yjsJSON(d)}`)
      // and through a second core: decode(encode) is stable
      await drv.cmd('new', 2); await drv.cmd('apply', got)
      if (await drv.cmd('encode') !== got) fail(`content ${n}: second round trip differs`)
    }
  },
  // 8. an update that lists one client twice: the later listing replaces the earlier, as in yjs
  async twice (drv) {
    for (let n = 0; n < 40; n++) {
      const d = new Y.Doc(); d.clientID = randomClientId()
      const ups = []; d.on('update', u => ups.push(u))
      d.getMap('meta').set('k' + ri(3), ri(100)); d.getMap('meta').set('k' + (3 + ri(3)), 'v')
      d.getMap('files').set('a.txt', new Y.Text(rstr()))
      // each local update lists one client: 0x01, listing, delete set 0x00
      const listing = u => { if (u[0] !== 1 || u[u.length - 1] !== 0) throw new Error('unexpected update shape'); return u.slice(1, u.length - 1) }
      const order = shuffled([0, 1, 2]).slice(0, 2 + ri(2))
      if (rnd() < 0.3) order.push(order[0])
      const parts = order.map(i => listing(ups[i]))
      const u = new Uint8Array([order.length, ...parts.flatMap(p => [...p]), 0])
      const y = new Y.Doc(); Y.applyUpdate(y, u)
      await drv.cmd('new', 7)
      await drv.cmd('apply', hex(u))
      if (canon(JSON.parse(await drv.cmd('json'))) !== yjsJSON(y)) fail(`twice ${n}: content differs`)
      if (await drv.cmd('sv') !== yjsSV(y)) fail(`twice ${n}: state vector differs`)
      // the missing structs arrive: both end at the full document
      for (const x of ups) { Y.applyUpdate(y, x); await drv.cmd('apply', hex(x)) }
      if (canon(JSON.parse(await drv.cmd('json'))) !== yjsJSON(d)) fail(`twice ${n}: content after the rest differs`)
      if (await drv.cmd('encode') !== hex(Y.encodeStateAsUpdate(d))) fail(`twice ${n}: final state differs`)
    }
  }
})

function fullUpdate (updates) { return Y.encodeStateAsUpdate(fullDoc(updates)) }

const drv = new Driver(driverPath)
try {
  if (!checks[check]) throw new Error('unknown check ' + check)
  await checks[check](drv)
} catch (e) {
  fail(e.stack || String(e))
}
drv.close()
console.log(failures === 0 ? `ok - yjs conformance ${check}` : `not ok - yjs conformance ${check} (${failures} failures)`)
process.exit(failures === 0 ? 0 : 1)
