"""pooltool's side of ``rigid_break.py``, run by the Python of an environment with pooltool installed.

    python benchmarks/_pooltool_break.py '{"centres": [[x, y], ...], "speed": 10.70, ...}'

Sets up pooltool's pocket table with the given playing surface (its own pockets and jaws), the balls at the given
centres (diffimpact's frame: origin in the middle, x from the head to the foot; pooltool's: origin in a corner, y
along the length) with the given ball parameters (those this pooltool's ``BallParams`` has), the cue ball sliding
at the given speed along the length without spin, and pooltool's default models. Simulates the shot to rest
``repeats`` + 1 times and prints JSON: every call's wall time (s; the first compiles pooltool's Numba functions
unless its cache has them), the events by type, the shot's duration and the final centres in diffimpact's frame.
Imports only pooltool, attrs and NumPy (diffimpact need not be installed here).
"""

import json
import sys
import time
from collections import Counter

import attrs
import pooltool as pt
from pooltool.objects.table.specs import PocketTableSpecs


def main():
    setup = json.loads(sys.argv[1])
    length, width = setup["length"], setup["width"]
    table = pt.Table.from_table_specs(PocketTableSpecs(l=length, w=width))
    known = attrs.fields_dict(pt.BallParams)
    params = {name: value for name, value in setup["ball"].items() if name in known}
    names = ["cue"] + [str(k) for k in range(1, len(setup["centres"]))]
    balls = {name: pt.Ball.create(name, xy=(width / 2 - y, length / 2 + x), **params)
             for name, (x, y) in zip(names, setup["centres"], strict=True)}
    cue = balls["cue"]
    cue.state.rvw[1] = [0.0, setup["speed"], 0.0]  # along +y, pooltool's length: diffimpact's +x
    cue.state.s = pt.constants.sliding
    system = pt.System(table=table, balls=balls, cue=pt.Cue(cue_ball_id="cue"))
    times, shot = [], None
    for _ in range(setup["repeats"] + 1):
        shot = system.copy()
        start = time.perf_counter()
        pt.simulate(shot, inplace=True)
        times.append(time.perf_counter() - start)
    final = [[float(ball.state.rvw[0][1] - length / 2), float(width / 2 - ball.state.rvw[0][0])]
             for ball in (shot.balls[name] for name in names)]
    kinds = Counter(str(event.event_type.value) for event in shot.events)
    print(json.dumps({"version": pt.__version__, "times": times, "events": dict(kinds), "duration": float(shot.t),
                      "final": final, "unused": sorted(set(setup["ball"]) - set(params))}))


if __name__ == "__main__":
    main()
