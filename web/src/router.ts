// Routes live after `#` (`#/search?q=…`, `#/page/ID?p=3`, `#/runs/NAME?filter=wrong`, `#/compare?runs=a,b`),
// so every view can be linked to and the back button works.

export interface Route {
  path: string[];
  params: URLSearchParams;
}

export function parseRoute(hash: string): Route {
  const raw = hash.replace(/^#\/?/, "");
  const at = raw.indexOf("?");
  const p = at < 0 ? raw : raw.slice(0, at);
  return { path: p.split("/").filter(Boolean).map(decodeURIComponent), params: new URLSearchParams(at < 0 ? "" : raw.slice(at + 1)) };
}

export function href(path: string, params: Record<string, string | number | undefined> = {}): string {
  const qs = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== "") qs.set(k, String(v));
  return `#/${path}${qs.size ? `?${qs}` : ""}`;
}

export function go(path: string, params: Record<string, string | number | undefined> = {}): void {
  location.hash = href(path, params);
}
