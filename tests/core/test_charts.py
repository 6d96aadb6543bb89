"""core.charts (issue 21 part 5): the SVG charts every page draws — series present, legend
swatches in the series' colours, a title, a description and the numbers as a table (the
text alternative), nothing drawn for nothing, labels that cannot collide, colours that
pass contrast and stay apart. Pure: no database."""

from __future__ import annotations

import itertools
import re

from core.charts import (
    PALETTE,
    WIDTH,
    bar_chart,
    contrast,
    counts_chart,
    line_chart,
    nice_ceiling,
    percent_format,
)


def _lab(hex_colour: str) -> tuple[float, float, float]:
    """CIE L*a*b* (D65) of a #rrggbb colour."""
    rgb = [int(hex_colour[i:i + 2], 16) / 255 for i in (1, 3, 5)]
    r, g, b = [((c + 0.055) / 1.055) ** 2.4 if c > 0.04045 else c / 12.92 for c in rgb]
    xyz = (0.4124 * r + 0.3576 * g + 0.1805 * b) / 0.95047, 0.2126 * r + 0.7152 * g + 0.0722 * b, \
        (0.0193 * r + 0.1192 * g + 0.9505 * b) / 1.08883
    f = [t ** (1 / 3) if t > 0.008856 else 7.787 * t + 16 / 116 for t in xyz]
    return 116 * f[1] - 16, 500 * (f[0] - f[1]), 200 * (f[1] - f[2])


def test_every_colour_reaches_3_to_1_on_the_white_card_and_no_two_look_alike():
    assert len(set(PALETTE)) == len(PALETTE) == 8
    for c in PALETTE:
        assert contrast(c, "#ffffff") >= 3.0, c
    for a, b in itertools.combinations(PALETTE, 2):
        distance = sum((x - y) ** 2 for x, y in zip(_lab(a), _lab(b))) ** 0.5
        assert distance >= 20, (a, b, distance)
    assert round(contrast("#000000", "#ffffff"), 1) == 21.0 and contrast("#777777", "#777777") == 1.0


def test_a_line_chart_has_every_series_a_legend_in_their_colours_and_a_text_alternative():
    html = line_chart(["2026-11-01", "2026-11-02", "2026-11-04"], {"active": [3, 5, 8], "candidate": [1, None, 2]},
                      title="Memories by status", description="Three days of memories.", totals=["8", "2"])
    svg, table = html.split("</svg>")
    assert svg.count("<polyline") == 2 and svg.count("<circle") == 5  # None: no dot that day
    assert re.search(r'<polyline points="[0-9.,]+ [0-9.,]+" fill="none" stroke="#c1440e"', svg)  # joins its 2 days
    series = re.findall(r'<g class="series" data-colour="(#[0-9a-f]{6})">', svg)
    swatches = re.findall(r'<rect class="swatch"[^>]* fill="(#[0-9a-f]{6})"', svg)
    assert series == swatches == list(PALETTE[:2])
    assert re.search(r'<polyline points="[^"]+" fill="none" stroke="#c1440e" stroke-width="2" stroke-dasharray="6 3"',
                     svg)  # the second line also differs by its dashes
    assert 'role="img"' in svg and "<title id=" in svg and "<desc id=" in svg and "Three days of memories." in svg
    labelled = re.search(r'aria-labelledby="([^"]+)"', svg).group(1).split()
    assert all(f'id="{i}"' in svg for i in labelled)
    assert ">active (8)</text>" in svg and ">candidate (2)</text>" in svg
    assert "<summary>The numbers</summary>" in table
    assert '<tr><th scope="row">2026-11-02</th><td>5</td><td>—</td></tr>' in table
    # the gap between the 2nd and the 4th is drawn as one: x by date
    xs = [float(x) for x in re.findall(r'<circle cx="([0-9.]+)"', svg)[:3]]
    assert abs((xs[2] - xs[1]) - 2 * (xs[1] - xs[0])) < 0.2


