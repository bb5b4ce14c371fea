// markdown.js: the agent's Markdown as safe HTML (markdown-it with raw HTML turned off).
//
// What the model writes is untrusted: a prompt-injected page can make it answer with
// <script>, <img onerror=…>, javascript: links. markdown-it with html:false escapes every
// tag the text holds; links and images pass through validateLink below (http, https,
// mailto and relative URLs only; no javascript:, vbscript:, data:, file:); links open in
// a new tab without referrer or opener. The output is meant for innerHTML of an element
// of the app; tests/web/unit/markdown.test.mjs throws the usual XSS payloads at it.
import MarkdownIt from 'markdown-it';

const SAFE_URL = /^(https?:|mailto:|[^:]*$|[^:]*[/?#])/i;

/** isSafeUrl(url): true for http(s), mailto and relative URLs (nothing with another scheme). */
export function isSafeUrl(url) {
	// Browsers drop ASCII tab, LF, CR and leading C0 controls/spaces when parsing a scheme.
	const u = String(url).replace(/[\u0000-\u0020\u007f]/g, '');
	return SAFE_URL.test(u);
}

const md = new MarkdownIt('default', {
	html: false, // never pass raw HTML through: it is shown as text
	linkify: false,
	typographer: false,
	breaks: true, // chat text: a newline is a line break
});
md.validateLink = isSafeUrl;

const defaultLinkOpen = md.renderer.rules.link_open || ((tokens, idx, options, env, self) => self.renderToken(tokens, idx, options));
md.renderer.rules.link_open = (tokens, idx, options, env, self) => {
	tokens[idx].attrSet('target', '_blank');
	tokens[idx].attrSet('rel', 'noopener noreferrer nofollow');
	return defaultLinkOpen(tokens, idx, options, env, self);
};
// Images would make the viewer's browser fetch any URL the model names (a tracking pixel,
// or a GET on some intranet host): shown as a link instead.
md.renderer.rules.image = (tokens, idx, options, env, self) => {
	const t = tokens[idx];
	const src = t.attrGet('src') || '';
	const alt = self.renderInlineAsText(t.children || [], options, env) || src;
	return `<a href="${md.utils.escapeHtml(src)}" target="_blank" rel="noopener noreferrer nofollow">${md.utils.escapeHtml(alt)}</a>`;
};

/** renderMarkdown(text): HTML for text; every tag in text is escaped, every URL checked. */
export function renderMarkdown(text) {
	return md.render(String(text ?? ''));
}
