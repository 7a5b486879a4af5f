// Calls to the JSON API. When the server wants a bearer token, the explorer asks for it once and keeps
// it for the browser tab (sessionStorage).

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

export async function api<T>(path: string, params: Record<string, string | number | undefined> = {}): Promise<T> {
  const qs = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== "") qs.set(k, String(v));
  const url = qs.size > 0 ? `${path}?${qs}` : path;
  const token = sessionStorage.getItem(KEY);
  const res = await fetch(url, { headers: token ? { Authorization: `Bearer ${token}` } : {} });
  const body = (await res.json().catch(() => null)) as (T & { error?: string }) | null;
  if (!res.ok) throw new ApiFailure(res.status, body?.error ?? `${res.status} ${res.statusText}`);
  return body as T;
}

/** A path segment, encoded. */
export const seg = (s: string) => encodeURIComponent(s);
