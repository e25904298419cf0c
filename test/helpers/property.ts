/**
 * fast-check settings shared by every property and fuzz test: a fixed seed in `npm test`, so a CI
 * run is reproducible, and the soak's own seed (`WSP_FUZZ_SEED`, printed by `npm run soak:fuzz`) there.
 */
export const PROPERTY_SEED = Number(process.env.WSP_FUZZ_SEED ?? 20261122);

/**
 * Keys generated content leaves out: a body with `__proto__`, or `constructor.prototype`, is refused
 * whole (Fastify's prototype-poisoning guard: 422, tested on its own), so it is not valid content.
 */
export const isPoisonKey = (key: string): boolean => key === '__proto__' || key === 'constructor' || key === 'prototype';

/** True when no object inside the value has a poison key. */
export function hasNoPoisonKey(value: unknown): boolean {
  if (Array.isArray(value)) return value.every(hasNoPoisonKey);
  if (value !== null && typeof value === 'object') return Object.entries(value).every(([k, v]) => !isPoisonKey(k) && hasNoPoisonKey(v));
  return true;
}
