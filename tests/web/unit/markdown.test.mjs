// markdown.test.mjs: web/src/lib/markdown.js never lets the model's text become markup or script.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { renderMarkdown, isSafeUrl } from '../../../web/src/lib/markdown.js';

// What must never appear in the output, whatever the input: a tag that runs script or loads a
// frame, an event-handler attribute, a dangerous URL scheme in an attribute.
function assertInert(html, input) {
	const msg = `input: ${JSON.stringify(input)}\noutput: ${html}`;
	assert.doesNotMatch(html, /<\s*(script|iframe|object|embed|style|svg|math|form|input|textarea|base|meta|link|img|video|audio|source)\b/i, msg);
	// attribute values are quoted by markdown-it: look for handlers outside them
	assert.doesNotMatch(html.replace(/"[^"]*"/g, '""'), /<[^>]*\son[a-z]+\s*=/i, msg);
	assert.doesNotMatch(html, /(href|src|action|formaction|xlink:href)\s*=\s*"\s*(javascript|vbscript|data|file):/i, msg);
}

const PAYLOADS = [
	'<script>alert(1)</script>',
	'<img src=x onerror=alert(1)>',
	'<svg/onload=alert(1)>',
	'<iframe src="javascript:alert(1)"></iframe>',
	'<a href="javascript:alert(1)">x</a>',
	'[click](javascript:alert(1))',
	'[click](JaVaScRiPt:alert(1))',
	'[click]( javascript:alert(1))',
	'[click](java\tscript:alert(1))',
	'[click](jav&#x61;script:alert(1))',
	'[click](&#106;avascript:alert(1))',
	'[click](vbscript:msgbox(1))',
	'[click](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)',
	'[click](file:///etc/passwd)',
	'![x](javascript:alert(1))',
	'![x](https://tracker.example/pixel.png)',
	'[x]: javascript:alert(1)\n\n[ref][x]',
	'<details open ontoggle=alert(1)>',
	'<style>body{display:none}</style>',
	'`<script>` and ```html\n<script>alert(1)</script>\n```',
	'<<script>script>alert(1)<</script>/script>',
	'<a href="https://ok.example" onclick="alert(1)">x</a>',
	'[x](https://ok.example "title\\" onmouseover=\\"alert(1)")',
	'<math><mtext><table><mglyph><style><img src=x onerror=alert(1)>',
	'<!-- --><script>alert(1)</script>',
	'<div style="background:url(javascript:alert(1))">',
];

for (const p of PAYLOADS) {
	test(`inert: ${JSON.stringify(p).slice(1, 60)}`, () => assertInert(renderMarkdown(p), p));
}

test('raw HTML is shown as text', () => {
	const html = renderMarkdown('<b>bold</b> <script>alert(1)</script>');
	assert.match(html, /&lt;b&gt;bold&lt;\/b&gt;/);
	assert.match(html, /&lt;script&gt;alert\(1\)&lt;\/script&gt;/);
});

test('Markdown still renders: emphasis, code, lists, safe links open in a new tab without opener', () => {
	const html = renderMarkdown('**bold** `code`\n\n- one\n- two\n\n[docs](https://example.com/a?b=1) [rel](/projects/x)');
	assert.match(html, /<strong>bold<\/strong>/);
	assert.match(html, /<code>code<\/code>/);
	assert.match(html, /<li>one<\/li>/);
	assert.match(html, /<a href="https:\/\/example.com\/a\?b=1" target="_blank" rel="noopener noreferrer nofollow">docs<\/a>/);
	assert.match(html, /<a href="\/projects\/x"/);
});

test('images become links (no request to a URL the model chose)', () => {
	const html = renderMarkdown('![logo](https://example.com/logo.png)');
	assert.doesNotMatch(html, /<img/);
	assert.match(html, /<a href="https:\/\/example.com\/logo.png"[^>]*>logo<\/a>/);
});

test('isSafeUrl allows http, https, mailto and relative URLs only', () => {
	for (const u of ['https://a.example', 'http://a.example/x:y', 'mailto:a@b.example', '/x', 'x/y', '#top', '?q=a:b', 'page.html'])
		assert.ok(isSafeUrl(u), u);
	for (const u of ['javascript:alert(1)', ' javascript:x', 'java\nscript:x', 'data:text/html,x', 'vbscript:x', 'file:///x', 'ftp://x', 'blob:x'])
		assert.ok(!isSafeUrl(u), u);
});

test('text is never lost: every word of the input is in the output', () => {
	const s = 'Added a footer to index.html. It says "Made with svc" & <small>.';
	const html = renderMarkdown(s);
	for (const w of ['Added', 'footer', 'index.html', 'Made with svc', '&amp;', '&lt;small&gt;']) assert.ok(html.includes(w), w);
});
