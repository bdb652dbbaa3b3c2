"""The corpus analyses: each a function from a ``Corpus`` (its DataFrames) to a
DataFrame, lazily evaluated, written with ANSI-safe expressions (explicit casts,
``try_divide`` for every ratio, so an empty denominator gives null, never an
error or a silent infinity).

Targets. Every counterexample and every run is attributed to its *targets*:
each protocol variant (``target_kind = "variant"``) and each SUT bug
(``"bug"``) it ran with; with neither, the campaign target its test id names
when that is a profile's or an implementation's (``campaign[profile:NAME]``,
``campaign[implementation:NAME]``: kinds ``"profile"`` and
``"implementation"``), else the single target ``"correct"`` (kind
``"correct"``). A counterexample with two variants counts once for each.

Counterexamples, not rows. The same counterexample found again (by another
run, worker or campaign: the same ``counterexample_id``, a content hash of its
configuration, SUT bugs, trace and property) is one counterexample: every count
the analyses call a counterexample, member or failure counts distinct ids
(``distinct_counterexamples``), as ``replicheck replay --list`` does; only
``overview``'s ``rows`` counts the rows (the finds). First/last seen and the
times to failure are over every find.
"""

from __future__ import annotations

from typing import Iterable, Optional, Sequence

from store.schema import NAMED_TARGET_TEST_ID

from .corpus import ACTION_FAMILIES, Corpus, key_arg

#: The fixed protocol coverage event names of ``check.coverage`` (mirrored: the
#: module may not be imported here). ``protocol_coverage`` lists them with zero
#: counts when no run reached them; parametrised events ("fetch rejected: …",
#: "AlterPartition rejected: …") appear when reached.
KNOWN_EVENTS: tuple[str, ...] = (
    "follower truncated on a diverging epoch",
    "partition has no leader",
    "ELR became non-empty",
    "LastKnownELR became non-empty",
    "leader elected",
    "reassignment started",
    "reassignment cancelled",
    "reassignment completed",
    "unclean election: balanced",
    "unclean election: proactive",
    "unclean election: unclean_leader_election",
    "True HWM advanced",
    "write acknowledged",
    "write negatively acknowledged",
    "lossy unclean shutdown",
    "non-lossy unclean shutdown",
    "unclean registration (empty broker epoch)",
    "ListOffsets answered unknown (HWM below LESO)",
    "AlterPartition accepted",
    "fetch response with a diverging epoch",
)

NGRAM_SEPARATOR = " → "

#: percentile_approx accuracy for the medians of time_to_failure (rank error <= 1/accuracy).
MEDIAN_ACCURACY = 10_000


def distinct_counterexamples(corpus: Corpus):
    """``corpus.counterexamples`` with one row per ``counterexample_id``: the
    same counterexample found again has the same configuration, trace, property,
    signature and targets, so any of its rows stands for it."""
    return corpus.counterexamples.dropDuplicates(["counterexample_id"])


def _F():
    from pyspark.sql import functions as F
    return F


def targets_col(variants="variants", bugs="sut_bugs", test_id="test_id"):
    """Column: array<struct<target_kind, target>> of a row's targets (the module doc)."""
    F = _F()
    v = F.transform(F.array_distinct(F.coalesce(F.col(variants), F.array().cast("array<string>"))),
                    lambda x: F.struct(F.lit("variant").alias("target_kind"), x.alias("target")))
    b = F.transform(F.array_distinct(F.coalesce(F.col(bugs), F.array().cast("array<string>"))),
                    lambda x: F.struct(F.lit("bug").alias("target_kind"), x.alias("target")))
    both = F.concat(v, b)
    correct = F.array(F.struct(F.lit("correct").alias("target_kind"), F.lit("correct").alias("target")))
    kind = F.regexp_extract(F.col(test_id), NAMED_TARGET_TEST_ID, 1)
    named = F.array(F.struct(kind.alias("target_kind"),
                             F.regexp_extract(F.col(test_id), NAMED_TARGET_TEST_ID, 2).alias("target")))
    return F.when(F.size(both) > 0, both).when(kind != "", named).otherwise(correct)


def target_labels_col(variants="variants", bugs="sut_bugs", test_id="test_id"):
    """Column: array<string> of a row's target names (``["correct"]`` for none)."""
    F = _F()
    return F.transform(targets_col(variants, bugs, test_id), lambda t: t["target"])


