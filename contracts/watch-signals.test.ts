// docs/metrics.md lists every value the watch-signal counter's `kind` label takes.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { WATCH_SIGNAL_KINDS } from './watch-signals';

const row =
  readFileSync(join(__dirname, '..', 'docs', 'metrics.md'), 'utf8')
    .split('\n')
    .find((l) => l.startsWith('| `etcd_conductor_watch_changes_signalled_total`')) ?? '';

test.each(WATCH_SIGNAL_KINDS)('docs/metrics.md names the kind %s', (kind) => {
  expect(row).toContain(`\`${kind}\``);
});
