/*
 * t.h: the unit-test helpers.  Each tests/unit/t_*.c is a program that prints
 * TAP lines ("ok 3 - name" / "not ok 3 - name") and exits 1 if any failed;
 * tests/run.sh counts them.
 */
#ifndef KSCI_T_H
#define KSCI_T_H

#include <stdio.h>

static int t_n, t_failed;

#define T_OK(cond, ...)                                                              \
	do {                                                                         \
		int t_c_ = !!(cond);                                                 \
		printf("%sok %d - ", t_c_ ? "" : "not ", ++t_n);                     \
		printf(__VA_ARGS__);                                                 \
		printf("\n");                                                        \
		if (!t_c_) {                                                         \
			t_failed++;                                                  \
			printf("#   failed at %s:%d: %s\n", __FILE__, __LINE__, #cond); \
		}                                                                    \
	} while (0)

#define T_DONE() (printf("1..%d\n", t_n), t_failed ? 1 : 0)

#endif
