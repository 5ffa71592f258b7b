/** Durations: what settings accept, and how a lag reads in `paysync status` and on the status page. */
import { describe, expect, it } from '@jest/globals';
import { humanDuration, parseDuration } from '../../src/config/duration.js';

describe('durations', () => {
  it('settings take a whole number and a unit', () => {
    expect(parseDuration('250ms')).toBe(250);
    expect(parseDuration('90s')).toBe(90_000);
    expect(parseDuration('5m')).toBe(300_000);
    expect(parseDuration('3d')).toBe(259_200_000);
    for (const bad of ['5', '5 m', '1.5h', '-1s', 'soon']) expect(parseDuration(bad)).toBeNull();
  });

  it('a lag reads in its two largest units', () => {
    expect(humanDuration(774_000)).toBe('12m 54s');
    expect(humanDuration(3 * 3_600_000 + 125_000)).toBe('3h 2m');
    expect(humanDuration(2 * 86_400_000 + 4 * 3_600_000 + 5_000)).toBe('2d 4h');
    expect(humanDuration(0)).toBe('0s');
  });
});
