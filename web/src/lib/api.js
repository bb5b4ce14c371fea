// api.js: every call the app makes to svc's HTTP API (docs/api.md), one exported function per
// endpoint (named after what it does: getProject(id), saveFile(id, path, content)…), with the
// session rules. No other file of the app holds an API path or calls fetch()
// (tests/web/unit/api-paths.test.mjs checks it); a new endpoint gets its function here.
//
// The session lives only in the HttpOnly cookies svc sets (svc_access_token, and
// svc_refresh_token on /api/auth): nothing is kept in localStorage or sessionStorage and no
// token is ever read by script. On a 401 the client calls POST /api/auth/refresh once (one
// refresh in flight for all callers) and repeats the request; when the refresh fails too,
// onSessionLost() sends the user to /login?next=<where they were> (spec, Authentication 5).
// A network failure or a 502/503/504 marks the API unreachable (the banner in main.jsx),
// and a probe retries with backoff until it answers again.
import { createStore } from './store.js';
import { withQuery } from './url.js';

const API = '/api';

/** An error answer of the API: status, code (its "error" field), message, field. */
export class ApiError extends Error {
	constructor(status, body) {
		super((body && body.message) || `The server answered ${status}.`);
		this.status = status;
		this.code = (body && body.error) || (status === 0 ? 'network' : 'http_' + status);
		this.field = body && body.field;
		this.body = body;
	}
}

/** Whether the API (and, on a project page, the collaboration socket) can be reached. */
export const connectivity = createStore({ api: true, socket: true, retryIn: 0 });

let sessionLost = () => {};
/** onSessionLost(fn): what to do when a refresh fails (main.jsx: go to /login?next=…). */
export function onSessionLost(fn) {
	sessionLost = fn;
}

let refreshing = null;
/** refreshSession(): POST /auth/refresh once for everyone waiting; resolves true when it worked. */
export function refreshSession() {
	if (!refreshing) {
		refreshing = fetch(API + '/auth/refresh', { method: 'POST', credentials: 'same-origin', headers: { Accept: 'application/json' } })
			.then((r) => r.ok)
			.catch(() => false)
			.finally(() => {
				setTimeout(() => (refreshing = null), 0);
			});
	}
	return refreshing;
}

const NO_REFRESH = /^\/auth\/(login|signup|verify-email|refresh|logout|forgot-password|reset-password|providers)\b/;

async function send(path, opts) {
	const headers = { Accept: opts.accept || 'application/json', ...(opts.headers || {}) };
	const init = { method: opts.method || 'GET', credentials: 'same-origin', headers, signal: opts.signal };
	if (opts.body !== undefined) {
		headers['Content-Type'] = 'application/json';
		init.body = JSON.stringify(opts.body);
	} else if (opts.rawBody !== undefined) {
		// git-io: a file sent as it is (a ZIP to import), with its own content type
		headers['Content-Type'] = opts.contentType;
		init.body = opts.rawBody;
	}
	let r;
	try {
		r = await fetch(API + path, init);
	} catch (e) {
		if (e && e.name === 'AbortError') throw e;
		apiDown();
		throw new ApiError(0, { error: 'network', message: 'The server cannot be reached.' });
	}
	if (r.status === 502 || r.status === 503 || r.status === 504) apiDown();
	else apiUp();
	return r;
}

/**
 * request(path, opts): calls the API and resolves the answer (the endpoint functions below).
 * path: under /api ("/projects?limit=20"). opts: method, body (sent as JSON), signal,
 * raw (resolve the Response instead of its JSON), accept, headers, auth (false: no
 * refresh on 401, for the sign-in pages), quietSessionLoss (a failed refresh only rejects).
 * Rejects with ApiError for any status >= 400 (after the one refresh on 401).
 */
async function request(path, opts = {}) {
	let r = await send(path, opts);
	if (r.status === 401 && opts.auth !== false && !NO_REFRESH.test(path)) {
		if (await refreshSession()) r = await send(path, opts);
		if (r.status === 401) {
			if (!opts.quietSessionLoss) sessionLost();
			throw new ApiError(401, await body(r));
		}
	}
	if (!r.ok) throw new ApiError(r.status, await body(r));
	if (opts.raw) return r;
	if (r.status === 204) return null;
	return body(r);
}

