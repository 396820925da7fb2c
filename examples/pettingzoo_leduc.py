"""Play a cfr-agents agent in PettingZoo's leduc_holdem_v4 against uniform play over the action mask.

    python examples/pettingzoo_leduc.py                  # train DCFR on RLCard Leduc first
    python examples/pettingzoo_leduc.py POLICY.json      # or any agent of rlcard:leduc-holdem: a file or a name

The agent is a PettingZoo policy (eval.pettingzoo.PettingZooPolicy): asked with what env.last() returns, it
answers a legal action. It takes seat player_0 in even games and player_1 in odd ones; the mean it wins is
printed beside its exact value against uniform play.
"""

import argparse
import math
import tempfile
from pathlib import Path

import numpy as np
from pettingzoo.classic import leduc_holdem_v4

import adapters
import cfr_agents
from cfr_agents.cli.common import positive_int
from eval.match import Agents
from eval.pettingzoo import PettingZooPolicy

parser = argparse.ArgumentParser(description="Play an agent in PettingZoo's leduc_holdem_v4 in both seats.")
parser.add_argument("agent", nargs="?", help="an rlcard:leduc-holdem policy file or agent name (default: train DCFR)")
parser.add_argument("--games", type=positive_int, default=2_000, help="games to play (default 2,000)")
args = parser.parse_args()

with tempfile.TemporaryDirectory() as folder:
    agent = args.agent
    if agent is None:
        tree = cfr_agents.compile_tree(adapters.load_game("rlcard:leduc-holdem"))
        solver = cfr_agents.make_solver(tree, "dcfr")
        solver.run(300)
        agent = str(Path(folder) / "dcfr.json")
        solver.average_policy().save(agent)
    env = leduc_holdem_v4.env()
    try:
        policy = PettingZooPolicy(agent, env, np.random.default_rng(0))
        exact = Agents().exact((agent, "random"), policy.game_id)
    except adapters.InputError as refused:
        parser.exit(2, f"{parser.prog}: error: {refused}\n")
    rng = np.random.default_rng(1)
    rewards: list[float] = []
    for game in range(args.games):
        env.reset(seed=game)
        seat = env.possible_agents[game % 2]
        for name in env.agent_iter():
            observation, reward, termination, truncation, info = env.last()
            if termination or truncation:
                if name == seat:
                    rewards.append(float(reward))
                env.step(None)
            elif name == seat:
                env.step(policy(observation, name, info))
            else:
                env.step(int(rng.choice(np.flatnonzero(observation["action_mask"]))))
mean, error = float(np.mean(rewards)), float(np.std(rewards, ddof=1) / math.sqrt(len(rewards)))
print(f"{policy.name if args.agent else 'dcfr'} in leduc_holdem_v4: {mean:+.3f} BB/game (standard error {error:.3f})")
if not isinstance(exact, str):
    print(f"its exact value against uniform play: {exact.value:+.3f} BB/game")
