"""What a comparison of two modules says: classified instruction changes, grouped into causes.

The cause vocabulary is shared by every command (compare, explain-recompile, the pytest plugin) and by the
JSON output, so it is fixed here and only ever extended.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from hlodiff.diff.fix_stance import FixStance, stance_of_rule
from hlodiff.hlo.model import SourceFrame

CAUSE_KINDS = ("reordered", "shape", "dtype", "layout", "constant", "attribute", "inputs", "outputs", "ops",
               "partial", "sharding", "aliasing", "compile_options", "weak_type", "static_argument", "cache_key",
               "mode")
"""Every cause kind, in the order reports list them.

The last five are causes outside the computation: the HLO may be identical while the module header
(``aliasing``: ``input_output_alias``/``buffer_donor``), the compile options (``compile_options``) or the
arguments' abstract values as JAX keys its cache (``weak_type``, ``static_argument``) differ; ``cache_key`` is a
recompilation whose HLO is identical, with JAX's own reason quoted when its cache-miss log says one. ``mode`` is a
train step against an eval step of one helper (:mod:`hlodiff.explain.modes`).
"""


@dataclass(frozen=True, slots=True)
class InstructionRef:
    """One side of a change: where the instruction is and what it looked like."""

    computation: str
    name: str
    opcode: str
    shape: str
    frames: tuple[SourceFrame, ...] = ()
    position: int = 0  # index in its computation as printed: orders reports like the dump reads
    target: str = ""  # a custom-call's custom_call_target ("Sharding": an SPMD annotation, not work)

    def to_json(self) -> dict:
        return {"computation": self.computation, "name": self.name, "opcode": self.opcode, "shape": self.shape}


@dataclass(slots=True)
class Change:
    """A matched pair that differs, or an instruction present on one side only.

    ``kinds`` lists what differs: ``opcode``, ``shape``, ``element_type``, ``layout``, ``literal``,
    ``attribute:<key>``, ``sharding``, ``operand_count``, ``operands``, ``parameter_number``, ``operand_shape``
    (an operand changed shape, type or layout: a consequence); it is empty for one-sided changes. ``details``
    holds before/after text per kind, for summaries.
    """

    left: InstructionRef | None
    right: InstructionRef | None
    kinds: tuple[str, ...] = ()
    details: dict[str, tuple[str, str]] = field(default_factory=dict)

    @property
    def side(self) -> str:
        if self.left is None:
            return "only_right"
        if self.right is None:
            return "only_left"
        return "changed"

    def to_json(self) -> dict:
        return {
            "status": self.side,
            "left": self.left.to_json() if self.left else None,
            "right": self.right.to_json() if self.right else None,
            "kinds": list(self.kinds),
            "details": {k: {"left": a, "right": b} for k, (a, b) in sorted(self.details.items())},
        }


@dataclass(slots=True)
class Cause:
    """Why two modules differ, in the user's terms: a kind, one line, where in their code, which instructions."""

    kind: str
    summary: str
    locations: list[SourceFrame] = field(default_factory=list)
    instructions: list[tuple[str | None, str | None]] = field(default_factory=list)
    library_locations: list[SourceFrame] = field(default_factory=list)
    origins: list["Change"] = field(default_factory=list, repr=False)  # the changes that originate it
    fix: str | None = None
    """One line: what to change in the user's code (or why nothing needs changing), specific to what was found."""
    hint: str | None = None
    """When no captured source holds the user's line: which capture would."""
    fix_rule: str | None = None
    """The name of the row of ``diff.fix_rules.RULES`` the fix came from; None when its maker wrote it."""
    fix_is_final: bool = field(default=False, repr=False)
    """The fix was written from facts only its maker knew (the option or argument JAX named): keep it."""
    written_stance: FixStance = field(default=FixStance.CHANGE, repr=False, compare=False)
    """What a fix its maker wrote (``fix_rule`` None) asks of the user (:meth:`write_fix`); a fix from the table
    takes its row's instead (:attr:`fix_stance`)."""
    reason: str | None = None
    """For a cause read from a framework's own log: which of its reasons (JAX: ``redefined_function``,
    ``never_seen``, ``pytree``, ...), as a typed fact the cause graph reads (a new function drags its ops)."""
    callers: dict[SourceFrame, tuple[SourceFrame, ...]] = field(default_factory=dict, repr=False)
    """Per location, the user frames that called it, innermost first (a jitted function's call site and what
    called that): the location's stack, not locations of their own."""
    library_casts: int = field(default=0, repr=False)
    """How many converts between floating types library code made came with a dtype change, on one side only
    (autocast's casts: :mod:`hlodiff.diff.autocast`); 0 when none or not a dtype cause."""
    plan: object | None = field(default=None, repr=False)
    """A bucket plan for a size recompilation (:class:`hlodiff.explain.buckets.BucketPlan`), set by the run."""
    made_at: SourceFrame | None = field(default=None, repr=False)
    """The caller's line that made a JAX argument whose type changed, placed before the call among
    :attr:`locations` (:func:`hlodiff.explain.argument_lines.lead_with_the_call`); None otherwise. An expected
    answer moves it behind the call (nothing is to change where the argument is made)."""
    added: bool = field(default=False, repr=False)
    """Something is on the right side only (inputs, outputs, instructions, donated parameters): set where the
    summary counts them, so that analysis reads this fact and the words can change. Not in ``to_json``."""
    removed: bool = field(default=False, repr=False)
    """Something is on the left side only (inputs, outputs, instructions, donated parameters)."""
    instructions_removed: int = field(default=0, repr=False)
    """How many instructions of the left graph the cause (or the ops it absorbed) removed."""
    named: "Change | None" = field(default=None, repr=False)
    """The origin the summary names (its first one, a parameter before what it feeds): the instruction a reader
    is pointed at, e.g. the entry parameter of the argument JAX says changed."""
    element_types: tuple[str, str] | None = field(default=None, repr=False)
    """For a dtype cause: the element types before and now (HLO's or JAX's text, e.g. ``key<fry>[]``)."""
    baked_value: str | None = field(default=None, repr=False)
    """For a constant the left graph baked where the right takes an input parameter: the literal it baked."""
    hlo_identical: bool = field(default=False, repr=False)
    """Both graphs are equal after normalization: the cause lies outside the HLO (its summary says so first)."""
    none_leaf: bool = field(default=False, repr=False)
    """JAX's pytree reason: a leaf was None on one of the two calls."""
    jax_types: tuple[str, str] | None = field(default=None, repr=False)
    """JAX's type texts of the argument the cause is on, before and now (``key<fry>[2]``, ``key<fry>[4]``): what
    the HLO's u32 words do not say (a shape change of typed PRNG keys)."""
    list_length: str = field(default="", repr=False)
    """JAX's pytree reason: an argument's list (tuple) changed length, as ``"list:1 -> 2"`` (before -> now)."""
    library_read: str = field(default="", repr=False)
    """For a partial cause on the rest of a cut step: the row of :data:`hlodiff.diff.library_reads.LIBRARY_READS`
    whose library function made the early read (the cut graph lives in a family of its own, not this one's)."""

    own_work: int = field(default=0, repr=False)
    """For an outputs cause: how many instructions compute only the outputs added or removed (0 when they are
    values handed through, such as a model's parameters copied before the loop)."""
    scalar_outputs: bool = field(default=False, repr=False)
    """For an outputs cause: every output added or removed is a scalar (f32[]): a metric or a logged value."""

    @property
    def fix_stance(self) -> FixStance | None:
        """What the fix asks of the user (change the code, nothing, fix another cause first): what analysis
        reads instead of the fix's words. None without a fix."""
        if not self.fix:
            return None
        return stance_of_rule(self.fix_rule) if self.fix_rule is not None else self.written_stance

    @property
    def on_parameter(self) -> bool:
        """The instruction the summary names is a parameter ("shape changed on parameter %x"): what a graph takes
        in changed, not what it computes."""
        side = (self.named.right or self.named.left) if self.named is not None else None
        return side is not None and side.opcode == "parameter"

    def write_fix(self, text: str, stance: FixStance = FixStance.CHANGE) -> None:
        """Set a fix written from facts the table does not hold: its words and what it asks (no row chose it)."""
        self.fix, self.fix_rule, self.written_stance = text, None, stance

    def take_fix(self, other: "Cause") -> None:
        """Take the fix another cause got, words, row and stance (compare adopting explain's fix)."""
        self.fix, self.fix_rule, self.written_stance = other.fix, other.fix_rule, other.written_stance

    def to_json(self) -> dict:
        return {
            "kind": self.kind,
            "summary": self.summary,
            "locations": [_frame_json(f) for f in self.locations],
            "library_locations": [_frame_json(f) for f in self.library_locations],
            "stacks": [[_frame_json(g) for g in self.callers.get(f, ())] for f in self.locations],
            "instructions": [{"left": a, "right": b} for a, b in self.instructions],
            "fix": self.fix,
            "fix_rule": self.fix_rule,
            "plan": self.plan.to_json() if self.plan is not None else None,
            "hint": self.hint,
            "reason": self.reason,
        }


