"""Numbers as the commands print them (percent, points, p-values): one definition each, for
the answers' notes and the command's tables."""

from __future__ import annotations


def pct(x: float | None, digits: int = 1) -> str:
    """A rate in percent ("n/a" for None or NaN)."""
    return "n/a" if x is None or x != x else f"{100 * x:.{digits}f}%"


def prob_pct(x: float | None, digits: int = 1) -> str:
    """A probability in percent that never rounds to a certainty it is not (99.99 -> "> 99.9%")."""
    if x is None or x != x:
        return "n/a"
    step = 10.0**-digits / 100
    if 1 - step / 2 <= x < 1:
        return f"> {100 * (1 - step):.{digits}f}%"
    if 0 < x < step / 2:
        return f"< {100 * step:.{digits}f}%"
    return pct(x, digits)


def ci_pct(lo: float, hi: float, digits: int = 1) -> str:
    """An interval in percent, with more digits when its ends would print equal."""
    while digits < 4 and lo != hi and f"{100 * lo:.{digits}f}" == f"{100 * hi:.{digits}f}":
        digits += 1
    return f"[{100 * lo:.{digits}f}, {100 * hi:.{digits}f}]"


def pts(half_width: float) -> str:
    """A half-width in points: one decimal below 1 point, so it never shows as "0 pts"."""
    points = 100 * half_width
    return f"{points:.0f} pts" if points >= 0.95 else f"{points:.2g} pts"


def plural(count: int, word: str) -> str:
    """ "1 trial", "2 trials", "3 policies"."""
    return (
        f"{count} {word}"
        if count == 1
        else f"{count} {word[:-1] + 'ies' if word.endswith('y') else word + 's'}"
    )


def p_text(x: float | None) -> str:
    """A p-value: three decimals, two significant digits below 0.001."""
    if x is None or x != x:
        return "n/a"
    if x == 0:
        return "< 1e-300"  # below the smallest double a p-value is computed to
    return f"{x:.2g}" if x < 0.001 else f"{x:.3f}"
