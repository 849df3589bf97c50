// Kubernetes resource quantities ("1Gi", "512Mi", "1.5G", "2e9") as exact byte counts, so sizes compare by value, not by spelling.

const BINARY: Record<string, bigint> = {
  Ki: 1n << 10n,
  Mi: 1n << 20n,
  Gi: 1n << 30n,
  Ti: 1n << 40n,
  Pi: 1n << 50n,
  Ei: 1n << 60n,
};
const DECIMAL: Record<string, bigint> = {
  '': 1n,
  k: 10n ** 3n,
  M: 10n ** 6n,
  G: 10n ** 9n,
  T: 10n ** 12n,
  P: 10n ** 15n,
  E: 10n ** 18n,
};

/**
 * The value of a quantity rounded up to a whole unit (storage is never a fraction of a byte), or undefined
 * when the text is not a quantity. Milli ("m") and smaller suffixes are not sizes and are refused.
 */
export function parseQuantity(text: string | number | undefined): bigint | undefined {
  if (text === undefined) return undefined;
  const match = /^\+?([0-9]+)(?:\.([0-9]*))?(?:([KMGTPE]i|[kMGTPE])|[eE]([+-]?[0-9]+))?$/.exec(
    String(text).trim(),
  );
  if (!match) return undefined;
  const [, whole = '0', fraction = '', suffix, exponent] = match;
  const digits = BigInt(whole + fraction);
  let numerator = digits * (suffix ? (BINARY[suffix] ?? DECIMAL[suffix] ?? 1n) : 1n);
  let denominator = 10n ** BigInt(fraction.length);
  if (exponent !== undefined) {
    const e = BigInt(exponent);
    if (e >= 0n) numerator *= 10n ** e;
    else denominator *= 10n ** -e;
  }
  return (numerator + denominator - 1n) / denominator;
}

/** a < b by value; false when either is not a quantity (nothing is grown on a size that cannot be read). */
export function quantityLess(a: string | number | undefined, b: string | number | undefined): boolean {
  const x = parseQuantity(a);
  const y = parseQuantity(b);
  return x !== undefined && y !== undefined && x < y;
}
