// The example questions offered after an upload, built from the table's columns: only
// what a person would ask of them. A column is read by its name and dtype into a role:
// left out (ids, codes, coordinates, bare numbers, "Unnamed: 3"), a time axis (dates, a
// year or a quarter), a category to group by, an amount that adds up (sales, units),
// long text, or a level that is averaged, never totalled (a price, a temperature, an age, a
// rate). A price is averaged only per item (product, symbol): a mean of different
// items' prices answers nothing.

const NUMERIC = /^(u?int|float|Int|UInt|Float|decimal)/;
const DATE_DTYPE = /^datetime|^period|^date/;

// Names are read as words: "ResourceAgencyNum" → resource agency num, "GF_ID" → gf id.
/** @param {unknown} name @returns {string[]} */
const words = (name) =>
  String(name)
    .replace(/(\p{Ll})(\p{Lu})/gu, "$1 $2")
    .toLowerCase()
    .match(/[\p{L}\p{N}]+/gu) || [];
/** @param {string[]} list @param {Set<string>} set */
const has = (list, set) => list.some((w) => set.has(w));
/** @param {string} text words, space-separated */
const set = (text) => new Set(text.split(" "));

// The last word names what a value is: "Phone Number", "Order No", "Offence Code".
const ID_LAST = set("id ids key code codes uuid guid index idx zip zipcode postcode postal phone email url urls uri link num nr no iata icao faa iso isbn ean upc sku gtin hash");
const ID_FIRST = set("id");
const COORDINATE = set("lat latitude lng lon long longitude easting northing coord coords coordinate coordinates");
const CJK_COORDINATE = /[坐座][標标]|經度|经度|緯度|纬度/;
const CJK_ID = /代[碼码]|編號|编号/;
const TIME = set("date time timestamp datetime day month week quarter year yr period hour created updated modified when");
const CJK_TIME = /時間|时间|日期|年份/;
const DURATION = set("years days months weeks hours minutes seconds");
const LEVEL = set("price prices rate rates ratio percent percentage pct share temperature temp age score rating ratings avg average mean median ctr density speed wind height per humidity pressure");
const PRICE = set("price prices");
// Levels of a person or thing, not of a moment: shown as a histogram, not over time.
const NOT_OVER_TIME = set("age years days months weeks hours minutes seconds");
const ITEM = ["product", "item", "symbol", "ticker", "stock", "brand", "model", "company", "article"];
const LONG_TEXT = set("name names description comment comments note notes text address title summary");
const CJK_LONG_TEXT = /名[稱称]|地址|簡述|简述|說明|说明/;
// Amounts a person totals first, best first.
const AMOUNTS = ["revenue", "sales", "amount", "total", "profit", "income", "salary", "cost", "spend", "spending", "value", "quantity", "qty", "units", "count", "number"];
const GROUPS = ["region", "country", "state", "province", "county", "city", "category", "type", "kind", "class", "classification", "group", "segment", "department", "channel", "cluster", "plan", "status", "weather", "lang", "language", "gender", "sector", "team", "store", "place", "product", "item", "symbol", "brand"];

/** What one column is good for in a question: `skip`, `time`, `category`, `text` (names,
 * descriptions: not grouped by), `amount` or `level`.
 * @param {{name: string, dtype?: string}} column @param {Set<string>} [personal] column names left out
 * @returns {"skip" | "time" | "category" | "text" | "amount" | "level"} */
export function columnRole(column, personal = new Set()) {
  const name = String(column.name).trim();
  const dtype = String(column.dtype || "");
  const w = words(name);
  const numeric = NUMERIC.test(dtype);
  if (!w.length || /^unnamed\b/i.test(name) || /^[\d\s.,-]+$/.test(name) || personal.has(name)) return "skip";
  if (has(w, COORDINATE) || CJK_COORDINATE.test(name)) return "skip";
  if (ID_LAST.has(w[w.length - 1]) || ID_FIRST.has(w[0]) || CJK_ID.test(name)) return "skip";
  if (DATE_DTYPE.test(dtype)) return "time";
  if (numeric && w.length <= 3 && DURATION.has(w[w.length - 1])) return "level"; // years of service
  if (has(w, TIME) || CJK_TIME.test(name)) return "time";
  if (has(w, LONG_TEXT) || CJK_LONG_TEXT.test(name)) return "text"; // a number there: an empty column
  if (!numeric) return "category";
  return has(w, LEVEL) ? "level" : "amount";
}

