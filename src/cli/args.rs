//! Raw command-line arguments (clap).  Validation into library types happens in
//! [`super::validate`]; nothing here interprets numbers.

use clap::{ArgGroup, Args, Parser, Subcommand, ValueEnum};

/// Certified privacy curves for the shuffle model of differential privacy.
///
/// Every number printed as an interval [lo, hi] (JSON: {"lo", "hi"}) is proven to contain the
/// true value.  For a binary-input mechanism, P = T_{n,k} and Q = T_{n,k+1} are the laws of the
/// shuffled histogram when k and k + 1 of the n users hold input 1; "qp" is δ_{Q‖P}, "pq" the
/// reverse.  `k-rr:k=K,…` is K-ary randomized response on K-valued inputs (`inputs=2`: its
/// binary-input restriction); every report states its input domain first.
#[derive(Debug, Parser)]
#[command(name = "shufflecert", version, about, max_term_width = 100)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,

    /// Print every enclosure as [lo, hi] in full, with every digit its width needs (text
    /// reports; by default the digits both ends share are printed once, as in
    /// 0.10537258[61, 62], at most 20 significant digits, and tables keep to 6).
    #[arg(long, global = true)]
    pub wide: bool,

    /// Print this many significant digits (2 to 120) per enclosure in text reports, tables
    /// included, at most what the width needs (rounded outward, so still certified; JSON and
    /// certificates keep every digit).
    #[arg(long, global = true, value_name = "N")]
    pub digits: Option<String>,

    /// How long-running commands report progress on stderr: `auto` a bar when stderr is a terminal
    /// (after two seconds), `json` one JSON object per line, `none` nothing.
    #[arg(
        long,
        global = true,
        value_enum,
        value_name = "HOW",
        default_value = "auto"
    )]
    pub progress: ProgressArg,

    /// No progress bar and no estimate on stderr (as `--progress none`).
    #[arg(long, short = 'q', global = true)]
    pub quiet: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ProgressArg {
    Auto,
    Json,
    None,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// δ(ε) of the pair in both directions, at one or more ε.
    #[command(override_usage = PAIR_USAGE_DELTA)]
    Delta(DeltaArgs),
    /// The smallest ε ≥ 0 with δ(ε) ≤ D, in both directions and two-sided.
    #[command(override_usage = PAIR_USAGE_EPSILON)]
    Epsilon(EpsilonArgs),
    /// TV, KL (both ways), JSD, χ², squared Hellinger and Rényi divergences of the pair.
    #[command(override_usage = PAIR_USAGE_DIVERGENCES)]
    Divergences(DivergenceArgs),
    /// The mechanism's guarantee, δ_M at ε or ε_M at δ: the worst case over every composition k
    /// (binary inputs), or over every dataset by a certified branch and bound (more inputs).
    #[command(
        override_usage = "shufflecert profile -m SPEC --n N (--eps E[,E…] | --exp-eps C[,C…] | --delta D[,D…] | --renyi-order A[,A…] | --plot FILE.svg) [OPTIONS]"
    )]
    Profile(ProfileArgs),
    /// The constants of Part I §3 and §6 (I_π, I_π^mix, χ², score, μ3, μ_n), exactly.
    #[command(
        override_usage = "shufflecert constants -m SPEC (--pi P | --n N --k K | --pi-range A..B) [OPTIONS]"
    )]
    Constants(ConstantsArgs),
    /// Hold every asymptotic prediction of Part I against the certified value it approximates.
    #[command(
        override_usage = "shufflecert check -m SPEC --n N --k K (--t T[,T…] | --eps E[,E…]) [OPTIONS]\n       shufflecert check -m SPEC --n N --eps E[,E…] [OPTIONS]   (no --k: the shuffle index against `bounds`)",
        mut_arg("certificate", |a| a.help("Also write a certificate (schema v2) of the certified values behind every comparison; `shufflecert verify` re-derives them and every verdict (with --n-sweep, every n; without --k, the ranges of `bounds`)")),
        mut_arg("experiment", |a| a.hide(true)),
        mut_arg("background", |a| a.hide(true)),
        mut_arg("switch", |a| a.hide(true))
    )]
    Check(CheckArgs),
    /// Verdicts on other accountants' claims: each proven sound, refuted with a witness, or
    /// undecided; with how tight each decided claim is.
    #[command(override_usage = "shufflecert audit -m SPEC --claims FILE [OPTIONS]")]
    Audit(AuditArgs),
    /// Published amplification bounds (FMT21, FMT23, Wang et al., Balle et al.) beside the
    /// certified ε of the mechanism they were published for, per n (Part I Table 6, extended).
    #[command(
        override_usage = "shufflecert compare -m SPEC --n N[,N…] --delta D [OPTIONS]",
        mut_arg("messages", |a| a.hide(true)),
        mut_arg("bundled", |a| a.hide(true))
    )]
    Compare(CompareArgs),
    /// Multi-message shuffling (Part I §9): the certified δ of one message with n and with nm
    /// users, m messages unbundled and bundled, side by side, with their certified ratios.
    #[command(
        override_usage = "shufflecert compare-messages -m SPEC --n N --messages M (--eps E[,E…] | --exp-eps C[,C…]) [--k K] [--profile] [OPTIONS]",
        mut_arg("bundled", |a| a.hide(true))
    )]
    CompareMessages(CompareMessagesArgs),
    /// Check a certificate: its schema and digest, the mechanism against its source, and every
    /// result re-derived by independent routes.
    Verify(VerifyArgs),
    /// A certified range [lower, upper] of the mechanism's δ_M(ε) (or ε_M(δ)) for a randomizer
    /// on any finite input domain: the blanket divergence above, concrete neighbouring pairs
    /// below, and the shuffle index χ.
    #[command(
        override_usage = "shufflecert bounds -m SPEC --n N (--eps E[,E…] | --exp-eps C[,C…] | --delta D) [OPTIONS]",
        mut_arg("engine", |a| a.hide(true)),
        mut_arg("messages", |a| a.hide(true)),
        mut_arg("bundled", |a| a.hide(true))
    )]
    Bounds(BoundsArgs),
    /// A mechanism sequence against its Part III limit: the quotient geometry, which part of
    /// Theorem 3.1 covers it, and per n the certified finite-n δ, the certified limit δ, their
    /// gap and its observed order beside the proved one.
    #[command(
        override_usage = "shufflecert limit --family SEQ --n N1,N2,… (--eps E[,E…] | --exp-eps C[,C…]) [--k-rule RULE] [--json] [--certificate OUT.json]"
    )]
    Limit(LimitArgs),
    /// Part III §8 diagnostic: the certified Poisson-shift (or Skellam-shift) curve against the
    /// Gaussian shift N(0,1) vs N(c,1), c = λ^{-1/2}, as λ grows: the enclosed gap, gap/c and the
    /// order observed (Theorem 8.1 proves O(c) with a constant that is not explicit).
    #[command(
        override_usage = "shufflecert berry-esseen --lambda L[,L…] (--eps E[,E…] | --t T[,T…]) [--pi P] [--precision BITS] [--json] [--certificate OUT.json]"
    )]
    BerryEsseen(BerryEsseenArgs),
    /// Combine partial profile certificates (shards over ranges of k) into the mechanism-wide
    /// profile: checks that they agree and cover 0..n−1 exactly once.
    Merge(MergeArgs),
    /// Write the golden fixture corpus: exact enclosures for the standard mechanisms over a fixed
    /// grid, as JSON Lines, with one certificate per case family and a manifest with SHA-256s.
    #[command(override_usage = "shufflecert golden --out DIR [--json]")]
    Golden(GoldenArgs),
}

