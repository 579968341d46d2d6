/*
 * load.cpp - loads a BurrTools file with BurrTools' own loader and counts
 * its assemblies with BurrTools' own assembler: the judge that what
 * Tessera writes is a file BurrTools reads as Tessera meant it.
 *
 *   load FILE            prints the file's shapes and problems
 *   load FILE N          and counts problem N's assemblies (N from 1)
 *
 * Output, one fact a line, so a script can grep it:
 *   shapes 3
 *   shape 1 3x2x1 filled 4 variable 0 name L
 *   problems 1
 *   problem 1 result 8 pieces 7 parts 7 name Soma cube
 *   part 1 shape 1 min 1 max 1
 *   assemblies 240
 * A name, the rest of its line after "name ", may hold any character but
 * a line break.  Exit status 0, or 1 with a message on stderr when BurrTools refuses the
 * file (its parser's or its assertions' text) or cannot assemble it.
 *
 * Built by tests/burrtools/run.sh against a BurrTools source tree; never
 * part of the default build.
 */
#include "lib/assembler.h"
#include "lib/assembly.h"
#include "lib/bt_assert.h"
#include "lib/gridtype.h"
#include "lib/problem.h"
#include "lib/puzzle.h"
#include "lib/voxel.h"
#include "tools/gzstream.h"
#include "tools/xml.h"

#include <cstdio>
#include <cstdlib>
#include <iostream>

namespace {

class counter : public assembler_cb {
public:
    unsigned long n = 0;
    bool assembly(assembly_c *a) override
    {
        n++;
        delete a;
        return true;
    }
};

void describe(const puzzle_c &p)
{
    std::printf("shapes %u\n", p.getNumberOfShapes());
    for (unsigned i = 0; i < p.getNumberOfShapes(); i++) {
        const voxel_c *v = p.getShape(i);
        unsigned filled = 0, variable = 0;
        for (unsigned k = 0; k < v->getXYZ(); k++) {
            filled += v->getState(k) == voxel_c::VX_FILLED;
            variable += v->getState(k) == voxel_c::VX_VARIABLE;
        }
        std::printf("shape %u %ux%ux%u filled %u variable %u name %s\n", i + 1, v->getX(),
                    v->getY(), v->getZ(), filled, variable, v->getName().c_str());
    }
    std::printf("problems %u\n", p.getNumberOfProblems());
    for (unsigned i = 0; i < p.getNumberOfProblems(); i++) {
        const problem_c *pr = p.getProblem(i);
        std::printf("problem %u result %d pieces %u parts %u name %s\n", i + 1,
                    pr->resultValid() ? (int)pr->getResultId() + 1 : 0, pr->getNumberOfPieces(),
                    pr->getNumberOfParts(), pr->getName().c_str());
        for (unsigned k = 0; k < pr->getNumberOfParts(); k++)
            std::printf("part %u shape %u min %u max %u\n", k + 1, pr->getShapeIdOfPart(k) + 1,
                        pr->getPartMinimum(k), pr->getPartMaximum(k));
    }
}

int count(puzzle_c &p, unsigned k)
{
    if (k < 1 || k > p.getNumberOfProblems()) {
        std::fprintf(stderr, "load: no problem %u\n", k);
        return 1;
    }
    for (unsigned i = 0; i < p.getNumberOfShapes(); i++)
        p.getShape(i)->initHotspot();
    problem_c *pr = p.getProblem(k - 1);
    assembler_c *a = p.getGridType()->findAssembler(*pr);
    if (a == nullptr) {
        std::fprintf(stderr, "load: no BurrTools assembler handles problem %u\n", k);
        return 1;
    }
    /* as the GUI solves: rotations and mirror images removed as BurrTools
     * removes them, the whole matrix */
    assembler_c::errState e = a->createMatrix(false, false, false);
    if (e != assembler_c::ERR_NONE) {
        /* BurrTools reports these as problems of the puzzle: no assembly */
        std::printf("matrix-error %d param %d\n", (int)e, a->getErrorsParam());
        std::printf("assemblies 0\n");
        delete a;
        return 0;
    }
    counter c;
    a->assemble(&c);
    std::printf("assemblies %lu\n", c.n);
    delete a;
    return 0;
}

} // namespace

int main(int argc, char **argv)
{
    if (argc < 2 || argc > 3) {
        std::fprintf(stderr, "usage: load FILE [PROBLEM]\n");
        return 2;
    }
    try {
        std::istream *in = openGzFile(argv[1]);
        xmlParser_c pars(*in);
        puzzle_c p(pars);
        delete in;
        describe(p);
        return argc == 3 ? count(p, (unsigned)std::atoi(argv[2])) : 0;
    } catch (xmlParserException_c &e) {
        std::fprintf(stderr, "load: %s: BurrTools refuses it: %s\n", argv[1], e.what());
    } catch (assert_exception &e) {
        std::fprintf(stderr, "load: %s: BurrTools assertion %s failed (%s:%u)\n", argv[1],
                     e.expr, e.file, e.line);
    } catch (std::exception &e) {
        std::fprintf(stderr, "load: %s: %s\n", argv[1], e.what());
    }
    return 1;
}
