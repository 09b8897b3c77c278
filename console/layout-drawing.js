// A resolved layout (GET …/layout) drawn as the device shows it, following the answer exactly: the sidebar's
// tabs and sections in its order (a collapsed section closed), the bar's tabs in its order with a More item
// when `more` is not empty, pinned tabs at the bar's trailing end (beside the sidebar when there is no bar),
// the More list, and beside the device the tabs left out with the tab selected instead.
import { h, idCode } from "./dom.js";

const PLATFORM_DEVICE = { iOS: "iPhone", iPadOS: "iPad", macOS: "Mac", visionOS: "Vision Pro", tvOS: "Apple TV" };

/** The device a layout is drawn on: the platform's, else the size class's (regular: iPad, compact: iPhone). */
export function deviceName(layout) {
  return layout.platform ? PLATFORM_DEVICE[layout.platform] : layout.sizeClass === "regular" ? "iPad" : "iPhone";
}

/** The frame a layout is drawn in, by the device that shows it (not by the size class alone): an iPhone (iOS in
 *  either size class, or compact with no platform or iPadOS: the bottom bar) is a phone, an Apple TV a screen
 *  with its bar on top, the others a tablet-shaped window. */
export function frameOf(layout) {
  if (layout.platform === "tvOS") return "tv";
  if (layout.platform === "iOS") return "phone";
  if ((!layout.platform || layout.platform === "iPadOS") && layout.sizeClass === "compact" && !layout.sidebar.length) return "phone";
  return "tablet";
}

const icon = (tab) => h("span", { class: "icon", "aria-hidden": "true", title: tab.systemImage || tab.image || "" },
  (tab.role === "search" ? "⌕" : (tab.title || tab.id).trim().charAt(0) || "•").toUpperCase());

const tabItem = (tab, className, selected) => h("li", { class: `${className}${selected === tab.id ? " selected" : ""}`, "data-tab-id": tab.id,
  "aria-current": selected === tab.id ? "page" : false }, icon(tab), h("span", { class: "tab-title", title: tab.title }, tab.title));

/**
 * The drawing of one layout answer. `titles` maps tab ids to titles (from the schema) for the hidden list;
 * `heading` is the element of its More and Not shown headings (one level below the heading it is drawn under).
 */
export function drawLayout(layout, titles = new Map(), { heading = "h4" } = {}) {
  const selected = layout.sidebar.length
    ? (layout.sidebar[0].kind === "section" ? layout.sidebar[0].tabs[0]?.id : layout.sidebar[0].id)
    : layout.tabBar[0]?.id;
  const frame = frameOf(layout);
  const compactBar = !layout.sidebar.length && frame !== "tv" && frame !== "tablet";
  const parts = [];
  if (layout.sidebar.length) {
    parts.push(h("div", { class: "sidebar", "data-part": "sidebar", role: "group", "aria-label": "Sidebar" },
      layout.tabBar.length || !layout.pinned.length ? null
        : h("ol", { class: "sidebar-toolbar", "data-part": "pinned" }, layout.pinned.map((tab) => tabItem(tab, "pinned-tab", selected))),
      h("ol", { class: "sidebar-list" }, layout.sidebar.map((item) => item.kind === "section"
        ? h("li", { class: "sidebar-section", "data-section-id": item.id },
          h("details", { open: item.expanded }, h("summary", {}, item.title),
            h("ol", {}, item.tabs.map((tab) => tabItem(tab, "sidebar-tab", selected)))))
        : tabItem(item, "sidebar-tab", selected)))));
  }
  const content = h("div", { class: "content" });
  if (layout.tabBar.length || layout.more.length) {
    const bar = h("div", { class: compactBar ? "tabbar bottom" : "tabbar top", "data-part": "tabbar", role: "group", "aria-label": "Tab bar" },
      h("ol", { class: "bar-tabs" },
        layout.tabBar.map((tab) => tabItem(tab, "bar-tab", selected)),
        layout.more.length ? h("li", { class: "bar-more", "data-more": "true" }, h("span", { class: "icon", "aria-hidden": "true" }, "…"),
          h("span", { class: "tab-title" }, "More")) : null),
      layout.pinned.length ? h("ol", { class: "bar-pinned", "data-part": "pinned" }, layout.pinned.map((tab) => tabItem(tab, "pinned-tab", selected))) : null);
    if (compactBar) { content.append(h("div", { class: "screen-title" }, titleOf(layout, selected))); parts.push(content, bar); }
    else { content.append(bar, h("div", { class: "screen-title" }, titleOf(layout, selected))); parts.push(content); }
  } else {
    content.append(h("div", { class: "screen-title" }, titleOf(layout, selected)));
    parts.push(content);
  }

  const device = deviceName(layout);
  const caption = [device, layout.sizeClass, layout.platform || "no platform", layout.style || "sidebarAdaptable",
    layout.schemaVersion ? `schema v${layout.schemaVersion}` : null].filter(Boolean).join(" · ");
  const fallback = Object.entries(layout.selectionFallback || {});
  return h("figure", { class: "layout", "data-size-class": layout.sizeClass, "data-device": device, "data-schema-version": layout.schemaVersion },
    h("figcaption", {}, h("strong", {}, caption), " ",
      h("span", { class: layout.customizationApplied ? "hint" : "hint note" },
        layout.revision === 0 ? "nothing stored for this user: the schema's defaults"
          : layout.customizationApplied ? `revision ${layout.revision}, the user's choices applied` : "the schema's defaults (the user's choices do not apply here)"),
      layout.sidebar.length && layout.tabBar.length
        ? h("span", { class: "hint block" }, "Drawn with both: the device shows the tab bar, or the sidebar once the person opens it.") : null),
    h("div", { class: "layout-body" },
      h("div", { class: `device device-${frame}` }, parts),
      h("div", { class: "beside" },
        layout.more.length ? h("div", { class: "more-screen", "data-part": "more" }, h(heading, {}, "More"),
          h("ol", {}, layout.more.map((tab) => tabItem(tab, "more-tab", null)))) : null,
        h("div", { class: "hidden-tabs", "data-part": "hidden" }, h(heading, {}, `Not shown (${layout.hidden.length})`),
          layout.hidden.length === 0 ? h("p", { class: "hint" }, "none")
            : h("ul", {}, layout.hidden.map((id) => h("li", { "data-tab-id": id }, titles.get(id) || id, " ", idCode(id),
              layout.selectionFallback?.[id] ? h("span", { class: "hint" }, ` → selects ${titles.get(layout.selectionFallback[id]) || layout.selectionFallback[id]}`) : null)))),
        fallback.length && fallback.some(([id]) => !layout.hidden.includes(id))
          ? h("p", { class: "hint" }, "Left out in this size class: ", fallback.filter(([id]) => !layout.hidden.includes(id)).map(([id, to]) => `${titles.get(id) || id} → ${titles.get(to) || to}`).join(", "))
          : null)));
}

function titleOf(layout, id) {
  const all = [...layout.sidebar.flatMap((item) => item.kind === "section" ? item.tabs : [item]), ...layout.tabBar, ...layout.pinned];
  return all.find((tab) => tab.id === id)?.title || "";
}
