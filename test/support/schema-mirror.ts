// What the CRD tests share to compare a CRD's YAML schema with its TypeScript types: loading, walking and mirroring a schema.
//
// A Mirror<T> lists every field of T with its shape and whether it is required; mirrorOf reads the same from
// the YAML, so a field added, dropped or made optional on one side only fails the test that compares them.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';

export interface Schema {
  type?: string;
  properties?: Record<string, Schema>;
  additionalProperties?: Schema;
  items?: Schema;
  required?: string[];
  default?: unknown;
  enum?: unknown[];
  minimum?: number;
  maximum?: number;
  'x-kubernetes-int-or-string'?: boolean;
  'x-kubernetes-preserve-unknown-fields'?: boolean;
  'x-kubernetes-validations'?: { rule: string; message?: string; messageExpression?: string }[];
}

export type Shape = 'string' | 'integer' | 'boolean' | 'quantity' | 'object' | 'array' | 'map';

// `required` is computed from the TS type, so making a field optional on one side only is caught too.
export type Mirror<T> = {
  [K in keyof Required<T>]-?: { shape: Shape; required: object extends Pick<T, K> ? false : true };
};

/** The parsed CRD file `file` of crds/. */
export function loadCrd(file: string) {
  return parse(readFileSync(join(__dirname, '..', '..', 'crds', file), 'utf8'));
}

/** The sub-schema at `path`; `[]` steps into an array's items. */
export function at(schema: Schema, ...path: string[]): Schema {
  let s = schema;
  for (const p of path) {
    const next = p === '[]' ? s.items : s.properties?.[p];
    if (!next) throw new Error(`schema has no ${path.join('.')}`);
    s = next;
  }
  return s;
}

export function shapeOf(s: Schema): Shape {
  if (s['x-kubernetes-int-or-string']) return 'quantity';
  if (s.type === 'object' && s.additionalProperties) return 'map';
  return s.type as Shape;
}

// A TS field is required when the YAML requires it or the apiserver defaults it.
export function mirrorOf(s: Schema): Record<string, { shape: Shape; required: boolean }> {
  return Object.fromEntries(
    Object.entries(s.properties ?? {}).map(([name, field]) => [
      name,
      { shape: shapeOf(field), required: (s.required ?? []).includes(name) || field.default !== undefined },
    ]),
  );
}
