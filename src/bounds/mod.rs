//! Certified bounds for randomizers on any finite input domain (issue 11, Takagi–Liew): the
//! privacy blanket and the shuffle index.  The certified upper bound (blanket divergence) and
//! lower bound (the boundary pair through the pair engine) build on these.

pub mod index;
pub mod predict;
pub mod range;
pub mod upper;
