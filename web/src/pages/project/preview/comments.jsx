// comments.jsx: design comments on the preview (docs/web.md "Design comments"): the project's
// comments (GET /projects/:id/design-comments, then live over the room's message type 100,
// docs/collaboration.md "Design comments"), the pins over the frame and the Comments panel:
// new comments where the preview was clicked, replies, Resolve, Reopen, Delete.
import { useEffect, useRef, useState } from 'preact/hooks';
import * as encoding from 'lib0/encoding';
import * as decoding from 'lib0/decoding';
import { listDesignComments } from '../../../lib/api.js';
import { useRoom } from '../../../lib/room.js';
import { me } from '../../../lib/session.js';
import { useStore } from '../../../lib/store.js';
import { ago, when } from '../../../lib/format.js';
import { ConfirmDialog, ErrorNote, Field } from '../../../ui/index.js';
import { applyComment, threadsOf, pinAt } from './visual-bridge.js';

const MSG_COMMENTS = 100;

/**
 * useDesignComments(project): the project's design comments, kept live. Loads the list, then
 * listens to the room's type-100 messages (those that came before are kept by the room and
 * replayed in order over the list, so nothing is missed or undone). After a reconnect the list
 * is loaded again (what changed while the socket was down sends no message), the messages that
 * arrive meanwhile applied over it. Returns {comments: Map id -> comment, error, notice (the
 * server's last error for us, {message, at}), live (the room is connected), hasRoom, send(obj) ->
 * bool}.
 */
export function useDesignComments(project) {
	const room = useRoom();
	const [comments, setComments] = useState(() => new Map());
	const [error, setError] = useState(null);
	const [notice, setNotice] = useState(null);
	const [connected, setConnected] = useState(false);

	useEffect(() => {
		let gone = false;
		let unsub = () => {};
		let unstatus = () => {};
		let held = null; // messages that came while the list loads
		const onMsg = (msg) => {
			if (msg && msg.type === 'error') setNotice({ message: String(msg.message || msg.error || 'The server refused that.'), at: Date.now() });
			else if (held) held.push(msg);
			else setComments((m) => applyComment(m, msg));
		};
		const load = () => {
			held = [];
			return listDesignComments(project.id).then(
				(r) => {
					if (gone) return;
					let m = new Map();
					for (const c of r.items || []) m.set(c.id, c);
					for (const msg of held) m = applyComment(m, msg);
					held = null;
					setComments(m);
					setError(null);
				},
				(e) => {
					held = null;
					if (!gone) setError(e);
				},
			);
		};
		setComments(new Map());
		load().finally(() => {
			if (gone || !room) return;
			unsub = room.onMessage(MSG_COMMENTS, (decoder) => {
				try {
					onMsg(JSON.parse(decoding.readVarString(decoder)));
				} catch (e) {
					/* not JSON: not ours */
				}
			});
			let was = room.status.get().state;
			unstatus = room.status.subscribe((st) => {
				if (st.state === 'connected' && was !== 'connected' && was !== 'connecting') load();
				was = st.state;
			});
		});
		return () => {
			gone = true;
			unsub();
			unstatus();
		};
	}, [project.id, room]);

	useEffect(() => {
		if (!room) {
			setConnected(false);
			return undefined;
		}
		const f = (st) => setConnected(st.state === 'connected');
		f(room.status.get());
		return room.status.subscribe(f);
	}, [room]);

	function send(obj) {
		if (!room) return false;
		const e = encoding.createEncoder();
		encoding.writeVarString(e, JSON.stringify(obj));
		return room.sendMessage(MSG_COMMENTS, encoding.toUint8Array(e));
	}
	return { comments, error, notice, live: !!room && connected, hasRoom: !!room, send };
}

/** Whether the user may delete comment c: its author, an admin or owner of the workspace, a platform admin. */
function mayDelete(user, project, c) {
	if (!user || !user.user) return false;
	if (c.user && c.user.id === user.user.id) return true;
	if (user.user.isPlatformAdmin) return true;
	const w = (user.workspaces || []).find((x) => x.id === project.workspaceId);
	return !!w && (w.role === 'admin' || w.role === 'owner');
}

