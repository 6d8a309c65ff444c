# SPDX-License-Identifier: MIT
# Live sources from Python: Ctrl-C while a source waits for a frame (stalled, reconnecting,
# opening), and several inputs at once (Pipeline.open_inputs). python/README.md, "Live sources".
import os
import signal
import socket
import threading
import time

import numpy as np
import pytest

import jetpipe


def gray_pipeline(extra=""):
    return jetpipe.Pipeline.from_yaml(
        extra + "platform: cpu\nstages:\n  - {type: histogram, name: hist, bins: 16}\n"
        "  - {type: stats, name: stats}\n")


def free_udp_port():
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def needs_rtp(p, uri):
    """The source opened, or the test skipped where this build cannot listen for RTP."""
    if not jetpipe.info()["build"]["gstreamer"]:
        pytest.skip("built without GStreamer: no live network source")
    try:
        return p.open(uri)
    except jetpipe.InputError as e:  # no H.264 decoder installed, say
        pytest.skip(f"rtp:// cannot be opened here: {e}")


def ctrl_c_after(seconds):
    """Sends this process SIGINT after `seconds`, as Ctrl-C in a terminal would."""
    t = threading.Timer(seconds, os.kill, (os.getpid(), signal.SIGINT))
    t.start()
    return t


def test_ctrl_c_stops_a_stalled_live_source():
    p = gray_pipeline()
    src = needs_rtp(p, f"rtp://127.0.0.1:{free_udp_port()}")  # nothing is ever sent
    assert src.live
    t0 = time.monotonic()
    ctrl_c_after(0.5)
    with pytest.raises(KeyboardInterrupt):
        next(src)  # the stall limit is 10 s, then reconnects: only Ctrl-C ends this soon
    assert time.monotonic() - t0 < 3.0
    assert list(src) == []  # stopped for good
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler  # put back
    frame = np.random.default_rng(1).integers(0, 256, (37, 53), np.uint8)
    assert sum(p.process(frame)["results"]["hist"]["bins"]) == 37 * 53  # the pipeline goes on


def test_ctrl_c_during_a_reconnect_wait():
    port = free_udp_port()
    p = jetpipe.Pipeline.from_yaml(
        f"inputs:\n  - name: cam\n    uri: rtp://127.0.0.1:{port}\n    timeout_s: 0.2\n"
        "    reconnect: {attempts: 5, delay_ms: 20000}\n"
        "platform: cpu\nstages:\n  - {type: stats, name: stats}\n")
    src = needs_rtp(p, "")  # the config's one input, with its own timeout_s and reconnect
    t0 = time.monotonic()
    ctrl_c_after(1.0)  # the stall ends at 0.2 s; the reopen waits 20 s
    with pytest.raises(KeyboardInterrupt):
        next(src)
    assert 0.9 < time.monotonic() - t0 < 4.0


def test_ctrl_c_between_frames_of_a_file_source():
    p = gray_pipeline()
    src = p.open("test://noise?w=64&h=48&frames=1000000&format=gray8")
    got = 0
    ctrl_c_after(0.3)
    with pytest.raises(KeyboardInterrupt):
        for _ in src:
            got += 1
    assert got > 0
    # KeyboardInterrupt may come while Python code runs (not inside next()): the source is then
    # left as it was; close() (or `with`) ends it.
    src.close()
    assert list(src) == []


def test_a_handler_of_the_programs_own_is_left_alone():
    p = jetpipe.Pipeline.from_yaml(
        f"inputs:\n  - name: cam\n    uri: rtp://127.0.0.1:{free_udp_port()}\n"
        "    timeout_s: 0.6\n    reconnect: {attempts: 0}\n"
        "platform: cpu\nstages:\n  - {type: stats, name: stats}\n")
    src = needs_rtp(p, "")
    seen = []
    old = signal.signal(signal.SIGINT, lambda sig, frame: seen.append(sig))
    try:
        ctrl_c_after(0.2)
        t0 = time.monotonic()
        with pytest.raises(jetpipe.InputError, match="cam|no frame|stall"):
            next(src)  # not stopped by Ctrl-C: the program said what Ctrl-C does
        assert time.monotonic() - t0 >= 0.5
        assert seen == [signal.SIGINT]
    finally:
        signal.signal(signal.SIGINT, old)


