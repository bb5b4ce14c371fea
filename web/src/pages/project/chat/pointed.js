// pointed.js: the element the user pointed at in the preview (Select element, issue 29), waiting
// for the next chat message as an attachment {type: "element", selector, html, text, pagePath}.
import { createStore } from '../../../lib/store.js';

const HTML_MAX = 4096; // bytes of html, as the API takes them (docs/api.md "Chat messages")
const FIELD_MAX = 4096;

/** cutBytes(s, max): s cut to at most max bytes of UTF-8, on a character boundary. */
export function cutBytes(s, max) {
	const enc = new TextEncoder();
	if (typeof s !== 'string') return '';
	if (enc.encode(s).length <= max) return s;
	let out = '';
	let n = 0;
	for (const ch of s) {
		const b = enc.encode(ch).length;
		if (n + b > max) break;
		out += ch;
		n += b;
	}
	return out;
}

/** pointed: the store; null when nothing is pointed at. */
export const pointed = createStore(null);

/** pointAt(el, page): the preview's description of an element (its selector, html, text) becomes the pending attachment. */
export function pointAt(el, page) {
	if (!el || typeof el.selector !== 'string' || !el.selector) return;
	pointed.set({
		type: 'element',
		selector: cutBytes(el.selector, FIELD_MAX),
		html: cutBytes(typeof el.html === 'string' ? el.html : '', HTML_MAX),
		text: cutBytes(typeof el.text === 'string' ? el.text : '', FIELD_MAX),
		pagePath: typeof page === 'string' && page.startsWith('/') ? cutBytes(page, FIELD_MAX) : '/',
	});
}