def test_one_day_of_data_spreads_the_dots_and_keeps_the_labels_apart():
    html = line_chart(["2026-11-25"], {"a": [0.5], "b": [0.5], "c": [0.5]}, title="Precision", fmt=percent_format,
                      top=1)
    xs = [float(x) for x in re.findall(r'<circle cx="([0-9.]+)"', html)]
    assert len(set(xs)) == 3 and min(abs(a - b) for a, b in itertools.combinations(xs, 2)) >= 8  # r = 3.5
    assert html.count(">2026-11-25</text>") == 1  # one x label, centred
    assert html.count("<polyline") == 3 and len(re.findall(r'<polyline points="[0-9.]+,[0-9.]+" ', html)) == 3
    legend_top = min(float(y) for y in re.findall(r'<rect class="swatch" x="[0-9.]+" y="([0-9.]+)"', html))
    x_label = float(re.search(r'y="([0-9.]+)" class="axis" text-anchor="middle">2026-11-25<', html).group(1))
    assert legend_top > x_label  # the legend is under the x label (its baseline), not on the plot


def test_many_days_label_only_the_first_and_last_so_labels_never_overlap():
    days = [f"2026-11-{d:02d}" for d in range(1, 31)]
    html = bar_chart(days, {"n": list(range(30))}, title="Per day")
    labels = re.findall(r'<text x="([0-9.]+)" y="[0-9.]+" class="axis"(?: text-anchor="(\w+)")?>(2026-[^<]+)</text>',
                        html)
    assert [(anchor, text) for _, anchor, text in labels] == [("", "2026-11-01"), ("end", "2026-11-30")]
    assert float(labels[1][0]) <= WIDTH


def test_bars_stack_their_series_in_proportion_and_zero_draws_no_bar():
    html = bar_chart(["Mon", "Tue"], {"accepted": [3, 0], "rejected": [1, 0]}, title="Decisions",
                     totals=["3", "1"])
    rects = re.findall(r'<rect x="[0-9.]+" y="([0-9.]+)" width="[0-9.]+" height="([0-9.]+)" fill="(#\w+)">'
                       r"<title>([^<]+)</title>", html)
    assert [(fill, title) for _, _, fill, title in rects] == [(PALETTE[0], "Mon: 3 accepted"),
                                                             (PALETTE[1], "Mon: 1 rejected")]
    (y_a, h_a, _, _), (y_r, h_r, _, _) = rects
    assert abs(float(h_a) - 3 * float(h_r)) < 0.2 and abs(float(y_r) + float(h_r) - float(y_a)) < 0.2  # on top
    assert html.count('class="legend-item"') == 2 and ">Mon</text>" in html and ">Tue</text>" in html
    assert "<td>0</td><td>0</td>" in html  # Tuesday is in the table
    single = bar_chart(["a"], {"only": [2]}, title="One series")
    assert 'class="legend-item"' not in single  # a single series needs no legend


def test_nothing_to_draw_is_an_empty_string_and_names_are_escaped():
    assert line_chart([], {"a": []}, title="x") == "" and line_chart(["2026-11-01"], {}, title="x") == ""
    assert line_chart(["2026-11-01"], {"a": [None]}, title="x") == ""
    assert bar_chart([], {}, title="x") == ""
    assert counts_chart([], {}, label="x") == ""
    html = line_chart(["<d>"], {"<b>rule</b>": [1]}, title="<t>", description="&")
    assert "<b>" not in html and "&lt;b&gt;rule&lt;/b&gt;" in html and "<title id=\"chart-" in html and "&amp;" in html


def test_axis_tops_are_round_numbers():
    assert [nice_ceiling(v) for v in (0, 0.3, 1, 3, 7, 11, 240, 2600)] == [1, 0.5, 1, 5, 10, 20, 250, 5000]
    html = line_chart(["2026-11-01", "2026-11-02"], {"a": [0, 1]}, title="x")
    assert [t for t in re.findall(r'class="axis" text-anchor="end">([^<]+)</text>', html)] == ["0", "1"]  # no "0.5"
