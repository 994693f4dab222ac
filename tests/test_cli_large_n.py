"""``evalsim compare`` beyond the exact unconditional tests' memory budget (issue 24).

The secondary Boschloo row used to stop the whole command with "need about ... GiB" on a log
of a few thousand trials per arm, although the deciding test (Fisher's) has no such limit.
"""

from __future__ import annotations

import pytest
from scipy import stats
from test_cli_lab import bad, run, run_json

from evalsim.stats.two_sample.unconditional import BYTES_PER_TABLE, MEMORY_BUDGET_BYTES

# Just above the budget: (N + 1)^2 tables of BYTES_PER_TABLE bytes exceed MEMORY_BUDGET_BYTES.
N = int((MEMORY_BUDGET_BYTES / BYTES_PER_TABLE) ** 0.5)
K_A, K_B = int(0.70 * N), int(0.72 * N)


@pytest.fixture(scope="module")
def big_log(tmp_path_factory):
    path = tmp_path_factory.mktemp("large_n") / "log.csv"
    rows = [f"A,{int(i < K_A)}" for i in range(N)] + [f"B,{int(i < K_B)}" for i in range(N)]
    path.write_text("policy,success\n" + "\n".join(rows) + "\n")
    return path


def test_compare_above_the_budget_decides_with_fisher_and_says_why_no_boschloo(big_log, capsys):
    assert (N + 1) ** 2 * BYTES_PER_TABLE > MEMORY_BUDGET_BYTES  # the premise of the test
    out = run_json(capsys, "compare", big_log, "--a", "A", "--b", "B", "--unpaired")
    want = stats.fisher_exact([[K_B, N - K_B], [K_A, N - K_A]]).pvalue
    assert out["n_a"] == out["n_b"] == N
    assert out["pvalue"] == pytest.approx(want, rel=1e-9)
    assert out["boschloo_p"] is None
    rc, text, err = run(capsys, "compare", big_log, "--a", "A", "--b", "B", "--unpaired")
    assert rc == 0, err
    row = next(ln for ln in text.splitlines() if "Boschloo" in ln)
    assert "not computed" in row and "memory budget" in row, row


def test_boschloo_as_the_deciding_test_above_the_budget_is_refused_in_one_line(big_log, capsys):
    err = bad(
        capsys, "compare", big_log, "--a", "A", "--b", "B", "--unpaired", "--test", "boschloo"
    )
    assert "GiB" in err and "fewer trials per arm" in err, err