async function body(r) {
	const t = await r.text();
	if (!t) return null;
	try {
		return JSON.parse(t);
	} catch (e) {
		return { error: 'http_' + r.status, message: t.slice(0, 200) };
	}
}

// get/post/patch/put/del(path, body?): shorthands of request() for the endpoint functions.
const get = (path, opts) => request(path, opts);
const post = (path, b, opts) => request(path, { ...opts, method: 'POST', body: b });
const patch = (path, b, opts) => request(path, { ...opts, method: 'PATCH', body: b });
const put = (path, b, opts) => request(path, { ...opts, method: 'PUT', body: b });
const del = (path, opts) => request(path, { ...opts, method: 'DELETE' });

/** enc(s): a path segment, percent-encoded. */
export const enc = encodeURIComponent;
// the sign-in pages' calls: a 401 there is an answer, not a lost session
const SIGNED_OUT = { auth: false };
// a streamed answer: the Response itself, its body read by lib/sse.js
const STREAM = { raw: true, accept: 'text/event-stream' };

// Each function below resolves the answer's JSON (null for 204) or rejects with ApiError, unless
// it says otherwise; docs/api.md has each answer's shape. Ids are percent-encoded here.

// ------------------------------------------------------------------ account and sign-in

/** getAuthProviders(): GET /auth/providers, the sign-in providers the instance offers. */
export const getAuthProviders = () => get('/auth/providers', SIGNED_OUT);
/** login(email, password): POST /auth/login; sets the session cookies. */
export const login = (email, password) => post('/auth/login', { email, password }, SIGNED_OUT);
/** signup({email, password, displayName}): POST /auth/signup (201 signed in, or 202 verification_sent). */
export const signup = (body) => post('/auth/signup', body, SIGNED_OUT);
/** verifyEmail(token): POST /auth/verify-email, the sign-up link's token; signs in. */
export const verifyEmail = (token) => post('/auth/verify-email', { token }, SIGNED_OUT);
/** forgotPassword(email): POST /auth/forgot-password (sends the reset link). */
export const forgotPassword = (email) => post('/auth/forgot-password', { email }, SIGNED_OUT);
/** resetPassword(token, password): POST /auth/reset-password, the reset link's token. */
export const resetPassword = (token, password) => post('/auth/reset-password', { token, password }, SIGNED_OUT);
/** getMe(): GET /auth/me, the signed-in user; a failed refresh only rejects (lib/session.js decides). */
export const getMe = () => get('/auth/me', { quietSessionLoss: true });
/** logout(): POST /auth/logout (clears the cookies). */
export const logout = () => post('/auth/logout');
/** updateMe(body): PATCH /auth/me ({displayName}). */
export const updateMe = (body) => patch('/auth/me', body);
/** changePassword(body): POST /auth/password ({currentPassword?, newPassword}). */
export const changePassword = (body) => post('/auth/password', body);
/** listIdentities(): GET /auth/identities, the sign-in providers linked to the account. */
export const listIdentities = () => get('/auth/identities');
/** deleteIdentity(provider): DELETE /auth/identities/:provider. */
export const deleteIdentity = (provider) => del(`/auth/identities/${enc(provider)}`);
/** identityLinkUrl(provider): the URL of GET /auth/:provider/link, for a top-level navigation. */
export const identityLinkUrl = (provider) => `${API}/auth/${enc(provider)}/link`;
/** assistantConnectUrl(): the URL of GET /auth/github/assistant, for a top-level navigation. */
export const assistantConnectUrl = () => `${API}/auth/github/assistant`;
/** listTokens(): GET /auth/tokens, the caller's API tokens. */
export const listTokens = () => get('/auth/tokens');
/** createToken({name, scopes}): POST /auth/tokens; the answer holds the secret, once. */
export const createToken = (body) => post('/auth/tokens', body);
/** revokeToken(id): DELETE /auth/tokens/:id. */
export const revokeToken = (id) => del(`/auth/tokens/${enc(id)}`);

// ------------------------------------------------------------------ workspaces