def with_targets(df, *keep: str):
    """``df`` with one row per (row, target): ``keep`` columns (all when none
    given) plus ``target_kind`` and ``target``."""
    F = _F()
    cols = list(keep) if keep else [c for c in df.columns]
    return df.select(*cols, F.inline(targets_col()))


# ----------------------------------------------------------------- 1. kill matrix

def kill_matrix(corpus: Corpus):
    """Failures per property and target, long form.

    Columns: ``property``, ``target_kind`` (variant | bug | profile |
    implementation | correct), ``target``,
    ``failures`` (distinct counterexamples, long), ``signatures`` (distinct
    signatures, long). One row per (property, target) that failed; sorted by
    property, target_kind, target.
    """
    F = _F()
    pre = distinct_counterexamples(corpus).groupBy("property", "signature", "variants", "sut_bugs", "test_id") \
        .agg(F.count(F.lit(1)).alias("n"))
    ce = with_targets(pre, "property", "signature", "n")
    return (ce.groupBy("property", "target_kind", "target")
            .agg(F.sum("n").cast("long").alias("failures"), F.countDistinct("signature").alias("signatures"))
            .orderBy("property", "target_kind", "target"))


def target_label(target_kind: str, target: str) -> str:
    """A target's column name in the wide kill matrix: ``variant:NAME``,
    ``bug:NAME``, ``profile:NAME``, ``implementation:NAME`` or ``correct`` (the
    campaign's labels). Qualified because a
    variant and a SUT bug may share a name (UNCLEAN_REGISTRATION_KEEPS_ELR)."""
    return "correct" if target_kind == "correct" else f"{target_kind}:{target}"


def target_labels(pairs: Iterable[tuple[str, str]]) -> list[str]:
    """The ``target_label``s of distinct (target_kind, target) pairs in the kill
    matrix's column order: ``correct`` first, then profiles, implementations,
    variants, bugs, each sorted."""
    order = {"correct": 0, "profile": 1, "implementation": 2, "variant": 3, "bug": 4}
    return [target_label(k, t) for k, t in sorted(set(pairs), key=lambda p: (order.get(p[0], len(order)), p[1]))]



def kill_matrix_wide(corpus: Corpus, targets: Optional[Sequence[str]] = None):
    """The kill matrix as a table: one row per failing property, one column per
    target (``targets``, as ``target_label``s; default every target that failed,
    ``correct`` first, then variants, then bugs, each sorted) holding the failure
    count (0 when none), and ``total`` = distinct counterexamples of the
    property (a counterexample with two targets counts once here)."""
    F = _F()
    long = kill_matrix(corpus).withColumn(
        "label", F.when(F.col("target_kind") == "correct", F.lit("correct"))
        .otherwise(F.concat_ws(":", "target_kind", "target")))
    if targets is None:
        targets = target_labels((r.target_kind, r.target)
                                for r in long.select("target_kind", "target").distinct().collect())
    totals = corpus.counterexamples.groupBy("property").agg(F.countDistinct("counterexample_id").alias("total"))
    if not targets:
        return totals.orderBy("property")
    wide = long.groupBy("property").pivot("label", list(targets)).agg(F.sum("failures"))
    wide = wide.select("property", *[F.coalesce(F.col(f"`{t}`"), F.lit(0).cast("long")).alias(t)
                                     for t in targets])
    return wide.join(totals, "property", "left").orderBy("property")


# ----------------------------------------------------------- 2. signature buckets

