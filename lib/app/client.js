// client.js: the app backend's client, served by svc-app at /_svc/client.js on every site (docs/app-backend.md).
// An ES module with no dependencies: import { auth, data } from "/_svc/client.js".
// Comment lines like these are dropped when it is compiled into svc-app (lib/app/app.mk).
const BASE = "/_svc";
let current;
const listeners = new Set();

export class SvcError extends Error {
  constructor(status, body) {
    super((body && body.message) || "Request failed (" + status + ")");
    this.name = "SvcError";
    this.status = status;
    this.code = (body && body.error) || "error";
    this.field = (body && body.field) || null;
  }
}

// a JSON body, or with `type` the body as it is (files.upload)
async function call(method, path, body, type) {
  const init = { method, credentials: "same-origin", headers: { "X-Svc-Client": "1" } };
  if (type) {
    init.headers["Content-Type"] = type;
    init.body = body;
  } else if (body !== undefined) {
    init.headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  const res = await fetch(BASE + path, init);
  if (res.status === 204) return null;
  let json = null;
  try {
    json = await res.json();
  } catch (e) {
    json = null;
  }
  if (!res.ok) throw new SvcError(res.status, json);
  return json;
}

function setUser(u) {
  const changed = JSON.stringify(u || null) !== JSON.stringify(current || null);
  current = u || null;
  if (changed) for (const cb of listeners) cb(current);
  return current;
}

export const auth = {
  async signUp(email, password) {
    return setUser((await call("POST", "/auth/signup", { email, password })).user);
  },
  async signIn(email, password) {
    return setUser((await call("POST", "/auth/login", { email, password })).user);
  },
  async signOut() {
    await call("POST", "/auth/logout");
    setUser(null);
  },
  // the signed-in end user, or null (asks the server the first time)
  async user() {
    if (current !== undefined) return current;
    try {
      return setUser((await call("GET", "/auth/me")).user);
    } catch (e) {
      if (e.status === 401) return setUser(null);
      throw e;
    }
  },
  // cb(user or null) on every sign-in and sign-out; returns a function that stops it
  onChange(cb) {
    listeners.add(cb);
    return () => listeners.delete(cb);
  },
};

function query(opts) {
  const q = new URLSearchParams();
  if (opts.filter) {
    const f = typeof opts.filter === "string" ? opts.filter
      : Object.entries(opts.filter).map(([k, v]) => k + ":" + v).join(",");
    if (f) q.set("filter", f);
  }
  if (opts.sort) q.set("sort", opts.sort);
  if (opts.limit) q.set("limit", String(opts.limit));
  if (opts.cursor) q.set("cursor", opts.cursor);
  const s = q.toString();
  return s ? "?" + s : "";
}

export const data = {
  collection(name) {
    const base = "/data/" + encodeURIComponent(name);
    return {
      // {items, nextCursor}; filter {field: value} or "field:value,...", sort "createdAt" | "-createdAt"
      list(opts = {}) { return call("GET", base + query(opts)); },
      get(id) { return call("GET", base + "/" + encodeURIComponent(id)); },
      create(fields) { return call("POST", base, fields); },
      update(id, fields) { return call("PATCH", base + "/" + encodeURIComponent(id), fields); },
      delete(id) { return call("DELETE", base + "/" + encodeURIComponent(id)); },
    };
  },
};

// files (docs/app-backend.md "Files"): upload(file) -> {id, url}, url(id) -> the path to fetch or link, delete(id)
export const files = {
  upload(file) { return call("POST", "/files", file, (file && file.type) || "application/octet-stream"); },
  url(id) { return BASE + "/files/" + encodeURIComponent(id); },
  delete(id) { return call("DELETE", "/files/" + encodeURIComponent(id)); },
};
// appfetch: a call svc.data.json's "fetch" declares, made by the server with the project's secrets:
// svcFetch(name, {method, path, query, body}) gives {status, headers, body}; also exported as `fetch`.
export function svcFetch(name, opts = {}) {
  const req = {};
  for (const k of ["method", "path", "query", "body"]) if (opts[k] !== undefined) req[k] = opts[k];
  return call("POST", "/fetch/" + encodeURIComponent(name), req);
}
export { svcFetch as fetch };
export default { auth, data, files, fetch: svcFetch };
