// wsd.test.mjs: svc-wsd against unmodified Yjs clients (y-websocket 3.1.0 over ws) through the web server; prints "ok - name" / "not ok - name".
//
// Environment (set by ./svc-dev test): SVC_BASE_URL, SVC_WS_URL (lighttpd), SVC_PROVIDER_URL (the model
// double), SVC_TEST_CONFIG (the settings file: JWT secret for forged tokens, SVC_WS_PORT),
// SVC_TEST_WSD_PIDFILE / SVC_TEST_WSD_LOG (to kill -9 and restart the daemon), SVC_TEST_APACHE_WS_URL,
// SVC_DATA_DIR; argv[2] = the build directory holding wsd/svc-wsd.
import { spawn, spawnSync } from 'node:child_process'
import crypto from 'node:crypto'
import fs from 'node:fs'
import net from 'node:net'
import WebSocket from 'ws'
import * as Y from 'yjs'
import { WebsocketProvider } from 'y-websocket'
import * as encoding from 'lib0/encoding'
import * as decoding from 'lib0/decoding'
import { assert, runner, sleep, waitFor } from './harness.mjs'
import {
  APACHE_WS_URL, APP_ORIGIN, BASE, BUILD, CONFIG, WSD_DIRECT, WS_URL, api, awarenessEntries, awarenessFrame,
  awarenessFrameMany, conf, createProject, frame, signup, withCleanups
} from './stack.mjs'

const { test, cleanups, failures } = runner()
const { raw, privateWsd } = withCleanups(cleanups)

async function fileOnDisk (acct, pid, path) {
  const r = await fetch(`${BASE}/projects/${pid}/files/${path}`, { headers: { Authorization: 'Bearer ' + acct.token } })
  return r.status === 200 ? r.text() : null
}

async function versions (acct, pid) {
  const r = await api('GET', `/projects/${pid}/versions`, undefined, acct.token)
  assert(r.status === 200, 'versions: ' + r.text)
  return Array.isArray(r.body) ? r.body : r.body.items
}

async function comments (acct, pid) {
  const r = await api('GET', `/projects/${pid}/design-comments`, undefined, acct.token)
  assert(r.status === 200, 'design-comments list: ' + r.status + ' ' + r.text)
  return r.body.items
}

// ------------------------------------------------------------------ clients

function client (acct, pid, opts = {}) {
  const doc = new Y.Doc()
  const provider = new WebsocketProvider(opts.url || WS_URL, pid, doc, {
    WebSocketPolyfill: WebSocket, disableBc: true, params: { token: acct.token }, connect: opts.connect !== false
  })
  const c = { doc, provider, files: doc.getMap('files'), comments: [], errors: [] }
  if (opts.comments) {
    provider.messageHandlers[100] = (encoder, decoder, prov, emitSynced, messageType) => {
      const m = JSON.parse(decoding.readVarString(decoder))
      if (m.type === 'error') c.errors.push(m)
      else c.comments.push(m)
    }
  }
  c.synced = new Promise(resolve => { if (provider.synced) resolve(); else provider.once('sync', s => s && resolve()) })
  c.text = path => { const t = c.files.get(path); return t instanceof Y.Text ? t.toString() : null }
  c.sendComment = obj => {
    const e = encoding.createEncoder()
    encoding.writeVarUint(e, 100)
    encoding.writeVarString(e, JSON.stringify(obj))
    provider.ws.send(encoding.toUint8Array(e))
  }
  cleanups.push(() => { provider.destroy(); doc.destroy() })
  return c
}

async function synced (...cs) {
  await Promise.race([Promise.all(cs.map(c => c.synced)), sleep(15000).then(() => { throw new Error('clients did not sync') })])
}

function b64url (x) { return Buffer.from(x).toString('base64url') }
function jwt (claims, alg = 'HS256', secret = conf.JWT_SECRET) {
  const h = b64url(JSON.stringify({ alg, typ: 'JWT' }))
  const p = b64url(JSON.stringify(claims))
  const sig = alg === 'none' ? '' : crypto.createHmac('sha256', secret).update(h + '.' + p).digest('base64url')
  return `${h}.${p}.${sig}`
}

// ------------------------------------------------------------------ the daemon

function wsdPid () { return parseInt(fs.readFileSync(process.env.SVC_TEST_WSD_PIDFILE, 'utf8'), 10) }

async function restartWsd () {
  const env = { PATH: process.env.PATH, HOME: process.env.HOME || '/root', LANG: 'C.UTF-8', SVC_CONFIG: CONFIG }
  if (process.env.SVC_TEST_ASAN_OPTIONS) {
    env.ASAN_OPTIONS = process.env.SVC_TEST_ASAN_OPTIONS
    env.UBSAN_OPTIONS = process.env.SVC_TEST_UBSAN_OPTIONS
  }
  const log = fs.openSync(process.env.SVC_TEST_WSD_LOG, 'a')
  const child = spawn(BUILD + '/wsd/svc-wsd', [], { env, detached: true, stdio: ['ignore', log, log] })
  child.unref()
  fs.writeFileSync(process.env.SVC_TEST_WSD_PIDFILE, String(child.pid) + '\n')
  await waitFor('svc-wsd listening', async () => {
    try { const r = await fetch(`http://127.0.0.1:${conf.SVC_WS_PORT}/internal/status`); return r.status === 401 } catch (e) { return false }
  })
}

// The reason of an auth message [2, 0, reason], or null.
function denial (r) {
  const m = r.msgs.find(m => m.data[0] === 2)
  if (!m) return null
  const d = decoding.createDecoder(m.data); decoding.readVarUint(d); decoding.readVarUint(d)
  return decoding.readVarString(d)
}

// The headers of a signed internal call (docs/conventions.md "Internal calls"): a fresh nonce
// unless one is given (to send a call twice).
function signed (method, path, ts, body, nonce = crypto.randomBytes(16).toString('hex')) {
  const sig = 'v2=' + crypto.createHmac('sha256', conf.INTERNAL_SECRET)
    .update(`${method}\n${path}\n${ts}\n${nonce}\n${crypto.createHash('sha256').update(body).digest('hex')}`).digest('hex')
  return { 'X-Svc-Timestamp': ts, 'X-Svc-Nonce': nonce, 'X-Svc-Signature': sig }
}

// What the API does after it changed files: the signed disk-changed call to the stack's daemon.
async function notifyDiskChanged (p) {
  const ts = String(Math.floor(Date.now() / 1000))
  const path = `/internal/projects/${p}/disk-changed`
  const r = await fetch(`http://127.0.0.1:${conf.SVC_WS_PORT}${path}`, { method: 'POST', headers: { 'Content-Length': '0', ...signed('POST', path, ts, '') } })
  assert(r.status === 202, 'disk-changed: ' + r.status)
  return r.json()
}

// ------------------------------------------------------------------ the tests

const owner = await signup('owner')
const other = await signup('other')
const pid = await createProject(owner)

// An idle y-websocket client (no awareness state, so it sends nothing) alone in its room from
// the start; the last test checks it stayed connected past y-websocket's 30 s message timeout.
const idleStart = Date.now()
const idleWsd = await privateWsd({})
cleanups.length = 0 // it stays up until the last test
const idle = await (async () => {
  const p = await createProject(owner)
  const doc = new Y.Doc()
  const provider = new WebsocketProvider(idleWsd.url, p, doc, { WebSocketPolyfill: WebSocket, disableBc: true, params: { token: owner.token }, connect: false })
  provider.awareness.setLocalState(null)
  const st = { provider, doc, disconnects: 0 }
  provider.on('status', e => { if (e.status === 'disconnected') st.disconnects++ })
  provider.connect()
  return st
})()

await test('wsd three y-websocket clients editing concurrently converge', async () => {
  const a = client(owner, pid); const b = client(owner, pid); const c = client(owner, pid)
  await synced(a, b, c)
  assert(a.text('index.html') !== null && a.text('index.html').includes('<'), 'index.html came from disk: ' + a.text('index.html'))
  a.files.set('notes.md', new Y.Text('# Notes\n'))
  await waitFor('notes.md everywhere', () => b.text('notes.md') !== null && c.text('notes.md') !== null)
  const cs = [a, b, c]
  for (let i = 0; i < 30; i++) {
    for (const [k, x] of cs.entries()) {
      const t = x.files.get('notes.md')
      t.insert(Math.floor(Math.random() * (t.length + 1)), `${'abc'[k]}${i} `)
      if (i % 7 === k && i < 29) t.delete(0, Math.min(2, t.length)) // the last round is asserted below
    }
    if (i % 5 === 0) await sleep(5)
  }
  await waitFor('convergence', () => a.text('notes.md') === b.text('notes.md') && b.text('notes.md') === c.text('notes.md'))
  for (const k of 'abc') assert(a.text('notes.md').includes(k + '29 '), 'every client\'s last edit is there')
})

await test('wsd a late joiner receives everything', async () => {
  const a = client(owner, pid)
  await synced(a)
  const late = client(owner, pid)
  await synced(late)
  await waitFor('late joiner matches', () => late.text('notes.md') !== null && late.text('notes.md') === a.text('notes.md'))
  assert(Y.encodeStateAsUpdate(late.doc).length > 100, 'the late joiner has the document')
})

await test('wsd awareness reaches the other clients and leaves with the client', async () => {
  const a = client(owner, pid); const b = client(owner, pid)
  await synced(a, b)
  a.provider.awareness.setLocalStateField('user', { id: owner.uid, name: 'Ann', color: '#ff0000', avatarUrl: null })
  a.provider.awareness.setLocalStateField('cursor', { file: 'notes.md', selection: { start: 1, end: 3 } })
  const aid = a.doc.clientID
  await waitFor('b sees a', () => { const s = b.provider.awareness.getStates().get(aid); return s && s.user && s.user.name === 'Ann' && s.cursor.selection.end === 3 })
  // a third client joining now gets the current states on connect
  const c = client(owner, pid)
  await synced(c)
  await waitFor('c sees a', () => c.provider.awareness.getStates().has(aid))
  a.provider.disconnect()
  await waitFor('b sees a leave', () => !b.provider.awareness.getStates().has(aid))
})

