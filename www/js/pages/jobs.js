// pages/jobs.js — the jobs table (#/): every job with live state, progress,
// rate, solutions, elapsed and ETA, plus pause/resume/cancel/delete (cancel
// and delete ask first).

import { h } from '../dom.js';
import { api, isFinal } from '../api.js';
import { fmtInt, fmtRate } from '../format.js';
import { watchJob } from '../live.js';
import {
  stateBadge, updateStateBadge, progressBar, updateProgress,
  actionButtons, updateActionButtons, runAction, confirmAction, limitText,
} from '../jobui.js';

const NUMERIC = new Set(['ID', 'Rate', 'Solutions', 'Elapsed', 'ETA']);

export function mount(root) {
  document.title = 'Jobs · Tessera';
  const rows = new Map(); // id → { tr, job, watcher, cells }
  let destroyed = false;
  let refreshTimer = 0;

  const errorBox = h('div', { class: 'alert', role: 'alert', 'data-testid': 'page-error', hidden: true });
  const tbody = h('tbody');
  const empty = h('p', { class: 'empty', hidden: true }, 'No jobs yet. ', h('a', { href: '#/submit', text: 'Submit a puzzle' }), ' to get started.');
  const table = h('table', { class: 'jobs-table', 'data-testid': 'jobs-table' },
    h('caption', { class: 'sr-only', text: 'All jobs' }),
    h('thead', {}, h('tr', {},
      ['ID', 'Name', 'State', 'Progress', 'Rate', 'Solutions', 'Elapsed', 'ETA', 'Actions']
        .map((t) => h('th', { scope: 'col', class: `col-${t.toLowerCase()}${NUMERIC.has(t) ? ' num' : ''}`, text: t })))),
    tbody);
  const countNote = h('span', { class: 'muted', 'aria-live': 'polite' });

  root.append(h('div', { class: 'container' },
    h('div', { class: 'page-head' },
      h('h1', { text: 'Jobs' }), countNote,
      h('a', { class: 'btn btn-primary', href: '#/submit', text: 'New job' })),
    errorBox,
    h('section', { class: 'card card-flush' }, h('div', { class: 'table-scroll' }, table), empty)));

  const showError = (msg) => { errorBox.textContent = msg; errorBox.hidden = !msg; };

  function updateRow(r, job) {
    r.job = job;
    const c = r.cells;
    c.name.textContent = job.name || `Job ${job.id}`;
    updateStateBadge(c.state, job.state);
    c.limit.textContent = limitText(job, true);
    c.limit.title = limitText(job);
    c.limit.hidden = !job.limit_reached;
    updateProgress(c.progress, job);
    c.rate.textContent = job.state === 'running' ? fmtRate(job.progress?.rate) : '—';
    c.solutions.textContent = fmtInt(job.solutions);
    c.elapsed.textContent = job.progress?.elapsed ?? '—';
    /* the list shows the estimate; the range is in its tooltip and on the job's page */
    const eta = isFinal(job) ? null : job.progress?.eta;
    c.eta.textContent = !eta ? '—' : eta.estimate;
    c.eta.title = eta ? eta.text : '';
    updateActionButtons(c.actions, job, r.busy);
    r.tr.dataset.state = job.state;
  }

  function watch(r) {
    if (r.watcher || isFinal(r.job)) return;
    r.watcher = watchJob(r.job.id, (job) => {
      updateRow(r, job);
      if (isFinal(job)) { r.watcher?.close(); r.watcher = null; }
    }, () => removeRow(r.job.id));
  }

  function removeRow(id) {
    const r = rows.get(id);
    if (!r) return;
    r.watcher?.close();
    r.tr.remove();
    rows.delete(id);
    updateCount();
  }

  function updateCount() {
    empty.hidden = rows.size > 0;
    table.hidden = rows.size === 0;
    const running = [...rows.values()].filter((r) => r.job.state === 'running').length;
    countNote.textContent = `${fmtInt(rows.size)} job${rows.size === 1 ? '' : 's'}${running ? `, ${running} running` : ''}`;
  }

  async function onAction(r, action) {
    if (!(await confirmAction(action, `job ${r.job.id} (${r.job.name || 'unnamed'})`)) || destroyed) return;
    r.busy = true;
    updateActionButtons(r.cells.actions, r.job, true);
    showError('');
    try {
      const job = await runAction(r.job.id, action);
      if (destroyed) return;
      r.busy = false;
      if (job == null) { removeRow(r.job.id); return; }
      updateRow(r, job);
      watch(r);
    } catch (e) {
      r.busy = false;
      updateActionButtons(r.cells.actions, r.job);
      showError(e.message);
    }
  }

  function addRow(job) {
    const cells = {
      name: h('a', { href: `#/jobs/${job.id}`, 'data-testid': 'job-name' }),
      state: stateBadge(job.state),
      limit: h('span', { class: 'limit-tag', 'data-testid': 'job-limit', hidden: true }),
      progress: progressBar(job, `Progress of job ${job.id}`),
      rate: h('span'), solutions: h('span', { 'data-testid': 'job-solutions' }),
      elapsed: h('span'), eta: h('span'),
    };
    const r = { job, cells, watcher: null, busy: false };
    cells.actions = actionButtons(job, (a) => onAction(r, a), `job ${job.id}`);
    r.tr = h('tr', { 'data-testid': 'job-row', 'data-job-id': String(job.id) },
      // data-label: the column's name, shown beside the value when narrow
      // screens lay each row out as a card
      h('td', { class: 'num col-id', 'data-label': 'ID', text: String(job.id) }),
      h('td', { class: 'col-name' }, cells.name),
      h('td', { 'data-label': 'State' }, cells.state, ' ', cells.limit),
      h('td', { class: 'col-progress' }, cells.progress),
      h('td', { class: 'num', 'data-label': 'Rate' }, cells.rate),
      h('td', { class: 'num', 'data-label': 'Solutions' }, cells.solutions),
      h('td', { class: 'num', 'data-label': 'Elapsed' }, cells.elapsed),
      h('td', { class: 'num', 'data-label': 'ETA' }, cells.eta),
      h('td', { class: 'col-actions' }, cells.actions));
    rows.set(job.id, r);
    updateRow(r, job);
    // Keep rows in id order.
    const after = [...tbody.children].find((tr) => Number(tr.dataset.jobId) > job.id);
    tbody.insertBefore(r.tr, after || null);
    watch(r);
  }

  async function refresh() {
    try {
      const jobs = await api.allJobs();
      if (destroyed) return;
      const seen = new Set();
      for (const job of jobs) {
        seen.add(job.id);
        const r = rows.get(job.id);
        if (!r) addRow(job);
        else if (!r.watcher && !r.busy) { updateRow(r, job); watch(r); }
      }
      for (const id of [...rows.keys()]) if (!seen.has(id)) removeRow(id);
      updateCount();
      if (errorBox.dataset.kind === 'load') showError('');
    } catch (e) {
      if (destroyed) return;
      showError(`Could not load the jobs: ${e.message}`);
      errorBox.dataset.kind = 'load';
    }
  }

  const ready = refresh().finally(() => {
    if (!destroyed) refreshTimer = setInterval(refresh, 5000);
  });

  return {
    ready,
    destroy() {
      destroyed = true;
      clearInterval(refreshTimer);
      for (const r of rows.values()) r.watcher?.close();
    },
  };
}
