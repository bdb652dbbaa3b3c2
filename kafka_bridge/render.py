"""Kafka's objects written as the Java that builds them, the way Kafka's own tests
build them: a generated message (``BrokerRegistrationRequestData``,
``AlterPartitionRequestData``, ...) as ``new X()`` and a chain of setters, one
per field whose value is not the field's default, read by Java reflection from
the message Kafka's code saw. Nested structs, lists and Kafka's keyed
collections (``ImplicitLinkedHashMultiCollection``) are written the same way.

``JavaSource`` gathers the imports the expressions need. Every value is read from
the JVM: call these in the process that holds the objects.
"""

from __future__ import annotations

import json
from typing import Any

import attrs

#: Java packages whose classes need no import in a test of Kafka's controller package.
_NO_IMPORT = ("java.lang", "org.apache.kafka.controller")


@attrs.define
class JavaSource:
    """The imports a piece of generated Java needs (fully qualified top-level classes),
    and ``named``: (Java value, expression) pairs, a value equal to one written as its
    expression (a fixture's constant, say) instead of spelled out."""

    imports: set[str] = attrs.Factory(set)
    named: list[tuple[Any, str]] = attrs.Factory(list)

    def known(self, value: Any) -> Any:
        """The expression naming ``value``, or None."""
        _, objects = _reflect()
        return next((text for v, text in self.named if objects.equals(v, value)), None)

    def name(self, java_class: Any) -> str:
        """How generated code names ``java_class`` (a ``java.lang.Class``): its simple
        name, nested classes through their outer one, the outer class imported."""
        top, _, nested = str(java_class.getName()).partition("$")
        simple = self.use(top)
        return ".".join([simple] + nested.split("$")) if nested else simple

    def use(self, qualified: str) -> str:
        """Import ``qualified`` (a top-level class) and return its simple name."""
        package, _, simple = qualified.rpartition(".")
        if package not in _NO_IMPORT:
            self.imports.add(qualified)
        return simple

    def import_lines(self) -> str:
        return "\n".join(f"import {i};" for i in sorted(self.imports))


def _reflect() -> Any:
    from jpype import JClass
    return JClass("java.lang.reflect.Modifier"), JClass("java.util.Objects")


def _instance_of(obj: Any, class_name: str) -> bool:
    from jpype import JClass
    return bool(JClass(class_name).class_.isInstance(obj))


def int_array(xs: Any) -> str:
    """A Java ``int[]`` literal of ``xs``."""
    return "new int[] {" + ", ".join(str(int(x)) for x in xs) + "}"


def long_array(xs: Any) -> str:
    """A Java ``long[]`` literal of ``xs``."""
    return "new long[] {" + ", ".join(f"{int(x)}L" for x in xs) + "}"


def string_literal(text: str) -> str:
    """A Java string literal of ``text`` (JSON's escapes are Java's for these texts)."""
    return json.dumps(str(text), ensure_ascii=True)


def _is_message(obj: Any) -> bool:
    return _instance_of(obj, "org.apache.kafka.common.protocol.Message")


def _lineage(cls: Any) -> Any:
    """``cls`` and its superclasses."""
    while cls is not None:
        yield cls
        cls = cls.getSuperclass()


def _is_keyed_collection(obj: Any) -> bool:
    """Kafka's ``ImplicitLinkedHashCollection`` (its package moved in 4.x: found by name)."""
    return any(str(c.getSimpleName()) == "ImplicitLinkedHashCollection" for c in _lineage(obj.getClass()))


def _is_collection_element(cls: Any) -> bool:
    """An element of one (``ImplicitLinkedHashCollection.Element``: its links are not data)."""
    return any(str(i.getSimpleName()) == "Element" for c in _lineage(cls) for i in c.getInterfaces())


def expression(value: Any, java_type: Any, source: JavaSource, indent: int = 0) -> str:
    """The Java expression of ``value`` (a Kafka object read from the JVM, or a
    primitive) of declared type ``java_type`` (a ``java.lang.Class``; None when
    the value's own class is the type). Raises ValueError for a type it cannot
    write."""
    if value is None:
        return "null"
    type_name = str(java_type.getName()) if java_type is not None else ""
    if type_name in ("int", "java.lang.Integer"):
        return str(int(value))
    if type_name in ("long", "java.lang.Long"):
        return f"{int(value)}L"
    if type_name in ("short", "java.lang.Short"):
        return f"(short) {int(value)}"
    if type_name in ("byte", "java.lang.Byte"):
        return f"(byte) {int(value)}"
    if type_name in ("boolean", "java.lang.Boolean"):
        return "true" if bool(value) else "false"
    if type_name == "java.lang.String":
        return string_literal(value)
    return _object_expression(value, source, indent)


def _object_expression(value: Any, source: JavaSource, indent: int) -> str:
    named = source.known(value)
    if named is not None:
        return named
    cls = value.getClass()
    name = str(cls.getName())
    if name == "org.apache.kafka.common.Uuid":
        return f"{source.use(name)}.fromString({string_literal(value.toString())})"
    if name in ("java.lang.Integer", "java.lang.Long", "java.lang.Short", "java.lang.Byte", "java.lang.Boolean",
                "java.lang.String"):
        return expression(value, cls, source, indent)
    if _is_message(value):
        return message_expression(value, source, indent)
    if _is_keyed_collection(value):
        items = _list_expression(list(value), source, indent)
        return f"new {source.name(cls)}({items}.iterator())"
    if _instance_of(value, "java.util.Collection"):
        return _list_expression(list(value), source, indent)
    raise ValueError(f"cannot write a {name} as Java")


def _list_expression(items: list, source: JavaSource, indent: int) -> str:
    list_name = source.use("java.util.List")
    parts = [_object_expression(i, source, indent + 4) for i in items]
    if all("\n" not in p for p in parts) and sum(len(p) for p in parts) < 60:
        return f"{list_name}.of({', '.join(parts)})"
    pad = " " * (indent + 4)
    return f"{list_name}.of(\n" + ",\n".join(pad + p for p in parts) + ")"


def message_expression(message: Any, source: JavaSource, indent: int = 0) -> str:
    """``new X()`` and a setter per field of ``message`` (a Kafka generated message)
    that differs from a new instance's; short chains on one line."""
    modifier, objects = _reflect()
    cls = message.getClass()
    fresh = cls.getDeclaredConstructor().newInstance()
    setters = []
    element = _is_collection_element(cls)
    for field in cls.getDeclaredFields():
        field_name = str(field.getName())
        if modifier.isStatic(field.getModifiers()) or field_name.startswith("_") or \
                (element and field_name in ("next", "prev")):   # the collection's links, not data
            continue
        field.setAccessible(True)
        value, default = field.get(message), field.get(fresh)
        if objects.equals(value, default):
            continue
        setter = "set" + field_name[0].upper() + field_name[1:]
        setters.append(f".{setter}({expression(value, field.getType(), source, indent + 4)})")
    head = f"new {source.name(cls)}()"
    if all("\n" not in s for s in setters) and len(head) + sum(len(s) for s in setters) < 90:
        return head + "".join(setters)
    pad = " " * (indent + 4)
    return head + "".join(f"\n{pad}{s}" for s in setters)
