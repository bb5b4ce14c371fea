// room.js: the project page's one connection to svc-wsd (docs/collaboration.md): the project's
// Yjs document, synced by y-websocket's WebsocketProvider at /ws/project/<id> (authorised by the
// session cookie), the y-protocols awareness (who is here, cursors), the connection state, and
// the room's custom message types (100: design comments). Every feature that talks to the
// socket goes through the room that project.jsx opens and provides (useRoom()); none opens a
// socket of its own. docs/web.md "The room" says how to add one.
import * as Y from 'yjs';
import { WebsocketProvider } from 'y-websocket';
import * as encoding from 'lib0/encoding';
import * as decoding from 'lib0/decoding';
import { createContext } from 'preact';
import { useContext, useEffect, useState } from 'preact/hooks';
import { createStore } from './store.js';
import { refreshSession } from './api.js';

const MSG_SYNC = 0;
const MSG_AUTH = 2;
/** svc-wsd's people list: we send [101] once per socket, it answers [101, varString({users})] now and on changes. */
const MSG_PEOPLE = 101;
const SYNC_STEP1 = 0;
/** Messages of a custom type kept for a listener that subscribes later (per type). */
const KEEP_UNHANDLED = 2000;
/** The custom types the server sends (kept until their first listener): 100 design comments. */
const CUSTOM_TYPES = [100];

/** frame(type, payload): one room message, [varUint type][payload bytes] (lib0 encoding). */
export function frame(type, payload) {
	const e = encoding.createEncoder();
	encoding.writeVarUint(e, type);
	encoding.writeUint8Array(e, payload);
	return encoding.toUint8Array(e);
}

/**
 * ackedClock(sub, payload, clientId): how much of clientId's own changes a sync message from
 * the server shows the server has: for sync step 1 the server's state vector entry, for step 2
 * and updates the end clock of clientId's structs in the update (Y.parseUpdateMeta); 0 when
 * the message says nothing about clientId. sub: y-protocols sync message type (0, 1, 2);
 * payload: its varUint8Array (state vector or update).
 */
export function ackedClock(sub, payload, clientId) {
	try {
		if (sub === SYNC_STEP1) return Y.decodeStateVector(payload).get(clientId) || 0;
		return Y.parseUpdateMeta(payload).to.get(clientId) || 0;
	} catch (e) {
		return 0;
	}
}

const isOffline = () => typeof navigator !== 'undefined' && navigator.onLine === false;

/** colorFor(id): a stable colour of a user (cursor and avatar), from a fixed palette. */
const PALETTE = ['#2f6fdf', '#d6336c', '#2b8a3e', '#e8590c', '#7048e8', '#0c8599', '#c2255c', '#5c940d', '#9c36b5', '#1971c2'];
export function colorFor(id) {
	let h = 0;
	for (const ch of String(id)) h = (h * 31 + ch.charCodeAt(0)) >>> 0;
	return PALETTE[h % PALETTE.length];
}

