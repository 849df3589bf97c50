// Orders test files longest first, so that the long ones do not start last and leave one worker running alone at the
// end of a group. Jest's own sequencer does this from its timing cache, which a fresh clone (CI) does not have: it
// then orders by file size, which says little about how long a file waits on a cluster or on Temporal. Durations Jest has measured
// on this checkout win; otherwise the figures recorded in test/durations.json (seconds, from a CI run's log:
// `node test/support/record-durations.js < ci.log`) are used, a file the figures do not name counting as short; with no figures at all, Jest's order.
const { default: Sequencer } = require('@jest/test-sequencer');
const { relative } = require('node:path');
const recorded = require('../durations.json');

class DurationSequencer extends Sequencer {
  /** Seconds per file, relative to the project's root. */
  recorded = recorded;

  time(test) {
    const measured = super.time(test);
    if (measured !== undefined) return measured;
    const seconds = this.recorded[relative(test.context.config.rootDir, test.path)];
    if (seconds !== undefined) return seconds * 1000;
    // Jest prints a file's time only past 5 s, so the log names the long files: one it does not name was short.
    return Object.keys(this.recorded).length > 0 ? 0 : undefined;
  }
}

module.exports = DurationSequencer;
