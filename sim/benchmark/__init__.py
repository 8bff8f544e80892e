"""The navigation benchmark on the Helsinki world: tasks, agents, episodes, metrics, report."""