/** @param {string[]} list @param {{name: string}} column */
const rank = (list, column) => {
  const w = words(column.name);
  const at = list.findIndex((word) => w.includes(word));
  return at < 0 ? list.length : at;
};
/** The column whose name has the earliest word of `list`.
 * @template {{name: string}} C @param {C[]} columns @param {string[]} list @returns {C | undefined} */
const best = (columns, list) => [...columns].sort((a, b) => rank(list, a) - rank(list, b))[0];

/**
 * 2-4 questions about an uploaded table ({name, kind, columns: [{name, dtype}], personal, head}):
 * a summary, a total of an amount by a category, a chart over time (else a histogram),
 * an average of a level per item or category (else a correlation, else a count).
 * @param {{path?: string, name?: string, kind?: string, columns?: Array<{name: string, dtype: string}>,
 *          personal?: Array<{column: string}>, head?: string[][]}} info
 * @returns {string[]}
 */
export function exampleQuestions(info) {
  const file = String(info.name || info.path || "the data").split("/").pop();
  if (info.kind !== "table" || !Array.isArray(info.columns)) return [`What's in ${file}?`];
  const personal = new Set((Array.isArray(info.personal) ? info.personal : []).map((p) => String(p && p.column).trim().replace(/\s+/g, " ")));
  // A header over several lines ("ALL\nBONDS\nISSUED") is asked about on one.
  // A column empty in every first row (inspect's `head`) is likely empty throughout.
  const head = Array.isArray(info.head) ? info.head : [];
  /** @param {number} i */
  const empty = (i) => head.length > 0 && head.every((row) => /^(|nan|none|nat|<na>)$/i.test(String((row || [])[i] ?? "").trim()));
  const columns = info.columns.flatMap((c, i) => (c && typeof c.name === "string" && c.name.trim() && !empty(i) ? [{ ...c, name: c.name.trim().replace(/\s+/g, " ") }] : []));
  /** @param {ReturnType<typeof columnRole>} role */
  const of = (role) => columns.filter((c) => columnRole(c, personal) === role);
  const amounts = of("amount");
  const levels = of("level");
  const time = of("time")[0];
  const categories = of("category");
  const category = best(categories, GROUPS);
  const item = categories.find((c) => rank(ITEM, c) < ITEM.length);
  const amount = best(amounts, AMOUNTS);
  /** @param {{name: string}} c */
  const isPrice = (c) =>
 has(words(c.name), PRICE);
  // A level to average, and what to average it by: a price per item, others per category.
  const level = levels.find((c) => (isPrice(c) ? item : category));
  const levelBy = level && (isPrice(level) ? item : category);
  const measure = amount || levels[0];

  const questions = [`Summarize ${file}`];
  if (amount && category) questions.push(`Total ${amount.name} by ${category.name}`);
  if (measure && time && !has(words(measure.name), NOT_OVER_TIME)) questions.push(`Line chart of ${measure.name} over ${time.name}`);
  else if (measure) questions.push(`Histogram of ${measure.name}`);
  const other = [...amounts, ...levels].find((c) => c !== amount && c !== measure && !isPrice(c));
  if (level && levelBy) questions.push(`Average ${level.name} by ${levelBy.name}`);
  else if (other && category) questions.push(`Average ${other.name} by ${category.name}`);
  else if (measure && other) questions.push(`Correlation between ${measure.name} and ${other.name}`);
  else if (category) questions.push(`Count by ${category.name}`);
  return questions.slice(0, 4);
}
