/*
 * option_json.h - what the JSON reader (json_read.c) takes from options.c:
 * one option's value read from JSON, with the checks its kind makes.  The
 * reader owns the JSON path; this only says what is wrong.
 */
#ifndef TSR_PUZZLE_OPTION_JSON_H
#define TSR_PUZZLE_OPTION_JSON_H

#include <stddef.h>

#include <jansson.h>

#include "tessera/options.h"

/* Stores `v` in op's member of *opt: 0, or TSR_EINVAL with `why` saying
 * what is wrong ("expected an integer from 0 to 1024, got <shown>", "no
 * piece is named ...").  `shown` is how the value appears to the user.  A
 * redundancy piece is checked against pz unless it is NULL. */
int tsr_option_read_json(tsr_options *opt, const tsr_option *op, const json_t *v,
                         const char *shown, const tsr_puzzle *pz, char *why, size_t size);

#endif
