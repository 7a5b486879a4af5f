// Run browser (filled in with the runs database).
import { h } from "../dom.js";
import type { Route } from "../router.js";

export async function runsView(app: HTMLElement): Promise<void> {
  app.replaceChildren(h("h1", {}, "Runs"), h("p", { class: "muted" }, "No runs database is loaded."));
}
export async function runView(app: HTMLElement, route: Route): Promise<void> {
  app.replaceChildren(h("h1", {}, route.path[1] ?? "Run"));
}