def signature_buckets(corpus: Corpus):
    """One row per signature (the dedup key of a failure).

    Columns: ``signature``; ``property`` and ``kind`` (the smallest value among
    the members — a signature includes its property, so there is one);
    ``count`` (members: distinct counterexamples, long); ``first_seen`` /
    ``last_seen`` (min / max ``found_at`` over every find); ``representative``
    (the shortest member's
    ``counterexample_id``: smallest ``step_count``, ties broken by earliest
    ``found_at`` then smallest id); ``representative_step_count``;
    ``targets`` (sorted distinct target names of the members). Sorted by count
    descending, then signature.
    """
    F = _F()
    ce = corpus.counterexamples
    # two phases: per (signature, variants, sut_bugs) first, so the target labels
    # are computed once per combination rather than once per counterexample
    pre = ce.groupBy("signature", "variants", "sut_bugs", "test_id").agg(
        F.min("property").alias("property"),
        F.min("kind").alias("kind"),
        F.min("found_at").alias("first_seen"),
        F.max("found_at").alias("last_seen"),
        F.min(F.struct("step_count", "found_at", "counterexample_id")).alias("rep"))
    # an id found by several tests is in several groups: counted once, over every find
    counts = ce.groupBy("signature").agg(F.countDistinct("counterexample_id").cast("long").alias("count"))
    grouped = pre.groupBy("signature").agg(
        F.min("property").alias("property"),
        F.min("kind").alias("kind"),
        F.min("first_seen").alias("first_seen"),
        F.max("last_seen").alias("last_seen"),
        F.min("rep").alias("rep"),
        F.array_sort(F.array_distinct(F.flatten(F.collect_list(target_labels_col())))).alias("targets")) \
        .join(counts, "signature")
    return grouped.select(
        "signature", "property", "kind", "count", "first_seen", "last_seen",
        F.col("rep.counterexample_id").alias("representative"),
        F.col("rep.step_count").alias("representative_step_count"),
        "targets").orderBy(F.desc("count"), "signature")


# ------------------------------------------------------------------- 3. action lift

def _failing_step_counts(corpus: Corpus):
    """Failing steps (of distinct counterexamples) aggregated per (variants,
    sut_bugs, test_id, family, action, args_json): a small table whatever the corpus size."""
    F = _F()
    return (distinct_counterexamples(corpus).select("variants", "sut_bugs", "test_id", F.explode("steps").alias("s"))
            .groupBy("variants", "sut_bugs", "test_id", F.col("s.family").alias("family"),
                     F.col("s.action").alias("action"),
                     F.col("s.args_json").alias("args_json"))
            .agg(F.count(F.lit(1)).alias("n")))


def _family_of(action_col, observed_family=None):
    F = _F()
    mapping = F.create_map(*[F.lit(x) for kv in sorted(ACTION_FAMILIES.items()) for x in kv])
    fam = F.try_element_at(mapping, action_col)
    if observed_family is not None:
        fam = F.coalesce(observed_family, fam)
    return F.coalesce(fam, F.lit("unknown"))


LIFT_COLUMNS = ("level", "target_kind", "target", "family", "item", "fail_steps", "fail_total", "base_steps",
                "base_total", "fail_share", "base_share", "lift", "failure", "context", "increase", "baseline")


def action_lift(corpus: Corpus, levels: Sequence[str] = ("family", "action", "key_arg")):
    """How over-represented each action family / action / action-with-key-argument
    is in failing traces, per target — statistical debugging's Increase score
    (Liblit et al., "Scalable Statistical Bug Isolation", PLDI 2005) adapted to
    step counts.

    Observations are *steps*. For target t and item a (a family, an action
    class, or a ``key_arg``): ``fail_steps`` F(a), steps doing a in t's
    counterexamples (shrunk failing traces), of ``fail_total``; ``base_steps``
    B(a), steps doing a in the baseline, of ``base_total``. For ``family`` and
    ``action`` rows the baseline is every step t's runs executed
    (``runs.rule_counts`` resp. ``runs.action_counts`` summed over t's runs;
    ``baseline = "runs"``); runs count every executed step, failing examples
    included. ``runs`` holds no per-argument counts, so for ``key_arg`` rows
    the baseline is the failing steps of *every* target (a counterexample with
    k targets counts k times; ``baseline = "all_counterexamples"``): how
    specific the key argument is to t among failures. The scores (lift,
    Failure, Context, Increase) are ``_lift_scores``'.

    Family and action rows include items seen only in the baseline (F = 0) or
    only in failures (B = 0, e.g. a target without runs). An action's family
    comes from ``ACTION_FAMILIES`` (else the step's own, else "unknown").
    Columns: ``LIFT_COLUMNS`` (``family`` is the item's family; for family
    rows, the item itself). Sorted by level (family, action, key_arg),
    target_kind, target, increase descending, item.

    The failing steps are aggregated once per (targets, action, args) before
    anything else, so the cost is one pass over the steps whatever the levels.
    """
    F = _F()
    unknown = set(levels) - {"family", "action", "key_arg"}
    if unknown:
        raise ValueError(f"levels must be among family, action, key_arg; got {sorted(unknown)}")
    fail = with_targets(_failing_step_counts(corpus), "family", "action", "args_json", "n") \
        .withColumn("family", _family_of(F.col("action"), F.col("family")))
    runs = with_targets(corpus.runs, "rule_counts", "action_counts")
    pieces = [p for level, of in (("family", _family_pieces), ("action", _action_pieces),
                                  ("key_arg", _key_arg_pieces)) if level in levels for p in of(fail, runs)]
    cols = ["level", "target_kind", "target", "family", "site", "item", "fail_n", "base_n"]
    u = pieces[0].select(*cols)
    for p in pieces[1:]:
        u = u.unionByName(p.select(*cols))
    g = u.groupBy("level", "target_kind", "target", "family", "site", "item").agg(
        F.sum("fail_n").cast("long").alias("fail_steps"), F.sum("base_n").cast("long").alias("base_steps"))
    level_order = F.when(F.col("level") == "family", 0).when(F.col("level") == "action", 1).otherwise(2)
    return _lift_scores(g).orderBy(level_order, "target_kind", "target", F.desc_nulls_last("increase"), "item")


