"""Train CFR+ on OpenSpiel's Leduc poker and check its exploitability against OpenSpiel's own.

python examples/train_openspiel_leduc.py                       # 1,000 iterations
python examples/train_openspiel_leduc.py --iterations 5000 --out leduc.json
"""

import argparse

import pyspiel
from open_spiel.python.algorithms import exploitability as openspiel_exploitability

import adapters
import cfr_agents
from cfr_agents.cli.common import positive_int
from eval import exploitability

parser = argparse.ArgumentParser(description="Train CFR+ on OpenSpiel Leduc; compare NashConv with OpenSpiel's.")
parser.add_argument("--iterations", type=positive_int, default=1000, help="CFR+ iterations (default 1,000)")
parser.add_argument("--out", metavar="FILE", help="also save the policy file here")
args = parser.parse_args()

try:
    game = adapters.load_game("openspiel:leduc_poker")
    tree = cfr_agents.compile_tree(game)
    print(tree.summary())

    solver = cfr_agents.make_solver(tree, "cfr+")
    solver.run(args.iterations)
    policy = solver.average_policy()
    if args.out:
        policy.save(args.out)
except adapters.InputError as error:
    parser.exit(2, f"{parser.prog}: error: {error}\n")

ours = exploitability(policy, tree).nash_conv
theirs = openspiel_exploitability.nash_conv(pyspiel.load_game("leduc_poker"), policy.openspiel_policy())
print(f"NashConv: ours {ours:.12f}, OpenSpiel {theirs:.12f} (chips)")
