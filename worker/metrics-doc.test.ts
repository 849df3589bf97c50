// docs/metrics.md names every operator metric and, in its "Label values" table, exactly the values each label takes in the code.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ConditionTypes } from '../crds/conditions';
import { CONDITION_STATUSES, OPERATION_RESULTS, OPERATION_TYPES } from '../crds/etcd-cluster';
import { WATCH_SIGNAL_KINDS } from '../contracts/watch-signals';
import { createOperatorMetrics, VERIFICATION_LABEL_VALUES } from './operator-metrics';

const root = join(__dirname, '..');
const doc = readFileSync(join(root, 'docs', 'metrics.md'), 'utf8');

/** The backticked values in the "Label values" row of `label`. */
function documentedValues(label: string): string[] {
  const row = doc.split('\n').find((l) => l.startsWith(`| \`${label}\``)) ?? '';
  const cells = row.split('|').map((c) => c.trim());
  return [...(cells[2] ?? '').matchAll(/`([^`]+)`/g)].map((m) => m[1] ?? '');
}

/**
 * The resources the watchers hand to keepWatching: the `resource` label of the restart counter. They are literals
 * at the watch() calls, so they are read from there: a new watch shows up here without another list to keep.
 */
function watchedResources(): string[] {
  const files = ['watcher/cluster-watcher.ts', 'watcher/snapshot-watcher.ts'];
  return files.flatMap((f) =>
    [...readFileSync(join(root, f), 'utf8').matchAll(/\bwatch\('([a-z]+)'/g)].map((m) => m[1] ?? ''),
  );
}

describe('docs/metrics.md', () => {
  test.each<[string, readonly string[]]>([
    ['type', OPERATION_TYPES],
    ['result', OPERATION_RESULTS],
    ['kind', WATCH_SIGNAL_KINDS],
    ['resource', watchedResources()],
    ['condition', Object.values(ConditionTypes)],
    ['status', CONDITION_STATUSES],
    ['verification', VERIFICATION_LABEL_VALUES],
  ])('lists exactly the values of the %s label', (label, values) => {
    expect(values.length).toBeGreaterThan(0);
    expect([...documentedValues(label)].sort()).toEqual([...values].sort());
  });

  test('names every metric the operator registers', async () => {
    const text = await createOperatorMetrics().render();
    const names = [...text.matchAll(/^# HELP (etcd_conductor_[a-z_]+)/gm)].map((m) => m[1] ?? '');
    expect(names.length).toBeGreaterThan(10);
    for (const name of names) expect(doc).toContain(`\`${name}\``);
  });
});
