// collab.js: the project page's side of svc-wsd's socket in part 1: presence (y-protocols
// awareness) and "files changed" notices, without the document itself (part 2 brings the
// Yjs editor). Message framing: lib0 varUint message type, then the payload
// (y-protocols sync.js / awareness.js, docs/collaboration.md "Protocol").

const MSG_SYNC = 0;
const MSG_AWARENESS = 1;
const MSG_AUTH = 2;
const SYNC_STEP2 = 1;
const SYNC_UPDATE = 2;

/** A reader over a Uint8Array: varUint, varString (lib0 decoding.js). Throws on truncation. */
export function reader(bytes) {
	let pos = 0;
	const r = {
		get done() {
			return pos >= bytes.length;
		},
		uint() {
			let n = 0;
			let mult = 1;
			for (;;) {
				if (pos >= bytes.length) throw new Error('truncated varUint');
				const b = bytes[pos++];
				n += (b & 0x7f) * mult;
				if (b < 0x80) return n;
				mult *= 128;
				if (mult > 2 ** 53) throw new Error('varUint too long');
			}
		},
		bytes() {
			const len = r.uint();
			if (pos + len > bytes.length) throw new Error('truncated bytes');
			const out = bytes.subarray(pos, pos + len);
			pos += len;
			return out;
		},
		string() {
			return new TextDecoder().decode(r.bytes());
		},
	};
	return r;
}

/** A writer: varUint, varString, varBytes; done() gives the Uint8Array (lib0 encoding.js). */
export function writer() {
	const out = [];
	const w = {
		uint(n) {
			while (n > 0x7f) {
				out.push(0x80 | (n & 0x7f));
				n = Math.floor(n / 128);
			}
			out.push(n);
			return w;
		},
		bytes(b) {
			w.uint(b.length);
			for (const x of b) out.push(x);
			return w;
		},
		string(s) {
			return w.bytes(new TextEncoder().encode(s));
		},
		done: () => Uint8Array.from(out),
	};
	return w;
}

/** encodeAwareness(clientId, clock, state): one awareness message ([1, update]) for our own state. */
export function encodeAwareness(clientId, clock, state) {
	const update = writer().uint(1).uint(clientId).uint(clock).string(state === null ? 'null' : JSON.stringify(state)).done();
	return writer().uint(MSG_AWARENESS).bytes(update).done();
}

/**
 * decodeMessage(bytes): what one frame says, as
 * {kind: "awareness", states: [{clientId, clock, state}]} | {kind: "update"} (a document change) |
 * {kind: "denied", reason} | {kind: "other"}. Only the first message of a frame is read.
 */
export function decodeMessage(bytes) {
	const r = reader(bytes);
	const type = r.uint();
	if (type === MSG_AWARENESS) {
		const u = reader(r.bytes());
		const n = u.uint();
		const states = [];
		for (let i = 0; i < n; i++) {
			const clientId = u.uint();
			const clock = u.uint();
			let state = null;
			try {
				state = JSON.parse(u.string());
			} catch (e) {
				state = null;
			}
			states.push({ clientId, clock, state });
		}
		return { kind: 'awareness', states };
	}
	if (type === MSG_SYNC) {
		const sub = r.uint();
		return sub === SYNC_UPDATE || sub === SYNC_STEP2 ? { kind: 'update' } : { kind: 'other' };
	}
	if (type === MSG_AUTH) {
		r.uint();
		return { kind: 'denied', reason: r.done ? '' : r.string() };
	}
	return { kind: 'other' };
}

/**
 * connectPresence({projectId, user, onPeople, onChange, onStatus}): keeps a socket to
 * /ws/project/<id> (authorised by the session cookie) open with exponential backoff, publishes
 * {user} every 15 s, reports the other people present (onPeople([{id, name, color}])), document
 * changes (onChange(), e.g. another client's save) and whether the socket is up (onStatus(bool)).
 * Returns close().
 */
export function connectPresence({ projectId, user, onPeople, onChange, onStatus }) {
	const clientId = Math.floor(Math.random() * 0xffffffff);
	let clock = 0;
	let ws = null;
	let closed = false;
	let delay = 1000;
	let timer = 0;
	let beat = 0;
	const peers = new Map();

	function people() {
		const seen = new Map();
		for (const [id, s] of peers) if (id !== clientId && s && s.user && s.user.id !== user.id) seen.set(s.user.id, s.user);
		onPeople([...seen.values()]);
	}
	function send(state) {
		if (ws && ws.readyState === 1) ws.send(encodeAwareness(clientId, ++clock, state));
	}
	function open() {
		const proto = location.protocol === 'https:' ? 'wss:' : 'ws:';
		ws = new WebSocket(`${proto}//${location.host}/ws/project/${encodeURIComponent(projectId)}`);
		ws.binaryType = 'arraybuffer';
		let denied = false;
		ws.onopen = () => {
			delay = 1000;
			onStatus(true);
			send({ user });
			beat = setInterval(() => send({ user }), 15000);
		};
		ws.onmessage = (ev) => {
			if (typeof ev.data === 'string') return;
			let m;
			try {
				m = decodeMessage(new Uint8Array(ev.data));
			} catch (e) {
				return;
			}
			if (m.kind === 'awareness') {
				for (const s of m.states) {
					if (s.state === null) peers.delete(s.clientId);
					else peers.set(s.clientId, s.state);
				}
				people();
			} else if (m.kind === 'update') onChange();
			else if (m.kind === 'denied') denied = true;
		};
		ws.onclose = () => {
			clearInterval(beat);
			peers.clear();
			people();
			if (closed || denied) return;
			onStatus(false);
			timer = setTimeout(open, delay);
			delay = Math.min(delay * 2, 30000);
		};
	}
	open();
	return () => {
		closed = true;
		clearTimeout(timer);
		clearInterval(beat);
		if (ws) {
			try {
				if (ws.readyState === 1) ws.send(encodeAwareness(clientId, ++clock, null));
			} catch (e) {
				/* closing anyway */
			}
			ws.close();
		}
		onStatus(true);
	};
}
