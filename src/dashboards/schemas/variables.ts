import { patterned } from '../../http/schemas.js';
import { Type, type Static, type TProperties } from '@sinclair/typebox';
import { DiscriminatedUnion, RESOURCE_KINDS, StringEnum } from './common.js';

/** Fields every variable input has; `kind` is the discriminator. */
const common = {
  key: Type.String({
    ...patterned('^[a-z][a-z0-9_]{0,31}$', 'a variable key such as region: a lower-case letter, then up to 31 of a-z, 0-9 and _', 'region'),
    description: 'Lower-case letter, then up to 31 of a-z, 0-9, _',
  }),
  label: Type.String({ minLength: 1, maxLength: 100 }),
  description: Type.Optional(Type.String({ maxLength: 500 })),
  required: Type.Optional(Type.Boolean()),
};

const variant = <K extends string, P extends TProperties>(kind: K, props: P, description: string) =>
  Type.Object({ kind: Type.Literal(kind), ...common, ...props }, { additionalProperties: false, description });

const ResourceValue = Type.String({ maxLength: 255 });

export const TimeRangeInput = variant(
  'time_range',
  {
    default: Type.Optional(Type.Object({ from: Type.Integer(), to: Type.Integer() }, { additionalProperties: false, description: 'Both bounds required' })),
  },
  'A time range',
);

export const ResourceInput = variant(
  'resource',
  {
    resource: StringEnum(RESOURCE_KINDS),
    // One schema with two types, not a union: string keywords apply to a string and array keywords
    // to an array, so a bad item is reported once at its own path, without the other branch's
    // "must be string" beside it. `array` comes first: the response serializer tries the types in
    // order, and its `string` would turn an array into "a,b".
    default: Type.Optional(
      Type.Unsafe<string | string[]>({
        type: ['array', 'string'],
        maxLength: ResourceValue.maxLength,
        items: ResourceValue,
        minItems: 1,
        maxItems: 100,
        description: 'One resource (at most 255 characters) or 1-100 of them',
      }),
    ),
    multiple: Type.Optional(Type.Boolean()),
  },
  'One or several resources of a kind',
);

export const EnumInput = variant(
  'enum',
  {
    options: Type.Array(Type.String({ minLength: 1, maxLength: 100 }), { minItems: 1, maxItems: 100 }),
    default: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
  },
  'One of a list of options',
);

export const BooleanInput = variant('boolean', { default: Type.Optional(Type.Boolean()) }, 'A yes/no switch');

export const NumberInput = variant('number', { min: Type.Optional(Type.Number()), max: Type.Optional(Type.Number()), default: Type.Optional(Type.Number()) }, 'A number');

export const TextInput = variant('text', { default: Type.Optional(Type.String({ maxLength: 500 })), max_length: Type.Optional(Type.Integer({ minimum: 1, maximum: 500 })) }, 'Free text');

export const VariableInput = DiscriminatedUnion('kind', [TimeRangeInput, ResourceInput, EnumInput, BooleanInput, NumberInput, TextInput], {
  title: 'VariableInput',
  description: 'The input of a variable filter, discriminated by `kind`',
});
export type VariableInput = Static<typeof VariableInput>;
