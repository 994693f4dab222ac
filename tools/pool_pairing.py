"""Pairing and hard positions of the study's pools (issue 11, item 6): the numbers of
config/README.md's "Pairing and hard positions" paragraph.

For the first task and the first two policies of the config (the lesson's A and B), over the
shared (seed, trial) poses of ``results/pools/pools.parquet``:

- phi, the correlation of A's and B's strict outcomes (:func:`evalsim.sim.calibrate.
  paired_correlation`), and the mean over poses of the product of the two per-pose failure
  rates (over seeds) beside the product of the overall failure rates (what independence
  predicts);
- the poses that failed for both policies in at least two seeds;
- failure rates by reach (x bands of 3 cm) and by |y| (bands of 4 cm);
- for SO-101 pools: the grasp IK at the true pose (tilt used, wrist roll's distance to its
  limits) and the failure rates within 0.6 rad of a wrist-roll limit and away from it.

Run: ``python tools/pool_pairing.py [--config config/config.yaml] [--pools PATH]``.
"""

from __future__ import annotations

import argparse
import math

import pandas as pd

from evalsim.config import load_config
from evalsim.sim.calibrate import paired_correlation


def pose_table(pools: pd.DataFrame, task: str, a: str, b: str) -> pd.DataFrame:
    """One row per (seed, trial) with both policies' strict outcomes and the pose."""
    cols = ["seed", "trial", "cube_x_m", "cube_y_m", "cube_yaw_rad", "success"]
    pa = pools[(pools.task == task) & (pools.policy == a)][cols]
    pb = pools[(pools.task == task) & (pools.policy == b)][["seed", "trial", "success"]]
    return pa.merge(pb, on=["seed", "trial"], suffixes=("_a", "_b"))


def wrist_margins(config: dict, poses: pd.DataFrame) -> pd.DataFrame:
    """Grasp IK at each true pose: tilt (deg) and wrist roll's distance to its limits (rad)."""
    from evalsim.sim.so101 import SO101Scene
    from evalsim.sim.so101_model import SO101Params

    task = config["tasks"][0]
    scene = SO101Scene(SO101Params.from_config(config, task))
    z = scene.half + scene.params.grasp_above_centre_m
    lo, hi = scene.arm_range[4]
    rows = []
    for r in poses.itertuples():
        q, (_, tilt) = scene.solve_grasp(r.cube_x_m, r.cube_y_m, r.cube_yaw_rad, z)
        rows.append((r.trial, math.degrees(tilt), min(q[4] - lo, hi - q[4])))
    return pd.DataFrame(rows, columns=["trial", "tilt_deg", "roll_margin_rad"])


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--config", default="config/config.yaml")
    ap.add_argument("--pools", default="results/pools/pools.parquet")
    args = ap.parse_args(argv)
    config = load_config(args.config)
    task = config["tasks"][0]["name"]
    a, b = (p["name"] for p in config["policies"][:2])
    t = pose_table(pd.read_parquet(args.pools), task, a, b)
    n_seeds = t.seed.nunique()
    print(f"task {task}, policies {a} and {b}: {len(t)} shared (seed, trial) poses")
    print(f"phi (strict) = {paired_correlation(t.success_a, t.success_b):.3f}")
    per_pose = t.groupby("trial").agg(
        fa=("success_a", lambda s: 1 - s.mean()),
        fb=("success_b", lambda s: 1 - s.mean()),
        both=("success_a", "size"),
        x=("cube_x_m", "first"),
        y=("cube_y_m", "first"),
        yaw=("cube_yaw_rad", "first"),
    )
    both_fail = (~t.success_a & ~t.success_b).groupby(t.trial).sum()
    fa, fb = 1 - t.success_a.mean(), 1 - t.success_b.mean()
    print(
        f"failure rate {a} {fa:.3f}, {b} {fb:.3f}; mean per-pose product "
        f"{(per_pose.fa * per_pose.fb).mean():.4f} vs {fa * fb:.4f} if independent of the pose"
    )
    hard = per_pose[both_fail >= min(2, n_seeds)]
    print(f"poses failing for both in >= 2 of {n_seeds} seeds: {len(hard)} of {len(per_pose)}")
    for trial, r in hard.iterrows():
        print(f"  trial {trial}: x = {r.x:.3f} m, y = {r.y:.3f} m, yaw = {r.yaw:.2f} rad")
    t["x_band_cm"] = pd.cut(t.cube_x_m * 100, [16, 19, 22, 25, 28], include_lowest=True)
    t["absy_band_cm"] = pd.cut(t.cube_y_m.abs() * 100, [0, 4, 8], include_lowest=True)
    for band in ("x_band_cm", "absy_band_cm"):
        g = t.groupby(band, observed=True).agg(
            n=("trial", "size"),
            fail_a=("success_a", lambda s: 1 - s.mean()),
            fail_b=("success_b", lambda s: 1 - s.mean()),
        )
        print(g.round(3).to_string())
    if config["scene"]["name"] == "so101":
        w = wrist_margins(
            config,
            per_pose.reset_index().rename(
                columns={"x": "cube_x_m", "y": "cube_y_m", "yaw": "cube_yaw_rad"}
            ),
        )
        t = t.merge(w, on="trial")
        print(
            f"IK tilt used (deg): {sorted(w.tilt_deg.round(0).unique().tolist())}; "
            f"smallest wrist-roll margin {w.roll_margin_rad.min():.2f} rad"
        )
        near = t.roll_margin_rad < 0.6
        for name, m in (("within 0.6 rad of a limit", near), ("farther", ~near)):
            print(
                f"  {name}: {m.sum()} poses x seeds, failure {a} "
                f"{1 - t.success_a[m].mean():.3f}, {b} {1 - t.success_b[m].mean():.3f}"
            )


if __name__ == "__main__":
    main()
