// How long a model takes to read its prompt, measured on this page's earlier calls to
// it: each call's time to first token over the tokens it had to read (the new part of
// the prompt: a server with a prompt cache reads only that). The waiting line turns
// the next call's size into an estimate; there is none before the first measurement.

import { DEMO_MODEL } from "../agent/client.js";

// Below this an estimate says nothing the clock does not.
const WORTH_SAYING_MS = 2000;

/** @type {Map<string, {ms: number, tokens: number}>} model -> summed measurements */
const measured = new Map();

/** The tokens a call must read: its new part when the agent knows it, else all of it.
 * @param {{tokens?: number, new_tokens?: number}} size @returns {number} */
export const tokensToRead = ({ tokens, new_tokens: fresh }) => (Number(fresh) > 0 ? Number(fresh) : Number(tokens) || 0);

/** One call of `model` read `tokens` and its first token came after `firstTokenMs`.
 * @param {string} model @param {number} tokens @param {number} firstTokenMs */
export function recordCall(model, tokens, firstTokenMs) {
  if (!model || model === DEMO_MODEL || !(tokens > 0) || !(firstTokenMs > 0)) return;
  const sum = measured.get(model) || { ms: 0, tokens: 0 };
  measured.set(model, { ms: sum.ms + Number(firstTokenMs), tokens: sum.tokens + Number(tokens) });
}

/** About how long `model` will take to read `tokens`: `{ms, perToken}`, or null when
 * nothing was measured yet (or it would be too short to be worth saying).
 * @param {string} model @param {number} tokens @returns {{ms: number, perToken: number} | null} */
export function estimateRead(model, tokens) {
  const sum = measured.get(model);
  if (!sum || !(tokens > 0)) return null;
  const perToken = sum.ms / sum.tokens;
  const ms = perToken * tokens;
  return ms >= WORTH_SAYING_MS ? { ms, perToken } : null;
}

/** Forget every measurement (a test's fresh start). */
export const forgetRates = () => measured.clear();
