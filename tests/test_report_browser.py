"""The HTML report in a real browser: every product's entry renders, each table with its note.

Snakemake's report is a React page: the entries exist only once its scripts have run. The
test opens a copy of ``results/report.html`` (from the smoke run) in headless Chromium with a
small script appended that walks the page as a reader would -- each category, then each
result's information panel -- and records the rendered text; ``--dump-dom`` hands it back.
Skipped, with the reason, where no Chromium is on PATH (``make test`` installs Debian's
``chromium`` when it runs as root).
"""

from __future__ import annotations

import html
import json
import re
import shutil
import subprocess
from pathlib import Path

import pandas as pd
import pytest

from evalsim.products.report import declared_products
from evalsim.tables import REPORT_MAX_COLUMNS

BROWSERS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")

# Appended to the report: show each category and each result, record #app's rendered text.
WALK_JS = """
<script>
window.addEventListener("load", function () {
  // what the page shows for a result: its labels' values (the documents' name, the id)
  // where it has labels, else its path
  function shownAs(path) {
    const labels = results[path].labels;
    return labels ? Object.values(labels).map(String) : [path];
  }
  const steps = [];
  Object.keys(categories).forEach(function (cat) {
    const paths = Object.values(categories[cat])[0];
    // a category lists its results by their labels only when every one has labels
    const labelled = paths.every(function (path) { return results[path].labels; });
    steps.push(["category", cat, labelled ? shownAs(paths[0]) : [paths[0]]]);
  });
  Object.keys(results).forEach(function (path) { steps.push(["result", path, shownAs(path)]); });
  const seen = {category: {}, result: {}, blank: null};
  let i = 0, tries = 0;
  function text() { return document.querySelector("#app").innerText; }
  function record() {
    // React renders asynchronously: wait until the page shows what was asked for
    const [kind, key, expect] = steps[i - 1];
    const now = text();
    const all = expect.every(function (part) { return now.includes(part); });
    const shown = kind === "category" ? all : now.includes("DESCRIPTION") && all;
    if (!shown && tries++ < 100) { setTimeout(record, 50); return; }
    if (!now.trim()) {
      // React unmounted the page (an error in a component): nothing later can be shown
      seen.blank = [kind, key];
      i = steps.length;
    }
    seen[kind][key] = now;
    tries = 0;
    next();
  }
  function next() {
    if (i === steps.length) {
      const pre = document.createElement("pre");
      pre.id = "evalsim-walk";
      pre.textContent = JSON.stringify(seen);
      document.body.appendChild(pre);
      return;
    }
    const [kind, key] = steps[i++];
    // back to the menu first, as a reader's click does, so the category list is rebuilt
    app.setView({navbarMode: "menu"});
    setTimeout(function () {
      if (kind === "category") { app.showCategory(key); } else { app.showResultInfo(key); }
      setTimeout(record, 50);
    }, 50);
  }
  setTimeout(next, 500);
});
</script>
"""


def find_browser() -> str | None:
    for name in BROWSERS:
        path = shutil.which(name)
        if path:
            return path
    return None


