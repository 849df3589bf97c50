// Quantities compare by value: binary and decimal suffixes, fractions, exponents, and what is not a quantity.
import { parseQuantity, quantityLess } from './quantity';

describe('parseQuantity', () => {
  test.each([
    ['1Gi', 1073741824n],
    ['2048Mi', 2147483648n],
    ['1G', 1000000000n],
    ['1.5Gi', 1610612736n],
    ['512', 512n],
    ['1e3', 1000n],
    ['0.5', 1n],
    [1024, 1024n],
  ])('%s is %s bytes', (text, bytes) => {
    expect(parseQuantity(text)).toBe(bytes);
  });
  test.each([['abc'], ['1Gb'], ['-1Gi'], ['100m'], ['']])('%s is not a size', (text) => {
    expect(parseQuantity(text)).toBeUndefined();
  });
  it('compares by value', () => {
    expect(quantityLess('1Gi', '2Gi')).toBe(true);
    expect(quantityLess('2048Mi', '2Gi')).toBe(false);
    expect(quantityLess('1Gi', 'nonsense')).toBe(false);
  });
});
