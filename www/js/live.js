// live.js — follows one job: an EventSource on /events (event "job") when
// possible, else polling GET /jobs/{id} every 2 s. Streams are capped so
// the browser's per-host connection limit is never exhausted.

import { api, getToken, isFinal } from './api.js';

const MAX_STREAMS = 3;
let openStreams = 0;

/**
 * watchJob(id, onJob, onGone) → { close() }
 * onJob(job) for every update; onGone(err) when the job disappears (404).
 */
export function watchJob(id, onJob, onGone = () => {}) {
  let es = null, timer = 0, closed = false, holdsSlot = false;

  const release = () => { if (holdsSlot) { holdsSlot = false; openStreams--; } };
  const stopStream = () => { if (es) { es.close(); es = null; } release(); };

  const poll = async () => {
    timer = 0;
    if (closed) return;
    try {
      const job = await api.job(id);
      if (closed) return;
      onJob(job);
      if (isFinal(job)) return;
    } catch (e) {
      if (closed) return;
      if (e.status === 404) { onGone(e); return; }
    }
    if (!closed) timer = setTimeout(poll, 2000);
  };

  const startPolling = (delay = 2000) => {
    if (!closed && !timer) timer = setTimeout(poll, delay);
  };

  if (!getToken() && typeof EventSource === 'function' && openStreams < MAX_STREAMS) {
    openStreams++;
    holdsSlot = true;
    es = new EventSource(`/api/v1/jobs/${id}/events`);
    es.addEventListener('job', (ev) => {
      let job;
      try { job = JSON.parse(ev.data); } catch { return; }
      if (closed) return;
      onJob(job);
      if (isFinal(job)) stopStream();
    });
    // Stream failed or ended early (e.g. job deleted): fall back to polling.
    es.addEventListener('error', () => { stopStream(); startPolling(0); });
  } else {
    startPolling(2000);
  }

  return {
    close() {
      closed = true;
      stopStream();
      if (timer) clearTimeout(timer);
      timer = 0;
    },
  };
}
