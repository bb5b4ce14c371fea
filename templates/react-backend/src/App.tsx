import { useEffect, useState } from "react";
import SignIn from "./components/SignIn.tsx";
import Todos from "./components/Todos.tsx";
import { svc, type User } from "./svc.ts";

export default function App() {
  // undefined: not known yet (asking the server); null: signed out
  const [user, setUser] = useState<User | null | undefined>(undefined);

  useEffect(() => {
    let stop = () => {};
    svc.then((c) => {
      stop = c.auth.onChange(setUser);
      return c.auth.user().then(setUser);
    }).catch(() => setUser(null));
    return () => stop();
  }, []);

  async function signOut() {
    await (await svc).auth.signOut();
  }

  return (
    <div className="min-h-screen bg-slate-50 text-slate-900">
      <header className="border-b border-slate-200 bg-white">
        <div className="mx-auto flex max-w-2xl items-center gap-3 px-4 py-4 sm:px-6">
          <img src="/favicon.svg" alt="" className="h-8 w-8 shrink-0" />
          <h1 className="shrink-0 whitespace-nowrap text-xl font-semibold tracking-tight">My todos</h1>
          {user && (
            <div className="ml-auto flex min-w-0 items-center gap-3">
              <span className="truncate text-sm text-slate-600" title={user.email}>{user.email}</span>
              <button
                type="button"
                onClick={signOut}
                className="shrink-0 rounded-lg border border-slate-300 px-3 py-1.5 text-sm font-medium hover:bg-slate-100 focus:outline-none focus:ring-2 focus:ring-indigo-400"
              >
                Sign out
              </button>
            </div>
          )}
        </div>
      </header>
      <main className="mx-auto max-w-2xl px-4 py-8 sm:px-6 sm:py-12">
        {user === undefined && <p className="text-slate-500">Loading…</p>}
        {user === null && <SignIn />}
        {user && <Todos key={user.id} />}
      </main>
    </div>
  );
}
