"""One registry per kind of plug-in: index kinds, LLM backends, embedders, policies, metrics, executors…. A :class:`Registry`
maps a name to a plug-in (a class or a factory), and everything that lists the plug-ins of a kind derives the
list from it — argparse ``choices``, pydantic field types (:meth:`Registry.field`), config sections, the
parametrised contract tests — so adding a plug-in is one class plus one line (``INDEX_KINDS.add("toy",
ToyIndex)``). A lookup of an unknown name raises :class:`UnknownName` (a :class:`~rag_lab.errors.ConfigError` and
a ``KeyError``) naming the registry and its choices. The registries: docs/design.md §7."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import Annotated, Any, Generic, TypeVar

from pydantic import AfterValidator, WithJsonSchema

from rag_lab.errors import ConfigError, NotFound

T = TypeVar("T")


class UnknownName(NotFound):
    """A name that is not in its registry; the message lists the registered names."""


class Registry(Mapping[str, T], Generic[T]):
    """Named plug-ins of one kind, in registration order (a read-only mapping plus :meth:`add`).

    >>> colours = Registry("colour")
    >>> colours.add("red", 0xFF0000)
    16711680
    >>> colours.names()
    ('red',)
    >>> colours.add("black", 0x000000, before="red")   # where a registry's order is asked (the stop rules)
    0
    >>> colours.names()
    ('black', 'red')
    >>> colours["blue"]
    Traceback (most recent call last):
    ...
    rag_lab.registry.UnknownName: unknown colour 'blue'; choose one of black, red"""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self._items: dict[str, T] = {}

    def add(self, name: str, item: T, *, before: str | None = None) -> T:
        """Register ``item`` under ``name`` (a name is registered once) and return it: last, or just ``before``
        a registered name (for a registry whose order is asked, such as the stop rules)."""
        if not name or not isinstance(name, str):
            raise ConfigError(f"a {self.kind} needs a non-empty name, got {name!r}")
        if name in self._items:
            raise ConfigError(f"{self.kind} {name!r} is already registered ({self._items[name]!r})")
        if before is None:
            self._items[name] = item
            return item
        self.check(before)
        items = list(self._items.items())
        at = [n for n, _ in items].index(before)
        self._items = dict([*items[:at], (name, item), *items[at:]])
        return item

    def register(self, name: str) -> Callable[[T], T]:
        """Decorator form of :meth:`add`: ``@BACKENDS.register("sim")``."""
        return lambda item: self.add(name, item)

    def remove(self, name: str) -> T:
        """Unregister ``name`` (for tests that register a toy plug-in and must leave no trace)."""
        self[name]  # noqa: B018  (the helpful error)
        return self._items.pop(name)

    def __getitem__(self, name: str) -> T:
        try:
            return self._items[name]
        except (KeyError, TypeError):
            raise UnknownName(f"unknown {self.kind} {name!r}; choose one of {', '.join(self._items)}") from None

    def __iter__(self) -> Iterator[str]:
        return iter(tuple(self._items))

    def __len__(self) -> int:
        return len(self._items)

    def __repr__(self) -> str:
        return f"Registry({self.kind!r}: {', '.join(self._items)})"

    def names(self) -> tuple[str, ...]:
        """The registered names, in registration order (what argparse ``choices`` take)."""
        return tuple(self._items)

    def check(self, name: str) -> str:
        """``name`` if it is registered, else :class:`UnknownName`."""
        self[name]  # noqa: B018
        return name

    def field(self) -> Any:
        """A pydantic field type for a name of this registry: a ``str`` checked against the registry
        when validated (so a plug-in registered later is accepted), whose JSON schema lists the names.
        The widgets read the registry back from the type (:func:`registry_of`) to offer the names."""
        schema = WithJsonSchema({"type": "string", "enum": list(self._items)})
        return Annotated[str, AfterValidator(self.check), schema, _RegistryMarker(self)]


class _RegistryMarker:
    """Metadata on a :meth:`Registry.field` type that leads back to its registry."""

    def __init__(self, registry: Registry[Any]) -> None:
        self.registry = registry

    def __repr__(self) -> str:
        return f"names of {self.registry!r}"


def registry_of(metadata: list[Any] | tuple[Any, ...]) -> Registry[Any] | None:
    """The registry behind a field made by :meth:`Registry.field` (from its pydantic ``metadata``), else None."""
    return next((m.registry for m in metadata if isinstance(m, _RegistryMarker)), None)
