// The agent's S3 client (credentials only from the environment, few attempts, short connect timeout) and the one table that turns S3 and network errors into the contract's failure reasons.
import { S3Client } from '@aws-sdk/client-s3';
import { AgentError, describe } from './agent-error';
import type { S3Location } from './args';
import { AgentFailureReasons, type AgentFailureReason } from '../contracts/agent-result';

/**
 * Two attempts per request: one retry absorbs a dropped connection, while a wrong secret
 * (SignatureDoesNotMatch, which the SDK retries as possible clock skew) costs one extra request, not a storm.
 * The Job and the workflow are the retry layers that wait between attempts.
 */
export const S3_MAX_ATTEMPTS = 2;

export interface S3Credentials {
  accessKeyId: string;
  secretAccessKey: string;
}

/** The contract: credentials come only from these two variables, never from files, IMDS or flags. */
export function s3CredentialsFromEnv(env: NodeJS.ProcessEnv): S3Credentials {
  const accessKeyId = env.AWS_ACCESS_KEY_ID?.trim();
  const secretAccessKey = env.AWS_SECRET_ACCESS_KEY?.trim();
  if (!accessKeyId || !secretAccessKey)
    throw new AgentError(
      AgentFailureReasons.InvalidCredentials,
      'AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY must both be set (the Job takes them from the credentials Secret)',
    );
  return { accessKeyId, secretAccessKey };
}

export function createS3Client(location: S3Location, credentials: S3Credentials): S3Client {
  return new S3Client({
    endpoint: location.endpoint,
    region: location.region,
    forcePathStyle: location.forcePathStyle,
    credentials,
    maxAttempts: S3_MAX_ATTEMPTS,
    // An unreachable endpoint fails in seconds; a stalled transfer fails after a minute without progress.
    requestHandler: { connectionTimeout: 5_000, requestTimeout: 60_000 },
  });
}

/** The parts of an AWS SDK (or Node network) error the classification reads. */
export interface S3ErrorLike {
  name?: string;
  code?: string;
  message?: string;
  $metadata?: { httpStatusCode?: number; attempts?: number };
}

const CREDENTIAL_ERRORS = new Set([
  'InvalidAccessKeyId',
  'SignatureDoesNotMatch',
  'AccessDenied',
  'InvalidToken',
  'ExpiredToken',
  'TokenRefreshRequired',
  'InvalidSecurity',
]);

export type S3Direction = 'upload' | 'download';

/** Pure: which reason an S3 error means, for an upload (snapshot) or a download (restore). */
export function s3FailureReason(e: S3ErrorLike, direction: S3Direction): AgentFailureReason {
  const status = e.$metadata?.httpStatusCode;
  if ((e.name && CREDENTIAL_ERRORS.has(e.name)) || status === 403)
    return AgentFailureReasons.InvalidCredentials;
  if (e.name === 'NoSuchBucket') return AgentFailureReasons.BucketNotFound;
  if (direction === 'download' && (e.name === 'NoSuchKey' || e.name === 'NotFound' || status === 404))
    return AgentFailureReasons.SourceNotFound;
  return AgentFailureReasons.DestinationUnavailable;
}

/** A short message without secrets: S3 error bodies can echo the string that was signed, so credential errors keep only the code. */
export function s3FailureMessage(e: S3ErrorLike, direction: S3Direction, where: string): string {
  const reason = s3FailureReason(e, direction);
  const status = e.$metadata?.httpStatusCode;
  const attempts = e.$metadata?.attempts;
  const code = e.name && e.name !== 'Error' ? e.name : (e.code ?? 'error');
  const facts = [
    code,
    ...(status !== undefined ? [`HTTP ${status}`] : []),
    ...(attempts !== undefined ? [`${attempts} attempt${attempts === 1 ? '' : 's'}`] : []),
  ].join(', ');
  switch (reason) {
    case AgentFailureReasons.InvalidCredentials:
      return `S3 refused the credentials for ${where} (${facts}); check the credentials Secret`;
    case AgentFailureReasons.BucketNotFound:
      return `S3 bucket of ${where} does not exist (${facts})`;
    case AgentFailureReasons.SourceNotFound:
      return `${where} does not exist (${facts})`;
    default:
      return `S3 ${direction} of ${where} failed (${facts}): ${describe(e).slice(0, 300)}`;
  }
}

export function s3Failure(e: unknown, direction: S3Direction, where: string): AgentError {
  if (e instanceof AgentError) return e;
  const like = (typeof e === 'object' && e !== null ? e : { message: String(e) }) as S3ErrorLike;
  return new AgentError(s3FailureReason(like, direction), s3FailureMessage(like, direction, where), {
    cause: e,
  });
}
