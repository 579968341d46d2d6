// jobui.js — job widgets shared by the jobs table and the job page: state
// badge (with the note for a search its limit stopped), progress bar,
// action buttons, the confirmation asked before cancel and delete, and the
// action handler (re-run included: the same puzzle and options as a new job).

import { h } from './dom.js';
import { api, isFinal } from './api.js';
import { fmtInt, fmtPercent } from './format.js';

const LABELS = { pause: 'Pause', resume: 'Resume', cancel: 'Cancel', delete: 'Delete', rerun: 'Run again' };

/** What cancel and delete ask before they act (nothing else is lost). */
const CONFIRM = {
  cancel: (name) => ({
    title: `Cancel ${name}?`,
    message: 'The search stops for good; the solutions found so far are kept. A cancelled job can be run again from the start.',
    ok: 'Cancel the job', back: 'Keep the job',
  }),
  delete: (name) => ({
    title: `Delete ${name}?`,
    message: 'The job and every solution stored with it are removed. This cannot be undone.',
    ok: 'Delete the job', back: 'Keep it',
  }),
};

export function stateBadge(state) {
  return h('span', { class: `badge state-${state}`, 'data-testid': 'job-state', text: state });
}

export function updateStateBadge(el, state) {
  if (el.textContent !== state) { el.textContent = state; el.className = `badge state-${state}`; }
}

/** The words for a job its solution limit stopped, or '' for any other job. */
export function limitText(job, short = false) {
  if (!job.limit_reached) return '';
  const lim = fmtInt(job.options?.limit);
  const f = fmtPercent(job.progress?.fraction);
  return short ? `limit ${lim}` : `Stopped at its limit of ${lim} solution${job.options?.limit === 1 ? '' : 's'}, after ${f} of the search.`;
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
  const pct = wrap.querySelector('.pct');
  pct.textContent = job.limit_reached ? `${fmtPercent(f)} searched` : fmtPercent(f);
  // a search its limit stopped shows how far it got, marked as such
  wrap.classList.toggle('is-limit', !!job.limit_reached);
  wrap.title = job.limit_reached ? limitText(job) : '';
  wrap.classList.toggle('is-running', job.state === 'running');
}

/** The action buttons; onAction(action) is called on click. */
export function actionButtons(job, onAction, nameForLabel, which = ['pause', 'resume', 'cancel', 'delete']) {
  const wrap = h('span', { class: 'actions' });
  for (const a of which) {
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
    // the API lists the actions that would change the job now (its
    // life-cycle rules); a finished job can run again as a new one
    const allowed = b.dataset.action === 'rerun' ? isFinal(job) : (job.actions ?? []).includes(b.dataset.action);
    b.disabled = busy || !allowed;
    if (b.dataset.action === 'rerun') b.hidden = !allowed; // only finished jobs run again
  }
}

/**
 * A modal question: resolves true when the user confirms, false when they
 * step back (the button, Escape or a click outside).
 */
export function confirmDialog({ title, message, ok, back }) {
  return new Promise((resolve) => {
    const okBtn = h('button', { type: 'button', class: 'btn btn-danger-solid', 'data-testid': 'confirm-ok', text: ok });
    const backBtn = h('button', { type: 'button', class: 'btn', 'data-testid': 'confirm-cancel', text: back });
    const dlg = h('dialog', { class: 'confirm', 'data-testid': 'confirm-dialog', 'aria-labelledby': 'confirm-title' },
      h('h2', { id: 'confirm-title', text: title }),
      h('p', { text: message }),
      h('div', { class: 'button-row' }, backBtn, okBtn));
    let answer = false;
    const done = (v) => { answer = v; dlg.close(); };
    okBtn.addEventListener('click', () => done(true));
    backBtn.addEventListener('click', () => done(false));
    dlg.addEventListener('click', (e) => { if (e.target === dlg) done(false); }); // the backdrop
    // another page (a link, the back button) is the user stepping back:
    // the question belonged to the page they left
    const onNav = () => done(false);
    window.addEventListener('hashchange', onNav);
    dlg.addEventListener('close', () => { window.removeEventListener('hashchange', onNav); dlg.remove(); resolve(answer); });
    document.body.append(dlg);
    dlg.showModal();
    backBtn.focus(); // the safe choice has the focus
  });
}

/** Asks first where the action loses something; true to go ahead. */
export async function confirmAction(action, name) {
  return CONFIRM[action] ? confirmDialog(CONFIRM[action](name)) : true;
}

/**
 * Runs an action; resolves to the updated job, null after a delete, or
 * {rerun: job} with the new job of a re-run (the puzzle as the daemon
 * stored it, the options in force, engine choices included).
 */
export async function runAction(id, action, job) {
  if (action === 'delete') { await api.remove(id); return null; }
  if (action === 'rerun') {
    const puzzle = await api.puzzle(id);
    return { rerun: await api.submit({ puzzle, options: job.options || {} }) };
  }
  return api.action(id, action);
}
