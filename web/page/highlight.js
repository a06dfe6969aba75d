// A small Python highlighter: keywords, builtins, strings, comments, numbers,
// decorators and the names after def/class. It only wraps text in <span class="hl-*">
// (textContent, never markup), so a wrong guess can colour text but never change it.

const KEYWORDS = new Set(
  ("False None True and as assert async await break class continue def del elif else except finally for from " +
    "global if import in is lambda nonlocal not or pass raise return try while with yield match case").split(" "),
);
const BUILTINS = new Set(
  ("print len range enumerate zip map filter sorted sum min max abs round int float str bool list dict set tuple " +
    "type isinstance open super object Exception ValueError KeyError TypeError any all repr format next iter " +
    "getattr setattr hasattr self").split(" "),
);

// One alternation, tried at each position; the first group that matches names the kind.
const TOKEN = new RegExp(
  [
    /(#[^\n]*)/.source, // comment
    /((?:[rRbBuUfF]{1,2})?(?:"""[\s\S]*?(?:"""|$)|'''[\s\S]*?(?:'''|$)|"(?:\\.|[^"\\\n])*(?:"|$)|'(?:\\.|[^'\\\n])*(?:'|$)))/.source, // string
    /((?<![\w.])(?:0[xX][\da-fA-F_]+|0[bB][01_]+|0[oO][0-7_]+|(?:\d[\d_]*\.?[\d_]*|\.\d[\d_]*)(?:[eE][-+]?\d+)?[jJ]?))/.source, // number
    /(@[A-Za-z_][\w.]*)/.source, // decorator
    /([A-Za-z_]\w*)/.source, // a name: keyword, builtin, definition or plain
  ].join("|"),
  "gm",
);

/**
 * Python source as a fragment of text and <span class="hl-kw|hl-bi|hl-str|hl-com|hl-num|hl-dec|hl-def">.
 * @param {string} code
 * @returns {DocumentFragment}
 */
export function highlightPython(code) {
  const frag = document.createDocumentFragment();
  const text = String(code);
  let last = 0;
  let defining = false;
  /** @param {string} cls @param {string} value */
  const span = (cls, value) => {
    const node = document.createElement("span");
    node.className = cls;
    node.textContent = value;
    frag.appendChild(node);
  };
  for (const m of text.matchAll(TOKEN)) {
    if (m.index > last) frag.appendChild(document.createTextNode(text.slice(last, m.index)));
    last = m.index + m[0].length;
    const [token, comment, string, number, decorator, name] = m;
    if (comment) span("hl-com", token);
    else if (string) span("hl-str", token);
    else if (number) span("hl-num", token);
    else if (decorator) span("hl-dec", token);
    else if (name && defining) span("hl-def", token);
    else if (name && KEYWORDS.has(name)) span("hl-kw", token);
    else if (name && BUILTINS.has(name)) span("hl-bi", token);
    else frag.appendChild(document.createTextNode(token));
    defining = name === "def" || name === "class";
  }
  if (last < text.length) frag.appendChild(document.createTextNode(text.slice(last)));
  return frag;
}

const SQL_KEYWORDS = new Set(
  ("select from where group by order limit as and or not in is null join left right inner outer on having " +
    "distinct count sum avg min max case when then else end desc asc with union all like between").split(" "),
);

/** SQL: keywords, strings, numbers, comments (the run_sql tool's queries).
 * @param {string} code @returns {DocumentFragment} */
export function highlightSql(code) {
  const frag = document.createDocumentFragment();
  const text = String(code);
  let last = 0;
  for (const m of text.matchAll(/(--[^\n]*)|('(?:''|[^'])*'?)|(\b\d+(?:\.\d+)?\b)|([A-Za-z_]\w*)/g)) {
    if (m.index > last) frag.appendChild(document.createTextNode(text.slice(last, m.index)));
    last = m.index + m[0].length;
    const cls = m[1] ? "hl-com" : m[2] ? "hl-str" : m[3] ? "hl-num" : SQL_KEYWORDS.has(m[4].toLowerCase()) ? "hl-kw" : "";
    if (!cls) {
      frag.appendChild(document.createTextNode(m[0]));
      continue;
    }
    const node = document.createElement("span");
    node.className = cls;
    node.textContent = m[0];
    frag.appendChild(node);
  }
  if (last < text.length) frag.appendChild(document.createTextNode(text.slice(last)));
  return frag;
}

/** By a fence's language (or a step's tool): Python unless it says otherwise.
 * @param {string} code @param {string} [language] @returns {DocumentFragment} */
export function highlight(code, language = "python") {

  const lang = String(language || "python").toLowerCase();
  if (lang === "sql" || lang === "sqlite") return highlightSql(code);
  if (lang === "python" || lang === "py" || lang === "python3" || lang === "") return highlightPython(code);
  const frag = document.createDocumentFragment();
  frag.appendChild(document.createTextNode(String(code)));
  return frag;
}
