// drive.mjs: load driver for y-websocket servers: R rooms x C clients sending Yjs text edits at a fixed rate; fan-out latency, throughput, server CPU and RSS.
//
// usage: node drive.mjs --url ws://127.0.0.1:PORT/project --rooms R --clients C --rate EDITS_PER_S_PER_CLIENT
//          --seconds S [--doc-bytes B] [--token T] [--room-ids FILE] [--server-pid PID] [--procs N] [--json]
// Each room first gets one client that inserts --doc-bytes of text (the "1 MB document"), then R*C
// clients connect and each inserts "~<client>:<seq>~" plus filler into its own Y.Text at the given
// rate. A receiver finds the markers in the raw update bytes (Yjs stores strings as UTF-8), so the
// latency from the sender's send() to every receiver's message event is measured without decoding.
// Rooms are split over --procs driver processes; each reports its own CPU so the driver can be shown
// not to be the bottleneck.
import { fork } from 'node:child_process'
import fs from 'node:fs'
import WebSocket from 'ws'
import * as Y from 'yjs'
import * as encoding from 'lib0/encoding'

const args = Object.fromEntries(process.argv.slice(2).reduce((acc, a, i, all) => {
  if (a.startsWith('--')) acc.push([a.slice(2), all[i + 1] && !all[i + 1].startsWith('--') ? all[i + 1] : '1'])
  return acc
}, []))
const R = +(args.rooms || 10); const C = +(args.clients || 5); const RATE = +(args.rate || 5)
const SECONDS = +(args.seconds || 10); const DOC_BYTES = +(args['doc-bytes'] || 0)
const PROCS = +(args.procs || 1)
const roomIds = args['room-ids'] ? fs.readFileSync(args['room-ids'], 'utf8').split('\n').filter(Boolean)
  : Array.from({ length: R }, (_, i) => `bench-room-${i}-${process.pid}`)

function sleep (ms) { return new Promise(resolve => setTimeout(resolve, ms)) }

function procStat (pid) {
  try {
    const f = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ')
    const ticks = +f[11] + +f[12]
    const rss = +fs.readFileSync(`/proc/${pid}/statm`, 'utf8').split(' ')[1] * 4096
    return { cpu: ticks / 100, rss }
  } catch (e) { return null }
}

function updateMsg (update) {
  const e = encoding.createEncoder()
  encoding.writeVarUint(e, 0); encoding.writeVarUint(e, 2); encoding.writeVarUint8Array(e, update)
  return encoding.toUint8Array(e)
}

function connect (room) {
  const q = args.token ? `?token=${args.token}` : ''
  const ws = new WebSocket(`${args.url}/${room}${q}`, { perMessageDeflate: false })
  ws.binaryType = 'nodebuffer'
  return new Promise((resolve, reject) => {
    let first = true
    ws.on('message', () => { if (first) { first = false; resolve(ws) } })
    ws.on('error', reject)
    ws.on('close', code => { if (first) reject(new Error('closed ' + code)) })
  })
}

// ------------------------------------------------------------------ one driver process

