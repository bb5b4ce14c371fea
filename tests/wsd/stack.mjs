// stack.mjs: what the node test files of svc-wsd against the test stack share (tests/wsd/wsd.test.mjs,
// tests/wsd/awareness.test.mjs): its settings, accounts and projects made through the API, raw
// sockets, y-protocols frames, and private daemons of the stack's settings with some overridden.
//
// Environment (set by ./svc-dev test): SVC_BASE_URL, SVC_WS_URL (lighttpd), SVC_TEST_APACHE_WS_URL,
// SVC_TEST_CONFIG (the settings file), SVC_TEST_WSD_LOG, SVC_TEST_ASAN_OPTIONS / SVC_TEST_UBSAN_OPTIONS;
// argv[2] = the build directory holding wsd/svc-wsd.
import { spawn } from 'node:child_process'
import crypto from 'node:crypto'
import fs from 'node:fs'
import net from 'node:net'
import WebSocket from 'ws'
import * as encoding from 'lib0/encoding'
import * as decoding from 'lib0/decoding'
import { apiClient, assert, sleep, waitFor } from './harness.mjs'

export const BUILD = process.argv[2]
export const BASE = process.env.SVC_BASE_URL
export const WS_URL = process.env.SVC_WS_URL + '/ws/project'
export const APACHE_WS_URL = process.env.SVC_TEST_APACHE_WS_URL ? process.env.SVC_TEST_APACHE_WS_URL + '/ws/project' : null
export const CONFIG = process.env.SVC_TEST_CONFIG
export const APP_ORIGIN = new URL(process.env.SVC_BASE_URL).origin
export const conf = Object.fromEntries(fs.readFileSync(CONFIG, 'utf8').split('\n')
  .filter(l => l && !l.startsWith('#') && l.includes('=')).map(l => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]))
export const WSD_DIRECT = `ws://127.0.0.1:${conf.SVC_WS_PORT}`
export const api = apiClient(BASE)

// signup(tag): a new account with its own workspace: {token, wid, uid, name ("WSD <tag>")}.
export async function signup (tag) {
  const email = `wsd-${tag}-${crypto.randomBytes(5).toString('hex')}@example.test`
  const name = 'WSD ' + tag
  const r = await api('POST', '/auth/signup', { email, password: 'pw-' + crypto.randomBytes(8).toString('hex'), displayName: name })
  assert(r.status === 200 || r.status === 201, 'signup: ' + r.text)
  const token = r.body.accessToken
  const me = await api('GET', '/auth/me', undefined, token)
  const wid = (r.body.workspace && r.body.workspace.id) || (me.body.workspace && me.body.workspace.id) ||
    (me.body.workspaces && me.body.workspaces[0].id) || r.body.workspaceId
  const uid = (r.body.user && r.body.user.id) || (me.body.user && me.body.user.id) || me.body.id
  assert(wid && uid, 'no workspace or user id: ' + me.text)
  return { token, wid, uid, name }
}

// createProject(acct): a new todo-app project in acct's workspace; resolves to its id.
export async function createProject (acct) {
  const r = await api('POST', `/workspaces/${acct.wid}/projects`, { name: 'WSD ' + crypto.randomBytes(3).toString('hex'), template: 'todo-app' }, acct.token)
  assert(r.status === 201, 'create project: ' + r.text)
  return r.body.id
}

// frame(...parts): numbers as varUint, byte arrays as varUint8Array, one after the other.
export function frame (...parts) {
  const e = encoding.createEncoder()
  for (const p of parts) {
    if (typeof p === 'number') encoding.writeVarUint(e, p)
    else encoding.writeVarUint8Array(e, p)
  }
  return encoding.toUint8Array(e)
}

// [1, varUint8Array(awareness update of one client)]
export function awarenessFrame (client, clock, state) {
  const u = encoding.createEncoder()
  encoding.writeVarUint(u, 1); encoding.writeVarUint(u, client); encoding.writeVarUint(u, clock)
  encoding.writeVarString(u, JSON.stringify(state))
  return frame(1, encoding.toUint8Array(u))
}

