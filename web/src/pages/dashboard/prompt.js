// prompt.js: the pure parts of the dashboard's prompt box: a project's name from what the person asked for.

/** The words a request usually opens with, which say nothing about the app. */
const LEAD = /^(?:(?:hi|hello|hey|please|pls|ok|okay|so|can you|could you|would you|will you|i want(?: you)? to|i'd like(?: you)? to|i would like(?: you)? to|i need(?: you)? to|let's|lets|help me|i want|i need|i'd like|build|make|create|write|design|generate|code|develop|set up|start|give me|me|us|a|an|the|new|simple|small|little|quick|basic)[\s,.:;!-]+)+/iu;

/** Words after which the name has said what the app is ("a recipe box *where* …"). */
const STOP = new Set(['that', 'which', 'where', 'who', 'whose', 'with', 'without', 'for', 'to', 'so', 'and', 'or', 'using', 'in', 'on', 'from', 'like', 'when', 'while', 'by', 'of', 'but', 'because', 'as']);

export const NAME_MAX = 48; // characters; the API takes 128
const WORDS_MAX = 5;

/**
 * projectName(prompt): a short project name from the first words of `prompt` (the first line,
 * without the opening "Build me a …", up to the word where a description starts: "with",
 * "that", "for", …; at most 5 words and NAME_MAX characters, cut at a word), its first letter
 * upper-cased. 'New project' when nothing is left. Editable later in the project's settings.
 */
export function projectName(prompt) {
	const line = String(prompt || '')
		.split(/\r?\n/)
		.map((l) => l.trim())
		.find((l) => l) || '';
	// the first clause: up to a stop that ends a sentence or a clause (CJK ones need no space after)
	const clause = line.replace(LEAD, '').split(/[.!?;:,](?:\s|$)|[。，！？；：、]/u)[0];
	const words = clause.split(/\s+/).filter(Boolean);
	const out = [];
	for (const w of words) {
		const bare = w.replace(/^[^\p{L}\p{N}]+|[^\p{L}\p{N}]+$/gu, '');
		if (!bare) continue;
		if (out.length >= 1 && STOP.has(bare.toLowerCase())) break;
		if (out.length >= WORDS_MAX || [...out, bare].join(' ').length > NAME_MAX) break;
		out.push(bare);
	}
	// no word fits (one long word, or a script without spaces): its first NAME_MAX characters
	const name = out.length ? out.join(' ') : [...clause.replace(/[^\p{L}\p{N}\s-]/gu, ' ').trim()].slice(0, NAME_MAX).join('').trim();
	return name ? name[0].toLocaleUpperCase('en') + name.slice(1) : 'New project';
}
