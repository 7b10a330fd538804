"""torch.profiler: profile with activities, schedule(), on_trace_ready and step(),
tensorboard_trace_handler, record_function, ProfilerActivity / ProfilerAction.

It runs on ctorch.autograd.profiler's recorder (csrc/profiler.c's op hook); ProfilerActivity.CUDA
adds CUDA-event timing of the ops on CUDA tensors, and is accepted without a GPU (no device
events then, as PyTorch without one)."""

import enum
import os
import socket
import time
import warnings

from ..autograd import profiler as _prof
from ..autograd.profiler import record_function
from ..autograd.profiler_util import EventList  # noqa: F401

__all__ = ["profile", "record_function", "schedule", "supported_activities", "tensorboard_trace_handler",
           "ProfilerAction", "ProfilerActivity", "kineto_available"]


class ProfilerActivity(enum.Enum):
    CPU = 0
    XPU = 1
    MTIA = 4
    CUDA = 2
    HPU = 3
    PrivateUse1 = 5


class ProfilerAction(enum.Enum):
    NONE = 0
    WARMUP = 1
    RECORD = 2
    RECORD_AND_SAVE = 3


def kineto_available():
    return False


def supported_activities():
    """The activities this build can profile: CPU, and CUDA where a GPU is usable."""
    from .. import cuda
    acts = {ProfilerActivity.CPU}
    if cuda.is_available():
        acts.add(ProfilerActivity.CUDA)
    return acts


def schedule(*, wait, warmup, active, repeat=0, skip_first=0, skip_first_wait=0):
    """The action for each step: skip_first steps, then cycles of wait, warmup and active steps
    (the last active step of a cycle is RECORD_AND_SAVE), repeat cycles (0: no end)."""
    if wait < 0 or warmup < 0 or active <= 0 or repeat < 0 or skip_first < 0:
        raise AssertionError(
            f"Invalid profiler schedule arguments. Got wait={wait} (need >= 0), warmup={warmup} (need >= 0), "
            f"active={active} (need > 0), repeat={repeat} (need >= 0), skip_first={skip_first} (need >= 0).")
    if warmup == 0:
        warnings.warn("Profiler won't be using warmup, this can skew profiler results", stacklevel=2)

    def schedule_fn(step):
        if step < 0:
            raise AssertionError(f"Step must be non-negative. Got {step}.")
        if step < skip_first:
            return ProfilerAction.NONE
        step -= skip_first
        if skip_first_wait != 0:
            step += wait
        cycle = wait + warmup + active
        if repeat > 0 and step / cycle >= repeat:
            return ProfilerAction.NONE
        pos = step % cycle
        if pos < wait:
            return ProfilerAction.NONE
        if pos < wait + warmup:
            return ProfilerAction.WARMUP
        return ProfilerAction.RECORD if pos < cycle - 1 else ProfilerAction.RECORD_AND_SAVE

    return schedule_fn


def _default_schedule_fn(_):
    return ProfilerAction.RECORD


def tensorboard_trace_handler(dir_name, worker_name=None, use_gzip=False, use_python_export=False):
    """An on_trace_ready handler writing each trace to dir_name/<worker>.<ns>.pt.trace.json[.gz]."""

    def handler_fn(prof):
        nonlocal worker_name
        if not os.path.isdir(dir_name):
            try:
                os.makedirs(dir_name, exist_ok=True)
            except Exception as e:
                raise RuntimeError("Can't create directory: " + dir_name) from e
        if not worker_name:
            worker_name = f"{socket.gethostname()}_{os.getpid()}"
        file_name = f"{worker_name}.{time.time_ns()}.pt.trace.json" + (".gz" if use_gzip else "")
        prof.export_chrome_trace(os.path.join(dir_name, file_name))

    return handler_fn


