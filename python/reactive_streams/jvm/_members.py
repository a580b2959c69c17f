"""`java_member`: a Java member whose name is a Python keyword (``Flux.from``), the same way on
every backend. JPype renames such members with a trailing underscore (``Flux.from_``) and
refuses ``getattr(Flux, "from")``; Py4J takes ``getattr(Flux, "from")`` and knows no
``from_``."""

from __future__ import annotations

from typing import Any

from ._view import JvmPackage

__all__ = ["java_member"]

_PY4J = "py4j.java_gateway"


def java_member(target: Any, name: str) -> Any:
    """The member ``name`` (a method, a field's value, or a nested class) of a JVM class or
    object, from any backend, even when ``name`` is a Python keyword::

        Flux = bridge.jvm.reactor.core.publisher.Flux
        flux = java_member(Flux, "from")(bridge.to_jvm(publisher))   # Flux.from(publisher)

    ``name`` is tried as it is, then with JPype's trailing underscore (``from_``).

    Args:
        target: a JVM class (``bridge.jvm.some.Class``) or object, from a Spark, Py4J or JPype
            bridge.
        name: the member's Java name.

    Raises:
        AttributeError: neither ``name`` nor ``name + "_"`` is a member of ``target`` (the
            message names the Java class), or ``target`` is a Java package: a class that is
            not on the JVM's classpath (`JvmClassNotFoundError` for one of ``bridge.jvm``,
            naming the classpath).
    """
    if not isinstance(name, str) or not name:
        raise TypeError(f"java_member() needs a member name (a non-empty str), got {name!r}")
    if isinstance(target, JvmPackage):  # bridge.jvm's: a name that is no class, on Py4J
        raise target.not_found()
    kind = type(target)
    if kind.__module__ == _PY4J and kind.__name__ == "JavaPackage":
        raise AttributeError(
            f"{target._fqn} is not a class of the JVM (Py4J sees a package of that name): is the jar "
            "that holds it on the classpath?"
        )
    for candidate in (name, f"{name}_"):
        if kind.__module__ == _PY4J and kind.__name__ == "JavaObject":
            # Py4J's objects answer every attribute with a method stub: ask the JVM first.
            if candidate not in _py4j_members(target):
                continue
        try:
            return getattr(target, candidate)
        except Exception:  # JPype: AttributeError; Py4J classes: Py4JError ("does not exist")
            continue
    raise AttributeError(f"{_java_name(target)} has no member {name!r} (nor {name + '_'!r})")


def _py4j_members(target: Any) -> set[str]:
    """The public method and field names of a Py4J ``JavaObject``, as Java reports them."""
    from py4j import protocol
    from py4j.java_gateway import get_return_value

    names: set[str] = set()
    for sub_command in (protocol.DIR_METHODS_SUBCOMMAND_NAME, protocol.DIR_FIELDS_SUBCOMMAND_NAME):
        command = (
            protocol.DIR_COMMAND_NAME + sub_command + target._target_id + "\n" + protocol.END_COMMAND_PART
        )
        answer = target._gateway_client.send_command(command)
        names.update(
            str(get_return_value(answer, target._gateway_client, target._target_id, "__dir__")).split("\n")
        )
    return names


def _java_name(target: Any) -> str:
    """The Java class name of ``target`` (a class, or an object's class), for a message."""
    kind = type(target)
    if kind.__module__ == _PY4J:
        if kind.__name__ == "JavaClass":
            return str(target._fqn)
        try:
            return str(target.getClass().getName())
        except Exception:
            return repr(target)
    if isinstance(target, type):  # a JPype class is a Python type named after the Java class
        return target.__name__
    return kind.__name__  # a JPype object's type is named after its Java class
