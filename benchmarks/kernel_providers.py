"""ms_bcewl's kernels without MindSpore: the package's libms_bcewl.so called through its aclnn C API (ctypes).

Each call makes both phases, as the AOT entry does inside MindSpore: GetWorkspaceSize, then the run. The
forward+backward pass runs the forward and then the dx operation (what torch computes for x alone). The gap between
this provider and ms_bcewl in a MindSpore mode is what the framework adds to the same kernels. MindSpore is never
imported here: the library is found next to the package without running the package's __init__.
"""
import ctypes
import importlib.util
from pathlib import Path

import numpy as np

from roof_providers import check_loss_sum, stored
from workloads import Workload

ACL_DTYPES = {"float32": 0, "float16": 1, "bfloat16": 27}  # aclDataType codes (acl/acl_base.h)
ACL_FORMAT_ND = 2
FORWARD = "aclnnBinaryCrossEntropyWithLogits"
GRAD_SELF = "aclnnBinaryCrossEntropyWithLogitsBackward"
POINTER = ctypes.c_void_p


def package_library():
    spec = importlib.util.find_spec("ms_bcewl")
    if spec is None or not spec.submodule_search_locations:
        raise ImportError("ms_bcewl is not installed: pip install . from the checkout")
    return Path(list(spec.submodule_search_locations)[0]) / "lib" / "libms_bcewl.so"


def reduction_codes(library):
    """{reduction: aclnn code} as the library's registry of AOT entry points lists them (symbol, operation,
    reduction, code, shapes on each line)."""
    library.ms_bcewl_aot_registry.restype = ctypes.c_char_p
    lines = library.ms_bcewl_aot_registry().decode().splitlines()
    return {fields[2]: int(fields[3]) for fields in map(str.split, lines)}


def load_library(path):
    library = ctypes.CDLL(str(path))
    library.aclCreateTensor.restype = POINTER
    library.aclCreateTensor.argtypes = [POINTER, ctypes.c_uint64, ctypes.c_int, POINTER, ctypes.c_int64,
                                        ctypes.c_int, POINTER, ctypes.c_uint64, POINTER]
    library.aclDestroyTensor.argtypes = [POINTER]
    # Phase 1: the tensors (4 for the forward, 5 for dx: gradOutput first), reduction, out, workspaceSize, executor.
    for name, tensors in ((FORWARD, 4), (GRAD_SELF, 5)):
        getattr(library, f"{name}GetWorkspaceSize").argtypes = ([POINTER] * tensors
                                                                + [ctypes.c_int64, POINTER, POINTER, POINTER])
        getattr(library, name).argtypes = [POINTER, ctypes.c_uint64, POINTER, POINTER]
    return library


class AclTensor:
    """A contiguous aclTensor over a numpy array (kept alive with it); destroyed with this object."""

    def __init__(self, library, array, dtype):
        self._library, self.array = library, array
        dims = (ctypes.c_int64 * max(array.ndim, 1))(*array.shape)
        self.handle = library.aclCreateTensor(dims, array.ndim, ACL_DTYPES[dtype], None, 0, ACL_FORMAT_ND, dims,
                                              array.ndim, array.ctypes.data)
        if not self.handle:
            raise RuntimeError(f"aclCreateTensor refused a {dtype} tensor of shape {array.shape}")

    def __del__(self):
        if getattr(self, "handle", None):
            self._library.aclDestroyTensor(self.handle)


class KernelGroup:
    def __init__(self):
        self._path = package_library()
        self._library = load_library(self._path)
        self._reduction_codes = reduction_codes(self._library)

    def info(self):
        return {"kernel_alone": f"{self._path}; {check_loss_sum(self._loss_sum)}"}

    def _loss_sum(self, x, y, pos_weight):
        inputs = {"x": x, "y": y, "weight": None, "pos_weight": pos_weight}
        call = self._call(Workload("pos_weight_C", x.size, "float32", "none", "forward"), inputs)
        call()
        return float(np.sum(call.loss, dtype=np.float64))

    def providers(self, workload, inputs):
        if workload.is_floor:
            return {}
        return {"ms_bcewl_kernel": lambda: self._call(workload, inputs)}

    def _tensor(self, array, dtype):
        # np.asarray: a 0-d array comes back from stored() as a numpy scalar
        return None if array is None else AclTensor(self._library, np.asarray(stored(array, dtype)), dtype)

    def _call(self, workload, inputs):
        dtype, per_element = workload.dtype, workload.reduction == "none"
        x, y, weight, pos_weight = (self._tensor(inputs[name], dtype) for name in ("x", "y", "weight", "pos_weight"))
        result_shape = inputs["x"].shape if per_element else ()
        loss = self._tensor(np.zeros(result_shape, np.float32), dtype)
        grad_output = self._tensor(np.ones(result_shape, np.float32), dtype)
        dx = self._tensor(np.zeros_like(inputs["x"]), dtype)
        operands = [t.handle if t else None for t in (x, y, weight, pos_weight)]
        reduction = self._reduction_codes[workload.reduction]
        forward = PlannedOperation(self._library, FORWARD, operands, reduction, loss.handle)
        steps = (forward,)
        if workload.is_backward:
            steps += (PlannedOperation(self._library, GRAD_SELF, [grad_output.handle] + operands, reduction,
                                       dx.handle),)

        def call():
            for step in steps:
                step()
        call.tensors = (x, y, weight, pos_weight, loss, grad_output, dx)  # the handles live as long as the call
        call.loss = loss.array
        return call


class PlannedOperation:
    """One operation called with both phases; its workspace is sized by a first plan (a plan's size depends on
    the shapes alone) and kept by this object while the kernel may write it."""

    def __init__(self, library, name, tensors, reduction, out):
        self._name = name
        self._plan, self._run = getattr(library, f"{name}GetWorkspaceSize"), getattr(library, name)
        self._size, self._executor = ctypes.c_uint64(0), ctypes.c_void_p()
        self._arguments = [*tensors, reduction, out, ctypes.byref(self._size), ctypes.byref(self._executor)]
        check(name, self._plan(*self._arguments))
        self._workspace = np.empty(self._size.value, np.uint8)
        self._workspace_pointer = self._workspace.ctypes.data if self._size.value else None
        check(name, self._run(self._workspace_pointer, self._size.value, self._executor, None))

    def __call__(self):
        check(self._name, self._plan(*self._arguments))
        check(self._name, self._run(self._workspace_pointer, self._size.value, self._executor, None))


def check(name, status):
    if status != 0:
        raise RuntimeError(f"{name} returned status {status}")
