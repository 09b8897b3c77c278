// The audit log (GET /v1/audit): every operator write and every export, newest first, filtered by app and by
// actor (an operator token's name), a page at a time (before/limit).
import { attempt, call } from "./api.js";
import { fill, h, idCode, status, when } from "./dom.js";

const PAGE = 25;
const filters = { app: "", actor: "" };

export async function auditScreen(container, args) {
  const [appArg] = args;
  if (appArg !== undefined) filters.app = appArg;
  const app = h("input", { id: "audit-app", name: "audit-app", value: filters.app, autocomplete: "off", spellcheck: "false", placeholder: "any app" });
  const actor = h("input", { id: "audit-actor", name: "audit-actor", value: filters.actor, autocomplete: "off", spellcheck: "false", placeholder: "anyone" });
  const table = h("div", { class: "table-wrap", id: "audit-list", "aria-live": "polite" });
  const pager = h("div", { class: "row" });
  const befores = [null];

  let loads = 0;
  async function load() {
    const mine = ++loads;
    filters.app = app.value.trim();
    filters.actor = actor.value.trim();
    const before = befores[befores.length - 1];
    const query = `limit=${PAGE}` + (filters.app ? `&app=${encodeURIComponent(filters.app)}` : "") + (filters.actor ? `&actor=${encodeURIComponent(filters.actor)}` : "")
      + (before ? `&before=${before}` : "");
    const page = await attempt(() => call(`/v1/audit?${query}`));
    if (!page || mine !== loads) return;
    const { items, next } = page.body;
    fill(table, items.length === 0 ? status(befores.length > 1 ? "No older entries." : "No entries match.") : h("table", { id: "audit-table" },
      h("caption", {}, `Audit log, newest first, page ${befores.length}`),
      h("thead", {}, h("tr", {}, ["When", "Actor", "Action", "App", "User or target", "Status", "Request id"].map((t) => h("th", { scope: "col" }, t)))),
      h("tbody", {}, items.map((entry) => h("tr", { "data-seq": entry.seq, "data-action": entry.action, "data-actor": entry.actor, "data-app-id": entry.appId || "" },
        h("td", {}, when(entry.at)),
        h("td", {}, h("code", {}, entry.actor)),
        h("td", {}, h("code", {}, entry.action)),
        h("td", {}, entry.appId ? idCode(entry.appId) : "—"),
        h("td", {}, entry.userId ? idCode(entry.userId) : entry.target ? idCode(entry.target) : "—"),
        h("td", { class: entry.status >= 400 ? "note" : null }, entry.status),
        h("td", {}, h("code", {}, entry.requestId)))))));
    fill(pager,
      h("button", { type: "button", class: "quiet", id: "audit-newer", disabled: befores.length === 1, onclick: () => { befores.pop(); load(); } }, "Newer entries"),
      h("button", { type: "button", class: "quiet", id: "audit-older", disabled: !next, onclick: () => { befores.push(next); load(); } }, "Older entries"));
  }

  fill(container, h("h2", {}, "Audit log"),
    h("form", { class: "row", id: "audit-filter", onsubmit: (event) => { event.preventDefault(); befores.splice(1); load(); } },
      h("label", { for: "audit-app" }, "App"), app, h("label", { for: "audit-actor" }, "Actor"), actor, h("button", { type: "submit" }, "Filter")),
    h("p", { class: "hint" }, "Every operator write (dry runs included) and every export of a user's data, with the operator token that made it (bootstrap: the configured token)."),
    table, pager);
  await load();
}
