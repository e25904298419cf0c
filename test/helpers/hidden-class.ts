import { randomBytes } from 'node:crypto';
import v8 from 'node:v8';

/**
 * Whether two objects share V8's hidden class (map). The flag is on only while the one function
 * that uses V8's own `%HaveSameMap` is compiled; nothing else in the process is parsed with it.
 */
v8.setFlagsFromString('--allow-natives-syntax');
// eslint-disable-next-line @typescript-eslint/no-implied-eval -- V8's %-natives parse only in code compiled while the flag is on
const haveSameMap = new Function('a', 'b', 'return %HaveSameMap(a, b)') as (a: object, b: object) => boolean;
v8.setFlagsFromString('--no-allow-natives-syntax');

export const sameHiddenClass = (a: object, b: object): boolean => haveSameMap(a, b);

/**
 * Calls `make` `warmUp` times, then answers how many of `pairs` pairs of consecutive answers
 * have different hidden classes. Node 20's V8 gives `{ ...a, b }` a new class on each call once it
 * has run a few times (docs/decisions.md, "One hidden class"), so the first calls cannot show it;
 * consecutive answers after the warm-up, not the first answer, are compared because a field's
 * representation may still be generalized once early on.
 */
export async function hiddenClassChanges(make: () => Promise<object> | object, warmUp = 64, pairs = 16): Promise<number> {
  for (let i = 0; i < warmUp; i++) await make();
  let changes = 0;
  let previous = await make();
  for (let i = 0; i < pairs; i++) {
    const next = await make();
    if (!sameHiddenClass(previous, next)) changes++;
    previous = next;
  }
  return changes;
}

/** A maker of headers-like objects whose first property is `first`, as Node and Fastify build theirs. */
export const headersStartingWith = (first: string) => () => {
  const headers: Record<string, string> = {};
  headers[first] = 'a';
  headers['content-type'] = 'application/json';
  headers['x-request-id'] = 'req_1';
  return headers;
};

/**
 * Gives the empty object's map transitions for 2,000 new first keys, past V8's 1,536, as compiling
 * route schemas can (src/http/header-first-keys.ts). Answers the objects: a transition lasts as
 * long as its map.
 */
export function fillEmptyObjectTransitions(count = 2_000): object[] {
  const filler: object[] = [];
  for (let i = 0; i < count; i++) {
    const o: Record<string, number> = {};
    o[`filler_${i}_${randomBytes(4).toString('hex')}`] = i;
    filler.push(o);
  }
  return filler;
}
