"""Who is calling: workspaces, projects, principals, tokens and memberships."""