def _zero():
    return _F().lit(0).cast("long")


def _family_pieces(fail, runs) -> list:
    """Family rows: failing steps per family; every step the runs executed per
    family (their rule counts). The site of a family is any step (``*``)."""
    F = _F()
    return [fail.select(F.lit("family").alias("level"), "target_kind", "target", "family",
                        F.lit("*").alias("site"), F.col("family").alias("item"),
                        F.col("n").alias("fail_n"), _zero().alias("base_n")),
            runs.select(F.lit("family").alias("level"), "target_kind", "target",
                        F.explode("rule_counts").alias("item", "base_n"))
            .select("level", "target_kind", "target", F.col("item").alias("family"),
                    F.lit("*").alias("site"), "item", _zero().alias("fail_n"), "base_n")]


def _action_pieces(fail, runs) -> list:
    """Action rows: failing steps per action; every step the runs executed per
    action. The site of an action is its family."""
    F = _F()
    acts = runs.select("target_kind", "target", F.explode("action_counts").alias("action", "base_n"))
    return [fail.select(F.lit("action").alias("level"), "target_kind", "target", "family",
                        F.col("family").alias("site"), F.col("action").alias("item"),
                        F.col("n").alias("fail_n"), _zero().alias("base_n")),
            acts.select(F.lit("action").alias("level"), "target_kind", "target",
                        _family_of(F.col("action")).alias("family"),
                        _family_of(F.col("action")).alias("site"), F.col("action").alias("item"),
                        _zero().alias("fail_n"), "base_n")]


def _key_arg_pieces(fail, runs) -> list:
    """Key-argument rows: failing steps per action with its key arguments (the
    runs record no arguments: ``_lift_scores`` takes every target's failing
    steps as their baseline). The site of a key argument is its action."""
    F = _F()
    return [fail.select(F.lit("key_arg").alias("level"), "target_kind", "target", "family",
                        F.col("action").alias("site"), key_arg(F.col("action"), F.col("args_json"))
                        .alias("item"), F.col("n").alias("fail_n"), _zero().alias("base_n"))]


