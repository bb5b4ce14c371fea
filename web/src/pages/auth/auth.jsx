// auth.jsx: /login, /signup, /verify, /forgot and /reset: the screens before a session exists.
import { useEffect, useState } from 'preact/hooks';
import { getAuthProviders, login, signup, verifyEmail, forgotPassword, resetPassword, ApiError } from '../../lib/api.js';
import { me, loadMe } from '../../lib/session.js';
import { Link, navigate, query, withQuery } from '../../lib/router.js';
import { Field, ErrorNote, useTitle } from '../../ui/index.js';

/** safeNext(): the ?next= path to land on after sign-in; only paths of this app. */
export function safeNext() {
	const n = query('next');
	return n && n[0] === '/' && n[1] !== '/' && n[1] !== '\\' && !/^\/(login|signup)\b/.test(n) ? n : '/dashboard';
}

const OAUTH_ERRORS = {
	access_denied: 'You declined the sign-in at the provider.',
	invalid_state: 'The sign-in took too long or came from another browser. Try again.',
	email_not_verified: 'The provider has no verified e-mail address for you.',
	account_not_verified: 'An account already uses this e-mail address but has not confirmed it. Sign in with its password (or reset it), then connect the provider in your account settings.',
	exchange_failed: 'The provider did not confirm the sign-in. Try again.',
	profile_failed: 'Your profile could not be read from the provider.',
	provider_error: 'The provider reported an error.',
	server_error: 'svc could not finish the sign-in. Try again.',
};

function AuthShell({ title, children, footer }) {
	useTitle(title);
	return (
		<main class="auth">
			<div class="auth-card">
				<p class="brand big">svc</p>
				<h1 tabIndex={-1}>{title}</h1>
				{children}
			</div>
			{footer && <p class="auth-foot">{footer}</p>}
		</main>
	);
}

function errorText(e) {
	if (!(e instanceof ApiError)) return 'Something went wrong. Try again.';
	if (e.status === 429) return 'Too many attempts. Wait a minute and try again.';
	if (e.code === 'network') return e.message;
	return e.message;
}

function Providers() {
	const [items, setItems] = useState([]);
	useEffect(() => {
		getAuthProviders()
			.then((r) => setItems((r && r.items) || []))
			.catch(() => setItems([]));
	}, []);
	if (!items.length) return null;
	return (
		<div class="providers">
			<p class="or">or</p>
			{items.map((p) => (
				<button type="button" class="secondary wide" key={p.id} onClick={() => window.location.assign(p.url)}>
					Continue with {p.name}
				</button>
			))}
		</div>
	);
}

export function Login() {
	const [email, setEmail] = useState('');
	const [password, setPassword] = useState('');
	const [busy, setBusy] = useState(false);
	const [error, setError] = useState(null);
	const oauthError = query('error');
	async function submit(e) {
		e.preventDefault();
		setBusy(true);
		setError(null);
		try {
			await login(email, password);
			me.set(undefined);
			await loadMe(true);
			navigate(safeNext(), { replace: true });
		} catch (err) {
			setError(err.status === 401 ? 'That e-mail and password do not match an account.' : errorText(err));
			setBusy(false);
		}
	}
	return (
		<AuthShell
			title="Sign in"
			footer={
				<>
					New here? <Link href={withQuery('/signup', { next: query('next') })}>Create an account</Link>
				</>
			}
		>
			{oauthError && <ErrorNote error={OAUTH_ERRORS[oauthError] || 'The sign-in did not work. Try again.'} />}
			<form onSubmit={submit} noValidate>
				<Field label="Email" type="email" autocomplete="username" required value={email} onInput={(e) => setEmail(e.currentTarget.value)} />
				<Field label="Password" type="password" autocomplete="current-password" required value={password} onInput={(e) => setPassword(e.currentTarget.value)} />
				<ErrorNote error={error} />
				<button type="submit" class="primary wide" disabled={busy}>
					Sign in
				</button>
			</form>
			<p class="aside">
				<Link href="/forgot">Forgot your password?</Link>
			</p>
			<Providers />
		</AuthShell>
	);
}

