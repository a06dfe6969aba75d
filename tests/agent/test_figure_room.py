"""One answer keeps at most 16 MB of figures (#32 A1): a run holds 8 MB, but an answer
of many runs kept every one in the saved conversation. The real kernel draws them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from reckon.agent import Agent
from support import ScriptedModel

from .helpers import KernelExecutor, answer, code_reply, run

# About 6.8 MB of PNG (noise does not compress): under a run's 8 MB, and three of them
# are over an answer's 16.
NOISE = """rng = np.random.default_rng({seed})
fig = plt.figure(figsize=(14, 14), dpi=100)
fig.figimage(rng.integers(0, 255, (1400, 1400, 3), dtype=np.uint8))
"""


def test_an_answers_figures_past_16_mb_are_not_kept(executor: KernelExecutor) -> None:
    cells = [code_reply(NOISE.format(seed=seed)) for seed in range(3)]
    model = ScriptedModel([*cells, answer("Three noise pictures.")])
    outcome = run(Agent(model, executor).ask("Draw noise three times.", environment={}))
    results = [s["result"] for s in outcome["steps"] if s["kind"] == "code"]
    assert [len(r["figures"]) for r in results] == [1, 1, 0]
    assert "1 figure not kept: one answer keeps at most 16 MB" in results[2]["stderr"]
    told = str(model.requests[3].messages[-1]["content"])
    assert "not kept" in told  # the model reads it too
    # The next answer has room of its own.
    model.replies = [code_reply(NOISE.format(seed=4)), answer("One more.")]
    again = run(Agent(model, executor).ask("Once more.", environment={}))
    assert [len(s["result"]["figures"]) for s in again["steps"] if s["kind"] == "code"] == [1]


class LendingExecutor(KernelExecutor):
    """The kernel behind the page's way of lending figures to the agent worker: each
    figure's PNG replaced by a reference and its base64 length (PROTOCOL.md §4)."""

    async def run(self, code: str) -> dict[str, Any]:
        result = await super().run(code)
        lent = []
        for number, figure in enumerate(result.get("figures") or []):
            png = figure.pop("png")
            lent.append({"ref": f"reckon-figure-00-{len(self.codes)}-{number}",
                         "chars": len(png), **figure})  # fmt: skip
        return {**result, "figures": lent}


def test_references_count_as_the_pngs_they_stand_for(tmp_path: Path) -> None:
    executor = LendingExecutor(tmp_path)
    cells = [code_reply(NOISE.format(seed=seed)) for seed in range(3)]
    model = ScriptedModel([*cells, answer("Three noise pictures.")])
    outcome = run(Agent(model, executor).ask("Draw noise three times.", environment={}))
    results = [s["result"] for s in outcome["steps"] if s["kind"] == "code"]
    assert [len(r["figures"]) for r in results] == [1, 1, 0]
    assert all("png" not in f and f["chars"] > 6_000_000 for r in results for f in r["figures"])
    assert "1 figure not kept: one answer keeps at most 16 MB" in results[2]["stderr"]
