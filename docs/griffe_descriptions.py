"""Griffe extension: read ``name : description`` items of numpy-style sections as descriptions.

The docstrings of diffimpact and fitting write the items of their
Parameters, Other Parameters and Attributes sections as ``name : what it is
(units), range``, without types (the code has no type annotations either).
Griffe's numpy parser would take the text after the colon for a type. This
extension rewrites such an item, before parsing, to the numpy form without a
type: ``name`` on its line and the text, indented, as the first line of its
description. An item whose text is one word (``array_like``, ``int``) is a
type and is left alone.
"""

import re

import griffe

SECTIONS = {"Parameters", "Other Parameters", "Attributes"}
ITEM = re.compile(r"^(?P<names>\*{0,2}\w+(?:, \*{0,2}\w+)*) : (?P<text>.+)$")
TYPE = re.compile(r"^[\w.\[\]|]+$")


def rewrite(text):
    """``text`` with the items of its Parameters, Other Parameters and Attributes sections split as above."""
    lines = text.split("\n")
    out, section = [], None
    for k, line in enumerate(lines):
        following = lines[k + 1] if k + 1 < len(lines) else ""
        if line.strip() and set(following.strip()) == {"-"}:
            section = line.strip()
        item = ITEM.match(line)
        if section in SECTIONS and item and not TYPE.match(item["text"]):
            out += [item["names"], "    " + item["text"]]
        else:
            out.append(line)
    return "\n".join(out)


class DescriptionItems(griffe.Extension):
    """Apply ``rewrite`` to every docstring as it is loaded."""

    def on_instance(self, *, obj, **kwargs):
        del kwargs
        if obj.docstring is not None:
            obj.docstring.value = rewrite(obj.docstring.value)
