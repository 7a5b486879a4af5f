// Leaderboard: per dataset, each system (and its latest run, linked) with the dataset's headline metric, its KILT
// score, R-precision and recall@5 and their bootstrap intervals, best first (`tartan leaderboard`'s figures).

import { api } from "../api.js";
import { fmt, h } from "../dom.js";
import { href } from "../router.js";
import type { LeaderboardAnswer, LeaderboardRow } from "tartan-server-api";

export async function leaderboardView(app: HTMLElement): Promise<void> {
  const board = await api<LeaderboardAnswer>("/api/leaderboard");
  app.replaceChildren(h("h1", {}, "Leaderboard"));
  if (board.datasets.length === 0) app.append(h("p", { class: "muted" }, "No runs recorded yet."));
  for (const d of board.datasets) {
    const best = Object.fromEntries(d.metrics.map((m) => [m, Math.max(...d.runs.map((r) => r.values[m] ?? -Infinity))]));
    const cell = (r: LeaderboardRow, m: string) => {
      const i = r.intervals[m];
      const text = i ? `${fmt(r.values[m])} [${fmt(i.low)}, ${fmt(i.high)}]` : fmt(r.values[m]);
      return r.values[m] === best[m] ? h("strong", {}, text) : text;
    };
    app.append(
      h("h2", {}, d.dataset),
      h(
        "div",
        { class: "table-wrap" },
        h(
          "table",
          {},
          h("thead", {}, h("tr", {}, h("th", {}, "#"), h("th", {}, "system"), h("th", {}, "run"), h("th", { class: "num" }, "queries"), ...d.metrics.map((m) => h("th", { class: "num" }, m)))),
          h(
            "tbody",
            {},
            ...d.runs.map((r, i) =>
              h(
                "tr",
                {},
                h("td", {}, String(i + 1)),
                h("td", {}, r.system),
                h("td", {}, h("a", { href: href(`runs/${encodeURIComponent(r.name)}`) }, r.name)),
                h("td", { class: "num" }, r.queries?.toLocaleString("en-US") ?? "–"),
                ...d.metrics.map((m) => h("td", { class: "num" }, cell(r, m))),
              ),
            ),
          ),
        ),
      ),
      h("p", { class: "muted" }, `[low, high]: ${Math.round(board.settings.level * 100)}% bootstrap interval (${board.settings.samples.toLocaleString("en-US")} resamples, seed ${board.settings.seed}); bold: best in its column; the latest run of each system.`),
      d.runs.length >= 2 ? h("p", {}, h("a", { href: href("compare", { runs: `${d.runs[1].name},${d.runs[0].name}` }) }, "Compare the top two")) : "",
    );
  }
}
