import { Type, type Static } from '@sinclair/typebox';
import { ListEnvelope, PathId } from '../../http/schemas.js';

export const Region = Type.Object(
  {
    id: Type.String({ description: "The provider's location code, e.g. `fsn1`: what a compute config's `region` and a cluster's `region` name" }),
    name: Type.String({ description: 'In words, e.g. `Falkenstein DC Park 1`' }),
    country: Type.String({ description: 'ISO 3166-1 alpha-2 country code, e.g. `DE`' }),
    city: Type.String({ description: 'e.g. `Falkenstein`' }),
    network_zone: Type.String({ description: "The provider's network zone, e.g. `eu-central`" }),
    server_types: Type.Array(Type.String(), {
      description: 'The server types offered here (GET /v1/compute/catalog has their sizes and prices): a machine of a config of this region can only be one of these',
      examples: [['cx22', 'cx32', 'cpx11', 'cax11']],
    }),
  },
  { title: 'Region', additionalProperties: false },
);
export type Region = Static<typeof Region>;

export const RegionList = ListEnvelope(Region, "The provider's locations, in the provider's order: one page, `has_more` false");

export const RegionParams = Type.Object({ id: PathId(64, 'Region id: a location code such as `fsn1`') });