await test('wsd query-awareness and several messages in one frame', async () => {
  const a = client(owner, pid)
  await synced(a)
  a.provider.awareness.setLocalStateField('user', { name: 'Q' })
  const r = raw(`${WSD_DIRECT}/project/${pid}?token=${owner.token}`)
  await waitFor('server step 1', () => r.msgs.some(m => m.data[0] === 0 && m.data[1] === 0))
  const n0 = r.msgs.length
  // step 1 (empty state vector) + query-awareness in one frame
  const e = encoding.createEncoder()
  encoding.writeVarUint(e, 0); encoding.writeVarUint(e, 0); encoding.writeVarUint8Array(e, Y.encodeStateVector(new Y.Doc()))
  encoding.writeVarUint(e, 3)
  r.ws.send(encoding.toUint8Array(e))
  await waitFor('step 2 and awareness', () => {
    const later = r.msgs.slice(n0)
    return later.some(m => m.data[0] === 0 && m.data[1] === 1) && later.some(m => m.data[0] === 1)
  })
  const step2 = r.msgs.slice(n0).find(m => m.data[0] === 0 && m.data[1] === 1)
  const d = decoding.createDecoder(step2.data); decoding.readVarUint(d); decoding.readVarUint(d)
  const fresh = new Y.Doc()
  Y.applyUpdate(fresh, decoding.readVarUint8Array(d))
  assert(fresh.getMap('files').get('notes.md').toString() === a.text('notes.md'), 'step 2 holds the whole document')
  assert(r.msgs.every(m => m.isBinary), 'binary frames only')
})

await test('wsd edits reach the disk and become one "Collaborative edits" version', async () => {
  const a = client(owner, pid)
  await synced(a)
  // earlier tests' bursts are committed first (save delay + commit delay after their last edit)
  let before = (await versions(owner, pid)).length
  for (let quiet = 0; quiet < 4000; quiet += 250) {
    await sleep(250)
    const n = (await versions(owner, pid)).length
    if (n !== before) { before = n; quiet = 0 }
  }
  const marker = 'disk-marker-' + crypto.randomBytes(4).toString('hex')
  const t = a.files.get('notes.md')
  for (let i = 0; i < 5; i++) { t.insert(t.length, marker.slice(i * 4, i * 4 + 4)); await sleep(20) }
  t.insert(t.length, marker.slice(20) + '\n')
  await waitFor('file on disk', async () => ((await fileOnDisk(owner, pid, 'notes.md')) || '').includes(marker), 20000)
  assert((await fileOnDisk(owner, pid, 'notes.md')) === a.text('notes.md'), 'disk equals the document')
  const vs = await waitFor('a version', async () => { const v = await versions(owner, pid); return v.length > before && v })
  assert(vs[0].message.startsWith('Collaborative edits'), 'message: ' + vs[0].message)
  await sleep(2500)
  assert((await versions(owner, pid)).length === before + 1, 'one burst, one commit')
  await waitFor('meta.lastSavedAt', () => /^\d{4}-\d\d-\d\dT/.test(a.doc.getMap('meta').get('lastSavedAt') || ''))
})

await test('wsd an agent change made through the API appears in a connected client', async () => {
  assert(process.env.SVC_PROVIDER_URL, 'SVC_PROVIDER_URL (the model double) is set')
  const a = client(owner, pid)
  await synced(a)
  const chats = await api('GET', `/projects/${pid}/chats`, undefined, owner.token)
  const chatId = (chats.body.items || chats.body)[0].id
  assert(!a.text('index.html').includes('Made with svc'), 'no footer yet')
  const r = await fetch(`${BASE}/chat/${pid}/messages`, {
    method: 'POST',
    headers: { Authorization: 'Bearer ' + owner.token, 'Content-Type': 'application/json', Accept: 'text/event-stream' },
    body: JSON.stringify({ chatId, text: 'add a footer' })
  })
  const stream = await r.text()
  assert(r.status === 200 && stream.includes('task_complete'), 'agent turn: ' + r.status + ' ' + stream.slice(-300))
  await waitFor('footer in the live document', () => (a.text('index.html') || '').includes('Made with svc'), 20000)
  assert(a.text('index.html') === await fileOnDisk(owner, pid, 'index.html'), 'the document equals the disk')
})

await test('wsd a checkout through the API reaches a connected client', async () => {
  const a = client(owner, pid)
  await synced(a)
  const vs = await versions(owner, pid)
  const first = vs[vs.length - 1]
  const r = await api('POST', `/projects/${pid}/versions/${first.sha}/checkout`, undefined, owner.token)
  assert(r.status === 200, 'checkout: ' + r.text)
  await waitFor('restored index.html and notes.md gone', () => !(a.text('index.html') || '').includes('Made with svc') && a.text('notes.md') === null, 20000)
})

await test('wsd design comments: add, resolve, unresolve, delete broadcast and persist; a stock client keeps syncing', async () => {
  const a = client(owner, pid, { comments: true }); const b = client(owner, pid, { comments: true })
  const stock = client(owner, pid) // no handler for message 100
  await synced(a, b, stock)
  let closedStock = false
  stock.provider.ws.addEventListener('close', () => { closedStock = true })
  a.sendComment({ type: 'design-comment:add', content: 'Make the header blue', xPercent: 25.5, yPercent: 10, selector: 'header', pagePath: '/' })
  const added = await waitFor('added', () => b.comments.find(m => m.type === 'design-comment:added' && m.comment.content === 'Make the header blue'))
  const c = added.comment
  assert(c.id && c.user.id === owner.uid && c.user.name === owner.name && c.xPercent === 25.5 && c.selector === 'header' && c.createdAt, 'comment fields: ' + JSON.stringify(c))
  await waitFor('a gets its own broadcast', () => a.comments.some(m => m.type === 'design-comment:added' && m.comment.id === c.id))
  a.sendComment({ type: 'design-comment:add', content: 'Reply', xPercent: 1, yPercent: 1, parentId: c.id })
  const reply = await waitFor('reply', () => b.comments.find(m => m.type === 'design-comment:added' && m.comment.parentId === c.id))
  let list = await comments(owner, pid)
  assert(list.length === 2 && list.find(x => x.id === c.id).status === 'open', 'listed: ' + JSON.stringify(list))
  assert(list.find(x => x.id === c.id).xPercent === 25.5 && list.find(x => x.id === c.id).yPercent === 10, 'the point as stored: ' + JSON.stringify(list))
  b.sendComment({ type: 'design-comment:resolve', commentId: c.id })
  const res = await waitFor('resolved', () => a.comments.find(m => m.type === 'design-comment:resolved' && m.commentId === c.id))
  assert(res.resolvedBy && res.resolvedBy.id === owner.uid && res.resolvedAt, 'resolved fields')
  list = await comments(owner, pid)
  assert(list.find(x => x.id === c.id).status === 'resolved', 'resolved stored')
  // a joiner gets the open comments only
  const j = client(owner, pid, { comments: true })
  await synced(j)
  await waitFor('joiner gets the open reply', () => j.comments.some(m => m.comment && m.comment.id === reply.comment.id))
  const again = j.comments.find(m => m.comment && m.comment.id === reply.comment.id).comment
  assert(again.xPercent === 1 && again.yPercent === 1, 'a joiner gets the point: ' + JSON.stringify(again))
  assert(!j.comments.some(m => m.comment && m.comment.id === c.id), 'resolved comment not sent to joiners')
  b.sendComment({ type: 'design-comment:unresolve', commentId: c.id })
  await waitFor('unresolved', () => a.comments.some(m => m.type === 'design-comment:unresolved' && m.commentId === c.id))
  a.sendComment({ type: 'design-comment:delete', commentId: reply.comment.id })
  await waitFor('deleted', () => b.comments.some(m => m.type === 'design-comment:deleted' && m.commentId === reply.comment.id))
  list = await comments(owner, pid)
  assert(list.length === 1 && list[0].id === c.id && list[0].status === 'open', 'after delete: ' + JSON.stringify(list))
  // the stock client: still connected, still syncing
  a.files.set('after-comments.txt', new Y.Text('still here'))
  await waitFor('stock client syncs', () => stock.text('after-comments.txt') === 'still here')
  assert(!closedStock && stock.provider.wsconnected, 'the stock client stayed connected')
})

