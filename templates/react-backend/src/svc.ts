// svc.ts: the app's backend, /_svc/client.js, which every site of svc serves on its own origin
// (the published site and the preview). Imported at run time, not bundled: the import's URL is a
// variable, so Vite leaves it to the browser.
export type User = { id: string; email: string; createdAt: string };
export type Stored = { id: string; owner: string; createdAt: string; updatedAt: string };
export type Page<T> = { items: (T & Stored)[]; nextCursor: string | null };
export type ListOptions = { filter?: { [field: string]: string | number | boolean } | string; sort?: string; limit?: number; cursor?: string };

export interface Collection<T> {
  list(opts?: ListOptions): Promise<Page<T>>;
  get(id: string): Promise<T & Stored>;
  create(fields: T): Promise<T & Stored>;
  update(id: string, fields: Partial<T>): Promise<T & Stored>;
  delete(id: string): Promise<null>;
}

export interface Client {
  auth: {
    signUp(email: string, password: string): Promise<User>;
    signIn(email: string, password: string): Promise<User>;
    signOut(): Promise<void>;
    user(): Promise<User | null>;
    onChange(cb: (user: User | null) => void): () => void;
  };
  data: { collection<T>(name: string): Collection<T> };
}

// A failed call throws an SvcError: {status, code ("validation_failed", "unauthorized", ...), field, message}.
export type SvcError = Error & { status: number; code: string; field: string | null };

const CLIENT_URL = "/_svc/client.js";

export const svc: Promise<Client> = import(/* @vite-ignore */ CLIENT_URL);

export function errorText(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}
