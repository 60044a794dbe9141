# Gatehouse: `make run` builds and serves the default config; `make test` runs every test.
SWIFT ?= swift
SHELL := /bin/bash
# System libraries the build links (libldap2-dev: the LDAP plugin; libxmlsec1-dev: the SAML plugin),
# plus what the walk-through uses.
RUN_PACKAGES := libsqlite3-dev libssl-dev libldap2-dev libxmlsec1-dev curl jq
TEST_PACKAGES := $(RUN_PACKAGES) python3 python3-venv openssl slapd ldap-utils postgresql oathtool samba samba-ad-dc winbind ldb-tools iproute2 \
  simplesamlphp php-cli php-xml php-mbstring mini-httpd xmlsec1
# Debian's tools that build the package and the image, and what the package tests boot them with.
RELEASE_PACKAGES := binutils libicu72 zlib1g libyaml-0-2
DEB_PACKAGES := dpkg-dev debhelper fakeroot
CONTAINER_PACKAGES := podman runc debootstrap
PACKAGE_TEST_PACKAGES := $(RELEASE_PACKAGES) $(DEB_PACKAGES) $(CONTAINER_PACKAGES) lintian systemd-container
ARGS ?=

.PHONY: run test build deps test-deps kit-check format unit unit-fast unit-under-load e2e e2e-postgres multinode integration upstream hardening package-test release deb container clean test-logs

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
	@mkdir -p .build/test-logs
	@$(SWIFT) test --skip-build 2>&1 | tee .build/test-logs/unit-tests.log; status=$${PIPESTATUS[0]}; \
	  if [ $$status -ne 0 ]; then echo "--- failures:"; grep -E "✘|recorded an issue|Expectation failed|error:" .build/test-logs/unit-tests.log | head -60; fi; exit $$status
	@# Fixed secrets of the unit tests, for the log scan at the end of `make test`.
	@printf '%s\n' web-secret-web-secret-web-secret-0001 other-secret-other-secret-other-0002 "correct horse battery" >.build/test-logs/unit-tests.secrets

# The unit tests that need no peer (no slapd, PostgreSQL, SMTP server or oathtool): a quick lane for
# working on the kit, the engine or a plugin. `make test` runs every test; this lane skips the suites
# that start peers (the store on PostgreSQL, LDAP and Active Directory, mail, email codes, the client SDK's world).
UNIT_FAST_SKIP := GatehouseStoreTests|LDAPTests|GatehouseMailTests|EmailCodeTests|GatehouseClientTests|independentlyComputedCodes
unit-fast: deps
	$(SWIFT) build --build-tests
	$(SWIFT) test --skip-build --skip '$(UNIT_FAST_SKIP)'

# The plugin kit's API discipline: its figures (no kit type without a plugin user), the formatting,
# and no API breakage since the last kit release that docs/kit-changelog.md does not list.
kit-check: deps
	scripts/kit-api-check.sh

# Formats every Swift source with .swift-format (what kit-check's lint expects); the guide's code
# blocks follow the files they show.
format:
	$(SWIFT) format format -i -r Sources Plugins Tests Package.swift --configuration .swift-format
	scripts/guide-code.py --from-files

# The whole unit suite 5 times in a row beside a CPU hog (not part of `make test`: it proves the
# suite holds on a loaded machine of any make, and takes about ten minutes).
unit-under-load: test-deps
	@scripts/install-deps.sh stress-ng
	$(SWIFT) build --build-tests
	scripts/unit-under-load.sh

e2e: test-deps
	$(SWIFT) build --product gatehouse
	Tests/e2e/run.sh

# The same end-to-end checks with every broker on PostgreSQL.
e2e-postgres: test-deps
	$(SWIFT) build --product gatehouse
	E2E_DATABASE=postgres Tests/e2e/run.sh

# Three broker nodes on one PostgreSQL: any node continues any flow.
multinode: test-deps
	$(SWIFT) build --product gatehouse
	Tests/multinode/run.sh

# A standard OIDC client (Authlib) and a real headless Chromium against the OpenID Provider.
integration: test-deps
	$(SWIFT) build --product gatehouse
	$(SWIFT) build --product riddle-broker
	Tests/integration/run.sh

# Upstream sign-in (the oidc plugin) against another Gatehouse, oidc-provider-mock and a hostile
# upstream, over HTTP and in headless Chromium.
upstream: test-deps
	$(SWIFT) build --product gatehouse
	Tests/upstream/run.sh

# The broker under slow clients, fuzzing (schemathesis), kill -9 and peer outages; then every log
# the tests wrote is scanned for the secrets they used.
hardening: test-deps
	$(SWIFT) build --product gatehouse
	Tests/hardening/run.sh

# The release binary (Swift runtime linked in) and its tarball in .build/release-artifacts.
release: deps
	@scripts/install-deps.sh $(RELEASE_PACKAGES)
	scripts/release.sh

# The Debian package of the release (docs/operations.md, "Install").
deb: release
	@scripts/install-deps.sh $(DEB_PACKAGES)
	scripts/deb.sh

# The container image localhost/gatehouse:VERSION, built with podman (base from debootstrap).
container: release
	@scripts/install-deps.sh $(CONTAINER_PACKAGES)
	scripts/container.sh

# The package in a debootstrap bookworm root booted with systemd-nspawn (install, upgrade from the
# previous release, downgrade, rollback, purge), and the container image run with podman.
package-test: test-deps
	@scripts/install-deps.sh $(PACKAGE_TEST_PACKAGES)
	Tests/package/run.sh

# Each `make test` starts with no logs from an earlier run.
test-logs:
	@rm -rf .build/test-logs

# Every stage in turn, each timed; the times are printed at the end (scripts/test-stages.sh).
test: test-logs
	@scripts/test-stages.sh kit-check unit e2e e2e-postgres multinode integration upstream hardening package-test

clean:
	rm -rf .build .build-release .build-previous data
