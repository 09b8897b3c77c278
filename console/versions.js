// Schema versions in use (GET stats: per supported version, how many customizations a client of it wrote last;
// those written under retired versions), and the minimum schema version: a dry run of a new minimum first
// (PATCH /v1/apps/{id}?dryRun=true: what the users' next writes would drop), then the same value for real.
import { call, clearProblem, Problem, segment, showProblem } from "./api.js";
import { fill, h, idCode, status } from "./dom.js";

const PAGE = 50;

/**
 * The section for one app, drawn from its stats answer. `go` opens a user of the app. After the minimum
 * changed, the section reads the stats again and redraws itself.
 */
export function versionsSection(appId, stats, go) {
  const section = h("section", { id: "versions-in-use", "aria-labelledby": "versions-in-use-title" });
  draw(section, appId, stats, go, null);
  return section;
}

function draw(section, appId, stats, go, notice) {
  const current = stats.schemaVersion;
  if (!current) {
    fill(section, h("h3", { id: "versions-in-use-title" }, "Schema versions in use"), status("No schema yet: nothing is served."));
    return;
  }
  const minimum = stats.minimumSchemaVersion;
  const total = stats.versions.reduce((sum, v) => sum + v.lastWrittenBy, 0) + stats.retiredWriters;
  const share = (count) => [h("meter", { min: 0, max: Math.max(total, 1), value: count, "aria-hidden": "true" }),
    " ", total ? `${Math.round(100 * count / total)}%` : "—"];
  const first = stats.versions.length ? stats.versions[0].schemaVersion : current;
  const rows = [...stats.versions].reverse().map((v) => h("tr", { "data-version": v.schemaVersion },
    h("th", { scope: "row" }, `v${v.schemaVersion}`,
      v.schemaVersion === current ? [" ", h("span", { class: "badge" }, "current")] : null,
      v.schemaVersion === minimum ? [" ", h("span", { class: "badge" }, "minimum")] : null),
    h("td", { class: "count" }, v.lastWrittenBy), h("td", {}, share(v.lastWrittenBy))));
  if (first > 1 || stats.retiredWriters > 0) {
    rows.push(h("tr", { "data-version": "retired" },
      h("th", { scope: "row" }, `Retired (below v${first})`, h("span", { class: "hint block" }, "their clients get 410 and ask the person to update")),
      h("td", { class: "count", id: "retired-writers" }, stats.retiredWriters), h("td", {}, share(stats.retiredWriters))));
  }

  const input = h("input", { id: "minimum-value", name: "minimum-value", type: "number", inputmode: "numeric", step: 1, min: 1, max: current,
                             value: Math.min(minimum + 1, current), required: true, "aria-describedby": "minimum-hint" });
  const report = h("div", { id: "minimum-report", "aria-live": "polite" });
  const inline = h("div", { id: "minimum-problem" });
  // The confirm applies to the value checked by the dry run only: editing it takes the report away.
  input.addEventListener("input", () => { report.replaceChildren(); inline.replaceChildren(); });

  function refused(error) {
    showProblem(error);
    fill(inline, error instanceof Problem
      ? h("p", { class: "note", "data-testid": "minimum-problem" }, h("strong", {}, `${error.document.title || "Refused"} (${error.status}): `),
        error.document.detail || "", error.document.type ? [" ", h("code", {}, error.document.type)] : null)
      : null);
  }

  /** The value typed, as the integer the API takes; a local message for anything that is not a number. */
  function wanted() {
    const value = Number(input.value);
    if (input.value.trim() === "" || !Number.isFinite(value)) {
      fill(inline, h("p", { class: "note", "data-testid": "minimum-problem" }, "Enter a schema version number."));
      return null;
    }
    return value;
  }

  async function dryRun(value, after, list) {
    let answer;
    try {
      answer = (await call(`/v1/apps/${segment(appId)}?dryRun=true&limit=${PAGE}` + (after ? `&after=${encodeURIComponent(after)}` : ""),
                           { method: "PATCH", body: { minimumSchemaVersion: value } })).body;
    } catch (error) { if (!list) report.replaceChildren(); refused(error); return; }
    clearProblem();
    inline.replaceChildren();
    const users = answer.affectedUsers.map((user) => h("tr", { "data-user-id": user.userId },
      h("th", { scope: "row" }, h("button", { type: "button", class: "link", onclick: () => go("user", appId, user.userId),
                                             "aria-label": `Open user ${user.userId}` }, idCode(user.userId))),
      h("td", {}, user.droppedIds.map((id, index) => [index ? ", " : "", idCode(id)]))));
    if (list) {  // a further page of the same dry run
      list.tbody.append(...users);
      fill(list.more, nextPage(answer, list));
      return;
    }
    const retiring = stats.versions.filter((v) => v.schemaVersion < answer.minimumSchemaVersion);
    const retiringWriters = retiring.reduce((sum, v) => sum + v.lastWrittenBy, 0);
    const tbody = h("tbody", {}, users);
    const more = h("div", { class: "row" });
    const page = { tbody, more, value };
    fill(more, nextPage(answer, page));
    const verb = answer.minimumSchemaVersion > minimum ? "Raise" : answer.minimumSchemaVersion < minimum ? "Lower" : null;
    fill(report, h("div", { class: "card", "data-testid": "minimum-report" },
      h("h5", { tabindex: "-1" }, `Dry run: minimum v${answer.minimumSchemaVersion} (current v${answer.currentSchemaVersion}); nothing stored`),
      h("p", {}, retiring.length
        ? [`Retires ${retiring.map((v) => `v${v.schemaVersion}`).join(", ")}: from then on ${retiring.length === 1 ? "its" : "their"} clients get 410. `,
          h("strong", { id: "minimum-retiring" }, retiringWriters), ` stored customization${retiringWriters === 1 ? " was" : "s were"} last written by them.`]
        : verb === "Lower" ? `Serves v${answer.minimumSchemaVersion} to v${minimum - 1} again.` : "Retires no version."),
      h("dl", { class: "counts" },
        h("dt", {}, "Customizations checked"), h("dd", { id: "minimum-checked" }, answer.customizationsChecked),
        h("dt", {}, "Customizations affected"), h("dd", { id: "minimum-affected" }, answer.customizationsAffected),
        h("dt", {}, "Unreadable (skipped)"), h("dd", { id: "minimum-unreadable" }, answer.customizationsUnreadable)),
      h("p", { class: "hint" }, "Nothing is dropped at once: each affected user's next write drops the choices about tabs no version from the new minimum on has."),
      h("h5", {}, `Ids users' choices would lose (${answer.droppedIds.length})`),
      answer.droppedIds.length ? h("ul", { class: "id-list", id: "minimum-dropped" }, answer.droppedIds.map((id) => h("li", {}, idCode(id))))
        : h("p", { class: "hint" }, "none"),
      answer.affectedUsers.length ? h("div", { class: "table-wrap" }, h("table", { id: "minimum-users" },
        h("caption", {}, "Affected users and what their next write drops"),
        h("thead", {}, h("tr", {}, h("th", { scope: "col" }, "User"), h("th", { scope: "col" }, "Ids dropped"))), tbody)) : null,
      more,
      h("div", { class: "row" },
        verb ? h("button", { type: "button", id: "confirm-minimum", class: verb === "Raise" ? "danger" : null,
                             onclick: () => apply(answer.minimumSchemaVersion) }, `${verb} the minimum to v${answer.minimumSchemaVersion}`)
          : h("span", { class: "hint" }, `v${minimum} is the minimum already: nothing to change.`),
        h("button", { type: "button", class: "quiet", onclick: () => report.replaceChildren() }, "Cancel"))));
    report.querySelector("h5").focus();
  }

  function nextPage(answer, page) {
    return answer.affectedUsersNext ? h("button", { type: "button", class: "quiet", id: "minimum-more-users",
      onclick: () => dryRun(page.value, answer.affectedUsersNext, page) }, "More affected users") : null;
  }

  async function apply(value) {
    let app;
    try {
      app = (await call(`/v1/apps/${segment(appId)}`, { method: "PATCH", body: { minimumSchemaVersion: value } })).body;
    } catch (error) { report.replaceChildren(); refused(error); return; }
    clearProblem();
    const done = app.minimumSchemaVersion > minimum ? `Minimum raised to v${app.minimumSchemaVersion}.`
      : app.minimumSchemaVersion < minimum ? `Minimum lowered to v${app.minimumSchemaVersion}.` : `v${app.minimumSchemaVersion} is the minimum.`;
    try {
      draw(section, appId, (await call(`/v1/apps/${segment(appId)}/stats`)).body, go, done);
    } catch (error) {
      showProblem(error);
      fill(section, h("h3", { id: "versions-in-use-title" }, "Schema versions in use"), status(`${done} Reload to see the counts.`));
    }
  }

  fill(section,
    h("h3", { id: "versions-in-use-title" }, "Schema versions in use"),
    notice ? h("p", { class: "status", role: "status", id: "minimum-notice" }, notice) : null,
    h("div", { class: "table-wrap" }, h("table", { id: "versions-table" },
      h("caption", {}, "Stored customizations by the schema version of the client that wrote them last"),
      h("thead", {}, h("tr", {}, h("th", { scope: "col" }, "Version"), h("th", { scope: "col" }, "Last written by its clients"), h("th", { scope: "col" }, "Share"))),
      h("tbody", {}, rows))),
    h("form", { class: "card stack", id: "minimum-form", novalidate: true, "aria-labelledby": "minimum-title",
                onsubmit: (event) => { event.preventDefault(); const value = wanted(); if (value !== null) dryRun(value, null, null); } },
      h("h4", { id: "minimum-title" }, "Minimum schema version: ", h("span", { id: "minimum-current" }, `v${minimum}`)),
      h("p", { id: "minimum-hint", class: "hint" }, minimum < current
        ? `Clients of v${minimum} to v${current} are served. Raising the minimum retires the older versions: their clients get 410 (the app asks the person to update), and tabs only those versions have lose their choices at each user's next write.`
        : `Only clients of v${current} are served.`),
      h("label", { for: "minimum-value" }, "New minimum"), input,
      h("div", { class: "row" }, h("button", { type: "submit", id: "minimum-dry-run" }, "Dry run")),
      inline),
    report);
}
