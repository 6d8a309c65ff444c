# SPDX-License-Identifier: MIT
# GPU arrays in (python/README.md): CuPy arrays through __cuda_array_interface__, torch tensors and
# CuPy arrays through DLPack, read in place as device frames by every CUDA memory strategy; their
# records equal the CPU backend's for the same pixels from numpy (as `jetpipe regress` compares). Skipped on CPU builds, without a
# CUDA device, and per library when CuPy or torch is not installed (the GPU machine has both).
import os
import pathlib
import sys

import numpy as np
import pytest

import jetpipe

INFO = jetpipe.info()
if not INFO["build"]["cuda"] or not INFO.get("cuda", {}).get("devices"):
    pytest.skip("needs a CUDA build and a CUDA device", allow_module_level=True)

cupy = pytest.importorskip("cupy")

SRC = pathlib.Path(os.environ.get("JETPIPE_SOURCE_DIR", pathlib.Path(__file__).resolve().parents[2]))
CONFIGS = sorted((SRC / "tests" / "regression" / "configs").glob("*.yaml"))
# Every CUDA memory strategy: pinned-chunked (discrete, discrete-latency), zero-copy (a Jetson
# profile; mapped memory works on a discrete card too).
PLATFORMS = ["discrete", "discrete-latency", "jetson-agx-orin"]


class Dlpack:
    """Only DLPack (as a JAX array would be): hides the wrapped array's __cuda_array_interface__."""

    def __init__(self, a):
        self.a = a

    def __dlpack__(self, stream=None):
        return self.a.__dlpack__(stream=stream)

    def __dlpack_device__(self):
        return self.a.__dlpack_device__()


def same(got, want, path="record"):
    """`jetpipe regress`'s rule (tools/cli/regress.cpp): integers and text exact, floats within
    1e-6 relative (float results of the GPU and the CPU twins may differ in the last bits),
    detections ("points") as sets of (x, y) with their scores within the same tolerance."""
    if isinstance(want, dict):
        assert isinstance(got, dict) and got.keys() == want.keys(), (path, got, want)
        for k in want:
            if k == "points":
                g = sorted(map(tuple, got[k]))
                w = sorted(map(tuple, want[k]))
                assert [p[:2] for p in g] == [p[:2] for p in w], (path + ".points", g, w)
                for a, b in zip(g, w):
                    same(list(a[2:]), list(b[2:]), path + ".points")
            else:
                same(got[k], want[k], path + "." + k)
    elif isinstance(want, list):
        assert isinstance(got, list) and len(got) == len(want), (path, got, want)
        for i, (a, b) in enumerate(zip(got, want)):
            same(a, b, f"{path}[{i}]")
    elif isinstance(want, float):
        assert abs(got - want) <= 1e-6 * max(1.0, abs(want)), (path, got, want)
    else:
        assert got == want and type(got) is type(want), (path, got, want)


def frames(seed):
    """Fresh random frames: odd sizes, gray, BGR and BGRx, contiguous and cropped."""
    rng = np.random.default_rng(seed)
    print("seed", seed)
    out = []
    for h, w in [(1, 7), (37, 53), (113, 129), (480, 641)]:
        for shape in [(h, w), (h, w, 3), (h, w, 4)]:
            out.append(rng.integers(0, 256, size=shape, dtype=np.uint8))
    big = rng.integers(0, 256, size=(300, 400, 3), dtype=np.uint8)
    out.append(big[5:-6, 3:-2])  # rows apart: a pitch wider than the row
    return out


@pytest.mark.parametrize("platform", PLATFORMS)
@pytest.mark.parametrize("config", CONFIGS, ids=[c.stem for c in CONFIGS])
def test_cupy_frames_equal_the_cpu(config, platform):
    cpu = jetpipe.Pipeline.from_file(str(config), platform="cpu")
    gpu = jetpipe.Pipeline.from_file(str(config), platform=platform)
    for i, a in enumerate(frames(int.from_bytes(os.urandom(4), "little"))):
        want = cpu.process(a, index=i)
        d = cupy.asarray(a)  # keeps numpy's strides: a crop stays a pitched view
        base = sys.getrefcount(d)
        same(gpu.process(d, index=i), want, f"{a.shape} {platform}")
        same(gpu.process(Dlpack(d), index=i), want, f"{a.shape} {platform} dlpack")
        assert sys.getrefcount(d) == base  # released once each frame's GPU work was done


