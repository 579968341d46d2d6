/*
 * check_main.c - the one main() of the check programs in tests/unit/.
 *
 * Each program defines test_suite(): its suite, or NULL to skip (exit 77,
 * which automake reports as SKIP).  Every test runs in its own process
 * (check's fork mode, its default), so one that crashes or times out fails
 * alone and the others still run.
 */
#include <check.h>
#include <stdlib.h>

Suite *test_suite(void);

int main(void)
{
    Suite *s = test_suite();
    if (s == NULL)
        return 77;
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
