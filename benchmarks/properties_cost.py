"""Cost of ``properties.check_all`` per state (µs) against log length and broker count.

Usage: python benchmarks/properties_cost.py [--repeat N]

Each state is reached through the model's public actions: every replica of a
healthy partition holds LOG records, all committed and acknowledged, and one
record consumed per offset. Beside it: the cost of one model step (``step`` on
a Produce) and of one walk step (``enabled_actions`` + ``step``) on that state,
and the most expensive property.
"""

from __future__ import annotations

import argparse
import time

import properties
from model import (Config, Consume, Produce, ReceiveFetchRequest, ReceiveFetchResponse, SendFetch,
                   enabled_actions, initial_state, step)


def healthy_state(n_brokers: int, log_len: int):
    brokers = tuple(range(1, n_brokers + 1))
    config = Config(brokers=brokers, assignment=brokers, min_isr=min(2, n_brokers))
    s = initial_state(config)
    leader, followers = brokers[0], brokers[1:]
    for v in range(1, log_len + 1):
        s = step(s, Produce(leader, v))
    for _ in range(2):  # the first round fetches the records, the second reports the LEOs
        for f in followers:
            s = step(s, SendFetch(f))
            s = step(s, ReceiveFetchRequest(s.network.messages[-1].id))
            s = step(s, ReceiveFetchResponse(s.network.messages[-1].id))
    if log_len:
        s = step(s, Consume())
    assert s.history.true_hwm == log_len and len(s.history.acked) == log_len
    return s


def per_call_us(fn, repeat: int) -> float:
    t0 = time.perf_counter()
    for _ in range(repeat):
        fn()
    return 1e6 * (time.perf_counter() - t0) / repeat


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=2000, help="calls timed per cell (default 2000)")
    import results  # benchmarks/results.py: --write into docs/results.md
    results.add_write_option(ap, "properties_cost")
    args = ap.parse_args()
    header = (f"{'brokers':>7} {'log':>5} {'check_all µs':>13} {'model step µs':>14} {'walk step µs':>13} "
              f"{'ratio to step':>14}  costliest property")
    print(header)
    print("-" * len(header))
    for n in (3, 4, 5):
        for log_len in (0, 10, 50, 200):
            s = healthy_state(n, log_len)
            check = per_call_us(lambda: properties.check_all(s), args.repeat)
            produce = Produce(1, s.history.next_value)
            model_step = per_call_us(lambda: step(s, produce), args.repeat)
            walk_step = per_call_us(lambda: step(s, enabled_actions(s)[0]), args.repeat)
            costs = {p.name: per_call_us(lambda p=p: p.check(s), max(1, args.repeat // 10))
                     for p in properties.ALL}
            top = max(costs, key=costs.__getitem__)
            print(f"{n:7} {log_len:5} {check:13.1f} {model_step:14.1f} {walk_step:13.1f} "
                  f"{check / model_step:14.2f}  {top} ({costs[top]:.1f} µs)")


if __name__ == "__main__":
    import results
    results.run(main)
