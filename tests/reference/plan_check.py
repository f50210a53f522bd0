#!/usr/bin/env python3
"""Checks `evald plan` against an independent simulation under the same stated assumptions.

  plan_check.py EVALD

Runs the worked example of the README (pass@1 0.641 vs 0.697 on 156 problems: delta 0.056,
alpha 0.05, power 0.8, tau 0.15), reads evald's answer (samples per problem for each question),
then simulates evaluations itself - its own random numbers, its own code, only the model taken
from evald's stated assumptions:

  baseline rates  p_i: 156 logit-normal rates, logit SD 2.5, mean 0.641 (quantiles)
  other rates     q_i = clip(p_i + shift + tau z_i, 0, 1), shift so that mean(q - p) = delta
                  with z_i the normal quantiles (in a shuffled order)
  this problem set: fixed p_i, q_i; z-test of the mean difference with binomial SE
  problems like these: problems drawn with replacement, z_i drawn anew; paired t over problems

and checks that the simulated power at evald's n is near the target and clearly lower at n / 2.
Exit 0 pass, 1 fail.
"""
import json
import math
import os
import random
import subprocess
import sys
import tempfile

ALPHA, POWER, DELTA, TAU, P, MEAN, LOGIT_SD = 0.05, 0.8, 0.056, 0.15, 156, 0.641, 2.5
RUNS = 1500


def norm_ppf(p):
    lo, hi = -40.0, 40.0
    for _ in range(200):
        mid = (lo + hi) / 2
        if 0.5 * math.erfc(-mid / math.sqrt(2)) < p:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2


def baseline():
    z = [norm_ppf((i + 0.5) / P) for i in range(P)]
    lo, hi = -40.0, 40.0
    for _ in range(200):
        mu = (lo + hi) / 2
        m = sum(1 / (1 + math.exp(-(mu + LOGIT_SD * x))) for x in z) / P
        lo, hi = (mu, hi) if m < MEAN else (lo, mu)
    return [1 / (1 + math.exp(-((lo + hi) / 2 + LOGIT_SD * x))) for x in z]


def shift_for(p, z):
    lo, hi = -3.0, 3.0
    for _ in range(100):
        s = (lo + hi) / 2
        d = sum(min(1, max(0, pi + s + TAU * zi)) - pi for pi, zi in zip(p, z)) / len(p)
        lo, hi = (s, hi) if d < DELTA else (lo, s)
    return (lo + hi) / 2


def binom(rng, n, p):
    return sum(1 for _ in range(n) if rng.random() < p)


def simulate(p, n, fixed, rng):
    # The model's z_i: the normal quantiles, in an order of this script's own choosing.
    z_fixed = [norm_ppf((i + 0.5) / len(p)) for i in range(len(p))]
    rng.shuffle(z_fixed)
    shift = shift_for(p, z_fixed)
    crit = norm_ppf(1 - ALPHA / 2)
    rejected = 0
    for _ in range(RUNS):
        a, b = [], []
        for i in range(len(p)):
            pi = p[i] if fixed else rng.choice(p)
            zi = z_fixed[i] if fixed else rng.gauss(0, 1)
            qi = min(1, max(0, pi + shift + TAU * zi))
            a.append(binom(rng, n, pi) / n)
            b.append(binom(rng, n, qi) / n)
        d = [y - x for x, y in zip(a, b)]
        mean = sum(d) / len(d)
        if fixed:
            se = math.sqrt(sum(x * (1 - x) + y * (1 - y) for x, y in zip(a, b)) / max(1, n - 1)) / len(d)
        else:
            var = sum((x - mean) ** 2 for x in d) / (len(d) - 1)
            se = math.sqrt(var / len(d))
        if (abs(mean) / se > crit) if se > 0 else mean != 0:
            rejected += 1
    return rejected / RUNS


def main():
    evald = sys.argv[1]
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "plan.json")
        subprocess.run([evald, "plan", "--pass-at-1", str(MEAN), "--problems", str(P), "--delta",
                        str(DELTA), "--tau", str(TAU), "--simulations", "500", "--json", out],
                       check=True, stdout=subprocess.DEVNULL)
        plan = json.load(open(out))
    p = baseline()
    rng = random.Random(20261201)
    ok = True
    for answer in plan["answers"]:
        fixed = answer["question"] == "this problem set"
        n = answer["samples_needed"]
        if n <= 0:
            print(f"{answer['question']}: evald says unreachable; floor {answer['mde_floor']:.3f}")
            ok = ok and not fixed and answer["mde_floor"] > DELTA
            continue
        power = simulate(p, n, fixed, rng)
        half = simulate(p, max(1, n // 2), fixed, rng) if n >= 2 else 0.0
        print(f"{answer['question']}: evald n = {n}; independent simulation: power {power:.3f} "
              f"at n, {half:.3f} at n/2")
        ok = ok and abs(power - POWER) < 0.07 and (n < 2 or half < power - 0.05)
    print("OK" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