#[derive(Debug, Args)]
#[command(group(ArgGroup::new("target").args(["eps", "exp_eps", "delta"]).required(true).multiple(true)))]
pub struct BoundsArgs {
    /// Randomizer: a family string (`k-rr:k=K,exp_eps0=C` is K-ary randomized response on K
    /// inputs; `inputs=I` restricts it to inputs 0..I−1), a file with `inputs` and one row per
    /// input, or a binary-input mechanism file.
    #[arg(long, short = 'm', value_name = "SPEC")]
    pub mechanism: String,

    #[command(flatten)]
    pub common: CommonArgs,

    /// Number of users n (≥ 1).
    #[arg(long, value_name = "N", allow_hyphen_values = true)]
    pub n: String,

    /// ε values (exact decimals ≥ 0), comma-separated: bound δ_M(ε).
    #[arg(
        long,
        value_name = "E[,E…]",
        allow_hyphen_values = true,
        conflicts_with = "delta"
    )]
    pub eps: Option<String>,

    /// e^ε values given directly as rationals ≥ 1, comma-separated.
    #[arg(
        long,
        value_name = "C[,C…]",
        allow_hyphen_values = true,
        conflicts_with = "delta"
    )]
    pub exp_eps: Option<String>,

    /// Target δ, strictly between 0 and 1: bound ε_M(δ).
    #[arg(long, value_name = "D", allow_hyphen_values = true)]
    pub delta: Option<String>,

    /// Raise the lower end by a local search over mixed backgrounds (the others' inputs not all
    /// alike), evaluating at most N compositions; the best dataset found is reported.
    #[arg(long, value_name = "N", allow_hyphen_values = true)]
    pub search: Option<String>,

    /// Lower the upper end by a branch and bound over every dataset that closes boxes at a level
    /// between the ends (the middle first, then halving toward the lower end while searches
    /// finish), within S seconds in all.
    #[arg(long, value_name = "S", allow_hyphen_values = true)]
    pub ceiling_seconds: Option<String>,
}

