// project.jsx: /projects/:id, the project page: chat on the left, Preview / Files / Versions on
// the right (one column of tabs below 900 px), Publish in the header. Its own chunk (main.jsx).
import { useEffect, useRef, useState } from 'preact/hooks';
import { getProject, publishProject, connectivity } from '../../lib/api.js';
import { me } from '../../lib/session.js';
import { useStore } from '../../lib/store.js';
import { Link } from '../../lib/router.js';
import { ago, when } from '../../lib/format.js';
import { openRoom, RoomContext, usePeople, colorFor } from '../../lib/room.js';
import { ErrorNote, Loading, useAsync, useTitle } from '../../ui/index.js';
import { ErrorPage } from '../errors.jsx';
import { Chat } from './chat/chat.jsx';
import { Files, canWrite } from './files/files.jsx';
import { Preview } from './preview/visual.jsx';
import { Versions } from './versions/versions.jsx';
import { Deployments } from './deployments/deployments.jsx';
import { Domains, canManageDomains } from './settings/domains.jsx';
import { GitPanel } from './settings/git.jsx';
import { Instructions } from './settings/instructions.jsx';

const NARROW = '(max-width: 899px)';

function useNarrow() {
	const mq = useRef(window.matchMedia(NARROW));
	const [narrow, setNarrow] = useState(mq.current.matches);
	useEffect(() => {
		const f = () => setNarrow(mq.current.matches);
		mq.current.addEventListener('change', f);
		return () => mq.current.removeEventListener('change', f);
	}, []);
	return narrow;
}

