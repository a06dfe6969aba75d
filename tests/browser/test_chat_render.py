"""The chat page's rendering, from the page's own modules: Markdown that leaves
arithmetic alone, a hand-made outcome with thinking, a wait and numbers tied to steps
(grounding) rendered by page/chat-turn.js, and a long answer that stays inside the window
on a wide screen and on a phone.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from .helpers import no_overflow


def test_markdown_rules(a_chat: Any) -> None:
    out = a_chat.evaluate(
        """async () => {
          const { renderMarkdown } = await import("./page/markdown.js");
          const box = document.createElement("div");
          const render = (text) => {
            box.replaceChildren(renderMarkdown(text));
            return box.innerHTML;
          };
          return {
            math: render("what is 17*23+4, 2**100 or a*b*c?"),
            emphasis: render("**Total:** 5 and *some* words"),
            code: render("run `df[df.x*2 > 3]` and `a` then *b*"),
            escaped: render("\\\\*not italic\\\\*"),
            fence: render("```python\\nimport os  # x\\n```"),
            table: render("| a | b |\\n|---|--:|\\n| x | 1 |"),
          };
        }"""
    )
    assert out["math"] == "<p>what is 17*23+4, 2**100 or a*b*c?</p>"
    assert out["emphasis"] == "<p><strong>Total:</strong> 5 and <em>some</em> words</p>"
    assert (
        out["code"]
        == "<p>run <code>df[df.x*2 &gt; 3]</code> and <code>a</code> then <em>b</em></p>"
    )
    assert out["escaped"] == "<p>*not italic*</p>"
    assert '<span class="hl-kw">import</span>' in out["fence"] and 'class="hl-com"' in out["fence"]
    assert 'class="align-right"' in out["table"] and "table-wrap" in out["table"]


def test_grounding_thinking_and_waiting_render_from_an_outcome(a_chat: Any) -> None:
    out = a_chat.evaluate(
        """async () => {
          const { Turn } = await import("./page/chat-turn.js");
          const turn = new Turn({ question: "mean price by region?", model: "slow-model",
                                  save: () => {} });
          document.querySelector("#messages").appendChild(turn.element);
          turn.waitFor("reading the prompt");
          await new Promise((r) => setTimeout(r, 1300));
          const waiting = turn.wait.hidden ? null : turn.wait.textContent;
          turn.addStep({ index: 0, kind: "thinking", text: "I should group by region first." });
          turn.addStep({ index: 1, kind: "code", code: "print(20)", model: "slow-model",
                         result: { status: "ok", stdout: "20\\n", stderr: "", result: null,
                                   figures: [], files: [], duration_ms: 3 } });
          const answer = "East averages **20.0**, and West 35.5; so 20.0 again.";
          const grounding = { numbers: [
            { text: "20.0", start: 16, end: 20, steps: [1], computed: true },
            { text: "35.5", start: 33, end: 37, steps: [], computed: false },
            { text: "20.0", start: 42, end: 46, steps: [1], computed: true },
          ], ungrounded: ["35.5"] };
          const steps = [{ index: 2, kind: "answer", text: answer, grounding }];
          const shown = turn.finish({ status: "ok", answer, steps });
          const links = [...shown.querySelectorAll("button.num-link")];
          links[1].click();
          const thinking = turn.element.querySelector("details.step-thinking");
          return {
            waiting, links: links.map((b) => [b.textContent, b.dataset.steps]),
            strong: shown.querySelector("strong").innerHTML,
            flagged: [...shown.querySelectorAll(".num-unverified")]
              .map((s) => [s.textContent, s.title]),
            note: shown.querySelector(".ungrounded-note").textContent,
            body: shown.querySelector(".answer-body").textContent,
            flash: turn.element.querySelector("[data-step-index='1']").classList.contains("flash"),
            thinking: [thinking.open, thinking.querySelector("summary").textContent],
            by: shown.querySelector(".answered-by").textContent,
          };
        }"""
    )
    assert re.fullmatch(r"Waiting for slow-model · reading the prompt · 1 s", out["waiting"])
    assert out["links"] == [["20.0", "1"], ["20.0", "1"]]
    assert out["strong"].startswith('<button type="button" class="num-link"')
    assert out["flagged"] == [["35.5", "Not computed: no step's output contains this number"]]
    assert out["note"] == "Not computed by any step: 35.5"
    assert out["body"] == "East averages 20.0, and West 35.5; so 20.0 again."
    assert out["flash"] is True
    assert out["thinking"] == [False, "Thinking"]
    assert "I should group" not in out["body"]
    assert out["by"].startswith("Answered by slow-model")


def test_an_answer_read_from_the_output_says_so(a_chat: Any, tmp_path: Path) -> None:
    """An answer no model call wrote (the cell printed the asked form's value) is labelled
    as read from the output, and so is such an answer sent back (a recheck)."""
    out = a_chat.evaluate(
        """async () => {
          const { Turn } = await import("./page/chat-turn.js");
          const turn = new Turn({ question: "Which year? Answer as @year[value].",
                                  model: "qwen", save: () => {} });
          document.querySelector("#messages").appendChild(turn.element);
          const ok = { status: "ok", stdout: "2012\\n", stderr: "", result: null,
                       figures: [], files: [], duration_ms: 3 };
          turn.addStep({ index: 0, kind: "code", code: "print(df['Year'].max())",
                         model: "qwen", result: ok });
          turn.addStep({ index: 1, kind: "recheck", text: "@year[2012]", origin: "output",
                         message: "Take 'Year' from the row where Jan is highest." });
          turn.addStep({ index: 2, kind: "code", code: "print(df.loc[df['Jan'].idxmax(), 'Year'])",
                         model: "qwen", result: { ...ok, stdout: "2007\\n" } });
          const grounding = { numbers: [{ text: "2007", start: 6, end: 10, steps: [2],
                                          computed: true }], ungrounded: [] };
          const method = { text: "'Year' of the row where 'Jan' is largest", step: 2 };
          const steps = [{ index: 0, kind: "code" }, { index: 2, kind: "code" },
                         { index: 3, kind: "answer", text: "@year[2007]", origin: "output",
                           grounding, method }];
          const shown = turn.finish({ status: "ok", answer: "@year[2007]", steps, method });
          return {
            by: shown.querySelector(".answered-by").textContent,
            recheck: turn.element.querySelector("[data-step-index='1'] summary").textContent,
          };
        }"""
    )
    assert out["by"] == "Answered by qwen, read from its code's output · 2 steps"
    assert out["recheck"].startswith("Step 2: recheck (read from the output)")
    for width in (1280, 390):
        a_chat.set_viewport_size({"width": width, "height": 800})
        a_chat.screenshot(path=str(tmp_path / f"read-from-output-{width}.png"), full_page=True)
        scroll, window = no_overflow(a_chat)
        assert scroll <= window


def test_the_models_own_code_is_shown_where_it_ran_otherwise(a_chat: Any, tmp_path: Path) -> None:
    """A step whose code ran otherwise than the model wrote it (Reckon's read_table for a
    pandas read of an upload, or the person's edit) keeps the model's code in view."""
    out = a_chat.evaluate(
        """async () => {
          const { Turn } = await import("./page/chat-turn.js");
          const turn = new Turn({ question: "Mean units?", model: "qwen", save: () => {} });
          document.querySelector("#messages").appendChild(turn.element);
          const ok = { status: "ok", stdout: "7.25\\n", stderr: "", result: null,
                       figures: [], files: [], duration_ms: 3 };
          turn.addStep({ index: 0, kind: "code", model: "qwen", result: ok,
                         code: "df = read_table('/data/sales.xlsx', sheet='data')",
                         proposed: "df = pd.read_excel('/data/sales.xlsx', sheet='data')" });
          turn.addStep({ index: 1, kind: "code", model: "qwen", result: ok, decision: "edit",
                         code: "print(df['units'].mean())", proposed: "print(df.units.mean)" });
          turn.addStep({ index: 2, kind: "code", model: "qwen", result: ok,
                         code: "print(len(df))", proposed: "print(len(df))" });
          turn.addStep({ index: 3, kind: "code", model: "qwen", decision: "reject",
                         result: { status: "rejected", reason: "no" },
                         code: "df = read_table('/data/a.csv')",
                         proposed: "df = pd.read_csv('/data/a.csv')" });
          const shown = (i) => {
            const step = turn.element.querySelector(`[data-step-index='${i}']`);
            step.open = true;
            const box = step.querySelector(".step-proposed");
            if (!box) return null;
            box.open = true;
            const code = box.querySelector("code").textContent;
            return [box.querySelector("summary").textContent, code];
          };
          return [shown(0), shown(1), shown(2), shown(3)];
        }"""
    )
    assert out[0] == [
        "The model's code as it wrote it; Reckon ran it as above",
        "df = pd.read_excel('/data/sales.xlsx', sheet='data')",
    ]
    assert out[1] == ["The model's code, before your edit", "print(df.units.mean)"]
    assert out[2] is None  # ran as written: nothing more to show
    assert out[3] == ["The model's code as it wrote it", "df = pd.read_csv('/data/a.csv')"]
    for width in (1280, 390):
        a_chat.set_viewport_size({"width": width, "height": 800})
        a_chat.screenshot(path=str(tmp_path / f"proposed-{width}.png"), full_page=True)
        scroll, window = no_overflow(a_chat)
        assert scroll <= window


def test_a_long_answer_and_a_phone_screen_stay_inside_the_window(a_chat: Any) -> None:
    page = a_chat
    page.evaluate(
        """async () => {
          const { Turn } = await import("./page/chat-turn.js");
          const turn = new Turn({ question: "x".repeat(400), model: "m", save: () => {} });
          document.querySelector("#messages").appendChild(turn.element);
          const long = ["A very long answer.", "y".repeat(500), "`" + "z".repeat(300) + "`",
            "| " + Array.from({ length: 30 }, (_, i) => `column_${i}`).join(" | ") + " |",
            "|" + "---|".repeat(30),
            "| " + Array.from({ length: 30 }, (_, i) => i * 1000).join(" | ") + " |",
            "```python", "print('" + "w".repeat(400) + "')", "```",
            ...Array.from({ length: 60 }, (_, i) => `- point ${i}: ${"words ".repeat(20)}`),
          ].join("\\n");
          turn.finish({ status: "ok", answer: long, steps: [] });
        }"""
    )
    for width, height in ((1280, 900), (390, 844)):
        page.set_viewport_size({"width": width, "height": height})
        scroll, inner = no_overflow(page)
        assert scroll <= inner, (width, scroll, inner)
    # On a phone the panel shows the files; the rest opens with its toggle.
    if page.locator("#tools-toggle").get_attribute("aria-expanded") == "true":
        page.locator("#tools-toggle").click()
    assert page.locator("#tools").is_hidden()
    page.locator("#tools-toggle").click()
    assert page.locator("#tools").is_visible()
    page.locator("#tools-toggle").click()
    box = page.locator("#ask").bounding_box()
    assert box and box["x"] + box["width"] <= 390
    page.set_viewport_size({"width": 1280, "height": 900})


def test_an_ok_answer_opens_the_step_that_computed_it_and_folds_the_failed_ones(
    a_chat: Any, tmp_path: Any
) -> None:
    page = a_chat
    out = page.evaluate(
        """async () => {
          const { Turn } = await import("./page/chat-turn.js");
          const turn = new Turn({ question: "total sales by region", model: "m", save: () => {} });
          document.querySelector("#messages").appendChild(turn.element);
          const failed = (index) => ({ index, kind: "code", code: "df.groupby('Region')",
            result: { status: "error", stdout: "", stderr: "", result: null, figures: [],
                      files: [], error: { type: "KeyError", message: "'Region'",
                      traceback: "KeyError: 'Region'" }, duration_ms: 2 } });
          turn.addStep(failed(0));
          turn.addStep(failed(1));
          turn.addStep({ index: 2, kind: "code", code: "print(df.groupby('region').sales.sum())",
            result: { status: "ok", stdout: "East 10\\nWest 20\\n", stderr: "", result: null,
                      figures: [], files: [], duration_ms: 3 } });
          const before = [...turn.steps.children].map((d) => d.open);
          const method = { text: "'sales' per 'region', summed", step: 2 };
          turn.finish({ status: "ok", answer: "East 10, West 20.", method, steps: [] });
          turn.element.scrollIntoView({ block: "end" });
          return { before, after: [...turn.steps.children].map((d) => d.open) };
        }"""
    )
    # While they were the news the failures were open and the result folded ...
    assert out["before"] == [True, True, False]
    # ... the answer opens the step that computed it and folds the attempts before it.
    assert out["after"] == [False, False, True]
    for width in (1280, 390):
        page.set_viewport_size({"width": width, "height": 800})
        page.locator("#messages .turn").last.scroll_into_view_if_needed()
        page.screenshot(path=str(tmp_path / f"result-step-{width}.png"))
    page.set_viewport_size({"width": 1280, "height": 900})


def test_the_wait_for_a_model_is_estimated_from_earlier_calls_and_says_so(
    a_chat: Any, tmp_path: Any
) -> None:
    page = a_chat
    out = page.evaluate(
        """async () => {
          const { Turn } = await import("./page/chat-turn.js");
          const { forgetRates } = await import("./page/prompt-rate.js");
          forgetRates();
          const pause = (ms) => new Promise((r) => setTimeout(r, ms));
          const turn = new Turn({ question: "mean price?", model: "local", save: () => {} });
          document.querySelector("#messages").appendChild(turn.element);
          turn.waitFor("reading the prompt");
          turn.calling({ model: "local", tokens: 2000, new_tokens: 2000 });
          await pause(900);
          const first = turn.wait.textContent;
          // That call's first token came 8 s after it went out: 4 ms a token.
          turn.addStep({ index: 0, kind: "code", code: "print(1)", model: "local",
            first_token_ms: 8000, result: { status: "ok", stdout: "1\\n", stderr: "",
            result: null, figures: [], files: [], duration_ms: 2 } });
          turn.calling({ model: "local", tokens: 5000, new_tokens: 3000 });
          await pause(900);
          const second = [turn.wait.textContent, turn.wait.title];
          turn.calling({ model: "other", tokens: 5000, new_tokens: 5000 });
          const other = turn.wait.textContent;
          turn.calling({ model: "local", tokens: 5000, new_tokens: 3000 });
          return { first, second, other };
        }"""
    )
    # Nothing measured yet: the clock only.
    assert re.fullmatch(
        r"Waiting for local · reading the prompt \(≈2,000 tokens\) · 1 s", out["first"]
    ), out
    text, title = out["second"]
    assert re.fullmatch(
        r"Waiting for local · reading the output of step 1 \(≈5,000 tokens, ≈3,000 new\)"
        r" · 1 s of about 12 s \(estimate\)",
        text,
    ), text
    assert (
        title == "Estimated from this page's earlier calls to local: about 4 ms a token of prompt"
    )
    assert "estimate" not in out["other"]  # another model: not measured
    waiting = page.locator("#messages .turn").last.locator(".waiting")
    for width in (1280, 390):
        page.set_viewport_size({"width": width, "height": 800})
        page.evaluate("() => window.scrollTo(0, document.scrollingElement.scrollHeight)")
        page.screenshot(path=str(tmp_path / f"waiting-{width}.png"))
        box = waiting.bounding_box()
        assert box is not None and box["x"] + box["width"] <= width
    page.set_viewport_size({"width": 1280, "height": 900})
    page.evaluate("() => document.querySelectorAll('#messages .turn').forEach((t) => t.remove())")