/**
 * Pins: a numbered button over the frame at each open thread of the page shown, placed at its
 * point inside its element's box (rects: selector -> [x, y, w, h] from the preview's script), and
 * the pin of a comment being written. Clicking one opens its thread in the panel.
 */
export function Pins({ threads, page, rects, draft, onOpen }) {
	const out = [];
	for (const t of threads) {
		const c = t.root;
		if (c.status === 'resolved' || (c.pagePath || '/') !== page) continue;
		const at = pinAt(rects.get(c.selector || 'html'), c.xPercent, c.yPercent);
		if (!at) continue;
		out.push(
			<button type="button" key={c.id} class="pin" style={{ left: at[0] + 'px', top: at[1] + 'px' }} aria-label={`Comment ${t.n}`} title={c.content} onClick={() => onOpen(c.id)}>
				{t.n}
			</button>,
		);
	}
	if (draft && draft.page === page) {
		const at = pinAt(rects.get(draft.selector) || draft.rect, draft.xPercent, draft.yPercent);
		if (at)
			out.push(
				<span key="draft" class="pin draft" style={{ left: at[0] + 'px', top: at[1] + 'px' }} aria-hidden="true">
					+
				</span>,
			);
	}
	return <div class="preview-pins">{out}</div>;
}

/**
 * CommentsPanel: the new comment (after a click in Comment mode), then the open and the resolved
 * threads with their page, replies, Resolve / Reopen and Delete.
 */
export function CommentsPanel({ project, state, threads, draft, commenting, writer, focus, onDraftDone }) {
	const user = useStore(me);
	const [text, setText] = useState('');
	const [error, setError] = useState(null);
	const [confirm, setConfirm] = useState(null); // the comment to delete
	const box = useRef(null);
	useEffect(() => {
		setText('');
		setError(null);
		if (draft && box.current) box.current.querySelector('textarea').focus();
	}, [draft]);
	useEffect(() => {
		if (state.notice) setError(state.notice.message);
	}, [state.notice]);

	function act(obj) {
		setError(null);
		if (!state.send(obj)) setError('Not connected to the live updates: try again when the connection is back.');
	}
	function post(e) {
		e.preventDefault();
		const content = text.trim();
		if (!content) return;
		if (!state.send({ type: 'design-comment:add', content, xPercent: draft.xPercent, yPercent: draft.yPercent, selector: draft.selector, pagePath: draft.page })) {
			setError('Not connected to the live updates: try again when the connection is back.');
			return;
		}
		onDraftDone();
	}
	const open = threads.filter((t) => t.root.status !== 'resolved');
	const resolved = threads.filter((t) => t.root.status === 'resolved');
	const list = (items, label) =>
		items.length ? (
			<ul class="threads" aria-label={label}>
				{items.map((t) => (
					<Thread key={t.root.id} t={t} project={project} user={user} writer={writer && state.live} focus={focus === t.root.id} onAct={act} onDelete={setConfirm} />
				))}
			</ul>
		) : (
			<p class="hint">{label === 'Open comments' ? 'No open comments.' : 'None resolved yet.'}</p>
		);
	return (
		<div class="comments">
			<h2>Comments</h2>
			{!state.hasRoom ? (
				<p class="hint">Comments are made over the live connection, which this server does not offer; here they can only be read.</p>
			) : !state.live ? (
				<p class="hint">Connecting to the live updates…</p>
			) : null}
			<ErrorNote error={state.error} />
			<ErrorNote error={error} />
			{draft ? (
				<form class="new-comment" ref={box} onSubmit={post} aria-label="New comment">
					<p class="hint">
						On <code>{draft.page}</code>, at <code class="sel">{draft.selector}</code>
					</p>
					<Field label="Comment" as="textarea" rows={3} value={text} onInput={(e) => setText(e.currentTarget.value)} maxLength={10000} />
					<div class="actions">
						<button type="button" class="ghost" onClick={onDraftDone}>
							Cancel
						</button>
						<button type="submit" class="primary" disabled={!text.trim() || !state.live}>
							Post comment
						</button>
					</div>
				</form>
			) : commenting ? (
				<p class="hint">Click the preview where your comment belongs.</p>
			) : null}
			<h3>Open ({open.length})</h3>
			{list(open, 'Open comments')}
			<h3>Resolved ({resolved.length})</h3>
			{list(resolved, 'Resolved comments')}
			{confirm && (
				<ConfirmDialog
					title={confirm.parentId ? 'Delete this reply?' : 'Delete this comment?'}
					text={confirm.parentId ? 'The reply is removed for everyone.' : 'The comment and its replies are removed for everyone.'}
					action="Delete"
					danger
					onClose={() => setConfirm(null)}
					onConfirm={async () => {
						const c = confirm;
						setConfirm(null);
						act({ type: 'design-comment:delete', commentId: c.id });
					}}
				/>
			)}
		</div>
	);
}