await test('wsd design comments are deleted by their author or a workspace admin only', async () => {
  // a team workspace: owner (its owner), a member and an admin; the project is the owner's
  const ws = await api('POST', '/workspaces', { name: 'WSD comments ' + crypto.randomBytes(3).toString('hex') }, owner.token)
  assert(ws.status === 201, 'workspace: ' + ws.text)
  const member = await signup('cmember'); const admin = await signup('cadmin')
  for (const [acct, role] of [[member, 'member'], [admin, 'admin']]) {
    const me = await api('GET', '/auth/me', undefined, acct.token)
    const r = await api('POST', `/workspaces/${ws.body.id}/members`, { email: me.body.user.email, role }, owner.token)
    assert(r.status === 201, 'add member: ' + r.text)
  }
  const p = await createProject({ ...owner, wid: ws.body.id })
  const o = client(owner, p, { comments: true }); const m = client(member, p, { comments: true }); const a = client(admin, p, { comments: true })
  await synced(o, m, a)
  const add = async (c, content) => {
    c.sendComment({ type: 'design-comment:add', content, xPercent: 5, yPercent: 5 })
    return (await waitFor('added ' + content, () => o.comments.find(x => x.type === 'design-comment:added' && x.comment.content === content))).comment
  }
  const ownerNote = await add(o, 'owner note')
  const memberNote = await add(m, 'member note')
  const memberNote2 = await add(m, 'member note 2')
  m.sendComment({ type: 'design-comment:delete', commentId: ownerNote.id })
  await waitFor('member refused', () => m.errors.some(e => e.error === 'forbidden'))
  m.sendComment({ type: 'design-comment:resolve', commentId: ownerNote.id })
  await waitFor('a member still resolves', () => o.comments.some(x => x.type === 'design-comment:resolved' && x.commentId === ownerNote.id))
  m.sendComment({ type: 'design-comment:delete', commentId: memberNote.id })
  await waitFor('own deleted', () => o.comments.some(x => x.type === 'design-comment:deleted' && x.commentId === memberNote.id))
  a.sendComment({ type: 'design-comment:delete', commentId: memberNote2.id })
  await waitFor('admin deletes a member\'s', () => o.comments.some(x => x.type === 'design-comment:deleted' && x.commentId === memberNote2.id))
  o.sendComment({ type: 'design-comment:delete', commentId: ownerNote.id })
  await waitFor('owner deletes own', () => m.comments.some(x => x.type === 'design-comment:deleted' && x.commentId === ownerNote.id))
  assert(!o.comments.some(x => x.type === 'design-comment:deleted' && x.commentId !== memberNote.id &&
    x.commentId !== memberNote2.id && x.commentId !== ownerNote.id), 'nothing else deleted')
  assert((await comments(owner, p)).length === 0, 'all three gone from the list')
  // a member who joins later is refused too (the room knows each comment's author, also when it loads them)
  const late = await add(o, 'owner late')
  for (const c of [o, m, a]) c.provider.destroy()
  await sleep(300)
  const m2 = client(member, p, { comments: true })
  await synced(m2)
  await sleep(200)
  m2.sendComment({ type: 'design-comment:delete', commentId: late.id })
  await waitFor('member refused after reload', () => m2.errors.some(e => e.error === 'forbidden'))
  assert((await comments(owner, p)).some(c => c.id === late.id), 'still there')
})

await test('wsd invalid design comments get an error to the sender only', async () => {
  const a = client(owner, pid, { comments: true }); const b = client(owner, pid, { comments: true })
  await synced(a, b)
  const n = b.comments.length
  a.sendComment({ type: 'design-comment:add', content: '   ', xPercent: 1, yPercent: 1 })
  a.sendComment({ type: 'design-comment:add', content: 'x', xPercent: 101, yPercent: 1 })
  a.sendComment({ type: 'design-comment:add', content: 'x'.repeat(10001), xPercent: 1, yPercent: 1 })
  a.sendComment({ type: 'design-comment:add', content: 'x', xPercent: 1, yPercent: 1, parentId: crypto.randomUUID() })
  a.sendComment({ type: 'design-comment:resolve', commentId: crypto.randomUUID() })
  a.sendComment({ type: 'design-comment:delete', commentId: 'not-an-id' })
  await waitFor('six errors', () => a.errors.length >= 6)
  assert(a.errors.every(e => e.error && e.message), 'error shape: ' + JSON.stringify(a.errors))
  assert(a.errors.some(e => e.error === 'not_found'), 'unknown comment is not_found')
  await sleep(300)
  assert(b.errors.length === 0 && b.comments.length === n, 'b saw nothing')
  // comments of another project are unknown here
  const pid2 = await createProject(owner)
  const o = client(owner, pid2, { comments: true })
  await synced(o)
  o.sendComment({ type: 'design-comment:add', content: 'elsewhere', xPercent: 1, yPercent: 1 })
  const other = await waitFor('added elsewhere', () => o.comments.find(m => m.type === 'design-comment:added'))
  a.sendComment({ type: 'design-comment:resolve', commentId: other.comment.id })
  a.sendComment({ type: 'design-comment:add', content: 'x', xPercent: 1, yPercent: 1, parentId: other.comment.id })
  await waitFor('two more errors', () => a.errors.length >= 8)
  assert(a.provider.wsconnected, 'the sender stays connected')
})

await test('wsd a public project viewer reads but cannot write', async () => {
  const pub = await createProject(owner)
  const r = await api('PATCH', `/projects/${pub}`, { visibility: 'public' }, owner.token)
  assert(r.status === 200, 'make public: ' + r.text)
  const o = client(owner, pub, { comments: true }); const v = client(other, pub, { comments: true })
  await synced(o, v)
  assert(v.text('index.html') === o.text('index.html'), 'the viewer reads the document')
  v.files.get('index.html').insert(0, 'VIEWER WAS HERE')
  v.files.set('viewer.txt', new Y.Text('nope'))
  v.sendComment({ type: 'design-comment:add', content: 'viewer comment', xPercent: 1, yPercent: 1 })
  await waitFor('forbidden comment', () => v.errors.some(e => e.error === 'forbidden'))
  o.files.get('index.html').insert(0, '<!-- owner -->')
  await waitFor('viewer gets owner edits', () => v.text('index.html').includes('<!-- owner -->'))
  await sleep(300)
  assert(!o.text('index.html').includes('VIEWER') && o.text('viewer.txt') === null, 'owner never saw the viewer edits')
  const fresh = client(owner, pub)
  await synced(fresh)
  assert(!fresh.text('index.html').includes('VIEWER') && fresh.text('viewer.txt') === null, 'the server did not apply them')
  // a private project is refused to the same user
  const r2 = raw(`${WS_URL}/${pid}?token=${other.token}`, { Origin: APP_ORIGIN })
  await waitFor('closed', () => r2.closed)
  assert(r2.types().every(t => t === 2), 'non-member got only the auth message: ' + r2.types())
})

await test('wsd forged, expired and alg-none tokens and non-members get nothing', async () => {
  const now = Math.floor(Date.now() / 1000)
  const cases = {
    forged: jwt({ sub: owner.uid, iss: conf.JWT_ISSUER || 'svc', exp: now + 600, kind: 'access' }, 'HS256', 'x'.repeat(64)),
    expired: jwt({ sub: owner.uid, iss: conf.JWT_ISSUER || 'svc', exp: now - 10, kind: 'access' }),
    algnone: jwt({ sub: owner.uid, iss: conf.JWT_ISSUER || 'svc', exp: now + 600, kind: 'access' }, 'none'),
    garbage: 'not.a.token',
    nonmember: other.token
  }
  for (const [name, tok] of Object.entries(cases)) {
    const r = raw(`${WS_URL}/${pid}?token=${encodeURIComponent(tok)}`)
    await waitFor(name + ' closed', () => r.closed || r.error)
    // what was sent before the close can only be the auth message
    r.ws.readyState === WebSocket.OPEN || await sleep(10)
    assert(r.types().every(t => t === 2), name + ': got ' + r.types())
    if (r.msgs.length) {
      const d = decoding.createDecoder(r.msgs[0].data); decoding.readVarUint(d)
      assert(decoding.readVarUint(d) === 0 && decoding.readVarString(d).startsWith('permission-denied'), name + ': permission-denied')
    }
    assert(!r.closed || r.closed.code === 1008, name + ': close code ' + JSON.stringify(r.closed))
  }
  // updates sent before authorization are never applied
  const r = raw(`${WS_URL}/${pid}?token=${encodeURIComponent(cases.forged)}`)
  r.ws.on('open', () => {
    const d = new Y.Doc(); d.getMap('files').set('forged.txt', new Y.Text('forged'))
    r.ws.send(frame(0, 2, Y.encodeStateAsUpdate(d)))
  })
  await waitFor('closed', () => r.closed || r.error)
  const a = client(owner, pid)
  await synced(a)
  assert(a.text('forged.txt') === null, 'the forged update was not applied')
})

await test('wsd the token in a cookie works and a foreign Origin is refused', async () => {
  const good = raw(`${WS_URL}/${pid}`, { Cookie: 'svc_access_token=' + owner.token, Origin: APP_ORIGIN })
  await waitFor('step 1 over cookie auth', () => good.msgs.some(m => m.data[0] === 0))
  const evil = raw(`${WS_URL}/${pid}?token=${owner.token}`, { Origin: 'https://evil.example' })
  await waitFor('refused', () => evil.error || evil.closed)
  assert(!evil.msgs.length, 'nothing sent to a foreign origin')
  const bad = raw(`${WS_URL}/not-a-project?token=${owner.token}`)
  await waitFor('unknown path refused', () => bad.error || bad.closed)
  assert(!bad.msgs.length, 'nothing for a bad path')
  // two svc_access_token cookies (one tossed by a site of a shared parent domain): neither counts
  const tossed = raw(`${WS_URL}/${pid}`, { Cookie: `svc_access_token=${owner.token}; svc_access_token=${owner.token}`, Origin: APP_ORIGIN })
  await waitFor('two access cookies refused', () => tossed.error || tossed.closed)
  assert(!tossed.msgs.some(m => m.data[0] === 0), 'no sync message with two access cookies')
  assert(tossed.msgs.some(m => m.data[0] === 2 && new TextDecoder().decode(m.data).includes('permission-denied')),
    'told permission-denied: ' + JSON.stringify(tossed.msgs.map(m => Array.from(m.data.slice(0, 4)))))
})

