// A user's history read for people: who made each revision (the user or an operator token, by name), a revert's
// target, the derived schema entry (what the current version dropped or reset), and two kept revisions compared
// choice by choice (each history item holds its whole customization, so the diff is made here).

/** "by alice (the user)", "by operator bootstrap", or, for the schema entry, who registered it is in the audit log. */
export function actorText(item) {
  const actor = item.actor || {};
  if (item.change === "schema") return "by the schema (who registered it: see the audit log)";
  if (actor.kind === "operator") return `by operator ${actor.name ?? "(unnamed)"}`;
  return `by ${actor.name ?? "the user"} (the user)`;
}

/** What an item did, in a line: "revert to r3", "schema v2 dropped com.myApp.bell; reset …", "patch", … */
export function changeText(item) {
  if (item.change === "revert") return item.toRevision === null || item.toRevision === undefined ? "revert (target not recorded)" : `revert to r${item.toRevision}`;
  if (item.change === "schema") {
    const parts = [];
    if (item.dropped?.length) parts.push(`dropped ${item.dropped.join(", ")}`);
    if (item.reset?.length) parts.push(`reset ${item.reset.join(", ")}`);
    if (item.ordersChanged?.length) parts.push(`changed the order of ${item.ordersChanged.join(", ")}`);
    if (item.dynamicTabsDropped) parts.push(`dropped ${item.dynamicTabsDropped} data-driven tab${item.dynamicTabsDropped === 1 ? "" : "s"}`);
    return `schema v${item.schemaVersion} ${parts.join("; ") || "changed nothing visible"}`;
  }
  return item.change;
}

const visibility = (entry, key) => (entry && entry[key]) || "automatic";

/**
 * The differences between two customizations (`from` older, `to` newer): per tab its sidebar and tab-bar
 * visibility, per section its order and expansion, the tab bar's order and each list of data-driven tabs.
 * Answers [{what, id, from, to}] in id order within each kind.
 */
export function diffCustomizations(from, to) {
  const a = from || {}, b = to || {};
  const out = [];
  const ids = (x, y) => [...new Set([...Object.keys(x || {}), ...Object.keys(y || {})])].sort();
  for (const id of ids(a.tabs, b.tabs)) {
    for (const [key, label] of [["sidebarVisibility", "sidebar visibility"], ["tabBarVisibility", "tab bar visibility"]]) {
      const before = visibility((a.tabs || {})[id], key), after = visibility((b.tabs || {})[id], key);
      if (before !== after) out.push({ what: label, id, from: before, to: after });
    }
  }
  const order = (list) => Array.isArray(list) ? list.join(", ") : "default";
  for (const id of ids(a.sections, b.sections)) {
    const x = (a.sections || {})[id] || {}, y = (b.sections || {})[id] || {};
    if (order(x.tabOrder) !== order(y.tabOrder)) out.push({ what: "section order", id, from: order(x.tabOrder), to: order(y.tabOrder) });
    const ex = x.expanded === undefined ? "default" : String(x.expanded), ey = y.expanded === undefined ? "default" : String(y.expanded);
    if (ex !== ey) out.push({ what: "section expanded", id, from: ex, to: ey });
  }
  if (order(a.tabBarOrder) !== order(b.tabBarOrder)) out.push({ what: "tab bar order", id: "tab bar", from: order(a.tabBarOrder), to: order(b.tabBarOrder) });
  const dynamic = (list) => Array.isArray(list) ? list.map((tab) => tab.id).join(", ") || "none" : "none";
  for (const id of ids(a.dynamicTabs, b.dynamicTabs)) {
    const x = dynamic((a.dynamicTabs || {})[id]), y = dynamic((b.dynamicTabs || {})[id]);
    if (x !== y) out.push({ what: "data-driven tabs", id, from: x, to: y });
  }
  return out;
}
