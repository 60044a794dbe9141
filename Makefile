# Gatehouse: `make run` builds and serves the default config; `make test` runs every test.
SWIFT ?= swift
SHELL := /bin/bash
# System libraries the build links (libldap2-dev: the LDAP plugin), plus what the walk-through uses.
RUN_PACKAGES := libsqlite3-dev libssl-dev libldap2-dev curl jq
TEST_PACKAGES := $(RUN_PACKAGES) python3 python3-venv openssl slapd ldap-utils
ARGS ?=

.PHONY: run test build deps test-deps unit e2e integration clean

deps:
	@scripts/install-deps.sh $(RUN_PACKAGES)

build: deps
	$(SWIFT) build --product gatehouse

run: build
	$(SWIFT) run --skip-build gatehouse serve $(ARGS)

test-deps:
	@scripts/install-deps.sh $(TEST_PACKAGES)
	@scripts/test-venv.sh

unit: test-deps
	Tests/layering/check_layering.py
	$(SWIFT) build --build-tests
	@# The failures are printed again at the end, where a CI log's tail shows them.
	@$(SWIFT) test --skip-build 2>&1 | tee .build/unit-tests.log; status=$${PIPESTATUS[0]}; \
	  if [ $$status -ne 0 ]; then echo "--- failures:"; grep -E "✘|recorded an issue|Expectation failed|error:" .build/unit-tests.log | head -60; fi; exit $$status

e2e: test-deps
	$(SWIFT) build --product gatehouse
	Tests/e2e/run.sh

# A standard OIDC client (Authlib) and a real headless Chromium against the OpenID Provider.
integration: test-deps
	$(SWIFT) build --product gatehouse
	$(SWIFT) build --product riddle-broker
	Tests/integration/run.sh

test: unit e2e integration

clean:
	rm -rf .build data
