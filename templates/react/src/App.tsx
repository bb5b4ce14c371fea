import Counter from "./components/Counter.tsx";

export default function App() {
  return (
    <div className="min-h-screen bg-slate-50 text-slate-900">
      <header className="border-b border-slate-200 bg-white">
        <div className="mx-auto flex max-w-4xl items-center gap-3 px-6 py-4">
          <img src="/favicon.svg" alt="" className="h-8 w-8" />
          <h1 className="text-xl font-semibold tracking-tight">My app</h1>
        </div>
      </header>
      <main className="mx-auto max-w-4xl px-6 py-12">
        <h2 className="text-3xl font-bold">Start building</h2>
        <p className="mt-3 max-w-prose text-slate-600">
          A React, TypeScript, Vite and Tailwind CSS app. Describe what you want and it grows from here.
        </p>
        <div className="mt-8">
          <Counter />
        </div>
      </main>
    </div>
  );
}
