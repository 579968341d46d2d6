// format.js — human-readable numbers, rates and durations.

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

const pad2 = (n) => String(n).padStart(2, '0');

/** Seconds in the one duration format of the CLI and the API (tsr_duration_text in
 *  src/engine/eta.c): "under 0.1s", "42.3s", "35m28s", "3h05m", "2.4 days", "3.1 years",
 *  "more than a century"; null → "—". */
export function fmtDuration(s) {
  if (s == null || !Number.isFinite(s) || s < 0) return '—';
  const day = 86400, year = 365.25 * day;
  if (s >= 100 * year) return 'more than a century';
  if (s >= 2 * year) return `${(s / year).toFixed(1)} years`;
  if (s >= 2 * day) return `${(s / day).toFixed(1)} days`;
  if (s >= 3600) {
    const m = Math.round(s / 60);
    return `${Math.floor(m / 60)}h${pad2(m % 60)}m`;
  }
  if (s >= 60) {
    const t = Math.round(s);
    return `${Math.floor(t / 60)}m${pad2(t % 60)}s`;
  }
  if (s >= 0.1) return `${s.toFixed(1)}s`;
  return s === 0 ? '0s' : 'under 0.1s';
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