function Meta({ c }) {
	return (
		<p class="c-meta">
			<strong>{(c.user && c.user.name) || 'Someone'}</strong> · <time dateTime={c.createdAt} title={when(c.createdAt)}>{ago(c.createdAt)}</time>
		</p>
	);
}

function Thread({ t, project, user, writer, focus, onAct, onDelete }) {
	const c = t.root;
	const [reply, setReply] = useState('');
	const ref = useRef(null);
	useEffect(() => {
		if (focus && ref.current) {
			ref.current.scrollIntoView({ block: 'nearest' });
			ref.current.focus();
		}
	}, [focus]);
	const resolved = c.status === 'resolved';
	return (
		<li class={focus ? 'thread focus' : 'thread'} ref={ref} tabIndex={-1} aria-label={`Comment ${t.n}`}>
			<p class="c-head">
				<span class="pin-no" aria-hidden="true">
					{t.n}
				</span>
				<span class="c-page">
					on <code>{c.pagePath || '/'}</code>
				</span>
				{resolved && <span class="badge">resolved</span>}
			</p>
			<Meta c={c} />
			<p class="c-text">{c.content}</p>
			{t.replies.length > 0 && (
				<ul class="replies" aria-label="Replies">
					{t.replies.map((r) => (
						<li key={r.id}>
							<Meta c={r} />
							<p class="c-text">{r.content}</p>
							{writer && mayDelete(user, project, r) && (
								<button type="button" class="ghost small" onClick={() => onDelete(r)}>
									Delete reply
								</button>
							)}
						</li>
					))}
				</ul>
			)}
			{writer && (
				<>
					{!resolved && (
						<form
							class="reply"
							onSubmit={(e) => {
								e.preventDefault();
								if (!reply.trim()) return;
								onAct({ type: 'design-comment:add', content: reply.trim(), xPercent: c.xPercent, yPercent: c.yPercent, selector: c.selector, pagePath: c.pagePath, parentId: c.id });
								setReply('');
							}}
						>
							<Field label="Reply" value={reply} onInput={(e) => setReply(e.currentTarget.value)} maxLength={10000} />
							<button type="submit" class="secondary small" disabled={!reply.trim()}>
								Post reply
							</button>
						</form>
					)}
					<div class="c-actions">
						{resolved ? (
							<button type="button" class="secondary small" onClick={() => onAct({ type: 'design-comment:unresolve', commentId: c.id })}>
								Reopen
							</button>
						) : (
							<button type="button" class="secondary small" onClick={() => onAct({ type: 'design-comment:resolve', commentId: c.id })}>
								Resolve
							</button>
						)}
						{mayDelete(user, project, c) && (
							<button type="button" class="ghost small danger-text" onClick={() => onDelete(c)}>
								Delete comment
							</button>
						)}
					</div>
				</>
			)}
		</li>
	);
}
