// A user, live: the change feed (GET …/customization/events) read with fetch and a stream reader (EventSource
// cannot send the Authorization header), each event shown as it comes, reconnecting with Last-Event-ID when the
// stream ends; export (a JSON download) and erase (typed confirmation).
import { attempt, call, clearProblem, Problem, segment, showProblem, token } from "./api.js";
import { fill, h, idCode, status, when } from "./dom.js";
import { appPicker } from "./picker.js";

/** Reads server-sent events from a fetch answer's body: calls `onEvent({event, id, data})` per event. */
async function readEvents(response, onEvent, signal) {
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  let event = { event: "message", id: null, data: [] };
  while (!signal.aborted) {
    const { value, done } = await reader.read();
    if (done) return;
    buffer += decoder.decode(value, { stream: true });
    let at;
    while ((at = buffer.search(/\r?\n/)) >= 0) {
      const line = buffer.slice(0, at);
      buffer = buffer.slice(at + (buffer[at] === "\r" ? 2 : 1));
      if (line === "") {
        if (event.data.length) onEvent({ event: event.event, id: event.id, data: event.data.join("\n") });
        event = { event: "message", id: event.id, data: [] };
        continue;
      }
      if (line.startsWith(":")) continue;  // a keep-alive comment
      const colon = line.indexOf(":");
      const field = colon < 0 ? line : line.slice(0, colon);
      const text = colon < 0 ? "" : line.slice(colon + 1).replace(/^ /, "");
      if (field === "event") event.event = text;
      else if (field === "id") event.id = text;
      else if (field === "data") event.data.push(text);
    }
  }
}

