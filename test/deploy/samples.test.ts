// Every sample in deploy/samples is accepted by the real API server as written (schema and CEL, a server-side dry
// run in a namespace of its own): a sample the docs tell users to apply must not be refused.
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot } from '../../localcluster/stack-info';
import { connect, freshNamespace } from '../support/cluster-harness';

const dir = join(repoRoot(), 'deploy', 'samples');
const samples = readdirSync(dir).filter((f) => f.endsWith('.yaml'));

test('there are samples to check', () => {
  expect(samples).toContain('etcdcluster.yaml');
});

test.each(samples)('deploy/samples/%s is accepted by the API server', async (file) => {
  const h = connect();
  const ns = await freshNamespace(h, 'samples');
  // The samples name `default`; the dry run puts each into the test's namespace instead.
  const text = readFileSync(join(dir, file), 'utf8').replace(
    /^(\s*)namespace: default$/gm,
    `$1namespace: ${ns}`,
  );
  const out = execFileSync(
    h.stack.tools.kubectl,
    ['--kubeconfig', h.stack.kubeconfig, 'apply', '--dry-run=server', '-n', ns, '-f', '-'],
    { encoding: 'utf8', input: text },
  );
  expect(out).toMatch(/created \(server dry run\)/);
});
