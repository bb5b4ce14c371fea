// api.js: every call the app makes to svc's HTTP API (docs/api.md), with the session rules.
//
// The session lives only in the HttpOnly cookies svc sets (svc_access_token, and
// svc_refresh_token on /api/auth): nothing is kept in localStorage or sessionStorage and no
// token is ever read by script. On a 401 the client calls POST /api/auth/refresh once (one
// refresh in flight for all callers) and repeats the request; when the refresh fails too,
// onSessionLost() sends the user to /login?next=<where they were> (spec, Authentication 5).
// A network failure or a 502/503/504 marks the API unreachable (the banner in main.jsx),
// and a probe retries with backoff until it answers again.
import { createStore } from './store.js';

export const API = '/api';

/** An error answer of the API: status, code (its "error" field), message, field. */
export class ApiError extends Error {
	constructor(status, body) {
		super((body && body.message) || `The server answered ${status}.`);
		this.status = status;
		this.code = (body && body.error) || (status === 0 ? 'network' : 'http_' + status);
		this.field = body && body.field;
		this.body = body;
	}
}

/** Whether the API (and, on a project page, the collaboration socket) can be reached. */
export const connectivity = createStore({ api: true, socket: true, retryIn: 0 });

let sessionLost = () => {};
/** onSessionLost(fn): what to do when a refresh fails (main.jsx: go to /login?next=…). */
export function onSessionLost(fn) {
	sessionLost = fn;
}

let refreshing = null;
/** refreshSession(): POST /auth/refresh once for everyone waiting; resolves true when it worked. */
export function refreshSession() {
	if (!refreshing) {
		refreshing = fetch(API + '/auth/refresh', { method: 'POST', credentials: 'same-origin', headers: { Accept: 'application/json' } })
			.then((r) => r.ok)
			.catch(() => false)
			.finally(() => {
				setTimeout(() => (refreshing = null), 0);
			});
	}
	return refreshing;
}

const NO_REFRESH = /^\/auth\/(login|signup|verify-email|refresh|logout|forgot-password|reset-password|providers)\b/;

async function send(path, opts) {
	const headers = { Accept: opts.accept || 'application/json', ...(opts.headers || {}) };
	const init = { method: opts.method || 'GET', credentials: 'same-origin', headers, signal: opts.signal };
	if (opts.body !== undefined) {
		headers['Content-Type'] = 'application/json';
		init.body = JSON.stringify(opts.body);
	}
	let r;
	try {
		r = await fetch(API + path, init);
	} catch (e) {
		if (e && e.name === 'AbortError') throw e;
		apiDown();
		throw new ApiError(0, { error: 'network', message: 'The server cannot be reached.' });
	}
	if (r.status === 502 || r.status === 503 || r.status === 504) apiDown();
	else apiUp();
	return r;
}

/**
 * request(path, opts): calls the API and resolves the answer.
 * path: under /api ("/projects?limit=20"). opts: method, body (sent as JSON), signal,
 * raw (resolve the Response instead of its JSON), accept, headers, auth (false: no
 * refresh on 401, for the sign-in pages), quietSessionLoss (a failed refresh only rejects).
 * Rejects with ApiError for any status >= 400 (after the one refresh on 401).
 */
export async function request(path, opts = {}) {
	let r = await send(path, opts);
	if (r.status === 401 && opts.auth !== false && !NO_REFRESH.test(path)) {
		if (await refreshSession()) r = await send(path, opts);
		if (r.status === 401) {
			if (!opts.quietSessionLoss) sessionLost();
			throw new ApiError(401, await body(r));
		}
	}
	if (!r.ok) throw new ApiError(r.status, await body(r));
	if (opts.raw) return r;
	if (r.status === 204) return null;
	return body(r);
}

async function body(r) {
	const t = await r.text();
	if (!t) return null;
	try {
		return JSON.parse(t);
	} catch (e) {
		return { error: 'http_' + r.status, message: t.slice(0, 200) };
	}
}

/** get/post/patch/put/del(path, body?): shorthands of request(). */
export const get = (path, opts) => request(path, opts);
export const post = (path, b, opts) => request(path, { ...opts, method: 'POST', body: b });
export const patch = (path, b, opts) => request(path, { ...opts, method: 'PATCH', body: b });
export const put = (path, b, opts) => request(path, { ...opts, method: 'PUT', body: b });
export const del = (path, opts) => request(path, { ...opts, method: 'DELETE' });

/** enc(s): a path segment, percent-encoded. */
export const enc = encodeURIComponent;

// ------------------------------------------------------------------ reachability

let probeTimer = 0;
let probeDelay = 1000;

function apiUp() {
	if (!connectivity.get().api) connectivity.set((c) => ({ ...c, api: true, retryIn: 0 }));
	probeDelay = 1000;
	clearTimeout(probeTimer);
	probeTimer = 0;
}

function apiDown() {
	if (probeTimer) return;
	connectivity.set((c) => ({ ...c, api: false, retryIn: Math.round(probeDelay / 1000) }));
	probeTimer = setTimeout(probe, probeDelay);
}

async function probe() {
	probeTimer = 0;
	let ok = false;
	try {
		const r = await fetch(API + '/auth/me', { credentials: 'same-origin', headers: { Accept: 'application/json' } });
		ok = r.status < 500;
	} catch (e) {
		ok = false;
	}
	if (ok) {
		apiUp();
		return;
	}
	probeDelay = Math.min(probeDelay * 2, 30000);
	apiDown();
}

/** retryNow(): probes the API at once (the banner's "Retry now"). */
export function retryNow() {
	clearTimeout(probeTimer);
	probeTimer = 0;
	probe();
}