/** createWorkspace(name): POST /workspaces. */
export const createWorkspace = (name) => post('/workspaces', { name });
/** getWorkspace(wid): GET /workspaces/:wid. */
export const getWorkspace = (wid) => get(`/workspaces/${enc(wid)}`);
/** renameWorkspace(wid, name): PATCH /workspaces/:wid. */
export const renameWorkspace = (wid, name) => patch(`/workspaces/${enc(wid)}`, { name });
/** leaveWorkspace(wid): POST /workspaces/:wid/leave. */
export const leaveWorkspace = (wid) => post(`/workspaces/${enc(wid)}/leave`);
/** listMembers(wid): GET /workspaces/:wid/members. */
export const listMembers = (wid) => get(`/workspaces/${enc(wid)}/members`);
/** addMember(wid, email, role): POST /workspaces/:wid/members (an invitation by e-mail). */
export const addMember = (wid, email, role) => post(`/workspaces/${enc(wid)}/members`, { email, role });
/** setMemberRole(wid, userId, role): PATCH /workspaces/:wid/members/:userId. */
export const setMemberRole = (wid, userId, role) => patch(`/workspaces/${enc(wid)}/members/${enc(userId)}`, { role });
/** removeMember(wid, userId): DELETE /workspaces/:wid/members/:userId. */
export const removeMember = (wid, userId) => del(`/workspaces/${enc(wid)}/members/${enc(userId)}`);
/** transferWorkspace(wid, userId): POST /workspaces/:wid/transfer (ownership to userId). */
export const transferWorkspace = (wid, userId) => post(`/workspaces/${enc(wid)}/transfer`, { userId });
/** listFolders(wid): GET /workspaces/:wid/folders. */
export const listFolders = (wid) => get(`/workspaces/${enc(wid)}/folders`);
/** createFolder(wid, name): POST /workspaces/:wid/folders. */
export const createFolder = (wid, name) => post(`/workspaces/${enc(wid)}/folders`, { name });
/** renameFolder(id, name): PATCH /folders/:id. */
export const renameFolder = (id, name) => patch(`/folders/${enc(id)}`, { name });
/** deleteFolder(id): DELETE /folders/:id. */
export const deleteFolder = (id) => del(`/folders/${enc(id)}`);
/** getAiProvider(wid): GET /workspaces/:wid/ai-provider. */
export const getAiProvider = (wid) => get(`/workspaces/${enc(wid)}/ai-provider`);
/** setAiProvider(wid, body): PUT /workspaces/:wid/ai-provider. */
export const setAiProvider = (wid, body) => put(`/workspaces/${enc(wid)}/ai-provider`, body);
/** getCredits(wid): GET /workspaces/:wid/credits. */
export const getCredits = (wid) => get(`/workspaces/${enc(wid)}/credits`);
/** setCreditLimit(wid, limitUsd): PUT /workspaces/:wid/credits (null: the instance default). */
export const setCreditLimit = (wid, limitUsd) => put(`/workspaces/${enc(wid)}/credits`, { limitUsd });

// ------------------------------------------------------------------ projects

/** listProjects(params): GET /projects?… (workspaceId, folderId, visibility, q, deleted, limit, cursor; empty ones left out). */
export const listProjects = (params) => get(withQuery('/projects', params));
/** listTemplates(): GET /templates. */
export const listTemplates = () => get('/templates');
/** createProject(wid, body): POST /workspaces/:wid/projects ({name, template, prompt, folderId…}). */
export const createProject = (wid, body) => post(`/workspaces/${enc(wid)}/projects`, body);
/** getProject(id): GET /projects/:id. */
export const getProject = (id) => get(`/projects/${enc(id)}`);
/** updateProject(id, body): PATCH /projects/:id (name, visibility, folderId…). */
export const updateProject = (id, body) => patch(`/projects/${enc(id)}`, body);
/** deleteProject(id): DELETE /projects/:id (to the trash). */
export const deleteProject = (id) => del(`/projects/${enc(id)}`);
/** restoreProject(id): POST /projects/:id/restore (out of the trash). */
export const restoreProject = (id) => post(`/projects/${enc(id)}/restore`);
/** duplicateProject(id): POST /projects/:id/duplicate. */
export const duplicateProject = (id) => post(`/projects/${enc(id)}/duplicate`, {});

// ------------------------------------------------------------------ a project's chats

