"""The notebook surface in a real browser: JupyterLab + headless Chromium (Playwright).

A generated notebook (``%load_ext msmagic``, a ``%%ms_port`` cell, a ``%%ms_parity``
cell) is opened in JupyterLab, run with Run > Run All Cells, and the rendered page is
checked the way a user would see it: the port widget with its hunks and rule badges,
a badge opening to its explanation, the Split/Unified toggle switching the view (a
round trip through the kernel), and the parity table with its status cells. Screenshots
go to ``test-artifacts/browser/``; with ``MSMAGIC_DOCS_SCREENSHOTS=1`` (``make
screenshots``) the two used by the user guide are also copied to ``docs/images/``.

Needs the system Chromium (``apt-get install -y chromium``; ``MSMAGIC_CHROMIUM``
overrides the path) and the pip packages ``playwright`` and ``jupyterlab``. When they
are missing the test is skipped locally and fails under CI (env ``CI`` set).
"""

from __future__ import annotations

import os
import re
import sys
import time
from pathlib import Path

import nbformat
import pytest

from tests import browser_support as bs

pytestmark = [pytest.mark.browser, pytest.mark.timeout(180)]

ARTIFACTS = bs.REPO / "test-artifacts" / "browser"
DOCS_IMAGES = bs.REPO / "docs" / "images"

PORT_CELL = '''%%ms_port
import torch
import torch.nn as nn
import torch.nn.functional as F


class TinyNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(8, 16)
        self.drop = nn.Dropout(p=0.2)
        self.bn = nn.BatchNorm1d(16, momentum=0.1)
        self.fc2 = nn.Linear(16, 3)

    def forward(self, x):
        h = self.drop(F.relu(self.bn(self.fc1(x))))
        return self.fc2(h)


def describe(shape):
    """Plain Python: nothing here changes."""
    rows, cols = shape
    text = f"{rows} x {cols}"
    if rows > cols:
        text += " (tall)"
    return text


net = TinyNet()
x = torch.randn(4, 8)
y = torch.special.erfcx(net(x))'''

PARITY_CELL = '''%%ms_parity
import torch
import torch.nn as nn

torch.manual_seed(0)
layer = nn.Linear(4, 3)
x = torch.randn(2, 4)
y = torch.tanh(layer(x))
total = y.sum()'''

# x is compared too: its MindSpore draw returned PyTorch's values
PARITY_NAMES = ["layer.weight", "layer.bias", "x", "y", "total"]


def _requirements_or_skip() -> None:
    missing = bs.missing_requirements()
    if not missing:
        return
    message = "browser test cannot run: " + "; ".join(missing) + ". " + bs.INSTALL_HINT
    if os.environ.get("CI"):
        pytest.fail(message, pytrace=False)
    pytest.skip(message)


def _notebook(path: Path) -> None:
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3 (ipykernel)",
        "language": "python",
    }
    nb.cells = [
        nbformat.v4.new_markdown_cell("# msmagic in JupyterLab"),
        nbformat.v4.new_code_cell("%load_ext msmagic\nimport sys\nprint(sys.executable)"),
        nbformat.v4.new_code_cell(PORT_CELL),
        nbformat.v4.new_code_cell(PARITY_CELL),
    ]
    nbformat.write(nb, str(path))


def _words(text: str, n: int = 6) -> str:
    """The first ``n`` words of a rule's ``why`` as the browser shows them."""
    plain = re.sub(r"\s+", " ", text.replace("``", "").replace("`", "")).strip()
    return " ".join(plain.split(" ")[:n])


