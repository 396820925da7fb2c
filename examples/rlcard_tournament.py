"""Play a cfr-agents policy in rlcard.utils.tournament against RLCard's RandomAgent.

    python examples/rlcard_tournament.py                 # train DCFR on RLCard Leduc first
    python examples/rlcard_tournament.py POLICY.json     # or load a saved rlcard: policy

Our agent takes seat 0, then seat 1; RLCard draws the small blind at random every hand.
"""

import sys

import numpy as np
import rlcard
from rlcard.agents import RandomAgent
from rlcard.utils import tournament

import adapters
import cfr_agents
from eval import exploitability

HANDS = 10_000

if len(sys.argv) > 1:
    policy = cfr_agents.load_policy(sys.argv[1])
else:
    tree = cfr_agents.compile_tree(adapters.load_game("rlcard:leduc-holdem"))
    solver = cfr_agents.make_solver(tree, "dcfr")
    solver.run(1000)
    policy = solver.average_policy()
    print(f"trained dcfr, NashConv {exploitability(policy, tree).nash_conv:.2e} BB")

env_id = policy.game_id.removeprefix("rlcard:")
np.random.seed(0)  # RLCard's RandomAgent samples from NumPy's global generator
for seat in (0, 1):
    env = rlcard.make(env_id, config={"seed": seat})
    agents = [RandomAgent(num_actions=env.num_actions) for _ in range(2)]
    agents[seat] = policy.rlcard_agent(seed=10 + seat)
    env.set_agents(agents)
    payoffs = tournament(env, HANDS)
    print(f"seat {seat}: our agent {payoffs[seat]:+.3f} {policy.units}/hand vs RandomAgent over {HANDS:,} hands")