/** listChats(pid): GET /projects/:pid/chats. */
export const listChats = (pid) => get(`/projects/${enc(pid)}/chats`);
/** createChat(pid, mode): POST /projects/:pid/chats. */
export const createChat = (pid, mode) => post(`/projects/${enc(pid)}/chats`, { mode });
/** listChatMessages(pid, {chatId, limit, before}): GET /chat/:pid/messages?…, a page of a chat's events. */
export const listChatMessages = (pid, params) => get(withQuery(`/chat/${enc(pid)}/messages`, params));
/** sendChatMessage(pid, body): POST /chat/:pid/messages; resolves the Response, a text/event-stream. */
export const sendChatMessage = (pid, body) => request(`/chat/${enc(pid)}/messages`, { ...STREAM, method: 'POST', body });
/** sendPlanMessage(pid, body): POST /plan/:pid; resolves the Response, a text/event-stream. */
export const sendPlanMessage = (pid, body) => request(`/plan/${enc(pid)}`, { ...STREAM, method: 'POST', body });
/** runPlan(pid, chatId): POST /plan/:pid/:chatId/run; resolves the Response, a text/event-stream. */
export const runPlan = (pid, chatId) => request(`/plan/${enc(pid)}/${enc(chatId)}/run`, { ...STREAM, method: 'POST' });
/** stopChat(pid, chatId): POST /chat/:pid/stop, the running turn of that chat. */
export const stopChat = (pid, chatId) => post(`/chat/${enc(pid)}/stop`, { chatId });

// ------------------------------------------------------------------ a project's files

/** the API path of a project file, each segment percent-encoded */
const filePath = (pid, path) => `/projects/${enc(pid)}/files/${path.split('/').map(enc).join('/')}`;
/** listProjectFiles(pid): GET /projects/:pid/files. */
export const listProjectFiles = (pid) => get(`/projects/${enc(pid)}/files`);
/** readFile(pid, path): GET /projects/:pid/files/<path>; resolves the Response (any type). */
export const readFile = (pid, path) => request(filePath(pid, path), { raw: true, accept: '*/*' });
/** saveFile(pid, path, content): PUT /projects/:pid/files/<path> (creates or replaces it). */
export const saveFile = (pid, path, content) => put(filePath(pid, path), { content });
/** renameFile(pid, path, newPath): PATCH /projects/:pid/files/<path>. */
export const renameFile = (pid, path, newPath) => patch(filePath(pid, path), { path: newPath });
/** deleteFile(pid, path): DELETE /projects/:pid/files/<path>. */
export const deleteFile = (pid, path) => del(filePath(pid, path));

// ------------------------------------------------------------------ preview, versions, publishing

/** getPreview(pid): GET /projects/:pid/preview, {url, expiresAt, devServer} of the preview origin. */
export const getPreview = (pid) => get(`/projects/${enc(pid)}/preview`);
/** directSave(pid, filePath, patches): POST /direct-save/:pid (visual editing). */
export const directSave = (pid, filePath, patches) => post(`/direct-save/${enc(pid)}`, { filePath, patches });
/** listDesignComments(pid): GET /projects/:pid/design-comments. */
export const listDesignComments = (pid) => get(`/projects/${enc(pid)}/design-comments`);
/** listVersions(pid): GET /projects/:pid/versions. */
export const listVersions = (pid) => get(`/projects/${enc(pid)}/versions`);
/** getVersionDiff(pid, sha): GET /projects/:pid/versions/:sha/diff. */
export const getVersionDiff = (pid, sha) => get(`/projects/${enc(pid)}/versions/${enc(sha)}/diff`);
/** checkoutVersion(pid, sha): POST /projects/:pid/versions/:sha/checkout (Restore: a new version). */
export const checkoutVersion = (pid, sha) => post(`/projects/${enc(pid)}/versions/${enc(sha)}/checkout`);
/** publishProject(pid): POST /deploy/:pid; resolves when the build is done. */
export const publishProject = (pid) => post(`/deploy/${enc(pid)}`);
/** listDeployments(pid): GET /projects/:pid/deployments. */
export const listDeployments = (pid) => get(`/projects/${enc(pid)}/deployments`);
/** restoreDeployment(pid, id): POST /projects/:pid/deployments/:id/restore. */
export const restoreDeployment = (pid, id) => post(`/projects/${enc(pid)}/deployments/${enc(id)}/restore`);

// ------------------------------------------------------------------ the agent's budget, instructions, revert (issue 29)