#[derive(Debug, Args)]
#[command(group(ArgGroup::new("target").args(["eps", "exp_eps"]).required(true).multiple(true)))]
pub struct LimitArgs {
    /// The sequence W^(n): `binary-rr:exp_eps0=n/C`, `k-rr:k=K,exp_eps0=n/C,inputs=2`, or a TOML/JSON
    /// file with w0, w1 entries "a" or ["a", "b"] meaning a + b/n.
    #[arg(long, value_name = "SPEC")]
    pub family: String,

    /// Numbers of users, comma-separated (increasing).
    #[arg(long, value_name = "N[,N…]")]
    pub n: String,

    /// The composition rule: fixed:K (k_n = K), complement:K (k_n = n − 1 − K), fraction:P
    /// (k_n = ⌊Pn⌋) or power:A (k_n = ⌊n^A⌋).
    #[arg(long, value_name = "RULE", default_value = "fixed:0")]
    pub k_rule: String,

    /// ε values (exact decimals ≥ 0), comma-separated.
    #[arg(long, value_name = "E[,E…]", allow_hyphen_values = true)]
    pub eps: Option<String>,

    /// e^ε values given directly as rationals ≥ 1, comma-separated.
    #[arg(long, value_name = "C[,C…]", allow_hyphen_values = true)]
    pub exp_eps: Option<String>,

    /// Print JSON instead of a table.
    #[arg(long)]
    pub json: bool,

    /// Also write a certificate (schema v2) of every certified number printed: each finite-n δ,
    /// the limit δ, the gaps, the δ from the limit curve with its TV budgets, and Theorem 7.2's
    /// auxiliary TV, with the sequence's text; `shufflecert verify` re-derives them (the
    /// observations and the proved order stay labelled uncertified).
    #[arg(long, value_name = "OUT.json")]
    pub certificate: Option<String>,
}

#[derive(Debug, Args)]
#[command(group(ArgGroup::new("target").args(["eps", "t"]).required(true)))]
pub struct BerryEsseenArgs {
    /// Poisson intensities λ > 0, comma-separated (c = λ^{-1/2}).
    #[arg(long, value_name = "L[,L…]", allow_hyphen_values = true)]
    pub lambda: String,