def _squash(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


def _wait_cells_done(page, count: int, timeout_s: float) -> list[str]:
    """Wait until every code cell shows an execution count (``[n]:``)."""
    deadline = time.monotonic() + timeout_s
    prompts: list[str] = []
    while time.monotonic() < deadline:
        prompts = [p.strip() for p in page.locator(".jp-CodeCell .jp-InputArea-prompt").all_inner_texts()]
        if len(prompts) == count and all(re.fullmatch(r"\[\d+\]:", p) for p in prompts):
            return prompts
        page.wait_for_timeout(250)
    raise AssertionError(f"cells did not finish within {timeout_s:.0f} s; prompts: {prompts}")


def test_notebook_surface_in_jupyterlab(tmp_path):
    _requirements_or_skip()
    from playwright.sync_api import expect, sync_playwright

    from msmagic.rules.registry import all_rules

    whys = {r.id: r.why for r in all_rules()}
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    for old in ARTIFACTS.glob("*.png"):
        old.unlink()

    root = tmp_path / "nb"
    root.mkdir()
    _notebook(root / "msmagic_browser.ipynb")

    with bs.jupyterlab(root, tmp_path / "lab") as lab, sync_playwright() as pw:
        browser = pw.chromium.launch(
            executable_path=bs.chromium_path(), args=bs.CHROMIUM_ARGS, headless=True
        )
        page = browser.new_page(viewport={"width": 1280, "height": 2400})
        console_errors: list[str] = []
        try:
            page.set_default_timeout(30_000)
            page.on("console", lambda m: console_errors.append(m.text) if m.type == "error" else None)
            page.goto(lab.url + "lab/tree/msmagic_browser.ipynb", wait_until="domcontentloaded")

            # The kernel from the notebook's metadata starts by itself; wait for it.
            page.locator(".jp-Notebook").wait_for(timeout=60_000)
            expect(page.locator(".jp-StatusBar-Widget", has_text="Python 3 (ipykernel) | Idle")).to_have_count(
                1, timeout=60_000
            )
            page.screenshot(path=str(ARTIFACTS / "00_page_opened.png"))

            # Run > Run All Cells, as a user would.
            page.locator(".lm-MenuBar-itemLabel", has_text=re.compile(r"^Run$")).click()
            page.locator(".lm-Menu-itemLabel", has_text=re.compile(r"^Run All Cells$")).click()
            _wait_cells_done(page, count=3, timeout_s=90)

            notebook = page.locator(".jp-Notebook")
            # No cell raised; the kernel is the test's interpreter.
            assert page.locator("[data-mime-type='application/vnd.jupyter.error']").count() == 0, (
                page.locator("[data-mime-type='application/vnd.jupyter.error']").first.inner_text()
            )
            first_out = page.locator(".jp-CodeCell").nth(0).locator(".jp-OutputArea-output").first
            assert Path(first_out.inner_text().strip()).resolve() == Path(sys.executable).resolve()

            # ---- %%ms_port: the ipywidgets view
            widget = page.locator(".jp-CodeCell").nth(1).locator(".msm-widget")
            widget.scroll_into_view_if_needed()
            expect(widget).to_be_visible(timeout=30_000)
            toggle = widget.locator(".msm-view-toggle")
            expect(toggle).to_be_visible()
            assert toggle.locator("button").all_inner_texts() == ["Split", "Unified"]
            expect(widget.locator(".msm-view-split")).to_have_count(1)
            expect(widget.locator(".msm-view-unified")).to_have_count(0)
            hunks = widget.locator(".msm-hunk")
            assert hunks.count() >= 2, f"expected several hunks, got {hunks.count()}"
            badges = widget.locator(".msm-badge")
            badge_ids = [t.strip() for t in widget.locator(".msm-badge .msm-rule-id").all_inner_texts()]
            for rule_id in ("IMP001", "CEL001", "BNM001", "CEL002", "GEN001"):
                assert rule_id in badge_ids, (rule_id, badge_ids)
            assert badges.count() == len(badge_ids)
            # a finding: the line with torch.special.erfcx is marked, and listed
            findings = widget.locator(".msm-findings")
            expect(findings).to_contain_text("torch.special.erfcx")
            expect(widget.locator(".msm-badge-finding .msm-rule-id")).to_have_text(["GEN001"])
            # every explanation starts closed
            for i in range(badges.count()):
                expect(badges.nth(i).locator(".msm-explanation")).to_be_hidden()
            widget.screenshot(path=str(ARTIFACTS / "02_port_widget_split.png"))
            page.screenshot(path=str(ARTIFACTS / "01_page_after_run_all.png"), full_page=True)

            # Clicking a badge opens its explanation: the rule's `why`, in words.
            for rule_id in ("BNM001", "GEN001"):
                badge = widget.locator(".msm-badge", has=page.locator(".msm-rule-id", has_text=rule_id)).first
                badge.locator("summary").click()
                explanation = badge.locator(".msm-explanation")
                expect(explanation).to_be_visible()
                assert _words(whys[rule_id]) in _squash(explanation.inner_text()), (
                    rule_id, _words(whys[rule_id]), explanation.inner_text()[:300],
                )
            badge_bnm = widget.locator(".msm-badge", has=page.locator(".msm-rule-id", has_text="BNM001")).first
            badge_bnm.scroll_into_view_if_needed()
            widget.screenshot(path=str(ARTIFACTS / "03_port_widget_badges_open.png"))
            # ... and clicking it again closes it.
            badge_bnm.locator("summary").click()
            expect(badge_bnm.locator(".msm-explanation")).to_be_hidden()

            # Split -> Unified -> Split: the toggle re-renders through the kernel.
            toggle.locator("button", has_text="Unified").click()
            expect(widget.locator(".msm-view-unified")).to_have_count(1, timeout=15_000)
            expect(widget.locator(".msm-view-split")).to_have_count(0)
            assert widget.locator(".msm-hunk").count() == hunks.count()
            widget.scroll_into_view_if_needed()
            widget.screenshot(path=str(ARTIFACTS / "04_port_widget_unified.png"))
            toggle.locator("button", has_text="Split").click()
            expect(widget.locator(".msm-view-split")).to_have_count(1, timeout=15_000)
            expect(widget.locator(".msm-view-unified")).to_have_count(0)

            # ---- %%ms_parity: the table with its status cells
            parity_cell = page.locator(".jp-CodeCell").nth(2)
            table = parity_cell.locator(".msm-parity-table")
            table.first.scroll_into_view_if_needed()
            expect(table).to_have_count(1)
            expect(table).to_be_visible()
            rows = table.locator("tbody tr")
            row_texts = [_squash(t) for t in rows.all_inner_texts()]
            for name in PARITY_NAMES:
                assert any(t.startswith(name + " ") for t in row_texts), (name, row_texts)
            assert table.locator("tr.msm-status-match").count() == len(PARITY_NAMES), row_texts
            assert table.locator("tr.msm-status-differs, tr.msm-status-only").count() == 0, row_texts
            parity_box = parity_cell.locator(".jp-OutputArea").first
            parity_box.screenshot(path=str(ARTIFACTS / "05_parity_table.png"))

            # Nothing left half-rendered anywhere on the page.
            text = notebook.inner_text()
            assert "Error displaying widget" not in text
            assert "Loading widget..." not in text
            assert "Loading widget" not in page.content()
            page.screenshot(path=str(ARTIFACTS / "06_page_final.png"), full_page=True)
            widget_errors = [e for e in console_errors if "widget" in e.lower()]
            assert not widget_errors, widget_errors
        except BaseException:
            # What the page looked like, and what the server said, when it failed.
            try:
                page.screenshot(path=str(ARTIFACTS / "failure.png"), full_page=True)
            except Exception:
                pass
            print("JupyterLab log (tail):\n" + lab.log_tail())
            print("browser console errors:", console_errors)
            raise
        finally:
            browser.close()

    assert lab.proc.returncode is not None, "JupyterLab was not shut down"

    if os.environ.get("MSMAGIC_DOCS_SCREENSHOTS") == "1":
        bs.save_copy(ARTIFACTS / "03_port_widget_badges_open.png", DOCS_IMAGES / "browser_port_widget.png")
        bs.save_copy(ARTIFACTS / "05_parity_table.png", DOCS_IMAGES / "browser_parity_table.png")