/** getBudget(wid): GET /workspaces/:wid/budget (caps, the caller's spend, warnings). */
export const getBudget = (wid) => get(`/workspaces/${enc(wid)}/budget`);
/** setBudget(wid, caps, more): PUT /workspaces/:wid/budget {caps: {<cap>: {limitUsd, warnPercent, block} | null}, ...more} (more: {fixRounds}, the preview check's). */
export const setBudget = (wid, caps, more) => put(`/workspaces/${enc(wid)}/budget`, { caps, ...(more || {}) });
/** setMemberCaps(wid, members): PUT /workspaces/:wid/budget {members: {<user id>: {limitUsd, warnPercent, block} | null}} (members' own daily caps). */
export const setMemberCaps = (wid, members) => put(`/workspaces/${enc(wid)}/budget`, { members });
/** getAdminBudget(): GET /admin/budget, every workspace's spend (platform admins). */
export const getAdminBudget = () => get('/admin/budget');
/** getInstructions(wid): GET /workspaces/:wid/instructions. */
export const getInstructions = (wid) => get(`/workspaces/${enc(wid)}/instructions`);
/** setInstructions(wid, text): PUT /workspaces/:wid/instructions ("" removes them). */
export const setInstructions = (wid, text) => put(`/workspaces/${enc(wid)}/instructions`, { text });
/** saveAgentsMd(pid, content): PUT /projects/:pid/files/AGENTS.md {content, overwrite: true} (one commit, created or replaced). */
export const saveAgentsMd = (pid, content) => put(filePath(pid, 'AGENTS.md'), { content, overwrite: true });
/** revertVersion(pid, sha): POST /projects/:pid/versions/:sha/revert (undo that one version, as a new one). */
export const revertVersion = (pid, sha) => post(`/projects/${enc(pid)}/versions/${enc(sha)}/revert`);

// ------------------------------------------------------------------ custom domains

/** listDomains(pid): GET /domains/project/:pid. */
export const listDomains = (pid) => get(`/domains/project/${enc(pid)}`);
/** addDomain(pid, domain): POST /domains/project/:pid. */
export const addDomain = (pid, domain) => post(`/domains/project/${enc(pid)}`, { domain });
/** verifyDomain(id): POST /domains/:id/verify (the checks now). */
export const verifyDomain = (id) => post(`/domains/${enc(id)}/verify`);
/** deleteDomain(id): DELETE /domains/:id. */
export const deleteDomain = (id) => del(`/domains/${enc(id)}`);

// ------------------------------------------------------------------ integrations

