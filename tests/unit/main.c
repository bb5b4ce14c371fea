/* main.c: the svc-unit runner: every CUnit suite of lib/, with a count that fails the build. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <CUnit/Basic.h>

#include "unit.h"

#define MAX_SUITES 64

static void (*suites[MAX_SUITES])(void);
static size_t nsuites;

void svc_test_add(void (*fn)(void))
{
	if (nsuites == MAX_SUITES) {
		fprintf(stderr, "svc-unit: more than %d suites\n", MAX_SUITES);
		abort();
	}
	suites[nsuites++] = fn;
}

/*
 * svc-unit [SUITE...]: runs all suites, or only those named. Prints CUnit's
 * verbose report, then "unit: N passed, N failed"; exits 1 on any failure
 * (CU_basic_run_tests() itself returns 0 even when tests fail).
 */
int main(int argc, char **argv)
{
	unsigned int failed = 0, ran = 0, tfailed = 0;
	size_t i;

	if (CU_initialize_registry() != CUE_SUCCESS)
		return 2;
	for (i = 0; i < nsuites; i++)
		suites[i]();
	CU_basic_set_mode(CU_BRM_VERBOSE);
	if (argc > 1) {
		int a;
		for (a = 1; a < argc; a++) {
			CU_pSuite s = CU_get_suite(argv[a]);
			if (!s) {
				fprintf(stderr, "svc-unit: no suite %s\n", argv[a]);
				CU_cleanup_registry();
				return 2;
			}
			CU_basic_run_suite(s);
			/* the run summary is reset by each run: add them up */
			ran += CU_get_number_of_tests_run();
			tfailed += CU_get_number_of_tests_failed();
			failed += CU_get_number_of_tests_failed() + CU_get_number_of_suites_failed();
		}
	} else {
		CU_basic_run_tests();
		ran = CU_get_number_of_tests_run();
		tfailed = CU_get_number_of_tests_failed();
		failed = tfailed + CU_get_number_of_suites_failed();
	}
	printf("\nunit: %u passed, %u failed\n", ran - tfailed, failed);
	CU_cleanup_registry();
	return failed ? 1 : 0;
}
