"""The workload side of bench/gpu/lockstep.py: two training processes share the GPU and take turns, one step each.

RS_LOCKSTEP=<prefix> (set by the harness) names two FIFOs: <prefix>.go (the harness writes one byte when this
process may run a step) and <prefix>.done (this process writes 'r' once warmed up, then 'd' after each step, its
GPU work synchronised). Without RS_LOCKSTEP the workload runs alone as before (Gate.from_env() returns None).

Why: on the H200 host one process's step times drift by ~10 % from minute to minute and from process to process,
ten times the 1 % being measured. Two processes that alternate step by step see the same drift, so the ratio of
their step times is the tracer's cost with the drift cancelled; an untraced/untraced pair measures what is left
(the method's own bias)."""
import os


class Gate:
    def __init__(self, prefix):
        self.go = os.open(prefix + ".go", os.O_RDONLY)
        self.done = os.open(prefix + ".done", os.O_WRONLY)

    @staticmethod
    def from_env():
        p = os.environ.get("RS_LOCKSTEP")
        return Gate(p) if p else None

    def ready(self):
        os.write(self.done, b"r")

    def wait(self):
        if os.read(self.go, 1) != b"g":
            raise SystemExit("lockstep: the harness went away")

    def step_done(self):
        os.write(self.done, b"d")
