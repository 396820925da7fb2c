"""Play a cfr-agents policy in rlcard.utils.tournament against RLCard's RandomAgent.

    python examples/rlcard_tournament.py                 # train DCFR on RLCard Leduc first
    python examples/rlcard_tournament.py POLICY.json     # or load a saved rlcard: policy

Our agent takes seat 0, then seat 1; RLCard draws the small blind at random every hand.
"""

import argparse

import numpy as np
import rlcard
from rlcard.agents import RandomAgent
from rlcard.utils import tournament

import adapters
import cfr_agents
from cfr_agents.cli.common import positive_int
from eval import exploitability

parser = argparse.ArgumentParser(description="Play a policy against RLCard's RandomAgent in both seats.")
parser.add_argument("policy", nargs="?", help="an rlcard: policy file (default: train DCFR on RLCard Leduc)")
parser.add_argument("--hands", type=positive_int, default=10_000, help="hands per seat (default 10,000)")
args = parser.parse_args()

try:
    if args.policy:
        policy = cfr_agents.load_policy(args.policy)
    else:
        tree = cfr_agents.compile_tree(adapters.load_game("rlcard:leduc-holdem"))
        solver = cfr_agents.make_solver(tree, "dcfr")
        solver.run(1000)
        policy = solver.average_policy()
        print(f"trained dcfr, NashConv {exploitability(policy, tree).nash_conv:.2e} BB")
    agents_of_ours = [policy.rlcard_agent(seed=10 + seat) for seat in (0, 1)]  # refuses an openspiel: policy
except adapters.InputError as error:
    parser.exit(2, f"{parser.prog}: error: {error}\n")

env_id = policy.game_id.removeprefix("rlcard:")
np.random.seed(0)  # RLCard's RandomAgent samples from NumPy's global generator
for seat in (0, 1):
    env = rlcard.make(env_id, config={"seed": seat})
    agents = [RandomAgent(num_actions=env.num_actions) for _ in range(2)]
    agents[seat] = agents_of_ours[seat]
    env.set_agents(agents)
    payoffs = tournament(env, args.hands)
    print(f"seat {seat}: our agent {payoffs[seat]:+.3f} {policy.units}/hand vs RandomAgent over {args.hands:,} hands")
