/**
 * An operation's own statuses plus those the request pipeline documents on every route
 * (`pipelineStatuses` in src/http/openapi.ts): 422 and 500 everywhere, 413 and 415 on writes,
 * 401, 403 and 429 on authenticated routes, and 409 (an Idempotency-Key in flight) on their writes.
 */
export function withPipelineStatuses(method: string, own: string[], opts: { public?: boolean; database?: false; conditional?: false } = {}): string[] {
  const write = ['post', 'put', 'patch', 'delete'].includes(method.toLowerCase());
  const shared = ['422', '500'];
  // 304: a GET answering JSON with If-None-Match naming its ETag (src/http/conditional-get.ts).
  if (method.toLowerCase() === 'get' && opts.conditional !== false) shared.push('304');
  // 7054: the database cannot be reached (every route that reads it).
  if (opts.database !== false) shared.push('503');
  if (write) shared.push('413', '415');
  // 7057: a write the database (or the repositories' disk) has no room for.
  if (write && (!opts.public || opts.database !== false)) shared.push('507');
  if (!opts.public) shared.push('401', '403', '429');
  if (!opts.public && write) shared.push('409');
  return [...new Set([...own, ...shared])].sort();
}
