"""Datasets: curated datapoints for experiments, some made from traces."""
