// sse.js: a parser for text/event-stream (the chat stream), fed the response body chunk by chunk.
//
// Follows the WHATWG HTML "Server-sent events" parsing rules: lines end in CRLF, LF or CR
// (a CR at the end of one chunk and an LF at the start of the next are one line end);
// "data:" lines of one event are joined with "\n"; a blank line dispatches the event;
// lines starting with ":" are comments (svc sends ": ping" each second of silence);
// one leading space after the colon is dropped; an event without a data line is not
// dispatched; a field without a colon is a field with an empty value; an unfinished
// event at the end of the stream is discarded. A UTF-8 BOM at the very start is skipped.
// Pure code: no DOM, so node --test covers it (tests/web/unit/sse.test.mjs).

/**
 * createParser(onEvent): a push parser.
 * onEvent({event, data, id}) is called once per dispatched event; event defaults to "message".
 * Returns {push(text), end()}: push() takes decoded text in any chunking; end() flushes
 * (an event not closed by a blank line is dropped, as the spec says).
 */
export function createParser(onEvent) {
	let buf = '';
	let data = [];
	let event = '';
	let id = '';
	let sawCR = false;
	let first = true;

	function line(l) {
		if (l === '') {
			if (data.length) onEvent({ event: event || 'message', data: data.join('\n'), id });
			data = [];
			event = '';
			return;
		}
		if (l[0] === ':') return;
		const c = l.indexOf(':');
		const field = c < 0 ? l : l.slice(0, c);
		let value = c < 0 ? '' : l.slice(c + 1);
		if (value[0] === ' ') value = value.slice(1);
		if (field === 'data') data.push(value);
		else if (field === 'event') event = value;
		else if (field === 'id' && !value.includes('\0')) id = value;
		// "retry" and unknown fields are ignored: the client does not reconnect a chat turn.
	}

	return {
		push(text) {
			if (first && text.length) {
				if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
				first = false;
			}
			let i = 0;
			if (sawCR && text[0] === '\n') i = 1;
			sawCR = false;
			buf += i ? text.slice(i) : text;
			let start = 0;
			for (let j = 0; j < buf.length; j++) {
				const ch = buf[j];
				if (ch !== '\n' && ch !== '\r') continue;
				line(buf.slice(start, j));
				if (ch === '\r') {
					if (j + 1 < buf.length) {
						if (buf[j + 1] === '\n') j++;
					} else {
						sawCR = true;
					}
				}
				start = j + 1;
			}
			buf = buf.slice(start);
		},
		end() {
			buf = '';
			data = [];
			event = '';
		},
	};
}

/**
 * parseChatEvents(text): all JSON events of a complete stream, in order (for tests and replays).
 * A "data" that is not JSON becomes {type: "error", error: "bad_event", message}.
 */
export function parseChatEvents(text) {
	const out = [];
	const p = createParser((ev) => out.push(decodeChatEvent(ev.data)));
	p.push(text);
	p.end();
	return out;
}

/** decodeChatEvent(data): one event's data as the chat event object it holds. */
export function decodeChatEvent(data) {
	try {
		const v = JSON.parse(data);
		if (v && typeof v === 'object' && typeof v.type === 'string') return v;
	} catch (e) {
		/* fall through */
	}
	return { type: 'error', error: 'bad_event', message: 'The server sent an event this page cannot read.' };
}

/**
 * readEventStream(body, onEvent, signal): reads a fetch() Response body (a ReadableStream of
 * bytes) to its end, decoding UTF-8 across chunk boundaries, and calls onEvent(chatEvent) for
 * each event. Resolves when the stream ends; rejects with the stream's error (an AbortError
 * when signal aborts).
 */
export async function readEventStream(body, onEvent, signal) {
	const reader = body.getReader();
	const dec = new TextDecoder('utf-8');
	const p = createParser((ev) => onEvent(decodeChatEvent(ev.data)));
	const abort = () => reader.cancel().catch(() => {});
	if (signal) signal.addEventListener('abort', abort, { once: true });
	try {
		for (;;) {
			const { value, done } = await reader.read();
			if (done) break;
			p.push(dec.decode(value, { stream: true }));
		}
		p.push(dec.decode());
		p.end();
	} finally {
		if (signal) signal.removeEventListener('abort', abort);
	}
}
