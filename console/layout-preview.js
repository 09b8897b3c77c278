// What a schema not yet registered would show a user: the regular-size-class layout (no platform, sidebarAdaptable:
// the sidebar and the tab bar it adapts to) resolved here, in the page, from a stored schema's shape and the user's
// customization, following docs/domain.md "Layout: what the TabView shows" as the server's Layout does. The server
// resolves layouts only under registered versions, so the schema dry run draws its "after" with this; the dry run
// also resolves the current version here and compares it with the server's answer, and says so when they differ.

const behaviourOf = (tab, section, placement) =>
  section && section.customizationBehavior?.[placement] === "disabled" ? "disabled" : (tab.customizationBehavior?.[placement] || "automatic");

/** The schema's tabs with their section (null at the top level) and whether they come from data. */
function index(schema, customization) {
  const tabs = new Map();
  const sections = new Map();
  for (const item of schema.items || []) {
    if (item.kind === "section" || item.kind === "forEach") {
      sections.set(item.id, item);
      for (const tab of item.tabs || []) tabs.set(tab.id, { tab, section: item, dynamic: false });
      for (const tab of dynamicTabs(item, customization)) tabs.set(tab.id, { tab, section: item, dynamic: true });
    } else tabs.set(item.id, { tab: item, section: null, dynamic: false });
  }
  return { tabs, sections };
}

/** A section's stored data-driven tabs that its `dynamicTabs` still takes (the prefix matches). */
function dynamicTabs(section, customization) {
  const prefix = section.dynamicTabs?.idPrefix;
  if (!prefix) return [];
  return ((customization.dynamicTabs || {})[section.id] || []).filter((tab) => typeof tab.id === "string" && tab.id.startsWith(prefix))
    .map((tab) => ({ kind: "tab", id: tab.id, title: tab.title, systemImage: tab.systemImage, image: tab.image,
                     customizationBehavior: section.dynamicTabs.customizationBehavior || { sidebar: "automatic", tabBar: "automatic" } }));
}

function rules(schema, customization) {
  const { tabs, sections } = index(schema, customization);
  const behaviour = (info, placement) => behaviourOf(info.tab, info.section, placement);
  const canMove = (info, placement) => {
    const b = behaviour(info, placement);
    return info.dynamic ? b === "reorderable" : b === "automatic" || b === "reorderable";
  };
  const byDefault = (info, placement) => {
    if (placement === "tabBar" && info.tab.placement === "sidebarOnly") return false;
    let visibility = info.tab.defaultVisibility?.[placement] || "automatic";
    if (visibility === "automatic" && info.section) visibility = info.section.defaultVisibility?.[placement] || "automatic";
    return visibility !== "hidden";
  };
  const visible = (info, placement) => {
    const entry = (customization.tabs || {})[info.tab.id] || {};
    if (placement === "tabBar") {
      if (info.tab.placement === "sidebarOnly") return false;
      if (entry.sidebarVisibility === "hidden") return false;
    }
    const chosen = entry[placement === "sidebar" ? "sidebarVisibility" : "tabBarVisibility"] || "automatic";
    return chosen === "visible" ? true : chosen === "hidden" ? false : byDefault(info, placement);
  };
  const placing = (fixed, order) => {
    if (!fixed.size) return order;
    const present = new Set(order);
    const movable = order.filter((id) => !fixed.has(id));
    const slots = new Array(order.length).fill(null);
    for (const [id, position] of fixed) if (position < slots.length && present.has(id)) slots[position] = id;
    for (let i = 0; i < slots.length; i++) if (slots[i] === null) slots[i] = movable.shift() ?? null;
    return slots.filter((id) => id !== null);
  };
  const fixedPositions = (infos, placement) => new Map(infos.map((info, i) => [info, i]).filter(([info]) => !canMove(info, placement)).map(([info, i]) => [info.tab.id, i]));
  /** The order a section shows: the user's order brought in line with the section (ids gone dropped, the others after). */
  const shownOrder = (section) => {
    const defaults = [...(section.tabs || []).map((tab) => tabs.get(tab.id)), ...dynamicTabs(section, customization).map((tab) => tabs.get(tab.id))];
    const stored = (customization.sections || {})[section.id]?.tabOrder;
    if (!stored) return defaults;
    const fixed = fixedPositions(defaults, "sidebar");
    const mine = new Set(defaults.map((info) => info.tab.id));
    const kept = [];
    for (const id of stored) if (mine.has(id) && !kept.includes(id) && (fixed.has(id) || canMove(tabs.get(id), "sidebar"))) kept.push(id);
    for (const info of defaults) if (!kept.includes(info.tab.id)) kept.push(info.tab.id);
    return placing(fixed, kept).map((id) => tabs.get(id));
  };
  return { tabs, sections, visible, canMove, placing, fixedPositions, shownOrder };
}

