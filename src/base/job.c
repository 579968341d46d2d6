/*
 * job.c - the names of a daemon job's states (tessera/job.h).
 */
#include <stddef.h>
#include <string.h>

#include "tessera/job.h"

const char *const tsr_job_states[TSR_JOB_NSTATES + 1] = {
    "queued", "running", "paused", "completed", "cancelled", "failed", NULL};

const char tsr_job_states_text[] = "queued, running, paused, completed, cancelled or failed";

int tsr_job_state_parse(const char *name)
{
    for (int i = 0; name != NULL && i < TSR_JOB_NSTATES; i++)
        if (strcmp(name, tsr_job_states[i]) == 0)
            return i;
    return -1;
}

bool tsr_job_state_final(const char *name)
{
    int i = tsr_job_state_parse(name);
    return i >= 3; /* completed, cancelled, failed come last */
}
