"""Train DCFR on RLCard's Leduc Hold'em and play it in rlcard.utils.tournament against RandomAgent."""

import rlcard
from rlcard.agents import RandomAgent
from rlcard.utils import tournament

import adapters
import cfr_agents
from eval import exploitability

game = adapters.load_game("rlcard:leduc-holdem")
tree = cfr_agents.compile_tree(game)
solver = cfr_agents.make_solver(tree, "dcfr")
solver.run(1000)
policy = solver.average_policy()
print(f"NashConv {exploitability(policy, tree).nash_conv:.2e} BB")

env = rlcard.make("leduc-holdem", config={"seed": 0})
env.set_agents([policy.rlcard_agent(seed=1), RandomAgent(num_actions=env.num_actions)])
payoffs = tournament(env, 10000)
print(f"our agent vs RandomAgent over 10,000 hands: {payoffs[0]:+.3f} BB/hand")
