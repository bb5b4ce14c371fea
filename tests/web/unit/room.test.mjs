// room.test.mjs: web/src/lib/room.js against an in-memory y-websocket server (y-protocols sync
// and awareness, echoing updates to the sender like svc-wsd): the document syncs, the state goes
// connecting → connected → reconnecting → connected, edits made while the socket is down are
// pending until the server confirms them and then reach the other client, custom message types
// are framed and delivered (also those that came before the first listener), people() folds tabs.
import { test } from 'node:test';
import assert from 'node:assert/strict';
// web/'s own copies (the files its ESM imports resolve to): one Yjs instance with room.js
import * as Y from '../../../web/node_modules/yjs/dist/yjs.mjs';
import * as syncProtocol from '../../../web/node_modules/y-protocols/sync.js';
import * as awarenessProtocol from '../../../web/node_modules/y-protocols/awareness.js';
import * as encoding from '../../../web/node_modules/lib0/encoding.js';
import * as decoding from '../../../web/node_modules/lib0/decoding.js';
import { openRoom, frame, ackedClock, people, confirmedPeople, colorFor } from '../../../web/src/lib/room.js';

/** A room server: one Y.Doc, sockets that deliver asynchronously, a down switch. */
function makeServer() {
	const doc = new Y.Doc();
	const awareness = new awarenessProtocol.Awareness(doc);
	awareness.setLocalState(null);
	const socks = new Set();
	const custom = [];
	// people: what it answers to [101] (svc-wsd's people list); asked: how many sockets asked for it
	const srv = { doc, socks, custom, down: false, greet: [], people: [], asked: 0, close: () => (awareness.destroy(), doc.destroy()) };
	const send = (s, bytes) => setTimeout(() => s.readyState === 1 && s.onmessage && s.onmessage({ data: bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) }), 1);
	doc.on('update', (u) => {
		const e = encoding.createEncoder();
		encoding.writeVarUint(e, 0);
		syncProtocol.writeUpdate(e, u);
		for (const s of socks) send(s, encoding.toUint8Array(e));
	});
	class FakeSocket {
		constructor(url) {
			this.url = url;
			this.readyState = 0;
			setTimeout(() => {
				if (srv.down) {
					this.readyState = 3;
					this.onclose && this.onclose({ code: 1006 });
					return;
				}
				this.readyState = 1;
				socks.add(this);
				this.onopen && this.onopen();
				const e = encoding.createEncoder();
				encoding.writeVarUint(e, 0);
				syncProtocol.writeSyncStep1(e, doc);
				send(this, encoding.toUint8Array(e));
				for (const g of srv.greet) send(this, g);
			}, 2);
		}
		send(bytes) {
			if (this.readyState !== 1) return;
			const d = decoding.createDecoder(new Uint8Array(bytes));
			const type = decoding.readVarUint(d);
			if (type === 0) {
				const e = encoding.createEncoder();
				encoding.writeVarUint(e, 0);
				syncProtocol.readSyncMessage(d, e, doc, this);
				if (encoding.length(e) > 1) send(this, encoding.toUint8Array(e));
			} else if (type === 1) {
				const u = decoding.readVarUint8Array(d);
				for (const s of socks) send(s, frame(1, (() => { const e = encoding.createEncoder(); encoding.writeVarUint8Array(e, u); return encoding.toUint8Array(e); })()));
			} else if (type === 101) {
				srv.asked++;
				const e = encoding.createEncoder();
				encoding.writeVarUint(e, 101);
				encoding.writeVarString(e, JSON.stringify({ users: srv.people }));
				send(this, encoding.toUint8Array(e));
			} else custom.push({ type, payload: new Uint8Array(bytes).subarray(d.pos) });
		}
		close() {
			if (this.readyState === 3) return;
			this.readyState = 3;
			socks.delete(this);
			setTimeout(() => this.onclose && this.onclose({ code: 1000 }), 1);
		}
		drop() {
			this.readyState = 3;
			socks.delete(this);
			setTimeout(() => this.onclose && this.onclose({ code: 1006 }), 1);
		}
	}
	FakeSocket.OPEN = 1;
	FakeSocket.prototype.OPEN = 1;
	srv.WebSocket = FakeSocket;
	return srv;
}

const user = (id) => ({ id, name: 'User ' + id, color: colorFor(id) });
async function until(fn, what, ms = 3000) {
	const t0 = Date.now();
	while (!fn()) {
		if (Date.now() - t0 > ms) throw new Error('timed out: ' + what);
		await new Promise((r) => setTimeout(r, 5));
	}
}

test('frame() is [varUint type][payload]', () => {
	assert.deepEqual([...frame(100, Uint8Array.of(1, 2, 3))], [100, 1, 2, 3]);
	assert.deepEqual([...frame(300, Uint8Array.of())], [0xac, 0x02]);
});

