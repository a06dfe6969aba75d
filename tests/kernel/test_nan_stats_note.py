"""A scipy test or measure given a column with missing values says so in the cell's
stderr (reckon.kernel._nan_stats_note; seen: three correlations printed nan where the
question said to consider only non-null values)."""

from __future__ import annotations

import pytest
from kernel_helpers import Runner

SETUP = (
    "import numpy as np\nfrom scipy import stats\nfrom scipy.stats import pearsonr\n"
    "df = pd.DataFrame({'reviews': [10.0, 20.0, np.nan, 40.0, 50.0, 60.0],"
    " 'score': [3.0, 3.5, 4.0, 4.5, np.nan, 5.0], 'full': [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]})"
)


@pytest.mark.parametrize(
    ("cell", "said"),
    [
        ("r, p = pearsonr(df['reviews'], df['score'])\nprint(r)",
         "pearsonr gives NaN when its input holds missing values, and df['reviews'] has 1 of "
         "6: leave them out first (for example df.dropna(subset=['reviews', 'score'])), then "
         "call pearsonr on what is left."),
        # No NaN printed: every z-score is NaN, so no row is beyond 3.
        ("z = stats.zscore(df['score'])\nprint(len(df[abs(z) > 3]))",
         "zscore gives NaN when its input holds missing values, and df['score'] has 1 of 6: "
         "leave them out first (for example df.dropna(subset=['score'])), then call zscore "
         "on what is left."),
    ],
)  # fmt: skip
def test_a_column_with_missing_values_given_to_scipy_is_noted(
    a_session: Runner, cell: str, said: str
) -> None:
    assert a_session(SETUP)["status"] == "ok"
    result = a_session(cell)
    assert result["status"] == "ok"
    assert result["notes"] == [said]
    assert f"[Reckon: {said}]" in result["stderr"]


@pytest.mark.parametrize(
    "cell",
    [
        "r, p = pearsonr(df['full'], df['full'] * 2)\nprint(r)",  # nothing missing
        "print(stats.skew(df['score'], nan_policy='omit'))",  # told what to do with NaN
        "d = df.dropna()\nprint(pearsonr(d['reviews'], d['score'])[0])",
        "print(df['reviews'].corr(df['score']))",  # pandas leaves NaN out itself
    ],
)
def test_no_note_when_nothing_missing_reaches_scipy(a_session: Runner, cell: str) -> None:
    assert a_session(SETUP)["status"] == "ok"
    result = a_session(cell)
    assert result["status"] == "ok" and not result.get("notes"), result.get("notes")