    /// Compare at these fixed ε (exact decimals ≥ 0), as in Corollary 8.2.
    #[arg(long, value_name = "E[,E…]", allow_hyphen_values = true)]
    pub eps: Option<String>,

    /// Compare on the local scale ε = t·c (exact decimals ≥ 0), where neither curve vanishes.
    #[arg(long, value_name = "T[,T…]", allow_hyphen_values = true)]
    pub t: Option<String>,

    /// The Skellam shift with U ~ Poi((1 − π)λ), V ~ Poi(πλ), 0 < π < 1, instead of the Poisson
    /// shift.
    #[arg(long, value_name = "P", allow_hyphen_values = true)]
    pub pi: Option<String>,

    /// MPFR precision in bits for every curve (default: f64 intervals for the lattice curve,
    /// escalated to MPFR when wider than 1e-9 relative, and 128-bit MPFR for the Gaussian one).
    #[arg(long, value_name = "BITS")]
    pub precision: Option<String>,

    /// Print JSON instead of a table.
    #[arg(long)]
    pub json: bool,

    /// Also write a certificate (schema v2) of every certified number printed: c, both lattice
    /// curves, the Gaussian curve and the gaps; `shufflecert verify` re-derives them (gap/c and
    /// the observed order stay labelled uncertified).
    #[arg(long, value_name = "OUT.json")]
    pub certificate: Option<String>,
}

#[derive(Debug, Args)]
pub struct MergeArgs {
    /// The shards' certificates.
    #[arg(value_name = "CERT.json", required = true)]
    pub shards: Vec<String>,

    /// Write the merged certificate to this file.
    #[arg(long, value_name = "OUT.json")]
    pub certificate: Option<String>,

    /// Print JSON instead of a table.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct GoldenArgs {
    /// The folder to write the corpus into: new, or empty. The corpus is written beside it and
    /// moved into place whole, so a failed run leaves nothing there.
    #[arg(long, value_name = "DIR")]
    pub out: String,

    /// Print the manifest as JSON instead of a summary.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct VerifyArgs {
    /// The certificate to check.
    #[arg(value_name = "CERT.json")]
    pub certificate: String,

    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,

    /// Also write a reviewer's page to this file: one self-contained HTML file (no network)
    /// with the results, the verification routes and problems, pictures and the digest.
    #[arg(long, value_name = "OUT.html")]
    pub html: Option<String>,

    /// Refuse a recomputation whose estimated memory exceeds this many GiB (the certificate's
    /// own limit was the producing machine's, and binds nothing here).
    #[arg(long, value_name = "GIB", default_value = "8")]
    pub max_memory_gib: String,
}

#[derive(Debug, Args)]
pub struct CompareArgs {
    #[command(flatten)]
    pub mechanism: MechanismArg,

    #[command(flatten)]
    pub common: CommonArgs,

    /// Numbers of users, comma-separated.
    #[arg(long, value_name = "N[,N…]")]
    pub n: String,

    /// Target δ, strictly between 0 and 1.
    #[arg(long, value_name = "D", allow_hyphen_values = true)]
    pub delta: String,
}

#[derive(Debug, Args)]
#[command(group(ArgGroup::new("thresholds").args(["eps", "exp_eps"]).required(true).multiple(true)))]
pub struct CompareMessagesArgs {
    #[command(flatten)]
    pub mechanism: MechanismArg,

    #[command(flatten)]
    pub common: CommonArgs,

    /// Number of users.
    #[arg(long, value_name = "N", allow_hyphen_values = true)]
    pub n: String,

    /// How many of the other users hold input 1 (the pair (T_(n,k), T_(n,k+1)); with nm
    /// users, km of them).
    #[arg(
        long,
        value_name = "K",
        allow_hyphen_values = true,
        default_value = "0"
    )]
    pub k: String,

    /// Privacy levels ε (exact decimals or fractions ≥ 0), comma-separated.
    #[arg(long, value_name = "E[,E…]", allow_hyphen_values = true)]
    pub eps: Option<String>,

    /// Thresholds given as e^ε (≥ 1), comma-separated.
    #[arg(long, value_name = "C[,C…]", allow_hyphen_values = true)]
    pub exp_eps: Option<String>,

    /// Also each model's mechanism-wide guarantee δ_M(ε), the worst case over every k (the
    /// profile of each model).
    #[arg(long)]
    pub profile: bool,
}

