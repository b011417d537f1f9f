/*
 * ktime — time each verified candidate against the task's baseline and seed
 * kernel, interleaved in one sandboxed process (docs/tools/ktime.md).
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opt.h"
#include "envknob.h"
#include "evaluate.h"
#include "ktime-help.h" /* HELP_USAGE, HELP_BODY: made from docs/tools/ktime.md */
#include "tool.h"

int main(int argc, char **argv)
{
	err_init(argv[0]);
	struct eval_opts o = {.mode = "time", .timeout_s = 300, .mem_mb = 8192, .budget_s = 0,
			     .target_rel_sem = 0.001, .min_runs = 0, .max_runs = 10000, .anchor_every = -1,
			     .retime = -1, .confirm_pct = 2, .wake_cpu = 1, .stop_stat = -1};
	static const struct option lo[] = {
		EVAL_LONGOPTS,
		{"budget", required_argument, 0, 'b'},   {"target-sem", required_argument, 0, 'S'},
		{"min-runs", required_argument, 0, 'n'}, {"max-runs", required_argument, 0, 'N'},
		{"processes", required_argument, 0, 'P'}, {"batch", required_argument, 0, 'B'},
		{"stop-slower", required_argument, 0, 'L'}, {"best", required_argument, 0, 'X'},
		{"best-sizes", required_argument, 0, 'Y'},
		{"anchor-every", required_argument, 0, 'A'}, {"arena", required_argument, 0, 'R'},
		{"noise", required_argument, 0, 'Z'}, {"peak-gbps", required_argument, 0, 'G'}, {"peak-gflops", required_argument, 0, 'Q'},
		{"peak-dram-gbps", required_argument, 0, 'W'}, {"retime", required_argument, 0, 'E'},
		{"confirm-within", required_argument, 0, 'C'}, {"stop-stat", required_argument, 0, 'M'},
		{"wake-cpu", required_argument, 0, 'K'}, {0, 0, 0, 0}};
	int ch;
	long v;
	double slower = 0, best = 1;
	const char *best_sizes = NULL;
	char e[ERRBUF];
	while ((ch = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
		int rc = eval_option(&o, ch, optarg, e);
		if (rc == 0) /* not one of the options kverify and ktime share */
			switch (ch) {
			case 'b': rc = opt_double("--budget", optarg, 0.001, 3600, &o.budget_s, e); break;
			case 'S': rc = opt_double("--target-sem", optarg, 1e-6, 1, &o.target_rel_sem, e); break;
			case 'n':
				rc = opt_long("--min-runs", optarg, 2, 1000000, &v, e);
				o.min_runs = (int)v;
				break;
			case 'N':
				rc = opt_long("--max-runs", optarg, 2, 1000000, &v, e);
				o.max_runs = (int)v;
				break;
			case 'P':
				rc = opt_long("--processes", optarg, 0, 16, &v, e);
				o.processes = (int)v;
				break;
			case 'A':
				rc = opt_long("--anchor-every", optarg, 0, 1000000, &v, e);
				o.anchor_every = (int)v;
				break;
			case 'L': rc = opt_double("--stop-slower", optarg, 0, 1, &slower, e); break;
			case 'X': rc = opt_double("--best", optarg, 1e-6, 1e9, &best, e); break;
			case 'Y': best_sizes = optarg; break;
			case 'E': /* confirm: 1, full: 0 */
				rc = opt_choice("--retime", optarg, (const char *const[]){"full", "confirm", NULL}, &o.retime, e);
				break;
			case 'M':
				rc = opt_choice("--stop-stat", optarg, stop_stats, &o.stop_stat, e);
				break;
			case 'K': rc = opt_choice("--wake-cpu", optarg, hot_modes, &o.wake_cpu, e); break;
			case 'C': rc = opt_double("--confirm-within", optarg, 0, 1e9, &o.confirm_pct, e); break;
			case 'B': rc = opt_double("--batch", optarg, 0, 1, &o.batch_s, e); break;
			case 'R': rc = opt_double("--arena", optarg, 0, 65536, &o.arena_mb, e); break;
			case 'Z': rc = opt_double("--noise", optarg, 1e-6, 1, &o.noise, e); break;
			case 'G': rc = opt_double("--peak-gbps", optarg, 1e-6, 1e9, &o.peak_gbps, e); break;
			case 'Q': rc = opt_double("--peak-gflops", optarg, 1e-6, 1e12, &o.peak_gflops, e); break;
			case 'W': rc = opt_double("--peak-dram-gbps", optarg, 1e-6, 1e9, &o.peak_dram_gbps, e); break;
			case 'h': return tool_usage(KSCI_EXIT_OK, HELP_USAGE, HELP_BODY);
			default: return tool_usage(KSCI_EXIT_USAGE, HELP_USAGE, HELP_BODY);
			}
		if (rc < 0) {
			warnx_("%s", e);
			return tool_usage(KSCI_EXIT_USAGE, HELP_USAGE, HELP_BODY);
		}
	}
	o.stop_below = slower * best;
	if (best_sizes && !(o.stop_below_sizes = eval_size_bounds("--best-sizes", best_sizes, slower, e))) {
		warnx_("%s", e);
		return tool_usage(KSCI_EXIT_USAGE, HELP_USAGE, HELP_BODY);
	}
	if (o.min_runs > 0 && o.min_runs > o.max_runs)
		die(KSCI_EXIT_USAGE, "--min-runs %d is above --max-runs %d", o.min_runs, o.max_runs);
	if (envknob_check(e) < 0)
		die(KSCI_EXIT_USAGE, "%s", e);
	o.copt.warn = tool_warn_cb; /* a compile-cache entry that fails its check */
	if (eval_init(&o, e) < 0)
		die(KSCI_EXIT_FATAL, "%s", e);
	struct tool t = {0};
	int rc = tool_run(&t, argv + optind, argc - optind, eval_tool_fn, &o);
	eval_finish();
	json_decref(o.stop_below_sizes);
	return tool_exit(rc);
}
