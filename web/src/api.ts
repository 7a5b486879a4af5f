// Calls to the JSON API, each belonging to the view that made it (cancelled when the user opens another).
// When the server wants a bearer token, the explorer asks for it once and keeps it for the browser tab
// (sessionStorage).

const KEY = "tartan-token";

export class ApiFailure extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

export function setToken(t: string): void {
  sessionStorage.setItem(KEY, t);
}

/** The view being drawn: its requests are cancelled when the user opens another. */
let current = new AbortController();

/**
 * Starts a new view: the previous view's requests are aborted, so an answer that comes late (a
 * comparison still computing when the user moved on) is never drawn into the view opened since.
 */
export function newView(): AbortSignal {
  current.abort();
  current = new AbortController();
  return current.signal;
}

/** A JSON API call of the current view; rejects (AbortError) once the user has opened another view. */
export async function api<T>(path: string, params: Record<string, string | number | undefined> = {}): Promise<T> {
  const signal = current.signal;
  const qs = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== "") qs.set(k, String(v));
  const url = qs.size > 0 ? `${path}?${qs}` : path;
  const token = sessionStorage.getItem(KEY);
  const res = await fetch(url, { headers: token ? { Authorization: `Bearer ${token}` } : {}, signal });
  const body = (await res.json().catch(() => null)) as (T & { error?: string }) | null;
  // The answer came, but for a view the user has left: never handed to it.
  signal.throwIfAborted();
  if (!res.ok) throw new ApiFailure(res.status, body?.error ?? `${res.status} ${res.statusText}`);
  return body as T;
}

/** A path segment, encoded. */
export const seg = (s: string) => encodeURIComponent(s);
