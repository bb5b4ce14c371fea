// setup-projects.mjs: signs up a bench user and creates N blank projects through the API; prints the token, writes the ids to FILE.
// usage: node setup-projects.mjs BASE_URL N FILE
import crypto from 'node:crypto'
import fs from 'node:fs'

const [base, n, file] = process.argv.slice(2)
async function api (method, path, body, token) {
  const r = await fetch(base + path, {
    method,
    headers: { 'Content-Type': 'application/json', ...(token ? { Authorization: 'Bearer ' + token } : {}) },
    body: body ? JSON.stringify(body) : undefined
  })
  return { status: r.status, body: await r.json().catch(() => null) }
}
const email = `bench-${crypto.randomBytes(5).toString('hex')}@example.test`
const s = await api('POST', '/auth/signup', { email, password: 'pw-' + crypto.randomBytes(8).toString('hex'), displayName: 'Bench' })
const token = s.body.accessToken
const me = await api('GET', '/auth/me', null, token)
const wid = (s.body.workspace && s.body.workspace.id) || (me.body.workspace && me.body.workspace.id) || me.body.workspaces[0].id
const ids = []
for (let i = 0; i < +n; i++) {
  const r = await api('POST', `/workspaces/${wid}/projects`, { name: 'bench ' + i, template: 'blank' }, token)
  if (r.status !== 201) throw new Error('create: ' + JSON.stringify(r.body))
  ids.push(r.body.id)
}
fs.writeFileSync(file, ids.join('\n') + '\n')
console.log(token)