def _lift_scores(g):
    """The lift columns of ``g`` (fail_steps, base_steps per level, target,
    family, site and item):

    - ``fail_share`` = F(a)/fail_total, ``base_share`` = B(a)/base_total,
      ``lift`` = fail_share / base_share (> 1: over-represented in failures).
    - ``failure`` = Failure(a) = F(a)/B(a): the chance that a baseline step
      doing a belongs to one of t's failing traces.
    - ``context`` = Context(a) = F(site)/B(site), where the *site* is where the
      predicate "this step did a" is observed: for an action, its family (the
      Hypothesis rule that drew it); for a key_arg, its action; for a family,
      any step (Context = fail_total/base_total = P(fail)).
    - ``increase`` = Failure(a) − Context(a): > 0 iff a is more failure-prone
      than its site (for families, iff lift > 1).

    Ratios with a zero denominator are null (``try_divide``), so is increase
    when either side is. Key-argument rows take every target's failing steps as
    their baseline.
    """
    F = _F()
    from pyspark.sql import Window
    by_target = Window.partitionBy("level", "target_kind", "target")
    by_site = Window.partitionBy("level", "target_kind", "target", "site")
    all_level, all_item = Window.partitionBy("level"), Window.partitionBy("level", "item")
    all_site = Window.partitionBy("level", "site")
    key = F.col("level") == F.lit("key_arg")
    w = g.select(
        "level", "target_kind", "target", "family", "item", "fail_steps",
        F.sum("fail_steps").over(by_target).alias("fail_total"),
        F.when(key, F.sum("fail_steps").over(all_item)).otherwise(F.col("base_steps")).alias("base_steps"),
        F.when(key, F.sum("fail_steps").over(all_level)).otherwise(F.sum("base_steps").over(by_target))
        .alias("base_total"),
        F.sum("fail_steps").over(by_site).alias("site_fail"),
        F.when(key, F.sum("fail_steps").over(all_site)).otherwise(F.sum("base_steps").over(by_site))
        .alias("site_base"))
    fs = F.try_divide(F.col("fail_steps").cast("double"), F.col("fail_total").cast("double"))
    bs = F.try_divide(F.col("base_steps").cast("double"), F.col("base_total").cast("double"))
    failure = F.try_divide(F.col("fail_steps").cast("double"), F.col("base_steps").cast("double"))
    context = F.try_divide(F.col("site_fail").cast("double"), F.col("site_base").cast("double"))
    return w.select(
        "level", "target_kind", "target", "family", "item", "fail_steps", "fail_total", "base_steps", "base_total",
        fs.alias("fail_share"), bs.alias("base_share"), F.try_divide(fs, bs).alias("lift"), failure.alias("failure"),
        context.alias("context"), (failure - context).alias("increase"),
        F.when(key, F.lit("all_counterexamples")).otherwise(F.lit("runs")).alias("baseline"))


# -------------------------------------------------------- 4. shrunk length distribution

def shrunk_length_distribution(corpus: Corpus):
    """Counterexample lengths (``step_count``) per property and target: the
    reduced trace's for rows the campaign reduced (schema version 2), the shrunk
    trace's otherwise.

    Columns: ``property``, ``target_kind``, ``target``, ``count`` (distinct counterexamples, long),
    ``min`` / ``max`` (int step_count), ``p25``, ``median``, ``p75`` (double,
    exact percentiles with linear interpolation), ``mean`` (double). Sorted by
    property, target_kind, target.
    """
    F = _F()
    pre = distinct_counterexamples(corpus).groupBy("property", "variants", "sut_bugs", "test_id", "step_count") \
        .agg(F.count(F.lit(1)).alias("n"))
    ce = with_targets(pre, "property", "step_count", "n")
    sc, n = F.col("step_count"), F.col("n")
    return (ce.groupBy("property", "target_kind", "target").agg(
        F.sum(n).cast("long").alias("count"), F.min(sc).alias("min"),
        F.percentile(sc, F.lit(0.25), n).alias("p25"), F.percentile(sc, F.lit(0.5), n).alias("median"),
        F.percentile(sc, F.lit(0.75), n).alias("p75"), F.max(sc).alias("max"),
        F.try_divide(F.sum(sc.cast("long") * n).cast("double"), F.sum(n).cast("double")).alias("mean"))
        .orderBy("property", "target_kind", "target"))


# ------------------------------------------------------------------ 5. time to failure

