import { expandVars } from './expand-vars';

const vars: Record<string, string> = { NAME: 'etcd-0', NS: 'db', EMPTY: '' };
const lookup = (n: string): string | undefined => vars[n];

describe('expandVars', () => {
  const cases: Array<[string, string, string]> = [
    ['a known reference is replaced by its value', '--name=$(NAME)', '--name=etcd-0'],
    ['several references in one string are all replaced', '$(NAME).$(NS).svc', 'etcd-0.db.svc'],
    ['an unknown reference is kept verbatim', '$(MISSING)-x', '$(MISSING)-x'],
    ['a doubled dollar escapes the reference', '$$(NAME)', '$(NAME)'],
    ['a reference to an empty value becomes empty', 'a$(EMPTY)b', 'ab'],
    ['an unclosed reference is kept as written', 'x $(NAME', 'x $(NAME'],
    ['a dollar not followed by a parenthesis is kept', 'cost $5', 'cost $5'],
    ['a trailing dollar is kept', 'end$', 'end$'],
    ['a string without references is unchanged', 'plain', 'plain'],
  ];
  it.each(cases)('%s', (_name, input, expected) => {
    expect(expandVars(input, lookup)).toBe(expected);
  });
});