test('ackedClock reads a state vector (step 1) and an update (step 2, update)', () => {
	const d = new Y.Doc();
	d.getText('t').insert(0, 'hello');
	assert.equal(ackedClock(0, Y.encodeStateVector(d), d.clientID), 5);
	assert.equal(ackedClock(2, Y.encodeStateAsUpdate(d), d.clientID), 5);
	assert.equal(ackedClock(2, Y.encodeStateAsUpdate(d), d.clientID + 1), 0);
	assert.equal(ackedClock(0, Uint8Array.of(0xff), d.clientID), 0);
});

test('two rooms sync a text; the state is connecting, then connected', async () => {
	const srv = makeServer();
	srv.doc.getMap('files').set('index.html', new Y.Text('<h1>Hi</h1>'));
	const a = openRoom('p1', { user: user('a'), url: 'ws://x/ws/project', WebSocket: srv.WebSocket });
	const b = openRoom('p1', { user: user('b'), url: 'ws://x/ws/project', WebSocket: srv.WebSocket });
	assert.equal(a.status.get().state, 'connecting');
	assert.equal(a.provider.url, 'ws://x/ws/project/p1');
	await until(() => a.status.get().state === 'connected' && b.status.get().state === 'connected', 'connected');
	assert.equal(a.doc.getMap('files').get('index.html').toString(), '<h1>Hi</h1>');
	a.doc.getMap('files').get('index.html').insert(4, 'Oh ');
	await until(() => b.doc.getMap('files').get('index.html').toString() === '<h1>Oh Hi</h1>', 'b sees a');
	await until(() => !a.status.get().pending, 'a confirmed');
	await until(() => people(a.awareness).length === 2, 'a sees b');
	assert.deepEqual(people(a.awareness).map((p) => [p.id, p.self]), [['a', true], ['b', false]]);
	a.close();
	b.close();
	srv.close();
});

test('edits made while the socket is down are pending, then reach the other room', async () => {
	const srv = makeServer();
	srv.doc.getMap('files').set('a.txt', new Y.Text('x'));
	const a = openRoom('p', { user: user('a'), url: 'ws://x', WebSocket: srv.WebSocket });
	const b = openRoom('p', { user: user('b'), url: 'ws://x', WebSocket: srv.WebSocket });
	await until(() => a.status.get().synced && b.status.get().synced, 'synced');
	const states = [];
	a.status.subscribe((s) => states.push(s.state));
	srv.down = true;
	for (const s of [...srv.socks]) if (s.url.startsWith('ws://x') && s === a.provider.ws) s.drop();
	await until(() => a.status.get().state === 'reconnecting', 'reconnecting');
	a.doc.getMap('files').get('a.txt').insert(1, 'yz');
	assert.equal(a.status.get().pending, true);
	assert.equal(b.doc.getMap('files').get('a.txt').toString(), 'x');
	srv.down = false;
	await until(() => a.status.get().state === 'connected', 'reconnected', 8000);
	await until(() => b.doc.getMap('files').get('a.txt').toString() === 'xyz', 'b got the offline edit');
	await until(() => !a.status.get().pending, 'confirmed');
	assert.ok(states.includes('reconnecting') && states.at(-1) === 'connected', states.join());
	a.close();
	b.close();
	srv.close();
});

test('custom messages: sent framed, delivered to listeners, kept until the first one', async () => {
	const srv = makeServer();
	const e = encoding.createEncoder();
	encoding.writeVarUint(e, 100);
	encoding.writeVarString(e, JSON.stringify({ type: 'design-comment:added', comment: { id: 'c1' } }));
	srv.greet.push(encoding.toUint8Array(e));
	const a = openRoom('p', { user: user('a'), url: 'ws://x', WebSocket: srv.WebSocket });
	assert.equal(a.sendMessage(100, Uint8Array.of(1)), false); // not open yet
	await until(() => a.status.get().state === 'connected', 'connected');
	await new Promise((r) => setTimeout(r, 20)); // the greeting arrived with no listener
	const got = [];
	const got2 = [];
	const off = a.onMessage(100, (d) => got.push(JSON.parse(decoding.readVarString(d))));
	assert.deepEqual(got, [{ type: 'design-comment:added', comment: { id: 'c1' } }]);
	a.onMessage(100, (d) => got2.push(JSON.parse(decoding.readVarString(d))));
	srv.socks.forEach((s) => s.onmessage({ data: encoding.toUint8Array(e).buffer }));
	assert.equal(got.length, 2);
	assert.equal(got2.length, 1); // each listener reads its own decoder
	off();
	srv.socks.forEach((s) => s.onmessage({ data: encoding.toUint8Array(e).buffer }));
	assert.equal(got.length, 2);
	assert.equal(got2.length, 2);
	const p = encoding.createEncoder();
	encoding.writeVarString(p, '{"type":"design-comment:add"}');
	assert.equal(a.sendMessage(100, encoding.toUint8Array(p)), true);
	assert.equal(srv.custom.length, 1);
	assert.equal(srv.custom[0].type, 100);
	assert.equal(decoding.readVarString(decoding.createDecoder(srv.custom[0].payload)), '{"type":"design-comment:add"}');
	a.close();
	srv.close();
});

