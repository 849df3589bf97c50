// Pure build recipes: the exact Go commands that turn a pinned version into binaries, in order; the installer only executes them.
import { join } from 'node:path';
import { CNI_PLUGIN_NAMES, certManagerCrdDir, toolDirs, type ToolSpec } from './tool-cache';
import { repoRoot } from './stack-info';
import { KUBERNETES_STAGING_VERSION, MINIO_MODULE_VERSION, PORCUPINE_VERSION } from './versions';

export type BuildStep =
  | {
      kind: 'go';
      label: string;
      args: string[];
      cwd: string;
      env?: Record<string, string>;
      skipIfExists?: string;
    }
  | { kind: 'write'; label: string; path: string; content: string }
  | { kind: 'copy'; label: string; from: string; to: string }
  /** Copies `<module's folder in the module cache>/<dir>/*<suffix>` (as the wrapper in `cwd` resolves the module) into `to`. */
  | {
      kind: 'copy-module-files';
      label: string;
      cwd: string;
      module: string;
      dir: string;
      suffix: string;
      to: string;
    }
  /** Reads the staging replace list from the k8s.io/kubernetes go.mod on the proxy, then pins each to its published version. */
  | {
      kind: 'replace-staging';
      label: string;
      cwd: string;
      kubernetesVersion: string;
      stagingVersion: string;
    };

const LDFLAGS = '-s -w';

export function toolsGo(imports: string[]): string {
  return `//go:build tools\npackage tools\nimport (\n${imports.map((i) => ` _ "${i}"\n`).join('')})\n`;
}

/** Go's version variables; without them /version reports v0.0.0-master and kubectl warns about skew. */
export function kubernetesVersionLdflags(version: string): string {
  const minor = version.split('.')[1] ?? '0';
  const vars = (pkg: string) =>
    [`${pkg}.gitVersion=v${version}`, `${pkg}.gitMajor=1`, `${pkg}.gitMinor=${minor}`].map((v) => `-X ${v}`);
  return [LDFLAGS, ...vars('k8s.io/component-base/version'), ...vars('k8s.io/client-go/pkg/version')].join(
    ' ',
  );
}

/** `go.mod` lines such as `k8s.io/api => ./staging/src/k8s.io/api` name the modules a wrapper must re-pin. */
export function stagingModules(kubernetesGoMod: string): string[] {
  const found = new Set<string>();
  for (const line of kubernetesGoMod.split('\n')) {
    const m = /^\s*(?:replace\s+)?(\S+)(?:\s+\S+)?\s+=>\s+(\.\/staging\/\S+)/.exec(line);
    if (m?.[1]) found.add(m[1]);
  }
  return [...found].sort();
}

/** `go install` of published packages straight into the tool's bin dir; `ldflagsExtra` stamps a version. */
function goInstall(buildDir: string, binDir: string, packages: string[], ldflagsExtra?: string): BuildStep {
  return {
    kind: 'go',
    label: 'go install',
    args: [
      'install',
      '-trimpath',
      '-ldflags',
      ldflagsExtra ? `${LDFLAGS} ${ldflagsExtra}` : LDFLAGS,
      ...packages,
    ],
    cwd: buildDir,
    env: { GOBIN: binDir },
  };
}

