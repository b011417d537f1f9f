# ksci — one Makefile: make, make check, make demo, make check-gpu, make install.
# Tools are found by wildcard (tools/<name>/main.c), lib/ is one static
# library, unit tests are tests/unit/*.c, shell tests tests/sh/t*.sh.

CC      ?= cc
CFLAGS  ?= -O2 -g
PREFIX  ?= /usr/local
B       ?= build
DATADIR ?= $(abspath data)
CUDA    ?= /usr/local/cuda

# -Wno-format-truncation: messages are cut to their buffers on purpose.
KSCI_CFLAGS = -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wno-format-truncation \
	-Ilib -I$(B)/gen -DKSCI_DATADIR='"$(DATADIR)"'
LDLIBS  = -ljansson -lseccomp -lcurl -lz -lm -ldl -lpthread

ifdef SAN
CFLAGS += -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
LDFLAGS += -fsanitize=address,undefined
endif

LIB_SRC  = $(wildcard lib/*.c lib/select/*.c lib/gen/*.c lib/report/*.c lib/judge/*.c)
LIB_OBJ  = $(LIB_SRC:%.c=$(B)/obj/%.o)
TOOLS    = $(notdir $(patsubst %/main.c,%,$(wildcard tools/*/main.c)))
BINS     = $(TOOLS:%=$(B)/bin/%)
UNIT_SRC = $(wildcard tests/unit/t_*.c)
UNITS    = $(UNIT_SRC:tests/unit/%.c=$(B)/tests/%)

