"""PyTorch's binary_cross_entropy_with_logits, eager on the CPU with 2 threads (calls are synchronous)."""
import torch
import torch.nn.functional as F

THREADS = 2


class TorchGroup:
    def __init__(self):
        torch.set_num_threads(THREADS)

    @staticmethod
    def info():
        return {"torch": f"{torch.__version__} ({THREADS} threads)"}

    def providers(self, workload, inputs):
        if workload.is_floor:
            return {}
        dtype = getattr(torch, workload.dtype)
        tensors = {name: None if array is None else torch.from_numpy(array).to(dtype)
                   for name, array in inputs.items()}
        return {"torch": lambda: self._call(workload, **tensors)}

    @staticmethod
    def _call(workload, x, y, weight, pos_weight):
        def loss():
            return F.binary_cross_entropy_with_logits(x, y, weight=weight, pos_weight=pos_weight,
                                                      reduction=workload.reduction)
        if not workload.is_backward:
            return loss
        x.requires_grad_(True)
        dout = torch.ones_like(x) if workload.reduction == "none" and not workload.sums_loss else None

        def loss_and_dx():
            x.grad = None  # a fresh dx each call, as MindSpore's grad returns one
            value = loss()
            (value.sum() if workload.sums_loss else value).backward(dout)
        return loss_and_dx
