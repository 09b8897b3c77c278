// A user: look up by id; the customization, its history with revert, and the resolved layouts drawn for a
// platform and style (regular and compact side by side), under a schema version picked from the app's supported
// ones (the minimum to the current one), as a device running that release reads them.
import { attempt, call, clearProblem, Problem, segment, showProblem } from "./api.js";
import { fill, h, idCode, status, when } from "./dom.js";
import { actorText, changeText, diffCustomizations } from "./history.js";
import { drawLayout } from "./layout-drawing.js";
import { appPicker } from "./picker.js";
import { flatten } from "./schema-diff.js";

const PLATFORMS = ["", "iOS", "iPadOS", "macOS", "visionOS", "tvOS"];
const view = { platform: "", style: "sidebarAdaptable", versions: new Map() };  // versions: app id → the schema version picked

export async function userScreen(container, args, { go }) {
  const [appId, userId] = args;
  fill(container, h("h2", {}, "User"), appPicker(appId, (id) => go("user", id, userId || "")));
  if (!appId) { container.append(status("Pick an app, then a user.")); return; }
  const userInput = h("input", { id: "user-id", name: "user-id", value: userId || "", required: true, autocomplete: "off", spellcheck: "false" });
  container.append(h("form", { class: "row picker", id: "user-form", onsubmit: (event) => { event.preventDefault(); go("user", appId, userInput.value); } },
    h("label", { for: "user-id" }, "User id"), userInput, h("button", { type: "submit" }, "Look up")));
  if (!userId) return;
  if ([appId, userId].some((id) => id === "." || id === "..")) {  // browsers fold these path segments, even percent-encoded
    container.append(status(`The id "${appId === "." || appId === ".." ? appId : userId}" cannot be managed from the console: browsers fold "." and ".." path segments, even percent-encoded, so the request would go to another path. Use the API from a client that keeps them.`));
    return;
  }
  const user = `/v1/apps/${segment(appId)}/users/${segment(userId)}`;

  const versionRow = h("div", { class: "row", id: "schema-version-row" });
  const summary = h("section", { id: "customization", "aria-labelledby": "customization-title" });
  const layouts = h("section", { id: "layouts", "aria-labelledby": "layouts-title" });
  const history = h("section", { id: "history", "aria-labelledby": "history-title" });
  container.append(versionRow, summary, layouts, history);

  // The versions a client may name: the app's minimum to its current one (none before the first schema).
  let app;
  try { app = (await call(`/v1/apps/${segment(appId)}`)).body; } catch (error) { showProblem(error); return; }
  const current = app.schemaVersion;
  const minimum = Math.min(app.minimumSchemaVersion || 1, current);
  const remembered = view.versions.get(appId);
  const version = current && remembered >= minimum && remembered <= current ? remembered : current;
  const schemas = new Map();  // version → its titles (a tab only an older version has is titled by that version)
  const titlesOf = (number) => {
    if (!schemas.has(number)) {
      const path = number ? `/v1/apps/${segment(appId)}/schema/versions/${number}` : `/v1/apps/${segment(appId)}/schema`;
      schemas.set(number, call(path).then((answer) => new Map(flatten(answer.body).map((e) => [e.id, e.item.title || e.id])),
        (error) => { schemas.delete(number); throw error; }));
    }
    return schemas.get(number);
  };
  const under = (number) => (number ? `schemaVersion=${number}` : "");
  const withVersion = (path, number) => number ? `${path}${path.includes("?") ? "&" : "?"}${under(number)}` : path;

  // What the customization screen shows: under the version picked (revision, ETag and the JSON as its clients read them).
  let titles = new Map();
  let c;
  let etag;
  let shownVersion = version;
  const fetchCustomization = (number) => Promise.all([call(withVersion(`${user}/customization`, number)), titlesOf(number)]);
  function showCustomization(number, [answer, names]) {
    c = answer.body;
    etag = answer.headers.get("ETag");
    titles = names;
    shownVersion = number;
    const open = summary.querySelector("details")?.open || false;  // the JSON stays open across picks
    fill(summary, h("h3", { id: "customization-title" }, "Customization"),
      c.revision === 0 ? h("p", { class: "note", id: "nothing-stored" }, "Nothing is stored for this user: every device of theirs shows the schema's defaults.") : null,
      h("p", {}, h("a", { href: `#/live/${encodeURIComponent(appId)}/${encodeURIComponent(userId)}`, id: "open-live" }, "Follow live, export or erase this user")),
      h("dl", { class: "counts" },
        h("dt", {}, "Revision"), h("dd", { id: "user-revision" }, c.revision === 0 ? "0 (nothing stored: the schema's defaults)" : c.revision),
        h("dt", {}, "Schema version"), h("dd", { id: "user-schema-version" }, `v${c.schemaVersion}`,
          current && c.schemaVersion !== current ? h("span", { class: "hint" }, ` (as a client of v${c.schemaVersion} reads it; current v${current})`) : null),
        h("dt", {}, "Updated"), h("dd", {}, when(c.updatedAt)),
        h("dt", {}, "ETag"), h("dd", {}, h("code", { id: "user-etag" }, etag || "—"))),
      h("details", { open }, h("summary", {}, "The customization as JSON"), h("pre", { class: "json", id: "customization-json" }, JSON.stringify(c, null, 2))));
  }
  try { showCustomization(version, await fetchCustomization(version)); } catch (error) { showProblem(error); return; }

  // The schema version picker: what a device running an older release reads and shows, beside the newest one.
  if (current) {
    const picker = h("select", { id: "schema-version", "aria-describedby": "schema-version-hint" },
      Array.from({ length: current - minimum + 1 }, (_, index) => current - index).map((n) => h("option", { value: n, selected: n === version },
        `v${n}${n === current && n === minimum ? " (current, minimum)" : n === current ? " (current)" : n === minimum ? " (minimum)" : ""}`)));
    let picks = 0;  // only the latest pick draws
    picker.addEventListener("change", async () => {
      const mine = ++picks;
      const number = +picker.value;
      view.versions.set(appId, number);
      let answers;
      try {
        answers = await fetchCustomization(number);
      } catch (error) { if (mine === picks) showProblem(error); return; }
      if (mine !== picks) return;
      clearProblem();
      showCustomization(number, answers);
      await drawLayouts();
    });
    fill(versionRow, h("label", { for: "schema-version" }, "Schema version"), picker,
      h("span", { class: "hint", id: "schema-version-hint" }, current > minimum
        ? `the customization and layouts as a device with this release reads them (supported: v${minimum} to v${current})`
        : "the only version served"));
  }

  // Layouts: the platform and style chosen here, both size classes, under the schema version picked.
  const platform = h("select", { id: "layout-platform" }, PLATFORMS.map((p) => h("option", { value: p, selected: p === view.platform }, p || "none (the size class decides)")));
  const style = h("select", { id: "layout-style" }, ["sidebarAdaptable", "tabBarOnly"].map((v) => h("option", { value: v, selected: v === view.style }, v)));
  const drawings = h("div", { class: "drawings", id: "layout-drawings", "aria-live": "polite" });
  let drawing = 0;  // only the latest choice draws: an earlier answer arriving late is dropped
  async function drawLayouts() {
    const mine = ++drawing;
    view.platform = platform.value;
    view.style = style.value;
    const number = shownVersion;
    const names = titles;
    const query = (sizeClass) => `${user}/layout?sizeClass=${sizeClass}` + (view.platform ? `&platform=${view.platform}` : "")
      + (view.platform || view.style !== "sidebarAdaptable" ? `&style=${view.style}` : "") + (number ? `&${under(number)}` : "");
    try {
      const answers = await Promise.all(["regular", "compact"].map((sizeClass) => call(query(sizeClass))));
      if (mine === drawing) fill(drawings, answers.map((answer) => drawLayout(answer.body, names)));
    } catch (error) {
      if (mine === drawing) { showProblem(error); drawings.replaceChildren(); }
    }
  }
  platform.addEventListener("change", drawLayouts);
  style.addEventListener("change", drawLayouts);
  fill(layouts, h("h3", { id: "layouts-title" }, "Layouts"),
    h("div", { class: "row" }, h("label", { for: "layout-platform" }, "Platform"), platform, h("label", { for: "layout-style" }, "Style"), style),
    drawings);

  // History, newest first, a page at a time: who made each revision and what it was; each kept revision can be
  // viewed, compared with another and reverted to.
  const list = h("ol", { class: "history-list", id: "history-list" });
  const more = h("div", { class: "row" });
  const kept = new Map();  // revision → its history item (the kept revisions loaded so far)
  const viewPanel = h("div", { id: "revision-view" });
  const fromSelect = h("select", { id: "diff-from" });
  const toSelect = h("select", { id: "diff-to" });
  const diffPanel = h("div", { id: "revision-diff", "aria-live": "polite" });
  function refreshPickers() {
    const numbers = [...kept.keys()].sort((x, y) => y - x);
    const options = (selected) => numbers.map((n) => h("option", { value: n, selected: n === selected }, `r${n}`));
    const from = +fromSelect.value || numbers[1] || numbers[0], to = +toSelect.value || numbers[0];
    fill(fromSelect, options(from));
    fill(toSelect, options(to));
  }
  function viewRevision(item) {
    fill(viewPanel, h("section", { class: "card", "aria-labelledby": "revision-view-title", "data-revision": item.revision },
      h("h4", { id: "revision-view-title", tabindex: "-1" }, `r${item.revision}: ${changeText(item)} ${actorText(item)}`),
      h("p", { class: "hint" }, `Written ${when(item.updatedAt)}; the whole customization as stored then.`),
      h("pre", { class: "json", id: "revision-json" }, JSON.stringify(item.customization, null, 2)),
      h("button", { type: "button", class: "quiet", onclick: () => viewPanel.replaceChildren() }, "Close")));
    viewPanel.querySelector("h4").focus();
  }
  function compare() {
    const from = kept.get(+fromSelect.value), to = kept.get(+toSelect.value);
    if (!from || !to) return;
    const changes = diffCustomizations(from.customization, to.customization);
    fill(diffPanel, h("h4", {}, `From r${from.revision} to r${to.revision}`),
      changes.length === 0 ? status("The same choices.") : h("ul", { class: "revision-diff", id: "revision-diff-list" }, changes.map((change) =>
        h("li", { "data-what": change.what, "data-id": change.id }, h("strong", {}, change.what), " ", idCode(change.id), `: ${change.from} → ${change.to}`))));
  }
  async function loadHistory(before) {
    const page = await attempt(() => call(`${user}/customization/history?limit=20` + (before ? `&before=${before}` : "")));
    if (!page) return;
    list.append(...page.body.items.map((item) => {
      if (item.change === "schema") {
        return h("li", { class: "schema-entry", "data-change": "schema", "data-schema-version": item.schemaVersion },
          h("strong", {}, changeText(item)), h("span", { class: "hint" }, ` · registered ${when(item.updatedAt)} · applies to r${item.revision}; the user's next write stores it`));
      }
      kept.set(item.revision, item);
      return h("li", { "data-revision": item.revision, "data-change": item.change },
        h("strong", {}, `r${item.revision}`), ` ${changeText(item)} `, h("span", { class: "actor", "data-actor": item.actor?.name ?? "" }, actorText(item)),
        ` · ${when(item.updatedAt)}`,
        item.operations ? h("span", { class: "hint" }, ` · ${item.operations.map(describeOperation).join("; ")}`) : null,
        item.customization ? h("button", { type: "button", class: "quiet", "data-action": "view", "aria-label": `View r${item.revision}`, onclick: () => viewRevision(item) }, "View") : null,
        item.revision === c.revision ? h("span", { class: "badge" }, "current")
          : h("button", { type: "button", class: "quiet", "data-action": "revert", onclick: () => revert(item.revision) }, `Revert to r${item.revision}`));
    }));
    refreshPickers();
    fill(more, page.body.nextBefore ? h("button", { type: "button", class: "quiet", onclick: () => loadHistory(page.body.nextBefore) }, "Older revisions") : null);
  }
  // A revert is a write that reaches the user's devices at once: confirmed first, as rotate and delete are.
  const revertConfirm = h("div", { id: "revert-confirm" });
  const conflict = h("div", { id: "revert-conflict" });
  function revert(revision) {
    fill(revertConfirm, h("section", { class: "card", "aria-labelledby": "revert-confirm-title", "data-dialog": "revert" },
      h("h4", { id: "revert-confirm-title", tabindex: "-1" }, revision === 0 ? "Revert to the empty customization (revision 0)?" : `Revert to r${revision}?`),
      h("p", {}, `This writes a new revision with the customization of r${revision}${revision === 0 ? " (none: the schema's defaults)" : ""}, `
        + "data-driven tabs of that revision included. It reaches the user's devices at once."),
      h("div", { class: "row" },
        h("button", { type: "button", id: "confirm-revert", onclick: () => { revertConfirm.replaceChildren(); doRevert(revision); } }, "Revert"),
        h("button", { type: "button", class: "quiet", "data-cancel": true, onclick: () => revertConfirm.replaceChildren() }, "Cancel"))));
    revertConfirm.querySelector("h4").focus();
  }
  async function doRevert(revision) {
    try {
      // Under the version shown: the ETag names it (the revert restores every version's choices either way).
      await call(withVersion(`${user}/customization/revert`, shownVersion), { method: "POST", body: { toRevision: revision }, headers: etag ? { "If-Match": etag } : {} });
      clearProblem();
      go("user", appId, userId);
    } catch (error) {
      showProblem(error);
      if (error instanceof Problem && error.status === 412) {
        // Someone wrote meanwhile (a device, another operator): read the user again rather than tell the person to.
        let now = null;
        try { now = (await call(withVersion(`${user}/customization`, shownVersion))).body; } catch { now = null; }
        fill(conflict, h("div", { class: "card warning", "data-testid": "revert-conflict" },
          h("p", {}, h("strong", {}, "Not reverted: the customization changed meanwhile"),
            now ? ` (it is at r${now.revision} now, you were looking at r${c.revision}).` : "."),
          h("div", { class: "row" },
            h("button", { type: "button", id: "reload-user", onclick: () => { clearProblem(); go("user", appId, userId); } }, "Reload the user"),
            h("span", { class: "hint" }, `then revert to r${revision} again if it is still wanted.`))));
        conflict.querySelector("button").focus();
      }
    }
  }
  fill(history, h("h3", { id: "history-title" }, "History"), conflict, revertConfirm, viewPanel, list, more,
    c.revision > 0 ? h("button", { type: "button", class: "quiet", "data-action": "revert", onclick: () => revert(0) }, "Revert to the empty customization (revision 0)") : null,
    h("form", { class: "row", id: "diff-form", onsubmit: (event) => { event.preventDefault(); compare(); } },
      h("label", { for: "diff-from" }, "Compare"), fromSelect, h("label", { for: "diff-to" }, "with"), toSelect,
      h("button", { type: "submit", id: "diff-compare" }, "Compare")),
    diffPanel);
  await Promise.all([drawLayouts(), loadHistory(null)]);
}

/** One PATCH operation in a line: its op and what it names (tab, section, visibility, index, order). */
function describeOperation(op) {
  const parts = [op.op];
  if (op.section) parts.push(op.section);
  if (op.tab) parts.push(op.tab);
  if (op.visibility) parts.push(`→ ${op.visibility}`);
  if (op.toIndex !== undefined) parts.push(`→ place ${op.toIndex + 1}`);
  if (Array.isArray(op.tabOrder)) parts.push(`[${op.tabOrder.join(", ")}]`);
  if (Array.isArray(op.tabBarOrder)) parts.push(`[${op.tabBarOrder.join(", ")}]`);
  if (op.expanded !== undefined) parts.push(op.expanded ? "expanded" : "collapsed");
  if (Array.isArray(op.tabs)) parts.push(`${op.tabs.length} tabs`);
  if (op.placement) parts.push(op.placement);
  return parts.join(" ");
}
