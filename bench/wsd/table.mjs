// table.mjs: turns bench/wsd/run.sh's JSON lines (stdin) into the markdown tables of bench/README.md: every run, then each server's sustained throughput at several p99 bounds and the ratios.
// A rate is kept up in one run when achieved >= 99 % of offered, >= 99 % of the fan-out was
// delivered and p99 < the bound. Sustained at a bound: the highest offered rate that was kept up
// in every run, with every lower rate of the sweep kept up in every run too (one bad run of a
// lower rate ends the count: the figure never rests on luck).
import fs from 'node:fs'

const BOUNDS = (process.env.P99_BOUNDS || '25 50 100 250 1000').split(/\s+/).map(Number)
const rows = fs.readFileSync(0, 'utf8').split('\n').filter(Boolean).map(l => JSON.parse(l))
const fmt = n => n.toLocaleString('en-US')
const median = a => { const s = [...a].sort((x, y) => x - y); return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2 }
const servers = [...new Set(rows.map(r => r.server))]

console.log('| offered updates/s | server | run | achieved updates/s | deliveries/s (ratio) | p50 ms | p99 ms | server CPU (cores) | driver CPU (cores) | RSS per room (1 MB doc) | load avg |')
console.log('|--:|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|')
const sorted = [...rows].sort((a, b) => a.offeredUpdatesPerSec - b.offeredUpdatesPerSec || servers.indexOf(a.server) - servers.indexOf(b.server) || (a.run || 1) - (b.run || 1))
for (const r of sorted) {
  console.log(`| ${fmt(r.offeredUpdatesPerSec)} | ${r.server} | ${r.run || 1} | ${fmt(r.updatesPerSec)} | ${fmt(r.deliveredPerSec)} (${(r.deliveryRatio * 100).toFixed(1)} %) | ${r.p50ms} | ${r.p99ms} | ${r.serverCpu} | ${r.driverCpu} | ${r.rssPerRoomMB} MiB | ${r.load} |`)
}
console.log()

const keptUp = (r, bound) => r.updatesPerSec >= 0.99 * r.offeredUpdatesPerSec && r.deliveryRatio >= 0.99 && r.p99ms < bound
function sustained (server, bound) {
  const mine = rows.filter(r => r.server === server)
  const rates = [...new Set(mine.map(r => r.offeredUpdatesPerSec))].sort((a, b) => a - b)
  let best = 0
  for (const rate of rates) {
    if (!mine.filter(r => r.offeredUpdatesPerSec === rate).every(r => keptUp(r, bound))) break
    best = rate
  }
  return best
}

console.log('| server | ' + BOUNDS.map(b => `sustained, p99 < ${fmt(b)} ms`).join(' | ') + ' | RSS per room (median, min–max) | server CPU at the highest rate every server kept up |')
console.log('|---|' + BOUNDS.map(() => '--:|').join('') + '--:|--:|')
const common = Math.max(0, ...[...new Set(rows.map(r => r.offeredUpdatesPerSec))].filter(rate => servers.every(s => rows.filter(r => r.server === s && r.offeredUpdatesPerSec === rate).every(r => keptUp(r, Infinity)))))
const stats = {}
for (const s of servers) {
  const rss = rows.filter(r => r.server === s).map(r => r.rssPerRoomMB)
  const cpu = rows.filter(r => r.server === s && r.offeredUpdatesPerSec === common).map(r => r.serverCpu)
  stats[s] = { rss: median(rss), cpu: cpu.length ? median(cpu) : NaN, sus: BOUNDS.map(b => sustained(s, b)) }
  const top = Math.max(...rows.map(r => r.offeredUpdatesPerSec))
  console.log(`| ${s} | ${stats[s].sus.map(v => v ? fmt(v) + '/s' + (v === top ? ' (all tried)' : '') : 'none').join(' | ')} | ${stats[s].rss.toFixed(2)} MiB (${Math.min(...rss)}–${Math.max(...rss)}) | ${isNaN(stats[s].cpu) ? '–' : stats[s].cpu.toFixed(2) + ' at ' + fmt(common) + '/s'} |`)
}
const [mine, ref] = [servers.find(s => s === 'svc-wsd'), servers.find(s => s.startsWith('@y/websocket-server'))]
if (mine && ref) {
  const top = Math.max(...rows.map(r => r.offeredUpdatesPerSec))
  const ratio = (a, b) => b ? (a === top ? '≥ ' : '') + (a / b).toFixed(1) + '×' : (a ? '> any' : '–')
  console.log(`| ratio svc-wsd / reference | ${BOUNDS.map((b, i) => ratio(stats[mine].sus[i], stats[ref].sus[i])).join(' | ')} | ${(100 * stats[mine].rss / stats[ref].rss).toFixed(0)} % | ${(stats[mine].cpu / stats[ref].cpu).toFixed(2)}× |`)
}