def _frame_json(frame: SourceFrame) -> dict:
    return frame.to_json()


@dataclass(slots=True)
class Region:
    """A connected group of changed or one-sided instructions, summarised (op types, shapes, source lines)."""

    computation: str
    size: int
    kinds: list[str]  # the cause kinds that originate in it (empty: consequences only)
    opcodes: dict[str, int]
    shapes: list[str]
    locations: list[SourceFrame]

    def to_json(self) -> dict:
        return {"computation": self.computation, "instructions": self.size, "kinds": self.kinds,
                "opcodes": self.opcodes, "shapes": self.shapes, "locations": [f.to_json() for f in self.locations]}


@dataclass(slots=True)
class Ignored:
    """Something the normalizer made the comparison ignore (e.g. "12 unused constants", "parameter order")."""

    name: str
    summary: str

    def to_json(self) -> dict:
        return {"pass": self.name, "summary": self.summary}


@dataclass(slots=True)
class ModuleDiff:
    """The full comparison of two modules."""

    left_name: str
    right_name: str
    left_fingerprint: str
    right_fingerprint: str
    equal: bool
    causes: list[Cause] = field(default_factory=list)
    changes: list[Change] = field(default_factory=list)
    ignored: list[Ignored] = field(default_factory=list)
    parameter_mapping: list[tuple[int, int]] = field(default_factory=list)
    output_mapping: list[tuple[int, int]] = field(default_factory=list)
    stats: dict[str, int] = field(default_factory=dict)
    regions: list[Region] = field(default_factory=list)
    computations: list = field(default_factory=list, repr=False, compare=False)
    hidden_constants: int = 0
    """Matched constants whose values both texts elide (``{...}``) in graphs otherwise equal: then ``equal`` is
    False and ``equality`` is "unknown" (:mod:`hlodiff.diff.hidden`)."""
    """The matched computation pairs behind it (``diff.classify.ComputationDiff``): the matching itself, kept
    so a report can lay the two graphs side by side without matching them again. Process-local: it holds whole
    canonical graphs, so it is neither serialized nor pickled (results sent back by worker processes stay small)."""

    def __getstate__(self) -> dict:
        state = {name: getattr(self, name) for name in self.__slots__ if name != "computations"}
        state["computations"] = []
        return state

    def __setstate__(self, state: dict) -> None:
        for name, value in state.items():
            object.__setattr__(self, name, value)

    @property
    def similarity(self) -> float:
        """Share of instructions matched unchanged, over both sides (1.0 for equal modules)."""
        total = self.stats.get("left_instructions", 0) + self.stats.get("right_instructions", 0)
        return 2 * self.stats.get("unchanged", 0) / total if total else 1.0

    @property
    def percent_alike(self) -> int:
        """The similarity in whole percent as a report shows it: never 100 when anything differs (99 then)."""
        percent = round(self.similarity * 100)
        return min(percent, 99) if not self.equal else percent

    def to_json(self) -> dict:
        return {
            "equal": self.equal,
            "equality": "unknown" if self.hidden_constants else "equal" if self.equal else "different",
            "hidden_constants": self.hidden_constants,
            "left": {"name": self.left_name, "fingerprint": self.left_fingerprint},
            "right": {"name": self.right_name, "fingerprint": self.right_fingerprint},
            "causes": [c.to_json() for c in self.causes],
            "ignored": [i.to_json() for i in self.ignored],
            "parameter_mapping": [{"left": a, "right": b} for a, b in self.parameter_mapping],
            "output_mapping": [{"left": a, "right": b} for a, b in self.output_mapping],
            "stats": dict(sorted(self.stats.items())),
            "regions": [r.to_json() for r in self.regions],
            "changes": [c.to_json() for c in self.changes],
        }
