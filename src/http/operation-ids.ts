import type { FastifyInstance } from 'fastify';

/**
 * Holds every operation of the document to the `operationId` its schema declares (what generated
 * clients name it by, the SDK's `operations[...]` among them): present, unique, camelCase, and
 * the one a single rule makes from its method and path unless the route says why not
 * (`config.operationIdWhy`: a probe, a protocol step, a resource its path does not name). A route
 * that declares none stops start-up, naming the id the rule would give it; nothing is filled in
 * here, so a reader of a routes.ts sees the name a client calls. The rule: the verb (`list` for
 * a GET answering `{data: [...]}`, `get`, `create`, `update`, `replace`, `delete`, or a custom
 * method's own verb), then the path's words, singular but for the last of a list:
 * `GET /v1/dashboards/{id}/revisions` -> `listDashboardRevisions`,
 * `POST /v1/dashboards/{id}/revisions/{revision_id}:restore` -> `restoreDashboardRevision`.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- any app, whatever its server, logger and type provider: this reads only route options
export function checkOperationIds(app: FastifyInstance<any, any, any, any, any>): void {
  const taken = new Map<string, string>();
  app.addHook('onRoute', (route) => {
    const schema = route.schema as (Record<string, unknown> & { hide?: boolean; operationId?: unknown; response?: Record<string, unknown> }) | undefined;
    if (!schema || schema.hide || route.url === '/docs' || route.url.startsWith('/docs/')) return;
    const methods = ((Array.isArray(route.method) ? route.method : [route.method]) as string[]).filter((m) => m !== 'HEAD' && m !== 'OPTIONS');
    // Fastify's HEAD twin of a GET is not an operation of the document.
    if (methods.length === 0) return;
    const where = `${methods.join(',')} ${route.url}`;
    if (methods.length > 1) throw new Error(`${where} is several operations of the document under one operationId: declare one route per method`);
    const path = documentPath(route.url);
    const rule = operationIdOf(methods[0]!, path, answersList(schema.response?.['200']));
    const id = schema.operationId;
    if (id === undefined) throw new Error(`${where} declares no operationId: its schema needs \`operationId: '${rule}'\` (the rule's name for it), or another name with \`config.operationIdWhy\``);
    if (typeof id !== 'string' || !/^[a-z][A-Za-z0-9]*$/.test(id)) throw new Error(`${where} declares the operationId ${JSON.stringify(id)}: an operationId is camelCase (${rule})`);
    const other = taken.get(id);
    if (other !== undefined) throw new Error(`${where} declares the operationId ${id}, which ${other} declares too: generated clients would give two operations one method`);
    taken.set(id, where);
    const why = route.config?.operationIdWhy;
    if (id === rule) {
      if (why !== undefined) throw new Error(`${where} declares \`operationIdWhy\` for ${id}, which is the rule's name: the reason goes only with another name`);
    } else if (typeof why !== 'string' || why.trim() === '') {
      throw new Error(
        `${where} declares the operationId ${id}, not ${rule} as the rule names it (src/http/operation-ids.ts): declare \`operationId: '${rule}'\`, or say why not in \`config.operationIdWhy\``,
      );
    }
  });
}

/** Fastify's path syntax (`:id(^[^:]+)::reset`) as the document writes it (`{id}:reset`). */
export function documentPath(url: string): string {
  return url
    .replace(/:([A-Za-z_][A-Za-z0-9_]*)(\([^)]*\))?/g, (m, name: string, _re: string | undefined, offset: number, whole: string) => (whole[offset - 1] === ':' ? m : `{${name}}`))
    .replace(/::/g, ':');
}

const answersList = (schema: unknown): boolean => {
  const data = (schema as { properties?: { data?: { type?: string } } } | undefined)?.properties?.data;
  return data?.type === 'array';
};

const VERB: Record<string, string> = { POST: 'create', PATCH: 'update', PUT: 'replace', DELETE: 'delete' };
/** Words that end in s without being plurals. */
const NOT_PLURAL = new Set(['series', 'status', 'access', 'refs']);

function singular(word: string): string {
  if (NOT_PLURAL.has(word)) return word;
  if (word.endsWith('ies')) return `${word.slice(0, -3)}y`;
  if (word.endsWith('s') && !word.endsWith('ss')) return word.slice(0, -1);
  return word;
}

const pascal = (word: string) =>
  word
    .split(/[_\-.]+/)
    .filter(Boolean)
    .map((w) => w[0]!.toUpperCase() + w.slice(1))
    .join('');

export function operationIdOf(method: string, path: string, list: boolean): string {
  const segments = path
    .replace(/^\/v1(?=\/)/, '')
    .split('/')
    .filter(Boolean);
  let custom: string | undefined;
  const last = segments.at(-1) ?? '';
  const colon = last.indexOf(':', last.startsWith('{') ? last.indexOf('}') : 0);
  if (colon > 0) {
    custom = last.slice(colon + 1);
    segments[segments.length - 1] = last.slice(0, colon);
  }
  const words = segments.filter((s) => !s.startsWith('{'));
  const verb = custom ?? (method === 'GET' ? (list ? 'list' : 'get') : (VERB[method] ?? method.toLowerCase()));
  const noun = words.map((w, i) => (i === words.length - 1 && verb === 'list' ? w : singular(w)));
  const first = verb
    .split(/[_-]/)
    .map((w, i) => (i === 0 ? w : pascal(w)))
    .join('');
  return `${first}${noun.map(pascal).join('')}`;
}
