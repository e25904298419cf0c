import { patterned } from '../../http/schemas.js';
import { Type, type Static } from '@sinclair/typebox';
import { closed, DiscriminatedUnion, VARIABLE_FILTER_KEY } from './common.js';

const FILTER_KEY = `^(time|comparison|cluster|install|product|package|region|status|${VARIABLE_FILTER_KEY})$`;

export const Binding = DiscriminatedUnion(
  'mode',
  [
    Type.Object(
      {
        mode: Type.Literal('inherit'),
        filter_key: Type.String({
          ...patterned(FILTER_KEY, 'one of time, comparison, cluster, install, product, package, region, status, or var. followed by a variable key (var.region)', 'region'),
          description: 'time, comparison, cluster, install, product, package, region, status, or var.<name>',
        }),
      },
      { ...closed, description: "Takes the value of the dashboard's filter with this key" },
    ),
    Type.Object({ mode: Type.Literal('fixed'), value: Type.Unknown({ description: 'Any JSON value' }) }, { ...closed, description: 'A fixed value' }),
    Type.Object({ mode: Type.Literal('unbound') }, { ...closed, description: 'No value' }),
  ],
  { title: 'Binding', description: 'Where an input gets its value, discriminated by `mode`' },
);
export type Binding = Static<typeof Binding>;

export const Bindings = (description: string) => Type.Record(Type.String(), Binding, { description });

export const FreshnessPolicy = DiscriminatedUnion(
  'mode',
  [Type.Object({ mode: Type.Literal('provider_default') }, closed), Type.Object({ mode: Type.Literal('max_age'), max_age_seconds: Type.Integer({ minimum: 30, maximum: 86400 }) }, closed)],
  { title: 'FreshnessPolicy', description: 'How old the data may be, discriminated by `mode`; max_age_seconds 30-86400' },
);

export const RefreshPolicy = DiscriminatedUnion(
  'mode',
  [
    Type.Object({ mode: Type.Literal('on_load') }, closed),
    Type.Object({ mode: Type.Literal('manual') }, closed),
    Type.Object({ mode: Type.Literal('interval'), interval_seconds: Type.Integer({ minimum: 60, maximum: 86400 }) }, closed),
  ],
  { title: 'RefreshPolicy', description: 'When the snippet runs again, discriminated by `mode`; interval_seconds 60-86400' },
);