# CUDA pieces build only where the toolkit is installed (it is on dev machines and CI).
HAVE_CUDA := $(shell test -f $(CUDA)/include/cuda_runtime.h && echo 1)
CUDA_SRC  = $(wildcard lib/cuda/*.c)
CUDA_CU   = $(wildcard lib/cuda/*.cu)
# The judge's device code (input generation): PTX for any GPU from Turing on,
# and Hopper's code ready-made.
NVCC      = $(CUDA)/bin/nvcc
NVCCFLAGS = -O2 -Ilib -gencode arch=compute_75,code=compute_75 -gencode arch=compute_90,code=sm_90
ifeq ($(HAVE_CUDA)$(if $(CUDA_SRC),1),11)
CUDA_BINS = $(patsubst %/main.c,$(B)/bin/%-cuda,$(subst tools/,,$(wildcard tools/kharness/main.c)))
endif

.SECONDARY:
.PHONY: all check check-unit check-sh check-san demo check-gpu gpu-bundle install clean lint bench FORCE
all: $(BINS) $(CUDA_BINS)

# Everything that changes what gets built, in one file rewritten only when it
# changes (git's GIT-CFLAGS): every object and program depends on it, so
# `make install DATADIR=...` after `make` recompiles instead of installing
# tools that look for their data in the source tree.
KSCI_CONFIG = CC=$(CC) KSCI_CFLAGS=$(KSCI_CFLAGS) CFLAGS=$(CFLAGS) LDFLAGS=$(LDFLAGS) LDLIBS=$(LDLIBS) CUDA=$(CUDA)
$(B)/KSCI-CFLAGS: FORCE
	@mkdir -p $(B)
	@printf '%s\n' '$(subst ','\'',$(KSCI_CONFIG))' >$@+
	@if cmp -s $@+ $@; then rm -f $@+; else echo "    * new build flags"; mv $@+ $@; fi

# --help is made from the tool's page (scripts/gen-help.sh), so the two agree.
HELP_TOOLS = $(filter $(TOOLS),$(patsubst docs/tools/%.md,%,$(wildcard docs/tools/k*.md)))
$(B)/gen/%-help.h: docs/tools/%.md scripts/gen-help.sh
	@mkdir -p $(dir $@)
	sh scripts/gen-help.sh -c $< >$@+ && mv $@+ $@
$(HELP_TOOLS:%=$(B)/obj/tools/%/main.o): $(B)/obj/tools/%/main.o: $(B)/gen/%-help.h

$(B)/obj/%.o: %.c $(B)/KSCI-CFLAGS
	@mkdir -p $(dir $@)
	$(CC) $(KSCI_CFLAGS) $(CFLAGS) -MMD -MP -c -o $@ $<

$(B)/libksci.a: $(LIB_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(B)/bin/%: $(B)/obj/tools/%/main.o $(B)/libksci.a $(B)/KSCI-CFLAGS
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $< $(B)/libksci.a $(LDLIBS)

# The CUDA harness: the same main with the CUDA device layer linked in.
$(B)/obj/cuda/%.o: %.c $(B)/KSCI-CFLAGS
	@mkdir -p $(dir $@)
	$(CC) $(KSCI_CFLAGS) $(CFLAGS) -MMD -MP -DKSCI_WITH_CUDA -I$(CUDA)/include -c -o $@ $<

$(B)/obj/cuda/%.o: %.cu lib/gen_value.h lib/dtype.h $(B)/KSCI-CFLAGS
	@mkdir -p $(dir $@)
	$(NVCC) $(NVCCFLAGS) -c -o $@ $<

$(B)/bin/kharness-cuda: $(B)/obj/cuda/tools/kharness/main.o $(CUDA_SRC:%.c=$(B)/obj/cuda/%.o) $(CUDA_CU:%.cu=$(B)/obj/cuda/%.o) $(B)/libksci.a $(B)/KSCI-CFLAGS
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $(filter %.o %.a,$^) -L$(CUDA)/lib64 -Wl,-rpath,$(CUDA)/lib64 -lcudart $(LDLIBS) -lstdc++

$(B)/tests/%: tests/unit/%.c tests/unit/t.h $(B)/libksci.a $(B)/KSCI-CFLAGS
	@mkdir -p $(dir $@)
	$(CC) $(KSCI_CFLAGS) $(CFLAGS) -Itests/unit $(LDFLAGS) -o $@ $< $(B)/libksci.a $(LDLIBS)

check: all $(UNITS)
	$(MAKE) --no-print-directory SAN=1 B=$(B)/san $(B)/san/libksci.a $(UNITS:$(B)/%=$(B)/san/%) $(BINS:$(B)/%=$(B)/san/%)
	KSCI_BUILD=$(abspath $(B)) tests/run.sh

# The offline default job: a fresh mutate search on the CPU matmul task, then its report.
demo: all
	rm -f demo/matmul.ndjson.gz demo/matmul.ndjson.gz.lock
	KSCIBIN=$(abspath $(B))/bin pipelines/evolve.sh --task matmul --generations 6 --population 8 \
		--budget 0.3 --archive demo/matmul.ndjson.gz
	$(B)/bin/kreport demo/matmul.ndjson.gz

check-gpu: all
	tests/gpu/run.sh
	tests/gpu/suite.sh
	tests/gpu/attacks.sh

# The tools for a machine that has the CUDA driver but no jansson and no
# libseccomp (the lent GPU machines): built here with both linked in
# statically, into $(B)/gpu/bin, to be carried there
# (KSCIBIN=$(B)/gpu/bin tests/gpu/run.sh).
gpu-bundle:
	$(MAKE) --no-print-directory B=$(B)/gpu \
		LDLIBS='-Wl,-Bstatic -ljansson -lseccomp -Wl,-Bdynamic -lcurl -lz -lm -ldl -lpthread' \
		$(BINS:$(B)/%=$(B)/gpu/%) $(CUDA_BINS:$(B)/%=$(B)/gpu/%)

# Benchmarks whose figures are in docs/: kselect at archive scale here;
# on a GPU machine also bench/gpu-cost.sh and bench/ncu-agree.sh (docs/gpu.md).
bench: all
	bench/kselect/run.sh

# Shell scripts shellcheck-clean; C without the banned functions (scripts/banned.sh says why).
lint:
	shellcheck -x -P SCRIPTDIR $(wildcard pipelines/*.sh scripts/*.sh tests/*.sh tests/sh/*.sh tests/gpu/*.sh bench/*.sh bench/*/*.sh) .ci/run
	sh scripts/banned.sh lib tools tests/unit

# The installed tools look for their data where install puts it: DATADIR,
# $(PREFIX)/share/ksci unless given (the tools are rebuilt for it, see
# KSCI-CFLAGS above; a later plain `make` rebuilds them for the source tree).
install: DATADIR = $(PREFIX)/share/ksci
install: all
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(DATADIR)
	install -m 755 $(BINS) $(CUDA_BINS) $(DESTDIR)$(PREFIX)/bin
	install -m 755 pipelines/*.sh $(DESTDIR)$(PREFIX)/bin
	cp -r data/. $(DESTDIR)$(DATADIR)/

clean:
	rm -rf $(B)

-include $(shell find $(B)/obj -name '*.d' 2>/dev/null)
