// The JSON-schema subset that host tools' arguments and results are checked against
// (docs/javascript.md, *Host tools*): `type` (object, array, string, number, integer,
// boolean, null, or a list of them), `properties`, `required`, `additionalProperties:
// false`, `enum`, `items`, `minimum`/`maximum`, `minLength`/`maxLength`,
// `minItems`/`maxItems`, `description` (ignored). Any other keyword is refused when the
// tool is registered, so a schema never seems to promise a check that is not made.

const KEYWORDS = new Set(["type", "properties", "required", "additionalProperties", "enum", "items", "minimum", "maximum", "minLength", "maxLength", "minItems", "maxItems", "description", "title", "default", "examples"]);
const TYPES = new Set(["object", "array", "string", "number", "integer", "boolean", "null"]);
const MAX_ERRORS = 5;

/** Why `schema` cannot be used (a TypeError's message), or null. @param {unknown} schema @param {string} [where] @returns {string | null} */
export function schemaProblem(schema, where = "schema") {
  if (!schema || typeof schema !== "object" || Array.isArray(schema)) return `${where} must be an object (a JSON schema)`;
  const s = /** @type {Record<string, any>} */ (schema);
  for (const key of Object.keys(s)) if (!KEYWORDS.has(key)) return `${where}: the keyword "${key}" is not supported (supported: ${[...KEYWORDS].join(", ")})`;
  if (s.type !== undefined) {
    const types = Array.isArray(s.type) ? s.type : [s.type];
    for (const t of types) if (!TYPES.has(t)) return `${where}.type: "${t}" is not a JSON-schema type`;
  }
  if (s.properties !== undefined) {
    if (!s.properties || typeof s.properties !== "object" || Array.isArray(s.properties)) return `${where}.properties must be an object`;
    for (const [name, sub] of Object.entries(s.properties)) {
      const problem = schemaProblem(sub, `${where}.properties.${name}`);
      if (problem) return problem;
    }
  }
  if (s.required !== undefined && !(Array.isArray(s.required) && s.required.every((r) => typeof r === "string"))) return `${where}.required must be a list of names`;
  if (s.additionalProperties !== undefined && typeof s.additionalProperties !== "boolean") return `${where}.additionalProperties must be true or false`;
  if (s.enum !== undefined && !Array.isArray(s.enum)) return `${where}.enum must be a list`;
  if (s.items !== undefined) {
    const problem = schemaProblem(s.items, `${where}.items`);
    if (problem) return problem;
  }
  for (const key of ["minimum", "maximum", "minLength", "maxLength", "minItems", "maxItems"]) {
    if (s[key] !== undefined && typeof s[key] !== "number") return `${where}.${key} must be a number`;
  }
  return null;
}

/** @param {unknown} value */
function typeOf(value) {
  if (value === null) return "null";
  if (Array.isArray(value)) return "array";
  if (typeof value === "number") return Number.isInteger(value) ? "integer" : "number";
  return typeof value;
}

/** @param {unknown} value @param {string} type */
function isType(value, type) {
  const actual = typeOf(value);
  return actual === type || (type === "number" && actual === "integer");
}

/** @param {unknown} value */
function shown(value) {
  const text = JSON.stringify(value);
  return text === undefined ? String(value) : text.length > 60 ? `${text.slice(0, 57)}...` : text;
}

/** What is wrong with `value` under `schema` (a few messages, each naming where), [] when
 * nothing. @param {unknown} value @param {Record<string, any>} schema @param {string} [where] @returns {string[]} */
export function validate(value, schema, where = "") {
  /** @type {string[]} */
  const errors = [];
  check(value, schema, where, errors);
  return errors.slice(0, MAX_ERRORS);
}

/** @param {unknown} value @param {Record<string, any>} s @param {string} where @param {string[]} errors */
function check(value, s, where, errors) {
  if (errors.length >= MAX_ERRORS) return;
  const at = where || "the value";
  if (s.type !== undefined) {
    const types = Array.isArray(s.type) ? s.type : [s.type];
    if (!types.some((/** @type {string} */ t) => isType(value, t))) {
      errors.push(`${at} must be ${types.join(" or ")}, not ${typeOf(value)} ${shown(value)}`);
      return;
    }
  }
  if (s.enum !== undefined && !s.enum.some((/** @type {unknown} */ option) => JSON.stringify(option) === JSON.stringify(value))) {
    errors.push(`${at} must be one of ${s.enum.map(shown).join(", ")}, not ${shown(value)}`);
  }
  if (typeof value === "number") {
    if (typeof s.minimum === "number" && value < s.minimum) errors.push(`${at} must be at least ${s.minimum}, not ${value}`);
    if (typeof s.maximum === "number" && value > s.maximum) errors.push(`${at} must be at most ${s.maximum}, not ${value}`);
  }
  if (typeof value === "string") {
    if (typeof s.minLength === "number" && value.length < s.minLength) errors.push(`${at} must have at least ${s.minLength} characters`);
    if (typeof s.maxLength === "number" && value.length > s.maxLength) errors.push(`${at} must have at most ${s.maxLength} characters`);
  }
  if (Array.isArray(value)) {
    if (typeof s.minItems === "number" && value.length < s.minItems) errors.push(`${at} must have at least ${s.minItems} items`);
    if (typeof s.maxItems === "number" && value.length > s.maxItems) errors.push(`${at} must have at most ${s.maxItems} items`);
    if (s.items) value.forEach((item, i) => check(item, s.items, `${where}[${i}]`, errors));
  }
  if (value && typeof value === "object" && !Array.isArray(value)) {
    const obj = /** @type {Record<string, unknown>} */ (value);
    const props = s.properties || {};
    for (const name of s.required || []) if (!Object.hasOwn(obj, name)) errors.push(`${where ? `${where}.` : ""}${name} is required`);
    for (const [name, item] of Object.entries(obj)) {
      const path = where ? `${where}.${name}` : name;
      if (Object.hasOwn(props, name)) check(item, props[name], path, errors);
      else if (s.additionalProperties === false) errors.push(`${path} is not an argument of this tool (its arguments: ${Object.keys(props).join(", ") || "none"})`);
    }
  }
}
