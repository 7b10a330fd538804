"""ctorch.utils.benchmark: Timer, Measurement and Compare as torch.utils.benchmark (Python statements only).

The timer synchronizes CUDA around each timed block when CUDA has been initialised (PyTorch synchronizes
its accelerator), so asynchronous kernels are counted. C++ statements (language='cpp') are not supported:
there is no C++ JIT here."""
import collections
import dataclasses
import enum
import math
import statistics
import textwrap
import timeit as _timeit

__all__ = ["Colorize", "Compare", "Language", "Measurement", "TaskSpec", "Timer", "select_unit", "timer",
           "trim_sigfig", "ordered_unique"]

_MAX_SIGNIFICANT_FIGURES = 4
_MIN_CONFIDENCE_INTERVAL = 25e-9  # 25 ns
_IQR_WARN_THRESHOLD = 0.1
_IQR_GROSS_WARN_THRESHOLD = 0.25


def timer():
    """timeit.default_timer, after synchronizing CUDA when it is in use."""
    from ... import cuda

    if cuda.is_initialized():
        cuda.synchronize()
    return _timeit.default_timer()


def select_unit(t):
    """(unit, scale) that brings t seconds to O(1): ns, us, ms or s."""
    unit = {-3: "ns", -2: "us", -1: "ms"}.get(int(math.log10(t) // 3), "s")
    return unit, {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1}[unit]


def unit_to_english(u):
    return {"ns": "nanosecond", "us": "microsecond", "ms": "millisecond", "s": "second"}[u]


def trim_sigfig(x, n):
    """x rounded to n significant figures (3.14159, 2 -> 3.1)."""
    if n != int(n):
        raise AssertionError("Number of significant figures must be an integer")
    scale = 10 ** (math.ceil(math.log10(abs(x))) - n)
    return float(round(x / scale) * scale)


def ordered_unique(elements):
    return list(dict.fromkeys(elements))


def _quantile(sorted_values, q):
    """Linear-interpolation quantile, as torch.quantile's default."""
    pos = (len(sorted_values) - 1) * q
    lo = math.floor(pos)
    hi = min(lo + 1, len(sorted_values) - 1)
    return sorted_values[lo] + (sorted_values[hi] - sorted_values[lo]) * (pos - lo)


@dataclasses.dataclass(init=True, repr=False, eq=True, frozen=True)
class TaskSpec:
    """What a Timer measures (everything but its globals)."""
    stmt: str
    setup: str
    global_setup: str = ""
    label: str = None
    sub_label: str = None
    description: str = None
    env: str = None
    num_threads: int = 1

    @property
    def title(self):
        sub = self.sub_label
        if self.label is not None:
            return self.label + (f": {sub}" if sub else "")
        if "\n" not in self.stmt:
            return self.stmt + (f": {sub}" if sub else "")
        return f"stmt:{f' ({sub})' if sub else ''}\n{textwrap.indent(self.stmt, '  ')}"

    def setup_str(self):
        if self.setup == "pass" or not self.setup:
            return ""
        if "\n" in self.setup:
            return f"setup:\n{textwrap.indent(self.setup, '  ')}"
        return f"setup: {self.setup}"

    def summarize(self):
        parts = [p for p in (self.title, self.description or "", self.setup_str()) if p]
        return "\n".join(p + "\n" if "\n" in p else p for p in parts)


_TASKSPEC_FIELDS = tuple(f.name for f in dataclasses.fields(TaskSpec))


@dataclasses.dataclass(init=True, repr=False)
class Measurement:
    """Times of one statement: raw_times are per block of number_per_run runs; statistics are per run."""
    number_per_run: int
    raw_times: list
    task_spec: TaskSpec
    metadata: dict = None

    def __post_init__(self):
        self._sorted_times = ()
        self._warnings = ()
        self._median = self._mean = self._p25 = self._p75 = -1.0

    def __getattr__(self, name):
        if name in _TASKSPEC_FIELDS:
            return getattr(self.task_spec, name)
        return super().__getattribute__(name)

    @property
    def times(self):
        return [t / self.number_per_run for t in self.raw_times]

    def _lazy_init(self):
        if not self.raw_times or self._sorted_times:
            return
        s = tuple(sorted(self.times))
        self._sorted_times = s
        self._median, self._p25, self._p75 = _quantile(s, 0.5), _quantile(s, 0.25), _quantile(s, 0.75)
        self._mean = sum(s) / len(s)
        for threshold, msg in ((_IQR_GROSS_WARN_THRESHOLD, "This suggests significant environmental influence."),
                               (_IQR_WARN_THRESHOLD, "This could indicate system fluctuation.")):
            if not self.meets_confidence(threshold):
                self._warnings += (f"  WARNING: Interquartile range is {self.iqr / self.median * 100:.1f}% "
                                   f"of the median measurement.\n           {msg}",)
                break

    @property
    def median(self):
        self._lazy_init()
        return self._median

    @property
    def mean(self):
        self._lazy_init()
        return self._mean

    @property
    def iqr(self):
        self._lazy_init()
        return self._p75 - self._p25

    @property
    def significant_figures(self):
        """Digits the interquartile spread supports (1 to 4), for Compare's trimming."""
        self._lazy_init()
        n = len(self._sorted_times)
        middle = self._sorted_times[n // 4:math.ceil(3 * n / 4)]
        std = statistics.pstdev(middle) if middle else 0.0
        ci = max(1.645 * std / math.sqrt(len(middle)), _MIN_CONFIDENCE_INTERVAL)
        return min(max(math.floor(math.log10(self._median / ci)), 1), _MAX_SIGNIFICANT_FIGURES)

    @property
    def has_warnings(self):
        self._lazy_init()
        return bool(self._warnings)

    def meets_confidence(self, threshold=_IQR_WARN_THRESHOLD):
        return self.iqr / self.median < threshold

    @property
    def title(self):
        return self.task_spec.title

    @property
    def env(self):
        return "Unspecified env" if self.task_spec.env is None else self.task_spec.env

    @property
    def as_row_name(self):
        return self.sub_label or self.stmt or "[Unknown]"

    def __repr__(self):
        self._lazy_init()
        n = len(self._sorted_times)
        unit, scale = select_unit(self._median)
        lines = [object.__repr__(self), self.task_spec.summarize(),
                 f"  {'Median: ' if n > 1 else ''}{self._median / scale:.2f} {unit}"]
        if n >= 4:
            lines.append(f"  IQR:    {self.iqr / scale:.2f} {unit} ({self._p25 / scale:.2f} to "
                         f"{self._p75 / scale:.2f})")
        lines.append(f"  {n} measurement{'s' if n > 1 else ''}, {self.number_per_run} runs "
                     f"{'per measurement,' if n > 1 else ','} {self.num_threads} "
                     f"thread{'s' if self.num_threads > 1 else ''}")
        lines.extend(self._warnings)
        return "\n".join(lines)

    @staticmethod
    def merge(measurements):
        """One Measurement per distinct TaskSpec, times pooled and scaled to number_per_run=1."""
        groups = collections.defaultdict(list)
        for m in measurements:
            groups[m.task_spec].extend(m.times)
        return [Measurement(number_per_run=1, raw_times=t, task_spec=spec, metadata=None)
                for spec, t in groups.items()]


class Language(enum.Enum):
    PYTHON = 0
    CPP = 1


def _set_threads(n):
    from ... import get_num_threads, set_num_threads

    prior = get_num_threads()
    set_num_threads(n)
    return prior


class Timer:
    """Times a Python statement with timeit, in blocks, at num_threads threads."""

    def __init__(self, stmt="pass", setup="pass", global_setup="", timer=timer, globals=None, label=None,
                 sub_label=None, description=None, env=None, num_threads=1, language=Language.PYTHON):
        if not isinstance(stmt, str):
            raise ValueError("Currently only a `str` stmt is supported.")
        if language in (Language.CPP, "cpp", "c++"):
            raise NotImplementedError("ctorch.utils.benchmark.Timer: C++ statements (language='cpp') are not "
                                      "supported; time a Python statement instead.")
        if language not in (Language.PYTHON, "py", "python"):
            raise ValueError(f"Invalid language `{language}`.")
        if global_setup:
            raise ValueError(f"global_setup is C++ only, got `{global_setup}`. Most likely this code can simply "
                             "be moved to `setup`.")
        from ... import __name__ as _ctorch_name
        import sys

        self._globals = dict(globals or {})
        self._globals.setdefault("torch", sys.modules[_ctorch_name])
        self._language = Language.PYTHON
        stmt, setup = (self._clean(s) for s in (stmt, setup))
        self._timer = _timeit.Timer(stmt=stmt, setup=setup, timer=timer, globals=self._globals)
        self._task_spec = TaskSpec(stmt=stmt, setup=setup, global_setup=global_setup, label=label,
                                   sub_label=sub_label, description=description, env=env, num_threads=num_threads)

    @staticmethod
    def _clean(code):
        code = textwrap.dedent(code)
        return (code[1:] if code.startswith("\n") else code).rstrip()

    def _timeit(self, number):
        return max(self._timer.timeit(number), 1e-9)

    def _measurement(self, number, times):
        return Measurement(number_per_run=number, raw_times=times, task_spec=self._task_spec)

    def _threaded(self, fn, *args):
        prior = _set_threads(self._task_spec.num_threads)
        try:
            return fn(*args)
        finally:
            _set_threads(prior)

    def timeit(self, number=1000000):
        """One block of `number` runs, after a warm-up of number // 100 (at least 2)."""
        def run():
            self._timeit(max(int(number // 100), 2))
            return self._measurement(number, [self._timeit(number)])

        return self._threaded(run)

    def repeat(self, repeat=-1, number=-1):
        raise NotImplementedError("See `Timer.blocked_autorange.`")

    def autorange(self, callback=None):
        raise NotImplementedError("See `Timer.blocked_autorange.`")

    def _estimate_block_size(self, min_run_time):
        """Runs per block: grows by 10x until the timer overhead is negligible or the block is long enough."""
        def run():
            overhead = statistics.median(self._timeit(0) for _ in range(5))
            number = 1
            while True:
                taken = self._timeit(number)
                if (overhead / taken <= 1e-4 and taken >= min_run_time / 1000) or taken > min_run_time:
                    return number
                if number * 10 > 2147483647:
                    return number
                number *= 10

        return self._threaded(run)

    def _loop(self, number, stop, min_run_time, max_run_time=None, callback=None):
        def run():
            total, times, can_stop = 0.0, [], False
            while total < min_run_time or not can_stop:
                spent = self._timeit(number)
                times.append(spent)
                total += spent
                if callback:
                    callback(number, spent)
                can_stop = stop(times)
                if max_run_time and total > max_run_time:
                    break
            return times

        return self._threaded(run)

    def blocked_autorange(self, callback=None, min_run_time=0.2):
        """Blocks of an estimated size until min_run_time seconds have been spent."""
        number = self._estimate_block_size(min_run_time)
        return self._measurement(number, self._loop(number, lambda times: True, min_run_time, callback=callback))

    def adaptive_autorange(self, threshold=0.1, *, min_run_time=0.01, max_run_time=10.0, callback=None):
        """Blocks until IQR / median < threshold (after at least 4 blocks and min_run_time) or max_run_time."""
        number = self._estimate_block_size(min_run_time=0.05)

        def stop(times):
            return len(times) > 3 and self._measurement(number, times).meets_confidence(threshold=threshold)

        return self._measurement(number, self._loop(number, stop, min_run_time, max_run_time, callback))


from ._compare import Colorize, Compare  # noqa: E402,F401
