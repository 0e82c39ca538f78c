//! # shufflecert
//!
//! Certified privacy curves for the shuffle model of differential privacy.
//!
//! A local randomizer maps each user's input to a law on a finite output alphabet; the shuffler
//! releases the histogram of the n outputs.  For a binary-input mechanism `(W0, W1)` with k of
//! the n users holding input 1 the histogram's law is `T_{n,k}`, and neighbouring datasets give
//! the pair `P = T_{n,k}`, `Q = T_{n,k+1}` (Part I §2); a randomizer on any finite input domain
//! gives one pair per background composition and switched user.  This crate computes, for such
//! pairs, the privacy curves `δ_{Q‖P}(ε) = Σ_N (Q(N) − e^ε P(N))₊` and its reverse, ε for a
//! target δ, and TV, KL, JSD, χ², Hellinger², Rényi divergences — each as an
//! [`enclosure::Enclosure`]: an interval with exact endpoints proven to contain the true value.
//!
//! Layers, in the order data flows:
//!
//! * [`arith`] — the [`arith::Scalar`] trait and its three backends: exact rationals, f64
//!   intervals (inari), MPFR intervals; every operation is an enclosure.
//! * [`mechanism`] — binary-input mechanisms and randomizers on any input domain, from files or
//!   family strings (`k-rr:k=K,…` is K-ary randomized response on K inputs), validated exactly;
//!   the sufficiency reduction; [`multimessage`] — users sending m messages (Part I §9): the
//!   bundled model as the single-message model on message types, and the exact closed forms
//!   (χ², canonical ratios) that check both models' laws.
//! * [`exact`] — the histogram law (Part I §8.3), windowed laws, the pair through the shift
//!   identities (Lemma 4.2), the binary fast path (§8.1), the k = 0 pair on its likelihood
//!   ratio's lattice, background pairs, curves (Prop. 8.1) and divergences.
//! * [`query`] — questions about a pair answered in a chosen backend, with precision escalation.
//! * [`asymptotic`] and [`check`] — the Fisher constants and predictions of Part I, held against
//!   certified values (predictions are typed apart and never certified).
//! * [`limits`] — Part III: TV and Le Cam transfers, limit experiments, quotient geometry,
//!   `limit` and `berry-esseen`.
//! * [`profile`] — the worst case over all compositions k, by a pruned divide-and-conquer scan;
//!   [`profile_inputs`] — the worst case over every dataset for a randomizer on more inputs,
//!   by a certified branch and bound over compositions; [`bounds`] — a certified range of the
//!   worst case for a randomizer on any input domain (and a local search raising its lower end).
//! * [`accountants`] and [`audit`] — published amplification bounds computed with certified
//!   arithmetic, claims judged sound / unsound / undecided, `compare`.
//! * [`certificate`] — certificates, `verify` and `merge`.
//! * [`plot`] and [`cli`] — SVG pictures and the command-line shell (with `golden`, the fixture
//!   corpus of the standard mechanisms, `mechanism::standard`); beside it, the Python package
//!   (`python/`, a crate of its own) runs the same shell in process.
//! * [`enclosure`] and [`error`] — the enclosure type and its printing, and the error type;
//!   [`progress`] — the stages long computations report to a listener (never read back), and
//!   their cancellation points.
//!
//! ```
//! use rug::Rational;
//! use shufflecert::arith::exact::ExactCtx;
//! use shufflecert::exact::curve::{Direction, delta_at_exp};
//! use shufflecert::exact::pair::{PairOptions, pair_law};
//! use shufflecert::mechanism::load_mechanism;
//!
//! // Binary randomized response with e^ε0 = 3, n = 10 users, k = 0: exact rationals.
//! let m = load_mechanism("binary-rr:exp_eps0=3").unwrap();
//! let ctx = ExactCtx::default();
//! let law = pair_law::<Rational>(&m, 10, 0, &PairOptions::default(), &ctx).unwrap();
//! // δ_{Q‖P} at e^ε = 3/2 is an exact rational: the enclosure is a single point.
//! let d = delta_at_exp(&law, Direction::Qp, &Rational::from((3, 2)), &ctx);
//! assert!(d.is_point());
//! // The same in f64 intervals encloses it.
//! let f64_law = pair_law::<inari::Interval>(&m, 10, 0, &PairOptions::default(), &()).unwrap();
//! let e = delta_at_exp(&f64_law, Direction::Qp, &Rational::from((3, 2)), &());
//! assert!(e.contains(d.lo().finite().unwrap()));
//! ```

pub mod accountants;
pub mod arith;
pub mod asymptotic;
pub mod audit;
pub mod bounds;
pub mod certificate;
pub mod check;
pub mod cli;
pub mod enclosure;
pub mod error;
pub mod exact;
pub mod limits;
pub mod mechanism;
pub mod multimessage;
pub mod plot;
pub mod profile;
pub mod profile_inputs;
pub mod progress;
pub mod query;
