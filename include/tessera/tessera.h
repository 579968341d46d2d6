/*
 * tessera/tessera.h - everything a program embedding Tessera needs.
 */
#ifndef TESSERA_H
#define TESSERA_H

#include "error.h"
#include "puzzle.h"
#include "options.h"
#include "engine.h"
#include "pool.h"
#include "eta.h"

#define TESSERA_ENGINE_VERSION 1

#endif
