// Runs MinIO for one stack on its host IP with root credentials generated once and kept in the state folder (mode 0600), and makes sure the bucket exists.
import { CreateBucketCommand, HeadBucketCommand, S3Client } from '@aws-sdk/client-s3';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { isOk } from './http-probe';
import { startProcess, type ManagedProcess } from './managed-process';
import type { StackLayout } from './stack-layout';
import { waitFor } from './wait-for';

export const S3_BUCKET = 'etcd-conductor';
export const S3_REGION = 'us-east-1';

export interface S3Credentials {
  accessKeyId: string;
  secretAccessKey: string;
}

export function s3Endpoint(layout: StackLayout): string {
  return `http://${layout.hostIp}:${layout.ports.s3}`;
}

export function ensureS3Credentials(file: string): S3Credentials {
  if (existsSync(file)) return JSON.parse(readFileSync(file, 'utf8')) as S3Credentials;
  const creds = {
    accessKeyId: `local-${randomBytes(6).toString('hex')}`,
    secretAccessKey: randomBytes(24).toString('base64url'),
  };
  writeFileSync(file, `${JSON.stringify(creds, null, 2)}\n`, { mode: 0o600 });
  return creds;
}

export function minioArgs(layout: StackLayout): string[] {
  return [
    'server',
    layout.paths.minioDataDir,
    `--address=${layout.hostIp}:${layout.ports.s3}`,
    `--console-address=${layout.hostIp}:${layout.ports.s3Console}`,
    '--quiet',
  ];
}

export function s3Client(layout: StackLayout, creds: S3Credentials): S3Client {
  return new S3Client({
    endpoint: s3Endpoint(layout),
    region: S3_REGION,
    forcePathStyle: true,
    credentials: creds,
  });
}

export async function ensureBucket(client: S3Client, bucket: string): Promise<void> {
  try {
    await client.send(new HeadBucketCommand({ Bucket: bucket }));
    return;
  } catch {
    // missing: create below
  }
  try {
    await client.send(new CreateBucketCommand({ Bucket: bucket }));
  } catch (e) {
    const name = (e as { name?: string }).name;
    if (name !== 'BucketAlreadyOwnedByYou' && name !== 'BucketAlreadyExists') throw e;
  }
}

export async function startMinioServer(
  layout: StackLayout,
  minioBin: string,
): Promise<{ process: ManagedProcess; credentials: S3Credentials }> {
  mkdirSync(layout.paths.minioDataDir, { recursive: true });
  const credentials = ensureS3Credentials(layout.paths.minioCredentials);
  const p = startProcess({
    name: 'minio',
    command: minioBin,
    args: minioArgs(layout),
    cwd: layout.stateDir,
    logFile: join(layout.paths.logsDir, 'minio.log'),
    stackDir: layout.stateDir,
    env: {
      MINIO_ROOT_USER: credentials.accessKeyId,
      MINIO_ROOT_PASSWORD: credentials.secretAccessKey,
      MINIO_UPDATE: 'off',
      MINIO_BROWSER_REDIRECT: 'off',
    },
  });
  try {
    await waitFor('MinIO to be ready', () => isOk(`${s3Endpoint(layout)}/minio/health/ready`), {
      timeoutMs: 60000,
      process: p,
    });
    const client = s3Client(layout, credentials);
    try {
      await waitFor(`the S3 bucket ${S3_BUCKET}`, async () => (await ensureBucket(client, S3_BUCKET), true), {
        timeoutMs: 20000,
        process: p,
      });
    } finally {
      client.destroy();
    }
  } catch (e) {
    await p.stop();
    throw e;
  }
  return { process: p, credentials };
}
