import { ErrorCodes, type ErrorEntry } from '../shared/errors.js';
import type { Clock } from '../shared/clock.js';
import type { ComputeProvider, ProviderAccounts, ServerType } from './provider/types.js';
import type { Glob } from './configs/glob.js';
import type { ComputeCatalog } from './catalog-schemas.js';
import type { Region } from './regions/schemas.js';

/** How long an answer of the provider's catalog is used before it is asked again. */
export const CATALOG_TTL_SECONDS = 60;

/** docs/spec-gaps.md, "Lifecycles"'s catalog, in the provider's words (prices in cents of its currency, gross): the route's schema. */
export type Catalog = ComputeCatalog;

const cents = (gross: number) => Math.round(gross * 100);

function serverTypeOf(t: ServerType): Catalog['server_types'][number] {
  const prices = t.prices.filter((p) => Number.isFinite(p.monthlyGross)).map((p) => ({ region: p.location, monthly_price_cents: cents(p.monthlyGross) }));
  return {
    id: t.name,
    cores: t.cores,
    memory_gb: t.memoryGb,
    disk_gb: t.diskGb,
    architecture: t.architecture,
    monthly_price_cents: prices.length > 0 ? Math.min(...prices.map((p) => p.monthly_price_cents)) : 0,
    prices,
  };
}

/** One provider read: the catalog, and the regions as GET /v1/regions shows them (the same answer, so they always agree). */
interface Offer {
  catalog: Catalog;
  regions: Region[];
}

async function readOffer(providerId: string, provider: ComputeProvider): Promise<Offer> {
  const [locations, types, images] = await Promise.all([provider.listLocations(), provider.listServerTypes(), provider.listImages()]);
  const catalog: Catalog = {
    provider: providerId,
    regions: locations.map((l) => ({ id: l.name, name: l.description })),
    images: images.map((i) => ({ id: i.name, name: i.description })),
    server_types: types.map(serverTypeOf),
  };
  const regions = locations.map((l) => ({
    id: l.name,
    name: l.description,
    country: l.country,
    city: l.city,
    network_zone: l.networkZone,
    // The types with a price there: the provider makes a server of a type only where it prices it.
    server_types: catalog.server_types.filter((t) => t.prices.some((p) => p.region === l.name)).map((t) => t.id),
  }));
  return { catalog, regions };
}

export interface CatalogSource {
  /** The provider's catalog, at most CATALOG_TTL_SECONDS old; a provider failure is thrown (ProviderError), never kept. */
  get(): Promise<Catalog>;
  /** The provider's locations as regions, from the same read as get() (the same freshness). */
  regions(): Promise<Region[]>;
}

/**
 * The catalog through the platform's account (what is offered is the same for every account),
 * shared by the requests of this process: one provider round at a time, its answer kept briefly.
 */
export function catalogSource(accounts: ProviderAccounts, clock: Clock): CatalogSource {
  let kept: { offer: Offer; until: number } | null = null;
  let pending: Promise<Offer> | null = null;
  const offer = (): Promise<Offer> => {
    if (kept && clock.nowMs() < kept.until) return Promise.resolve(kept.offer);
    pending ??= readOffer(accounts.providerId, accounts.forToken(null))
      .then((read) => {
        kept = { offer: read, until: clock.nowMs() + CATALOG_TTL_SECONDS * 1000 };
        return read;
      })
      .finally(() => {
        pending = null;
      });
    return pending;
  };
  return {
    get: async () => (await offer()).catalog,
    regions: async () => (await offer()).regions,
  };
}

const entry = (field: string, message: string): ErrorEntry => ({ code: ErrorCodes.VALIDATION_FAILED.code, message, path: ['body', field] });
const ids = (list: { id: string }[]) => list.map((x) => x.id).join(', ');

/** What a new compute config names that the provider does not offer: one 422 entry per field, each listing what is. */
export function configViolations(catalog: Catalog, c: { region: string; image: string; filter: Glob }): ErrorEntry[] {
  const out: ErrorEntry[] = [];
  const regionOk = catalog.regions.some((r) => r.id === c.region);
  if (!regionOk) out.push(entry('region', `region must be one of the provider's regions: ${ids(catalog.regions)}`));
  if (!catalog.images.some((i) => i.id === c.image)) out.push(entry('image', `image must be one of the provider's images: ${ids(catalog.images)}`));
  const offered = regionOk ? catalog.server_types.filter((t) => t.prices.some((p) => p.region === c.region)) : catalog.server_types;
  if (!offered.some((t) => c.filter.test(t.id))) {
    const where = regionOk ? ` offered in ${c.region}` : '';
    out.push(entry('machine_type_filter', `machine_type_filter matches none of the provider's server types${where}: ${ids(offered)}`));
  }
  return out;
}

/** Why a server type cannot be used with a config (naming the ones that can), or null when it can. */
export function serverTypeProblem(catalog: Catalog, config: { region: string; machine_type_filter: string }, filter: Glob, serverType: string): string | null {
  const usable = catalog.server_types.filter((t) => filter.test(t.id) && t.prices.some((p) => p.region === config.region));
  if (usable.some((t) => t.id === serverType)) return null;
  const choices = usable.length > 0 ? ids(usable) : 'none (the provider offers no server type of the filter there any more)';
  const known = catalog.server_types.find((t) => t.id === serverType);
  const why = !filter.test(serverType)
    ? `does not match the compute config's machine_type_filter "${config.machine_type_filter}"`
    : !known
      ? 'is not a server type of the provider'
      : `is not offered in the config's region ${config.region}`;
  return `server_type ${why}; this config can use: ${choices}`;
}
