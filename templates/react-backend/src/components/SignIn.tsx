import { useState, type FormEvent } from "react";
import { errorText, svc } from "../svc.ts";

// Sign in, or sign up (a new account, signed in at once), with an email and a password.
export default function SignIn() {
  const [mode, setMode] = useState<"in" | "up">("in");
  const [email, setEmail] = useState("");
  const [password, setPassword] = useState("");
  const [error, setError] = useState("");
  const [busy, setBusy] = useState(false);

  async function submit(e: FormEvent) {
    e.preventDefault();
    setBusy(true);
    setError("");
    try {
      const { auth } = await svc;
      await (mode === "up" ? auth.signUp(email, password) : auth.signIn(email, password));
    } catch (err) {
      setError(errorText(err));
      setBusy(false);
    }
  }

  const input =
    "mt-1 w-full rounded-lg border border-slate-300 px-3 py-2 focus:border-indigo-500 focus:outline-none focus:ring-2 focus:ring-indigo-200";
  return (
    <section className="mx-auto max-w-sm rounded-xl border border-slate-200 bg-white p-6 shadow-sm">
      <h2 className="text-2xl font-bold">{mode === "up" ? "Create an account" : "Sign in"}</h2>
      <p className="mt-1 text-sm text-slate-600">Your todos are kept on the server, visible only to you.</p>
      <form onSubmit={submit} className="mt-6 space-y-4">
        <label className="block text-sm font-medium">
          Email
          <input className={input} type="email" autoComplete="email" required value={email}
            onChange={(e) => setEmail(e.target.value)} />
        </label>
        <label className="block text-sm font-medium">
          Password
          <input className={input} type="password" required minLength={8}
            autoComplete={mode === "up" ? "new-password" : "current-password"} value={password}
            onChange={(e) => setPassword(e.target.value)} />
        </label>
        {error && <p role="alert" className="text-sm text-red-700">{error}</p>}
        <button type="submit" disabled={busy}
          className="w-full rounded-lg bg-indigo-600 px-4 py-2 font-medium text-white hover:bg-indigo-500 focus:outline-none focus:ring-2 focus:ring-indigo-400 disabled:opacity-60">
          {mode === "up" ? "Sign up" : "Sign in"}
        </button>
      </form>
      <p className="mt-4 text-center text-sm text-slate-600">
        {mode === "up" ? "Already have an account? " : "New here? "}
        <button type="button" className="font-medium text-indigo-700 hover:underline"
          onClick={() => { setMode(mode === "up" ? "in" : "up"); setError(""); }}>
          {mode === "up" ? "Sign in" : "Create an account"}
        </button>
      </p>
    </section>
  );
}