// "?workspaceId=W" when a workspace is chosen, else nothing
const inWorkspace = (wid) => (wid ? `?workspaceId=${enc(wid)}` : '');
/** listIntegrations(params): GET /integrations?… (limit, q, category, cursor, workspaceId; empty ones left out). */
export const listIntegrations = (params) => get(withQuery('/integrations', params));
/** getIntegration(id, wid): GET /integrations/:id, with ?workspaceId=wid when wid is given (even ''). */
export const getIntegration = (id, wid) => get(`/integrations/${enc(id)}` + (wid === undefined ? '' : `?workspaceId=${enc(wid)}`));
/** integrationConnectUrl(id, wid): the URL of GET /integrations/:id/connect, for a top-level navigation. */
export const integrationConnectUrl = (id, wid) => `${API}/integrations/${enc(id)}/connect${inWorkspace(wid)}`;
/** disconnectIntegration(id, wid): DELETE /integrations/:id/connection (the workspace's one). */
export const disconnectIntegration = (id, wid) => del(`/integrations/${enc(id)}/connection${inWorkspace(wid)}`);
/** setWorkspaceIntegration(wid, id, body): PUT /workspaces/:wid/integrations/:id ({enabled, readOnly}). */
export const setWorkspaceIntegration = (wid, id, body) => put(`/workspaces/${enc(wid)}/integrations/${enc(id)}`, body);
/** setIntegrationsBulk(which, ids, enabled): POST /integrations/admin/:which/bulk (which: platform or default). */
export const setIntegrationsBulk = (which, ids, enabled) => post(`/integrations/admin/${which}/bulk`, { integrationIds: ids, enabled });
/** listOAuthApps(integrationId): GET /integrations/admin/oauth-apps?integrationId=…. */
export const listOAuthApps = (integrationId) => get(`/integrations/admin/oauth-apps?integrationId=${enc(integrationId)}`);
/** createOAuthApp(body): POST /integrations/admin/oauth-apps. */
export const createOAuthApp = (body) => post('/integrations/admin/oauth-apps', body);
/** deleteOAuthApp(id): DELETE /integrations/admin/oauth-apps/:id. */
export const deleteOAuthApp = (id) => del(`/integrations/admin/oauth-apps/${enc(id)}`);
/** getCredential(integrationId): GET /integrations/admin/credentials/:id (404: none). */
export const getCredential = (integrationId) => get(`/integrations/admin/credentials/${enc(integrationId)}`);
/** saveCredential(body): POST /integrations/admin/credentials ({integrationId, authType, value}). */
export const saveCredential = (body) => post('/integrations/admin/credentials', body);
/** deleteCredential(integrationId): DELETE /integrations/admin/credentials/:id. */
export const deleteCredential = (integrationId) => del(`/integrations/admin/credentials/${enc(integrationId)}`);
/** setCredentialWorkspaces(integrationId, workspaceIds): PUT …/credentials/:id/workspaces (null: every workspace). */
export const setCredentialWorkspaces = (integrationId, workspaceIds) => put(`/integrations/admin/credentials/${enc(integrationId)}/workspaces`, { workspaceIds });
/** listIntegrationAudit(limit): GET /integrations/admin/audit?limit=…. */
export const listIntegrationAudit = (limit) => get(`/integrations/admin/audit?limit=${limit}`);
/** getXrayStats(): GET /xray/stats, calls, errors and p50/p95 per integration. */
export const getXrayStats = () => get('/xray/stats');
/** getXrayActive(): GET /xray/active, the calls running now. */
export const getXrayActive = () => get('/xray/active');
/** getXrayStuck(): GET /xray/stuck, the calls running too long. */
export const getXrayStuck = () => get('/xray/stuck');

// ------------------------------------------------------------------ reachability

let probeTimer = 0;
let probeDelay = 1000;

function apiUp() {
	if (!connectivity.get().api) connectivity.set((c) => ({ ...c, api: true, retryIn: 0 }));
	probeDelay = 1000;
	clearTimeout(probeTimer);
	probeTimer = 0;
}

function apiDown() {
	if (probeTimer) return;
	connectivity.set((c) => ({ ...c, api: false, retryIn: Math.round(probeDelay / 1000) }));
	probeTimer = setTimeout(probe, probeDelay);
}

async function probe() {
	probeTimer = 0;
	let ok = false;
	try {
		const r = await fetch(API + '/auth/me', { credentials: 'same-origin', headers: { Accept: 'application/json' } });
		ok = r.status < 500;
	} catch (e) {
		ok = false;
	}
	if (ok) {
		apiUp();
		return;
	}
	probeDelay = Math.min(probeDelay * 2, 30000);
	apiDown();
}

/** retryNow(): probes the API at once (the banner's "Retry now"). */
export function retryNow() {
	clearTimeout(probeTimer);
	probeTimer = 0;
	probe();
}

// ------------------------------------------------------------------ git-io: import, export, the mirror (docs/git.md)

/** importProject(wid, {name, gitUrl, ref?, username?, token?}): POST /workspaces/:wid/projects/import; the Project, importState "importing". */
export const importProject = (wid, body) => post(`/workspaces/${enc(wid)}/projects/import`, body);

/** importProjectZip(wid, name, file): the same with a ZIP (a File or Blob) as the body; the Project with its files. */
export const importProjectZip = (wid, name, file) =>
	request(withQuery(`/workspaces/${enc(wid)}/projects/import`, { name }), { method: 'POST', rawBody: file, contentType: 'application/zip' });

/** exportZipUrl(pid, sha): the address of GET /projects/:id/export.zip of version sha (a link's href: the session cookie goes with it). */
export const exportZipUrl = (pid, sha) => withQuery(`${API}/projects/${enc(pid)}/export.zip`, { sha });

/** gitCloneUrl(pid): the project's clone URL, {base_url}/git/<projectId>.git (docs/git.md "Clone, pull, push"). */
export const gitCloneUrl = (pid) => `${window.location.origin}${API}/git/${enc(pid)}.git`;

