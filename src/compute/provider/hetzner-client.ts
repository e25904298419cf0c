import type { Clock } from '../../shared/clock.js';
import { ProviderError, type ComputeProvider, type Labels, type ProviderAction, type ProviderFailure, type ProviderImage, type ProviderServer, type ServerType } from './types.js';

export interface HetznerClientOptions {
  /** Base URL including the version, e.g. https://api.hetzner.cloud/v1 */
  baseUrl: string;
  token: string;
  timeoutMs: number;
  clock: Clock;
}

/**
 * Error codes of the Hetzner Cloud API that mean "try again later". Every other code (and
 * any other 4xx) means the request itself is at fault.
 */
const TRANSIENT_CODES = new Set([
  'rate_limit_exceeded',
  'locked',
  'conflict',
  'maintenance',
  'server_error',
  'service_error',
  'unavailable',
  'timeout',
  'resource_unavailable',
  'placement_error',
  'robot_unavailable',
]);

/** Hetzner's limit refills one request a second; an exhausted budget is worth that long a pause. */
const REFILL_SECONDS = 1;
const PAGE_SIZE = 50;

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- a JSON document walked without a schema; each reader checks the shape it needs
type Json = Record<string, any>;

function labelSelector(labels: Labels): string {
  return Object.entries(labels)
    .map(([k, v]) => `${k}=${v}`)
    .join(',');
}

function toServer(s: Json): ProviderServer {
  if (typeof s?.id !== 'number') throw badResponse('server');
  return {
    id: s.id,
    name: String(s.name),
    status: String(s.status),
    serverType: String(s.server_type?.name ?? ''),
    location: String(s.datacenter?.location?.name ?? s.location?.name ?? ''),
    ipv4: typeof s.public_net?.ipv4?.ip === 'string' ? s.public_net.ipv4.ip : null,
  };
}

function toImage(i: Json): ProviderImage {
  if (typeof i?.id !== 'number') throw badResponse('image');
  return {
    id: i.id,
    type: i.type,
    name: typeof i.name === 'string' ? i.name : null,
    status: i.status,
    sizeGb: typeof i.image_size === 'number' ? i.image_size : null,
  };
}

function toAction(a: Json): ProviderAction {
  if (typeof a?.id !== 'number' || !['running', 'success', 'error'].includes(a.status)) throw badResponse('action');
  return {
    id: a.id,
    status: a.status,
    error: a.error ? { code: String(a.error.code), message: String(a.error.message) } : null,
  };
}

const badResponse = (what: string) => new ProviderError('unavailable', 'bad_response', `The provider answered without a valid ${what}`);

/** Seconds to wait from Retry-After (seconds or an HTTP date) or RateLimit-Reset (Unix time, or seconds). */
export function retryAfterSeconds(headers: Headers, nowMs: number): number | null {
  const retryAfter = headers.get('retry-after');
  if (retryAfter) {
    if (/^\d+$/.test(retryAfter.trim())) return Number(retryAfter);
    const at = Date.parse(retryAfter);
    if (!Number.isNaN(at)) return Math.max(0, Math.ceil((at - nowMs) / 1000));
  }
  const reset = headers.get('ratelimit-reset');
  if (reset && /^\d+$/.test(reset.trim())) {
    const n = Number(reset);
    // Hetzner sends a Unix timestamp; the IETF draft a number of seconds.
    return n > 1_000_000_000 ? Math.max(0, n - Math.floor(nowMs / 1000)) : n;
  }
  return null;
}

/** The provider adapter for the Hetzner Cloud API (https://docs.hetzner.cloud). */
export class HetznerClient implements ComputeProvider {
  /** Until then (clock ms) no request is sent: the provider said to wait. */
  private blockedUntilMs = 0;

  constructor(private readonly opts: HetznerClientOptions) {}

