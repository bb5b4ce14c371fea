// bench_yjs.mjs: the same phases as bench_core.c, with yjs under node (one process per run).
import fs from 'node:fs'
import zlib from 'node:zlib'
import * as Y from 'yjs'
const t = JSON.parse(zlib.gunzipSync(fs.readFileSync(process.argv[2])))
const now = () => performance.now()
const edits = []
for (const txn of t.txns) for (const p of txn.patches) edits.push(p)
let doc = new Y.Doc(); doc.clientID = 1
let t0 = now()
const text = new Y.Text(); doc.getMap('files').set('paper.tex', text)
for (const [pos, del, ins] of edits) { if (del) text.delete(pos, del); if (ins) text.insert(pos, ins) }
const replay = now() - t0
const rssReplay = process.memoryUsage().rss
t0 = now(); const enc = Y.encodeStateAsUpdate(doc); const encode = now() - t0
t0 = now(); const d2 = new Y.Doc(); Y.applyUpdate(d2, enc); const s = d2.getMap('files').get('paper.tex').toString(); const decode = now() - t0
if (s !== t.endContent) throw new Error('yjs replay mismatch')
doc = new Y.Doc(); doc.clientID = 1
const ups = []; doc.on('update', u => ups.push(u))
t0 = now()
const text2 = new Y.Text(); doc.getMap('files').set('paper.tex', text2)
for (const [pos, del, ins] of edits) { if (del) text2.delete(pos, del); if (ins) text2.insert(pos, ins) }
const capture = now() - t0
const d3 = new Y.Doc()
t0 = now(); for (const u of ups) Y.applyUpdate(d3, u); const remote = now() - t0
if (process.argv[3]) fs.writeFileSync(process.argv[3], enc)
console.log(JSON.stringify({ impl: 'yjs', edits: edits.length, replay_ms: +replay.toFixed(1), encode_ms: +encode.toFixed(2), decode_ms: +decode.toFixed(2), bytes: enc.length, rss_after_replay_kb: Math.round(rssReplay / 1024), capture_ms: +capture.toFixed(1), remote_apply_ms: +remote.toFixed(1), peak_rss_kb: Math.round(process.resourceUsage().maxRSS) }))
