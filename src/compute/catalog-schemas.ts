import { Type, type Static } from '@sinclair/typebox';

const Named = (what: string, example: string, words: string) =>
  Type.Object(
    { id: Type.String({ description: `The ${what} as a compute config names it, e.g. \`${example}\`` }), name: Type.String({ description: `In words, e.g. \`${words}\`` }) },
    { additionalProperties: false },
  );

const Cents = (description: string) => Type.Integer({ minimum: 0, description });

export const ComputeCatalog = Type.Object(
  {
    provider: Type.String({ description: 'The provider id (what `provider` of a compute config must be)' }),
    regions: Type.Array(Named('region', 'fsn1', 'Falkenstein DC Park 1')),
    images: Type.Array(Named('image', 'ubuntu-24.04', 'Ubuntu 24.04')),
    server_types: Type.Array(
      Type.Object(
        {
          id: Type.String({ description: 'The server type as `server_type` and `machine_type_filter` name it, e.g. `cx22`' }),
          cores: Type.Number({ description: 'Virtual CPU cores' }),
          memory_gb: Type.Number({ description: 'Memory, GB' }),
          disk_gb: Type.Number({ description: 'Local disk, GB' }),
          architecture: Type.String({ description: '`x86` or `arm`' }),
          monthly_price_cents: Cents("The lowest gross monthly price over its regions, in cents of the provider's currency (EUR)"),
          prices: Type.Array(
            Type.Object(
              { region: Type.String({ description: 'A region id the type is offered in' }), monthly_price_cents: Cents('Gross monthly price there, in cents') },
              { additionalProperties: false },
            ),
            { description: 'One entry per region the type is offered in: a machine of the type can be made only there' },
          ),
        },
        { additionalProperties: false },
      ),
    ),
  },
  { title: 'ComputeCatalog', additionalProperties: false },
);
export type ComputeCatalog = Static<typeof ComputeCatalog>;
