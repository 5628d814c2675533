"""The benchmark scripts' reading of a run-time error raised inside a compiled program (``equinox.error_if``'s, an
XLA runtime error): its text comes wrapped in the callback's traceback, and its own message is on the line that
names it."""


def message(error):
    """The message of ``error``: the text after "RuntimeError: " on the first line that names one and is not
    equinox's note on the stack ("Above is the stack outside of JIT"), else the first line."""
    lines = str(error).strip().splitlines()
    return next((line.split("RuntimeError: ", 1)[1].strip() for line in lines
                 if "RuntimeError: " in line and "Above is the stack" not in line), lines[0])
