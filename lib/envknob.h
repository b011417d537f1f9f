/*
 * envknob: ksci's switches read from the environment (KSCI_NVCC_PREFIX=off
 * and the like), in one table: each variable's name and the words it takes,
 * or that it is a device index.  The tools that read them call
 * envknob_check() at their start, so that a value it does not take is a
 * usage error (exit 2), said in lib/opt.h's words:
 *
 *   KSCI_NVCC_PREFIX: "no" is not one of on, off
 *   KSCI_CUDA_DEVICE: "gpu1" is not an integer
 *
 * Before, such a value was the default without a word: KSCI_NVCC_PREFIX=no
 * kept the prefix, KSCI_CUDA_DEVICE=gpu1 ran on device 0.  An empty value
 * is the same as none.  The table is documented once, in
 * docs/tools/README.md ("Switches in the environment"); a test checks that
 * the two name the same variables.
 *
 * Ownership: nothing is allocated; messages go into the caller's ERRBUF.
 * Nothing here prints.
 */
#ifndef KSCI_ENVKNOB_H
#define KSCI_ENVKNOB_H

#include "err.h"

/* Every switch that is set (not empty) has a value it takes: 0; else -1
 * and errbuf names the first that has not. */
int envknob_check(char *errbuf);
/* 1 where the switch NAME is set to WORD. */
int envknob_is(const char *name, const char *word);
/* KSCI_CUDA_DEVICE's index: 0 where it is not set or not one (the tools
 * have refused to start then). */
int envknob_device(void);
/* The table, for the docs check: the I-th switch's name and its words
 * ("a, b"; "a device index 0..N" for the device), or NULL past the end. */
const char *envknob_name(int i, char *words, size_t n);

#endif
