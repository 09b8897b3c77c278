// The console's entry: sign-in with the operator token, and the screens behind hash routes (#/apps,
// #/schemas/<app>, #/stats/<app>, #/user/<app>/<user>).
import { attempt, call, clearProblem, showProblem, token } from "./api.js";
import { appsScreen } from "./apps.js";
import { schemasScreen } from "./schemas.js";
import { statsScreen } from "./stats.js";
import { userScreen } from "./user.js";

const screens = { apps: appsScreen, schemas: schemasScreen, stats: statsScreen, user: userScreen };
const $ = (id) => document.getElementById(id);
let renders = 0;

/** The route in the hash: {screen, args} with each argument decoded. */
export function route() {
  const parts = location.hash.replace(/^#\/?/, "").split("/").map((part) => {
    try { return decodeURIComponent(part); } catch { return ""; }
  });
  const screen = screens[parts[0]] ? parts[0] : "apps";
  return { screen, args: parts.slice(1).filter((part) => part !== "") };
}

/** Goes to a screen; `args` are encoded into the hash. */
export function go(screen, ...args) {
  const hash = "#/" + [screen, ...args.map(encodeURIComponent)].join("/");
  if (location.hash === hash) render(); else location.hash = hash;
}

function signedIn(yes) {
  $("login").hidden = yes;
  $("nav").hidden = !yes;
  $("sign-out").hidden = !yes;
  if (!yes) $("screen").replaceChildren();
}

async function render() {
  if (!token.get()) {
    signedIn(false);
    $("token").focus();
    return;
  }
  signedIn(true);
  const { screen, args } = route();
  for (const link of document.querySelectorAll("#nav a")) {
    if (link.dataset.screen === screen) link.setAttribute("aria-current", "page"); else link.removeAttribute("aria-current");
  }
  // Each render draws into a new element: one still waiting for the API when the person moved on draws into
  // an element no longer on the page, never over the screen that replaced it.
  const mine = ++renders;
  const root = $("screen");
  const container = document.createElement("div");
  root.replaceChildren(container);
  delete root.dataset.renderedAt;
  const started = performance.now();
  await screens[screen](container, args, { go });
  if (mine !== renders) return;
  // For the browser test's timing: when this screen finished drawing (after its last API answer).
  root.dataset.renderedMs = String(Math.round(performance.now() - started));
  root.dataset.renderedAt = String(performance.now());
}

$("login-form").addEventListener("submit", async (event) => {
  event.preventDefault();
  const value = $("token").value.trim();
  if (!value) return;
  token.set(value);
  $("token").value = "";
  const ok = await attempt(async () => call("/v1/apps?limit=1"));
  if (!ok) { token.clear(); signedIn(false); return; }
  clearProblem();
  render();
});

$("sign-out").addEventListener("click", () => {
  token.clear();
  clearProblem();
  render();
});

document.addEventListener("console:unauthorized", () => {
  token.clear();
  signedIn(false);
});

// A new screen: focus moves to the page's main region, so keyboard and screen-reader users start there.
window.addEventListener("hashchange", async () => {
  clearProblem();
  await render();
  if (token.get() && !$("main").contains(document.activeElement)) $("main").focus();
});
window.addEventListener("unhandledrejection", (event) => showProblem(event.reason));
render();
