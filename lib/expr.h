/*
 * expr: arithmetic over a task's scalar arguments, for shapes ("rows*cols"),
 * flop and byte formulas ("2*M*N*K") and size checks.
 *
 * Grammar: numbers, names, + - * / % (integer-valued operands for %),
 * unary -, parentheses, and the functions min(a,b), max(a,b), cdiv(a,b)
 * (ceiling division), log2(a).  Names are looked up in a JSON object of
 * numbers (a task size).  Evaluation is in double; nothing is allocated.
 */
#ifndef KSCI_EXPR_H
#define KSCI_EXPR_H

#include <jansson.h>

#include "err.h"

/* 0 and *out on success; -1 with a message naming the problem in errbuf. */
int expr_eval(const char *text, const json_t *vars, double *out, char *errbuf);
/* A JSON value that is a number or an expression string. */
int expr_eval_json(const json_t *v, const json_t *vars, double *out, char *errbuf);

#endif
