# perf-map fallback: a patch series for Linux perf and the harness around it.
# See README.md. Every entry point is here; the steps live in scripts/.

BUILD   := $(CURDIR)/build
SCRIPTS := $(CURDIR)/scripts
export BUILD

.PHONY: all build deps prepare base patched check demo export reset clean \
	fuzz asan bench soak series bisect-check install

all: build

deps:
	@$(SCRIPTS)/deps.sh

prepare: deps
	@$(SCRIPTS)/prepare.sh

base: prepare
	@$(SCRIPTS)/build-perf.sh $(BUILD)/src-base $(BUILD)/base

patched: prepare
	@$(SCRIPTS)/build-perf.sh $(BUILD)/src $(BUILD)/patched

build: base patched
	@cp $(BUILD)/patched/FEATURE-DUMP $(BUILD)/FEATURE-DUMP
	@echo "[build] base:    $(BUILD)/base/perf"
	@echo "[build] patched: $(BUILD)/patched/perf"

check: build
	@$(SCRIPTS)/check.sh

demo: build
	@$(SCRIPTS)/demo.sh

# make install [PREFIX=/usr/local] [DESTDIR=...]: the patched perf make built
# (build/patched, built first if it is not), with its docs, mkdebugelf with its
# man page.
install: patched
	@PREFIX='$(PREFIX)' DESTDIR='$(DESTDIR)' $(SCRIPTS)/install.sh

export:
	@$(SCRIPTS)/export-series.sh

reset:
	@rm -f $(BUILD)/src/.git/series-applied
	@git -C $(BUILD)/src reset -q --hard base 2>/dev/null || true
	@$(SCRIPTS)/apply-series.sh

clean:
	rm -rf $(BUILD)/base $(BUILD)/patched $(BUILD)/src $(BUILD)/src-base

# The patched perf built with clang, ASan and UBSan, running the series' tests.
asan: prepare
	@$(SCRIPTS)/asan.sh

fuzz: asan
	@$(SCRIPTS)/fuzz.sh $(or $(FUZZ_RUNS),100000)

bench: build
	@$(CURDIR)/bench/run.sh $(SECTIONS)

# perf top -a for SOAK_SECONDS (300) while processes come and go: its RSS and
# perf map probes a second must not grow with the processes seen.
soak: build
	@$(CURDIR)/bench/soak.sh

bisect-check: prepare
	@$(SCRIPTS)/bisect-check.sh

# make series SIGNOFF='Name <address>' [TOPIC=name] [PREFIX='PATCH perf-tools-next']: each topic
# of patches/topics as its own mail series in build/series/NAME
series: prepare
	@$(SCRIPTS)/mail-series.sh