/**
 * openRoom(projectId, {user: {id, name, color}, readOnly, url, WebSocket}): connects to the
 * project's room and returns it:
 *   doc        Y.Doc of the project (getMap('files'): path -> Y.Text, getMap('meta'))
 *   awareness  y-protocols Awareness; the local state is {user} (add fields with
 *              setLocalStateField, e.g. cursor); renewed every 15 s by y-protocols
 *   provider   the y-websocket WebsocketProvider
 *   status     store of {state: 'connecting'|'connected'|'reconnecting'|'offline',
 *              pending: bool (local edits the server has not confirmed yet), synced: bool
 *              (the document has been loaded from the server at least once), reason:
 *              string|null (why it is offline: 'network', or the server's refusal)}
 *   readOnly   as given: the server drops a viewer's edits; editors must not offer them
 *   user       as given (the local user)
 *   present    store of who has a socket in the room as svc-wsd knows them, [{id, name,
 *              canWrite}] (the account's name, one entry per user), or null before the server
 *              sent it and while the socket is down; confirmedPeople() reads it
 *   onMessage(type, fn) -> unsubscribe: fn(decoder) for each message of a custom type
 *              (>= 100), decoder a lib0 decoder at the payload (one per listener); messages
 *              that came before the first listener of a type are handed to it when it
 *              subscribes (the server sends open design comments on join). After a
 *              reconnect the server sends them again: listeners dedupe by id.
 *   sendMessage(type, payload: Uint8Array) -> bool: sends [type][payload] now; false when
 *              the socket is not open (nothing is queued)
 *   whenSaved(timeoutMs = 10000) -> Promise<bool>: resolves true once every change of the
 *              files has reached svc-wsd and been written to disk (meta.lastSavedAt changed
 *              after it), false after timeoutMs. File renames and deletes, which the API does
 *              on disk, wait for it so that no edit still in the document is lost.
 *   close()    leaves (awareness removed), closes the socket, destroys the document
 * url: default same origin /ws/project; WebSocket: an implementation for tests.
 * Going offline (the window's offline event) closes the socket at once; online reconnects.
 * A permission-denied answer (an access token that expired) refreshes the session once and
 * reconnects; a second refusal in a row leaves the room offline with the server's reason.
 */
