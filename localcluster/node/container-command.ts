// Decides the argv a container runs from its image's table entry and its command/args; Docker's ENTRYPOINT/CMD rules, then a PATH search.
import type { ImageResolution } from './types';

export type CommandResolution = { argv: string[] } | { error: string };

/**
 * command replaces the entrypoint, args are appended; the first word is looked up in the image's commands
 * (by name or absolute path), then on the image's PATH and the given fallback PATH dirs via `exists`.
 */
export function resolveContainerCommand(
  image: ImageResolution,
  command: string[] | undefined,
  args: string[] | undefined,
  fallbackPath: string[],
  exists: (absolutePath: string) => boolean,
): CommandResolution {
  const words =
    command !== undefined && command.length > 0
      ? [...command, ...(args ?? [])]
      : [...image.entrypoint, ...(args ?? [])];
  const [first, ...rest] = words;
  if (first === undefined) return { error: 'no command specified' };
  const mapped =
    image.commands[first] ??
    (first.includes('/') ? undefined : image.commands[first.split('/').pop() ?? first]);
  if (mapped !== undefined && mapped.length > 0) return { argv: [...mapped, ...rest] };
  if (first.startsWith('/')) {
    return exists(first)
      ? { argv: [first, ...rest] }
      : { error: `exec: "${first}": stat ${first}: no such file or directory` };
  }
  for (const dir of [...image.path, ...fallbackPath]) {
    const candidate = `${dir}/${first}`;
    if (exists(candidate)) return { argv: [candidate, ...rest] };
  }
  return { error: `exec: "${first}": executable file not found in $PATH` };
}
