# simrun build.  `make` builds ./simrun; `make test` runs every test, in a
# normal build and again under AddressSanitizer + UndefinedBehaviorSanitizer;
# `make bench` runs the benchmarks; `make demo` is the main job.
#
# Two build flavours share the sources: MODE=rel (-O2, the default) builds
# into build/rel, MODE=san (ASan+UBSan) into build/san.  Every module in
# sim/, policies/ and reports/ except sim/main.c goes into one static library
# that the binary, the tests and the benchmarks link.

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
else
  OPT   := -O2
  B     := build/rel
endif
CFLAGS_ALL  = $(BASE) $(OPT) $(CFLAGS)
LDFLAGS_ALL = $(OPT) $(LDFLAGS)
LIBS    := $(SQL_LIBS) -lm

LIB_SRC   := $(sort $(filter-out sim/main.c,$(wildcard sim/*.c)) $(wildcard policies/*.c) $(wildcard reports/*.c))
LIB_OBJ   := $(LIB_SRC:%.c=$(B)/%.o)
TEST_SRC  := $(sort $(wildcard tests/test_*.c))
TEST_BIN  := $(TEST_SRC:tests/%.c=$(B)/tests/%)
BENCH_SRC := $(sort $(wildcard bench/bench_*.c))
BENCH_BIN := $(BENCH_SRC:bench/%.c=$(B)/bench/%)
CMOCKA_LIBS := -lcmocka

.PHONY: FORCE all build tests benches test test-unit test-sanitize test-cli bench demo clean deps

all: simrun

# ./simrun is the release binary; build/san/simrun the sanitized one.
simrun: FORCE
	@$(MAKE) --no-print-directory MODE=rel build
	@cp build/rel/simrun simrun

FORCE:

build: $(B)/simrun

$(B)/simrun: $(B)/sim/main.o $(B)/libsim.a
	$(CC) $(LDFLAGS_ALL) -o $@ $^ $(LIBS)

$(B)/libsim.a: $(LIB_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(B)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -MMD -MP -c -o $@ $<

$(B)/tests/%: tests/%.c $(B)/libsim.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -o $@ $< $(B)/libsim.a $(CMOCKA_LIBS) $(LIBS)

$(B)/bench/%: bench/%.c $(B)/libsim.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -o $@ $< $(B)/libsim.a $(LIBS)

# The example policy of docs/writing-a-policy.md is compiled into its test.
$(B)/tests/test_example_policy: examples/policy/fifo_now.c

tests: $(TEST_BIN) $(B)/simrun
benches: $(BENCH_BIN) $(B)/simrun

# The whole suite: unit and property tests, CLI and golden runs, scenario
# checks, determinism; once at -O2 and once under ASan+UBSan.
test: deps
	@$(MAKE) --no-print-directory -s simrun
	$(MAKE) --no-print-directory MODE=rel test-unit
	$(MAKE) --no-print-directory MODE=san test-unit

test-unit: tests
	@bash tests/run_tests.sh $(B)

test-sanitize:
	$(MAKE) --no-print-directory MODE=san test-unit

bench: deps
	$(MAKE) --no-print-directory MODE=rel benches
	@bash bench/run_bench.sh build/rel

demo: deps simrun
	@bash tools/demo.sh

# Installs what the build and the tests need on a fresh Debian machine
# (only what is missing; needs root or sudo).
deps:
	@bash tools/deps.sh

clean:
	rm -rf build simrun

-include $(LIB_OBJ:.o=.d) $(B)/sim/main.d
