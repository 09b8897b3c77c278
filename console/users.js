// Users of an app: the users with a stored customization in byte order of their ids (GET …/users), searched by
// prefix (bytes, as the API compares them), a page at a time (after/limit). A user with nothing stored is not
// listed by the API: looking one up says so instead of showing them as revision 0.
import { attempt, call, segment } from "./api.js";
import { fill, h, idCode, status, when } from "./dom.js";
import { appPicker } from "./picker.js";

const SIZES = [10, 20, 50, 100];
const view = { limit: 20 };

export async function usersScreen(container, args, { go }) {
  const [appId, prefixArg] = args;
  fill(container, h("h2", {}, "Users"), appPicker(appId, (id) => go("users", id)));
  if (!appId) { container.append(status("Pick an app.")); return; }
  if (appId === "." || appId === "..") {
    container.append(status(`The id "${appId}" cannot be managed from the console: browsers fold "." and ".." path segments.`));
    return;
  }
  const prefix = h("input", { id: "user-prefix", name: "user-prefix", value: prefixArg || "", autocomplete: "off", spellcheck: "false",
                              "aria-describedby": "user-prefix-hint" });
  const size = h("select", { id: "user-page-size" }, SIZES.map((n) => h("option", { value: n, selected: n === view.limit }, `${n} a page`)));
  const table = h("div", { class: "table-wrap", id: "users-list", "aria-live": "polite" });
  const pager = h("div", { class: "row" });
  const afters = [null];  // the `after` of each page seen so far: Previous goes back one

  let loads = 0;
  async function load() {
    const mine = ++loads;
    const after = afters[afters.length - 1];
    const query = `limit=${view.limit}` + (prefix.value ? `&prefix=${encodeURIComponent(prefix.value)}` : "") + (after ? `&after=${encodeURIComponent(after)}` : "");
    const page = await attempt(() => call(`/v1/apps/${segment(appId)}/users?${query}`));
    if (!page || mine !== loads) return;
    const { items, next } = page.body;
    fill(table, items.length === 0
      ? status(afters.length > 1 ? "No more users." : prefix.value
        ? `No user with a stored customization has an id starting with "${prefix.value}". A user with nothing stored is not listed: they read the schema's defaults.`
        : "No user has stored a customization yet. A user with nothing stored is not listed: they read the schema's defaults.")
      : h("table", { id: "users-table" },
        h("caption", {}, `Users${prefix.value ? ` starting with "${prefix.value}"` : ""}, page ${afters.length}`),
        h("thead", {}, h("tr", {}, ["User", "Revision", "Written by a client of", "Updated", "Actions"].map((t) => h("th", { scope: "col" }, t)))),
        h("tbody", {}, items.map((user) => h("tr", { "data-user-id": user.userId },
          h("th", { scope: "row" }, idCode(user.userId)),
          h("td", {}, `r${user.revision}`),
          h("td", {}, user.schemaVersion ? `v${user.schemaVersion}` : "—"),
          h("td", {}, when(user.updatedAt)),
          user.userId === "." || user.userId === ".."
            ? h("td", { class: "hint" }, "browsers fold this id: use the API")
            : h("td", { class: "actions" },
              h("button", { type: "button", class: "quiet", "aria-label": `Open user ${user.userId}`, onclick: () => go("user", appId, user.userId) }, "Open"),
              h("button", { type: "button", class: "quiet", "aria-label": `Follow user ${user.userId} live`, onclick: () => go("live", appId, user.userId) }, "Live")))))));
    fill(pager,
      h("button", { type: "button", class: "quiet", id: "users-previous", disabled: afters.length === 1, onclick: () => { afters.pop(); load(); } }, "Previous page"),
      h("button", { type: "button", class: "quiet", id: "users-next", disabled: !next, onclick: () => { afters.push(next); load(); } }, "Next page"));
  }

  size.addEventListener("change", () => { view.limit = +size.value; afters.splice(1); load(); });
  container.append(
    h("form", { class: "row picker", id: "users-search", onsubmit: (event) => { event.preventDefault(); afters.splice(1); load(); } },
      h("label", { for: "user-prefix" }, "Id starts with"), prefix,
      h("label", { for: "user-page-size" }, "Page size"), size,
      h("button", { type: "submit" }, "Search")),
    h("p", { class: "hint", id: "user-prefix-hint" }, "Compared byte for byte, as the API does: no wildcards, no case folding. Empty lists every user with a stored customization."),
    table, pager);
  await load();
}
