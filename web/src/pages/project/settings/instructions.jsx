// instructions.jsx: the project's Instructions panel: its AGENTS.md (docs/agent.md "Project
// instructions"), which the agent reads in every turn after the workspace's instructions; saved
// as a normal commit through PUT /projects/:id/files/AGENTS.md.
import { useState } from 'preact/hooks';
import { readFile, saveAgentsMd } from '../../../lib/api.js';
import { Dialog, ErrorNote, Field, Loading, useAsync } from '../../../ui/index.js';

const PATH = 'AGENTS.md';
const SHOWN_MAX = 16 * 1024; // SVC_AGENT_INSTRUCTIONS_MAX_BYTES's default: what the agent reads of it

/** Instructions: the "Instructions" button and its dialog, for a project its user may write. */
export function Instructions({ project, onSaved }) {
	const [open, setOpen] = useState(false);
	return (
		<>
			<button type="button" class="ghost" onClick={() => setOpen(true)}>
				Instructions
			</button>
			{open && <InstructionsDialog project={project} onClose={() => setOpen(false)} onSaved={onSaved} />}
		</>
	);
}

function InstructionsDialog({ project, onClose, onSaved }) {
	const cur = useAsync(async () => {
		try {
			return await (await readFile(project.id, PATH)).text();
		} catch (e) {
			if (e.status === 404) return '';
			throw e;
		}
	}, [project.id]);
	const [text, setText] = useState(null);
	const [busy, setBusy] = useState(false);
	const [error, setError] = useState(null);
	const [status, setStatus] = useState('');
	const value = text !== null ? text : cur.data || '';
	const size = new TextEncoder().encode(value).length;
	async function save(e) {
		e.preventDefault();
		setBusy(true);
		setError(null);
		try {
			await saveAgentsMd(project.id, value);
			setStatus('AGENTS.md is saved as a new version.');
			if (onSaved) onSaved();
		} catch (err) {
			setError(err);
		} finally {
			setBusy(false);
		}
	}
	return (
		<Dialog title="Instructions" onClose={onClose} wide>
			<p class="hint">The agent reads this project’s AGENTS.md in every turn, after the workspace’s instructions. Saving makes a new version.</p>
			{cur.loading && cur.data === undefined ? (
				<Loading />
			) : (
				<form class="settings-form" onSubmit={save}>
					<ErrorNote error={cur.error} />
					<Field label="AGENTS.md" as="textarea" rows={14} value={value} hint={size > SHOWN_MAX ? `${size} bytes: the agent reads the first ${SHOWN_MAX}.` : `${size} bytes`} onInput={(e) => setText(e.currentTarget.value)} />
					<ErrorNote error={error} />
					<div class="form-end">
						<button type="submit" class="primary" disabled={busy || !!cur.error}>
							Save instructions
						</button>
						<p role="status" class="status-line">
							{status}
						</p>
					</div>
				</form>
			)}
		</Dialog>
	);
}
