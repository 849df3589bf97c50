// Journeys on the local stack wait on real processes: a per-test budget of minutes, not Jest's default 5 s.
jest.setTimeout(600_000);
