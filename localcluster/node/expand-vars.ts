// Expands $(VAR) references the way Kubernetes does for env values, command and args; unknown references stay verbatim.

/** Kubernetes' expansion: `$(NAME)` becomes the value when known, `$$` becomes `$`, anything else is kept as written. */
export function expandVars(input: string, lookup: (name: string) => string | undefined): string {
  let out = '';
  let checkpoint = 0;
  for (let cursor = 0; cursor < input.length; cursor++) {
    if (input[cursor] !== '$' || cursor + 1 >= input.length) continue;
    out += input.slice(checkpoint, cursor);
    const rest = input.slice(cursor + 1);
    let advance = 1;
    if (rest[0] === '$') {
      out += '$';
    } else if (rest[0] === '(') {
      const close = rest.indexOf(')');
      if (close > 0) {
        const name = rest.slice(1, close);
        const value = lookup(name);
        out += value ?? `$(${name})`;
        advance = close + 1;
      } else {
        out += '$(';
      }
    } else {
      out += '$' + rest[0];
    }
    cursor += advance;
    checkpoint = cursor + 1;
  }
  return out + input.slice(checkpoint);
}
