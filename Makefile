# The README's quick start: `make demo` and `make test`.  Both first make sure m4 is present:
# GMP's build (behind rug and inari) needs it and a fresh machine lacks it.

CARGO ?= cargo

# The demo and the tests build GMP and MPFR once, without their own C test suites (about three
# minutes of a fresh build): our test suite checks the arithmetic instead (Cargo.toml, feature
# `c-no-tests`). `make install` builds them with their tests.
DEV_FEATURES ?= --features c-no-tests

.PHONY: demo test bench install m4

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

bench: m4
	$(CARGO) bench

# The release binary in ~/.cargo/bin (on PATH with rustup).
install: m4
	$(CARGO) install --locked --path .