def time_to_failure(corpus: Corpus):
    """How fast each target is caught.

    Columns: ``target_kind``, ``target``; from ``runs``: ``runs`` (long),
    ``failed_runs`` (long), ``kill_rate`` (failed_runs / runs, double, null
    without runs); from ``counterexamples``: ``failures`` (distinct counterexamples, long),
    ``signatures`` (distinct, long), ``median_time_to_failure_s`` and
    ``median_examples_to_failure`` (double, the median over every find by
    ``percentile_approx`` with accuracy ``MEDIAN_ACCURACY``: a member of the
    data within 1/accuracy of the true rank — the lower middle value for an
    even count; nulls ignored), ``min_step_count`` (int, the shortest counterexample).
    Targets that only ran (never failed) have failures 0 and null medians;
    targets with failures but no runs have runs 0. Sorted by target_kind, target.
    """
    F = _F()
    ce = with_targets(corpus.counterexamples, "counterexample_id", "signature", "time_to_failure_s",
                      "examples_to_failure", "step_count")
    fails = ce.groupBy("target_kind", "target").agg(
        F.countDistinct("counterexample_id").alias("failures"), F.countDistinct("signature").alias("signatures"),
        F.percentile_approx(F.col("time_to_failure_s"), F.lit(0.5), F.lit(MEDIAN_ACCURACY))
        .alias("median_time_to_failure_s"),
        F.percentile_approx(F.col("examples_to_failure").cast("double"), F.lit(0.5), F.lit(MEDIAN_ACCURACY))
        .alias("median_examples_to_failure"),
        F.min("step_count").alias("min_step_count"))
    runs = with_targets(corpus.runs, "failed").groupBy("target_kind", "target").agg(
        F.count(F.lit(1)).alias("runs"),
        F.sum(F.when(F.col("failed"), F.lit(1)).otherwise(F.lit(0))).cast("long").alias("failed_runs"))
    z = F.lit(0).cast("long")
    j = runs.join(fails, ["target_kind", "target"], "full")
    return j.select(
        "target_kind", "target", F.coalesce("runs", z).alias("runs"), F.coalesce("failed_runs", z).alias("failed_runs"),
        F.try_divide(F.col("failed_runs").cast("double"), F.col("runs").cast("double")).alias("kill_rate"),
        F.coalesce("failures", z).alias("failures"), F.coalesce("signatures", z).alias("signatures"),
        "median_time_to_failure_s", "median_examples_to_failure", "min_step_count",
    ).orderBy("target_kind", "target")


# --------------------------------------------------------------- 6. protocol coverage

def protocol_coverage(corpus: Corpus, expected_events: Iterable[str] = KNOWN_EVENTS):
    """Protocol coverage from ``runs.event_counts``.

    Columns: ``event``; ``runs_reaching`` (runs whose count for it is > 0,
    long); ``total`` (occurrences summed over runs, long); ``share_of_runs``
    (runs_reaching / all runs, double; null when there are no runs);
    ``expected`` (whether the event is in ``expected_events``). Every expected
    event has a row, with zeros when no run reached it. Sorted by share_of_runs
    descending (nulls last), then event.
    """
    F = _F()
    spark = corpus.spark
    ev = corpus.runs.select(F.explode("event_counts").alias("event", "n"))
    agg = ev.groupBy("event").agg(
        F.sum(F.when(F.col("n") > 0, F.lit(1)).otherwise(F.lit(0))).cast("long").alias("runs_reaching"),
        F.sum("n").cast("long").alias("total"))
    expected = spark.createDataFrame([(e,) for e in dict.fromkeys(expected_events)], "event string") \
        .withColumn("expected", F.lit(True))
    n_runs = corpus.runs.agg(F.count(F.lit(1)).alias("n_runs"))
    z = F.lit(0).cast("long")
    j = agg.join(expected, "event", "full").crossJoin(n_runs)
    return j.select(
        "event", F.coalesce("runs_reaching", z).alias("runs_reaching"), F.coalesce("total", z).alias("total"),
        F.try_divide(F.coalesce("runs_reaching", z).cast("double"), F.col("n_runs").cast("double")).alias("share_of_runs"),
        F.coalesce("expected", F.lit(False)).alias("expected"),
    ).orderBy(F.desc_nulls_last("share_of_runs"), "event")


# --------------------------------------------------------------------- 7. n-gram motifs

