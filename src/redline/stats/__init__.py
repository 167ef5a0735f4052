"""What people's corrections mean: a queue rule's results and the Trends page, from tallies kept on write."""
