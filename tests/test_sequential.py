"""Sequential designs: the exact DPs against brute-force enumeration, certification, validity.

References are computed here in plain Python (enumeration of every outcome sequence) or by
SciPy; never from the product's own intermediate values.
"""

from __future__ import annotations

import itertools
import math
import subprocess
import sys

import numpy as np
import pytest
from scipy.stats import binom, binomtest, fisher_exact, norm

from evalsim.stats import boundaries
from evalsim.stats.boundaries import BOUNDARY_FAMILIES, SPENDING_FAMILIES
from evalsim.stats.sequential import (
    UNPAIRED_BUILDERS,
    certify_type1,
    operating_characteristics,
    spending,
    type1_curve,
    unpaired_design,
    unpaired_family_design,
    unpaired_shape_design,
)
from evalsim.stats.sequential import _kernels as K
from evalsim.stats.sequential.io import replay_paired, replay_unpaired
from evalsim.stats.sequential.optimise import fixed_n_power, optimise_design
from evalsim.stats.sequential.paired import paired_design

# ------------------------------------------------------------------ plain-Python references


def naive_z(ka, kb, m):
    s = ka + kb
    if s in (0, 2 * m):
        return 0.0
    pbar = s / (2 * m)
    return (kb / m - ka / m) / math.sqrt(pbar * (1 - pbar) * 2 / m)


def naive_unpaired_verdict(design, seq_a, seq_b):
    """Walk one pair of outcome sequences through the design's looks (rows read directly)."""
    r = design.rows
    sizes = design.look_sizes.tolist()
    for j, m in enumerate(sizes):
        ka, kb = sum(seq_a[:m]), sum(seq_b[:m])
        if kb >= r["upper"][j][ka]:
            return j, 1
        if kb <= r["lower"][j][ka]:
            return j, 2
        if r["fut_lo"][j][ka] <= kb <= r["fut_hi"][j][ka]:
            return j, 3
    return len(sizes) - 1, 0


def brute_unpaired(design, p_a, p_b):
    n = design.n_max
    out = np.zeros((len(design.look_sizes), 4))
    for seq_a in itertools.product((0, 1), repeat=n):
        pa = p_a ** sum(seq_a) * (1 - p_a) ** (n - sum(seq_a))
        for seq_b in itertools.product((0, 1), repeat=n):
            pb = p_b ** sum(seq_b) * (1 - p_b) ** (n - sum(seq_b))
            j, v = naive_unpaired_verdict(design, seq_a, seq_b)
            out[j, v] += pa * pb
    return out


def naive_paired_verdict(design, pairs):
    r = design.rows
    d = w = 0
    fut_from = design.futility["from"] if design.futility else design.n_max + 1
    for t, (a, b) in enumerate(pairs, start=1):
        if a != b:
            d += 1
            w += b
        if t == design.n_max or d == design.d_max:
            if w >= r["final_upper"][d]:
                return t, 1
            if w <= r["final_lower"][d]:
                return t, 2
            return t, 0
        if w >= r["upper"][d]:
            return t, 1
        if w <= r["lower"][d]:
            return t, 2
        if t >= fut_from and r["fut_lo"][d] <= w <= r["fut_hi"][d]:
            return t, 3
    raise AssertionError("a paired design always stops by n_max")


def brute_paired(design, p10, p01):
    out = np.zeros((design.n_max + 1, 4))
    probs = {(1, 0): p10, (0, 1): p01, (1, 1): 1 - p10 - p01}
    for pairs in itertools.product(list(probs), repeat=design.n_max):
        pr = math.prod(probs[x] for x in pairs)
        t, v = naive_paired_verdict(design, pairs)
        out[t, v] += pr
    return out[1:]


# ----------------------------------------------------------------------------------- tests


def test_pooled_z_matches_reference_and_is_monotone_in_kb():
    for m in (1, 3, 7, 40):
        for ka in range(m + 1):
            zs = [K.pooled_z(ka, kb, m) for kb in range(m + 1)]
            assert zs == pytest.approx([naive_z(ka, kb, m) for kb in range(m + 1)], abs=1e-12)
            assert all(b >= a - 1e-12 for a, b in zip(zs, zs[1:], strict=False))


