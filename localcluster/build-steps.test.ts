import { buildSteps, kubernetesVersionLdflags, stagingModules } from './build-steps';
import {
  CERT_MANAGER_TOOL,
  CNI_PLUGINS_TOOL,
  CONTAINERD_TOOL,
  ETCD_TOOLS,
  KUBERNETES_NODE_TOOL,
  PAUSE_TOOL,
  LINCHECK_TOOL,
  RUNC_TOOL,
  HELM_TOOL,
  KUBERNETES_TOOL,
  MINIO_TOOL,
  TEMPORAL_TOOL,
} from './tool-cache';

const goArgs = (steps: ReturnType<typeof buildSteps>) =>
  steps.map((s) => (s.kind === 'go' ? `go ${s.args.join(' ')}` : s.label));

describe('buildSteps', () => {
  it('builds etcd through a wrapper module that only requires the tagged sub-modules', () => {
    expect(goArgs(buildSteps('/c', ETCD_TOOLS['3.5.35']))).toEqual([
      'go mod init local/etcd-wrapper',
      'write tools.go',
      'go get go.etcd.io/etcd/server/v3@v3.5.35 go.etcd.io/etcd/etcdctl/v3@v3.5.35 go.etcd.io/etcd/etcdutl/v3@v3.5.35',
      'go mod tidy',
      'go build -trimpath -ldflags -s -w -o /c/tools/etcd-3.5.35/bin/etcd go.etcd.io/etcd/server/v3',
      'go build -trimpath -ldflags -s -w -o /c/tools/etcd-3.5.35/bin/ go.etcd.io/etcd/etcdctl/v3 go.etcd.io/etcd/etcdutl/v3',
    ]);
  });
  it('go-installs the Temporal CLI and MinIO straight into their bin folders', () => {
    const [temporal] = buildSteps('/c', TEMPORAL_TOOL);
    const [minio] = buildSteps('/c', MINIO_TOOL);
    expect(temporal).toMatchObject({
      args: ['install', '-trimpath', '-ldflags', '-s -w', 'github.com/temporalio/cli/cmd/temporal@v1.5.1'],
      env: { GOBIN: '/c/tools/temporal-1.5.1/bin' },
    });
    expect(minio).toMatchObject({
      args: [
        'install',
        '-trimpath',
        '-ldflags',
        '-s -w',
        'github.com/minio/minio@v0.0.0-20260212201848-7aac2a2c5b7c',
      ],
    });
  });
  it('go-installs Helm v4 with its version stamped, since the module default is only "v4.3"', () => {
    expect(buildSteps('/c', HELM_TOOL)).toEqual([
      {
        kind: 'go',
        label: 'go install',
        args: [
          'install',
          '-trimpath',
          '-ldflags',
          '-s -w -X helm.sh/helm/v4/internal/version.version=v4.3.1',
          'helm.sh/helm/v4/cmd/helm@v4.3.1',
        ],
        cwd: '/c/build/helm-4.3.1',
        env: { GOBIN: '/c/tools/helm-4.3.1/bin' },
      },
    ]);
  });
  it('builds the cert-manager controller from our own main in a wrapper under its module path, then copies its CRDs', () => {
    const steps = buildSteps('/c', CERT_MANAGER_TOOL);
    expect(goArgs(steps)).toEqual([
      // Under github.com/cert-manager/cert-manager, so the main may import the module's internal/ packages.
      'go mod init github.com/cert-manager/cert-manager/etcd-conductor-controller',
      'copy main.go',
      'go get github.com/cert-manager/cert-manager@v1.20.3',
      'go mod tidy',
      'go build -trimpath -ldflags -s -w -X github.com/cert-manager/cert-manager/pkg/util.AppVersion=v1.20.3 -o /c/tools/cert-manager-1.20.3/bin/cert-manager-controller .',
      'copy the CRDs (deploy/crds)',
    ]);
    expect(steps[1]).toMatchObject({
      from: expect.stringMatching(/\/localcluster\/cert-manager-controller\/main\.go$/) as unknown,
      to: '/c/build/cert-manager-1.20.3/main.go',
    });
    expect(steps[5]).toMatchObject({
      module: 'github.com/cert-manager/cert-manager',
      dir: 'deploy/crds',
      to: '/c/tools/cert-manager-1.20.3/crds',
    });
  });
  it('builds Kubernetes through a wrapper that re-pins the staging modules before tidying', () => {
    expect(goArgs(buildSteps('/c', KUBERNETES_TOOL)).slice(0, 5)).toEqual([
      'go mod init local/kubernetes-wrapper',
      'go mod edit -require=k8s.io/kubernetes@v1.35.4',
      'go mod edit -replace (staging modules)',
      'write tools.go',
      'go mod tidy',
    ]);
  });
  it('builds kubelet and kube-proxy with the same recipe in a wrapper of their own, so the control plane entry stays valid', () => {
    const steps = buildSteps('/c', KUBERNETES_NODE_TOOL);
    expect(goArgs(steps)).toEqual([
      'go mod init local/kubernetes-node-wrapper',
      'go mod edit -require=k8s.io/kubernetes@v1.35.4',
      'go mod edit -replace (staging modules)',
      'write tools.go',
      'go mod tidy',
      `go build -trimpath -ldflags ${kubernetesVersionLdflags('1.35.4')} -o /c/tools/kubernetes-node-1.35.4/bin/ k8s.io/kubernetes/cmd/kubelet k8s.io/kubernetes/cmd/kube-proxy`,
    ]);
    expect(steps.every((s) => s.kind !== 'go' || s.env?.CGO_ENABLED === undefined)).toBe(true);
  });
  it('go-installs containerd, its runc shim and ctr with the version the CRI reports stamped in', () => {
    expect(goArgs(buildSteps('/c', CONTAINERD_TOOL))).toEqual([
      'go install -trimpath -ldflags -s -w -X github.com/containerd/containerd/v2/version.Version=v2.4.2 github.com/containerd/containerd/v2/cmd/containerd@v2.4.2 github.com/containerd/containerd/v2/cmd/containerd-shim-runc-v2@v2.4.2 github.com/containerd/containerd/v2/cmd/ctr@v2.4.2',
    ]);
  });
  it('builds runc with cgo and the seccomp tag, after the Debian packages it links against', () => {
    const [step] = buildSteps('/c', RUNC_TOOL);
    expect(step).toMatchObject({
      args: expect.arrayContaining([
        '-tags',
        'seccomp urfave_cli_no_docs',
        'github.com/opencontainers/runc@v1.5.2',
      ]) as unknown,
      env: { GOBIN: '/c/tools/runc-1.5.2/bin', CGO_ENABLED: '1' },
    });
    expect(RUNC_TOOL.debPackages).toContain('libseccomp-dev');
  });
  it('go-installs exactly the CNI plugins the nodes configure', () => {
    expect(goArgs(buildSteps('/c', CNI_PLUGINS_TOOL))).toEqual([
      'go install -trimpath -ldflags -s -w github.com/containernetworking/plugins/plugins/main/bridge@v1.10.0 github.com/containernetworking/plugins/plugins/ipam/host-local@v1.10.0 github.com/containernetworking/plugins/plugins/main/loopback@v1.10.0 github.com/containernetworking/plugins/plugins/meta/portmap@v1.10.0',
    ]);
  });
  it('builds the pause program from the repository in a module of its own', () => {
    expect(goArgs(buildSteps('/c', PAUSE_TOOL))).toEqual([
      'write go.mod',
      'copy main.go',
      'go build -trimpath -ldflags -s -w -o /c/tools/pause-1/bin/pause .',
    ]);
  });
  it('builds the linearizability checker from the repository against the pinned porcupine', () => {
    expect(goArgs(buildSteps('/c', LINCHECK_TOOL))).toEqual([
      'write go.mod',
      'copy main.go',
      'go get github.com/anishathalye/porcupine@v1.3.1',
      'go build -trimpath -ldflags -s -w -o /c/tools/lincheck-1/bin/lincheck .',
    ]);
  });
  it('does not re-run go mod init in an existing wrapper', () => {
    expect(buildSteps('/c', KUBERNETES_TOOL)[0]).toMatchObject({
      skipIfExists: '/c/build/kubernetes-1.35.4/go.mod',
    });
  });
});

describe('stagingModules', () => {
  it('collects the modules replaced by ./staging paths, in both replace syntaxes, and nothing else', () => {
    const goMod = [
      'module k8s.io/kubernetes',
      'replace (',
      '\tk8s.io/api => ./staging/src/k8s.io/api',
      '\tk8s.io/client-go v0.0.0 => ./staging/src/k8s.io/client-go',
      '\tgithub.com/x/y => github.com/x/y v1.0.0',
      ')',
      'replace k8s.io/kubectl => ./staging/src/k8s.io/kubectl',
    ].join('\n');
    expect(stagingModules(goMod)).toEqual(['k8s.io/api', 'k8s.io/client-go', 'k8s.io/kubectl']);
  });
});

describe('kubernetesVersionLdflags', () => {
  it('stamps version, major and minor into component-base and client-go', () => {
    expect(kubernetesVersionLdflags('1.35.4')).toBe(
      '-s -w -X k8s.io/component-base/version.gitVersion=v1.35.4 -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=35 -X k8s.io/client-go/pkg/version.gitVersion=v1.35.4 -X k8s.io/client-go/pkg/version.gitMajor=1 -X k8s.io/client-go/pkg/version.gitMinor=35',
    );
  });
});
