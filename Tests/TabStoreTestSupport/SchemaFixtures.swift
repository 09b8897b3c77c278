/// Schemas more than one layer's tests use: the rules' schema and the versions reconciliation goes through.
/// A schema that exercises every rule: disabled, reorderable, sidebarOnly, pinned, sections, dynamic tabs, and top-level
/// ForEach groups (`picks` as ForEach makes them, `tops` reorderable in both placements).
package let ruleSchema = """
    {"items": [
      {"id": "home", "title": "Home", "customizationBehavior": {"sidebar": "disabled", "tabBar": "disabled"}},
      {"id": "feed", "title": "Feed", "customizationBehavior": {"sidebar": "reorderable", "tabBar": "reorderable"}},
      {"id": "inbox", "title": "Inbox"},
      {"kind": "forEach", "id": "picks", "dynamicTabs": {"idPrefix": "pick."}},
      {"kind": "forEach", "id": "tops", "dynamicTabs": {"idPrefix": "top.", "customizationBehavior": {"sidebar": "reorderable", "tabBar": "reorderable"}}},
      {"id": "extra", "title": "Extra", "customizationBehavior": {"tabBar": "reorderable"}, "defaultVisibility": {"tabBar": "hidden"}},
      {"id": "settings", "title": "Settings", "placement": "sidebarOnly"},
      {"id": "search", "title": "Search", "role": "search"},
      {"kind": "section", "id": "places", "title": "Places", "tabs": [
        {"id": "places.a", "title": "A"}, {"id": "places.b", "title": "B", "customizationBehavior": {"sidebar": "disabled"}},
        {"id": "places.c", "title": "C"}]},
      {"kind": "section", "id": "locked", "title": "Locked", "customizationBehavior": {"sidebar": "disabled"}, "tabs": [
        {"id": "locked.a", "title": "LA"}, {"id": "locked.b", "title": "LB"}]},
      {"kind": "section", "id": "lists", "title": "Lists", "dynamicTabs": {"idPrefix": "list."}, "tabs": []},
      {"kind": "section", "id": "mixes", "title": "Mixes", "dynamicTabs": {"idPrefix": "mix.", "customizationBehavior": {"sidebar": "reorderable"}}, "tabs": []}
    ]}
    """

/// Two versions of one schema (`v2` drops `old` and `s.b`, adds `s.d` and a new top-level `fresh`), reconciled by
/// the domain's tests and served by the API's.
package enum SchemaFixtures {
    package static let v1 = """
        {"items": [
          {"id": "home", "title": "Home"}, {"id": "news", "title": "News"}, {"id": "old", "title": "Old"},
          {"kind": "section", "id": "s", "title": "S", "tabs": [{"id": "s.a", "title": "A"}, {"id": "s.b", "title": "B"}, {"id": "s.c", "title": "C"}]}
        ]}
        """
    /// v2 drops `old` and `s.b`, adds `s.d` and a new top-level `fresh`.
    package static let v2 = """
        {"items": [
          {"id": "home", "title": "Home"}, {"id": "news", "title": "News"}, {"id": "fresh", "title": "Fresh"},
          {"kind": "section", "id": "s", "title": "S", "tabs": [{"id": "s.a", "title": "A"}, {"id": "s.c", "title": "C"}, {"id": "s.d", "title": "D"}]}
        ]}
        """
}
