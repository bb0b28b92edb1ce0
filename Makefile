# Common targets. `make demo` and `make test` do all their own setup on a
# fresh Debian 12 machine (as root): system packages, dockerd, npm packages,
# offline base images.
SHELL := /bin/bash
AUTHBENCH := npx authbench

.PHONY: all host deps base typecheck lint test test-full test-unit test-docker demo verify suite reproduce-smoke reproduce bench clean help

all: test

help:
	@echo "make demo   - eval the bundled tasks offline: scripted oracle under gold; injection control, none vs tool-boundary; report"
	@echo "make verify - every task's controls: oracle passes, attack smoke fires, no-op fails"
	@echo "make suite  - regenerate tasks/suite and derive gold for new or changed scenarios"
	@echo "make reproduce-smoke - 12 scenarios x 7 defenses x 2 scripted agents x 2 seeds, 5 live memory scenarios x 7 defenses x the memory control, report, prerequisites asserted"
	@echo "make reproduce       - the same over the whole suite"
	@echo "make test   - typecheck, lint, unit, the installed package and the sampled Docker tier (what CI runs; prints wall time per tier)"
	@echo "make test-full - everything: the whole suite's controls and gold, the full smoke reproduction"
	@echo "make bench  - overhead benchmark (prints ratios)"
	@echo "make clean  - remove everything authbench created in Docker"

host:
	@bash scripts/setup-host.sh

# `npm install` rather than `npm ci`: the lock pins every version, but vite lists a Windows-only
# optional package the registry mirror does not serve, which `npm ci` treats as a lock mismatch.
node_modules/.installed: package.json package-lock.json
	npm install --no-audit --no-fund
	@touch $@

deps: node_modules/.installed

base: host deps
	$(AUTHBENCH) base build

typecheck: deps
	npx tsc --noEmit

lint: deps
	npx eslint .

test-unit: deps
	npx vitest run --project unit

# The sampled Docker tier alone: `docker` (files in parallel) then `docker-exclusive` (the adversarial suite, alone).
test-docker: host deps
	AUTHBENCH_TEST_TIER=ci npx vitest run --project 'docker*'

# The tiers (typecheck, lint, unit, package, docker) run inside run-tests.ts, which prints each one's wall time.
test: host deps
	npx node scripts/run-tests.ts --tier ci

# Everything: every suite scenario's controls and gold re-derivation, the full smoke reproduction.
test-full: host deps
	npx node scripts/run-tests.ts --tier full

# The main job on the bundled tasks, offline: the oracle through the agent loop under its gold
# policy, then the injection-following positive control with no defense vs the kernel boundary.
# Two evals on the starter tasks, then the report over both (jobs/demo-oracle-<stamp>/report/report.html).
demo: base
	@stamp=$$(date +%s); \
	$(AUTHBENCH) eval --model scripted/oracle --policy gold --job-name demo-oracle-$$stamp && \
	$(AUTHBENCH) eval --model scripted/follow-injection --defense none --defense tool-boundary --policy gold --job-name demo-injection-$$stamp && \
	$(AUTHBENCH) report jobs/demo-oracle-$$stamp jobs/demo-injection-$$stamp

verify: base
	$(AUTHBENCH) verify --noop

# Regenerate the evidence-stage suite (deterministic) and derive gold for every scenario: new ones are
# written, unchanged ones kept, drifted ones refused (review, then gen-gold --write).
suite: base
	$(AUTHBENCH) tasks generate
	$(AUTHBENCH) gen-gold --tasks tasks/suite --all -n 3

# The measurement run (issue #7): eval, report (jobs/reproduce*-report/report.html), prerequisites asserted.
reproduce-smoke: base
	npx node scripts/reproduce.ts

reproduce: base
	npx node scripts/reproduce.ts --full

bench: base
	npx node scripts/bench.ts

clean: deps
	$(AUTHBENCH) clean
