"""``evalsim plan``: every number and label against plain-Python references (issue 17).

The sample sizes are bracketed by exact power computed here (Fisher by the double loop of
``tests/naive_fisher.py`` with integer p-values; McNemar by summing binomial terms over the
discordant pairs, the rejection region decided in integers), the normal approximations are
Fleiss' and Connor's formulas (``tests/naive_design.py``), and the tables are read back cell
by cell. Options are given non-default values (alpha 0.1, power 0.9) so that an option that
is dropped on the way to the library shows.
"""

from __future__ import annotations

import math
from statistics import NormalDist

import naive_design
import naive_fisher
import pytest
from cli_run import blocks
from test_cli_lab import run, run_json  # the CLI run helpers


def fisher_power(n: int, p1: float, p2: float, alpha: float) -> float:
    return naive_fisher.power(p1, n, p2, n, alpha=alpha, pvalue=naive_fisher.fisher_p_exact)


mcnemar_power = naive_design.mcnemar_power


def pct(x: float, digits: int = 1) -> str:
    return f"{100 * x:.{digits}f}%"


def test_mcnemar_reference_agrees_with_the_multinomial_enumeration():
    for n, p10, p01, alpha in [(12, 0.05, 0.25, 0.05), (15, 0.3, 0.1, 0.1)]:
        want = naive_design.mcnemar_power_by_enumeration(n, p10, p01, alpha)
        assert mcnemar_power(n, p10, p01, alpha) == pytest.approx(want, rel=1e-9)
        assert naive_design.mcnemar_critical(n, alpha) == max(
            (m for m in range(n // 2 + 1) if naive_design.mcnemar(m, n - m)[0] < alpha), default=-1
        )


# ----------------------------------------------------------------------------- unpaired


def test_unpaired_with_every_option_against_brute_force(capsys):
    argv = ["plan", "--p1", "0.2", "--p2", "0.8", "--alpha", "0.1", "--power", "0.9"]
    argv += ["--minutes-per-trial", "4", "--n", "9"]
    out = run_json(capsys, *argv)
    n, first = out["n_per_arm_exact"], out["n_per_arm_exact_first"]
    # Exact Fisher power at alpha 0.1 is saw-toothed here: it reaches 90% at `first`, dips,
    # and stays >= 90% from n for the 20 n after it (the definition of n).
    assert fisher_power(first, 0.2, 0.8, 0.1) >= 0.9 > fisher_power(first - 1, 0.2, 0.8, 0.1)
    assert any(fisher_power(m, 0.2, 0.8, 0.1) < 0.9 for m in range(first + 1, n))
    assert fisher_power(n - 1, 0.2, 0.8, 0.1) < 0.9
    assert all(fisher_power(m, 0.2, 0.8, 0.1) >= 0.9 for m in range(n, n + 3))
    n_normal = math.ceil(naive_design.n_per_arm_fleiss(0.2, 0.8, alpha=0.1, power=0.9))
    assert out["n_per_arm_normal"] == n_normal
    power_9 = fisher_power(9, 0.2, 0.8, 0.1)
    assert out["power_at_n"] == pytest.approx(power_9, rel=1e-9)
    mde = out["mde"]  # rates centred on (0.2 + 0.8) / 2, power 0.9, alpha 0.1
    assert fisher_power(9, 0.5 - mde / 2, 0.5 + mde / 2, 0.1) >= 0.9
    assert fisher_power(9, 0.5 - (mde - 1e-3) / 2, 0.5 + (mde - 1e-3) / 2, 0.1) < 0.9
    assert out["hours"] == pytest.approx(2 * n * 4 / 60)
    assert {k: out[k] for k in ("p1", "p2", "alpha", "power", "paired", "discordance")} == {
        "p1": 0.2, "p2": 0.8, "alpha": 0.1, "power": 0.9, "paired": False, "discordance": None
    }  # fmt: skip
    assert (out["minutes_per_trial"], out["n"]) == (4.0, 9)
    assert type(out["minutes_per_trial"]) is float and type(out["n"]) is int

    rc, text, err = run(capsys, *argv)
    assert rc == 0 and err == ""
    lines = text.splitlines()
    assert lines[0] == "Detect 20% vs 80% (unpaired) with 90% power, two-sided alpha = 0.1"
    tables = blocks(text, header=True)
    assert tables["Sample size (trials per arm)"] == [
        ["method", "n per arm", "total trials", "bench hours"],
        ["exact Fisher (power stays >= target up to n + 20)", str(n), str(2 * n),
         f"{2 * n * 4 / 60:.1f}"],
        ["normal approx. (Fleiss, no c.c.)", str(n_normal), str(2 * n_normal),
         f"{2 * n_normal * 4 / 60:.1f}"],
    ]  # fmt: skip
    assert "bench hours at 4 min per trial, both arms" in lines
    assert tables["At n = 9 per arm (Fisher's exact)"] == [
        ["quantity", "value"],
        ["power to detect 20% vs 80%", pct(power_9)],
        ["MDE at 90% power (rates centred on 0.50)", f"{100 * mde:.1f} pts"],
    ]
    assert " ".join(text.split()).endswith(
        f"note: exact Fisher power is saw-toothed in n: it first reaches 90% at n = {first} "
        f"per arm but dips below again before n = {n}"
    )


@pytest.mark.parametrize("test", ["boschloo", "barnard"])
def test_unconditional_test_power_mde_and_note_are_its_own(capsys, test):
    # With --test, the power and MDE at --n and the saw-tooth note are that test's, not
    # Fisher's (they were Fisher's, silently).
    from evalsim.stats.names import TWO_SAMPLE_TESTS
    from evalsim.stats.two_sample.unconditional_power import exact_power, n_for_power

    # alpha 0.1, not the default, so that a dropped alpha shows
    argv = ["plan", "--p1", "0.3", "--p2", "0.7", "--n", "20", "--test", test, "--alpha", "0.1"]
    out = run_json(capsys, *argv)
    assert out["test"] == test
    power_20 = exact_power(test, 0.3, 20, 0.7, 20, alpha=0.1)
    assert out["power_at_n"] == pytest.approx(power_20, rel=1e-12)
    assert out["power_at_n"] != pytest.approx(fisher_power(20, 0.3, 0.7, 0.1), rel=1e-6)
    mde = out["mde"]  # rates centred on 0.5, power 0.8

    def power_at(d):
        return exact_power(test, 0.5 - d / 2, 20, 0.5 + d / 2, 20, alpha=0.1)

    assert power_at(mde) >= 0.8 > power_at(mde - 1e-3)
    res = n_for_power(test, 0.3, 0.7, power=0.8, alpha=0.1)
    assert (out["n_per_arm_exact"], out["n_per_arm_exact_first"]) == (res.n, res.n_first)
    rc, text, err = run(capsys, *argv)
    label = TWO_SAMPLE_TESTS[test].label
    assert rc == 0 and err == "" and f"At n = 20 per arm ({label})" in text
    assert "Fisher" not in text


def test_unpaired_defaults_and_no_optional_output(capsys):
    out = run_json(capsys, "plan", "--p1", "0.3", "--p2", "0.6")
    assert (out["alpha"], out["power"]) == (0.05, 0.8)
    assert out["n_per_arm_normal"] == math.ceil(naive_design.n_per_arm_fleiss(0.3, 0.6))
    assert out["n_per_arm_exact"] == out["n_per_arm_exact_first"]
    for key in ("hours", "minutes_per_trial", "n", "mde", "power_at_n", "discordance"):
        assert out[key] is None, key
    rc, text, _ = run(capsys, "plan", "--p1", "0.3", "--p2", "0.6")
    assert text.startswith("Detect 30% vs 60% (unpaired) with 80% power, two-sided alpha = 0.05")
    rows = blocks(text, header=True)["Sample size (trials per arm)"]
    assert [r[3] for r in rows[1:]] == ["n/a", "n/a"]
    assert text.splitlines()[-1] == "add --minutes-per-trial M for the bench hours"
    assert "At n =" not in text and "note:" not in text


def test_unpaired_mde_out_of_reach_is_na(capsys):
    # Two trials per arm: no table rejects at alpha 0.05 (0/2 vs 2/2 has p = 1/3).
    argv = ["plan", "--p1", "0.4", "--p2", "0.6", "--n", "2"]
    out = run_json(capsys, *argv)
    assert out["mde"] is None and out["power_at_n"] == 0.0
    rc, text, _ = run(capsys, *argv)
    assert blocks(text, header=True)["At n = 2 per arm (Fisher's exact)"][1:] == [
        ["power to detect 40% vs 60%", "0.0%"],
        ["MDE at 80% power (rates centred on 0.50)", "n/a"],
    ]


# ----------------------------------------------------------------------------- paired


def test_paired_with_every_option_against_enumeration(capsys):
    argv = ["plan", "--p1", "0.5", "--p2", "0.7", "--paired", "--discordance", "0.3"]
    argv += ["--alpha", "0.1", "--power", "0.9", "--n", "40", "--minutes-per-trial", "2"]
    out = run_json(capsys, *argv)
    p10, p01 = (0.3 + (0.5 - 0.7)) / 2, (0.3 - (0.5 - 0.7)) / 2  # A only, B only
    connor = naive_design.connor_n(p10, p01, alpha=0.1, power=0.9)
    assert out["n_per_arm_normal"] == math.ceil(connor)
    # The first n, scanning up from 0.8 x Connor's n, whose exact power reaches 90%.
    n, start = out["n_per_arm_exact"], int(0.8 * math.ceil(connor))
    assert out["n_per_arm_exact_first"] == n
    assert mcnemar_power(n, p10, p01, 0.1) >= 0.9
    assert all(mcnemar_power(m, p10, p01, 0.1) < 0.9 for m in range(start, n))
    power_40 = mcnemar_power(40, p10, p01, 0.1)
    assert out["power_at_n"] == pytest.approx(power_40, rel=1e-9)
    d = out["mde"]  # at the fixed discordance 0.3: power reaches 90% at d, not at d - 0.001
    assert mcnemar_power(40, (0.3 + d) / 2, (0.3 - d) / 2, 0.1) >= 0.9
    assert mcnemar_power(40, (0.3 + d - 1e-3) / 2, (0.3 - d + 1e-3) / 2, 0.1) < 0.9
    assert out["hours"] == pytest.approx(2 * n * 2 / 60)
    assert (out["paired"], out["discordance"], out["n"]) == (True, 0.3, 40)
    assert out["test"] == "mcnemar"

    rc, text, err = run(capsys, *argv)
    assert rc == 0 and err == ""
    assert text.splitlines()[0] == (
        "Detect 50% vs 70% (paired, discordance 0.3) with 90% power, two-sided alpha = 0.1"
    )
    tables = blocks(text, header=True)
    normal = math.ceil(connor)
    assert tables["Sample size (pairs: each condition run by both policies)"] == [
        ["method", "n per arm", "total trials", "bench hours"],
        ["exact McNemar (first n reaching target)", str(n), str(2 * n), f"{4 * n / 60:.1f}"],
        ["Connor (1987) normal approx.", str(normal), str(2 * normal), f"{4 * normal / 60:.1f}"],
    ]
    assert tables["At n = 40 per arm (exact McNemar)"] == [
        ["quantity", "value"],
        ["power to detect 50% vs 70%", pct(power_40)],
        ["MDE at 90% power (discordance 0.3)", f"{100 * d:.1f} pts"],
    ]
    assert "note:" not in text


def test_paired_scan_result_is_the_first_from_the_start(capsys):
    argv = ["plan", "--p1", "0.5", "--p2", "0.7", "--paired", "--discordance", "0.25"]
    out = run_json(capsys, *argv)
    p10, p01 = (0.25 - 0.2) / 2, (0.25 + 0.2) / 2
    normal = math.ceil(naive_design.connor_n(p10, p01))
    start = int(0.8 * normal)
    n = next(m for m in range(start, 10 * normal) if mcnemar_power(m, p10, p01, 0.05) >= 0.8)
    assert (n - start) % 2 == 1  # an odd number of steps up: a scan by two would miss n
    assert (out["n_per_arm_exact"], out["n_per_arm_normal"]) == (n, normal)
    assert (out["alpha"], out["power"], out["hours"], out["mde"]) == (0.05, 0.8, None, None)


def test_paired_above_the_scan_limit_gives_the_normal_n_only(capsys):
    argv = ["plan", "--p1", "0.5", "--p2", "0.52", "--paired", "--discordance", "0.3"]
    argv += ["--minutes-per-trial", "3"]
    out = run_json(capsys, *argv)
    p10, p01 = (0.3 - 0.02) / 2, (0.3 + 0.02) / 2
    normal = math.ceil(naive_design.connor_n(p10, p01))
    assert normal > 2000  # above the exact scan's limit (PAIRED_SCAN_MAX_N)
    assert out["n_per_arm_normal"] == normal
    assert out["n_per_arm_exact"] is None and out["n_per_arm_exact_first"] is None
    assert out["hours"] == pytest.approx(2 * normal * 3 / 60)  # hours of the normal n
    rc, text, _ = run(capsys, *argv)
    rows = blocks(text, header=True)["Sample size (pairs: each condition run by both policies)"]
    assert rows[1] == ["exact McNemar (first n reaching target)", "n/a", "n/a", "n/a"]
    assert rows[2] == ["Connor (1987) normal approx.", str(normal), str(2 * normal),
                       f"{2 * normal * 3 / 60:.1f}"]  # fmt: skip
    assert " ".join(text.split()).endswith(
        "note: exact McNemar n not searched above 2000 pairs (slow); the normal approximation "
        "is close at that size"
    )


def test_paired_discordance_at_its_bounds(capsys):
    # Upper bound min(p1 + p2, 2 - p1 - p2) = 0.75 is allowed (exact in binary).
    out = run_json(capsys, "plan", "--p1", "0.25", "--p2", "0.5", "--paired", "--discordance",
                   "0.75", "--n", "30")  # fmt: skip
    assert out["power_at_n"] == pytest.approx(mcnemar_power(30, 0.25, 0.5, 0.05), rel=1e-9)


@pytest.mark.parametrize(
    "p1,p2,disc,interval",
    [
        ("0.25", "0.75", "0.5", "(0.5, 1]"),  # |p1 - p2| itself: nobody's discordance
        ("0.8", "0.7", "0.6", "(0.1, 0.5]"),  # above 2 - p1 - p2
        ("0.7", "0.8", "0.6", "(0.1, 0.5]"),
        ("0.2", "0.3", "0.6", "(0.1, 0.5]"),  # above p1 + p2
    ],
)
def test_paired_discordance_outside_its_bounds(capsys, p1, p2, disc, interval):
    rc, out, err = run(capsys, "plan", "--p1", p1, "--p2", p2, "--paired", "--discordance", disc)
    assert (rc, out) == (2, "")
    assert err == (
        f"evalsim plan: error: --discordance must be in {interval} for p1 = {p1}, p2 = {p2} "
        f"(the share of pairs where exactly one succeeds), got {disc}\n"
    )


@pytest.mark.parametrize(
    "extra,message",
    [
        (["--p1", "0.5", "--p2", "0.5"], "--p1 and --p2 must differ (both 0.5): no gap to detect"),
        (["--p1", "0.5", "--p2", "0.7", "--paired"],
         "--paired needs --discordance D (share of conditions where exactly one policy "
         "succeeds)"),
        (["--p1", "0.5", "--p2", "0.7", "--discordance", "0.3"],
         "--discordance applies only with --paired"),
        (["--p1", "0.5", "--p2", "0.7", "--paired", "--discordance", "0.3", "--test", "barnard"],
         "--test barnard applies to unpaired designs; a paired design is planned for the exact "
         "McNemar test"),
        (["--p1", "0", "--p2", "0.7"], "--p1 must be strictly between 0 and 1 for planning, got 0"),
        (["--p1", "0.5", "--p2", "1"], "--p2 must be strictly between 0 and 1 for planning, got 1"),
        (["--p2", "0.7"], "the following arguments are required: --p1 (see evalsim plan --help)"),
        (["--p1", "0.7"], "the following arguments are required: --p2 (see evalsim plan --help)"),
    ],
)  # fmt: skip
def test_bad_input_messages(capsys, extra, message):
    rc, out, err = run(capsys, "plan", *extra)
    assert (rc, out, err) == (2, "", f"evalsim plan: error: {message}\n")


def test_above_the_exact_limit_the_normal_approximation_is_used_and_labelled(capsys, monkeypatch):
    # Above FISHER_MDE_EXACT_MAX_N per arm (100,000) plan answers from the two-proportion z
    # test and says so; the limit is lowered here so that both sides of it run in a second.
    from evalsim.answers import plan as plan_module

    monkeypatch.setattr(plan_module, "FISHER_MDE_EXACT_MAX_N", 40)
    p1, p2, alpha, power = 0.55, 0.75, 0.1, 0.9
    argv = ["plan", "--p1", "0.55", "--p2", "0.75", "--alpha", "0.1", "--power", "0.9"]
    out = run_json(capsys, *argv, "--n", "41")
    z = NormalDist()
    za, zb = z.inv_cdf(1 - alpha / 2), z.inv_cdf(power)
    se = math.sqrt((p1 * (1 - p1) + p2 * (1 - p2)) / 41)
    want_power = z.cdf(0.2 / se - za) + z.cdf(-0.2 / se - za)
    want_mde = (za + zb) * math.sqrt(2 * 0.65 * 0.35 / 41)
    assert out["at_n_method"] == "normal approximation"
    assert out["power_at_n"] == pytest.approx(want_power, rel=1e-12)
    assert out["mde"] == pytest.approx(want_mde, rel=1e-12)
    rc, text, _ = run(capsys, *argv, "--n", "41")
    assert rc == 0
    title = "At n = 41 per arm (normal approximation: n above 40 per arm)"
    assert blocks(text, header=True)[title][1:] == [
        ["power to detect 55% vs 75%", f"{100 * want_power:.1f}%"],
        ["MDE at 90% power (rates centred on 0.65)", f"{100 * want_mde:.1f} pts"],
    ]
    # at the limit itself: exact Fisher, labelled exact
    at = run_json(capsys, *argv, "--n", "40")
    assert at["at_n_method"] == "exact"
    assert at["power_at_n"] == pytest.approx(fisher_power(40, p1, p2, alpha), rel=1e-9)
    # without --n the key is there and empty
    none = run_json(capsys, *argv)
    assert "at_n_method" in none and none["at_n_method"] is None
