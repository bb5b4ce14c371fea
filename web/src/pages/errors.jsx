// errors.jsx: the pages for an unknown address and for what the user may not see.
import { Link } from '../lib/router.js';
import { useTitle } from '../ui/index.js';

/** ErrorPage: a title, a sentence and a way back to the dashboard. */
export function ErrorPage({ title, message, code }) {
	useTitle(title);
	return (
		<main class="error-page">
			{code && <p class="code">{code}</p>}
			<h1 tabIndex={-1}>{title}</h1>
			{message && <p>{message}</p>}
			<p>
				<Link href="/dashboard">Go to your dashboard</Link>
			</p>
		</main>
	);
}

/** NotFound: the page for an address the app does not have (the HTTP status stays 200: the SPA answers it). */
export function NotFound() {
	return <ErrorPage code="404" title="Page not found" message="There is nothing at this address. It may have moved, or the link may be wrong." />;
}