@pytest.mark.parametrize("alternative", ["one-sided", "two-sided"])
@pytest.mark.parametrize("futility", [None, {"z": 0.0, "from": 3}])
def test_unpaired_dp_equals_enumeration(alternative, futility):
    d = unpaired_design(0.2, 5, alternative, "pocock", looks="every", futility=futility)
    for p_a, p_b in ((0.3, 0.3), (0.2, 0.7), (0.6, 0.35)):
        exact = brute_unpaired(d, p_a, p_b)
        oc = operating_characteristics(d, p_a, p_b)
        assert oc.stop_prob == pytest.approx(exact.sum(axis=1), abs=1e-13)
        assert oc.verdicts["B better"] == pytest.approx(exact[:, 1].sum(), abs=1e-13)
        assert oc.verdicts["A better"] == pytest.approx(exact[:, 2].sum(), abs=1e-13)
        assert oc.verdicts["futility"] == pytest.approx(exact[:, 3].sum(), abs=1e-13)
        assert oc.ess == pytest.approx(float(exact.sum(axis=1) @ d.look_sizes), abs=1e-12)


def test_unpaired_rejects_somewhere_and_type1_curve_is_binomial_mixture():
    d = unpaired_design(0.2, 5, "two-sided", "obrien-fleming", looks=[2, 4, 5])
    assert d.rows["upper"][-1].min() <= 5  # the design can say "B better"
    # type-I by enumeration at several p, against the Bernstein form evaluated with SciPy
    beta, _ = K.unpaired_null_bernstein(d.look_sizes, d.rows["upper"], d.rows["lower"], True, True)
    for p in (0.05, 0.3, 0.5, 0.81):
        exact = brute_unpaired(d, p, p)[:, 1:3].sum()
        assert float(type1_curve(d, p)[0]) == pytest.approx(exact, abs=1e-13)
        assert float(beta @ binom.pmf(np.arange(11), 10, p)) == pytest.approx(exact, abs=1e-13)


def test_bernstein_certify_bounds_a_polynomial_from_above():
    rng = np.random.default_rng(7)
    for n in (5, 30, 200):
        beta = rng.random(n + 1) ** 3
        grid = np.linspace(0, 1, 20001)
        dense = (beta[None, :] * binom.pmf(np.arange(n + 1)[None, :], n, grid[:, None])).sum(1)
        up, att, p_at, n_int, _ = K.bernstein_certify(
            beta, 0.0, 1.0, np.array([0.0, 0.0]), 1e-9, 60
        )
        assert up >= dense.max() - 1e-12
        assert up - dense.max() <= 1e-8
        assert att == pytest.approx(float(beta @ binom.pmf(np.arange(n + 1), n, p_at)), abs=1e-12)


@pytest.mark.parametrize("family", ["pocock", "obrien-fleming"])
def test_type1_at_most_alpha_on_dense_grid_and_at_certified_worst(family):
    d = unpaired_design(0.05, 60, "one-sided", family)
    cert = d.certificate
    assert cert.upper <= 0.05
    grid = np.linspace(0.0, 1.0, 1001)
    dense = np.array([operating_characteristics(d, p, p).verdicts["B better"] for p in grid])
    assert dense.max() <= cert.upper
    assert dense.max() <= 0.05
    at = operating_characteristics(d, cert.p_at, cert.p_at).verdicts["B better"]
    assert at == pytest.approx(cert.attained, abs=1e-12)
    assert at <= 0.05


def test_alpha_spent_by_each_look_within_spending_function():
    d = unpaired_design(0.05, 40, "two-sided", "pocock", looks=8)
    grid = np.linspace(0.01, 0.99, 99)
    beta_by = K.unpaired_null_bernstein(d.look_sizes, d.rows["upper"], d.rows["lower"], True, True)[
        1
    ]
    budget = spending(d.look_sizes / 40, 0.05, "pocock")
    for j, m in enumerate(d.look_sizes):
        s = np.arange(2 * m + 1)
        cond = beta_by[j, : 2 * m + 1] / binom.pmf(s, 2 * m, 0.5)
        spent = (cond[None, :] * binom.pmf(s[None, :], 2 * m, grid[:, None])).sum(1)
        assert spent.max() <= budget[j] + 1e-9


