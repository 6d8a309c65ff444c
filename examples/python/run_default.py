#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Runs a jetpipe config (config/default.yaml by default) from Python and prints one line a frame,
then feeds one numpy frame through a histogram built in code.

    PYTHONPATH=build/python examples/python/run_default.py [CONFIG [URI]]
"""
import pathlib
import sys

import numpy as np

import jetpipe


def main():
    root = pathlib.Path(__file__).resolve().parents[2]
    config = sys.argv[1] if len(sys.argv) > 1 else str(root / "config" / "default.yaml")
    uri = sys.argv[2] if len(sys.argv) > 2 else ""  # "": the config's input
    try:
        pipeline = jetpipe.Pipeline.from_file(config)
    except jetpipe.ConfigError as e:  # file, line, column, key: where the config is wrong
        print(f"{e.file}:{e.line}: key {e.key}: {e}", file=sys.stderr)
        return 2
    print(f"jetpipe {jetpipe.__version__}, platform {pipeline.platform}", file=sys.stderr)
    with pipeline, pipeline.open(uri) as source:
        for record in source:  # Ctrl-C stops the source between frames
            if "error" in record:
                print(f"frame {record['frame']}: {record['error']}")
                continue
            stats = record["results"].get("stats", {})
            corners = record["results"].get("corners", {}).get("count", 0)
            print(f"frame {record['frame']} {record['source']}: mean {stats.get('mean', 0):.2f}, "
                  f"{corners} corners")
        print(f"{source.stats['processed']} frames", file=sys.stderr)

    # One numpy frame (H×W×3 BGR uint8; gray H×W and BGRx H×W×4 work alike) through a histogram.
    hist = jetpipe.Pipeline.builder().stage("to_gray").stage("histogram", bins=16).build()
    frame = np.zeros((480, 640, 3), np.uint8)
    frame[:, 320:] = 255
    bins = hist.process(frame)["results"]["histogram"]["bins"]
    print("16-bin histogram of a half-white frame:", bins)
    return 0


if __name__ == "__main__":
    sys.exit(main())