#[derive(Debug, Args)]
pub struct AuditArgs {
    #[command(flatten)]
    pub mechanism: MechanismArg,

    #[command(flatten)]
    pub common: CommonArgs,

    /// Claims file: CSV with a header (n, eps, delta[, kind, alpha, k, source, note]) or JSON
    /// Lines, one claim per row.
    #[arg(long, value_name = "FILE")]
    pub claims: String,

    /// Also certify the range of ε_M at each claimed δ (more than two inputs; one ε search
    /// per distinct n and δ, each about one `bounds` run). Binary-input audits always report
    /// ε_M at the claimed δ.
    #[arg(long)]
    pub eps_ranges: bool,

    /// More than two inputs: seconds the exact profile over every dataset may take, per n, to
    /// decide the claims the certified range leaves undecided (default 60; 0: not tried).
    #[arg(long, value_name = "S", allow_hyphen_values = true)]
    pub narrow_seconds: Option<String>,
}

#[derive(Debug, Args)]
#[command(group(ArgGroup::new("at").args(["pi", "n", "pi_range"]).required(true).multiple(true)))]
pub struct ConstantsArgs {
    /// Binary-input mechanism: a TOML/JSON file or a family string (`k-rr:k=K,…,inputs=2`).
    #[arg(long, short = 'm', value_name = "SPEC")]
    pub mechanism: String,

    /// The composition π ∈ [0, 1] (exact decimal or fraction).
    #[arg(long, value_name = "P", allow_hyphen_values = true, conflicts_with_all = ["n", "k"])]
    pub pi: Option<String>,

    /// Number of users (with --k: π = k/n, and μ_n = √(I_π/n) is reported).
    #[arg(long, value_name = "N", allow_hyphen_values = true, requires = "k")]
    pub n: Option<String>,

    /// Number of ones (with --n).
    #[arg(long, value_name = "K", allow_hyphen_values = true, requires = "n")]
    pub k: Option<String>,

    /// Also report the range of I_π and of the mixture underestimate over π in A..B.
    #[arg(long, value_name = "A..B")]
    pub pi_range: Option<String>,

    /// Grid points for --pi-range (exact values at each).
    #[arg(long, value_name = "G", default_value = "181")]
    pub grid: String,

    #[command(flatten)]
    pub messages: MessagesArgs,

    /// Print JSON instead of a table.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
#[command(group(ArgGroup::new("points").args(["t", "eps"]).required(true)))]
pub struct CheckArgs {
    #[command(flatten)]
    pub pair: PairArgs,

    /// Points on the local scale, ε = tμ_n (exact decimals ≥ 0), comma-separated.
    #[arg(long, value_name = "T[,T…]", allow_hyphen_values = true)]
    pub t: Option<String>,

    /// Points given as ε instead (t = ε/μ_n at the given n).
    #[arg(long, value_name = "E[,E…]", allow_hyphen_values = true)]
    pub eps: Option<String>,

    /// Further n (k scaled to keep k/n, t fixed): estimate the observed order of each error.
    #[arg(long, value_name = "N1,N2,…")]
    pub n_sweep: Option<String>,

    /// Exit with status 1 when a prediction has this verdict at the given n (a regression gate).
    #[arg(long, value_enum, value_name = "VERDICT")]
    pub fail_on: Option<FailOnArg>,

    /// Draw δ against ε (certified bands, predictions as lines) into this SVG file.
    #[arg(long, value_name = "OUT.svg")]
    pub plot: Option<String>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum FailOnArg {
    /// Some prediction certainly under-reports δ (or a divergence).
    Optimistic,
}

#[derive(Debug, Args)]
pub struct PairArgs {
    #[command(flatten)]
    pub common: CommonArgs,

