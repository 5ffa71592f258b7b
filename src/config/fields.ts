/**
 * The kinds of setting (zod schemas that turn the environment's text into values), each refusing a bad
 * value with a message that starts with the setting's name. Bounds come from what the runtime can do
 * (bounds.ts); settings.ts lists which setting is which kind.
 */
import { accessSync, constants, existsSync, statSync } from 'node:fs';
import { isIP } from 'node:net';
import { dirname, resolve } from 'node:path';
import { z } from 'zod';
import { dayProblem, MAX_TIMER_MS, parseByteSize } from './bounds.js';
import { formatDuration, parseDuration } from './duration.js';
import { apiKeyProblem, baseUrlProblem } from './secret.js';

/** A duration from `min` to `max` ms (by default what a Node timer accepts: see bounds.ts). */
export const duration = (name: string, min = 0, max = MAX_TIMER_MS) =>
  z.string().transform((text, ctx) => {
    const ms = parseDuration(text);
    if (ms === null || ms < min) {
      ctx.addIssue({
        code: 'custom',
        message: `${name} must be a duration like 90s, 5m, 3d (got "${text}")`,
      });
      return z.NEVER;
    }
    if (ms > max) {
      ctx.addIssue({
        code: 'custom',
        message: `${name} must be at most ${formatDuration(max)} (got "${text}")`,
      });
      return z.NEVER;
    }
    return ms;
  });

export const byteSize = (name: string, min: number, max: number) =>
  z.string().transform((text, ctx) => {
    const bytes = parseByteSize(text);
    if (bytes === null || bytes < min || bytes > max) {
      ctx.addIssue({
        code: 'custom',
        message: `${name} must be a size from ${min / 1024 ** 2}MB to ${max / 1024 ** 3}GB, like 32MB (got "${text}")`,
      });
      return z.NEVER;
    }
    return bytes;
  });

/** A day from FIRST_DAY to today, that exists on the calendar. */
export const syncDay = (name: string) =>
  z.string().superRefine((text, ctx) => {
    const problem = dayProblem(text, new Date());
    if (problem) ctx.addIssue({ code: 'custom', message: `${name} ${problem}` });
  });

export const integer = (name: string, min: number, max: number) =>
  z.string().transform((text, ctx) => {
    const n = Number(text);
    if (!/^\d+$/.test(text.trim()) || n < min || n > max) {
      ctx.addIssue({
        code: 'custom',
        message: `${name} must be a whole number from ${min} to ${max} (got "${text}")`,
      });
      return z.NEVER;
    }
    return n;
  });

/**
 * A decimal number from `min` to `max` (fractions allowed). Bounded on both sides: a rate so small that
 * its spacing overflows a timer, or so large that the spacing rounds to nothing, is refused here.
 */
export const decimal = (name: string, min: number, max: number) =>
  z.string().transform((text, ctx) => {
    const n = Number(text);
    if (text.trim() === '' || !Number.isFinite(n) || n < min || n > max) {
      ctx.addIssue({
        code: 'custom',
        message: `${name} must be a number from ${min} to ${max} (got "${text}")`,
      });
      return z.NEVER;
    }
    return n;
  });

/** An on/off switch: 1, true, yes, on, or 0, false, no, off. */
export const flag = (name: string) =>
  z.string().transform((text, ctx) => {
    const value = text.trim().toLowerCase();
    if (['1', 'true', 'yes', 'on'].includes(value)) return true;
    if (['0', 'false', 'no', 'off'].includes(value)) return false;
    ctx.addIssue({ code: 'custom', message: `${name} must be 1 or 0 (got "${text}")` });
    return z.NEVER;
  });

export const url = (name: string, protocols: string[]) =>
  z.string().refine(
    (text) => {
      try {
        return protocols.includes(new URL(text).protocol);
      } catch {
        return false;
      }
    },
    { message: `${name} must be a ${protocols.join(' or ')} URL` },
  );

/** The payment service's base URL: http(s), with no credentials or query in it (see secret.ts). */
export const serviceUrl = (name: string) =>
  url(name, ['http:', 'https:']).superRefine((text, ctx) => {
    const problem = baseUrlProblem(text);
    if (problem) ctx.addIssue({ code: 'custom', message: `${name} ${problem}` });
  });

export const apiKey = (name: string) =>
  z
    .string()
    .min(1, `${name} must not be empty`)
    .superRefine((text, ctx) => {
      const problem = apiKeyProblem(text);
      if (problem) ctx.addIssue({ code: 'custom', message: `${name} ${problem}` });
    });

/** An address to listen on: an IP literal or a host name. */
export const host = (name: string) =>
  z
    .string()
    .refine(
      (text) =>
        isIP(text) !== 0 ||
        /^(?=.{1,253}$)[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?)*$/.test(
          text,
        ),
      {
        message: `${name} must be an IP address or a host name like 127.0.0.1 or 0.0.0.0`,
      },
    );

export const hostList = (name: string) =>
  z.string().transform((text, ctx) => {
    const names = text
      .split(',')
      .map((n) => n.trim())
      .filter(Boolean);
    const bad = names.find((n) => !host(name).safeParse(n).success);
    if (bad !== undefined) {
      ctx.addIssue({
        code: 'custom',
        message: `${name} must list host names separated by commas (got "${bad}")`,
      });
      return z.NEVER;
    }
    return names;
  });

/** The nearest path at or above `path` that exists. */
function nearestExisting(path: string): string {
  let current = resolve(path);
  while (!existsSync(current)) current = dirname(current);
  return current;
}

/**
 * A directory paysync writes into: it must be a directory already, or be creatable under the nearest
 * existing directory above it; checked at start-up so a bad value fails now, not at the first export.
 */
export const directory = (name: string) =>
  z.string().refine(
    (text) => {
      if (text.includes('\0')) return false;
      const existing = nearestExisting(text);
      try {
        if (!statSync(existing).isDirectory()) return false;
        accessSync(existing, constants.W_OK);
        return true;
      } catch {
        return false;
      }
    },
    { message: `${name} must be a directory paysync can write to (or create)` },
  );
