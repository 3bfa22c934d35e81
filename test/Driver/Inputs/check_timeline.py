"""Checks timeline files of pipecc against the trace format (docs/cli.md,
"Timelines") and prints a short summary for FileCheck.

  check_timeline.py json FILE   trace JSON: one named thread per rank,
                                complete events with known categories
  check_timeline.py svg FILE    SVG: well-formed XML, rows per timeline
"""
import json
import sys
import xml.etree.ElementTree as ET

CATEGORIES = {"F", "B", "W", "BW", "send", "recv", "wait", "allreduce",
              "optimizer"}


def check_json(path):
    with open(path) as f:
        trace = json.load(f)
    other = trace["otherData"]
    ranks = other["ranks"]
    threads = sorted(e["tid"] for e in trace["traceEvents"]
                     if e["ph"] == "M" and e["name"] == "thread_name")
    assert threads == list(range(ranks)), threads
    compute = {}
    for e in trace["traceEvents"]:
        if e["ph"] != "X":
            continue
        assert e["cat"] in CATEGORIES, e
        assert 0 <= e["tid"] < ranks, e
        assert e["ts"] >= 0 and e["dur"] >= 0, e
        # ts and dur are written to the nanosecond.
        assert e["ts"] + e["dur"] <= other["makespan_s"] * 1e6 + 2e-3, e
        if e["cat"] in ("F", "B", "W", "BW"):
            assert e["name"] == e["cat"] + str(e["args"]["microbatch"]), e
            compute[e["tid"]] = compute.get(e["tid"], 0) + 1
    # Compute on one rank never overlaps.
    for rank in range(ranks):
        spans = sorted((e["ts"], e["ts"] + e["dur"]) for e in
                       trace["traceEvents"] if e["ph"] == "X" and
                       e["tid"] == rank and e["cat"] in ("F", "B", "W", "BW"))
        for (_, end), (start, _) in zip(spans, spans[1:]):
            assert start >= end - 1e-6, (rank, end, start)
    print("source %s schedule %s ranks %d threads %d" %
          (other["source"], other["schedule"], ranks, len(threads)))
    print("compute per rank: %s" %
          " ".join(str(compute.get(r, 0)) for r in range(ranks)))


def check_svg(path):
    root = ET.parse(path).getroot()
    ns = "{http://www.w3.org/2000/svg}"
    assert root.tag == ns + "svg", root.tag
    timelines = root.findall(ns + "g[@class='timeline']")
    rows = [len(t.findall(ns + "g[@class='rank']")) for t in timelines]
    boxes = sum(len(t.findall(ns + "rect")) for t in timelines)
    labels = [t.text for t in root.iter(ns + "text")]
    print("svg timelines %d rows %s" % (len(timelines), rows))
    print("title: %s" % labels[0])
    assert boxes > 0 and any(label == "time (s)" or
                             (label or "").startswith("time (")
                             for label in labels)


if __name__ == "__main__":
    {"json": check_json, "svg": check_svg}[sys.argv[1]](sys.argv[2])
