{{/* Names and labels shared by every template of the chart. */}}
{{- define "etcd-conductor.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "etcd-conductor.selectorLabels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "etcd-conductor.labels" -}}
{{ include "etcd-conductor.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{- define "etcd-conductor.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "etcd-conductor.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- required "serviceAccount.name is required when serviceAccount.create is false" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{/* The one namespace a namespace-scoped install serves: rbac.watchNamespace, else the release namespace. */}}
{{- define "etcd-conductor.watchNamespace" -}}
{{- default .Release.Namespace .Values.rbac.watchNamespace -}}
{{- end -}}

{{/*
The operator's permissions, shared by the ClusterRole and the Role. Exactly what activities/, watcher/
and worker/ call; test/deploy/rbac.test.ts compares the result with deploy/rbac-allowlist.txt.
Secrets: get, plus create and patch for the operator's own applied-password copies; never list or watch.
*/}}
{{- define "etcd-conductor.rules" -}}
# Member Pods: the watcher lists and watches them; activities create, label (patch) and delete them;
# a rollout or upgrade reads one before it deletes it (only if still out of date) or patches its metadata.
- apiGroups: ['']
  resources: [pods]
  verbs: [create, delete, get, list, patch, watch]
# A member's previous run's log tail, read only while it crash-loops: why etcd exited (a full volume, a bad flag),
# which the kubelet's 2048-byte termination message loses behind a panic's stack trace.
- apiGroups: ['']
  resources: [pods/log]
  verbs: [get]
# Member claims: watched, created and deleted with their member; a snapshot reads its target claim;
# a rollout grows them (patch of spec.resources.requests.storage) when spec.storage.size grows.
- apiGroups: ['']
  resources: [persistentvolumeclaims]
  verbs: [create, delete, get, list, patch, watch]
# The peer and client Services of each cluster, created once (get: one found under that name must be the cluster's);
# patched to keep spec.additionalMetadata on them (activities/additional-metadata-sync.ts).
- apiGroups: ['']
  resources: [services]
  verbs: [create, get, patch]
# Events on EtcdClusters, EtcdSnapshots and EtcdSnapshotSchedules: named per notice, and counted (get, patch)
# when told again (activities/event-recorder.ts).
- apiGroups: ['']
  resources: [events]
  verbs: [create, get, patch]
# S3 credentials named by an EtcdSnapshot or EtcdSnapshotSchedule, and the root Secret of spec.auth, read when
# needed; a cluster's TLS Secrets (spec.tls), read inside the worker for the operator's client certificate and
# the members' CA hash. Created and patched: each auth cluster's `<cluster>-auth-applied` copy of the root
# password etcd has, which RotateAuth authenticates with to apply a changed password (activities/etcd-auth.ts).
- apiGroups: ['']
  resources: [secrets]
  verbs: [create, get, patch]
# spec.tls with an issuerRef: one cert-manager Certificate per certificate the cluster needs, created once (get:
# one found under that name must be the cluster's); patched to keep spec.additionalMetadata on it.
- apiGroups: [cert-manager.io]
  resources: [certificates]
  verbs: [create, get, patch]
# One PodDisruptionBudget per cluster; its minAvailable follows the voter count (get: one found must be the cluster's).
- apiGroups: [policy]
  resources: [poddisruptionbudgets]
  verbs: [create, get, patch]
# Snapshot and prune Jobs: created, read for their result, deleted, watched to signal completion, and patched to keep
# the cluster's spec.additionalMetadata on them.
- apiGroups: [batch]
  resources: [jobs]
  verbs: [create, delete, get, list, patch, watch]
# The continuous backup's archiver (one per cluster with spec.backup.continuous): created, read for its template
# hash, deleted when the spec changes or the backup is turned off.
- apiGroups: [apps]
  resources: [deployments]
  verbs: [create, delete, get]
- apiGroups: [etcd.conductor.dev]
  resources: [etcdclusters, etcdsnapshotschedules]
  verbs: [get, list, watch]
# A Recover operation removes the approve-recovery annotation it acted on (an approval is used once).
- apiGroups: [etcd.conductor.dev]
  resources: [etcdclusters]
  verbs: [patch]
# A schedule run creates EtcdSnapshots and retention deletes old ones.
- apiGroups: [etcd.conductor.dev]
  resources: [etcdsnapshots]
  verbs: [create, delete, get, list, watch]
- apiGroups: [etcd.conductor.dev]
  resources: [etcdclusters/status, etcdsnapshots/status, etcdsnapshotschedules/status]
  verbs: [patch]
# Member Pods, claims and Services carry blockOwnerDeletion owner references to their EtcdCluster;
# where the OwnerReferencesPermissionEnforcement admission plugin is on, that needs this.
- apiGroups: [etcd.conductor.dev]
  resources: [etcdclusters/finalizers]
  verbs: [update]
{{- end -}}

{{/*
Cluster-scoped reads, bound by a ClusterRole in both scopes (a Role cannot grant them): whether a claim's
StorageClass allows volume expansion, before a rollout grows the claim (activities/rollout-observation.ts).
*/}}
{{- define "etcd-conductor.clusterReadRules" -}}
- apiGroups: [storage.k8s.io]
  resources: [storageclasses]
  verbs: [get]
{{- end -}}

{{/*
The watcher's leader election, in the release namespace only (rbac.yaml binds it there): create cannot be
limited to a name, so it is create on leases plus get/update of the one Lease worker/watcher-lease.ts uses.
*/}}
{{- define "etcd-conductor.leaseRules" -}}
- apiGroups: [coordination.k8s.io]
  resources: [leases]
  verbs: [create]
- apiGroups: [coordination.k8s.io]
  resources: [leases]
  resourceNames: [etcd-conductor-watcher]
  verbs: [get, update, patch]
{{- end -}}
