import { Type, type SchemaOptions, type Static, type TObject, type TSchema, type TUnion } from '@sinclair/typebox';

/**
 * A union discriminated by one property, as `oneOf` + `discriminator`. TypeBox's own union
 * is `anyOf`, for which ajv reports every branch's errors at once; with a discriminator ajv
 * checks only the branch the tag names, so a 422 names the one field that is wrong.
 */
export function DiscriminatedUnion<T extends TObject[]>(propertyName: string, variants: [...T], options: SchemaOptions & { title: string }) {
  // Each variant is named (the union's title and its tag: `BindingInherit`) so that the OpenAPI
  // document can give it a component the discriminator maps to (src/http/openapi-document.ts).
  const named = variants.map((v) => (v.title ? v : { ...v, title: `${options.title}${pascal(String(v.properties[propertyName]?.const ?? ''))}` }));
  // `type` is not redundant: ajv's discriminator applies to objects only and stands in for
  // the oneOf, so without it a string or a number would pass.
  return Type.Unsafe<Static<TUnion<T>>>({ ...options, type: 'object', oneOf: named, discriminator: { propertyName } });
}

const pascal = (tag: string) =>
  tag
    .split(/[^A-Za-z0-9]+/)
    .map((w) => w.charAt(0).toUpperCase() + w.slice(1))
    .join('');

/** A string of a fixed set: one `enum`, so a bad value gets one message listing the allowed ones. */
export function StringEnum<const V extends readonly string[]>(values: V, options: SchemaOptions = {}) {
  return Type.Unsafe<V[number]>({ ...options, type: 'string', enum: [...values] });
}

/** A string of a fixed set, or null. */
export function NullableStringEnum<const V extends readonly string[]>(values: V, options: SchemaOptions = {}) {
  return Type.Unsafe<V[number] | null>({ ...options, type: ['string', 'null'], enum: [...values, null] });
}

export function Nullable<T extends TSchema>(schema: T, options: SchemaOptions = {}) {
  return Type.Union([schema, Type.Null()], options);
}

/** Options of an object the spec allows "no extra properties". */
export const closed = { additionalProperties: false } as const;

/** A JSON object whose content the API does not interpret. */
export const FreeFormObject = (description: string) => Type.Object({}, { additionalProperties: true, description });

export const RESOURCE_KINDS = ['cluster', 'install', 'product', 'package', 'region'] as const;

/** `^var\.[a-z][a-z0-9_]{0,31}$`: a variable filter's key, as filters and bindings name it. */
export const VARIABLE_FILTER_KEY = 'var\\.[a-z][a-z0-9_]{0,31}';
