"""The response-surface model of the SO-101 calibration rule (:mod:`evalsim.sim.calibrate_so101`;
the rule's text and steps: the record ``config/calibration/so101.yaml``): design points in
coded units, the least-squares model of each rate, its prediction, the intercept shifts the
fresh runs make to it, and the choice of the point with the smallest predicted distance. Pure
functions: no simulation.
"""

from __future__ import annotations

import itertools

import numpy as np

#: Coded values tried by the choice in every knob (the rule's step 5).
CHOICE_GRID = np.round(np.linspace(-1.0, 1.0, 21), 10)


def design_full(n_knobs: int) -> np.ndarray:
    """The rule's step 3: the full 2^k factorial and the centre, in coded units; one row
    per point, the centre first."""
    full = np.array(list(itertools.product((-1.0, 1.0), repeat=n_knobs)))
    return np.vstack([np.zeros(n_knobs), full])


def model_matrix(coded: np.ndarray, interactions: bool = False) -> np.ndarray:
    """Columns of the model at coded points (rows): a column of ones, the coded knobs and, with
    ``interactions``, the products of every pair of knobs (in the order of
    ``itertools.combinations``)."""
    coded = np.atleast_2d(coded)
    cols = [np.ones(len(coded)), *coded.T]
    if interactions:
        cols += [coded[:, i] * coded[:, j] for i, j in _pairs(coded.shape[1])]
    return np.column_stack(cols)


def _pairs(n_knobs: int) -> list[tuple[int, int]]:
    return list(itertools.combinations(range(n_knobs), 2))


def point_of(coded: np.ndarray, knobs: dict[str, tuple[float, float]]) -> dict[str, float]:
    """Knob values of coded units ``coded`` (rounded to 10^-7)."""
    return {k: round(c + x * h, 7) for (k, (c, h)), x in zip(knobs.items(), coded, strict=True)}


def fit_linear(coded: np.ndarray, y: np.ndarray, interactions: bool = False) -> np.ndarray:
    """Least-squares coefficients of ``y`` on :func:`model_matrix` of the coded knobs:
    intercept and slopes, then with ``interactions`` the two-knob products (the rule's
    step 4)."""
    beta, *_ = np.linalg.lstsq(model_matrix(coded, interactions), y, rcond=None)
    return beta


def predict(beta: np.ndarray, coded: np.ndarray) -> np.ndarray:
    """The fitted model's prediction at coded points (rows); ``beta`` has the two-knob
    products when it is longer than the intercept and slopes."""
    coded = np.atleast_2d(coded)
    return model_matrix(coded, len(beta) > 1 + coded.shape[1]) @ beta


def shift_intercepts(
    models: dict[str, np.ndarray],
    coded: np.ndarray,
    measured: dict[str, float],
    weight: float = 1.0,
) -> dict[str, np.ndarray]:
    """The rule's step 6: every model of ``measured`` with its intercept moved by ``weight``
    times the measured value minus the model's prediction at the coded point ``coded`` (the
    others as they are). With ``weight`` 1 the shifted model predicts the measured value
    there; the rule weighs the two estimates by their distinct poses (``weight`` = the
    measurement's share)."""
    if not 0.0 <= weight <= 1.0:
        raise ValueError(f"weight must be in [0, 1], got {weight!r}")
    out = {}
    for k, beta in models.items():
        beta = np.array(beta, dtype=float)
        if k in measured:
            beta[0] += weight * (measured[k] - float(predict(beta, coded)[0]))
        out[k] = beta
    return out


def mean_residual(beta: np.ndarray, coded: np.ndarray, measured: np.ndarray) -> float:
    """The rule's step 8: the mean over runs of measured minus the model's prediction at
    each run's coded point (rows of ``coded``, one per entry of ``measured``)."""
    coded = np.atleast_2d(coded)
    measured = np.asarray(measured, dtype=float)
    if len(measured) != len(coded) or not len(coded):
        raise ValueError("need one measured value per coded point, at least one")
    return float(np.mean(measured - predict(beta, coded)))


def choose(
    models: dict[str, np.ndarray],
    sigma0_models: dict[str, np.ndarray],
    tgt: dict[str, tuple[float, float]],
    policies: list[str],
    sigma0_required: dict[str, float],
    n_knobs: int,
    grids: list[np.ndarray] | None = None,
) -> tuple[np.ndarray, dict[str, float]]:
    """The rule's step 5: the grid point with the smallest predicted D whose predicted sigma = 0
    rates meet ``sigma0_required``; ties to the point nearest the centre. ``grids``: the coded
    values of every knob (default :data:`CHOICE_GRID` in each). Returns (coded point,
    predictions); raises ValueError when no grid point is predicted feasible."""
    grids = [CHOICE_GRID] * n_knobs if grids is None else grids
    if len(grids) != n_knobs:
        raise ValueError("need one grid per knob")
    grid = np.array(list(itertools.product(*grids)))
    pred = {k: predict(b, grid) for k, b in models.items()}
    pred["gap"] = pred[f"strict_{policies[1]}"] - pred[f"strict_{policies[0]}"]
    d = sum(((pred[k] - v) / tol) ** 2 for k, (v, tol) in tgt.items())
    ok = np.ones(len(grid), dtype=bool)
    s0 = {t: predict(b, grid) for t, b in sigma0_models.items()}
    for t, need in sigma0_required.items():
        ok &= s0[t] >= need
    if not ok.any():
        raise ValueError("no design point is admissible (predicted sigma = 0 below the floor)")
    radius = np.sum(grid**2, axis=1)
    order = np.lexsort((radius, np.where(ok, d, np.inf)))
    i = int(order[0])
    out = {k: float(v[i]) for k, v in pred.items()}
    out.update({f"sigma0_{t}": float(v[i]) for t, v in s0.items()})
    out["distance"] = float(d[i])
    return grid[i], out
