// Apps: a paged list, create (the signing secret shown once), rotate the secret, delete with a typed confirmation.
import { attempt, call, clearProblem, segment } from "./api.js";
import { fill, h, status, when, idCode } from "./dom.js";

const PAGE = 20;

export async function appsScreen(container, _args, { go }) {
  const cursors = [null];  // the cursor of each page seen so far: back goes to the previous one
  const table = h("div", { class: "table-wrap" });
  const pager = h("div", { class: "row" });
  const secretPanel = h("div", { id: "secret-panel" });
  const confirmPanel = h("div", { id: "confirm-panel" });

  let loads = 0;  // only the latest page asked for is drawn
  /** What a row's buttons say to screen readers: the action and the app, by id and name. */
  const named = (app) => `${app.id} (${app.name})`;

  async function load() {
    const mine = ++loads;
    const cursor = cursors[cursors.length - 1];
    const page = await attempt(() => call(`/v1/apps?limit=${PAGE}` + (cursor ? `&cursor=${encodeURIComponent(cursor)}` : "")));
    if (!page || mine !== loads) return;
    const { apps, nextCursor } = page.body;
    fill(table, apps.length === 0 ? status(cursors.length > 1 ? "No more apps." : "No apps yet. Create one below.") : h("table", { id: "apps-table" },
      h("caption", {}, `Apps, page ${cursors.length}`),
      h("thead", {}, h("tr", {}, ["Id", "Name", "Created", "Schema", "Actions"].map((title) => h("th", { scope: "col" }, title)))),
      h("tbody", {}, apps.map((app) => h("tr", { "data-app-id": app.id },
        h("th", { scope: "row" }, idCode(app.id)),
        h("td", {}, app.name),
        h("td", {}, when(app.createdAt)),
        h("td", {}, app.schemaVersion ? `v${app.schemaVersion}` : "none",
          app.schemaVersion > app.minimumSchemaVersion ? h("span", { class: "hint" }, ` (serves v${app.minimumSchemaVersion}–v${app.schemaVersion})`) : null),
        app.id === "." || app.id === ".."
          ? h("td", { class: "actions hint", "data-dot-id": "true" }, `An app with id "${app.id}" cannot be managed from the console: browsers fold "." and ".." path segments, even percent-encoded. Use the API from a client that keeps them.`)
          : h("td", { class: "actions" },
          h("button", { type: "button", class: "quiet", "aria-label": `Schemas of ${named(app)}`, onclick: () => go("schemas", app.id) }, "Schemas"),
          h("button", { type: "button", class: "quiet", "aria-label": `Stats of ${named(app)}`, onclick: () => go("stats", app.id) }, "Stats"),
          h("button", { type: "button", class: "quiet", "aria-label": `Users of ${named(app)}`, onclick: () => go("users", app.id) }, "Users"),
          h("button", { type: "button", class: "quiet", "aria-label": `Audit log of ${named(app)}`, onclick: () => go("audit", app.id) }, "Audit"),
          h("button", { type: "button", class: "quiet", "data-action": "rotate", "aria-label": `Rotate the signing secret of ${named(app)}`,
                        onclick: () => askRotate(app) }, "Rotate secret"),
          h("button", { type: "button", class: "danger", "data-action": "delete", "aria-label": `Delete ${named(app)}`,
                        onclick: () => askDelete(app) }, "Delete")))))));
    fill(pager,
      h("button", { type: "button", class: "quiet", disabled: cursors.length === 1, onclick: () => { cursors.pop(); load(); } }, "Previous page"),
      h("button", { type: "button", class: "quiet", disabled: !nextCursor, onclick: () => { cursors.push(nextCursor); load(); } }, "Next page"));
  }

  /** The secret, once: with a copy button and the warning that it cannot be shown again. */
  function showSecret(appId, secret, verb) {
    const value = h("input", { id: "secret-value", readonly: true, value: secret, spellcheck: "false", "aria-label": "Signing secret" });
    const copied = h("span", { role: "status", class: "status" });
    fill(secretPanel, h("section", { class: "card warning", "aria-labelledby": "secret-title" },
      h("h3", { id: "secret-title", tabindex: "-1" }, `Signing secret of ${appId} (${verb})`),
      h("p", {}, h("strong", {}, "Copy it now: it is shown only this once. "),
        "It signs the app's user tokens (HS256). Keep it with the app's token service; anyone holding it can act as any of the app's users."),
      h("div", { class: "row" }, value,
        h("button", { type: "button", onclick: async () => {
          value.select();
          try { await navigator.clipboard.writeText(secret); copied.textContent = "Copied."; }
          catch { copied.textContent = "Select the text and copy it (the browser refused the clipboard)."; }
        } }, "Copy"), copied),
      h("button", { type: "button", class: "quiet", onclick: () => secretPanel.replaceChildren() }, "I have stored it: hide")));
    secretPanel.querySelector("h3").focus();
  }

  function askRotate(app) {
    fill(confirmPanel, h("section", { class: "card", "aria-labelledby": "confirm-title", "data-dialog": "rotate" },
      h("h3", { id: "confirm-title", tabindex: "-1" }, `Rotate the signing secret of ${app.id}?`),
      h("p", {}, "Tokens signed with the current secret stop working at once."),
      h("div", { class: "row" },
        h("button", { type: "button", id: "confirm-rotate", onclick: async () => {
          const answer = await attempt(() => call(`/v1/apps/${segment(app.id)}/signing-secret`, { method: "POST" }));
          confirmPanel.replaceChildren();
          if (answer) showSecret(app.id, answer.body.signingSecret, "rotated");
        } }, "Rotate"),
        h("button", { type: "button", class: "quiet", "data-cancel": true, onclick: () => confirmPanel.replaceChildren() }, "Cancel"))));
    confirmPanel.querySelector("h3").focus();
  }

  function askDelete(app) {
    const typed = h("input", { id: "confirm-id", autocomplete: "off", spellcheck: "false" });
    const remove = h("button", { type: "submit", class: "danger", disabled: true }, "Delete for good");
    typed.addEventListener("input", () => { remove.disabled = typed.value !== app.id; });
    fill(confirmPanel, h("form", { class: "card danger-zone", "aria-labelledby": "confirm-title", "data-dialog": "delete", onsubmit: async (event) => {
      event.preventDefault();
      if (typed.value !== app.id) return;
      const answer = await attempt(() => call(`/v1/apps/${segment(app.id)}`, { method: "DELETE" }));
      if (!answer) return;
      fill(confirmPanel, status(`Deleted ${app.id}.`));
      load();
    } },
      h("h3", { id: "confirm-title", tabindex: "-1" }, `Delete ${app.id}?`),
      h("p", {}, "Its schema versions, every user's customization and their history go too. This cannot be undone."),
      h("label", { for: "confirm-id" }, "Type the app id to confirm: ", idCode(app.id)), typed,
      h("div", { class: "row" }, remove, h("button", { type: "button", class: "quiet", "data-cancel": true, onclick: () => confirmPanel.replaceChildren() }, "Cancel"))));
    typed.focus();
  }

  const createForm = h("form", { id: "create-app", class: "card stack", "aria-labelledby": "create-title", onsubmit: async (event) => {
    event.preventDefault();
    const form = event.currentTarget;
    const id = form.elements["new-app-id"].value.trim();
    const name = form.elements["new-app-name"].value.trim();
    const answer = await attempt(() => call("/v1/apps", { method: "POST", body: { id, name } }));
    if (!answer) return;
    clearProblem();
    form.reset();
    showSecret(answer.body.id, answer.body.signingSecret, "new app");
    cursors.splice(1);
    load();
  } },
    h("h3", { id: "create-title" }, "Create an app"),
    h("label", { for: "new-app-id" }, "Id ", h("span", { class: "hint" }, "(1–128 of A–Z a–z 0–9 . _ -)")),
    h("input", { id: "new-app-id", name: "new-app-id", required: true, pattern: "[A-Za-z0-9._\\-]{1,128}", autocomplete: "off", spellcheck: "false" }),
    h("label", { for: "new-app-name" }, "Name"),
    h("input", { id: "new-app-name", name: "new-app-name", required: true, autocomplete: "off" }),
    h("button", { type: "submit" }, "Create"));

  fill(container, h("h2", {}, "Apps"), secretPanel, confirmPanel, table, pager, createForm);
  await load();
}