def test_spending_functions_match_formulas():
    tau = np.array([0.1, 0.25, 0.5, 1.0])
    assert spending(tau, 0.05, "pocock") == pytest.approx(0.05 * np.log(1 + (np.e - 1) * tau))
    obf = 2 - 2 * norm.cdf(norm.ppf(0.975) / np.sqrt(tau))
    assert spending(tau, 0.05, "obrien-fleming") == pytest.approx(obf)
    assert spending(tau, 0.05, "power", rho=2) == pytest.approx(0.05 * tau**2)


def test_shape_design_certified_and_futility_is_non_binding():
    d = unpaired_shape_design(0.05, 50, b=0.15)
    f = unpaired_shape_design(0.05, 50, b=0.15, futility={"z": 0.0, "from": 20})
    assert d.certificate.upper <= 0.05
    assert f.certificate.upper == pytest.approx(d.certificate.upper)
    null_d = operating_characteristics(d, 0.5, 0.5)
    null_f = operating_characteristics(f, 0.5, 0.5)
    assert null_f.ess < null_d.ess
    assert null_f.verdicts["B better"] <= null_d.verdicts["B better"] + 1e-15


@pytest.mark.parametrize("alternative", ["one-sided", "two-sided"])
def test_paired_dp_equals_enumeration(alternative):
    d = paired_design(0.25, 6, alternative, "pocock", d_max=5, futility={"z": 0.0, "from": 3})
    for p10, p01 in ((0.2, 0.2), (0.1, 0.5), (0.45, 0.15)):
        exact = brute_paired(d, p10, p01)
        oc = operating_characteristics(d, p10=p10, p01=p01)
        assert oc.stop_prob == pytest.approx(exact.sum(axis=1), abs=1e-13)
        for v, name in (
            (1, "B better"),
            (2, "A better"),
            (3, "futility"),
            (0, "no difference shown"),
        ):
            assert oc.verdicts[name] == pytest.approx(exact[:, v].sum(), abs=1e-13)


def test_paired_certificate_bounds_every_nuisance():
    d = paired_design(0.05, 40, "two-sided", "obrien-fleming")
    for disc in (0.02, 0.1, 0.4, 0.8, 1.0):
        oc = operating_characteristics(d, p10=disc / 2, p01=disc / 2)
        assert oc.rejection_prob <= d.certificate.upper
    # exact: the worst case is attained when every pair is discordant and d reaches its max
    assert d.certificate.upper <= 0.05


def test_paired_validity_with_drifting_rate_simulated():
    """Both policies share a success rate that drifts over conditions; pairs are correlated."""
    d = paired_design(0.05, 100, "one-sided", "pocock")
    rng = np.random.default_rng(20261130)
    e, n = 40_000, 100
    rate = 0.2 + 0.75 * np.abs(np.sin(np.linspace(0, 3 * np.pi, n)))  # drifts 0.2 .. 0.95
    shared = rng.random((e, n)) < 0.5  # half the conditions decide both outcomes together
    u = rng.random((e, n))
    a = np.where(shared, u < rate, rng.random((e, n)) < rate)
    b = np.where(shared, u < rate, rng.random((e, n)) < rate)
    _, verdict = replay_paired(d, a, b)
    rate_hat = float((verdict == 1).mean())
    se = math.sqrt(0.05 * 0.95 / e)
    assert rate_hat <= 0.05 + 3 * se
    assert rate_hat <= d.certificate.upper + 3 * se


def test_replay_agrees_with_exact_oc_by_simulation():
    d = unpaired_shape_design(0.05, 40, b=0.15, futility={"z": 0.0, "from": 20})
    rng = np.random.default_rng(3)
    e = 20_000
    a = rng.random((e, 40)) < 0.5
    b = rng.random((e, 40)) < 0.75
    look, verdict = replay_unpaired(d, a, b)
    oc = operating_characteristics(d, 0.5, 0.75)
    for v, name in ((1, "B better"), (3, "futility"), (0, "no difference shown")):
        p = oc.verdicts[name]
        se = math.sqrt(max(p * (1 - p), 1e-6) / e)
        assert abs((verdict == v).mean() - p) <= 4 * se
    ess_mc = d.look_sizes[look].mean()
    sd = math.sqrt(float(oc.stop_prob @ (d.look_sizes - oc.ess) ** 2))
    assert abs(ess_mc - oc.ess) <= 4 * sd / math.sqrt(e)


