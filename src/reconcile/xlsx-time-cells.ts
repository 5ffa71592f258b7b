/**
 * A time field of the COPY's CSV (`YYYY-MM-DDTHH:MM:SS.mmmZ`, as pack-query.ts prints it) as a records
 * sheet's two cells, written as bytes: the wall clock in REPORT_TIMEZONE as a date serial (the zone's
 * offset from its rules at that very instant; dateSerialParts of xlsx-cells.ts, the small sheets'
 * formula) and the exact UTC ISO text. A text that is not such an instant gets the text cell alone.
 *
 * The arithmetic is kept cheap by what a day's records share: the date of the last instant read, the
 * zone's offset per hour (offsetAt says when an hour is looked up instant by instant), the whole days of
 * the last serial.
 */
import { dateSerialParts } from './xlsx-cells.js';
import { ascii, type RowBytes } from './xlsx-row-bytes.js';
import { STYLE } from './xlsx-styles.js';

/** The decimal number of input[from, from + length), or NaN if a byte is not a digit. */
function num(input: Buffer, from: number, length: number): number {
  let n = 0;
  for (let i = from; i < from + length; i++) {
    const d = (input[i] as number) - 0x30;
    if (d < 0 || d > 9) return NaN;
    n = n * 10 + d;
  }
  return n;
}

export class TimeCells {
  private readonly offsets = new Map<number, number>();
  private lastHour = NaN;
  private lastOffset = 0;
  private lastDateKey = -1;
  private lastDateMs = 0;
  private lastSerialDays = -1;
  private lastSerialDigits = Buffer.alloc(0);

  /** `offsetMinutes`: the zone's offset from UTC, in minutes, at an instant. */
  constructor(private readonly offsetMinutes: (epochMs: number) => number) {}

  /** Writes the cells of input[s, e) at `cell` and `cell + 1` of the current row (none when it is empty). */
  write(w: RowBytes, input: Buffer, s: number, e: number, cell: number): void {
    if (s === e) return;
    const utc = e - s === 24 ? this.instant(input, s) : NaN;
    if (!Number.isNaN(utc)) {
      w.open(cell, STYLE.date);
      w.openValue();
      this.putSerial(w, utc + this.offsetAt(utc) * 60_000);
      w.closeValue();
    }
    w.ref(cell + 1);
    w.openText(false);
    w.copy(input, s, e);
    w.closeText();
  }

  /** The instant of the 24 bytes of an ISO UTC text at `s`, or NaN. */
  private instant(input: Buffer, s: number): number {
    if (input[s + 4] !== 0x2d || input[s + 7] !== 0x2d || input[s + 10] !== 0x54 || input[s + 13] !== 0x3a)
      return NaN;
    if (input[s + 16] !== 0x3a || input[s + 19] !== 0x2e || input[s + 23] !== 0x5a) return NaN;
    const dateKey = num(input, s, 4) * 10_000 + num(input, s + 5, 2) * 100 + num(input, s + 8, 2);
    if (dateKey !== this.lastDateKey) {
      // consecutive records share their day: the date is worked out once per day
      const y = Math.floor(dateKey / 10_000);
      const ms = Date.UTC(y, (Math.floor(dateKey / 100) % 100) - 1, dateKey % 100);
      if (Number.isNaN(ms) || new Date(ms).getUTCDate() !== dateKey % 100 || y < 1000) return NaN;
      this.lastDateKey = dateKey;
      this.lastDateMs = ms;
    }
    const h = num(input, s + 11, 2);
    const m = num(input, s + 14, 2);
    const sec = num(input, s + 17, 2);
    if (h > 23 || m > 59 || sec > 59) return NaN;
    return this.lastDateMs + h * 3_600_000 + m * 60_000 + sec * 1000 + num(input, s + 20, 3);
  }

  /** dateSerialText (xlsx-cells.ts) of a wall-clock time, written as bytes. */
  private putSerial(w: RowBytes, wallClockMs: number): void {
    const { days, fraction } = dateSerialParts(wallClockMs);
    if (days !== this.lastSerialDays) {
      this.lastSerialDays = days;
      this.lastSerialDigits = ascii(`${days}.`);
    }
    w.put(this.lastSerialDigits);
    const out = w.out;
    let q = fraction;
    for (let k = w.o + 9; k >= w.o; k--) {
      out[k] = 0x30 + (q % 10);
      q = Math.floor(q / 10);
    }
    w.o += 10;
  }

  /**
   * The zone's offset at `ms`, looked up once per hour: an hour whose two ends have the same offset is
   * taken to have it throughout (zone rules change offsets at most a few times a year, never twice within
   * an hour); in an hour where it changes, every instant is looked up.
   */
  private offsetAt(ms: number): number {
    const hour = Math.floor(ms / 3_600_000);
    if (hour === this.lastHour) return this.lastOffset;
    const cached = this.offsets.get(hour);
    if (cached !== undefined) {
      this.lastHour = hour;
      this.lastOffset = cached;
      return cached;
    }
    const start = this.offsetMinutes(hour * 3_600_000);
    const end = this.offsetMinutes(hour * 3_600_000 + 3_599_999);
    if (start !== end) return this.offsetMinutes(ms);
    this.offsets.set(hour, start);
    this.lastHour = hour;
    this.lastOffset = start;
    return start;
  }
}