await test('wsd a token of a logged-out session or from before a password change opens no socket', async () => {
  // the signature alone is not enough: svc-wsd checks the token's server-side session (issue 17, finding 1)
  const email = `wsd-sess-${crypto.randomBytes(5).toString('hex')}@example.test`
  const password = 'pw-' + crypto.randomBytes(8).toString('hex')
  const su = await api('POST', '/auth/signup', { email, password })
  assert(su.status === 201, 'signup: ' + su.text)
  const acct = { token: su.body.accessToken, wid: su.body.workspace.id }
  const p = await createProject(acct)
  const login = async () => {
    const r = await api('POST', '/auth/login', { email, password: acct.password || password })
    assert(r.status === 200, 'login: ' + r.text)
    return r.body.accessToken
  }
  const refused = async (name, tok) => {
    const r = raw(`${WS_URL}/${p}?token=${encodeURIComponent(tok)}`, { Origin: APP_ORIGIN })
    await waitFor(name + ' closed', () => r.closed || r.error)
    assert(!r.msgs.some(m => m.data[0] === 0), name + ': no sync message')
    assert(r.msgs.some(m => m.data[0] === 2 && new TextDecoder().decode(m.data).includes('permission-denied: invalid or expired token')),
      name + ': told permission-denied')
    assert(!r.closed || r.closed.code === 1008, name + ': close code ' + JSON.stringify(r.closed))
  }
  const opens = async (name, tok) => {
    const r = raw(`${WS_URL}/${p}?token=${encodeURIComponent(tok)}`, { Origin: APP_ORIGIN })
    await waitFor(name + ' syncs', () => r.msgs.some(m => m.data[0] === 0) || r.closed || r.error)
    assert(r.msgs.some(m => m.data[0] === 0), name + ': the socket opened: ' + JSON.stringify(r.closed))
    r.ws.terminate()
  }
  // logout ends the session: its access token, still well signed and unexpired, opens nothing
  const t1 = await login()
  await opens('before logout', t1)
  const out = await api('POST', '/auth/logout', undefined, t1)
  assert(out.status === 200, 'logout: ' + out.text)
  await refused('after logout', t1)
  // a password change (a reset moves the same generation) ends every older token
  const t2 = await login()
  await opens('before the password change', t2)
  const newPassword = 'pw-' + crypto.randomBytes(8).toString('hex')
  const ch = await api('POST', '/auth/password', { currentPassword: password, newPassword }, t2)
  assert(ch.status === 200, 'password change: ' + ch.text)
  acct.password = newPassword
  await refused('after the password change', t2)
  await refused('the first sign-up token, after the password change', acct.token)
  await opens('a token of the new password', await login())
})

// An open socket's access is checked again every SVC_WSD_RECHECK_SECONDS (docs/collaboration.md "Connecting", 4.)
await test('wsd an open socket closes once its session ends, its user loses access or the project is deleted; a member who became a reader reads on', async () => {
  const W = await privateWsd({ SVC_WSD_RECHECK_SECONDS: '1' })
  const ws = await api('POST', '/workspaces', { name: 'WSD recheck ' + crypto.randomBytes(3).toString('hex') }, owner.token)
  assert(ws.status === 201, 'workspace: ' + ws.text)
  const email = `wsd-recheck-${crypto.randomBytes(5).toString('hex')}@example.test`
  const password = 'pw-' + crypto.randomBytes(8).toString('hex')
  let r = await api('POST', '/auth/signup', { email, password })
  assert(r.status === 201, 'signup: ' + r.text)
  const member = { token: r.body.accessToken, uid: r.body.user.id }
  r = await api('POST', `/workspaces/${ws.body.id}/members`, { email, role: 'member' }, owner.token)
  assert(r.status === 201, 'add member: ' + r.text)
  const session = async () => {
    const l = await api('POST', '/auth/login', { email, password })
    assert(l.status === 200, 'login: ' + l.text)
    return l.body.accessToken
  }
  const t2 = await session(); const t3 = await session(); const t4 = await session() // more sign-ins of the member
  const p = await createProject({ ...owner, wid: ws.body.id })
  const open = async (name, tok) => {
    const s = raw(`${W.url}/${p}?token=${encodeURIComponent(tok)}`, { Origin: APP_ORIGIN })
    await waitFor(name + ' syncs', () => s.msgs.some(m => m.data[0] === 0) || s.closed || s.error)
    assert(s.msgs.some(m => m.data[0] === 0), name + ': opened: ' + JSON.stringify(s.closed))
    return s
  }
  const denied = async (name, s, reason) => {
    await waitFor(name + ' closed', () => s.closed || s.error, 10000)
    assert(s.closed && s.closed.code === 1008, name + ': closed with ' + JSON.stringify(s.closed) + ' ' + s.error)
    assert(denial(s) === 'permission-denied: ' + reason, name + ': told ' + denial(s))
  }
  const o = await open('owner', owner.token)
  const m = await open('member', member.token)
  const m2 = await open('member, second session', t2)
  const m3 = await open('member, third session', t3)
  const m4 = await open('member, fourth session', t4)
  const oc = client(owner, p, { url: W.url }); const mc = client(member, p, { url: W.url })
  await synced(oc, mc)
  // a logout ends that session's socket; the member's other sessions stay
  r = await api('POST', '/auth/logout', undefined, t2)
  assert(r.status === 200, 'logout: ' + r.text)
  const t0 = Date.now()
  await denied('the logged-out socket', m2, 'invalid or expired token')
  console.log(`# a logged-out session's socket closed ${Date.now() - t0} ms after the logout (recheck every 1 s)`)
  assert(!m.closed && !m3.closed && !m4.closed && !o.closed, 'the other sockets stay: ' + JSON.stringify([m.closed, m3.closed, m4.closed, o.closed]))
  // the project made public, then the member removed: their sockets stay, as a reader's. Rounds
  // run one job at a time: the job that saw the third session's logout (after the removal) ended
  // before the fourth's logout, so the job that sees that one started after the removal
  r = await api('PATCH', `/projects/${p}`, { visibility: 'public' }, owner.token)
  assert(r.status === 200, 'make public: ' + r.text)
  r = await api('DELETE', `/workspaces/${ws.body.id}/members/${member.uid}`, undefined, owner.token)
  assert(r.status === 200, 'remove member: ' + r.text)
  r = await api('POST', '/auth/logout', undefined, t3)
  assert(r.status === 200, 'logout: ' + r.text)
  await denied('the third session\'s socket', m3, 'invalid or expired token')
  r = await api('POST', '/auth/logout', undefined, t4)
  assert(r.status === 200, 'logout: ' + r.text)
  await denied('the fourth session\'s socket', m4, 'invalid or expired token')
  assert(!m.closed && mc.provider.wsconnected, 'a reader of a public project stays connected: ' + JSON.stringify(m.closed))
  mc.files.set('from-a-former-member.txt', new Y.Text('dropped'))
  oc.files.set('from-the-owner.txt', new Y.Text('read'))
  await waitFor('the former member still reads', () => mc.text('from-the-owner.txt') === 'read')
  await sleep(500)
  assert(oc.text('from-a-former-member.txt') === null, 'the former member\'s edit was dropped')
  // made private: the former member's sockets close, and a reconnect is refused
  r = await api('PATCH', `/projects/${p}`, { visibility: 'private' }, owner.token)
  assert(r.status === 200, 'make private: ' + r.text)
  await denied('the former member\'s socket', m, "not a member of this project's workspace")
  mc.provider.destroy()
  const again = raw(`${W.url}/${p}?token=${encodeURIComponent(member.token)}`, { Origin: APP_ORIGIN })
  await denied('the former member reconnecting', again, "not a member of this project's workspace")
  assert(!o.closed && !o.error && oc.provider.wsconnected, 'the owner stays connected: ' + JSON.stringify(o.closed))
  // a deleted project closes what is left
  r = await api('DELETE', `/projects/${p}`, undefined, owner.token)
  assert(r.status === 200, 'delete project: ' + r.status + ' ' + r.text)
  await denied('the socket of a deleted project', o, 'no such project')
  oc.provider.destroy()
  await W.stop()
}, 60000)

// ------------------------------------------------------------------ MariaDB away, and the byte quotas (issue 25)

// A stand-in for MariaDB's socket between a private svc-wsd and the real one: stall() holds every byte
// svc-wsd sends (what a stopped server does: connections accepted, nothing answered), resume() lets
// what was held through and serves on. The API keeps the real socket, so the test can change the
// database while svc-wsd cannot reach it.
async function dbProxy () {
  const path = `${process.env.TMPDIR || '/tmp'}/wsd-db-${crypto.randomBytes(4).toString('hex')}.sock`
  const p = { path, stalled: false, pairs: new Set(), heldBytes: 0 }
  const open = (pair) => {
    pair.up = net.connect(conf.SVC_DB_SOCKET)
    pair.up.on('data', d => { if (!pair.c.destroyed) pair.c.write(d) })
    pair.up.on('error', () => pair.c.destroy())
    pair.up.on('close', () => pair.c.destroy())
    for (const d of pair.held.splice(0)) pair.up.write(d)
  }
  const srv = net.createServer(c => {
    const pair = { c, up: null, held: [] }
    p.pairs.add(pair)
    c.on('data', d => {
      if (p.stalled || !pair.up) { pair.held.push(d); if (p.stalled) p.heldBytes += d.length } else pair.up.write(d)
    })
    c.on('error', () => {})
    c.on('close', () => { p.pairs.delete(pair); if (pair.up) pair.up.destroy() })
    if (!p.stalled) open(pair)
  })
  await new Promise(resolve => srv.listen(path, resolve))
  p.stall = () => {
    p.stalled = true
    p.heldBytes = 0
    for (const pair of p.pairs) if (pair.up) pair.up.pause() // answers already on the way wait too
  }
  p.resume = () => {
    p.stalled = false
    for (const pair of p.pairs) {
      if (pair.c.destroyed) continue
      if (!pair.up) { open(pair); continue }
      pair.up.resume()
      for (const d of pair.held.splice(0)) pair.up.write(d)
    }
  }
  cleanups.push(() => { for (const pair of p.pairs) { pair.c.destroy(); if (pair.up) pair.up.destroy() } srv.close() })
  return p
}

