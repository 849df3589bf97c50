// Tells pod workers whether their node is up; while it is down they neither start processes nor talk to the API.

export interface NodeGate {
  isUp(): boolean;
  /** Resolves at once when up, otherwise when the node comes back up. */
  waitUp(): Promise<void>;
  setUp(up: boolean): void;
}

export function createNodeGate(): NodeGate {
  let up = true;
  let waiters: Array<() => void> = [];
  return {
    isUp: () => up,
    waitUp: () => (up ? Promise.resolve() : new Promise<void>((resolve) => waiters.push(resolve))),
    setUp: (next) => {
      up = next;
      if (up) {
        const ready = waiters;
        waiters = [];
        for (const w of ready) w();
      }
    },
  };
}
