// Two stored schema versions compared item by item, by id: added, removed, moved (another parent, or another
// place among the items both versions keep there) and behaviour changed (placement, customization behaviour,
// default visibility, hiddenIn, standIn, dynamic tabs, expanded, role), plus label changes (title, image).

/** Every item of a stored schema in builder order: {id, kind, parent (section id or null), item}. */
export function flatten(schema) {
  const out = [];
  for (const item of schema.items || []) {
    out.push({ id: item.id, kind: item.kind, parent: null, item });
    if (item.kind === "section") for (const tab of item.tabs || []) out.push({ id: tab.id, kind: tab.kind, parent: item.id, item: tab });
  }
  return out;
}

const BEHAVIOUR = ["placement", "customizationBehavior", "defaultVisibility", "hiddenIn", "standIn", "dynamicTabs", "expanded", "role", "kind"];
const LABEL = ["title", "systemImage", "image"];

/** JSON with object members in name order, so two equal values read the same whichever order they came in. */
function canonical(value) {
  if (Array.isArray(value)) return `[${value.map(canonical).join(",")}]`;
  if (value && typeof value === "object") return `{${Object.keys(value).sort().map((key) => `${JSON.stringify(key)}:${canonical(value[key])}`).join(",")}}`;
  return JSON.stringify(value);
}

const show = (value) => value === undefined || value === null ? "—" : typeof value === "object" ? canonical(value) : String(value);

/** "key: old → new" for each difference, into objects one level (customizationBehavior.tabBar: automatic → disabled). */
function describe(keys, before, after) {
  const out = [];
  for (const key of keys) {
    const a = before[key], b = after[key];
    if (show(a) === show(b)) continue;
    const plain = (v) => v && typeof v === "object" && !Array.isArray(v);
    if (plain(a) && plain(b)) {
      for (const sub of new Set([...Object.keys(a), ...Object.keys(b)])) {
        if (show(a[sub]) !== show(b[sub])) out.push(`${key}.${sub}: ${show(a[sub])} → ${show(b[sub])}`);
      }
    } else out.push(`${key}: ${Array.isArray(a) ? a.join(", ") : show(a)} → ${Array.isArray(b) ? b.join(", ") : show(b)}`);
  }
  return out;
}

/** The ids of `a` that keep their relative order in `b` (a longest common subsequence); the others moved. */
function keptInOrder(a, b) {
  const n = a.length, m = b.length;
  const table = Array.from({ length: n + 1 }, () => new Uint16Array(m + 1));
  for (let i = n - 1; i >= 0; i--) for (let j = m - 1; j >= 0; j--) {
    table[i][j] = a[i] === b[j] ? table[i + 1][j + 1] + 1 : Math.max(table[i + 1][j], table[i][j + 1]);
  }
  const kept = new Set();
  for (let i = 0, j = 0; i < n && j < m;) {
    if (a[i] === b[j]) { kept.add(a[i]); i++; j++; } else if (table[i + 1][j] >= table[i][j + 1]) i++; else j++;
  }
  return kept;
}

/**
 * Compares `before` with `after` (stored schemas). Answers {changes: [{id, kind: added|removed|moved|behaviour|label,
 * detail}], marks: {before: Map(id → kinds), after: Map(id → kinds)}}, changes in `after`'s builder order, removals last.
 */