export function ProjectPage({ id }) {
	const user = useStore(me);
	const project = useAsync(() => getProject(id), [id]);
	const [tick, setTick] = useState(0); // bumped whenever the project's files changed
	const [deployTick, setDeployTick] = useState(0); // bumped after each publish
	const [room, setRoom] = useState(null);
	const people = usePeople(room);
	const [previewUrl, setPreviewUrl] = useState(null);
	const narrow = useNarrow();
	const [tab, setTab] = useState(() => (window.matchMedia(NARROW).matches ? 'chat' : 'preview')); // a phone opens on the chat
	const p = project.data;
	useTitle(p ? p.name : 'Project');
	const changed = useRef(0);
	const filesChanged = () => {
		clearTimeout(changed.current);
		changed.current = setTimeout(() => setTick((t) => t + 1), 300);
	};

	// The room: the page's one socket to svc-wsd (lib/room.js); its document's saves reload the
	// file list and the preview.
	useEffect(() => {
		if (!p || !user.features || !user.features.collaboration) return undefined;
		const r = openRoom(p.id, {
			user: { id: user.user.id, name: user.user.displayName || user.user.email, color: colorFor(user.user.id) },
			readOnly: !canWrite(user, p),
		});
		const meta = r.doc.getMap('meta');
		const files = r.doc.getMap('files');
		// the first sync brings the document as it is (nothing changed since the page loaded the preview
		// and the file list): only what comes after it is a change
		const onMeta = (ev) => r.status.get().synced && ev.keysChanged.has('lastSavedAt') && filesChanged();
		const onFiles = (ev) => r.status.get().synced && ev.keysChanged.size > 0 && filesChanged();
		meta.observe(onMeta);
		files.observe(onFiles);
		const unsub = r.status.subscribe((st) => {
			const up = st.state === 'connected' || st.state === 'connecting';
			connectivity.set((c) => (c.socket === up ? c : { ...c, socket: up }));
		});
		setRoom(r);
		return () => {
			unsub();
			meta.unobserve(onMeta);
			files.unobserve(onFiles);
			r.close();
			setRoom(null);
			connectivity.set((c) => (c.socket ? c : { ...c, socket: true }));
		};
	}, [p && p.id]);

	// git-io: a project imported from a Git URL shows "Importing…" until svc-worker is done (docs/git.md "Import")
	const importing = p && p.importState === 'importing';
	useEffect(() => {
		if (!importing) return undefined;
		const t = setInterval(() => project.reload(), 2000);
		return () => clearInterval(t);
	}, [importing]);
	// the files changed when an import ends (importing -> done), never on the page's first render: a
	// tick then would reload the preview frame a moment after it loaded
	const wasImporting = useRef(false);
	useEffect(() => {
		if (wasImporting.current && p && !p.importState) filesChanged();
		wasImporting.current = importing;
	}, [p && p.importState]);

	if (project.error) {
		const s = project.error.status;
		if (s === 404) return <ErrorPage code="404" title="Project not found" message="This project does not exist, or it was deleted (look in the Trash)." />;
		if (s === 403) return <ErrorPage code="403" title="You cannot see this project" message="It belongs to a workspace you are not a member of, or it is private. Ask its owner to share it." />;
		return <ErrorPage title="The project did not load" message={project.error.message} />;
	}
	if (!p) return <Loading label="Loading the project…" />;

	const tabs = [...(narrow ? [['chat', 'Chat']] : []), ['preview', 'Preview'], ['files', 'Files'], ['versions', 'Versions'], ['deployments', 'Deployments']];
	const current = !narrow && tab === 'chat' ? 'preview' : tab;
	return (
		<RoomContext.Provider value={room}>
			<div class="project">
				<div class="proj-head">
					<Link href="/dashboard" class="back">
						← Projects
					</Link>
					<h1 tabIndex={-1}>{p.name}</h1>
					<span class={'badge ' + p.visibility}>{p.visibility}</span>
					{people.length > 0 && (
						<ul class="people" aria-label="People here">
							{people.map((u) => (
								<li class="avatar" title={u.self ? `${u.name} (you)` : u.file ? `${u.name}, in ${u.file}` : u.name} key={u.id} style={{ background: u.color }}>
									<span aria-hidden="true">{(u.name || '?')[0].toUpperCase()}</span>
									<span class="sr-only">{u.self ? `${u.name} (you)` : u.name}</span>
								</li>
							))}
						</ul>
					)}
					<Publish project={p} previewUrl={previewUrl} onPublished={(np) => project.setData(np)} onDone={() => setDeployTick((t) => t + 1)} />
					{canManageDomains(user, p) && <Domains project={p} />}
					<GitPanel project={p} writable={canWrite(user, p)} onChanged={filesChanged} />
					{canWrite(user, p) && <Instructions project={p} onSaved={filesChanged} />}
				</div>
				{p.importState === 'importing' && (
					<p class="import-state" role="status">
						Importing… svc is fetching the repository; the files appear when it is done.
					</p>
				)}
				{p.importState === 'failed' && (
					<p class="import-state failed" role="alert">
						Import failed: {p.importError || 'the repository could not be fetched.'}
					</p>
				)}
				<div class="proj-body">
					{narrow && <Tabs tabs={tabs} current={current} onSelect={setTab} />}
					<section class="chat-pane" id="panel-chat" role={narrow ? 'tabpanel' : undefined} aria-label="Chat" hidden={narrow && current !== 'chat'}>
						<Chat project={p} onFilesChanged={filesChanged} />
					</section>
					<section class="work-pane" aria-label="Workspace" hidden={narrow && current === 'chat'}>
						{!narrow && <Tabs tabs={tabs} current={current} onSelect={setTab} />}
						<div role="tabpanel" id="panel-preview" aria-labelledby="tab-preview" hidden={current !== 'preview'} class="panel">
							<Preview project={p} tick={tick} onUrl={setPreviewUrl} onChanged={filesChanged} writer={canWrite(user, p)} />
						</div>
						<div role="tabpanel" id="panel-files" aria-labelledby="tab-files" hidden={current !== 'files'} class="panel">
							<Files project={p} tick={tick} writable={canWrite(user, p)} active={current === 'files'} />
						</div>
						<div role="tabpanel" id="panel-versions" aria-labelledby="tab-versions" hidden={current !== 'versions'} class="panel">
							<Versions project={p} tick={tick} onRestored={filesChanged} />
						</div>
						<div role="tabpanel" id="panel-deployments" aria-labelledby="tab-deployments" hidden={current !== 'deployments'} class="panel">
							<Deployments project={p} tick={deployTick} writer={canWrite(user, p)} onRestored={(at) => project.setData({ ...p, publishedAt: at })} />
						</div>
					</section>
				</div>
			</div>
		</RoomContext.Provider>
	);
}

