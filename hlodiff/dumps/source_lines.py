"""The user's Python files as the analysis asks about them (a parameter's name, the line that made an argument, the
``if`` around a line, the lines calling a function, ...), read when a question needs them and only if they are on
disk (at the path the dump recorded, or where ``--source-map`` says it is now). Each question is one method, and
each names its reader under ``dumps/`` and what it answers when no file is at hand: :class:`NoSources` (evidence
built in memory) answers that for every question, in one place.
"""

from __future__ import annotations

from typing import Callable, TypeVar

T = TypeVar("T")


def _NONE() -> None:
    return None


class SourceLines:
    """The user's Python files, read when a question needs them and only if they are on disk: a parameter's name,
    the line that made an argument, the ``if`` around a line, the lines calling a function."""

    def _ask(self, reader: Callable[..., T], unknown: Callable[[], T], *args) -> T:
        """``reader``'s answer from the file on disk; ``unknown()``, the answer when no file is at hand, is
        :class:`NoSources`'."""
        return reader(*args)

    def parameter_names(self, file: str, line: int | None) -> list[str] | None:
        from hlodiff.dumps.python_source import parameter_names

        return self._ask(parameter_names, _NONE, file, line)

    def argument_made_at(self, file: str, call_line: int | None, function: str, parameter: str,
                         parameters: list[str] | None = None) -> int | None:
        from hlodiff.dumps.python_source import argument_made_at

        return self._ask(argument_made_at, _NONE, file, call_line, function, parameter, parameters)

    def enclosing_if(self, file: str, line: int | None) -> int | None:
        from hlodiff.dumps.python_source import enclosing_if

        return self._ask(enclosing_if, _NONE, file, line)

    def read_in_condition(self, file: str, line: int | None) -> bool:
        from hlodiff.dumps.python_source import read_in_condition

        return self._ask(read_in_condition, bool, file, line)

    def calls_named(self, file: str, names: tuple[str, ...]) -> list[int]:
        from hlodiff.dumps.python_calls import calls_named

        return self._ask(calls_named, list, file, names)

    def calls_on_submodule(self, file: str, names: tuple[str, ...], key: str) -> list[int]:
        from hlodiff.dumps.python_calls import calls_on_submodule

        return self._ask(calls_on_submodule, list, file, names, key)

    def calls_in_loops_around(self, file: str, line: int | None, names: tuple[str, ...]) -> list[int]:
        from hlodiff.dumps.loop_counters import calls_in_loops_around

        return self._ask(calls_in_loops_around, list, file, line, names)

    def fed_its_own_concatenation(self, file: str, line: int | None) -> bool:
        from hlodiff.dumps.python_source import fed_its_own_concatenation

        return self._ask(fed_its_own_concatenation, bool, file, line)

    def nondiff_callee(self, file: str, def_line: int | None, parameter: str) -> str | None:
        from hlodiff.dumps.nondiff_source import nondiff_callee

        return self._ask(nondiff_callee, _NONE, file, def_line, parameter)

    def passed_as_axes(self, file: str, def_line: int | None, parameter: str) -> bool | None:
        from hlodiff.dumps.axes_source import passed_as_axes

        return self._ask(passed_as_axes, _NONE, file, def_line, parameter)

    def calls_of_function(self, file: str, function: str) -> list[int] | None:
        from hlodiff.dumps.python_calls import calls_of_function

        return self._ask(calls_of_function, _NONE, file, function)

    def compiles_of_function(self, file: str, function: str):
        from hlodiff.dumps.python_calls import compiles_of_function

        return self._ask(compiles_of_function, _NONE, file, function)

    def calls_of_names(self, file: str, names: tuple[str, ...]) -> list[int] | None:
        from hlodiff.dumps.python_calls import calls_of_names

        return self._ask(calls_of_names, _NONE, file, names)

    def calls_of_compiled(self, file: str) -> list[int] | None:
        from hlodiff.dumps.python_calls import calls_of_compiled

        return self._ask(calls_of_compiled, _NONE, file)

    def compiled_calls_by_mode(self, file: str) -> dict[int, bool | None] | None:
        """Each call of a ``torch.compile`` result -> the ``training`` flag the source sets before it (None: left
        open): :func:`hlodiff.dumps.module_mode_source.compiled_calls_by_mode`."""
        from hlodiff.dumps.module_mode_source import compiled_calls_by_mode

        return self._ask(compiled_calls_by_mode, _NONE, file)

    def library_entry_calls(self, file: str, classes: tuple[str, ...], methods: tuple[str, ...],
                            helpers: tuple[str, ...], functions: tuple[str, ...]) -> list[int] | None:
        """Lines entering a library object or function:
        :func:`hlodiff.dumps.library_entry_source.library_entry_calls`."""
        from hlodiff.dumps.library_entry_source import library_entry_calls

        return self._ask(library_entry_calls, _NONE, file, classes, methods, helpers, functions)

    def library_function(self, file: str, line: int | None) -> str | None:
        """The installed library function whose body holds ``file:line``:
        :func:`hlodiff.dumps.library_functions.library_function`."""
        from hlodiff.dumps.library_functions import library_function

        return self._ask(library_function, _NONE, file, line)

    def carried_without_detach(self, file: str, line: int | None) -> list[int] | None:
        """Assignments of the loop around ``file:line`` that carry a tensor's history into the next iteration:
        :func:`hlodiff.dumps.carried_source.carried_without_detach`."""
        from hlodiff.dumps.carried_source import carried_without_detach

        return self._ask(carried_without_detach, _NONE, file, line)

    def compiled_calls_by_grad_mode(self, file: str):
        """Each call of a ``torch.compile`` result -> grad mode there, and the call that runs first:
        :func:`hlodiff.dumps.module_mode_source.compiled_calls_by_grad_mode`."""
        from hlodiff.dumps.module_mode_source import compiled_calls_by_grad_mode

        return self._ask(compiled_calls_by_grad_mode, _NONE, file)

    def set_only_in_init(self, file: str, attribute: str) -> bool:
        from hlodiff.dumps.init_attributes import set_only_in_init

        return self._ask(set_only_in_init, bool, file, attribute)

    def setting_behind(self, file: str, line: int | None):
        """The run setting (environment variable, command-line option) the ``if`` around ``file:line`` tests
        (:func:`hlodiff.dumps.run_setting_source.setting_behind`), None when the source does not show one."""
        from hlodiff.dumps.run_setting_source import setting_behind

        return self._ask(setting_behind, _NONE, file, line)

    def set_only_in_init_across(self, files: list[str], attribute: str) -> bool:
        from hlodiff.dumps.init_attributes import set_only_in_init_across

        return self._ask(set_only_in_init_across, bool, files, attribute)

    def user_modules(self, files: list[str]) -> list[str]:
        from hlodiff.dumps.user_modules import user_modules

        return self._ask(user_modules, lambda: list(files), files)

    def passes_loop_counter(self, file: str, call_line: int | None, function: str, parameter: str,
                            parameters: list[str] | None = None) -> bool:
        from hlodiff.dumps.loop_counters import passes_loop_counter

        return self._ask(passes_loop_counter, bool, file, call_line, function, parameter, parameters)

    def loop_header(self, file: str, line: int | None) -> bool:
        from hlodiff.dumps.python_source import loop_header

        return self._ask(loop_header, bool, file, line)

    def enclosing_choice(self, file: str, line: int | None) -> int | None:
        """The innermost ``if`` or ``for`` around a line: :func:`hlodiff.dumps.python_source.enclosing_choice`."""
        from hlodiff.dumps.python_source import enclosing_choice

        return self._ask(enclosing_choice, _NONE, file, line)

    def rebound_in_loop(self, file: str, call_line: int | None, name: str) -> list[int]:
        """Lines in the loop around a call that bind the called name to a new function object
        (:func:`hlodiff.dumps.rebind_source.rebound_in_loop`)."""
        from hlodiff.dumps.rebind_source import rebound_in_loop

        return self._ask(rebound_in_loop, list, file, call_line, name)

    def in_loop(self, file: str, line: int | None) -> bool | None:
        """Whether ``file:line`` is in a loop's body: :func:`hlodiff.dumps.python_source.in_loop`."""
        from hlodiff.dumps.python_source import in_loop

        return self._ask(in_loop, _NONE, file, line)

    def has_source(self, file: str) -> bool:
        """Whether ``file`` is on disk (where the dump recorded it, or where ``--source-map`` says it is now)."""
        from hlodiff.dumps.source_paths import on_disk

        return self._ask(on_disk, bool, file)

    def steers_only_branches(self, file: str, function: str, name: str) -> bool:
        """Whether ``function``'s parameter ``name`` is read only in ``if``/``while`` tests and reports (print,
        logging): :func:`hlodiff.dumps.branch_only_source.steers_only_branches`."""
        from hlodiff.dumps.branch_only_source import steers_only_branches

        return self._ask(steers_only_branches, bool, file, function, name)

    def splits_into_pieces(self, file: str, line: int | None) -> bool:
        """Whether a call on ``file:line`` cuts a tensor into pieces (``xb.chunk(4)``):
        :func:`hlodiff.dumps.chunk_source.splits_into_pieces`."""
        from hlodiff.dumps.chunk_source import splits_into_pieces

        return self._ask(splits_into_pieces, bool, file, line)


    def called_detached_and_not(self, file: str, line: int | None, callee: str | None = None,
                                position: int | None = None) -> bool:
        """Whether the compiled callable called on ``file:line`` gets ``X.detach()`` on one call and ``X`` on
        another: :func:`hlodiff.dumps.detach_pair_source.called_detached_and_not`."""
        from hlodiff.dumps.detach_pair_source import called_detached_and_not

        return self._ask(called_detached_and_not, bool, file, line, callee, position)

    def rows_cut_by(self, file: str, line: int | None) -> str:
        """``slice``, ``filter`` or "": how a call's arguments on ``file:line`` are cut from the data:
        :func:`hlodiff.dumps.rows_source.rows_cut_by`."""
        from hlodiff.dumps.rows_source import rows_cut_by

        return self._ask(rows_cut_by, str, file, line)

    def grown_by_cat(self, file: str, name: str) -> int | None:
        """The line where ``name`` is rebound in a loop to a concatenation with itself (``queue = torch.cat([k,
        queue])``): :func:`hlodiff.dumps.cat_growth_source.grown_by_cat`."""
        from hlodiff.dumps.cat_growth_source import grown_by_cat

        return self._ask(grown_by_cat, _NONE, file, name)


class NoSources(SourceLines):
    """Evidence built in memory: no source file is on disk, so every question gets its answer for no file."""

    def _ask(self, reader, unknown, *args):
        return unknown()
