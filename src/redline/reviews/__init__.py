"""Human reviews: typed review keys (categorical, range, text) and the values people give them on spans."""
