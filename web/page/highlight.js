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
  let defining = false;
  return painted(String(code), TOKEN, ([, comment, string, number, decorator, name]) => {
    const named = defining; // the name after def or class
    defining = name === "def" || name === "class";
    if (comment) return "hl-com";
    if (string) return "hl-str";
    if (number) return "hl-num";
    if (decorator) return "hl-dec";
    if (!name) return "";
    if (named) return "hl-def";
    return KEYWORDS.has(name) ? "hl-kw" : BUILTINS.has(name) ? "hl-bi" : "";
  });
}

/**
 * `text` as text nodes, each match of `pattern` (global) that `classOf` names a class
 * for in a <span> of that class (textContent: never markup).
 * @param {string} text @param {RegExp} pattern @param {(match: RegExpExecArray) => string} classOf
 * @returns {DocumentFragment}
 */
function painted(text, pattern, classOf) {
  const frag = document.createDocumentFragment();
  let last = 0;
  for (const m of text.matchAll(pattern)) {
    if (m.index > last) frag.appendChild(document.createTextNode(text.slice(last, m.index)));
    last = m.index + m[0].length;
    const cls = classOf(m);
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

const SQL_KEYWORDS = new Set(
  ("select from where group by order limit as and or not in is null join left right inner outer on having " +
    "distinct count sum avg min max case when then else end desc asc with union all like between").split(" "),
);

const SQL_TOKEN = /(--[^\n]*)|('(?:''|[^'])*'?)|(\b\d+(?:\.\d+)?\b)|([A-Za-z_]\w*)/g;

/** SQL: keywords, strings, numbers, comments (the run_sql tool's queries).
 * @param {string} code @returns {DocumentFragment} */
export function highlightSql(code) {
  return painted(String(code), SQL_TOKEN, (m) => (m[1] ? "hl-com" : m[2] ? "hl-str" : m[3] ? "hl-num" : SQL_KEYWORDS.has(m[4].toLowerCase()) ? "hl-kw" : ""));
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
