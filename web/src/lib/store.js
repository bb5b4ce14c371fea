// store.js: a tiny observable value and the hook that re-renders a component when it changes.
import { useEffect, useState } from 'preact/hooks';

/** createStore(initial): {get(), set(valueOrFn), subscribe(fn) -> unsubscribe}. */
export function createStore(initial) {
	let value = initial;
	const subs = new Set();
	return {
		get: () => value,
		set(next) {
			const v = typeof next === 'function' ? next(value) : next;
			if (Object.is(v, value)) return;
			value = v;
			for (const fn of [...subs]) fn(v);
		},
		subscribe(fn) {
			subs.add(fn);
			return () => subs.delete(fn);
		},
	};
}

/** useStore(store): the store's current value; the component re-renders on every change. */
export function useStore(store) {
	const [v, setV] = useState(store.get());
	useEffect(() => {
		setV(store.get());
		return store.subscribe(setV);
	}, [store]);
	return v;
}
