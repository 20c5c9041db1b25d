"""Rules engine speed: exact odds and random-dice resolution for every action the tests exercise.

    .venv/bin/python bench/bench_rules.py [--quick]

Targets (issue 4): exact odds of any single action under 20 ms; resolution with random dice under 1 ms.
Each figure is a median: exact odds timed call by call, resolution timed in blocks (timeit-style) and
divided by the block size. Resolution starts from the raw form dict, so it includes checking the inputs.
"""

import pathlib
import statistics
import sys
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))

from apps.rules import RandomDice, odds, resolve  # noqa: E402
from tests.rules.cases import CASES  # noqa: E402

EXACT_MS, RANDOM_US = 20.0, 1000.0


def median_exact_ms(key, state, inputs, repeats):
    odds(key, state, inputs)  # warm the distribution caches, as a running server has them
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        odds(key, state, inputs)
        times.append(time.perf_counter() - t)
    return statistics.median(times) * 1000


def median_random_us(key, state, inputs, blocks, per_block):
    dice = RandomDice(1)
    times = []
    for _ in range(blocks):
        t = time.perf_counter()
        for _ in range(per_block):
            resolve(key, state, inputs, dice)
        times.append((time.perf_counter() - t) / per_block)
    return statistics.median(times) * 1e6


def main(argv):
    quick = "--quick" in argv
    repeats, blocks, per_block = (5, 5, 50) if quick else (41, 21, 200)
    rows, ok = [], True
    for case in CASES:
        state, key, inputs = case()
        exact = median_exact_ms(key, state, inputs, repeats)
        rand = median_random_us(key, state, inputs, blocks, per_block)
        n = len(odds(key, state, inputs).outcomes)
        passed = exact < EXACT_MS and rand < RANDOM_US
        ok &= passed
        rows.append((case.__name__, key, n, exact, rand, "PASS" if passed else "FAIL"))
    print(f"{'case':<18} {'action':<20} {'outcomes':>8} {'exact odds ms':>14} {'random µs':>10}  result")
    print(f"{'':<18} {'':<20} {'':>8} {'(< 20 ms)':>14} {'(< 1000)':>10}")
    for name, key, n, exact, rand, verdict in rows:
        print(f"{name:<18} {key:<20} {n:>8} {exact:>14.2f} {rand:>10.1f}  {verdict}")
    print("ALL PASS" if ok else "SOME FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
