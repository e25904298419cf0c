/**
 * Seeding through the real API, shared by the scenarios (bench/scenarios.ts) and the install
 * workloads (bench/install-workloads.ts): packages, installs whose first render succeeded, and
 * waiting for a render to finish.
 */
export type Api = (method: string, path: string, headers: Record<string, string>, body?: unknown) => Promise<{ status: number; json: any; headers: Headers }>;

export const bearer = (t: string) => ({ authorization: `Bearer ${t}` });
export const json = { 'content-type': 'application/json' };

export async function must(res: ReturnType<Api>, status: number): Promise<any> {
  const r = await res;
  if (r.status !== status) throw new Error(`seed failed: ${r.status} ${JSON.stringify(r.json)}`);
  return r.json;
}

/** A package with one version holding `files` (path → Mustache template). */
export async function packageWith(api: Api, h: Record<string, string>, name: string, files: Record<string, string>): Promise<{ packageId: string; versionId: string }> {
  const pkg = await must(api('POST', '/v1/packages', h, { name }), 201);
  const v1 = await must(api('POST', `/v1/packages/${pkg.id}/versions`, h, { semver: '1.0.0', files }), 201);
  return { packageId: pkg.id, versionId: v1.id };
}

export interface RenderedInstall {
  id: string;
  /** The install's ETag header once its first render succeeded (rendering changes the install). */
  etag: string;
  /** Its first render, succeeded: what a restore can name. */
  renderId: string;
}

/** An install of the package, once its first render succeeded. */
export async function installRendered(api: Api, h: Record<string, string>, pkg: { packageId: string; versionId: string }, name: string, values: Record<string, unknown>): Promise<RenderedInstall> {
  const inst = await must(api('POST', '/v1/installs', h, { name, package_id: pkg.packageId, version_id: pkg.versionId, values }), 201);
  const renderId = inst.last_render?.id;
  if (!renderId) throw new Error(`install ${inst.id}: no first render in the answer`);
  const { etag } = await renderSettled(api, h, inst.id, renderId, { minPauseMs: 20, maxPauseMs: 200, timeoutMs: 60_000 });
  return { id: inst.id, etag, renderId };
}

/**
 * Polls GET /v1/installs/{id} until its newest render (`last_render`) is `renderId` and has
 * succeeded; throws when it failed or was superseded. The install rather than the render: its
 * answer carries both the render's state and the install's ETag, which the next PATCH needs.
 * The pause is a tenth of the time waited so far, within [minPauseMs, maxPauseMs]: a render is
 * seen at most ~10% (or minPauseMs) after it succeeded, whether it takes 50 ms or 2 s, and a
 * slow one is not polled at a rate that takes CPU from the renders measured (polls grow with
 * the logarithm of the wait).
 */
export async function renderSettled(
  api: Api,
  h: Record<string, string>,
  installId: string,
  renderId: string,
  o: { minPauseMs: number; maxPauseMs: number; timeoutMs: number },
): Promise<{ etag: string; polls: number }> {
  const start = Date.now();
  for (let polls = 1; ; polls++) {
    const r = await api('GET', `/v1/installs/${installId}`, h);
    if (r.status !== 200) throw new Error(`GET install ${installId}: ${r.status} ${JSON.stringify(r.json)}`);
    const last = r.json.last_render;
    if (last?.id === renderId) {
      if (last.state === 'succeeded') return { etag: r.headers.get('etag') ?? `"${r.json.etag}"`, polls };
      if (last.state === 'failed' || last.state === 'superseded') throw new Error(`render ${renderId} of ${installId} ${last.state}: ${last.error ?? ''}`);
    } else if (last) {
      throw new Error(`install ${installId}: newest render ${last.id} (${last.state}), not ${renderId}`);
    }
    const waited = Date.now() - start;
    if (waited > o.timeoutMs) throw new Error(`render ${renderId} of ${installId} not succeeded after ${o.timeoutMs} ms (${last?.state})`);
    await new Promise((res) => setTimeout(res, Math.min(o.maxPauseMs, Math.max(o.minPauseMs, waited / 10))));
  }
}

/**
 * Waits until the install's newest render is no longer queued or running: a restore answers
 * with its render `running` and leaves a job to complete it, so after a run of restores the
 * server still has work in hand, which must not land in the next measurement.
 */
export async function installsSettled(api: Api, h: Record<string, string>, installIds: string[], timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (const id of installIds) {
    for (;;) {
      const r = await must(api('GET', `/v1/installs/${id}`, h), 200);
      const state = r.last_render?.state;
      if (state === 'failed') throw new Error(`install ${id}: newest render failed: ${r.last_render.error}`);
      if (state !== 'queued' && state !== 'running') break;
      if (Date.now() > deadline) throw new Error(`install ${id}: newest render still ${state} after ${timeoutMs} ms`);
      await new Promise((res) => setTimeout(res, 100));
    }
  }
}
