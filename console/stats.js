// Stats: per tab of the current schema, how many users hid it in the sidebar and in the tab bar, as an SVG
// bar chart drawn here (two bars per tab, on one scale: the users with a customization), with the numbers as a table;
// then the schema versions in use and the minimum (versions.js).
import { call, Problem, segment, showProblem } from "./api.js";
import { fill, h, s, status, idCode } from "./dom.js";
import { appPicker } from "./picker.js";
import { flatten } from "./schema-diff.js";
import { versionsSection } from "./versions.js";

export async function statsScreen(container, args, { go }) {
  const appId = args[0];
  fill(container, h("h2", {}, "Stats"), appPicker(appId, (id) => go("stats", id)));
  if (!appId) { container.append(status("Pick an app.")); return; }
  let stats, schema = null;
  try {
    [stats, schema] = await Promise.all([
      call(`/v1/apps/${segment(appId)}/stats`).then((a) => a.body),
      call(`/v1/apps/${segment(appId)}/schema`).then((a) => a.body).catch((error) => {
        if (error instanceof Problem && error.status === 404) return null;
        throw error;
      }),
    ]);
  } catch (error) { showProblem(error); return; }

  // Tabs in the schema's builder order, with their titles; any the schema does not list (none, normally) after.
  const titles = new Map(schema ? flatten(schema).filter((e) => e.kind === "tab").map((e) => [e.id, e.item.title]) : []);
  const order = [...titles.keys()].filter((id) => id in stats.tabs);
  for (const id of Object.keys(stats.tabs)) if (!titles.has(id)) order.push(id);
  const rows = order.map((id) => ({ id, title: titles.get(id) || id, ...stats.tabs[id] }));

  container.append(
    h("dl", { class: "counts" },
      h("dt", {}, "Schema version"), h("dd", {}, stats.schemaVersion ? `v${stats.schemaVersion}` : "none"),
      h("dt", {}, "Users with choices now"), h("dd", { id: "stats-users" }, stats.usersWithCustomization),
      h("dt", {}, "Stored customizations"), h("dd", {}, stats.storedCustomizations),
      h("dt", {}, "Unreadable (skipped)"), h("dd", {}, stats.unreadableCustomizations)),
    h("p", { class: "hint" }, "Users with choices now: whose stored choices still say something under the current version. ",
      "Stored customizations counts every stored one, also those a schema change left with nothing to say."),
    // Drawn at the width it is shown at (text stays 13 px on a phone): the card's inner width, 300 to 820.
    rows.length === 0 ? status("The app has no tabs yet (no schema).")
      : chart(rows, stats.usersWithCustomization, Math.round(Math.min(820, Math.max(300, container.clientWidth - 36)))),
    rows.length === 0 ? null : h("details", {}, h("summary", {}, "The numbers as a table"),
      h("table", { id: "stats-table" }, h("caption", {}, "Users who hid each tab"),
        h("thead", {}, h("tr", {}, h("th", { scope: "col" }, "Tab"), h("th", { scope: "col" }, "Hid in sidebar"), h("th", { scope: "col" }, "Hid in tab bar"))),
        h("tbody", {}, rows.map((row) => h("tr", {}, h("th", { scope: "row" }, row.title, " ", idCode(row.id)),
          h("td", {}, row.sidebarHidden), h("td", {}, row.tabBarHidden)))))),
    h("p", { class: "hint" }, "Counts come from the stored customizations, reconciled with the current schema. The server keeps no history of these numbers, so there is no chart over time."),
    versionsSection(appId, stats, go));
}

/** The chart: a row per tab with its label above two horizontal bars (sidebar, tab bar) and their counts. */
function chart(rows, users, width) {
  const labelHeight = 18, bar = 14, gap = 4, rowGap = 14, left = 8, right = 56;
  const rowHeight = labelHeight + 2 * bar + gap + rowGap;
  const top = 34, height = top + rows.length * rowHeight + 24;
  // The axis runs to the users with a customization (no tab can be hidden by more), in round steps of 1, 2 or 5 × 10ⁿ.
  const most = Math.max(1, users, ...rows.map((r) => Math.max(r.sidebarHidden, r.tabBarHidden)));
  const magnitude = 10 ** Math.floor(Math.log10(most / 4 || 1));
  const step = Math.max(1, [1, 2, 5, 10].map((f) => f * magnitude).find((candidate) => most / candidate <= 5));
  const max = Math.ceil(most / step) * step;
  const scale = (value) => (width - left - right) * value / max;
  const ticks = Array.from({ length: max / step + 1 }, (_, index) => index * step);
  const svg = s("svg", { id: "stats-chart", class: "chart", viewBox: `0 0 ${width} ${height}`, width, height, role: "img",
                         "aria-labelledby": "chart-title chart-desc", preserveAspectRatio: "xMinYMin meet" },
    s("title", { id: "chart-title" }, "Users who hid each tab, in the sidebar and in the tab bar"),
    s("desc", { id: "chart-desc" }, rows.map((r) => `${r.title}: ${r.sidebarHidden} in the sidebar, ${r.tabBarHidden} in the tab bar`).join("; ")),
    // legend
    s("rect", { x: left, y: 6, width: 14, height: 14, class: "bar-sidebar" }),
    s("text", { x: left + 20, y: 18, class: "legend" }, "hid in sidebar"),
    s("rect", { x: left + 120, y: 6, width: 14, height: 14, class: "bar-tabbar" }),
    s("text", { x: left + 140, y: 18, class: "legend" }, "hid in tab bar"),
    ticks.map((value) => s("g", { class: "tick" },
      s("line", { x1: left + scale(value), x2: left + scale(value), y1: top - 4, y2: height - 20 }),
      value === max && value > 0
        ? s("text", { x: left + scale(value) + 4, y: height - 6, "text-anchor": "end" }, `${value} users`)
        : s("text", { x: left + scale(value), y: height - 6, "text-anchor": "middle" }, value))),
    rows.map((row, index) => {
      const y = top + index * rowHeight;
      const barAt = (value, offset, kind) => [
        s("rect", { x: left, y: y + labelHeight + offset, width: Math.max(scale(value), value > 0 ? 2 : 0), height: bar,
                    class: `bar-${kind}`, "data-tab-id": row.id, "data-value": value }),
        s("text", { x: left + scale(value) + 6, y: y + labelHeight + offset + bar - 3, class: "value" }, value)];
      return s("g", { class: "chart-row", "data-tab-id": row.id },
        s("text", { x: left, y: y + labelHeight - 5, class: "label" }, `${row.title} `, s("tspan", { class: "id" }, row.id)),
        barAt(row.sidebarHidden, 0, "sidebar"), barAt(row.tabBarHidden, bar + gap, "tabbar"));
    }));
  return h("figure", { class: "card chart-card" }, svg);
}
