"""Default output names: the input file's stem and the view, safe characters only."""
import pytest


@pytest.mark.parametrize("source, ext, view, expected", [
    ("graphs/seed_demo.yaml", "svg", "", "seed_demo.svg"),
    ("exports/bert.v2.onnx", "png", "collapsed", "bert.v2.collapsed.png"),
    ("a b/we ird$name.onnx", "dot", "compare-greedy-mark", "we_ird_name.compare-greedy-mark.dot"),
    ("models/x.onnx", "svg", "step_007", "x.step_007.svg"),
    ("", "svg", "", "graph.svg"),
    ("../", "svg", "", "graph.svg"),
    (".hidden", "svg", "", "hidden.svg"),
])
def test_output_name(source, ext, view, expected):
    from xcviz.render.names import output_name

    assert output_name(source, ext, view) == expected


def test_stem_is_bounded_and_falls_back_to_the_graph_name():
    from xcviz.render.names import file_stem

    assert len(file_stem("x" * 300 + ".onnx")) == 100
    assert file_stem(None, "main graph") == "main_graph"
