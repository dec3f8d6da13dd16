# xdnn — one strict GNU Makefile for the library, the CLI, the generated
# parser and the tests.
#
#   make              build build/libxdnn.a, build/libxdnn.so and build/xdnn
#   make test         unit tests + bats suites (CPU only; what CI runs)
#   make test-gpu     GPU differential tester (needs a GPU; no flex/bison/bats)
#   make SAN=1        AddressSanitizer + UBSan build (in build-san/)
#   make test-san     the error and hostile-input suites on that build (CI runs it)
#   make CUDA=0       build without the CUDA toolkit (CPU reference only)
#   make install      libraries, header, command, man pages, xdnn.pc (PREFIX, DESTDIR)

.SUFFIXES:
.DELETE_ON_ERROR:
SHELL := /bin/bash

CUDA_HOME ?= /usr/local/cuda
ifeq ($(origin CUDA),undefined)
CUDA := $(if $(wildcard $(CUDA_HOME)/bin/nvcc),1,0)
endif

ifeq ($(SAN),1)
BUILD ?= build-san
else
BUILD ?= build
endif

CC      ?= cc
NVCC    ?= $(CUDA_HOME)/bin/nvcc
FLEX    ?= flex
BISON   ?= bison

WARN := -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes -Wpointer-arith \
        -Wcast-qual -Wwrite-strings -Wundef -Wformat=2 -Wvla -Wnull-dereference \
        -Wdouble-promotion -Wno-unused-parameter -Wimplicit-fallthrough
OPT     ?= -O2 -g
CFLAGS_ALL := -std=c11 -D_GNU_SOURCE $(OPT) $(WARN) -fPIC -fopenmp -fvisibility=hidden \
              -Iinclude -Isrc -I$(BUILD)/gen $(CFLAGS)
LDLIBS_ALL := -lcjson -lm -fopenmp $(LDLIBS)

ifeq ($(SAN),1)
CFLAGS_ALL += -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
LDLIBS_ALL += -fsanitize=address,undefined
endif

