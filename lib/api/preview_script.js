// preview_script.js: the script of the preview origin (docs/web.md "Visual editing" and "Design
// comments"). svc-preview adds it to the end of every HTML page it serves, inline, as
// <script>(function (APP_ORIGIN) {...})("<app_url's origin>");</script> (lib/api/api_preview.c;
// the build drops these comment lines and makes it a C string, lib/api/api.mk). It is never one
// of the project's files, so the published site never has it.
//
// It talks only to the page that frames the preview (the web app at app_url):
// - to it with window.parent.postMessage(msg, APP_ORIGIN), so nothing goes to any other framer;
// - from it: messages whose source is window.parent and whose origin is APP_ORIGIN, nothing else.
// Every message is {svc: "svc-preview", v: 1, type, ...}. From the app: "mode" {mode: "off" |
// "select" | "comment"}, "track" {selectors: [...]}, "pick" {selector}. To the app: "ready"
// {page}, "select" {page, el}, "point" {page, selector, xPercent, yPercent}, "hover" {rect},
// "rects" {page, viewport: [w, h], rects: [[selector, rect | null]...], hover}. A rect is [x, y, width, height] in CSS
// pixels of the frame's viewport.
//
// The page's DOM is never changed: the script removes its own element as it runs, and draws
// nothing (the app draws outlines and pins over the frame from the rects).
// It is inline in the page: it must never contain "</" + "script" or "<" + "!--".
(function (APP_ORIGIN) {
	'use strict';
	var me = document.currentScript;
	if (me && me.parentNode) me.parentNode.removeChild(me);
	if (window.parent === window || !APP_ORIGIN) return; // a tab of its own: no app to talk to
	var TAG = 'svc-preview';
	var IDENT = /^-?[A-Za-z_][A-Za-z0-9_-]*$/;
	var MAX_SELECTOR = 1000; // bytes direct save and comments take
	var MAX_DEPTH = 32; // compounds in one selector (lib/project/direct_save.c)
	var MAX_TRACK = 500;
	var mode = 'off';
	var track = [];
	var hovered = null;
	var queued = false;

	function post(msg) {
		msg.svc = TAG;
		msg.v = 1;
		try {
			window.parent.postMessage(msg, APP_ORIGIN);
		} catch (e) {
			/* the framer is not the app: nothing is sent */
		}
	}
	function page() {
		return location.pathname;
	}
	function rectOf(el) {
		var r = el.getBoundingClientRect();
		var f = function (n) {
			return Math.round(n * 10) / 10;
		};
		return [f(r.left), f(r.top), f(r.width), f(r.height)];
	}
	function matchesOnly(sel, el) {
		try {
			var all = document.querySelectorAll(sel);
			return all.length === 1 && (!el || all[0] === el);
		} catch (e) {
			return false;
		}
	}
	function find(sel) {
		try {
			var all = document.querySelectorAll(sel);
			return all.length === 1 ? all[0] : null;
		} catch (e) {
			return null;
		}
	}

	// A selector of exactly this element in the grammar POST /direct-save takes (docs/api.md): its
	// #id when that is a plain, unique identifier; else the path from the nearest such ancestor (or
	// body) with :nth-of-type on each step. null when there is none short enough.
	function selectorOf(el) {
		var parts = [];
		for (var e = el; e && e.nodeType === 1; e = e.parentElement) {
			var id = e.getAttribute('id');
			if (id && IDENT.test(id) && matchesOnly('#' + id, e)) {
				parts.unshift('#' + id);
				break;
			}
			var tag = e.localName.toLowerCase();
			if (e === document.body || e === document.documentElement) {
				parts.unshift(tag);
				break;
			}
			var n = 1;
			for (var s = e.previousElementSibling; s; s = s.previousElementSibling) if (s.localName === e.localName) n++;
			parts.unshift(tag + ':nth-of-type(' + n + ')');
		}
		var sel = parts.join(' > ');
		if (!parts.length || parts.length > MAX_DEPTH || sel.length > MAX_SELECTOR) return null;
		return sel;
	}

	var VOID = /^(area|base|br|col|embed|hr|img|input|link|meta|source|track|wbr|script|style|template|textarea|select|svg|math|iframe|video|audio|canvas|object)$/;
	var STYLES = { color: 'color', background: 'backgroundColor', 'font-size': 'fontSize', 'font-weight': 'fontWeight', margin: 'margin', padding: 'padding', 'text-align': 'textAlign' };

	function describe(el, sel) {
		var onlyText = !VOID.test(el.localName.toLowerCase());
		for (var c = el.firstChild; c && onlyText; c = c.nextSibling) if (c.nodeType === 1) onlyText = false;
		var cs = window.getComputedStyle(el);
		var computed = {};
		for (var k in STYLES) computed[k] = String(cs[STYLES[k]] || '');
		var attr = function (n) {
			var v = el.getAttribute(n);
			return v === null ? null : String(v);
		};
		var text = onlyText ? String(el.textContent) : null;
		return {
			selector: sel,
			tag: el.localName.toLowerCase(),
			id: attr('id'),
			text: text !== null && text.length <= 100000 ? text : null,
			className: attr('class'),
			href: attr('href'),
			src: attr('src'),
			alt: attr('alt'),
			style: attr('style'),
			computed: computed,
			rect: rectOf(el),
			html: String(el.outerHTML).slice(0, 4096),
		};
	}

	function stop(ev) {
		ev.preventDefault();
		ev.stopPropagation();
		if (ev.stopImmediatePropagation) ev.stopImmediatePropagation();
	}
	function targetOf(ev) {
		var t = ev.target;
		while (t && t.nodeType !== 1) t = t.parentNode;
		return t;
	}

	function onClick(ev) {
		if (mode === 'off') return;
		stop(ev);
		var el = targetOf(ev);
		if (!el) return;
		var sel = selectorOf(el);
		if (mode === 'comment' && !sel) {
			el = document.documentElement; // no selector short enough: anchored to the page itself
			sel = 'html';
		}
		if (mode === 'select') {
			post({ type: 'select', page: page(), el: sel ? describe(el, sel) : null });
		} else if (mode === 'comment') {
			var r = el.getBoundingClientRect();
			var pct = function (v, size) {
				if (!(size > 0)) return 0;
				return Math.round(Math.min(100, Math.max(0, (v / size) * 100)) * 100) / 100;
			};
			post({ type: 'point', page: page(), selector: sel, xPercent: pct(ev.clientX - r.left, r.width), yPercent: pct(ev.clientY - r.top, r.height), rect: rectOf(el) });
		}
	}
	// while a mode is on, the page's own handlers get no pointer or form events (a click selects,
	// it does not follow the link or submit the form)
	function swallow(ev) {
		if (mode !== 'off') stop(ev);
	}
	function onMove(ev) {
		if (mode === 'off') return;
		var el = targetOf(ev);
		if (el === hovered) return;
		hovered = el;
		post({ type: 'hover', rect: el ? rectOf(el) : null });
	}
	function onLeave(ev) {
		// mouseleave does not bubble, but this capturing listener sees every element's: only the
		// page's own (the pointer left the frame) clears the outline
		if (ev && ev.target !== document.documentElement && ev.target !== document) return;
		hovered = null;
		post({ type: 'hover', rect: null });
	}

	// The rects of the tracked elements, at most once a frame: after a scroll, a resize, a change
	// of the DOM, an image that loaded, a font.
	function report() {
		queued = false;
		var rects = [];
		for (var i = 0; i < track.length; i++) {
			var el = find(track[i]);
			rects.push([track[i], el ? rectOf(el) : null]);
		}
		post({
			type: 'rects',
			page: page(),
			viewport: [window.innerWidth, window.innerHeight],
			rects: rects,
			hover: hovered ? rectOf(hovered) : null,
		});
	}
	function schedule() {
		if (queued || (!track.length && !hovered)) return;
		queued = true;
		(window.requestAnimationFrame || setTimeout)(report);
	}

	window.addEventListener('message', function (ev) {
		if (ev.source !== window.parent || ev.origin !== APP_ORIGIN) return;
		var m = ev.data;
		if (!m || typeof m !== 'object' || m.svc !== TAG || m.v !== 1) return;
		if (m.type === 'mode' && (m.mode === 'off' || m.mode === 'select' || m.mode === 'comment')) {
			mode = m.mode;
			if (mode === 'off') onLeave();
		} else if (m.type === 'track' && Array.isArray(m.selectors)) {
			track = m.selectors.filter(function (s) {
				return typeof s === 'string' && s.length <= 1024;
			}).slice(0, MAX_TRACK);
			queued = false;
			report();
		} else if (m.type === 'pick' && typeof m.selector === 'string') {
			var el = find(m.selector);
			post({ type: 'select', page: page(), el: el ? describe(el, m.selector) : null, picked: true });
		}
	});
	document.addEventListener('click', onClick, true);
	['mousedown', 'mouseup', 'auxclick', 'dblclick', 'submit', 'pointerdown', 'pointerup'].forEach(function (t) {
		document.addEventListener(t, swallow, true);
	});
	document.addEventListener('mousemove', onMove, true);
	document.addEventListener('mouseleave', onLeave, true);
	window.addEventListener('scroll', schedule, true);
	window.addEventListener('resize', schedule);
	window.addEventListener('load', schedule, true);
	if (window.MutationObserver)
		new MutationObserver(schedule).observe(document.documentElement, { subtree: true, childList: true, attributes: true, characterData: true });
	if (document.fonts && document.fonts.addEventListener) document.fonts.addEventListener('loadingdone', schedule);
	post({ type: 'ready', page: page(), title: String(document.title || '') });
})
