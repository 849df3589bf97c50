// Contracts between the stack launcher and the process-backed nodes: what a node agent needs and what it offers.
import type { V1Pod } from '@kubernetes/client-node';

/** How an image becomes something this machine can execute. */
export interface ImageResolution {
  /** Executables the image "contains", by the names and absolute paths a container command may use. */
  commands: Record<string, string[]>;
  /** The command run when a container gives none (the image's ENTRYPOINT). */
  entrypoint: string[];
  /** Directories put first on PATH inside the container. */
  path: string[];
  /**
   * The folders on this machine that make up the image (its programs and what they load at run time). A
   * container shares this machine's tree, so a volume mounted over one of their ancestors would hide the
   * image; the node binds them back (see renderMountScript).
   */
  roots?: string[];
}

/** Maps image references to local executables; `undefined` means "no such image" (the Pod waits, ErrImagePull). */
export type ImageTable = (image: string) => ImageResolution | undefined;

export interface NodeAgentOptions {
  /** Kubeconfig the agent uses (a client certificate in group system:nodes or system:masters). */
  kubeconfigPath: string;
  nodeName: string;
  /** topology.kubernetes.io/zone label. */
  zone: string;
  /** Where this node keeps pod dirs, logs and claims (under the stack's .local/ folder). */
  stateDir: string;
  /** The node's own address, 127.x.y.z. */
  hostIp: string;
  /** Hands out a free loopback address for a new Pod. */
  allocatePodIp: () => string;
  releasePodIp: (ip: string) => void;
  /**
   * Makes a Pod's own name resolve before its containers start, as the kubelet does by writing the Pod's
   * hostname into its /etc/hosts; without it a process that looks itself up at once (etcd does) waits on
   * Go's 5 s hosts-file cache.
   */
  announcePodAddress?: (pod: V1Pod, ip: string) => Promise<void>;
  images: ImageTable;
  log: (line: string) => void;
}

/** Faults a test may inject; each acts on this machine's processes, never on the API. */
export interface NodeFaults {
  /** SIGKILL a running container; the restart policy then applies. */
  crashContainer(namespace: string, pod: string, container?: string): Promise<void>;
  /** SIGSTOP / SIGCONT a container's processes. */
  freezeContainer(namespace: string, pod: string, container?: string): Promise<void>;
  thawContainer(namespace: string, pod: string, container?: string): Promise<void>;
  /** Stop heartbeats and kill every process of this node; `nodeUp` resumes both. */
  nodeDown(): Promise<void>;
  nodeUp(): Promise<void>;
}

export interface NodeAgent extends NodeFaults {
  readonly nodeName: string;
  /** Stops heartbeats and every container process (SIGTERM, then SIGKILL); leaves API objects as they are. */
  stop(): Promise<void>;
}
