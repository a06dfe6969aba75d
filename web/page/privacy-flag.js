// When a file added in the chat looks like it holds personal data (inspect()'s
// `personal`: the columns and what each seems to hold, PROTOCOL.md §2), the page says
// so before anything is asked, and switches to schema privacy in one click (the model
// then sees column names, shapes and aggregates; values from the files are [hidden]).
// Column names from the file go in as text, like everything else from a file.

import { el } from "./render.js";

/** @typedef {import("./chat-files.js").FileInfo} FileInfo */

/** @type {Record<string, string>} */
const KINDS = {
  name: "names",
  email: "e-mail addresses",
  phone: "phone numbers",
  national_id: "national id numbers",
  card: "card numbers",
  address: "street addresses",
  birth_date: "dates of birth",
};
const SHOWN = 6; // columns named in the notice; the rest are counted

/**
 * @param {{configure: (settings: object) => Promise<any>, agent?: {settings?: {privacy?: string}}}} reckon
 * @param {{before: HTMLElement, settings?: HTMLElement | null}} where the notice goes in
 *   front of `before`; the privacy select in `settings` follows a switch made here
 * @returns {(info: FileInfo) => HTMLElement | null} shows the notice for one upload's summary
 */
export function personalDataFlag(reckon, { before, settings }) {
  return (info) => {
    const columns = info && Array.isArray(info.personal) ? info.personal : [];
    if (!columns.length) return null;
    // The same file added again: one notice for it.
    const around = before.parentElement;
    if (around) for (const old of around.querySelectorAll(".privacy-flag")) if (old.getAttribute("data-path") === String(info.path)) old.remove();
    const box = el("div", "privacy-flag");
    box.setAttribute("role", "status");
    box.dataset.path = String(info.path);
    const name = String(info.name || String(info.path).split("/").pop());
    const listed = columns.slice(0, SHOWN).map((c) => `${c.column} (${KINDS[c.kind] || c.kind})`);
    const more = columns.length - SHOWN;
    const tail = more > 0 ? ` and ${more} more column${more === 1 ? "" : "s"}` : "";
    const lead = el("p", "privacy-flag-text");
    lead.append(el("strong", "", `${name} looks like it holds personal data: `), `${listed.join(", ")}${tail}.`);
    const state = el("p", "privacy-flag-state muted small");
    const actions = el("div", "actions");
    const close = el("button", "link privacy-flag-close", "×");
    close.type = "button";
    close.setAttribute("aria-label", "Dismiss");
    close.addEventListener("click", () => box.remove());
    const schemaOn = () => {
      state.textContent = "Schema privacy is on: the model sees column names, shapes and aggregates; values from your files are replaced by [hidden].";
      actions.replaceChildren();
      box.classList.add("on");
    };
    const current = reckon.agent && reckon.agent.settings ? reckon.agent.settings.privacy : undefined;
    if (current === "schema") schemaOn();
    else {
      state.textContent = "Right now the model is sent what cells print, rows of this file included.";
      const use = el("button", "primary", "Send schemas only");
      use.type = "button";
      use.title = "Schema privacy: the model sees column names, shapes and aggregates, never the values";
      use.addEventListener("click", async () => {
        use.disabled = true;
        const reply = await reckon.configure({ privacy: "schema" });
        if (reply && reply.status === "ok") {
          schemaOn();
          const select = settings && settings.querySelector('select[name="privacy"]');
          if (select instanceof HTMLSelectElement) select.value = "schema";
        } else {
          use.disabled = false;
          state.textContent = `Schema privacy could not be turned on: ${reply ? reply.message : "no reply"}`;
        }
      });
      const keep = el("button", "", "Keep sending outputs");
      keep.type = "button";
      keep.addEventListener("click", () => box.remove());
      actions.append(use, keep);
    }
    box.append(close, lead, state, actions);
    before.before(box);
    box.scrollIntoView({ block: "nearest" }); // on a phone the welcome fills the screen
    return box;
  };
}
