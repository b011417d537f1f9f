/*
 * judge/hot: the CPU a stopped child will wake on, woken before the clock.
 *
 * A child continued by the judge runs on a CPU that the scheduler picks,
 * most often the one it last ran on; where that CPU is idle it must wake
 * first — on a virtual machine whose idle CPUs halt, 20-200 us, and not
 * alike for the candidate's and the seed's children (the A/A's error
 * followed it: docs/gpu.md, "what the A/A misses by").  hot_warm, called
 * before the continue, sends a SCHED_IDLE helper thread of the judge's to
 * that CPU and waits (a bounded time, outside the clock) until it spins
 * there; the child then finds the CPU awake, and as an ordinary thread it
 * takes it from the helper at once.  hot_rest sends the helper back to
 * sleep.  Nothing is pinned: the child goes wherever the scheduler sends
 * it, and a CPU busy with other work is left alone (the helper, at
 * SCHED_IDLE, never runs there: the bound ends the wait).  A child picks
 * where it runs, so it picks where the helper goes: at worst a CPU where the
 * wake-up cannot be made in time, which costs the judge the bound, outside
 * the clock, and the child its own slow wake-up, inside it; the other roles
 * are stopped meanwhile and their CPUs are read from their own processes.
 *
 * Ownership: all state is this file's, process-wide; one judge thread calls.
 */
#ifndef KSCI_JUDGE_HOT_H
#define KSCI_JUDGE_HOT_H

/* Start the helper (asleep).  0, or -1 where it cannot (then hot_warm does
 * nothing). */
int hot_init(void);
/* Whether hot_init started the helper. */
int hot_started(void);
/* The modes' words by index, NULL-ended: "off", "on", "pin" — also ktime
 * --wake-cpu's words and the job's "wake_cpu" (one list for the option, the
 * job, the time cache's key and the judge's reading of the job). */
extern const char *const hot_modes[];
/* The job's choice, an index into hot_modes: 0 off, 1 on, 2 on and the
 * child pinned to the woken CPU for its continue (ktime --wake-cpu pin).
 * hot_on: started and not off; hot_pin: started and 2. */
void hot_enable(int mode);
int hot_on(void);
int hot_pin(void);
/* Before a continue: the helper to CPU cpu, waiting at most max_s for it
 * to spin there.  1 it does, 0 not in time, -1 nothing done (no helper; cpu
 * < 0, not one of the process's at hot_init, or the caller's own). */
int hot_warm(int cpu, double max_s);
/* After the request is out: the helper back to sleep (an atomic store). */
void hot_rest(void);
/* Warm-ups asked for and those that ended by the bound, since hot_init. */
void hot_counts(long *asked, long *late);

#endif