/** getGitRemote(pid): GET /projects/:id/git/remote, {remote} (null when none; never its token). */
export const getGitRemote = (pid) => get(`/projects/${enc(pid)}/git/remote`);

/** setGitRemote(pid, {url, username?, token, branch?}): PUT /projects/:id/git/remote, {remote}. */
export const setGitRemote = (pid, body) => put(`/projects/${enc(pid)}/git/remote`, body);

/** deleteGitRemote(pid): DELETE /projects/:id/git/remote (204). */
export const deleteGitRemote = (pid) => del(`/projects/${enc(pid)}/git/remote`);

/** pushGitRemote(pid, branch?): POST /projects/:id/git/push (Push now, or svc's main to a new branch). */
export const pushGitRemote = (pid, branch) => post(`/projects/${enc(pid)}/git/push`, branch ? { branch } : {});

/** pullGitRemote(pid): POST /projects/:id/git/pull, {result, sha, previous, remote}; 409 when diverged. */
export const pullGitRemote = (pid) => post(`/projects/${enc(pid)}/git/pull`);

// ------------------------------------------------------------------ builders: the apps' backend (docs/api.md "The apps' backend: for builders")

/** getBackend(pid): GET /projects/:id/backend, {collections, usage, quotas} (members only). */
export const getBackend = (pid) => get(`/projects/${enc(pid)}/backend`);

/** listBackendRecords(pid, env, collection, {limit, cursor}): GET .../backend/:env/data/:collection, {items, nextCursor}. */
export const listBackendRecords = (pid, env, collection, q = {}) =>
	get(withQuery(`/projects/${enc(pid)}/backend/${enc(env)}/data/${enc(collection)}`, q));

/** updateBackendRecord(pid, env, collection, id, fields): PATCH .../data/:collection/:id, the record (400 with field). */
export const updateBackendRecord = (pid, env, collection, id, fields) =>
	patch(`/projects/${enc(pid)}/backend/${enc(env)}/data/${enc(collection)}/${enc(id)}`, fields);

/** deleteBackendRecord(pid, env, collection, id): DELETE .../data/:collection/:id (204). */
export const deleteBackendRecord = (pid, env, collection, id) => del(`/projects/${enc(pid)}/backend/${enc(env)}/data/${enc(collection)}/${enc(id)}`);

/** listBackendUsers(pid, env): GET .../backend/:env/users, {items: [{id, email, disabled, createdAt}]}. */
export const listBackendUsers = (pid, env) => get(`/projects/${enc(pid)}/backend/${enc(env)}/users`);

/** setBackendUserDisabled(pid, env, uid, disabled): PATCH .../users/:id {disabled}, the end user. */
export const setBackendUserDisabled = (pid, env, uid, disabled) => patch(`/projects/${enc(pid)}/backend/${enc(env)}/users/${enc(uid)}`, { disabled });

/** deleteBackendUser(pid, env, uid): DELETE .../users/:id (204: with their records). */
export const deleteBackendUser = (pid, env, uid) => del(`/projects/${enc(pid)}/backend/${enc(env)}/users/${enc(uid)}`);

/** emptyBackendTest(pid): DELETE /projects/:id/backend/test (204). */
export const emptyBackendTest = (pid) => del(`/projects/${enc(pid)}/backend/test`);

/** backendExportUrl(pid, env): the address of GET .../backend/:env/export (a download link: the session cookie goes with it). */
export const backendExportUrl = (pid, env) => `${API}/projects/${enc(pid)}/backend/${enc(env)}/export`;

/** listSecrets(pid): GET /projects/:id/secrets, {secrets: [{name, bytes, updatedAt, updatedBy}]} (never a value). */
export const listSecrets = (pid) => get(`/projects/${enc(pid)}/secrets`);

/** setSecret(pid, name, value): PUT /projects/:id/secrets/:name {value}, {secret} (201 new, 200 replaced). */
export const setSecret = (pid, name, value) => put(`/projects/${enc(pid)}/secrets/${enc(name)}`, { value });

/** deleteSecret(pid, name): DELETE /projects/:id/secrets/:name (204). */
export const deleteSecret = (pid, name) => del(`/projects/${enc(pid)}/secrets/${enc(name)}`);
