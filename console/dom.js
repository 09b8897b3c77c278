// Building DOM from data without HTML strings: every text goes in as a text node, so nothing an API answer
// holds (titles, ids, problem details) is ever parsed as markup.

/** An element: h("button", {type: "button", onclick: f}, "Save"). Attributes named on* become listeners;
 *  false or null leave the attribute out; children are nodes, strings, numbers or arrays of them. */
export function h(tag, attributes = {}, ...children) {
  const element = document.createElement(tag);
  setAttributes(element, attributes);
  append(element, children);
  return element;
}

const SVG = "http://www.w3.org/2000/svg";

/** An SVG element, as h. */
export function s(tag, attributes = {}, ...children) {
  const element = document.createElementNS(SVG, tag);
  setAttributes(element, attributes);
  append(element, children);
  return element;
}

function setAttributes(element, attributes) {
  for (const [name, value] of Object.entries(attributes)) {
    if (value === false || value === null || value === undefined) continue;
    if (name.startsWith("on") && typeof value === "function") element.addEventListener(name.slice(2), value);
    else if (name === "style") throw new Error("no style attributes: the Content-Security-Policy refuses them");
    else element.setAttribute(name, value === true ? "" : String(value));
  }
}

function append(element, children) {
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    element.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
}

/** Replaces everything inside `element`. */
export function fill(element, ...children) {
  element.replaceChildren();
  append(element, children);
  return element;
}

/** A labelled input: [label, input]. */
export function field(id, label, attributes = {}) {
  return [h("label", { for: id }, label), h("input", { id, name: id, ...attributes })];
}

/** A short date and time in the reader's zone, from an RFC 3339 string. */
export function when(text) {
  if (!text) return "—";
  const date = new Date(text);
  return Number.isNaN(date.getTime()) ? text : date.toLocaleString(undefined, { dateStyle: "medium", timeStyle: "short" });
}

/** A status line that screen readers announce. */
export function status(text) {
  return h("p", { class: "status", role: "status" }, text);
}

// Invisible and direction-control characters (bidi overrides and isolates, zero-width, BOM, soft hyphen,
// other format characters): shown escaped, so two different ids never look the same.
const INVISIBLE = /[\u00AD\u061C\u180E\u200B-\u200F\u202A-\u202E\u2060-\u206F\uFEFF\uFFF9-\uFFFB]/gu;

/** An id as a `<code>`, each invisible or direction-control character shown as `\uXXXX` in a distinct style. */
export function idCode(id) {
  const text = String(id);
  const parts = [];
  let last = 0;
  for (const match of text.matchAll(INVISIBLE)) {
    if (match.index > last) parts.push(text.slice(last, match.index));
    parts.push(h("span", { class: "escaped-char", title: "invisible or direction-control character" },
      `\\u${match[0].codePointAt(0).toString(16).toUpperCase().padStart(4, "0")}`));
    last = match.index + match[0].length;
  }
  if (last < text.length) parts.push(text.slice(last));
  return h("code", {}, parts);
}
