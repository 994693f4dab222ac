"""The study's randomness: one SeedSequence, spawned by stable keys.

Every random draw in evalsim comes from a generator made by :func:`rng_for` from the
config's ``study_seed`` and a tuple of keys that name what the draw is for, e.g.
``("pose", task)`` or ``("chunk", task, policy, seed, chunk)``. The keys are hashed with
SHA-256 (Python's ``hash()`` changes per process), so the stream a job gets depends only
on the config and the job's identity, never on job order or the number of cores.
"""

from __future__ import annotations

import hashlib

import numpy as np


def key_words(*keys: object) -> tuple[int, ...]:
    """Map a tuple of keys to stable 32-bit words (SHA-256 of their ``repr``)."""
    words = []
    for key in keys:
        digest = hashlib.sha256(repr(key).encode("utf-8")).digest()
        words.append(int.from_bytes(digest[:4], "little"))
    return tuple(words)


def seed_sequence(study_seed: int, *keys: object) -> np.random.SeedSequence:
    """The SeedSequence of the draw named by ``keys`` within study ``study_seed``."""
    if isinstance(study_seed, bool) or not isinstance(study_seed, (int, np.integer)):
        raise ValueError(f"study_seed must be a non-negative integer, got {study_seed!r}")
    if study_seed < 0:
        raise ValueError(f"study_seed must be a non-negative integer, got {study_seed!r}")
    return np.random.SeedSequence(entropy=int(study_seed), spawn_key=key_words(*keys))


def rng_for(study_seed: int, *keys: object) -> np.random.Generator:
    """A fresh ``numpy.random.Generator`` (PCG64) for the draw named by ``keys``."""
    return np.random.Generator(np.random.PCG64(seed_sequence(study_seed, *keys)))


def int_seed_for(study_seed: int, *keys: object) -> int:
    """A 63-bit integer seed for numba kernels that take an integer seed."""
    state = seed_sequence(study_seed, *keys).generate_state(2, dtype=np.uint32)
    return int((int(state[0]) << 31) ^ int(state[1]))
