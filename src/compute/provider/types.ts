/**
 * What the platform needs from an infrastructure provider, in the provider's own terms
 * (servers, snapshot images, actions). Two implementations: the HTTP adapter for the
 * Hetzner Cloud API and the embedded simulation used when no provider URL is configured.
 */

export interface ServerTypePrice {
  location: string;
  /** Gross monthly price in the provider's currency (EUR), as a number. */
  monthlyGross: number;
}

export interface ServerType {
  name: string;
  cores: number;
  memoryGb: number;
  diskGb: number;
  /** `x86` or `arm`. */
  architecture: string;
  /** One entry per location the type is offered in. */
  prices: ServerTypePrice[];
}

export interface ProviderLocation {
  name: string;
  /** In words: `Falkenstein DC Park 1`. */
  description: string;
  /** ISO 3166-1 alpha-2 country code: `DE`. */
  country: string;
  city: string;
  /** The provider's network zone (`eu-central`): private networks span one zone. */
  networkZone: string;
}

/** An image a server can be created from by name (a system or app image). */
export interface NamedImage {
  name: string;
  description: string;
}

export interface ProviderServer {
  id: number;
  name: string;
  status: string;
  serverType: string;
  location: string;
  ipv4: string | null;
}

export interface ProviderImage {
  id: number;
  type: 'system' | 'snapshot' | 'backup' | 'app';
  name: string | null;
  status: 'available' | 'creating' | 'unavailable';
  /** GB; null until a snapshot is complete. */
  sizeGb: number | null;
}

export type ActionStatus = 'running' | 'success' | 'error';

export interface ProviderAction {
  id: number;
  status: ActionStatus;
  /** Set when status is error. */
  error: { code: string; message: string } | null;
}

/** Labels the platform puts on what it creates, so a retried job finds its earlier work. */
export type Labels = Record<string, string>;

export interface ComputeProvider {
  listLocations(): Promise<ProviderLocation[]>;
  listServerTypes(): Promise<ServerType[]>;
  /** The images a server can be made from by name, each name once. */
  listImages(): Promise<NamedImage[]>;
  /** Gross price of snapshot storage per GB and month (EUR). */
  snapshotPricePerGbMonth(): Promise<number>;

  createServer(req: { name: string; serverType: string; image: string | number; location: string; labels: Labels; userData?: string }): Promise<{ server: ProviderServer; action: ProviderAction }>;
  /** Null when it does not exist. */
  getServer(id: number): Promise<ProviderServer | null>;
  findServers(labels: Labels): Promise<ProviderServer[]>;
  /** Null when the server was already gone. */
  deleteServer(id: number): Promise<ProviderAction | null>;

  createSnapshot(serverId: number, req: { description: string; labels: Labels }): Promise<{ image: ProviderImage; action: ProviderAction }>;
  getImage(id: number): Promise<ProviderImage | null>;
  findSnapshots(labels: Labels): Promise<ProviderImage[]>;
  /** False when the image was already gone. */
  deleteImage(id: number): Promise<boolean>;

  getAction(id: number): Promise<ProviderAction>;
}

/**
 * How a provider failure is treated:
 * - `rejected`: the request itself is at fault (invalid input, a limit, refused credentials):
 *   repeating it cannot help;
 * - `unavailable`: the provider is at fault or busy (5xx, timeout, network, locked resource,
 *   maintenance, rate limit): retry later, not before `retryAfterSeconds` when given.
 */
export type ProviderFailure = 'rejected' | 'unavailable';

export class ProviderError extends Error {
  constructor(
    readonly failure: ProviderFailure,
    /** The provider's error code (`invalid_input`, `rate_limit_exceeded`, ...) or `timeout` / `network`. */
    readonly providerCode: string,
    message: string,
    readonly retryAfterSeconds: number | null = null,
  ) {
    super(message);
  }
}

/** Gives the provider for an account: the platform's (null) or a workspace's own token. */
export interface ProviderAccounts {
  readonly providerId: string;
  forToken(token: string | null): ComputeProvider;
}