# Library sources: everything under src/ except the GPU folder, which is built
# only with CUDA=1 (src/gpu_none/ stands in for it otherwise).
LIB_SRC := $(filter-out src/gpu/% src/gpu_none/%,$(wildcard src/*/*.c src/*.c))
ifeq ($(CUDA),1)
LIB_SRC += $(wildcard src/gpu/*.c)
CU_SRC  := $(wildcard kernels/*.cu)
CFLAGS_ALL += -DXDNN_HAVE_CUDA=1 -I$(CUDA_HOME)/include
# cudart is static so the binary starts without a driver; cuBLASLt and NVRTC
# are dlopen'ed on first use (src/gpu/dl.h) so startup loads neither; the
# rpath (a RUNPATH, which dlopen from our own code honours) is where it looks first.
LDLIBS_ALL += -L$(CUDA_HOME)/lib64 -Wl,-rpath,$(CUDA_HOME)/lib64 \
              -lcudart_static -lstdc++ -ldl -lpthread -lrt
NVFLAGS := -O3 -std=c++17 -Xcompiler -fPIC -Xcompiler -fvisibility=hidden -Iinclude -Isrc -lineinfo \
           -gencode=arch=compute_80,code=sm_80 -gencode=arch=compute_90,code=sm_90 \
           -gencode=arch=compute_90,code=compute_90
else
LIB_SRC += $(wildcard src/gpu_none/*.c)
CU_SRC  :=
CFLAGS_ALL += -DXDNN_HAVE_CUDA=0
endif

GEN_C   := $(BUILD)/gen/parser.c $(BUILD)/gen/lexer.c
LIB_OBJ := $(LIB_SRC:%.c=$(BUILD)/obj/%.o) $(GEN_C:$(BUILD)/gen/%.c=$(BUILD)/obj/gen/%.o) \
           $(CU_SRC:%.cu=$(BUILD)/obj/%.cu.o)
CLI_SRC := $(wildcard cli/*.c)
CLI_OBJ := $(CLI_SRC:%.c=$(BUILD)/obj/%.o)
UNIT_SRC := $(wildcard tests/unit/test_*.c)
UNIT_BIN := $(UNIT_SRC:tests/unit/%.c=$(BUILD)/tests/%)
UNIT_LIB_SRC := $(filter-out $(UNIT_SRC),$(wildcard tests/unit/*.c))

# The version lives in one place, the header.
VERSION := $(shell sed -n 's/^\#define XDNN_VERSION_STRING "\(.*\)"/\1/p' include/xdnn.h)
SOMAJOR := $(firstword $(subst ., ,$(VERSION)))

.PHONY: all test test-unit test-bats test-valgrind test-gpu test-san fuzz valgrind clean install uninstall
all: $(BUILD)/libxdnn.a $(BUILD)/libxdnn.so $(BUILD)/xdnn

$(BUILD)/gen/parser.c $(BUILD)/gen/parser.h &: grammar/parser.y
	@mkdir -p $(dir $@)
	$(BISON) -Wall -Werror --defines=$(BUILD)/gen/parser.h -o $(BUILD)/gen/parser.c $<

$(BUILD)/gen/lexer.c $(BUILD)/gen/lexer.h &: grammar/lexer.l $(BUILD)/gen/parser.h
	@mkdir -p $(dir $@)
	$(FLEX) --header-file=$(BUILD)/gen/lexer.h -o $(BUILD)/gen/lexer.c $<

# Generated code is not ours to warn about beyond the basics.
$(BUILD)/obj/gen/%.o: $(BUILD)/gen/%.c $(BUILD)/gen/parser.h $(BUILD)/gen/lexer.h
	@mkdir -p $(dir $@)
	$(CC) $(filter-out $(WARN),$(CFLAGS_ALL)) -Wall -Wno-unused-function -Wno-sign-compare -Isrc/lang -c $< -o $@

$(BUILD)/obj/%.o: %.c $(BUILD)/gen/parser.h $(BUILD)/gen/lexer.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -MMD -MP -c $< -o $@

# -MMD: a kernel is rebuilt when a header it includes changes (kern_*.h
# structs that the host fills, *.cuh helpers), as the C objects are.
$(BUILD)/obj/%.cu.o: %.cu
	@mkdir -p $(dir $@)
	$(NVCC) $(NVFLAGS) -MMD -MP -MF $(@:.o=.d) -c $< -o $@

# kernels/*_sm90a.cu use Hopper-only instructions (wgmma, setmaxnreg): one
# sm_90a target instead of sm_80 + sm_90 + PTX; XK_HAVE_SM90A tells the host
# side that the code is there (their engines refuse every other device).
# ptxas's notes C7518 / C7520 say it serialized a kernel's wgmmas (each waits
# for the one before): only "info", but they cost the attention backward 18%
# for three sessions unseen.  They fail the build here; C7519 (an arrive
# injected, no serialization) is let through.
$(BUILD)/obj/%_sm90a.cu.o: %_sm90a.cu
	@mkdir -p $(dir $@)
	$(NVCC) $(filter-out -gencode=%,$(NVFLAGS)) -gencode=arch=compute_90a,code=sm_90a -DXK_HAVE_SM90A=1 \
	    -MMD -MP -MF $(@:.o=.d) -c $< -o $@ 2> $(@:.o=.log); st=$$?; cat $(@:.o=.log) >&2; \
	    if [ $$st -ne 0 ]; then rm -f $@; exit $$st; fi; \
	    if grep -E '\((C7518|C7520)\)' $(@:.o=.log) >&2; then \
	        echo "$<: ptxas serialized wgmma instructions (the lines above): each waits for the one before" >&2; rm -f $@; exit 1; fi

$(BUILD)/libxdnn.a: $(LIB_OBJ)
	@rm -f $@
	ar rcs $@ $^

# Only xdnn_ symbols leave the shared library: the C code is built
# -fvisibility=hidden (nvcc objects too, through NVFLAGS) and xdnn.map
# localizes anything else (static cudart included).
$(BUILD)/libxdnn.so: $(LIB_OBJ) xdnn.map
	$(CC) -shared -Wl,-soname,libxdnn.so.$(SOMAJOR) -Wl,--version-script=xdnn.map -o $@ $(LIB_OBJ) $(LDLIBS_ALL)

$(BUILD)/xdnn: $(CLI_OBJ) $(BUILD)/libxdnn.a
	$(CC) $(CFLAGS_ALL) -o $@ $(CLI_OBJ) $(BUILD)/libxdnn.a $(LDLIBS_ALL)

# Unit tests see internal headers and link the static library.
$(BUILD)/tests/%: tests/unit/%.c $(UNIT_LIB_SRC) $(BUILD)/libxdnn.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -fvisibility=default -o $@ $< $(UNIT_LIB_SRC) $(BUILD)/libxdnn.a $(LDLIBS_ALL)

# The .dnn and JSON fuzz harnesses as plain programs (gcc, no libFuzzer), replayed by test-unit over the inputs
# that once broke them (tests/fuzz/regress/) and every graph the tree ships: each CI finding stays a
# deterministic check without clang.
FUZZ_REPLAY := $(BUILD)/tests/fuzz_dnn $(BUILD)/tests/fuzz_json
$(BUILD)/tests/fuzz_%: tests/fuzz/fuzz_%.c tests/fuzz/fuzz_check.h $(BUILD)/libxdnn.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -fvisibility=default -DFUZZ_STANDALONE -o $@ $< $(BUILD)/libxdnn.a $(LDLIBS_ALL)

test-unit: $(UNIT_BIN) $(FUZZ_REPLAY)
	@set -e; for t in $(UNIT_BIN); do echo "== $$t"; $$t; done
	@echo "== fuzz harnesses over tests/fuzz/regress/ and the shipped graphs"
	@$(BUILD)/tests/fuzz_dnn tests/fuzz/regress/*.dnn $$(find graphs tests -name '*.dnn' -size -64k | sort) 2> $(BUILD)/tests/fuzz_replay.log || \
	    { cat $(BUILD)/tests/fuzz_replay.log; exit 1; }
	@$(BUILD)/tests/fuzz_json tests/fuzz/regress/*.json $$(find graphs tests -name '*.json' -size -64k | sort) 2>> $(BUILD)/tests/fuzz_replay.log || \
	    { cat $(BUILD)/tests/fuzz_replay.log; exit 1; }

test-bats: $(BUILD)/xdnn
	XDNN=$(abspath $(BUILD)/xdnn) bats tests/bats

# The README's test command: unit tests, every bats suite, and the CLI suites
# again under valgrind (leaks and memory errors fail them).
test: all test-unit test-bats test-valgrind

# shard.bats: the bench worker processes and xdnn merge (about 2 min under valgrind)
VALGRIND_SUITES := tests/bats/cli.bats tests/bats/run.bats tests/bats/errors.bats tests/bats/shard.bats
test-valgrind: $(BUILD)/xdnn
	XDNN_VALGRIND=1 OMP_NUM_THREADS=1 XDNN=$(abspath $(BUILD)/xdnn) bats $(VALGRIND_SUITES)

test-gpu: all
	@tests/gpu/run.sh $(BUILD)

# The error and hostile-input suites again on an AddressSanitizer + UBSan
# build (CPU only, build-san/): overflow in shape or attribute arithmetic and
# out-of-bounds reads fail them at once (-fno-sanitize-recover).  Leaks are
# valgrind's job (test-valgrind); here they would only add noise to stderr.
SAN_SUITES := tests/bats/errors.bats tests/bats/hostile.bats
test-san:
	$(MAKE) SAN=1 CUDA=0 BUILD=build-san build-san/xdnn
	ASAN_OPTIONS=detect_leaks=0 XDNN_SAN=1 XDNN=$(abspath build-san/xdnn) bats $(SAN_SUITES)

valgrind: all
	XDNN_VALGRIND=1 XDNN=$(abspath $(BUILD)/xdnn) bats tests/bats

# `make install` (PREFIX=/usr/local, DESTDIR for staging): the shared library
# as libxdnn.so.VERSION (soname libxdnn.so.SOMAJOR) with its two links, the
# static library, the header, the command, the man pages and xdnn.pc, which
# carries what a static link needs (pkg-config --static) in Libs.private.
PREFIX     ?= /usr/local
BINDIR     ?= $(PREFIX)/bin
LIBDIR     ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
MANDIR     ?= $(PREFIX)/share/man
INSTALL    ?= install
PC_LIBS_PRIVATE := $(filter-out -fsanitize=%,$(LDLIBS_ALL))
# under the prefix, xdnn.pc says ${prefix}/lib: --define-variable=prefix= relocates it
PC_LIBDIR     = $(patsubst $(PREFIX)/%,$${prefix}/%,$(LIBDIR))
PC_INCLUDEDIR = $(patsubst $(PREFIX)/%,$${prefix}/%,$(INCLUDEDIR))
MAN_PAGES  := $(wildcard man/*.[1-8])

install: all
	$(INSTALL) -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(LIBDIR)/pkgconfig $(DESTDIR)$(INCLUDEDIR) \
	    $(addprefix $(DESTDIR)$(MANDIR)/man,$(sort $(subst .,,$(suffix $(MAN_PAGES)))))
	$(INSTALL) -m 755 $(BUILD)/xdnn $(DESTDIR)$(BINDIR)/xdnn
	$(INSTALL) -m 755 $(BUILD)/libxdnn.so $(DESTDIR)$(LIBDIR)/libxdnn.so.$(VERSION)
	ln -sf libxdnn.so.$(VERSION) $(DESTDIR)$(LIBDIR)/libxdnn.so.$(SOMAJOR)
	ln -sf libxdnn.so.$(SOMAJOR) $(DESTDIR)$(LIBDIR)/libxdnn.so
	$(INSTALL) -m 644 $(BUILD)/libxdnn.a $(DESTDIR)$(LIBDIR)/libxdnn.a
	$(INSTALL) -m 644 include/xdnn.h $(DESTDIR)$(INCLUDEDIR)/xdnn.h
	for p in $(MAN_PAGES); do $(INSTALL) -m 644 $$p $(DESTDIR)$(MANDIR)/man$${p##*.}/ || exit; done
	sed -e 's|@PREFIX@|$(PREFIX)|; s|@LIBDIR@|$(PC_LIBDIR)|; s|@INCLUDEDIR@|$(PC_INCLUDEDIR)|' \
	    -e 's|@VERSION@|$(VERSION)|; s|@LIBS_PRIVATE@|$(PC_LIBS_PRIVATE)|' \
	    xdnn.pc.in > $(DESTDIR)$(LIBDIR)/pkgconfig/xdnn.pc

uninstall:
	rm -f $(DESTDIR)$(BINDIR)/xdnn $(DESTDIR)$(INCLUDEDIR)/xdnn.h $(DESTDIR)$(LIBDIR)/pkgconfig/xdnn.pc \
	    $(DESTDIR)$(LIBDIR)/libxdnn.so $(DESTDIR)$(LIBDIR)/libxdnn.so.$(SOMAJOR) \
	    $(DESTDIR)$(LIBDIR)/libxdnn.so.$(VERSION) $(DESTDIR)$(LIBDIR)/libxdnn.a \
	    $(foreach p,$(MAN_PAGES),$(DESTDIR)$(MANDIR)/man$(subst .,,$(suffix $(p)))/$(notdir $(p)))

clean:
	rm -rf build build-san

-include $(shell find $(BUILD)/obj -name '*.d' 2>/dev/null)

# ---------------------------------------------------------------- fuzz (owner: docs)
# `make fuzz` builds every tests/fuzz/fuzz_*.c as a libFuzzer harness with
# clang (-fsanitize=fuzzer,address,undefined) against a CPU-only copy of the
# library in $(FUZZ_BUILD)/, then runs each for FUZZ_TIME seconds on a seed
# corpus: the files under graphs/ and tests/ whose extension is the harness's
# suffix (fuzz_dnn -> *.dnn, fuzz_json -> *.json, fuzz_npy -> *.npy ...),
# plus every .dnn converted to JSON for fuzz_json and the inputs of
# tests/identities/ for fuzz_npy; tests/fuzz/NAME.dict is passed as -dict=
# when it exists.  Runs in fork mode and goes on after a finding, so one run
# reports several; new corpus entries go to $(FUZZ_BUILD)/corpus/NAME,
# findings to $(FUZZ_BUILD)/crash-NAME-* (and the target fails).  Needs clang
# (apt-get install clang); nothing else depends on this target, so
# `make test` never needs clang.
FUZZ_BUILD ?= build-fuzz
FUZZ_TIME  ?= 20
FUZZ_CC    ?= clang
FUZZ_SAN   := -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer
FUZZ_SRC   := $(wildcard tests/fuzz/fuzz_*.c)
FUZZ_BIN   := $(FUZZ_SRC:tests/fuzz/%.c=$(FUZZ_BUILD)/%)

.PHONY: fuzz fuzz-build
fuzz-build:
	@command -v $(FUZZ_CC) >/dev/null || { echo "make fuzz needs $(FUZZ_CC) (apt-get install clang)"; exit 1; }
	$(MAKE) BUILD=$(FUZZ_BUILD) CUDA=0 CC=$(FUZZ_CC) OPT="-g -O1" \
	    CFLAGS="$(FUZZ_SAN) -fsanitize=fuzzer-no-link" LDLIBS="$(FUZZ_SAN)" $(FUZZ_BUILD)/libxdnn.a $(FUZZ_BUILD)/xdnn
	$(MAKE) FUZZ_BUILD=$(FUZZ_BUILD) $(FUZZ_BIN)

$(FUZZ_BUILD)/fuzz_%: tests/fuzz/fuzz_%.c $(FUZZ_BUILD)/libxdnn.a
	$(FUZZ_CC) -g -O1 $(FUZZ_SAN) -fsanitize=fuzzer -Iinclude -Isrc -I$(FUZZ_BUILD)/gen $< \
	    $(FUZZ_BUILD)/libxdnn.a -lcjson -lm -fopenmp -o $@

fuzz: fuzz-build
	@set -e; fail=0; for bin in $(FUZZ_BIN); do \
	    name=$$(basename $$bin); ext=$${name#fuzz_}; \
	    seeds=$(FUZZ_BUILD)/seeds/$$name; corpus=$(FUZZ_BUILD)/corpus/$$name; \
	    rm -rf $$seeds; mkdir -p $$seeds $$corpus; \
	    tests/fuzz/seeds.sh $$name $(FUZZ_BUILD)/xdnn $$seeds; \
	    nseeds=$$(find $$seeds -maxdepth 1 -type f | wc -l); \
	    echo "== $$name: $(FUZZ_TIME) s, $$nseeds seeds"; \
	    [ $$nseeds -gt 0 ] || { echo "   no seeds for $$name (tests/fuzz/seeds.sh)"; fail=1; continue; }; \
	    rm -f $(FUZZ_BUILD)/crash-$$name-*; \
	    ASAN_OPTIONS=detect_leaks=1 $$bin -max_total_time=$(FUZZ_TIME) -timeout=10 -rss_limit_mb=2048 \
	        -fork=1 -ignore_crashes=1 -ignore_timeouts=1 -ignore_ooms=1 \
	        $$([ -f tests/fuzz/$$name.dict ] && echo -dict=tests/fuzz/$$name.dict) \
	        -artifact_prefix=$(FUZZ_BUILD)/crash-$$name- $$corpus $$seeds > $(FUZZ_BUILD)/$$name.log 2>&1 || true; \
	    found=$$(ls $(FUZZ_BUILD)/crash-$$name-* 2>/dev/null | wc -l); \
	    echo "   $$(grep '^#[0-9]*: cov:' $(FUZZ_BUILD)/$$name.log | tail -1); $$found finding(s)"; \
	    if [ $$found -gt 0 ]; then fail=1; ls $(FUZZ_BUILD)/crash-$$name-*; \
	        grep -m3 -A12 'ERROR:\|runtime error\|deadly signal' $(FUZZ_BUILD)/$$name.log || true; \
	        for f in $(FUZZ_BUILD)/crash-$$name-*; do echo "   the input, $$(wc -c < $$f) bytes (base64 -d gives it back):"; \
	            base64 -w76 $$f; done; fi; \
	done; exit $$fail

.PHONY: fuzz-clean
fuzz-clean:
	rm -rf build-fuzz
clean: fuzz-clean
# ---------------------------------------------------------------- end fuzz
