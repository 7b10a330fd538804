"""Compare: Measurements laid out as one table per label (rows: threads/env/sub_label, columns: description)."""
import collections
import enum
import math

BEST = "\033[92m"
GOOD = "\033[34m"
BAD = "\033[2m\033[91m"
VERY_BAD = "\033[31m"
BOLD = "\033[1m"
TERMINATE = "\033[0m"


class Colorize(enum.Enum):
    NONE = "none"
    COLUMNWISE = "columnwise"
    ROWWISE = "rowwise"


def _color(segment, value, best):
    """ANSI colour for a cell by its ratio to the best (smallest) time."""
    if value <= best * 1.01 or value <= best + 100e-9:
        prefix = BEST + BOLD
    elif value <= best * 1.1:
        prefix = GOOD + BOLD
    elif value >= best * 5:
        prefix = VERY_BAD + BOLD
    elif value >= best * 2:
        prefix = BAD
    else:
        return segment
    return prefix + segment + TERMINATE * 2


class _Column:
    """Number format shared by one column (same integer digits; decimals from the least precise cell)."""

    def __init__(self, cells, scale, trim, highlight):
        present = [m for m in cells if m is not None]
        self._trim = trim
        self._highlight = highlight and any(m.has_warnings for m in present)
        leading = [math.ceil(math.log10(m.median / scale)) for m in present]
        decimals = min(max(m.significant_figures - d, 0) for d, m in zip(leading, present)) if trim else 1
        width = max(leading) + decimals + (1 if decimals else 0)
        self._template = f"{{:>{width}.{decimals}f}}{{:>{7 if self._highlight else 0}}}"

    def format(self, value, sigfigs, spread):
        if value is None:
            return " " * len(self.format(1, sigfigs, None))
        if self._trim:
            from . import trim_sigfig

            value = trim_sigfig(value, sigfigs)
        note = f" (! {spread * 100:.0f}%)" if self._highlight and spread is not None else ""
        return self._template.format(value, note)


class _Table:
    def __init__(self, results, colorize, trim, highlight):
        from . import ordered_unique, select_unit

        self.label = results[0].label
        self.unit, self.scale = select_unit(min(r.median for r in results))
        self.colorize, self.highlight = colorize, highlight
        self.results = results
        row_keys = ordered_unique((r.num_threads, r.env, r.as_row_name) for r in results)
        row_keys.sort(key=lambda k: k[:2])
        self.col_keys = ordered_unique(r.description for r in results)
        grid = {((r.num_threads, r.env, r.as_row_name), r.description): r for r in results}
        self.rows = [(k, [grid.get((k, c)) for c in self.col_keys]) for k in row_keys]
        envs = {r.env for r in results}
        self.render_env = len(envs) > 1
        self.env_len = max(len(e) for e in envs) if self.render_env else 0
        # a thread group starts at each change of num_threads; COLUMNWISE colouring compares within a group
        self.groups, prior = [], None
        for (threads, _, _), cells in self.rows:
            if threads != prior:
                self.groups.append([])
                prior = threads
            self.groups[-1].append(cells)
        self.columns = [_Column([cells[j] for g in self.groups for cells in g], self.scale, trim, highlight)
                        for j in range(len(self.col_keys))]

    def _row_strings(self):
        out, prior_threads, prior_env = [], None, ""
        for (threads, env, name), cells in self.rows:
            if threads != prior_threads:
                prior_threads, prior_env = threads, ""
            env_str = f"({env})" if self.render_env and env != prior_env else ""
            prior_env = env
            strings = ["  " + env_str.ljust(self.env_len + 4) + name]
            for m, col in zip(cells, self.columns):
                if m is None:
                    strings.append(col.format(None, 1, None))
                else:
                    strings.append(col.format(m.median / self.scale, m.significant_figures,
                                              m.iqr / m.median if m.has_warnings else None))
            out.append(strings)
        return out

    def _best(self, group_index, cells):
        if self.colorize == Colorize.ROWWISE:
            best = min(m.median for m in cells if m is not None)
            return [best] * len(cells)
        if self.colorize == Colorize.COLUMNWISE:
            group = self.groups[group_index]
            return [min((row[j].median for row in group if row[j] is not None), default=None)
                    for j in range(len(cells))]
        return [None] * len(cells)

    def render(self):
        header = [""] + [str(c) for c in self.col_keys]
        body = self._row_strings()
        widths = [max(len(s[j]) for s in [header] + body) for j in range(len(header))]
        lines = ["  |  ".join(s.center(w) for s, w in zip(header, widths))]
        total = len(lines[0])
        prior_threads, group_index = None, -1
        for ((threads, _, _), cells), strings in zip(self.rows, body):
            if threads != prior_threads:
                prior_threads, group_index = threads, group_index + 1
                lines.append(f"{threads} threads: ".ljust(total, "-"))
            parts = [strings[0].ljust(widths[0])]
            for s, w, m, best in zip(strings[1:], widths[1:], cells, self._best(group_index, cells)):
                s = s.center(w)
                if self.colorize != Colorize.NONE and m is not None and best is not None:
                    s = _color(s, m.median, best)
                parts.append(s)
            lines.append("  |  ".join(parts))
        from . import unit_to_english

        warn = self.highlight and any(r.has_warnings for r in self.results)
        title = (" " + (self.label or "") + " ").center(total - 2, "-")
        return (f"[{title}]\n" + "\n".join(lines) + "\n\n"
                f"Times are in {unit_to_english(self.unit)}s ({self.unit}).\n"
                + ("(! XX%) Measurement has high variance, where XX is the IQR / median * 100.\n" if warn else ""))


class Compare:
    """Formats many Measurements as tables: print(compare) or compare.print()."""

    def __init__(self, results):
        self._results = []
        self.extend_results(results)
        self._trim_significant_figures = False
        self._colorize = Colorize.NONE
        self._highlight_warnings = False

    def __str__(self):
        return "\n".join(self._render())

    def extend_results(self, results):
        from . import Measurement

        for r in results:
            if not isinstance(r, Measurement):
                raise ValueError(f"Expected an instance of `Measurement`, got {type(r)} instead.")
        self._results.extend(results)

    def trim_significant_figures(self):
        self._trim_significant_figures = True

    def colorize(self, rowwise=False):
        self._colorize = Colorize.ROWWISE if rowwise else Colorize.COLUMNWISE

    def highlight_warnings(self):
        self._highlight_warnings = True

    def print(self):
        print(str(self))

    def _render(self):
        from . import Measurement

        by_label = collections.defaultdict(list)
        for r in Measurement.merge(self._results):
            by_label[r.label].append(r)
        return [_Table(group, self._colorize, self._trim_significant_figures, self._highlight_warnings).render()
                for group in by_label.values()]
