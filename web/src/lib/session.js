// session.js: who is signed in (GET /api/auth/me), loaded once and shared by every page.
import { createStore } from './store.js';
import { getMe, logout, ApiError } from './api.js';

/** me: undefined while unknown, null when signed out, else the /auth/me answer. */
export const me = createStore(undefined);

let loading = null;
/** loadMe(force): fetches /auth/me (after the usual refresh on 401); resolves the answer or null. */
export function loadMe(force = false) {
	if (!force && me.get() !== undefined) return Promise.resolve(me.get());
	if (!loading) {
		loading = getMe()
			.then((m) => {
				me.set(m);
				return m;
			})
			.catch((e) => {
				if (e instanceof ApiError && e.status === 401) {
					me.set(null);
					return null;
				}
				throw e;
			})
			.finally(() => (loading = null));
	}
	return loading;
}

/** signOut(): POST /auth/logout (clears the cookies) and forgets the user. */
export async function signOut() {
	try {
		await logout();
	} finally {
		me.set(null);
	}
}
