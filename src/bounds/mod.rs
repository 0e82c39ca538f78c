//! Certified bounds for randomizers on any finite input domain (issue 11, Takagi–Liew): the
//! privacy blanket and the shuffle index (`index`), the blanket sum (`upper`), the certified range
//! of `bounds` (`range`: the blanket divergence above, concrete neighbouring pairs below), the
//! Chernoff bound on one sum that lets a range skip pairs (`chernoff`), a local search over mixed
//! backgrounds that raises the lower end (`search`), the branch-and-bound ceiling that lowers the
//! upper end (`ceiling`), and the shuffle index's asymptotic predictions (`predict`).

pub mod ceiling;
pub mod chernoff;
pub mod index;
pub mod predict;
pub mod range;
pub mod search;
pub mod upper;