  private async request(method: string, path: string, body?: unknown): Promise<{ status: number; json: Json }> {
    const { clock } = this.opts;
    const waitMs = this.blockedUntilMs - clock.nowMs();
    if (waitMs > 0) {
      const secs = Math.ceil(waitMs / 1000);
      throw new ProviderError('unavailable', 'rate_limit_exceeded', `The provider's rate limit is exhausted; retry in ${secs} s`, secs);
    }
    let res: Response;
    try {
      res = await fetch(this.opts.baseUrl.replace(/\/+$/, '') + path, {
        method,
        headers: {
          authorization: `Bearer ${this.opts.token}`,
          accept: 'application/json',
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        signal: AbortSignal.timeout(this.opts.timeoutMs),
      });
    } catch (err) {
      const e = err as Error;
      if (e.name === 'TimeoutError' || e.name === 'AbortError') {
        throw new ProviderError('unavailable', 'timeout', `The provider did not answer ${method} ${path.split('?')[0]} within ${this.opts.timeoutMs} ms`);
      }
      throw new ProviderError('unavailable', 'network', `The provider could not be reached: ${e.message}`);
    }
    const text = await res.text().catch(() => '');
    let json: Json = {};
    try {
      json = text ? (JSON.parse(text) as Json) : {};
    } catch {
      // not JSON (a proxy's error page): judged by its status below
    }
    this.noteRateLimit(res);
    if (res.ok) return { status: res.status, json };

    const code = typeof json.error?.code === 'string' ? json.error.code : `http_${res.status}`;
    const message = typeof json.error?.message === 'string' ? json.error.message : `HTTP ${res.status}`;
    const failure: ProviderFailure = TRANSIENT_CODES.has(code) || res.status >= 500 || res.status === 429 ? 'unavailable' : 'rejected';
    const wait = failure === 'unavailable' ? retryAfterSeconds(res.headers, clock.nowMs()) : null;
    if (res.status === 429 || code === 'rate_limit_exceeded') {
      const secs = wait ?? REFILL_SECONDS;
      this.blockedUntilMs = Math.max(this.blockedUntilMs, clock.nowMs() + secs * 1000);
      throw new ProviderError('unavailable', 'rate_limit_exceeded', `The provider's rate limit is exhausted; retry in ${secs} s`, secs);
    }
    throw new ProviderError(failure, code, `${message} (provider code ${code})`, wait);
  }

  /** A spent budget (RateLimit-Remaining: 0) pauses requests until the next one is allowed. */
  private noteRateLimit(res: Response): void {
    if (res.headers.get('ratelimit-remaining')?.trim() !== '0') return;
    const until = retryAfterSeconds(res.headers, this.opts.clock.nowMs());
    const secs = Math.min(until ?? REFILL_SECONDS, REFILL_SECONDS);
    this.blockedUntilMs = Math.max(this.blockedUntilMs, this.opts.clock.nowMs() + secs * 1000);
  }

  /** A request whose target being gone (the provider's not_found) answers null instead of failing. */
  private async requestOrNull(method: string, path: string): Promise<Json | null> {
    try {
      return (await this.request(method, path)).json;
    } catch (err) {
      if (err instanceof ProviderError && err.providerCode === 'not_found') return null;
      throw err;
    }
  }

  /** Every page of a collection. */
  private async listAll(path: string, key: string): Promise<Json[]> {
    const out: Json[] = [];
    const sep = path.includes('?') ? '&' : '?';
    for (let page = 1; ;) {
      const { json } = await this.request('GET', `${path}${sep}page=${page}&per_page=${PAGE_SIZE}`);
      const items = json[key];
      if (!Array.isArray(items)) throw badResponse(key);
      out.push(...items);
      const next = json.meta?.pagination?.next_page;
      if (typeof next !== 'number' || next <= page) return out;
      page = next;
    }
  }

  async listLocations() {
    return (await this.listAll('/locations', 'locations')).map((l) => ({
      name: String(l.name),
      description: String(l.description ?? l.city ?? l.name),
      country: String(l.country ?? ''),
      city: String(l.city ?? ''),
      networkZone: String(l.network_zone ?? ''),
    }));
  }

  async listServerTypes(): Promise<ServerType[]> {
    return (await this.listAll('/server_types', 'server_types'))
      .filter((t) => t.deprecated !== true && !t.deprecation)
      .map((t) => ({
        name: String(t.name),
        cores: Number(t.cores),
        memoryGb: Number(t.memory),
        diskGb: Number(t.disk),
        architecture: String(t.architecture ?? 'x86'),
        prices: (Array.isArray(t.prices) ? t.prices : []).map((p: Json) => ({
          location: String(p.location),
          monthlyGross: Number(p.price_monthly?.gross ?? NaN),
        })),
      }));
  }

  /** System and app images (one per architecture at Hetzner: each name is listed once). */
  async listImages() {
    const out = new Map<string, string>();
    for (const type of ['system', 'app']) {
      for (const i of await this.listAll(`/images?type=${type}&status=available`, 'images')) {
        if (typeof i.name === 'string' && !out.has(i.name)) out.set(i.name, String(i.description ?? i.name));
      }
    }
    return [...out].map(([name, description]) => ({ name, description }));
  }

  async snapshotPricePerGbMonth(): Promise<number> {
    const { json } = await this.request('GET', '/pricing');
    const gross = Number(json.pricing?.image?.price_per_gb_month?.gross);
    if (!Number.isFinite(gross)) throw badResponse('image price');
    return gross;
  }

  async createServer(req: { name: string; serverType: string; image: string | number; location: string; labels: Labels; userData?: string }) {
    const { json } = await this.request('POST', '/servers', {
      name: req.name,
      server_type: req.serverType,
      image: req.image,
      location: req.location,
      labels: req.labels,
      start_after_create: true,
      ...(req.userData ? { user_data: req.userData } : {}),
    });
    return { server: toServer(json.server), action: toAction(json.action) };
  }

  async getServer(id: number): Promise<ProviderServer | null> {
    const json = await this.requestOrNull('GET', `/servers/${id}`);
    return json ? toServer(json.server) : null;
  }

  async findServers(labels: Labels): Promise<ProviderServer[]> {
    return (await this.listAll(`/servers?label_selector=${encodeURIComponent(labelSelector(labels))}`, 'servers')).map(toServer);
  }

  async deleteServer(id: number): Promise<ProviderAction | null> {
    const json = await this.requestOrNull('DELETE', `/servers/${id}`);
    return json ? toAction(json.action) : null;
  }

  async createSnapshot(serverId: number, req: { description: string; labels: Labels }) {
    const { json } = await this.request('POST', `/servers/${serverId}/actions/create_image`, { type: 'snapshot', description: req.description, labels: req.labels });
    return { image: toImage(json.image), action: toAction(json.action) };
  }

  async getImage(id: number): Promise<ProviderImage | null> {
    const json = await this.requestOrNull('GET', `/images/${id}`);
    return json ? toImage(json.image) : null;
  }

  async findSnapshots(labels: Labels): Promise<ProviderImage[]> {
    return (await this.listAll(`/images?type=snapshot&label_selector=${encodeURIComponent(labelSelector(labels))}`, 'images')).map(toImage);
  }

  async deleteImage(id: number): Promise<boolean> {
    return (await this.requestOrNull('DELETE', `/images/${id}`)) !== null;
  }

  async getAction(id: number): Promise<ProviderAction> {
    return toAction((await this.request('GET', `/actions/${id}`)).json.action);
  }
}
