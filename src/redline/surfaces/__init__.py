"""HTTP surfaces: thin translations between a reference document's wire format and the services."""
