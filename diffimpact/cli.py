"""The ``diffimpact`` command line."""

import argparse
import inspect
import sys
import time
from pathlib import Path


def _reproduce(args):
    from diffimpact.reproduce import REPRODUCTIONS

    if args.list or args.name is None:
        width = max(map(len, REPRODUCTIONS))
        for name, (_, description) in REPRODUCTIONS.items():
            print(f"{name:<{width}}  {description}")
        return 0
    if args.name not in REPRODUCTIONS:
        print(f"unknown reproduction {args.name!r}; choose from: {', '.join(REPRODUCTIONS)}", file=sys.stderr)
        return 2
    run, description = REPRODUCTIONS[args.name]
    options = {}
    if args.lambda_data is not None:
        if args.name != "damping-alpha-beta":
            print("--lambda-data applies to damping-alpha-beta only", file=sys.stderr)
            return 2
        if not Path(args.lambda_data).is_file():
            print(f"--lambda-data: no such file {args.lambda_data}", file=sys.stderr)
            return 2
        options["lambda_data"] = args.lambda_data
    print(f"{args.name}: {description}{' (quick)' if args.quick else ''}", flush=True)
    start = time.perf_counter()
    summary = run(Path(args.out), quick=args.quick, **options)
    print(summary)
    print(f"wrote {Path(args.out) / args.name}.csv and .png in {time.perf_counter() - start:.1f} s")
    return 0


def _fit(args):
    # The CLI is the application layer: it alone reaches into the ``fitting``
    # package, lazily; the diffimpact library never imports it.
    from fitting.studies import FITS

    if args.list or args.name is None:
        width = max(map(len, FITS))
        for name, (_, description) in FITS.items():
            print(f"{name:<{width}}  {description}")
        return 0
    if args.name not in FITS:
        print(f"unknown fit {args.name!r}; choose from: {', '.join(FITS)}", file=sys.stderr)
        return 2
    run, description = FITS[args.name]
    options = {}
    if args.data is not None or args.drop_bad_rows:
        if "data" not in inspect.signature(run).parameters:
            print(f"--data and --drop-bad-rows do not apply to {args.name}", file=sys.stderr)
            return 2
        if args.data is not None and not Path(args.data).is_file():
            print(f"--data: no such file {args.data}", file=sys.stderr)
            return 2
        options = {"data": args.data, "drop_bad_rows": args.drop_bad_rows}
    print(f"{args.name}: {description}{' (quick)' if args.quick else ''}", flush=True)
    try:
        print(run(Path(args.out), quick=args.quick, **options))
    except ValueError as error:  # bad input (DataError included) is reported, not traced back
        print(f"diffimpact fit {args.name}: {error}", file=sys.stderr)
        return 2
    return 0


def main(argv=None):
    parser = argparse.ArgumentParser(prog="diffimpact", description="Differentiable contact and impact simulation.")
    commands = parser.add_subparsers(dest="command", required=True)
    reproduce = commands.add_parser("reproduce", help="run a published experiment; writes DIR/NAME.csv and DIR/NAME.png")
    reproduce.add_argument("name", nargs="?", help="which reproduction (see --list)")
    reproduce.add_argument("--out", default="out", help="output directory (default: out)")
    reproduce.add_argument("--quick", action="store_true", help="coarse grids, for a fast look")
    reproduce.add_argument("--list", action="store_true", help="list the reproductions")
    reproduce.add_argument(
        "--lambda-data",
        metavar="CSV",
        help="damping-alpha-beta: fit α, β to this λ(n, e) grid (e.g. data/damping_lambda.csv) instead of recomputing it",
    )
    fit = commands.add_parser("fit", help="run a parameter fit; writes JSON, CSV and PNG into --out")
    fit.add_argument("name", nargs="?", help="which fit (see --list)")
    fit.add_argument("--out", default="out", help="output directory (default: out)")
    fit.add_argument("--quick", action="store_true", help="fewer data points and steps, for a fast look")
    fit.add_argument("--list", action="store_true", help="list the fits")
    fit.add_argument("--data", metavar="CSV", help="your own measurements (columns per fit: see data/README.md)")
    fit.add_argument("--drop-bad-rows", action="store_true", help="drop invalid rows of --data (reported) instead of failing")
    args = parser.parse_args(argv)
    import diffimpact  # noqa: F401  (enables float64 before any computation)

    return _reproduce(args) if args.command == "reproduce" else _fit(args)


if __name__ == "__main__":
    sys.exit(main())
