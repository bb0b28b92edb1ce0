# Common targets. `make demo` and `make test` do all their own setup on a
# fresh Debian 12 machine (as root): system packages, dockerd, npm packages,
# offline base images.
SHELL := /bin/bash
AUTHBENCH := npx authbench

.PHONY: all host deps base typecheck lint test test-unit test-docker demo bench clean help

all: test

help:
	@echo "make demo   - build every bundled task, run every oracle and attack smoke through its validators"
	@echo "make test   - typecheck, lint, unit and Docker-backed tests"
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

test-docker: host deps
	npx vitest run --project docker

test: host deps typecheck lint
	npx node scripts/run-tests.ts

demo: base
	$(AUTHBENCH) verify

bench: base
	npx node scripts/bench.ts

clean: deps
	$(AUTHBENCH) clean
