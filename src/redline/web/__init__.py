"""What the two HTTP edges share, the API surfaces and the console: answering unexpected errors, the
request metrics, and reading ids out of addresses."""
