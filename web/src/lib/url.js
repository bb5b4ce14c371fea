// url.js: a path with a query string, for app routes (router.js) and API paths (api.js); pure.

/** withQuery(path, params): path with params (null/undefined/'' left out) as its query string. */
export function withQuery(path, params) {
	const q = new URLSearchParams();
	for (const [k, v] of Object.entries(params)) if (v !== null && v !== undefined && v !== '') q.set(k, v);
	const s = q.toString();
	return s ? `${path}?${s}` : path;
}
