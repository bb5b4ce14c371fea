// prepare.mjs: turns the gzip JSON editing trace into "POS DEL HEXTEXT" lines for bench_core.c.
import fs from 'node:fs'
import zlib from 'node:zlib'
const [src, dst] = process.argv.slice(2)
const t = JSON.parse(zlib.gunzipSync(fs.readFileSync(src)))
const out = []
for (const txn of t.txns) for (const [pos, del, ins] of txn.patches) out.push(`${pos} ${del} ${Buffer.from(ins, 'utf8').toString('hex')}`)
fs.writeFileSync(dst, out.join('\n') + '\n')
console.log(out.length, 'edits; final length', t.endContent.length)
