// Issue 16's measures for workflow code, kept by a test: no workflow file over ~400 lines and no function over
// ~80 lines. A function that grows past it is split into named pieces, not listed as an exception.
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import ts from 'typescript';

const ROOT = join(__dirname, '..');
const MAX_FILE_LINES = 400;
const MAX_FUNCTION_LINES = 80;

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return sourceFiles(path);
    return e.name.endsWith('.ts') && !e.name.endsWith('.test.ts') ? [path] : [];
  });
}

function longFunctions(path: string, text = readFileSync(path, 'utf8')): { name: string; lines: number }[] {
  const src = ts.createSourceFile(path, text, ts.ScriptTarget.Latest, true);
  const found: { name: string; lines: number }[] = [];
  const visit = (node: ts.Node): void => {
    if (
      (ts.isFunctionDeclaration(node) ||
        ts.isArrowFunction(node) ||
        ts.isFunctionExpression(node) ||
        ts.isMethodDeclaration(node)) &&
      node.body
    ) {
      const lines =
        src.getLineAndCharacterOfPosition(node.end).line -
        src.getLineAndCharacterOfPosition(node.getStart()).line +
        1;
      const name =
        node.name?.getText(src) ??
        (ts.isVariableDeclaration(node.parent) ? node.parent.name.getText(src) : '<anonymous>');
      if (lines > MAX_FUNCTION_LINES) found.push({ name, lines });
    }
    ts.forEachChild(node, visit);
  };
  visit(src);
  return found;
}

const files = sourceFiles(join(ROOT, 'workflows')).map((path) => ({ path, rel: relative(ROOT, path) }));

test('no workflow file is over ~400 lines', () => {
  const long = files
    .map(({ path, rel }) => ({ rel, lines: readFileSync(path, 'utf8').split('\n').length }))
    .filter((f) => f.lines > MAX_FILE_LINES);
  expect(long).toEqual([]);
});

test('no workflow function is over ~80 lines', () => {
  const over = files.flatMap(({ path, rel }) =>
    longFunctions(path).map((f) => ({ key: `${rel}:${f.name}`, lines: f.lines })),
  );
  expect(over).toEqual([]);
});

test('the check has teeth: it finds a long function, declared or arrow, and passes a short one', () => {
  const body = (n: number) => Array.from({ length: n }, (_, i) => `  const x${i} = ${i};`).join('\n');
  const text = [
    `export async function long(): Promise<void> {\n${body(79)}\n}`,
    `const longArrow = () => {\n${body(79)}\n};`,
    `function short(): void {\n${body(78)}\n}`,
  ].join('\n');
  expect(longFunctions('made-up.ts', text)).toEqual([
    { name: 'long', lines: 81 },
    { name: 'longArrow', lines: 81 },
  ]);
});
