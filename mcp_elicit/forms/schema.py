"""The form: an ordered set of fields, checked once, then used to validate answers.

:class:`FormSchema` is what a server asks with and what a client renders. Build one
from the wire (:meth:`FormSchema.parse`), from a Python class
(:meth:`FormSchema.from_type`), or by hand (:func:`Form`); send it with
:meth:`FormSchema.to_json`; check answers with :meth:`FormSchema.validate`.

Rules:

- A FormSchema is immutable and always consistent: construction checks that names
  are unique and non-empty, each field obeys its own rules, each default passes the
  field's own validator, that the form is no larger than a client reads (its fields,
  names, texts and options within ``foreign.MAX_*``), and (unless ``check_secrets=False``) that
  no field asks for a secret, raising :class:`SensitiveFieldError` for the first that does.
- A default its own field refuses is a :class:`FormSchemaError`, except for a reader of
  a form it did not write (``parse(..., unfit_defaults="drop")``): the field is kept
  without that default, and :attr:`FormSchema.dropped_defaults` says which and why.
  JSON Schema only recommends that a default be valid, and SDKs send such forms
  (pydantic does not check a field's default against its constraints).
- Such a reader can also take in the JSON Schema keywords beyond the subset that SDKs
  send (``parse(..., beyond_subset="relax")``, see :mod:`foreign`):
  :attr:`FormSchema.relaxed` says what the form asks that its fields do not show, and
  :meth:`FormSchema.extras` what a field asks beyond its spec, for a UI to show with it.
- Per-field checkers are compiled at construction; validation is a loop over them.
- Equality is on the fields only; ``not_secret`` marks and the bound Python type
  (for :meth:`build`) do not take part, so ``parse(s.to_json()) == s``.
- :meth:`build` returns an instance of the class given to ``from_type``, or the
  validated ``dict`` for parsed and hand-built forms.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import operator
import weakref
from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass, field, is_dataclass, replace
from dataclasses import fields as dataclass_fields
from typing import Any, Generic, Literal, TypeAlias, TypeVar, get_args, get_origin

from mcp_elicit.errors import FormSchemaError, FormValidationError, SensitiveFieldError, ValidationProblem
from mcp_elicit.forms.classes import Binding, describe_class
from mcp_elicit.forms.field_values import shown
from mcp_elicit.forms.fields import Boolean, Choice, FieldSpec, Integer, MultiChoice, Number, String
from mcp_elicit.forms.foreign import NO_EXTRAS, Check, FieldExtras, Relaxed, check_size, relax
from mcp_elicit.forms.parse import parse_fields
from mcp_elicit.forms.secrets import SecretFinding, find_secret_fields
from mcp_elicit.forms.validate import FormValidator, Invalid, compile_field

__all__ = ["Form", "FormSchema", "SchemaLike"]

_SPEC_TYPES = (String, Number, Integer, Boolean, Choice, MultiChoice)
_FROM_TYPE_CACHE: weakref.WeakKeyDictionary[object, FormSchema] = weakref.WeakKeyDictionary()


_V = TypeVar("_V")
#: Forms built again and again from equal fields (``Form(region=String())`` inside a
#: handler) are checked and compiled once: the lint, the validator, the wire JSON, the digest.
_COMPILED_MAX = 512
#: The JSON (bytes) of the forms each cache keeps at most; a larger form is not kept.
_CACHED_BYTES = 1 << 18


class _Kept(Generic[_V]):
    """A cache of forms by key: at most ``_COMPILED_MAX`` of them, of at most
    ``_CACHED_BYTES`` of JSON together (the memory they hold is some ten times that);
    past either, it is emptied. Forms built anew on every call (options read from data
    that changes) come and go; the same form asked again is built once."""

    __slots__ = ("entries", "size")

    def __init__(self) -> None:
        self.entries: dict[tuple[Any, ...], _V] = {}
        self.size = 0

    def put(self, key: tuple[Any, ...], value: _V, size: int) -> None:
        if size > _CACHED_BYTES:
            return
        if len(self.entries) >= _COMPILED_MAX or self.size + size > _CACHED_BYTES:
            self.entries.clear()
            self.size = 0
        self.entries[key] = value
        self.size += size


#: What building a form's fields gave: its secret findings, validator, JSON Schema,
#: digest and the JSON's size, by :func:`_spec_key` of its fields.
_COMPILED: _Kept[tuple[Any, Any, dict[str, Any], str, int]] = _Kept()

#: Every field's value, in declaration order, per spec class (``not_secret`` included).
_FIELD_VALUES: dict[type, Callable[[Any], tuple[Any, ...]]] = {
    cls: operator.attrgetter(*(f.name for f in dataclass_fields(cls) if f.init)) for cls in _SPEC_TYPES
}


def _spec_key(spec: object) -> tuple[Any, ...]:
    """A cache key that tells apart every spec the form checks would tell apart.

    Spec equality is not enough: it leaves out ``not_secret``, and ``1 == 1.0 == True``,
    so ``String(min_length=True)`` (refused) equals ``String(min_length=1)``. The key
    holds every value with its type. Raises KeyError for what is not a spec and
    TypeError for an unhashable value: no key, no cache. A spec with every value but the
    name at its default came with its short key (the class and the name): the same build."""
    values_of = _FIELD_VALUES[type(spec)]
    key: tuple[Any, ...] | None = spec._key  # type: ignore[attr-defined]
    if key is not None:
        return key
    values = values_of(spec)
    return (type(spec), values, tuple(map(type, values)))


@dataclass(frozen=True, init=False)
class FormSchema:
    """An ordered, checked set of form fields. See the module docstring for the rules."""

    fields: tuple[FieldSpec, ...]
    secret_findings: tuple[SecretFinding, ...] = field(compare=False, repr=False)
    dropped_defaults: tuple[ValidationProblem, ...] = field(compare=False, repr=False)
    relaxed: tuple[ValidationProblem, ...] = field(compare=False, repr=False)
    _checks: Mapping[str, tuple[Check, ...]] = field(compare=False, repr=False)
    _extras: Mapping[str, FieldExtras] = field(compare=False, repr=False)
    _validator: FormValidator = field(compare=False, repr=False)
    _binding: Binding | None = field(compare=False, repr=False)
    _wire: dict[str, Any] = field(compare=False, repr=False)
    _digest: str = field(compare=False, repr=False)
    _size: int = field(compare=False, repr=False)  # of the JSON Schema, in bytes

    def __init__(self, fields: Iterable[FieldSpec], *, check_secrets: bool = True) -> None:
        specs = tuple(fields)
        key: tuple[Any, ...] | None
        try:
            key = (tuple(map(_spec_key, specs)), check_secrets)
            compiled = _COMPILED.entries.get(key)
        except (KeyError, TypeError):  # not a spec, or something unhashable: no cache
            key = compiled = None
        object.__setattr__(self, "dropped_defaults", ())
        object.__setattr__(self, "relaxed", ())
        object.__setattr__(self, "_checks", {})
        object.__setattr__(self, "_extras", {})
        if compiled is not None:  # the same fields were checked and compiled before
            object.__setattr__(self, "fields", specs)
            object.__setattr__(self, "_binding", None)
            for name, value in zip(
                ("secret_findings", "_validator", "_wire", "_digest", "_size"), compiled, strict=True
            ):
                object.__setattr__(self, name, value)
            return
        seen: set[str] = set()
        for spec in specs:
            if not isinstance(spec, _SPEC_TYPES):
                raise FormSchemaError(
                    "form fields must be String, Number, Integer, Boolean, Choice or MultiChoice, "
                    f"not {spec!r}"
                )
            if not isinstance(spec.name, str) or not spec.name:
                raise FormSchemaError(f"every field needs a non-empty name: {spec!r}")
            if spec.name in seen:
                raise FormSchemaError("the form has two fields of this name", field=spec.name)
            seen.add(spec.name)
            spec.check()
            _check_default(spec)
        findings = find_secret_fields(specs)
        if check_secrets and findings:
            raise SensitiveFieldError(findings[0].message, field=findings[0].field)
        object.__setattr__(self, "fields", specs)
        object.__setattr__(self, "secret_findings", findings)
        object.__setattr__(self, "_validator", FormValidator(specs))
        object.__setattr__(self, "_binding", None)
        wire = self._build_json()
        check_size(wire, reader="mcp-elicit's client")  # what a client would refuse to show
        object.__setattr__(self, "_wire", wire)
        encoded = json.dumps(wire, sort_keys=True, separators=(",", ":")).encode()
        object.__setattr__(self, "_digest", hashlib.sha256(encoded).hexdigest()[:32])
        object.__setattr__(self, "_size", len(encoded))
        if key is not None:
            _COMPILED.put(key, (findings, self._validator, wire, self._digest, len(encoded)), len(encoded))

    # -- constructors -----------------------------------------------------------------

    @classmethod
    def parse(
        cls,
        obj: object,
        *,
        not_secret: Collection[str] = (),
        check_secrets: bool = True,
        unfit_defaults: Literal["refuse", "drop"] = "refuse",
        beyond_subset: Literal["refuse", "relax"] = "refuse",
    ) -> FormSchema:
        """The form a ``requestedSchema`` JSON object describes.

        ``not_secret`` names fields the secret guard should let through;
        ``check_secrets=False`` accepts every field and leaves what the guard found in
        :attr:`secret_findings` (for a client that wants to warn rather than refuse).
        ``unfit_defaults="drop"`` reads a field whose default it refuses itself without
        that default, listing it in :attr:`dropped_defaults` (for a client, which shows
        the form rather than pre-fill what cannot be sent). ``beyond_subset="relax"`` takes
        in the keywords beyond the subset that :func:`foreign.relax` reads, listing what the
        fields do not show in :attr:`relaxed` (also for a client).
        """
        if unfit_defaults not in ("refuse", "drop"):
            raise ValueError(f"unfit_defaults must be 'refuse' or 'drop', not {unfit_defaults!r}")
        if beyond_subset not in ("refuse", "relax"):
            raise ValueError(f"beyond_subset must be 'refuse' or 'relax', not {beyond_subset!r}")
        relaxed = relax(obj) if beyond_subset == "relax" else Relaxed(obj)
        specs = parse_fields(relaxed.schema)
        dropped: list[ValidationProblem] = []
        checks = relaxed.checks
        if unfit_defaults == "drop":
            specs = tuple(_without_unfit_default(s, dropped, checks.get(s.name, ())) for s in specs)
        else:  # the constructor checks the rest, each field's rules first
            for spec in specs:
                if spec.name in checks:
                    spec.check()
                    _check_default(spec, checks[spec.name])
        names = {spec.name for spec in specs}
        unknown = set(not_secret) - names
        if unknown:
            raise FormSchemaError(
                f"not_secret names {', '.join(sorted(map(repr, unknown)))}, which are not fields"
            )
        if not_secret:
            specs = tuple(replace(s, not_secret=True) if s.name in not_secret else s for s in specs)
        schema = FormSchema(specs, check_secrets=check_secrets)
        if dropped:
            object.__setattr__(schema, "dropped_defaults", tuple(dropped))
        if relaxed.notes:
            object.__setattr__(schema, "relaxed", relaxed.notes)
        if relaxed.checks:
            object.__setattr__(schema, "_checks", relaxed.checks)
        if relaxed.extras:
            object.__setattr__(schema, "_extras", relaxed.extras)
        return schema

    @classmethod
    def from_type(cls, tp: object) -> FormSchema:
        """The form for a dataclass, TypedDict or pydantic model class; :meth:`build` makes a ``tp``.

        Anything else is refused with :class:`FormSchemaError`. Forms are cached per class.
        """
        try:
            cached = _FROM_TYPE_CACHE.get(tp)
        except TypeError:  # not weak-referenceable: not a class we can describe either
            cached = None
        if cached is not None:
            return cached
        specs, binding = describe_class(tp)
        schema = FormSchema(specs)
        object.__setattr__(schema, "_binding", binding)
        with contextlib.suppress(TypeError):
            _FROM_TYPE_CACHE[tp] = schema
        return schema

    @classmethod
    def of(cls, spec: SchemaLike, *, not_secret: Collection[str] = ()) -> FormSchema:
        """``spec`` as a FormSchema: a FormSchema as is, a JSON mapping parsed, a class described.

        ``not_secret`` applies to a mapping; classes say it with ``Field(not_secret=True)``.
        """
        if isinstance(spec, FormSchema):
            return spec
        if isinstance(spec, Mapping) and not any(isinstance(v, _SPEC_TYPES) for v in spec.values()):
            return cls.parse(spec, not_secret=not_secret)
        if isinstance(spec, type):
            return cls.from_type(spec)
        raise FormSchemaError(_not_a_form(spec))

    # -- reading ----------------------------------------------------------------------

    @property
    def required(self) -> tuple[str, ...]:
        """Names of the required fields, in field order."""
        return tuple(spec.name for spec in self.fields if spec.required)

    @property
    def names(self) -> tuple[str, ...]:
        """Names of all fields, in order."""
        return tuple(spec.name for spec in self.fields)

    @property
    def target(self) -> type[Any] | None:
        """The class :meth:`build` makes, or None when it returns a dict."""
        return None if self._binding is None else self._binding.target

    def field(self, name: str) -> FieldSpec:
        """The field called ``name`` (KeyError if there is none)."""
        for spec in self.fields:
            if spec.name == name:
                return spec
        raise KeyError(name)

    def extras(self, name: str) -> FieldExtras:
        """What the field called ``name`` asks beyond its spec (keywords a form read with
        ``beyond_subset="relax"`` took in), for a user interface to show with the field."""
        return self._extras.get(name, NO_EXTRAS)

    def to_json(self) -> dict[str, Any]:
        """The wire form, a ``requestedSchema`` valid under both spec revisions (a fresh copy)."""
        return self._build_json()

    @property
    def wire(self) -> dict[str, Any]:
        """The wire form, built once and shared: read it, never change it."""
        return self._wire

    @property
    def digest(self) -> str:
        """A stable digest of the wire form: two forms asking the same thing share it."""
        return self._digest

    def _build_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"type": "object", "properties": {s.name: s.to_json() for s in self.fields}}
        if required := self.required:
            out["required"] = list(required)
        return out

    # -- answers ----------------------------------------------------------------------

    def validate(self, content: object) -> dict[str, Any]:
        """The cleaned answer (known fields only), or :class:`FormValidationError` with every problem."""
        clean = self._validator.validate(content)
        if self._checks:
            self._check_relaxed(clean)
        return clean

    def _check_relaxed(self, clean: Mapping[str, Any]) -> None:
        """:class:`FormValidationError` for what the relaxed keywords refuse in a valid answer."""
        problems = [
            ValidationProblem(name, message)
            for name, checks in self._checks.items()
            if name in clean
            for message in [next(filter(None, (check(clean[name]) for check in checks)), None)]
            if message is not None
        ]
        if problems:
            raise FormValidationError(problems)

    def admit(self, content: object) -> dict[str, Any]:
        """:meth:`validate`, and for a form read from a class, what the class itself refuses
        too (a dataclass's ``__post_init__`` or a pydantic validator raising ``ValueError``):
        the cleaned answer, or :class:`FormValidationError` saying why, for the person."""
        clean = self.validate(content)
        if self._binding is not None:
            self._binding.build(clean)
        return clean

    def apply_defaults(self, content: object) -> dict[str, Any]:
        """A copy of ``content`` with absent (or null) fields that have defaults filled in."""
        return self._validator.apply_defaults(content)

    def check_field(self, name: str, value: object) -> str | None:
        """The problem with one field's value as a message for a person, or None if it is fine."""
        problem = self._validator.check_field(name, value)
        if problem is None and value is not None and name in self._checks:  # a valid number
            problem = next(filter(None, (check(value) for check in self._checks[name])), None)
        return problem

    def build(self, content: object, *, checked: bool = False) -> Any:
        """Validate ``content``, then make the bound class's instance (or return the dict).

        ``checked=True`` says ``content`` is what :meth:`admit` returned for this form (an
        answer checked once need not be checked again): it is used as it is."""
        clean: Any = content if checked else self.validate(content)
        return clean if self._binding is None else self._binding.build(clean)


SchemaLike: TypeAlias = FormSchema | Mapping[str, Any] | type[Any]


def _default_problem(spec: FieldSpec, checks: Iterable[Check] = ()) -> str | None:
    """What is wrong with the field's default as an answer to it (and to the checks of
    the keywords taken in beyond the subset), or None."""
    if spec.default is None:
        return None
    default = list(spec.default) if isinstance(spec, MultiChoice) else spec.default
    result = compile_field(spec)(default)
    message = result.message if isinstance(result, Invalid) else None
    message = message or next(filter(None, (check(result) for check in checks)), None)
    if message is not None:
        return f"the default {shown(default)} is not a valid answer: it {message}"
    return None


def _check_default(spec: FieldSpec, checks: Iterable[Check] = ()) -> None:
    problem = _default_problem(spec, checks)
    if problem is not None:
        raise FormSchemaError(problem, field=spec.name)


def _without_unfit_default(
    spec: FieldSpec, dropped: list[ValidationProblem], checks: Iterable[Check] = ()
) -> FieldSpec:
    """``spec``, without its default if the field refuses it (noted in ``dropped``)."""
    spec.check()  # a field no answer fits is refused, whatever its default
    problem = _default_problem(spec, checks)
    if problem is None:
        return spec
    dropped.append(ValidationProblem(spec.name, f"{problem}; it is not pre-filled"))
    return replace(spec, default=None)


def _not_a_form(spec: object) -> str:
    """What is wrong with ``spec`` as a form, naming the usual slip and its fix."""
    fix = "Form(name=String(), ...)"
    kind = type(spec)
    if isinstance(spec, Mapping | list | tuple) and any(
        isinstance(v, _SPEC_TYPES) for v in (spec.values() if isinstance(spec, Mapping) else spec)
    ):
        what = "dict" if isinstance(spec, Mapping) else kind.__name__
        what = f"fields given in a {what}: build the form with {fix} (or Form({{...}}) for names that are not identifiers)"
    elif spec is Form:
        what = f"the function Form itself: call it with the fields, {fix}"
    elif (choices := _choices(spec)) is not None:
        what = (
            f"{spec!r}: a choice is a form of one field, Form(value=Choice({choices!r})), "
            "read as answer.data['value']"
        )
    elif is_dataclass(spec) or hasattr(kind, "model_fields"):
        what = f"an instance of {kind.__name__}: pass the class itself, ctx.elicit(message, {kind.__name__})"
    else:
        what = repr(spec)
    return f"a form is a FormSchema, a requestedSchema mapping or a class, not {what}"


def _choices(spec: object) -> list[str] | None:
    """The options of a list of strings or a ``Literal`` of strings, which other toolkits
    take as a one-field choice; None for anything else."""
    options = get_args(spec) if get_origin(spec) is Literal else spec
    if isinstance(options, list | tuple) and options and all(isinstance(o, str) for o in options):
        return list(options)
    return None


def Form(fields: Mapping[str, FieldSpec] | None = None, /, **named: FieldSpec) -> FormSchema:
    """A form from field specs by name: ``Form(size=Integer(minimum=1), ok=Boolean(default=False))``.

    Fields are required unless made ``required=False``; order is the order given.
    Use the positional mapping for names that are not Python identifiers.
    """
    # A form built again from the same fields (Form(region=String()) inside a handler) is
    # the same immutable form: looked up, not rebuilt. A name given twice never gets a
    # key into the cache, since building it fails.
    if fields is not None and not isinstance(fields, Mapping):
        raise FormSchemaError(
            "Form() takes fields by name (Form(city=String())) or one mapping of them "
            f"({{'city': String()}}), not {type(fields).__name__}; named specs in a list go to FormSchema([...])"
        )
    key: tuple[Any, ...] | None
    try:
        pairs = named.items() if fields is None else [*fields.items(), *named.items()]
        key = ()
        for name, spec in pairs:  # a loop, not a comprehension: forms are a few fields long
            key += ((name, _spec_key(spec)),)
        form = _FORMS.entries.get(key)
    except (AttributeError, KeyError, TypeError):  # not specs, or unhashable: no cache
        key = form = None
    if form is not None:
        return form
    given: dict[str, FieldSpec] = dict(fields or {})
    for name, spec in named.items():
        if name in given:
            raise FormSchemaError("the field is given twice", field=name)
        given[name] = spec
    specs = []
    for name, spec in given.items():
        if not isinstance(spec, _SPEC_TYPES):
            raise FormSchemaError(
                f"expected a field spec such as String() or Integer(), not {spec!r}", field=name
            )
        if spec.name and spec.name != name:
            raise FormSchemaError(f"the spec is named {spec.name!r} but given as {name!r}", field=name)
        specs.append(spec if spec.name == name else replace(spec, name=name))
    form = FormSchema(specs)
    if key is not None:  # equal fields make an equal, immutable form: share it
        _FORMS.put(key, form, form._size)
    return form


#: ``Form(...)`` by its fields' names and :func:`_spec_key`.
_FORMS: _Kept[FormSchema] = _Kept()