export function Signup() {
	const [email, setEmail] = useState('');
	const [password, setPassword] = useState('');
	const [name, setName] = useState('');
	const [busy, setBusy] = useState(false);
	const [error, setError] = useState(null);
	const [sent, setSent] = useState(null);
	async function submit(e) {
		e.preventDefault();
		if (password.length < 8) {
			setError({ field: 'password', message: 'Use at least 8 characters.' });
			return;
		}
		setBusy(true);
		setError(null);
		try {
			const r = await signup({ email, password, displayName: name || null });
			// 202: the account is made by the link mailed to the address (docs/api.md "POST /auth/signup")
			if (r && r.status === 'verification_sent') {
				setSent(email);
				setBusy(false);
				return;
			}
			me.set(undefined);
			await loadMe(true);
			navigate(safeNext(), { replace: true });
		} catch (err) {
			setError(err.status === 409 ? { field: 'email', message: 'An account with this e-mail exists. Sign in instead.' } : { field: err.field, message: errorText(err) });
			setBusy(false);
		}
	}
	const fe = (f) => (error && error.field === f ? error.message : null);
	if (sent)
		return (
			<AuthShell title="Check your e-mail" footer={<Link href="/login">Back to sign in</Link>}>
				<p role="status">
					We sent a message to <strong>{sent}</strong>. Open the link in it to finish creating your account. The link works once, for 24 hours.
				</p>
				<p class="aside">Nothing arrived? Look in the spam folder, or sign up again for a new link.</p>
			</AuthShell>
		);
	return (
		<AuthShell
			title="Create your account"
			footer={
				<>
					Have an account? <Link href={withQuery('/login', { next: query('next') })}>Sign in</Link>
				</>
			}
		>
			<form onSubmit={submit} noValidate>
				<Field label="Email" type="email" autocomplete="email" required value={email} error={fe('email')} onInput={(e) => setEmail(e.currentTarget.value)} />
				<Field
					label="Password"
					type="password"
					autocomplete="new-password"
					required
					value={password}
					error={fe('password')}
					hint="At least 8 characters."
					onInput={(e) => setPassword(e.currentTarget.value)}
				/>
				<Field label="Your name (optional)" autocomplete="name" value={name} error={fe('displayName')} onInput={(e) => setName(e.currentTarget.value)} />
				{error && !['email', 'password', 'displayName'].includes(error.field) && <ErrorNote error={error.message} />}
				<button type="submit" class="primary wide" disabled={busy}>
					Sign up
				</button>
			</form>
			<Providers />
		</AuthShell>
	);
}

/** Verify: /verify?token=…, the link of a sign-up's message; creates the account and lands on /dashboard. */
export function Verify() {
	const token = query('token') || '';
	const [error, setError] = useState(null);
	useEffect(() => {
		if (!token) return;
		let live = true;
		verifyEmail(token)
			.then(async () => {
				me.set(undefined);
				await loadMe(true);
				if (live) navigate('/dashboard', { replace: true });
			})
			.catch((err) => {
				if (!live) return;
				if (err.code === 'invalid_token') setError('This link is used up or expired. Sign up again for a new one.');
				else if (err.status === 409) setError('An account with this e-mail exists already. Sign in, or reset its password.');
				else setError(errorText(err));
			});
		return () => (live = false);
	}, [token]);
	return (
		<AuthShell title="Confirm your e-mail" footer={<Link href="/login">Back to sign in</Link>}>
			{!token ? (
				<p>
					This link has no token. <Link href="/signup">Sign up</Link> to get a new one.
				</p>
			) : error ? (
				<>
					<ErrorNote error={error} />
					<p class="aside">
						<Link href="/signup">Sign up again</Link>
					</p>
				</>
			) : (
				<p role="status">Confirming your e-mail…</p>
			)}
		</AuthShell>
	);
}

export function Forgot() {
	const [email, setEmail] = useState('');
	const [done, setDone] = useState(null);
	const [error, setError] = useState(null);
	async function submit(e) {
		e.preventDefault();
		setError(null);
		try {
			const r = await forgotPassword(email);
			setDone((r && r.message) || 'If an account uses this address, a message with a reset link is on its way.');
		} catch (err) {
			setError(errorText(err));
		}
	}
	return (
		<AuthShell title="Reset your password" footer={<Link href="/login">Back to sign in</Link>}>
			{done ? (
				<p role="status">{done}</p>
			) : (
				<form onSubmit={submit} noValidate>
					<Field label="Email" type="email" autocomplete="email" required value={email} onInput={(e) => setEmail(e.currentTarget.value)} />
					<ErrorNote error={error} />
					<button type="submit" class="primary wide">
						Send reset link
					</button>
				</form>
			)}
		</AuthShell>
	);
}

export function Reset() {
	const token = query('token') || '';
	const [password, setPassword] = useState('');
	const [done, setDone] = useState(false);
	const [error, setError] = useState(null);
	async function submit(e) {
		e.preventDefault();
		if (password.length < 8) return setError('Use at least 8 characters.');
		setError(null);
		try {
			await resetPassword(token, password);
			setDone(true);
		} catch (err) {
			setError(err.code === 'invalid_token' ? 'This reset link is used up or expired. Ask for a new one.' : errorText(err));
		}
	}
	return (
		<AuthShell title="Choose a new password" footer={<Link href="/login">Back to sign in</Link>}>
			{done ? (
				<p role="status">
					Your password is set. <Link href="/login">Sign in</Link>
				</p>
			) : !token ? (
				<p>
					This link has no reset token. <Link href="/forgot">Ask for a new link</Link>.
				</p>
			) : (
				<form onSubmit={submit} noValidate>
					<Field label="New password" type="password" autocomplete="new-password" required value={password} hint="At least 8 characters." onInput={(e) => setPassword(e.currentTarget.value)} />
					<ErrorNote error={error} />
					<button type="submit" class="primary wide">
						Set password
					</button>
				</form>
			)}
		</AuthShell>
	);
}
