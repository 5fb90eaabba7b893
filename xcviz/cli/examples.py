"""An example or two per command, shown at the end of its --help (every command has some: a test walks them)."""
from __future__ import annotations

EXAMPLES: dict[str, list[str]] = {
    "cluster": ["xcviz cluster model.onnx --dim batch=8",
                "xcviz cluster model.onnx --deny Softmax --sort bytes --json -o clusters.json"],
    "stats": ["xcviz stats model.onnx --inputs inputs.npz", "xcviz stats graphs/seed_demo.yaml --device gpu --json"],
    "explain": ["xcviz explain resnet18.onnx /fc/Gemm", "xcviz explain graphs/seed_demo.yaml m1 --all"],
    "ops": ["xcviz ops Conv", "xcviz ops 'conv*' --framework onnx", "xcviz ops --framework tf --unsupported --device gpu"],
    "render": ["xcviz render model.onnx -o model.svg", "xcviz render model.onnx --compare greedy,mark --png",
               "xcviz render graphs/seed_demo.yaml --min-cluster-size 1 --animate steps.html"],
    "validate": ["xcviz validate model.onnx --inputs inputs.npz", "xcviz validate model.onnx --dim batch=1 --auto-fallback"],
    "hlo": ["xcviz hlo model.onnx --cluster 0", "xcviz hlo model.onnx --cluster cluster_1 --stage stablehlo --dim batch=4"],
    "run": ["xcviz run model.onnx --inputs inputs.npz -o outputs.npz --check"],
    "print": ["xcviz print model.onnx | less", "xcviz print model.onnx --weights -o model.xcir"],
    "export": ["xcviz export model.onnx --graphdef model.pbtxt", "xcviz export model.onnx --model-explorer overlays/"],
    "diff": ["xcviz diff model.onnx --b strategy=greedy", "xcviz diff v1.onnx v2.onnx --json"],
    "check": ["xcviz check model.onnx --min-coverage 80% --max-boundary-bytes 1MiB",
              "xcviz check model.onnx --baseline cluster.json --max-regression 5%"],
    "sweep": ["xcviz sweep models/ --dim batch=1 --jobs 4", "xcviz sweep models/ --set strategy=greedy --set strategy=mark --csv"],
    "report": ["xcviz report model.onnx -o model.html", "xcviz report model.onnx --inputs inputs.npz"],
    "compare-fx": ["xcviz compare-fx program.pt2"],
    "census": ["xcviz census timm:resnet* hf:bert hf:llama -o zoo.jsonl --report zoo.html",
               "xcviz census models/ -o zoo.jsonl --resume", "xcviz census hf:t5 -o zoo.jsonl --executor dask"],
    "compile-report": ["xcviz compile-report my_model.py:make", "xcviz compile-report my_model.py:make --mode hybrid --report out/",
                       "xcviz compile-report my_model.py:make --json"],
    "calibrate": ["xcviz calibrate -o my_gpu.yaml", "xcviz stats model.onnx --hardware my_gpu.yaml"],
}


def epilog(name: str) -> str | None:
    lines = EXAMPLES.get(name)
    return None if not lines else "\n".join(lines)
