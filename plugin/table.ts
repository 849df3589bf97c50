// Plain tables as kubectl prints them: upper-case headers, columns padded to their widest cell, three spaces apart,
// "<none>" for an empty cell, no trailing spaces.

export type Cell = string | number | boolean | undefined;

export function renderTable(headers: readonly string[], rows: readonly (readonly Cell[])[]): string {
  const text = (c: Cell) => (c === undefined || c === '' ? '<none>' : String(c));
  const grid = [headers.map((h) => h.toUpperCase()), ...rows.map((r) => headers.map((_, i) => text(r[i])))];
  const widths = headers.map((_, i) => Math.max(...grid.map((r) => (r[i] ?? '').length)));
  return grid
    .map((r) =>
      r
        .map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i] ?? 0)))
        .join('   ')
        .trimEnd(),
    )
    .join('\n');
}

/** Bytes as kubectl and etcdctl users read them: 1024-based, one decimal below 10. */
export function formatBytes(bytes: number | undefined): string | undefined {
  if (bytes === undefined) return undefined;
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let v = bytes;
  let u = 0;
  while (v >= 1024 && u < units.length - 1) {
    v /= 1024;
    u++;
  }
  return u === 0 ? `${bytes} B` : `${v < 10 ? v.toFixed(1) : Math.round(v)} ${units[u]}`;
}

/** An age as kubectl prints it: 45s, 12m, 3h, 2d. */
export function formatAge(fromIso: string | undefined, now: number): string | undefined {
  if (!fromIso) return undefined;
  const t = Date.parse(fromIso);
  if (Number.isNaN(t)) return undefined;
  const s = Math.max(0, Math.floor((now - t) / 1000));
  if (s < 120) return `${s}s`;
  if (s < 7200) return `${Math.floor(s / 60)}m`;
  if (s < 172800) return `${Math.floor(s / 3600)}h`;
  return `${Math.floor(s / 86400)}d`;
}