test('people() lists each user once, the local one first, with the file they are in', () => {
	const d = new Y.Doc();
	const aw = new awarenessProtocol.Awareness(d);
	aw.setLocalState({ user: { id: 'me', name: 'Zed', color: '#000' } });
	aw.states.set(11, { user: { id: 'u2', name: 'Bea' }, file: 'a.css' });
	aw.states.set(12, { user: { id: 'u2', name: 'Bea' } });
	aw.states.set(13, { user: { id: 'u3', name: 'Al', color: '#123' } });
	aw.states.set(14, {});
	assert.deepEqual(people(aw), [
		{ id: 'me', name: 'Zed', color: '#000', self: true, file: null },
		{ id: 'u3', name: 'Al', color: '#123', self: false, file: null },
		{ id: 'u2', name: 'Bea', color: colorFor('u2'), self: false, file: 'a.css' },
	]);
	aw.destroy();
});

// issue 25 item 7: the page lists only the users svc-wsd confirmed, with the account's names.
test('confirmedPeople() lists the local user and the server\'s users only, with the server\'s names', () => {
	const d = new Y.Doc();
	const aw = new awarenessProtocol.Awareness(d);
	aw.setLocalState({ user: { id: 'me', name: 'Zed', color: '#000' }, file: 'index.html' });
	aw.states.set(11, { user: { id: 'u2', name: 'The boss' }, file: 'a.css' }); // u2 calls itself what it likes
	aw.states.set(12, { user: { id: 'u9', name: 'Ghost' } }); // nobody the server knows
	aw.states.set(13, {});
	const present = [
		{ id: 'u3', name: 'Al', canWrite: false }, // on the socket without an awareness state
		{ id: 'me', name: 'Zed (server)', canWrite: true },
		{ id: 'u2', name: 'Bea', canWrite: true },
	];
	const me = { id: 'me', name: 'Zed', color: '#000' };
	assert.deepEqual(confirmedPeople(aw, present, me), [
		{ id: 'me', name: 'Zed', color: '#000', self: true, file: 'index.html' },
		{ id: 'u3', name: 'Al', color: colorFor('u3'), self: false, file: null },
		{ id: 'u2', name: 'Bea', color: colorFor('u2'), self: false, file: 'a.css' },
	]);
	// before the server said who is there (or while the socket is down): only the local user
	assert.deepEqual(confirmedPeople(aw, null, me).map((p) => p.id), ['me']);
	assert.deepEqual(confirmedPeople(aw, [], me).map((p) => p.id), ['me']);
	aw.destroy();
});

test('a room asks svc-wsd who is there on each connect; present follows the answers and empties while down', async () => {
	const srv = makeServer();
	srv.people = [{ id: 'a', name: 'Ann', canWrite: true }, { id: 'b', name: 'Bob', canWrite: false }];
	const a = openRoom('p', { user: user('a'), url: 'ws://x', WebSocket: srv.WebSocket });
	assert.equal(a.present.get(), null);
	assert.deepEqual(a.user, user('a'));
	await until(() => a.present.get() !== null, 'the people list');
	assert.deepEqual(a.present.get(), srv.people);
	assert.equal(srv.asked, 1);
	assert.equal(srv.custom.length, 0); // the request is [101], nothing else
	// a malformed answer changes nothing; a new list replaces the old
	srv.socks.forEach((s) => s.onmessage({ data: Uint8Array.of(101, 3, 0x7b, 0x7d, 0x7d).buffer }));
	assert.deepEqual(a.present.get(), srv.people);
	const e = encoding.createEncoder();
	encoding.writeVarUint(e, 101);
	encoding.writeVarString(e, JSON.stringify({ users: [{ id: 'a', name: 'Ann', canWrite: true }, { id: 7 }, null] }));
	srv.socks.forEach((s) => s.onmessage({ data: encoding.toUint8Array(e).buffer }));
	assert.deepEqual(a.present.get(), [{ id: 'a', name: 'Ann', canWrite: true }]);
	srv.down = true;
	for (const s of [...srv.socks]) s.drop();
	await until(() => a.present.get() === null, 'emptied while down');
	srv.down = false;
	await until(() => srv.asked === 2 && a.present.get() !== null, 'asked again after the reconnect', 8000);
	a.close();
	srv.close();
});