// One value from the test stack's MariaDB (the mariadb client on its socket, as tests/e2e/svclib.py sql()).
function dbValue (query) {
  const r = spawnSync('mariadb', ['--no-defaults', '--socket=' + conf.SVC_DB_SOCKET, '-u' + (conf.SVC_DB_USER || 'root'),
    '-N', '-B', conf.SVC_DB_NAME || 'svc', '-e', query], { encoding: 'utf8', timeout: 10000 })
  assert(r.status === 0, 'mariadb: ' + r.stderr)
  return r.stdout.trim()
}

// The lines svc-wsd's log (shared by the private daemons) got after `from` bytes that include `text`.
function logLinesSince (from, text) {
  const all = fs.readFileSync(process.env.SVC_TEST_WSD_LOG)
  return all.subarray(Math.min(from, all.length)).toString('utf8').split('\n').filter(l => l.includes(text))
}

await test('wsd MariaDB out of reach: open sockets are kept, and checked again once it is back', async () => {
  // svc-wsd rechecks every second; it reaches MariaDB through a proxy the test stalls, while the API
  // (which records the logout) keeps the real one. The test waits for events, never for a guessed time:
  // a recheck round that found MariaDB out of reach (svc-wsd logs it), then the close once it is back.
  const db = await dbProxy()
  const W = await privateWsd({ SVC_WSD_RECHECK_SECONDS: '1', SVC_WSD_LEASE_SECONDS: '3', SVC_DB_SOCKET: db.path,
    SVC_DB_TIMEOUT: '1', SVC_DB_CONNECT_TIMEOUT: '1' })
  const email = `wsd-away-${crypto.randomBytes(5).toString('hex')}@example.test`
  const password = 'pw-' + crypto.randomBytes(8).toString('hex')
  let r = await api('POST', '/auth/signup', { email, password })
  assert(r.status === 201, 'signup: ' + r.text)
  const acct = { token: r.body.accessToken, wid: r.body.workspace.id }
  const p = await createProject(acct)
  r = await api('POST', '/auth/login', { email, password })
  assert(r.status === 200, 'login: ' + r.text)
  const t2 = r.body.accessToken
  const s = raw(`${W.url}/${p}?token=${encodeURIComponent(t2)}`, { Origin: APP_ORIGIN })
  await waitFor('the socket syncs', () => s.msgs.some(m => m.data[0] === 0) || s.closed || s.error)
  assert(s.msgs.some(m => m.data[0] === 0), 'opened: ' + JSON.stringify(s.closed))
  const a = client(acct, p, { url: W.url }); const b = client(acct, p, { url: W.url })
  await synced(a, b)
  const logFrom = fs.statSync(process.env.SVC_TEST_WSD_LOG).size
  db.stall()
  const stalledAt = Date.now()
  r = await api('POST', '/auth/logout', undefined, t2)
  assert(r.status === 200, 'logout: ' + r.text)
  // two rounds that could not reach MariaDB, and longer than the room's lease (3 s): the socket of the
  // ended session, and the others, are still open and the room still serves its clients
  await waitFor('two recheck rounds without MariaDB', () => logLinesSince(logFrom, 'MariaDB out of reach; kept').length >= 2, 60000)
  await waitFor('the lease time passed', () => Date.now() - stalledAt > 4000, 10000)
  assert(!s.closed && !s.error, 'the socket is kept while MariaDB is away: ' + JSON.stringify(s.closed))
  a.files.set('while-away.txt', new Y.Text('still live'))
  await waitFor('the room serves on', () => b.text('while-away.txt') === 'still live')
  assert(a.provider.wsconnected && b.provider.wsconnected, 'the clients stay connected')
  db.resume()
  await waitFor('the ended session closes once MariaDB is back', () => s.closed || s.error, 30000)
  assert(s.closed && s.closed.code === 1008, 'closed with ' + JSON.stringify(s.closed) + ' ' + s.error)
  assert(denial(s) === 'permission-denied: invalid or expired token', 'told ' + denial(s))
  assert(a.provider.wsconnected && b.provider.wsconnected, 'the owner\'s sockets stay')
  await W.stop()
}, 120000)

await test('wsd during a MariaDB stall serves its rooms and stores what it holds once MariaDB is back', async () => {
  const db = await dbProxy()
  const W = await privateWsd({ SVC_WSD_LEASE_SECONDS: '3', SVC_DB_SOCKET: db.path, SVC_DB_TIMEOUT: '1',
    SVC_DB_CONNECT_TIMEOUT: '1' })
  const p = await createProject(owner)
  const a = client(owner, p, { url: W.url }); const b = client(owner, p, { url: W.url })
  await synced(a, b)
  const marker = 'typed-while-stalled-' + crypto.randomBytes(6).toString('hex')
  db.stall()
  const stalledAt = Date.now()
  a.files.set('stalled.txt', new Y.Text(marker))
  await waitFor('the other client sees it during the stall', () => b.text('stalled.txt') === marker)
  // past the lease (3 s) with svc-wsd trying MariaDB: the room is still served, edits still flow
  await waitFor('svc-wsd tried MariaDB during the stall', () => db.heldBytes > 0)
  await waitFor('the lease time passed', () => Date.now() - stalledAt > 4500, 10000)
  const marker2 = 'after-the-lease-' + crypto.randomBytes(6).toString('hex')
  b.files.get('stalled.txt').insert(0, marker2)
  await waitFor('edits still flow', () => a.text('stalled.txt') === marker2 + marker)
  assert(a.provider.wsconnected && b.provider.wsconnected, 'the clients stay connected through the stall')
  const stored = m => `((SELECT COUNT(*) FROM collab_updates WHERE project_id = '${p}' AND INSTR(data, '${m}') > 0) + ` +
    `(SELECT COUNT(*) FROM collab_documents WHERE project_id = '${p}' AND INSTR(snapshot, '${m}') > 0) > 0)`
  const q = `SELECT ${stored(marker)} + ${stored(marker2)}`
  assert(dbValue(q) === '0', 'nothing stored while MariaDB stalled')
  db.resume()
  await waitFor('the held updates are stored once MariaDB is back', () => dbValue(q) === '2', 30000)
  a.provider.destroy(); b.provider.destroy()
  await W.stop()
}, 90000)

// Issue 25: a daemon saved a file while MariaDB stalled (the file's hash could not be recorded in
// collab_files), stored a later edit once MariaDB was back and was killed before saving that edit.
// A fresh daemon, started while the dead one's lease still runs (it gives the room up until the
// lease expires), must not take the file it finds on disk for someone else's change: its first
// sync holds every edit MariaDB holds.
await test('wsd a fresh daemon started inside a killed one\'s lease serves every edit MariaDB holds, after a save during a MariaDB stall', async () => {
  const db = await dbProxy()
  const W = await privateWsd({ SVC_WSD_LEASE_SECONDS: '3', SVC_DB_SOCKET: db.path, SVC_DB_TIMEOUT: '1',
    SVC_DB_CONNECT_TIMEOUT: '1', SVC_WSD_SAVE_DELAY_MS: '6000' })
  const acct = await signup('reload')
  const p = await createProject(acct)
  const a = client(acct, p, { url: W.url })
  await synced(a)
  const marker = 'saved-while-stalled-' + crypto.randomBytes(6).toString('hex')
  db.stall()
  a.files.set('reload.txt', new Y.Text(marker))
  // saved to disk during the stall (files are still saved then); its hash cannot reach MariaDB
  const onDisk = `${process.env.SVC_DATA_DIR}/projects/${p}/reload.txt`
  await waitFor('the file saved during the stall', () => fs.existsSync(onDisk) && fs.readFileSync(onDisk, 'utf8') === marker, 20000)
  await sleep(6000) // the save's MariaDB calls time out (SVC_DB_TIMEOUT 1 s), none is left waiting in the stall
  db.resume()
  const marker2 = 'stored-not-saved-' + crypto.randomBytes(6).toString('hex')
  a.files.get('reload.txt').insert(0, marker2)
  const stored = `SELECT (SELECT COUNT(*) FROM collab_updates WHERE project_id = '${p}' AND INSTR(data, '${marker2}') > 0) + ` +
    `(SELECT COUNT(*) FROM collab_documents WHERE project_id = '${p}' AND INSTR(snapshot, '${marker2}') > 0)`
  await waitFor('the later edit stored in MariaDB', () => dbValue(stored) !== '0', 30000)
  // killed before that edit's save (6 s after it): the disk holds the stalled save's text only
  await W.kill()
  a.provider.destroy()
  assert(fs.readFileSync(onDisk, 'utf8') === marker, 'the later edit was not saved before the kill')
  const leaseLeft = () => dbValue(`SELECT COUNT(*) FROM room_leases WHERE project_id = '${p}' AND expires_at > UTC_TIMESTAMP(3)`)
  const W2 = await privateWsd({})
  if (leaseLeft() === '0') console.log('# note: the killed daemon\'s lease had run out when the fresh one was up (a slow machine)')
  const c = client(acct, p, { url: W2.url })
  await Promise.race([c.synced, sleep(30000).then(() => { throw new Error('the fresh daemon never served the room') })])
  const first = c.text('reload.txt')
  c.provider.destroy()
  await W2.stop()
  assert(first === marker2 + marker, 'the first sync holds every edit MariaDB holds: ' + first)
}, 120000)

function dirBytes (dir) {
  let total = 0
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    if (e.isDirectory()) total += dirBytes(`${dir}/${e.name}`)
    else if (e.isFile()) total += fs.lstatSync(`${dir}/${e.name}`).size
  }
  return total
}