def browser_args(browser: str) -> list[str]:
    # --no-sandbox: the sandbox cannot start as root (CI containers)
    return [browser, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars"]


def walk_report(browser: str, report: Path, tmp_path: Path) -> dict:
    """Open an instrumented copy of ``report``; return {category|result: {key: text}}."""
    page = tmp_path / "walk.html"
    text = report.read_text(encoding="utf-8")
    end = text.rindex("</body>")  # the page's own; scripts above quote "</body>" in strings
    page.write_text(text[:end] + WALK_JS + text[end:], encoding="utf-8")
    return dumped_json(browser, page.as_uri(), "walk", 120000, 300)


def dumped_json(browser: str, uri: str, name: str, budget_ms: int, timeout: int, *args) -> dict:
    """Load ``uri`` headless (``args``: more Chromium flags) and return the JSON its script
    left in ``<pre id="evalsim-<name>">``."""
    res = subprocess.run(
        [*browser_args(browser), *args, f"--virtual-time-budget={budget_ms}", "--dump-dom", uri],
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    assert res.returncode == 0, res.stderr[-2000:]
    match = re.search(rf'<pre id="evalsim-{name}">(.*?)</pre>', res.stdout, re.S)
    assert match, f"the {name} script did not finish: " + res.stdout[-1000:]
    return json.loads(html.unescape(match.group(1)))


def first_words(text: str, n: int = 8) -> str:
    return " ".join(text.split()[:n])


def shown_as(product) -> list[str]:
    """What the report shows for ``product`` in its category's list and its panel: its
    labels' values (the documents' name for it and its id) where it has labels, else its
    file name."""
    if product.labels:
        return [" ".join(str(v).split()) for v in product.labels.values()]
    return [Path(product.path).name]


@pytest.mark.slow
def test_every_product_renders_in_chromium_with_its_caption_and_note(smoke_report, repo, tmp_path):
    browser = find_browser()
    if browser is None:
        pytest.skip(
            "no Chromium on PATH (tried " + ", ".join(BROWSERS) + "); `make test` installs "
            "Debian's chromium when run as root"
        )
    work = smoke_report.parent.parent
    products = [
        p
        for p in declared_products(repo)
        if p.kind in ("table", "figure") or p.path == "results/report/claims.html"
    ]
    seen = walk_report(browser, smoke_report, tmp_path)

    # e.g. a category of two results whose second label differs: Snakemake makes that label
    # a toggle between them, and the entry missing under the toggle's value breaks the page
    assert seen["blank"] is None, f"the report's page went blank at {seen['blank']}"

    # every table and figure is listed by the documents' name for it, with its id beside
    for p in products:
        if p.kind in ("table", "figure"):
            stem = Path(p.path).stem
            short = stem.split("_")[0] if re.match(r"[TF]\d+_", stem) else stem
            assert p.labels and short in " ".join(p.labels.values()), p.path

    # the report lists one entry per distinct label in a category: a product whose labels
    # repeat another's there (a figure's table and its picture) could not be opened from it
    by_label: dict = {}
    for p in products:
        if p.labels:
            key = (p.category, tuple(sorted(p.labels.items())))
            assert key not in by_label, f"{p.path} is listed under the label of {by_label[key]}"
            by_label[key] = p.path

    # each category lists its products by those names (by file name where unlabelled)
    listed = " ".join(" ".join(seen["category"].values()).split())
    for p in products:
        for part in shown_as(p):
            assert part in listed, f"{p.path}: {part!r} is not listed under any category"

    for p in products:
        text = seen["result"].get(p.path)
        assert text is not None, f"{p.path} has no entry in the report"
        # the panel names the product and shows its caption (first words of the rst)
        for part in shown_as(p):
            assert part in " ".join(text.split()), f"{p.path}: {part!r} not in its panel"
        caption = (repo / p.caption).read_text(encoding="utf-8")
        prose = re.sub(r"[`*]", "", caption.split("\n\n")[0])
        assert first_words(prose) in " ".join(text.split()), f"{p.path}: caption not rendered"
        if p.kind == "table":
            md = (work / p.csv).with_suffix(".md").read_text(encoding="utf-8")
            parts = md.split("\n\n")
            table_at = next(i for i, part in enumerate(parts) if part.startswith("|"))
            note = " ".join(parts[table_at + 1 :]).replace("`", "")
            if note.strip():  # a table without a note has nothing more to show
                assert "Note. " + first_words(note) in " ".join(text.split()), (
                    f"{p.path}: its note is not shown beside it"
                )
            # the rows are not in the sidebar: they fill the main panel (test below)
            header = parts[table_at].splitlines()[0].strip("| ").split(" | ")
            assert "\t".join(header) not in text, f"{p.path}: its rows are in the sidebar"


def assert_screenshot_paints(browser: str, uri: str, shot: Path, budget_ms: int) -> None:
    """Chromium draws ``uri`` at 1400 x 900 into ``shot``: a PNG of that size, not (nearly)
    one colour."""
    res = subprocess.run(
        [
            *browser_args(browser),
            "--window-size=1400,900",
            f"--virtual-time-budget={budget_ms}",
            f"--screenshot={shot}",
            uri,
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert res.returncode == 0, res.stderr[-2000:]
    from PIL import Image

    with Image.open(shot) as img:
        assert img.size == (1400, 900)
        colours = img.convert("RGB").getcolors(maxcolors=1 << 16)
    assert colours is None or len(colours) > 50, "the screenshot is (nearly) one colour"


@pytest.mark.slow
def test_report_screenshot_is_drawn(smoke_report, tmp_path):
    """The report's first screen paints (a PNG of the requested size, not blank)."""
    browser = find_browser()
    if browser is None:
        pytest.skip("no Chromium on PATH")
    assert_screenshot_paints(browser, smoke_report.as_uri(), tmp_path / "report.png", 10000)


# Appended to the report: open each table as a reader does (its category, then the table,
# which fills the main panel) and wait -- polling, no fixed sleep -- for the table's page to
# report how it fits (evalsim.tables.report_html posts {evalsimTable, lastColumnRight, width,
# fontPx, fits}); record that with the panel's place in the window. ``only`` (a path, or
# null for every table) leaves the last table shown, for a screenshot.
FIT_JS = """
<script>
window.addEventListener("load", function () {
  const only = %(only)s;
  const where = {};
  Object.keys(categories).forEach(function (cat) {
    Object.values(categories[cat]).forEach(function (paths) {
      paths.forEach(function (path) { where[path] = cat; });
    });
  });
  const tables = Object.keys(results).filter(function (path) {
    return path.startsWith("results/report/tables/") && (only === null || path === only);
  });
  const posted = {};
  window.addEventListener("message", function (ev) {
    if (ev.data && ev.data.evalsimTable) { posted[ev.data.evalsimTable] = ev.data; }
  });
  const seen = {};
  let i = 0, tries = 0;
  function id(path) { return path.split("/").pop().split(".")[0].split("_")[0]; }
  function done() {
    const pre = document.createElement("pre");
    pre.id = "evalsim-fit";
    pre.textContent = JSON.stringify(seen);
    document.body.appendChild(pre);
  }
  function record() {
    const path = tables[i];
    const frame = document.querySelector("iframe");
    const key = path.split("/").pop().split(".")[0];
    const fit = posted[key] || posted[id(path)];
    if (!(frame && frame.src === results[path].data_uri && fit)) {
      if (tries++ < 400) { setTimeout(record, 50); return; }
      seen[path] = {timeout: true};
    } else {
      const rect = frame.getBoundingClientRect();
      seen[path] = Object.assign({}, fit, {
        frameLeft: rect.left, frameRight: rect.right, windowWidth: window.innerWidth,
        sidebar: document.querySelector("nav").getBoundingClientRect().width});
    }
    tries = 0;
    i += 1;
    if (i === tables.length) { done(); } else { show(); }
  }
  function show() {
    const path = tables[i];
    delete posted[id(path)];
    delete posted[path.split("/").pop().split(".")[0]];
    // as a reader's click in the category's list leaves it: the list in the sidebar, the
    // table in the main panel
    const cat = where[path];
    const sub = Object.keys(categories[cat]).find(function (k) {
      return categories[cat][k].includes(path);
    });
    app.setView({navbarMode: "subcategory", category: cat, subcategory: sub, content: "html",
                 contentPath: results[path].data_uri, resultPath: path});
    setTimeout(record, 50);
  }
  if (tables.length === 0) { done(); } else { setTimeout(show, 100); }
});
</script>
"""


def _instrumented(report: Path, tmp_path: Path, only: str | None) -> Path:
    page = tmp_path / ("fit.html" if only is None else "fit_one.html")
    text = report.read_text(encoding="utf-8")
    end = text.rindex("</body>")
    script = FIT_JS % {"only": json.dumps(only)}
    page.write_text(text[:end] + script + text[end:], encoding="utf-8")
    return page


@pytest.mark.slow
def test_every_table_fills_the_main_panel_with_its_last_column_in_view(smoke_report, tmp_path):
    """At 1400 x 900, each table opened from its category fills the main panel and its last
    column is in view without scrolling sideways (the widest, T10, included); a screenshot of
    T10 so shown is drawn (``tmp_path/T10.png``)."""
    browser = find_browser()
    if browser is None:
        pytest.skip(
            "no Chromium on PATH (tried " + ", ".join(BROWSERS) + "); `make test` installs "
            "Debian's chromium when run as root"
        )
    uri = _instrumented(smoke_report, tmp_path, None).as_uri()
    seen = dumped_json(browser, uri, "fit", 300000, 600, "--window-size=1400,900")
    work = smoke_report.parent.parent
    tables = sorted((work / "results" / "report" / "tables").glob("*.html"))
    assert set(seen) == {str(p.relative_to(work)) for p in tables}
    for path, fit in seen.items():
        assert not fit.get("timeout"), f"{path}: its page never reported how it fits"
        # wide tables are split into blocks rather than shrunk below a readable size
        assert fit["fontPx"] >= 10, f"{path}: shrunk to {fit['fontPx']} px to fit"
        assert fit["fits"] and fit["lastColumnRight"] <= fit["width"], (
            f"{path}: last column ends at {fit['lastColumnRight']:.0f} px of {fit['width']} px"
        )
        assert fit["frameRight"] <= fit["windowWidth"] + 1, f"{path}: panel wider than window"
        # the whole main panel: from the sidebar's edge to the window's
        assert abs(fit["frameLeft"] - fit["sidebar"]) <= 1, path
        assert fit["frameRight"] >= fit["windowWidth"] - 1, path
    t10 = "results/report/tables/T10_compare.html"
    assert len(pd.read_csv(work / "results/tables/T10_compare.csv").columns) >= 15
    assert seen[t10]["fits"], "T10, the lesson's wide Table E, needs sideways scrolling"
    # The widest table, T34 (27 columns), is shown in stacked blocks (evalsim.tables
    # .column_blocks) and has its last column in view like the others.
    t34 = "results/report/tables/T34_per_task.html"
    assert len(pd.read_csv(work / "results/tables/T34_per_task.csv").columns) > REPORT_MAX_COLUMNS
    assert (work / t34).read_text(encoding="utf-8").count('<table class="evalsim-table"') >= 2
    assert seen[t34]["fits"], "T34 needs sideways scrolling"

    page = _instrumented(smoke_report, tmp_path, t10).as_uri()
    assert_screenshot_paints(browser, page, tmp_path / "T10.png", 60000)


@pytest.mark.slow
def test_report_opens_on_the_overview_not_the_workflow_graph(smoke_report):
    browser = find_browser()
    if browser is None:
        pytest.skip("no Chromium on PATH (tried " + ", ".join(BROWSERS) + ")")
    res = subprocess.run(
        [
            *browser_args(browser),
            "--virtual-time-budget=20000",
            "--dump-dom",
            smoke_report.as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert res.returncode == 0, res.stderr[-2000:]
    dom = res.stdout
    # the graph's element (the data's <script id="rulegraph"> is always there)
    assert not re.search(r'<div[^>]*id="rulegraph"', dom), "the report opens on the graph"
    assert "Documents and their products" in dom and "Beyond the documents" in dom
    for category in ("drift", "multi", "sequential", "resample", "report"):
        assert f"app.showCategory('{category}')" in html.unescape(dom), category
