import { ErrorCodes, type ErrorEntry } from '../shared/errors.js';
import type { ComputeProvider } from './provider/types.js';
import type { Glob } from './configs/glob.js';

/** Longer than any image name a provider uses: not worth asking about. */
const MAX_IMAGE_NAME = 255;

const entry = (field: string, message: string): ErrorEntry => ({ code: ErrorCodes.VALIDATION_FAILED.code, message, path: ['body', field] });

/** What a new compute config names that the provider does not offer: one 422 entry per field. */
export async function configViolations(provider: ComputeProvider, c: { region: string; image: string; filter: Glob }): Promise<ErrorEntry[]> {
  const [locations, types, image] = await Promise.all([
    provider.listLocations(),
    provider.listServerTypes(),
    c.image.length <= MAX_IMAGE_NAME ? provider.findImage(c.image) : Promise.resolve(null),
  ]);
  const out: ErrorEntry[] = [];
  const regionOk = locations.includes(c.region);
  if (!regionOk) out.push(entry('region', `region must be one of the provider's locations: ${locations.join(', ')}`));
  if (!image) out.push(entry('image', 'image is not an image the provider offers'));
  const offered = regionOk ? types.filter((t) => t.prices.some((p) => p.location === c.region)) : types;
  if (!offered.some((t) => c.filter.test(t.name))) {
    const where = regionOk ? ` offered in ${c.region}` : '';
    out.push(entry('machine_type_filter', `machine_type_filter matches none of the provider's server types${where}: ${offered.map((t) => t.name).join(', ')}`));
  }
  return out;
}

/** Why a server type cannot be used with a config, or null when it can. */
export async function serverTypeProblem(provider: ComputeProvider, config: { region: string; machine_type_filter: string }, filter: Glob, serverType: string): Promise<string | null> {
  if (!filter.test(serverType)) return `server_type does not match the compute config's machine_type_filter "${config.machine_type_filter}"`;
  const type = (await provider.listServerTypes()).find((t) => t.name === serverType);
  if (!type) return 'server_type is not a server type of the provider';
  if (!type.prices.some((p) => p.location === config.region)) return `server_type is not offered in the config's region ${config.region}`;
  return null;
}
