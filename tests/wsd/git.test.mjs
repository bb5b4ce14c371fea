// git.test.mjs: a push over Git's smart HTTP (the real git CLI) meets a y-websocket client editing the same file; prints "ok - name" / "not ok - name".
//
// A push to main reaches open documents through svc-wsd's disk-change path (docs/git.md "Clone, pull, push"):
// an edit of line 1 that is not saved yet, or saved and not committed yet, and a push that changes line 30
// of the same file both survive, in the document and on disk.
// Environment as wsd.test.mjs (set by ./svc-dev test); argv[2] = the build directory.
import { spawn } from 'node:child_process'
import crypto from 'node:crypto'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import WebSocket from 'ws'
import * as Y from 'yjs'
import { WebsocketProvider } from 'y-websocket'
import { assert, runner, sleep, waitFor } from './harness.mjs'
import { BASE, WS_URL, api, createProject, signup } from './stack.mjs'

const { test, cleanups, failures } = runner()
const TMP = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-wsd-git-'))
const HOME = path.join(TMP, 'home')
fs.mkdirSync(HOME)
const GIT_ENV = {
  PATH: process.env.PATH, HOME, LC_ALL: 'C', GIT_CONFIG_NOSYSTEM: '1', GIT_TERMINAL_PROMPT: '0',
  GIT_AUTHOR_NAME: 'Grace Hopper', GIT_AUTHOR_EMAIL: 'grace@example.test',
  GIT_COMMITTER_NAME: 'Grace Hopper', GIT_COMMITTER_EMAIL: 'grace@example.test'
}

// git(args, cwd): runs the git CLI without blocking the event loop (the Yjs client keeps talking); {status, out}.
function git (args, cwd) {
  return new Promise(resolve => {
    const p = spawn('git', args, { cwd, env: GIT_ENV })
    let out = ''
    p.stdout.on('data', d => { out += d })
    p.stderr.on('data', d => { out += d })
    p.on('close', status => resolve({ status, out }))
  })
}

function client (acct, pid) {
  const doc = new Y.Doc()
  const provider = new WebsocketProvider(WS_URL, pid, doc, { WebSocketPolyfill: WebSocket, disableBc: true, params: { token: acct.token } })
  const c = { doc, provider, files: doc.getMap('files') }
  c.synced = new Promise(resolve => { if (provider.synced) resolve(); else provider.once('sync', s => s && resolve()) })
  c.text = p => { const t = c.files.get(p); return t instanceof Y.Text ? t.toString() : null }
  cleanups.push(() => { provider.destroy(); doc.destroy() })
  return c
}

async function fileOnDisk (acct, pid, p) {
  const r = await fetch(`${BASE}/projects/${pid}/files/${p}`, { headers: { Authorization: 'Bearer ' + acct.token } })
  return r.status === 200 ? r.text() : null
}

// A project with doc.txt of 40 lines pushed from a clone: {pid, dir (the clone)}.
async function projectWithClone (owner, name) {
  const pid = await createProject(owner)
  const t = await api('POST', '/auth/tokens', { name: 'wsd git', scopes: ['git:write'] }, owner.token)
  assert(t.status === 201, 'token: ' + t.text)
  const u = new URL(BASE)
  const url = `${u.protocol}//git:${t.body.token}@${u.host}${u.pathname}/git/${pid}.git`
  const dir = path.join(TMP, name)
  let r = await git(['clone', '-q', url, dir])
  assert(r.status === 0, 'clone: ' + r.out)
  fs.writeFileSync(path.join(dir, 'doc.txt'), Array.from({ length: 40 }, (_, i) => `line ${i + 1}`).join('\n') + '\n')
  await git(['add', 'doc.txt'], dir)
  await git(['commit', '-q', '-m', 'doc.txt of 40 lines'], dir)
  r = await git(['push', '-q', 'origin', 'main'], dir)
  assert(r.status === 0, 'push: ' + r.out)
  return { pid, dir }
}

async function pushLine30 (dir) {
  const f = path.join(dir, 'doc.txt')
  const lines = fs.readFileSync(f, 'utf8').split('\n')
  lines[29] = 'line 30 PUSHED'
  fs.writeFileSync(f, lines.join('\n'))
  await git(['commit', '-q', '-am', 'change line 30'], dir)
  return git(['push', '-q', 'origin', 'main'], dir)
}

const owner = await signup('git')

await test('wsd an unsaved edit of line 1 and a push changing line 30 both survive', async () => {
  const { pid, dir } = await projectWithClone(owner, 'unsaved')
  const a = client(owner, pid)
  await a.synced
  await waitFor('doc.txt in the document', () => (a.text('doc.txt') || '').includes('line 40'))
  a.files.get('doc.txt').insert(0, 'EDIT-1 ')
  const r = await pushLine30(dir)
  assert(r.status === 0, 'push: ' + r.out)
  const both = t => (t || '').startsWith('EDIT-1 line 1\n') && t.includes('\nline 30 PUSHED\n')
  await waitFor('both in the document', () => both(a.text('doc.txt')), 20000)
  await waitFor('both on disk', async () => both(await fileOnDisk(owner, pid, 'doc.txt')), 20000)
}, 90000)

await test('wsd an edit saved and not committed yet and a push to another line both survive', async () => {
  const { pid, dir } = await projectWithClone(owner, 'saved')
  const a = client(owner, pid)
  await a.synced
  await waitFor('doc.txt in the document', () => (a.text('doc.txt') || '').includes('line 40'))
  const mark = 'SAVED-' + crypto.randomBytes(3).toString('hex') + ' '
  a.files.get('doc.txt').insert(0, mark)
  await waitFor('the edit on disk', async () => ((await fileOnDisk(owner, pid, 'doc.txt')) || '').startsWith(mark), 20000)
  const r = await pushLine30(dir)
  assert(r.status === 0, 'push: ' + r.out)
  const both = t => (t || '').startsWith(mark + 'line 1\n') && t.includes('\nline 30 PUSHED\n')
  await waitFor('both on disk', async () => both(await fileOnDisk(owner, pid, 'doc.txt')), 20000)
  await waitFor('both in the document', () => both(a.text('doc.txt')), 20000)
  await sleep(100)
}, 90000)

fs.rmSync(TMP, { recursive: true, force: true })
process.exit(failures() ? 1 : 0)