export function openRoom(projectId, { user, readOnly = false, url, WebSocket: WS } = {}) {
	const doc = new Y.Doc();
	const base = url || `${location.protocol === 'https:' ? 'wss:' : 'ws:'}//${location.host}/ws/project`;
	let denied = null; // the server's refusal of the current socket
	let refusals = 0;
	const provider = new WebsocketProvider(base, projectId, doc, {
		disableBc: true, // the server is the one source of truth; tabs sync through it
		maxBackoffTime: 5000,
		shouldReconnect: () => denied === null,
		...(WS ? { WebSocketPolyfill: WS } : {}),
	});
	const awareness = provider.awareness;
	awareness.setLocalState({ user });
	const status = createStore({ state: 'connecting', pending: false, synced: false, reason: null });
	let everConnected = false;
	let closed = false;
	let acked = 0; // our own clock the server is known to have
	let unsaved = false; // the files changed since svc-wsd last saved them (whenSaved)
	const savedWaiters = new Set();

	const myClock = () => Y.getState(doc.store, doc.clientID);
	function update(patch) {
		const s = status.get();
		const n = { ...s, ...patch };
		n.pending = !readOnly && myClock() > acked;
		if (n.state !== s.state || n.pending !== s.pending || n.synced !== s.synced || n.reason !== s.reason) status.set(n);
		for (const w of [...savedWaiters]) w();
	}

	// Sync messages: note what the server confirms of ours, then let y-websocket handle them.
	const syncHandler = provider.messageHandlers[MSG_SYNC];
	provider.messageHandlers[MSG_SYNC] = (encoder, decoder, ...rest) => {
		try {
			const d = decoding.createDecoder(decoder.arr);
			d.pos = decoder.pos;
			const sub = decoding.readVarUint(d);
			const got = ackedClock(sub, decoding.readVarUint8Array(d), doc.clientID);
			if (got > acked) acked = got;
		} catch (e) {
			/* y-websocket's handler reports malformed messages */
		}
		syncHandler(encoder, decoder, ...rest);
		update({});
	};
	const authHandler = provider.messageHandlers[MSG_AUTH];
	provider.messageHandlers[MSG_AUTH] = (encoder, decoder, ...rest) => {
		const d = decoding.createDecoder(decoder.arr);
		d.pos = decoder.pos;
		try {
			if (decoding.readVarUint(d) === 0) denied = decoding.hasContent(d) ? decoding.readVarString(d) : 'permission denied';
		} catch (e) {
			denied = 'permission denied';
		}
		authHandler(encoder, decoder, ...rest);
	};

	// Custom message types: listeners, and what came before them.
	const listeners = new Map(); // type -> Set(fn)
	const unhandled = new Map(); // type -> [Uint8Array payload]
	function handlerFor(type) {
		return (encoder, decoder) => {
			const payload = decoder.arr.subarray(decoder.pos);
			decoder.pos = decoder.arr.length;
			const fns = listeners.get(type);
			if (!fns || fns.size === 0) {
				const q = unhandled.get(type) || [];
				if (q.length < KEEP_UNHANDLED) q.push(payload.slice());
				unhandled.set(type, q);
				return;
			}
			for (const fn of [...fns]) {
				try {
					fn(decoding.createDecoder(payload));
				} catch (e) {
					console.error(`room: listener of message type ${type} failed`, e);
				}
			}
		};
	}

	for (const t of CUSTOM_TYPES) provider.messageHandlers[t] = handlerFor(t);

	// Who is here, as the server knows them (not as awareness states claim).
	const present = createStore(null);
	provider.messageHandlers[MSG_PEOPLE] = (encoder, decoder) => {
		try {
			const m = JSON.parse(decoding.readVarString(decoder));
			if (!m || !Array.isArray(m.users)) return;
			present.set(m.users.filter((u) => u && typeof u.id === 'string').map((u) => ({ id: u.id, name: typeof u.name === 'string' ? u.name : '', canWrite: u.canWrite === true })));
		} catch (e) {
			/* a malformed list changes nothing */
		}
	};

	provider.on('status', ({ status: st }) => {
		if (st !== 'connected') present.set(null);
		if (st === 'connected') {
			everConnected = true;
			const ws = provider.ws;
			if (ws && ws.readyState === 1) ws.send(frame(MSG_PEOPLE, new Uint8Array(0)));
			return; // 'connected' once synced (below)
		}
		if (st === 'connecting') update({ state: everConnected ? 'reconnecting' : 'connecting' });
		else if (st === 'disconnected' && !closed) update(isOffline() ? { state: 'offline', reason: 'network' } : { state: 'reconnecting', reason: null });
	});
	provider.on('sync', (synced) => {
		if (synced) {
			refusals = 0;
			update({ state: 'connected', synced: true, reason: null });
		}
	});
	provider.on('connection-close', () => {
		if (closed || denied === null) return;
		// The server refused this socket (an expired access token, a role that changed, a limit).
		const reason = denied;
		refusals++;
		if (refusals > 1) {
			update({ state: 'offline', reason });
			return;
		}
		update({ state: 'reconnecting' });
		refreshSession().then(() => {
			if (closed) return;
			denied = null;
			provider.connect();
		});
	});
	doc.on('update', (u, origin) => {
		if (origin !== provider) update({});
	});
	// Saved: no change to the files since svc-wsd last wrote them (it sets meta.lastSavedAt after
	// each save). Renames and deletes go through the API, on disk: they wait for this first.
	doc.getMap('files').observeDeep(() => {
		unsaved = true;
	});
	doc.getMap('meta').observe((ev) => {
		if (!ev.keysChanged.has('lastSavedAt')) return;
		unsaved = false;
		for (const w of [...savedWaiters]) w();
	});
	let loaded = false;
	provider.on('sync', (synced) => {
		if (synced && !loaded) unsaved = false; // the first load is what the disk has
		loaded = loaded || synced;
	});

	const offline = () => {
		provider.disconnect();
		update({ state: 'offline', reason: 'network' });
	};
	const online = () => {
		if (closed) return;
		denied = null;
		refusals = 0;
		update({ state: 'reconnecting', reason: null });
		provider.connect();
	};
	if (typeof window !== 'undefined' && window.addEventListener) {
		window.addEventListener('offline', offline);
		window.addEventListener('online', online);
	}

	return {
		doc,
		awareness,
		provider,
		status,
		readOnly,
		projectId,
		user,
		present,
		onMessage(type, fn) {
			if (!listeners.has(type)) listeners.set(type, new Set());
			if (!provider.messageHandlers[type]) provider.messageHandlers[type] = handlerFor(type);
			listeners.get(type).add(fn);
			const q = unhandled.get(type);
			if (q) {
				unhandled.delete(type);
				for (const payload of q) fn(decoding.createDecoder(payload));
			}
			return () => listeners.get(type).delete(fn);
		},
		sendMessage(type, payload) {
			const ws = provider.ws;
			if (!ws || !provider.wsconnected || ws.readyState !== 1) return false;
			ws.send(frame(type, payload));
			return true;
		},
		whenSaved(timeoutMs = 10000) {
			if (!unsaved && !status.get().pending) return Promise.resolve(true);
			return new Promise((resolve) => {
				const done = (ok) => {
					clearTimeout(t);
					savedWaiters.delete(check);
					resolve(ok);
				};
				const check = () => !unsaved && !status.get().pending && done(true);
				const t = setTimeout(() => done(false), timeoutMs);
				savedWaiters.add(check);
			});
		},
		close() {
			if (closed) return;
			closed = true;
			if (typeof window !== 'undefined' && window.removeEventListener) {
				window.removeEventListener('offline', offline);
				window.removeEventListener('online', online);
			}
			awareness.setLocalState(null); // tells the others we left
			provider.destroy();
			doc.destroy();
		},
	};
}

