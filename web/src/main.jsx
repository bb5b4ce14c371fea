// main.jsx: the web app's entry: routes, the signed-in guard, the connectivity banner.
// Where a new screen goes: docs/web.md.
import { render } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import './styles.css';
import { locationStore, match, navigate, Link, withQuery } from './lib/router.js';
import { useStore } from './lib/store.js';
import { connectivity, onSessionLost, retryNow } from './lib/api.js';
import { me, loadMe, signOut } from './lib/session.js';
import { Login, Signup, Verify, Forgot, Reset } from './pages/auth/auth.jsx';
import { Dashboard } from './pages/dashboard/dashboard.jsx';
import { NotFound, ErrorPage } from './pages/errors.jsx';
import { Loading } from './ui/index.js';

// The project page (chat, files, preview, versions, Markdown) is its own chunk: sign-in
// and the dashboard never load it (budgets in docs/web.md).
const loadProject = () => import('./pages/project/project.jsx');
// The settings pages (account, workspaces) are a chunk of their own too.
const loadSettings = () => import('./pages/settings/settings.jsx');
// The Integrations page too (docs/web.md "Integrations").
const loadIntegrations = () => import('./pages/integrations/integrations.jsx');

const here = () => locationStore.get();

// A signed-in page needs /auth/me first: ask while the first render is being set up.
if (!/^\/(login|signup|verify|forgot|reset)/.test(location.pathname)) loadMe().catch(() => {});

onSessionLost(() => {
	me.set(null);
	const at = here();
	if (!/^\/(login|signup|verify|forgot|reset)/.test(at)) navigate(withQuery('/login', { next: at }), { replace: true });
});

/** Lazy: renders the component a dynamic import resolves to (with a status line meanwhile). */
function Lazy({ load, name, ...props }) {
	const [mod, setMod] = useState(null);
	const [err, setErr] = useState(null);
	useEffect(() => {
		let live = true;
		load().then(
			(m) => live && setMod(m),
			(e) => live && setErr(e),
		);
		return () => (live = false);
	}, [load]);
	if (err) return <ErrorPage title="This page did not load" message="Check the connection and reload the page." />;
	if (!mod) return <Loading />;
	const C = mod[name];
	return <C {...props} />;
}

/** SignedIn: shows children for a signed-in user, else goes to /login?next=<here>. */
function SignedIn({ children }) {
	const user = useStore(me);
	const [err, setErr] = useState(null);
	useEffect(() => {
		if (user === undefined) loadMe().catch(setErr);
		else if (user === null) navigate(withQuery('/login', { next: here() }), { replace: true });
	}, [user]);
	if (err) return <ErrorPage title="svc is not answering" message={err.message} />;
	if (!user) return <Loading />;
	return (
		<>
			<TopBar user={user} />
			{children}
		</>
	);
}

function TopBar({ user }) {
	return (
		<header class="topbar">
			<Link href="/dashboard" class="brand">
				svc
			</Link>
			<nav aria-label="Account" class="account">
				<span class="who">{user.user.displayName || user.user.email}</span>
				<Link href="/integrations" class="top-link">
					Integrations
				</Link>
				<Link href="/settings/account" class="top-link">
					Settings
				</Link>
				<button
					type="button"
					class="ghost"
					onClick={async () => {
						await signOut().catch(() => {});
						navigate('/login');
					}}
				>
					Sign out
				</button>
			</nav>
		</header>
	);
}

/** /settings: to /settings/account, keeping the query (the assistant flow's redirect lands here, docs/api.md). */
function SettingsHome() {
	useEffect(() => {
		const q = new URLSearchParams(location.search);
		if (q.get('error')) q.set('flow', 'assistant'); // only the assistant flow fails to /settings
		const s = q.toString();
		navigate('/settings/account' + (s ? '?' + s : ''), { replace: true });
	}, []);
	return <Loading />;
}

function Home() {
	useEffect(() => {
		loadMe()
			.then((m) => navigate(m ? '/dashboard' : '/login', { replace: true }))
			.catch(() => navigate('/login', { replace: true }));
	}, []);
	return <Loading />;
}

function Banner() {
	const c = useStore(connectivity);
	if (c.api && c.socket) return null;
	return (
		<div class="banner" role="alert">
			{!c.api ? (
				<>
					<span>svc's server cannot be reached. Retrying{c.retryIn ? ` every ${c.retryIn} s` : ''}…</span>
					<button type="button" onClick={retryNow}>
						Retry now
					</button>
				</>
			) : (
				<span>Live updates are disconnected. Reconnecting…</span>
			)}
		</div>
	);
}

function Routes({ path }) {
	let m;
	if (path.split('?')[0] === '/') return <Home />;
	if (match('/login', path)) return <Login />;
	if (match('/signup', path)) return <Signup />;
	if (match('/verify', path)) return <Verify />;
	if (match('/forgot', path)) return <Forgot />;
	if (match('/reset', path) || match('/reset-password', path)) return <Reset />;
	if (match('/dashboard', path)) return <SignedIn><Dashboard trash={false} /></SignedIn>;
	if (match('/trash', path)) return <SignedIn><Dashboard trash={true} /></SignedIn>;
	if (match('/settings', path)) return <SettingsHome />;
	if (match('/integrations', path)) return <SignedIn><Lazy load={loadIntegrations} name="IntegrationsPage" /></SignedIn>;
	if (match('/settings/account', path)) return <SignedIn><Lazy load={loadSettings} name="SettingsPage" section="account" /></SignedIn>;
	if ((m = match('/settings/workspace/:wid', path)))
		return (
			<SignedIn>
				<Lazy load={loadSettings} name="SettingsPage" section="workspace" wid={m.wid} />
			</SignedIn>
		);
	if ((m = match('/projects/:id', path)))
		return (
			<SignedIn>
				<Lazy load={loadProject} name="ProjectPage" id={m.id} key={m.id} />
			</SignedIn>
		);
	return <NotFound />;
}

function App() {
	const path = useStore(locationStore);
	const mainRef = useRef(null);
	const first = useRef(true);
	useEffect(() => {
		// Move focus to the new screen on client-side navigation (screen readers announce it).
		if (first.current) {
			first.current = false;
			return;
		}
		if (mainRef.current && !mainRef.current.contains(document.activeElement)) mainRef.current.focus({ preventScroll: true });
	}, [path.split('?')[0]]);
	return (
		<>
			<Banner />
			<div id="main" ref={mainRef} tabIndex={-1}>
				<Routes path={path} />
			</div>
		</>
	);
}

render(<App />, document.getElementById('app'));
