//! The asymptotic layer (Part I §3, §6, §7, §8.2, §10): the constants of the Gaussian tangent
//! geometry, the floating-point predictions built from them, and the Chernoff bound.
//!
//! Constants are exact rational functions of the mechanism and are computed exactly (or as
//! enclosures for mechanisms with irrational entries).  Predictions are typed apart
//! ([`predictions::Prediction`]): they approximate certified quantities and are never reported
//! as certified.  The Chernoff bound is a certified upper bound.

pub mod chernoff;
pub mod constants;
pub mod predictions;

use crate::arith::Scalar;
use crate::arith::exact::ExactCtx;
use crate::arith::mpfr::{MpfrCtx, MpfrInterval};
use crate::enclosure::Endpoint;
use crate::error::{Error, Result};
use crate::mechanism::Mechanism;
use constants::{FisherConstants, fisher_constants, require_full_support};
use predictions::PREDICTION_CTX;
use rug::Rational;

/// The constants at π: exact when the mechanism is rational, and always as MPFR enclosures (for
/// the predictions).
#[derive(Clone, Debug)]
pub struct Constants {
    pub exact: Option<FisherConstants<Rational>>,
    pub enclosed: FisherConstants<MpfrInterval>,
}

impl<S: Scalar> FisherConstants<S> {
    /// Every value mapped into another backend.
    pub fn map<T>(&self, f: impl Fn(&S) -> T) -> FisherConstants<T> {
        let vec = |v: &[S]| v.iter().map(&f).collect::<Vec<T>>();
        let mat = |m: &[Vec<S>]| m.iter().map(|r| vec(r)).collect::<Vec<Vec<T>>>();
        FisherConstants {
            pi: self.pi.clone(),
            v: vec(&self.v),
            sigma0: mat(&self.sigma0),
            sigma1: mat(&self.sigma1),
            sigma_pi: mat(&self.sigma_pi),
            i_pi: f(&self.i_pi),
            score: vec(&self.score),
            i_mix: f(&self.i_mix),
            chi2_10: f(&self.chi2_10),
            chi2_01: f(&self.chi2_01),
            mu3: f(&self.mu3),
        }
    }
}

/// The constants of `mechanism` at composition `pi` (full support required).
pub fn constants(mechanism: &Mechanism, pi: &Rational) -> Result<Constants> {
    require_full_support(mechanism, "the Fisher constant I_π")?;
    if mechanism.is_rational() {
        let ctx = ExactCtx::default();
        let exact = fisher_constants(&mechanism.channel::<Rational>(&ctx)?, pi, &ctx);
        let enclosed = exact.map(|q| MpfrInterval::from_rational(q, &PREDICTION_CTX));
        Ok(Constants {
            exact: Some(exact),
            enclosed,
        })
    } else {
        // Entries like e^-ε0 for a large ε0 cancel in Σ_π and its solve: raise the precision
        // until I_π is tight, then round every value outward to the prediction precision.
        for precision in [PREDICTION_CTX.precision, 640, 2560] {
            let ctx = MpfrCtx { precision };
            let channel = mechanism.channel::<MpfrInterval>(&ctx)?;
            let c = fisher_constants(&channel, pi, &ctx);
            let i = c.i_pi.enclosure();
            let finite = matches!((i.lo(), i.hi()), (Endpoint::Finite(_), Endpoint::Finite(_)));
            if finite && i.relative_width() < 1e-30 {
                return Ok(Constants {
                    exact: None,
                    enclosed: c.map(outward_to_prediction_precision),
                });
            }
        }
        Err(Error::Unsupported(format!(
            "{}: the Fisher constant I_π could not be resolved even at 2560 bits (entries too extreme)",
            mechanism.name
        )))
    }
}

/// The same enclosure with endpoints rounded outward to the prediction precision (an unbounded
/// end stays unbounded).
fn outward_to_prediction_precision(x: &MpfrInterval) -> MpfrInterval {
    use rug::Float;
    use rug::float::{Round, Special};
    let e = x.enclosure();
    let end = |p: &Endpoint, round: Round| match p {
        Endpoint::Finite(q) => Float::with_val_round(PREDICTION_CTX.precision, q, round).0,
        Endpoint::PosInf => Float::with_val(PREDICTION_CTX.precision, Special::Infinity),
        Endpoint::NegInf => Float::with_val(PREDICTION_CTX.precision, Special::NegInfinity),
    };
    MpfrInterval::from_floats(end(e.lo(), Round::Down), end(e.hi(), Round::Up))
}
