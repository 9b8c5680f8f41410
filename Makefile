# simrun build.  `make` builds ./simrun; `make test` runs every test, in a
# normal build and (but for "# run-once:" scripts) again under
# AddressSanitizer + UndefinedBehaviorSanitizer;
# `make bench` runs the benchmarks; `make demo` is the main job.
#
# Two build flavours share the sources: MODE=rel (-O2 and link-time
# optimisation, the default) builds into build/rel, MODE=san (ASan+UBSan)
# into build/san.  Every module in sim/, policies/ and reports/ except
# sim/main.c goes into one static library that the binary, the tests and
# the benchmarks link.

CC      ?= cc
MODE    ?= rel
PKG     := sqlite3
SQL_CFLAGS := $(shell pkg-config --cflags $(PKG) 2>/dev/null)
SQL_LIBS   := $(shell pkg-config --libs $(PKG) 2>/dev/null || echo -lsqlite3)

WARN    := -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wmissing-prototypes \
           -Wno-unused-parameter
BASE    := -std=c11 -D_DEFAULT_SOURCE -g $(WARN) -I. $(SQL_CFLAGS)
ifeq ($(MODE),san)
  OPT   := -O1 -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
  B     := build/san
  LTO   :=
else
  OPT   := -O2
  B     := build/rel
  # Link-time optimisation for the binary and the benchmarks: calls across
  # files (into the event queue, the checker, the job tables) can be
  # inlined; bench_fleet's shapes take up to 8 % less CPU time.  The
  # binary's link is given the warning flags, so that what the
  # whole-program pass finds fails the build too.  The objects keep their ordinary code as well
  # (fat), which the tests link without a link-time pass (-fno-lto: the
  # linker would otherwise run one for each test, and building the tests
  # took 202 s rather than 42).  `make LTO=` builds without it (a compiler
  # that lacks it).
  LTO   ?= -flto=auto -ffat-lto-objects
endif
NO_LTO = $(if $(LTO),-fno-lto)
CFLAGS_ALL  = $(BASE) $(OPT) $(CFLAGS)
LDFLAGS_ALL = $(OPT) $(LDFLAGS)
LIBS    := $(SQL_LIBS) -lm -ldl -lpthread

