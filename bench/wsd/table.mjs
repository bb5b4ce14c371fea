// table.mjs: turns bench/wsd/run.sh's JSON lines (stdin) into the markdown table of bench/README.md and each server's sustained throughput.
// Sustained: the highest offered rate at which the server kept up (achieved >= 99 % of offered,
// >= 99 % of the fan-out delivered) with p99 under P99_MS (100 ms).
import fs from 'node:fs'

const P99_MS = +(process.env.P99_MS || 100)
const rows = fs.readFileSync(0, 'utf8').split('\n').filter(Boolean).map(l => JSON.parse(l))
const fmt = n => n.toLocaleString('en-US')
console.log('| offered updates/s | server | achieved updates/s | deliveries/s (ratio) | p50 ms | p99 ms | server CPU (cores) | driver CPU (cores) | RSS per room (1 MB doc) | load avg |')
console.log('|--:|---|--:|--:|--:|--:|--:|--:|--:|--:|')
for (const r of rows) {
  console.log(`| ${fmt(r.offeredUpdatesPerSec)} | ${r.server} | ${fmt(r.updatesPerSec)} | ${fmt(r.deliveredPerSec)} (${(r.deliveryRatio * 100).toFixed(1)} %) | ${r.p50ms} | ${r.p99ms} | ${r.serverCpu} | ${r.driverCpu} | ${r.rssPerRoomMB} MB | ${r.load} |`)
}
console.log()
const ok = r => r.updatesPerSec >= 0.99 * r.offeredUpdatesPerSec && r.deliveryRatio >= 0.99 && r.p99ms < P99_MS
for (const s of [...new Set(rows.map(r => r.server))]) {
  const good = rows.filter(r => r.server === s && ok(r)).map(r => r.offeredUpdatesPerSec)
  const rss = rows.filter(r => r.server === s).map(r => r.rssPerRoomMB)
  console.log(`- ${s}: sustained ${good.length ? fmt(Math.max(...good)) : 'none'} updates/s at p99 < ${P99_MS} ms; RSS per room ${Math.min(...rss)}–${Math.max(...rss)} MB`)
}
