// chart.js — SVG grouped bar chart of search attempts and fits per level
// (stats.levels), linear or logarithmic.

import { s } from './dom.js';
import { fmtCompact, fmtInt } from './format.js';

const FONT = 'system-ui, -apple-system, "Segoe UI", Roboto, sans-serif';
export const SERIES = [
  { key: 'attempts', label: 'Attempts', color: '#4363d8' },
  { key: 'fits', label: 'Fits', color: '#f58231' },
];

function niceStep(max, ticks) {
  const raw = max / ticks;
  const mag = 10 ** Math.floor(Math.log10(raw));
  const n = raw / mag;
  return (n <= 1 ? 1 : n <= 2 ? 2 : n <= 5 ? 5 : 10) * mag;
}

/** levels: [{pieces_left, attempts, fits}]; opts.log: log scale. */
export function drawLevelChart(levels, opts = {}) {
  const W = Math.round(Math.max(340, Math.min(760, opts.width || 760))), H = W < 500 ? 240 : 280;
  const L = 48, R = 8, T = 28, B = 42;
  const pw = W - L - R, ph = H - T - B;
  const svg = s('svg', {
    xmlns: 'http://www.w3.org/2000/svg', viewBox: `0 0 ${W} ${H}`, class: 'chart',
    role: 'img', 'data-testid': 'stats-chart', 'font-family': FONT, 'font-size': 12,
    'aria-label': `Attempts and fits per level (${opts.log ? 'logarithmic' : 'linear'} scale)`
      + (levels.length ? `, ${levels.length} levels` : ', no data yet'),
  });
  const max = Math.max(1, ...levels.map((l) => Math.max(l.attempts, l.fits)));
  const logMax = Math.log10(max + 1);
  const yOf = opts.log
    ? (v) => T + ph - (v > 0 ? (Math.log10(v + 1) / Math.max(logMax, 1)) * ph : 0)
    : (v) => T + ph - (v / max) * ph;

  // Grid and y ticks.
  const grid = s('g', { class: 'chart-grid', 'stroke-width': 1 });
  const labels = s('g', { class: 'chart-muted', 'text-anchor': 'end' });
  const ticks = [];
  if (opts.log) {
    for (let p = 0; p <= Math.max(1, Math.ceil(logMax)); p++) ticks.push(10 ** p);
  } else {
    const step = niceStep(max, 5);
    for (let v = 0; v <= max * 1.0001; v += step) ticks.push(v);
  }
  for (const v of ticks) {
    const y = yOf(v);
    if (y < T - 1) continue;
    grid.append(s('line', { x1: L, x2: W - R, y1: y, y2: y }));
    labels.append(s('text', { x: L - 6, y: y + 4, text: fmtCompact(v) }));
  }
  svg.append(grid, labels);

  if (!levels.length) {
    svg.append(s('text', { x: L + pw / 2, y: T + ph / 2, 'text-anchor': 'middle', class: 'chart-muted', text: 'No statistics yet' }));
  }

  const n = Math.max(1, levels.length);
  const slot = pw / n;
  const bw = Math.max(1, Math.min(22, (slot * 0.8) / 2));
  const xlab = s('g', { class: 'chart-muted', 'text-anchor': 'middle' });
  const labelEvery = Math.ceil(n / Math.max(1, Math.floor(pw / 26)));
  levels.forEach((lv, i) => {
    const cx = L + slot * (i + 0.5);
    SERIES.forEach((ser, j) => {
      const v = lv[ser.key];
      const y = yOf(v);
      const rect = s('rect', {
        x: cx - bw + j * bw, y, width: Math.max(0.5, bw - 1), height: Math.max(0, T + ph - y), fill: ser.color,
      });
      rect.append(s('title', { text: `${lv.pieces_left} pieces left: ${fmtInt(v)} ${ser.label.toLowerCase()}` }));
      svg.append(rect);
    });
    if (i % labelEvery === 0) xlab.append(s('text', { x: cx, y: T + ph + 16, text: lv.pieces_left }));
  });
  svg.append(xlab);
  svg.append(s('line', { x1: L, x2: W - R, y1: T + ph, y2: T + ph, class: 'chart-axis' }));
  svg.append(s('text', { x: L + pw / 2, y: H - 6, 'text-anchor': 'middle', class: 'chart-text', text: 'pieces left' }));

  // Legend.
  const leg = s('g', {});
  SERIES.forEach((ser, j) => {
    const x = L + j * 100;
    leg.append(s('rect', { x, y: 8, width: 12, height: 12, fill: ser.color }));
    leg.append(s('text', { x: x + 17, y: 18, class: 'chart-text', text: ser.label }));
  });
  svg.append(leg);
  return svg;
}
