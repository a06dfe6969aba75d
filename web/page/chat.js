// Reckon's own page: one chat UI (chat-ui.js) over one createReckon() object, which
// is also window.reckon for scripts and tests.
import { createReckon } from "../reckon.js";
import { mountChat } from "./chat-ui.js";

const params = new URLSearchParams(location.search);
// A relay deployed with --token needs it; it is kept for this tab only.
const token = sessionStorage.getItem("reckon-token") || undefined;
const reckon = createReckon({ relay: params.get("relay") || undefined, token });
window.reckon = reckon;
if (params.get("theme") === "dark") document.documentElement.classList.add("theme-dark");
mountChat(document, reckon);
