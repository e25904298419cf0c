import { patterned } from '../../http/schemas.js';
import { Type, type Static } from '@sinclair/typebox';
import { closed, DiscriminatedUnion, RESOURCE_KINDS, StringEnum, VARIABLE_FILTER_KEY } from './common.js';
import { VariableInput } from './variables.js';

const Label = Type.String({ minLength: 1, maxLength: 100 });
export const TimeFilter = Type.Object({ kind: Type.Literal('time'), key: Type.Literal('time'), label: Label }, { ...closed, title: 'TimeFilter' });

export const ComparisonFilter = Type.Object({ kind: Type.Literal('comparison'), key: Type.Literal('comparison'), label: Label }, { ...closed, title: 'ComparisonFilter' });

export const ResourceFilter = Type.Object(
  { kind: Type.Literal('resource'), key: StringEnum(RESOURCE_KINDS), resource: StringEnum(RESOURCE_KINDS), label: Label },
  { ...closed, title: 'ResourceFilter' },
);

export const StatusFilter = Type.Object(
  {
    kind: Type.Literal('status'),
    key: Type.Literal('status'),
    label: Label,
    options: Type.Array(Type.String({ minLength: 1, maxLength: 100 }), { minItems: 1, maxItems: 100 }),
  },
  { ...closed, title: 'StatusFilter' },
);

export const VariableFilter = Type.Object(
  {
    kind: Type.Literal('variable'),
    key: Type.String(patterned(`^${VARIABLE_FILTER_KEY}$`, 'var. followed by a variable key, such as var.region (a lower-case letter, then up to 31 of a-z, 0-9 and _)', 'var.region')),
    input: VariableInput,
  },
  { ...closed, title: 'VariableFilter' },
);

export const FilterDefinition = DiscriminatedUnion('kind', [TimeFilter, ComparisonFilter, ResourceFilter, StatusFilter, VariableFilter], {
  title: 'FilterDefinition',
  description: 'A dashboard filter, discriminated by `kind`',
});
export type FilterDefinition = Static<typeof FilterDefinition>;

export const MAX_FILTER_DEFINITIONS = 24;

export const FilterDefinitions = Type.Array(FilterDefinition, {
  maxItems: MAX_FILTER_DEFINITIONS,
  description: `At most ${MAX_FILTER_DEFINITIONS}; keys unique (422, 7105)`,
});
