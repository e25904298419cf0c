import http from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A stub of the Hetzner Cloud API (the parts the adapter uses), with in-memory state, for
 * the real HTTP adapter to talk to in tests. Each bearer token is a project of its own.
 * It can be told to fail, hang (time out), rate-limit, or end actions in error.
 */

interface Action {
  id: number;
  command: string;
  status: 'running' | 'success' | 'error';
  error: { code: string; message: string } | null;
  /** GETs still answered `running` before the action finishes. */
  pollsLeft: number;
  fail: boolean;
  onDone: (ok: boolean) => void;
}

interface Server {
  id: number;
  name: string;
  status: string;
  server_type: string;
  location: string;
  image: string | number;
  labels: Record<string, string>;
  ipv4: string;
}

interface Image {
  id: number;
  type: 'system' | 'snapshot';
  name: string | null;
  status: 'available' | 'creating' | 'unavailable';
  image_size: number | null;
  description: string;
  labels: Record<string, string>;
  created_from: number | null;
}

interface Project {
  servers: Map<number, Server>;
  snapshots: Map<number, Image>;
}

export interface Fault {
  method?: string;
  /** Matched against the path (without the query). */
  path: RegExp;
  times?: number;
  /** Requests that match but pass through untouched before the fault starts (default 0). */
  skip?: number;
  /** Answer with this error... */
  status?: number;
  code?: string;
  message?: string;
  headers?: Record<string, string>;
  /** ...or never answer (the client times out). */
  hang?: boolean;
}

export interface RecordedRequest {
  method: string;
  path: string;
  query: string;
  token: string;
  body: any;
}

export const LOCATIONS = ['fsn1', 'nbg1', 'hel1', 'ash'];
/** cx and cax are offered in Europe only; cpx everywhere. Gross monthly prices in EUR. */
export const SERVER_TYPES: { name: string; locations: string[]; gross: string; deprecated?: boolean }[] = [
  { name: 'cx22', locations: ['fsn1', 'nbg1', 'hel1'], gross: '4.5900000000' },
  { name: 'cx32', locations: ['fsn1', 'nbg1', 'hel1'], gross: '7.5900000000' },
  { name: 'cx11', locations: ['fsn1', 'nbg1', 'hel1'], gross: '3.9500000000', deprecated: true },
  { name: 'cpx11', locations: LOCATIONS, gross: '5.1800000000' },
  { name: 'cpx21', locations: LOCATIONS, gross: '9.5100000000' },
  { name: 'cax11', locations: ['fsn1', 'nbg1', 'hel1'], gross: '4.5900000000' },
];
export const SNAPSHOT_GROSS_PER_GB = 0.0143;
const SYSTEM_IMAGES: Image[] = ['ubuntu-24.04', 'debian-12', 'ubuntu-22.04'].map((name, i) => ({
  id: 100 + i,
  type: 'system',
  name,
  status: 'available',
  image_size: null,
  description: name,
  labels: {},
  created_from: null,
}));

function matchesSelector(labels: Record<string, string>, selector: string | null): boolean {
  if (!selector) return true;
  return selector.split(',').every((term) => {
    const [k, v] = term.split('=');
    return k !== undefined && labels[k] === v;
  });
}

export class ProviderStub {
  /** Tokens the stub accepts; each is a project. */
  readonly projects = new Map<string, Project>();
  readonly requests: RecordedRequest[] = [];
  private readonly actions = new Map<number, Action>();
  private readonly faults: Fault[] = [];
  private nextId = 5_000_000_000; // above 2^32: ids are 64-bit at Hetzner
  private server: http.Server | null = null;
  private readonly hanging = new Set<http.ServerResponse>();
  /** Polls an action answers `running` before it finishes. */
  actionPolls = 1;
  /** GB a new snapshot takes. */
  snapshotSizeGb = 2.35;
  /** Items per page at most (Hetzner: 50); small to exercise paging. */
  maxPerPage = 50;
  /** Requests a project may make before the budget runs out (RateLimit-Remaining). */
  budget = 3600;
  /** The time the stub reports in RateLimit-Reset (ms): the tests' clock. */
  now: () => number = () => Date.now();
  /** The next actions of these commands end in error. */
  private failingActions = new Map<string, number>();

