// The explorer's entry point: renders the view the URL names (see router.ts) on load and on every
// hash change, cancelling the requests of the view left (a late answer is never drawn into the next
// view), with a loading state while a view computes; an API error keeps the view's form and its
// contents; asks for the bearer token when the server wants one.

import { ApiFailure, newView, setToken } from "./api.js";
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

/** Shows (or clears) the loading state: a status line in the header, and the view marked busy. */
function busy(app: HTMLElement, on: boolean): void {
  const status = document.getElementById("status");
  if (status) {
    status.textContent = on ? "Loading…" : "";
    status.hidden = !on;
  }
  if (on) app.setAttribute("aria-busy", "true");
  else app.removeAttribute("aria-busy");
}

/**
 * An API error shown without losing what the user typed: when this view has drawn its form, the form
 * stays (with its contents) and the message goes where the results would (`[data-results]`) or below
 * the form; otherwise the message replaces the view.
 */
function showError(app: HTMLElement, drawn: boolean, message: string): void {
  const alert = h("p", { class: "error", role: "alert" }, message);
  const form = drawn ? app.querySelector("form") : null;
  if (!form) {
    app.replaceChildren(h("h1", {}, "Something went wrong"), alert);
    return;
  }
  const slot = app.querySelector("[data-results]");
  if (slot) slot.replaceChildren(alert);
  else {
    app.querySelector(":scope > p.error[role=alert]")?.remove();
    form.after(alert);
  }
}

async function render(): Promise<void> {
  // Requests of the view being left are cancelled: their answers, however late, are never drawn.
  const signal = newView();
  const app = document.getElementById("app") as HTMLElement;
  const route = parseRoute(location.hash);
  const view = route.path[0] ?? "search";
  for (const a of document.querySelectorAll<HTMLAnchorElement>("nav a[data-nav]")) {
    if (a.dataset.nav === view || (view === "page" && a.dataset.nav === "search")) a.setAttribute("aria-current", "page");
    else a.removeAttribute("aria-current");
  }
  // What the previous view drew: anything else in the app afterwards is this view's.
  const before = new Set(app.childNodes);
  busy(app, true);
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
    if (signal.aborted) return;
    if (e instanceof ApiFailure && e.status === 401) return tokenForm(app);
    showError(app, [...app.childNodes].some((n) => !before.has(n)), e instanceof Error ? e.message : String(e));
  } finally {
    if (!signal.aborted) busy(app, false);
  }
}

window.addEventListener("hashchange", () => void render());
window.addEventListener("DOMContentLoaded", () => void render());
