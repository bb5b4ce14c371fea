// router.js: client-side routes over the History API (the web server answers index.html for
// every path that is not /api, /ws or a file, so a reload or a shared link lands here too).
import { h } from 'preact';
import { createStore } from './store.js';

const here = () => location.pathname + location.search;

/** The current path and query ("/projects/…?chat=…"). */
export const locationStore = createStore(here());

if (typeof window !== 'undefined') {
	window.addEventListener('popstate', () => locationStore.set(here()));
}

/** navigate(to, {replace}): goes to an app path without reloading the page. */
export function navigate(to, opts = {}) {
	if (to === here()) return;
	history[opts.replace ? 'replaceState' : 'pushState'](null, '', to);
	locationStore.set(here());
	if (!opts.keepScroll) window.scrollTo(0, 0);
}

/** query(name): the value of a query parameter of the current location, or null. */
export function query(name) {
	return new URLSearchParams(locationStore.get().split('?')[1] || '').get(name);
}

export { withQuery } from './url.js';

/**
 * match(pattern, path): the parameters of path for a pattern such as "/projects/:id", or null.
 * Parameters are percent-decoded; a trailing slash is allowed.
 */
export function match(pattern, path) {
	const p = path.split('?')[0].replace(/\/+$/, '') || '/';
	const a = pattern.split('/');
	const b = p.split('/');
	if (a.length !== b.length) return null;
	const params = {};
	for (let i = 0; i < a.length; i++) {
		if (a[i][0] === ':') {
			try {
				params[a[i].slice(1)] = decodeURIComponent(b[i]);
			} catch (e) {
				return null;
			}
		} else if (a[i] !== b[i]) return null;
	}
	return params;
}

/** Link: an <a> that navigates inside the app on a plain click (new tab etc. work as usual). */
export function Link(props) {
	const { href, onClick, ...rest } = props;
	return h('a', {
		href,
		...rest,
		onClick(e) {
			if (onClick) onClick(e);
			if (e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey || rest.target) return;
			e.preventDefault();
			navigate(href);
		},
	});
}
