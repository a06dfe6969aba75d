// Lint of web/ (scripts/test runs it, with tsc's type check: package.json "check").
// Pinned in package.json; flat config, the recommended rules.
import js from "@eslint/js";
import globals from "globals";

// Classic scripts (workers and the frame's inline script), not modules.
const SCRIPTS = ["web/agent/worker.js", "web/sandbox/worker/*.js", "web/sandbox/snapshot/*.js", "web/sandbox/frame.js", "web/sandbox/install.js"];
// The parts of the sandbox worker and of the snapshot recipe share one closure each
// (sandbox/parts.js): each part names what it uses of the others in a `/* global */`
// comment and what it gives them in an `/* exported */` one, so an undefined name and
// a top-level name nobody uses are both errors here (tsc checks the types across them).
const PARTS = ["web/sandbox/worker/*.js", "web/sandbox/snapshot/*.js"];

export default [
  js.configs.recommended,
  {
    files: ["web/**/*.js"],
    languageOptions: { ecmaVersion: 2023, sourceType: "module", globals: { ...globals.browser } },
    rules: {
      // `void x` marks a value left unused on purpose; `_name` too.
      "no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_", caughtErrors: "none" }],
    },
  },
  {
    files: SCRIPTS,
    // serve and connect: the call layer (web/shared/seam.js), which the page runs first.
    languageOptions: { sourceType: "script", globals: { ...globals.browser, ...globals.worker, loadPyodide: "readonly", serve: "readonly", connect: "readonly" } },
  },
  {
    files: PARTS,
    rules: { "no-unused-vars": ["error", { vars: "all", argsIgnorePattern: "^_", caughtErrors: "none" }] },
  },
];
