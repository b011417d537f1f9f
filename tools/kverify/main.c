/*
 * kverify — check each compiled candidate against the task's reference in
 * the sandboxed harness (docs/tools/kverify.md).
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>

#include "opt.h"
#include "envknob.h"
#include "evaluate.h"
#include "kverify-help.h" /* HELP_USAGE, HELP_BODY: made from docs/tools/kverify.md */
#include "tool.h"

int main(int argc, char **argv)
{
	err_init(argv[0]);
	struct eval_opts o = {.mode = "verify", .timeout_s = 60, .mem_mb = 8192, .nseeds = 3, .sizes = "tests"};
	static const struct option lo[] = {
		EVAL_LONGOPTS, {"seeds", required_argument, 0, 'n'}, {"all-sizes", no_argument, 0, 'a'}, {0, 0, 0, 0}};
	int ch;
	long v;
	char e[ERRBUF];
	while ((ch = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
		int rc = eval_option(&o, ch, optarg, e);
		if (rc == 0) /* not one of the options kverify and ktime share */
			switch (ch) {
			case 'n':
				rc = opt_long("--seeds", optarg, 1, 1000, &v, e);
				o.nseeds = (int)v;
				break;
			case 'a': o.sizes = "all"; break;
			case 'h': return tool_usage(KSCI_EXIT_OK, HELP_USAGE, HELP_BODY);
			default: return tool_usage(KSCI_EXIT_USAGE, HELP_USAGE, HELP_BODY);
			}
		if (rc < 0) {
			warnx_("%s", e);
			return tool_usage(KSCI_EXIT_USAGE, HELP_USAGE, HELP_BODY);
		}
	}
	if (envknob_check(e) < 0)
		die(KSCI_EXIT_USAGE, "%s", e);
	o.copt.warn = tool_warn_cb; /* a compile-cache entry that fails its check */
	if (eval_init(&o, e) < 0)
		die(KSCI_EXIT_FATAL, "%s", e);
	struct tool t = {0};
	int rc = tool_run(&t, argv + optind, argc - optind, eval_tool_fn, &o);
	eval_finish();
	return tool_exit(rc);
}
