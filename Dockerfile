# The etcd-conductor image: the operator (etcd-conductor-operator) and the in-Pod agent (etcd-conductor, the
# entrypoint that snapshot Jobs and restore init containers run), with etcd, etcdctl and etcdutl of etcd 3.6 (the
# verification Job restores a snapshot and starts a throwaway etcd on loopback).
# Runs as a numeric non-root user and with a read-only root filesystem: nothing writes outside /tmp.
# Build: docker build -t ghcr.io/etcd-conductor/etcd-conductor:0.1.0 .

ARG NODE_IMAGE=node:24-bookworm-slim
ARG ETCD_VERSION=3.6.16

# Compiles TypeScript to dist/ and bundles the workflow code (dist/workflow-bundle.js), so the worker never
# bundles at start and needs no webpack at run time.
FROM ${NODE_IMAGE} AS build
WORKDIR /src
COPY package.json package-lock.json ./
# With install scripts, as on a developer machine: the pinned node devDependency fetches its binary.
RUN npm ci
COPY tsconfig.json tsconfig.build.json ./
COPY crds crds
COPY contracts contracts
COPY workflows workflows
COPY activities activities
COPY watcher watcher
COPY worker worker
COPY agent agent
COPY plugin plugin
COPY localcluster localcluster
COPY bench bench
RUN npm run build

# Production dependencies only: no TypeScript, Jest, ESLint, nor the pinned node devDependency.
FROM ${NODE_IMAGE} AS deps
WORKDIR /src
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --ignore-scripts && npm cache clean --force

# etcd, etcdctl and etcdutl from the etcd release, checked against its published SHA256SUMS.
FROM debian:bookworm-slim AS etcd
ARG ETCD_VERSION
ARG TARGETARCH=amd64
RUN apt-get update && apt-get install -y --no-install-recommends ca-certificates curl && rm -rf /var/lib/apt/lists/*
WORKDIR /etcd
RUN base="https://github.com/etcd-io/etcd/releases/download/v${ETCD_VERSION}" \
 && file="etcd-v${ETCD_VERSION}-linux-${TARGETARCH}.tar.gz" \
 && curl -fsSLO "${base}/${file}" && curl -fsSLO "${base}/SHA256SUMS" \
 && grep " ${file}\$" SHA256SUMS | sha256sum -c - \
 && tar -xzf "${file}" --strip-components=1 "etcd-v${ETCD_VERSION}-linux-${TARGETARCH}/etcd" "etcd-v${ETCD_VERSION}-linux-${TARGETARCH}/etcdctl" "etcd-v${ETCD_VERSION}-linux-${TARGETARCH}/etcdutl"

FROM ${NODE_IMAGE}
ENV NODE_ENV=production \
    HOME=/tmp
WORKDIR /app
COPY --from=deps /src/node_modules node_modules
COPY --from=build /src/dist dist
COPY package.json ./
COPY --from=etcd /etcd/etcd /etcd/etcdctl /etcd/etcdutl /usr/local/bin/
# The two programs, as the chart's Deployment (command) and the snapshot manifests (command) name them. The
# operator's node flags are contracts/node-flags.ts's (a test keeps them equal).
RUN printf '#!/bin/sh\nexec node /app/dist/agent/main.js "$@"\n' > /usr/local/bin/etcd-conductor \
 && printf '#!/bin/sh\nexec node --max-semi-space-size=1 --max-old-space-size=256 /app/dist/worker/main.js "$@"\n' > /usr/local/bin/etcd-conductor-operator \
 && chmod 0755 /usr/local/bin/etcd-conductor /usr/local/bin/etcd-conductor-operator
# Numeric, so runAsNonRoot can verify it without reading /etc/passwd; the chart runs with the same ids.
USER 65532:65532
EXPOSE 9464
ENTRYPOINT ["etcd-conductor"]
