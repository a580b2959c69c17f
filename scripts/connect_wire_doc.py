"""Writes the reference part of docs/connect-wire.md from spark/src/main/proto/rspy_connect.proto.

The .proto's comments are the documentation: this reads them from the descriptor set the build
generates (protoc --include_source_info, in the Spark connectors' jar) and writes the tables of
the messages, the ops and the events between the doc's two markers. ``--check`` writes nothing
and exits 1 if the doc is not what the .proto says (tests/spark/test_connect_messages.py runs it).

    python scripts/connect_wire_doc.py [--check]
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

DOC = Path(__file__).resolve().parent.parent / "docs" / "connect-wire.md"
BEGIN = "<!-- generated from spark/src/main/proto/rspy_connect.proto by scripts/connect_wire_doc.py -->"
END = "<!-- end of the generated part -->"

# FieldDescriptorProto's types, as the .proto spells them.
_TYPES = {1: "double", 2: "float", 3: "int64", 4: "uint64", 5: "int32", 8: "bool", 9: "string", 12: "bytes"}
# DescriptorProto's and FileDescriptorProto's field numbers, for source locations.
_FIELD, _NESTED, _ENUM, _MESSAGE = 2, 3, 4, 4


def reference(descriptor_set: Any) -> str:
    """The generated part of the doc: one table per message, the ops and the events."""
    (proto,) = descriptor_set.file
    comments = {
        tuple(location.path): " ".join(location.leading_comments.split())
        for location in proto.source_code_info.location
    }
    messages: dict[str, tuple[Any, tuple[int, ...]]] = {}

    def walk(message: Any, path: tuple[int, ...], prefix: str) -> None:
        messages[prefix + message.name] = (message, path)  # map entries too, for type_of
        for j, nested in enumerate(message.nested_type):
            walk(nested, (*path, _NESTED, j), prefix + message.name + ".")

    for i, message in enumerate(proto.message_type):
        walk(message, (_MESSAGE, i), "")

    def type_of(field: Any) -> str:
        if not field.type_name:
            return _TYPES[field.type]
        name = field.type_name.removeprefix(f".{proto.package}.")  # Status.Stats.StreamsEntry
        entry = messages.get(name, (None,))[0]
        if entry is not None and entry.options.map_entry:
            return f"map<{type_of(entry.field[0])}, {type_of(entry.field[1])}>"
        return name.rsplit(".", 1)[-1]

    def field_cells(message: Any, path: tuple[int, ...], skip_oneof: bool) -> list[str]:
        cells = []
        for k, field in enumerate(message.field):
            if skip_oneof and field.HasField("oneof_index") and not field.proto3_optional:
                continue
            label = "repeated " if field.label == 3 and not type_of(field).startswith("map<") else ""
            label = "optional " if field.proto3_optional else label
            text = comments.get((*path, _FIELD, k), "")
            cells.append(f"`{field.name}` (`{label}{type_of(field)}`){': ' + text if text else ''}")
        return cells

    def oneof_table(name: str, heading: str) -> list[str]:
        message, path = messages[name]
        lines = [f"| {heading} | Fields | |", "|---|---|---|"]
        for k, field in enumerate(message.field):
            if not field.HasField("oneof_index") or field.proto3_optional:
                continue
            inner, inner_path = messages[f"{name}.{type_of(field)}"]
            fields = "<br>".join(field_cells(inner, inner_path, False)) or "none"
            lines.append(f"| `{field.name}` | {fields} | {comments.get((*path, _FIELD, k), '')} |")
        return lines

    def message_table(name: str) -> list[str]:
        message, path = messages[name]
        lines = [f"**{name}**. {comments.get(path, '')}", "", "| Field | |", "|---|---|"]
        for cell in field_cells(message, path, True):
            field, _, text = cell.partition(": ")
            lines.append(f"| {field} | {text} |")
        return lines

    out = [BEGIN, "", "## Messages", ""]
    out += [*message_table("Call"), ""]
    out += ["### The ops", "", "A Call's op is one of these (`Call.op`), each with its fields:", ""]
    out += [*oneof_table("Call", "Op"), ""]
    call, call_path = messages["Call"]
    for e, enum in enumerate(call.enum_type):
        values = ", ".join(f"`{v.name}` ({v.number})" for v in enum.value)
        out += [f"**Call.{enum.name}**: {values}. {comments.get((*call_path, _ENUM, e), '')}".rstrip(), ""]
    out += [*message_table("Status"), ""]
    out += ["### The events", "", "A Status's event is one of these (`Status.event`), with its fields:", ""]
    out += [*oneof_table("Status", "Event"), ""]
    for name in ("Status.Stats", "Status.Diagnostics", "StreamCounters", "Elements"):
        out += [*message_table(name), ""]
    return "\n".join([*out, END])


def main(argv: list[str]) -> int:
    from reactive_streams.spark._connect._messages import descriptor_set

    text = DOC.read_text()
    head, begin, rest = text.partition(BEGIN)
    _, end, tail = rest.partition(END)
    if not begin or not end:
        print(f"{DOC} has no generated part: put the markers {BEGIN!r} and {END!r} in it", file=sys.stderr)
        return 2
    wanted = head + reference(descriptor_set()) + tail
    if argv[1:] == ["--check"]:
        if wanted != text:
            print(f"{DOC} is not what the .proto says: run scripts/connect_wire_doc.py", file=sys.stderr)
            return 1
        return 0
    DOC.write_text(wanted)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
