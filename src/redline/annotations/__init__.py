"""What people say about traces: ratings, comments and quoted spans, and flags on wrong labels."""
