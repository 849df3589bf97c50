// Orders e2e files longest first, so that the long ones do not start last and leave one worker running alone at the
// end of a group. Jest's own sequencer does this from its timing cache, which a fresh clone (CI) does not have: it
// then orders by file size, which says little about how long a file waits on a cluster. Durations Jest has measured
// on this checkout win; otherwise the figures recorded in test/e2e-durations.json (seconds, from a CI run's log:
// `node test/support/record-durations.js < ci.log`) are used; a file in neither falls back to Jest's order.
const { default: Sequencer } = require('@jest/test-sequencer');
const { relative } = require('node:path');
const recorded = require('../e2e-durations.json');

class DurationSequencer extends Sequencer {
  /** Seconds per file, relative to the project's root. */
  recorded = recorded;

  time(test) {
    const measured = super.time(test);
    if (measured !== undefined) return measured;
    const seconds = this.recorded[relative(test.context.config.rootDir, test.path)];
    return seconds === undefined ? undefined : seconds * 1000;
  }
}

module.exports = DurationSequencer;
