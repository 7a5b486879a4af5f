// The explorer's entry point: renders the view the URL names (see router.ts) on load and on every
// hash change, and asks for the bearer token when the server wants one.

import { ApiFailure, setToken } from "./api.js";
import { h } from "./dom.js";
import { searchView } from "./views/search.js";
import { pageView } from "./views/page.js";
import { runsView, runView } from "./views/runs.js";
import { leaderboardView } from "./views/leaderboard.js";
import { compareView } from "./views/compare.js";
import { parseRoute } from "./router.js";

function tokenForm(app: HTMLElement): void {
  const input = h("input", { type: "password", id: "token", autocomplete: "off", required: true });
  app.replaceChildren(
    h("h1", {}, "Token required"),
    h("p", {}, "This server asks every API request for a bearer token."),
    h(
      "form",
      {
        class: "bar",
        onsubmit: (e: Event) => {
          e.preventDefault();
          setToken(input.value);
          void render();
        },
      },
      h("label", { for: "token", class: "grow" }, "Token", input),
      h("button", { type: "submit" }, "Continue"),
    ),
  );
  input.focus();
}

async function render(): Promise<void> {
  const app = document.getElementById("app") as HTMLElement;
  const route = parseRoute(location.hash);
  const view = route.path[0] ?? "search";
  for (const a of document.querySelectorAll<HTMLAnchorElement>("nav a[data-nav]")) {
    if (a.dataset.nav === view || (view === "page" && a.dataset.nav === "search")) a.setAttribute("aria-current", "page");
    else a.removeAttribute("aria-current");
  }
  try {
    switch (view) {
      case "page":
        await pageView(app, route);
        break;
      case "runs":
        await (route.path[1] ? runView(app, route) : runsView(app));
        break;
      case "leaderboard":
        await leaderboardView(app);
        break;
      case "compare":
        await compareView(app, route);
        break;
      default:
        await searchView(app, route);
    }
  } catch (e) {
    if (e instanceof ApiFailure && e.status === 401) return tokenForm(app);
    app.replaceChildren(h("h1", {}, "Something went wrong"), h("p", { class: "error", role: "alert" }, e instanceof Error ? e.message : String(e)));
  }
}

window.addEventListener("hashchange", () => void render());
window.addEventListener("DOMContentLoaded", () => void render());
