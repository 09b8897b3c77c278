// Where things are in pasted JSON: a small parser that notes the line of every value by its JSON pointer
// (RFC 6901), so a problem's `errors[].pointer` points at a line, and a syntax error says line and column.

export class JSONSyntaxError extends Error {
  constructor(message, line, column) {
    super(`line ${line}, column ${column}: ${message}`);
    this.line = line;
    this.column = column;
  }
}

/** Parses `text`; answers {value, lines: Map(pointer → line of the value, 1-based)}. Throws JSONSyntaxError. */
export function parseWithLines(text) {
  let at = 0;
  const lines = new Map();
  const lineStarts = [0];
  for (let i = 0; i < text.length; i++) if (text[i] === "\n") lineStarts.push(i + 1);
  const lineOf = (index) => {
    let low = 0, high = lineStarts.length - 1;
    while (low < high) {
      const mid = (low + high + 1) >> 1;
      if (lineStarts[mid] <= index) low = mid; else high = mid - 1;
    }
    return low + 1;
  };
  const fail = (message) => {
    const line = lineOf(at);
    throw new JSONSyntaxError(message, line, at - lineStarts[line - 1] + 1);
  };
  const space = () => { while (at < text.length && " \t\n\r".includes(text[at])) at++; };
  const expect = (char) => { if (text[at] !== char) fail(`expected ${char}`); at++; };
  const escape = (key) => key.replace(/~/g, "~0").replace(/\//g, "~1");

  function string() {
    expect('"');
    let out = "";
    while (true) {
      if (at >= text.length) fail("unterminated string");
      const char = text[at++];
      if (char === '"') return out;
      if (char === "\\") {
        const next = text[at++];
        const simple = { '"': '"', "\\": "\\", "/": "/", b: "\b", f: "\f", n: "\n", r: "\r", t: "\t" }[next];
        if (simple !== undefined) out += simple;
        else if (next === "u" && /^[0-9a-fA-F]{4}$/.test(text.slice(at, at + 4))) { out += String.fromCharCode(parseInt(text.slice(at, at + 4), 16)); at += 4; }
        else { at--; fail("invalid escape"); }
      } else if (char < " ") { at--; fail("control character in a string"); }
      else out += char;
    }
  }

  function value(pointer) {
    space();
    lines.set(pointer, lineOf(at));
    const char = text[at];
    if (char === "{") {
      at++;
      const object = {};
      space();
      if (text[at] === "}") { at++; return object; }
      while (true) {
        space();
        if (text[at] !== '"') fail("expected a member name in double quotes");
        const keyAt = at;
        const key = string();
        lines.set(`${pointer}/${escape(key)}`, lineOf(keyAt));
        space();
        expect(":");
        object[key] = value(`${pointer}/${escape(key)}`);
        space();
        if (text[at] === ",") { at++; continue; }
        if (text[at] === "}") { at++; return object; }
        fail("expected , or }");
      }
    }
    if (char === "[") {
      at++;
      const array = [];
      space();
      if (text[at] === "]") { at++; return array; }
      while (true) {
        array.push(value(`${pointer}/${array.length}`));
        space();
        if (text[at] === ",") { at++; continue; }
        if (text[at] === "]") { at++; return array; }
        fail("expected , or ]");
      }
    }
    if (char === '"') return string();
    const literal = /^(?:true|false|null|-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?)/.exec(text.slice(at, at + 400));
    if (!literal) fail(at >= text.length ? "unexpected end" : `unexpected ${JSON.stringify(char)}`);
    at += literal[0].length;
    return JSON.parse(literal[0]);
  }

  const result = value("");
  space();
  if (at < text.length) fail("text after the document");
  return { value: result, lines };
}

/** The line a pointer names, else that of its nearest named parent (a missing member: its object's line). */
export function lineOfPointer(lines, pointer) {
  let current = pointer || "";
  while (true) {
    if (lines.has(current)) return lines.get(current);
    if (current === "") return 1;
    current = current.slice(0, current.lastIndexOf("/"));
  }
}
