"""Diagnostic after rule version 6 (not part of it): does the shifted 4-knob model predict
any grid point of version 6's box passing the acceptance (every rate within 1 SE, gap within
0.015, sigma = 0 >= 95%)?"""

import itertools

import numpy as np
import pandas as pd

from evalsim.config import load_config
from evalsim.sim import calibrate_so101 as cal
from evalsim.sim import calibration_scoring as scoring
from evalsim.sim import calibration_steps as steps

config = load_config("config/config.yaml")
c4, d4 = cal.version_design(config, 1, cal.V4_DESIGN_CSV, 4)
m, s0 = steps.fit_models(config, c4, d4, True)
c3, d3 = cal.version_design(config, 1, cal.V3_DESIGN_CSV, 3)
m3, s03 = steps.fit_models(config, c3, d3, False)
m = {k: cal.add_knob(b, 3, m3[k][4]) for k, b in m.items()}
s0 = {k: cal.add_knob(b, 3, s03[k][4]) for k, b in s0.items()}
run = pd.read_csv(cal.V5_RUN_CSV)
v5 = run[run.stage == "final"].iloc[0]
x5 = np.array([(v5[k] - c) / h for k, (c, h) in cal.KNOBS_V6.items()])
m = cal.shift_intercepts(m, x5, {k: v5[k] for k in scoring.RATES})
grid = np.array(list(itertools.product(*([cal.CHOICE_GRID] * 3 + [cal.FIXED_PAD_GRID_V6]))))
pred = {k: cal.predict(b, grid) for k, b in m.items()}
pred["gap"] = pred["strict_B"] - pred["strict_A"]
tgt = scoring.targets(config)
z = {k: (pred[k] - v) / t for k, (v, t) in tgt.items()}
ok = np.all([cal.predict(b, grid) >= 0.95 for b in s0.values()], axis=0)
worst = np.max(np.abs(np.column_stack(list(z.values()))), axis=1)
print("grid points", len(grid), "sigma0-admissible", ok.sum())
print("predicted to pass acceptance:", int((ok & (worst <= 1)).sum()))
i = int(np.argmin(np.where(ok, worst, np.inf)))
print(
    "smallest worst |miss| (SE units):",
    round(worst[i], 3),
    "at coded",
    grid[i],
    {k: round(float(v[i]), 3) for k, v in z.items()},
)
# the loose rates alone, along the fixed pad (other knobs barely move them)
for x4 in cal.FIXED_PAD_GRID_V6:
    j = np.where((grid[:, 3] == x4) & ok)[0]
    print(
        f"fixed pad {x4:+.1f}:",
        f"loose A z {z['loose_A'][j].min():+.2f}..{z['loose_A'][j].max():+.2f},",
        f"loose B z {z['loose_B'][j].min():+.2f}..{z['loose_B'][j].max():+.2f}",
    )