// awareness entries for several clients in one message: [1, varUint8Array(update)]
export function awarenessFrameMany (entries) {
  const u = encoding.createEncoder()
  encoding.writeVarUint(u, entries.length)
  for (const [client, clock, state] of entries) {
    encoding.writeVarUint(u, client); encoding.writeVarUint(u, clock); encoding.writeVarString(u, JSON.stringify(state))
  }
  return frame(1, encoding.toUint8Array(u))
}

// The entries of an awareness message: [{client, clock, state}]
export function awarenessEntries (data) {
  const d = decoding.createDecoder(data)
  if (decoding.readVarUint(d) !== 1) return []
  const u = decoding.createDecoder(decoding.readVarUint8Array(d))
  const n = decoding.readVarUint(u)
  const out = []
  for (let i = 0; i < n; i++) out.push({ client: decoding.readVarUint(u), clock: decoding.readVarUint(u), state: JSON.parse(decoding.readVarString(u)) })
  return out
}

async function freePort () {
  const srv = net.createServer()
  await new Promise(resolve => srv.listen(0, '127.0.0.1', resolve))
  const port = srv.address().port
  await new Promise(resolve => srv.close(resolve))
  return port
}

// withCleanups(cleanups): {raw, privateWsd}, which push what ends their sockets and daemons onto
// the runner's cleanups (harness.mjs runner()).
export function withCleanups (cleanups) {
  // A raw socket for protocol-level checks: collects messages, records the close.
  function raw (url, headers = {}) {
    const ws = new WebSocket(url, { headers })
    ws.binaryType = 'nodebuffer'
    const r = { ws, msgs: [], closed: null, error: null, opened: false }
    ws.on('open', () => { r.opened = true })
    ws.on('message', (data, isBinary) => r.msgs.push({ data: new Uint8Array(data), isBinary }))
    ws.on('close', (code, reason) => { r.closed = { code, reason: reason.toString() } })
    ws.on('error', e => { r.error = e })
    ws.on('unexpected-response', (req, res) => { r.error = new Error('HTTP ' + res.statusCode); ws.terminate() })
    cleanups.push(() => { try { ws.terminate() } catch (e) {} })
    r.types = () => r.msgs.map(m => m.data[0])
    r.open = () => waitFor('socket open', () => r.opened || r.error || r.closed)
    return r
  }

  // A second svc-wsd of the test stack's settings with some overridden (limits, timeouts), on a free
  // port; rooms of its own projects only. stop() ends it with SIGTERM (it saves its rooms first).
  async function privateWsd (overrides) {
    const port = await freePort()
    const env = { PATH: process.env.PATH, HOME: process.env.HOME || '/root', LANG: 'C.UTF-8', SVC_CONFIG: CONFIG, SVC_WS_PORT: String(port), ...overrides }
    if (process.env.SVC_TEST_ASAN_OPTIONS) {
      env.ASAN_OPTIONS = process.env.SVC_TEST_ASAN_OPTIONS
      env.UBSAN_OPTIONS = process.env.SVC_TEST_UBSAN_OPTIONS
    }
    const log = fs.openSync(process.env.SVC_TEST_WSD_LOG, 'a')
    const child = spawn(BUILD + '/wsd/svc-wsd', [], { env, stdio: ['ignore', log, log] })
    const exited = new Promise(resolve => child.once('exit', resolve))
    const w = {
      url: `ws://127.0.0.1:${port}/project`,
      async stop () { child.kill('SIGTERM'); await Promise.race([exited, sleep(15000).then(() => child.kill('SIGKILL'))]) },
      async kill () { child.kill('SIGKILL'); await exited }
    }
    cleanups.push(() => { child.kill('SIGTERM') })
    await waitFor('private svc-wsd listening', async () => {
      try { const r = await fetch(`http://127.0.0.1:${port}/internal/status`); return r.status === 401 } catch (e) { return false }
    })
    return w
  }

  return { raw, privateWsd }
}