def test_fixed_n_power_against_scipy():
    n, p_a, p_b, alpha = 7, 0.3, 0.7, 0.1
    k = np.arange(n + 1)
    ref = 0.0
    for ka in k:
        for kb in k:
            p = fisher_exact([[kb, n - kb], [ka, n - ka]], alternative="greater").pvalue
            if p < alpha:
                ref += binom.pmf(ka, n, p_a) * binom.pmf(kb, n, p_b)
    assert fixed_n_power(n, p_a, p_b, alpha) == pytest.approx(ref, abs=1e-12)
    p10, p01 = p_a * (1 - p_b), (1 - p_a) * p_b
    ref = 0.0
    for counts in itertools.product(range(n + 1), repeat=2):
        b_, c_ = counts
        if b_ + c_ > n or b_ + c_ == 0:
            continue
        pr = math.factorial(n) / (
            math.factorial(b_) * math.factorial(c_) * math.factorial(n - b_ - c_)
        )
        pr *= p10**b_ * p01**c_ * (1 - p10 - p01) ** (n - b_ - c_)
        if binomtest(c_, b_ + c_, 0.5, alternative="greater").pvalue < alpha:
            ref += pr
    assert fixed_n_power(n, p_a, p_b, alpha, kind="paired") == pytest.approx(ref, abs=1e-12)


def test_optimiser_respects_floors_and_certification():
    alts = [(0.5, 0.8), (0.6, 0.9)]
    res = optimise_design(alts, 0.05, 40, min_power=[0.6, 0.6], b_grid=(0.0, 0.2, 0.5), refine=0.1)
    assert res.design.certificate.upper <= 0.05
    feas = res.candidates[res.candidates.feasible]
    assert res.design.boundary["b"] == pytest.approx(feas.loc[feas.mean_ess.idxmin(), "b"])
    for i, (pa, pb) in enumerate(alts):
        assert operating_characteristics(res.design, pa, pb).power >= 0.6
        assert feas[f"power_{i}"].min() >= 0.6


def test_mc_kernel_type1_within_3se():
    d = unpaired_design(0.05, 30, "one-sided", "pocock")
    r = d.rows
    look, verdict = K.unpaired_mc(
        0.4,
        0.4,
        50_000,
        np.random.default_rng(11),
        d.look_sizes,
        r["upper"],
        r["lower"],
        r["fut_lo"],
        r["fut_hi"],
    )
    exact = operating_characteristics(d, 0.4, 0.4).verdicts["B better"]
    se = math.sqrt(exact * (1 - exact) / 50_000)
    assert abs((verdict == 1).mean() - exact) <= 3 * se


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"alpha": 1.5}, "alpha"),
        ({"n_max": 0}, "n_max"),
        ({"n_max": 600}, "at most 500"),
        ({"alternative": "greater"}, "alternative"),
        ({"spending_family": "haybittle"}, "spending"),
        ({"spending_family": "power"}, "rho"),
        ({"futility": {"z": 0.0}}, "futility"),
    ],
)
def test_bad_arguments_name_the_key(kwargs, match):
    with pytest.raises(ValueError, match=match):
        unpaired_design(**kwargs)


def test_certify_is_idempotent():
    d = unpaired_design(0.1, 12, "two-sided", "pocock", looks=4)
    assert certify_type1(d).upper == pytest.approx(d.certificate.upper, abs=1e-15)


def test_replay_paired_equals_plain_walk():
    d = paired_design(0.1, 40, "two-sided", "pocock", d_max=25, futility={"z": 0.0, "from": 15})
    rng = np.random.default_rng(2)
    u = rng.random((400, 40))
    a = (u < 0.2) | ((u >= 0.45) & (u < 0.7))
    b = ((u >= 0.2) & (u < 0.45)) | ((u >= 0.45) & (u < 0.7))
    stop, verdict = replay_paired(d, a, b)
    for e in range(400):
        pairs = list(zip(a[e].astype(int), b[e].astype(int), strict=True))
        assert (stop[e], verdict[e]) == naive_paired_verdict(d, pairs)