export function diffSchemas(before, after) {
  const old = flatten(before), now = flatten(after);
  const oldById = new Map(old.map((entry) => [entry.id, entry]));
  const nowById = new Map(now.map((entry) => [entry.id, entry]));
  const changes = [];
  const marks = { before: new Map(), after: new Map() };
  const mark = (side, id, kind) => { if (!marks[side].has(id)) marks[side].set(id, []); marks[side].get(id).push(kind); };

  // Order within each parent, among the ids both versions keep under that parent.
  const moved = new Set();
  const parents = new Set([...old, ...now].map((entry) => entry.parent));
  for (const parent of parents) {
    const a = old.filter((e) => e.parent === parent && nowById.get(e.id)?.parent === parent).map((e) => e.id);
    const b = now.filter((e) => e.parent === parent && oldById.get(e.id)?.parent === parent).map((e) => e.id);
    const kept = keptInOrder(a, b);
    for (const id of b) if (!kept.has(id)) moved.add(id);
  }

  for (const entry of now) {
    const previous = oldById.get(entry.id);
    if (!previous) {
      changes.push({ id: entry.id, kind: "added", detail: entry.parent ? `added to section ${entry.parent}` : "added at the top level" });
      mark("after", entry.id, "added");
      continue;
    }
    if (previous.parent !== entry.parent) {
      changes.push({ id: entry.id, kind: "moved", detail: `moved from ${previous.parent ? `section ${previous.parent}` : "the top level"} to ${entry.parent ? `section ${entry.parent}` : "the top level"}` });
      mark("before", entry.id, "moved"); mark("after", entry.id, "moved");
    } else if (moved.has(entry.id)) {
      const index = (list) => list.filter((e) => e.parent === entry.parent).findIndex((e) => e.id === entry.id) + 1;
      changes.push({ id: entry.id, kind: "moved", detail: `moved from place ${index(old)} to place ${index(now)} ${entry.parent ? `in section ${entry.parent}` : "at the top level"}` });
      mark("before", entry.id, "moved"); mark("after", entry.id, "moved");
    }
    const behaviour = describe(BEHAVIOUR, previous.item, entry.item);
    if (behaviour.length) {
      changes.push({ id: entry.id, kind: "behaviour", detail: behaviour.join("; ") });
      mark("before", entry.id, "behaviour"); mark("after", entry.id, "behaviour");
    }
    const label = describe(LABEL, previous.item, entry.item);
    if (label.length) {
      changes.push({ id: entry.id, kind: "label", detail: label.join("; ") });
      mark("before", entry.id, "label"); mark("after", entry.id, "label");
    }
  }
  for (const entry of old) {
    if (nowById.has(entry.id)) continue;
    changes.push({ id: entry.id, kind: "removed", detail: entry.parent ? `removed from section ${entry.parent}` : "removed from the top level" });
    mark("before", entry.id, "removed");
  }
  const platforms = (schema) => (schema.customizablePlatforms || []).join(", ") || "none";
  if (platforms(before) !== platforms(after)) {
    changes.push({ id: "customizablePlatforms", kind: "behaviour", detail: `${platforms(before)} → ${platforms(after)}` });
  }
  return { changes, marks };
}

/**
 * A schema as pasted (SchemaInput) with the defaults a stored version writes out, so it compares with a stored
 * version: kind, placement (pinned for the search tab), customization behaviour and default visibility
 * (automatic), a section's `expanded` (true), the search tab's title and image. Tabs without an id are left
 * out (the server derives theirs); answers {schema, withoutId}.
 */
export function withDefaults(input) {
  let withoutId = 0;
  const pair = (value, fallback) => ({ sidebar: value?.sidebar ?? fallback, tabBar: value?.tabBar ?? fallback });
  const common = (item) => ({
    hiddenIn: Array.isArray(item.hiddenIn) && item.hiddenIn.length ? [...new Set(item.hiddenIn)] : undefined,
    standIn: item.standIn ?? undefined,
    defaultVisibility: pair(item.defaultVisibility, "automatic"),
  });
  const dynamic = (d) => d ? { idPrefix: d.idPrefix, customizationBehavior: pair(d.customizationBehavior, "automatic") } : undefined;
  const tab = (item) => {
    if (item.id === undefined || item.id === null) { withoutId++; return null; }
    const search = item.role === "search";
    return { kind: "tab", id: item.id, title: item.title ?? (search ? "Search" : undefined),
             systemImage: item.systemImage ?? (search && !item.image ? "magnifyingglass" : undefined), image: item.image ?? undefined,
             role: item.role ?? undefined, placement: item.placement ?? (search ? "pinned" : "automatic"),
             customizationBehavior: pair(item.customizationBehavior, "automatic"), ...common(item) };
  };
  const items = (input.items || []).map((item) => {
    if (item.kind === "section") {
      return { kind: "section", id: item.id, title: item.title, customizationBehavior: pair(item.customizationBehavior, "automatic"),
               ...common(item), expanded: item.expanded ?? true, dynamicTabs: dynamic(item.dynamicTabs), tabs: (item.tabs || []).map(tab).filter(Boolean) };
    }
    if (item.kind === "forEach") return { kind: "forEach", id: item.id, ...common(item), dynamicTabs: dynamic(item.dynamicTabs) };
    return tab(item);
  }).filter(Boolean);
  return { schema: { items, customizablePlatforms: [...new Set(input.customizablePlatforms || [])] }, withoutId };
}
