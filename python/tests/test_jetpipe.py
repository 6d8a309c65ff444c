# SPDX-License-Identifier: MIT
# The Python module against the CLI and the C++ API's contract (python/README.md). ctest runs it
# with PYTHONPATH at the built module, JETPIPE_CLI at the built `jetpipe` and JETPIPE_SOURCE_DIR.
import gc
import json
import os
import pathlib
import subprocess
import sys
import threading

import numpy as np
import pytest

import jetpipe

SRC = pathlib.Path(os.environ.get("JETPIPE_SOURCE_DIR", pathlib.Path(__file__).resolve().parents[2]))
REGRESSION = SRC / "tests" / "regression"
CONFIGS = sorted((REGRESSION / "configs").glob("*.yaml"))
CLI = os.environ.get("JETPIPE_CLI", "")


def read_pnm(path):
    """A P5 / P6 frame (the regression frames) as H×W or H×W×3 (BGR) uint8."""
    data = path.read_bytes()
    fields, pos = [], 0
    while len(fields) < 4:
        while data[pos : pos + 1].isspace():
            pos += 1
        if data[pos : pos + 1] == b"#":
            pos = data.index(b"\n", pos)
            continue
        end = pos
        while not data[end : end + 1].isspace():
            end += 1
        fields.append(data[pos:end])
        pos = end
    pos += 1
    magic, w, h = fields[0], int(fields[1]), int(fields[2])
    c = 3 if magic == b"P6" else 1
    a = np.frombuffer(data, np.uint8, w * h * c, pos).reshape((h, w, c) if c == 3 else (h, w))
    return a[:, :, ::-1].copy() if c == 3 else a.copy()  # PPM is RGB; frames are BGR


FRAMES = sorted((REGRESSION / "frames").iterdir())


def histogram_pipeline(**kw):
    return (jetpipe.Pipeline.builder().platform("cpu").stage("to_gray", name="gray")
            .stage("histogram", name="hist", bins=64).stage("stats", name="stats", input="gray")
            .stage("gaussian", name="blur", input="gray", ksize=5, border="reflect")
            .stage("histogram", name="hblur").build())


def test_version_info_stages():
    assert jetpipe.__version__.count(".") == 2
    info = jetpipe.info()
    assert info["version"] == jetpipe.__version__
    assert isinstance(info["build"]["cuda"], bool)
    assert "histogram" in info["stage_types"]
    assert "cpu" in info["profiles"]
    assert "name" in info["auto"] or "error" in info["auto"]
    stages = {s["type"]: s for s in jetpipe.stages()}
    assert set(info["stage_types"]) == set(stages)
    bins = [p for p in stages["histogram"]["params"] if p["key"] == "bins"][0]
    assert bins["default"] == "256"
    if CLI:
        out = subprocess.run([CLI, "--version"], capture_output=True, text=True).stdout
        assert jetpipe.__version__ in out


@pytest.mark.skipif(not CLI, reason="JETPIPE_CLI not set (ctest sets it)")
@pytest.mark.parametrize("config", CONFIGS, ids=[c.stem for c in CONFIGS])
def test_regression_configs_equal_cli(config, tmp_path):
    subprocess.run([CLI, "run", "--config", str(config), "--output-dir", str(tmp_path)], check=True,
                   capture_output=True)
    cli = [json.loads(line) for line in (tmp_path / "results.jsonl").read_text().splitlines()]
    with jetpipe.Pipeline.from_file(str(config)) as p:
        records = list(p.open())
    assert len(records) == len(cli) == len(FRAMES)
    assert records == cli  # every number bit for bit (JSON round-trips doubles)


@pytest.mark.parametrize("config", CONFIGS, ids=[c.stem for c in CONFIGS])
def test_numpy_frames_equal_the_source(config):
    with jetpipe.Pipeline.from_file(str(config)) as p:
        from_source = list(p.open())
        for i, f in enumerate(FRAMES):
            r = p.process(read_pnm(f), index=i, source=f.name)
            assert r == from_source[i]