  url = '';

  constructor(tokens: string[]) {
    for (const t of tokens) this.projects.set(t, { servers: new Map(), snapshots: new Map() });
  }

  async start(): Promise<string> {
    this.server = http.createServer((req, res) => void this.handle(req, res));
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/v1`;
    return this.url;
  }

  async stop(): Promise<void> {
    for (const res of this.hanging) res.destroy();
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => this.server?.close(() => resolve()) ?? resolve());
  }

  fail(fault: Fault): void {
    this.faults.push({ times: 1, ...fault });
  }

  failAction(command: string, times = 1): void {
    this.failingActions.set(command, times);
  }

  clearFaults(): void {
    this.faults.length = 0;
    this.failingActions.clear();
  }

  project(token: string): Project {
    const p = this.projects.get(token);
    if (!p) throw new Error(`no project for ${token}`);
    return p;
  }

  requestsTo(method: string, path: RegExp): RecordedRequest[] {
    return this.requests.filter((r) => r.method === method && path.test(r.path));
  }

  private id(): number {
    return this.nextId++;
  }

  private action(command: string, onDone: (ok: boolean) => void = () => {}): Action {
    const failing = this.failingActions.get(command) ?? 0;
    if (failing > 0) this.failingActions.set(command, failing - 1);
    const a: Action = { id: this.id(), command, status: 'running', error: null, pollsLeft: this.actionPolls, fail: failing > 0, onDone };
    this.actions.set(a.id, a);
    if (a.pollsLeft <= 0) this.finish(a);
    return a;
  }

  private finish(a: Action): void {
    if (a.status !== 'running') return;
    a.status = a.fail ? 'error' : 'success';
    if (a.fail) a.error = { code: 'action_failed', message: `${a.command} failed` };
    a.onDone(!a.fail);
  }

  private actionJson(a: Action) {
    return { id: a.id, command: a.command, status: a.status, progress: a.status === 'running' ? 50 : 100, started: '2026-01-01T00:00:00+00:00', finished: null, resources: [], error: a.error };
  }

  private serverJson(s: Server) {
    return {
      id: s.id,
      name: s.name,
      status: s.status,
      server_type: { name: s.server_type },
      datacenter: { name: `${s.location}-dc1`, location: { name: s.location } },
      public_net: { ipv4: { ip: s.ipv4 } },
      labels: s.labels,
    };
  }

  private imageJson(i: Image) {
    return {
      id: i.id,
      type: i.type,
      name: i.name,
      status: i.status,
      image_size: i.image_size,
      description: i.description,
      labels: i.labels,
      created_from: i.created_from ? { id: i.created_from } : null,
    };
  }

  private page<T>(items: T[], q: URLSearchParams) {
    const perPage = Math.min(Number(q.get('per_page') ?? 25), this.maxPerPage);
    const page = Number(q.get('page') ?? 1);
    const last = Math.max(1, Math.ceil(items.length / perPage));
    return {
      items: items.slice((page - 1) * perPage, page * perPage),
      meta: { pagination: { page, per_page: perPage, previous_page: page > 1 ? page - 1 : null, next_page: page < last ? page + 1 : null, last_page: last, total_entries: items.length } },
    };
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const raw = Buffer.concat(chunks).toString('utf8');
    const url = new URL(req.url ?? '/', 'http://stub');
    const path = url.pathname.replace(/^\/v1/, '');
    const method = req.method ?? 'GET';
    const token = (req.headers.authorization ?? '').replace(/^Bearer /, '');
    let body: any = null;
    try {
      body = raw ? JSON.parse(raw) : null;
    } catch {
      body = undefined;
    }
    this.requests.push({ method, path, query: url.search, token, body });

    const resetAt = Math.floor(this.now() / 1000) + 3600;
    const send = (status: number, json: unknown, headers: Record<string, string> = {}) => {
      this.budget = Math.max(0, this.budget - 1);
      res.writeHead(status, {
        'content-type': 'application/json',
        'ratelimit-limit': '3600',
        'ratelimit-remaining': String(this.budget),
        'ratelimit-reset': String(resetAt),
        ...headers,
      });
      res.end(json === null ? '' : JSON.stringify(json));
    };
    const error = (status: number, code: string, message: string, headers: Record<string, string> = {}) => send(status, { error: { code, message, details: {} } }, headers);

    let fault = this.faults.find((f) => (f.method ?? method) === method && f.path.test(path) && (f.times ?? 1) > 0);
    if (fault && (fault.skip ?? 0) > 0) {
      fault.skip = fault.skip! - 1;
      fault = undefined;
    }
    if (fault) {
      fault.times = (fault.times ?? 1) - 1;
      if (fault.hang) {
        this.hanging.add(res);
        return;
      }
      return error(fault.status ?? 500, fault.code ?? 'server_error', fault.message ?? 'injected fault', fault.headers);
    }
    const project = this.projects.get(token);
    if (!project) return error(401, 'unauthorized', 'unable to authenticate');
    if (body === undefined) return error(400, 'json_error', 'invalid JSON');

    let m: RegExpMatchArray | null;
    const q = url.searchParams;

    if (method === 'GET' && path === '/locations') {
      const p = this.page(
        LOCATIONS.map((name, i) => ({
          id: i + 1,
          name,
          description: `${name.toUpperCase()} DC Park 1`,
          city: name,
          country: name === 'ash' ? 'US' : 'DE',
          network_zone: name === 'ash' ? 'us-east' : 'eu-central',
        })),
        q,
      );
      return send(200, { locations: p.items, meta: p.meta });
    }
    if (method === 'GET' && path === '/server_types') {
      const types = SERVER_TYPES.map((t, i) => ({
        id: i + 1,
        name: t.name,
        cores: t.name.endsWith('32') || t.name.endsWith('21') ? 4 : 2,
        memory: t.name.endsWith('32') ? 8 : 4,
        disk: t.name.endsWith('32') ? 80 : 40,
        architecture: t.name.startsWith('cax') ? 'arm' : 'x86',
        deprecated: t.deprecated ?? false,
        deprecation: t.deprecated ? { announced: '2024-06-06T08:00:00+00:00', unavailable_after: '2024-09-06T08:00:00+00:00' } : null,
        prices: t.locations.map((location) => ({ location, price_hourly: { net: '0.0050', gross: '0.0060' }, price_monthly: { net: t.gross, gross: t.gross } })),
      }));
      const p = this.page(types, q);
      return send(200, { server_types: p.items, meta: p.meta });
    }
    if (method === 'GET' && path === '/pricing') {
      return send(200, { pricing: { currency: 'EUR', vat_rate: '19.00', image: { price_per_gb_month: { net: '0.0120', gross: String(SNAPSHOT_GROSS_PER_GB) } } } });
    }
    if (method === 'GET' && path === '/images') {
      let images = [...SYSTEM_IMAGES, ...project.snapshots.values()];
      if (q.get('name')) images = images.filter((i) => i.name === q.get('name'));
      if (q.get('type')) images = images.filter((i) => i.type === q.get('type'));
      if (q.get('status')) images = images.filter((i) => i.status === q.get('status'));
      images = images.filter((i) => matchesSelector(i.labels, q.get('label_selector')));
      const p = this.page(
        images.map((i) => this.imageJson(i)),
        q,
      );
      return send(200, { images: p.items, meta: p.meta });
    }
    if ((m = path.match(/^\/images\/(\d+)$/))) {
      const image = project.snapshots.get(Number(m[1])) ?? SYSTEM_IMAGES.find((i) => i.id === Number(m![1]));
      if (!image) return error(404, 'not_found', 'image not found');
      if (method === 'GET') return send(200, { image: this.imageJson(image) });
      if (method === 'DELETE') {
        project.snapshots.delete(image.id);
        return send(204, null);
      }
    }
    if (method === 'GET' && path === '/servers') {
      const servers = [...project.servers.values()].filter((s) => matchesSelector(s.labels, q.get('label_selector')) && (!q.get('name') || s.name === q.get('name')));
      const p = this.page(
        servers.map((s) => this.serverJson(s)),
        q,
      );
      return send(200, { servers: p.items, meta: p.meta });
    }
    if (method === 'POST' && path === '/servers') {
      const type = SERVER_TYPES.find((t) => t.name === body?.server_type);
      if (!type || !LOCATIONS.includes(body?.location)) return error(422, 'invalid_input', 'invalid input in fields server_type, location');
      if (!type.locations.includes(body.location)) return error(412, 'resource_unavailable', 'server type unavailable in location');
      const image = typeof body.image === 'number' ? project.snapshots.get(body.image) : SYSTEM_IMAGES.find((i) => i.name === body.image);
      if (!image) return error(422, 'invalid_input', 'image not found');
      if ([...project.servers.values()].some((s) => s.name === body.name)) return error(409, 'uniqueness_error', 'server name is already used');
      const id = this.id();
      const server: Server = {
        id,
        name: body.name,
        status: 'initializing',
        server_type: type.name,
        location: body.location,
        image: body.image,
        labels: body.labels ?? {},
        ipv4: `203.0.113.${id % 250}`,
      };
      project.servers.set(id, server);
      const action = this.action('create_server', (ok) => {
        if (ok) server.status = 'running';
        else project.servers.delete(id);
      });
      return send(201, { server: this.serverJson(server), action: this.actionJson(action), next_actions: [], root_password: null });
    }
    if ((m = path.match(/^\/servers\/(\d+)$/))) {
      const server = project.servers.get(Number(m[1]));
      if (!server) return error(404, 'not_found', 'server not found');
      if (method === 'GET') return send(200, { server: this.serverJson(server) });
      if (method === 'DELETE') {
        server.status = 'deleting';
        const action = this.action('delete_server', (ok) => {
          if (ok) project.servers.delete(server.id);
          else server.status = 'running';
        });
        return send(200, { action: this.actionJson(action) });
      }
    }
    if (method === 'POST' && (m = path.match(/^\/servers\/(\d+)\/actions\/create_image$/))) {
      const server = project.servers.get(Number(m[1]));
      if (!server) return error(404, 'not_found', 'server not found');
      if (body?.type !== 'snapshot') return error(422, 'invalid_input', 'type must be snapshot');
      const image: Image = {
        id: this.id(),
        type: 'snapshot',
        name: null,
        status: 'creating',
        image_size: null,
        description: body.description ?? '',
        labels: body.labels ?? {},
        created_from: server.id,
      };
      project.snapshots.set(image.id, image);
      const action = this.action('create_image', (ok) => {
        if (ok) {
          image.status = 'available';
          image.image_size = this.snapshotSizeGb;
        } else {
          image.status = 'unavailable';
        }
      });
      return send(201, { image: this.imageJson(image), action: this.actionJson(action) });
    }
    if (method === 'GET' && (m = path.match(/^\/actions\/(\d+)$/))) {
      const action = this.actions.get(Number(m[1]));
      if (!action) return error(404, 'not_found', 'action not found');
      if (action.status === 'running') {
        if (action.pollsLeft <= 1) this.finish(action);
        else action.pollsLeft--;
      }
      return send(200, { action: this.actionJson(action) });
    }
    return error(404, 'not_found', `no route ${method} ${path}`);
  }

  /** Makes every action that is still running finish (as if time passed at the provider). */
  finishActions(): void {
    for (const a of this.actions.values()) this.finish(a);
  }
}
