/**
 * The document with every `#/components/schemas/...` reference replaced by the schema it names
 * (a sibling `description` kept), for suites that read a route's schemas directly.
 */
export function dereferenced<T>(doc: T): T {
  const schemas = (doc as { components?: { schemas?: Record<string, unknown> } }).components?.schemas ?? {};
  const walk = (node: unknown, seen: string[]): unknown => {
    if (Array.isArray(node)) return node.map((n) => walk(n, seen));
    if (typeof node !== 'object' || node === null) return node;
    const { $ref, ...rest } = node as Record<string, unknown>;
    if (typeof $ref === 'string' && $ref.startsWith('#/components/schemas/')) {
      const name = $ref.slice('#/components/schemas/'.length);
      if (seen.includes(name)) throw new Error(`a schema refers to itself: ${[...seen, name].join(' -> ')}`);
      return { ...(walk(schemas[name], [...seen, name]) as object), ...rest };
    }
    return Object.fromEntries(Object.entries(node).map(([k, v]) => [k, k === 'example' || k === 'examples' ? v : walk(v, seen)]));
  };
  return walk(doc, []) as T;
}
