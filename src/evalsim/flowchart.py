"""Small declarative flowcharts drawn with matplotlib (no graphviz binary needed).

A chart is written in the subset of Mermaid's ``flowchart TD`` syntax that document 000
uses for its evaluation protocol::

    flowchart TD
        T["write the success test<br/>(cube 4 cm up)"] --> P["fix the test positions"]
        P --> R["run n trials"]

:func:`parse_mermaid` turns that text into a :class:`Flowchart` (nodes and edges),
:func:`layout` ranks the nodes top-down by longest path from a source and spreads each
rank horizontally, and :func:`draw_flowchart` draws boxes and arrows.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import matplotlib.pyplot as plt
from matplotlib.colors import to_rgba

from evalsim.figures import OKABE_ITO

__all__ = [
    "PROTOCOL_MERMAID",
    "Flowchart",
    "Node",
    "draw_flowchart",
    "layout",
    "parse_mermaid",
]

#: Document 000, "The evaluation protocol", as printed there.
PROTOCOL_MERMAID = """\
flowchart TD
    T["write the success test<br/>(cube 4 cm up, both jaws on it)"] --> P["fix the test positions<br/>(same for every policy)"]
    P --> R["run n trials<br/>each ends in 1 or 0"]
    R --> K["count k successes"]
    K --> W["report k/n<br/>+ Wilson 95% interval"]
    K --> F["two policies?<br/>Fisher's exact test"]
"""  # noqa: E501


@dataclass(frozen=True)
class Node:
    """A box: id and its label lines."""

    id: str
    label: tuple[str, ...]


@dataclass(frozen=True)
class Flowchart:
    """Nodes in order of first appearance, and directed edges (source id, target id)."""

    nodes: tuple[Node, ...]
    edges: tuple[tuple[str, str], ...]


_NODE = r'([A-Za-z_][A-Za-z0-9_]*)(?:\["([^"]*)"\])?'
_EDGE = re.compile(rf"^\s*{_NODE}\s*-->\s*{_NODE}\s*$")
_LONE = re.compile(rf"^\s*{_NODE}\s*$")


def parse_mermaid(text: str) -> Flowchart:
    """Parse a ``flowchart TD`` with ``A["label"] --> B["label"]`` lines.

    Raises
    ------
    ValueError
        On a line that is not a node or an edge (quoting it), or a node without a label.
    """
    lines = [ln for ln in text.splitlines() if ln.strip()]
    if not lines or not re.match(r"^\s*(flowchart|graph)\s+(TD|TB)\s*$", lines[0]):
        raise ValueError(f"expected 'flowchart TD' as the first line, got {lines[:1]!r}")
    labels: dict[str, str | None] = {}
    edges: list[tuple[str, str]] = []

    def note(node_id: str, label: str | None) -> None:
        if label is not None or node_id not in labels:
            labels[node_id] = label if label is not None else labels.get(node_id)

    for line in lines[1:]:
        m = _EDGE.match(line)
        if m:
            a, la, b, lb = m.groups()
            note(a, la)
            note(b, lb)
            edges.append((a, b))
            continue
        m = _LONE.match(line)
        if not m:
            raise ValueError(f"cannot parse flowchart line {line.strip()!r}")
        note(*m.groups())
    missing = [k for k, v in labels.items() if v is None]
    if missing:
        raise ValueError(f"flowchart node(s) without a label: {missing}")
    nodes = tuple(Node(k, tuple(v.split("<br/>"))) for k, v in labels.items())
    return Flowchart(nodes, tuple(edges))


def layout(chart: Flowchart) -> dict[str, tuple[float, float]]:
    """Positions (x, rank) of each node: rank = longest path from a source, x centred per rank.

    Raises
    ------
    ValueError
        If the chart has a cycle.
    """
    ids = [n.id for n in chart.nodes]
    rank = {i: 0 for i in ids}
    for _ in range(len(ids) + 1):
        changed = False
        for a, b in chart.edges:
            if rank[b] < rank[a] + 1:
                rank[b] = rank[a] + 1
                changed = True
        if not changed:
            break
    else:
        raise ValueError("flowchart has a cycle")
    pos = {}
    for r in sorted(set(rank.values())):
        row = [i for i in ids if rank[i] == r]
        for j, i in enumerate(row):
            pos[i] = (j - (len(row) - 1) / 2.0, float(r))
    return pos


def draw_flowchart(chart: Flowchart, title: str | None = None, ax=None):
    """Draw ``chart`` top-down; boxes fit their text, arrows join box edges. Returns the Figure.

    Nodes without outgoing edges (the protocol's outcomes) are green, the others blue.
    """
    pos = layout(chart)
    n_ranks = int(max(y for _, y in pos.values())) + 1
    n_cols = max(sum(1 for _, y in pos.values() if y == r) for r in range(n_ranks))
    if ax is None:
        fig, ax = plt.subplots(figsize=(1.9 * max(n_cols, 2), 0.8 * n_ranks + 0.5))
    else:
        fig = ax.figure
    sinks = {n.id for n in chart.nodes} - {a for a, _ in chart.edges}
    texts = {}
    for node in chart.nodes:
        x, r = pos[node.id]
        color = OKABE_ITO[2] if node.id in sinks else OKABE_ITO[0]
        texts[node.id] = ax.text(
            x,
            -r,
            "\n".join(node.label),
            ha="center",
            va="center",
            fontsize=7,
            bbox={
                "boxstyle": "round,pad=0.5,rounding_size=0.4",
                "facecolor": to_rgba(color, 0.15),
                "edgecolor": color,
                "linewidth": 1.2,
            },
        )
    for a, b in chart.edges:
        # Clip each arrow at the two text boxes so it joins their edges.
        ax.annotate(
            "",
            xy=texts[b].get_position(),
            xytext=texts[a].get_position(),
            arrowprops={
                "arrowstyle": "-|>",
                "color": "0.25",
                "linewidth": 1.0,
                "mutation_scale": 9,
                "shrinkA": 1,
                "shrinkB": 1,
                "patchA": texts[a].get_bbox_patch(),
                "patchB": texts[b].get_bbox_patch(),
            },
        )
    xs = [x for x, _ in pos.values()]
    ax.set_xlim(min(xs) - 0.75, max(xs) + 0.75)
    ax.set_ylim(-(n_ranks - 1) - 0.45, 0.45)
    ax.axis("off")
    if title:
        ax.set_title(title)
    return fig
