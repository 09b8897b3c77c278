// Schemas: two versions side by side with their differences, and a new version registered from pasted JSON
// after a dry run that shows what it would do to the stored customizations.
import { call, clearProblem, Problem, segment, showProblem } from "./api.js";
import { fill, h, status, when, idCode } from "./dom.js";
import { lineOfPointer, parseWithLines, JSONSyntaxError } from "./json-lines.js";
import { appPicker } from "./picker.js";
import { diffSchemas, flatten, withDefaults } from "./schema-diff.js";
import { drawLayout } from "./layout-drawing.js";
import { layoutOutline, previewLayout } from "./layout-preview.js";

const IMPACT_PAGE = 10;   // affected users per page of the report
const DRAWN_USERS = 3;    // the first affected users drawn before and after

const KIND_LABEL = { added: "added", removed: "removed", moved: "moved", behaviour: "behaviour changed", label: "label changed" };

export async function schemasScreen(container, args, { go }) {
  const appId = args[0];
  fill(container, h("h2", {}, "Schemas"), appPicker(appId, (id) => go("schemas", id)));
  if (!appId) { container.append(status("Pick an app.")); return; }
  const base = `/v1/apps/${segment(appId)}/schema`;
  const versionsPanel = h("section", { id: "versions", "aria-labelledby": "versions-title" });
  const registerPanel = h("section", { id: "register", "aria-labelledby": "register-title" });
  container.append(versionsPanel, registerPanel);

  let current = null;
  let minimum = 1;  // versions below it are retired: their clients get 410
  try {
    const app = (await call(`/v1/apps/${segment(appId)}`)).body;  // 404 for an unknown app; schemaVersion 0 before the first
    minimum = app.minimumSchemaVersion || 1;
    if (app.schemaVersion > 0) current = (await call(base)).body;
  } catch (error) { showProblem(error); return; }
  const cache = new Map();
  const version = async (number) => {
    if (!cache.has(number)) cache.set(number, call(`${base}/versions/${number}`).then((answer) => answer.body));
    return cache.get(number);
  };

  async function showVersions(left, right) {
    if (!current) { fill(versionsPanel, h("h3", { id: "versions-title" }, "Versions"), status("No schema yet: register the first version below.")); return; }
    const numbers = Array.from({ length: current.version }, (_, index) => current.version - index);
    const picker = (id, label, selected) => [h("label", { for: id }, label), h("select", { id, onchange: () => showVersions(+leftSelect.value, +rightSelect.value) },
      numbers.map((n) => h("option", { value: n, selected: n === selected },
        n === current.version ? `v${n} (current)` : n < minimum ? `v${n} (retired)` : n === minimum ? `v${n} (minimum)` : `v${n}`)))];
    const [leftLabel, leftSelect] = picker("left-version", "Before", left);
    const [rightLabel, rightSelect] = picker("right-version", "After", right);
    let before, after;
    try {
      [before, after] = await Promise.all([version(left), version(right)]);
    } catch (error) {
      showProblem(error);
      fill(versionsPanel, h("h3", { id: "versions-title" }, "Versions"), h("div", { class: "row" }, leftLabel, leftSelect, rightLabel, rightSelect));
      return;
    }
    const { changes, marks } = diffSchemas(before, after);
    fill(versionsPanel,
      h("h3", { id: "versions-title" }, "Versions"),
      h("div", { class: "row" }, leftLabel, leftSelect, rightLabel, rightSelect),
      h("div", { class: "side-by-side" },
        left === right ? null : schemaColumn(before, marks.before, "before"),
        schemaColumn(after, marks.after, "after")),
      h("h4", {}, left === right ? `v${left} alone` : `Changes from v${left} to v${right}`),
      changes.length === 0 ? status(left === right ? (current.version === 1 ? "The only version so far." : "Pick two different versions to compare.") : "No differences.")
        : h("ul", { class: "changes", id: "schema-changes" }, changes.map((change) =>
          h("li", { class: `change mark-${change.kind}`, "data-change": change.kind, "data-id": change.id },
            h("span", { class: "badge" }, KIND_LABEL[change.kind]), " ", idCode(change.id), " ", change.detail))));
  }

  function schemaColumn(schema, marks, side) {
    const entry = (item) => {
      const kinds = marks.get(item.id) || [];
      const facts = [item.kind !== "tab" ? item.kind : null, item.placement && item.placement !== "automatic" ? item.placement : null,
        item.role, item.hiddenIn ? `hidden in ${item.hiddenIn.join(", ")}` : null,
        item.customizationBehavior ? `behaviour ${item.customizationBehavior.sidebar}/${item.customizationBehavior.tabBar}` : null,
        item.dynamicTabs ? `data tabs ${item.dynamicTabs.idPrefix}…` : null].filter(Boolean);
      return h("li", { class: kinds.map((kind) => `mark-${kind}`).join(" "), "data-id": item.id },
        h("span", { class: "item-title" }, item.title || item.id), " ", idCode(item.id),
        kinds.map((kind) => [" ", h("span", { class: "badge" }, KIND_LABEL[kind])]),
        facts.length ? h("span", { class: "facts" }, facts.join(" · ")) : null,
        item.kind === "section" && item.tabs.length ? h("ol", {}, item.tabs.map(entry)) : null);
    };
    return h("div", { class: "card schema-column", "data-side": side },
      h("h4", {}, `v${schema.version}`, h("span", { class: "hint" }, ` registered ${when(schema.createdAt)}`)),
      h("p", { class: "hint" }, `Customizable on: ${(schema.customizablePlatforms || []).join(", ") || "iPadOS (sidebarAdaptable) only"}`),
      h("ol", { class: "schema-tree" }, schema.items.map(entry)));
  }

  // Registering: dry run first, then the same text for real.
  const editor = h("textarea", { id: "schema-json", rows: 18, spellcheck: "false", autocomplete: "off",
                                 "aria-describedby": "schema-json-hint" });
  if (current) editor.value = JSON.stringify({ items: current.items, customizablePlatforms: current.customizablePlatforms }, null, 2);
  const report = h("div", { id: "dry-run", "aria-live": "polite" });
  const errors = h("div", { id: "schema-errors" });
  const registerButton = h("button", { type: "button", id: "register-schema", disabled: true }, "Register");
  let checkedText = null;
  editor.addEventListener("input", () => {
    registerButton.disabled = editor.value !== checkedText;
    if (registerButton.disabled) registerButton.textContent = "Register";
  });

  /** Local syntax first (line and column), then the server; a refusal's pointers become lines. */
  async function send(dryRun) {
    errors.replaceChildren();
    let lines;
    try {
      lines = parseWithLines(editor.value).lines;
    } catch (error) {
      if (!(error instanceof JSONSyntaxError)) throw error;
      showErrors([{ line: error.line, text: `not JSON: ${error.message}` }]);
      return null;
    }
    try {
      const answer = await call(`${base}${dryRun ? `?dryRun=true&limit=${IMPACT_PAGE}` : ""}`, { method: "PUT", body: editor.value });
      clearProblem();
      return answer;
    } catch (error) {
      showProblem(error);
      if (error instanceof Problem && Array.isArray(error.document.errors)) {
        showErrors(error.document.errors.map((e) => ({ line: lineOfPointer(lines, e.pointer), text: `${e.pointer || "/"} ${e.code}: ${e.detail}` })));
      }
      return null;
    }
  }

  function showErrors(list) {
    const text = editor.value.split("\n");
    const selectLine = (line) => {
      const start = text.slice(0, line - 1).reduce((sum, l) => sum + l.length + 1, 0);
      editor.focus();
      editor.setSelectionRange(start, start + (text[line - 1] || "").length);
      editor.scrollTop = Math.max(0, (line - 3) * (editor.scrollHeight / Math.max(text.length, 1)));
    };
    fill(errors, h("h4", {}, `${list.length} problem${list.length === 1 ? "" : "s"} in the pasted schema`),
      h("ul", { class: "line-errors" }, list.map((e) => h("li", { "data-line": e.line },
        h("button", { type: "button", class: "link", onclick: () => selectLine(e.line) }, `Line ${e.line}`), " ", e.text,
        h("pre", { class: "excerpt" }, [e.line - 1, e.line, e.line + 1].filter((n) => n >= 1 && n <= text.length).map((n) =>
          h("span", { class: n === e.line ? "excerpt-line bad" : "excerpt-line" }, h("span", { class: "ln" }, String(n).padStart(4)), " ", text[n - 1], "\n")))))));
  }

  async function dryRun() {
    const text = editor.value;
    const answer = await send(true);
    if (!answer) { registerButton.disabled = true; registerButton.textContent = "Register"; report.replaceChildren(); return; }
    const r = answer.body;
    checkedText = text;
    registerButton.disabled = r.identical;
    registerButton.textContent = r.identical ? "Register (identical: nothing to store)" : `Register as v${r.wouldCreateVersion}`;
    const ids = (title, list, id) => h("div", {}, h("h5", {}, `${title} (${list.length})`),
      list.length ? h("ul", { class: "id-list", id }, list.map((x) => h("li", {}, idCode(x)))) : h("p", { class: "hint" }, "none"));
    fill(report, h("div", { class: "card", "data-testid": "dry-run-report" },
      h("h4", {}, r.identical ? `Identical to v${r.currentVersion}: nothing would be stored`
        : `Dry run: would create v${r.wouldCreateVersion}${r.currentVersion ? ` (current v${r.currentVersion})` : ""}`),
      h("dl", { class: "counts" },
        h("dt", {}, "Customizations checked"), h("dd", { id: "count-checked" }, r.customizationsChecked),
        h("dt", {}, "Customizations affected"), h("dd", { id: "count-affected" }, r.customizationsAffected),
        h("dt", {}, "Unreadable (skipped)"), h("dd", { id: "count-unreadable" }, r.customizationsUnreadable),
        h("dt", {}, "Data-driven tabs dropped"), h("dd", { id: "count-dynamic-dropped" }, r.dynamicTabsDropped)),
      ids("Ids added", r.addedIds, "ids-added"), ids("Ids removed", r.removedIds, "ids-removed"),
      ids("Ids users' choices would lose", r.droppedIds, "ids-dropped"),
      current && !r.identical ? impact(text, r) : null,
      current && !r.identical ? preview(text) : null));
  }

  /** Per affected user (the dry run's `affectedUsers`, paged in byte order): what changes for them, and for the
   *  first few their layout now (the server's) beside the one the pasted schema would give (resolved here). */
  function impact(text, r) {
    const tbody = h("tbody", {});
    const more = h("div", { class: "row" });
    const pairs = h("div", { class: "impact-pairs", id: "impact-pairs" });
    const list = (ids) => ids.length ? ids.map((id, index) => [index ? ", " : "", idCode(id)]) : h("span", { class: "hint" }, "—");
    const rows = (users) => users.map((user) => h("tr", { "data-user-id": user.userId },
      h("th", { scope: "row" }, h("button", { type: "button", class: "link", "aria-label": `Open user ${user.userId}`,
                                             onclick: () => go("user", appId, user.userId) }, idCode(user.userId))),
      h("td", { "data-field": "dropped" }, list(user.droppedIds)),
      h("td", { "data-field": "reset" }, list(user.visibilityReset)),
      h("td", { "data-field": "orders" }, list([...user.ordersChanged, ...(user.tabBarOrderChanged ? ["tab bar"] : [])])),
      h("td", { "data-field": "dynamic" }, user.dynamicTabsDropped)));
    const page = (answer) => {
      tbody.append(...rows(answer.affectedUsers));
      fill(more, answer.affectedUsersNext ? h("button", { type: "button", class: "quiet", id: "impact-more-users", onclick: async () => {
        let next;
        try {
          next = (await call(`${base}?dryRun=true&limit=${IMPACT_PAGE}&after=${encodeURIComponent(answer.affectedUsersNext)}`, { method: "PUT", body: text })).body;
        } catch (error) { showProblem(error); return; }
        page(next);
      } }, "More affected users") : null);
    };
    const section = h("section", { id: "impact", "aria-labelledby": "impact-title" },
      h("h5", { id: "impact-title" }, `Affected users (${r.customizationsAffected})`),
      r.customizationsAffected === 0 ? h("p", { class: "hint", id: "impact-none" }, "No user's served choices change: nothing they chose is dropped, reset or reordered.")
        : [h("div", { class: "table-wrap" }, h("table", { id: "impact-users" },
            h("caption", {}, "What changes for each affected user (byte order of their ids)"),
            h("thead", {}, h("tr", {}, ["User", "Choices dropped", "Visibility reset", "Orders changed", "Data tabs dropped"].map((t) => h("th", { scope: "col" }, t)))),
            tbody)), more,
          h("h5", {}, `Before and after, the first ${Math.min(DRAWN_USERS, r.affectedUsers.length)} affected`),
          h("p", { class: "hint" }, "Each user's regular layout (an iPad, no platform): now, as the server serves it, and under the pasted schema, as the console resolves it (the server resolves only registered versions). The tab selected instead of one not shown is left out of both."),
          pairs]);
    if (r.customizationsAffected > 0) {
      page(r);  // the first page came with the report (asked for IMPACT_PAGE users)
      drawPairs(text, r.affectedUsers.slice(0, DRAWN_USERS), r, pairs);
    }
    return section;
  }

  async function drawPairs(text, users, r, pairs) {
    const { schema } = withDefaults(parseWithLines(text).value);
    for (const user of users) {
      const path = `/v1/apps/${segment(appId)}/users/${segment(user.userId)}`;
      let stored, now;
      try {
        [stored, now] = await Promise.all([call(`${path}/customization`).then((a) => a.body), call(`${path}/layout?sizeClass=regular`).then((a) => a.body)]);
      } catch (error) { showProblem(error); continue; }
      const here = previewLayout(current, stored);
      const reset = JSON.parse(JSON.stringify(stored));
      for (const id of user.visibilityReset) {
        if (reset.tabs && reset.tabs[id]) delete reset.tabs[id];
        if (reset.sections && reset.sections[id]) delete reset.sections[id].expanded;
      }
      const after = previewLayout(schema, reset, { schemaVersion: r.wouldCreateVersion });
      const agrees = layoutOutline(here) === layoutOutline(now);
      const titles = new Map([...flatten(current), ...flatten(schema)].map((e) => [e.id, e.item.title || e.id]));
      pairs.append(h("div", { class: "impact-pair card", "data-user-id": user.userId, "data-preview-agrees": String(agrees) },
        h("h5", {}, "User ", idCode(user.userId)),
        agrees ? null : h("p", { class: "note" }, "The console resolves the current version differently from the server for this user: the drawing after may be inexact."),
        h("div", { class: "drawings" },
          h("div", { "data-side": "before" }, h("p", { class: "hint" }, `Now (v${r.currentVersion}, the server's layout)`), drawLayout({ ...now, selectionFallback: {} }, titles, { heading: "h6" })),
          h("div", { "data-side": "after" }, h("p", { class: "hint" }, `Under the pasted schema (would be v${r.wouldCreateVersion})`), drawLayout(after, titles, { heading: "h6" })))));
    }
  }

  /** What the pasted schema changes against the current version, item by item (the defaults filled in here). */
  function preview(text) {
    const { schema, withoutId } = withDefaults(parseWithLines(text).value);
    const { changes } = diffSchemas(current, schema);
    return h("div", {},
      h("h5", {}, `Changes from v${current.version} (current) to the pasted schema (${changes.length})`),
      changes.length === 0 ? h("p", { class: "hint" }, "none item by item")
        : h("ul", { class: "changes", id: "dry-run-changes" }, changes.map((change) =>
          h("li", { class: `change mark-${change.kind}`, "data-change": change.kind, "data-id": change.id },
            h("span", { class: "badge" }, KIND_LABEL[change.kind]), " ", idCode(change.id), " ", change.detail))),
      withoutId ? h("p", { class: "hint" }, `${withoutId} tab${withoutId === 1 ? "" : "s"} without an id left out here (the server derives their ids).`) : null);
  }

  registerButton.addEventListener("click", async () => {
    if (editor.value !== checkedText) { registerButton.disabled = true; return; }
    const answer = await send(false);
    if (!answer) return;
    current = answer.body;
    cache.clear();
    fill(report, status(answer.status === 201 ? `Registered v${current.version}.` : `Identical to v${current.version}: nothing stored.`));
    registerButton.disabled = true;
    registerButton.textContent = "Register";
    checkedText = null;
    await showVersions(Math.max(1, current.version - 1), current.version);
  });

  fill(registerPanel,
    h("h3", { id: "register-title" }, "Register a new version"),
    h("p", { id: "schema-json-hint", class: "hint" }, "Paste the schema JSON (items, customizablePlatforms). Check it with a dry run first: nothing is stored until you register the checked text."),
    h("label", { for: "schema-json" }, "Schema JSON"), editor, errors,
    h("div", { class: "row" }, h("button", { type: "button", id: "dry-run-schema", onclick: dryRun }, "Dry run"), registerButton),
    report);
  await showVersions(current ? Math.max(1, current.version - 1) : 0, current ? current.version : 0);
}