def test_replay_unpaired_equals_plain_walk():
    d = unpaired_design(
        0.1, 30, "two-sided", "pocock", looks=[5, 12, 20, 30], futility={"z": 0.2, "from": 12}
    )
    rng = np.random.default_rng(3)
    a = rng.random((400, 30)) < 0.45
    b = rng.random((400, 30)) < 0.6
    look, verdict = replay_unpaired(d, a, b)
    for e in range(400):
        assert (look[e], verdict[e]) == naive_unpaired_verdict(
            d, a[e].astype(int).tolist(), b[e].astype(int).tolist()
        )


# ------------------------------------------------------------------ the boundary-family registry

#: A value of each family parameter, for building every family of the registry.
PARAMETER_VALUES = {"rho": 1.5, "b": 0.2}


def _parameter_of(family) -> dict:
    return (
        {} if family.parameter is None else {family.parameter: PARAMETER_VALUES[family.parameter]}
    )


def test_spending_families_view_is_unchanged_public_api():
    assert SPENDING_FAMILIES == {"pocock": None, "obrien-fleming": None, "power": "rho"}
    assert SPENDING_FAMILIES is boundaries.SPENDING_FAMILIES
    assert BOUNDARY_FAMILIES is boundaries.BOUNDARY_FAMILIES
    for fid, family in BOUNDARY_FAMILIES.items():
        assert family.id == fid and family.label and family.description and family.reference
        assert set(family.kinds) <= set(boundaries.DESIGN_KINDS) and family.kinds
        assert family.parameter is None or family.parameter in PARAMETER_VALUES


def test_every_family_a_design_kind_takes_is_built_with_its_parameter():
    from evalsim.stats.sequential.builders import FAMILY_BUILDERS

    for fid in boundaries.families_for("paired"):
        family = BOUNDARY_FAMILIES[fid]
        if fid in FAMILY_BUILDERS:  # optimal, anytime: built from their own settings
            d = FAMILY_BUILDERS[fid]("paired", 0.1, 12, "one-sided", 0.1, 0.9, 0.5)
            assert d.boundary["family"] == fid and d.certificate.upper <= 0.1
            continue
        assert family.spending, f"paired_design calibrates on spending functions only: {fid}"
        par = _parameter_of(family)
        d = paired_design(0.1, 12, "one-sided", fid, **par)
        assert d.boundary == {"family": fid, **par} and d.certificate.upper <= 0.1
    for fid in boundaries.families_for("unpaired"):
        family = BOUNDARY_FAMILIES[fid]
        if fid == "optimised":  # chosen by sequential_optimise from stated alternatives
            assert not family.cli
            continue
        assert family.spending or fid in UNPAIRED_BUILDERS, fid
        par = _parameter_of(family)
        d = unpaired_family_design(fid, 0.1, 12, "one-sided", looks=4, **par)
        assert d.boundary["family"] == fid and d.certificate.upper <= 0.1
        for name, value in par.items():
            assert d.boundary[name] == value


@pytest.mark.parametrize(
    ("family", "parameter", "match"),
    [
        ("optimised", {}, "optimised is not built by unpaired_family_design"),
        ("haybittle", {}, r"'haybittle' is not a boundary family; unpaired designs take pocock, "),
        ("shape", {}, "boundary shape takes b, got none"),
        ("pocock", {"rho": 2.0}, "boundary pocock takes no parameter, got rho"),
    ],
)
def test_unpaired_family_design_refuses_what_the_registry_does_not_allow(family, parameter, match):
    with pytest.raises(ValueError, match=match):
        unpaired_family_design(family, 0.05, 10, **parameter)


def test_paired_design_names_the_registry_families_it_takes():
    allowed = boundaries.or_list(boundaries.families_for("paired"))
    with pytest.raises(
        ValueError,
        match=f"spending 'shape' is for unpaired designs; paired designs take {allowed}$",
    ):
        paired_design(0.05, 10, "one-sided", "shape")


def test_registry_loads_without_numpy_scipy_or_numba():
    code = (
        "import sys, evalsim.stats.boundaries; "
        "print(sorted(m for m in ('numpy', 'scipy', 'numba') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