/** Tabs: a tablist (arrow keys, Home, End move between tabs; WAI-ARIA APG "Tabs"). */
function Tabs({ tabs, current, onSelect }) {
	const ref = useRef(null);
	function key(e) {
		const i = tabs.findIndex(([k]) => k === current);
		let j = -1;
		if (e.key === 'ArrowRight') j = (i + 1) % tabs.length;
		else if (e.key === 'ArrowLeft') j = (i - 1 + tabs.length) % tabs.length;
		else if (e.key === 'Home') j = 0;
		else if (e.key === 'End') j = tabs.length - 1;
		if (j < 0) return;
		e.preventDefault();
		onSelect(tabs[j][0]);
		setTimeout(() => ref.current && ref.current.querySelector(`#tab-${tabs[j][0]}`).focus(), 0);
	}
	return (
		<div role="tablist" aria-label="Project views" class="tabs" ref={ref} onKeyDown={key}>
			{tabs.map(([k, label]) => (
				<button
					type="button"
					role="tab"
					id={'tab-' + k}
					key={k}
					aria-selected={k === current ? 'true' : 'false'}
					aria-controls={'panel-' + k}
					tabIndex={k === current ? 0 : -1}
					onClick={() => onSelect(k)}
				>
					{label}
				</button>
			))}
		</div>
	);
}

/**
 * publishedUrl(project, previewUrl): where the site is published: <slug>.<SVC_DOMAIN>[:port],
 * SVC_DOMAIN and port read from the preview URL (<token>.preview.<SVC_DOMAIN>:<port>).
 */
export function publishedUrl(p, previewUrl) {
	if (!previewUrl) return null;
	try {
		const u = new URL(previewUrl);
		const labels = u.hostname.split('.');
		const i = labels.indexOf('preview');
		if (i < 0) return null;
		return `${u.protocol}//${p.slug}.${labels.slice(i + 1).join('.')}${u.port ? ':' + u.port : ''}/`;
	} catch (e) {
		return null;
	}
}

function Publish({ project, previewUrl, onPublished, onDone }) {
	const [state, setState] = useState({ busy: false, url: null, error: null });
	const url = state.url || (project.publishedAt ? publishedUrl(project, previewUrl) : null);
	async function publish() {
		setState({ busy: true, url: state.url, error: null });
		try {
			const r = await publishProject(project.id);
			setState({ busy: false, url: r.url, error: null });
			if (r.project) onPublished(r.project);
		} catch (e) {
			setState({ busy: false, url: state.url, error: e });
		}
		onDone(); // the Deployments tab lists it, failed or live
	}
	return (
		<div class="publish">
			<button type="button" class="primary" onClick={publish} disabled={state.busy}>
				Publish
			</button>
			<div role="status" class="publish-status">
				{state.busy ? (
					<>
						<progress aria-label="Publishing" /> Publishing…
					</>
				) : project.publishedAt ? (
					<>
						<span>
							Published <time dateTime={project.publishedAt} title={when(project.publishedAt)}>{ago(project.publishedAt)}</time>
						</span>
						{url && (
							<a href={url} target="_blank" rel="noopener noreferrer">
								Open published site
							</a>
						)}
					</>
				) : null}
			</div>
			<ErrorNote error={state.error} />
		</div>
	);
}
