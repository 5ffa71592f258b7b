/**
 * The top of a V8 CPU profile (`node --cpu-prof`), for the benchmark's "where the time goes": self time
 * per function (garbage collection and idle included), as shares of the whole profile.
 */
import { readFileSync } from 'node:fs';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
}

interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

export interface ProfileLine {
  share: number;
  ms: number;
  what: string;
}

export function topSelfTime(file: string, count = 12): ProfileLine[] {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const totals = new Map<string, number>();
  let all = 0;
  profile.samples.forEach((id, i) => {
    const delta = profile.timeDeltas[i] ?? 0;
    const frame = byId.get(id)?.callFrame;
    const where = frame?.url ? ` ${frame.url.split('/').slice(-2).join('/')}:${frame.lineNumber + 1}` : '';
    const what = `${frame?.functionName || '(anonymous)'}${where}`;
    totals.set(what, (totals.get(what) ?? 0) + delta);
    all += delta;
  });
  return [...totals]
    .sort((a, b) => b[1] - a[1])
    .slice(0, count)
    .map(([what, us]) => ({ what, ms: us / 1000, share: all ? us / all : 0 }));
}
