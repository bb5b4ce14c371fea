// sse.test.mjs: web/src/lib/sse.js against the WHATWG event-stream parsing rules and svc's chat stream.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createParser, parseChatEvents, decodeChatEvent, readEventStream } from '../../../web/src/lib/sse.js';

function events(chunks) {
	const out = [];
	const p = createParser((e) => out.push(e));
	for (const c of chunks) p.push(c);
	p.end();
	return out;
}

test('one data line per event, blank line dispatches', () => {
	assert.deepEqual(events(['data: a\n\ndata: b\n\n']).map((e) => e.data), ['a', 'b']);
});

test('every split of a stream gives the same events', () => {
	const s = 'data: {"type":"assistant.message_delta","delta":"héllo"}\r\n\r\n: ping\n\nevent: x\ndata: 1\ndata: 2\r\rdata:3\n\n';
	const whole = events([s]);
	assert.equal(whole.length, 3);
	for (let i = 0; i <= s.length; i++) assert.deepEqual(events([s.slice(0, i), s.slice(i)]), whole, `split at ${i}`);
	assert.deepEqual(events([...s]), whole, 'one character at a time');
});

test('CR, LF and CRLF line ends; CR at a chunk end followed by LF is one line end', () => {
	assert.deepEqual(events(['data: a\r', '\n\r\n']).map((e) => e.data), ['a']);
	assert.deepEqual(events(['data: a\r\rdata: b\n\n']).map((e) => e.data), ['a', 'b']);
});

test('multi-line data joins with newlines; one leading space dropped, not two', () => {
	const [e] = events(['data: one\ndata:  two\ndata:three\n\n']);
	assert.equal(e.data, 'one\n two\nthree');
});

test('comments (": ping") and events without data dispatch nothing', () => {
	assert.deepEqual(events([': ping\n\n: ping\n\nevent: x\n\n']), []);
});

test('event and id fields; event defaults to message', () => {
	const [a, b] = events(['event: usage\nid: 7\ndata: {}\n\ndata: {}\n\n']);
	assert.equal(a.event, 'usage');
	assert.equal(a.id, '7');
	assert.equal(b.event, 'message');
	assert.equal(b.id, '7', 'the last event id persists');
});

test('an unfinished event at the end is dropped', () => {
	assert.deepEqual(events(['data: complete\n\ndata: cut off']).map((e) => e.data), ['complete']);
});

test('a BOM at the start is skipped', () => {
	assert.deepEqual(events(['\ufeffdata: x\n\n']).map((e) => e.data), ['x']);
});

test('field without colon is a field with an empty value', () => {
	assert.deepEqual(events(['data\n\n']).map((e) => e.data), [''], 'an empty data line still makes an event');
	assert.deepEqual(events(['data\ndata: x\n\n']).map((e) => e.data), ['\nx']);
});

test('the chat stream of docs/api.md decodes to its typed events', () => {
	const stream = [
		'data: {"delta":"I\'ll ","type":"assistant.message_delta"}',
		'data: {"id":"c1","tool":"edit_file","args":{"path":"index.html"},"type":"tool.call"}',
		'data: {"id":"c1","result":"edited index.html","type":"tool.result"}',
		': ping',
		'data: {"text":"done","type":"assistant.message"}',
		'data: {"inputTokens":320,"outputTokens":42,"cost":0.0,"type":"session.usage_info"}',
		'data: {"stopped":false,"filesChanged":true,"commit":"3e1d725f","type":"session.task_complete"}',
	].join('\n\n') + '\n\n';
	const ev = parseChatEvents(stream);
	assert.deepEqual(ev.map((e) => e.type), ['assistant.message_delta', 'tool.call', 'tool.result', 'assistant.message', 'session.usage_info', 'session.task_complete']);
	assert.equal(ev[1].args.path, 'index.html');
	assert.equal(ev[5].filesChanged, true);
});

test('data that is not a JSON event becomes a readable error event', () => {
	assert.equal(decodeChatEvent('not json').type, 'error');
	assert.equal(decodeChatEvent('[1,2]').type, 'error');
	assert.equal(decodeChatEvent('{"no":"type"}').type, 'error');
	assert.equal(decodeChatEvent('{"type":"error","error":"no_provider"}').error, 'no_provider');
});

test('readEventStream decodes UTF-8 split inside a character', async () => {
	const bytes = new TextEncoder().encode('data: {"type":"assistant.message_delta","delta":"€ ✓ 😀"}\n\n');
	const body = new ReadableStream({
		start(c) {
			for (let i = 0; i < bytes.length; i++) c.enqueue(bytes.subarray(i, i + 1));
			c.close();
		},
	});
	const got = [];
	await readEventStream(body, (e) => got.push(e));
	assert.equal(got.length, 1);
	assert.equal(got[0].delta, '€ ✓ 😀');
});

test('readEventStream stops when its signal aborts', async () => {
	const ac = new AbortController();
	let pull = 0;
	const body = new ReadableStream({
		pull(c) {
			pull++;
			if (pull === 1) c.enqueue(new TextEncoder().encode('data: {"type":"x"}\n\n'));
			return new Promise(() => {}); // never more
		},
	});
	const got = [];
	const done = readEventStream(body, (e) => {
		got.push(e);
		ac.abort();
	}, ac.signal);
	await done;
	assert.equal(got.length, 1);
});