export function buildSteps(root: string, spec: ToolSpec): BuildStep[] {
  const { buildDir, binDir } = toolDirs(root, spec);
  switch (spec.name) {
    case 'etcd': {
      // Every etcd sub-module has replace directives, so `go install` refuses it; a wrapper that only requires them works.
      const mods = ['server', 'etcdctl', 'etcdutl'].map((m) => `go.etcd.io/etcd/${m}/v3`);
      return [
        {
          kind: 'go',
          label: 'go mod init',
          args: ['mod', 'init', 'local/etcd-wrapper'],
          cwd: buildDir,
          skipIfExists: join(buildDir, 'go.mod'),
        },
        { kind: 'write', label: 'write tools.go', path: join(buildDir, 'tools.go'), content: toolsGo(mods) },
        {
          kind: 'go',
          label: 'go get',
          args: ['get', ...mods.map((m) => `${m}@v${spec.version}`)],
          cwd: buildDir,
        },
        { kind: 'go', label: 'go mod tidy', args: ['mod', 'tidy'], cwd: buildDir },
        {
          kind: 'go',
          label: 'go build',
          args: [
            'build',
            '-trimpath',
            '-ldflags',
            LDFLAGS,
            '-o',
            join(binDir, 'etcd'),
            'go.etcd.io/etcd/server/v3',
          ],
          cwd: buildDir,
        },
        {
          kind: 'go',
          label: 'go build',
          args: ['build', '-trimpath', '-ldflags', LDFLAGS, '-o', `${binDir}/`, mods[1] ?? '', mods[2] ?? ''],
          cwd: buildDir,
        },
      ];
    }
    case 'temporal':
    case 'minio': {
      const pkg =
        spec.name === 'temporal'
          ? `github.com/temporalio/cli/cmd/temporal@v${spec.version}`
          : `github.com/minio/minio@${MINIO_MODULE_VERSION}`;
      return [goInstall(buildDir, binDir, [pkg])];
    }
    case 'helm':
      return [
        goInstall(
          buildDir,
          binDir,
          [`helm.sh/helm/v4/cmd/helm@v${spec.version}`],
          // Without it `helm version` reports a bare "v4.3" and charts cannot pin a helm version.
          `-X helm.sh/helm/v4/internal/version.version=v${spec.version}`,
        ),
      ];
    case 'cert-manager': {
      // Upstream's main package (cmd/controller) is a separate module that the proxy does not publish, so the wrapper
      // brings its own main (localcluster/cert-manager-controller/main.go). The wrapper's module path sits under
      // github.com/cert-manager/cert-manager because that main imports the configuration defaults from internal/.
      const module = 'github.com/cert-manager/cert-manager';
      return [
        {
          kind: 'go',
          label: 'go mod init',
          args: ['mod', 'init', `${module}/etcd-conductor-controller`],
          cwd: buildDir,
          skipIfExists: join(buildDir, 'go.mod'),
        },
        {
          kind: 'copy',
          label: 'copy main.go',
          from: join(repoRoot(), 'localcluster', 'cert-manager-controller', 'main.go'),
          to: join(buildDir, 'main.go'),
        },
        { kind: 'go', label: 'go get', args: ['get', `${module}@v${spec.version}`], cwd: buildDir },
        { kind: 'go', label: 'go mod tidy', args: ['mod', 'tidy'], cwd: buildDir },
        {
          kind: 'go',
          label: 'go build',
          args: [
            'build',
            '-trimpath',
            '-ldflags',
            `${LDFLAGS} -X ${module}/pkg/util.AppVersion=v${spec.version}`,
            '-o',
            join(binDir, 'cert-manager-controller'),
            '.',
          ],
          cwd: buildDir,
        },
        {
          kind: 'copy-module-files',
          label: 'copy the CRDs (deploy/crds)',
          cwd: buildDir,
          module,
          dir: 'deploy/crds',
          suffix: '.yaml',
          to: certManagerCrdDir(root),
        },
      ];
    }
    case 'containerd': {
      const module = 'github.com/containerd/containerd/v2';
      return [
        goInstall(
          buildDir,
          binDir,
          spec.binaries.map((b) => `${module}/cmd/${b}@v${spec.version}`),
          // The CRI reports this version; the kubelet shows it as the Node's containerRuntimeVersion.
          `-X ${module}/version.Version=v${spec.version}`,
        ),
      ];
    }
    case 'runc':
      return [
        {
          kind: 'go',
          label: 'go install (cgo, seccomp)',
          args: [
            'install',
            '-trimpath',
            '-tags',
            'seccomp urfave_cli_no_docs',
            '-ldflags',
            `${LDFLAGS} -X main.version=${spec.version}`,
            `github.com/opencontainers/runc@v${spec.version}`,
          ],
          cwd: buildDir,
          env: { GOBIN: binDir, CGO_ENABLED: '1' },
        },
      ];
    case 'cni-plugins': {
      const where: Record<(typeof CNI_PLUGIN_NAMES)[number], string> = {
        bridge: 'main/bridge',
        loopback: 'main/loopback',
        'host-local': 'ipam/host-local',
        portmap: 'meta/portmap',
      };
      return [
        goInstall(
          buildDir,
          binDir,
          CNI_PLUGIN_NAMES.map(
            (p) => `github.com/containernetworking/plugins/plugins/${where[p]}@v${spec.version}`,
          ),
        ),
      ];
    }
    case 'coredns':
      return [goInstall(buildDir, binDir, [`github.com/coredns/coredns@v${spec.version}`])];
    case 'crictl':
      return [
        goInstall(
          buildDir,
          binDir,
          [`sigs.k8s.io/cri-tools/cmd/crictl@v${spec.version}`],
          `-X sigs.k8s.io/cri-tools/pkg/version.Version=v${spec.version}`,
        ),
      ];
    case 'pause':
      return [
        {
          kind: 'write',
          label: 'write go.mod',
          path: join(buildDir, 'go.mod'),
          content: 'module local/pause\n\ngo 1.22\n',
        },
        {
          kind: 'copy',
          label: 'copy main.go',
          from: join(repoRoot(), 'localcluster', 'pause', 'main.go'),
          to: join(buildDir, 'main.go'),
        },
        {
          kind: 'go',
          label: 'go build',
          args: ['build', '-trimpath', '-ldflags', LDFLAGS, '-o', join(binDir, 'pause'), '.'],
          cwd: buildDir,
        },
      ];
    case 'lincheck':
      return [
        {
          kind: 'write',
          label: 'write go.mod',
          path: join(buildDir, 'go.mod'),
          content: 'module local/lincheck\n\ngo 1.22\n',
        },
        {
          kind: 'copy',
          label: 'copy main.go',
          from: join(repoRoot(), 'localcluster', 'lincheck', 'main.go'),
          to: join(buildDir, 'main.go'),
        },
        {
          kind: 'go',
          label: 'go get',
          args: ['get', `github.com/anishathalye/porcupine@v${PORCUPINE_VERSION}`],
          cwd: buildDir,
        },
        {
          kind: 'go',
          label: 'go build',
          args: ['build', '-trimpath', '-ldflags', LDFLAGS, '-o', join(binDir, 'lincheck'), '.'],
          cwd: buildDir,
        },
      ];
    case 'kubernetes':
    case 'kubernetes-node': {
      const cmds = spec.binaries.map((b) => `k8s.io/kubernetes/cmd/${b}`);
      return [
        {
          kind: 'go',
          label: 'go mod init',
          args: ['mod', 'init', `local/${spec.name}-wrapper`],
          cwd: buildDir,
          skipIfExists: join(buildDir, 'go.mod'),
        },
        {
          kind: 'go',
          label: 'go mod edit',
          args: ['mod', 'edit', `-require=k8s.io/kubernetes@v${spec.version}`],
          cwd: buildDir,
        },
        {
          kind: 'replace-staging',
          label: 'go mod edit -replace (staging modules)',
          cwd: buildDir,
          kubernetesVersion: spec.version,
          stagingVersion: KUBERNETES_STAGING_VERSION,
        },
        { kind: 'write', label: 'write tools.go', path: join(buildDir, 'tools.go'), content: toolsGo(cmds) },
        { kind: 'go', label: 'go mod tidy', args: ['mod', 'tidy'], cwd: buildDir },
        {
          kind: 'go',
          label: 'go build',
          args: [
            'build',
            '-trimpath',
            '-ldflags',
            kubernetesVersionLdflags(spec.version),
            '-o',
            `${binDir}/`,
            ...cmds,
          ],
          cwd: buildDir,
        },
      ];
    }
  }
}
