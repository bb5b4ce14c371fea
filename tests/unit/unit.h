/* unit.h: how a CUnit suite registers itself with the single svc-unit runner. */
#ifndef SVC_TEST_UNIT_H
#define SVC_TEST_UNIT_H

#include <CUnit/CUnit.h>

/*
 * Registers `fn`, a function that adds one CUnit suite with CU_add_suite()
 * and its tests with CU_add_test(). Called from a constructor, before main();
 * the runner calls every registered function after CU_initialize_registry().
 */
void svc_test_add(void (*fn)(void));

/*
 * SVC_TEST_SUITE(name) { ... } defines the registration function of one suite
 * (one per lib module, named after it) and registers it at load time.
 */
#define SVC_TEST_SUITE(name)                                                   \
	static void name(void);                                                \
	__attribute__((constructor)) static void name##__register(void)        \
	{                                                                      \
		svc_test_add(name);                                            \
	}                                                                      \
	static void name(void)

#endif
