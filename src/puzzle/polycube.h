/*
 * polycube.h - what the polycube definition reader and writer share: which
 * piece names the format can carry.
 *
 * A name appears both as a C: attribute value and as a cell of a graphical
 * layout row, so it may not contain whitespace, control characters or the
 * separators ':' '=' ',' '#'; it may not be the empty-cell mark "." nor start
 * with '~' (a row "~L" ends a layout block).  Length is checked separately
 * (TSR_MAX_NAME) because exceeding it is a cap, not a syntax error.
 */
#ifndef TSR_PUZZLE_POLYCUBE_H
#define TSR_PUZZLE_POLYCUBE_H

#include <stdbool.h>
#include <string.h>

static inline bool tsr_polycube_name_ok(const char *s)
{
    if (s[0] == '\0' || s[0] == '~' || strcmp(s, ".") == 0)
        return false;
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c <= ' ' || c == 0x7f || strchr(":=,#", c))
            return false;
    }
    return true;
}

#endif
