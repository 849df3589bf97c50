// How S3 and network errors map to the contract's reasons, and that messages carry codes and attempts but no secrets.
import { AgentError } from './agent-error';
import { AgentFailureReasons, type AgentFailureReason } from '../contracts/agent-result';
import {
  s3CredentialsFromEnv,
  s3Failure,
  s3FailureMessage,
  s3FailureReason,
  type S3Direction,
  type S3ErrorLike,
} from './s3-store';

const sdk = (name: string, httpStatusCode?: number, attempts = 1): S3ErrorLike => ({
  name,
  message: `${name} happened`,
  $metadata: { httpStatusCode, attempts },
});

const { InvalidCredentials, BucketNotFound, DestinationUnavailable, SourceNotFound } = AgentFailureReasons;

const TABLE: Array<[string, S3ErrorLike, S3Direction, AgentFailureReason]> = [
  [
    'an unknown access key is a credentials problem',
    sdk('InvalidAccessKeyId', 403),
    'upload',
    InvalidCredentials,
  ],
  [
    'a wrong secret is a credentials problem',
    sdk('SignatureDoesNotMatch', 403),
    'upload',
    InvalidCredentials,
  ],
  [
    'a key without permission is a credentials problem',
    sdk('AccessDenied', 403),
    'download',
    InvalidCredentials,
  ],
  [
    'an expired session token is a credentials problem',
    sdk('ExpiredToken', 400),
    'upload',
    InvalidCredentials,
  ],
  ['any other 403 is a credentials problem', sdk('Forbidden', 403), 'upload', InvalidCredentials],
  ['a missing bucket on upload', sdk('NoSuchBucket', 404), 'upload', BucketNotFound],
  ['a missing bucket on download', sdk('NoSuchBucket', 404), 'download', BucketNotFound],
  ['a missing object on download', sdk('NoSuchKey', 404), 'download', SourceNotFound],
  ['a bare 404 on download (HEAD has no body)', sdk('NotFound', 404), 'download', SourceNotFound],
  ['a bare 404 on upload is not "source not found"', sdk('NotFound', 404), 'upload', DestinationUnavailable],
  ['a server error', sdk('InternalError', 500, 2), 'upload', DestinationUnavailable],
  ['throttling', sdk('SlowDown', 503, 2), 'upload', DestinationUnavailable],
  [
    'a refused connection',
    { name: 'Error', code: 'ECONNREFUSED', message: 'connect ECONNREFUSED' },
    'upload',
    DestinationUnavailable,
  ],
  ['a timeout', { name: 'TimeoutError', message: 'socket timed out' }, 'download', DestinationUnavailable],
  ['an entity too large', sdk('EntityTooLarge', 400), 'upload', DestinationUnavailable],
];

describe('s3FailureReason', () => {
  it.each(TABLE)('%s', (_name, error, direction, reason) => {
    expect(s3FailureReason(error, direction)).toBe(reason);
  });
});

describe('s3FailureMessage', () => {
  it('a credentials failure names the code, status and attempts, not the SDK text (it may echo what was signed)', () => {
    const e = {
      ...sdk('SignatureDoesNotMatch', 403, 2),
      message: 'StringToSign: AWS4-HMAC-SHA256 secret-ish',
    };
    const m = s3FailureMessage(e, 'upload', 's3://b/k');
    expect(m).toBe(
      'S3 refused the credentials for s3://b/k (SignatureDoesNotMatch, HTTP 403, 2 attempts); check the credentials Secret',
    );
  });

  it('a network failure keeps the code and the first line of the error', () => {
    const m = s3FailureMessage(
      {
        name: 'Error',
        code: 'ECONNREFUSED',
        message: 'connect ECONNREFUSED 127.0.0.1:9\nstack',
        $metadata: { attempts: 2 },
      },
      'upload',
      's3://b/k',
    );
    expect(m).toBe(
      'S3 upload of s3://b/k failed (ECONNREFUSED, 2 attempts): connect ECONNREFUSED 127.0.0.1:9',
    );
  });

  it('s3Failure keeps an AgentError as it is and wraps anything else', () => {
    const own = new AgentError(AgentFailureReasons.EtcdUnavailable, 'etcd went away');
    expect(s3Failure(own, 'upload', 's3://b/k')).toBe(own);
    const wrapped = s3Failure(
      Object.assign(new Error('no bucket'), sdk('NoSuchBucket', 404)),
      'upload',
      's3://b/k',
    );
    expect(wrapped.reason).toBe(BucketNotFound);
    expect(wrapped.message).toBe('S3 bucket of s3://b/k does not exist (NoSuchBucket, HTTP 404, 1 attempt)');
  });
});

describe('s3CredentialsFromEnv', () => {
  it('reads both variables', () => {
    expect(s3CredentialsFromEnv({ AWS_ACCESS_KEY_ID: 'id', AWS_SECRET_ACCESS_KEY: 'secret' })).toEqual({
      accessKeyId: 'id',
      secretAccessKey: 'secret',
    });
  });

  it.each([
    ['neither set', {}],
    ['only the key id', { AWS_ACCESS_KEY_ID: 'id' }],
    ['an empty secret', { AWS_ACCESS_KEY_ID: 'id', AWS_SECRET_ACCESS_KEY: ' ' }],
  ])('%s is InvalidCredentials without echoing values', (_name, env) => {
    let caught: unknown;
    try {
      s3CredentialsFromEnv(env);
    } catch (e) {
      caught = e;
    }
    expect((caught as AgentError).reason).toBe(InvalidCredentials);
    expect((caught as AgentError).message).toMatch(
      /AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY must both be set/,
    );
  });
});
