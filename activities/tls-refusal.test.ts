// Which failed member-list calls are TLS refusals (status then says TLSTrustBroken, not QuorumLost).
import { tlsRefusal } from './tls-refusal';

const refused = new Error(
  '14 UNAVAILABLE: No connection established. Last error: Error: 40B8D2F6:error:0A000412:SSL routines:ssl3_read_bytes:sslv3 alert bad certificate:../deps/openssl/openssl/ssl/record/rec_layer_s3.c:1605:SSL alert number 42',
);
const unknownCA = new Error('14 UNAVAILABLE: ... tlsv1 alert unknown ca ... SSL alert number 48');
const untrustedServer = new Error(
  '14 UNAVAILABLE: No connection established. Last error: unable to verify the first certificate',
);
const refusedConn = new Error(
  '14 UNAVAILABLE: No connection established. Last error: connect ECONNREFUSED 127.0.0.1:2379',
);
const timeout = new Error('deadline exceeded');

test.each([
  ['every member refused the client certificate', [refused, refused, refused], refused.message],
  ['members that do not know the CA refused it', [unknownCA, refused], unknownCA.message],
  ['the operator does not trust the serving certificate', [untrustedServer], untrustedServer.message],
  ['one member is down, the others refuse: not a refusal of all', [refused, refusedConn, refused], undefined],
  ['timeouts are not refusals', [timeout, timeout], undefined],
  ['nothing asked, nothing refused', [], undefined],
])('%s', (_name, errors, expected) => {
  expect(tlsRefusal(errors)).toBe(expected);
});