const shown = (tab) => {
  const out = { kind: "tab", id: tab.id, title: tab.title, systemImage: tab.systemImage, image: tab.image, role: tab.role };
  if (tab.role === "search") { out.title = "Search"; out.systemImage = "magnifyingglass"; out.image = undefined; }
  return out;
};

/**
 * The regular layout `customization` gets under `schema` (a stored schema, or a pasted one with its defaults
 * filled in by withDefaults): {sizeClass: "regular", sidebar, tabBar, pinned, more: [], hidden, ...}, the shape of
 * GET …/layout's answer, so drawLayout draws it. `customization` is the stored document: choices about ids the
 * schema lacks name nothing here; the caller takes out the choices the server's report says are reset.
 */
export function previewLayout(schema, customization, extra = {}) {
  const r = rules(schema, customization);
  const present = (item) => !(item.hiddenIn || []).includes("regular");
  const topLevel = [], sections = [], builderTabs = [];
  for (const item of schema.items || []) {
    if (item.kind === "section" || item.kind === "forEach") {
      if (!present(item)) continue;
      const tabs = r.shownOrder(item).filter((info) => present(info.tab));
      if (item.kind === "forEach") { topLevel.push(...tabs); builderTabs.push(...tabs); continue; }
      sections.push([item, tabs]);
      builderTabs.push(...(item.tabs || []).map((tab) => r.tabs.get(tab.id)).filter((info) => present(info.tab)), ...tabs.filter((info) => info.dynamic));
    } else if (present(item)) {
      const info = r.tabs.get(item.id);
      topLevel.push(info);
      builderTabs.push(info);
    }
  }
  const pinned = (info) => info.tab.placement === "pinned";
  const sidebar = [];
  for (const info of topLevel) if (!pinned(info) && r.visible(info, "sidebar")) sidebar.push(shown(info.tab));
  for (const [section, tabs] of sections) {
    sidebar.push({ kind: "section", id: section.id, title: section.title,
                   expanded: (customization.sections || {})[section.id]?.expanded ?? section.expanded ?? true,
                   tabs: tabs.filter((info) => r.visible(info, "sidebar")).map((info) => shown(info.tab)) });
  }
  const pinnedTabs = topLevel.filter((info) => pinned(info) && r.visible(info, "tabBar")).map((info) => shown(info.tab));
  const barItems = builderTabs.filter((info) => !pinned(info) && r.visible(info, "tabBar"));
  let bar = barItems;
  if (Array.isArray(customization.tabBarOrder)) {
    const fixed = r.fixedPositions(barItems, "tabBar");
    const rank = new Map(customization.tabBarOrder.map((id, i) => [id, i]).reverse());
    const movable = barItems.map((info, offset) => ({ info, offset })).filter(({ info }) => !fixed.has(info.tab.id))
      .sort((a, b) => (rank.get(a.info.tab.id) ?? Infinity) - (rank.get(b.info.tab.id) ?? Infinity) || a.offset - b.offset).map(({ info }) => info.tab.id);
    const ids = r.placing(fixed, [...movable, ...[...fixed.keys()].sort((a, b) => fixed.get(a) - fixed.get(b))]);
    bar = ids.map((id) => barItems.find((info) => info.tab.id === id)).filter(Boolean);
  }
  const tabBar = bar.map((info) => shown(info.tab));
  const shownIds = new Set([...sidebar.flatMap((item) => item.kind === "section" ? item.tabs : [item]), ...tabBar, ...pinnedTabs].map((tab) => tab.id));
  const hidden = [...topLevel, ...sections.flatMap(([, tabs]) => tabs)].map((info) => info.tab.id).filter((id) => !shownIds.has(id));
  return { sizeClass: "regular", customizationApplied: true, sidebar, tabBar, pinned: pinnedTabs, more: [], hidden, selectionFallback: {},
           revision: customization.revision, ...extra };
}

/** The parts of two layouts a person sees, by id, for comparing the page's resolution with the server's. */
export function layoutOutline(layout) {
  return JSON.stringify({
    sidebar: layout.sidebar.map((item) => item.kind === "section" ? [item.id, item.expanded, item.tabs.map((t) => t.id)] : item.id),
    tabBar: layout.tabBar.map((t) => t.id), pinned: layout.pinned.map((t) => t.id), hidden: layout.hidden,
  });
}
