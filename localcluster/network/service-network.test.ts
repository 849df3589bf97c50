import type { V1Pod } from '@kubernetes/client-node';
import { withAnnounced } from './service-network';

const pod = (uid: string, podIP?: string): V1Pod => ({
  metadata: { uid, name: uid, namespace: 'ns' },
  spec: { containers: [], hostname: uid, subdomain: 'peer' },
  status: podIP ? { podIP } : {},
});

describe('withAnnounced', () => {
  test('an announced address stands in until the Pod status has one, then is forgotten', () => {
    const announced = new Map([['a', { pod: pod('a'), ip: '127.1.0.5', at: 0 }]]);
    expect(withAnnounced([pod('a')], announced, 1000).map((p) => p.status?.podIP)).toEqual(['127.1.0.5']);
    expect(announced.size).toBe(1);
    expect(withAnnounced([pod('a', '127.1.0.5')], announced, 2000).map((p) => p.status?.podIP)).toEqual([
      '127.1.0.5',
    ]);
    expect(announced.size).toBe(0);
  });

  test('a Pod the informer has not seen yet is published from its announcement', () => {
    const announced = new Map([['new', { pod: pod('new'), ip: '127.1.0.9', at: 0 }]]);
    const out = withAnnounced([pod('old', '127.1.0.2')], announced, 10);
    expect(out.map((p) => [p.metadata?.uid, p.status?.podIP])).toEqual([
      ['old', '127.1.0.2'],
      ['new', '127.1.0.9'],
    ]);
  });

  test('an announcement never confirmed expires after a minute', () => {
    const announced = new Map([['gone', { pod: pod('gone'), ip: '127.1.0.7', at: 0 }]]);
    expect(withAnnounced([], announced, 60_001)).toEqual([]);
    expect(announced.size).toBe(0);
  });
});
