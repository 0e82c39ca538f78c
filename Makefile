# The README's quick start: `make demo` and `make test`.  Both first make sure m4 is present:
# GMP's build (behind rug and inari) needs it and a fresh machine lacks it.

CARGO ?= cargo

# The demo and the tests build GMP and MPFR once, without their own C test suites (about three
# minutes of a fresh build): our test suite checks the arithmetic instead (Cargo.toml, feature
# `c-no-tests`). `make install` builds them with their tests.
DEV_FEATURES ?= --features c-no-tests

.PHONY: demo test python-test python bench install m4

m4:
	@command -v m4 >/dev/null 2>&1 || { \
	  echo "m4 (needed to build GMP/MPFR) is missing: installing it with apt-get" >&2; \
	  SUDO=; [ "$$(id -u)" = 0 ] || SUDO=sudo; \
	  $$SUDO apt-get update 1>&2 && $$SUDO apt-get install -y m4 1>&2; \
	}

# The main job on a shipped fixture: the certified two-sided ε of the boundary pair for binary
# randomized response (ε0 = 1), n = 10000 users, δ = 1e-5 (Part I, Table 6).  It runs in the
# `dev` profile, which Cargo.toml optimises, so that `make test` reuses every compiled
# dependency instead of building them a second time for `release`.
demo: m4
	$(CARGO) run --quiet $(DEV_FEATURES) -- epsilon --mechanism fixtures/mechanisms/binary-rr-eps1.toml --n 10000 --k 0 --delta 1e-5

test: m4
	$(CARGO) test $(DEV_FEATURES)
	$(MAKE) python-test

# The Python package (python/): a virtual environment in target/ with what
# python/requirements-test.txt lists (maturin, pytest, and the tests' optional packages), a
# wheel built from the test build's dependencies (the workspace shares them), installed there,
# and its tests run against the command line that `cargo test` built.
PYTHON ?= python3
PYENV := target/pyenv
WHEELS := target/wheels

$(PYENV)/installed: python/requirements-test.txt
	$(PYTHON) -m venv $(PYENV)
	$(PYENV)/bin/pip install --quiet --upgrade pip
	$(PYENV)/bin/pip install --quiet -r python/requirements-test.txt
	touch $@

python-test: m4 $(PYENV)/installed
	rm -rf $(WHEELS)
	cd python && VIRTUAL_ENV=$(CURDIR)/$(PYENV) $(CURDIR)/$(PYENV)/bin/maturin build --quiet \
	  --profile dev $(DEV_FEATURES) --interpreter $(CURDIR)/$(PYENV)/bin/python --out $(CURDIR)/$(WHEELS)
	$(PYENV)/bin/pip install --quiet --force-reinstall --no-deps $(WHEELS)/shufflecert-*.whl
	SHUFFLECERT_BIN=$(CURDIR)/target/debug/shufflecert $(PYENV)/bin/pytest -q python/tests

# Installs the Python package into the current environment (a release build with GMP's and
# MPFR's own tests: about 12 minutes on 2 cores from a fresh clone).
python: m4
	$(PYTHON) -m pip install ./python

bench: m4
	$(CARGO) bench

# The release binary in ~/.cargo/bin (on PATH with rustup).
install: m4
	$(CARGO) install --locked --path .