await test('wsd an update past the byte quota is refused, its sender told why, and nothing of it is stored or saved', async () => {
  const acct = await signup('quota')
  const p = await createProject(acct)
  const dir = `${process.env.SVC_DATA_DIR}/projects/${p}`
  const quota = dirBytes(dir) + 100000
  const W = await privateWsd({ SVC_QUOTA_REPO_BYTES: String(quota), SVC_WSD_SAVE_DELAY_MS: '100' })
  const a = client(acct, p, { url: W.url, comments: true }); const b = client(acct, p, { url: W.url, comments: true })
  await synced(a, b)
  const fits = 'fits ' + crypto.randomBytes(15000).toString('base64')
  a.files.set('fits.txt', new Y.Text(fits))
  await waitFor('an update within the quota reaches the others', () => b.text('fits.txt') === fits)
  await waitFor('and the disk', async () => (await fileOnDisk(acct, p, 'fits.txt')) === fits, 20000)
  const big = 'big ' + crypto.randomBytes(150000).toString('base64')
  a.files.set('big.txt', new Y.Text(big))
  await waitFor('the sender is told', () => a.errors.length > 0)
  assert(a.errors[0].error === 'payload_too_large' && /quota/.test(a.errors[0].message), 'told: ' + JSON.stringify(a.errors[0]))
  assert(!b.errors.length, 'only the sender is told')
  // the room goes on: b's next edit reaches a and the disk; the refused update reached neither
  b.files.set('after.txt', new Y.Text('after'))
  await waitFor('the room goes on', () => a.text('after.txt') === 'after')
  await waitFor('a later edit is saved', async () => (await fileOnDisk(acct, p, 'after.txt')) === 'after', 20000)
  assert(b.text('big.txt') === null, 'the refused update reached no one')
  assert((await fileOnDisk(acct, p, 'big.txt')) === null, 'the refused update is not on disk')
  const stored = dbValue(`SELECT COUNT(*) FROM collab_updates WHERE project_id = '${p}' AND INSTR(data, '${big.slice(0, 40)}') > 0`)
  assert(stored === '0', 'the refused update is not in MariaDB')
  await W.stop()
}, 60000)

await test('wsd oversized and malformed messages close the sender only', async () => {
  const a = client(owner, pid); const b = client(owner, pid)
  await synced(a, b)
  const big = raw(`${WS_URL}/${pid}?token=${owner.token}`)
  await waitFor('open', () => big.msgs.length)
  big.ws.send(frame(0, 2, new Uint8Array(1024 * 1024 + 10)))
  await waitFor('1009', () => big.closed)
  assert(big.closed.code === 1009, 'closed with ' + JSON.stringify(big.closed))
  for (const [name, bytes, code] of [['bad update', frame(0, 2, new Uint8Array([1, 200, 200, 200])), 1003],
    ['bad sync type', frame(0, 9, new Uint8Array([0])), 1003], ['truncated', new Uint8Array([0, 2, 50, 1]), 1003],
    ['bad awareness json', frame(1, new Uint8Array([1, 5, 1, 2, 123, 91])), 1003], ['text frame', 'hello', 1003]]) {
    const r = raw(`${WS_URL}/${pid}?token=${owner.token}`)
    await waitFor('open', () => r.msgs.length)
    r.ws.send(bytes)
    await waitFor(name + ' closed', () => r.closed)
    assert(r.closed.code === code, name + ': closed with ' + JSON.stringify(r.closed))
  }
  a.files.set('still-works.txt', new Y.Text('yes'))
  await waitFor('room keeps working', () => b.text('still-works.txt') === 'yes')
  assert(a.provider.wsconnected && b.provider.wsconnected, 'others stay connected')
})

await test('wsd a client through Apache and one through lighttpd share the room', async () => {
  assert(APACHE_WS_URL, 'SVC_TEST_APACHE_WS_URL set')
  const a = client(owner, pid); const b = client(owner, pid, { url: APACHE_WS_URL })
  await synced(a, b)
  b.files.set('via-apache.txt', new Y.Text('apache'))
  await waitFor('lighttpd client sees it', () => a.text('via-apache.txt') === 'apache')
})

// Several instances (issue 19): a room is served by the instance holding its lease in MariaDB
// (room_leases); another refuses it with close code 4503 until the lease expires, then loads it
// from what the first stored (docs/collaboration.md "Several instances").
await test('wsd room leases: a second instance refuses a served room (4503), takes it over after the first is killed, with every stored update', async () => {
  const p = await createProject(owner)
  const A = await privateWsd({ SVC_WSD_LEASE_SECONDS: '3' })
  const B = await privateWsd({ SVC_WSD_LEASE_SECONDS: '3' })
  const a = client(owner, p, { url: A.url })
  await synced(a)
  let drops = 0
  a.provider.on('status', e => { if (e.status === 'disconnected') drops++ })
  const t = a.files.get('index.html')
  for (let i = 0; i < 40; i++) t.insert(0, `lease${i};`)
  await sleep(4000) // stored within ~100 ms; A renews its lease (every second here) meanwhile
  const expected = a.text('index.html')
  const r = raw(`${B.url}/${p}?token=${owner.token}`)
  await waitFor('B closes the socket', () => r.closed || r.error)
  assert(r.closed && r.closed.code === 4503 && !r.msgs.some(m => m.data[0] === 0), 'B refused with 4503, no document: ' + JSON.stringify(r.closed) + ' ' + r.types())
  // B's refusal marked the room wanted (the balancer sends clients there now): A hands it over at its
  // next renewal (its client is dropped), the client reconnects to A, which takes the room again
  // since B holds nothing
  await waitFor('A hands the room over', () => drops > 0, 20000)
  await waitFor('A serves its client again', () => a.provider.wsconnected && a.provider.synced, 20000)
  const holders = () => spawnSync('mariadb', ['--no-defaults', '--socket=' + conf.SVC_DB_SOCKET, '-uroot', '-N', '-B', conf.SVC_DB_NAME || 'svc',
    '-e', `SELECT instance FROM room_leases WHERE project_id = '${p}' AND expires_at > UTC_TIMESTAMP(3)`], { encoding: 'utf8' })
  let q = holders()
  await waitFor('A holds the lease', () => {
    q = holders()
    const h = q.stdout.trim().split('\n').filter(Boolean)
    return h.length === 1 && h[0].endsWith(':' + new URL(A.url).port)
  }, 10000).catch(e => { throw new Error(e.message + ': ' + q.stdout + q.stderr) })
  await sleep(1500) // renewals (every second here) keep it A's, with nobody asking for it
  q = holders()
  assert(q.stdout.trim().endsWith(':' + new URL(A.url).port), 'A still holds the lease: ' + q.stdout + q.stderr)
  await A.kill()
  const t0 = Date.now()
  const b = client(owner, p, { url: B.url })
  await Promise.race([b.synced, sleep(20000).then(() => { throw new Error('B never served the room') })])
  const took = Date.now() - t0
  await waitFor('every stored update on B', () => (b.text('index.html') || '').includes(expected))
  console.log(`# room moved to the second instance ${took} ms after the first was killed (lease 3 s)`)
  a.provider.destroy()
  await B.stop()
}, 60000)

await test('wsd kill -9 and restart lose nothing; offline edits merge on reconnect', async () => {
  const p = await createProject(owner)
  const a = client(owner, p, { comments: true }); const b = client(owner, p)
  await synced(a, b)
  const t = a.files.get('index.html')
  for (let i = 0; i < 50; i++) t.insert(0, `k${i};`)
  a.sendComment({ type: 'design-comment:add', content: 'survives', xPercent: 2, yPercent: 3 })
  await waitFor('comment stored', () => a.comments.some(m => m.type === 'design-comment:added'))
  await waitFor('b has the edits', () => b.text('index.html') === a.text('index.html'))
  await sleep(400) // updates reach MariaDB at most ~100 ms after they arrive
  const expected = a.text('index.html')
  process.kill(wsdPid(), 'SIGKILL')
  await waitFor('clients notice', () => !a.provider.wsconnected && !b.provider.wsconnected)
  b.files.get('index.html').insert(0, 'OFFLINE;')
  await restartWsd()
  const c = client(owner, p, { comments: true })
  await synced(c)
  await waitFor('nothing lost', () => (c.text('index.html') || '').includes(expected))
  await waitFor('offline edit merged everywhere', () => c.text('index.html').startsWith('OFFLINE;') && a.text('index.html') === c.text('index.html'), 20000)
  await waitFor('open comment after restart', () => c.comments.some(m => m.comment && m.comment.content === 'survives'))
})

