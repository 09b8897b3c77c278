// Named operator tokens: create one (name, scope admin or read, an optional expiry; the token shown once, with
// copy), list them (never a token: the server keeps only digests) and revoke one after a confirmation.
import { attempt, call, clearProblem, segment } from "./api.js";
import { fill, h, status, when } from "./dom.js";

export async function tokensScreen(container) {
  const tokenPanel = h("div", { id: "token-panel" });
  const confirmPanel = h("div", { id: "token-confirm" });
  const table = h("div", { class: "table-wrap", id: "tokens-list" });

  async function load() {
    const answer = await attempt(() => call("/v1/operator-tokens"));
    if (!answer) return;
    const items = answer.body.items;
    fill(table, items.length === 0 ? status("No named tokens yet: only the configured one (bootstrap).") : h("table", { id: "tokens-table" },
      h("caption", {}, `Named operator tokens (${items.length}; the configured token, bootstrap, is not listed)`),
      h("thead", {}, h("tr", {}, ["Name", "Scope", "Created", "Expires", "Actions"].map((t) => h("th", { scope: "col" }, t)))),
      h("tbody", {}, items.map((item) => h("tr", { "data-token-name": item.name },
        h("th", { scope: "row" }, h("code", {}, item.name)),
        h("td", {}, item.scope === "read" ? "read (GET only)" : "admin"),
        h("td", {}, when(item.createdAt)),
        h("td", {}, item.expiresAt ? when(item.expiresAt) : "never"),
        h("td", { class: "actions" }, h("button", { type: "button", class: "danger", "data-action": "revoke", "aria-label": `Revoke the token ${item.name}`,
                                                    onclick: () => askRevoke(item.name) }, "Revoke")))))));
  }

  function showToken(created) {
    const value = h("input", { id: "token-value", class: "token-value", readonly: true, value: created.token, spellcheck: "false", "aria-label": "The new operator token" });
    const copied = h("span", { role: "status", class: "status" });
    fill(tokenPanel, h("section", { class: "card warning", "aria-labelledby": "token-title" },
      h("h3", { id: "token-title", tabindex: "-1" }, `Token ${created.name} (${created.scope})`),
      h("p", {}, h("strong", {}, "Copy it now: it is shown only this once. "),
        "The server keeps only its digest. Whoever holds it signs in to this console and calls the API as ", h("code", {}, created.name), "."),
      h("div", { class: "row" }, value,
        h("button", { type: "button", onclick: async () => {
          value.select();
          try { await navigator.clipboard.writeText(created.token); copied.textContent = "Copied."; }
          catch { copied.textContent = "Select the text and copy it (the browser refused the clipboard)."; }
        } }, "Copy"), copied),
      h("button", { type: "button", class: "quiet", onclick: () => tokenPanel.replaceChildren() }, "I have stored it: hide")));
    tokenPanel.querySelector("h3").focus();
  }

  function askRevoke(name) {
    fill(confirmPanel, h("section", { class: "card", "aria-labelledby": "revoke-title", "data-dialog": "revoke" },
      h("h3", { id: "revoke-title", tabindex: "-1" }, `Revoke the token ${name}?`),
      h("p", {}, "Every request with it is refused from then on, on every replica at once."),
      h("div", { class: "row" },
        h("button", { type: "button", class: "danger", id: "confirm-revoke", onclick: async () => {
          const answer = await attempt(() => call(`/v1/operator-tokens/${segment(name)}`, { method: "DELETE" }));
          if (!answer) return;
          fill(confirmPanel, status(`Revoked ${name}.`));
          load();
        } }, "Revoke"),
        h("button", { type: "button", class: "quiet", "data-cancel": true, onclick: () => confirmPanel.replaceChildren() }, "Cancel"))));
    confirmPanel.querySelector("h3").focus();
  }

  const form = h("form", { id: "create-token", class: "card stack", "aria-labelledby": "create-token-title", onsubmit: async (event) => {
    event.preventDefault();
    const elements = event.currentTarget.elements;
    const body = { name: elements["token-name"].value.trim(), scope: elements["token-scope"].value };
    const expiry = elements["token-expiry"].value;
    if (expiry) body.expiresAt = new Date(expiry).toISOString().replace(/\.\d{3}Z$/, "Z");
    const answer = await attempt(() => call("/v1/operator-tokens", { method: "POST", body }));
    if (!answer) return;
    clearProblem();
    event.target.reset();
    showToken(answer.body);
    load();
  } },
    h("h3", { id: "create-token-title" }, "Create a token"),
    h("label", { for: "token-name" }, "Name ", h("span", { class: "hint" }, "(1–64 of A–Z a–z 0–9 . _ -; the audit log names its requests by it)")),
    h("input", { id: "token-name", name: "token-name", required: true, pattern: "[A-Za-z0-9._\\-]{1,64}", autocomplete: "off", spellcheck: "false" }),
    h("label", { for: "token-scope" }, "Scope"),
    h("select", { id: "token-scope", name: "token-scope" }, h("option", { value: "read" }, "read: every GET, no write"), h("option", { value: "admin" }, "admin: everything")),
    h("label", { for: "token-expiry" }, "Expires ", h("span", { class: "hint" }, "(optional, your local time; empty: never)")),
    h("input", { id: "token-expiry", name: "token-expiry", type: "datetime-local" }),
    h("button", { type: "submit" }, "Create"));

  fill(container, h("h2", {}, "Operator tokens"), tokenPanel, confirmPanel, table, form);
  await load();
}
