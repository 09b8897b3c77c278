// The console's entry: sign-in with the operator token, and the screens behind hash routes (#/apps,
// #/schemas/<app>, #/stats/<app>, #/users/<app>, #/user/<app>/<user>, #/live/<app>/<user>, #/tokens, #/audit).
// It signs out by itself after a quiet spell (15 minutes; `?idle=SECONDS` before the hash sets another, for tests).
import { attempt, call, clearProblem, showProblem, token } from "./api.js";
import { appsScreen } from "./apps.js";
import { auditScreen } from "./audit.js";
import { liveScreen } from "./live.js";
import { schemasScreen } from "./schemas.js";
import { statsScreen } from "./stats.js";
import { tokensScreen } from "./tokens.js";
import { userScreen } from "./user.js";
import { usersScreen } from "./users.js";

const screens = { apps: appsScreen, schemas: schemasScreen, stats: statsScreen, users: usersScreen, user: userScreen, live: liveScreen,
                  tokens: tokensScreen, audit: auditScreen };
const $ = (id) => document.getElementById(id);
let renders = 0;
let leaving = [];  // what the screen on the page asked to run when it goes (a change feed to stop)

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

/** Who is signed in, as far as the console knows: the API has no who-am-I, and the token list never holds a
 *  token or its digest, so the name is not known; a 403 on a write shows the token is read-only. */
function showWho() {
  const who = $("whoami");
  const scope = sessionStorage.getItem("tabstore.console.scope");
  who.textContent = scope === "read" ? "Signed in as operator (read scope: writes are refused)" : "Signed in as operator";
}

function signedIn(yes) {
  $("login").hidden = yes;
  $("nav").hidden = !yes;
  $("sign-out").hidden = !yes;
  $("whoami").hidden = !yes;
  if (yes) showWho();
  if (!yes) { stopScreen(); $("screen").replaceChildren(); }
}

function stopScreen() {
  const pending = leaving;
  leaving = [];
  for (const stop of pending) { try { stop(); } catch { /* the screen is gone either way */ } }
}

async function render() {
  if (!token.get()) {
    signedIn(false);
    $("token").focus();
    return;
  }
  signedIn(true);
  stopScreen();
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
  const onLeave = (stop) => { if (mine === renders) leaving.push(stop); else stop(); };
  await screens[screen](container, args, { go, onLeave });
  if (mine !== renders) return;
  // For the browser test's timing: when this screen finished drawing (after its last API answer).
  root.dataset.renderedMs = String(Math.round(performance.now() - started));
  root.dataset.renderedAt = String(performance.now());
}

function signOut(notice) {
  token.clear();
  sessionStorage.removeItem("tabstore.console.scope");
  clearProblem();
  const region = $("session-notice");
  region.textContent = notice || "";
  region.hidden = !notice;
  render();
}

// Signing out after a quiet spell: every key press, click or touch starts it again.
const idleSeconds = (() => {
  const asked = Number(new URLSearchParams(location.search).get("idle"));
  return Number.isFinite(asked) && asked >= 1 ? asked : 15 * 60;
})();
let idleTimer = null;
function stillHere() {
  clearTimeout(idleTimer);
  if (!token.get()) return;
  idleTimer = setTimeout(() => {
    if (!token.get()) return;
    const minutes = idleSeconds >= 60 ? `${Math.round(idleSeconds / 60)} minutes` : `${idleSeconds} seconds`;
    signOut(`Signed out after ${minutes} without activity. Sign in again to go on.`);
  }, idleSeconds * 1000);
}
for (const kind of ["keydown", "pointerdown", "input"]) document.addEventListener(kind, stillHere, { capture: true, passive: true });

$("login-form").addEventListener("submit", async (event) => {
  event.preventDefault();
  const value = $("token").value.trim();
  if (!value) return;
  token.set(value);
  $("token").value = "";
  const ok = await attempt(async () => call("/v1/apps?limit=1"));
  if (!ok) { token.clear(); signedIn(false); return; }
  clearProblem();
  $("session-notice").hidden = true;
  stillHere();
  render();
});

$("sign-out").addEventListener("click", () => signOut(null));

document.addEventListener("console:unauthorized", () => {
  token.clear();
  sessionStorage.removeItem("tabstore.console.scope");
  signedIn(false);
});
document.addEventListener("console:forbidden", () => {
  if (!token.get()) return;
  sessionStorage.setItem("tabstore.console.scope", "read");
  showWho();
});

// "Skip to content" moves focus to the main region without touching the route (the hash stays the screen's, so
// nothing is drawn again and a schema pasted on the Schemas screen stays).
document.querySelector(".skip").addEventListener("click", (event) => {
  event.preventDefault();
  $("main").focus();
});

// The button that opened a confirmation, so Esc can give focus back where the operator was.
let opener = null;
document.addEventListener("click", (event) => {
  const button = event.target instanceof Element ? event.target.closest("button") : null;
  if (button && !button.closest("[data-dialog]")) opener = button;
}, true);

// Esc closes the confirmation open on the page (its Cancel), and focus goes back to the button that opened it
// (or, when that is gone, to the main region).
document.addEventListener("keydown", (event) => {
  if (event.key !== "Escape" || event.defaultPrevented) return;
  const dialogs = [...document.querySelectorAll("[data-dialog]")];
  const open = dialogs[dialogs.length - 1];
  if (!open) return;
  const cancel = open.querySelector("[data-cancel]");
  if (!cancel) return;
  event.preventDefault();
  cancel.click();
  (opener && opener.isConnected ? opener : $("main")).focus();
});

// A new screen: focus moves to the page's main region, so keyboard and screen-reader users start there.
window.addEventListener("hashchange", async () => {
  if (location.hash === "#main") { history.replaceState(null, "", location.pathname + location.search); $("main").focus(); return; }
  clearProblem();
  await render();
  if (token.get() && !$("main").contains(document.activeElement)) $("main").focus();
});
window.addEventListener("unhandledrejection", (event) => showProblem(event.reason));
stillHere();
render();