async function runRooms (rooms, clientBase) {
  // 1. the documents (their loaders stay connected, so the rooms stay loaded)
  const loaders = []
  if (DOC_BYTES > 0) {
    const chunk = 'lorem ipsum dolor sit amet, consectetur adipiscing elit. '.repeat(4096).slice(0, 200000)
    await Promise.all(rooms.map(async room => {
      const ws = await connect(room)
      const doc = new Y.Doc()
      doc.on('update', u => ws.send(updateMsg(u)))
      const text = new Y.Text()
      doc.getMap('files').set('big.txt', text)
      for (let n = 0; n < DOC_BYTES; n += chunk.length) text.insert(text.length, chunk.slice(0, Math.min(chunk.length, DOC_BYTES - n)))
      loaders.push(ws)
    }))
    await sleep(2000)
  }
  if (process.send) process.send({ phase: 'loaded' })
  await new Promise(resolve => process.send ? process.once('message', resolve) : resolve())

  // 2. the clients
  const sent = new Map()
  const lat = []
  let deliveries = 0; let updates = 0; let closed = 0
  const clients = []
  for (const [ri, room] of rooms.entries()) {
    for (let k = 0; k < C; k++) {
      const id = clientBase + ri * C + k
      const ws = await connect(room)
      const doc = new Y.Doc()
      const text = new Y.Text()
      doc.getMap('files').set(`c${id}.txt`, text)
      const c = { id, ws, doc, text, seq: 0, pending: null }
      ws.send(updateMsg(Y.encodeStateAsUpdate(doc))) // the key, before the timed edits
      doc.on('update', u => { c.pending = u })
      ws.on('message', data => {
        if (data[0] !== 0 || data[1] !== 2) return
        const now = performance.now()
        const s = data.toString('latin1')
        const re = /~(\d+):(\d+)~/g
        let m
        while ((m = re.exec(s)) !== null) {
          const t0 = sent.get(m[1] + ':' + m[2])
          if (t0 !== undefined) { lat.push(now - t0); deliveries++ }
        }
      })
      ws.on('close', () => { closed++ })
      clients.push(c)
    }
  }
  await sleep(500)
  // 3. edits at the fixed rate, spread over each second
  const cpu0 = process.cpuUsage()
  const t0 = performance.now()
  const interval = 1000 / RATE
  // each client's k-th edit is due at t0 + offset + k * interval (no drift when the loop is late)
  const timers = clients.map((c, i) => {
    const offset = (i * interval / clients.length) % interval
    return setTimeout(function tick () {
      if (performance.now() - t0 > SECONDS * 1000) return
      const seq = c.seq++
      c.text.insert(0, `~${c.id}:${seq}~ edit `)
      const msg = updateMsg(c.pending)
      sent.set(c.id + ':' + seq, performance.now())
      c.ws.send(msg)
      updates++
      timers[i] = setTimeout(tick, Math.max(0, t0 + offset + c.seq * interval - performance.now()))
    }, offset)
  })
  await sleep(SECONDS * 1000 + 2000)
  const cpu = process.cpuUsage(cpu0)
  for (const c of clients) c.ws.terminate()
  for (const ws of loaders) ws.terminate()
  return { updates, deliveries, expected: updates * C, lat, closed, driverCpu: (cpu.user + cpu.system) / 1e6 / (SECONDS + 2) }
}

function pct (sorted, p) { return sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] : NaN }

// ------------------------------------------------------------------ the coordinator

if (args.worker) {
  const mine = JSON.parse(args.worker)
  const res = await runRooms(mine.rooms, mine.base)
  // exit only once the (large) result went through the IPC channel
  process.send({ phase: 'done', res }, () => process.exit(0))
} else {
  const pid = args['server-pid'] ? +args['server-pid'] : null
  const before = pid ? procStat(pid) : null
  const parts = Array.from({ length: PROCS }, () => [])
  roomIds.slice(0, R).forEach((r, i) => parts[i % PROCS].push(r))
  const kids = parts.map((rooms, i) => fork(new URL(import.meta.url).pathname,
    [...process.argv.slice(2), '--worker', JSON.stringify({ rooms, base: i * 100000 })], { stdio: 'inherit' }))
  await Promise.all(kids.map(k => new Promise(resolve => k.once('message', resolve))))
  await sleep(1000)
  const loaded = pid ? procStat(pid) : null
  const cpuStart = pid ? procStat(pid) : null
  const t0 = performance.now()
  const results = kids.map(k => new Promise(resolve => k.on('message', m => { if (m.phase === 'done') resolve(m.res) })))
  kids.forEach(k => k.send('go'))
  const all = await Promise.all(results)
  const wall = (performance.now() - t0) / 1000
  const end = pid ? procStat(pid) : null
  const lat = all.flatMap(r => r.lat).sort((a, b) => a - b)
  const updates = all.reduce((a, r) => a + r.updates, 0)
  const deliveries = all.reduce((a, r) => a + r.deliveries, 0)
  const expected = all.reduce((a, r) => a + r.expected, 0)
  const out = {
    rooms: R, clients: C, rate: RATE, seconds: SECONDS, docBytes: DOC_BYTES,
    offeredUpdatesPerSec: R * C * RATE,
    updatesPerSec: +(updates / SECONDS).toFixed(0),
    deliveredPerSec: +(deliveries / SECONDS).toFixed(0),
    deliveryRatio: +(deliveries / Math.max(1, expected)).toFixed(4),
    p50ms: +pct(lat, 0.5).toFixed(2),
    p99ms: +pct(lat, 0.99).toFixed(2),
    closed: all.reduce((a, r) => a + r.closed, 0),
    driverCpuPerProc: all.map(r => +r.driverCpu.toFixed(2)),
    serverCpu: end && cpuStart ? +((end.cpu - cpuStart.cpu) / wall).toFixed(2) : null,
    serverRssMB: end ? +(end.rss / 1048576).toFixed(1) : null,
    rssPerRoomMB: loaded && before ? +((loaded.rss - before.rss) / R / 1048576).toFixed(2) : null
  }
  console.log(args.json ? JSON.stringify(out) : out)
  process.exit(0)
}
