"""An ipywidgets view of a result: a Split/Unified toggle above the HTML view.

Not part of what ``%%ms_port`` or ``%%ms_parity`` display: their output is the
self-sufficient ``text/html`` of :mod:`msmagic.render.html`, which already holds both
layouts as ``<details>`` and survives saving, reopening without a kernel and untrusted
notebooks. A widget view does none of that (it needs the live kernel, or stored widget
state and a widget manager), so it is only for who asks for it:
``display(make_widget(result))``.

Core ipywidgets only (ToggleButtons, HTML, VBox): no custom widget JavaScript, nothing
fetched from a CDN. The toggle opens the chosen layout's ``<details>``; rule badges open
in the browser without any kernel round trip.
"""

from __future__ import annotations

from . import VIEWS, resolve_view
from .html import render_html


def make_widget(result, view=None):
    """A VBox (class ``msm-widget``) holding a ToggleButtons (class
    ``msm-view-toggle``) and an HTML widget whose value is ``render_html`` for the
    selected view."""
    return view_toggle_widget(lambda v: render_html(result, view=v), resolve_view(result, view))


def view_toggle_widget(render, initial: str, classes=()):
    """A Split/Unified toggle above an HTML widget showing ``render(view)``; each view
    is rendered once, when first shown."""
    import ipywidgets as widgets

    cache: dict[str, str] = {}

    def html_for(v: str) -> str:
        if v not in cache:
            cache[v] = render(v)
        return cache[v]

    toggle = widgets.ToggleButtons(
        options=[(v.capitalize(), v) for v in VIEWS],
        value=initial,
        tooltips=["PyTorch and MindSpore side by side", "One column of -/+ lines"],
        style={"button_width": "auto"},
    )
    toggle.add_class("msm-view-toggle")
    body = widgets.HTML(value=html_for(initial))
    body.add_class("msm-widget-html")

    def on_change(change) -> None:
        body.value = html_for(change["new"])

    toggle.observe(on_change, names="value")
    box = widgets.VBox([toggle, body])
    box.add_class("msm-widget")
    for cls in classes:
        box.add_class(cls)
    return box
