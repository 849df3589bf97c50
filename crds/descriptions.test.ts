// `kubectl explain` reads the CRDs' descriptions: every field of every API object must say what it is for. (The
// apiserver itself checks what a schema may say; test/localcluster/crd-validation.test.ts installs these.)
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';

interface Node {
  description?: string;
  properties?: Record<string, Node>;
  items?: Node;
  additionalProperties?: Node | boolean;
}

/** Every path in the schema whose node has no description, as kubectl explain would name it. */
function undescribed(node: Node, path: string): string[] {
  const own = node.description?.trim() ? [] : [path];
  const children = [
    ...Object.entries(node.properties ?? {}).map(([k, v]) => undescribed(v, `${path}.${k}`)),
    ...(node.items ? [undescribed(node.items, `${path}[]`)] : []),
    ...(typeof node.additionalProperties === 'object'
      ? [undescribed(node.additionalProperties, `${path}{}`)]
      : []),
  ];
  return [...own, ...children.flat()];
}

const files = readdirSync(__dirname).filter((f) => f.endsWith('.yaml'));

test('the CRDs are all here', () => {
  expect(files.sort()).toEqual(['etcdcluster.yaml', 'etcdsnapshot.yaml', 'etcdsnapshotschedule.yaml']);
});

// The apiserver refuses anything but a type on metadata (kubectl explain describes ObjectMeta itself).
const EXEMPT = ['.metadata'];

test.each(files)('%s: every field has a description', (file) => {
  const crd = parse(readFileSync(join(__dirname, file), 'utf8')) as {
    spec: { names: { kind: string }; versions: { schema: { openAPIV3Schema: Node } }[] };
  };
  for (const v of crd.spec.versions) {
    const kind = crd.spec.names.kind;
    expect(
      undescribed(v.schema.openAPIV3Schema, kind).filter((p) => !EXEMPT.includes(p.slice(kind.length))),
    ).toEqual([]);
  }
});

test('the check finds a field without a description', () => {
  expect(
    undescribed(
      {
        description: 'x',
        properties: { a: { description: 'a', items: { properties: { b: {} } } } },
        additionalProperties: {},
      },
      'K',
    ),
  ).toEqual(['K.a[]', 'K.a[].b', 'K{}']);
});
