/* expr: a recursive-descent evaluator; see expr.h for the grammar. */
#include "expr.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct ps {
	const char *s, *p;
	const json_t *vars;
	char *e;
	int failed;
};

static double expr(struct ps *ps);

static double fail(struct ps *ps, const char *what)
{
	if (!ps->failed)
		errf(ps->e, "expression \"%s\": %s at offset %d", ps->s, what, (int)(ps->p - ps->s));
	ps->failed = 1;
	return NAN;
}

static void ws(struct ps *ps)
{
	while (isspace((unsigned char)*ps->p))
		ps->p++;
}

static int eat(struct ps *ps, char c)
{
	ws(ps);
	if (*ps->p == c) {
		ps->p++;
		return 1;
	}
	return 0;
}

static double call(struct ps *ps, const char *name, size_t n)
{
	double a = expr(ps), b = 0;
	int two = !(n == 4 && strncmp(name, "log2", 4) == 0);
	if (two) {
		if (!eat(ps, ','))
			return fail(ps, "expected ','");
		b = expr(ps);
	}
	if (!eat(ps, ')'))
		return fail(ps, "expected ')'");
	if (n == 3 && strncmp(name, "min", 3) == 0)
		return a < b ? a : b;
	if (n == 3 && strncmp(name, "max", 3) == 0)
		return a > b ? a : b;
	if (n == 4 && strncmp(name, "cdiv", 4) == 0)
		return b == 0 ? fail(ps, "division by zero") : ceil(a / b);
	if (!two)
		return log2(a);
	return fail(ps, "unknown function");
}

static double primary(struct ps *ps)
{
	ws(ps);
	const char *p = ps->p;
	if (eat(ps, '(')) {
		double v = expr(ps);
		if (!eat(ps, ')'))
			return fail(ps, "expected ')'");
		return v;
	}
	if (eat(ps, '-'))
		return -primary(ps);
	if (isdigit((unsigned char)*p) || *p == '.') {
		char *end;
		double v = strtod(p, &end);
		ps->p = end;
		return v;
	}
	if (isalpha((unsigned char)*p) || *p == '_') {
		while (isalnum((unsigned char)*ps->p) || *ps->p == '_')
			ps->p++;
		size_t n = (size_t)(ps->p - p);
		if (eat(ps, '('))
			return call(ps, p, n);
		char name[64];
		if (n >= sizeof name)
			return fail(ps, "name too long");
		memcpy(name, p, n);
		name[n] = '\0';
		json_t *v = json_object_get(ps->vars, name);
		if (!json_is_number(v)) {
			ps->p = p;
			char m[96];
			snprintf(m, sizeof m, "unknown name \"%s\"", name);
			return fail(ps, m);
		}
		return json_number_value(v);
	}
	return fail(ps, *p ? "unexpected character" : "unexpected end");
}

static double term(struct ps *ps)
{
	double v = primary(ps);
	for (;;) {
		if (eat(ps, '*'))
			v *= primary(ps);
		else if (eat(ps, '/')) {
			double d = primary(ps);
			v = d == 0 ? fail(ps, "division by zero") : v / d;
		} else if (eat(ps, '%')) {
			double d = primary(ps);
			v = d == 0 ? fail(ps, "division by zero") : fmod(v, d);
		} else
			return v;
	}
}

static double expr(struct ps *ps)
{
	double v = term(ps);
	for (;;) {
		if (eat(ps, '+'))
			v += term(ps);
		else if (eat(ps, '-'))
			v -= term(ps);
		else
			return v;
	}
}

int expr_eval(const char *text, const json_t *vars, double *out, char *errbuf)
{
	struct ps ps = {text, text, vars, errbuf, 0};
	double v = expr(&ps);
	ws(&ps);
	if (!ps.failed && *ps.p)
		fail(&ps, "trailing characters");
	if (ps.failed)
		return -1;
	*out = v;
	return 0;
}

int expr_eval_json(const json_t *v, const json_t *vars, double *out, char *errbuf)
{
	if (json_is_number(v)) {
		*out = json_number_value(v);
		return 0;
	}
	if (json_is_string(v))
		return expr_eval(json_string_value(v), vars, out, errbuf);
	return errf(errbuf, "expected a number or an expression string");
}
