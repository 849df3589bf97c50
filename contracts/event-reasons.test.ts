// The Event catalog and docs/status.md agree: every reason in contracts/event-reasons.ts has a row, on the right object and type, and no row names a reason the catalog lacks.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { OPERATION_TYPES } from '../crds/etcd-cluster';
import { allEventReasons } from './event-reasons';

const doc = readFileSync(join(__dirname, '..', 'docs', 'status.md'), 'utf8');
const section = doc.slice(doc.indexOf('# Events reference'));
/** The table rows: reason, object, type (Prettier pads the cells). */
const rows = [...section.matchAll(/^\| `([^`]+)` +\| (\w+) +\| (\w+) +\|/gm)].map(
  ([, reason, object, type]) => ({
    reason: reason ?? '',
    object,
    type,
  }),
);
const OPERATION_STARTED = '<Operation>Started';

describe('docs/status.md, Events reference', () => {
  test.each(
    allEventReasons().filter((r) => !r.reason.endsWith('Started') || r.info.object !== 'EtcdCluster'),
  )('explains the Event $reason', ({ reason, info }) => {
    expect(rows).toContainEqual({ reason, object: info.object, type: info.type });
  });
  test('explains the per-operation Started Events in one row, and the catalog has one per operation type', () => {
    expect(rows).toContainEqual({ reason: OPERATION_STARTED, object: 'EtcdCluster', type: 'Normal' });
    const started = allEventReasons().filter(
      (r) => r.reason.endsWith('Started') && r.info.object === 'EtcdCluster',
    );
    expect(started.map((r) => r.reason)).toEqual(OPERATION_TYPES.map((t) => `${t}Started`));
  });
  test('lists no reason the catalog lacks', () => {
    const known = new Set<string>([OPERATION_STARTED, ...allEventReasons().map((r) => r.reason)]);
    expect(rows.map((r) => r.reason).filter((r) => !known.has(r))).toEqual([]);
  });
});
