// The app picker the data screens share: a labelled app id input with the first page of apps as suggestions.
import { attempt, call } from "./api.js";
import { fill, h } from "./dom.js";

/** A labelled app id input with the first page of apps as suggestions, and a button that opens it. */
export function appPicker(current, onPick, label = "App") {
  const list = h("datalist", { id: "app-ids" });
  const input = h("input", { id: "app-id", name: "app-id", value: current || "", list: "app-ids", required: true,
                             autocomplete: "off", spellcheck: "false", placeholder: "com.example.app" });
  attempt(async () => {
    const { body } = await call("/v1/apps?limit=1000");
    fill(list, body.apps.map((app) => h("option", { value: app.id }, app.name)));
  });
  return h("form", { class: "row picker", onsubmit: (event) => { event.preventDefault(); onPick(input.value.trim()); } },
    h("label", { for: "app-id" }, label), input, list, h("button", { type: "submit" }, "Open"));
}
