#!/usr/bin/env python3
"""Reduces a scenario on which msc and OTP 27 disagree (or OTP crashes).

    testdata/trace/otp/reduce.py SCENARIO OUT [MUST]

Drops terms, in halving chunks down to single terms, as long as msc's output
still differs from OTP's (and, if MUST is given, the difference shows the
text MUST), then writes the smallest scenario found to OUT and prints OTP's
output for it. With MUST = CRASH it keeps the scenarios OTP's emulator
crashes on instead. Each try runs OTP once (about a second).

Needs what generate.sh needs (OTP 27 in OTP_CHROOT, default /opt/otp27), and
run-scenario compiled into the scratch directory, which any generate.sh run
leaves there; MSC names msc (default target/release/msc).
"""
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.environ.get("OTP_CHROOT", "/opt/otp27")
SCRATCH = os.environ.get("OTP_SCRATCH", "/tmp/scenario-gen")
MSC = os.environ.get("MSC", os.path.join(HERE, "../../../target/release/msc"))
WORK = SCRATCH + "/reduce"


def otp(terms):
    """OTP's run of the terms: (exit status, output)."""
    os.makedirs(ROOT + WORK, exist_ok=True)
    with open(ROOT + WORK + "/try.scenario", "w") as f:
        f.write("\n".join(terms) + "\n")
    run = subprocess.run(
        ["chroot", ROOT, "env", "SCENARIO_CACHE=" + SCRATCH + "/cache", "erl", "+S", "1",
         "-noshell", "-pa", SCRATCH, "-run", "run_scenario", "main", WORK + "/try.scenario"],
        capture_output=True, text=True)
    return run.returncode, run.stdout


def differs(terms, must):
    status, output = otp(terms)
    if must == "CRASH":
        return status in (134, 139, -6, -11)
    if status != 0:
        return False
    with open(ROOT + WORK + "/try.expected", "w") as f:
        f.write(output)
    check = subprocess.run(
        [MSC, "trace", ROOT + WORK + "/try.scenario", "--expect", ROOT + WORK + "/try.expected"],
        capture_output=True, text=True)
    return check.returncode != 0 and (must is None or must in check.stdout)


def main():
    if len(sys.argv) not in (3, 4):
        sys.exit(__doc__)
    source, out = sys.argv[1], sys.argv[2]
    must = sys.argv[3] if len(sys.argv) == 4 else None
    text = open(source).read()
    terms = [t.strip() for t in re.split(r"(?<=\.)\s*\n", text)
             if t.strip() and not t.lstrip().startswith("%")]
    if not differs(terms, must):
        sys.exit("msc and OTP agree on it (or OTP cannot run it): nothing to reduce")
    chunk = max(1, len(terms) // 4)
    while chunk >= 1:
        i = 0
        while i < len(terms):
            candidate = terms[:i] + terms[i + chunk:]
            if candidate and differs(candidate, must):
                terms = candidate
                print(f"{len(terms)} terms", file=sys.stderr)
            else:
                i += chunk
        chunk //= 2
    with open(out, "w") as f:
        f.write("\n".join(terms) + "\n")
    print(otp(terms)[1])


if __name__ == "__main__":
    main()
