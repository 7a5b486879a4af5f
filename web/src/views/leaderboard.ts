// Leaderboard (filled in with the runs database).
import { h } from "../dom.js";

export async function leaderboardView(app: HTMLElement): Promise<void> {
  app.replaceChildren(h("h1", {}, "Leaderboard"), h("p", { class: "muted" }, "No runs database is loaded."));
}
