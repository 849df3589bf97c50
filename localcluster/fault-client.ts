// Typed client of a stack's fault-control endpoint, for tests: each call returns once the daemon has applied the fault, or throws its error message.
import { faultRequest, type FaultCommand } from './fault-command';
import { readStackInfo } from './stack-info';

export interface FaultNode {
  name: string;
  zone: string;
  down: boolean;
}

export class FaultClient {
  constructor(private readonly baseUrl: string) {}

  /** The client of the stack whose stack.json is at `stackJson` (e.g. `.local/stack.json`). */
  static forStack(stackJson: string): FaultClient {
    const info = readStackInfo(stackJson);
    if (!info?.faultControlUrl)
      throw new Error(`no running stack with fault control at ${stackJson}; run \`npm run up\``);
    return new FaultClient(info.faultControlUrl);
  }

  listNodes(): Promise<FaultNode[]> {
    return this.send({ kind: 'list-nodes' }) as Promise<FaultNode[]>;
  }
  async nodeDown(node: string): Promise<void> {
    await this.send({ kind: 'node', node, action: 'down' });
  }
  async nodeUp(node: string): Promise<void> {
    await this.send({ kind: 'node', node, action: 'up' });
  }
  async crashContainer(namespace: string, pod: string, container?: string): Promise<void> {
    await this.send({ kind: 'container', namespace, pod, container, action: 'crash' });
  }
  async freezeContainer(namespace: string, pod: string, container?: string): Promise<void> {
    await this.send({ kind: 'container', namespace, pod, container, action: 'freeze' });
  }
  async thawContainer(namespace: string, pod: string, container?: string): Promise<void> {
    await this.send({ kind: 'container', namespace, pod, container, action: 'thaw' });
  }
  async wipeClaim(namespace: string, claim: string): Promise<void> {
    await this.send({ kind: 'wipe-claim', namespace, claim });
  }

  private async send(command: FaultCommand): Promise<unknown> {
    const { method, path } = faultRequest(command);
    const res = await fetch(`${this.baseUrl}${path}`, { method });
    const text = await res.text();
    if (!res.ok) throw new Error(`fault ${method} ${path} failed (${res.status}): ${text}`);
    return text ? (JSON.parse(text) as unknown) : undefined;
  }
}
