/**
 * Server-rendered SVG charts for the status page, pure: no script, no library from a CDN, readable
 * offline. Each chart has a title, axis labels with units, a legend in words, and a <title> on every
 * point with its exact value. A chart without data says "no data in the last 24 h" instead of drawing a
 * flat line that would read as "zero".
 */
import { DateTime } from 'luxon';
import { escapeHtml } from './html.js';
import type { Series } from './status-history.js';

const W = 560;
const H = 200;
const PAD = { left: 52, right: 12, top: 12, bottom: 36 };
const COLOURS = ['#1f6feb', '#c2410c', '#15803d', '#7c3aed', '#a16207', '#0e7490'];

export interface ChartSpec {
  id: string;
  title: string;
  /** The y axis's unit, e.g. "minutes", "records per hour". */
  unit: string;
  kind: 'line' | 'bars';
  /** For bars: what a series' 24-hour total counts ("new records"), said beside it in the legend. */
  counted?: string;
  series: Series[];
  from: number;
  to: number;
  zone: string;
}

function niceMax(max: number): number {
  if (max <= 0) return 1;
  const p = 10 ** Math.floor(Math.log10(max));
  for (const m of [1, 2, 2.5, 5, 10]) if (m * p >= max) return m * p;
  return 10 * p;
}

const fmt = (v: number) => (Number.isInteger(v) ? String(v) : v.toFixed(1));

function axes(spec: ChartSpec, yMax: number, x: (t: number) => number, y: (v: number) => number): string {
  const out: string[] = [];
  for (const v of [0, yMax / 2, yMax]) {
    out.push(
      `<line class="grid" x1="${PAD.left}" x2="${W - PAD.right}" y1="${y(v)}" y2="${y(v)}"/>`,
      `<text class="y-tick" x="${PAD.left - 6}" y="${y(v) + 4}" text-anchor="end">${fmt(v)}</text>`,
    );
  }
  for (let t = Math.ceil(spec.from / 21_600_000) * 21_600_000; t <= spec.to; t += 21_600_000) {
    const label = DateTime.fromMillis(t, { zone: spec.zone }).toFormat('HH:mm');
    out.push(
      `<text class="x-tick" x="${x(t)}" y="${H - PAD.bottom + 16}" text-anchor="middle">${label}</text>`,
    );
  }
  out.push(
    `<text class="axis-label" x="${(PAD.left + W - PAD.right) / 2}" y="${H - 4}" text-anchor="middle">time (${escapeHtml(spec.zone)}), last 24 h</text>`,
    `<text class="axis-label" transform="translate(12 ${(PAD.top + H - PAD.bottom) / 2}) rotate(-90)" text-anchor="middle">${escapeHtml(spec.unit)}</text>`,
    `<line class="axis" x1="${PAD.left}" x2="${PAD.left}" y1="${PAD.top}" y2="${H - PAD.bottom}"/>`,
    `<line class="axis" x1="${PAD.left}" x2="${W - PAD.right}" y1="${H - PAD.bottom}" y2="${H - PAD.bottom}"/>`,
  );
  return out.join('');
}

function pointTitle(spec: ChartSpec, name: string, at: number, value: number): string {
  const when = DateTime.fromMillis(at, { zone: spec.zone }).toFormat('yyyy-MM-dd HH:mm');
  return `<title>${escapeHtml(name)} ${when}: ${fmt(value)} ${escapeHtml(spec.unit)}</title>`;
}

function marks(spec: ChartSpec, x: (t: number) => number, y: (v: number) => number): string {
  const out: string[] = [];
  const n = spec.series.length;
  const slot = ((W - PAD.left - PAD.right) / 24) * 0.8;
  spec.series.forEach((s, i) => {
    const colour = COLOURS[i % COLOURS.length] as string;
    const name = escapeHtml(s.name);
    if (spec.kind === 'line') {
      const d = s.points
        .map((p, k) => `${k === 0 ? 'M' : 'L'}${x(p.at).toFixed(1)},${y(p.value).toFixed(1)}`)
        .join('');
      out.push(`<path class="series" data-series="${name}" d="${d}" stroke="${colour}" fill="none"/>`);
      for (const p of s.points)
        out.push(
          `<circle class="point" data-series="${name}" cx="${x(p.at).toFixed(1)}" cy="${y(p.value).toFixed(1)}" r="2" fill="${colour}">${pointTitle(spec, s.name, p.at, p.value)}</circle>`,
        );
    } else {
      const width = slot / n;
      for (const p of s.points) {
        if (p.value <= 0) continue;
        const left = x(p.at) + i * width;
        out.push(
          `<rect class="point" data-series="${name}" x="${left.toFixed(1)}" y="${y(p.value).toFixed(1)}" width="${width.toFixed(1)}" height="${(y(0) - y(p.value)).toFixed(1)}" fill="${colour}">${pointTitle(spec, s.name, p.at, p.value)}</rect>`,
        );
      }
    }
  });
  return out.join('');
}

function legend(spec: ChartSpec): string {
  return `<ul class="legend">${spec.series
    .map((s, i) => {
      const colour = COLOURS[i % COLOURS.length] as string;
      const sum = s.points.reduce((n, p) => n + p.value, 0);
      const total =
        spec.kind === 'bars' ? `: ${sum}${spec.counted ? ` ${escapeHtml(spec.counted)}` : ''} in 24 h` : '';
      return `<li><span class="swatch" style="background:${colour}"></span>${escapeHtml(s.name)}${total}</li>`;
    })
    .join('')}</ul>`;
}

export function renderChart(spec: ChartSpec): string {
  const head = `<figure class="chart" id="${spec.id}"><figcaption>${escapeHtml(spec.title)}</figcaption>`;
  const hasData = spec.series.some((s) => s.points.length > 0);
  if (!hasData) return `${head}<p class="no-data">no data in the last 24 h</p></figure>`;
  const yMax = niceMax(Math.max(...spec.series.flatMap((s) => s.points.map((p) => p.value))));
  const x = (t: number) => PAD.left + ((t - spec.from) / (spec.to - spec.from)) * (W - PAD.left - PAD.right);
  const y = (v: number) => H - PAD.bottom - (v / yMax) * (H - PAD.top - PAD.bottom);
  const label = `${spec.title}, ${spec.unit}`;
  return `${head}<svg viewBox="0 0 ${W} ${H}" width="${W}" height="${H}" role="img" aria-label="${escapeHtml(label)}">${axes(spec, yMax, x, y)}${marks(spec, x, y)}</svg>${legend(spec)}</figure>`;
}