    /// Mechanism: a TOML/JSON file, or a family string such as `binary-rr:eps0=1` or
    /// `k-rr:k=4,exp_eps0=3` (4-ary randomized response on 4 inputs: with --k add `inputs=2`
    /// for its binary-input restriction, or give --background and --switch).
    #[arg(
        long,
        short = 'm',
        value_name = "SPEC",
        required_unless_present = "experiment"
    )]
    pub mechanism: Option<String>,

    /// Number of users n (≥ 1).
    #[arg(
        long,
        value_name = "N",
        allow_hyphen_values = true,
        required_unless_present = "experiment"
    )]
    pub n: Option<String>,

    /// Number k of users holding a 1 in the smaller dataset (0 ≤ k ≤ n − 1).  Required for a
    /// binary-input pair; `check` without it checks the shuffle index's predictions against
    /// `bounds`.
    #[arg(long, value_name = "K", allow_hyphen_values = true)]
    pub k: Option<String>,

    /// For a randomizer on any input domain, in place of --k: how many of the other n − 1
    /// users hold each input, as `LABEL=COUNT` pairs separated by commas (unlisted inputs: 0),
    /// e.g. `2=9999`.  Needs --switch.
    #[arg(long, value_name = "COUNTS", conflicts_with = "k", requires = "switch")]
    pub background: Option<String>,

    /// With --background: the switched user's input in the first and the second dataset,
    /// `X1:X1'` (labels), e.g. `0:1`.  P is the first dataset's law, Q the second's.
    #[arg(long, value_name = "X1:X1'", requires = "background")]
    pub switch: Option<String>,

    /// Instead of a mechanism's pair, a limit experiment of Part III: `poisson-shift:lambda=L`,
    /// `skellam-shift:a=A,b=B`, `gaussian-shift:mu=M`, or a compound-Poisson file (TOML/JSON
    /// with `shift` and `jumps`; see the README).  Not for `check`.
    #[arg(long, value_name = "SPEC", conflicts_with_all = ["mechanism", "n", "k", "background"])]
    pub experiment: Option<String>,
}

/// The mechanism of commands that take nothing else.
#[derive(Debug, Args)]
pub struct MechanismArg {
    /// Mechanism: a TOML/JSON file, or a family string such as `binary-rr:eps0=1` or
    /// `k-rr:k=4,exp_eps0=3` (4-ary randomized response on 4 inputs; `inputs=2`: its
    /// binary-input restriction).
    #[arg(long, short = 'm', value_name = "SPEC")]
    pub mechanism: String,
}

/// Users sending several messages (Part I §9).
#[derive(Debug, Args, Default)]
pub struct MessagesArgs {
    /// Each user sends M messages (binary-input mechanisms, Part I §9), shuffled one by one
    /// (unbundled: the message histogram is released) unless --bundled.
    #[arg(long, value_name = "M", allow_hyphen_values = true)]
    pub messages: Option<String>,

    /// With --messages: each user's M messages stay together as one symbol of Y^M (the
    /// shuffler permutes users).
    #[arg(long)]
    pub bundled: bool,
}

/// Options shared by every subcommand.
#[derive(Debug, Args)]
pub struct CommonArgs {
    #[command(flatten)]
    pub messages: MessagesArgs,

    /// Arithmetic backend.
    #[arg(long, value_enum, default_value_t = BackendArg::Interval)]
    pub backend: BackendArg,

    /// MPFR precision in bits (mpfr backend; for the exact backend, the precision of the
    /// brackets around irrational numbers such as e^ε).
    #[arg(long, value_name = "BITS")]
    pub precision: Option<String>,

    /// Algorithm: the binary fast path for two outputs, windowed laws for more (auto; a large
    /// k = 0 pair may run on the lattice of its likelihood ratio), or the dynamic program over
    /// every histogram (general).
    #[arg(long, value_enum, default_value_t = EngineArg::Auto)]
    pub engine: EngineArg,

    /// Keep every output symbol (by default outputs with equal likelihood ratio W1/W0 are
    /// merged and outputs with W0 = W1 = 0 dropped, which changes no answer).
    #[arg(long)]
    pub no_reduce: bool,

