"""The example study that ``evalsim study init`` writes: every option, commented."""

from __future__ import annotations

__all__ = ["EXAMPLE_STUDY"]

#: A complete study that locks as written: two arms, a 4 x 5 grid of start positions, two
#: object blocks (10 positions each), 20 pairs, the exact McNemar test.
EXAMPLE_STUDY = """\
# evalsim study file. Decide everything here before the first trial, then:
#   evalsim study plan DIR         what this design can detect (exact power and MDE)
#   evalsim study lock DIR --seed S   freeze it: hash, schedule, blind codes, sheets
# After the lock, any change of a value below is refused; `evalsim study amend` starts a
# new study linked to this one. Comments and layout are not part of the lock.

version: 1                 # schema version of this file
title: Cube to bin, baseline vs candidate   # free text, shown on the sheets and the report

# The question: the primary comparison is arm b against arm a.
question:
  primary: {a: baseline, b: candidate}
  alternative: two-sided   # two-sided | b-better | a-better
  alpha: 0.05              # level of the primary test, in (0, 0.5)

# The arms: a name each (letters, digits, _ . -). Before unblinding every output shows a
# random blind code instead of the name. `runner` (optional) names how a console runs it.
arms:
  - name: baseline
  - name: candidate
    # runner: null

# The conditions: start positions on a grid taped to the table (centimetres), the blocking
# factors, and replicates. Every condition runs every arm.
conditions:
  positions:
    grid:                  # rows A, B, ... and columns 1, 2, ...: positions A1 ... D5
      rows: 4
      columns: 5
      spacing_cm: 4
      origin_cm: [0, 0]    # x, y of A1
    # list:                # or name each position:
    #   - {name: P01, x_cm: 0, y_cm: 0}
  blocks:
    factors:               # blocking factors and their levels: object, session, operator ...
      object: [red_cube, blue_cube]
      # session: [day1, day2]
    assign: split          # split: the positions are dealt to the blocks in order (A1-B5
                           # red, C1-D5 blue); crossed: every position in every block
  replicates: 1            # runs of each position per block

# The success test, written before running, and the failure types an operator may record.
rubric:
  success: >-
    The cube rests inside the bin within 60 s of "go", with no human touch after "go".
    Dropped and recovered counts as success; placed then toppled out counts as failure.
  failure_types: [missed_grasp, dropped, wrong_place, timeout, other]

# The design: paired (both arms on every condition, analysed pair by pair) or unpaired.
design:
  paired: true
  n: 20                    # pairs (paired) or trials per arm (unpaired); the conditions must
                           # give exactly this many
  # sequential: design.json   # instead of a fixed n: a file from `evalsim sequential design`

# The analysis: one primary test, locked, and secondary analyses declared as secondary.
analysis:
  primary: mcnemar         # an id of evalsim.study.schema.PRIMARY_TESTS, paired if the design is
  secondary: [fisher, boschloo]

# What the plan assumes: the success rates you expect, and (paired) the share of pairs
# where exactly one arm succeeds (default: independent outcomes given the rates).
plan:
  expected: {baseline: 0.45, candidate: 0.85}
  # discordance: 0.45
  power: 0.8
"""
