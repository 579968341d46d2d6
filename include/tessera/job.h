/*
 * tessera/job.h - the states of a daemon job, spelled once.
 *
 * The store writes them, the API answers with them, the CLI filters and
 * waits on them, and the dashboard reads each job's `final` and `actions`
 * from the API rather than a copy of these rules (docs/api.md, "Life
 * cycle").  The order is the store's enum sto_state.
 */
#ifndef TESSERA_JOB_H
#define TESSERA_JOB_H

#include <stdbool.h>

#define TSR_JOB_NSTATES 6

/* "queued", "running", "paused", "completed", "cancelled", "failed", then
 * NULL. */
extern const char *const tsr_job_states[];

/* The index of the state named `name` in tsr_job_states, or -1. */
int tsr_job_state_parse(const char *name);

/* Completed, cancelled and failed are final: such a job never changes
 * again.  False for NULL or an unknown name. */
bool tsr_job_state_final(const char *name);

/* "queued, running, ... or failed": for messages that list them. */
extern const char tsr_job_states_text[];

#endif