def ngram_motifs(corpus: Corpus, n: int = 3, min_support: int = 2, min_share: float = 0.0,
                 top_k: Optional[int] = None, key_args: bool = False):
    """Step n-grams common to the members of each signature.

    Each counterexample's steps (in array order, which is step order) become a
    sequence of action names (``key_args=True``: ``key_arg`` values); its
    n-grams are the windows of ``n`` consecutive steps, joined with " → ", each
    counted once per counterexample (distinct ids).

    Columns: ``signature``, ``property``, ``ngram``, ``support`` (members
    containing it, long), ``members`` (members of the signature, long),
    ``share`` (support / members, double). Kept when support >= ``min_support``
    and share >= ``min_share``; with ``top_k``, the ``top_k`` best per signature.
    Sorted by signature, support descending, ngram.
    """
    F = _F()
    from pyspark.sql import Window
    if n < 1:
        raise ValueError(f"n must be >= 1, got {n}")
    ce = distinct_counterexamples(corpus)
    # Known actions are encoded as one-character codes while the n-grams are built
    # and counted (short strings hash and compare fast), and decoded at the end;
    # an action outside ACTION_FAMILIES keeps its own name (never one character).
    # The codes are letters above ASCII, so none is the "|" that joins them, however
    # many actions there are (from "a" on, the 28th action's code was "|").
    codes = {a: chr(0x100 + i) for i, a in enumerate(sorted(ACTION_FAMILIES))}
    encode = F.create_map(*[F.lit(x) for kv in codes.items() for x in kv])
    decode = F.create_map(*[F.lit(x) for kv in codes.items() for x in reversed(kv)])
    if key_args:
        seq = F.transform("steps", lambda s: key_arg(s["action"], s["args_json"]))
    else:
        seq = F.transform("steps", lambda s: F.coalesce(F.try_element_at(encode, s["action"]), s["action"]))
    seqd = ce.select("signature", "property", seq.alias("seq"))
    size = F.size("seq")
    sep = NGRAM_SEPARATOR if key_args else "|"
    grams = F.when(size >= F.lit(n), F.array_distinct(F.transform(
        F.sequence(F.lit(1), size - F.lit(n - 1)),
        lambda i: F.array_join(F.slice("seq", i, F.lit(n)), sep)))
    ).otherwise(F.array().cast("array<string>"))
    members = ce.groupBy("signature").agg(F.count(F.lit(1)).alias("members"), F.min("property").alias("property"))
    support = (seqd.select("signature", F.explode(grams).alias("ngram"))
               .groupBy("signature", "ngram").agg(F.count(F.lit(1)).alias("support"))
               .where(F.col("support") >= F.lit(min_support)))
    if not key_args:
        support = support.withColumn("ngram", F.array_join(F.transform(
            F.split("ngram", "[|]"), lambda c: F.coalesce(F.try_element_at(decode, c), c)), NGRAM_SEPARATOR))
    out = support.join(members, "signature").select(
        "signature", "property", "ngram", "support", "members",
        F.try_divide(F.col("support").cast("double"), F.col("members").cast("double")).alias("share"))
    out = out.where(F.col("share") >= F.lit(float(min_share)))
    if top_k is not None:
        w = Window.partitionBy("signature").orderBy(F.desc("support"), "ngram")
        out = out.withColumn("_rank", F.row_number().over(w)).where(F.col("_rank") <= top_k).drop("_rank")
    return out.orderBy("signature", F.desc("support"), "ngram")


# ------------------------------------------------------------- campaign targets

def campaign_targets(corpus: Corpus, targets: Sequence[str], run_id: Optional[str] = None):
    """One row per label of a fuzz campaign's ``targets`` (``correct``,
    ``variant:NAME``, ``bug:NAME``, ``implementation:NAME``), in their order,
    counting the rows whose ``test_id`` is the target's
    (``store.schema.campaign_test_id``), of campaign ``run_id`` when given.

    Columns: ``target``; ``runs``, ``examples`` (long, 0 when none); ``failed_runs``
    (long); ``counterexamples`` (long); ``ran`` (boolean: at least one run). A
    target that did not run has ``ran`` false."""
    from store.schema import campaign_test_id
    F = _F()
    spark = corpus.spark
    wanted = spark.createDataFrame([(i, label, campaign_test_id(label)) for i, label in enumerate(targets)],
                                   "position long, target string, test_id string")

    def of_run(df):
        return df if run_id is None else df.where(F.col("run_id") == F.lit(run_id))
    runs = of_run(corpus.runs).groupBy("test_id").agg(
        F.count(F.lit(1)).alias("runs"), F.sum("examples").cast("long").alias("examples"),
        F.sum(F.when(F.col("failed"), F.lit(1)).otherwise(F.lit(0))).cast("long").alias("failed_runs"))
    ces = of_run(corpus.counterexamples).groupBy("test_id").agg(
        F.countDistinct("counterexample_id").alias("counterexamples"))
    zero = F.lit(0).cast("long")
    return (wanted.join(runs, "test_id", "left").join(ces, "test_id", "left")
            .select("position", "target", F.coalesce("runs", zero).alias("runs"),
                    F.coalesce("examples", zero).alias("examples"),
                    F.coalesce("failed_runs", zero).alias("failed_runs"),
                    F.coalesce("counterexamples", zero).alias("counterexamples"),
                    (F.coalesce("runs", zero) > 0).alias("ran"))
            .orderBy("position").drop("position"))