    /// Never truncate (by default negligible tails are dropped with a certified bound on their
    /// mass, folded into every enclosure).
    #[arg(long)]
    pub no_truncation: bool,

    /// With the interval backend, recompute in MPFR when a result's relative width exceeds
    /// this (for values ≥ 1e-12).
    #[arg(long, value_name = "W", default_value = "1e-9")]
    pub rel_width: String,

    /// Never recompute in MPFR (report the f64-interval enclosure whatever its width).
    #[arg(long)]
    pub no_escalate: bool,

    /// Refuse problems whose estimated memory exceeds this many GiB.
    #[arg(long, value_name = "GIB", default_value = "8")]
    pub max_memory_gib: String,

    /// Refuse a pair whose estimated computing time exceeds this many seconds (binary
    /// mechanisms with both groups large, e.g. n = 10⁹ and k = n/2).
    #[arg(long, value_name = "S", default_value = "600")]
    pub max_seconds: String,

    /// Print JSON instead of a table.
    #[arg(long)]
    pub json: bool,

    /// Also write a self-contained certificate (mechanism, settings, results with exact
    /// endpoints, method, proofs-notes, SHA-256 digest) to this file; `shufflecert verify`
    /// re-derives it.
    #[arg(long, value_name = "OUT.json")]
    pub certificate: Option<String>,
}

#[derive(Debug, Args)]
#[command(group(ArgGroup::new("thresholds").args(["eps", "exp_eps"]).multiple(true)))]
pub struct DeltaArgs {
    #[command(flatten)]
    pub pair: PairArgs,

    /// ε values (exact decimals ≥ 0), comma-separated.
    #[arg(long, value_name = "E[,E…]", allow_hyphen_values = true)]
    pub eps: Option<String>,

    /// e^ε values given directly as rationals ≥ 1 (e.g. 3/2), comma-separated.
    #[arg(long, value_name = "C[,C…]", allow_hyphen_values = true)]
    pub exp_eps: Option<String>,

    /// Also draw both certified curves into this SVG file, the asked ε marked, over ε from 0 to
    /// 1.5·max ε and at least to where δ falls below 1e-12 (alone: without --eps).
    #[arg(long, value_name = "OUT.svg")]
    pub plot: Option<String>,

    /// Also certify δ for every mechanism within total-variation distance η of this one
    /// (TV(W_b, W_b′) ≤ η for both inputs, e.g. a sampler of bounded bias): Lemma 2.4 with
    /// TV(T_{n,k}, T′_{n,k}) ≤ n·η.
    #[arg(long, value_name = "ETA", allow_hyphen_values = true)]
    pub tv_ball: Option<String>,
}

#[derive(Debug, Args)]
pub struct EpsilonArgs {
    #[command(flatten)]
    pub pair: PairArgs,

    /// Target δ, strictly between 0 and 1 (e.g. 1e-5).
    #[arg(long, value_name = "D", allow_hyphen_values = true)]
    pub delta: String,
}

#[derive(Debug, Args)]
pub struct DivergenceArgs {
    #[command(flatten)]
    pub pair: PairArgs,

    /// Rényi orders α > 1, comma-separated.
    #[arg(
        long,
        value_name = "A[,A…]",
        default_value = "2",
        allow_hyphen_values = true
    )]
    pub renyi_order: String,
}

#[derive(Debug, Args)]
#[command(group(ArgGroup::new("target").args(["eps", "exp_eps", "delta", "renyi_order", "plot"]).required(true).multiple(true)))]
pub struct ProfileArgs {
    #[command(flatten)]
    pub mechanism: MechanismArg,

    #[command(flatten)]
    pub common: CommonArgs,

    /// Number of users n (≥ 1).
    #[arg(long, value_name = "N", allow_hyphen_values = true)]
    pub n: String,

    /// ε values (exact decimals ≥ 0), comma-separated: report δ_M(ε).
    #[arg(long, value_name = "E[,E…]", allow_hyphen_values = true)]
    pub eps: Option<String>,

