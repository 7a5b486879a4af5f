// Two-run comparison (filled in with the runs database).
import { h } from "../dom.js";
import type { Route } from "../router.js";

export async function compareView(app: HTMLElement, route: Route): Promise<void> {
  app.replaceChildren(h("h1", {}, "Compare"), h("p", { class: "muted" }, route.params.get("runs") ?? "Pick two runs."));
}
