"""Train CFR+ on OpenSpiel's Leduc poker and check its exploitability against OpenSpiel's own."""

import pyspiel
from open_spiel.python.algorithms import exploitability as openspiel_exploitability

import adapters
import cfr_agents
from eval import exploitability

game = adapters.load_game("openspiel:leduc_poker")
tree = cfr_agents.compile_tree(game)
print(tree.summary())

solver = cfr_agents.make_solver(tree, "cfr+")
solver.run(1000)
policy = solver.average_policy()
policy.save("leduc_cfr_plus.json")

ours = exploitability(policy, tree).nash_conv
theirs = openspiel_exploitability.nash_conv(pyspiel.load_game("leduc_poker"), policy.openspiel_policy())
print(f"NashConv: ours {ours:.12f}, OpenSpiel {theirs:.12f} (chips)")