    /// e^ε values given directly as rationals ≥ 1, comma-separated.
    #[arg(long, value_name = "C[,C…]", allow_hyphen_values = true)]
    pub exp_eps: Option<String>,

    /// Target δ values, strictly between 0 and 1, comma-separated: report the smallest ε with
    /// δ_M(ε) ≤ δ for each.
    #[arg(long, value_name = "D[,D…]", allow_hyphen_values = true)]
    pub delta: Option<String>,

    /// Rényi orders α > 1, comma-separated: report the Rényi profile, the largest D_α over every
    /// k and both orders (alone or with --eps or --delta).
    #[arg(long, value_name = "A[,A…]", allow_hyphen_values = true)]
    pub renyi_order: Option<String>,

    /// Scan only k in A..B (inclusive): a partial profile, not the mechanism's guarantee.
    #[arg(long, value_name = "A..B", allow_hyphen_values = true)]
    pub k_range: Option<String>,

    /// For a randomizer on more than two inputs: search only slice I of N of the compositions
    /// (numbered from 0), for a job array; `merge` combines the N slices' certificates into the
    /// mechanism-wide profile.
    #[arg(long, value_name = "I/N", allow_hyphen_values = true)]
    pub slice: Option<String>,

    /// Worker threads (default: all cores).
    #[arg(long, value_name = "T")]
    pub threads: Option<String>,

    /// Evaluate every k (no branch and bound); for cross-checks.
    #[arg(long)]
    pub no_prune: bool,

    /// With --k-range: also evaluate the boundary pairs k = 0 and k = n−1 and take the maximum
    /// over them too, so a shard prunes against them (binary mechanisms usually peak there).
    /// For shards that are merged: each is then no longer the maximum over its range alone.
    #[arg(long, requires = "k_range")]
    pub with_ends: bool,

    /// Draw δ_M(ε) (certified band) and the curves of the pairs that attain it to this SVG
    /// file, for ε from 0 to where δ_M falls below 1e-12 (and past every asked ε).  Alone, the
    /// report is δ_M on that grid.
    #[arg(long, value_name = "FILE.svg")]
    pub plot: Option<String>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum BackendArg {
    /// f64 intervals (inari); escalates to MPFR when too wide (see --rel-width).
    Interval,
    /// MPFR intervals at --precision bits (default 128).
    Mpfr,
    /// Exact rationals (GMP); needs rational mechanism entries.
    Exact,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum EngineArg {
    Auto,
    /// The dynamic program over every histogram (the full simplex), for cross-checks.
    General,
    /// Windowed laws on the histograms that carry mass.
    Window,
    Binary,
}

/// The usage lines of the pair commands: a binary-input mechanism's pair, a randomizer's pair on
/// a background, or a limit experiment.
const PAIR_USAGE_DELTA: &str = "shufflecert delta -m SPEC --n N --k K (--eps E[,E…] | --exp-eps C[,C…]) [OPTIONS]
       shufflecert delta -m SPEC --n N --background X=C[,X=C…] --switch X1:X1' (--eps E[,E…] | --exp-eps C[,C…]) [OPTIONS]
       shufflecert delta --experiment EXP (--eps E[,E…] | --exp-eps C[,C…]) [OPTIONS]";
const PAIR_USAGE_EPSILON: &str = "shufflecert epsilon -m SPEC --n N --k K --delta D [OPTIONS]
       shufflecert epsilon -m SPEC --n N --background X=C[,X=C…] --switch X1:X1' --delta D [OPTIONS]
       shufflecert epsilon --experiment EXP --delta D [OPTIONS]";
const PAIR_USAGE_DIVERGENCES: &str =
    "shufflecert divergences -m SPEC --n N --k K [--renyi-order A[,A…]] [OPTIONS]
       shufflecert divergences -m SPEC --n N --background X=C[,X=C…] --switch X1:X1' [OPTIONS]
       shufflecert divergences --experiment EXP [OPTIONS]";
