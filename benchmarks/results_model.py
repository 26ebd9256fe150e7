"""One measurement (provider x workload x mode x runtime mode) and its statistics."""
from dataclasses import dataclass, field

import numpy as np


@dataclass
class Result:
    provider: str
    mode: str
    runtime: str
    workload: object
    seconds: list = field(default_factory=list)  # one entry per sample: seconds per call
    calls_per_sample: int = 0
    note: str = ""  # why it is n/a

    @property
    def ok(self):
        return bool(self.seconds) and not self.note

    @property
    def series(self):
        """How the provider is named in tables and plots: with its mode and runtime mode when it has them."""
        return self.provider if self.mode == "-" else f"{self.provider} {self.mode}/{self.runtime}"

    def quantile(self, q):
        return float(np.quantile(self.seconds, q)) if self.ok else None

    @property
    def median(self):
        return self.quantile(0.5)

    @property
    def melem_per_s(self):
        return self.workload.size / self.median / 1e6 if self.ok else None


ROOFS = ("roof_stream", "roof_formula")


def median_in(row, provider, mode_runtime=None):
    """The median of `provider` in a row {(provider, mode, runtime): Result} of one workload; torch and the roofs
    have one mode, so mode_runtime may be omitted. None where it was not measured."""
    for (name, mode, runtime), result in row.items():
        if name == provider and mode_runtime in (None, (mode, runtime)):
            return result.median
    return None