def test_odd_strides_read_in_place_or_copied():
    p = histogram_pipeline()
    base = read_pnm(FRAMES[0])
    gray = np.ascontiguousarray(base[:, :, 1])
    cases = {
        "cols": base[:, 1:-1], "rows": base[::2], "rows_cols": base[1::3, 3:-5],
        "gray_cols": gray[:, 1:-1], "gray_rows": gray[::2],
        "pixel_stride": base[:, ::2], "flipped": base[::-1], "gray_fortran": np.asfortranarray(gray),
    }
    for name, a in cases.items():
        got = p.process(a)
        want = p.process(np.ascontiguousarray(a))
        assert got == want, name
        assert got["width"] == a.shape[1] and got["height"] == a.shape[0]


def test_every_format():
    p = histogram_pipeline()
    bgr = read_pnm(FRAMES[1])
    want = p.process(bgr)
    x = np.random.default_rng(1).integers(0, 256, bgr.shape[:2], dtype=np.uint8)[..., None]
    bgrx = np.concatenate([bgr, x], axis=2)
    rgbx = np.concatenate([bgr[:, :, ::-1], x], axis=2)
    assert p.process(bgrx) == want
    assert p.process(bgrx, format="bgrx8") == want
    assert p.process(rgbx, format="rgbx8") == want
    assert p.process(rgbx, format="rgba8") == want
    assert p.process(np.ascontiguousarray(bgr[:, :, ::-1]), format="rgb8") == want
    assert p.process(bgrx[:, 1:-1]) == p.process(bgr[:, 1:-1])  # 4-byte pixels, padded rows
    gray = p.process(np.ascontiguousarray(bgr[:, :, 0]))
    assert gray["results"]["hist"]["bins"] != want["results"]["hist"]["bins"]
    with pytest.raises(jetpipe.InputError, match="does not fit"):
        p.process(bgrx, format="rgb8")
    with pytest.raises(jetpipe.InputError, match="uint8"):
        p.process(bgr.astype(np.float32))
    with pytest.raises(jetpipe.InputError, match="channels"):
        p.process(np.zeros((4, 4, 2), np.uint8))


