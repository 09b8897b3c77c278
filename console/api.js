// The public API, called with the operator token kept in this tab's sessionStorage. The token goes only into
// the Authorization header of same-origin requests: never into a URL, the page or the browser's console.
import { fill, h } from "./dom.js";

const KEY = "tabstore.console.token";

export const token = {
  get: () => sessionStorage.getItem(KEY),
  set: (value) => sessionStorage.setItem(KEY, value),
  clear: () => sessionStorage.removeItem(KEY),
};

/** An answer that is not 2xx or 304: the problem document (RFC 9457) the API sent, or one made from the status. */
export class Problem extends Error {
  constructor(status, document) {
    super(document.detail || document.title || `HTTP ${status}`);
    this.status = status;
    this.document = document;
  }
}

/** Encodes one path segment (ids may hold any character but controls). A user id "." or ".." cannot be named
 *  in a browser's URL at all (it folds dot segments, encoded or not). */
export const segment = (value) => encodeURIComponent(value);

/**
 * One call: `path` under this origin, `options` {method, body (a value sent as JSON, or a string sent as is),
 * headers}. Answers {status, body (parsed JSON or null), headers}.
 * @throws Problem for an error status; TypeError when the server cannot be reached.
 */
export async function call(path, options = {}) {
  const headers = new Headers(options.headers || {});
  const bearer = token.get();
  if (bearer) headers.set("Authorization", `Bearer ${bearer}`);
  let body;
  if (options.body !== undefined) {
    headers.set("Content-Type", "application/json");
    body = typeof options.body === "string" ? options.body : JSON.stringify(options.body);
  }
  const response = await fetch(path, { method: options.method || "GET", headers, body, cache: "no-store", credentials: "omit",
                                       redirect: "error", referrerPolicy: "no-referrer" });
  const text = response.status === 204 || response.status === 304 ? "" : await response.text();
  let parsed = null;
  if (text) {
    try { parsed = JSON.parse(text); } catch { parsed = null; }
  }
  if (!response.ok && response.status !== 304) {
    throw new Problem(response.status, parsed && typeof parsed === "object" ? parsed
      : { title: response.statusText || "Error", status: response.status, detail: text.slice(0, 500) });
  }
  return { status: response.status, body: parsed, headers: response.headers };
}

const banner = () => document.getElementById("problem");

/** Shows what went wrong in the page's alert region: a problem's title, status, detail, type and each error. */
export function showProblem(error) {
  const region = banner();
  if (error instanceof Problem && error.status === 403) document.dispatchEvent(new Event("console:forbidden"));
  if (error instanceof Problem) {
    const doc = error.document;
    fill(region,
      h("p", { class: "problem-title" }, h("strong", {}, doc.title || "Error"), ` (${error.status})`),
      h("p", { class: "problem-detail", "data-testid": "problem-detail" }, doc.detail || ""),
      doc.type ? h("p", { class: "problem-type" }, h("code", {}, doc.type)) : null,
      Array.isArray(doc.errors) && doc.errors.length
        ? h("ul", { class: "problem-errors" }, doc.errors.map((e) => h("li", {}, h("code", {}, e.pointer || "/"), " ", h("code", {}, e.code || ""), " ", e.detail || "")))
        : null,
      h("button", { type: "button", class: "quiet", onclick: clearProblem }, "Dismiss"));
  } else {
    fill(region, h("p", { class: "problem-title" }, h("strong", {}, "The server could not be reached")),
      h("p", { class: "problem-detail", "data-testid": "problem-detail" }, String(error && error.message || error)),
      h("button", { type: "button", class: "quiet", onclick: clearProblem }, "Dismiss"));
  }
  region.hidden = false;
  // Where the operator can see it, however far down the page the refused action was; focus follows, so a
  // keyboard user is where the message is (Dismiss is the next stop).
  region.scrollIntoView({ block: "nearest" });
  region.focus({ preventScroll: true });
}

export function clearProblem() {
  const region = banner();
  region.hidden = true;
  region.replaceChildren();
}

/** Runs `action`, showing a thrown problem; answers its result, or undefined when it failed. */
export async function attempt(action) {
  try {
    const result = await action();
    return result;
  } catch (error) {
    showProblem(error);
    if (error instanceof Problem && error.status === 401) document.dispatchEvent(new Event("console:unauthorized"));
    return undefined;
  }
}
