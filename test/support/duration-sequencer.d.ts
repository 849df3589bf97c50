import Sequencer from '@jest/test-sequencer';

/** Jest's sequencer, longest e2e file first (duration-sequencer.js). */
declare class DurationSequencer extends Sequencer {
  /** Seconds per file, relative to the project's root (test/durations.json). */
  recorded: Record<string, number>;
}
export = DurationSequencer;
