// format.js — human-readable numbers, rates, fractions and dates.  Durations
// come from the API as text (tsr_duration_text: one format for the CLI, the
// API and the dashboard).

const intFmt = new Intl.NumberFormat('en-US', { maximumFractionDigits: 0 });

/** 1234567 → "1,234,567"; null → "—". */
export function fmtInt(n) {
  return n == null || !Number.isFinite(n) ? '—' : intFmt.format(n);
}

/** Compact count: 12300 → "12.3k", 4.5e9 → "4.5G". */
export function fmtCompact(n) {
  if (n == null || !Number.isFinite(n)) return '—';
  const units = [[1e12, 'T'], [1e9, 'G'], [1e6, 'M'], [1e3, 'k']];
  for (const [v, u] of units) {
    if (Math.abs(n) >= v) {
      const x = n / v;
      return `${x >= 100 ? x.toFixed(0) : x >= 10 ? x.toFixed(1).replace(/\.0$/, '') : x.toFixed(2).replace(/\.?0+$/, '')}${u}`;
    }
  }
  return String(Math.round(n));
}

/** Nodes per second: 12345678 → "12.3 M/s". */
export function fmtRate(r) {
  if (r == null || !Number.isFinite(r) || r <= 0) return '—';
  const units = [[1e9, 'G'], [1e6, 'M'], [1e3, 'k']];
  for (const [v, u] of units) {
    if (r >= v) return `${(r / v).toFixed(1)} ${u}/s`;
  }
  return `${Math.round(r)}/s`;
}

/** 0.4213 → "42.1%". */
export function fmtPercent(f) {
  if (f == null || !Number.isFinite(f)) return '—';
  const p = Math.max(0, Math.min(1, f)) * 100;
  /* a deep search moves far below a tenth of a percent: show it moving */
  if (p > 0 && p < 0.1) return `${p.toPrecision(4)}%`;
  return `${p >= 99.95 && f < 1 ? '99.9' : p.toFixed(1)}%`;
}

/** Unix seconds → local date/time string. */
export function fmtTime(t) {
  if (!t) return '—';
  return new Date(t * 1000).toLocaleString();
}
