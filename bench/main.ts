// `npm run bench`: runs the bench sections (all, or those named on the command line) and prints one table of figures; never fails on a time.
import { continuousSection } from './continuous';
import { fleetSection } from './fleet';
import { localStackSection } from './local-stack';
import { operatorSection } from './operator';
import { formatTable, type BenchSection, type Figure } from './section';
import { snapshotSection } from './snapshot';
import { truthSection } from './status-truth';
import { upgradeSection } from './upgrade';

const SECTIONS: BenchSection[] = [
  localStackSection,
  operatorSection,
  truthSection,
  fleetSection,
  snapshotSection,
  continuousSection,
  upgradeSection,
];

/** client-node errors carry the API's Status message in `body`. */
function describeError(e: unknown): string {
  const body = (e as { body?: unknown }).body;
  const detail = typeof body === 'string' ? body : body ? JSON.stringify(body) : '';
  return `${e instanceof Error ? (e.message.split('\n')[0] ?? '') : String(e)} ${detail}`
    .trim()
    .slice(0, 300);
}

async function main(argv: string[]): Promise<number> {
  const wanted = argv.length > 0 ? SECTIONS.filter((s) => argv.includes(s.name)) : SECTIONS;
  if (wanted.length === 0) {
    console.error(
      `unknown section(s) ${argv.join(', ')}; sections: ${SECTIONS.map((s) => s.name).join(', ')}`,
    );
    return 2;
  }
  const rows: Array<{ section: string } & Figure> = [];
  for (const section of wanted) {
    try {
      rows.push(
        ...(await section.run((line) => console.log(line))).map((f) => ({ section: section.name, ...f })),
      );
    } catch (e) {
      rows.push({
        section: section.name,
        name: 'section failed',
        value: undefined,
        unit: '',
        note: describeError(e),
      });
    }
  }
  console.log(`\n${formatTable(rows)}`);
  return 0;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (e: unknown) => {
    console.error(e);
    process.exit(1);
  },
);