# ----------------------------------------------------------------------- summaries

def overview(corpus: Corpus) -> dict:
    """Headline numbers (one small job per table): ``counterexamples``
    (distinct ids), ``rows`` (counterexample rows: every find), signatures,
    properties, targets, first/last found_at, runs, failed runs, examples and
    steps executed."""
    F = _F()
    ce = corpus.counterexamples.agg(
        F.countDistinct("counterexample_id").alias("counterexamples"), F.count(F.lit(1)).alias("rows"),
        F.countDistinct("signature").alias("signatures"),
        F.countDistinct("property").alias("properties"), F.min("found_at").alias("first_found"),
        F.max("found_at").alias("last_found"),
        F.size(F.array_distinct(F.flatten(F.collect_set(target_labels_col())))).alias("targets"),
    ).collect()[0].asDict()
    ce["targets"] = ce["targets"] if ce["counterexamples"] else 0
    r = corpus.runs.agg(
        F.count(F.lit(1)).alias("runs"),
        F.sum(F.when(F.col("failed"), F.lit(1)).otherwise(F.lit(0))).cast("long").alias("failed_runs"),
        F.sum("examples").cast("long").alias("examples"), F.sum("steps").cast("long").alias("steps_executed"),
        F.sum("duration_s").alias("run_time_s")).collect()[0].asDict()
    return {**ce, **r}


def format_table(rows: Sequence[Sequence[object]], header: Sequence[str], max_width: int = 60) -> str:
    """A plain-text table (left-aligned text, right-aligned numbers)."""
    def cell(v: object) -> str:
        if v is None:
            s = ""
        elif isinstance(v, float):
            s = f"{v:.3g}" if abs(v) < 1e-3 and v != 0 else f"{v:,.2f}".rstrip("0").rstrip(".")
        elif isinstance(v, (list, tuple)):
            s = ",".join(str(x) for x in v)
        else:
            s = str(v)
        return s if len(s) <= max_width else s[: max_width - 1] + "…"

    body = [[cell(v) for v in row] for row in rows]
    numeric = [all(isinstance(row[i], (int, float)) or row[i] is None for row in rows) and bool(rows)
               for i in range(len(header))]
    widths = [max([len(h)] + [len(r[i]) for r in body]) for i, h in enumerate(header)]

    def line(cells: Sequence[str]) -> str:
        return "  ".join(c.rjust(w) if num else c.ljust(w) for c, w, num in zip(cells, widths, numeric)).rstrip()

    sep = "  ".join("-" * w for w in widths)
    return "\n".join([line(list(header)), sep] + [line(r) for r in body])


def summary_table(corpus: Corpus, top: int = 20, buckets=None) -> str:
    """The CLI's plain-text summary: headline numbers (counterexamples are
    distinct ids; the rows, every find, are counted apart), then the ``top``
    largest signature buckets (signature, property, members, shortest,
    first/last seen, targets)."""
    o = overview(corpus)
    lines = [f"corpus: {corpus.path}"]
    for note in corpus.notes:
        lines.append(f"note: {note}")
    lines.append(
        f"{o['counterexamples']:,} counterexamples in {o['signatures']:,} signatures over {o['properties']:,} "
        f"properties and {o['targets']:,} targets; {o['runs']:,} runs ({o['failed_runs'] or 0:,} failed), "
        f"{o['examples'] or 0:,} examples, {o['steps_executed'] or 0:,} steps executed; "
        f"{o['rows']:,} counterexample rows (a counterexample found again is one counterexample)")
    if o["counterexamples"]:
        lines.append(f"found between {o['first_found']} and {o['last_found']}")
        b = (buckets if buckets is not None else signature_buckets(corpus)).limit(top).collect()
        lines.append("")
        lines.append(format_table(
            [(r.signature, r.property, r["count"], r.representative_step_count,
              r.first_seen.strftime("%Y-%m-%d %H:%M"), r.last_seen.strftime("%Y-%m-%d %H:%M"), r.targets)
             for r in b],
            ("signature", "property", "members", "shortest", "first seen", "last seen", "targets")))
        if o["signatures"] > top:
            lines.append(f"… and {o['signatures'] - top:,} more signatures")
    return "\n".join(lines)