LIB_SRC   := $(sort $(filter-out sim/main.c,$(wildcard sim/*.c)) $(wildcard policies/*.c) $(wildcard reports/*.c))
LIB_OBJ   := $(LIB_SRC:%.c=$(B)/%.o)
TEST_SRC  := $(sort $(wildcard tests/test_*.c))
TEST_BIN  := $(TEST_SRC:tests/%.c=$(B)/tests/%)
BENCH_SRC := $(sort $(wildcard bench/bench_*.c))
BENCH_BIN := $(BENCH_SRC:bench/%.c=$(B)/bench/%)
CMOCKA_LIBS := -lcmocka
# Fuzz targets (tests/fuzz/fuzz_*.c): replayed over their corpus by a plain
# driver in `make test`; built as libFuzzer binaries with clang by `make fuzz`.
FUZZ_SRC  := $(sort $(wildcard tests/fuzz/fuzz_*.c))
FUZZ_BIN  := $(FUZZ_SRC:tests/fuzz/%.c=$(B)/tests/%)
FUZZ_CC   ?= clang
FUZZ_SECONDS ?= 60
FUZZ_FLAGS := -std=c11 -D_DEFAULT_SOURCE -g -O1 -I. $(SQL_CFLAGS) -fno-omit-frame-pointer \
              -fsanitize=address,undefined -fno-sanitize-recover=undefined

.PHONY: FORCE all build tests benches test test-unit test-sanitize test-cli bench demo realworld clean deps fuzz \
        install uninstall

all: simrun

# ./simrun is the release binary; build/san/simrun the sanitized one.
simrun: FORCE
	@$(MAKE) --no-print-directory MODE=rel build
	@cp build/rel/simrun simrun

FORCE:

build: $(B)/simrun $(B)/simrun.1 $(B)/simrun.bash

# The manual page and the bash completion are made by the binary from its
# own option tables (sim/cli_help.c), so they cannot drift from --help.
$(B)/simrun.1: $(B)/simrun
	$(B)/simrun help --man > $@.tmp && mv $@.tmp $@
$(B)/simrun.bash: $(B)/simrun
	$(B)/simrun help --bash-completion > $@.tmp && mv $@.tmp $@

# -rdynamic: policy plugins (sim/plugin.h) call the engine's functions,
# which the binary therefore exports.
$(B)/simrun: $(B)/sim/main.o $(B)/libsim.a
	$(CC) $(LDFLAGS_ALL) $(WARN) $(LTO) -rdynamic -o $@ $^ $(LIBS)

$(B)/libsim.a: $(LIB_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(B)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) $(LTO) -MMD -MP -c -o $@ $<

$(B)/tests/%: tests/%.c $(B)/libsim.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) $(NO_LTO) -o $@ $< $(B)/libsim.a $(CMOCKA_LIBS) $(LIBS)

$(B)/bench/%: bench/%.c $(B)/libsim.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) $(LTO) -o $@ $< $(B)/libsim.a $(LIBS)

$(B)/tests/fuzz_%: tests/fuzz/fuzz_%.c tests/fuzz/replay.c tests/fuzz/fuzz.h $(B)/libsim.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) $(NO_LTO) -o $@ $< tests/fuzz/replay.c $(B)/libsim.a $(LIBS)

# The example policy of docs/writing-a-policy.md is compiled into its test.
$(B)/tests/test_example_policy: examples/policy/fifo_now.c

# (The empty recipe keeps make from saying there is nothing to do.)
tests: $(TEST_BIN) $(FUZZ_BIN) $(B)/simrun $(B)/simrun.1 $(B)/simrun.bash
	@:
benches: $(BENCH_BIN) $(B)/simrun

# Tests run TEST_JOBS at a time (tests/run_tests.sh -j); the builds of
# `make test` use as many jobs, unless make was given its own -j.
# TESTS='cli_check test_engine' (names or shell patterns) runs only those.
TEST_JOBS ?= $(shell nproc 2>/dev/null || echo 2)
BUILD_J    = $(if $(filter -j%,$(MAKEFLAGS)),,-j$(TEST_JOBS))
TEST_ARGS  = -j $(TEST_JOBS) $(if $(TESTS),-t '$(TESTS)')

# The whole suite: unit and property tests, CLI and golden runs, scenario
# checks, determinism; at -O2 and under ASan+UBSan, both flavours in one
# pool of TEST_JOBS.  A script marked "# run-once:" (a check of pages or
# digests, whose C paths the other tests run under the sanitizers) runs in
# the -O2 flavour only; `make test-sanitize` runs everything sanitized.
test: deps
	@$(MAKE) --no-print-directory -s $(BUILD_J) simrun
	@$(MAKE) --no-print-directory $(BUILD_J) MODE=rel tests
	@$(MAKE) --no-print-directory $(BUILD_J) MODE=san tests
	@bash tests/run_tests.sh $(TEST_ARGS) build/rel build/san

test-unit: tests
	@bash tests/run_tests.sh $(TEST_ARGS) $(B)

test-sanitize:
	$(MAKE) --no-print-directory MODE=san test-unit

bench: deps
	$(MAKE) --no-print-directory MODE=rel benches
	@bash bench/run_bench.sh build/rel

demo: deps simrun
	@bash tools/demo.sh

# docs/real-world.md: every incident of scenarios/incidents/ under every policy.
realworld: simrun
	@bash tools/realworld.sh

# Installs what the build and the tests need on a fresh Debian machine
# (only what is missing; needs root or sudo).
deps:
	@bash tools/deps.sh

# libFuzzer: every target built with clang into build/fuzz, then run for
# FUZZ_SECONDS each, starting from its corpus in tests/fuzz/corpus/ and
# writing what it finds to build/fuzz/corpus/ (see tests/fuzz/README.md).
FUZZ_LIB_OBJ = $(LIB_SRC:%.c=build/fuzz/%.o)
# Kept between runs: make would delete them as intermediate files.
.SECONDARY: $(LIB_SRC:%.c=build/fuzz/%.o)
build/fuzz/%.o: %.c
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_FLAGS) -fsanitize=fuzzer-no-link -MMD -MP -c -o $@ $<
build/fuzz/fuzz_%: tests/fuzz/fuzz_%.c tests/fuzz/fuzz.h $(FUZZ_LIB_OBJ)
	$(FUZZ_CC) $(FUZZ_FLAGS) -fsanitize=fuzzer -o $@ $< $(FUZZ_LIB_OBJ) $(LIBS)
fuzz: $(FUZZ_SRC:tests/fuzz/%.c=build/fuzz/%)
	@for t in $(FUZZ_SRC:tests/fuzz/%.c=%); do \
	    mkdir -p build/fuzz/corpus/$$t; \
	    echo "== $$t ($(FUZZ_SECONDS) s)"; \
	    build/fuzz/$$t -max_total_time=$(FUZZ_SECONDS) -max_len=8192 -timeout=10 -rss_limit_mb=4096 \
	        -print_final_stats=1 build/fuzz/corpus/$$t tests/fuzz/corpus/$${t#fuzz_} || exit 1; \
	done

# Installs like a Debian package would lay it out: the binary, the public
# headers a policy plugin needs (sim/policy_api.h and exactly what it
# includes: tests/cli_install.sh checks that this list is its closure),
# simrun.pc, the manual page, the bash completion, the bundled scenarios and
# the example plugin.  PREFIX defaults to /usr/local; DESTDIR stages it.
# MODE=san installs the sanitized build (for the tests).
PREFIX  ?= /usr/local
BINDIR  := $(PREFIX)/bin
INCDIR  := $(PREFIX)/include/simrun
PCDIR   := $(PREFIX)/lib/pkgconfig
MANDIR  := $(PREFIX)/share/man/man1
COMPDIR := $(PREFIX)/share/bash-completion/completions
DATADIR := $(PREFIX)/share/simrun
EXDIR   := $(PREFIX)/share/doc/simrun/examples
PUBLIC_HEADERS := sim/policy_api.h sim/policy.h sim/util.h sim/vocab.h
SIMRUN_VERSION = $(shell sed -n 's/^\#define SIMRUN_VERSION "\(.*\)"/\1/p' sim/cli.h)
POLICY_ABI     = $(shell sed -n 's/^\#define POLICY_ABI \([0-9]*\).*/\1/p' sim/policy.h)

install: build
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(INCDIR)/sim $(DESTDIR)$(PCDIR) $(DESTDIR)$(MANDIR) \
	    $(DESTDIR)$(COMPDIR) $(DESTDIR)$(DATADIR)/scenarios/data $(DESTDIR)$(DATADIR)/scenarios/incidents \
	    $(DESTDIR)$(EXDIR)/plugin
	install -m 755 $(B)/simrun $(DESTDIR)$(BINDIR)/simrun
	install -m 644 $(PUBLIC_HEADERS) $(DESTDIR)$(INCDIR)/sim/
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@VERSION@|$(SIMRUN_VERSION)|' -e 's|@POLICY_ABI@|$(POLICY_ABI)|' \
	    tools/simrun.pc.in > $(DESTDIR)$(PCDIR)/simrun.pc
	install -m 644 $(B)/simrun.1 $(DESTDIR)$(MANDIR)/simrun.1
	install -m 644 $(B)/simrun.bash $(DESTDIR)$(COMPDIR)/simrun
	install -m 644 scenarios/*.scn $(DESTDIR)$(DATADIR)/scenarios/
	install -m 644 scenarios/data/* $(DESTDIR)$(DATADIR)/scenarios/data/
	install -m 644 scenarios/incidents/*.scn $(DESTDIR)$(DATADIR)/scenarios/incidents/
	install -m 644 examples/plugin/Makefile examples/plugin/debounce.c $(DESTDIR)$(EXDIR)/plugin/

uninstall:
	rm -f $(DESTDIR)$(BINDIR)/simrun $(DESTDIR)$(PCDIR)/simrun.pc $(DESTDIR)$(MANDIR)/simrun.1 \
	    $(DESTDIR)$(COMPDIR)/simrun
	rm -rf $(DESTDIR)$(INCDIR) $(DESTDIR)$(DATADIR) $(DESTDIR)$(PREFIX)/share/doc/simrun

clean:
	rm -rf build simrun

-include $(LIB_OBJ:.o=.d) $(B)/sim/main.d $(wildcard build/fuzz/*/*.d)
