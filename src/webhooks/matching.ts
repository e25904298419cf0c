/** Whether an endpoint subscribed with `patterns` (types or `<resource>.*`) takes an event of `type`. */
export function subscribes(patterns: readonly string[], type: string): boolean {
  const resource = type.slice(0, type.indexOf('.'));
  return patterns.some((p) => p === type || p === `${resource}.*`);
}
