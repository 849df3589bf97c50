// The one place where the local stack's tool versions are pinned; every build, cache key and image tag derives from here.

export const KUBERNETES_VERSION = '1.35.4';
/** Published version of the k8s.io staging modules that match KUBERNETES_VERSION (v1.X.Y -> v0.X.Y). */
export const KUBERNETES_STAGING_VERSION = '0.35.4';

/** Newest etcd 3.6 and 3.5 on the Go module proxy; both are needed because upgrades go 3.5 -> 3.6. */
export const ETCD_VERSIONS = ['3.6.16', '3.5.35'] as const;
export type EtcdVersion = (typeof ETCD_VERSIONS)[number];
/** The etcd that backs the local kube-apiserver. */
export const BACKING_ETCD_VERSION: EtcdVersion = '3.6.16';

/** v1.6+ carries a replace directive, so `go install` refuses it; v1.5.1 is the newest installable one. */
export const TEMPORAL_CLI_VERSION = '1.5.1';

/** MinIO community edition is source-only and frozen; RELEASE.* tags are not semver, so pin a pseudo-version. */
export const MINIO_MODULE_VERSION = 'v0.0.0-20260212201848-7aac2a2c5b7c';
/** The cache key for MinIO: the commit timestamp of the pseudo-version. */
export const MINIO_VERSION = MINIO_MODULE_VERSION.split('-')[1] ?? MINIO_MODULE_VERSION;

/** Helm renders deploy/chart; v4 is current and, unlike kubernetes and etcd, installs straight from the proxy (no replace directives). */
export const HELM_VERSION = '4.3.1';

/**
 * cert-manager for spec.tls issuerRefs. Not v1.21: it requires github.com/Venafi/vcert/v5 v5.13.7, and the Go module
 * proxy answers 403 "This module version is not available" for every vcert v5.13.x; v1.20.3 needs v5.12.3, which it
 * serves, and is built against Kubernetes 0.35 like the local apiserver.
 */
export const CERT_MANAGER_VERSION = '1.20.3';

/** containerd 2.x: Kubernetes 1.35 is the last release supporting 1.x (Debian's 1.6); installs straight from the proxy. */
export const CONTAINERD_VERSION = '2.4.2';
/** runc from the proxy, built with cgo and the seccomp tag against Debian's libseccomp (see tool-cache.ts RUNC_TOOL). */
export const RUNC_VERSION = '1.5.2';
/** CNI reference plugins (bridge, host-local, loopback, portmap) for the real nodes' Pod network. */
export const CNI_PLUGINS_VERSION = '1.10.0';
/** crictl, to look into a real node's containerd the way kubelet sees it. */
export const CRI_TOOLS_VERSION = '1.37.0';
/** Our own pause program (localcluster/pause/main.go); bump when that file changes so the cache rebuilds it. */
export const PAUSE_VERSION = '1';
/** The soak's linearizability checker (localcluster/lincheck/main.go); bump when that file changes so the cache rebuilds it. */
export const LINCHECK_VERSION = '1';
/** porcupine, the checker etcd's robustness tests use; v1.3.1 builds from the Go module proxy. */
export const PORCUPINE_VERSION = '1.3.1';
/** CoreDNS for cluster DNS on the real nodes; installs straight from the proxy (no replace directives). */
export const COREDNS_VERSION = '1.15.0';
