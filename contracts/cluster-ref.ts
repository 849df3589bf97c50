// The one name of a cluster that every activity input carries, so objects and etcd members are found again after a crash.

/** The cluster identity every object is built for. */
export interface ClusterRef {
  namespace: string;
  name: string;
  uid: string;
}
