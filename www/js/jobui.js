// jobui.js — job widgets shared by the jobs table and the job page: state
// badge, progress bar, action buttons, and the action handler.

import { h } from './dom.js';
import { api } from './api.js';
import { fmtPercent } from './format.js';

const ALLOWED = {
  pause: ['queued', 'running'],
  resume: ['paused'],
  cancel: ['queued', 'running', 'paused'],
  delete: ['completed', 'cancelled', 'failed'],
};
const LABELS = { pause: 'Pause', resume: 'Resume', cancel: 'Cancel', delete: 'Delete' };

export function stateBadge(state) {
  return h('span', { class: `badge state-${state}`, 'data-testid': 'job-state', text: state });
}

export function updateStateBadge(el, state) {
  if (el.textContent !== state) { el.textContent = state; el.className = `badge state-${state}`; }
}

/** <progress max=1> plus a percentage label. */
export function progressBar(job, label) {
  const bar = h('progress', { max: 1, 'data-testid': 'job-progress', 'aria-label': label });
  const pct = h('span', { class: 'pct' });
  const wrap = h('span', { class: 'progress-wrap' }, bar, pct);
  updateProgress(wrap, job);
  return wrap;
}

export function updateProgress(wrap, job) {
  const f = Math.max(0, Math.min(1, job.progress?.fraction ?? 0));
  const bar = wrap.querySelector('progress');
  bar.value = f;
  bar.setAttribute('value', String(f));
  wrap.querySelector('.pct').textContent = fmtPercent(f);
  wrap.classList.toggle('is-running', job.state === 'running');
}

/** The four action buttons; onAction(action) is called on click. */
export function actionButtons(job, onAction, nameForLabel) {
  const wrap = h('span', { class: 'actions' });
  for (const a of Object.keys(ALLOWED)) {
    wrap.append(h('button', {
      type: 'button', class: `btn btn-small ${a === 'delete' || a === 'cancel' ? 'btn-danger' : ''}`,
      'data-testid': a, 'data-action': a, text: LABELS[a],
      'aria-label': nameForLabel ? `${LABELS[a]} ${nameForLabel}` : null,
      onclick: () => onAction(a),
    }));
  }
  updateActionButtons(wrap, job);
  return wrap;
}

export function updateActionButtons(wrap, job, busy = false) {
  for (const b of wrap.querySelectorAll('button[data-action]')) {
    b.disabled = busy || !ALLOWED[b.dataset.action].includes(job.state);
  }
}

/** Runs an action; resolves to the updated job, or null after a delete. */
export async function runAction(id, action) {
  if (action === 'delete') { await api.remove(id); return null; }
  return api.action(id, action);
}
