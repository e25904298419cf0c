import { ProviderError, type ComputeProvider, type Labels, type ProviderAction, type ProviderImage, type ProviderServer, type ServerType } from './types.js';

/** The catalog of docs/spec-gaps.md, "Compute": what the embedded provider offers. */
const LOCATION_INFO: Record<string, { description: string; country: string; city: string; networkZone: string }> = {
  fsn1: { description: 'Falkenstein DC Park 1', country: 'DE', city: 'Falkenstein', networkZone: 'eu-central' },
  nbg1: { description: 'Nuremberg DC Park 1', country: 'DE', city: 'Nuremberg', networkZone: 'eu-central' },
  hel1: { description: 'Helsinki DC Park 1', country: 'FI', city: 'Helsinki', networkZone: 'eu-central' },
};
const LOCATIONS = Object.keys(LOCATION_INFO);
const SERVER_TYPES: { name: string; cores: number; memoryGb: number; diskGb: number; architecture: string; monthlyGross: number }[] = [
  { name: 'cx22', cores: 2, memoryGb: 4, diskGb: 40, architecture: 'x86', monthlyGross: 4.59 },
  { name: 'cx32', cores: 4, memoryGb: 8, diskGb: 80, architecture: 'x86', monthlyGross: 7.59 },
  { name: 'cpx11', cores: 2, memoryGb: 2, diskGb: 40, architecture: 'x86', monthlyGross: 5.18 },
  { name: 'cax11', cores: 2, memoryGb: 4, diskGb: 40, architecture: 'arm', monthlyGross: 4.59 },
];
const IMAGE_NAMES: Record<string, string> = { 'ubuntu-24.04': 'Ubuntu 24.04', 'debian-12': 'Debian 12' };
const SYSTEM_IMAGES = Object.keys(IMAGE_NAMES);
const SNAPSHOT_PRICE_PER_GB_MONTH = 0.0119;

interface Project {
  servers: Map<number, ProviderServer & { labels: Labels; diskGb: number }>;
  snapshots: Map<number, ProviderImage & { labels: Labels }>;
}

const matches = (have: Labels, want: Labels) => Object.entries(want).every(([k, v]) => have[k] === v);

/**
 * An in-memory provider with the same interface as the HTTP adapter, so `npm start` works
 * offline. Every action finishes at once. Each token is a project of its own, as at Hetzner.
 */
export class SimulatedProvider implements ComputeProvider {
  private static nextId = 1000;
  private readonly actions = new Map<number, ProviderAction>();

  constructor(private readonly project: Project = { servers: new Map(), snapshots: new Map() }) {}

  static projects(): (token: string | null) => SimulatedProvider {
    const byToken = new Map<string, SimulatedProvider>();
    return (token) => {
      const key = token ?? '';
      let p = byToken.get(key);
      if (!p) byToken.set(key, (p = new SimulatedProvider()));
      return p;
    };
  }

  private done(): ProviderAction {
    const action: ProviderAction = { id: SimulatedProvider.nextId++, status: 'success', error: null };
    this.actions.set(action.id, action);
    return action;
  }

  async listLocations() {
    return LOCATIONS.map((name) => ({ name, ...LOCATION_INFO[name]! }));
  }

  async listServerTypes(): Promise<ServerType[]> {
    return SERVER_TYPES.map(({ monthlyGross, ...t }) => ({ ...t, prices: LOCATIONS.map((location) => ({ location, monthlyGross })) }));
  }

  async listImages() {
    return SYSTEM_IMAGES.map((name) => ({ name, description: IMAGE_NAMES[name]! }));
  }

  async snapshotPricePerGbMonth() {
    return SNAPSHOT_PRICE_PER_GB_MONTH;
  }

  async createServer(req: { name: string; serverType: string; image: string | number; location: string; labels: Labels }) {
    const type = SERVER_TYPES.find((t) => t.name === req.serverType);
    const fromSnapshot = typeof req.image === 'number' ? this.project.snapshots.get(req.image) : undefined;
    const imageOk = typeof req.image === 'number' ? !!fromSnapshot : SYSTEM_IMAGES.includes(req.image);
    if (!type || !LOCATIONS.includes(req.location) || !imageOk) {
      throw new ProviderError('rejected', 'invalid_input', 'server_type, image or location is not valid');
    }
    const id = SimulatedProvider.nextId++;
    const server = {
      id,
      name: req.name,
      status: 'running',
      serverType: req.serverType,
      location: req.location,
      ipv4: `10.${(id >> 16) & 255}.${(id >> 8) & 255}.${id & 255}`,
      labels: { ...req.labels },
      diskGb: type.diskGb,
    };
    this.project.servers.set(id, server);
    return { server: strip(server), action: this.done() };
  }

  async getServer(id: number) {
    const s = this.project.servers.get(id);
    return s ? strip(s) : null;
  }

  async findServers(labels: Labels) {
    return [...this.project.servers.values()].filter((s) => matches(s.labels, labels)).map(strip);
  }

  async deleteServer(id: number) {
    return this.project.servers.delete(id) ? this.done() : null;
  }

  async createSnapshot(serverId: number, req: { description: string; labels: Labels }) {
    const server = this.project.servers.get(serverId);
    if (!server) {
      throw new ProviderError('rejected', 'not_found', 'server not found');
    }
    const image = { id: SimulatedProvider.nextId++, type: 'snapshot' as const, name: null, status: 'available' as const, sizeGb: server.diskGb / 20, labels: { ...req.labels } };
    this.project.snapshots.set(image.id, image);
    return { image: stripImage(image), action: this.done() };
  }

  async getImage(id: number) {
    const i = this.project.snapshots.get(id);
    return i ? stripImage(i) : null;
  }

  async findSnapshots(labels: Labels) {
    return [...this.project.snapshots.values()].filter((i) => matches(i.labels, labels)).map(stripImage);
  }

  async deleteImage(id: number) {
    return this.project.snapshots.delete(id);
  }

  async getAction(id: number): Promise<ProviderAction> {
    return this.actions.get(id) ?? { id, status: 'success', error: null };
  }
}

function strip(s: ProviderServer & { labels: Labels; diskGb: number }): ProviderServer {
  return { id: s.id, name: s.name, status: s.status, serverType: s.serverType, location: s.location, ipv4: s.ipv4 };
}

function stripImage(i: ProviderImage & { labels: Labels }): ProviderImage {
  return { id: i.id, type: i.type, name: i.name, status: i.status, sizeGb: i.sizeGb };
}
