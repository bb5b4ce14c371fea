// ref-server.mjs: the reference y-websocket server, @y/websocket-server 0.1.1 (setupWSConnection, gc on, no persistence), on 127.0.0.1:PORT.
import http from 'node:http'
import { WebSocketServer } from 'ws'
import { setupWSConnection } from '@y/websocket-server/utils'

const port = +(process.argv[2] || 1234)
const server = http.createServer((req, res) => { res.writeHead(200, { 'Content-Type': 'text/plain' }); res.end('ok') })
const wss = new WebSocketServer({ noServer: true })
wss.on('connection', setupWSConnection)
server.on('upgrade', (req, socket, head) => wss.handleUpgrade(req, socket, head, ws => wss.emit('connection', ws, req)))
server.listen(port, '127.0.0.1', () => console.log('reference server on ' + port))