/** RoomContext: the project page's room (project.jsx provides it); null without collaboration. */
export const RoomContext = createContext(null);

/** useRoom(): the room of the project page this component is in, or null (no collaboration). */
export function useRoom() {
	return useContext(RoomContext);
}

/**
 * people(awareness): who the awareness states say is in the room, one entry per user (a user
 * may have several tabs): [{id, name, color, self: bool, file: string|null (the file their
 * editor shows)}], the local user first, then by name. States without a user are left out.
 * Names and colours are what the clients claim: the page shows confirmedPeople().
 */
export function people(awareness) {
	const byId = new Map();
	const self = awareness.clientID;
	const states = [...awareness.getStates()].sort(([a], [b]) => (a === self ? -1 : b === self ? 1 : 0));
	for (const [clientId, s] of states) {
		if (!s || !s.user || !s.user.id) continue;
		const mine = clientId === self;
		const p = byId.get(s.user.id);
		if (p) {
			if (!p.file && s.file) p.file = s.file;
			continue;
		}
		byId.set(s.user.id, { id: s.user.id, name: s.user.name || 'Someone', color: s.user.color || colorFor(s.user.id), self: mine, file: s.file || null });
	}
	return [...byId.values()].sort((a, b) => (a.self !== b.self ? (a.self ? -1 : 1) : a.name.localeCompare(b.name)));
}

/**
 * confirmedPeople(awareness, present, self): the people list the page shows: the local user
 * `self` ({id, name, color}) first, then each user of `present` (the room's list from svc-wsd:
 * who has a socket there, with the account's name) once, by name; nobody else, whatever
 * awareness states claim. `file` comes from the awareness states naming that user (svc-wsd
 * relays only states whose user.id is their socket's user). present null (not yet known, or
 * the socket is down): the local user only. Entries as people().
 */
export function confirmedPeople(awareness, present, self) {
	const seen = new Map(people(awareness).map((p) => [p.id, p]));
	const out = [];
	if (self && self.id) {
		const mine = seen.get(self.id);
		out.push({ id: self.id, name: self.name || 'Someone', color: self.color || colorFor(self.id), self: true, file: mine ? mine.file : null });
	}
	const others = [];
	for (const u of present || []) {
		if ((self && u.id === self.id) || others.some((o) => o.id === u.id)) continue;
		const a = seen.get(u.id);
		others.push({ id: u.id, name: u.name || 'Someone', color: colorFor(u.id), self: false, file: a ? a.file : null });
	}
	return out.concat(others.sort((a, b) => a.name.localeCompare(b.name)));
}

/** usePeople(room): confirmedPeople() of the room, re-rendered when it changes; [] without a room. */
export function usePeople(room) {
	const list = () => confirmedPeople(room.awareness, room.present.get(), room.user);
	const [value, setValue] = useState(() => (room ? list() : []));
	useEffect(() => {
		if (!room) {
			setValue([]);
			return undefined;
		}
		const f = () => setValue(list());
		f();
		room.awareness.on('change', f);
		const unsub = room.present.subscribe(f);
		return () => {
			room.awareness.off('change', f);
			unsub();
		};
	}, [room]);
	return value;
}
