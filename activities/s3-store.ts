// Deletes stored snapshot objects in S3 for retention; credentials are read from the user's Secret here and go nowhere else.
import { DeleteObjectCommand, S3Client, S3ServiceException } from '@aws-sdk/client-s3';
import type { S3Location } from '../crds/etcd-snapshot';

export interface S3Credentials {
  accessKeyId: string;
  secretAccessKey: string;
}

export interface S3Store {
  /** Deletes `s3://bucket/key`; an object that is already gone counts as deleted (S3 says so too). */
  deleteObject(
    location: Omit<S3Location, 'key' | 'credentialsSecretRef'>,
    key: string,
    credentials: S3Credentials,
  ): Promise<void>;
}

/** `s3://bucket/some/key.db` -> bucket and key; undefined for any other URI. */
export function parseS3URI(uri: string): { bucket: string; key: string } | undefined {
  const m = /^s3:\/\/([^/]+)\/(.+)$/.exec(uri);
  return m?.[1] && m[2] ? { bucket: m[1], key: m[2] } : undefined;
}

export function createS3Store(): S3Store {
  return {
    async deleteObject(location, key, credentials) {
      const client = new S3Client({
        endpoint: location.endpoint,
        region: location.region,
        forcePathStyle: location.forcePathStyle,
        credentials,
        maxAttempts: 1,
      });
      try {
        await client.send(new DeleteObjectCommand({ Bucket: location.bucket, Key: key }));
      } catch (err) {
        // The SDK's message names the bucket and the S3 error code; never the credentials.
        if (err instanceof S3ServiceException && err.name === 'NoSuchKey') return;
        throw new Error(
          `deleting s3://${location.bucket}/${key} failed: ${err instanceof Error ? `${err.name}: ${err.message}` : String(err)}`,
          { cause: err },
        );
      } finally {
        client.destroy();
      }
    },
  };
}