def test_frame_ready_on_a_stream():
    """The array is written on a non-blocking stream just before process(): CuPy's
    __cuda_array_interface__ names that stream, and the frame waits for it."""
    cfg = CONFIGS[0]
    cpu = jetpipe.Pipeline.from_file(str(cfg), platform="cpu")
    gpu = jetpipe.Pipeline.from_file(str(cfg), platform="discrete")
    rng = np.random.default_rng()
    s = cupy.cuda.Stream(non_blocking=True)
    for i in range(20):
        a = rng.integers(0, 256, size=(1080, 1920, 3), dtype=np.uint8)
        with s:
            d = cupy.empty_like(a)
            d.set(a, stream=s)  # async host→device copy on s
            d += 0  # and a kernel on s
            got = gpu.process(d, index=i)  # CAI v3 stream: s
        same(got, cpu.process(a, index=i))


def test_torch_tensors():
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("torch without CUDA")
    cfg = CONFIGS[0]
    cpu = jetpipe.Pipeline.from_file(str(cfg), platform="cpu")
    gpu = jetpipe.Pipeline.from_file(str(cfg), platform="discrete")
    for i, a in enumerate(frames(7)):
        t = torch.from_numpy(np.ascontiguousarray(a)).cuda()
        want = cpu.process(a, index=i)
        same(gpu.process(t, index=i), want)  # __cuda_array_interface__
        same(gpu.process(Dlpack(t), index=i), want)  # DLPack, CUDA device
        same(gpu.process(t.cpu(), index=i), want)  # a CPU tensor: DLPack, host memory


def test_gpu_arrays_refused_with_a_reason():
    gpu = jetpipe.Pipeline.from_file(str(CONFIGS[0]), platform="discrete")
    with pytest.raises(jetpipe.InputError, match="contiguous"):
        gpu.process(cupy.zeros((20, 30, 3), cupy.uint8)[:, ::2])
    with pytest.raises(jetpipe.InputError, match="uint8"):
        gpu.process(Dlpack(cupy.zeros((20, 30), cupy.float32)))


def test_device_images_equal_host_images():
    """keep_images(names, device=True): the images stay in device memory, taken by CuPy (CAI) and
    torch (DLPack) without a copy; equal to the host images of the same frame; alive after the
    record and the pipeline are gone."""
    cfg = SRC / "config" / "default.yaml"
    for platform in PLATFORMS:
        host = jetpipe.Pipeline.from_file(str(cfg), platform=platform)
        dev = jetpipe.Pipeline.from_file(str(cfg), platform=platform)
        names = ["frame"] + list(host.image_names)
        host.keep_images(names)
        dev.keep_images(names, device=True)
        kept = []
        for i, a in enumerate(frames(11)):
            want = host.process(a, index=i)
            got = dev.process(a, index=i)
            for n in names:
                if n not in want["images"]:
                    continue
                img = got["images"][n]
                assert isinstance(img, jetpipe.DeviceImage), n
                assert img.shape == want["images"][n].shape, (n, img)
                np.testing.assert_array_equal(cupy.asnumpy(cupy.asarray(img)), want["images"][n])
                kept.append((img, want["images"][n]))
        del dev, host, got
        for img, w in kept[-5:]:  # still valid without their pipeline
            np.testing.assert_array_equal(cupy.asnumpy(cupy.asarray(img)), w)


def test_device_images_through_dlpack_into_torch():
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("torch without CUDA")
    cfg = SRC / "config" / "default.yaml"
    host = jetpipe.Pipeline.from_file(str(cfg), platform="discrete")
    dev = jetpipe.Pipeline.from_file(str(cfg), platform="discrete")
    names = list(host.image_names)
    host.keep_images(names)
    dev.keep_images(names, device=True)
    a = np.random.default_rng(5).integers(0, 256, size=(241, 333, 3), dtype=np.uint8)
    want, got = host.process(a), dev.process(a)
    for n in names:
        t = torch.from_dlpack(got["images"][n])
        assert t.is_cuda
        np.testing.assert_array_equal(t.cpu().numpy(), want["images"][n])
