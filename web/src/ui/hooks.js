// hooks.js: the shared hooks of every screen: stable ids, a loading promise's state, the title.
import { useEffect, useRef, useState, useCallback } from 'preact/hooks';

let uid = 0;
/** useId(prefix): an id stable for the component's life (labels, aria-describedby). */
export function useId(prefix = 'id') {
	const r = useRef(null);
	if (r.current === null) r.current = `${prefix}-${++uid}`;
	return r.current;
}

/**
 * useAsync(fn, deps): runs fn() (a promise) when deps change; returns
 * {data, error, loading, reload, setData}. A result that arrives after deps changed is dropped.
 */
export function useAsync(fn, deps) {
	const [state, setState] = useState({ data: undefined, error: null, loading: true });
	const gen = useRef(0);
	const run = useCallback(() => {
		const g = ++gen.current;
		setState((s) => ({ ...s, loading: true, error: null }));
		return Promise.resolve()
			.then(fn)
			.then(
				(data) => g === gen.current && setState({ data, error: null, loading: false }),
				(error) => g === gen.current && setState((s) => ({ ...s, error, loading: false })),
			);
	}, deps);
	useEffect(() => {
		run();
	}, [run]);
	return { ...state, reload: run, setData: (d) => setState((s) => ({ ...s, data: typeof d === 'function' ? d(s.data) : d })) };
}

/** useTitle(title): sets document.title to "title · svc". */
export function useTitle(title) {
	useEffect(() => {
		document.title = title ? `${title} · svc` : 'svc';
	}, [title]);
}
