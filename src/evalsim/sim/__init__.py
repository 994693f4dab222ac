"""MuJoCo simulation of a scripted pick: scenes, controller, one trial, and the pools."""