def test_histogram_from_numpy_frame():
    p = jetpipe.Pipeline.builder().stage("to_gray").stage("histogram", bins=16).build()
    r = p.process(np.full((48, 64, 3), 200, np.uint8))
    assert r["results"]["histogram"]["bins"][200 * 16 // 256] == 48 * 64
    assert sum(r["results"]["histogram"]["bins"]) == 48 * 64


class FakeCudaArray:
    def __init__(self, shape=(480, 640, 3)):
        self.__cuda_array_interface__ = {"shape": shape, "typestr": "|u1", "data": (0x7F0000000000, False),
                                         "strides": None, "version": 3, "stream": 1}


@pytest.mark.skipif(jetpipe.info()["build"]["cuda"], reason="CPU builds only (GPU: see python/README)")
def test_cuda_array_interface_on_cpu_build():
    p = histogram_pipeline()
    with pytest.raises(jetpipe.InputError, match="built without CUDA") as e:
        p.process(FakeCudaArray())
    assert "cupy.asnumpy" in str(e.value)
    with pytest.raises(jetpipe.InputError, match="typestr"):
        a = FakeCudaArray()
        a.__cuda_array_interface__["typestr"] = "<f4"
        p.process(a)


def test_config_error_carries_place(tmp_path):
    cfg = tmp_path / "bad.yaml"
    cfg.write_text("platform: cpu\nstages:\n  - {type: to_gray}\n  - {type: histogram, bins: 1000}\n")
    with pytest.raises(jetpipe.ConfigError) as e:
        jetpipe.Pipeline.from_file(str(cfg))
    assert (e.value.file, e.value.line, e.value.key, e.value.stage) == (str(cfg), 4, "bins", "histogram")
    assert e.value.column > 1
    assert isinstance(e.value, RuntimeError) and isinstance(e.value, jetpipe.Error)
    with pytest.raises(jetpipe.ConfigError) as e:
        jetpipe.Pipeline.from_yaml("stages:\n  - {type: to_gray, colour: 3}\n")
    assert (e.value.file, e.value.line, e.value.key) == ("<yaml>", 2, "colour")
    with pytest.raises(jetpipe.ConfigError) as e:
        jetpipe.Pipeline.from_yaml("stages: [\n")
    assert e.value.file == "<yaml>" and e.value.line is not None and e.value.key is None
    with pytest.raises(jetpipe.ConfigError) as e:
        jetpipe.Pipeline.builder().stage("gaussian", ksize=4).build()
    assert (e.value.file, e.value.key) == ("<builder>", "ksize")
    with pytest.raises(jetpipe.ConfigError, match="no stages"):
        jetpipe.Pipeline.builder().build()
    with pytest.raises(jetpipe.ConfigError, match="no image named"):
        histogram_pipeline().keep_images(["nope"])
    with pytest.raises(jetpipe.ConfigError):
        jetpipe.Pipeline.from_file(str(tmp_path / "missing.yaml"))


def test_input_error():
    p = histogram_pipeline()
    with pytest.raises(jetpipe.InputError):
        p.open(str(SRC / "no-such-folder" / "*.png"))
    with pytest.raises(jetpipe.InputError):
        p.process("not a frame")


def test_builder_values():
    b = (jetpipe.Pipeline.builder().input("test://gradient?w=64&h=48&frames=3").stage("to_gray")
         .stage("convolve", kernel=[[0, -1, 0], [-1, 5, -1], [0, -1, 0]], delta=0.5)
         .stage("threshold", value="otsu").stage("histogram", range=(0, 128), bins=4))
    text = b.yaml()
    assert "kernel: [[0, -1, 0], [-1, 5, -1], [0, -1, 0]]" in text and 'value: "otsu"' in text
    records = list(b.build().open())
    assert [r["frame"] for r in records] == [0, 1, 2]
    assert sum(records[0]["results"]["histogram"]["bins"]) <= 64 * 48
    with pytest.raises(TypeError):
        jetpipe.Pipeline.builder().stage("histogram", bins={"a": 1})


def test_closed_pipeline_raises():
    p = histogram_pipeline()
    src = p.open("test://noise?w=32&h=32&frames=5")
    next(src)
    p.close()
    assert p.closed
    for use in (lambda: p.process(np.zeros((8, 8), np.uint8)), lambda: p.open("test://noise"),
                lambda: next(src), lambda: p.keep_images([]), lambda: p.platform):
        with pytest.raises(RuntimeError, match="after close"):
            use()
    p.close()  # twice: no error
    with histogram_pipeline() as q:
        pass
    assert q.closed


def test_kept_images_outlive_the_pipeline():
    p = histogram_pipeline()
    p.keep_images(["gray", "blur", "frame"])
    frame = read_pnm(FRAMES[0])
    r = p.process(frame)
    images = r["images"]
    assert set(images) == {"gray", "blur", "frame"}
    assert images["gray"].shape == frame.shape[:2] and images["gray"].dtype == np.uint8
    assert np.array_equal(images["frame"], frame)
    want = int(images["blur"].astype(np.int64).sum())
    del p, r
    gc.collect()
    assert int(images["blur"].astype(np.int64).sum()) == want
    s16 = jetpipe.Pipeline.builder().stage("to_gray").stage("sobel", dx=1, dy=0).build()
    s16.keep_images(["sobel"])
    assert s16.process(frame)["images"]["sobel"].dtype == np.int16


def test_source_records_and_stats():
    p = histogram_pipeline()
    src = p.open("test://blobs?w=96&h=64&frames=7")
    assert src.total in (7, None)
    assert [r["frame"] for r in src] == list(range(7))
    assert src.stats["processed"] == 7 and src.stats["source_error"] == ""
    assert list(src) == []  # ended
    with pytest.raises(RuntimeError, match="being iterated"):  # one source at a time
        a = p.open("test://noise?w=32&h=32&frames=3")
        next(a)
        p.process(np.zeros((8, 8), np.uint8))
    a.close()
    assert p.process(np.zeros((8, 8), np.uint8))["frame"] == 0


def test_source_from_two_threads_raises():
    p = jetpipe.Pipeline.builder().platform("cpu").stage("gaussian", ksize=31).build()
    src = p.open("test://noise?w=512&h=512&frames=20&format=gray8")
    errors, got = [], []

    def drain():
        while True:
            try:
                got.append(next(src))
            except StopIteration:
                return
            except RuntimeError as e:
                errors.append(str(e))

    threads = [threading.Thread(target=drain) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert any("two threads" in e for e in errors)
    assert sorted(r["frame"] for r in got) == list(range(20))


def rss_bytes():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def test_memory_flat_over_10000_frames():
    p = histogram_pipeline()
    p.keep_images(["gray"])
    frame = np.random.default_rng(2).integers(0, 256, (48, 64, 3), dtype=np.uint8)
    for i in range(1000):
        p.process(frame[:, 1:-1], index=i)
    before = rss_bytes()
    for i in range(10000):
        r = p.process(frame[:, 1:-1], index=i)
        assert r["frame"] == i
    grown = rss_bytes() - before
    assert grown < 4 << 20, f"RSS grew {grown} bytes over 10,000 frames"


class DlpackOnly:
    """A DLPack producer that is not a numpy array (as a torch CPU tensor would be)."""

    def __init__(self, a, device=None):
        self.a = a
        self.device = device
        self.calls = 0

    def __dlpack__(self, stream=None):
        self.calls += 1
        return self.a.__dlpack__()

    def __dlpack_device__(self):
        return self.device if self.device else self.a.__dlpack_device__()


def test_dlpack_frames_equal_numpy_frames():
    rng = np.random.default_rng()
    p = histogram_pipeline()
    for shape, fmt in [((37, 53), ""), ((37, 53, 3), ""), ((37, 53, 3), "rgb8"), ((37, 53, 4), "rgba8")]:
        a = rng.integers(0, 256, size=shape, dtype=np.uint8)
        base = sys.getrefcount(a)
        w = DlpackOnly(a)
        got = p.process(w, format=fmt)
        assert w.calls == 1
        assert got == p.process(a, format=fmt), (shape, fmt)
        del got, w
        assert sys.getrefcount(a) == base  # the tensor was released once the frame was done
    # A crop: rows apart, pixels of a row together: read in place as numpy's are.
    a = rng.integers(0, 256, size=(40, 60, 3), dtype=np.uint8)[3:-2, 5:-4]
    assert p.process(DlpackOnly(a)) == p.process(np.ascontiguousarray(a))


def test_dlpack_frames_refused_with_a_reason():
    p = histogram_pipeline()
    with pytest.raises(jetpipe.InputError, match="contiguous"):
        p.process(DlpackOnly(np.zeros((20, 30, 3), np.uint8)[:, ::2]))
    with pytest.raises(jetpipe.InputError, match="uint8"):
        p.process(DlpackOnly(np.ones((20, 30), np.float32)))
    with pytest.raises(jetpipe.InputError, match="device type 4"):
        p.process(DlpackOnly(np.ones((20, 30), np.uint8), device=(4, 0)))


@pytest.mark.skipif(jetpipe.info()["build"]["cuda"], reason="CPU builds only (GPU: see python/README)")
def test_dlpack_cuda_tensor_on_cpu_build():
    w = DlpackOnly(np.ones((20, 30), np.uint8), device=(2, 0))
    with pytest.raises(jetpipe.InputError, match="built without CUDA"):
        histogram_pipeline().process(w)
    assert w.calls == 0  # refused before the producer handed its tensor over


def test_numpy_imported_first():
    """A pip numpy 2.x wheel imported before jetpipe loaded libstdc++ bound to its own copies of
    some of its symbols, and the module crashed at its first std::ostream << double (python/
    CMakeLists.txt). Here in a fresh interpreter, whatever numpy this machine has."""
    code = ("import numpy, jetpipe; jetpipe.stages(); jetpipe.info();"
            "p = jetpipe.Pipeline.from_yaml('stages: [{type: stats}]', platform='cpu');"
            "r = p.process(numpy.full((5, 7), 3, numpy.uint8));"
            "assert r['results']['stats']['mean'] == 3.0, r; print('ok')")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0 and out.stdout.strip() == "ok", (out.returncode, out.stderr[-2000:])


def test_device_images_need_the_cuda_backend():
    p = histogram_pipeline()  # platform cpu
    with pytest.raises(jetpipe.ConfigError, match="backend cuda"):
        p.keep_images(["blur"], device=True)
    p.keep_images(["blur"])  # the host list is unaffected by the refused call
    assert p.process(np.zeros((9, 11), np.uint8))["images"]["blur"].shape == (9, 11)