await test('wsd internal endpoints refuse unsigned and forged calls', async () => {
  let r = await fetch(`http://127.0.0.1:${conf.SVC_WS_PORT}/internal/projects/${pid}/disk-changed`, { method: 'POST', headers: { 'Content-Length': '0' } })
  assert(r.status === 401, 'daemon unsigned: ' + r.status)
  const ts = String(Math.floor(Date.now() / 1000))
  r = await fetch(`http://127.0.0.1:${conf.SVC_WS_PORT}/internal/projects/${pid}/disk-changed`, { method: 'POST', headers: { 'Content-Length': '0', 'X-Svc-Timestamp': ts, 'X-Svc-Nonce': '0'.repeat(32), 'X-Svc-Signature': 'v2=' + '0'.repeat(64) } })
  assert(r.status === 401, 'daemon forged: ' + r.status)
  const once = signed('POST', `/internal/projects/${pid}/disk-changed`, ts, '')
  r = await fetch(`http://127.0.0.1:${conf.SVC_WS_PORT}/internal/projects/${pid}/disk-changed`, { method: 'POST', headers: { 'Content-Length': '0', ...once } })
  assert(r.status === 202, 'daemon signed: ' + r.status)
  // the same signed call again, inside its window: a replay
  r = await fetch(`http://127.0.0.1:${conf.SVC_WS_PORT}/internal/projects/${pid}/disk-changed`, { method: 'POST', headers: { 'Content-Length': '0', ...once } })
  assert(r.status === 401, 'daemon replayed: ' + r.status)
  // without a nonce (a v1 call): refused
  const { 'X-Svc-Nonce': _, ...noNonce } = signed('POST', `/internal/projects/${pid}/disk-changed`, ts, '')
  r = await fetch(`http://127.0.0.1:${conf.SVC_WS_PORT}/internal/projects/${pid}/disk-changed`, { method: 'POST', headers: { 'Content-Length': '0', ...noNonce } })
  assert(r.status === 401, 'daemon without nonce: ' + r.status)
  const old = String(Math.floor(Date.now() / 1000) - 301)
  r = await fetch(`http://127.0.0.1:${conf.SVC_WS_PORT}/internal/projects/${pid}/disk-changed`, { method: 'POST', headers: { 'Content-Length': '0', ...signed('POST', `/internal/projects/${pid}/disk-changed`, old, '') } })
  assert(r.status === 401, 'daemon stale: ' + r.status)
  const body = JSON.stringify({ paths: ['x'] })
  const path = new URL(BASE).pathname + `/internal/projects/${pid}/files-changed`
  r = await fetch(BASE + `/internal/projects/${pid}/files-changed`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body })
  assert(r.status === 401, 'API unsigned: ' + r.status)
  r = await fetch(BASE + `/internal/projects/${pid}/files-changed`, { method: 'POST', headers: { 'Content-Type': 'application/json', ...signed('POST', path, ts, body + ' ') }, body })
  assert(r.status === 401, 'API tampered body: ' + r.status)
  const apiOnce = signed('POST', path, ts, body)
  r = await fetch(BASE + `/internal/projects/${pid}/files-changed`, { method: 'POST', headers: { 'Content-Type': 'application/json', ...apiOnce }, body })
  assert(r.status === 200, 'API signed: ' + r.status + ' ' + await r.text())
  r = await fetch(BASE + `/internal/projects/${pid}/files-changed`, { method: 'POST', headers: { 'Content-Type': 'application/json', ...apiOnce }, body })
  assert(r.status === 401 && (await r.json()).message.includes('already used'), 'API replayed: ' + r.status)
  // a correctly signed internal call relayed from outside (through a trusted proxy, as
  // X-Forwarded-For says) does not exist: internal paths answer only this host and the proxies
  r = await fetch(BASE + `/internal/projects/${pid}/files-changed`, { method: 'POST', headers: { 'Content-Type': 'application/json', 'X-Forwarded-For': '203.0.113.9', ...signed('POST', path, ts, body) }, body })
  assert(r.status === 404, 'API signed but from outside: ' + r.status)
})

await test('wsd cold text is kept compressed in memory and stays exact through joins and edits', async () => {
  // real source text: yjs's own bundle (ASCII JavaScript, about 300 kB)
  const big = fs.readFileSync(new URL('./node_modules/yjs/dist/yjs.cjs', import.meta.url), 'utf8')
  assert(big.length > 250000, 'the text is big: ' + big.length)
  const status = async () => {
    const ts = String(Math.floor(Date.now() / 1000))
    const r = await fetch(`http://127.0.0.1:${conf.SVC_WS_PORT}/internal/status`, { headers: { ...signed('GET', '/internal/status', ts, '') } })
    assert(r.status === 200, 'status: ' + r.status)
    return r.json()
  }
  const p = await createProject(owner)
  const a = client(owner, p)
  await synced(a)
  a.doc.transact(() => a.files.set('big.js', new Y.Text(big)))
  // packed after two passes of the second-chance clock (about 1 s each)
  let st
  await waitFor('the big text packed', async () => { st = await status(); return st.packedTextBytes >= big.length }, 20000)
  assert(st.packedBytes * 2 < st.packedTextBytes, 'JavaScript compresses at least 2x: ' + JSON.stringify(st))
  assert(st.textHeapBytes < st.textBytes, 'the heap holds less than the text: ' + JSON.stringify(st))
  // a joiner gets the exact text from the packed document (sync step 2 decompresses)
  const b = client(owner, p)
  await synced(b)
  await waitFor('b has the text', () => b.text('big.js') !== null && b.text('big.js').length === big.length)
  assert(b.text('big.js') === big, 'exact text after packing')
  // an edit inside the packed piece splits it (unpacks); everyone agrees on the result
  a.files.get('big.js').insert(150000, '/* edited */')
  a.files.get('big.js').delete(200000, 10)
  const want = a.text('big.js')
  assert(want.length === big.length + 12 - 10, 'edit applied locally')
  await waitFor('b sees the edit', () => b.text('big.js') === want)
  const c = client(owner, p)
  await synced(c)
  await waitFor('a fresh joiner sees the edit', () => c.text('big.js') === want)
  // and the saved file is the same text
  await waitFor('the file on disk', async () => (await fileOnDisk(owner, p, 'big.js')) === want, 20000)
})

await test('wsd per-user and total limits on connections and rooms', async () => {
  const w = await privateWsd({ SVC_WSD_MAX_CONNECTIONS_PER_USER: '3', SVC_WSD_MAX_ROOMS_PER_USER: '2', SVC_WSD_MAX_CONNECTIONS: '6', SVC_WSD_MAX_ROOMS: '3' })
  const A = await signup('lim-a'); const B = await signup('lim-b'); const C = await signup('lim-c')
  const pA = await createProject(A); const pB1 = await createProject(B); const pB2 = await createProject(B); const pB3 = await createProject(B)
  const pC = await createProject(C)
  const open = async (acct, p) => { const r = raw(`${w.url}/${p}?token=${acct.token}`); await waitFor('answer', () => r.msgs.length || r.closed || r.error); return r }
  const a = []
  for (let i = 0; i < 3; i++) a.push(await open(A, pA))
  assert(a.every(r => r.msgs[0].data[0] === 0 && !r.closed), 'three connections of one user are fine')
  let r = await open(A, pA)
  await waitFor('closed', () => r.closed)
  assert(/too many connections/.test(denial(r)) && r.closed.code === 1008 && r.types().every(t => t === 2), 'fourth: ' + denial(r) + ' ' + r.types())
  const b1 = await open(B, pB1); const b2 = await open(B, pB2)
  assert(b1.msgs[0].data[0] === 0 && b2.msgs[0].data[0] === 0, 'two rooms of one user are fine')
  r = await open(B, pB3)
  await waitFor('closed', () => r.closed)
  assert(/too many rooms/.test(denial(r)) && r.types().every(t => t === 2), 'third room: ' + denial(r))
  r = await open(C, pC)
  await waitFor('closed', () => r.closed)
  assert(/server busy/.test(denial(r)) && r.types().every(t => t === 2), 'fourth room on the server: ' + denial(r))
  const b3 = await open(B, pB1) // a second connection to an open room: the sixth socket
  assert(b3.msgs[0].data[0] === 0 && !b3.closed, 'within the limits again')
  await sleep(200)
  r = raw(`${w.url}/${pC}?token=${C.token}`)
  await waitFor('refused', () => r.error || r.closed)
  assert(!r.msgs.length, 'the seventh socket is refused at the upgrade')
  // a user's connections are counted down when they close
  a[0].ws.close()
  await waitFor('closed', () => a[0].closed)
  await sleep(200)
  r = await open(A, pA)
  assert(r.msgs[0].data[0] === 0, 'a freed slot can be used: ' + r.types())
  await w.stop()
})

await test('wsd a client that stops reading is dropped with 1013, the others go on', async () => {
  // the close frame waits until the test resumes reading, however long the 30 MB take on a busy machine
  const w = await privateWsd({ SVC_WSD_SEND_QUEUE_MAX: '1048576', SVC_WSD_CLOSE_TIMEOUT: '600', SVC_WSD_AWARENESS_MAX_BYTES: '262144' })
  const p = await createProject(owner)
  const slow = raw(`${w.url}/${p}?token=${owner.token}`)
  const writer = raw(`${w.url}/${p}?token=${owner.token}`)
  const fine = client(owner, p, { url: w.url })
  await waitFor('open', () => slow.msgs.length && writer.msgs.length)
  await synced(fine)
  fine.provider.on('status', e => { if (e.status === 'disconnected') fine.closedOnce = true })
  slow.ws._socket.pause() // stops reading: the kernel buffers fill (some MB), then the server's queue
  // 30 MB of awareness relayed to the room, one message at a time (each sent once the writer
  // read its echo, so the clients that do read never have more than one or two queued)
  const big = 'x'.repeat(128 * 1024)
  const N = 240
  const echoed = clock => writer.msgs.some(m => m.data[0] === 1 && awarenessEntries(m.data).some(e => e.client === 424242 && e.clock === clock))
  for (let clock = 1; clock <= N; clock++) {
    writer.msgs.length = 0
    writer.ws.send(awarenessFrame(424242, clock, { big, clock }))
    await waitFor('echo ' + clock, () => echoed(clock))
  }
  slow.ws._socket.resume()
  await waitFor('slow client closed', () => slow.closed, 30000)
  assert(slow.closed.code === 1013, 'closed with ' + JSON.stringify(slow.closed))
  assert(!writer.closed && !fine.closedOnce, 'only the slow client was dropped')
  const got = slow.msgs.filter(m => m.data[0] === 1 && awarenessEntries(m.data).some(e => e.client === 424242)).length
  assert(got < N, 'the slow client did not get everything (' + got + ')')
  assert(!writer.closed && fine.provider.wsconnected, 'the others stay connected')
  fine.files.set('after-slow.txt', new Y.Text('ok'))
  const check = client(owner, p, { url: w.url })
  await synced(check)
  await waitFor('room keeps working', () => check.text('after-slow.txt') === 'ok')
  await w.stop()
}, 180000)