export async function liveScreen(container, args, { go, onLeave }) {
  const [appId, userId] = args;
  fill(container, h("h2", {}, "Live user"), appPicker(appId, (id) => go("live", id, userId || "")));
  if (!appId) { container.append(status("Pick an app, then a user.")); return; }
  const userInput = h("input", { id: "live-user-id", name: "live-user-id", value: userId || "", required: true, autocomplete: "off", spellcheck: "false" });
  container.append(h("form", { class: "row picker", onsubmit: (event) => { event.preventDefault(); go("live", appId, userInput.value); } },
    h("label", { for: "live-user-id" }, "User id"), userInput, h("button", { type: "submit" }, "Follow")));
  if (!userId) return;
  if ([appId, userId].some((id) => id === "." || id === "..")) {
    container.append(status("Browsers fold \".\" and \"..\" path segments: use the API from a client that keeps them."));
    return;
  }
  const path = `/v1/apps/${segment(appId)}/users/${segment(userId)}`;
  const state = h("p", { class: "live-state", id: "live-state", role: "status", "data-state": "connecting" }, "Connecting…");
  const current = h("dl", { class: "counts", id: "live-current" });
  const json = h("pre", { class: "json", id: "live-json" });
  const log = h("ol", { class: "live-log", id: "live-log", reversed: true });
  const actions = h("div", { id: "live-actions" });
  const confirmPanel = h("div", { id: "erase-panel" });

  function show(customization, eventId) {
    fill(current,
      h("dt", {}, "Revision"), h("dd", { id: "live-revision" }, customization.revision === 0 ? "0 (nothing stored: the schema's defaults)" : customization.revision),
      h("dt", {}, "Schema version"), h("dd", {}, `v${customization.schemaVersion}`),
      h("dt", {}, "Updated"), h("dd", {}, when(customization.updatedAt)),
      h("dt", {}, "Event id"), h("dd", {}, h("code", {}, eventId || "—")));
    json.textContent = JSON.stringify(customization, null, 2);
    const hidden = Object.entries(customization.tabs || {}).filter(([, e]) => e.sidebarVisibility === "hidden" || e.tabBarVisibility === "hidden").map(([id]) => id);
    log.prepend(h("li", { "data-revision": customization.revision },
      h("strong", {}, `r${customization.revision}`), ` received ${new Date().toLocaleTimeString()}`,
      h("span", { class: "hint" }, hidden.length ? ` · hidden: ${hidden.join(", ")}` : " · nothing hidden")));
    container.dataset.liveRevision = String(customization.revision);
  }

  // The feed, for as long as the screen is on the page: reconnecting after an end (or a dropped connection) with
  // the last event's id, so nothing already shown comes again.
  const controller = new AbortController();
  onLeave(() => controller.abort());
  let lastId = null;
  async function follow() {
    let wait = 500;
    while (!controller.signal.aborted) {
      try {
        const headers = new Headers({ Accept: "text/event-stream", Authorization: `Bearer ${token.get()}` });
        if (lastId) headers.set("Last-Event-ID", lastId);
        const response = await fetch(`${path}/customization/events`, { headers, signal: controller.signal, cache: "no-store",
                                                                          credentials: "omit", redirect: "error", referrerPolicy: "no-referrer" });
        if (!response.ok) {
          let document = { title: response.statusText, status: response.status };
          try { document = await response.json(); } catch { /* not JSON */ }
          showProblem(new Problem(response.status, document));
          if (response.status === 401) globalThis.document.dispatchEvent(new Event("console:unauthorized"));
          state.dataset.state = "stopped";
          state.textContent = `Not following: the feed answered ${response.status}.`;
          return;
        }
        state.dataset.state = "live";
        state.textContent = "Following the change feed: each committed revision shows here as it happens.";
        wait = 500;
        await readEvents(response, (event) => {
          if (event.event === "customization") {
            lastId = event.id;
            try { show(JSON.parse(event.data), event.id); } catch { /* a damaged event: the next one carries the whole state */ }
          } else if (event.event === "shutdown" || event.event === "token-expired") {
            state.textContent = `The server ended the stream (${event.event}); reconnecting…`;
          }
        }, controller.signal);
      } catch (error) {
        if (controller.signal.aborted) return;
      }
      if (controller.signal.aborted) return;
      state.dataset.state = "reconnecting";
      state.textContent = "The stream ended; reconnecting…";
      await new Promise((resolve) => setTimeout(resolve, wait));
      wait = Math.min(wait * 2, 10000);
    }
  }

  async function exportUser() {
    const answer = await attempt(() => call(`${path}/export`));
    if (!answer) return;
    const blob = new Blob([JSON.stringify(answer.body, null, 2)], { type: "application/json" });
    const url = URL.createObjectURL(blob);
    const link = h("a", { href: url, download: `${appId}-${userId}-export.json`.replace(/[^A-Za-z0-9._-]/g, "_") });
    document.body.append(link);
    link.click();
    link.remove();
    setTimeout(() => URL.revokeObjectURL(url), 10000);
    fill(actions.querySelector("[data-export-status]"), `Exported ${answer.body.history.length} kept revision${answer.body.history.length === 1 ? "" : "s"}.`);
  }

  function askErase() {
    const typed = h("input", { id: "erase-confirm-id", autocomplete: "off", spellcheck: "false" });
    const erase = h("button", { type: "submit", class: "danger", disabled: true, id: "confirm-erase" }, "Erase for good");
    typed.addEventListener("input", () => { erase.disabled = typed.value !== userId; });
    fill(confirmPanel, h("form", { class: "card danger-zone", "aria-labelledby": "erase-title", "data-dialog": "erase", onsubmit: async (event) => {
      event.preventDefault();
      if (typed.value !== userId) return;
      const answer = await attempt(() => call(path, { method: "DELETE" }));
      if (!answer) return;
      clearProblem();
      fill(confirmPanel, status(`Erased ${userId} in ${appId}: the customization, its history and idempotency records. The feed shows the empty customization.`));
    } },
      h("h3", { id: "erase-title", tabindex: "-1" }, `Erase ${userId} in ${appId}?`),
      h("p", {}, "The customization, every kept revision and the idempotency records go; only the revision counter stays. Their devices get the schema's defaults. This cannot be undone: export first if it may be asked for."),
      h("label", { for: "erase-confirm-id" }, "Type the user id to confirm: ", idCode(userId)), typed,
      h("div", { class: "row" }, erase, h("button", { type: "button", class: "quiet", "data-cancel": true, onclick: () => confirmPanel.replaceChildren() }, "Cancel"))));
    typed.focus();
  }

  fill(actions, h("div", { class: "row" },
    h("button", { type: "button", id: "export-user", onclick: exportUser }, "Export (JSON download)"),
    h("button", { type: "button", class: "danger", id: "erase-user", "aria-label": `Erase ${userId} in ${appId}`, onclick: askErase }, "Erase…"),
    h("a", { href: `#/user/${encodeURIComponent(appId)}/${encodeURIComponent(userId)}` }, "Layouts and history"),
    h("span", { class: "status", role: "status", "data-export-status": true })));
  container.append(
    h("section", { "aria-labelledby": "live-title" }, h("h3", { id: "live-title" }, "Now"), state, current,
      h("details", {}, h("summary", {}, "The customization as JSON"), json)),
    h("section", { "aria-labelledby": "live-log-title" }, h("h3", { id: "live-log-title" }, "Events received"), log),
    h("section", { "aria-labelledby": "live-actions-title" }, h("h3", { id: "live-actions-title" }, "Export and erase"), actions, confirmPanel));
  follow();
}