class profile:
    """Profiler context manager (torch.profiler.profile).

    profile(*, activities=None, schedule=None, on_trace_ready=None, record_shapes=False,
    profile_memory=False, with_stack=False, with_flops=False, with_modules=False, ...). Without a
    schedule every step records and on_trace_ready runs once at the end; with one, step() moves
    through its actions and on_trace_ready runs at the end of each active cycle."""

    def __init__(self, *, activities=None, schedule=None, on_trace_ready=None, record_shapes=False,
                 profile_memory=False, with_stack=False, with_flops=False, with_modules=False,
                 experimental_config=None, execution_trace_observer=None, acc_events=False, use_cuda=None,
                 custom_trace_id_callback=None):
        acts = set(activities) if activities else supported_activities()
        if use_cuda is not None:
            warnings.warn("The use_cuda parameter is deprecated, please use ProfilerActivity.CUDA instead.",
                          FutureWarning, stacklevel=2)
            (acts.add if use_cuda else acts.discard)(ProfilerActivity.CUDA)
        for a in acts:
            if not isinstance(a, ProfilerActivity):
                raise TypeError(f"activities must be ProfilerActivity values, got {a!r}")
        if not acts:
            raise AssertionError("No activities specified for the profiler")
        self.activities = acts
        self.record_steps = schedule is not None
        self.schedule = schedule if schedule is not None else _default_schedule_fn
        self.on_trace_ready = on_trace_ready
        self.record_shapes = record_shapes
        self.profile_memory = profile_memory
        self.with_stack = with_stack
        self.with_flops = with_flops
        self.with_modules = with_modules
        self.acc_events = acc_events
        self.step_num = 0
        self.current_action = self.schedule(self.step_num)
        self.step_rec_fn = None
        self.profiler = None
        self._metadata = {}
        N, W, R, S = ProfilerAction.NONE, ProfilerAction.WARMUP, ProfilerAction.RECORD, ProfilerAction.RECORD_AND_SAVE
        prep, start, stop, ready = self.prepare_trace, self.start_trace, self.stop_trace, self._trace_ready

        def bad(prev, cur):
            return lambda: warnings.warn(f"Incorrect schedule: {prev.name} followed by {cur.name}")
        # What each (previous action, action) pair does; None as the action: the profile stops.
        self.action_map = {
            (N, N): [], (N, W): [prep], (N, R): [prep, start], (N, S): [prep, start],
            (W, N): [bad(W, N), start, stop], (W, W): [], (W, R): [start], (W, S): [start],
            (R, N): [bad(R, N), stop], (R, W): [bad(R, W), stop], (R, R): [], (R, S): [],
            (S, N): [stop, ready], (S, W): [stop, ready, prep], (S, R): [stop, ready, prep, start],
            (S, S): [stop, ready, prep, start],
            (W, None): [start, stop], (R, None): [stop, ready], (S, None): [stop, ready],
        }

    @property
    def use_device(self):
        return "cuda" if ProfilerActivity.CUDA in self.activities else None

    # --- the trace's life -----------------------------------------------------------------
    def prepare_trace(self):
        if self.profiler is None or not self.acc_events:
            self.profiler = _prof.profile(use_device=self.use_device, record_shapes=self.record_shapes,
                                          with_flops=self.with_flops, profile_memory=self.profile_memory,
                                          with_stack=self.with_stack, acc_events=self.acc_events)

    def start_trace(self):
        self.profiler._start()

    def stop_trace(self):
        self._exit_step()
        self.profiler._stop()

    def _exit_step(self):
        if self.step_rec_fn is not None:
            self.step_rec_fn.__exit__(None, None, None)
            self.step_rec_fn = None

    def _trace_ready(self):
        if self.on_trace_ready is not None:
            self.on_trace_ready(self)

    def _transit_action(self, prev_action, current_action):
        for action in self.action_map.get((prev_action, current_action), []):
            action()

    # --- the user's controls ---------------------------------------------------------------
    def start(self):
        self._transit_action(ProfilerAction.NONE, self.current_action)
        self._enter_step()

    def _enter_step(self):
        """Each step is a "ProfilerStep#N" range (recorded while a trace runs)."""
        if self.record_steps:
            self.step_rec_fn = record_function("ProfilerStep#" + str(self.step_num))
            self.step_rec_fn.__enter__()

    def stop(self):
        self._exit_step()
        self._transit_action(self.current_action, None)

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, exc_type, exc_val, exc_tb):
        self.stop()
        return False

    def step(self):
        """Marks the end of a training step: moves to the schedule's next action."""
        self._exit_step()
        prev_action = self.current_action
        self.step_num += 1
        self.current_action = self.schedule(self.step_num)
        self._transit_action(prev_action, self.current_action)
        self._enter_step()

    # --- results ---------------------------------------------------------------------------
    def events(self):
        if self.profiler is None or self.profiler.function_events is None:
            raise AssertionError("Profiler must be initialized and finished before accessing events")
        return self.profiler.function_events

    def key_averages(self, group_by_input_shape=False, group_by_stack_n=0, group_by_overload_name=False):
        if self.profiler is None:
            raise AssertionError("Profiler must be initialized before getting key averages")
        return self.profiler.key_averages(group_by_input_shape, group_by_stack_n, group_by_overload_name)

    def export_chrome_trace(self, path):
        if self.profiler is None:
            raise AssertionError("Profiler must be initialized before exporting chrome trace")
        return self.profiler.export_chrome_trace(path)

    def add_metadata(self, key, value):
        self._metadata[key] = value

    def add_metadata_json(self, key, value):
        self._metadata[key] = value