await test('wsd awareness states time out when not renewed; idle sockets get keepalives', async () => {
  const w = await privateWsd({ SVC_WSD_AWARENESS_TIMEOUT_MS: '1500', SVC_WSD_KEEPALIVE_MS: '400' })
  const p = await createProject(owner)
  const observer = raw(`${w.url}/${p}?token=${owner.token}`)
  const x = raw(`${w.url}/${p}?token=${owner.token}`)
  await waitFor('open', () => observer.msgs.length && x.msgs.length)
  const t0 = Date.now()
  x.ws.send(awarenessFrame(777, 1, { user: { name: 'silent' } }))
  const seen = () => observer.msgs.flatMap(m => m.data[0] === 1 ? awarenessEntries(m.data) : []).filter(e => e.client === 777)
  await waitFor('observer sees the state', () => seen().some(e => e.state !== null))
  await waitFor('state removed', () => seen().some(e => e.state === null), 10000)
  const dt = Date.now() - t0
  assert(dt >= 1400, 'removed only after the timeout (' + dt + ' ms)')
  assert(!x.closed, 'its connection is still open')
  // the observer never sent anything: keepalives (empty awareness updates) fill the silence
  const n0 = observer.msgs.length
  await sleep(2500)
  const ka = observer.msgs.slice(n0).filter(m => m.data.length === 3 && m.data[0] === 1 && m.data[1] === 1 && m.data[2] === 0)
  assert(ka.length >= 3, 'keepalives in 2.5 s at 400 ms: ' + ka.length)
  assert(!observer.closed, 'still connected: ' + JSON.stringify(observer.closed))
  await w.stop()
})

await test('wsd awareness: a client id is its connection\'s, at most 8 per connection, 16 KiB per state, bursts relayed in full', async () => {
  const p = await createProject(owner)
  const url = `${WS_URL}/${p}?token=${owner.token}`
  const observer = raw(url); const a = raw(url); const b = raw(url); const c = raw(url)
  await waitFor('open', () => observer.msgs.length && a.msgs.length && b.msgs.length && c.msgs.length)
  const seen = client => observer.msgs.flatMap(m => m.data[0] === 1 ? awarenessEntries(m.data) : []).filter(e => e.client === client)
  // a's client id: another connection can neither change nor remove it while a is here
  a.ws.send(awarenessFrame(5001, 1, { user: { name: 'Ann' } }))
  await waitFor('observer sees Ann', () => seen(5001).some(e => e.state && e.state.user.name === 'Ann'))
  b.ws.send(awarenessFrame(5001, 5, { user: { name: 'forged' } }))
  b.ws.send(awarenessFrameMany([[5001, 6, null]]))
  b.ws.send(awarenessFrame(5002, 1, { user: { name: 'Bob' } }))
  await waitFor('observer sees Bob', () => seen(5002).length)
  assert(seen(5001).every(e => e.state && e.state.user.name === 'Ann'), 'another connection changed a\'s state: ' + JSON.stringify(seen(5001)))
  // once a left (its state removed), a reconnecting provider takes its id back with a newer clock
  a.ws.close()
  await waitFor('a removed', () => seen(5001).some(e => e.state === null))
  b.ws.send(awarenessFrame(5001, 9, { user: { name: 'Ann again' } }))
  await waitFor('the id taken back', () => seen(5001).some(e => e.state && e.state.user.name === 'Ann again'))
  // ten ids from one connection in one message: eight are kept
  const ten = Array.from({ length: 10 }, (_, i) => [6001 + i, 1, { i }])
  c.ws.send(awarenessFrameMany(ten))
  await waitFor('eight relayed', () => ten.filter(([id]) => seen(id).length).length === 8)
  await sleep(200)
  assert(ten.filter(([id]) => seen(id).length).length === 8, 'more than eight ids relayed')
  // a state over 16 KiB is ignored, a 1 KiB one is relayed
  const d = raw(url)
  await waitFor('d open', () => d.msgs.length)
  d.ws.send(awarenessFrame(7001, 1, { big: 'x'.repeat(20000) }))
  d.ws.send(awarenessFrame(7002, 1, { small: 'y'.repeat(1000) }))
  await waitFor('the small state', () => seen(7002).length)
  assert(seen(7001).length === 0, 'a 20 KB state was relayed')
  // a burst of 200 updates: the last state arrives, in fewer than 200 messages
  const e = raw(url)
  await waitFor('e open', () => e.msgs.length)
  for (let clock = 1; clock <= 200; clock++) e.ws.send(awarenessFrame(8001, clock, { clock }))
  await waitFor('the burst\'s last state', () => seen(8001).some(x => x.clock === 200 && x.state.clock === 200))
  const carrying = observer.msgs.filter(m => m.data[0] === 1 && awarenessEntries(m.data).some(x => x.client === 8001)).length
  assert(carrying < 200, 'every update of the burst went out alone: ' + carrying)
})

await test('wsd a sync step 1 with a state vector of 200,000 clients is answered at once (no quadratic dedupe)', async () => {
  const p = await createProject(owner)
  const r = raw(`${WS_URL}/${p}?token=${owner.token}`)
  await waitFor('open', () => r.msgs.length)
  const sv = encoding.createEncoder()
  const N = 200000
  encoding.writeVarUint(sv, N)
  for (let i = 0; i < N; i++) { encoding.writeVarUint(sv, 100000 + i); encoding.writeVarUint(sv, 0) }
  r.msgs.length = 0
  const t0 = Date.now()
  r.ws.send(frame(0, 0, encoding.toUint8Array(sv)))
  await waitFor('step 2', () => r.msgs.some(m => m.data[0] === 0 && m.data[1] === 1), 20000)
  const ms = Date.now() - t0
  // before, each entry was compared with every earlier one: 2e10 comparisons, minutes under ASan
  assert(ms < 5000, 'step 2 took ' + ms + ' ms')
  assert(!r.closed, 'closed: ' + JSON.stringify(r.closed))
})

await test('wsd a direct save reaches a connected client live', async () => {
  const p = await createProject(owner)
  const a = client(owner, p)
  await synced(a)
  const marker = 'Direct ' + crypto.randomBytes(4).toString('hex')
  const r = await api('POST', `/direct-save/${p}`, { filePath: 'index.html', patches: [{ selector: 'h1#app-title', property: 'text', value: marker }] }, owner.token)
  assert(r.status === 200, 'direct-save: ' + r.text)
  await waitFor('the client sees it', () => (a.text('index.html') || '').includes(`<h1 id="app-title">${marker}</h1>`))
})

await test('wsd typing and an API change to another part of the same file both survive (three-way merge)', async () => {
  const p = await createProject(owner)
  const a = client(owner, p); const b = client(owner, p)
  await synced(a, b)
  const t = a.files.get('index.html')
  const at = t.toString().indexOf('<title>') + '<title>'.length
  const typed = []
  let stop = false
  const typing = (async () => {
    for (let i = 0; !stop; i++) {
      const s = `k${i};`
      t.insert(at + typed.join('').length, s)
      typed.push(s)
      await sleep(40)
    }
  })()
  await sleep(1200) // edits in flight, the newest well under a second old
  const marker = 'Agent ' + crypto.randomBytes(4).toString('hex')
  const r = await api('POST', `/direct-save/${p}`, { filePath: 'index.html', patches: [{ selector: 'h1#app-title', property: 'text', value: marker }] }, owner.token)
  assert(r.status === 200, 'direct-save: ' + r.text)
  await waitFor('the change arrives while typing', () => a.text('index.html').includes(marker))
  await sleep(600)
  stop = true
  await typing
  const all = typed.join('')
  await waitFor('both in every client', () => [a, b].every(c => c.text('index.html').includes('<title>' + all) && c.text('index.html').includes(`<h1 id="app-title">${marker}</h1>`)))
  await waitFor('both on disk', async () => {
    const d = (await fileOnDisk(owner, p, 'index.html')) || ''
    return d.includes('<title>' + all) && d.includes(`<h1 id="app-title">${marker}</h1>`)
  }, 20000)
})

await test('wsd a rescan refreshes meta.binaryFiles; a text file turned binary leaves the document', async () => {
  const p = await createProject(owner)
  const a = client(owner, p)
  await synced(a)
  const meta = a.doc.getMap('meta')
  assert(Array.isArray(meta.get('binaryFiles')) && !meta.get('binaryFiles').includes('logo.bin'), 'binaryFiles: ' + JSON.stringify(meta.get('binaryFiles')))
  const dir = `${process.env.SVC_DATA_DIR}/projects/${p}`
  fs.writeFileSync(`${dir}/logo.bin`, Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 1, 2, 3, 0xff]))
  fs.writeFileSync(`${dir}/README.md`, Buffer.from([0, 0, 0, 1]))
  assert((await notifyDiskChanged(p)).live === true, 'the room is live')
  await waitFor('binaryFiles lists them', () => { const l = meta.get('binaryFiles') || []; return l.includes('logo.bin') && l.includes('README.md') })
  await waitFor('README.md left the document', () => a.text('README.md') === null)
  assert(a.text('logo.bin') === null, 'binary files stay out')
  fs.unlinkSync(`${dir}/logo.bin`)
  await notifyDiskChanged(p)
  await waitFor('binaryFiles follows a removal', () => !(meta.get('binaryFiles') || []).includes('logo.bin'))
})

await test('wsd an idle client stays connected past 30 s (keepalive)', async () => {
  const left = 35000 - (Date.now() - idleStart)
  if (left > 0) await sleep(left)
  assert(idle.provider.wsconnected && idle.disconnects === 0, 'connected, no reconnect: ' + idle.disconnects)
  assert(Date.now() - idleStart >= 35000, 'waited 35 s')
  idle.provider.destroy()
  await idleWsd.stop()
}, 90000)

await idleWsd.stop()
process.exit(failures() ? 1 : 0)
