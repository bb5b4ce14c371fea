// harness.mjs: what the node test files of svc-wsd share (tests/wsd/wsd.test.mjs, tests/cluster/wsd_failover.mjs):
// waiting, assertions, the JSON API, and a runner printing "ok - NAME" / "not ok - NAME" / "# skip - NAME: why".

// sleep(ms): resolves after ms milliseconds.
export function sleep (ms) { return new Promise(resolve => setTimeout(resolve, ms)) }

// waitFor(what, fn, ms): polls fn (sync or async) every 50 ms until it returns a truthy value, which it resolves
// to; throws "timed out waiting for WHAT" (with fn's last error) after ms milliseconds.
export async function waitFor (what, fn, ms = 15000) {
  const end = Date.now() + ms
  let last
  while (Date.now() < end) {
    try { last = await fn(); if (last) return last } catch (e) { last = e }
    await sleep(50)
  }
  throw new Error('timed out waiting for ' + what + (last instanceof Error ? ': ' + last.message : ''))
}

export function assert (cond, msg) { if (!cond) throw new Error('assertion failed: ' + msg) }

// apiClient(base): api(method, path, body, token) against the JSON API at base (http://host:port/api), resolving
// to {status, body (parsed JSON or null), text}.
export function apiClient (base) {
  return async function api (method, path, body, token) {
    const headers = { Accept: 'application/json' }
    if (token) headers.Authorization = 'Bearer ' + token
    if (body !== undefined) headers['Content-Type'] = 'application/json'
    else if (method !== 'GET') headers['Content-Length'] = '0'
    const r = await fetch(base + path, { method, headers, body: body !== undefined ? JSON.stringify(body) : undefined })
    const text = await r.text()
    let json = null
    try { json = JSON.parse(text) } catch (e) {}
    return { status: r.status, body: json, text }
  }
}

// Thrown by a test that cannot run here: printed as "# skip - NAME: message", counted neither way.
export class Skip extends Error {}

// runner(prefix): {test(name, fn, ms), cleanups, failures()}: test runs fn with a time limit, prints its line
// (names prefixed), then runs and empties cleanups (functions pushed by the test's clients) last first.
// A stock y-websocket client logs each message type it does not know (the comments): those lines are dropped.
// SVC_TEST_NAME (a regular expression), when set, runs only the tests whose names match it (one test
// against a stack kept with SVC_TEST_KEEP=1).
export function runner (prefix = '') {
  const only = process.env.SVC_TEST_NAME ? new RegExp(process.env.SVC_TEST_NAME) : null
  let failures = 0
  const cleanups = []
  const consoleError = console.error
  console.error = (...args) => { if (!String(args[0]).includes('Unable to compute message')) consoleError(...args) }
  async function test (name, fn, ms = 60000) {
    let timer
    if (only && !only.test(prefix + name)) return
    try {
      await Promise.race([fn(), new Promise((resolve, reject) => { timer = setTimeout(() => reject(new Error('test timed out')), ms) })])
      console.log('ok - ' + prefix + name)
    } catch (e) {
      if (e instanceof Skip) {
        console.log(`# skip - ${prefix}${name}: ${e.message}`)
      } else {
        failures++
        console.log('not ok - ' + prefix + name)
        consoleError('# ' + String(e && e.stack ? e.stack : e).split('\n').join('\n# '))
      }
    } finally {
      clearTimeout(timer)
      while (cleanups.length) { try { cleanups.pop()() } catch (e) {} }
    }
  }
  return { test, cleanups, failures: () => failures }
}
