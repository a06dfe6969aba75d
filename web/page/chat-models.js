// The model picker in Settings: every model reckon.models() offers, with its state
// (offered, available, unreachable, built in) and which one is the default, and the header's
// "which model answers" chip. A model whose server failed an ask is marked so.

import { el } from "./render.js";
import { appendInline } from "./markdown.js";
import { DEMO_MODEL as DEMO } from "../agent/client.js";

// An ask that failed this way never reached the model (not a model's own error).
const UNREACHABLE = /could not reach|HTTP 50[234]|cannot be reached|connection|timed out/i;

/**
 * Fill `select` and `list` from `reckon.models()`; `wanted` preselects (an id, or a
 * profile name: its first model). Returns {chosen, failed(model, message), ok(model)}.
 * @param {ReturnType<import("../reckon.js").createReckon>} reckon
 * @param {{select: HTMLSelectElement, list: HTMLElement, note: HTMLElement, onChange: (model: string) => void,
 *   showNotice: (message: string) => void, wanted?: string}} parts
 */
export function modelPicker(reckon, { select, list, note, onChange, showNotice, wanted = "" }) {
  const states = new Map(); // model -> {state, detail}
  let offered = { models: [DEMO], default: DEMO };

  const paint = () => {
    list.replaceChildren();
    for (const name of offered.models) {
      const { state, detail } = states.get(name) || { state: "offered", detail: "" };
      const li = el("li", `model-state state-${state}`);
      li.dataset.model = name;
      li.appendChild(el("span", "dot"));
      li.appendChild(el("span", "model-name", name));
      const tags = [state === "builtin" ? "built in, no network" : state === "offered" ? "offered by the relay" : state];
      if (name === offered.default) tags.push("default");
      if (name === select.value) tags.push("answers now");
      li.appendChild(el("span", "muted small", tags.join(" · ")));
      if (detail) li.title = detail;
      list.appendChild(li);
    }
  };

  const ready = reckon.models().then((reply) => {
    offered = { models: reply.models || [DEMO], default: reply.default || DEMO };
    const info = (reckon.agent && reckon.agent.info) || {};
    // The relay lists a model without calling it, so a listed model is "offered" until
    // it answers (then "available") or fails to (then "unreachable", markFailed).
    for (const name of offered.models) {
      if (name === DEMO) states.set(name, { state: "builtin", detail: "Answers common data questions without any network." });
      else states.set(name, { state: "offered", detail: "Offered by the relay; not asked yet." });
    }
    const match = wanted ? offered.models.find((m) => m === wanted) || offered.models.find((m) => m.startsWith(`${wanted}/`)) : undefined;
    if (wanted && !match) showNotice(`The model “${wanted}” is not offered here; using ${offered.default}.`);
    const chosen = match || offered.default;
    select.replaceChildren();
    for (const name of offered.models) {
      const option = el("option", "", name === DEMO ? `${name} (built-in demo)` : name);
      option.value = name;
      option.selected = name === chosen;
      select.appendChild(option);
    }
    // Why only the demo: no relay at all (a static server), or a relay whose model server did not list any.
    const say = (/** @type {string} */ text) => {
      note.replaceChildren();
      appendInline(note, text);
    };
    if (info.relay === false) say("No relay here (a static server), so only the demo model. To use a real model, serve the site with `reckon serve --upstream URL --model NAME`.");
    else if (!reply.models || reply.models.length <= 1) say(info.demo === false ? "The relay's model server did not answer, so only the demo model is offered. Check `reckon serve --upstream …`." : "The relay has no model configured: start it with `reckon serve --upstream URL --model NAME` to add one.");
    else say("Models come from the relay (`GET /v1/models`). The choice applies from the next question.");
    onChange(select.value);
    paint();
    return reply;
  });
  select.addEventListener("change", () => {
    onChange(select.value);
    paint();
  });

  return {
    ready,
    /** An ask with `model` failed before the model answered: mark it unreachable.
     * @param {string | undefined} model @param {unknown} message */
    failed(model, message) {
      if (!model || model === DEMO || !UNREACHABLE.test(String(message || ""))) return;
      states.set(model, { state: "unreachable", detail: String(message) });
      paint();
    },
    /** An ask with `model` was answered: it is available. @param {string | undefined} model */
    ok(model) {
      if (!model || model === DEMO || !states.has(model)) return;
      states.set(model, { state: "available", detail: "Answered the last question." });
      paint();
    },
  };
}
