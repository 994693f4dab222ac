"""Chosen points of the SO-101 calibration versions that the diagnostics rerun, as recorded in
config/README.md (version 3's is the study's, in config/config.yaml)."""

V3 = {
    "pad_friction_sd": 0.385,
    "grip_hold_fraction": 0.148,
    "pad_width_m": 0.026,
    "fixed_pad_extra_m": 0.0038,
}
V5 = {
    "pad_friction_sd": 0.345,
    "grip_hold_fraction": 0.158,
    "pad_width_m": 0.0258,
    "fixed_pad_extra_m": 0.0038,
}