def test_several_inputs_each_in_order_and_named():
    p = gray_pipeline()
    uris = {"a": "test://blobs?w=96&h=64&frames=7&format=gray8",
            "b": "test://noise?w=33&h=17&frames=11&format=gray8",
            "c": "test://checker?w=40&h=30&frames=5&format=gray8"}
    inputs = p.open_inputs([f"{n}={u}" for n, u in uris.items()])
    records = list(inputs)
    assert len(records) == 7 + 11 + 5
    for name, uri in uris.items():
        mine = [r for r in records if r["input"] == name]
        assert [r["frame"] for r in mine] == list(range(len(mine)))
        alone = list(gray_pipeline().open(uri))  # the same frames through a pipeline of its own
        assert [r["results"] for r in mine] == [r["results"] for r in alone]
    assert inputs.stats["read"] == 23 and inputs.stats["processed"] == 23
    assert inputs.stats["source_error"] == ""
    states = {s["name"]: s for s in inputs.inputs}
    assert states["b"]["read"] == 11 and states["b"]["ended"] == "end"
    assert states["a"]["uri"] == uris["a"] and states["a"]["opened"]
    assert list(inputs) == []
    assert p.process(np.full((5, 7), 9, np.uint8))["results"]["stats"]["mean"] == 9


def test_several_inputs_from_the_config_and_max_frames():
    p = jetpipe.Pipeline.from_yaml(
        "inputs:\n  - {name: left, uri: 'test://gradient?w=32&h=24&frames=100'}\n"
        "  - {name: right, uri: 'test://noise?w=32&h=24&frames=100'}\n"
        "platform: cpu\nstages:\n  - {type: stats, name: stats}\n")
    with pytest.raises(jetpipe.ConfigError, match="several inputs"):
        p.open()
    inputs = p.open_inputs(max_frames=4)
    names = sorted(r["input"] for r in inputs)
    assert names == ["left"] * 4 + ["right"] * 4
    assert {s["ended"] for s in inputs.inputs} == {"max_frames"}


def test_an_input_that_fails_leaves_the_others_running():
    p = gray_pipeline()
    inputs = p.open_inputs(["good=test://blobs?w=32&h=24&frames=6", "bad=/no/such/folder/x.y4m"])
    got = []
    with pytest.raises(jetpipe.InputError, match="bad"):
        for r in inputs:
            got.append(r)
    assert [r["frame"] for r in got if r["input"] == "good"] == list(range(6))
    states = {s["name"]: s for s in inputs.inputs}
    assert states["bad"]["ended"] == "open_failed" and "x.y4m" in states["bad"]["error"]
    assert states["good"]["ended"] == "end"


def test_several_inputs_bad_arguments():
    p = gray_pipeline()
    with pytest.raises(jetpipe.InputError):  # none can be opened
        p.open_inputs(["/no/such/a.y4m", "/no/such/b.y4m"])
    with pytest.raises(jetpipe.ConfigError, match="given twice|unique"):
        p.open_inputs(["x=test://noise", "x=test://blobs"])
    with pytest.raises(jetpipe.ConfigError, match="empty"):
        p.open_inputs([])
    with pytest.raises(jetpipe.ConfigError, match="no input"):
        p.open_inputs()
    with pytest.raises(TypeError):
        p.open_inputs("test://noise")  # a list of URIs, not one


def test_several_inputs_one_at_a_time_and_closed():
    p = gray_pipeline()
    inputs = p.open_inputs(["a=test://noise?w=16&h=16&frames=1000000"])
    assert next(inputs)["input"] == "a"
    with pytest.raises(RuntimeError, match="being iterated"):
        next(p.open("test://blobs?w=8&h=8&frames=2"))
    inputs.close()
    assert list(inputs) == []
    assert [r["frame"] for r in p.open("test://blobs?w=8&h=8&frames=2")] == [0, 1]
    again = p.open_inputs(["a=test://noise?w=16&h=16&frames=1000000"])
    next(again)
    p.close()
    with pytest.raises(RuntimeError, match="after close"):
        next(again)


def test_ctrl_c_stops_several_inputs_with_one_stalled():
    p = gray_pipeline()
    if not jetpipe.info()["build"]["gstreamer"]:
        pytest.skip("built without GStreamer: no live network source")
    try:
        inputs = p.open_inputs([f"cam=rtp://127.0.0.1:{free_udp_port()}",
                                "file=test://noise?w=32&h=24&frames=3&format=gray8"])
    except jetpipe.InputError as e:
        pytest.skip(f"rtp:// cannot be opened here: {e}")
    got = [next(inputs) for _ in range(3)]  # the file's frames come while the camera stalls
    assert {r["input"] for r in got} == {"file"}
    t0 = time.monotonic()
    ctrl_c_after(0.5)
    with pytest.raises(KeyboardInterrupt):
        next(inputs)
    assert time.monotonic() - t0 < 3.0
    assert {s["name"]: s["ended"] for s in inputs.inputs}["cam"] == "stopped"
