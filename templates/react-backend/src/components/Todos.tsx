import { useEffect, useState, type FormEvent } from "react";
import { errorText, svc, type Collection, type Stored } from "../svc.ts";

// One todo as svc.data.json declares it (the collection "todos").
type Todo = { title: string; done?: boolean };

async function todos(): Promise<Collection<Todo>> {
  return (await svc).data.collection<Todo>("todos");
}

// The signed-in user's todos: the server's "owner" rules give each user only their own.
export default function Todos() {
  const [items, setItems] = useState<(Todo & Stored)[] | null>(null);
  const [title, setTitle] = useState("");
  const [error, setError] = useState("");

  async function load() {
    try {
      const page = await (await todos()).list({ sort: "createdAt", limit: 100 });
      setItems(page.items);
    } catch (err) {
      setError(errorText(err));
    }
  }
  useEffect(() => { load(); }, []);

  async function run(action: () => Promise<unknown>) {
    setError("");
    try {
      await action();
      await load();
    } catch (err) {
      setError(errorText(err));
    }
  }

  function add(e: FormEvent) {
    e.preventDefault();
    const t = title.trim();
    if (!t) return;
    setTitle("");
    run(async () => (await todos()).create({ title: t, done: false }));
  }

  const left = items ? items.filter((t) => !t.done).length : 0;
  return (
    <section>
      <form onSubmit={add} className="flex gap-2">
        <input aria-label="New todo" placeholder="What needs doing?" maxLength={200} value={title}
          onChange={(e) => setTitle(e.target.value)}
          className="min-w-0 flex-1 rounded-lg border border-slate-300 bg-white px-3 py-2 focus:border-indigo-500 focus:outline-none focus:ring-2 focus:ring-indigo-200" />
        <button type="submit"
          className="rounded-lg bg-indigo-600 px-4 py-2 font-medium text-white hover:bg-indigo-500 focus:outline-none focus:ring-2 focus:ring-indigo-400">
          Add
        </button>
      </form>
      {error && <p role="alert" className="mt-3 text-sm text-red-700">{error}</p>}
      {items === null && !error && <p className="mt-6 text-slate-500">Loading…</p>}
      {items && items.length === 0 && <p className="mt-6 text-slate-500">Nothing to do yet: add your first todo.</p>}
      {items && items.length > 0 && (
        <>
          <ul aria-label="Todos" className="mt-6 divide-y divide-slate-200 rounded-xl border border-slate-200 bg-white shadow-sm">
            {items.map((t) => (
              <li key={t.id} className="flex items-center gap-3 px-4 py-3">
                <input type="checkbox" aria-label={"Done: " + t.title} checked={!!t.done}
                  onChange={() => run(async () => (await todos()).update(t.id, { done: !t.done }))}
                  className="h-4 w-4 accent-indigo-600" />
                <span className={"min-w-0 flex-1 break-words " + (t.done ? "text-slate-400 line-through" : "")}>{t.title}</span>
                <button type="button" aria-label={"Delete " + t.title}
                  onClick={() => run(async () => (await todos()).delete(t.id))}
                  className="rounded px-2 py-1 text-sm text-slate-500 hover:bg-red-50 hover:text-red-700">
                  Delete
                </button>
              </li>
            ))}
          </ul>
          <p className="mt-3 text-sm text-slate-500">{left} {left === 1 ? "item" : "items"} left</p>
        </>
      )}
    </section>
  );
}
